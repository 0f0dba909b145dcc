// SPDX-License-Identifier: BSD-3-Clause
// `mcmclb advise`'s command line and its study (apps/advise_plan.hpp).
#include "advise_plan.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "mcmclb/advice_speedups.hpp"
#include "mcmclb/balancer.hpp"
#include "mcmclb/input_error.hpp"
#include "mcmclb/launch.hpp"
#include "mcmclb/provenance.hpp"
#include "mcmclb/runs_csv.hpp"
#include "mcmclb/stats.hpp"
#include "mcmclb/study.hpp"
#include "mcmclb/text.hpp"
#include "mcmclb/trace.hpp"
#include "mcmclb/workload.hpp"
#include "sweep.hpp"

namespace mcmclb::advising {

namespace fs = std::filesystem;

namespace {

constexpr const char* kAllowed =
    "allowed: mcmclb advise TRACE.csv|STUDY.yaml --ranks P[,P...] [--group-size G] [--chains-per-group W] "
    "[--copies] [--no-race] [--incomplete] [--check] [--check-reps N] [--balancers B[,B...]] [--draws N] [--tolerance "
    "PCT] "
    "[--platform FILE] "
    "[--sim-binary FILE] [--smpi-flags FILE] [--out DIR] "
    "[--jobs N] [--launcher local|slurm] [--partition NAME] [--account NAME] [--dry-run]";

/// "1 chain", "3 chains".
std::string plural(long n, const std::string& noun) { return std::to_string(n) + " " + noun + (n == 1 ? "" : "s"); }

bool is_study_file(const std::string& path) {
  const std::string ext = fs::path(path).extension().string();
  return ext == ".yaml" || ext == ".yml";
}

/// The scenarios a trace leaves open, into the plan: their keys, what they assume and skip, their exclude rules.
void add_scenarios(Plan& p, const advice::TraceScenarios& s, std::vector<std::string>& exclude) {
  p.keys.insert(p.keys.end(), s.keys.begin(), s.keys.end());
  p.assumptions.insert(p.assumptions.end(), s.assumptions.begin(), s.assumptions.end());
  p.skipped.insert(p.skipped.end(), s.skipped.begin(), s.skipped.end());
  exclude.insert(exclude.end(), s.exclude.begin(), s.exclude.end());
  p.first_extrapolate = s.first_extrapolate;
  p.measured_up_to = s.measured_up_to;
}

/// The trace file read and checked before anything is written: refused when incomplete (unless --incomplete) or
/// without work; a speed-up below 1 or falling with the ranks adds a warning.
auto checked_trace(const Options& o, std::vector<std::string>& warnings) {
  auto trace = load_trace(o.input);  // every error of the file
  if (trace->incomplete() && !o.incomplete) {
    throw InputError(printable(o.input, 200) +
                     ": an incomplete trace: its recording did not end (the run failed or was killed), so its last "
                     "chains may be cut short (allowed: a finished recording, or --incomplete to advise on it)");
  }
  double work_s = 0;
  for (int c = 0; c < trace->chains(); ++c) work_s += trace->chain_single_rank_s(c);
  if (!(work_s > 0)) {
    throw InputError(printable(o.input, 200) +
                     ": no work to balance: every item costs 0 s (allowed: a trace with some item's seconds > 0)");
  }
  // Speed-ups below 1, or falling as the group grows, are legal (a chain that communicates more than it computes)
  // but often a recording's mistake: one line says where, and the advice goes on.
  std::vector<std::string> odd;
  for (int c = 0; c < trace->chains(); ++c) {
    const auto& ups = trace->measured_speedups(c);
    for (std::size_t k = 0; k < ups.size(); ++k) {
      if (ups[k].second < 1 || ups[k].second < (k == 0 ? 1.0 : ups[k - 1].second)) {
        odd.push_back("chain " + std::to_string(c) + ": " + fixed_significant(ups[k].second) + " at " +
                      std::to_string(ups[k].first) + " ranks");
        break;
      }
    }
  }
  if (!odd.empty()) {
    warnings.push_back(printable(o.input, 200) + ": a speed-up below 1 or falling with the ranks (" +
                       join(std::vector<std::string>(odd.begin(), odd.begin() + std::min<std::size_t>(odd.size(), 3))) +
                       (odd.size() > 3 ? ", and " + std::to_string(odd.size() - 3) + " more" : std::string()) +
                       "): taken as recorded; check the recording if the chains should scale");
  }
  return trace;
}

}  // namespace

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
    } else if (a == "--smpi-flags") {
      o.smpi_flags = require_path(a, value());
    } else if (a == "--out") {
      o.out = require_path(a, value());
    } else if (a == "--jobs") {
      o.jobs = parse_integer_flag(a, value(), 1, 1024, "a number of simulations at once");
    } else if (a == "--launcher") {
      o.launcher = value();
      if (o.launcher != "local" && o.launcher != "slurm") {
        throw InputError("--launcher: '" + printable(o.launcher) + "' is not allowed (allowed: local, slurm)");
      }
    } else if (a == "--partition" || a == "--account") {
      std::string& field = a == "--partition" ? o.partition : o.account;
      field = value();
      if (field.empty() ||
          field.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") !=
              std::string::npos) {
        throw InputError(a + ": '" + printable(field) + "' is not a Slurm name (allowed: letters, digits, _ . -)");
      }
    } else if (a == "--dry-run") {
      o.dry_run = true;
    } else if (a == "--no-race") {
      o.race = false;
    } else if (a == "--incomplete") {
      o.incomplete = true;
    } else if (a == "--copies") {
      o.copies = true;
    } else if (a == "--check") {
      if (o.check_reps == 0) o.check_reps = 10;
    } else if (a == "--check-reps") {
      o.check_reps = parse_integer_flag(a, value(), static_cast<long>(stats::kMinCiSamples), 100,
                                        "a number of real repetitions (at least 6, for the medians' intervals)");
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
  if ((!o.partition.empty() || !o.account.empty()) && o.launcher != "slurm") {
    throw InputError("--partition and --account: only with --launcher slurm");
  }
  if (o.launcher == "slurm" && o.check_reps > 0) {
    throw InputError(
        "--check: not with --launcher slurm (the check replays the trace for real on this host, a core per rank; "
        "run it without --launcher slurm, where the host may run MPI)");
  }
  if (o.jobs == 0) o.jobs = o.launcher == "slurm" ? 16 : std::max(1U, std::thread::hardware_concurrency());
  // A group size or chains per group asks for groups the recorded walkers do not have: copies fill them.
  if (o.group_size > 0 || o.chains_per_group > 0) o.copies = true;
  if (o.check_reps > 0 && is_study_file(o.input)) {
    throw InputError("--check: only for a trace file (it replays the trace for real; allowed: a trace)");
  }
  if (o.balancers.empty()) {
    for (const auto& b : balancer_entries()) o.balancers.emplace_back(b.info.name);
  }
  if (std::find(o.balancers.begin(), o.balancers.end(), "none") == o.balancers.end()) {
    o.balancers.insert(o.balancers.begin(), "none");  // every score is a time over none's
  }
  return o;
}

/// A study's experiment name from a file's stem: what the name may not hold becomes '-' (a trace named
/// "with space.csv" is advised as advise-with-space).
std::string experiment_of(const std::string& input) {
  std::string name = "advise-" + fs::path(input).stem().string();
  for (char& c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '.' && c != '_' && c != '-') c = '-';
  }
  return name.substr(0, 64);
}

/// The folder an advice goes to unless --out says: named after the workload, the rank counts and any group size or
/// chains per group given, so that advice on other rank counts or groups never resumes into it.
std::string default_out(const Options& o) {
  std::string name = "results/" + experiment_of(o.input) + "-P";
  for (std::size_t k = 0; k < o.ranks.size(); ++k) name += (k == 0 ? "" : "-") + std::to_string(o.ranks[k]);
  if (o.copies) name += "-copies";
  if (o.group_size > 0) name += "-G" + std::to_string(o.group_size);
  if (o.chains_per_group > 0) name += "-W" + std::to_string(o.chains_per_group);
  return name;
}

/// The simulation build's mcmclb-sim when --sim-binary is not given: in build-sim/ of the source tree, or beside
/// this program's own build folder. None: one line saying the command that makes it.
std::string simulation_build() {
  std::vector<fs::path> candidates = {fs::path(MCMCLB_SOURCE_DIR) / "build-sim" / "mcmclb-sim"};
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error);
  if (!error) candidates.push_back(self.parent_path().parent_path() / "build-sim" / "mcmclb-sim");
  for (const auto& c : candidates) {
    if (fs::is_regular_file(c, error)) return c.string();
  }
  const std::string src = MCMCLB_SOURCE_DIR;
  throw InputError("advise needs the simulation build, and " + candidates.front().string() +
                   " does not exist (make it: cmake -S " + src + " -B " + src +
                   "/build-sim -DMCMCLB_SMPI=ON && cmake --build " + src +
                   "/build-sim --target mcmclb; or pass --sim-binary FILE)");
}

/// v with three significant digits, e.g. 0.0161 or 55.2.
std::string fixed_significant(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", v);
  return text;
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

/// How many of the C recorded walkers a replay of n walkers replays, and how often: each map replays every
/// recorded walker once in each C walkers (mcmclb/trace.hpp, TraceMap).
std::string replayed_words(long n, long c) {
  if (n < c) return std::to_string(n) + " of the " + std::to_string(c) + " recorded";
  if (n == c) return "the " + std::to_string(c) + " recorded, each once";
  const long lo = n / c, hi = (n + c - 1) / c;
  return "copies of the " + std::to_string(c) + " recorded, each replayed " + std::to_string(lo) +
         (lo == hi ? "" : " or " + std::to_string(hi)) + " times";
}

/// The question an advice answers at P ranks, in words: whose walkers, on how many ranks, in what groups.
std::string walkers_words(const Plan& plan, int nprocs) {
  if (plan.trace_chains == 0) return "the study file's walkers on " + std::to_string(nprocs) + " ranks";
  if (!plan.copies) {
    const std::vector<int> sizes = count_sizes(nprocs, plan.trace_chains);
    const int lo = sizes.back(), hi = sizes.front();
    std::string words = plural(plan.trace_chains, "walker") + " on " + std::to_string(nprocs) + " ranks (" +
                        (hi == 1 ? std::string("one rank each")
                                 : "groups of " + std::to_string(lo) + (lo == hi ? "" : "-" + std::to_string(hi))) +
                        "), as recorded";
    if (plan.idle_chains > 0) words += ", " + std::to_string(plan.idle_chains) + " of them without items";
    return words;
  }
  const long walkers = nprocs / plan.group_size * plan.chains_per_group;
  const std::string group = plan.group_size == 1 ? "one rank" : std::to_string(plan.group_size) + " ranks";
  return plural(walkers, "walker") + " on " + std::to_string(nprocs) + " ranks (" +
         (plan.chains_per_group == 1 ? (plan.group_size == 1 ? std::string("one rank each") : "groups of " + group)
          : plan.group_size == 1     ? std::to_string(plan.chains_per_group) + " per rank"
                                     : std::to_string(plan.chains_per_group) + " per group of " + group) +
         "), " + replayed_words(walkers, plan.trace_chains);
}

/// The text of the advice study: the workload's with the plan's keys, or (first_only) its first scenario alone (the
/// plan's first speed-up rule and the tile map), the race's first round; extra_exclude: set-ups dropped by it.
std::string study_text(const Plan& p, const Options& o, bool first_only,
                       const std::vector<std::string>& extra_exclude) {
  auto keys = p.keys;
  for (auto& [key, value] : keys) {
    if (first_only && key == "workload.extrapolate") value = "[" + p.first_extrapolate + "]";
    if (first_only && key == "zip") value = "{workload.map: [tile], workload.seed: [1]}";
    if (first_only && key == "workload.seed") value = "[1]";
    if (first_only && key == "workload.speedups") value = "[median]";
    if (key == "exclude" && !extra_exclude.empty()) {
      value = value.substr(0, value.size() - 1) + (value.size() > 2 ? ", " : "") + join(extra_exclude, ", ") + "]";
    }
  }
  return "# Written by mcmclb advise (" + o.command_line +
         "): " + (first_only ? "the first round of its race, one scenario.\n" : "the study it simulates.\n") +
         with_keys(p.base, keys, o.input);
}

/// The study's exclude rules that give each of the balancers its interval of the scaling studies
/// (configs/trace-lj-scale.yaml): collective every 16 items, the planners looking one item ahead.
std::vector<std::string> interval_excludes(const std::vector<std::string>& balancers) {
  std::vector<std::string> rules;
  for (const std::string& b : balancers) {
    if (b == "collective") rules.emplace_back("{balancer: collective, interval: 1}");
    if (b == "lookahead" || b == "mostwork" || b == "stealmerge")
      rules.push_back("{balancer: " + b + ", interval: 16}");
  }
  return rules;
}

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
  std::vector<std::string> exclude = interval_excludes({"collective", "lookahead", "mostwork", "stealmerge"});
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
    const std::string experiment = experiment_of(o.input);
    base = "experiment: " + quoted(experiment) + "\nworkload: {model: trace, file: " + quoted(o.input) +
           "}\nwork: {mode: sleep}\n";
    const auto trace = checked_trace(o, p.warnings);  // before anything is written
    p.trace_chains = trace->chains();
    p.copies = o.copies;
    p.group_size = o.group_size > 0 ? o.group_size : 1;
    p.chains_per_group = o.chains_per_group > 0 ? o.chains_per_group : 1;
    for (int c = 0; c < trace->chains(); ++c) p.idle_chains += trace->items(c) == 0 ? 1 : 0;
    p.workload =
        "trace file " + o.input + " (fnv1a64 " + trace->fnv1a64() + ", " + plural(trace->chains(), "chain") + ")";
    p.keys.emplace_back("workload.scaling", "trace");
    const long fewest_ranks = *std::min_element(o.ranks.begin(), o.ranks.end());
    if (o.copies) {
      // More walkers than recorded: each group replays a recorded chain in turn (tile) or drawn, so the chain map
      // is a scenario.
      if (o.group_size == 0) p.keys.emplace_back("G", "1");
      p.keys.emplace_back("zip", "{workload.map: " + flow_list(maps) + ", workload.seed: " + flow_list(seeds) + "}");
      p.assumptions.push_back(
          "the chain map: tile" +
          (o.draws > 0 ? " and " + plural(o.draws, "seeded draw") + " (workload.map, seed)" : std::string()));
    } else {
      // The user's own walkers: one group per recorded chain, of nearly equal sizes, each chain replayed once.
      if (fewest_ranks < trace->chains()) {
        throw InputError("--ranks: " + std::to_string(fewest_ranks) + " ranks for the " +
                         plural(trace->chains(), "walker") + " of " + printable(o.input, 200) +
                         " (allowed: at least one rank per walker, or --copies to advise copies of them)");
      }
      p.keys.emplace_back("groups.count", std::to_string(trace->chains()));
    }
    // The sizes the speed-ups were measured at: past the smallest of them, the extrapolation decides. The
    // largest initial group of any rank count: a set-up that never merges works at that size only.
    advice::ScenarioQuestion q;
    q.largest_rank = *std::max_element(o.ranks.begin(), o.ranks.end());
    q.largest_group =
        o.copies ? (o.group_size > 0 ? o.group_size : 1) : (q.largest_rank + trace->chains() - 1) / trace->chains();
    q.tolerance = o.tolerance_pct / 100;
    add_scenarios(p, advice::trace_scenarios(*trace, q), exclude);
  } else {
    if (o.copies) {
      throw InputError("--copies: only for a trace file (a study file's groups are its own; allowed: a trace)");
    }
    base = launch::read_file(o.input, "study file");
    SweepOptions own;
    own.study = o.input;
    const Study given = launch::load(own, base);  // its own errors first, named as its own
    p.workload = "the workload of study file " + o.input;
    const bool replays = !given.points.empty() && given.points.front().spec.workload.model == "trace";
    if (replays) {
      // A replay leaves open what a trace file leaves open: the speed-up past the measured sizes and, where the
      // study runs more chains than the trace holds (copies), how they map onto them. Its seed alone changes
      // nothing under the tile map, so it is not varied by itself.
      const RunSpec& first = given.points.front().spec;
      const auto trace = load_trace(first.workload.file);
      long largest_rank = 1;
      bool copies = false;
      for (const Point& pt : given.points) {
        largest_rank = std::max<long>(largest_rank, pt.spec.nprocs);
        const GroupsSpec& g = pt.spec.groups;
        const long groups = g.by == GroupsSpec::By::G       ? pt.spec.nprocs / std::max(1, pt.spec.G)
                            : g.by == GroupsSpec::By::sizes ? static_cast<long>(g.sizes.size())
                            : g.by == GroupsSpec::By::count ? g.count
                                                            : 0;
        copies = copies || groups * pt.spec.workload.chains_per_group > trace->chains();
      }
      advice::ScenarioQuestion q;
      q.largest_rank = largest_rank;
      q.speedups_given = base.find("workload.speedups") != std::string::npos;  // never over an end of its own
      q.tolerance = o.tolerance_pct / 100;
      add_scenarios(p, advice::trace_scenarios(*trace, q), exclude);
      if (copies && o.draws > 0 && base.find("zip") == std::string::npos) {  // never over a zip of its own
        p.keys.emplace_back("zip", "{workload.map: " + flow_list(maps) + ", workload.seed: " + flow_list(seeds) + "}");
        p.assumptions.push_back("the chain map of the study's copies: tile and " + plural(o.draws, "seeded draw"));
      }
    } else if (o.draws > 0 && !given.points.empty() && workload_uses(given.points.front().spec.workload, "seed")) {
      // Seeds only for a seeded model: another has one workload, with nothing drawn to vary.
      p.keys.emplace_back("workload.seed", flow_list(seeds));
      p.assumptions.push_back("the workload's seed (workload.seed 1 to " + std::to_string(o.draws) + ")");
    }
  }
  p.keys.emplace_back("exclude", flow_list(exclude));
  p.base = base;
  p.study_text = study_text(p, o, false, {});
  return p;
}

}  // namespace mcmclb::advising
