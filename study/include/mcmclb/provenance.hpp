// Where a measurement came from: the facts every benchmark records beside its data.
#pragma once

#include <string>

#include "mcmclb/csv.hpp"

namespace mcmclb {

const char* git_commit();  // generated at build time (cmake/WriteGitCommit.cmake)

struct Provenance {
  std::string git_commit;
  std::string mpi_library;  // first line of MPI_Get_library_version
  int nprocs = 0;
  std::string host;            // rank 0's host name
  std::string utc_start;       // ISO 8601, e.g. 2026-11-21T05:36:37Z
  std::string command_line;    // how the program was started (argv, shell-quoted); set by the main
  std::string working_dir;     // the folder it was started in (relative paths in command_line are relative to it)
  std::string launcher;        // how the ranks were started ("srun --mpi=pmi2", "mpiexec"), from MCMCLB_LAUNCHER
  std::string slurm_job_id;    // SLURM_JOB_ID; empty outside a Slurm job
  std::string slurm_nodelist;  // SLURM_JOB_NODELIST, e.g. node[01-04]
};

/// provenance.csv, beside runs.csv: the facts that do not fit runs.csv's stable header, one row per run, joined
/// with runs.csv by run_id.
const csv::Row& provenance_header();
csv::Row provenance_row(const std::string& run_id, const Provenance& p);

/// The provenance of a run of nprocs ranks with the given MPI library (mpi::library_version()): the build's
/// commit, this host and the time now. Local and MPI-free, so results writers need no MPI.
Provenance collect_provenance(const std::string& mpi_library, int nprocs);

/// The current UTC time as ISO 8601 with a trailing Z.
std::string utc_now();

}  // namespace mcmclb
