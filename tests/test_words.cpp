// SPDX-License-Identifier: BSD-3-Clause
// The structs that cross MPI as word arrays survive the round trip (plain unit tests, no mpiexec).
#include <gtest/gtest.h>

#include "mcmclb/kernel.hpp"

namespace {

TEST(Words, GroupStateRoundTrips) {
  const mcmclb::GroupState g{3, 7, 2, 41, int64_t{1} << 40};
  EXPECT_EQ(mcmclb::GroupState::from_words(g.to_words()), g);
  const mcmclb::GroupState ended{5, 5, -1, 0, 0};
  EXPECT_EQ(mcmclb::GroupState::from_words(ended.to_words()), ended);
}

TEST(Words, DecisionRoundTripsWithAnyKindAndPayload) {
  mcmclb::Decision d;
  d.kind = mcmclb::Decision::kFirstBalancerKind + 1;
  d.next = {0, 5, 3, 17, 9};
  d.other_first = 0;
  d.other_last = 2;
  EXPECT_EQ(mcmclb::Decision::from_words(d.to_words()), d);
  EXPECT_EQ(mcmclb::Decision::from_words(mcmclb::Decision{}.to_words()), mcmclb::Decision{});
}

TEST(Words, RankStatsRoundTrip) {
  mcmclb::RankStats s;
  s.elapsed_s = 1.25;
  s.work_s = 0.5;
  s.polling_s = 0.125;
  s.waiting_s = 0.25;
  s.regroup_s = 0.0625;
  s.regroups = 12;
  s.items_worked = int64_t{1} << 50;  // exact in a double up to 2^53
  s.final_first = 4;
  s.final_last = 7;
  s.state_bytes = 1352;
  s.state_s = 3.5e-6;
  EXPECT_EQ(mcmclb::RankStats::from_words(s.to_words()), s);
}

}  // namespace
