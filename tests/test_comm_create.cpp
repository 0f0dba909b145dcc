// SPDX-License-Identifier: BSD-3-Clause
// Conformance of every communicator creation method against the standard's semantics, checked by using each
// created communicator: an allreduce of parent ranks, a group comparison with the input group (MPI_IDENT: same
// members, same order) and an ordered ring of point-to-point messages. Runs at every rank count it is given.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "mcmclb/comm_create.hpp"
#include "mcmclb/mpi.hpp"
#include "mpi_test.hpp"

namespace mpi = mcmclb::mpi;
using mcmclb::testing::world_rank;
using mcmclb::testing::world_size;

namespace {

constexpr int kTag = 5;

std::vector<int> range(int first, int last) {  // [first, last)
  std::vector<int> r;
  for (int i = first; i < last; ++i) r.push_back(i);
  return r;
}

/// Uses comm as the communicator over exactly `members` (parent ranks, in group order) and checks it.
void verify(const mpi::Comm& comm, const std::vector<int>& members, const mpi::Group& expected, int parent_rank) {
  const auto me = std::find(members.begin(), members.end(), parent_rank);
  if (me == members.end()) {
    EXPECT_TRUE(comm.is_null()) << "a rank outside the group got a communicator";
    return;
  }
  ASSERT_FALSE(comm.is_null()) << "member " << parent_rank << " got no communicator";
  const int n = static_cast<int>(members.size());
  const int position = static_cast<int>(me - members.begin());
  EXPECT_EQ(comm.size(), n);
  EXPECT_EQ(comm.rank(), position) << "new ranks must follow the group's order";

  // Polite waits (nonblocking + napping) throughout: on oversubscribed cores a busy-polling member takes the core
  // from the member it waits for, and with other groups' ranks running ahead that is most of a test's time.
  std::vector<int64_t> sum = {parent_rank};
  mpi::allreduce_sum_politely(comm, sum);
  EXPECT_EQ(sum[0], std::accumulate(members.begin(), members.end(), int64_t{0}));

  EXPECT_EQ(mpi::compare(comm.group(), expected), MPI_IDENT);

  // Ring: three messages to the right neighbour must arrive from the left neighbour, in order.
  constexpr int kMessages = 3;
  const int right = (position + 1) % n;
  const int left = (position + n - 1) % n;
  std::vector<int> out(kMessages);
  std::vector<MPI_Request> sends(kMessages);
  for (int k = 0; k < kMessages; ++k) {
    out[k] = parent_rank * 100 + k;
    ASSERT_EQ(MPI_Isend(&out[k], 1, MPI_INT, right, 0, comm.get(), &sends[k]), MPI_SUCCESS);
  }
  for (int k = 0; k < kMessages; ++k) {
    int in = -1;
    mpi::Request receive;
    ASSERT_EQ(MPI_Irecv(&in, 1, MPI_INT, left, 0, comm.get(), receive.out()), MPI_SUCCESS);
    receive.wait();
    EXPECT_EQ(in, members[static_cast<std::size_t>(left)] * 100 + k);
  }
  mpi::wait_all_politely(sends);
}

class CommCreate : public testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { creator_ = mcmclb::make_comm_creator(GetParam(), mpi::Comm::world()); }
  // Ranks that are not busy wait asleep, so the members of a creation get the cores.
  void TearDown() override { mpi::barrier_politely(mpi::Comm::world()); }

  /// Creates over members (parent ranks of WORLD, in order) the way the method requires — group-collective:
  /// members only; parent-collective: every rank — and verifies the result.
  void create_and_verify(const std::vector<int>& members, int tag = kTag) {
    const mpi::Group group = mpi::Group::include(mpi::Comm::world().group(), members);
    const bool member = group.rank() != MPI_UNDEFINED;
    mpi::Comm comm;
    if (member || !creator_->group_collective()) comm = creator_->create(group, tag);
    verify(comm, members, group, world_rank());
  }

  /// Every rank in exactly one of several disjoint groups, all created in the same call.
  void disjoint_and_verify(const std::vector<std::vector<int>>& groups, bool distinct_tags) {
    for (std::size_t g = 0; g < groups.size(); ++g) {
      const auto& members = groups[g];
      if (std::find(members.begin(), members.end(), world_rank()) == members.end()) continue;
      const mpi::Group group = mpi::Group::include(mpi::Comm::world().group(), members);
      const mpi::Comm comm = creator_->create(group, distinct_tags ? kTag + static_cast<int>(g) : kTag);
      verify(comm, members, group, world_rank());
    }
  }

  std::unique_ptr<mcmclb::CommCreator> creator_;
};

TEST_P(CommCreate, LowerHalf) { create_and_verify(range(0, std::max(1, world_size() / 2))); }

TEST_P(CommCreate, UpperHalf) { create_and_verify(range(world_size() / 2, world_size())); }

TEST_P(CommCreate, WholeParent) { create_and_verify(range(0, world_size())); }

TEST_P(CommCreate, SingleRank) {
  create_and_verify({world_size() - 1});
  create_and_verify({0});
}

TEST_P(CommCreate, RandomSubsetsOnlyMembersCall) {
  std::mt19937 rng(20111 + static_cast<unsigned>(world_size()));  // same sequence on every rank
  for (int i = 0; i < static_cast<int>(mcmclb::testing::seeds(50)); ++i) {
    std::vector<int> all = range(0, world_size());
    std::shuffle(all.begin(), all.end(), rng);
    const int n = std::uniform_int_distribution<int>(1, world_size())(rng);
    all.resize(static_cast<std::size_t>(n));
    SCOPED_TRACE("subset " + std::to_string(i) + " of size " + std::to_string(n));
    create_and_verify(all, kTag + i % 3);
  }
}

std::vector<std::vector<int>> consecutive_groups(int k) {  // [0,k), [k,2k), ..., and a shorter leftover
  std::vector<std::vector<int>> groups;
  for (int first = 0; first < world_size(); first += k)
    groups.push_back(range(first, std::min(first + k, world_size())));
  return groups;
}

TEST_P(CommCreate, DisjointPairsAtOnceEqualTags) { disjoint_and_verify(consecutive_groups(2), false); }
TEST_P(CommCreate, DisjointPairsAtOnceDistinctTags) { disjoint_and_verify(consecutive_groups(2), true); }
TEST_P(CommCreate, DisjointTriplesAtOnceEqualTags) { disjoint_and_verify(consecutive_groups(3), false); }
TEST_P(CommCreate, DisjointTriplesAtOnceDistinctTags) { disjoint_and_verify(consecutive_groups(3), true); }

TEST_P(CommCreate, DisjointTriplesIncludeLeftoverOfOne) {
  // 4 and 7 ranks leave a group of one; make sure the suite sees that shape at any size.
  std::vector<std::vector<int>> groups = consecutive_groups(3);
  if (world_size() % 3 != 1) {
    std::vector<int> last = groups.back();
    groups.pop_back();
    const int single = last.back();
    last.pop_back();
    if (!last.empty()) groups.push_back(last);
    groups.push_back({single});
  }
  ASSERT_EQ(groups.back().size(), 1U);
  disjoint_and_verify(groups, false);
}

TEST_P(CommCreate, RangesOfParentRanks) {
  // create_range: the kernel's way in (its groups are ranges). The first and the last rank alone, ranges to the top
  // from the first, the second and the middle rank, and the empty range (first > last) that a parent-collective
  // creation's outsiders pass.
  const int n = world_size();
  const std::set<std::pair<int, int>> ranges{
      {0, 0}, {n - 1, n - 1}, {0, n - 1}, {std::min(1, n - 1), n - 1}, {n / 2, n - 1}};
  for (const auto& [first, last] : ranges) {
    SCOPED_TRACE("range " + std::to_string(first) + ".." + std::to_string(last));
    const std::vector<int> members = range(first, last + 1);
    const bool member = world_rank() >= first && world_rank() <= last;
    mpi::Comm comm;
    if (member || !creator_->group_collective()) comm = creator_->create_range(first, last, kTag);
    verify(comm, members, mpi::Group::include(mpi::Comm::world().group(), members), world_rank());
  }
  if (!creator_->group_collective()) {
    EXPECT_TRUE(creator_->create_range(1, 0, kTag).is_null());
  }
}

TEST_P(CommCreate, ReversedOrder) {
  std::vector<int> members = range(0, world_size());
  std::reverse(members.begin(), members.end());
  create_and_verify(members);
}

TEST_P(CommCreate, ShuffledOrder) {
  std::mt19937 rng(7);
  for (int i = 0; i < 5; ++i) {
    std::vector<int> members = range(0, world_size());
    std::shuffle(members.begin(), members.end(), rng);
    create_and_verify(members);
  }
}

TEST_P(CommCreate, NonPowerOfTwoSizes) {
  bool any = false;
  for (int n : {3, 5, 6, 7}) {
    if (n > world_size()) continue;
    any = true;
    std::vector<int> members = range(world_size() - n, world_size());  // the top n ranks, not starting at 0
    create_and_verify(members);
  }
  if (!any) GTEST_SKIP() << "needs at least 3 ranks";
}

TEST_P(CommCreate, UnrelatedTrafficOnParentWithSameTag) {
  // Every rank sends every other rank messages on the parent with the very tag used for creation, before the
  // creation starts; none of them may be consumed by the creation, nor any creation message by the receives.
  const mpi::Comm world = mpi::Comm::world();
  const int p = world_size();
  const int me = world_rank();
  std::vector<int> out(static_cast<std::size_t>(p));
  std::vector<MPI_Request> sends;
  for (int dest = 0; dest < p; ++dest) {
    if (dest == me) continue;
    out[static_cast<std::size_t>(dest)] = 1000 * me + dest;
    sends.emplace_back();
    ASSERT_EQ(MPI_Isend(&out[static_cast<std::size_t>(dest)], 1, MPI_INT, dest, kTag, world.get(), &sends.back()),
              MPI_SUCCESS);
  }
  create_and_verify(range(0, p), kTag);
  std::vector<int> reversed = range(0, p);
  std::reverse(reversed.begin(), reversed.end());
  create_and_verify(reversed, kTag);
  for (int src = 0; src < p; ++src) {
    if (src == me) continue;
    int in = -1;
    ASSERT_EQ(MPI_Recv(&in, 1, MPI_INT, src, kTag, world.get(), MPI_STATUS_IGNORE), MPI_SUCCESS);
    EXPECT_EQ(in, 1000 * src + me);
  }
  ASSERT_EQ(MPI_Waitall(static_cast<int>(sends.size()), sends.data(), MPI_STATUSES_IGNORE), MPI_SUCCESS);
}

TEST_P(CommCreate, ThreeThousandCreateFreeCycles) {
  // Leaking one context id per cycle exhausts MPICH's few thousand within the loop. Groups are pairs (and a
  // leftover single) taking turns while the others sleep, so the cycles run at full speed on few cores.
  // Group-collective methods create over the pair from WORLD; parent-collective ones over the pair's own
  // communicator, which is then the whole parent. Context ids are a per-process pool and a pair's cycles are the
  // same at any size, so 2 to 4 ranks (one pair, a pair and a single, two pairs) check all of it; at 6 ranks the
  // three pairs would only repeat that, at seconds of the oversubscribed suite.
  if (world_size() > 4) GTEST_SKIP() << "a pair's cycles, checked at 2 to 4 ranks";
  constexpr int kCycles = 3000;
  const mpi::Comm world = mpi::Comm::world();
  const auto groups = consecutive_groups(2);
  std::size_t mine = 0;
  while (std::find(groups[mine].begin(), groups[mine].end(), world_rank()) == groups[mine].end()) ++mine;
  MPI_Comm raw_pair = MPI_COMM_NULL;
  ASSERT_EQ(MPI_Comm_split(world.get(), static_cast<int>(mine), world_rank(), &raw_pair), MPI_SUCCESS);
  const mpi::Comm pair = mpi::Comm::adopt(raw_pair);
  const bool group_collective = creator_->group_collective();
  const auto creator = mcmclb::make_comm_creator(GetParam(), group_collective ? world : pair);
  const mpi::Group group = group_collective ? mpi::Group::include(world.group(), groups[mine]) : pair.group();
  for (std::size_t turn = 0; turn < groups.size(); ++turn) {
    if (turn == mine) {
      int wrong_size = 0;
      for (int cycle = 0; cycle < kCycles; ++cycle) {
        mpi::Comm c = creator->create(group, kTag);
        if (c.size() != static_cast<int>(groups[mine].size())) ++wrong_size;
        c.free();
      }
      EXPECT_EQ(wrong_size, 0);
      verify(creator->create(group, kTag), groups[mine], mpi::Group::include(world.group(), groups[mine]),
             world_rank());
    }
    mpi::barrier_politely(world, std::chrono::microseconds(1000));
  }
}

TEST_P(CommCreate, GroupNotSubsetOfParentIsAnError) {
  if (world_size() < 2) GTEST_SKIP() << "needs a rank outside the parent";
  // Parent: this rank alone; group: all of WORLD. Detected locally, before any communication, on every rank.
  const mpi::Comm alone = mpi::Comm::self().dup();
  const auto creator = mcmclb::make_comm_creator(GetParam(), alone);
  const mpi::Group everyone = mpi::Comm::world().group();
  try {
    (void)creator->create(everyone, kTag);
    FAIL() << "expected an error";
  } catch (const mpi::UsageError& e) {
    EXPECT_EQ(e.error_class(), MPI_ERR_GROUP);
    EXPECT_NE(std::string(e.what()).find("not a subset"), std::string::npos) << e.what();
  }
}

TEST_P(CommCreate, NegativeTagIsAnError) {
  const mpi::Group everyone = mpi::Comm::world().group();
  try {
    (void)creator_->create(everyone, -1);
    FAIL() << "expected an error";
  } catch (const mpi::UsageError& e) {
    EXPECT_EQ(e.error_class(), MPI_ERR_TAG);
    EXPECT_NE(std::string(e.what()).find("tag -1 is out of range"), std::string::npos) << e.what();
  }
}

TEST_P(CommCreate, TagAboveTagUbIsAnError) {
  const int ub = mpi::tag_ub();
  if (ub == INT_MAX) GTEST_SKIP() << "MPI_TAG_UB is INT_MAX: no tag above it exists";
  const mpi::Group everyone = mpi::Comm::world().group();
  try {
    (void)creator_->create(everyone, ub + 1);
    FAIL() << "expected an error";
  } catch (const mpi::UsageError& e) {
    EXPECT_EQ(e.error_class(), MPI_ERR_TAG);
    EXPECT_NE(std::string(e.what()).find("(MPI_TAG_UB)"), std::string::npos) << e.what();
  }
  // The largest allowed tag itself works.
  create_and_verify(range(0, world_size()), ub);
}

std::vector<std::string> supported_methods() {
  std::vector<std::string> names;
  for (auto n : mcmclb::comm_creator_names()) {
    if (n != "from_group" || mcmclb::from_group_supported()) names.emplace_back(n);
  }
  return names;
}

INSTANTIATE_TEST_SUITE_P(Methods, CommCreate, testing::ValuesIn(supported_methods()),
                         [](const testing::TestParamInfo<std::string>& info) { return info.param; });

TEST(CommCreatorFactory, UnknownMethodListsKnownOnes) {
  try {
    (void)mcmclb::make_comm_creator("bogus", mpi::Comm::world());
    FAIL() << "expected an error";
  } catch (const mpi::UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "unknown communicator creation method 'bogus' (known: intercomm, create_group, from_group, create, "
              "split)");
  }
}

TEST(CommCreatorFactory, EveryNameMakesThatMethod) {
  for (const auto& name : supported_methods()) {
    const auto creator = mcmclb::make_comm_creator(name, mpi::Comm::world());
    EXPECT_EQ(creator->name(), name);
    EXPECT_EQ(creator->group_collective(), name == "intercomm" || name == "create_group" || name == "from_group");
  }
}

TEST(CommCreatorFactory, FromGroupUnsupportedSaysSo) {
  if (mcmclb::from_group_supported()) GTEST_SKIP() << "this MPI library has MPI_Comm_create_from_group";
  try {
    (void)mcmclb::make_comm_creator("from_group", mpi::Comm::world());
    FAIL() << "expected an error";
  } catch (const mpi::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("from_group is not supported by this build: needs "
                                         "MPI_Comm_create_from_group (MPI-4), which "),
              std::string::npos)
        << e.what();
  }
}

TEST(IntercommCreate, RoundsFollowAlgorithm1ForEverySize) {
  // Algorithm 1 directly (the function the C entry point and the intercomm method share), on WORLD itself as the
  // bridge, for every prefix size: exercises every merge pattern of blocks up to the rank count.
  const mpi::Comm world = mpi::Comm::world();
  for (int n = 1; n <= world_size(); ++n) {
    const std::vector<int> members = range(0, n);
    const mpi::Group group = mpi::Group::include(world.group(), members);
    mpi::Comm comm;
    if (world_rank() < n) comm = mcmclb::intercomm_create_merge(world, members, world_rank(), kTag);
    verify(comm, members, group, world_rank());
    mpi::barrier_politely(world);
  }
}

}  // namespace
