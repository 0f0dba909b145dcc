// SPDX-License-Identifier: BSD-3-Clause
// The trace file a run of an application's chains records (Options::record; docs/reference/columns.md, "Trace
// files"): its comment lines, its rows as chains end, and the whole file when the run ends well. Internal to
// libmcmclb_walkers.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "mcmclb/kernel.hpp"
#include "mcmclb/trace.hpp"
#include "mcmclb/walkers.hpp"

namespace mcmclb::walkers::detail {

/// A run's initial groups, in rank order: each one's ranks, and the chains it started with.
struct InitialGroups {
  std::vector<int> sizes, chains;
};

/// "4 initial groups of 1 rank, with 3, 2, 2 and 2 chains", "2 initial groups of 2 and 1 ranks and 1 chain each":
/// the run's initial groups, their sizes and the chains each started with (counts that do not split evenly differ by
/// group).
[[nodiscard]] std::string initial_groups(const InitialGroups& groups);

/// The comment lines a trace file starts with: what recorded it, how, where and when, and its initial groups
/// (initial_groups).
[[nodiscard]] std::string trace_head(const Report& r, const Options& o, const InitialGroups& initial);

/// An item row of a trace file, with the initial group that started its chain (groups: per chain).
void append_row(std::string& out, const ItemCost& c, const std::vector<int>& groups);

/// The recording as the run goes: every rank appends its leaders' rows to the file (O_APPEND, one write per batch,
/// so batches of several ranks never interleave within a row on a local file system). A failed write (a full disk)
/// stops the streaming with one line; the run still tries the whole file as it ends (Report::record_error).
class TraceStream {
 public:
  TraceStream(const std::string& path, int rank);
  ~TraceStream();
  TraceStream(const TraceStream&) = delete;
  TraceStream& operator=(const TraceStream&) = delete;
  void append(std::span<const ItemCost> costs, const std::vector<int>& groups);

 private:
  void warn(const char* why) const;
  std::string path_;
  int rank_;
  int fd_ = -1;
};

/// The trace file of a run's items: comment lines saying where it came from and what the run took (kTraceRunLine;
/// for a run resumed from a checkpoint, which no one run took whole, a "# resumed:" line saying so instead), the
/// item rows, then the chains' measured speed-ups (paired_speedups of this job's items: a chain's repetitions at a
/// size are its pairs there) and, as rows of chain `*`, each of those again: the repetitions at m whose median a
/// replay takes for the chains that were not measured there. speedups: the speed-up rows written.
/// Under the run line, the earlier runs' lines (earlier_lines). The run line carries share (the part of a core each
/// rank had at the start; 0: not measured) and walkers (the walkers' fingerprint, in hex).
[[nodiscard]] std::string trace_text(const std::vector<ItemCost>& costs, const std::vector<PairedSpeedup>& measured,
                                     const std::vector<int>& groups, const Report& r, const Options& o,
                                     const InitialGroups& initial, const std::string& resumed, int64_t& speedups,
                                     double share, const std::string& walkers, const std::vector<RecordedRun>& earlier);

/// The most earlier runs a trace carries: the newest, so that a program recorded in a loop keeps a bounded head.
inline constexpr std::size_t kMaxEarlierRuns = 99;

/// The runs of the same walkers (fingerprint `walkers`, in hex) that the trace file at path records, newest first:
/// its own run line, then its earlier ones, at most kMaxEarlierRuns. So a program run n times with recording on
/// into one file leaves its n run times, each with its layout and its host's share, in the last trace. Empty where
/// the file is absent or unreadable, or its runs are of other walkers (another program, other item bounds): a line
/// that does not parse is not carried.
[[nodiscard]] std::vector<RecordedRun> earlier_runs_of(const std::string& path, const std::string& walkers);

/// Those runs as kTraceEarlierRunLine lines, one a run.
[[nodiscard]] std::string earlier_lines(const std::vector<RecordedRun>& earlier);

/// The item rows a trace file at path holds (lines that start with a digit); 0 where it cannot be read.
[[nodiscard]] int64_t item_rows_in(const std::string& path);

/// text written to path whole or not at all (write_file_whole).
void write_text_whole(const std::string& path, const std::string& text);

}  // namespace mcmclb::walkers::detail
