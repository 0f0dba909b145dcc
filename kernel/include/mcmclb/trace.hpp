// SPDX-License-Identifier: BSD-3-Clause
// A recorded workload: every item's cost and each chain's speed-up by group size, read from a trace file
// (docs/reference/columns.md, trace files), so that a study replays an application's measured costs under any
// balancer and at any scale (workload.model trace). Plain data and a parser, no MPI: the study library validates
// the file at plan time with it, and the kernel replays from it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mcmclb {

/// The header a trace file has, in this order.
inline constexpr std::string_view kTraceHeader = "chain,item,ranks,seconds,speedup";

/// A parsed and validated trace file.
class Trace {
 public:
  /// Chains 0 .. chains() - 1: up to the largest chain with an item row; a chain without one has no items.
  [[nodiscard]] int chains() const noexcept { return static_cast<int>(single_s_.size()); }
  /// Items of chain c (items 0 .. items(c) - 1).
  [[nodiscard]] int64_t items(int chain) const { return static_cast<int64_t>(single_s_.at(chain).size()); }
  /// Seconds item `item` of chain c takes on one rank: the recorded seconds times the speed-up at the group size
  /// that worked it.
  [[nodiscard]] double single_rank_s(int chain, int64_t item) const {
    return single_s_.at(chain).at(static_cast<std::size_t>(item));
  }
  /// The speed-up of chain c at m ranks: the chain's own rows, else the rows of chain `*`, else m (perfect);
  /// between given sizes linear in log2(m), past the largest given size that size's (a group larger than any
  /// measured gains nothing more), 1 at m = 1.
  [[nodiscard]] double speedup(int chain, int m) const;
  /// Seconds item `item` of chain c takes at m ranks: single_rank_s / speedup.
  [[nodiscard]] double item_s(int chain, int64_t item, int m) const {
    return single_rank_s(chain, item) / speedup(chain, m);
  }
  /// The sum of single_rank_s over the chain's items.
  [[nodiscard]] double chain_single_rank_s(int chain) const { return chain_s_.at(chain); }
  /// The longest single-rank item of any chain.
  [[nodiscard]] double longest_item_s() const noexcept { return longest_s_; }

  /// Parses text as the trace file `file`. Throws InputError, one line naming the file, the row (1: the header)
  /// and the column, and what is allowed.
  static Trace parse(std::string_view text, const std::string& file);

 private:
  using Points = std::vector<std::pair<int, double>>;  // (ranks, speed-up), ascending ranks, from (1, 1)
  static double at(const Points& points, int m);
  std::vector<std::vector<double>> single_s_;
  std::vector<double> chain_s_;
  std::vector<Points> speedups_;  // per chain; empty: the default's
  Points default_speedups_;       // chain `*`; empty: perfect
  double longest_s_ = 0;
};

/// The trace in file, read and parsed once per process and path (the simulation runs every rank in one process):
/// later calls share it. Throws InputError as Trace::parse does, or naming the file when it cannot be read.
std::shared_ptr<const Trace> load_trace(const std::string& file);

/// How a study's chains take the trace's chains when it has more of them than the trace has (workload.map):
/// chain k (the workload index every model uses, chain_items()) replays trace chain k mod C (tile), or a chain
/// drawn uniformly with workload.seed (draw; the same draw on every rank and at every rank count).
enum class TraceMap { tile, draw };
/// The trace chain of workload index k for a trace of `chains` chains.
[[nodiscard]] int trace_chain(TraceMap map, uint64_t seed, int chains, int k) noexcept;

/// What the merge model (finished rule pays) and the planning balancers predict an item to cost at m ranks in a
/// replay (workload.scaling): the trace's own speed-ups (trace), or the single-rank cost over m (perfect: what they
/// assume of emulated work).
enum class TraceScaling { trace, perfect };

}  // namespace mcmclb
