// SPDX-License-Identifier: BSD-3-Clause
// Statistics of repeated measurements: the median, a 95 % confidence interval of the median that holds whatever
// the distribution (order statistics), and the two-sided Mann-Whitney U test of whether two sets of repetitions
// come from the same distribution. Pure functions, no MPI, no I/O; plots/ implements the same interval rule
// (docs/guide/statistics.md).
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace mcmclb::stats {

/// The median of x (not empty): the middle value, or the mean of the two middle values for an even count.
double median(std::vector<double> x);

/// The 1-based ranks [lower, upper] of the sorted samples that bound the 95 % confidence interval of the median of
/// n samples: lower is the largest l >= 1 with P(Binomial(n, 1/2) <= l - 1) <= 0.025, upper = n + 1 - lower, so
/// the interval [x(l), x(n+1-l)] covers the true median with probability 1 - 2 P(Binomial(n, 1/2) <= l - 1) >=
/// 0.95 for any continuous distribution. Nothing when no l qualifies (n < 6): too few repetitions for an
/// interval.
struct CiRanks {
  std::size_t lower = 0, upper = 0;
  double coverage = 0;  // 1 - 2 P(Binomial(n, 1/2) <= lower - 1), at least 0.95
};
std::optional<CiRanks> median_ci_ranks(std::size_t n);

/// The fewest samples with an interval (median_ci_ranks(n) is empty below it).
inline constexpr std::size_t kMinCiSamples = 6;

struct MedianCi {
  double median = 0;
  std::size_t n = 0;
  /// [low, high] = [x(lower), x(upper)] of the sorted samples; absent below kMinCiSamples samples.
  std::optional<double> low, high;
  std::optional<CiRanks> ranks;
  /// (high - low) / 2 as a percentage of the median; absent without an interval or with a median of 0.
  [[nodiscard]] std::optional<double> half_width_pct() const;
};
/// The median of x (not empty) and its 95 % interval (median_ci_ranks).
MedianCi median_ci(std::vector<double> x);

/// The two-sided Mann-Whitney U test of a against b (both not empty).
struct MannWhitney {
  double u_a = 0;      // U of a: the number of pairs (a_i, b_j) with a_i > b_j, ties counting one half
  double p = 1;        // two-sided p-value
  bool exact = false;  // from the exact distribution of U (no ties, both samples at most kExactMaxSamples)
};
MannWhitney mann_whitney(const std::vector<double>& a, const std::vector<double>& b);

/// The exact distribution serves samples up to this size each when there are no ties; beyond it, or with ties,
/// the normal approximation with the tie correction and a continuity correction of 1/2.
inline constexpr std::size_t kExactMaxSamples = 50;

}  // namespace mcmclb::stats
