// How a rank passes time: the clock it reads, how it waits for a pending operation, and how emulated work takes
// time. The kernel and the balancers go through here and nowhere else, so a simulated back end (issue 9) replaces
// one small module: today real time (MPI_Wtime), polite waits (MPI_Test plus a short sleep) and sleep or spin.
#pragma once

#include <mpi.h>

#include <chrono>
#include <functional>

#include "mcmclb/mpi.hpp"
#include "mcmclb/run_spec.hpp"

namespace mcmclb::pace {

/// Seconds on the run's clock (MPI_Wtime).
[[nodiscard]] double now_s();

/// Waits for request, testing and napping in turn, so a waiting rank leaves its core to ranks that work.
void wait(MPI_Request& request, std::chrono::microseconds nap = mpi::default_nap);

/// Waits until done() returns true (done tests, and may progress, an operation), napping in between.
void wait_until(const std::function<bool()>& done, std::chrono::microseconds nap = mpi::default_nap);

/// Occupies this rank for ms milliseconds of emulated work: sleeping (the core is free) or busy until a
/// monotonic deadline (spin).
void work(WorkMode mode, double ms);

}  // namespace mcmclb::pace
