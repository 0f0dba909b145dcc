// SPDX-License-Identifier: BSD-3-Clause
// The rows of ranks.csv and events.csv, and the order a run's files are written in (mcmclb/run_files.hpp).
#include "mcmclb/run_files.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <initializer_list>
#include <string_view>

namespace mcmclb {

std::string event_line(const std::string& run_id, const EventRow& e) {
  return csv::line({run_id, csv::number(e.t_s), std::string(to_string(e.kind)), e.before, std::to_string(e.first),
                    std::to_string(e.last), std::to_string(e.last - e.first + 1), std::to_string(e.chain),
                    std::to_string(e.items_left), e.method, csv::number(e.create_s)});
}

const csv::Row& ranks_header() {
  static const csv::Row h = {"run_id",      "rank",         "elapsed_s",         "work_s",
                             "polling_s",   "waiting_s",    "regroup_s",         "other_s",
                             "regroups",    "items_worked", "final_group_first", "final_group_last",
                             "state_bytes", "state_s",      "chains_migrated",   "migrated_bytes"};
  return h;
}

const csv::Row& events_header() {
  static const csv::Row h = {"run_id",     "t_s",   "kind",       "groups_before", "group_first", "group_last",
                             "group_size", "chain", "items_left", "method",        "create_s"};
  return h;
}

const csv::Row& chains_header() {
  static const csv::Row h = {"run_id",     "chain",    "atoms",       "items",          "moves",        "final_energy",
                             "energy_q32", "accepted", "acceptance",  "ref_energy_q32", "ref_accepted", "matches_ref",
                             "ref_cpu_s",  "merges",   "state_bytes", "state_bcast_s",  "s_per_item"};
  return h;
}

const csv::Row& calibration_header() {
  static const csv::Row h = {"run_id", "size", "create_s", "reduce_s", "bcast_s", "s_per_flop"};
  return h;
}

const csv::Row& costs_header() {
  static const csv::Row h = {"run_id", "chain", "item", "ranks", "seconds", "speedup"};
  return h;
}

const csv::Row& traces_header() {
  static const csv::Row h = {"run_id", "chain", "item", "energy", "energy_q32", "accepted", "group_size"};
  return h;
}

csv::Row chain_row(const std::string& run_id, const ChainOutcome& c) {
  char energy[40];
  std::snprintf(energy, sizeof energy, "%.17g", static_cast<double>(c.energy_q32) * 0x1p-32);
  const double acceptance = c.moves > 0 ? static_cast<double>(c.accepted) / static_cast<double>(c.moves) : 0.0;
  return {run_id,
          std::to_string(c.chain),
          std::to_string(c.atoms),
          std::to_string(c.items),
          std::to_string(c.moves),
          energy,
          std::to_string(c.energy_q32),
          std::to_string(c.accepted),
          csv::number(acceptance),
          std::to_string(c.ref_energy_q32),
          std::to_string(c.ref_accepted),
          c.matches ? "true" : "false",
          csv::number(c.ref_cpu_s),
          std::to_string(c.merges),
          std::to_string(c.state_bytes),
          csv::number(c.state_s),
          c.s_per_item};
}

const csv::Row& failures_header() {
  static const csv::Row h = {
      "point",          "nprocs",         "balancer", "rep", "reason", "utc", "key", "progress_simulated_s",
      "progress_items", "progress_host_s"};
  return h;
}

namespace {
/// runs.csv as mcmclb 0.1 wrote it, before walker groups, compute mode and the simulation back end added columns.
const csv::Row& runs_header_v01() {
  static const csv::Row h = {"run_id",
                             "experiment",
                             "nprocs",
                             "G",
                             "T_ms",
                             "workload",
                             "workload_scale",
                             "workload_period",
                             "workload_items",
                             "workload_min",
                             "workload_max",
                             "workload_median",
                             "workload_sigma",
                             "workload_seed",
                             "work_mode",
                             "jitter_pct",
                             "work_seed",
                             "balancer",
                             "interval",
                             "method",
                             "rep",
                             "time_s",
                             "ideal_s",
                             "baseline_s",
                             "regroups_avg",
                             "regroups_std",
                             "regroups_min",
                             "regroups_max",
                             "valid",
                             "violations",
                             "mpi_library",
                             "git_commit",
                             "host",
                             "utc_start"};
  return h;
}

/// A row of an older header in the current one, column by column by name; a column the old header lacks gets
/// absent(name).
csv::Row upgrade_by_name(const csv::Row& row, const csv::Row& old, const csv::Row& current,
                         const std::function<std::string(const std::string&)>& absent) {
  csv::Row upgraded;
  for (const auto& name : current) {
    const auto at = std::find(old.begin(), old.end(), name);
    upgraded.push_back(at != old.end() ? row.at(static_cast<std::size_t>(at - old.begin())) : absent(name));
  }
  return upgraded;
}

/// A header as it was before the columns `added` were: newer without them.
csv::Row without(const csv::Row& newer, std::initializer_list<std::string_view> added) {
  csv::Row older = newer;
  for (const std::string_view column : added) older.erase(std::find(older.begin(), older.end(), column));
  return older;
}

/// runs.csv from placement until a replay could plan from another trace: today's header without its columns.
const csv::Row& runs_header_v10() {
  static const csv::Row h = without(runs_header(), {"workload_plan_file", "workload_plan_fnv1a64"});
  return h;
}

/// runs.csv from a trace's repetitions' end until placement was a column: v10 without it.
const csv::Row& runs_header_v09() {
  static const csv::Row h = without(runs_header_v10(), {"placement"});
  return h;
}

/// runs.csv from trace extrapolation until a trace's repetitions could be replayed at an end: v09 without
/// workload_speedups.
const csv::Row& runs_header_v08() {
  static const csv::Row h = without(runs_header_v09(), {"workload_speedups"});
  return h;
}

/// runs.csv from trace replay until a trace's extrapolation and content were columns: v08 without them.
const csv::Row& runs_header_v07() {
  static const csv::Row h = without(runs_header_v08(), {"workload_extrapolate", "workload_file_fnv1a64"});
  return h;
}

/// runs.csv from model errors until a trace could be replayed: v07 without the trace's columns.
const csv::Row& runs_header_v06() {
  static const csv::Row h = without(runs_header_v07(), {"workload_file", "workload_map", "workload_scaling"});
  return h;
}

/// runs.csv from the wait policy until a model could be told to misjudge: v06 without model_compute and
/// model_reduce.
const csv::Row& runs_header_v05() {
  static const csv::Row h = without(runs_header_v06(), {"model_compute", "model_reduce"});
  return h;
}

/// runs.csv from migration until the wait policy and the calibration's cost became columns: v05 without wait and
/// calibration_s.
const csv::Row& runs_header_v04() {
  static const csv::Row h = without(runs_header_v05(), {"wait", "calibration_s"});
  return h;
}

/// runs.csv from the finished rule's column until chains could be several per group and migrate: v04 without
/// chains_per_group and migrated_avg.
const csv::Row& runs_header_v03() {
  static const csv::Row h = without(runs_header_v04(), {"chains_per_group", "migrated_avg"});
  return h;
}

/// runs.csv from the simulation back end until the finished rule became a column: v03 without it.
const csv::Row& runs_header_v02() {
  static const csv::Row h = without(runs_header_v03(), {"finished"});
  return h;
}

/// An older row in today's header: the columns it did not have are what today's runs write where they do not apply
/// (empty), except backend, which was always real MPI before the simulation back end, and the finished rule, which
/// each balancer had fixed (older_finished_rule()). Resume keys stay the same.
csv::Row upgrade_runs_from(const csv::Row& row, const csv::Row& old) {
  const auto balancer = std::find(old.begin(), old.end(), "balancer");
  const std::string balancer_name = row.at(static_cast<std::size_t>(balancer - old.begin()));
  const bool replays = replays_a_trace(old, row);
  return upgrade_by_name(row, old, runs_header(),
                         [&](const std::string& name) { return older_value(name, balancer_name, replays); });
}

/// ranks.csv from mcmclb 0.1 until compute mode's regrouping traffic moved into it.
const csv::Row& ranks_header_v01() {
  static const csv::Row h = {"run_id",    "rank",         "elapsed_s",         "work_s",
                             "polling_s", "waiting_s",    "regroup_s",         "other_s",
                             "regroups",  "items_worked", "final_group_first", "final_group_last"};
  return h;
}

/// A ranks.csv row of mcmclb 0.1: state_bytes and state_s were not recorded then, so they stay empty (unknown),
/// not 0; nothing migrated then (chains_migrated, migrated_bytes: 0).
csv::Row upgrade_ranks_v01(const csv::Row& row) {
  return upgrade_by_name(row, ranks_header_v01(), ranks_header(), [](const std::string& name) -> std::string {
    return name == "chains_migrated" || name == "migrated_bytes" ? "0" : "";
  });
}

/// ranks.csv until chains could migrate: today's header without chains_migrated and migrated_bytes.
const csv::Row& ranks_header_v02() {
  static const csv::Row h(ranks_header().begin(), ranks_header().end() - 2);
  return h;
}

/// Nothing migrated before chains could: 0, not unknown.
csv::Row upgrade_ranks_v02(const csv::Row& row) {
  return upgrade_by_name(row, ranks_header_v02(), ranks_header(), [](const std::string&) { return "0"; });
}
}  // namespace

results::Schema results_schema() {
  results::Schema s;
  s.runs = {
      "runs.csv",
      runs_header(),
      {{runs_header_v01(), "mcmclb 0.1", [](const csv::Row& row) { return upgrade_runs_from(row, runs_header_v01()); }},
       {runs_header_v02(), "mcmclb 0.2 (runs.csv without finished)",
        [](const csv::Row& row) { return upgrade_runs_from(row, runs_header_v02()); }},
       {runs_header_v03(), "mcmclb before migration (runs.csv without chains_per_group, migrated_avg)",
        [](const csv::Row& row) { return upgrade_runs_from(row, runs_header_v03()); }},
       {runs_header_v04(), "mcmclb before the wait policy (runs.csv without wait, calibration_s)",
        [](const csv::Row& row) { return upgrade_runs_from(row, runs_header_v04()); }},
       {runs_header_v05(), "mcmclb before model errors (runs.csv without model_compute, model_reduce)",
        [](const csv::Row& row) { return upgrade_runs_from(row, runs_header_v05()); }},
       {runs_header_v06(),
        "mcmclb before trace replay (runs.csv without workload_file, workload_map, workload_scaling)",
        [](const csv::Row& row) { return upgrade_runs_from(row, runs_header_v06()); }},
       {runs_header_v07(),
        "mcmclb before trace extrapolation (runs.csv without workload_extrapolate, workload_file_fnv1a64)",
        [](const csv::Row& row) { return upgrade_runs_from(row, runs_header_v07()); }},
       {runs_header_v08(),
        "mcmclb before a trace's repetitions could be replayed at an end (runs.csv without workload_speedups)",
        [](const csv::Row& row) { return upgrade_runs_from(row, runs_header_v08()); }},
       {runs_header_v09(), "mcmclb before placement (runs.csv without placement)",
        [](const csv::Row& row) { return upgrade_runs_from(row, runs_header_v09()); }},
       {runs_header_v10(),
        "mcmclb before a replay could plan from another trace (runs.csv without workload_plan_file, "
        "workload_plan_fnv1a64)",
        [](const csv::Row& row) { return upgrade_runs_from(row, runs_header_v10()); }}}};
  for (const auto& c : runs_columns()) {
    if (c.is_key()) s.key_columns.push_back(c.name);
  }
  s.ranks = {"ranks.csv",
             ranks_header(),
             {{ranks_header_v01(), "mcmclb 0.1 (ranks.csv without state_bytes, state_s)", upgrade_ranks_v01},
              {ranks_header_v02(), "mcmclb before migration (ranks.csv without chains_migrated, migrated_bytes)",
               upgrade_ranks_v02}}};
  s.events = {"events.csv", events_header(), {}};
  // Before the key column, a failure could not be matched to the run that fixed it: such rows stay listed. Before
  // the progress columns, how far a killed point got was not recorded: empty, unknown.
  const csv::Row without_progress(failures_header().begin(), failures_header().end() - 3);
  const csv::Row keyless(without_progress.begin(), without_progress.end() - 1);
  const auto empty_to_the_end = [](const csv::Row& row) {
    csv::Row upgraded = row;
    upgraded.resize(failures_header().size());
    return upgraded;
  };
  s.failures = {"failures.csv",
                failures_header(),
                {{keyless, "mcmclb 0.1 (failures.csv without key)", empty_to_the_end},
                 {without_progress,
                  "mcmclb before a killed point's progress (failures.csv without progress_simulated_s, "
                  "progress_items, progress_host_s)",
                  empty_to_the_end}}};
  // Columns added at the end since: empty, unknown.
  const auto unknown_to_the_end = [](const csv::Row& row) {
    csv::Row upgraded = row;
    upgraded.resize(provenance_header().size());
    return upgraded;
  };
  s.per_run.push_back(
      {"provenance.csv",
       provenance_header(),
       {{provenance_header_v1(),
         "mcmclb before occupancy, the wait policy and the host's usage (provenance.csv without "
         "ranks_per_node, cores_available, oversubscribed, wait_policy, host_cpu_s, host_peak_rss_kib)",
         unknown_to_the_end},
        {provenance_header_v2(),
         "mcmclb before the SMPI preloads (provenance.csv without smpi_clock_preload, smpi_allocator)",
         unknown_to_the_end},
        {provenance_header_v3(), "mcmclb before the allocator preload (provenance.csv without smpi_allocator)",
         unknown_to_the_end},
        {provenance_header_v4(), "mcmclb before the node layout (provenance.csv without nodes, node_layout)",
         unknown_to_the_end},
        {provenance_header_v5(), "mcmclb before interleaved repetitions (provenance.csv without order, order_seed)",
         unknown_to_the_end},
        {provenance_header_v6(),
         "mcmclb before the build in provenance (provenance.csv without build_type, compiler, cxx_flags)",
         unknown_to_the_end},
        {provenance_header_v7(),
         "mcmclb before SimGrid's version in provenance (provenance.csv without simgrid_version, platform)",
         unknown_to_the_end},
        {provenance_header_v8(), "mcmclb before placement (provenance.csv without placement)", unknown_to_the_end},
        {provenance_header_v9(),
         "mcmclb before the host's CPU and load in provenance (provenance.csv without host_cpu_model, "
         "host_busy_before_pct, host_busy_after_pct)",
         unknown_to_the_end},
        {provenance_header_v10(), "mcmclb before the core share in provenance (provenance.csv without core_share)",
         unknown_to_the_end}}});
  s.per_run.push_back({"chains.csv", chains_header(), {}});            // compute mode only
  s.per_run.push_back({"traces.csv", traces_header(), {}});            // work.trace only
  s.per_run.push_back({"calibration.csv", calibration_header(), {}});  // calibrated runs only
  s.per_run.push_back({"costs.csv", costs_header(), {}});              // work.record only
  return s;
}

results::ResultStore open_results(const std::filesystem::path& dir) {
  return results::ResultStore::open(dir, results_schema());
}

std::map<std::string, results::RecordedPoint> read_results(const std::filesystem::path& dir) {
  return results::ResultStore::read_recorded_points(dir, results_schema());
}

std::string store_key(const RunSpec& spec, const Backend& backend) {
  RunRecord record;
  record.spec = spec;
  record.provenance.backend = backend.name;
  record.provenance.platform = backend.platform;
  const csv::Row row = runs_row(record);
  csv::Row key;
  const auto columns = runs_columns();
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (columns[i].is_key()) key.push_back(row[i]);
  }
  return results::ResultStore::key(key);
}

bool record_run(results::ResultStore& store, const RunRecord& r, const std::vector<RankStats>& ranks,
                const std::string& event_lines, const std::vector<ChainOutcome>& chains,
                const std::vector<TracePoint>& trace, const Calibration& calibration,
                const std::vector<csv::Row>& costs, results::ResultStore::IfDone if_done) {
  results::RunRecord record;
  record.run = runs_row(r);
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const RankStats& x = ranks[i];
    const double other = x.elapsed_s - x.work_s - x.polling_s - x.waiting_s - x.regroup_s;
    record.rank_lines +=
        csv::line({r.run_id, std::to_string(i), csv::number(x.elapsed_s), csv::number(x.work_s),
                   csv::number(x.polling_s), csv::number(x.waiting_s), csv::number(x.regroup_s), csv::number(other),
                   std::to_string(x.regroups), std::to_string(x.items_worked), std::to_string(x.final_first),
                   std::to_string(x.final_last), std::to_string(x.state_bytes), csv::number(x.state_s),
                   std::to_string(x.chains_migrated), std::to_string(x.migrated_bytes)});
  }
  record.event_lines = event_lines;
  record.per_run_lines.push_back(csv::line(provenance_row(r.run_id, r.provenance)));
  std::string chain_lines, trace_lines;  // empty: the table gets nothing, and is not created
  for (const ChainOutcome& c : chains) chain_lines += csv::line(chain_row(r.run_id, c));
  for (const TracePoint& p : trace) {
    char energy[40];
    std::snprintf(energy, sizeof energy, "%.17g", static_cast<double>(p.energy_q32) * 0x1p-32);
    trace_lines += csv::line({r.run_id, std::to_string(p.chain), std::to_string(p.item), energy,
                              std::to_string(p.energy_q32), std::to_string(p.accepted), std::to_string(p.group_size)});
  }
  std::string calibration_lines;
  for (const SizeCosts& c : calibration.sizes) {
    calibration_lines += csv::line({r.run_id, std::to_string(c.size), csv::number(c.create_s), csv::number(c.reduce_s),
                                    csv::number(c.bcast_s), csv::number(calibration.s_per_flop)});
  }
  record.per_run_lines.push_back(std::move(chain_lines));
  record.per_run_lines.push_back(std::move(trace_lines));
  record.per_run_lines.push_back(std::move(calibration_lines));
  std::string cost_lines;
  for (const csv::Row& row : costs) cost_lines += csv::line(row);
  record.per_run_lines.push_back(std::move(cost_lines));
  return store.record(record, if_done);
}

}  // namespace mcmclb
