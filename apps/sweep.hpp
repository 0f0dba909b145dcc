// SPDX-License-Identifier: BSD-3-Clause
// `mcmclb plan`, `mcmclb sweep` and `mcmclb status`: expand a study, then run its points locally (one mpiexec per rank
// count, with progress, failure recording and resume) or write and submit one Slurm batch script per rank count.
// Neither initialises MPI: they launch MPI jobs.
#pragma once

#include <string>
#include <vector>

#include "mcmclb/csv.hpp"

namespace mcmclb {

struct SweepOptions {
  std::string study;                   // path of the study file
  std::vector<std::string> overrides;  // --set key=value
  std::string launcher;                // local | slurm | smpi
  std::string platform;                // smpi: the SimGrid platform file (--platform), hostfile beside it
  std::string sim_binary;              // smpi: the simulation build's mcmclb-sim (--sim-binary)
  std::string sim_commbench;           // smpi: its mcmclb-commbench-sim (--sim-commbench; default: beside sim_binary)
  std::string smpi_flags;              // smpi: smpirun's flags file (--smpi-flags; default configs/platforms/smpi.cfg)
  std::string out;                     // --out, else the study's out
  std::string jobs_dir;                // --jobs-dir, else jobs/<study>
  bool force = false;                  // rerun points already done
  bool dry_run = false;                // slurm: write scripts, do not submit; local, smpi: print the launches
  bool verbose = false;                // plan: list every point
  int launch = 0;                      // status: only the launch of this rank count (0: all)
  std::string record_failures;         // status, inside a batch job: the launch's exit status; records its losses
  std::string failed_setup;            // status, with record_failures: the job.setup line that ended the job
  double until_ci_pct = 0;             // sweep --until-ci: repeat each point until its median's 95 % interval's
                                       // half-width is at most this % of the median (0: the study's reps only)
  int max_reps = 30;                   // sweep --max-reps: the cap of --until-ci's repetitions per point
  int points_per_launch = 0;           // sweep --points-per-launch: kernel points per mpiexec or smpirun (0: the
                                       // launcher's default, launch_local.cpp's points_per_launch())
  int jobs = 1;                        // sweep --jobs: simulated launches run at once (smpi only: each is one host
                                       // process, and simulated times do not depend on the host's load)
  bool job_steps = false;              // sweep --job-steps: inside a Slurm allocation, each simulation one job step
                                       // (srun, one task of one CPU), so --jobs of them spread over its nodes
};

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

/// stopping.csv in a results folder: why `sweep --until-ci` stopped repeating each point (ci_reached, cap,
/// deterministic, failed), one row per point, rewritten atomically and merged by point (docs/reference/columns.md).
const csv::Row& stopping_header();

}  // namespace mcmclb
