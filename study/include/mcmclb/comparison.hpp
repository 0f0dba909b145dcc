// SPDX-License-Identifier: BSD-3-Clause
// Two configurations of results folders compared (what `mcmclb compare` prints and writes): the medians with their
// order-statistics intervals, the ratio of medians with its interval, the exact Mann-Whitney test and a verdict for
// real-MPI points; an exact match for simulated ones. And compare.csv, one table from which its header and rows
// derive. No printing, no MPI.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "mcmclb/configurations.hpp"
#include "mcmclb/csv.hpp"
#include "mcmclb/stats.hpp"

namespace mcmclb {

/// One line of a comparison (a row of compare.csv): side A against side B.
struct Comparison {
  std::string point;    // the point as a reader tells it from the others (the command labels it)
  std::string backend;  // mpi or smpi
  std::optional<stats::MedianCi> a, b;
  std::optional<double> ratio, ratio_low, ratio_high, p;
  std::optional<double> regroups_a, regroups_b;  // median of regroups_avg
  std::string verdict;
};

/// When B counts as slower or faster than A: Mann-Whitney p below alpha and the ratio of medians beyond
/// 1 +/- threshold_pct %.
struct CompareRule {
  double threshold_pct = 5;
  double alpha = 0.05;
};

/// a against b. Simulated: "identical" or "changed (simulated)" (deterministic runs: any difference is a change);
/// real MPI: "slower", "faster", "no significant change", or "too few repetitions" where no ordering of the samples
/// could reach alpha.
[[nodiscard]] Comparison compare_configurations(const ConfigurationSamples& a, const ConfigurationSamples& b,
                                                const CompareRule& rule);

/// A configuration found on one side only: its median and interval, verdict "only in A" or "only in B".
[[nodiscard]] Comparison one_side(const ConfigurationSamples& s, bool in_a);

/// The smallest two-sided p-value the exact Mann-Whitney test can give for samples of m and n: 2 / C(m+n, m).
[[nodiscard]] double smallest_p(std::size_t m, std::size_t n);

/// A folder's configurations keyed without the ignored columns (their fields emptied, so labels leave them out).
/// Two configurations of the folder dir that differ only there cannot be told apart: InputError naming dir.
[[nodiscard]] std::map<std::string, ConfigurationSamples> without_columns(
    std::map<std::string, ConfigurationSamples> configurations, const std::string& dir,
    const std::vector<std::string>& ignore, const RunsColumns& columns);

/// compare.csv's header (`mcmclb compare --csv FILE`; docs/reference/columns.md) and one comparison's row.
[[nodiscard]] const csv::Row& compare_header();
[[nodiscard]] csv::Row compare_row(const Comparison& c);

}  // namespace mcmclb
