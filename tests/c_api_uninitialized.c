// SPDX-License-Identifier: BSD-3-Clause
/* mcmclb_group_comm_create called when MPI cannot be used: before MPI_Init and after MPI_Finalize. It must return
 * MPI_ERR_OTHER with *newcomm set to MPI_COMM_NULL, as its header says, instead of aborting the process (an MPI
 * call there is erroneous, and MPICH aborts). Each process checks on its own: no MPI call is allowed outside. */
#include <mpi.h>
#include <stdio.h>

#include "mcmclb/group_comm.h"

static int failures = 0;

static void expect_refused(const char* when) {
  MPI_Comm comm = MPI_COMM_SELF; /* must be overwritten with MPI_COMM_NULL */
  const int rc = mcmclb_group_comm_create(MPI_COMM_WORLD, MPI_GROUP_EMPTY, 1, &comm);
  if (rc != MPI_ERR_OTHER) {
    fprintf(stderr, "c_api_uninitialized: %s: returned %d, expected MPI_ERR_OTHER (%d)\n", when, rc, MPI_ERR_OTHER);
    ++failures;
  }
  if (comm != MPI_COMM_NULL) {
    fprintf(stderr, "c_api_uninitialized: %s: *newcomm is not MPI_COMM_NULL\n", when);
    ++failures;
  }
  if (mcmclb_group_comm_create(MPI_COMM_WORLD, MPI_GROUP_EMPTY, 1, NULL) != MPI_ERR_ARG) {
    fprintf(stderr, "c_api_uninitialized: %s: a null newcomm is not MPI_ERR_ARG\n", when);
    ++failures;
  }
}

int main(int argc, char** argv) {
  expect_refused("before MPI_Init");

  MPI_Init(&argc, &argv);
  /* In between it works: MPI_COMM_SELF's own group over MPI_COMM_SELF. */
  MPI_Group self_group;
  MPI_Comm_group(MPI_COMM_SELF, &self_group);
  MPI_Comm comm = MPI_COMM_NULL;
  if (mcmclb_group_comm_create(MPI_COMM_SELF, self_group, 1, &comm) != MPI_SUCCESS || comm == MPI_COMM_NULL) {
    fprintf(stderr, "c_api_uninitialized: the call fails while MPI is initialised\n");
    ++failures;
  }
  if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  MPI_Group_free(&self_group);
  MPI_Finalize();

  expect_refused("after MPI_Finalize");
  if (failures == 0) printf("c_api_uninitialized: ok\n");
  return failures == 0 ? 0 : 1;
}
