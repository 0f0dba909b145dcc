// SPDX-License-Identifier: BSD-3-Clause
// `mcmclb compare A B`: whether the results in folder B differ from those in folder A, point by point (a point:
// the runs.csv key without the repetition). Real-MPI points are compared statistically (medians with their
// order-statistics intervals, the ratio of medians, the Mann-Whitney test), simulated points exactly. No MPI.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "mcmclb/csv.hpp"

namespace mcmclb {

/// compare.csv's header (`mcmclb compare --csv FILE`; docs/reference/columns.md).
const csv::Row& compare_header();

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

/// The command: args are those after `compare`. Exit 0 (no point slower or changed), 1 (some point slower, or a
/// simulated point changed), 2 (bad input: one line on stderr naming the flag or file, before any work).
int compare_main(const std::vector<std::string>& args);

}  // namespace mcmclb
