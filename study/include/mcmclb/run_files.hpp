// A run's result files: ranks.csv (one row per rank), events.csv (one row per group formation),
// provenance.csv and runs.csv (one row per run, mcmclb/runs_csv.hpp). Headers are stable: plots read them.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "mcmclb/csv.hpp"
#include "mcmclb/run_stats.hpp"
#include "mcmclb/runs_csv.hpp"

namespace mcmclb {

const csv::Row& ranks_header();
const csv::Row& events_header();
const csv::Row& chains_header();
const csv::Row& traces_header();
/// One chains.csv row.
csv::Row chain_row(const std::string& run_id, const ChainOutcome& c);

/// One events.csv line (with its newline) for an event of run run_id.
std::string event_line(const std::string& run_id, const EventRow& e);

/// Appends a run's rows to DIR/ranks.csv, DIR/events.csv, DIR/provenance.csv, DIR/chains.csv (compute mode
/// only: chains not empty), DIR/traces.csv (work.trace: trace not empty), then DIR/runs.csv (last, so a row in runs.csv
/// means the others hold that run's rows). ranks: every rank's stats, by rank; event_lines: every group formation, as
/// events.csv lines.
void append_run(const std::filesystem::path& dir, const RunRecord& r, const std::vector<RankStats>& ranks,
                const std::string& event_lines, const std::vector<ChainOutcome>& chains = {},
                const std::vector<TracePoint>& trace = {});

}  // namespace mcmclb
