// SPDX-License-Identifier: BSD-3-Clause
// Range communicators (mcmclb/range_comm.hpp) checked by use at every rank count they are run with: broadcasts
// from every root of every sub-range, allreduces against MPI_Allreduce over an MPI_Comm_create_group
// communicator, overlapping ranges used back to back by ranks that move between them at different times,
// nonblocking operations in flight on several ranges at once, creation churn, to_mpi(), and the caller errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "mcmclb/mpi.hpp"
#include "mcmclb/range_comm.hpp"
#include "mpi_test.hpp"

namespace mpi = mcmclb::mpi;
using mcmclb::RangeComm;
using mcmclb::RangeContext;
using mcmclb::RangeRequest;
using mcmclb::ReduceOp;
using mcmclb::testing::world_rank;
using mcmclb::testing::world_size;

namespace {

bool member(int first, int last) { return first <= world_rank() && world_rank() <= last; }

/// A real communicator over parent ranks [first, last] made by MPI_Comm_create_group on WORLD (members only).
mpi::Comm reference_comm(int first, int last) {
  std::vector<int> ranks(static_cast<std::size_t>(last - first + 1));
  std::iota(ranks.begin(), ranks.end(), first);
  const mpi::Group group = mpi::Group::include(mpi::Comm::world().group(), ranks);
  MPI_Comm comm = MPI_COMM_NULL;
  mpi::check(MPI_Comm_create_group(MPI_COMM_WORLD, group.get(), 77, &comm), "MPI_Comm_create_group");
  return mpi::Comm::adopt(comm);
}

MPI_Op mpi_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum:
      return MPI_SUM;
    case ReduceOp::max:
      return MPI_MAX;
    case ReduceOp::min:
      return MPI_MIN;
  }
  return MPI_OP_NULL;
}

/// A value every rank can compute for (range, root, element): what a broadcast must deliver.
std::int64_t payload(int first, int last, int root, int element) {
  return 1000003LL * first + 1009LL * last + 31LL * root + element + 7;
}

/// Broadcasts three words from range rank root and checks every member got the root's words.
void check_bcast(RangeComm& comm, int root) {
  std::vector<std::int64_t> words(3, -1);
  if (comm.rank() == root) {
    for (int e = 0; e < 3; ++e) words[static_cast<std::size_t>(e)] = payload(comm.first(), comm.last(), root, e);
  }
  comm.bcast(words.data(), 3, MPI_INT64_T, root);
  for (int e = 0; e < 3; ++e) {
    EXPECT_EQ(words[static_cast<std::size_t>(e)], payload(comm.first(), comm.last(), root, e))
        << "bcast on [" << comm.first() << ", " << comm.last() << "] from root " << root << ", element " << e;
  }
}

/// Sum and max of the members' parent ranks, checked against the closed form.
void check_allreduce_ranks(RangeComm& comm) {
  std::vector<std::int64_t> values = {world_rank(), world_rank()};
  comm.allreduce(std::span(values).first(1), ReduceOp::sum);
  comm.allreduce(std::span(values).last(1), ReduceOp::max);
  const std::int64_t f = comm.first();
  const std::int64_t l = comm.last();
  EXPECT_EQ(values[0], (f + l) * (l - f + 1) / 2) << "sum over [" << f << ", " << l << "]";
  EXPECT_EQ(values[1], l) << "max over [" << f << ", " << l << "]";
}

void sleep_us(std::mt19937& random, int max_us) {
  std::this_thread::sleep_for(std::chrono::microseconds(std::uniform_int_distribution<int>(0, max_us)(random)));
}

/// Progresses both requests (each tested every time); true once both are complete.
bool test_both(RangeRequest& a, RangeRequest& b) {
  const bool a_done = a.test();
  const bool b_done = b.test();
  return a_done && b_done;
}

void expect_usage_error(const std::function<void()>& call, int error_class, const std::string& text) {
  try {
    call();
    ADD_FAILURE() << "expected mpi::UsageError containing \"" << text << "\"";
  } catch (const mpi::UsageError& e) {
    EXPECT_EQ(e.error_class(), error_class) << e.what();
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

}  // namespace

TEST(RangeTag, DistinctForEveryRangeAndWindowUpTo63RanksAndWithinTheMinimumTagBound) {
  std::vector<bool> seen(32768, false);
  for (int last = 0; last < mcmclb::kRangeMaxDistinct; ++last) {
    for (int first = 0; first <= last; ++first) {
      for (std::uint64_t seq = 0; seq < mcmclb::kRangeTagWindow; ++seq) {
        const int tag = mcmclb::range_tag(first, last, seq);
        ASSERT_GE(tag, 0);
        ASSERT_LE(tag, 32767);
        ASSERT_FALSE(seen[static_cast<std::size_t>(tag)])
            << "tag " << tag << " reused by [" << first << ", " << last << "] seq " << seq;
        seen[static_cast<std::size_t>(tag)] = true;
        EXPECT_EQ(mcmclb::range_tag(first, last, seq + mcmclb::kRangeTagWindow), tag) << "the window wraps";
      }
    }
  }
  // Huge parents still stay within the bound.
  EXPECT_LE(mcmclb::range_tag(2'000'000'000, 2'000'000'001, 12345), 32767);
  EXPECT_GE(mcmclb::range_tag(2'000'000'000, 2'000'000'001, 12345), 0);
}

TEST(RangeComm, CreationIsLocalAndGivesRankAndSize) {
  RangeContext context(mpi::Comm::world());
  const int P = world_size();
  const int me = world_rank();
  // Only the last rank creates; if creation sent or waited for anything, this would hang (test timeout).
  if (me == P - 1) {
    for (int round = 0; round < 1000; ++round) {
      for (int first = 0; first <= me; ++first) {
        RangeComm r(context, first, me);
        ASSERT_EQ(r.rank(), me - first);
        ASSERT_EQ(r.size(), me - first + 1);
        ASSERT_EQ(r.first(), first);
        ASSERT_EQ(r.last(), me);
        ASSERT_TRUE(r.contains_parent_rank(me));
        r.free();
        ASSERT_TRUE(r.is_null());
      }
    }
  }
  mpi::barrier_politely(mpi::Comm::world());
  RangeComm whole = RangeComm::whole(context);
  EXPECT_EQ(whole.size(), P);
  EXPECT_EQ(whole.rank(), me);
  EXPECT_EQ(context.in_flight(), 0U);
}

TEST(RangeComm, HalvesWorkIndependently) {
  const int P = world_size();
  if (P < 2) GTEST_SKIP() << "needs two ranks";
  RangeContext context(mpi::Comm::world());
  const int mid = P / 2;
  RangeComm half = world_rank() < mid ? RangeComm(context, 0, mid - 1) : RangeComm(context, mid, P - 1);
  for (int root = 0; root < half.size(); ++root) check_bcast(half, root);
  check_allreduce_ranks(half);
  half.barrier();
}

TEST(RangeComm, WholeParentMatchesWorldCollectives) {
  RangeContext context(mpi::Comm::world());
  RangeComm whole = RangeComm::whole(context);
  for (int root = 0; root < whole.size(); ++root) check_bcast(whole, root);
  for (const ReduceOp op : {ReduceOp::sum, ReduceOp::max, ReduceOp::min}) {
    std::vector<std::int64_t> mine = {world_rank() * 7 - 3, -world_rank(), 1LL << 40};
    std::vector<std::int64_t> expected(mine.size());
    mpi::check(MPI_Allreduce(mine.data(), expected.data(), 3, MPI_INT64_T, mpi_op(op), MPI_COMM_WORLD),
               "MPI_Allreduce");
    whole.allreduce(mine, op);
    EXPECT_EQ(mine, expected);
  }
}

TEST(RangeComm, SingleRankRangesCompleteAtOnce) {
  RangeContext context(mpi::Comm::world());
  RangeComm self(context, world_rank(), world_rank());
  EXPECT_EQ(self.rank(), 0);
  EXPECT_EQ(self.size(), 1);
  std::int64_t word = 42;
  RangeRequest request = self.ibcast(&word, 1, MPI_INT64_T, 0);
  EXPECT_FALSE(request.active());
  EXPECT_TRUE(request.test());
  EXPECT_EQ(word, 42);
  std::vector<double> values = {1.5, -2.0};
  self.allreduce(values, ReduceOp::sum);
  EXPECT_EQ(values, (std::vector<double>{1.5, -2.0}));
  self.barrier();
  EXPECT_EQ(context.in_flight(), 0U);
}

TEST(RangeComm, EverySubRangeBroadcastsFromEveryRootAndReducesLikeCreateGroup) {
  RangeContext context(mpi::Comm::world());
  const int P = world_size();
  for (int first = 0; first < P; ++first) {
    for (int last = first; last < P; ++last) {
      if (!member(first, last)) continue;
      RangeComm range(context, first, last);
      for (int root = 0; root < range.size(); ++root) check_bcast(range, root);
      check_allreduce_ranks(range);
      const mpi::Comm reference = reference_comm(first, last);
      std::vector<std::int64_t> mine = {world_rank() * 3 + first, last - world_rank()};
      std::vector<std::int64_t> expected(2);
      mpi::check(MPI_Allreduce(mine.data(), expected.data(), 2, MPI_INT64_T, MPI_SUM, reference.get()),
                 "MPI_Allreduce");
      range.allreduce(mine, ReduceOp::sum);
      EXPECT_EQ(mine, expected) << "[" << first << ", " << last << "]";
    }
  }
  EXPECT_EQ(context.in_flight(), 0U);
}

TEST(RangeComm, AllreduceEqualsMpiAllreduceOverCreateGroupForEveryOpAndType) {
  RangeContext context(mpi::Comm::world());
  const int P = world_size();
  const int me = world_rank();
  // The ranges in one global order; each rank takes part in those it belongs to.
  const std::vector<std::pair<int, int>> ranges = {
      {0, P - 1}, {0, (P - 1) / 2}, {(P - 1) / 2 + 1, P - 1}, {std::min(1, P - 1), P - 1}, {0, std::max(0, P - 2)}};
  for (const auto& [first, last] : ranges) {
    if (first > last || !member(first, last)) continue;
    RangeComm range(context, first, last);
    const mpi::Comm reference = reference_comm(first, last);
    for (const ReduceOp op : {ReduceOp::sum, ReduceOp::max, ReduceOp::min}) {
      const std::int64_t m = me;
      std::vector<std::int64_t> ints = {m, -5 * m, m * m - 4, (m % 2 == 0 ? 1 : -1) * (1LL << 50)};
      std::vector<std::int64_t> ints_expected(ints.size());
      mpi::check(MPI_Allreduce(ints.data(), ints_expected.data(), static_cast<int>(ints.size()), MPI_INT64_T,
                               mpi_op(op), reference.get()),
                 "MPI_Allreduce");
      range.allreduce(ints, op);
      EXPECT_EQ(ints, ints_expected) << "int64 on [" << first << ", " << last << "]";

      // Halves and small integers: every partial sum is exact, so any summation order gives the same bits.
      std::vector<double> reals = {me * 0.5 - 3.25, -1.0 * me, 1024.0 + me};
      std::vector<double> reals_expected(reals.size());
      mpi::check(MPI_Allreduce(reals.data(), reals_expected.data(), static_cast<int>(reals.size()), MPI_DOUBLE,
                               mpi_op(op), reference.get()),
                 "MPI_Allreduce");
      range.allreduce(reals, op);
      EXPECT_EQ(reals, reals_expected) << "double on [" << first << ", " << last << "]";
    }
  }
}

TEST(RangeComm, DoubleSumsAreBitwiseEqualOnEveryMemberAndInEveryRun) {
  RangeContext context(mpi::Comm::world());
  RangeComm whole = RangeComm::whole(context);
  std::mt19937 values_random(1234U + static_cast<unsigned>(world_rank()));
  std::vector<double> mine(8);
  for (double& x : mine)
    x = std::ldexp(std::uniform_real_distribution<double>(-1, 1)(values_random),
                   std::uniform_int_distribution<int>(-30, 30)(values_random));
  std::mt19937 delays(99U + static_cast<unsigned>(world_rank()));
  std::vector<std::int64_t> first_bits;
  for (int run = 0; run < 10; ++run) {
    sleep_us(delays, 2000);  // members arrive in a different order every run
    std::vector<double> sums = mine;
    whole.allreduce(sums, ReduceOp::sum);
    std::vector<std::int64_t> bits(sums.size());
    for (std::size_t i = 0; i < sums.size(); ++i) bits[i] = std::bit_cast<std::int64_t>(sums[i]);
    if (run == 0) first_bits = bits;
    EXPECT_EQ(bits, first_bits) << "run " << run << " summed in another order";
    std::vector<std::int64_t> lowest(bits.size());
    std::vector<std::int64_t> highest(bits.size());
    mpi::check(
        MPI_Allreduce(bits.data(), lowest.data(), static_cast<int>(bits.size()), MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD),
        "MPI_Allreduce");
    mpi::check(
        MPI_Allreduce(bits.data(), highest.data(), static_cast<int>(bits.size()), MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD),
        "MPI_Allreduce");
    EXPECT_EQ(lowest, highest) << "members disagree on the bits of the sum";
  }
}

TEST(RangeComm, OverlappingRangesBackToBackWithMembersMovingAtDifferentTimes) {
  RangeContext context(mpi::Comm::world());
  const int P = world_size();
  // One global sequence of ranges (the same on every rank): nested, shifted and random ones.
  std::vector<std::pair<int, int>> sequence = {
      {0, P - 1}, {0, P / 2}, {P / 2, P - 1}, {0, P - 1}, {std::min(1, P - 1), P - 1}, {0, std::max(0, P - 2)}};
  std::mt19937 shared(4242U);
  for (int i = 0; i < 80; ++i) {
    int a = std::uniform_int_distribution<int>(0, P - 1)(shared);
    int b = std::uniform_int_distribution<int>(0, P - 1)(shared);
    sequence.emplace_back(std::min(a, b), std::max(a, b));
  }
  std::mt19937 delays(7U + static_cast<unsigned>(world_rank()));
  std::mt19937 ops(11U);  // the same operation choices everywhere
  for (const auto& [first, last] : sequence) {
    const int kind = std::uniform_int_distribution<int>(0, 2)(ops);
    const int root_pick = std::uniform_int_distribution<int>(0, 1 << 20)(ops);
    if (!member(first, last)) continue;
    sleep_us(delays, 1500);  // ranks leave the previous range and enter this one at different times
    RangeComm range(context, first, last);
    if (kind == 0) {
      check_bcast(range, root_pick % range.size());
    } else if (kind == 1) {
      check_allreduce_ranks(range);
    } else {
      range.barrier();
      check_bcast(range, (root_pick + 1) % range.size());
    }
    range.free();
  }
  EXPECT_EQ(context.in_flight(), 0U);
}

TEST(RangeComm, NonblockingOperationsOnOverlappingRangesStartedInDifferentOrders) {
  const int P = world_size();
  if (P < 3) GTEST_SKIP() << "needs two ranges that share two ranks";
  RangeContext context(mpi::Comm::world());
  const int me = world_rank();
  RangeComm whole = RangeComm::whole(context);
  RangeComm front = me <= P - 2 ? RangeComm(context, 0, P - 2) : RangeComm();  // shares P - 1 >= 2 ranks
  std::mt19937 delays(5U + static_cast<unsigned>(me));
  const bool in_front = me <= P - 2;
  for (int round = 0; round < 20; ++round) {
    // Even rounds: two broadcasts from parent rank 0, which sends both to rank 1 (its first child in both trees);
    // rank 0 starts the whole range's first and rank 1 the front's first, so with one tag for both, rank 1's
    // first receive would take the other range's message. Odd rounds: a broadcast from a moving root beside an
    // allreduce.
    const bool two_bcasts = round % 2 == 0;
    const int root = two_bcasts ? 0 : round % P;
    std::int64_t word = whole.rank() == root ? payload(0, P - 1, root, round) : -1;
    std::int64_t front_word = me == 0 ? payload(0, P - 2, 0, round) : -1;
    std::vector<std::int64_t> sum = {me};
    RangeRequest a;
    RangeRequest b;
    auto start_front = [&] {
      if (!in_front) return;
      b = two_bcasts ? front.ibcast(&front_word, 1, MPI_INT64_T, 0) : front.iallreduce(sum, ReduceOp::sum);
    };
    if (me % 2 == 0) {  // even ranks start the whole range's operation first, odd ranks the front's
      a = whole.ibcast(&word, 1, MPI_INT64_T, root);
      start_front();
    } else {
      start_front();
      a = whole.ibcast(&word, 1, MPI_INT64_T, root);
    }
    sleep_us(delays, 500);
    while (!test_both(a, b)) std::this_thread::sleep_for(mpi::default_nap);
    EXPECT_EQ(word, payload(0, P - 1, root, round)) << "round " << round;
    if (in_front && two_bcasts) {
      EXPECT_EQ(front_word, payload(0, P - 2, 0, round)) << "round " << round;
    }
    if (in_front && !two_bcasts) {
      EXPECT_EQ(sum[0], static_cast<std::int64_t>(P - 2) * (P - 1) / 2) << "round " << round;
    }
  }
  EXPECT_EQ(context.in_flight(), 0U);
}

TEST(RangeComm, PipelinedBroadcastsOnOneRangeCompleteInAnyOrder) {
  RangeContext context(mpi::Comm::world());
  RangeComm whole = RangeComm::whole(context);
  const int P = world_size();
  constexpr int kInFlight = mcmclb::kRangeTagWindow;  // the most the tag window allows
  std::vector<std::int64_t> words(kInFlight, -1);
  std::vector<RangeRequest> requests;
  for (int i = 0; i < kInFlight; ++i) {
    const int root = i % P;
    if (whole.rank() == root) words[static_cast<std::size_t>(i)] = payload(0, P - 1, root, i);
    requests.push_back(whole.ibcast(&words[static_cast<std::size_t>(i)], 1, MPI_INT64_T, root));
  }
  for (auto it = requests.rbegin(); it != requests.rend(); ++it) it->wait();  // newest first
  for (int i = 0; i < kInFlight; ++i) EXPECT_EQ(words[static_cast<std::size_t>(i)], payload(0, P - 1, i % P, i));
  EXPECT_EQ(context.in_flight(), 0U);
}

TEST(RangeComm, ConcurrentDisjointRanges) {
  RangeContext context(mpi::Comm::world());
  const int P = world_size();
  const int me = world_rank();
  for (const int width : {2, 3}) {
    const int first = me / width * width;
    RangeComm mine(context, first, std::min(P - 1, first + width - 1));
    for (int round = 0; round < 50; ++round) {
      std::vector<std::int64_t> sum = {me + round};
      RangeRequest reduce = mine.iallreduce(sum, ReduceOp::sum);
      std::int64_t word = mine.rank() == round % mine.size() ? payload(mine.first(), mine.last(), round, 0) : -1;
      RangeRequest bcast = mine.ibcast(&word, 1, MPI_INT64_T, round % mine.size());
      while (!test_both(reduce, bcast)) std::this_thread::sleep_for(mpi::default_nap);
      const std::int64_t f = mine.first();
      const std::int64_t l = mine.last();
      EXPECT_EQ(sum[0], (f + l) * (l - f + 1) / 2 + round * (l - f + 1));
      EXPECT_EQ(word, payload(mine.first(), mine.last(), round, 0));
    }
  }
}

TEST(RangeComm, ThreeThousandCreateFreeCycles) {
  RangeContext context(mpi::Comm::world());
  const int P = world_size();
  const int me = world_rank();
  const int mid = (P + 1) / 2;
  std::int64_t checked = 0;
  for (int cycle = 0; cycle < 3000; ++cycle) {
    int first = 0;
    int last = P - 1;
    if (cycle % 3 == 1) {  // halves
      first = me < mid ? 0 : mid;
      last = me < mid ? mid - 1 : P - 1;
    } else if (cycle % 3 == 2) {  // pairs
      first = me / 2 * 2;
      last = std::min(P - 1, first + 1);
    }
    RangeComm range(context, first, last);
    std::vector<std::int64_t> value = {1};
    range.allreduce(value, ReduceOp::sum);
    checked += value[0] == range.size() ? 1 : 0;
    range.free();
  }
  EXPECT_EQ(checked, 3000);
  EXPECT_EQ(context.in_flight(), 0U);
}

TEST(RangeComm, DroppedRequestCompletesOnDestruction) {
  RangeContext context(mpi::Comm::world());
  RangeComm whole = RangeComm::whole(context);
  std::int64_t word = whole.rank() == 0 ? 99 : -1;
  { RangeRequest dropped = whole.ibcast(&word, 1, MPI_INT64_T, 0); }
  EXPECT_EQ(word, 99);
  EXPECT_EQ(context.in_flight(), 0U);
}

TEST(RangeComm, MovesCarryTheRangeAndItsSequence) {
  RangeContext context(mpi::Comm::world());
  RangeComm a = RangeComm::whole(context);
  check_bcast(a, 0);
  RangeComm b(std::move(a));
  EXPECT_TRUE(a.is_null());  // NOLINT(bugprone-use-after-move): moved-from state is specified
  check_bcast(b, b.size() - 1);
  RangeComm c;
  c = std::move(b);
  EXPECT_TRUE(b.is_null());  // NOLINT(bugprone-use-after-move)
  check_allreduce_ranks(c);
  EXPECT_EQ(c.size(), world_size());
}

TEST(RangeComm, ToMpiGivesAnMpiCommunicatorOverTheRange) {
  RangeContext context(mpi::Comm::world());
  const int P = world_size();
  const int mid = P / 2;
  for (const bool halves : {false, true}) {
    const int first = halves && world_rank() >= mid ? mid : 0;
    const int last = halves && world_rank() < mid ? mid - 1 : P - 1;
    RangeComm range(context, first, last);
    const mpi::Comm comm = range.to_mpi(3);
    ASSERT_FALSE(comm.is_null());
    EXPECT_EQ(comm.size(), range.size());
    EXPECT_EQ(comm.rank(), range.rank());
    std::int64_t mine = world_rank();
    std::int64_t sum = 0;
    mpi::check(MPI_Allreduce(&mine, &sum, 1, MPI_INT64_T, MPI_SUM, comm.get()), "MPI_Allreduce");
    EXPECT_EQ(sum, static_cast<std::int64_t>(first + last) * (last - first + 1) / 2);
    int ranges[1][3] = {{first, last, 1}};
    MPI_Group expected = MPI_GROUP_NULL;
    mpi::check(MPI_Group_range_incl(mpi::Comm::world().group().get(), 1, ranges, &expected), "MPI_Group_range_incl");
    EXPECT_EQ(mpi::compare(comm.group(), mpi::Group(expected)), MPI_IDENT);
    check_bcast(range, 0);  // the range itself still works next to its MPI twin
  }
}

TEST(RangeCommErrors, BadRangesAreCallerErrors) {
  RangeContext context(mpi::Comm::world());
  const int P = world_size();
  const int me = world_rank();
  expect_usage_error([&] { RangeComm r(context, me + 1, me); }, MPI_ERR_ARG, "first must not exceed last");
  expect_usage_error([&] { RangeComm r(context, -1, me); }, MPI_ERR_RANK, "not inside the parent's ranks 0..");
  expect_usage_error([&] { RangeComm r(context, me, P); }, MPI_ERR_RANK, "not inside the parent's ranks 0..");
  if (P >= 2) {
    const int other = (me + 1) % P;
    expect_usage_error([&] { RangeComm r(context, other, other); }, MPI_ERR_RANK, "is not in range");
  }
  EXPECT_EQ(context.in_flight(), 0U);
}

TEST(RangeCommErrors, NonContiguousGroupsAreRefused) {
  RangeContext context(mpi::Comm::world());
  const int P = world_size();
  const mpi::Group world = mpi::Comm::world().group();
  std::vector<int> all(static_cast<std::size_t>(P));
  std::iota(all.begin(), all.end(), 0);
  RangeComm whole = RangeComm::from_group(context, mpi::Group::include(world, all));
  EXPECT_EQ(whole.size(), P);
  EXPECT_EQ(whole.rank(), world_rank());
  if (P >= 2) {
    std::vector<int> reversed(all.rbegin(), all.rend());
    expect_usage_error([&] { (void)RangeComm::from_group(context, mpi::Group::include(world, reversed)); },
                       MPI_ERR_GROUP, "not a contiguous range of the parent");
  }
  if (P >= 3) {
    const std::vector<int> gap = {0, 2};
    expect_usage_error([&] { (void)RangeComm::from_group(context, mpi::Group::include(world, gap)); }, MPI_ERR_GROUP,
                       "member 1 is parent rank 2, expected 1");
  }
  expect_usage_error([&] { (void)RangeComm::from_group(context, mpi::Group::view(MPI_GROUP_EMPTY)); }, MPI_ERR_GROUP,
                     "group is empty");
}

TEST(RangeCommErrors, BadOperationArgumentsAndStatesAreCallerErrors) {
  RangeContext context(mpi::Comm::world());
  RangeComm whole = RangeComm::whole(context);
  std::int64_t word = 0;
  expect_usage_error([&] { whole.bcast(&word, 1, MPI_INT64_T, whole.size()); }, MPI_ERR_ROOT, "is not a rank");
  expect_usage_error([&] { whole.bcast(&word, -1, MPI_INT64_T, 0); }, MPI_ERR_COUNT, "negative count");
  expect_usage_error([&] { (void)whole.to_mpi(-1); }, MPI_ERR_TAG, "out of range");
  RangeComm null;
  expect_usage_error([&] { null.barrier(); }, MPI_ERR_COMM, "null range communicator");
  // The refused calls started nothing, so the range is still in step on every member.
  check_bcast(whole, 0);
  if (whole.size() >= 2) {
    RangeRequest pending = whole.ibarrier();  // not tested yet, so still in flight on this rank
    expect_usage_error([&] { whole.free(); }, MPI_ERR_PENDING, "in flight");
    pending.wait();
    // A 17th operation in flight on one range would reuse a tag: refused before it sends anything.
    std::vector<std::int64_t> words(mcmclb::kRangeTagWindow + 1, 5);
    std::vector<RangeRequest> requests;
    for (int i = 0; i < mcmclb::kRangeTagWindow; ++i) {
      requests.push_back(whole.ibcast(&words[static_cast<std::size_t>(i)], 1, MPI_INT64_T, 0));
    }
    expect_usage_error([&] { (void)whole.ibcast(&words.back(), 1, MPI_INT64_T, 0); }, MPI_ERR_TAG, "still in flight");
    for (RangeRequest& r : requests) r.wait();
  }
  whole.free();
  EXPECT_TRUE(whole.is_null());
  EXPECT_EQ(context.in_flight(), 0U);
}

// Not a timed test: prints the creation cost, the mean over 1e6 local creations (and frees) per range size, as
// the median of 5 repetitions with their spread. Only the assertion that every creation gave the right size
// can fail.
TEST(RangeCommBench, CreationTimePerCall) {
  RangeContext context(mpi::Comm::world());
  const int P = world_size();
  const int me = world_rank();
  constexpr int kCreations = 1'000'000;
  constexpr int kRepeats = 5;
  for (int size = 1; size <= P; ++size) {
    const int first = std::min(me, P - size);
    std::vector<double> ns(kRepeats);
    std::int64_t sizes = 0;
    for (int rep = 0; rep < kRepeats; ++rep) {
      const double t0 = MPI_Wtime();
      for (int i = 0; i < kCreations; ++i) {
        RangeComm r(context, first, first + size - 1);
        sizes += r.size();
        r.free();
      }
      ns[static_cast<std::size_t>(rep)] = (MPI_Wtime() - t0) / kCreations * 1e9;
    }
    EXPECT_EQ(sizes, static_cast<std::int64_t>(size) * kCreations * kRepeats);
    std::sort(ns.begin(), ns.end());
    if (me == 0) {
      std::printf("range creation, size %d of %d: median %.1f ns per call (min %.1f, max %.1f; %d x 1e6 calls)\n", size,
                  P, ns[kRepeats / 2], ns.front(), ns.back(), kRepeats);
    }
  }
}
