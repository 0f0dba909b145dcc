// SPDX-License-Identifier: BSD-3-Clause
// The MPICH communication patterns the simulation build replays for each creation method
// (comm/src/smpi_patterns.hpp, docs/reference/mpich-patterns.md): each sends exactly the messages it claims. The
// patterns are plain point-to-point MPI, so they run here on the real MPI; PMPI wrappers of MPI_Send and MPI_Sendrecv
// count what they send on the bridge, and every rank's count is summed against the message count of MPICH's algorithm.
#include <gtest/gtest.h>
#include <mpi.h>

#include <bit>
#include <numeric>
#include <vector>

#include "mcmclb/mpi.hpp"
#include "smpi_patterns.hpp"

namespace {

MPI_Comm counted_comm = MPI_COMM_NULL;  // the bridge whose messages the wrappers count
long long sent = 0;                     // messages this rank sent on it

}  // namespace

// PMPI interposition: the executable's definitions win over the MPI library's for libmcmclb_comm's calls too.
extern "C" int MPI_Send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  if (comm == counted_comm) ++sent;
  return PMPI_Send(buf, count, type, dest, tag, comm);
}

extern "C" int MPI_Sendrecv(const void* sbuf, int scount, MPI_Datatype stype, int dest, int stag, void* rbuf,
                            int rcount, MPI_Datatype rtype, int source, int rtag, MPI_Comm comm, MPI_Status* status) {
  if (comm == counted_comm) ++sent;
  return PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm, status);
}

namespace {

using namespace mcmclb;

int ceil_log2(int n) { return n <= 1 ? 0 : std::bit_width(static_cast<unsigned>(n - 1)); }

/// Recursive doubling with MPICH's fold: 2 * rem fold/unfold messages plus pof2 * log2(pof2) exchanges.
long long allreduce_messages(int n) {
  if (n < 2) return 0;
  const int pof2 = static_cast<int>(std::bit_floor(static_cast<unsigned>(n)));
  return 2LL * (n - pof2) + static_cast<long long>(pof2) * ceil_log2(pof2);
}

long long bcast_messages(int n) { return n < 2 ? 0 : n - 1; }

long long allgather_messages(int n) { return static_cast<long long>(n) * ceil_log2(n); }

/// Algorithm 1 over g members: per round and per pair of blocks (a, b members), the leaders' 4 exchanges each
/// way, 4 bcasts in each block, a mask allreduce in each block and one over the merged block.
long long intercomm_messages(int g) {
  long long total = 0;
  for (int m = 1; m < g; m *= 2) {
    for (int first = 0; first + m < g; first += 2 * m) {
      const int a = m;
      const int b = std::min(first + 2 * m, g) - (first + m);
      total += 8 + 4 * (bcast_messages(a) + bcast_messages(b)) + allreduce_messages(a) + allreduce_messages(b) +
               allreduce_messages(a + b);
    }
  }
  return total;
}

/// Runs pattern on a fresh bridge (a duplicate of WORLD) and returns the messages all ranks sent on it.
template <typename F>
long long count_messages(F pattern) {
  const mpi::Comm bridge = mpi::Comm::world().dup();
  counted_comm = bridge.get();
  sent = 0;
  pattern(bridge);
  counted_comm = MPI_COMM_NULL;
  long long total = 0;
  mpi::check(MPI_Allreduce(&sent, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
  return total;
}

/// The groups tested at this size: the first k ranks for every k, and the even ranks.
std::vector<std::vector<int>> groups(int p) {
  std::vector<std::vector<int>> out;
  for (int k = 1; k <= p; ++k) {
    out.emplace_back(static_cast<std::size_t>(k));
    std::iota(out.back().begin(), out.back().end(), 0);
  }
  std::vector<int> even;
  for (int r = 0; r < p; r += 2) even.push_back(r);
  out.push_back(even);
  return out;
}

int index_in(const std::vector<int>& members, int rank) {
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (members[i] == rank) return static_cast<int>(i);
  }
  return -1;
}

TEST(SmpiPatterns, CreateIsOneMaskAllreduceOverTheWholeParent) {
  const int p = mpi::Comm::world().size();
  EXPECT_EQ(count_messages([](const mpi::Comm& b) { smpi_patterns::comm_create(b, 7); }), allreduce_messages(p));
}

TEST(SmpiPatterns, SplitIsAnAllgatherAndAMaskAllreduceOverTheWholeParent) {
  const int p = mpi::Comm::world().size();
  EXPECT_EQ(count_messages([](const mpi::Comm& b) { smpi_patterns::comm_split(b, b.rank() % 2, b.rank(), 7); }),
            allgather_messages(p) + allreduce_messages(p));
}

TEST(SmpiPatterns, AllgatherDeliversEveryRanksWordsInRankOrder) {
  const mpi::Comm world = mpi::Comm::world();
  const int p = world.size();
  std::vector<int> members(static_cast<std::size_t>(p));
  std::iota(members.begin(), members.end(), 0);
  const std::array<int, 2> mine{world.rank(), 100 + world.rank()};
  std::vector<int> all(2 * members.size(), -1);
  smpi_patterns::allgather(world, members, world.rank(), mine.data(), all.data(), 2, 9);
  for (int r = 0; r < p; ++r) {
    EXPECT_EQ(all[2 * static_cast<std::size_t>(r)], r);
    EXPECT_EQ(all[2 * static_cast<std::size_t>(r) + 1], 100 + r);
  }
}

TEST(SmpiPatterns, CreateGroupAndFromGroupAreOneMaskAllreduceOverTheGroupOnly) {
  const int me = mpi::Comm::world().rank();
  for (const auto& members : groups(mpi::Comm::world().size())) {
    const int group_rank = index_in(members, me);
    const long long got = count_messages([&](const mpi::Comm& b) {
      if (group_rank >= 0) smpi_patterns::comm_create_group(b, members, group_rank, 7);
    });
    EXPECT_EQ(got, allreduce_messages(static_cast<int>(members.size()))) << "group of " << members.size();
  }
}

TEST(SmpiPatterns, IntercommIsAlgorithmOnesRoundsOfCreateAndMerge) {
  const int me = mpi::Comm::world().rank();
  for (const auto& members : groups(mpi::Comm::world().size())) {
    const int group_rank = index_in(members, me);
    const long long got = count_messages([&](const mpi::Comm& b) {
      if (group_rank >= 0) smpi_patterns::intercomm_create_merge(b, members, group_rank, 7);
    });
    EXPECT_EQ(got, intercomm_messages(static_cast<int>(members.size()))) << "group of " << members.size();
  }
}

TEST(SmpiPatterns, MaskAllreduceAndsOverTheMembers) {
  const mpi::Comm world = mpi::Comm::world();
  for (const auto& members : groups(world.size())) {
    const int group_rank = index_in(members, world.rank());
    if (group_rank < 0) continue;
    std::array<int, 2> values{~(1 << group_rank), -1};
    smpi_patterns::allreduce_band(world, members, group_rank, values.data(), 2, 11);
    int expected = -1;
    for (std::size_t i = 0; i < members.size(); ++i) expected &= ~(1 << i);
    EXPECT_EQ(values[0], expected) << "group of " << members.size();
    EXPECT_EQ(values[1], -1);
  }
}

}  // namespace
