// SPDX-License-Identifier: BSD-3-Clause
// Long runs create and free communicators by the thousand. MPICH draws every communicator's context id from a
// fixed per-process pool (2048 ids in MPICH 4.0), so a creation method that leaks one intermediate communicator
// per call only fails after about two thousand regroupings, with "Too many communicators". At 2 ranks this suite
// creates and frees each method's communicator (and the C entry point's) 10 000 times and drives the async
// balancer through 10 000 regroupings per rank; at more ranks, a few of each (see creations()). Then no
// communicator may be left alive (PMPI wrappers count every constructor and every free, whoever calls them,
// libmcmclb_comm and the kernel included), and the pool must still give out a context id.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "mcmclb/balancer.hpp"
#include "mcmclb/driver.hpp"
#include "mcmclb/group_comm.h"
#include "mcmclb/group_comm.hpp"
#include "mcmclb/mpi.hpp"

namespace {

long long live_comms = 0;  // communicators this process created and has not freed yet

int counted(int rc, const MPI_Comm* out) {
  if (rc == MPI_SUCCESS && out != nullptr && *out != MPI_COMM_NULL) ++live_comms;
  return rc;
}

}  // namespace

// PMPI interposition: the executable's definitions win over the MPI library's for libmcmclb_comm's calls too.
// Every communicator constructor of MPI-4 that the library, the kernel or MPICH's public API offers.
extern "C" {
int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* out) { return counted(PMPI_Comm_dup(comm, out), out); }
int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* out) {
  return counted(PMPI_Comm_dup_with_info(comm, info, out), out);
}
int MPI_Comm_idup(MPI_Comm comm, MPI_Comm* out, MPI_Request* request) {
  return counted(PMPI_Comm_idup(comm, out, request), out);
}
int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* out) {
  return counted(PMPI_Comm_create(comm, group, out), out);
}
int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* out) {
  return counted(PMPI_Comm_create_group(comm, group, tag, out), out);
}
#if MPI_VERSION >= 4  // MPI-4's call: absent from MPI-3.1 libraries (Open MPI 4.1), where from_group is unsupported
int MPI_Comm_create_from_group(MPI_Group group, const char* stringtag, MPI_Info info, MPI_Errhandler errhandler,
                               MPI_Comm* out) {
  return counted(PMPI_Comm_create_from_group(group, stringtag, info, errhandler, out), out);
}
#endif
int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* out) {
  return counted(PMPI_Comm_split(comm, color, key, out), out);
}
int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm* out) {
  return counted(PMPI_Comm_split_type(comm, split_type, key, info, out), out);
}
int MPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag,
                         MPI_Comm* out) {
  return counted(PMPI_Intercomm_create(local_comm, local_leader, peer_comm, remote_leader, tag, out), out);
}
int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm* out) {
  return counted(PMPI_Intercomm_merge(intercomm, high, out), out);
}
int MPI_Comm_free(MPI_Comm* comm) {
  const int rc = PMPI_Comm_free(comm);
  if (rc == MPI_SUCCESS) --live_comms;
  return rc;
}
int MPI_Comm_disconnect(MPI_Comm* comm) {
  const int rc = PMPI_Comm_disconnect(comm);
  if (rc == MPI_SUCCESS) --live_comms;
  return rc;
}
}

namespace {

using namespace mcmclb;

int world_rank() { return mpi::Comm::world().rank(); }
int world_size() { return mpi::Comm::world().size(); }

// Well past the pool: a leak of one context id per creation exhausts MPICH's 2048 ids five times over. Only at
// 1-2 ranks: MPICH busy-polls, and on 2 oversubscribed cores one creation at 4 ranks took 20-100 ms (measured:
// 300 intercomm creations in 28 s), so 10 000 would take hours; at 2 ranks all methods take about 5 s. More
// ranks reach Algorithm 1's later rounds (intermediate merged communicators) and each method's larger groups:
// there a few creations each, whose leaks the PMPI counter finds exactly, whatever the count.
int creations() { return world_size() <= 2 ? 10'000 : 16; }
int64_t regroups_wanted() { return world_size() <= 2 ? 10'000 : 64; }

/// The pool still hands out a context id (a dup needs a fresh one on every rank) and the counter saw it.
void expect_pool_not_exhausted() {
  const long long before = live_comms;
  MPI_Comm probe = MPI_COMM_NULL;
  ASSERT_EQ(MPI_Comm_dup(MPI_COMM_WORLD, &probe), MPI_SUCCESS) << "no context id left after the loop";
  EXPECT_EQ(live_comms, before + 1) << "the PMPI counter does not see constructors";
  ASSERT_EQ(MPI_Comm_free(&probe), MPI_SUCCESS);
  EXPECT_EQ(live_comms, before);
}

/// Iteration i: even, one group of every rank; odd, the two halves [0, h) and [h, P) (each rank in its own, so
/// parent-collective methods create two disjoint communicators in one call).
std::pair<int, int> range_of(int i) {
  const int p = world_size();
  if (i % 2 == 0 || p == 1) return {0, p - 1};
  const int h = p / 2;
  return world_rank() < h ? std::pair{0, h - 1} : std::pair{h, p - 1};
}

TEST(CommPool, EveryMethodFreesEveryCommunicatorItCreates) {
  const mpi::Comm world = mpi::Comm::world();
  for (const std::string_view name : group_comm_method_names()) {
    if (name == "from_group" && !from_group_supported()) continue;
    SCOPED_TRACE(std::string(name));
    const auto started = std::chrono::steady_clock::now();
    const long long live_before = live_comms;
    const bool mpi_communicator = std::ranges::find(creation_methods(), name, &MethodInfo::name)->mpi_communicator;
    {
      const auto creator = make_group_comm_creator(name, world);
      const long long live_with_creator = live_comms;
      for (int i = 0; i < creations(); ++i) {
        const auto [first, last] = range_of(i);
        // Tags stay in [1, 32767], as MPI guarantees; a tag is reused only long after its creation completed.
        const std::unique_ptr<GroupComm> comm = creator->create_range(first, last, 1 + i % 32767);
        ASSERT_NE(comm, nullptr) << "iteration " << i;
        ASSERT_EQ(comm->size(), last - first + 1) << "iteration " << i;
        // Exactly the new communicator is alive (none for range): every intermediate one is already freed.
        ASSERT_EQ(live_comms, live_with_creator + (mpi_communicator ? 1 : 0)) << "iteration " << i;
        comm->free();
        ASSERT_EQ(live_comms, live_with_creator) << "iteration " << i;
      }
    }
    EXPECT_EQ(live_comms, live_before) << "communicators left alive after " << creations() << " creations";
    expect_pool_not_exhausted();
    if (world_rank() == 0) {
      std::printf("  %-12s %d creations in %.1f s\n", std::string(name).c_str(), creations(),
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    }
  }
}

TEST(CommPool, CEntryPointFreesEveryCommunicatorItCreates) {
  MPI_Group world_group = MPI_GROUP_NULL;
  ASSERT_EQ(MPI_Comm_group(MPI_COMM_WORLD, &world_group), MPI_SUCCESS);
  const long long live_before = live_comms;
  for (int i = 0; i < creations(); ++i) {
    const auto [first, last] = range_of(i);
    int range[1][3] = {{first, last, 1}};
    MPI_Group group = MPI_GROUP_NULL;
    ASSERT_EQ(MPI_Group_range_incl(world_group, 1, range, &group), MPI_SUCCESS);
    MPI_Comm comm = MPI_COMM_NULL;
    const int rc = mcmclb_group_comm_create(MPI_COMM_WORLD, group, 1 + i % 32767, &comm);
    MPI_Group_free(&group);
    ASSERT_EQ(rc, MPI_SUCCESS) << "iteration " << i;
    ASSERT_NE(comm, MPI_COMM_NULL) << "iteration " << i;
    ASSERT_EQ(live_comms, live_before + 1) << "iteration " << i;
    ASSERT_EQ(MPI_Comm_free(&comm), MPI_SUCCESS);
  }
  MPI_Group_free(&world_group);
  EXPECT_EQ(live_comms, live_before);
  expect_pool_not_exhausted();
}

/// The kernel's own use: async runs of many tiny items, repeated until every rank has joined regroups_wanted()
/// communicators, cycling through the methods async regroups with. A run makes few regroupings (groups only
/// merge, so at most one per rank and merge), hence many short runs.
TEST(CommPool, AsyncRegroupingFreesEveryCommunicator) {
  std::vector<std::string> methods;
  for (auto m : balancer_info("async").methods) {
    if (m != "from_group" || from_group_supported()) methods.emplace_back(m);
  }
  ASSERT_FALSE(methods.empty());
  const auto started = std::chrono::steady_clock::now();
  const long long live_before = live_comms;
  int64_t fewest_regroups = 0;  // over ranks, summed over runs (rank 0's view)
  int runs = 0;
  while (fewest_regroups < regroups_wanted()) {
    RunSpec spec;
    spec.experiment = "comm_pool";
    spec.nprocs = world_size();
    spec.balancer = "async";
    spec.method = methods[static_cast<std::size_t>(runs) % methods.size()];
    spec.finished = FinishedRule::coalesce;  // every run ends in one group of every rank: P-1 merges
    spec.T_ms = 0.01;
    spec.workload.model = "cyclic";
    spec.workload.set("scale", int64_t{2});
    const RunResult r = run_once(spec);
    ASSERT_TRUE(r.valid) << "run " << runs << " " << run_label(spec) << ": " << r.violations;
    int64_t fewest = 0;
    if (world_rank() == 0) {
      fewest = r.ranks.front().regroups;
      for (const auto& x : r.ranks) fewest = std::min(fewest, x.regroups);
    }
    MPI_Bcast(&fewest, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);  // every rank loops the same number of times
    ASSERT_GT(fewest, 0) << "a run without regroupings would never end this loop";
    fewest_regroups += fewest;
    ++runs;
  }
  EXPECT_EQ(live_comms, live_before) << "communicators left alive after " << runs << " runs";
  expect_pool_not_exhausted();
  if (world_rank() == 0) {
    std::printf("  %d async runs, at least %lld regroupings per rank, in %.1f s\n", runs,
                static_cast<long long>(fewest_regroups),
                std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  }
}

}  // namespace
