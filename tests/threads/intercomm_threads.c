// SPDX-License-Identifier: BSD-3-Clause
/* Concurrent group-collective communicator creation from several threads of each process (MPI_THREAD_MULTIPLE),
 * with a distinct tag per call, as the paper assumes is enough. ctest runs what is safe (tests/CMakeLists.txt).
 * The method `intercomm` (mcmclb_group_comm_create, Algorithm 1) fails here with more than one thread per
 * process, for reasons inside the MPI libraries (see mcmclb/group_comm.h):
 *   MPICH 4.0.2: "Message truncated" errors, segfaults or a hang. MPI_Intercomm_create's leader exchange uses a
 *     fixed internal tag, and MPI_Intercomm_merge's temporary context id is not unique across threads.
 *   Open MPI 4.1.4: a hang without an error. MPI_Intercomm_create's leaders agree on the context id over the
 *     bridge with a fixed internal tag, and the library holds back concurrent id choices in an order taken from
 *     each side's local communicator, which can differ between processes.
 * With one thread per process `intercomm` passes under both. The method `create_group` (MPI_Comm_create_group,
 * same groups and tags) is the control: it passes under both with any number of threads.
 *
 * Usage: mpiexec -n 3 intercomm_threads [intercomm|create_group] [threads per process] [iterations]
 * Every thread, every iteration, creates communicators over MPI_COMM_WORLD for
 *   - the whole world (the same members in every thread: overlapping across threads), and
 *   - one half of a split into two disjoint halves that alternates with thread and iteration,
 * then checks each by use: size, rank order and an MPI_Allreduce of the world ranks. Prints one line per
 * failed check and a summary on rank 0; exits 1 on any failure. Run it under `timeout`: it may also hang. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcmclb/group_comm.h"

enum { kMaxThreads = 64 };

static int use_intercomm = 1;
static int world_rank = 0, world_size = 0, iterations = 0, nthreads = 0;
static MPI_Group world_group = MPI_GROUP_NULL;

struct thread_result {
  int id;
  int failures;
  int created;
};

static int create(MPI_Group group, int tag, MPI_Comm* out) {
  if (use_intercomm) return mcmclb_group_comm_create(MPI_COMM_WORLD, group, tag, out);
  return MPI_Comm_create_group(MPI_COMM_WORLD, group, tag, out);
}

static void report(int thread, int iteration, const char* what, int rc) {
  char text[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  if (rc != MPI_SUCCESS) MPI_Error_string(rc, text, &len);
  fprintf(stderr, "[rank %d thread %d iteration %d] %s%s%s\n", world_rank, thread, iteration, what,
          rc != MPI_SUCCESS ? ": " : "", text);
}

/* Creates the communicator over members (world ranks, in order) and checks it by use. Non-members do nothing. */
static void create_and_check(struct thread_result* r, int iteration, const int* members, int n, int tag) {
  int my_index = -1, expected_sum = 0;
  for (int i = 0; i < n; ++i) {
    if (members[i] == world_rank) my_index = i;
    expected_sum += members[i];
  }
  if (my_index < 0) return;
  MPI_Group group = MPI_GROUP_NULL;
  MPI_Group_incl(world_group, n, members, &group);
  MPI_Comm comm = MPI_COMM_NULL;
  int rc = create(group, tag, &comm);
  MPI_Group_free(&group);
  if (rc != MPI_SUCCESS || comm == MPI_COMM_NULL) {
    report(r->id, iteration, "creation failed", rc);
    ++r->failures;
    return;
  }
  ++r->created;
  int size = 0, rank = -1, sum = -1;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  rc = MPI_Allreduce(&world_rank, &sum, 1, MPI_INT, MPI_SUM, comm);
  if (rc != MPI_SUCCESS || size != n || rank != my_index || sum != expected_sum) {
    char what[160];
    snprintf(what, sizeof what, "wrong communicator: size %d (want %d), rank %d (want %d), sum %d (want %d)", size, n,
             rank, my_index, sum, expected_sum);
    report(r->id, iteration, what, rc);
    ++r->failures;
  }
  MPI_Comm_free(&comm);
}

static void* thread_main(void* arg) {
  struct thread_result* r = arg;
  int* members = malloc(sizeof(int) * (size_t)world_size);
  for (int it = 0; it < iterations; ++it) {
    /* Distinct tags: each (thread, iteration, pattern) has its own. */
    const int tag = 1 + 3 * (r->id * iterations + it);
    for (int i = 0; i < world_size; ++i) members[i] = i;
    create_and_check(r, it, members, world_size, tag);
    /* Two disjoint halves, {ranks with (rank + id + it) even} and the rest; which half a rank is in alternates. */
    for (int half = 0; half < 2; ++half) {
      int n = 0;
      for (int i = 0; i < world_size; ++i) {
        if ((i + r->id + it) % 2 == half) members[n++] = i;
      }
      if (n > 0) create_and_check(r, it, members, n, tag + 1 + half);
    }
  }
  free(members);
  return NULL;
}

int main(int argc, char** argv) {
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  const char* method = argc > 1 ? argv[1] : "intercomm";
  nthreads = argc > 2 ? atoi(argv[2]) : 4;
  iterations = argc > 3 ? atoi(argv[3]) : 20;
  if (strcmp(method, "intercomm") != 0 && strcmp(method, "create_group") != 0) {
    if (world_rank == 0) fprintf(stderr, "intercomm_threads: method '%s' unknown (intercomm, create_group)\n", method);
    MPI_Finalize();
    return 2;
  }
  if (nthreads < 1 || nthreads > kMaxThreads || iterations < 1) {
    if (world_rank == 0) fprintf(stderr, "intercomm_threads: threads must be 1..%d and iterations >= 1\n", kMaxThreads);
    MPI_Finalize();
    return 2;
  }
  if (provided < MPI_THREAD_MULTIPLE) {
    if (world_rank == 0) fprintf(stderr, "intercomm_threads: the MPI library does not provide MPI_THREAD_MULTIPLE\n");
    MPI_Finalize();
    return 2;
  }
  use_intercomm = strcmp(method, "intercomm") == 0;
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);

  pthread_t threads[kMaxThreads];
  struct thread_result results[kMaxThreads];
  for (int t = 0; t < nthreads; ++t) {
    results[t] = (struct thread_result){.id = t, .failures = 0, .created = 0};
    pthread_create(&threads[t], NULL, thread_main, &results[t]);
  }
  int failures = 0, created = 0;
  for (int t = 0; t < nthreads; ++t) {
    pthread_join(threads[t], NULL);
    failures += results[t].failures;
    created += results[t].created;
  }
  int totals[2] = {failures, created}, sums[2] = {0, 0};
  MPI_Reduce(totals, sums, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (world_rank == 0) {
    printf(
        "intercomm_threads: method %s, %d ranks x %d threads x %d iterations: %d communicators created, %d failed "
        "checks\n",
        method, world_size, nthreads, iterations, sums[1], sums[0]);
  }
  MPI_Group_free(&world_group);
  MPI_Finalize();
  return sums[0] == 0 ? 0 : 1;
}
