/* SPDX-License-Identifier: BSD-3-Clause */
/* Preloaded into the tests' MPI ranks (tests/CMakeLists.txt), never into a benchmark or a user's run: where a node
 * runs more ranks than it has cores, a rank whose MPI progress finds nothing to do gives its core away.
 *
 * Why: MPICH's ch4 device busy-polls while it waits and ignores MPIR_CVAR_POLLS_BEFORE_YIELD (the ch3 device's
 * remedy). With more ranks than cores, a waiting rank spins out its whole time slice on the core that the rank it
 * waits for needs, so every collective and every creation of a communicator waits on the scheduler. On the 2-core
 * development VM the kernel suite at 6 ranks took 28.7 s of wall time and 47.8 s of CPU; preloaded, 7.0 s and 4.5 s,
 * with the same tests passing. Open MPI yields by itself when it finds itself oversubscribed; UPC++ does the same
 * (UPCXX_OVERSUBSCRIBED). The tests assert correctness, not speed, so this changes what they cost, not what they
 * check; at or below one rank per core the ranks run exactly as a user's do, every call passed straight through.
 *
 * How: MPICH (ch4:ucx) and Open MPI (pml ucx) call UCX's ucp_worker_progress from their wait loops, across a
 * library boundary, so a preloaded definition sees every turn of those loops. It calls UCX's own and, after
 * kIdleTurns turns in a row that completed nothing, sched_yield(). Oversubscribed means: the ranks the launcher
 * says share this node (Hydra's MPI_LOCALNRANKS, Open MPI's OMPI_COMM_WORLD_LOCAL_SIZE) outnumber the cores this
 * process may run on. A test that CTest runs beside others (MCMCLB_TEST_BESIDE set) yields at any rank count: the
 * builds beside it hold the cores, and a rank spinning for a partner the scheduler has not run takes the core that
 * a build, or the partner, needs. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kIdleTurns = 16 };

typedef unsigned (*progress_fn)(void* worker);

static int local_ranks(void) {
  const char* names[] = {"MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE"};
  for (unsigned i = 0; i < sizeof names / sizeof names[0]; ++i) {
    const char* value = getenv(names[i]);
    if (value != NULL) return atoi(value);
  }
  return 0; /* not started by a launcher that says: nothing to decide from, so never yield */
}

static int oversubscribed(void) {
  cpu_set_t cpus;
  if (sched_getaffinity(0, sizeof cpus, &cpus) != 0) return 0;
  return local_ranks() > CPU_COUNT(&cpus);
}

static progress_fn ucx_progress;
static int yields;

static void decide(void) {
  void* symbol = dlsym(RTLD_NEXT, "ucp_worker_progress");
  if (symbol == NULL) {
    fprintf(stderr, "yield_when_oversubscribed: UCX's ucp_worker_progress not found: %s\n", dlerror());
    abort();
  }
  memcpy(&ucx_progress, &symbol, sizeof symbol); /* ISO C has no cast from an object pointer to a function's */
  yields = oversubscribed() || getenv("MCMCLB_TEST_BESIDE") != NULL;
}

unsigned ucp_worker_progress(void* worker) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  static _Thread_local unsigned idle; /* per thread: the threaded tests call MPI from several at once */
  pthread_once(&once, decide);
  const unsigned events = ucx_progress(worker);
  if (!yields) return events;
  if (events != 0) {
    idle = 0;
  } else if (++idle >= kIdleTurns) {
    idle = 0;
    sched_yield();
  }
  return events;
}
