// SPDX-License-Identifier: BSD-3-Clause
// The median, its order-statistics confidence interval and the Mann-Whitney U test (mcmclb/stats.hpp).
#include "mcmclb/stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>

namespace mcmclb::stats {

namespace {

/// Whether P(Binomial(n, 1/2) <= k) <= 1/40 for each k = 0, 1, ... until it is not; returns the first k for which
/// it is not (so the interval's lower rank is that k, when at least 1). Up to n = 62 in exact integers (binomial
/// coefficients and their sums times 40 fit in 64 bits below the median rank); beyond, in logarithms, where a sum
/// within 1e-15 of 1/40 could round either way (no such n has been seen: the sums are k / 2^n, never 1/40).
std::size_t first_tail_above_2_5_pct(std::size_t n, long double* tail_below) {
  *tail_below = 0;
  if (n <= 62) {
    const uint64_t total = uint64_t{1} << n;
    uint64_t term = 1, sum = 0;  // C(n, k), sum_{i < k} C(n, i)
    for (std::size_t k = 0; k <= n / 2; ++k) {
      if ((sum + term) * 40 > total) return k;
      sum += term;
      *tail_below = static_cast<long double>(sum) / static_cast<long double>(total);
      term = term * (n - k) / (k + 1);
    }
    return n / 2 + 1;
  }
  const long double log_total = static_cast<long double>(n) * std::log(2.0L);
  const long double log_n_fact = std::lgamma(static_cast<long double>(n) + 1);
  long double sum = 0;
  for (std::size_t k = 0; k <= n / 2; ++k) {
    const auto kk = static_cast<long double>(k);
    const long double term =
        std::exp(log_n_fact - std::lgamma(kk + 1) - std::lgamma(static_cast<long double>(n) - kk + 1) - log_total);
    if (sum + term > 0.025L) return k;
    sum += term;
    *tail_below = sum;
  }
  return n / 2 + 1;
}

double normal_upper_tail(double z) { return 0.5 * std::erfc(z / std::sqrt(2.0)); }

/// P(U <= u) and P(U >= u) under the null hypothesis for samples of m and n without ties: the number of
/// orderings of m a's and n b's with each U, by the recurrence f(i, j, u) = f(i-1, j, u-j) + f(i, j-1, u) (the
/// largest of the i + j values is an a, beating all j b's, or a b), counted in doubles (at most C(100, 50) ~ 1e29,
/// so only additions of positive numbers, no cancellation).
std::pair<double, double> exact_u_tails(std::size_t m, std::size_t n, double u) {
  const std::size_t max_u = m * n;
  // row[j][v]: orderings of i a's and j b's with U = v (row i), for i = 0 .. m.
  std::vector<std::vector<double>> row(n + 1, std::vector<double>(max_u + 1, 0.0));
  for (std::size_t j = 0; j <= n; ++j) row[j][0] = 1;  // i = 0: one ordering, U = 0
  for (std::size_t i = 1; i <= m; ++i) {
    std::vector<std::vector<double>> next(n + 1, std::vector<double>(max_u + 1, 0.0));
    next[0][0] = 1;  // j = 0: U = 0
    for (std::size_t j = 1; j <= n; ++j) {
      for (std::size_t v = 0; v <= i * j; ++v) {
        next[j][v] = (v >= j ? row[j][v - j] : 0.0) + next[j - 1][v];
      }
    }
    row = std::move(next);
  }
  const std::vector<double>& counts = row[n];
  double total = 0, below = 0, above = 0;
  for (std::size_t v = 0; v <= max_u; ++v) {
    total += counts[v];
    if (static_cast<double>(v) <= u) below += counts[v];
    if (static_cast<double>(v) >= u) above += counts[v];
  }
  return {below / total, above / total};
}

}  // namespace

double median(std::vector<double> x) {
  if (x.empty()) throw std::invalid_argument("median of no samples");
  std::sort(x.begin(), x.end());
  const std::size_t mid = x.size() / 2;
  return x.size() % 2 == 1 ? x[mid] : (x[mid - 1] + x[mid]) / 2;
}

std::optional<CiRanks> median_ci_ranks(std::size_t n) {
  long double tail = 0;
  const std::size_t lower = first_tail_above_2_5_pct(n, &tail);
  if (lower < 1) return std::nullopt;
  return CiRanks{lower, n + 1 - lower, static_cast<double>(1 - 2 * tail)};
}

std::optional<double> MedianCi::half_width_pct() const {
  if (!low || !high || median == 0) return std::nullopt;
  return (*high - *low) / 2 / std::abs(median) * 100;
}

MedianCi median_ci(std::vector<double> x) {
  if (x.empty()) throw std::invalid_argument("median of no samples");
  std::sort(x.begin(), x.end());
  MedianCi r;
  r.n = x.size();
  r.median = median(x);
  r.ranks = median_ci_ranks(x.size());
  if (r.ranks) {
    r.low = x[r.ranks->lower - 1];
    r.high = x[r.ranks->upper - 1];
  }
  return r;
}

MannWhitney mann_whitney(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.empty() || b.empty()) throw std::invalid_argument("Mann-Whitney test of an empty sample");
  const std::size_t m = a.size(), n = b.size(), total = m + n;
  // Midranks of the pooled samples (1-based), and the tie sizes for the variance's correction.
  std::vector<std::pair<double, bool>> pooled;  // value, from a
  for (double v : a) pooled.emplace_back(v, true);
  for (double v : b) pooled.emplace_back(v, false);
  std::sort(pooled.begin(), pooled.end());
  double rank_sum_a = 0, tie_term = 0;
  bool ties = false;
  for (std::size_t i = 0; i < total;) {
    std::size_t j = i;
    while (j < total && pooled[j].first == pooled[i].first) ++j;
    const double midrank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    const auto t = static_cast<double>(j - i);
    if (j - i > 1) ties = true;
    tie_term += t * t * t - t;
    for (std::size_t k = i; k < j; ++k) {
      if (pooled[k].second) rank_sum_a += midrank;
    }
    i = j;
  }
  MannWhitney r;
  const auto md = static_cast<double>(m), nd = static_cast<double>(n), nt = static_cast<double>(total);
  r.u_a = rank_sum_a - md * (md + 1) / 2;
  if (!ties && m <= kExactMaxSamples && n <= kExactMaxSamples) {
    const auto [below, above] = exact_u_tails(m, n, r.u_a);
    r.p = std::min(1.0, 2 * std::min(below, above));
    r.exact = true;
    return r;
  }
  const double mean = md * nd / 2;
  const double variance = md * nd / 12 * ((nt + 1) - tie_term / (nt * (nt - 1)));
  if (variance <= 0) {  // every value equal: no evidence of a difference
    r.p = 1;
    return r;
  }
  const double z = std::max(0.0, std::abs(r.u_a - mean) - 0.5) / std::sqrt(variance);
  r.p = std::min(1.0, 2 * normal_upper_tail(z));
  return r;
}

}  // namespace mcmclb::stats
