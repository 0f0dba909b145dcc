// SPDX-License-Identifier: BSD-3-Clause
// mcmclb::stats against cases worked by hand: the order-statistics ranks of the median's interval (binomial sums
// written out below), the interval on known samples, and the Mann-Whitney U test exactly and with ties.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "mcmclb/stats.hpp"

namespace st = mcmclb::stats;

TEST(Median, OddAndEvenCounts) {
  EXPECT_DOUBLE_EQ(st::median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(st::median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(st::median({7}), 7);
  EXPECT_THROW((void)st::median({}), std::invalid_argument);
}

// n = 5: P(B <= 0) = 1/32 = 0.03125 > 0.025, so no rank qualifies. n = 6: 1/64 = 0.0156 <= 0.025 but
// 1/64 + 6/64 = 0.109 > 0.025: ranks 1..6, coverage 1 - 2/64. n = 10: (1 + 10)/1024 = 0.0107 <= 0.025, (1 + 10 +
// 45)/1024 = 0.0547 > 0.025: ranks 2..9, coverage 1 - 22/1024. n = 20: (1 + 20 + 190 + 1140 + 4845)/2^20 =
// 6196/1048576 = 0.0059 <= 0.025, + 15504 = 21700/1048576 = 0.0207 <= 0.025, + 38760 = 60460/1048576 = 0.0577 >
// 0.025: l = 6, ranks 6..15, coverage 1 - 2 * 21700/1048576.
TEST(MedianCi, RanksByOrderStatistics) {
  for (std::size_t n = 0; n < 6; ++n) EXPECT_FALSE(st::median_ci_ranks(n).has_value()) << n;
  const auto six = st::median_ci_ranks(6);
  ASSERT_TRUE(six.has_value());
  EXPECT_EQ(six->lower, 1u);
  EXPECT_EQ(six->upper, 6u);
  EXPECT_DOUBLE_EQ(six->coverage, 1 - 2.0 / 64);
  const auto ten = st::median_ci_ranks(10);
  ASSERT_TRUE(ten.has_value());
  EXPECT_EQ(ten->lower, 2u);
  EXPECT_EQ(ten->upper, 9u);
  EXPECT_DOUBLE_EQ(ten->coverage, 1 - 22.0 / 1024);
  const auto twenty = st::median_ci_ranks(20);
  ASSERT_TRUE(twenty.has_value());
  EXPECT_EQ(twenty->lower, 6u);
  EXPECT_EQ(twenty->upper, 15u);
  EXPECT_DOUBLE_EQ(twenty->coverage, 1 - 2 * 21700.0 / 1048576);
}

// Beyond 62 samples the sums are taken in logarithms: the rule must still hold there, and agree with the exact
// branch where they meet. Every interval covers at least 95 %, and the next rank up would not.
TEST(MedianCi, CoverageAtLeast95PercentForEveryCount) {
  for (std::size_t n = 6; n <= 400; ++n) {
    const auto r = st::median_ci_ranks(n);
    ASSERT_TRUE(r.has_value()) << n;
    EXPECT_GE(r->coverage, 0.95) << n;
    EXPECT_EQ(r->lower + r->upper, n + 1) << n;
    EXPECT_LE(r->lower, (n + 1) / 2) << n;
  }
  // n = 100: l = 40 (P(B <= 39) = 0.0176, P(B <= 40) = 0.0284), the textbook value.
  EXPECT_EQ(st::median_ci_ranks(100)->lower, 40u);
}

TEST(MedianCi, IntervalOfSamplesAndTooFew) {
  const auto ci = st::median_ci({10, 1, 9, 2, 8, 3, 7, 4, 6, 5});  // sorted 1..10: ranks 2..9
  EXPECT_EQ(ci.n, 10u);
  EXPECT_DOUBLE_EQ(ci.median, 5.5);
  ASSERT_TRUE(ci.low && ci.high);
  EXPECT_DOUBLE_EQ(*ci.low, 2);
  EXPECT_DOUBLE_EQ(*ci.high, 9);
  EXPECT_DOUBLE_EQ(*ci.half_width_pct(), 3.5 / 5.5 * 100);
  const auto few = st::median_ci({1, 2, 3, 4, 5});
  EXPECT_DOUBLE_EQ(few.median, 3);
  EXPECT_FALSE(few.low.has_value());
  EXPECT_FALSE(few.half_width_pct().has_value());
}

// {1,2,3} against {4,5,6}: U = 0, and 1 of the C(6,3) = 20 orderings has U = 0, so p = 2/20.
// {10,11} against {1..5}: U = 10 = m n, 1 of C(7,2) = 21 orderings, p = 2/21.
// {1,2,3,5,7,8} against {4,6,9,10,11,12}: U = 5 (5 beats 4, 7 and 8 beat 4 and 6); by enumeration of the
// C(12,6) = 924 orderings, 19 have U <= 5: p = 38/924.
TEST(MannWhitney, ExactWithoutTies) {
  auto r = st::mann_whitney({1, 2, 3}, {4, 5, 6});
  EXPECT_TRUE(r.exact);
  EXPECT_DOUBLE_EQ(r.u_a, 0);
  EXPECT_NEAR(r.p, 2.0 / 20, 1e-12);
  r = st::mann_whitney({10, 11}, {1, 2, 3, 4, 5});
  EXPECT_DOUBLE_EQ(r.u_a, 10);
  EXPECT_NEAR(r.p, 2.0 / 21, 1e-12);
  r = st::mann_whitney({1, 2, 3, 5, 7, 8}, {4, 6, 9, 10, 11, 12});
  EXPECT_DOUBLE_EQ(r.u_a, 5);
  EXPECT_NEAR(r.p, 38.0 / 924, 1e-12);
  // The same samples swapped give the other tail: the same two-sided p.
  EXPECT_NEAR(st::mann_whitney({4, 6, 9, 10, 11, 12}, {1, 2, 3, 5, 7, 8}).p, 38.0 / 924, 1e-12);
}

// {1,2,2,3} against {2,3,4,5}: pairs a > b: (3,2), 1; tied pairs, a half each: (2,2) twice and (3,3) once, 1.5;
// so U = 2.5; mean 8; ties of sizes 3 and 2: sum t^3 - t = 24 + 6 = 30; variance 16/12 (9 - 30/56) =
// 11.2857; z = (5.5 - 0.5)/sqrt(11.2857) = 1.48835; p = erfc(z/sqrt 2) = 0.136658.
TEST(MannWhitney, NormalApproximationWithTies) {
  const auto r = st::mann_whitney({1, 2, 2, 3}, {2, 3, 4, 5});
  EXPECT_FALSE(r.exact);
  EXPECT_DOUBLE_EQ(r.u_a, 2.5);
  EXPECT_NEAR(r.p, 0.136658, 1e-6);
  const auto same = st::mann_whitney({1, 1, 1}, {1, 1, 1});
  EXPECT_DOUBLE_EQ(same.p, 1);
}

TEST(MannWhitney, LargeSamplesUseTheNormalApproximation) {
  std::vector<double> a, b;
  for (int i = 0; i < 60; ++i) {
    a.push_back(i);
    b.push_back(i + 0.5);
  }
  const auto r = st::mann_whitney(a, b);
  EXPECT_FALSE(r.exact);
  EXPECT_GT(r.p, 0.5);  // interleaved: no difference
}
