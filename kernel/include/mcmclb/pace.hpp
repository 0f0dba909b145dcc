// SPDX-License-Identifier: BSD-3-Clause
// How a rank passes time: the clock it reads, how it waits for a pending operation or a collective, and how
// emulated work takes time. The kernel and the balancers go through here and nowhere else, under both back ends:
//   real MPI: MPI_Wtime, polite waits (MPI_Test plus a short sleep), nonblocking collectives waited on politely,
//             work by sleeping or spinning on the host clock;
//   SimGrid SMPI (mpi::kSimulated): simulated time only. SimGrid's clock is the run's clock, waits block
//             (MPI_Wait: every MPI_Test would inject simulated time), collectives are the blocking calls (SMPI's
//             nonblocking ones are flat whatever --cfg=smpi/<collective> says), work is a simulated sleep of
//             exactly its cost and no host time, so a run is deterministic; computed work (compute mode) passes
//             its modelled cost in flops on the simulated host (smpi_execute_flops), never the host's time.
// The only other SMPI switches are mpi::wait_politely & co. (comm/, which cannot depend on this module) and the
// Algorithm 1 replay in comm/src/smpi_patterns.cpp.
#pragma once

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <span>

#include "mcmclb/mpi.hpp"
#include "mcmclb/run_spec.hpp"

namespace mcmclb::pace {

/// Seconds on the run's clock: MPI_Wtime; in the simulation, SimGrid's clock, which unlike MPI_Wtime costs no
/// simulated time (smpi/wtime) and no host system call, so reading it never changes a result.
[[nodiscard]] double now_s();

/// Waits for request, testing and napping in turn, so a waiting rank leaves its core to ranks that work.
void wait(MPI_Request& request, std::chrono::microseconds nap = mpi::default_nap);
/// The same for an owned request; returns at once, without an MPI call, when nothing is pending (mpi::Request).
void wait(mpi::Request& request, std::chrono::microseconds nap = mpi::default_nap);

/// Waits until done() returns true (done tests, and may progress, an operation), napping in between.
void wait_until(const std::function<bool()>& done, std::chrono::microseconds nap = mpi::default_nap);

/// Broadcasts words from root over comm, waiting as wait() waits (simulation: MPI_Bcast).
void bcast(MPI_Comm comm, std::span<int64_t> words, int root, std::chrono::microseconds nap = mpi::default_nap);

/// Sums values over comm in place, waiting as wait() waits (simulation: MPI_Allreduce).
void allreduce_sum(MPI_Comm comm, std::span<int64_t> values);

/// Occupies this rank for ms milliseconds of emulated work: sleeping (the core is free) or busy until a
/// monotonic deadline (spin). Simulation: ms of simulated time in both modes, no host time.
void work(WorkMode mode, double ms);

/// Computed work (compute mode) of flops on this rank, just done on the host. Real MPI: nothing (the
/// computation took its own time). Simulation: flops on the simulated host (smpi_execute_flops: flops / the
/// host's speed), so the simulated time is the modelled cost (lj::trial_flops) whatever the host CPU took.
void compute(double flops);

/// This thread's CPU seconds, to time computed work: CLOCK_THREAD_CPUTIME_ID (ranks sharing cores do not
/// inflate it). Simulation: the simulated clock, which compute() advances.
[[nodiscard]] double cpu_s();

}  // namespace mcmclb::pace
