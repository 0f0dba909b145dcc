// SPDX-License-Identifier: BSD-3-Clause
// `mcmclb advise`'s options and its study (advise/src/plan.cpp): the advice study planned from the workload and
// checked, before anything runs or is written. apps/advise.cpp parses the flags into Options; mcmclb/advise.hpp
// runs the plan.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mcmclb/advice.hpp"
#include "mcmclb/advice_plan.hpp"
#include "mcmclb/csv.hpp"
#include "mcmclb/launch.hpp"
#include "mcmclb/study.hpp"
#include "mcmclb/trace.hpp"

namespace mcmclb::advising {

/// What `mcmclb advise` is asked, its flags parsed and checked (apps/advise.cpp).
struct Options {
  std::string input;  // a trace file or a study file
  std::vector<long> ranks;
  long group_size = 0;  // 0: 1 for a trace, the study's own G for a study file
  long chains_per_group = 0;
  std::vector<std::string> balancers;  // empty: every registered one
  long draws = 3;
  double tolerance_pct = 5;
  std::string platform, sim_binary, smpi_flags, out;
  long jobs = 0;  // 0: the host's cores; with --launcher slurm, the tasks of each job (its simulations at once)
  std::string launcher = "local";  // local: simulations on this host; slurm: job steps of batch jobs
  std::string partition, account;  // slurm: sbatch's --partition and --account, when given
  bool dry_run = false;
  bool copies = false;      // advise P / G * W copies of the recorded walkers instead of the walkers themselves
  bool race = true;         // race the set-ups: drop after the first scenario those that cannot be robust
  bool incomplete = false;  // advise on a trace whose recording did not end (its finished chains, its cut ones)
  long check_reps = 0;  // --check: real repetitions per set-up of the replay checked against its simulation (0: none)
  double check_busy_share = 0.10;  // --check-busy: the busiest host (a share of its CPU time) a check runs on
  std::string prediction;          // --prediction: the simulation's error measured on --platform (prediction.csv)
  std::optional<advice::ToleranceSource> prediction_error;  // read from it while parsing, before any work
  // --plan-from: a trace of the input's walkers and items that the planning balancers and pays consult in place of
  // it (workload.plan_file), as when advice is priced on a known truth that its user's recording planned.
  std::string plan_from;
  std::string prediction_not_used;  // the one line saying why it is no source (not of the trace advised on)
  std::string command_line;
};

/// Whether a workload is a study file (.yaml, .yml), not a trace.
bool is_study_file(const std::string& path);

/// A study's experiment name from a file's stem: what the name may not hold becomes '-' (a trace named
/// "with space.csv" is advised as advise-with-space).
std::string experiment_of(const std::string& input);

/// The folder an advice goes to unless --out says: named after the workload, the rank counts and any group size or
/// chains per group given, so that advice on other rank counts or groups never resumes into it.
std::string default_out(const Options& o);

/// The simulation build's mcmclb-sim when --sim-binary is not given: in build-sim/ of the source tree, or beside
/// this program's own build folder. None: one line saying the command that makes it.
std::string simulation_build();

/// v with three significant digits, e.g. 0.0161 or 55.2.
std::string fixed_significant(double v);

/// Whether a plan's zip is the chain map's of copies (tile and drawn maps, a scenario each), not the walkers'
/// groups by rank count.
bool is_map_zip(const StudyEntry& zip);

/// The program's own runs that a trace records (its run line and the earlier runs of the same walkers): their
/// spread at the layout most of them ran in, as a tolerance source, and where fewer than two share one, the lines
/// that say how to measure it.
struct ProgramRuns {
  std::optional<advice::ToleranceSource> spread;
  std::vector<std::string> advice;  // printed where the spread is not measured
};

/// The program's runs of the trace o.input; nothing for a study file (no program of the user's).
ProgramRuns program_runs(const Options& o, const Trace& trace);

/// What the advice study is: its keys and words (advice::StudyPlan, planned with no I/O), and the study itself (the
/// workload's study with those keys), as a value: checked by the study's own checks, and written into the output
/// folder for the user to see and rerun, never read back.
struct Plan : advice::StudyPlan {
  std::string study_path;             // OUT/advise-study.yaml
  StudyValue study;                   // the advice study: base with the keys
  std::vector<std::string> warnings;  // what looks wrong in the workload, accepted
  StudyValue base;                    // the workload's study before the keys
  std::string workload;               // "trace file X (fnv1a64 ...)" or the model
  ProgramRuns program;                // a trace's: the program's own runs, known before anything runs
};

/// The advice study: the workload's with the plan's keys, or (first_only) its first scenario alone (the plan's first
/// speed-up rule and the tile map), the race's first round; extra_exclude: set-ups dropped by it. Its comment says
/// which command wrote it.
StudyValue study_of(const Plan& p, const Options& o, bool first_only, const StudyExclude& extra_exclude);

/// The advice study for these options: the workload read and checked (every error before anything is written).
Plan make_plan(const Options& o);

/// v with digits decimals, e.g. 0.752.
std::string fixed(double v, int digits = 3);

/// What the check measured: the simulation against the real replay and, where the trace's run line is in the
/// check's layout, the real replay against the program, as sources of the tolerance; empty when no check could be
/// made or the host was busy (Options::check_busy_share) before or after its real runs.
struct CheckResult {
  std::vector<advice::ToleranceSource> sources;
  [[nodiscard]] bool measured_program() const {
    for (const auto& s : sources) {
      if (s.kind == "replay") return true;
    }
    return false;
  }
};

/// The tolerance: the largest of what --check measured, the program's own spread, the simulation's error that
/// --prediction measured on the platform, and the tolerance assumed (unless
/// the check measured both of an advice's errors, the simulation against the replay and the replay against the
/// program, so that nothing is left to assume).
advice::Tolerance tolerance_of(const Options& o, const std::optional<CheckResult>& checked,
                               const std::optional<advice::ToleranceSource>& spread);

/// check.csv's header (docs/reference/columns.md): with --check, one row per checked set-up, real against simulated.
const csv::Row& check_header();

/// The check of a trace's advice where this machine allows it (advise/src/check.cpp): the trace replayed for real
/// at P = the host's cores (a core per rank), under the balancers given with all their rules, o.check_reps times
/// each in interleaved rounds, and the same replay simulated at that P. Writes OUT/check-study.yaml,
/// OUT/check-real/, OUT/check-sim/ and OUT/check.csv.
CheckResult check_replay(const Options& o, const Plan& plan, const SweepOptions& sim, const Study& main_study,
                         const std::vector<std::string>& balancers);

/// What a real run of the check costs beside its replay (the kernel's set-up, its results' commit), and the one
/// launch of them all (mpiexec, MPI_Init): 12 runs of 1 ms items took 0.80 s in all, measured on the 2-core VM under
/// a load of 7.5; rounded up.
inline constexpr double kRealRunStartS = 0.1, kRealLaunchS = 1;

/// The check's wall time from its runs' replays (replays_s in all, runs of them): each run's start-up, the one
/// launch, and the two 2 s measurements of the host's load around the runs.
[[nodiscard]] inline double check_wall_s(double replays_s, std::size_t runs) {
  return replays_s + static_cast<double>(runs) * kRealRunStartS + kRealLaunchS + 4;
}

/// One real run of the check, its start-up excluded: what the trace's run line took where it ran in the check's
/// layout (cores ranks, the walkers in min(walkers, cores) groups), else the trace's work shared by the cores, or
/// its longest chain if longer. 0 where the host has fewer than 2 cores.
double check_run_s(const Options& o, int cores);

}  // namespace mcmclb::advising
