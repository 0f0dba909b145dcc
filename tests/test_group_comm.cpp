// SPDX-License-Identifier: BSD-3-Clause
// Conformance of the group communicators (mcmclb/group_comm.hpp) for every creation method, in the cases that
// apply to contiguous rank ranges, the only groups the kernel forms: ranges of every position and size, disjoint
// ranges created at once, many create/free cycles, and for `range` the errors for groups that are not a
// contiguous ascending run. Each communicator is checked by using it: broadcast, sum, barrier, free. Also the one
// method table: every factory agrees with the facts it lists.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include "mcmclb/comm_create.hpp"
#include "mcmclb/group_comm.hpp"
#include "mcmclb/mpi.hpp"
#include "mpi_test.hpp"

namespace mpi = mcmclb::mpi;
using mcmclb::testing::world_rank;
using mcmclb::testing::world_size;

namespace {

constexpr int kTag = 5;

/// Creates [first, last] (every parent rank passes its own range, or none) and checks the result by using it.
void create_and_verify(mcmclb::GroupCommCreator& creator, int first, int last) {
  const int me = world_rank();
  const bool member = first <= me && me <= last;
  std::unique_ptr<mcmclb::GroupComm> comm;
  if (member) {
    comm = creator.create_range(first, last, kTag);
  } else if (!creator.group_collective()) {
    comm = creator.create(mpi::Group::view(MPI_GROUP_EMPTY), kTag);
  }
  if (!member) {
    EXPECT_EQ(comm, nullptr);
    return;
  }
  ASSERT_NE(comm, nullptr);
  const int n = last - first + 1;
  EXPECT_EQ(comm->size(), n);
  EXPECT_EQ(comm->rank(), me - first) << "ranks follow the parent's order";
  std::vector<int64_t> words = {me == last ? int64_t{1000 + last} : 0, 7};
  comm->bcast(words, n - 1);
  EXPECT_EQ(words[0], 1000 + last) << "broadcast from the last member";
  std::vector<int64_t> sum = {me, 1};
  comm->allreduce_sum(sum);
  EXPECT_EQ(sum[0], int64_t{n} * (first + last) / 2);
  EXPECT_EQ(sum[1], n);
  comm->barrier();
  comm->free();
}

class GroupCommCreate : public testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { creator_ = mcmclb::make_group_comm_creator(GetParam(), mpi::Comm::world()); }
  /// Every rank in ranges of k consecutive ranks ([0, k), [k, 2k), ..., and a shorter leftover), all at once.
  void consecutive(int k) {
    const int first = world_rank() / k * k;
    const int last = std::min(first + k, world_size()) - 1;
    if (creator_->group_collective()) {
      create_and_verify(*creator_, first, last);
    } else {  // parent-collective: every rank passes its own range in the same call
      auto comm = creator_->create_range(first, last, kTag);
      ASSERT_NE(comm, nullptr);
      EXPECT_EQ(comm->size(), last - first + 1);
      std::vector<int64_t> sum = {1};
      comm->allreduce_sum(sum);
      EXPECT_EQ(sum[0], last - first + 1);
      comm->free();
    }
  }
  std::unique_ptr<mcmclb::GroupCommCreator> creator_;
};

TEST_P(GroupCommCreate, LowerHalfUpperHalfWholeAndSingle) {
  const int p = world_size();
  create_and_verify(*creator_, 0, std::max(1, p / 2) - 1);
  create_and_verify(*creator_, p / 2, p - 1);
  create_and_verify(*creator_, 0, p - 1);
  create_and_verify(*creator_, p - 1, p - 1);
}

TEST_P(GroupCommCreate, EveryRangeOfEverySize) {
  const int p = world_size();
  if (!creator_->group_collective() && p > 4) GTEST_SKIP() << "parent-collective: every rank takes part each time";
  for (int first = 0; first < p; ++first) {
    for (int last = first; last < p; ++last) create_and_verify(*creator_, first, last);
  }
}

TEST_P(GroupCommCreate, DisjointRangesAtOnce) {
  for (int k : {1, 2, 3}) consecutive(k);
}

TEST_P(GroupCommCreate, ManyCreateFreeCycles) {
  // range is local, so it gets many cycles cheaply; the MPI methods synchronise and get fewer (CI time).
  const int cycles = GetParam() == "range" ? 300 : 30;
  for (int i = 0; i < cycles; ++i) consecutive(1 + i % 3);
}

TEST_P(GroupCommCreate, NameIsTheMethod) { EXPECT_EQ(creator_->name(), GetParam()); }

std::vector<std::string> methods() {
  std::vector<std::string> m;
  for (auto name : mcmclb::group_comm_method_names()) {
    if (name != "from_group" || mcmclb::from_group_supported()) m.emplace_back(name);
  }
  return m;
}

INSTANTIATE_TEST_SUITE_P(Methods, GroupCommCreate, testing::ValuesIn(methods()),
                         [](const auto& info) { return info.param; });

TEST(RangeGroupComm, IsListedAndGroupCollective) {
  const auto names = mcmclb::group_comm_method_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "range"), names.end());
  EXPECT_TRUE(mcmclb::make_group_comm_creator("range", mpi::Comm::world())->group_collective());
}

TEST(RangeGroupComm, NonContiguousGroupIsAClearError) {
  if (world_size() < 3) GTEST_SKIP() << "needs 3 ranks for a gap";
  auto creator = mcmclb::make_group_comm_creator("range", mpi::Comm::world());
  const int me = world_rank();
  if (me != 0 && me != 2) return;
  const mpi::Group gap = mpi::Group::include(mpi::Comm::world().group(), std::vector<int>{0, 2});
  try {
    (void)creator->create(gap, kTag);
    ADD_FAILURE() << "a group with a gap was accepted";
  } catch (const mpi::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("contiguous"), std::string::npos) << e.what();
  }
}

TEST(RangeGroupComm, ReversedGroupIsAClearError) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks";
  auto creator = mcmclb::make_group_comm_creator("range", mpi::Comm::world());
  const int me = world_rank();
  if (me > 1) return;
  const mpi::Group reversed = mpi::Group::include(mpi::Comm::world().group(), std::vector<int>{1, 0});
  EXPECT_THROW((void)creator->create(reversed, kTag), mpi::UsageError);
}

TEST(RangeGroupComm, NonMemberGetsNullWithoutCommunicating) {
  auto creator = mcmclb::make_group_comm_creator("range", mpi::Comm::world());
  const mpi::Group first_only = mpi::Group::include(mpi::Comm::world().group(), std::vector<int>{0});
  auto comm = creator->create(first_only, kTag);
  EXPECT_EQ(comm == nullptr, world_rank() != 0);
  if (comm) comm->free();
}

TEST(MethodTable, FactoriesAgreeWithTheFacts) {
  const auto table = mcmclb::creation_methods();
  const auto all = mcmclb::group_comm_method_names();
  ASSERT_EQ(all.size(), table.size());
  std::vector<std::string_view> mpi_names;
  for (std::size_t i = 0; i < table.size(); ++i) {
    const mcmclb::MethodInfo& m = table[i];
    EXPECT_EQ(all[i], m.name) << "one order for every list";
    if (m.mpi_communicator) mpi_names.push_back(m.name);
    if (!m.supported) {
      EXPECT_THROW((void)mcmclb::make_group_comm_creator(m.name, mpi::Comm::world()), mpi::UsageError) << m.name;
      continue;
    }
    const auto creator = mcmclb::make_group_comm_creator(m.name, mpi::Comm::world());
    EXPECT_EQ(creator->name(), m.name);
    EXPECT_EQ(creator->group_collective(), m.group_collective) << m.name;
    EXPECT_EQ(creator->info().contiguous_only, m.contiguous_only) << m.name;
    EXPECT_EQ(creator->info().mpi_communicator, m.mpi_communicator) << m.name;
    if (m.mpi_communicator) {
      EXPECT_EQ(mcmclb::make_comm_creator(m.name, mpi::Comm::world())->group_collective(), m.group_collective);
    } else {
      EXPECT_THROW((void)mcmclb::make_comm_creator(m.name, mpi::Comm::world()), mpi::UsageError)
          << m.name << " makes no MPI communicator";
    }
  }
  const auto comm_names = mcmclb::comm_creator_names();
  EXPECT_EQ(std::vector<std::string_view>(comm_names.begin(), comm_names.end()), mpi_names);
}

TEST(MethodTable, SupportedExactlyWhereTheLibraryProvidesIt) {
  // Against the version this build's mpi.h declares, not the configure-time probe the table reads: from_group needs
  // MPI-4's MPI_Comm_create_from_group (the simulation build replays MPICH's), every other method MPI-3.1.
  const std::string version = "(MPI " + std::to_string(MPI_VERSION) + "." + std::to_string(MPI_SUBVERSION) + ")";
  for (const auto& m : mcmclb::creation_methods()) {
    const bool provided = m.name != "from_group" || MPI_VERSION >= 4 || mpi::kSimulated;
    EXPECT_EQ(m.supported, provided) << m.name;
    const std::string why = mcmclb::unsupported_reason(m);
    EXPECT_EQ(why.empty(), m.supported) << m.name << ": " << why;
    if (m.supported) continue;
    EXPECT_NE(why.find("needs " + std::string(m.needs) + ", which "), std::string::npos) << why;
    EXPECT_NE(why.find(version + " lacks"), std::string::npos) << why;
    try {
      (void)mcmclb::make_group_comm_creator(m.name, mpi::Comm::world());
      ADD_FAILURE() << m.name << " made without the library's support";
    } catch (const mpi::UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  }
}

TEST(MethodTable, RangeIsContiguousOnlyAndNoMpiCommunicator) {
  const auto table = mcmclb::creation_methods();
  const auto range = std::find_if(table.begin(), table.end(), [](const auto& m) { return m.name == "range"; });
  ASSERT_NE(range, table.end());
  EXPECT_TRUE(range->group_collective);
  EXPECT_TRUE(range->contiguous_only);
  EXPECT_FALSE(range->mpi_communicator);
  EXPECT_TRUE(range->supported);
}

TEST(RangeGroupComm, UnknownMethodListsRange) {
  try {
    (void)mcmclb::make_group_comm_creator("nope", mpi::Comm::world());
    ADD_FAILURE() << "unknown method accepted";
  } catch (const mpi::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("range"), std::string::npos) << e.what();
  }
}

}  // namespace
