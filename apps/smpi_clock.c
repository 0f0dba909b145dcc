/* libmcmclb_smpi_clock.so: preloaded into a simulation (LD_PRELOAD) by mcmclb sweep --launcher smpi and the scripts
 * that call smpirun, only when the flags say --cfg=smpi/simulate-computation:no.
 *
 * Why: SMPI 3.32 times the application's code between MPI calls with the simulated thread's CPU clock
 * (smpi_bench_begin/_end, xbt_os_threadtimer_start/_stop: clock_gettime(CLOCK_THREAD_CPUTIME_ID)), on every MPI
 * call, whether or not it will use the result. That clock has no vDSO fast path: each read is a system call, and
 * in a virtual machine a costly one (about half the host time of a 1024-rank async run on the project's VM). With
 * simulate-computation:no SMPI only adds the measured seconds to a statistic it prints on request
 * (smpi/display-timing); nothing simulated depends on them. So this library answers that one clock with zero and
 * leaves every other clock to the C library. The simulation build's own code never reads it (pace::cpu_s is the
 * simulated clock there).
 *
 * Built with the host's C compiler, not smpicc: smpicc would rename clock_gettime to SMPI's own (smpi_helpers.h)
 * and link SimGrid into every process the preload reaches (smpirun is a shell script).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <string.h>
#include <time.h>

typedef int (*clock_gettime_fn)(clockid_t, struct timespec*);

int clock_gettime(clockid_t clock, struct timespec* at) {
  static clock_gettime_fn next = NULL;
  if (clock == CLOCK_THREAD_CPUTIME_ID) {
    at->tv_sec = 0;
    at->tv_nsec = 0;
    return 0;
  }
  if (next == NULL) {
    /* The C library's definition: the next one after this library in the lookup order. Copied, not cast: ISO C
     * has no conversion from an object pointer (dlsym's) to a function pointer. */
    void* found = dlsym(RTLD_NEXT, "clock_gettime");
    memcpy(&next, &found, sizeof next);
    if (next == NULL) {
      errno = ENOSYS;
      return -1;
    }
  }
  return next(clock, at);
}

/* Found by the simulation build (dlsym) to record in provenance.csv that the clock above was answered here. */
int mcmclb_smpi_clock_preloaded(void) { return 1; }
