// SPDX-License-Identifier: BSD-3-Clause
// A results folder read by configuration: each configuration's valid runs (a configuration is a point of runs.csv
// without its repetition), for what compares and repeats them (mcmclb compare, sweep --until-ci, mcmclb advise).
// Reads only; no MPI.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace mcmclb {

/// The valid runs of one configuration (a point without its rep) in a results folder: its repetitions.
struct ConfigurationSamples {
  std::vector<double> time_s, ideal_s, regroups_avg;
  std::vector<double> calibration_s;    // 0 for a run without a calibration pass
  std::vector<double> setup_s;          // the initial groups' creation, before the clock (events.csv; else 0)
  std::set<std::string> exact;          // time_s and the four regroups_* fields as written, one entry per distinct run
  std::vector<std::string> key_fields;  // the is_configuration_key() columns of runs.csv, in its order
  bool simulated = false;               // backend smpi
  std::set<std::string> git_commits;    // of its runs
  std::string mpi_library;              // its runs' (SimGrid's version in a simulation)
};
/// The valid runs of results folder dir by configuration_key(), read without writing (a runs.csv of an older
/// mcmclb through its upgrade in memory). Throws InputError naming the folder or file when dir is not a results
/// folder: missing, not a folder, no readable runs.csv, a foreign header, a cut-off row, a time that is not one.
std::map<std::string, ConfigurationSamples> read_configurations(const std::string& dir);

/// runs.csv's columns that these readers use, found by name in the current header.
struct RunsColumns {
  std::vector<std::size_t> key;  // is_configuration_key() columns
  std::vector<std::string> key_names;
  std::size_t time = 0, ideal = 0, calibration = 0, valid = 0, backend = 0, balancer = 0, finished = 0, commit = 0,
              library = 0, run_id = 0;
  std::vector<std::size_t> regroups;  // regroups_avg, _std, _min, _max
};
[[nodiscard]] RunsColumns runs_columns_index();

/// text as a finite number, the whole of it; nullopt otherwise (empty, trailing characters, inf, nan).
[[nodiscard]] std::optional<double> parse_finite(const std::string& text);

}  // namespace mcmclb
