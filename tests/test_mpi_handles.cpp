// The RAII handles: moves transfer ownership exactly once, views never free, release hands the handle over.
#include <gtest/gtest.h>

#include <vector>

#include "mcmclb/mpi.hpp"

namespace mpi = mcmclb::mpi;

TEST(CommHandle, MoveConstructTransfersOwnership) {
  mpi::Comm a = mpi::Comm::world().dup();
  const MPI_Comm raw = a.get();
  mpi::Comm b(std::move(a));
  EXPECT_TRUE(a.is_null());  // NOLINT(bugprone-use-after-move): checking the moved-from state is the point
  EXPECT_FALSE(a.owned());
  EXPECT_EQ(b.get(), raw);
  EXPECT_TRUE(b.owned());
  EXPECT_EQ(b.size(), mpi::Comm::world().size());
}

TEST(CommHandle, MoveAssignFreesPreviousAndTransfers) {
  mpi::Comm a = mpi::Comm::world().dup();
  mpi::Comm b = mpi::Comm::self().dup();
  const MPI_Comm raw_a = a.get();
  b = std::move(a);  // b's old duplicate of SELF is freed here
  EXPECT_EQ(b.get(), raw_a);
  EXPECT_TRUE(a.is_null());  // NOLINT(bugprone-use-after-move)
  auto& self_alias = b;
  b = std::move(self_alias);  // self-move keeps the handle
  EXPECT_EQ(b.get(), raw_a);
  b.free();
  EXPECT_TRUE(b.is_null());
}

TEST(CommHandle, ViewsAndReleaseNeverFreeTheHandle) {
  { mpi::Comm w = mpi::Comm::world(); }  // destroying a view of WORLD must not free it
  EXPECT_EQ(mpi::Comm::world().size() > 0, true);
  mpi::Comm d = mpi::Comm::world().dup();
  MPI_Comm raw = d.release();
  EXPECT_TRUE(d.is_null());
  int result = MPI_UNEQUAL;
  ASSERT_EQ(MPI_Comm_compare(raw, MPI_COMM_WORLD, &result), MPI_SUCCESS);  // still a valid communicator
  EXPECT_EQ(result, MPI_CONGRUENT);
  MPI_Comm_free(&raw);
}

TEST(GroupHandle, MovesAndViews) {
  mpi::Group g = mpi::Comm::world().group();
  const MPI_Group raw = g.get();
  mpi::Group h(std::move(g));
  EXPECT_TRUE(g.is_null());  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(h.get(), raw);
  {
    mpi::Group v = mpi::Group::view(raw);
    EXPECT_FALSE(v.owned());
  }
  EXPECT_EQ(h.size(), mpi::Comm::world().size());  // the view did not free it
  mpi::Group k;
  k = std::move(h);
  EXPECT_EQ(k.get(), raw);
  EXPECT_EQ(k.rank(), mpi::Comm::world().rank());
}

TEST(GroupHandle, IncludeGivesTheRanksInTheirOrder) {
  // Group::include passes runs of consecutive ranks as MPI_Group_range_incl triples: every shape of rank list
  // must give exactly MPI_Group_incl's group (same members, same order).
  const mpi::Group world = mpi::Comm::world().group();
  const int n = world.size();
  std::vector<std::vector<int>> lists = {{0}};
  std::vector<int> all, backwards, evens, two_runs;
  for (int r = 0; r < n; ++r) all.push_back(r);
  for (int r = n - 1; r >= 0; --r) backwards.push_back(r);
  for (int r = 0; r < n; r += 2) evens.push_back(r);
  for (int r = n / 2; r < n; ++r) two_runs.push_back(r);  // the upper half, then the lower half
  for (int r = 0; r < n / 2; ++r) two_runs.push_back(r);
  for (const auto& list : {all, backwards, evens, two_runs}) lists.push_back(list);
  for (const auto& ranks : lists) {
    const mpi::Group ours = mpi::Group::include(world, ranks);
    MPI_Group expected = MPI_GROUP_NULL;
    ASSERT_EQ(MPI_Group_incl(world.get(), static_cast<int>(ranks.size()), ranks.data(), &expected), MPI_SUCCESS);
    EXPECT_EQ(mpi::compare(ours, mpi::Group::view(expected)), MPI_IDENT) << "ranks of size " << ranks.size();
    MPI_Group_free(&expected);
  }
}

TEST(CheckedCalls, ErrorCarriesCallAndLibraryText) {
  const int nowhere = mpi::Comm::world().size() + 5;  // an invalid rank: MPI_ERR_RANK via WORLD's handler
  int value = 0;
  try {
    mpi::check(MPI_Send(&value, 1, MPI_INT, nowhere, 0, MPI_COMM_WORLD), "MPI_Send");
    FAIL() << "expected mpi::Error";
  } catch (const mpi::Error& e) {
    EXPECT_EQ(e.call(), "MPI_Send");
    EXPECT_EQ(e.error_class(), MPI_ERR_RANK);
    EXPECT_NE(std::string(e.what()).find("MPI_Send failed: "), std::string::npos) << e.what();
  }
}
