// SPDX-License-Identifier: BSD-3-Clause
// runs.csv: one schema table (column, YAML key, type, getter) from which the header, each row, the values that
// `exclude` rules match and the resume key are all derived, so the layout is written down once. Resume finds
// columns by name, not by position.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "mcmclb/csv.hpp"
#include "mcmclb/provenance.hpp"
#include "mcmclb/run_spec.hpp"

namespace mcmclb {

/// What one row of runs.csv records: the run's parameters and its results.
struct RunRecord {
  std::string run_id;
  RunSpec spec;
  double time_s = 0, ideal_s = 0, baseline_s = 0;
  double regroups_avg = 0, regroups_std = 0;
  double migrated_avg = 0;  // chains taken from another group (balancer steal), per rank
  int64_t regroups_min = 0, regroups_max = 0;
  bool valid = true;
  std::string violations;  // "; "-separated, empty when valid
  Provenance provenance;
  /// Seconds every rank spent in the finished rule pays' calibration pass before the clock started (the slowest
  /// rank's); unset where no calibration ran. Not in time_s, so it is reported beside it.
  std::optional<double> calibration_s;
};

/// One column of runs.csv.
struct RunsColumn {
  // parameters identify a point, and so does where it ran (backend: the back end and platform columns); together
  // they are the resume key. Only parameters are study keys (exclude rules, the point list).
  enum class Role { id, parameter, backend, result };
  enum class Type { text, integer, real, boolean };
  std::string name;      // the header's name
  std::string yaml_key;  // the experiment key it records, as an exclude rule names it; empty if none
  Role role;
  Type type;
  std::function<std::string(const RunRecord&)> get;  // the field as written ("" where it does not apply)
  [[nodiscard]] bool is_parameter() const noexcept { return role == Role::parameter; }
  [[nodiscard]] bool is_key() const noexcept { return role == Role::parameter || role == Role::backend; }
  /// A key column other than rep: the repetitions of one configuration share these (statistics over repetitions,
  /// `mcmclb compare`, `sweep --until-ci`).
  [[nodiscard]] bool is_configuration_key() const noexcept { return is_key() && name != "rep"; }
};

/// The schema, in header order (built once from the workload registry; never changed afterwards).
std::span<const RunsColumn> runs_columns();

/// The header of runs.csv (stable: plots and resume read it).
const csv::Row& runs_header();

/// The finished rule a run of this balancer had before the rule was a column (the upgrade of older runs.csv rows).
std::string older_finished_rule(std::string_view balancer);
/// What a column that an older runs.csv lacks holds for one of its rows (of this balancer; replays: the row
/// replayed a trace): backend "mpi", the balancer's former finished rule, a replay's speed-ups at the median of
/// their repetitions, else empty, as today's runs write a column that does not apply.
std::string older_value(std::string_view column, std::string_view balancer, bool replays = false);
/// Whether a runs.csv row under header replayed a trace: its workload_file is set (never where the header has none).
[[nodiscard]] bool replays_a_trace(const csv::Row& header, const csv::Row& row);
/// The row of runs.csv for record.
csv::Row runs_row(const RunRecord& record);

/// The value an exclude rule naming key sees for run: its runs.csv field. "reps" (a count of runs, not a value of
/// one) yields "" and matches no rule. Throws InputError for a key runs.csv does not record.
std::string excluded_value(const RunSpec& run, const std::string& key);

/// Where a run runs, as runs.csv's backend and platform columns record it: "mpi" (platform empty), or "smpi" and
/// the platform file smpirun simulates (MCMCLB_PLATFORM). Part of a point's identity: a point done on the real
/// MPI is not done in simulation, nor one simulated on another platform.
struct Backend {
  std::string name = "mpi";
  std::string platform;
};

/// A run's identity for resuming: its parameter fields and its backend, joined.
std::string point_key(const RunSpec& spec, const Backend& backend);
/// A configuration's identity: point_key() without rep, so every repetition of the point has the same one. Built
/// with key_of_fields() from the is_configuration_key() columns, as a reader of runs.csv builds it from a row.
std::string configuration_key(const RunSpec& spec, const Backend& backend);
/// The point key of a runs.csv row whose key columns (in runs_columns() order) hold fields.
std::string key_of_fields(const std::vector<std::string>& fields);

struct Recorded {
  int rows = 0;             // rows of this point in runs.csv
  bool any_valid = false;   // at least one of them valid
  bool last_valid = false;  // the latest one valid
};
/// What DIR/runs.csv records per point key (empty if there is no such file), reading the key columns by name (a
/// file older than the backend columns reads as backend mpi). Throws InputError if the file exists but is not an
/// mcmclb runs.csv.
std::map<std::string, Recorded> recorded_points(const std::filesystem::path& dir);
/// Keys of the points recorded valid at least once (what a resumed sweep skips).
std::set<std::string> valid_point_keys(const std::filesystem::path& dir);

}  // namespace mcmclb
