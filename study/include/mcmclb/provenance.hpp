// SPDX-License-Identifier: BSD-3-Clause
// Where a measurement came from: the facts every benchmark records beside its data.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "mcmclb/csv.hpp"
#include "mcmclb/text.hpp"  // fnv1a64_hex

namespace mcmclb {

const char* git_commit();  // generated at build time (cmake/WriteGitCommit.cmake)
// The release, project()'s VERSION in CMakeLists.txt: what every program's --version prints beside git_commit().
const char* version();
// How the build compiled C++ (generated at configure time, cmake/BuildInfo.cmake): CMAKE_BUILD_TYPE, the compiler
// ("GNU 12.2.0") and the flags every target's C++ got.
const char* build_type();
const char* cxx_compiler();
const char* cxx_flags();

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
  // The back end: "mpi", or "smpi" for the SimGrid simulation build, whose numbers are simulated. For
  // smpi, also the simulated platform (the file smpirun was given, from MCMCLB_PLATFORM, as its canonical path), a
  // hash of its content, smpirun's flags (MCMCLB_SMPI_CFG) and the version of the SimGrid library that ran
  // ("3.32.0", asked of the library itself; mpi_library holds SMPI's own text too).
  std::string backend = "mpi";
  std::string platform;
  std::string platform_fnv1a64;  // 16 hex digits, FNV-1a 64 of the platform file's bytes
  std::string simgrid_cfg;
  std::string simgrid_version;
  std::string placement;  // smpi: how the hostfile placed the ranks (key placement: block, groups; MCMCLB_PLACEMENT)
  // Whether the ranks had cores to themselves (mpi::node_occupancy): the most ranks on one node, the fewest CPUs
  // the job may use on one (sched_getaffinity), and whether some node ran more ranks than that. 0 / empty:
  // unknown (an older folder) or not applicable (the simulation build, whose times do not depend on host cores).
  int ranks_per_node = 0;
  int cores_available = 0;
  std::string oversubscribed;  // "true", "false" or "" (unknown)
  // The nodes the run spanned and, per node, its host, ranks and CPUs (mpi::NodeOccupancy::layout, e.g.
  // "n01[0-3]/4 n02[4-7]/2"): which ranks shared which cores. 0 / empty: unknown or not applicable, as above.
  int nodes = 0;
  std::string node_layout;
  // How the run's ranks waited (mcmclb/wait_policy.hpp): spin, polite or yield on real MPI, as the key work.wait
  // chose or, for its default auto, as the machine did (mpi::machine_wait_policy: spin where each rank has a core and
  // runs on it); "blocking" in the simulation,
  // whose waits are MPI_Wait. Empty outside a kernel run.
  std::string wait_policy;
  // The host's cost of the launch up to the end of this run, in the process that ran rank 0 (add_host_usage): CPU
  // seconds (user + system) and peak resident memory. In simulation every simulated rank is in that process, so
  // these are the simulation's whole cost; on real MPI they are rank 0's alone. Empty where not measured.
  std::string host_cpu_s;
  std::string host_peak_rss_kib;
  // What the host was (its CPU's "model name" in /proc/cpuinfo, rank 0's) and, in simulation, how busy other
  // programs kept it just before and just after this run (host_busy_share, in per cent): a host cost measured beside
  // them is not an idle machine's. Empty where unknown, and the busy shares on real MPI, where the run's own ranks
  // (spinning while rank 0 measured) would count as load.
  std::string host_cpu_model;
  std::string host_busy_before_pct;
  std::string host_busy_after_pct;
  // Real MPI only, the share of a core each rank had at the launch's start (mpi::NodeOccupancy::core_share, the
  // least over the ranks, measured once for every run of the launch): about 1 on an idle host, lower where other
  // programs ran beside it. Empty in simulation, where it does not apply, and where it was not measured.
  std::string core_share;
  // Simulation only, the host-speed preloads (apps/CMakeLists.txt; they change the host's cost, never a simulated
  // number): "true" when libmcmclb_smpi_clock.so answered SMPI's per-call reads of the thread CPU clock with zero
  // (apps/smpi_clock.c), "false" when SMPI read the clock; and the allocator the simulation ran with ("gperftools
  // 2.10 tcmalloc" when preloaded, else "glibc"). Empty on real MPI.
  std::string smpi_clock_preload;
  std::string smpi_allocator;
  // The order in which the launch ran its points (the study's key order: interleaved, shuffled or blocked; blocked
  // in simulation) and, for shuffled, its seed (key order_seed). Empty outside a study's run and in older folders.
  std::string order;
  std::string order_seed;
  // How the code that ran was compiled (build_type(), cxx_compiler(), cxx_flags()): a Release build and the tests'
  // -O1 build differ about threefold in compute-mode time. Empty in older folders: unknown.
  std::string build_type;
  std::string compiler;
  std::string cxx_flags;
};

/// Sets p's host_cpu_s and host_peak_rss_kib from getrusage(RUSAGE_SELF): this process since it started.
void add_host_usage(Provenance& p);

/// The share of the host's CPU time that was busy over the next `window`, from /proc/stat's first line (every
/// core's jiffies: busy is all but idle and iowait), this thread sleeping meanwhile; nothing where /proc/stat
/// cannot be read. The sleep is the host's even in the simulation build, where it adds no simulated time.
std::optional<double> host_busy_share(std::chrono::milliseconds window);
/// host_busy_share as provenance records it: per cent, "" when unknown.
std::string host_busy_pct(std::chrono::milliseconds window);

/// The CPUs this process may run on: its sched_getaffinity mask, which a taskset or a batch job's cpuset narrows
/// (the host's CPU count where the mask cannot be read), at least 1. More busy threads or ranks than this only
/// share these CPUs.
[[nodiscard]] int usable_cores();

/// Fills p's simulation fields for backend ("mpi": nothing; "smpi": from the environment variables
/// MCMCLB_PLATFORM, the platform file smpirun runs on, and MCMCLB_SMPI_CFG, its --cfg flags, which whatever
/// starts smpirun sets). Throws InputError when backend is smpi and MCMCLB_PLATFORM is unset or unreadable.
void add_backend_provenance(Provenance& p, std::string_view backend);

/// How results name a platform file (runs.csv's platform column, part of a point's resume key): its path relative
/// to the root of the git work tree holding it (configs/platforms/bgp.xml), so results carry no path of the
/// machine that made them and compare across checkouts; the canonical absolute path for a file outside any work
/// tree. The same whichever way the file is named.
std::string platform_identity(const std::string& path);

/// provenance.csv, beside runs.csv: the facts that do not fit runs.csv's stable header, one row per run, joined
/// with runs.csv by run_id.
const csv::Row& provenance_header();
/// The header before ranks_per_node, cores_available, oversubscribed and wait_policy, which the results store
/// upgrades (the new columns empty: unknown).
const csv::Row& provenance_header_v1();
/// The columns before smpi_clock_preload: v1 and the occupancy, wait policy and host usage.
const csv::Row& provenance_header_v2();
/// The columns before smpi_allocator: v2 and smpi_clock_preload.
const csv::Row& provenance_header_v3();
/// The columns before nodes and node_layout: v3 and smpi_allocator.
const csv::Row& provenance_header_v4();
/// The columns before order and order_seed: v4, nodes and node_layout.
const csv::Row& provenance_header_v5();
/// The columns before build_type, compiler and cxx_flags: v5, order and order_seed.
const csv::Row& provenance_header_v6();
/// The columns before simgrid_version and platform: v6, build_type, compiler and cxx_flags.
const csv::Row& provenance_header_v7();
/// The columns before placement: v7, simgrid_version and platform.
const csv::Row& provenance_header_v8();
/// The columns before host_cpu_model, host_busy_before_pct and host_busy_after_pct: v8 and placement.
const csv::Row& provenance_header_v9();
/// The columns before core_share: v9, host_cpu_model, host_busy_before_pct and host_busy_after_pct.
const csv::Row& provenance_header_v10();
csv::Row provenance_row(const std::string& run_id, const Provenance& p);

/// The provenance of a run of nprocs ranks with the given MPI library (mpi::library_version()): the build's
/// commit, this host and the time now. Local and MPI-free, so results writers need no MPI.
Provenance collect_provenance(const std::string& mpi_library, int nprocs);

/// The current UTC time as ISO 8601 with a trailing Z.
std::string utc_now();

}  // namespace mcmclb
