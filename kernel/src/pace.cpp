// SPDX-License-Identifier: BSD-3-Clause
// The clock, waits, collectives and emulated work under both back ends (mcmclb/pace.hpp).
#include "mcmclb/pace.hpp"

#include <time.h>

#include <cmath>
#include <thread>

#if MCMCLB_SMPI
#include <simgrid/engine.h>
#include <smpi/smpi.h>

#include <ctime>
#endif

namespace mcmclb::pace {

double now_s() {
#if MCMCLB_SMPI
  // SimGrid's clock, not MPI_Wtime: SMPI wraps every MPI call, MPI_Wtime included, in a pair of host CPU-time reads
  // (system calls) and charges 10 ns of simulated time for it (smpi/wtime), so the kernel's clock reads made about
  // a quarter of the host time per item; without computation being simulated both clocks give the same instant.
  return simgrid_get_clock();
#else
  return MPI_Wtime();
#endif
}

void wait(MPI_Request& request, std::chrono::microseconds nap) { mpi::wait_politely(request, nap); }

void wait(mpi::Request& request, std::chrono::microseconds nap) { request.wait(nap); }

void wait_until(const std::function<bool()>& done, std::chrono::microseconds nap) {
  mpi::wait_until_politely(done, nap);
}

void bcast(MPI_Comm comm, std::span<int64_t> words, int root, std::chrono::microseconds nap) {
  mpi::bcast_politely(mpi::Comm::view(comm), words, root, nap);
}

void allreduce_sum(MPI_Comm comm, std::span<int64_t> values) {
  mpi::allreduce_sum_politely(mpi::Comm::view(comm), values);
}

void work(WorkMode mode, double ms) {
#if MCMCLB_SMPI
  // Exactly ms of simulated time (smpi_nanosleep also closes SMPI's computation benchmark around it); spinning
  // would only burn host time, which the simulation does not see.
  (void)mode;
  if (!(ms > 0.0)) return;
  const double seconds = ms / 1000.0;
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(seconds);
  ts.tv_nsec = static_cast<long>(std::llround((seconds - static_cast<double>(ts.tv_sec)) * 1e9));
  smpi_nanosleep(&ts, nullptr);
#else
  using clock = std::chrono::steady_clock;
  const auto deadline =
      clock::now() + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double, std::milli>(ms));
  if (mode == WorkMode::spin) {
    while (clock::now() < deadline) {
    }
  } else {
    std::this_thread::sleep_until(deadline);
  }
#endif
}

void compute(double flops) {
#if MCMCLB_SMPI
  if (flops > 0.0) smpi_execute_flops(flops);
#else
  (void)flops;
#endif
}

double cpu_s() {
  if constexpr (mpi::kSimulated) return now_s();
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

}  // namespace mcmclb::pace
