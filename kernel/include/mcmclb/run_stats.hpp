// SPDX-License-Identifier: BSD-3-Clause
// What a run reports per rank and per group formation: plain data, no MPI, so the results writers (study/)
// format it without linking the kernel's runtime.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mcmclb {

/// Where a rank's time went and what it did; the four parts add up to at most its elapsed time.
struct RankStats {
  double elapsed_s = 0, work_s = 0, polling_s = 0, waiting_s = 0, regroup_s = 0;
  int64_t regroups = 0;      // communicators this rank joined for load balancing (initial formation included)
  int64_t items_worked = 0;  // items this rank worked on as a group member
  int final_first = 0, final_last = 0;
  // Compute mode's regrouping traffic: the walker state each merge broadcasts to the new members.
  int64_t state_bytes = 0;  // bytes of walker state this rank received (0 on the member that held it)
  double state_s = 0;       // this rank's time in those broadcasts, root included (part of regroup_s)
  // Moving work instead of ranks (balancer steal): chains this rank's groups took from another group, and the bytes
  // this rank received for them (the chain's description and, compute mode, its walker state).
  int64_t chains_migrated = 0;
  int64_t migrated_bytes = 0;

  /// The statistics as words (doubles, for one gather); from_words(to_words(s)) == s for counts below 2^53.
  using Words = std::array<double, 13>;
  [[nodiscard]] Words to_words() const noexcept;
  [[nodiscard]] static RankStats from_words(const Words& w) noexcept;
  friend bool operator==(const RankStats&, const RankStats&) = default;
};

/// Which kind of group formation an event records.
enum class EventKind { initial, merge };
[[nodiscard]] constexpr std::string_view to_string(EventKind k) noexcept {
  return k == EventKind::initial ? "initial" : "merge";
}

struct EventRow {
  double t_s = 0;  // since the synchronised start (initial formation: 0)
  EventKind kind = EventKind::initial;
  std::string before;  // ranges of the groups that merged, e.g. "0-3 4-7"
  int first = 0, last = 0;
  int chain = -1;
  int64_t items_left = 0;
  std::string method;
  double create_s = 0;  // the new group's leader's creation time
};

/// What the calibration pass measured at one group size, mean over the ranks of full groups of that
/// size (a row of calibration.csv; the model built on it: mcmclb/merge_model.hpp).
struct SizeCosts {
  int size = 1;
  double create_s = 0;  // creating the group's communicator by the run's method (what a merge creates)
  double reduce_s = 0;  // one energy reduction, as compute mode waits for it (none at size 1: never called there)
  double bcast_s = 0;   // broadcasting the largest walker's state from one member (what a merge sends)
};

/// A run's calibration (the finished rule pays, and planning in compute mode): the costs by group size and, in
/// compute mode, the seconds per model flop of trial moves (0 otherwise). calibration.csv holds it.
struct Calibration {
  std::vector<SizeCosts> sizes;
  double s_per_flop = 0;
};

/// Compute mode with work.trace: a chain's walker after one item (a row of traces.csv).
struct TracePoint {
  int chain = 0;
  int64_t item = 0;        // items done, 1..S
  int64_t energy_q32 = 0;  // energy after it, fixed point
  int64_t accepted = 0;    // accepted trial moves so far
  int group_size = 0;      // ranks that worked it
  friend bool operator==(const TracePoint&, const TracePoint&) = default;
};

/// Compute mode: one chain's outcome against its single-rank reference (a row of chains.csv).
struct ChainOutcome {
  int chain = 0;
  int atoms = 0;
  int64_t items = 0;           // items of the chain (moves_per_item trial moves each)
  int64_t moves = 0;           // trial moves worked
  int64_t energy_q32 = 0;      // final energy, fixed point (2^-32 epsilon)
  int64_t accepted = 0;        // accepted trial moves
  int64_t ref_energy_q32 = 0;  // the same from the reference computed on one rank
  int64_t ref_accepted = 0;
  bool matches = false;     // energy and acceptances equal the reference's
  double ref_cpu_s = 0;     // the reference's CPU time on one rank (the calibration of the ideal)
  int64_t merges = 0;       // merges that moved the walker state to new members
  int64_t state_bytes = 0;  // bytes of walker state those merges delivered
  double state_s = 0;       // time the new leaders spent broadcasting it
  std::string s_per_item;   // seconds per item at each group size worked, e.g. "1:0.0021 2:0.0012"
};

}  // namespace mcmclb
