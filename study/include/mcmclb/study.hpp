// A study: the points (fully resolved runs) a study file expands to, with stable indices, grouped by rank count
// into launches. The same expansion serves `mcmclb plan`, `mcmclb sweep` and `mcmclb run --points`.
#pragma once

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

/// The CSV a commbench point writes into the study's output folder: commbench-n<P>.csv.
std::string commbench_file(int nprocs);

/// "3,4,7" -> {3, 4, 7}; throws mpi::InputError naming --points.
std::vector<std::size_t> parse_point_list(const std::string& text);
std::string point_list(const std::vector<std::size_t>& indices);

}  // namespace mcmclb
