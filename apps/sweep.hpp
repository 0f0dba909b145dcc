// SPDX-License-Identifier: BSD-3-Clause
// `mcmclb plan`, `mcmclb sweep` and `mcmclb status`: expand a study, then hand its points to a launcher
// (mcmclb/launch.hpp: locally, one mpiexec per rank count; in simulation; or one Slurm batch script per rank count).
// None initialises MPI: they launch MPI jobs.
#pragma once

#include <string>
#include <vector>

#include "mcmclb/launch.hpp"

namespace mcmclb {

enum class Command { plan, sweep, status };

/// Parses the arguments after `plan` or `sweep`; throws mpi::InputError.
SweepOptions parse_sweep_options(const std::vector<std::string>& args, bool sweep);
SweepOptions parse_sweep_options(const std::vector<std::string>& args, Command command);

int plan_main(const SweepOptions& options);
int sweep_main(const SweepOptions& options);
/// `mcmclb status STUDY`: per launch, points done / failed / missing and the job squeue lists for it (the points of
/// the real MPI, or with --launcher smpi [--platform FILE] those simulated on that platform). Exit 0 when
/// every point is done, 3 otherwise. With --launch P --record-failures STATUS (the batch scripts' last step), it
/// appends the launch's points still without a valid result to failures.csv instead (--failed-setup LINE: the
/// job.setup line that ended the job before the launch, named in each failure's reason).
int status_main(const SweepOptions& options);

}  // namespace mcmclb
