// SPDX-License-Identifier: BSD-3-Clause
// What `mcmclb calibrate` measures on a user's machine and how it becomes a SimGrid platform: between two ranks the
// ping-pong (the one point-to-point timing of the project: tests/smpi/pingpong.cpp runs it too, in simulation) and
// the per-call cost of MPI_Send, MPI_Isend and MPI_Recv over many sizes, a reduction over a group, the per-call cost
// of MPI_Test and MPI_Iprobe; the segmented fit of SMPI's overheads and network factors, its check against the
// medians it was fitted to, and the platform's text. The fit and the text are pure functions (no MPI); the command
// (apps/calibrate.cpp) parses, measures and writes.
//
// Against SimGrid's published calibration (a timing program and R scripts, repository Ezibenroc/platform-calibration;
// docs/guide/simulation.md): the same calls (MPI_Recv of an arrived message, a send's own cost, a ping-pong, MPI_Test
// and MPI_Iprobe), repeated per size, a line per segment. Departures, each for a user with no analyst at hand:
// - the breakpoints come from the data (fit_segments), where an analyst writes them in a file there;
// - the sizes come in a new random order each repetition, so that a slow spell of the host spreads over sizes
//   instead of bending one segment;
// - smpi/os is MPI_Send's cost to a late receiver, not MPI_Isend's: SMPI 3.32 charges os to MPI_Send (of a message
//   it sends detached) and ois to MPI_Isend, and charges os and or only below the eager limit, which is measured
//   (the smallest size whose MPI_Send waited) and written as SMPI's send thresholds;
// - os and or timed apart, on an unexpected message, can exceed a warm ping-pong's one-way time inside a node; both
//   are then scaled alike into it (PairModel::overhead_scale), and the command says so;
// - each size is a median with its interval, and the fit is checked against the medians it came from (misses()).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "mcmclb/mpi.hpp"

namespace mcmclb::calibrate {

/// One time of a message of `bytes` (a call's, or a one-way time: half a round trip), seconds.
struct Point {
  std::int64_t bytes = 0;
  double seconds = 0;
};

/// One size's repeated timings of one call, seconds.
struct Sample {
  std::int64_t bytes = 0;
  std::vector<double> seconds;
};

/// A size's timings summed up: their median and its 95 % interval (the order statistics stats::median_ci gives;
/// low = high = median below six timings, where there is none), and how many there were.
struct Spread {
  std::int64_t bytes = 0;
  double median_s = 0;
  double low_s = 0;
  double high_s = 0;
  std::size_t n = 0;
};
Spread spread_of(const Sample& sample);
/// Each size's medians as the points a fit takes.
std::vector<Point> medians(std::span<const Spread> spreads);

/// One piece of a piecewise line: from `from` bytes on (up to the next piece's), time = offset + bytes * per_byte.
struct Piece {
  std::int64_t from = 0;
  double offset_s = 0;
  double per_byte_s = 0;
};

/// A piecewise line, as SMPI's smpi/os, smpi/ois, smpi/or and its latency and bandwidth factors are: pieces by
/// ascending `from`. Empty: zero at every size.
struct Piecewise {
  std::vector<Piece> pieces;
  /// The piece that holds bytes (the first below the first piece's `from`).
  [[nodiscard]] const Piece* piece_of(std::int64_t bytes) const;
  [[nodiscard]] double at(std::int64_t bytes) const;
};

/// The segmented regression of points: the piecewise line (each piece at least min_sizes distinct sizes, at most
/// max_pieces pieces) of least squares on relative errors, its breakpoints placed where the data say. Every
/// partition into k pieces is weighed exactly (dynamic programming over the sorted sizes); k is the one of least
/// Bayesian information (each piece costs its offset, slope and breakpoint), so a piece is added only where the
/// data bend more than their noise. Needs two distinct sizes (else std::invalid_argument).
Piecewise fit_segments(std::span<const Point> points, int max_pieces = 4, std::size_t min_sizes = 3);

/// What calibrate times between two ranks (each size's timings, in a random order with repetitions): a ping-pong's
/// one-way time (half a round trip); MPI_Send and MPI_Isend on the sender while its receiver comes late (the
/// call's own cost, or its wait where the library sends by rendezvous); MPI_Recv of a message that has arrived; and
/// the eager limit: the smallest size whose MPI_Send waited for the late receiver.
struct PairTimes {
  std::vector<Spread> pingpong, send, isend, recv;
  std::int64_t eager_limit = 0;
};

/// What SMPI 3.32 adds to every message's size on the network: an envelope of 16 bytes (tag, source and
/// communicator). Its latency and bandwidth factors are looked up by, and its bandwidth charged for, the payload
/// (bytes + kSmpiEnvelope); smpi/os, smpi/ois and smpi/or by the bytes alone. A factor's boundary written at a
/// message size would move a message up to 16 bytes below it into the next piece.
inline constexpr std::int64_t kSmpiEnvelope = 16;

/// SMPI's model of a message between two ranks, fitted to PairTimes: the per-call overheads smpi/os (MPI_Send) and
/// smpi/or (MPI_Recv) of a message below the eager limit, which SMPI sends detached and charges them to, smpi/ois
/// (MPI_Isend, every size), and the network: the one-way time less the overheads SMPI charges to it, piecewise,
/// written as the link's latency and bandwidth (the first piece's offset, the last piece's inverse slope) and SMPI's
/// factors for every piece.
struct PairModel {
  std::int64_t eager_limit = 0;  // smpi/send-is-detached-thresh and smpi/async-small-thresh
  Piecewise os, ois, orecv;
  /// By payload (bytes + kSmpiEnvelope), as SMPI looks up and charges the network.
  Piecewise network;
  /// What os and or were scaled by (at most 1) so that they stay within kOverheadShare of the one-way times (the
  /// 20th percentile of what each size needs): timed apart, on an unexpected message, they may together exceed a
  /// ping-pong's one-way time inside a node, and SMPI charges both to every message below the eager limit.
  double overhead_scale = 1;
  [[nodiscard]] double latency_s() const;
  [[nodiscard]] double bandwidth_Bps() const;
  /// smpi/lat-factor and smpi/bw-factor of each network piece (in its order), relative to latency_s and
  /// bandwidth_Bps: what SMPI multiplies them by for a message in that piece.
  [[nodiscard]] std::vector<double> lat_factors() const;
  [[nodiscard]] std::vector<double> bw_factors() const;
  /// The per-call overheads SMPI charges to a message of bytes: os and or where it is sent detached (below the
  /// eager limit), none from it on (SMPI 3.32 charges smpi/or only to a detached message).
  [[nodiscard]] double overheads_s(std::int64_t bytes) const;
  /// What SMPI charges a message of bytes between two ranks one hop apart, as the platform's constants give it
  /// (factors, overheads, clamps and all): the overheads and the network.
  [[nodiscard]] double one_way_s(std::int64_t bytes) const;
  /// What the model says a timed call of bytes took (call: pingpong, send, isend or recv): the one-way time, or the
  /// call's overhead as fitted (os and or before overhead_scale); nothing for send and recv from the eager limit
  /// on, where they wait for the transfer and no overhead was fitted.
  [[nodiscard]] std::optional<double> call_s(const std::string& call, std::int64_t bytes) const;
};

/// The timings of one call (pingpong, send, isend or recv; else std::invalid_argument).
const std::vector<Spread>& spreads_of(const PairTimes& times, const std::string& call);
/// The calls calibrate times, in times.csv's order.
inline constexpr const char* kCalls[] = {"pingpong", "send", "isend", "recv"};

/// The fit of a pair's times (at least two sizes of each kind; a kind with none below the eager limit is zero).
PairModel fit_pair(const PairTimes& times);

/// What a model is allowed to miss a median by: this fraction beyond the median's interval.
inline constexpr double kFitTolerance = 0.10;
/// The largest share of a one-way time below the eager limit that os and or together may take; the rest is the
/// network's, which a route's hops multiply.
inline constexpr double kOverheadShare = 0.9;

/// A size where the fitted model misses the measured median by more than kFitTolerance beyond its interval.
struct Miss {
  std::string kind;  // pingpong, send, isend, recv
  std::int64_t bytes = 0;
  double model_s = 0;
  Spread measured;
};
/// Every miss of model against the medians it was fitted to, the worst (relatively) first: the ping-pong against the
/// whole model, each call against its overhead as fitted (before overhead_scale).
std::vector<Miss> misses(const PairModel& model, const PairTimes& times);
/// One line for the worst misses: how many sizes, the worst's size, model and median with interval.
std::string misses_words(const std::vector<Miss>& missed);

/// The sizes calibrate times: every power of two from 1 B to 4 MiB and the size halfway (x 1.5) between two, so
/// that a breakpoint is found to within half a power of two.
std::vector<std::int64_t> message_sizes();

/// What was measured on the machine, and where, as the platform's comments and provenance say it.
struct Machine {
  int nodes = 1;           // shared-memory nodes of the launch (MPI_Comm_split_type SHARED)
  int cores_per_node = 0;  // CPUs the job may use on a node, the fewest over nodes
  int ranks = 0;           // ranks launched
  PairModel intra;         // between two ranks of one node (none measured when no node held two ranks)
  bool has_intra = false;
  PairModel inter;  // between ranks of two nodes (none measured on one node)
  bool has_inter = false;
  double allreduce_s = 0;          // one 8-byte MPI_Allreduce over every rank: median over calls of the slowest rank
  double test_s = 0;               // one MPI_Test on a pending receive, mean over many calls
  double iprobe_s = 0;             // one MPI_Iprobe finding nothing, mean over many calls
  std::vector<std::string> notes;  // what the platform's head must say besides (the host's load, a fit's misses)
};

/// The platform to simulate on, for up to `ranks` simulated ranks.
struct Shape {
  int nodes = 1;         // nodes the platform holds (ceil(ranks / cores), rounded up to whole leaf switches)
  int leaf_nodes = 1;    // nodes per leaf switch (at most kLeafNodes)
  int leaves = 1;        // leaf switches; more than one adds a spine level of leaf_nodes switches
  std::string topo;      // SimGrid's FAT_TREE topo_parameters
  int hops_in_leaf = 2;  // links on a route between two nodes of one leaf (up, down)
};
inline constexpr int kLeafNodes = 16;
Shape shape_for(int ranks, int cores_per_node);

/// The platform XML: one FAT_TREE cluster of shape, the links' latency (per link: the measured one-way latency over
/// the hops of a route in one leaf) and bandwidth, the loopback from the measurement inside a node, the factors,
/// MPI_Test and MPI_Iprobe costs; `comments` (provenance, one fact a line) go in the file's head.
std::string platform_xml(const Machine& m, const Shape& shape, const std::vector<std::string>& comments);
/// Its hostfile: one line per simulated rank, cores_per_node ranks per node in node order (block placement).
std::string hostfile(const Shape& shape, int cores_per_node, int ranks);

// --- measuring (collective over world; every MPI call checked) ---

/// The ping-pong between ranks a and b of world: for each size, a warm-up and reps repetitions of round trips (more
/// for small sizes), each round trip timed on rank a; the other ranks wait. Returns on rank 0 every size's median
/// one-way time (half a round trip) over all timed round trips (empty elsewhere). a and b must differ.
std::vector<Point> pingpong(const mpi::Comm& world, int a, int b, const std::vector<std::int64_t>& sizes, int reps);

/// Everything PairTimes holds, timed between rank 0 and rank b of world (the others wait asleep): reps rounds, each
/// over every size in an order drawn afresh from seed (the same seed on every rank), first of the ping-pong, then of
/// MPI_Send, MPI_Isend and MPI_Recv mixed, each receiver late by twice the size's one-way time (at least 50 us);
/// then the eager limit narrowed to the byte by bisection between the sizes that bracket it. Returns it on rank 0
/// (empty elsewhere). A preemption only adds time to a timing: the medians and their intervals, not minima, say
/// how often.
PairTimes time_pair(const mpi::Comm& world, int b, const std::vector<std::int64_t>& sizes, int reps,
                    std::uint64_t seed);

/// An MPI_Allreduce (a sum of bytes / 8 doubles, at least one) over world, timed as commbench times an operation (a
/// barrier, MPI_Wtime around the call, MAX over ranks): the median over calls, on every rank.
double allreduce_time(const mpi::Comm& world, int calls, std::int64_t bytes = 8);

/// The mean cost of one MPI_Test on a receive that is not matched, and of one MPI_Iprobe that finds nothing, on
/// this rank (no communication): SMPI charges each call a constant (smpi/test, smpi/iprobe).
struct PollCosts {
  double test_s = 0;
  double iprobe_s = 0;
};
PollCosts poll_costs(int calls);

}  // namespace mcmclb::calibrate
