// SPDX-License-Identifier: BSD-3-Clause
// Downstream use of the installed library: every method CommCreator knows builds the communicator over the
// even world ranks in reverse order, and the result is checked by use (rank order and an allreduce).
#include <mpi.h>

#include <cstdio>
#include <string_view>
#include <vector>

#include "mcmclb/comm_create.hpp"
#include "mcmclb/group_comm.h"
#include "mcmclb/mpi.hpp"

namespace {

int body(int, char**) {
  using namespace mcmclb;
  const mpi::Comm world = mpi::Comm::world();
  const int rank = world.rank();
  const int size = world.size();
  std::vector<int> evens_reversed;
  for (int r = (size - 1) / 2 * 2; r >= 0; r -= 2) evens_reversed.push_back(r);
  const mpi::Group group = mpi::Group::include(world.group(), evens_reversed);
  const int expected_size = static_cast<int>(evens_reversed.size());
  const mpi::Group empty = mpi::Group::view(MPI_GROUP_EMPTY);

  int failures = 0;
  int tag = 0;
  for (std::string_view name : comm_creator_names()) {
    if (name == "from_group" && !from_group_supported()) continue;
    const auto creator = make_comm_creator(name, world);
    const bool member = rank % 2 == 0;
    if (!member && creator->group_collective()) continue;  // group-collective: members only
    const mpi::Comm comm = creator->create(member ? group : empty, ++tag);
    if (comm.is_null() == member) {
      std::fprintf(stderr, "[rank %d] %.*s: member=%d but null=%d\n", rank, static_cast<int>(name.size()), name.data(),
                   member, comm.is_null());
      ++failures;
      continue;
    }
    if (!member) continue;
    int sum = 0;
    mpi::check(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, comm.get()), "MPI_Allreduce");
    const int expected_sum = expected_size * (expected_size - 1);  // 0 + 2 + ... + 2(k-1)
    if (comm.size() != expected_size || comm.rank() != expected_size - 1 - rank / 2 || sum != expected_sum) {
      std::fprintf(stderr, "[rank %d] %.*s: size %d rank %d sum %d\n", rank, static_cast<int>(name.size()), name.data(),
                   comm.size(), comm.rank(), sum);
      ++failures;
    }
  }
  // The C entry point, through the same installed library.
  MPI_Comm c = MPI_COMM_NULL;
  if (rank % 2 == 0 && mcmclb_group_comm_create(MPI_COMM_WORLD, group.get(), ++tag, &c) != MPI_SUCCESS) ++failures;
  if (c != MPI_COMM_NULL) MPI_Comm_free(&c);

  int total = 0;
  mpi::check(MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
  if (rank == 0) std::printf("consumer: %d ranks, %d failures\n", size, total);
  return total == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) { return mcmclb::mpi::run_main(argc, argv, body); }
