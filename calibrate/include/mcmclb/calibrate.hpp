// SPDX-License-Identifier: BSD-3-Clause
// What `mcmclb calibrate` measures on a user's machine and how it becomes a SimGrid platform: the ping-pong between
// two ranks over message sizes (the one point-to-point timing of the project: tests/smpi/pingpong.cpp runs it too,
// in simulation), a reduction over a group, the per-call cost of MPI_Test and MPI_Iprobe, the least-squares fit of
// latency and bandwidth, and the platform's text. The fit and the text are pure functions (no MPI); the command
// (apps/calibrate.cpp) parses, measures and writes.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "mcmclb/mpi.hpp"

namespace mcmclb::calibrate {

/// One timed size: the one-way time of a message of `bytes` (half a round trip), seconds.
struct Point {
  std::int64_t bytes = 0;
  double seconds = 0;
};

/// A straight line time = latency + bytes / bandwidth, from least squares on (bytes, seconds), each time's error
/// relative to it (weights 1 / seconds^2): latency is the intercept, bandwidth the inverse of the slope (0 when the
/// slope is not positive: the times do not grow with the size, as happens among small messages whose cost is all
/// latency).
struct Line {
  double latency_s = 0;
  double bandwidth_Bps = 0;
};

/// The least-squares line through points (at least two distinct sizes, else std::invalid_argument).
Line fit_line(std::span<const Point> points);

/// SMPI's piecewise model of a message (smpi/lat-factor, smpi/bw-factor): below `threshold` bytes one line, from
/// it on another. The platform's link carries the small messages' latency and the large messages' bandwidth; the
/// factors scale them for the other range, so both ranges are met.
struct Model {
  std::int64_t threshold = 0;
  Line small;  // the fit of the sizes below threshold
  Line large;  // the fit of the sizes from threshold on
  /// The link's constants and SMPI's factors for sizes below / from threshold.
  /// A negative intercept (noise on a line through the origin) is no latency.
  [[nodiscard]] double latency_s() const { return small.latency_s > 0 ? small.latency_s : 0.0; }
  [[nodiscard]] double bandwidth_Bps() const { return large.bandwidth_Bps; }
  [[nodiscard]] double lat_factor_large() const;
  [[nodiscard]] double bw_factor_small() const;
};

/// Both fits of points split at threshold (each side needs two distinct sizes, else std::invalid_argument).
Model fit_model(std::span<const Point> points, std::int64_t threshold);

/// The sizes the ping-pong times, the threshold between small and large (MPICH's and Open MPI's usual switch from
/// eager to rendezvous sends lies near it) and the largest.
std::vector<std::int64_t> message_sizes();
inline constexpr std::int64_t kLargeFrom = 65536;

/// What was measured on the machine, and where, as the platform's comments and provenance say it.
struct Machine {
  int nodes = 1;           // shared-memory nodes of the launch (MPI_Comm_split_type SHARED)
  int cores_per_node = 0;  // CPUs the job may use on a node, the fewest over nodes
  int ranks = 0;           // ranks launched
  Model intra;             // between two ranks of one node (none measured when no node held two ranks)
  bool has_intra = false;
  Model inter;  // between ranks of two nodes (none measured on one node)
  bool has_inter = false;
  double allreduce_s = 0;  // one 8-byte MPI_Allreduce over every rank: median over calls of the slowest rank
  double test_s = 0;       // one MPI_Test on a pending receive, mean over many calls
  double iprobe_s = 0;     // one MPI_Iprobe finding nothing, mean over many calls
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
/// for small sizes), each round trip timed on rank a; the other ranks wait. Returns on rank 0 every size's fastest
/// one-way time (half a round trip) over all timed round trips (empty elsewhere). An interruption (the scheduler,
/// another program on the core) only adds time, so the fastest round trip is the one that met none: on a busy
/// 2-core VM the median of a size was at times milliseconds, and then the large sizes' times fell with the size.
/// a and b must differ.
std::vector<Point> pingpong(const mpi::Comm& world, int a, int b, const std::vector<std::int64_t>& sizes, int reps);

/// An 8-byte MPI_Allreduce over world, timed as commbench times an operation (a barrier, MPI_Wtime around the call,
/// MAX over ranks): the median over calls, on every rank.
double allreduce_time(const mpi::Comm& world, int calls);

/// The mean cost of one MPI_Test on a receive that is not matched, and of one MPI_Iprobe that finds nothing, on
/// this rank (no communication): SMPI charges each call a constant (smpi/test, smpi/iprobe).
struct PollCosts {
  double test_s = 0;
  double iprobe_s = 0;
};
PollCosts poll_costs(int calls);

}  // namespace mcmclb::calibrate
