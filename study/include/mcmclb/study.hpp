// A study: the points (fully resolved runs) a study file expands to, with stable indices, grouped by rank count
// into launches. The same expansion serves `mcmclb plan`, `mcmclb sweep` and `mcmclb run --points`.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
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
  /// Point indices per rank count, in order: one launch each.
  [[nodiscard]] std::map<int, std::vector<std::size_t>> launches() const;
};

/// Expands study text. Experiments without nprocs get default_nprocs (the launched size for `run`); without it,
/// nprocs is required. Throws mpi::InputError naming the key.
Study build_study(const std::string& text, const std::vector<std::string>& overrides, const std::string& source,
                  std::optional<int> default_nprocs, const Catalog& catalog);

/// Job settings are per launch (one batch script per rank count): throws mpi::InputError naming the first job.*
/// key whose value differs between two points of one launch, e.g. a time limit zipped with T_ms.
void check_launch_jobs(const Study& study);

/// The longest job.time_limit accepted: 365 days, in minutes.
inline constexpr double kMaxTimeLimitMin = 365.0 * 24 * 60;

/// What one point is expected to take, in seconds, without load balancing: the kernel's baseline (the longest
/// chain's items x T_ms / G); for commbench, its repetitions x rep time over every method and output size.
double expected_point_s(const Point& point);
/// expected_point_s() reads at most this many chains of a point (the first ones): it must answer at once for any
/// nprocs, and allocates nothing per rank.
inline constexpr int64_t kEstimatedChains = int64_t{1} << 20;

/// The CSV a commbench point writes into the study's output folder: commbench-n<P>.csv.
std::string commbench_file(int nprocs);

/// "3,4,7" -> {3, 4, 7}; throws mpi::InputError naming --points.
std::vector<std::size_t> parse_point_list(const std::string& text);
std::string point_list(const std::vector<std::size_t>& indices);

}  // namespace mcmclb
