// SPDX-License-Identifier: BSD-3-Clause
// A run's result files: ranks.csv (one row per rank), events.csv (one row per group formation),
// provenance.csv and runs.csv (one row per run, mcmclb/runs_csv.hpp). Headers are stable: plots read them.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "mcmclb/csv.hpp"
#include "mcmclb/result_store.hpp"
#include "mcmclb/run_stats.hpp"
#include "mcmclb/runs_csv.hpp"

namespace mcmclb {

const csv::Row& ranks_header();
const csv::Row& events_header();
const csv::Row& chains_header();
const csv::Row& traces_header();
/// costs.csv (work.record): a trace file (kTraceHeader) with the run id first.
const csv::Row& costs_header();
const csv::Row& calibration_header();
/// One chains.csv row.
csv::Row chain_row(const std::string& run_id, const ChainOutcome& c);

/// One events.csv line (with its newline) for an event of run run_id.
std::string event_line(const std::string& run_id, const EventRow& e);

/// failures.csv: one row per point a sweep could not record, with the point's store key (key column) so a later
/// valid run of the point supersedes it.
const csv::Row& failures_header();

/// The results folder's schema for the store (mcmclb/result_store.hpp): runs.csv (resume key: its parameter
/// columns), ranks.csv, events.csv, failures.csv (the keyless header of earlier versions is upgraded) and, per
/// run, provenance.csv.
results::Schema results_schema();

/// Opens (creates or checks) the results folder dir with results_schema(): throws results::StoreError (an
/// InputError, one line naming the file) before any work if the folder cannot hold results or holds foreign or
/// older files.
results::ResultStore open_results(const std::filesystem::path& dir);

/// The points recorded in the results folder dir (results_schema()), read only: nothing in dir is written or
/// created, an older version's files are read through their upgrade without being rewritten, a missing folder
/// holds none (results::ResultStore::read_recorded_points). Throws results::StoreError as open_results() would.
std::map<std::string, results::RecordedPoint> read_results(const std::filesystem::path& dir);

/// The store key of a point run on backend: its runs.csv key fields (parameters, backend, platform;
/// ResultStore::key).
std::string store_key(const RunSpec& spec, const Backend& backend);

/// Records a run in the store: ranks.csv, events.csv, provenance.csv, chains.csv (compute mode only: chains not
/// empty), traces.csv (work.trace: trace not empty), calibration.csv (a calibrated run: calibration.sizes not
/// empty) and runs.csv, all or nothing (one commit). ranks: every
/// rank's stats, by rank; event_lines: every group formation, as events.csv lines. Returns false when if_done
/// is skip and the point was already done (nothing recorded; ResultStore::record).
bool record_run(results::ResultStore& store, const RunRecord& r, const std::vector<RankStats>& ranks,
                const std::string& event_lines, const std::vector<ChainOutcome>& chains = {},
                const std::vector<TracePoint>& trace = {}, const Calibration& calibration = {},
                const std::vector<csv::Row>& costs = {},
                results::ResultStore::IfDone if_done = results::ResultStore::IfDone::append);

}  // namespace mcmclb
