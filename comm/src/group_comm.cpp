// SPDX-License-Identifier: BSD-3-Clause
// The C entry point mcmclb_group_comm_create (mcmclb/group_comm.h) over Algorithm 1.
#include "mcmclb/group_comm.h"

#include <exception>

#include "mcmclb/comm_create.hpp"

extern "C" int mcmclb_group_comm_create(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm) {
  using namespace mcmclb;
  if (newcomm == nullptr) return MPI_ERR_ARG;
  *newcomm = MPI_COMM_NULL;
  // Before MPI_Init or after MPI_Finalize any other MPI call aborts the process; these two may always be called.
  int initialized = 0;
  int finalized = 0;
  if (MPI_Initialized(&initialized) != MPI_SUCCESS || MPI_Finalized(&finalized) != MPI_SUCCESS || !initialized ||
      finalized) {
    return MPI_ERR_OTHER;
  }
  if (comm == MPI_COMM_NULL) return MPI_ERR_COMM;
  if (group == MPI_GROUP_NULL) return MPI_ERR_GROUP;
  try {  // nothing may escape across the C boundary
    mpi::check_tag(tag);
    const mpi::Group members = mpi::Group::view(group);
    const int group_rank = members.rank();
    if (group_rank == MPI_UNDEFINED) return MPI_SUCCESS;  // not a member: null, no communication
    const std::vector<int> parent_ranks =
        parent_ranks_of(members, mpi::Comm::view(comm).group(), "mcmclb_group_comm_create");
    *newcomm = intercomm_create_merge(mpi::Comm::view(comm), parent_ranks, group_rank, tag).release();
    return MPI_SUCCESS;
  } catch (const mpi::UsageError& e) {
    return e.error_class();
  } catch (const mpi::Error& e) {
    return e.error_class();
  } catch (...) {
    return MPI_ERR_OTHER;
  }
}
