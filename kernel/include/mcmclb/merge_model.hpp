// SPDX-License-Identifier: BSD-3-Clause
// What a merge costs and what it gains, for the finished rule `pays` (a finished group joins a working one only
// when the chain then ends sooner, the regrouping's own cost included). No MPI here: the kernel measures the
// numbers (Kernel::start's calibration pass) and this class interpolates them and does the arithmetic, so the
// rule's decisions are a pure function of numbers every rank holds identically.
#pragma once

#include <cstdint>
#include <vector>

#include "mcmclb/lj.hpp"
#include "mcmclb/run_spec.hpp"
#include "mcmclb/run_stats.hpp"

namespace mcmclb {

/// The calibration's table and the model built on it. A chain's item time at group size m:
///  - sleep and spin: the item's own emulated cost at m (T/m, jitter included): perfect scaling, declared by the
///    workload, nothing measured;
///  - compute: moves_per_item x (lj::trial_flops() of the slice the busiest member sums at m x the measured seconds
///    per model flop + the measured reduction time at m, for m > 1).
/// A merge into a group of m ranks costs the measured creation time at m plus the state's broadcast at m. Sizes
/// between calibrated ones are interpolated linearly in log2(size); beyond the largest, its values are used.
///
/// A model may be told to misjudge on purpose (ModelError, run_spec.hpp): its predictions then take the compute rate
/// and the reduction times as that factor times what was measured. calibration() still gives what was measured.
class MergeModel {
 public:
  MergeModel() = default;
  /// table: ascending sizes, the first of them 1. s_per_flop: seconds per lj::trial_flops() flop (compute mode).
  MergeModel(std::vector<SizeCosts> table, double s_per_flop, ModelError error = {});

  [[nodiscard]] bool calibrated() const noexcept { return !table_.empty(); }
  [[nodiscard]] const std::vector<SizeCosts>& table() const noexcept { return table_; }
  [[nodiscard]] double s_per_flop() const noexcept { return s_per_flop_; }
  /// The table and rate as calibration.csv records them.
  [[nodiscard]] Calibration calibration() const { return {table_, s_per_flop_}; }
  /// The costs the model predicts at size m (interpolated; the reduction times its ModelError).
  [[nodiscard]] SizeCosts at(int m) const;
  /// Seconds a merge into a group of m ranks spends regrouping: creation plus the state's broadcast.
  [[nodiscard]] double regroup_s(int m) const;
  /// Compute mode: seconds of one item of moves trial moves of an atoms-atom walker at group size m.
  [[nodiscard]] double compute_item_s(lj::MoveKind move, int atoms, int64_t moves, int m) const;

 private:
  std::vector<SizeCosts> table_;
  double s_per_flop_ = 0;
  ModelError error_;
};

/// The sizes the calibration measures for nprocs ranks: 1, 2, 4, ... up to nprocs, and nprocs itself.
[[nodiscard]] std::vector<int> calibration_sizes(int nprocs);

}  // namespace mcmclb
