// SPDX-License-Identifier: BSD-3-Clause
// `mcmclb advise` (apps/advise.hpp): the advice study as a sweep of the simulation launcher, then the ranking.
//
// The study is the workload under every registered balancer (each with its default creation method) and finished
// rule, crossed with what the workload leaves open: for a trace, its speed-up past the largest measured group size
// (workload.extrapolate: flat, amdahl, perfect) and the map of its C recorded chains onto the study's chains
// (tile, and `draws` seeded draws); for another model, `draws` seeds of it. A set-up whose groups never grow (none,
// steal, stealrandom) runs under the first assumption only when its groups are no larger than every measured size,
// since the others cannot change it. Each combination of those is a scenario; a set-up's score in a scenario is its
// simulated time over none's in the same scenario. The set-ups are ranked by the median of their scores; the
// winner is robust when it is fastest in every scenario, else the verdict names what it depends on.
#include "advise.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "compare.hpp"
#include "driver.hpp"
#include "launchers.hpp"
#include "mcmclb/balancer.hpp"
#include "mcmclb/config.hpp"
#include "mcmclb/input_error.hpp"
#include "mcmclb/provenance.hpp"
#include "mcmclb/runs_csv.hpp"
#include "mcmclb/stats.hpp"
#include "mcmclb/study.hpp"
#include "mcmclb/text.hpp"
#include "mcmclb/trace.hpp"
#include "mcmclb/workload.hpp"
#include "sweep.hpp"

namespace mcmclb {

namespace {

namespace fs = std::filesystem;

constexpr const char* kAllowed =
    "allowed: mcmclb advise TRACE.csv|STUDY.yaml --ranks P[,P...] [--group-size G] [--chains-per-group W] "
    "[--balancers B[,B...]] [--draws N] [--tolerance PCT] [--platform FILE] [--sim-binary FILE] [--out DIR] "
    "[--jobs N] [--dry-run]";

struct Options {
  std::string input;  // a trace file or a study file
  std::vector<long> ranks;
  long group_size = 0;  // 0: 1 for a trace, the study's own G for a study file
  long chains_per_group = 0;
  std::vector<std::string> balancers;  // empty: every registered one
  long draws = 3;
  double tolerance_pct = 5;
  std::string platform, sim_binary, out;
  long jobs = 0;  // 0: the host's cores
  bool dry_run = false;
  std::string command_line;
};

bool is_study_file(const std::string& path) {
  const std::string ext = fs::path(path).extension().string();
  return ext == ".yaml" || ext == ".yml";
}

Options parse(const std::vector<std::string>& args, const std::string& command_line) {
  Options o;
  o.command_line = command_line;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= args.size()) throw InputError(a + ": missing value (" + kAllowed + ")");
      if (!seen.insert(a).second) throw InputError(a + ": given twice (allowed: once)");
      return args[++i];
    };
    if (a == "--ranks") {
      o.ranks = parse_integer_list(a, value(), 2, 1 << 20, "a rank count");
    } else if (a == "--group-size") {
      o.group_size = parse_integer_flag(a, value(), 1, 1 << 20, "a group size");
    } else if (a == "--chains-per-group") {
      o.chains_per_group = parse_integer_flag(a, value(), 1, kMaxChainsPerGroup, "a number of chains");
    } else if (a == "--balancers") {
      const std::string v = value();
      std::vector<std::string_view> known;
      for (const auto& b : balancer_entries()) known.push_back(b.info.name);
      for (std::size_t start = 0;;) {
        const std::size_t comma = v.find(',', start);
        const std::string name = v.substr(start, comma - start);
        if (std::find(known.begin(), known.end(), name) == known.end()) {
          throw InputError("--balancers: unknown balancer '" + printable(name) + "' (allowed: " + join(known) + ")");
        }
        o.balancers.push_back(name);
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
    } else if (a == "--draws") {
      o.draws = parse_integer_flag(a, value(), 0, 100, "a number of seeded draws");
    } else if (a == "--tolerance") {
      const std::string v = value();
      char* end = nullptr;
      o.tolerance_pct = std::strtod(v.c_str(), &end);
      if (v.empty() || end != v.c_str() + v.size() || !(o.tolerance_pct >= 0 && o.tolerance_pct <= 100)) {
        throw InputError("--tolerance: '" + printable(v) + "' is not a percentage in [0, 100]");
      }
    } else if (a == "--platform") {
      o.platform = require_path(a, value());
    } else if (a == "--sim-binary") {
      o.sim_binary = require_path(a, value());
    } else if (a == "--out") {
      o.out = require_path(a, value());
    } else if (a == "--jobs") {
      o.jobs = parse_integer_flag(a, value(), 1, 1024, "a number of simulations at once");
    } else if (a == "--dry-run") {
      o.dry_run = true;
    } else if (a.rfind("--", 0) == 0) {
      throw InputError("unknown flag " + printable(a) + " (" + kAllowed + ")");
    } else if (o.input.empty()) {
      o.input = require_path("TRACE.csv|STUDY.yaml", a);
    } else {
      throw InputError("a second workload '" + printable(a) + "' (" + kAllowed + ")");
    }
  }
  if (o.input.empty()) throw InputError(std::string("missing TRACE.csv or STUDY.yaml (") + kAllowed + ")");
  if (o.ranks.empty()) throw InputError(std::string("--ranks: required (") + kAllowed + ")");
  if (o.jobs == 0) o.jobs = std::max(1U, std::thread::hardware_concurrency());
  if (o.balancers.empty()) {
    for (const auto& b : balancer_entries()) o.balancers.emplace_back(b.info.name);
  }
  if (std::find(o.balancers.begin(), o.balancers.end(), "none") == o.balancers.end()) {
    o.balancers.insert(o.balancers.begin(), "none");  // every score is a time over none's
  }
  return o;
}

/// A YAML flow list of the items, e.g. [64, 1024].
std::string flow_list(const std::vector<std::string>& items) { return "[" + join(items, ", ") + "]"; }

/// A YAML double-quoted scalar of text (control characters are refused by the study's own checks).
std::string quoted(const std::string& text) {
  std::string q = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') q += '\\';
    q += c;
  }
  return q + "\"";
}

/// What the advice study is: its text (the workload's study with the keys advise sets), written into the output
/// folder for the sweep to read, and what it assumed and skipped, in words.
struct Plan {
  std::string study_path;  // OUT/advise-study.yaml
  std::string study_text;
  std::vector<std::pair<std::string, std::string>> keys;  // dotted key, YAML value
  std::vector<std::string> assumptions;                   // what the scenarios vary, one phrase each
  std::vector<std::string> skipped;                       // what it does not run, and why
  std::string workload;                                   // "trace file X (fnv1a64 ...)" or the model
};

/// The advice study for o, not yet written anywhere. Throws InputError for a workload it cannot advise on.
Plan make_plan(const Options& o) {
  Plan p;
  std::vector<std::string> ranks;
  for (const long r : o.ranks) ranks.push_back(std::to_string(r));
  p.keys.emplace_back("nprocs", flow_list(ranks));
  p.keys.emplace_back("reps", "1");  // a simulation is deterministic: a second repetition repeats the first
  p.keys.emplace_back("balancer", flow_list(o.balancers));
  p.keys.emplace_back("interval", "[1, 16]");
  p.keys.emplace_back("finished", "[retire, coalesce, pays]");
  // Each balancer with its interval of the scaling studies (configs/trace-lj-scale.yaml): collective every 16
  // items, the planners looking one item ahead.
  std::vector<std::string> exclude = {"{balancer: collective, interval: 1}", "{balancer: lookahead, interval: 16}",
                                      "{balancer: mostwork, interval: 16}", "{balancer: stealmerge, interval: 16}"};
  p.skipped.push_back(
      "collective(1): it stops every rank after each item, the costliest set-up to simulate; collective(16) stands "
      "for the collective family");
  p.skipped.push_back(
      "creation methods other than each balancer's default (docs/guide/commbench.md compares them): a method "
      "changes only what a merge costs");
  if (o.group_size > 0) p.keys.emplace_back("G", std::to_string(o.group_size));
  if (o.chains_per_group > 0) p.keys.emplace_back("chains_per_group", std::to_string(o.chains_per_group));
  std::vector<std::string> maps = {"tile"}, seeds = {"1"};
  for (long d = 1; d <= o.draws; ++d) {
    maps.emplace_back("draw");
    seeds.push_back(std::to_string(d));
  }
  p.study_path = (fs::path(o.out) / "advise-study.yaml").string();
  std::string base;
  if (!is_study_file(o.input)) {
    const std::string experiment = "advise-" + fs::path(o.input).stem().string();
    base = "experiment: " + quoted(experiment) + "\nworkload: {model: trace, file: " + quoted(o.input) +
           "}\nwork: {mode: sleep}\n";
    if (o.group_size == 0) p.keys.emplace_back("G", "1");
    const auto trace = load_trace(o.input);  // every error of the file, before anything is written
    p.workload =
        "trace file " + o.input + " (fnv1a64 " + trace->fnv1a64() + ", " + std::to_string(trace->chains()) + " chains)";
    p.keys.emplace_back("workload.scaling", "trace");
    p.keys.emplace_back("zip", "{workload.map: " + flow_list(maps) + ", workload.seed: " + flow_list(seeds) + "}");
    p.assumptions.push_back(
        "the chain map: tile" +
        (o.draws > 0 ? " and " + std::to_string(o.draws) + " seeded draws (workload.map, seed)" : std::string()));
    // The sizes the speed-ups were measured at: past the smallest of them, the extrapolation decides.
    int measured = 1 << 30, largest = 1;
    bool any = false;
    for (int c = 0; c < trace->chains(); ++c) {
      if (trace->items(c) == 0) continue;
      measured = std::min(measured, trace->largest_measured(c));
      largest = std::max(largest, trace->largest_measured(c));
      any = any || trace->largest_measured(c) > 1;
    }
    const long largest_rank = *std::max_element(o.ranks.begin(), o.ranks.end());
    if (!any) {
      p.assumptions.push_back("perfect scaling at every group size: the trace gives no speed-ups");
    } else if (largest >= largest_rank) {
      p.assumptions.push_back("none past the measured sizes: the trace gives speed-ups up to " +
                              std::to_string(largest) + " ranks");
    } else {
      p.keys.emplace_back("workload.extrapolate", "[flat, amdahl, perfect]");
      p.assumptions.push_back("the speed-up past the " + std::to_string(measured) +
                              " ranks measured: held (flat), Amdahl's law fitted through the measured sizes "
                              "(amdahl), in proportion to the ranks (perfect)");
      const long g = o.group_size > 0 ? o.group_size : 1;
      if (g <= measured) {
        for (const char* b : {"none", "steal", "stealrandom"}) {
          for (const char* x : {"amdahl", "perfect"}) {
            exclude.push_back(std::string("{balancer: ") + b + ", workload.extrapolate: " + x + "}");
          }
        }
        p.skipped.push_back("none, steal and stealrandom under amdahl and perfect: their groups never grow past " +
                            std::to_string(g) + " ranks, where the speed-ups were measured");
      }
    }
  } else {
    base = launch::read_file(o.input, "study file");
    SweepOptions own;
    own.study = o.input;
    const Study given = launch::load(own, base);  // its own errors first, named as its own
    p.workload = "the workload of study file " + o.input;
    // Seeds only for a seeded model: another has one workload, with nothing drawn to vary.
    if (o.draws > 0 && !given.points.empty() && workload_uses(given.points.front().spec.workload, "seed")) {
      p.keys.emplace_back("workload.seed", flow_list(seeds));
      p.assumptions.push_back("the workload's seed (workload.seed 1 to " + std::to_string(o.draws) + ")");
    }
  }
  p.keys.emplace_back("exclude", flow_list(exclude));
  p.study_text = "# Written by mcmclb advise (" + o.command_line + "): the study it simulates.\n" +
                 with_keys(base, p.keys, o.input);
  return p;
}

/// The columns of a point's configuration key, by name.
std::vector<std::pair<std::string, std::string>> key_columns(const RunSpec& spec) {
  RunRecord record;
  record.spec = spec;
  std::vector<std::pair<std::string, std::string>> fields;
  for (const auto& c : runs_columns()) {
    if (c.is_configuration_key() && c.role == RunsColumn::Role::parameter) fields.emplace_back(c.name, c.get(record));
  }
  return fields;
}

/// The set-up columns: what a user chooses. The others that vary are the scenario.
bool is_setup_column(const std::string& name) {
  return name == "balancer" || name == "interval" || name == "method" || name == "finished";
}

std::string setup_label(const RunSpec& spec) {
  std::string label = run_label(spec);
  const auto& rules = balancer_info(spec.balancer).finished_rules;
  // The default rule too: the table sets retire beside coalesce and pays.
  if (spec.finished && rules.size() > 1 && *spec.finished == rules.front())
    label += " " + std::string(to_string(*spec.finished));
  return label;
}

/// Words for a scenario column in a verdict.
std::string dimension_words(const std::string& column) {
  if (column == "workload_extrapolate") return "the speed-up past the measured sizes";
  if (column == "workload_map") return "the chain map";
  if (column == "workload_seed") return "the workload's seed";
  return column;
}

/// Host seconds one simulation of spec takes: about 0.25 s to start, plus the set-up's host CPU at 1024 ranks
/// grown as P^1.5. The table is the shipped trace's (84 items of 8 chains, G = 1) measured by advise itself on the
/// 2-core development VM (provenance.csv's host_cpu_s, docs/trace-lj/advise): the calibration of `pays` and
/// async's coalescing merges cost most, and stealrandom's random requests most of all.
double host_estimate_s(const RunSpec& spec) {
  const std::string rule = spec.finished ? std::string(to_string(*spec.finished)) : "";
  double at_1024_s = 3.3;
  if (spec.balancer == "stealrandom") {
    at_1024_s = 50;
  } else if (spec.balancer == "async" && rule == "coalesce") {
    at_1024_s = 17;
  } else if (spec.balancer == "async" && rule == "pays") {
    at_1024_s = 12;
  } else if (rule == "pays") {
    at_1024_s = 8;
  }
  return 0.25 + at_1024_s * std::pow(spec.nprocs / 1024.0, 1.5);
}

struct Scored {
  std::string setup;
  const RunSpec* spec = nullptr;
  std::vector<double> vs_none, vs_ideal;
  int best_in = 0;
};

std::string fixed(double v, int digits = 3) {
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", digits, v);
  return text;
}

using Scenario = std::map<std::string, std::string>;  // scenario column -> value

/// One simulation's result: its point, time and ideal, and the scenario it ran under.
struct Cell {
  const Point* point;
  double time_s, ideal_s;
  Scenario scenario;
};

/// A set-up's cell in a scenario: the one that agrees on every column the set-up varies over (none, run under one
/// assumption only, stands for itself under the others).
const Cell* cell_in(const std::vector<Cell>& list, const Scenario& scenario) {
  for (const Cell& c : list) {
    bool agrees = true;
    for (const auto& [name, value] : c.scenario) {
      const bool varies =
          std::any_of(list.begin(), list.end(), [&](const Cell& other) { return other.scenario.at(name) != value; });
      if (varies && scenario.at(name) != value) agrees = false;
    }
    if (agrees) return &c;
  }
  return nullptr;
}

/// The verdict at one rank count, from the set-ups ranked by their median time / none (scored, best first), the
/// fastest set-ups of each scenario (best), every set-up's time per scenario (times) and none's cells: the winner
/// and its margin over the first set-up that differs from it, whether that margin is within tolerance_pct, and
/// whether the winner is robust (fastest in every scenario) or what it depends on.
std::string verdict_of(const std::vector<Scored>& scored, const std::map<Scenario, std::set<std::string>>& best,
                       const std::map<Scenario, std::map<std::string, double>>& times, const std::vector<Cell>& none,
                       double tolerance_pct) {
  if (scored.empty()) return "";
  std::string verdict;
  const Scored& winner = scored.front();
  // Set-ups with the winner's very times in every scenario (collective under pays where no merge pays ties
  // none) are named with it, not as its runner-up.
  std::vector<std::string> tied;
  std::set<std::string> winners = {winner.setup};
  const Scored* runner = nullptr;
  for (std::size_t k = 1; k < scored.size() && runner == nullptr; ++k) {
    const auto& a = winner.vs_none;
    const auto& b = scored[k].vs_none;
    const bool same = a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](double x, double y) {
                        return std::abs(x - y) <= 1e-9 * std::max(x, y);
                      });
    if (same) {
      tied.push_back(scored[k].setup);
      winners.insert(scored[k].setup);
    } else {
      runner = &scored[k];
    }
  }
  verdict = winner.setup + (tied.empty() ? "" : " (tied with " + join(tied) + ")");
  if (runner != nullptr) {
    const double margin_pct = (stats::median(runner->vs_none) / stats::median(winner.vs_none) - 1) * 100;
    verdict += " wins by " + fixed(margin_pct, 1) + " % over " + runner->setup;
    if (margin_pct < tolerance_pct) {
      verdict +=
          "; too close to call: the margin is within the replay's validated error of " + fixed(tolerance_pct, 0) + " %";
    }
  }
  std::size_t won = 0;
  for (const auto& [scenario, labels] : best) {
    won += std::any_of(labels.begin(), labels.end(), [&](const std::string& l) { return winners.count(l) != 0; });
  }
  if (won == best.size()) {
    verdict += "; robust: fastest in all " + std::to_string(best.size()) + " scenarios";
  } else {
    // What it depends on: each scenario column whose values have different winners, the winner of a value
    // being the set-up with the lowest median over the scenarios with that value.
    std::vector<std::string> depends;
    for (const auto& [column, unused] : best.begin()->first) {
      std::set<std::string> values;
      for (const auto& [scenario, labels] : best) values.insert(scenario.at(column));
      std::vector<std::string> per_value;
      std::set<std::string> tops;
      for (const std::string& value : values) {
        std::string top;
        double top_median = 1e300;
        for (const Scored& sc : scored) {
          std::vector<double> sub;
          for (const auto& [scenario, by] : times) {
            if (scenario.at(column) != value || by.count(sc.setup) == 0) continue;
            const auto n = cell_in(none, scenario);
            if (n != nullptr) sub.push_back(by.at(sc.setup) / n->time_s);
          }
          if (!sub.empty() && stats::median(sub) < top_median) {
            top_median = stats::median(sub);
            top = sc.setup;
          }
        }
        tops.insert(top);
        per_value.push_back(value + ": " + top);
      }
      if (tops.size() > 1) depends.push_back(dimension_words(column) + " (" + join(per_value, "; ") + ")");
    }
    // Else: which set-ups are fastest where the winner is not.
    std::vector<std::string> others;
    for (const Scored& sc : scored) {
      if (winners.count(sc.setup) == 0 && sc.best_in > 0) {
        others.push_back(sc.setup + " in " + std::to_string(sc.best_in));
      }
    }
    verdict += "; not robust: fastest in " + std::to_string(won) + " of " + std::to_string(best.size()) +
               " scenarios; " +
               (depends.empty() ? "fastest elsewhere: " + join(others) : "depends on " + join(depends, " and "));
  }
  return verdict;
}

}  // namespace

const csv::Row& advice_header() {
  static const csv::Row h = {
      "nprocs",     "rank",      "setup",          "balancer",     "interval",    "method",
      "finished",   "scenarios", "vs_none_median", "vs_none_min",  "vs_none_max", "vs_ideal_median",
      "best_in",    "verdict",   "backend",        "platform",     "mpi_library", "git_commits",
      "git_commit", "workload",  "assumptions",    "command_line", "utc"};
  return h;
}

int advise_main(const std::vector<std::string>& args) {
  std::vector<std::string> words = {"mcmclb", "advise"};
  words.insert(words.end(), args.begin(), args.end());
  std::string command_line;
  for (const auto& w : words) command_line += (command_line.empty() ? "" : " ") + shell_quote(w);
  Options o = parse(args, command_line);
  if (o.out.empty()) o.out = "results/advise-" + fs::path(o.input).stem().string();
  const Plan plan = make_plan(o);

  SweepOptions sweep;
  sweep.study = launch::not_an_option(plan.study_path);
  sweep.launcher = "smpi";
  sweep.platform = o.platform.empty() ? std::string(MCMCLB_SOURCE_DIR) + "/configs/platforms/bgp.xml" : o.platform;
  sweep.sim_binary = o.sim_binary.empty() ? std::string(MCMCLB_SOURCE_DIR) + "/build-sim/mcmclb-sim" : o.sim_binary;
  sweep.out = launch::not_an_option(o.out);
  sweep.jobs = static_cast<int>(o.jobs);
  sweep.points_per_launch = 1;  // a point that fails or is stopped loses no other; a start-up costs about 0.1 s
  // The whole study, checked before anything is written: the workload, every key, the platform and the build.
  const Study study = launch::load(sweep, plan.study_text);
  launch::check_smpi(sweep, study);
  std::size_t skipped = 0;
  const auto todo =
      launch::points_to_run(sweep, study, sweep.out, launch::recorded_in_output(sweep, study, std::nullopt), skipped);
  std::size_t to_run = 0;
  double estimate_s = 0;
  for (const auto& [nprocs, indices] : todo) {
    to_run += indices.size();
    for (const std::size_t i : indices) estimate_s += host_estimate_s(study.points[i].spec);
  }
  estimate_s /= static_cast<double>(std::min<long>(o.jobs, std::max<std::size_t>(to_run, 1)));
  std::vector<std::string> ranks;
  for (const long r : o.ranks) ranks.push_back(std::to_string(r));
  std::printf("advise: %s at P = %s, simulated on %s\n", plan.workload.c_str(), join(ranks).c_str(),
              platform_identity(sweep.platform).c_str());
  for (const auto& a : plan.assumptions) std::printf("  varies %s\n", a.c_str());
  for (const auto& s : plan.skipped) std::printf("  skips %s\n", s.c_str());
  std::printf(
      "advise: %zu simulations, %zu already in %s, %zu to run, %ld at a time: about %s of wall time here "
      "(estimated from the host time of the shipped trace's simulations, growing as P^1.5)\n",
      study.points.size(), skipped, sweep.out.c_str(), to_run, o.jobs, launch::format_seconds(estimate_s).c_str());
  if (o.dry_run) {
    std::printf("advise: dry run, nothing run or written\n");
    return 0;
  }
  {
    // The study file the launches read, replaced whole under the folder's lock (never seen half written).
    auto store = launch::open_output(sweep, study);
    store.rewrite_file(fs::path(plan.study_path).filename().string(), [&](const fs::path&) { return plan.study_text; });
  }
  const int swept = sweep_main(sweep);

  // The ranking, from what the folder holds for this study's points.
  const auto samples = read_configurations(sweep.out);
  const Backend backend = launch::sweep_backend(sweep);
  std::set<std::string> commits, libraries;
  // Per rank count: set-up -> its points; and which columns vary over the scenarios.
  std::map<int, std::map<std::string, std::vector<Cell>>> cells;
  std::map<int, std::vector<std::string>> setup_order;
  std::set<std::string> scenario_columns;
  std::map<std::string, std::set<std::string>> column_values;
  for (const Point& p : study.points) {
    for (const auto& [name, value] : key_columns(p.spec)) {
      if (!is_setup_column(name) && name != "nprocs") column_values[name].insert(value);
    }
  }
  for (const auto& [name, values] : column_values) {
    if (values.size() > 1) scenario_columns.insert(name);
  }
  std::size_t missing = 0;
  for (const Point& p : study.points) {
    const auto it = samples.find(configuration_key(p.spec, backend));
    if (it == samples.end() || it->second.time_s.empty()) {
      ++missing;
      continue;
    }
    Cell cell{&p, it->second.time_s.front(), it->second.ideal_s.front(), {}};
    for (const auto& [name, value] : key_columns(p.spec)) {
      if (scenario_columns.count(name) != 0) cell.scenario[name] = value;
    }
    // The chain map and its draw's seed are one choice: tile, draw 1, draw 2, ...
    if (const auto seed = cell.scenario.find("workload_seed"); seed != cell.scenario.end()) {
      if (const auto map = cell.scenario.find("workload_map"); map != cell.scenario.end()) {
        if (map->second == "draw") map->second += " " + seed->second;
        cell.scenario.erase(seed);
      }
    }
    const std::string label = setup_label(p.spec);
    auto& of_p = cells[p.spec.nprocs];
    if (of_p.count(label) == 0) setup_order[p.spec.nprocs].push_back(label);
    of_p[label].push_back(cell);
    commits.insert(it->second.git_commits.begin(), it->second.git_commits.end());
    libraries.insert(it->second.mpi_library);
  }
  std::string csv_text = csv::line(advice_header());
  const std::string utc = utc_now();
  for (const auto& [nprocs, by_setup] : cells) {
    // The scenarios: every combination some set-up ran under.
    std::set<Scenario> scenarios;
    std::map<Scenario, double> ideal;
    for (const auto& [label, list] : by_setup) {
      for (const Cell& c : list) {
        scenarios.insert(c.scenario);
        ideal.emplace(c.scenario, c.ideal_s);
      }
    }
    const auto none = by_setup.find("none");
    if (none == by_setup.end()) continue;
    std::vector<Scored> scored;
    std::map<Scenario, std::map<std::string, double>> times;  // scenario -> setup -> s
    for (const std::string& label : setup_order[nprocs]) {
      Scored s{label, &by_setup.at(label).front().point->spec, {}, {}, 0};
      for (const auto& scenario : scenarios) {
        const Cell* c = cell_in(by_setup.at(label), scenario);
        const Cell* n = cell_in(none->second, scenario);
        if (c == nullptr || n == nullptr || n->time_s <= 0) continue;
        s.vs_none.push_back(c->time_s / n->time_s);
        if (ideal.at(scenario) > 0) s.vs_ideal.push_back(c->time_s / ideal.at(scenario));
        times[scenario][label] = c->time_s;
      }
      if (!s.vs_none.empty()) scored.push_back(std::move(s));
    }
    // Fastest per scenario (ties, equal to a part in 10^9, all count).
    std::map<Scenario, std::set<std::string>> best;
    for (const auto& [scenario, by] : times) {
      double fastest = 1e300;
      for (const auto& [label, t] : by) fastest = std::min(fastest, t);
      for (const auto& [label, t] : by) {
        if (t <= fastest * (1 + 1e-9)) best[scenario].insert(label);
      }
    }
    for (Scored& s : scored) {
      for (const auto& [scenario, labels] : best) s.best_in += labels.count(s.setup) != 0 ? 1 : 0;
    }
    std::stable_sort(scored.begin(), scored.end(), [](const Scored& a, const Scored& b) {
      return stats::median(a.vs_none) < stats::median(b.vs_none);
    });
    const std::string verdict = verdict_of(scored, best, times, none->second, o.tolerance_pct);
    std::printf(
        "\nadvice at P = %d (simulated; %zu scenarios; time / none and time / ideal: medians over them, "
        "[min, max])\n",
        nprocs, best.size());
    std::printf("%-4s  %-32s  %-26s  %-10s  %s\n", "rank", "set-up", "time / none [min, max]", "time/ideal",
                "fastest in");
    for (std::size_t k = 0; k < scored.size(); ++k) {
      const Scored& s = scored[k];
      const auto [lo, hi] = std::minmax_element(s.vs_none.begin(), s.vs_none.end());
      std::printf("%-4zu  %-32s  %-26s  %-10s  %d of %zu\n", k + 1, s.setup.c_str(),
                  (fixed(stats::median(s.vs_none)) + " [" + fixed(*lo) + ", " + fixed(*hi) + "]").c_str(),
                  s.vs_ideal.empty() ? "" : fixed(stats::median(s.vs_ideal)).c_str(), s.best_in, best.size());
      const RunSpec& spec = *s.spec;
      csv_text += csv::line({std::to_string(nprocs),
                             std::to_string(k + 1),
                             s.setup,
                             spec.balancer,
                             spec.interval > 0 ? std::to_string(spec.interval) : "",
                             spec.method,
                             spec.finished ? std::string(to_string(*spec.finished)) : "",
                             std::to_string(s.vs_none.size()),
                             csv::number(stats::median(s.vs_none)),
                             csv::number(*lo),
                             csv::number(*hi),
                             s.vs_ideal.empty() ? "" : csv::number(stats::median(s.vs_ideal)),
                             std::to_string(s.best_in),
                             k == 0 ? verdict : "",
                             backend.name,
                             backend.platform,
                             join(libraries, "; "),
                             join(commits, " "),
                             git_commit(),
                             plan.workload,
                             join(plan.assumptions, "; "),
                             o.command_line,
                             utc});
    }
    std::printf("verdict at P = %d: %s\n", nprocs, verdict.c_str());
  }
  std::printf(
      "\nlimits: simulated with SimGrid on %s, a model of a machine, not a measurement; each set-up with its "
      "default creation method; %s. A replay is only as good as its trace: validate it against your program "
      "(docs/guide/your-workload.md).\n",
      platform_identity(sweep.platform).c_str(),
      plan.assumptions.empty() ? "nothing assumed" : ("assumed: " + join(plan.assumptions, "; ")).c_str());
  if (missing > 0)
    std::printf("advise: %zu of %zu simulations have no valid result: see failures.csv\n", missing,
                study.points.size());
  auto store = launch::open_output(sweep, study);
  store.rewrite_file("advice.csv", [&](const fs::path&) { return csv_text; });
  std::printf("advise: wrote %s\n", (fs::path(sweep.out) / "advice.csv").c_str());
  const fs::path script = fs::path(MCMCLB_SOURCE_DIR) / "plots" / "advice.py";
  std::error_code error;
  if (fs::exists(script, error)) {
    const auto [status, lines] =
        launch::run_capturing("python3 " + shell_quote(script.string()) + " " + shell_quote(sweep.out));
    for (const auto& line : lines) std::printf("  | %s\n", line.c_str());
    if (status != 0) std::printf("advise: the figure failed (exit %d); the table above and advice.csv stand\n", status);
  } else {
    std::printf("advise: no figure: %s is not here (an installed mcmclb without its source tree)\n", script.c_str());
  }
  return swept == 0 && missing == 0 ? 0 : 3;
}

}  // namespace mcmclb
