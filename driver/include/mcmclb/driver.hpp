// SPDX-License-Identifier: BSD-3-Clause
// Runs one kernel run end to end (set-up, synchronised start, balancer, invariant checks, reductions) and turns
// its results into rows of runs.csv, ranks.csv and events.csv.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "mcmclb/config.hpp"
#include "mcmclb/csv.hpp"
#include "mcmclb/kernel.hpp"
#include "mcmclb/mpi.hpp"
#include "mcmclb/provenance.hpp"
#include "mcmclb/result_store.hpp"
#include "mcmclb/run_files.hpp"
#include "mcmclb/runs_csv.hpp"

namespace mcmclb {

/// A run's row of runs.csv plus what ranks.csv and events.csv get.
struct RunResult : RunRecord {
  std::vector<RankStats> ranks;      // rank 0 only: every rank's stats, by rank
  std::string event_lines;           // rank 0 only: every regrouping, as events.csv lines
  std::vector<ChainOutcome> chains;  // rank 0 only, compute mode: every chain against its reference
  std::vector<TracePoint> trace;     // rank 0 only, compute mode with work.trace: by chain, then item
  Calibration calibration;           // a calibrated run: the table its decisions used (identical on every rank)
  std::vector<csv::Row> costs;       // rank 0 only, compute mode with work.record: costs.csv's rows
  // What the launch measured of its nodes, once for all its runs, from which the default wait was chosen: a check
  // of that choice compares with this, not with a measurement of its own, which a changing load would make differ.
  mpi::NodeOccupancy occupancy;
};

/// Collective over MPI_COMM_WORLD. The full result lives on rank 0; other ranks get time_s and valid.
RunResult run_once(const RunSpec& spec);

/// The ideal time of a point (runs.csv's ideal_s) without running it, where the study alone decides it: emulated
/// work whose initial groups the study sets (not by node). The same function a run computes it with, so the same
/// bits. advise bounds a scenario none alone was simulated under by it. Nothing in compute mode (the ideal is
/// measured) or for groups by node.
[[nodiscard]] std::optional<double> emulated_ideal_s(const RunSpec& spec);

/// Records the run in the results store: ranks.csv, events.csv, provenance.csv and runs.csv in one commit, all
/// or nothing. Rank 0 only.
bool record_result(results::ResultStore& store, const RunResult& r,
                   results::ResultStore::IfDone if_done = results::ResultStore::IfDone::append);

}  // namespace mcmclb
