/* SPDX-License-Identifier: BSD-3-Clause */
/* Preloaded into the tests' MPI ranks (tests/CMakeLists.txt), never into a benchmark or a user's run: a rank
 * whose MPI progress finds nothing to do gives its core away.
 *
 * Why: MPICH's ch4 device busy-polls while it waits and ignores MPIR_CVAR_POLLS_BEFORE_YIELD (the ch3 device's
 * remedy). Where its ranks share the cores, with each other (more ranks than cores) or with the builds the test
 * command runs beside them, a waiting rank spins out its whole time slice on a core that the rank it waits for
 * needs, so every collective and every creation of a communicator waits on the scheduler. On the 2-core
 * development VM the kernel suite at 6 ranks took 28.7 s of wall time and 47.8 s of CPU; preloaded, 7.0 s and
 * 4.5 s, with the same tests passing. Open MPI yields by itself when it finds itself oversubscribed; UPC++ does the
 * same (UPCXX_OVERSUBSCRIBED). The tests assert correctness, not speed, so this changes what they cost, not what
 * they check; the tests that run what a user runs keep MPICH's own waiting.
 *
 * How: MPICH (ch4:ucx) and Open MPI (pml ucx) call UCX's ucp_worker_progress from their wait loops, across a
 * library boundary, so a preloaded definition sees every turn of those loops. It calls UCX's own and, after
 * kIdleTurns turns in a row that completed nothing, sched_yield(): with no other program runnable on the core that
 * returns at once, so a rank alone on its core loses next to nothing. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kIdleTurns = 16 };

typedef unsigned (*progress_fn)(void* worker);

static progress_fn ucx_progress;

static void find_ucx_progress(void) {
  void* symbol = dlsym(RTLD_NEXT, "ucp_worker_progress");
  if (symbol == NULL) {
    fprintf(stderr, "mpi_yield: UCX's ucp_worker_progress not found: %s\n", dlerror());
    abort();
  }
  memcpy(&ucx_progress, &symbol, sizeof symbol); /* ISO C has no cast from an object pointer to a function's */
}

unsigned ucp_worker_progress(void* worker) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  static _Thread_local unsigned idle; /* per thread: the threaded tests call MPI from several at once */
  pthread_once(&once, find_ucx_progress);
  const unsigned events = ucx_progress(worker);
  if (events != 0) {
    idle = 0;
  } else if (++idle >= kIdleTurns) {
    idle = 0;
    sched_yield();
  }
  return events;
}
