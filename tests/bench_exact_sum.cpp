// SPDX-License-Identifier: BSD-3-Clause
// What ops::exact_sum costs against a plain sum of doubles over a group (docs/notes/exact-sum-cost): one group of
// every rank (method create_group), calls of each mode timed back to back, modes in a fresh random order each round
// (drawn on rank 0, the same on every rank). Prints one CSV row per round and mode, with the run's provenance.
//   mpiexec -n 2 build/tests/bench_exact_sum [ROUNDS] [CALLS]
// Modes: plain-1 and exact-1 reduce one double per rank; plain-64 and exact-64 reduce 64 (exact: 64 ExactSums).
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "mcmclb/exact_sum.hpp"
#include "mcmclb/group_comm.hpp"
#include "mcmclb/mpi.hpp"
#include "mcmclb/provenance.hpp"

namespace {

constexpr std::array<const char*, 4> kModes = {"plain-1", "exact-1", "plain-64", "exact-64"};

/// Seconds per call of one mode, calls back to back after a barrier; the slowest rank's.
double time_mode(mcmclb::GroupComm& group, int mode, int calls) {
  const std::size_t n = mode < 2 ? 1 : 64;
  std::vector<double> values(n);
  group.barrier();
  const double t0 = MPI_Wtime();
  for (int i = 0; i < calls; ++i) {
    for (std::size_t k = 0; k < n; ++k) values[k] = 1.0 / (1 + k + static_cast<std::size_t>(group.rank()) + i);
    if (mode % 2 == 0) {
      group.allreduce(values, mcmclb::ops::sum);
    } else {
      group.allreduce(values, mcmclb::ops::exact_sum);
    }
  }
  const double mine = (MPI_Wtime() - t0) / calls;
  return group.allreduce(mine, mcmclb::ops::max);
}

int body(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 10;
  const int calls = argc > 2 ? std::atoi(argv[2]) : 20000;
  const mcmclb::mpi::Comm world = mcmclb::mpi::Comm::world();
  // Waits as a run's would: spinning where every rank has a core, napping where they share.
  const mcmclb::mpi::NodeOccupancy occupancy = mcmclb::mpi::node_occupancy(world);
  const mcmclb::mpi::ScopedWaitPolicy waiting(mcmclb::mpi::machine_wait_policy(occupancy));
  const auto creator = mcmclb::make_group_comm_creator("create_group", world);
  const auto group = creator->create_range(0, world.size() - 1, 1);
  const mcmclb::Provenance p = mcmclb::collect_provenance(mcmclb::mpi::library_version(), world.size());
  if (world.rank() == 0) {
    std::printf("round,mode,seconds,ranks,calls,commit,mpi_library,wait,host,cores,utc_start\n");
  }
  std::mt19937 rng(std::random_device{}());
  for (int round = 1; round <= rounds; ++round) {
    std::array<int, kModes.size()> order = {0, 1, 2, 3};
    std::shuffle(order.begin(), order.end(), rng);
    group->bcast(order, 0);
    for (const int mode : order) {
      const double s = time_mode(*group, mode, calls);
      if (world.rank() == 0) {
        std::printf("%d,%s,%.9g,%d,%d,%s,%s,%s,%s,%d,%s\n", round, kModes[static_cast<std::size_t>(mode)], s,
                    world.size(), calls, p.git_commit.c_str(), p.mpi_library.c_str(),
                    std::string(mcmclb::to_string(mcmclb::mpi::wait_policy())).c_str(), p.host.c_str(),
                    occupancy.cores_available, p.utc_start.c_str());
      }
    }
  }
  group->free();
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return mcmclb::mpi::run_main(argc, argv, body); }
