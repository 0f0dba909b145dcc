// SPDX-License-Identifier: BSD-3-Clause
// The launchers: how a sweep's points reach MPI ranks (mcmclb sweep, mcmclb status, mcmclb advise). One interface
// (Launcher) and one table of them (launchers(), filled from launch/src/launchers.def), so that a new launcher is
// one file plus one line (docs/contributing/extending.md). The commands choose one by name and hand it the study;
// what every launcher shares is declared below. No MPI: the launchers start MPI jobs.
//   src/common.cpp    the study and its output folder, the commands a launch runs, failures, running a command
//   src/local.cpp     local and smpi: one mpiexec (or smpirun) per rank count, with progress
//   src/smpi.cpp      smpi: smpirun's flags, platform checks, the simulated determinism check
//   src/slurm.cpp     slurm: batch scripts from the template, squeue and sbatch
//   src/memory.cpp    how much memory a simulation will take, for smpi's launches at once
//   src/registry.cpp  the table
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mcmclb/csv.hpp"
#include "mcmclb/result_store.hpp"
#include "mcmclb/run_files.hpp"
#include "mcmclb/simulation_cost.hpp"
#include "mcmclb/study.hpp"

#ifndef MCMCLB_SOURCE_DIR
#define MCMCLB_SOURCE_DIR "."
#endif

namespace mcmclb {

/// What a sweep is asked to do, from the command line of `mcmclb plan`, `sweep` and `status`.
struct SweepOptions {
  std::string study;                   // path of the study file
  std::vector<std::string> overrides;  // --set key=value
  std::string launcher;                // a name in launch::launchers(): local | slurm | smpi
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
                                       // launcher's default, local.cpp's points_per_launch())
  int jobs = 1;                        // sweep --jobs: simulated launches run at once (smpi only: each is one host
                                       // process, and simulated times do not depend on the host's load)
  bool job_steps = false;              // sweep --job-steps: inside a Slurm allocation, each simulation one job step
                                       // (srun, one task of one CPU), so --jobs of them spread over its nodes
  CpuCapacity cpu;                     // smpi: the CPU the host gives our simulations, for the time estimates
                                       // (measured by advise; default: an idle host)
};

/// stopping.csv in a results folder: why `sweep --until-ci` stopped repeating each point (ci_reached, cap,
/// deterministic, failed), one row per point, rewritten atomically and merged by point (docs/reference/columns.md).
const csv::Row& stopping_header();

namespace launch {

/// One way of starting a study's points. A launcher is stateless: every call gets the options and the study.
class Launcher {
 public:
  virtual ~Launcher() = default;
  /// The name --launcher takes.
  [[nodiscard]] virtual std::string_view name() const = 0;
  /// True where its runs are simulated (runs.csv's backend smpi, a platform, deterministic repetitions).
  [[nodiscard]] virtual bool simulated() const { return false; }
  /// What provenance.csv's launcher column records for the runs it starts (MCMCLB_LAUNCHER); "" where the
  /// launched job sets it itself.
  [[nodiscard]] virtual std::string_view provenance_name() const = 0;
  /// Runs the study's points still to run (`mcmclb sweep`); study_text is the study file as read. Returns the exit
  /// status: 0, or 3 when a point failed. InputError for options it cannot use, before anything is started.
  virtual int sweep(const SweepOptions& o, const Study& study, const std::string& study_text) const = 0;
};

/// Every launcher, in the order users see their names (launch/src/launchers.def).
const std::vector<std::unique_ptr<Launcher>>& launchers();
/// The launcher named name; InputError naming --launcher and the allowed names otherwise.
const Launcher& launcher_named(std::string_view name);
/// "local, slurm, smpi".
std::string launcher_names();
/// Whether the options' launcher simulates its runs (Launcher::simulated()).
bool simulated(const SweepOptions& o);

namespace fs = std::filesystem;

// ---- src/common.cpp: the study, its output and its commands ------------------------------------------------------

/// The file's text; InputError naming path and what it is when it cannot be read.
std::string read_file(const std::string& path, const std::string& what);
std::string this_executable();
Study load(const SweepOptions& o, const std::string& text);
/// The same for a study built as a value (mcmclb/study_value.hpp), by the same checks; o.study names it in errors.
Study load(const SweepOptions& o, const StudyValue& value);
/// load(), and when the study's shuffled order has a seed drawn for it, that seed added to o's overrides: every
/// launch started from o (mcmclb run --set order_seed=N, a batch script, --until-ci's rounds) then runs the order
/// this study planned and records its seed in provenance.csv. The launch commands a sweep prints show it.
Study load_keeping_seed(SweepOptions& o, const std::string& text);
Study load_keeping_seed(SweepOptions& o, const StudyValue& value);
/// A loaded study (load_keeping_seed) handed to o's launcher, as `mcmclb sweep` does: a placement other than block
/// refused where the ranks are real, provenance.csv's launcher name set. text: the study file as written.
int sweep_study(const SweepOptions& o, const Study& study, const std::string& text);
/// `mcmclb sweep`: the study file o.study read, loaded and swept (sweep_study).
int sweep_file(SweepOptions o);
/// path, or ./path when it begins with '-' (so no command it reaches takes it for an option).
std::string not_an_option(const std::string& path);
/// --out, else the study's out (through not_an_option).
fs::path output_of(const SweepOptions& o, const Study& s);
/// " --set key=value" for each override, quoted.
std::string overrides_args(const SweepOptions& o);
/// The backend a sweep's runs record (runs.csv's backend and platform columns).
Backend sweep_backend(const SweepOptions& o);
/// A commbench launch's output file (per rank count and backend).
std::string commbench_output(int nprocs, const Backend& backend);
/// What one launch runs after the launcher's "-n P": mcmclb run over the points, or commbench.
std::string program_command(const SweepOptions& o, const Study& study, const fs::path& out,
                            const std::vector<std::size_t>& points, bool resume);
/// "mpiexec -n P " or "srun -n P ".
std::string launch_prefix(const std::string& launcher, int nprocs);
/// The launcher of the MPI library this binary was built with (cmake/Mpi.cmake's table, baked in), or
/// $MCMCLB_MPIEXEC when set: a sweep launches its ranks with the library they were linked against.
std::string mpiexec_path();
/// mpiexec_path() with that library's flags for nprocs ranks here (as root, and when ranks outnumber the CPUs),
/// then "-n nprocs ".
std::string mpiexec_prefix(int nprocs);
/// Starts `sleep 0.1` on nprocs ranks with mpiexec_prefix: InputError in one line (the launcher's first sentence) when
/// the launcher is missing or refuses, so a refusal is explained once instead of once per point.
void check_mpiexec_starts(int nprocs);
bool has_program(const Study& study, Program program);
/// Whether program is an executable in a folder of PATH.
bool on_path(const std::string& program);
/// The benchmarks of a commbench point its file does not hold complete yet (all of them when there is no file;
/// a simulated file, written once at the end, holds them all).
std::vector<CommbenchBenchmark> commbench_left(const Point& p, const Backend& backend, const fs::path& out);
/// Valid and complete in recorded (kernel points), or its commbench file holds every benchmark.
bool done_already(const Point& p, const Backend& backend, const fs::path& out,
                  const std::map<std::string, results::RecordedPoint>& recorded);
/// The sweep's results store, opened before the first launch (one line and exit 2 for a refused folder).
results::ResultStore open_output(const SweepOptions& o, const Study& study);
/// The points recorded in the output folder: through store, or read only when there is none (dry runs, status).
std::map<std::string, results::RecordedPoint> recorded_in_output(const SweepOptions& o, const Study& study,
                                                                 const std::optional<results::ResultStore>& store);
/// "point 3 (nprocs=4, ...)", for progress and failure lines.
std::string describe(const Point& p);
/// Runs command, passing each output line to on_line; returns the exit status.
int run_streaming(const std::string& command, const std::function<void(const std::string&)>& on_line);
/// Runs command and returns its exit status and output lines (stdout and stderr together).
std::pair<int, std::vector<std::string>> run_capturing(const std::string& command);
/// "42 s", or "3 min 05 s" from two minutes on.
std::string format_seconds(double s);
/// The memory this host has available now (bytes; /proc/meminfo's MemAvailable), or nothing where it cannot say.
std::optional<double> available_memory_bytes();
/// What the simulations of the study still to run in o.out (read, nothing written) take at o.jobs at once
/// (mcmclb/simulation_cost.hpp); skipped, where given, counts the points already there.
SimulationEstimate estimate_to_run(const SweepOptions& o, const Study& study, std::size_t* skipped = nullptr);
/// Simulations that would not fit in this host's memory together are refused before any starts (InputError naming
/// --jobs, with the numbers and `allowed`): out of memory, the kernel would kill one of them, or the host would swap
/// for hours.
void check_memory(const SimulationEstimate& to_run, const std::string& allowed);
/// Slurm's HH:MM:SS (or D-HH:MM:SS) for a whole number of minutes.
std::string slurm_time(long minutes);

/// How far a point got before it was killed, as the last progress line of its simulation said (the kernel's
/// "progress: simulated X s of ..., N items done, host H s elapsed", every MCMCLB_PROGRESS_S host seconds):
/// failures.csv's progress columns, empty where no line was seen.
struct Reached {
  std::string simulated_s, items, host_s;
};

/// A point that did not get a valid result, and why.
struct Failure {
  std::size_t index;
  std::string reason;
  Reached reached = {};
};

/// The points of the study still to run, per rank count (all of them with --force); counts the skipped ones.
std::map<int, std::vector<std::size_t>> points_to_run(const SweepOptions& o, const Study& study, const fs::path& out,
                                                      const std::map<std::string, results::RecordedPoint>& valid,
                                                      std::size_t& skipped);
/// Prints the failures and appends them to failures.csv.
void record_failures(const Study& study, const Backend& backend, results::ResultStore& store,
                     const std::vector<Failure>& failures);

// ---- src/local.cpp --------------------------------------------------------------------------------------------

/// --launcher local or smpi: runs the points still to run, one launch per rank count; exit 0, or 3 if any failed.
int sweep_local(const SweepOptions& o, const Study& study);

// ---- src/smpi.cpp ---------------------------------------------------------------------------------------------

/// The simulation build's mcmclb-commbench-sim (--sim-commbench, default: beside --sim-binary).
fs::path sim_commbench(const SweepOptions& o);
/// The simulation build's program that runs a point of this kind (--sim-binary or sim_commbench()).
fs::path sim_program(const SweepOptions& o, Program program);
/// The libraries a simulation of program preloads for the host's speed (apps/CMakeLists.txt: the CPU-clock library
/// of apps/smpi_clock.c, the allocator): those listed in smpi-preload.txt beside program; none when the build has no
/// list. InputError for a listed library that does not exist.
std::vector<fs::path> smpi_preloads(const fs::path& program);
/// "[LD_PRELOAD=...] ... smpirun -np P -platform ... FLAGS ": the prefix of a simulated launch of program, with
/// the platform's hostfile or, for a placement other than block, the dealt one (MCMCLB_PLACEMENT names it to the run).
std::string smpirun_prefix(const SweepOptions& o, int nprocs, const fs::path& program, const fs::path& dealt = {},
                           Placement placement = Placement::block);
/// Key placement: groups. The hostfile's lines dealt round-robin over the groups of the platform's one dragonfly
/// cluster (read from its topology="DRAGONFLY", topo_parameters, prefix, radical and suffix), so that consecutive
/// nodes sit in different groups. InputError naming key placement for a platform without exactly one dragonfly,
/// or a hostfile host outside it.
std::string hostfile_over_groups(const std::string& platform_xml, const std::string& hostfile,
                                 const std::string& platform);
/// Key placement: scatter. One line per rank: the first rank of every node, then the second of every node, and so
/// on, the nodes in hostfile_over_groups()'s order on a platform with a dragonfly, else in the hostfile's. So
/// consecutive ranks sit on different nodes, and on a dragonfly in different groups. InputError as
/// hostfile_over_groups() for a platform with several dragonflies or a host outside its one.
std::string hostfile_scattered(const std::string& platform_xml, const std::string& hostfile,
                               const std::string& platform);
/// Whether the study's key placement deals the hostfile (any placement but block).
bool deals_hostfile(const Study& study);
/// The dealt hostfile of --platform and its hostfile for placement (groups or scatter).
std::string dealt_hostfile(const SweepOptions& o, Placement placement);
/// The hostfile a simulated sweep's launches read: the platform's, or under another placement than block the dealt
/// one that the sweep writes into its output folder (PLATFORM.PLACEMENT.hosts).
fs::path placement_hostfile(const SweepOptions& o, const Study& study, const fs::path& out);
/// --platform and its hostfile (PLATFORM.hosts) both exist; InputError naming --platform otherwise.
void check_platform(const SweepOptions& o);
/// The platform, the flags and the simulation build's programs, checked before any launch.
void check_smpi(const SweepOptions& o, const Study& study);
/// Says once, before the launches, that simulated repetitions repeat the same simulation.
void note_simulated_reps(const SweepOptions& o, const Study& study);
/// The simulated determinism check: a point whose repetitions differ in time_s is a failure.
void check_simulated_reps(const SweepOptions& o, const Study& study, const fs::path& out,
                          std::vector<Failure>& failures);

// ---- src/slurm.cpp --------------------------------------------------------------------------------------------

/// --launcher slurm: writes one batch script per rank count still to run and submits them.
int sweep_slurm(const SweepOptions& o, const Study& study, const std::string& study_text);
/// The tag a launch's batch job carries in --comment: canonical output folder, rank count and a hash of the
/// launch's points (squeue tells this study's jobs in this output by it).
std::string job_comment(const Study& study, const fs::path& out, int nprocs);

struct QueuedJob {
  std::string id, state;
};
/// This study's jobs that squeue lists, by launch tag (job_comment); std::runtime_error when squeue fails, or
/// when bounded (status, which only reports) and squeue does not answer within slurm_wait_s().
std::map<std::string, QueuedJob> queued_jobs(const Study& study, bool bounded);
/// How long a Slurm query made only to inform (a dry run's sinfo, status's squeue) waits for an answer:
/// MCMCLB_SLURM_WAIT_S seconds, 3 by default. Without a reachable controller Slurm's commands retry for about 9 s
/// before they fail; a submitting sweep waits for them in full, since it must know the queue and the partition.
int slurm_wait_s();
/// run_capturing(command), under coreutils' timeout of slurm_wait_s() when bounded (and timeout is on PATH); on
/// no answer in time the one line "PROGRAM did not answer within N s (...)" replaces the output.
std::pair<int, std::vector<std::string>> ask_slurm(const std::string& command, bool bounded);
/// The Slurm job name of a launch: <experiment>-n<P>.
std::string job_name(const Study& study, int nprocs);
/// The newest job that started for a launch (the highest id among the output folder's slurm-<name>-<id>.out
/// files); "" when none did.
std::string last_job(const fs::path& out, const std::string& name);

/// How a job ended as Slurm tells it: state ("TIMEOUT", "FAILED", ...; "" when Slurm no longer knows), exit code
/// and where from (sacct where accounting is on, else scontrol for MinJobAge after the end).
struct JobEnd {
  std::string state, exit_code, source;
};
JobEnd job_end(const std::string& id);
/// One phrase for `mcmclb status`: "job 12 hit its time limit (TIMEOUT, exit code 0:15; scontrol)", with what
/// the job recorded itself in failures.csv (recorded, the reason after "slurm job N: ") where it did.
std::string describe_job_end(const std::string& id, const JobEnd& end, const std::string& recorded);

}  // namespace launch

}  // namespace mcmclb
