// SPDX-License-Identifier: BSD-3-Clause
// The RAII handles: moves transfer ownership exactly once, views never free, release hands the handle over, and a
// request left pending is cancelled rather than leaked or waited on forever; the polite collectives give what the
// blocking ones give; node_occupancy counts the ranks and cores of the one node the tests run on.
#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>
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

TEST(RequestHandle, CompletesMovesAndRefusesASecondOperation) {
  const mpi::Comm comm = mpi::Comm::world().dup();
  const int rank = comm.rank();
  const int size = comm.size();
  const int right = (rank + 1) % size;
  const int left = (rank + size - 1) % size;
  int64_t sent = 100 + rank;
  int64_t got = -1;
  mpi::Request recv;
  EXPECT_FALSE(recv.pending());
  EXPECT_FALSE(recv.test()) << "nothing pending: nothing can have completed";
  mpi::check(MPI_Irecv(&got, 1, MPI_INT64_T, left, 7, comm.get(), recv.out()), "MPI_Irecv");
  EXPECT_TRUE(recv.pending());
  EXPECT_THROW((void)recv.out(), std::logic_error) << "a second operation would leak the first";
  mpi::Request moved(std::move(recv));
  EXPECT_FALSE(recv.pending());  // NOLINT(bugprone-use-after-move): the moved-from state is specified
  mpi::Request send;
  mpi::check(MPI_Isend(&sent, 1, MPI_INT64_T, right, 7, comm.get(), send.out()), "MPI_Isend");
  send.wait();
  moved.wait();
  EXPECT_FALSE(moved.pending());
  EXPECT_EQ(got, 100 + left);
}

TEST(RequestHandle, DestroyingAPendingReceiveCancelsIt) {
  const mpi::Comm comm = mpi::Comm::world().dup();
  int64_t never = -1;
  {
    mpi::Request r;
    mpi::check(MPI_Irecv(&never, 1, MPI_INT64_T, MPI_ANY_SOURCE, 9, comm.get(), r.out()), "MPI_Irecv");
  }  // nobody sends tag 9: the destructor must neither hang nor leave the receive matching later traffic
  int64_t sent = 5;
  int64_t got = -1;
  const int self = comm.rank();
  mpi::check(MPI_Sendrecv(&sent, 1, MPI_INT64_T, self, 9, &got, 1, MPI_INT64_T, self, 9, comm.get(), MPI_STATUS_IGNORE),
             "MPI_Sendrecv");
  EXPECT_EQ(got, 5);
  EXPECT_EQ(never, -1);
}

TEST(PoliteCollectives, BroadcastSumAndWaitUntil) {
  const mpi::Comm comm = mpi::Comm::world().dup();
  const int rank = comm.rank();
  const int size = comm.size();
  std::vector<int64_t> words = {rank == size - 1 ? int64_t{42} : 0, rank == size - 1 ? int64_t{-3} : 0};
  mpi::bcast_politely(comm, words, size - 1);
  EXPECT_EQ(words, (std::vector<int64_t>{42, -3}));
  std::vector<int64_t> sum = {rank, 1};
  mpi::allreduce_sum_politely(comm, sum);
  EXPECT_EQ(sum[0], int64_t{size} * (size - 1) / 2);
  EXPECT_EQ(sum[1], size);
  int tests = 0;
  mpi::wait_until_politely([&] { return ++tests == 3; }, std::chrono::microseconds(1));
  EXPECT_EQ(tests, 3) << "stops at the first true";
}

TEST(PoliteCollectives, SetupCollectivesGiveWhatTheBlockingOnesGive) {
  const mpi::Comm comm = mpi::Comm::world().dup();
  const int rank = comm.rank();
  const int size = comm.size();
  const int root = size - 1;
  const std::vector<int64_t> mine = {rank, int64_t{1} << rank, -rank};
  std::vector<int64_t> polite(3, -1), blocking(3, -1);
  mpi::reduce_sum_politely(comm, mine.data(), polite.data(), 3, root);
  ASSERT_EQ(MPI_Reduce(mine.data(), blocking.data(), 3, MPI_INT64_T, MPI_SUM, root, comm.get()), MPI_SUCCESS);
  if (rank == root) {
    EXPECT_EQ(polite, blocking);
  }

  const std::vector<double> stats = {rank + 0.5, -1.0 * rank};
  std::vector<double> all(rank == root ? 2 * static_cast<std::size_t>(size) : 0);
  mpi::gather_politely(comm, stats.data(), 2, all.data(), root);
  for (int r = 0; rank == root && r < size; ++r) {
    EXPECT_EQ(all[2 * static_cast<std::size_t>(r)], r + 0.5) << "rank " << r;
    EXPECT_EQ(all[2 * static_cast<std::size_t>(r) + 1], -1.0 * r) << "rank " << r;
  }

  const std::array<unsigned long long, 2> hash = {7ULL + static_cast<unsigned>(rank), ~(7ULL + rank)};
  std::array<unsigned long long, 2> least{};
  mpi::allreduce_politely(comm, hash.data(), least.data(), 2, MPI_UNSIGNED_LONG_LONG, MPI_MIN);
  EXPECT_EQ(least[0], 7ULL);
  EXPECT_EQ(~least[1], 7ULL + static_cast<unsigned>(size - 1)) << "MIN of ~h is ~(MAX of h)";

  std::array<char, 4> text{};
  if (rank == root) text = {'m', 'c', 'l', 'b'};
  mpi::bcast_politely(comm, text.data(), 4, MPI_CHAR, root);
  EXPECT_EQ(std::string(text.begin(), text.end()), "mclb");
}

TEST(PoliteCollectives, TreeBarrierReleasesNoRankBeforeTheLastArrives) {
  // Each round another rank arrives 30 ms late; no rank may leave before it has arrived. One steady clock serves
  // every rank of a node, and every rank's exit follows the latecomer's entry by the messages between them.
  const mpi::Comm comm = mpi::Comm::world().dup();
  const int size = comm.size();
  auto now_ns = [] {
    return static_cast<int64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count());
  };
  for (int late = 0; late < std::min(size, 4); ++late) {
    if (comm.rank() == late) std::this_thread::sleep_for(std::chrono::milliseconds(30));
    const int64_t entered = now_ns();
    mpi::tree_barrier(comm);
    const int64_t left = now_ns();
    int64_t last_entry = 0;
    int64_t first_exit = 0;
    ASSERT_EQ(MPI_Allreduce(&entered, &last_entry, 1, MPI_INT64_T, MPI_MAX, comm.get()), MPI_SUCCESS);
    ASSERT_EQ(MPI_Allreduce(&left, &first_exit, 1, MPI_INT64_T, MPI_MIN, comm.get()), MPI_SUCCESS);
    EXPECT_GE(first_exit, last_entry) << "a rank left the barrier before rank " << late << " arrived";
  }
  ASSERT_EQ(MPI_Barrier(comm.get()), MPI_SUCCESS);
  int stray = 0;
  ASSERT_EQ(MPI_Iprobe(MPI_ANY_SOURCE, mpi::kTreeBarrierTag, comm.get(), &stray, MPI_STATUS_IGNORE), MPI_SUCCESS);
  EXPECT_EQ(stray, 0) << "every barrier message is received by its barrier";
}

TEST(PoliteCollectives, PatienceYieldsFirstThenNaps) {
  // Yielding for 400 ms, a wait that completes on its 5th test ends before a single 1 s nap could.
  int tests = 0;
  const auto start = std::chrono::steady_clock::now();
  mpi::wait_until_politely([&] { return ++tests == 5; },
                           mpi::Patience{std::chrono::seconds(1), std::chrono::milliseconds(400)});
  EXPECT_EQ(tests, 5);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  // Without yielding, the same wait naps between its tests: four naps of 10 ms at least.
  tests = 0;
  const auto napped = std::chrono::steady_clock::now();
  mpi::wait_until_politely([&] { return ++tests == 5; }, std::chrono::microseconds(10000));
  EXPECT_GE(std::chrono::steady_clock::now() - napped, std::chrono::milliseconds(40));
}

TEST(WaitPolicy, SpinTestsAgainAtOnceAndPoliteNaps) {
  ASSERT_EQ(mpi::wait_policy(), mpi::WaitPolicy::polite);  // the process's default
  // Under spin, a wait whose naps are 10 s each still ends on its 5th test at once: no nap is taken.
  {
    const mpi::ScopedWaitPolicy spin(mpi::WaitPolicy::spin);
    int tests = 0;
    const auto start = std::chrono::steady_clock::now();
    mpi::wait_until_politely([&] { return ++tests == 5; }, std::chrono::microseconds(10000000));
    EXPECT_EQ(tests, 5);
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  }
  // The scope restored polite: four naps of 10 ms at least.
  EXPECT_EQ(mpi::wait_policy(), mpi::WaitPolicy::polite);
  int tests = 0;
  const auto napped = std::chrono::steady_clock::now();
  mpi::wait_until_politely([&] { return ++tests == 5; }, std::chrono::microseconds(10000));
  EXPECT_GE(std::chrono::steady_clock::now() - napped, std::chrono::milliseconds(40));
}

// Under yield a wait gives its core up at each test for its first kYieldFirst, then naps as polite does: no test
// of a wait comes a nap (here 2 s) after the one before it while that one came within kYieldFirst of the start.
// Told by each test's time, not by the whole wait's: on a loaded machine 5 yields may outlast kYieldFirst, and the
// naps after it are then right (a whole-wait bound failed so beside builds).
TEST(WaitPolicy, YieldGivesTheCoreUpFirstThenNaps) {
  using clock = std::chrono::steady_clock;
  const mpi::ScopedWaitPolicy yield(mpi::WaitPolicy::yield);
  std::vector<clock::time_point> tested;
  const auto start = clock::now();
  mpi::wait_until_politely(
      [&] {
        tested.push_back(clock::now());
        return tested.size() == 5;
      },
      std::chrono::microseconds(2000000));
  for (std::size_t i = 1; i < tested.size(); ++i) {
    if (tested[i] - tested[i - 1] >= std::chrono::seconds(1)) {
      EXPECT_GE(tested[i - 1] - start, mpi::kYieldFirst) << "a nap before kYieldFirst had passed, after test " << i;
    }
  }
  // Past kYieldFirst it naps: the test after one made 100 ms in (past kYieldFirst however late the wait itself
  // began on a loaded machine) comes a nap (200 ms) later, where a yield returns within a few time slices. Before,
  // a wait that needed 3 ms had to nap, but on a loaded machine its yields alone could outlast the 3 ms.
  const auto begun = clock::now();
  tested.clear();
  mpi::wait_until_politely(
      [&] {
        tested.push_back(clock::now());
        return tested.size() >= 2 && tested[tested.size() - 2] - begun >= std::chrono::milliseconds(100);
      },
      std::chrono::microseconds(200000));
  ASSERT_GE(tested.size(), 2U);
  EXPECT_GE(tested.back() - tested[tested.size() - 2], std::chrono::milliseconds(200)) << "no nap after kYieldFirst";
}

// node_occupancy on the one machine mpiexec starts these tests on: one node holding every rank, the CPUs any rank
// may run on (mpiexec binds nothing here, so each rank's mask is the job's), and oversubscribed exactly when
// there are more ranks than those CPUs; the same answer on every rank, and the node communicator freed.
TEST(NodeOccupancy, OneNodeItsRanksAndItsCores) {
  const mpi::Comm world = mpi::Comm::world();
  const mpi::NodeOccupancy o = mpi::node_occupancy(world);
  cpu_set_t mine;
  CPU_ZERO(&mine);
  ASSERT_EQ(::sched_getaffinity(0, sizeof mine, &mine), 0);
  EXPECT_TRUE(o.known());
  EXPECT_EQ(o.ranks_on_node, world.size());
  EXPECT_GE(o.cores_available, CPU_COUNT(&mine));
  EXPECT_EQ(o.oversubscribed(), world.size() > o.cores_available);
  EXPECT_EQ(o.nodes_oversubscribed, o.oversubscribed() ? 1 : 0);
  std::array<int, 3> mine_answer = {o.ranks_on_node, o.cores_available, o.nodes_oversubscribed}, low{}, high{};
  mpi::check(MPI_Allreduce(mine_answer.data(), low.data(), 3, MPI_INT, MPI_MIN, world.get()), "MPI_Allreduce");
  mpi::check(MPI_Allreduce(mine_answer.data(), high.data(), 3, MPI_INT, MPI_MAX, world.get()), "MPI_Allreduce");
  EXPECT_EQ(low, high) << "every rank gets the same answer";
  // The cores' share is measured only where the counts would let ranks spin, the same on every rank.
  if (o.oversubscribed()) {
    EXPECT_EQ(o.core_share, 0);
  } else {
    EXPECT_GT(o.core_share, 0);
    EXPECT_LE(o.core_share, 1);
  }
  double share_low = o.core_share, share_high = o.core_share;
  mpi::check(MPI_Allreduce(MPI_IN_PLACE, &share_low, 1, MPI_DOUBLE, MPI_MIN, world.get()), "MPI_Allreduce");
  mpi::check(MPI_Allreduce(MPI_IN_PLACE, &share_high, 1, MPI_DOUBLE, MPI_MAX, world.get()), "MPI_Allreduce");
  EXPECT_EQ(share_low, share_high);
  // The wait policy that follows it: spin only where every rank has a core of its own and runs on it, yield where
  // other programs share the cores, polite where ranks outnumber them or nothing is known.
  const mpi::WaitPolicy expected = o.oversubscribed()                      ? mpi::WaitPolicy::polite
                                   : o.core_share >= mpi::kCoreShareToSpin ? mpi::WaitPolicy::spin
                                                                           : mpi::WaitPolicy::yield;
  EXPECT_EQ(mpi::machine_wait_policy(o), expected);
  EXPECT_EQ(mpi::machine_wait_policy(mpi::NodeOccupancy{}), mpi::WaitPolicy::polite);
  mpi::NodeOccupancy counted = o;
  counted.nodes_oversubscribed = 0;
  counted.core_share = mpi::kCoreShareToSpin / 2;  // cores counted free but shared with other programs
  EXPECT_EQ(mpi::machine_wait_policy(counted), mpi::WaitPolicy::yield);
}

// Other programs busy on the ranks' cores (here threads that spin, twice as many as the cores, started by each
// rank): the cores' share drops well below what spinning needs, and the waits yield, though the counts alone
// (ranks against cores) would say spin. Before the share was measured, a loaded node made its ranks spin.
TEST(NodeOccupancy, CoresBusyWithOtherProgramsMakeWaitsYield) {
  const mpi::Comm world = mpi::Comm::world();
  cpu_set_t mine;
  CPU_ZERO(&mine);
  ASSERT_EQ(::sched_getaffinity(0, sizeof mine, &mine), 0);
  std::atomic<bool> stop{false};
  std::vector<std::thread> load;
  for (int i = 0; i < 2 * CPU_COUNT(&mine); ++i) {
    load.emplace_back([&stop] {
      while (!stop.load(std::memory_order_relaxed)) {
      }
    });
  }
  const mpi::NodeOccupancy o = mpi::node_occupancy(world);
  stop = true;
  for (std::thread& t : load) t.join();
  if (o.oversubscribed()) {
    EXPECT_EQ(mpi::machine_wait_policy(o), mpi::WaitPolicy::polite);
  } else {
    EXPECT_LT(o.core_share, mpi::kCoreShareToSpin);
    EXPECT_EQ(mpi::machine_wait_policy(o), mpi::WaitPolicy::yield);
  }
}
