// SPDX-License-Identifier: BSD-3-Clause
// ops::exact_sum in simulation: every group of the first m simulated ranks (m = 1 .. P), made by every creation
// method, sums each rank's doubles of many magnitudes to the bits a single loop's ExactSum gives. Exit status 1 with
// one line per mismatch.
#include "mcmclb/exact_sum.hpp"

#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "mcmclb/comm_create.hpp"
#include "mcmclb/group_comm.hpp"
#include "mcmclb/mpi.hpp"

namespace {

/// Rank r's k-th term: magnitudes from 1e-300 to 1e300, both signs, so that a plain sum's order shows.
double term(int r, int k) {
  const double sign = (r + k) % 2 == 0 ? 1.0 : -1.0;
  return sign * std::ldexp(1.0 + r * 0.37 + k * 0.011, ((r * 131 + k * 37) % 1800) - 900);
}

constexpr int kTerms = 16;

int body(int, char**) {
  const mcmclb::mpi::Comm world = mcmclb::mpi::Comm::world();
  int failures = 0;
  for (const std::string method : {"create", "create_group", "split", "range"}) {
    const auto creator = mcmclb::make_group_comm_creator(method, world);
    for (int m = 1; m <= world.size(); ++m) {
      const bool member = world.rank() < m;
      if (!member) {
        // A parent-collective method's other ranks take part with an empty group.
        if (!creator->group_collective()) (void)creator->create(mcmclb::mpi::Group::view(MPI_GROUP_EMPTY), 1);
        continue;
      }
      const auto group = creator->create_range(0, m - 1, 1);
      mcmclb::ExactSum mine;
      for (int k = 0; k < kTerms; ++k) mine.add(term(world.rank(), k));
      const double sum = group->allreduce(mine, mcmclb::ops::exact_sum).value();
      mcmclb::ExactSum serial;
      for (int r = 0; r < m; ++r) {
        for (int k = kTerms - 1; k >= 0; --k) serial.add(term(r, k));
      }
      const double expected = serial.value();
      if (std::memcmp(&sum, &expected, sizeof sum) != 0 || !std::isfinite(sum)) {
        std::printf("FAIL %s m=%d rank %d: %.17g, the loop gives %.17g\n", method.c_str(), m, world.rank(), sum,
                    expected);
        ++failures;
      }
      group->free();
    }
  }
  int all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (world.rank() == 0 && all == 0) std::printf("exact_sum: every group size and method, the loop's bits\n");
  return all == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) { return mcmclb::mpi::run_main(argc, argv, body); }
