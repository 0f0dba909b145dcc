// SPDX-License-Identifier: BSD-3-Clause
// The runs.csv schema table and what is derived from it (mcmclb/runs_csv.hpp).
#include "mcmclb/runs_csv.hpp"

#include <algorithm>
#include <sstream>

#include "mcmclb/input_error.hpp"
#include "mcmclb/text.hpp"
#include "mcmclb/workload.hpp"

namespace mcmclb {

namespace {

using Type = RunsColumn::Type;
using Role = RunsColumn::Role;

std::string integer(int64_t v) { return std::to_string(v); }

/// Compute-mode columns are empty for emulated work.
bool compute(const RunRecord& r) { return r.spec.work.mode == WorkMode::compute; }

/// The trace columns are empty for every other model.
bool replay(const RunRecord& r) { return r.spec.workload.model == "trace"; }

/// A model factor as runs.csv keeps it: empty for 1 (as measured), so that every run outside a sensitivity
/// experiment reads as an older run does.
std::string model_factor(double f) { return f == 1.0 ? std::string() : csv::number(f); }

/// A workload key's column: workload_<key>, empty unless the run's model reads the key.
RunsColumn workload_column(const WorkloadParam& p) {
  const std::string key(p.key);
  return {"workload_" + key, "workload." + key, Role::parameter, p.is_integer() ? Type::integer : Type::real,
          [key](const RunRecord& r) -> std::string {
            if (!workload_uses(r.spec.workload, key)) return "";
            const ParamValue v = r.spec.workload.value(key);
            return std::holds_alternative<int64_t>(v) ? integer(std::get<int64_t>(v))
                                                      : csv::number(std::get<double>(v));
          }};
}

std::vector<RunsColumn> build_columns() {
  std::vector<RunsColumn> c = {
      {"run_id", "", Role::id, Type::text, [](const RunRecord& r) { return r.run_id; }},
      {"experiment", "experiment", Role::parameter, Type::text, [](const RunRecord& r) { return r.spec.experiment; }},
      {"nprocs", "nprocs", Role::parameter, Type::integer, [](const RunRecord& r) { return integer(r.spec.nprocs); }},
      {"G", "G", Role::parameter, Type::integer, [](const RunRecord& r) { return integer(r.spec.G); }},
      {"groups", "groups", Role::parameter, Type::text, [](const RunRecord& r) { return r.spec.groups.text(); }},
      {"T_ms", "T_ms", Role::parameter, Type::real, [](const RunRecord& r) { return csv::number(r.spec.T_ms); }},
      {"workload", "workload.model", Role::parameter, Type::text,
       [](const RunRecord& r) { return r.spec.workload.model; }},
  };
  for (const auto& p : workload_params()) c.push_back(workload_column(p));
  const std::vector<RunsColumn> rest = {
      {"work_mode", "work.mode", Role::parameter, Type::text,
       [](const RunRecord& r) { return std::string(to_string(r.spec.work.mode)); }},
      {"jitter_pct", "work.jitter_pct", Role::parameter, Type::real,
       [](const RunRecord& r) { return csv::number(r.spec.work.jitter_pct); }},
      {"work_seed", "work.seed", Role::parameter, Type::integer,
       [](const RunRecord& r) { return integer(static_cast<int64_t>(r.spec.work.seed)); }},
      {"atoms", "work.atoms", Role::parameter, Type::integer,
       [](const RunRecord& r) { return compute(r) ? integer(r.spec.work.compute.atoms) : std::string(); }},
      {"temperature", "work.temperature", Role::parameter, Type::real,
       [](const RunRecord& r) { return compute(r) ? csv::number(r.spec.work.compute.temperature) : std::string(); }},
      {"move", "work.move", Role::parameter, Type::text,
       [](const RunRecord& r) {
         return compute(r) ? std::string(to_string(r.spec.work.compute.move)) : std::string();
       }},
      {"max_step", "work.max_step", Role::parameter, Type::real,
       [](const RunRecord& r) { return compute(r) ? csv::number(r.spec.work.compute.max_step) : std::string(); }},
      {"moves_per_item", "work.moves_per_item", Role::parameter, Type::integer,
       [](const RunRecord& r) { return compute(r) ? integer(r.spec.work.compute.moves_per_item) : std::string(); }},
      {"balancer", "balancer", Role::parameter, Type::text, [](const RunRecord& r) { return r.spec.balancer; }},
      {"interval", "interval", Role::parameter, Type::integer,
       [](const RunRecord& r) { return r.spec.interval > 0 ? integer(r.spec.interval) : std::string(); }},
      {"method", "method", Role::parameter, Type::text, [](const RunRecord& r) { return r.spec.method; }},
      {"rep", "", Role::parameter, Type::integer, [](const RunRecord& r) { return integer(r.spec.rep); }},
      {"time_s", "", Role::result, Type::real, [](const RunRecord& r) { return csv::number(r.time_s); }},
      {"ideal_s", "", Role::result, Type::real, [](const RunRecord& r) { return csv::number(r.ideal_s); }},
      {"baseline_s", "", Role::result, Type::real, [](const RunRecord& r) { return csv::number(r.baseline_s); }},
      {"regroups_avg", "", Role::result, Type::real, [](const RunRecord& r) { return csv::number(r.regroups_avg); }},
      {"regroups_std", "", Role::result, Type::real, [](const RunRecord& r) { return csv::number(r.regroups_std); }},
      {"regroups_min", "", Role::result, Type::integer, [](const RunRecord& r) { return integer(r.regroups_min); }},
      {"regroups_max", "", Role::result, Type::integer, [](const RunRecord& r) { return integer(r.regroups_max); }},
      {"valid", "", Role::result, Type::boolean,
       [](const RunRecord& r) { return std::string(r.valid ? "true" : "false"); }},
      {"violations", "", Role::result, Type::text, [](const RunRecord& r) { return r.violations; }},
      {"mpi_library", "", Role::result, Type::text, [](const RunRecord& r) { return r.provenance.mpi_library; }},
      {"git_commit", "", Role::result, Type::text, [](const RunRecord& r) { return r.provenance.git_commit; }},
      {"host", "", Role::result, Type::text, [](const RunRecord& r) { return r.provenance.host; }},
      {"utc_start", "", Role::result, Type::text, [](const RunRecord& r) { return r.provenance.utc_start; }},
      // The simulation columns, last so that an older folder's header is a prefix of this one (the results store
      // upgrades it: backend "mpi", platform empty). smpi rows are simulated, never hardware measurements.
      {"backend", "", Role::backend, Type::text, [](const RunRecord& r) { return r.provenance.backend; }},
      {"platform", "", Role::backend, Type::text, [](const RunRecord& r) { return r.provenance.platform; }},
      // Last again, for the same reason (the store upgrades older rows with older_finished_rule()).
      {"finished", "finished", Role::parameter, Type::text,
       [](const RunRecord& r) { return r.spec.finished ? std::string(to_string(*r.spec.finished)) : std::string(); }},
      // Last again: older rows had one chain per group and migrated nothing (older_value()).
      {"chains_per_group", "chains_per_group", Role::parameter, Type::integer,
       [](const RunRecord& r) { return integer(r.spec.workload.chains_per_group); }},
      {"migrated_avg", "", Role::result, Type::real, [](const RunRecord& r) { return csv::number(r.migrated_avg); }},
      // Last again: older rows waited politely on real MPI and blocked in the simulation, and recorded no
      // calibration (older_value(): empty, which for wait is the key's default, auto).
      {"wait", "work.wait", Role::parameter, Type::text,
       [](const RunRecord& r) { return r.spec.work.wait ? std::string(to_string(*r.spec.work.wait)) : std::string(); }},
      {"calibration_s", "", Role::result, Type::real,
       [](const RunRecord& r) { return r.calibration_s ? csv::number(*r.calibration_s) : std::string(); }},
      // Last again: older rows' models predicted as they measured (older_value(): empty, the keys' default 1).
      {"model_compute", "work.model_compute", Role::parameter, Type::real,
       [](const RunRecord& r) { return model_factor(r.spec.work.model_error.compute); }},
      {"model_reduce", "work.model_reduce", Role::parameter, Type::real,
       [](const RunRecord& r) { return model_factor(r.spec.work.model_error.reduce); }},
      // Last again: older rows replayed no trace (older_value(): empty, as other models' rows are).
      {"workload_file", "workload.file", Role::parameter, Type::text,
       [](const RunRecord& r) { return replay(r) ? r.spec.workload.file : std::string(); }},
      {"workload_map", "workload.map", Role::parameter, Type::text,
       [](const RunRecord& r) { return replay(r) ? std::string(to_string(r.spec.workload.map)) : std::string(); }},
      {"workload_scaling", "workload.scaling", Role::parameter, Type::text,
       [](const RunRecord& r) { return replay(r) ? std::string(to_string(r.spec.workload.scaling)) : std::string(); }},
      // Last again: older rows held the speed-up flat (the only rule then) and named no content; empty in an
      // upgraded row, so their points are run again rather than taken for a trace that may have changed since.
      {"workload_extrapolate", "workload.extrapolate", Role::parameter, Type::text,
       [](const RunRecord& r) {
         return replay(r) ? std::string(to_string(r.spec.workload.extrapolate)) : std::string();
       }},
      {"workload_file_fnv1a64", "", Role::parameter, Type::text,
       [](const RunRecord& r) { return replay(r) ? r.spec.workload.file_fnv1a64 : std::string(); }},
      // Last again: older replays took the median of a size's repetitions, the only end then (older_value()).
      {"workload_speedups", "workload.speedups", Role::parameter, Type::text,
       [](const RunRecord& r) { return replay(r) ? std::string(to_string(r.spec.workload.speedups)) : std::string(); }},
      // Last again: older rows filled the hosts in order, today's default, which stays empty so that they read
      // alike (older_value()).
      {"placement", "placement", Role::parameter, Type::text,
       [](const RunRecord& r) {
         return r.spec.placement == Placement::block ? std::string() : std::string(to_string(r.spec.placement));
       }},
      // Last again: older replays planned from the trace they replayed, which an empty plan file means.
      {"workload_plan_file", "workload.plan_file", Role::parameter, Type::text,
       [](const RunRecord& r) { return replay(r) ? r.spec.workload.plan_file : std::string(); }},
      {"workload_plan_fnv1a64", "", Role::parameter, Type::text,
       [](const RunRecord& r) { return replay(r) ? r.spec.workload.plan_fnv1a64 : std::string(); }},
  };
  c.insert(c.end(), rest.begin(), rest.end());
  return c;
}

std::vector<std::string> key_fields(const RunSpec& spec, const Backend& backend, bool with_rep = true) {
  RunRecord record;
  record.spec = spec;
  record.provenance.backend = backend.name;
  record.provenance.platform = backend.platform;
  std::vector<std::string> fields;
  for (const auto& c : runs_columns()) {
    if (!(with_rep ? c.is_key() : c.is_configuration_key())) continue;
    std::string value = c.get(record);
    // A run that names no rule runs its balancer's default, which is the rule an older row without one had.
    if (c.name == "finished" && value.empty()) value = older_finished_rule(spec.balancer);
    fields.push_back(std::move(value));
  }
  return fields;
}

constexpr std::string_view kKeySeparator = "\x1f";

}  // namespace

std::span<const RunsColumn> runs_columns() {
  static const std::vector<RunsColumn> columns = build_columns();
  return columns;
}

const csv::Row& runs_header() {
  static const csv::Row header = [] {
    csv::Row h;
    for (const auto& c : runs_columns()) h.push_back(c.name);
    return h;
  }();
  return header;
}

csv::Row runs_row(const RunRecord& record) {
  csv::Row row;
  for (const auto& c : runs_columns()) row.push_back(c.get(record));
  return row;
}

std::string excluded_value(const RunSpec& run, const std::string& key) {
  if (key == "reps") return "";
  for (const auto& c : runs_columns()) {
    if (c.yaml_key == key) {
      RunRecord record;
      record.spec = run;
      return c.get(record);
    }
  }
  throw InputError("key exclude: " + key + " cannot be matched");
}

std::string older_finished_rule(std::string_view balancer) {
  // Before the rule was an option, async and lookahead always retired and mostwork always coalesced; collective
  // wrote no rule until it offered pays, and its finished groups retired.
  if (balancer == "async" || balancer == "lookahead" || balancer == "collective") return "retire";
  if (balancer == "mostwork") return "coalesce";
  return "";
}

std::string older_value(std::string_view column, std::string_view balancer, bool replays) {
  if (column == "backend") return "mpi";
  if (column == "workload_speedups") return replays ? "median" : "";
  if (column == "finished") return older_finished_rule(balancer);
  if (column == "chains_per_group") return "1";
  if (column == "migrated_avg") return "0";  // nothing migrated before chains could
  return "";
}

bool replays_a_trace(const csv::Row& header, const csv::Row& row) {
  const auto file = std::find(header.begin(), header.end(), "workload_file");
  return file != header.end() && !row.at(static_cast<std::size_t>(file - header.begin())).empty();
}

std::string point_key(const RunSpec& spec, const Backend& backend) { return key_of_fields(key_fields(spec, backend)); }

std::string configuration_key(const RunSpec& spec, const Backend& backend) {
  return key_of_fields(key_fields(spec, backend, false));
}

std::string key_of_fields(const std::vector<std::string>& fields) { return join(fields, kKeySeparator); }

std::map<std::string, Recorded> recorded_points(const std::filesystem::path& dir) {
  std::map<std::string, Recorded> keys;
  std::error_code error;
  if (!std::filesystem::exists(std::filesystem::symlink_status(dir / "runs.csv", error))) return keys;
  std::string why;
  // read_text_file: a FIFO planted as runs.csv is refused from what it is, never opened and waited on.
  const auto text = read_text_file(dir / "runs.csv", &why);
  if (!text) throw InputError((dir / "runs.csv").string() + ": cannot be read: " + why);
  std::istringstream in(*text);
  std::string line;
  if (!std::getline(in, line)) return keys;
  const auto header = csv::split_line(line);
  const auto column_of = [&](const std::string& name) -> std::size_t {
    const auto at = std::find(header.begin(), header.end(), name);
    if (at == header.end()) {
      throw InputError((dir / "runs.csv").string() + ": not an mcmclb runs.csv (no column " + name +
                       "; header: " + line + ")");
    }
    return static_cast<std::size_t>(at - header.begin());
  };
  // A key column's position, or npos for a column an older file lacks: the backend columns (its rows: mpi, no
  // platform), the finished rule (older_finished_rule()), chains_per_group (1) and wait (empty: auto), as the
  // results store's upgrade writes them.
  constexpr std::size_t kAbsent = std::string::npos;
  std::vector<std::pair<std::size_t, std::string>> key_columns;  // position (kAbsent: older file), name
  for (const auto& c : runs_columns()) {
    if (!c.is_key()) continue;
    const bool absent =
        (c.role == Role::backend || c.name == "finished" || c.name == "chains_per_group" || c.name == "wait" ||
         c.name == "model_compute" || c.name == "model_reduce" || c.name == "workload_file" ||
         c.name == "workload_map" || c.name == "workload_scaling" || c.name == "workload_extrapolate" ||
         c.name == "workload_file_fnv1a64" || c.name == "workload_speedups" || c.name == "placement" ||
         c.name == "workload_plan_file" || c.name == "workload_plan_fnv1a64") &&
        std::find(header.begin(), header.end(), c.name) == header.end();
    key_columns.emplace_back(absent ? kAbsent : column_of(c.name), c.name);
  }
  const std::size_t valid_column = column_of("valid");
  const std::size_t balancer_column = column_of("balancer");
  while (std::getline(in, line)) {
    const auto fields = csv::split_line(line);
    if (fields.size() != header.size()) continue;
    std::vector<std::string> key;
    const bool replays = replays_a_trace(header, fields);
    for (const auto& [i, name] : key_columns) {
      // A rule left empty is the balancer's former one (collective's rows before it offered a choice).
      const bool older = i == kAbsent || (name == "finished" && fields[i].empty());
      key.push_back(older ? older_value(name, fields[balancer_column], replays) : fields[i]);
    }
    Recorded& r = keys[key_of_fields(key)];
    ++r.rows;
    r.last_valid = fields[valid_column] == "true";
    r.any_valid = r.any_valid || r.last_valid;
  }
  return keys;
}

std::set<std::string> valid_point_keys(const std::filesystem::path& dir) {
  std::set<std::string> keys;
  for (const auto& [key, r] : recorded_points(dir)) {
    if (r.any_valid) keys.insert(key);
  }
  return keys;
}

}  // namespace mcmclb
