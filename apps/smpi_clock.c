// SPDX-License-Identifier: BSD-3-Clause
/* libmcmclb_smpi_clock.so: preloaded into every simulation (LD_PRELOAD) by mcmclb sweep --launcher smpi and the
 * scripts that call smpirun (the libraries listed in smpi-preload.txt beside the simulation build's programs).
 *
 * Why: SMPI 3.32 times the application's code between MPI calls with the simulated thread's CPU clock
 * (smpi_bench_begin/_end, xbt_os_threadtimer_start/_stop: clock_gettime(CLOCK_THREAD_CPUTIME_ID)), on every MPI
 * call, whether or not it will use the result. That clock has no vDSO fast path: each read is a system call, and
 * in a virtual machine a costly one. With --cfg=smpi/simulate-computation:no SMPI only adds the measured seconds to
 * a statistic it prints on request (smpi/display-timing); nothing simulated depends on them. So when the run's flags
 * (MCMCLB_SMPI_CFG, which whatever starts smpirun sets to the flags it passes) turn the simulation of computation
 * off, this library answers that one clock with zero; otherwise, and for every other clock, the C library answers.
 * The simulation build's own code never reads that clock (pace::cpu_s is the simulated clock there).
 *
 * Built with the host's C compiler, not smpicc: smpicc would rename clock_gettime to SMPI's own (smpi_helpers.h)
 * and link SimGrid into every process the preload reaches (smpirun is a shell script).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int (*clock_gettime_fn)(clockid_t, struct timespec*);

/* Whether the last --cfg=smpi/simulate-computation: flag in the space-separated flags says no (SimGrid's default,
 * with no such flag, is yes). */
static int computation_not_simulated(const char* flags) {
  static const char key[] = "--cfg=smpi/simulate-computation:";
  static const char* const no[] = {"no", "off", "false", "0"};
  int not_simulated = 0;
  for (const char* at = flags; at != NULL && (at = strstr(at, key)) != NULL; at += sizeof key - 1) {
    if (at != flags && at[-1] != ' ') continue;
    const char* value = at + sizeof key - 1;
    const size_t length = strcspn(value, " ");
    not_simulated = 0;
    for (size_t i = 0; i < sizeof no / sizeof no[0]; ++i) {
      if (strlen(no[i]) == length && strncmp(value, no[i], length) == 0) not_simulated = 1;
    }
  }
  return not_simulated;
}

/* Decided once, at the first read: the flags do not change while the simulation runs. */
int mcmclb_smpi_cpu_clock_zeroed(void) {
  static int decided = -1;
  if (decided < 0) decided = computation_not_simulated(getenv("MCMCLB_SMPI_CFG"));
  return decided;
}

int clock_gettime(clockid_t clock, struct timespec* at) {
  static clock_gettime_fn next = NULL;
  if (clock == CLOCK_THREAD_CPUTIME_ID && mcmclb_smpi_cpu_clock_zeroed()) {
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
