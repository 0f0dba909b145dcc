// SPDX-License-Identifier: BSD-3-Clause
// Typed experiment configuration: parsed once from YAML (plus --set overrides), validated, expanded into runs.
// The resolved run (RunSpec) is the kernel's type (mcmclb/run_spec.hpp); this file adds what only a study has.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mcmclb/name_table.hpp"
#include "mcmclb/run_spec.hpp"
#include "mcmclb/study_value.hpp"

namespace mcmclb {

/// Limits on what a study file may ask for, so that a hostile or mistyped file is refused with one line instead of
/// exhausting the stack, the memory or the time (docs/reference/keys.md, Limits).
inline constexpr int kMaxYamlDepth = 32;                // nesting of maps and lists (a recursive alias never ends)
inline constexpr std::size_t kMaxYamlNodes = 100000;    // nodes visited with every alias expanded ("billion laughs")
inline constexpr std::size_t kMaxStudyPoints = 100000;  // combinations of a study, and runs (points) it expands to
inline constexpr std::size_t kMaxNameBytes = 64;        // an experiment name: [A-Za-z0-9._-], not starting with '.'
// A study file: yaml-cpp parses about 6 MB a second, so a file at the limit is refused within 0.2 s; the largest
// shipped study is 3 KB, and a list of 8192 group sizes 16 KB.
inline constexpr std::size_t kMaxStudyBytes = 1 << 20;

/// How a study's points are launched on a cluster (the `job:` section).
/// Defaults: the key table (config_keys()).
struct JobSpec {
  std::string scheduler;
  std::string partition;                     // empty: the cluster's default
  std::string account;                       // empty: none
  std::string time_limit;                    // Slurm's formats (MM, MM:SS, HH:MM:SS, D-HH[:MM[:SS]]); empty: estimated
  int tasks_per_node = 0;                    // 0: let Slurm decide
  std::vector<std::string> extra;            // further #SBATCH lines for the header, e.g. "#SBATCH --qos=x"
  std::vector<std::string> setup;            // shell lines run before the launch (modules, environment)
  std::string launcher;                      // srun | mpiexec
  std::optional<std::string> srun_mpi;       // srun's --mpi plugin, or "site" for none; unset: the build's
  std::optional<std::string> launcher_args;  // options after the launcher's name; unset: launcher_default_args
  bool operator==(const JobSpec&) const = default;
};

/// The options a launcher gets when job.launcher_args is not set: srun its --mpi plugin (srun_mpi_flag); mpiexec,
/// when the script is written as root, the library's flags for running as root.
std::string launcher_default_args(const JobSpec& job);

/// "--mpi=P" for srun: P from job.srun_mpi, else the plugin of the build's MPI family (a stock Slurm's
/// MpiDefault=none starts every task as its own one-rank world; Debian's MPICH speaks PMI-2, its Open MPI PMIx);
/// empty for "site", and for an MPI of no known family, so that the site's MpiDefault decides.
std::string srun_mpi_flag(const JobSpec& job);

/// Whether launcher options name srun's plugin themselves (--mpi or --mpi=...).
bool names_srun_plugin(const std::string& launcher_args);

/// The program job.launcher names: `mpiexec` is the build's own (cmake/Mpi.cmake's launcher, by its full path, e.g.
/// /usr/bin/mpiexec.openmpi), so a batch job starts its ranks with the library they were linked against, never with
/// whichever mpiexec comes first on the node's PATH; `srun` is Slurm's. The simulation build has no mpiexec of its
/// own and keeps the name.
std::string launcher_program(const std::string& launcher);

/// "srun --mpi=pmi2" / "/usr/bin/mpiexec.mpich": the launcher with its options, before "-n P".
std::string launcher_with_args(const JobSpec& job);

/// Settings of a Fig. 1 study (program: commbench): passed to mcmclb-commbench.
struct CommbenchSpec {
  int reps = 0;
  double rep_time_s = 0.0;
  std::vector<std::string> methods;  // empty: every supported method
};

/// What a point runs: the walker-group kernel (mcmclb run) or the Fig. 1 benchmark (mcmclb-commbench).
enum class Program { kernel, commbench };
inline constexpr std::array<std::pair<std::string_view, Program>, 2> kPrograms = {
    {{"kernel", Program::kernel}, {"commbench", Program::commbench}}};

/// The order in which a launch on real MPI runs its points (key order). shuffled, the default: in rounds, round r
/// running repetition r of every set-up (a point but for its rep), each round in a random order drawn from
/// order_seed (google/benchmark's random interleaving); interleaved: the same rounds, each in the study's order;
/// blocked: each set-up's repetitions back to back, in the study's order. A simulation runs blocked: its runs are
/// deterministic, so their order cannot change a number.
enum class RunOrder { interleaved, shuffled, blocked };
inline constexpr std::array<std::pair<std::string_view, RunOrder>, 3> kRunOrders = {
    {{"interleaved", RunOrder::interleaved}, {"shuffled", RunOrder::shuffled}, {"blocked", RunOrder::blocked}}};
[[nodiscard]] constexpr std::string_view to_string(RunOrder o) noexcept { return name_in(kRunOrders, o); }

/// One experiment: fixed parameters plus the lists a run iterates (balancer, interval, method, reps). parse_experiment
/// fills every field: the defaults come from the key table (config_keys()), not from these initialisers.
struct Experiment {
  std::string name;
  std::optional<int> nprocs;  // if given, must equal the launched rank count
  int G = 0;
  GroupsSpec groups;  // groups.*: initial groups described instead of G
  double T_ms = 0.0;
  WorkloadSpec workload;
  WorkSpec work;
  std::vector<std::string> balancers;
  std::vector<int> intervals;          // for the balancers that use one (collective, lookahead, mostwork)
  std::vector<std::string> methods;    // empty: each balancer's default; else those applicable to it
  std::vector<FinishedRule> finished;  // empty: each balancer's default; else those it offers (none: an error)
  int reps = 0;
  std::string out;  // output folder; empty: results/<name>
  RunOrder order = RunOrder::shuffled;
  std::optional<int64_t> order_seed;  // shuffled's seed; none: build_study draws one
  Placement placement = Placement::block;
  JobSpec job;
  Program program = Program::kernel;
  CommbenchSpec commbench;
};

/// One key of an experiment or study file, as the key table in study/src/config.cpp defines it (that table also
/// parses, validates and defaults the key). docs/reference/keys.md shows these rows (`mcmclb keys` prints them).
struct KeyInfo {
  enum class Scope { experiment, study };
  std::string name;           // dotted: work.mode is `work: {mode: ...}` in YAML and work.mode in --set
  std::string type;           // int, number, name, bool, text, folder, list of ...
  std::string default_value;  // as documented; empty: none (the key stays unset)
  std::string allowed;        // the values or range accepted
  std::string meaning;
  Scope scope = Scope::experiment;  // study: keys of launches and studies (out, job.*, program, commbench.*, ...)
  bool list_by_nature = false;      // a list iterated inside a run or several lines, never an axis
};

/// Every key of the table, in its order (the order of axes and of the "allowed:" list). With a catalog, the keys
/// whose names come from the balancer and method registries (balancer, method, finished, commbench.methods) list
/// them.
std::vector<KeyInfo> config_keys(const Catalog* catalog = nullptr);

/// The key table as Markdown (two tables: experiment keys, study keys), as docs/reference/keys.md holds it.
std::string config_keys_markdown(const Catalog& catalog);

/// A study: the experiments its axes expand to (every list-valued parameter is an axis, combined as a Cartesian
/// product; `zip` pairs lists element by element) and its exclusion rules (key -> value; a run matching every
/// pair of one rule is dropped). balancer, interval, method and job.extra are lists by nature, not axes.
struct StudyAxes {
  std::vector<Experiment> experiments;
  std::vector<std::vector<std::pair<std::string, std::string>>> excludes;
};

/// Expands a study file (YAML text with "key=value" overrides). Throws mpi::InputError naming the key.
StudyAxes expand_study(const std::string& yaml_text, const std::vector<std::string>& overrides,
                       const std::string& source_name);

/// Expands a study built as a value (mcmclb/study_value.hpp) by the same checks, with no text between.
StudyAxes expand_study(const StudyValue& study, const std::vector<std::string>& overrides,
                       const std::string& source_name);

/// Parses and validates a single experiment (a study without axes) from YAML text with "key=value" overrides (dotted
/// keys, YAML values). Throws mpi::InputError with one line naming the key (or source) and what is allowed.
Experiment parse_experiment(const std::string& yaml_text, const std::vector<std::string>& overrides,
                            const std::string& source_name);
/// The same, for a study built as a value.
Experiment parse_experiment(const StudyValue& study, const std::vector<std::string>& overrides,
                            const std::string& source_name);

/// The runs an experiment iterates, in order: balancer, interval (the balancers that use one; 0 for the others),
/// finished rule (balancers that offer one: those named that the balancer offers, InputError if it offers none of
/// them; its default if none is named), method (those of the experiment's methods the balancer can use; its default
/// if none is named), rep. Validates balancer and method names against catalog (InputError naming the key): a
/// balancer that can use none of the named methods is an error. More than max_runs runs: InputError.
std::vector<RunSpec> expand_runs(const Experiment& e, int nprocs, const Catalog& catalog,
                                 std::size_t max_runs = kMaxStudyPoints);

/// Checks the experiment against the launched rank count (nprocs match, G divides it, groups.sizes add up to it).
/// Throws mpi::InputError. (groups.by: node is checked where the ranks run: mcmclb run, before the first run.)
void check_against_nprocs(const Experiment& e, int nprocs);

}  // namespace mcmclb
