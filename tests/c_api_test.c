// SPDX-License-Identifier: BSD-3-Clause
/* A plain C99 MPI program using mcmclb_group_comm_create through mcmclb/group_comm.h only. Built by CMake and,
 * separately, by the bare mpicc wrapper (tests/c_api_links_with_mpicc.sh), to prove the C entry point links. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "mcmclb/group_comm.h"

static int failures = 0;
#define CHECK(cond, what)                                                      \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "[rank %d] check failed: %s (%s)\n", rank, what, #cond); \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

int main(int argc, char** argv) {
  int rank = 0, size = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Group world_group;
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);

  /* Reversed whole world: new rank = size - 1 - old rank. */
  int* ranks = malloc(sizeof(int) * (size_t)size);
  for (int i = 0; i < size; ++i) ranks[i] = size - 1 - i;
  MPI_Group reversed;
  MPI_Group_incl(world_group, size, ranks, &reversed);
  MPI_Comm comm = MPI_COMM_NULL;
  CHECK(mcmclb_group_comm_create(MPI_COMM_WORLD, reversed, 3, &comm) == MPI_SUCCESS, "reversed create");
  CHECK(comm != MPI_COMM_NULL, "member got a communicator");
  if (comm != MPI_COMM_NULL) {
    int new_rank = -1, sum = 0, cmp = MPI_UNEQUAL;
    MPI_Group created;
    MPI_Comm_rank(comm, &new_rank);
    CHECK(new_rank == size - 1 - rank, "rank order follows the group");
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, comm);
    CHECK(sum == size * (size - 1) / 2, "allreduce over the new communicator");
    MPI_Comm_group(comm, &created);
    MPI_Group_compare(created, reversed, &cmp);
    CHECK(cmp == MPI_IDENT, "group is identical to the input group");
    MPI_Group_free(&created);
    MPI_Comm_free(&comm);
  }

  /* Lower half: only members call; the others call too and must get MPI_COMM_NULL without communicating. */
  int half = size / 2 > 0 ? size / 2 : 1;
  MPI_Group lower;
  for (int i = 0; i < half; ++i) ranks[i] = i;
  MPI_Group_incl(world_group, half, ranks, &lower);
  CHECK(mcmclb_group_comm_create(MPI_COMM_WORLD, lower, 4, &comm) == MPI_SUCCESS, "lower half create");
  CHECK((rank < half) == (comm != MPI_COMM_NULL), "members only get a communicator");
  if (comm != MPI_COMM_NULL) {
    int n = 0;
    MPI_Comm_size(comm, &n);
    CHECK(n == half, "lower half size");
    MPI_Comm_free(&comm);
  }

  /* Errors are returned as MPI error classes, never thrown or aborted. */
  CHECK(mcmclb_group_comm_create(MPI_COMM_WORLD, world_group, -1, &comm) == MPI_ERR_TAG, "negative tag");
  CHECK(comm == MPI_COMM_NULL, "no communicator on error");
  CHECK(mcmclb_group_comm_create(MPI_COMM_WORLD, world_group, 0, NULL) == MPI_ERR_ARG, "null output");
  if (size > 1) {
    CHECK(mcmclb_group_comm_create(MPI_COMM_SELF, world_group, 0, &comm) == MPI_ERR_GROUP, "group not in comm");
  }

  MPI_Group_free(&lower);
  MPI_Group_free(&reversed);
  MPI_Group_free(&world_group);
  free(ranks);
  int any = 0;
  MPI_Allreduce(&failures, &any, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("c_api_test: %s (%d failed checks over %d ranks)\n", any ? "FAILED" : "ok", any, size);
  MPI_Finalize();
  return any ? 1 : 0;
}
