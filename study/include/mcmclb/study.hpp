// SPDX-License-Identifier: BSD-3-Clause
// A study: the points (fully resolved runs) a study file expands to, with stable indices, grouped by rank count
// into launches. The same expansion serves `mcmclb plan`, `mcmclb sweep` and `mcmclb run --points`.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "mcmclb/config.hpp"
#include "mcmclb/csv.hpp"
#include "mcmclb/runs_csv.hpp"

namespace mcmclb {

struct Point {
  std::size_t index = 0;  // position in the study's expansion: stable for the same file and overrides
  RunSpec spec;           // program kernel; for commbench only experiment and nprocs are meaningful
  JobSpec job;
  Program program = Program::kernel;
  CommbenchSpec commbench;
};

struct Study {
  std::string name;
  std::filesystem::path out;  // the study's `out`, or results/<name>
  std::vector<Point> points;
  RunOrder order = RunOrder::shuffled;  // key order; a simulation sets blocked
  int64_t order_seed = 0;               // key order_seed: shuffled's
  /// The study gave no order_seed and build_study drew one (draw_order_seed()): whoever starts the launches passes
  /// it on (--set order_seed=N), so that they run, and provenance.csv records, that one seed.
  bool order_seed_drawn = false;
  /// Point indices per rank count, one launch each, in the order the launch runs them (order, run_order()).
  [[nodiscard]] std::map<int, std::vector<std::size_t>> launches() const;
  /// indices (points of one launch) in the order a launch runs them: blocked, their index order; interleaved, by
  /// repetition and then index, so each round runs every set-up's next repetition; shuffled, the rounds of
  /// interleaved, each in a random order drawn from order_seed, the launch's rank count and the round (so each round
  /// its own order). The order of a subset (a resumed sweep's points left) is that of the whole launch, with the
  /// points done left out.
  [[nodiscard]] std::vector<std::size_t> run_order(std::vector<std::size_t> indices) const;
};

/// Expands study text. Experiments without nprocs get default_nprocs (the launched size for `run`); without it,
/// nprocs is required. A shuffled study without order_seed gets a fresh one (draw_order_seed(), order_seed_drawn).
/// Throws mpi::InputError naming the key.
Study build_study(const std::string& text, const std::vector<std::string>& overrides, const std::string& source,
                  std::optional<int> default_nprocs, const Catalog& catalog);
/// The same, for a study built as a value (mcmclb/study_value.hpp): the same checks, no text between.
Study build_study(const StudyValue& value, const std::vector<std::string>& overrides, const std::string& source,
                  std::optional<int> default_nprocs, const Catalog& catalog);
/// A study from its expanded axes (expand_study), as the two above build it.
Study build_study(const StudyAxes& axes, const std::string& source, std::optional<int> default_nprocs,
                  const Catalog& catalog);

/// A seed for key order_seed from the system's entropy (std::random_device), in [0, INT_MAX]: each sweep of a
/// study runs its rounds in new orders unless a seed is given.
int64_t draw_order_seed();

/// Job settings are per launch (one batch script per rank count): throws mpi::InputError naming the first job.*
/// key whose value differs between two points of one launch, e.g. a time limit zipped with T_ms.
void check_launch_jobs(const Study& study);

/// The longest job.time_limit accepted: 365 days, in minutes.
inline constexpr double kMaxTimeLimitMin = 365.0 * 24 * 60;

/// What one point is expected to take, in seconds, without load balancing: the kernel's baseline (the longest
/// chain's items x T_ms / G); for commbench, its repetitions x rep time over every benchmark it runs
/// (commbench_benchmarks(), with the methods catalog says this build supports).
double expected_point_s(const Point& point, const Catalog& catalog);
/// expected_point_s() reads at most this many chains of a point (the first ones): it must answer at once for any
/// nprocs, and allocates nothing per rank.
inline constexpr int64_t kEstimatedChains = int64_t{1} << 20;
/// The items a kernel point's chains hold, each counted once per rank of the initial group that works it: what a
/// simulation replays rank by rank (a group of 8 working a chain of 100 items is 800). Read over the first
/// kEstimatedChains groups, as expected_point_s(), and scaled to all of them.
double expected_rank_items(const RunSpec& spec);
/// The items of a kernel point's longest initial unit (a group's chains, one after another), over the same groups
/// as expected_rank_items(). Where finished groups join those still working, the whole machine ends up stepping
/// that unit's last items: its items times the ranks bound a merging run's rank-items from below.
double longest_unit_items(const RunSpec& spec);

/// The CSV a commbench point writes into the study's output folder: commbench-n<P>.csv.
std::string commbench_file(int nprocs);

// ---- What mcmclb-commbench runs, and what its CSV holds: one definition for the benchmark itself, the sweep's
// resume and the time-limit estimate.

/// Not a creation method but commbench's timing floor, measured beside them (apps/commbench.cpp).
inline constexpr std::string_view kCommbenchFloor = "floor";
/// The operations timed per method and size, in order.
inline constexpr std::array<std::string_view, 2> kCommbenchOps = {"create", "free"};

/// One benchmark: a method's operation on an output group of group_size ranks (with a --groups layout, the
/// layout's largest group, and groups its text).
struct CommbenchBenchmark {
  std::string method;
  std::string_view op;
  int group_size = 0;
  std::string groups;
  /// What identifies its rows in the CSV: "method/op/size[/groups]".
  [[nodiscard]] std::string key() const;
};

/// The output group sizes commbench measures by default at nprocs ranks: 1, 2, 4, ..., P, and P - 1 when P is a
/// power of two of at least 4 (one non-power-of-two size; otherwise P is one).
std::vector<int> commbench_sizes(int nprocs);
/// The methods commbench measures: those named (commbench.methods, --methods), else every method the build
/// supports (catalog order) and then the timing floor.
std::vector<std::string> commbench_methods(const std::vector<std::string>& named,
                                           const std::vector<std::string>& supported);
/// Every benchmark of these methods and sizes, in the order commbench runs them: per method, per op, per size.
std::vector<CommbenchBenchmark> commbench_benchmarks(const std::vector<std::string>& methods,
                                                     const std::vector<int>& sizes, const std::string& groups = "");

/// The commbench CSV's header, current version: later columns were appended, so an older file's header is a
/// prefix of it (kCommbenchHeaderVersions lists the versions' lengths).
const csv::Row& commbench_header();
/// The column counts of the commbench CSV's versions, oldest first: 14 (no backend), 19 (no iter_median_us),
/// 20 (no slurm_job_id, slurm_nodelist), 22 (no reps, median_us, median_ci_low_us, median_ci_high_us), 26 (no
/// simgrid_version), 27 (current).
inline constexpr std::array<std::size_t, 6> kCommbenchHeaderVersions = {14, 19, 20, 22, 26, 27};
/// The rows of a commbench CSV as the current header orders them (an older version's rows get its later columns
/// empty; a torn or malformed row is left out); nothing when the file does not exist. InputError naming the file
/// when its header is not one of the versions'.
std::optional<std::vector<csv::Row>> read_commbench_csv(const std::filesystem::path& path);
/// The keys (CommbenchBenchmark::key()) of the benchmarks rows hold complete at nprocs ranks: every repetition
/// 0 .. reps - 1, once.
std::set<std::string> commbench_complete(const std::vector<csv::Row>& rows, int nprocs, int reps);

/// "3,4,7" -> {3, 4, 7}; throws mpi::InputError naming --points.
std::vector<std::size_t> parse_point_list(const std::string& text);
std::string point_list(const std::vector<std::size_t>& indices);

}  // namespace mcmclb
