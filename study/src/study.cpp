// Study expansion into points, and resume keys (apps/study.hpp).
#include "mcmclb/study.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "mcmclb/input_error.hpp"
#include "mcmclb/text.hpp"

namespace mcmclb {

namespace {

/// The value of a dotted key in a run, as a rule in `exclude` would name it: the run's field in runs.csv, so a
/// rule sees exactly what the results record (empty for parameters the run's workload model does not use).
std::string value_of(const RunSpec& s, const std::string& key) {
  if (key == "reps") return "";  // a count of runs, not a value of one: matches no rule
  std::string column = key == "workload.model" ? "workload" : key == "work.jitter_pct" ? "jitter_pct" : key;
  std::replace(column.begin(), column.end(), '.', '_');
  const csv::Row fields = parameter_fields(s);
  const csv::Row& header = runs_header();  // run_id, then the parameter columns
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (header[i + 1] == column) return fields[i];
  }
  throw InputError("key exclude: " + key + " cannot be matched");
}

bool same_value(const std::string& rule, const std::string& actual) {
  if (rule == actual) return true;
  char* end_a = nullptr;
  char* end_b = nullptr;
  const double a = std::strtod(rule.c_str(), &end_a);
  const double b = std::strtod(actual.c_str(), &end_b);
  return !rule.empty() && !actual.empty() && *end_a == '\0' && *end_b == '\0' && a == b;
}

}  // namespace

std::vector<RunSpec> expand_runs(const Experiment& e, int nprocs, const Catalog& catalog) {
  for (const auto& m : e.methods) catalog.check_method(m);
  std::vector<RunSpec> runs;
  for (const auto& balancer : e.balancers) {
    const BalancerInfo& info = catalog.balancer(balancer);
    std::vector<std::string> methods;
    for (const auto& m : e.methods) {
      if (std::find(info.methods.begin(), info.methods.end(), m) != info.methods.end()) methods.push_back(m);
    }
    if (methods.empty()) methods.emplace_back(info.default_method);
    const std::vector<int> intervals = info.uses_interval ? e.intervals : std::vector<int>{0};
    for (int interval : intervals) {
      for (const auto& method : methods) {
        for (int rep = 0; rep < e.reps; ++rep) {
          RunSpec r;
          r.experiment = e.name;
          r.nprocs = nprocs;
          r.G = e.G;
          r.T_ms = e.T_ms;
          r.workload = e.workload;
          r.work = e.work;
          r.balancer = balancer;
          r.interval = interval;
          r.method = method;
          r.rep = rep;
          runs.push_back(r);
        }
      }
    }
  }
  return runs;
}

std::map<int, std::vector<std::size_t>> Study::launches() const {
  std::map<int, std::vector<std::size_t>> by_size;
  for (const Point& p : points) by_size[p.spec.nprocs].push_back(p.index);
  return by_size;
}

Study build_study(const std::string& text, const std::vector<std::string>& overrides, const std::string& source,
                  std::optional<int> default_nprocs, const Catalog& catalog) {
  const StudyAxes axes = expand_study(text, overrides, source);
  Study study;
  study.name = axes.experiments.front().name;
  study.out = axes.experiments.front().out.empty() ? std::filesystem::path("results") / study.name
                                                   : std::filesystem::path(axes.experiments.front().out);
  for (const Experiment& e : axes.experiments) {
    const std::optional<int> nprocs = e.nprocs ? e.nprocs : default_nprocs;
    if (!nprocs) throw InputError("key nprocs: a study needs nprocs (a number or a list) to be planned or swept");
    if (e.program == "commbench") {  // one point per rank count: the benchmark sweeps methods and sizes itself
      for (const Point& p : study.points) {
        if (p.program == "commbench" && p.spec.nprocs == *nprocs) {
          throw InputError("key program: a commbench study runs once per rank count; nprocs=" +
                           std::to_string(*nprocs) + " appears twice (vary commbench.* across studies)");
        }
      }
      RunSpec spec;
      spec.experiment = e.name;
      spec.nprocs = *nprocs;
      study.points.push_back({study.points.size(), spec, e.job, e.program, e.commbench});
      continue;
    }
    check_against_nprocs(e, *nprocs);
    for (const RunSpec& run : expand_runs(e, *nprocs, catalog)) {
      bool excluded = false;
      for (const auto& rule : axes.excludes) {
        bool all = !rule.empty();
        for (const auto& [key, value] : rule) all = all && same_value(value, value_of(run, key));
        excluded = excluded || all;
      }
      if (!excluded) study.points.push_back({study.points.size(), run, e.job, e.program, e.commbench});
    }
  }
  if (study.points.empty()) throw InputError(source + ": the exclude rules leave no point to run");
  return study;
}

const csv::Row& runs_header() {
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

csv::Row parameter_fields(const RunSpec& s) {
  const auto& w = s.workload;
  const bool cyclic = w.model == "cyclic", uniform = w.model == "uniform", random = w.model == "random",
             lognormal = w.model == "lognormal";
  const auto opt = [](bool used, const std::string& v) { return used ? v : std::string(); };
  return {s.experiment,
          std::to_string(s.nprocs),
          std::to_string(s.G),
          csv::number(s.T_ms),
          w.model,
          opt(cyclic, std::to_string(w.scale)),
          opt(cyclic, std::to_string(w.period)),
          opt(uniform, std::to_string(w.items)),
          opt(random, std::to_string(w.min)),
          opt(random || lognormal, std::to_string(w.max)),
          opt(lognormal, csv::number(w.median)),
          opt(lognormal, csv::number(w.sigma)),
          opt(random || lognormal, std::to_string(w.seed)),
          s.work.mode,
          csv::number(s.work.jitter_pct),
          std::to_string(s.work.seed),
          s.balancer,
          s.interval > 0 ? std::to_string(s.interval) : "",
          s.method,
          std::to_string(s.rep)};
}

std::string point_key(const RunSpec& spec) { return join(parameter_fields(spec), "\x1f"); }

std::map<std::string, Recorded> recorded_points(const std::filesystem::path& dir) {
  std::map<std::string, Recorded> keys;
  std::ifstream in(dir / "runs.csv");
  if (!in) return keys;
  std::string line;
  if (!std::getline(in, line)) return keys;
  const auto header = csv::split_line(line);
  const std::size_t n_params = parameter_fields(RunSpec{}).size();
  const auto valid_at = std::find(header.begin(), header.end(), "valid");
  if (header.size() < 1 + n_params || header[1] != "experiment" || valid_at == header.end()) {
    throw InputError((dir / "runs.csv").string() + ": not an mcmclb runs.csv (header: " + line + ")");
  }
  const auto valid_column = static_cast<std::size_t>(valid_at - header.begin());
  while (std::getline(in, line)) {
    const auto fields = csv::split_line(line);
    if (fields.size() != header.size()) continue;
    Recorded& r = keys[join(
        std::vector<std::string>(fields.begin() + 1, fields.begin() + 1 + static_cast<long>(n_params)), "\x1f")];
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

std::string commbench_file(int nprocs) { return "commbench-n" + std::to_string(nprocs) + ".csv"; }

std::vector<std::size_t> parse_point_list(const std::string& text) {
  std::vector<std::size_t> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    std::size_t used = 0;
    unsigned long value = 0;
    try {
      value = std::stoul(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size()) throw InputError("--points: '" + item + "' is not a point index");
    out.push_back(value);
  }
  if (out.empty()) throw InputError("--points: expected a comma-separated list of point indices");
  return out;
}

std::string point_list(const std::vector<std::size_t>& indices) {
  std::vector<std::string> items;
  for (auto i : indices) items.push_back(std::to_string(i));
  return join(items, ",");
}

}  // namespace mcmclb
