// SPDX-License-Identifier: BSD-3-Clause
// `mcmclb advise` (apps/advise.hpp): the advice study as a sweep of the simulation launcher, then the ranking.
//
// The study is the workload under every registered balancer (each with its default creation method) and finished
// rule, crossed with what the workload leaves open: for a trace, its speed-up past the largest measured group size
// (workload.extrapolate: flat, amdahl, perfect) and, when it advises copies of the walkers (--copies), the map of
// its C recorded chains onto the study's chains (tile, and `draws` seeded draws); for another model, `draws` seeds of
// it. By default a trace's C walkers run on P ranks in C groups (groups.count). A set-up whose groups never grow
// (none, steal, stealrandom) runs under the first assumption only when its groups are no larger than every measured
// size, since the others cannot change it. Each combination is a scenario. The ranking and the verdict are the rule
// of apps/advice_rule.hpp: whole times (the calibration of pays and the initial groups' creation included), minimax
// regret. With --check, the tolerance of that rule is measured: the replay run for real at a core per rank against its
// simulation.
#include "advise.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
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

#include "advice_rule.hpp"
#include "compare.hpp"
#include "driver.hpp"
#include "mcmclb/balancer.hpp"
#include "mcmclb/config.hpp"
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

namespace mcmclb {

namespace {

namespace fs = std::filesystem;

constexpr const char* kAllowed =
    "allowed: mcmclb advise TRACE.csv|STUDY.yaml --ranks P[,P...] [--group-size G] [--chains-per-group W] "
    "[--copies] [--no-race] [--incomplete] [--check] [--check-reps N] [--balancers B[,B...]] [--draws N] [--tolerance "
    "PCT] "
    "[--platform FILE] "
    "[--sim-binary FILE] [--smpi-flags FILE] [--out DIR] "
    "[--jobs N] [--launcher local|slurm] [--partition NAME] [--account NAME] [--dry-run]";

struct Options {
  std::string input;  // a trace file or a study file
  std::vector<long> ranks;
  long group_size = 0;  // 0: 1 for a trace, the study's own G for a study file
  long chains_per_group = 0;
  std::vector<std::string> balancers;  // empty: every registered one
  long draws = 3;
  double tolerance_pct = 5;
  std::string platform, sim_binary, smpi_flags, out;
  long jobs = 0;  // 0: the host's cores; with --launcher slurm, the tasks of each job (its simulations at once)
  std::string launcher = "local";  // local: simulations on this host; slurm: job steps of batch jobs
  std::string partition, account;  // slurm: sbatch's --partition and --account, when given
  bool dry_run = false;
  bool copies = false;      // advise P / G * W copies of the recorded walkers instead of the walkers themselves
  bool race = true;         // race the set-ups: drop after the first scenario those that cannot be robust
  bool incomplete = false;  // advise on a trace whose recording did not end (its finished chains, its cut ones)
  long check_reps = 0;  // --check: real repetitions per set-up of the replay checked against its simulation (0: none)
  std::string command_line;
};

/// "1 chain", "3 chains".
std::string plural(long n, const std::string& noun) { return std::to_string(n) + " " + noun + (n == 1 ? "" : "s"); }

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

/// What the advice study is: its text (the workload's study with the keys advise sets), written into the output
/// folder for the sweep to read, and what it assumed and skipped, in words.
struct Plan {
  std::string study_path;  // OUT/advise-study.yaml
  std::string study_text;
  std::vector<std::pair<std::string, std::string>> keys;  // dotted key, YAML value
  std::vector<std::string> assumptions;                   // what the scenarios vary, one phrase each
  std::vector<std::string> skipped;                       // what it does not run, and why
  std::vector<std::string> warnings;                      // what looks wrong in the workload, accepted
  std::string base;                                       // the workload's study before the keys
  // The race's first speed-up rule: perfect, where merging gains most and the set-ups differ most, unless none
  // runs under flat only (its groups never pass the measured sizes), since every regret needs none's time.
  std::string first_extrapolate = "perfect";
  std::string workload;       // "trace file X (fnv1a64 ...)" or the model
  int trace_chains = 0;       // a trace's walkers (0: a study file)
  int idle_chains = 0;        // of those, the ones without items
  bool copies = false;        // --copies: P / G * W walkers, not the recorded ones
  long group_size = 1;        // G of the copies
  long chains_per_group = 1;  // W
};

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
         "), " + (walkers == plan.trace_chains ? "the " : "copies of the ") + std::to_string(plan.trace_chains) +
         " recorded";
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
    if (key == "exclude" && !extra_exclude.empty()) {
      value = value.substr(0, value.size() - 1) + (value.size() > 2 ? ", " : "") + join(extra_exclude, ", ") + "]";
    }
  }
  return "# Written by mcmclb advise (" + o.command_line +
         "): " + (first_only ? "the first round of its race, one scenario.\n" : "the study it simulates.\n") +
         with_keys(p.base, keys, o.input);
}

/// The group sizes a trace's speed-ups were measured up to, over its chains with items: the smallest such size
/// (past it, the extrapolation decides), the largest, and whether any chain was measured past one rank.
struct MeasuredSizes {
  int smallest = 1 << 30, largest = 1;
  bool any = false;
};
MeasuredSizes measured_sizes(const Trace& trace) {
  MeasuredSizes m;
  for (int c = 0; c < trace.chains(); ++c) {
    if (trace.items(c) == 0) continue;
    m.smallest = std::min(m.smallest, trace.largest_measured(c));
    m.largest = std::max(m.largest, trace.largest_measured(c));
    m.any = m.any || trace.largest_measured(c) > 1;
  }
  return m;
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
    const auto trace = load_trace(o.input);  // every error of the file, before anything is written
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
      p.warnings.push_back(
          printable(o.input, 200) + ": a speed-up below 1 or falling with the ranks (" +
          join(std::vector<std::string>(odd.begin(), odd.begin() + std::min<std::size_t>(odd.size(), 3))) +
          (odd.size() > 3 ? ", and " + std::to_string(odd.size() - 3) + " more" : std::string()) +
          "): taken as recorded; check the recording if the chains should scale");
    }
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
    // The sizes the speed-ups were measured at: past the smallest of them, the extrapolation decides.
    const auto [measured, largest, any] = measured_sizes(*trace);
    const long largest_rank = *std::max_element(o.ranks.begin(), o.ranks.end());
    if (!any) {
      p.assumptions.push_back("perfect scaling at every group size: the trace gives no speed-ups");
    } else if (largest >= largest_rank) {
      p.assumptions.push_back("nothing past the measured sizes: the trace gives speed-ups up to " +
                              std::to_string(largest) + " ranks");
    } else {
      p.keys.emplace_back("workload.extrapolate", "[flat, amdahl, perfect]");
      p.assumptions.push_back("the speed-up past the " + std::to_string(measured) +
                              " ranks measured: held (flat), Amdahl's law fitted through the measured sizes "
                              "(amdahl), in proportion to the ranks (perfect)");
      // The largest initial group of any rank count: a set-up that never merges works at that size only.
      const long g =
          o.copies ? (o.group_size > 0 ? o.group_size : 1) : (largest_rank + trace->chains() - 1) / trace->chains();
      if (g <= measured) {
        p.first_extrapolate = "flat";
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
      const MeasuredSizes sizes = measured_sizes(*trace);
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
      if (sizes.any && sizes.smallest < largest_rank) {
        p.keys.emplace_back("workload.extrapolate", "[flat, amdahl, perfect]");
        p.assumptions.push_back("the speed-up past the " + std::to_string(sizes.smallest) +
                                " ranks measured: flat, amdahl, perfect (workload.extrapolate)");
      }
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

std::string fixed(double v, int digits = 3) {
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", digits, v);
  return text;
}

using Scenario = std::map<std::string, std::string>;  // scenario column -> value

/// One simulation's result: its point, time and ideal, and the scenario it ran under.
struct Cell {
  const Point* point;
  double time_s, once_s;  // once_s: what it adds before its run, its calibration and initial groups' creation
  Scenario scenario;
};

/// A scenario's weight in the medians, a stated choice: every value of a dimension weighs the same, and the chain
/// map has two values, tile and drawn, the draws sharing the drawn half equally (three draws do not outweigh the
/// tile map 3 : 1).
double scenario_weight(const Scenario& scenario, long draws) {
  const auto map = scenario.find("workload_map");
  if (map == scenario.end() || draws == 0) return 1;
  return map->second == "tile" ? 0.5 : 0.5 / static_cast<double>(draws);
}

/// A set-up's family: its balancer with the interval (the label's first word); its variants differ in the rule.
std::string family_of(const std::string& label) { return label.substr(0, label.find(' ')); }

/// text cut into lines of at most width characters at spaces, each after indent.
std::string wrapped(const std::string& text, std::size_t width, const std::string& indent) {
  std::string out, line;
  std::istringstream words(text);
  for (std::string word; words >> word;) {
    if (!line.empty() && indent.size() + line.size() + 1 + word.size() > width) {
      out += indent + line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) out += indent + line + "\n";
  return out;
}

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

/// The race's first scenario in words, as scenario_words names scenarios.
std::string first_scenario_words(const Plan& plan) {
  std::vector<std::string> parts;
  for (const auto& [key, value] : plan.keys) {
    if (key == "workload.extrapolate") parts.push_back("extrapolate " + plan.first_extrapolate);
    if (key == "zip") parts.emplace_back("map tile");
    if (key == "workload.seed") parts.emplace_back("seed 1");
  }
  return join(parts);
}

/// Whether the plan varies anything: more than one scenario, so that racing can save simulations.
bool varies_scenarios(const Plan& plan) {
  return std::any_of(plan.keys.begin(), plan.keys.end(), [](const auto& k) {
    return k.first == "workload.extrapolate" || k.first == "zip" || k.first == "workload.seed";
  });
}

/// A set-up the race dropped at a rank count: its whole time in the first scenario, its regret there (a lower
/// bound of its largest regret) and its whole time over none's.
struct Dropped {
  std::string label;
  RunSpec spec;
  double whole_s, regret, vs_none;
};

/// A configuration's one-off costs: each run's calibration and the creation of its initial groups, which a user
/// waits for too before the run's clock starts.
std::vector<double> once_s(const ConfigurationSamples& c) {
  std::vector<double> once;
  for (std::size_t k = 0; k < c.time_s.size(); ++k) once.push_back(c.calibration_s[k] + c.setup_s[k]);
  return once;
}

/// A configuration's whole times: each run's time plus its one-off costs.
std::vector<double> whole_s(const ConfigurationSamples& c) {
  std::vector<double> w = once_s(c);
  for (std::size_t k = 0; k < c.time_s.size(); ++k) w[k] += c.time_s[k];
  return w;
}

/// The samples with their initial groups priced alike. Every set-up of a rank count makes the same initial groups
/// (the same G and chains), whatever creation method it names, and a user would make them the cheapest way: so each
/// set-up is charged the cheapest creation any of them measured there. Before, `none` paid MPI_Comm_split's and a
/// set-up creating by `range` nothing, which alone decided some verdicts.
std::map<std::string, ConfigurationSamples> initial_groups_priced_alike(
    std::map<std::string, ConfigurationSamples> samples, const Study& study, const Backend& backend) {
  std::map<int, double> cheapest;
  std::map<std::string, int> nprocs_of;
  for (const Point& p : study.points) {
    const std::string key = configuration_key(p.spec, backend);
    const auto it = samples.find(key);
    if (it == samples.end()) continue;
    nprocs_of[key] = p.spec.nprocs;
    for (const double s : it->second.setup_s) {
      const auto [at, fresh] = cheapest.emplace(p.spec.nprocs, s);
      if (!fresh) at->second = std::min(at->second, s);
    }
  }
  for (auto& [key, c] : samples) {
    const auto n = nprocs_of.find(key);
    if (n == nprocs_of.end()) continue;
    for (double& s : c.setup_s) s = cheapest.at(n->second);
  }
  return samples;
}

/// The first round of the race: per rank count, each set-up's whole time (run plus one-off costs) in the one
/// scenario, fastest first, with its label and point.
using FirstRound = std::map<int, std::vector<std::pair<double, std::pair<std::string, const RunSpec*>>>>;
FirstRound first_round(const Study& study, const std::map<std::string, ConfigurationSamples>& samples,
                       const Backend& backend) {
  FirstRound round;
  for (const Point& p : study.points) {
    const auto it = samples.find(configuration_key(p.spec, backend));
    if (it == samples.end() || it->second.time_s.empty()) continue;
    const double whole = whole_s(it->second).front();
    round[p.spec.nprocs].push_back({whole, {setup_label(p.spec), &p.spec}});
  }
  for (auto& [nprocs, list] : round) {
    std::stable_sort(list.begin(), list.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  }
  return round;
}

/// Adds to leaders the first two balancers other than none of one rank count's set-ups, best first (a balancer's
/// rules are one balancer): the check replays every rule of each.
void add_leaders(std::vector<std::string>& leaders, const std::vector<std::string>& balancers_best_first) {
  std::vector<std::string> taken;
  for (const std::string& b : balancers_best_first) {
    if (b == "none" || std::find(taken.begin(), taken.end(), b) != taken.end()) continue;
    if (taken.size() == 2) break;
    taken.push_back(b);
    if (std::find(leaders.begin(), leaders.end(), b) == leaders.end()) leaders.push_back(b);
  }
}

/// What the check measured: the tolerance (percent) and its words, or nothing when no check could be made.
struct CheckResult {
  std::optional<double> tolerance_pct;
  std::string words;
};

/// The check of a trace's advice where this machine allows it: the trace replayed for real at P = the host's cores
/// (a core per rank), under the balancers given with all their rules, reps times each in interleaved rounds, and the
/// same replay simulated at that P. The tolerance is the largest error of the simulated whole time / none's against
/// the measured one, over every checked set-up and both ends of its interval. Writes OUT/check-study.yaml,
/// OUT/check-real/, OUT/check-sim/ and OUT/check.csv.
CheckResult check_replay(const Options& o, const Plan& plan, const SweepOptions& sim, const Study& main_study,
                         const std::vector<std::string>& balancers) {
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  if (cores < 2) {
    std::printf("advise: check: this host has %d core, too few for a replay on a core per rank\n", cores);
    return {};
  }
  const int groups = std::min(plan.trace_chains, cores);
  const int per_group = (plan.trace_chains + groups - 1) / groups;
  const std::vector<std::string> exclude = interval_excludes(balancers);
  std::string text = "# Written by mcmclb advise (" + o.command_line +
                     "): its replay at a core per rank, run for real and simulated.\nexperiment: " +
                     quoted(experiment_of(o.input) + "-check") + "\nworkload: {model: trace, file: " + quoted(o.input) +
                     ", scaling: trace}\nwork: {mode: spin}\nnprocs: " + std::to_string(cores) +
                     "\nreps: " + std::to_string(o.check_reps) + "\ngroups: {count: " + std::to_string(groups) +
                     "}\nchains_per_group: " + std::to_string(per_group) + "\nbalancer: " + flow_list(balancers) +
                     "\ninterval: [1, 16]\nfinished: [retire, coalesce, pays]\n";
  if (!exclude.empty()) text += "exclude: " + flow_list(exclude) + "\n";
  const fs::path out = sim.out;
  SweepOptions real;
  real.study = launch::not_an_option((out / "check-study.yaml").string());
  real.launcher = "local";
  real.out = launch::not_an_option((out / "check-real").string());
  const Study study = launch::load(real, text);
  {
    auto store = launch::open_output(sim, main_study);
    store.rewrite_file("check-study.yaml", [&](const fs::path&) { return text; });
  }
  std::printf("\nadvise: check: the replay at P = %d, %d %s of %d walker%s, real (MPI, %ld rounds) and simulated\n",
              cores, groups, groups == 1 ? "group" : "groups", per_group, per_group == 1 ? "" : "s", o.check_reps);
  const int real_status = sweep_main(real);
  SweepOptions simulated = sim;
  simulated.study = real.study;
  simulated.out = launch::not_an_option((out / "check-sim").string());
  simulated.overrides = {"reps=1"};  // deterministic: one run stands for all
  const int sim_status = sweep_main(simulated);
  const auto real_runs = read_configurations(real.out);
  const auto sim_runs = read_configurations(simulated.out);
  const Backend real_backend = launch::sweep_backend(real), sim_backend = launch::sweep_backend(simulated);
  std::vector<double> real_none;
  double sim_none = 0;
  std::vector<std::pair<std::string, std::pair<std::vector<double>, double>>> measured;  // label -> (real, sim)
  std::set<std::string> seen;  // a set-up's points are its repetitions: one configuration
  for (const Point& p : study.points) {
    if (!seen.insert(setup_label(p.spec)).second) continue;
    const auto r = real_runs.find(configuration_key(p.spec, real_backend));
    const auto s = sim_runs.find(configuration_key(p.spec, sim_backend));
    if (r == real_runs.end() || s == sim_runs.end() || r->second.time_s.empty() || s->second.time_s.empty()) continue;
    const double sim_whole = whole_s(s->second).front();
    if (p.spec.balancer == "none") {
      real_none = whole_s(r->second);
      sim_none = sim_whole;
    } else {
      measured.push_back({setup_label(p.spec), {whole_s(r->second), sim_whole}});
    }
  }
  if (real_status != 0 || sim_status != 0 || real_none.empty() || !(sim_none > 0) || measured.empty()) {
    std::printf(
        "advise: check: not every run of the check finished (real exit %d, simulated exit %d): the "
        "tolerance stays assumed\n",
        real_status, sim_status);
    return {};
  }
  std::vector<advice::ReplayError> errors;
  std::string csv_text = csv::line(check_header());
  const auto opt = [](const std::optional<double>& v) { return v ? csv::number(*v) : std::string(); };
  std::printf("%-36s  %-26s  %-10s  %s\n", "set-up", "real whole / none [95 %]", "simulated", "error [95 %]");
  for (const auto& [label, pair] : measured) {
    errors.push_back(advice::replay_error(label, pair.first, real_none, pair.second / sim_none));
    const advice::ReplayError& e = errors.back();
    std::printf(
        "%-36s  %-26s  %-10s  %s\n", label.c_str(),
        (fixed(e.real_ratio) +
         (e.real_low ? " [" + fixed(*e.real_low) + ", " + fixed(*e.real_high) + "]" : std::string()))
            .c_str(),
        fixed(e.sim_ratio).c_str(),
        e.error_low ? (fixed(*e.error_low * 100, 1) + " to " + fixed(*e.error_high * 100, 1) + " %").c_str() : "");
    csv_text +=
        csv::line({label, std::to_string(cores), std::to_string(e.n), csv::number(e.real_ratio), opt(e.real_low),
                   opt(e.real_high), csv::number(e.sim_ratio), opt(e.error_low), opt(e.error_high)});
  }
  {
    auto store = launch::open_output(sim, main_study);
    store.rewrite_file("check.csv", [&](const fs::path&) { return csv_text; });
  }
  const auto tolerance = advice::measured_tolerance(errors);
  if (!tolerance) return {};
  CheckResult result;
  result.tolerance_pct = *tolerance * 100;
  result.words =
      "measured at P = " + std::to_string(cores) + ", n = " + std::to_string(o.check_reps) + " a set-up: check.csv";
  return result;
}

}  // namespace

const csv::Row& check_header() {
  static const csv::Row h = {"setup",     "nprocs",    "n",         "real_ratio", "real_low",
                             "real_high", "sim_ratio", "error_low", "error_high"};
  return h;
}

const csv::Row& advice_header() {
  static const csv::Row h = {
      "nprocs",        "walkers",        "rank",       "setup",          "same_as",     "balancer",    "interval",
      "method",        "finished",       "scenarios",  "vs_none_median", "vs_none_min", "vs_none_max", "regret_max",
      "regret_median", "worst_scenario", "once_s",     "break_even_s",   "dropped",     "winner",      "runner_up",
      "gain_median",   "robust",         "depends_on", "tolerance_pct",  "tolerance",   "verdict"};
  return h;
}

/// The simulations of one round: on this host (the smpi launcher, --jobs at once), or with --launcher slurm as one
/// batch job of --jobs tasks whose sweep runs each simulation as a job step, so that they spread over the
/// allocation's nodes. sbatch --wait returns when the job ends; what finished stays in the folder either way, and
/// advise run again resumes from it. host_s: the round's estimated host seconds, for the job's time limit.
int simulate(const Options& o, const SweepOptions& sweep, const Study& study, double host_s) {
  if (o.launcher != "slurm") return sweep_main(sweep);
  const fs::path out = fs::absolute(sweep.out);
  const std::string name = fs::path(sweep.study).stem().string();
  const std::string command =
      shell_quote(launch::this_executable()) + " sweep " + shell_quote(fs::absolute(sweep.study).string()) +
      " --launcher smpi --platform " + shell_quote(fs::absolute(sweep.platform).string()) + " --sim-binary " +
      shell_quote(fs::absolute(sweep.sim_binary).string()) +
      (sweep.smpi_flags.empty() ? "" : " --smpi-flags " + shell_quote(fs::absolute(sweep.smpi_flags).string())) +
      " --out " + shell_quote(out.string()) + " --points-per-launch 1 --jobs " + std::to_string(o.jobs) +
      " --job-steps";
  // Twice the estimate and ten minutes more: an estimate is not a promise, and a job past its limit loses its
  // simulations under way.
  const long minutes = static_cast<long>(std::ceil(2 * host_s / static_cast<double>(o.jobs) / 60)) + 10;
  std::string text = "#!/bin/bash\n# Written by mcmclb advise --launcher slurm: the simulations of " + name +
                     ".yaml, each a job step of one CPU, " + std::to_string(o.jobs) + " at once.\n";
  text += "#SBATCH --job-name=" + experiment_of(o.input) + "\n#SBATCH --ntasks=" + std::to_string(o.jobs) +
          "\n#SBATCH --cpus-per-task=1\n#SBATCH --time=" + launch::slurm_time(minutes) +
          "\n#SBATCH --output=" + (out / (name + "-%j.out")).string() + "\n";
  if (!o.partition.empty()) text += "#SBATCH --partition=" + o.partition + "\n";
  if (!o.account.empty()) text += "#SBATCH --account=" + o.account + "\n";
  text += "set -euo pipefail\ncd " + shell_quote(fs::current_path().string()) + "\nexec " + command + "\n";
  {
    auto store = launch::open_output(sweep, study);
    store.rewrite_file(name + ".sbatch", [&](const fs::path&) { return text; });
  }
  const fs::path script = out / (name + ".sbatch");
  std::printf("advise: %s: one batch job, %ld simulations at once, time limit %s; its progress in %s\n",
              script.string().c_str(), o.jobs, launch::slurm_time(minutes).c_str(),
              (out / (name + "-JOB.out")).string().c_str());
  std::fflush(stdout);
  const int status = launch::run_streaming("sbatch --wait " + shell_quote(script.string()),
                                           [](const std::string& line) { std::printf("advise: %s\n", line.c_str()); });
  if (status != 0) std::printf("advise: the batch job ended with status %d (sbatch --wait)\n", status);
  return status == 0 ? 0 : 1;
}

/// What the simulations of a study still to run are expected to take: their count, host seconds, and the wall time
/// at jobs at once (the larger of the host seconds shared out and the longest single simulation).
struct Estimate {
  std::size_t to_run = 0;
  double host_s = 0, wall_s = 0;
};
Estimate estimate(const SweepOptions& sweep, const Study& study, long jobs, std::size_t* skipped) {
  std::size_t ignored = 0;
  const auto todo =
      launch::points_to_run(sweep, study, sweep.out, launch::recorded_in_output(sweep, study, std::nullopt),
                            skipped != nullptr ? *skipped : ignored);
  Estimate e;
  double longest = 0;
  for (const auto& [nprocs, indices] : todo) {
    e.to_run += indices.size();
    for (const std::size_t i : indices) {
      const double s = launch::simulated_host_s(study.points[i].spec);
      e.host_s += s;
      longest = std::max(longest, s);
    }
  }
  const auto at_once = static_cast<double>(std::min<long>(jobs, static_cast<long>(std::max<std::size_t>(e.to_run, 1))));
  e.wall_s = std::max(longest, e.host_s / at_once);
  return e;
}

int advise_main(const std::vector<std::string>& args) {
  std::vector<std::string> words = {"mcmclb", "advise"};
  words.insert(words.end(), args.begin(), args.end());
  std::string command_line;
  for (const auto& w : words) command_line += (command_line.empty() ? "" : " ") + shell_quote(w);
  Options o = parse(args, command_line);
  if (o.out.empty()) o.out = default_out(o);
  const Plan plan = make_plan(o);

  SweepOptions sweep;
  sweep.study = launch::not_an_option(plan.study_path);
  sweep.launcher = "smpi";
  sweep.platform = o.platform.empty() ? std::string(MCMCLB_SOURCE_DIR) + "/configs/platforms/bgp.xml" : o.platform;
  sweep.sim_binary = o.sim_binary.empty() ? simulation_build() : o.sim_binary;
  sweep.smpi_flags = o.smpi_flags;
  sweep.out = launch::not_an_option(o.out);
  sweep.jobs = static_cast<int>(o.jobs);
  sweep.points_per_launch = 1;  // a point that fails or is stopped loses no other; a start-up costs about 0.1 s
  // The whole study, checked before anything is written: the workload, every key, the platform and the build.
  Study study = launch::load(sweep, plan.study_text);
  launch::check_smpi(sweep, study);
  std::size_t skipped = 0;
  const Estimate whole = estimate(sweep, study, o.jobs, &skipped);
  std::vector<std::string> ranks;
  for (const long r : o.ranks) ranks.push_back(std::to_string(r));
  std::printf("advise: %s at P = %s, simulated on %s\n", plan.workload.c_str(), join(ranks).c_str(),
              platform_identity(sweep.platform).c_str());
  for (const long r : o.ranks) {
    std::printf("  asks at P = %ld: %s\n", r, walkers_words(plan, static_cast<int>(r)).c_str());
  }
  for (const auto& w : plan.warnings) std::printf("advise: warning: %s\n", w.c_str());
  for (const auto& a : plan.assumptions) std::printf("  varies %s\n", a.c_str());
  for (const auto& s : plan.skipped) std::printf("  skips %s\n", s.c_str());
  const bool racing = o.race && varies_scenarios(plan);
  const char* where = o.launcher == "slurm" ? "in batch jobs, once they start" : "here";
  std::printf(
      "advise: %zu simulations, %zu already in %s, %zu to run, %ld at a time: about %s of wall time %s%s "
      "(from the host time of the shipped traces' simulations, grown with P)\n",
      study.points.size(), skipped, sweep.out.c_str(), whole.to_run, o.jobs,
      launch::format_seconds(whole.wall_s).c_str(), where, racing ? " if racing drops nothing" : "");
  std::optional<Estimate> first_estimate;
  if (racing) {
    first_estimate = estimate(sweep, launch::load(sweep, study_text(plan, o, true, {})), o.jobs, nullptr);
    std::printf(
        "advise: racing: every set-up on the first scenario first (%zu simulations, about %s); one whose regret "
        "there exceeds the tolerance is dropped, since its largest regret only grows (--no-race runs every "
        "simulation)\n",
        first_estimate->to_run, launch::format_seconds(first_estimate->wall_s).c_str());
  }
  if (o.dry_run) {
    std::printf("advise: dry run, nothing run or written\n");
    return 0;
  }
  const double tolerance = o.tolerance_pct / 100;
  const std::string tolerance_words = "assumed, not measured";
  std::optional<CheckResult> checked;  // --check's result, once made
  std::map<int, std::vector<Dropped>> dropped;
  std::string final_text = plan.study_text;
  int raced = 0;
  if (racing) {
    SweepOptions first = sweep;
    first.study = launch::not_an_option((fs::path(o.out) / "advise-race.yaml").string());
    const std::string first_text = study_text(plan, o, true, {});
    const Study first_study = launch::load(first, first_text);
    {
      auto store = launch::open_output(sweep, study);
      store.rewrite_file("advise-race.yaml", [&](const fs::path&) { return first_text; });
    }
    const auto first_start = std::chrono::steady_clock::now();
    raced = simulate(o, first, first_study, first_estimate->host_s);
    const double first_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - first_start).count();
    const Backend first_backend = launch::sweep_backend(first);
    const auto round = first_round(
        first_study, initial_groups_priced_alike(read_configurations(first.out), first_study, first_backend),
        first_backend);
    if (o.check_reps > 0) {
      std::vector<std::string> leaders = {"none"};
      for (const auto& [nprocs, setups] : round) {
        std::vector<std::string> in_order;
        for (const auto& [whole, label_spec] : setups) in_order.push_back(label_spec.second->balancer);
        add_leaders(leaders, in_order);
      }
      checked = check_replay(o, plan, sweep, study, leaders);
    }
    const double race_tolerance = checked && checked->tolerance_pct ? *checked->tolerance_pct / 100 : tolerance;
    std::vector<std::string> exclude;
    for (const auto& [nprocs, setups] : round) {
      const double best = setups.empty() ? 0 : setups.front().first;
      const auto none =
          std::find_if(setups.begin(), setups.end(), [](const auto& t) { return t.second.second->balancer == "none"; });
      for (const auto& [whole, label_spec] : setups) {
        const RunSpec& spec = *label_spec.second;
        const double regret = whole / best - 1;
        if (spec.balancer == "none" || regret <= race_tolerance + 1e-12) continue;
        dropped[nprocs].push_back(
            {label_spec.first, spec, whole, regret, none != setups.end() ? whole / none->first : std::nan("")});
        std::string rule = "{nprocs: " + std::to_string(nprocs) + ", balancer: " + spec.balancer;
        if (spec.interval > 0) rule += ", interval: " + std::to_string(spec.interval);
        if (spec.finished) rule += ", finished: " + std::string(to_string(*spec.finished));
        exclude.push_back(rule + "}");
      }
    }
    std::size_t count = 0;
    for (const auto& [nprocs, list] : dropped) count += list.size();
    std::printf("advise: racing dropped %zu set-up%s after the first scenario (regret above %.1f %%)\n", count,
                count == 1 ? "" : "s", race_tolerance * 100);
    final_text = study_text(plan, o, false, exclude);
    study = launch::load(sweep, final_text);
    // The rest, estimated again: the survivors only, scaled by how the first round's estimate came out on this
    // host and this trace (the table behind the estimate is other traces', on another load).
    const Estimate rest = estimate(sweep, study, o.jobs, nullptr);
    const double scale = first_estimate->wall_s > 0 && first_wall_s > 1 ? first_wall_s / first_estimate->wall_s : 1;
    std::printf("advise: %zu simulations left: about %s of wall time %s (the first round took %s, estimated %s)\n",
                rest.to_run, launch::format_seconds(rest.wall_s * scale).c_str(), where,
                launch::format_seconds(first_wall_s).c_str(), launch::format_seconds(first_estimate->wall_s).c_str());
  }
  {
    // The study file the launches read, replaced whole under the folder's lock (never seen half written).
    auto store = launch::open_output(sweep, study);
    store.rewrite_file(fs::path(plan.study_path).filename().string(), [&](const fs::path&) { return final_text; });
  }
  const int swept =
      simulate(o, sweep, study, estimate(sweep, study, o.jobs, nullptr).host_s) != 0 || raced != 0 ? 1 : 0;

  // The ranking, from what the folder holds for this study's points.
  const Backend backend = launch::sweep_backend(sweep);
  const auto samples = initial_groups_priced_alike(read_configurations(sweep.out), study, backend);
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
    Cell cell{&p, it->second.time_s.front(), once_s(it->second).front(), {}};
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
  }
  std::string csv_text = csv::line(advice_header());
  const advice::Words dimension = [](const std::string& column) { return dimension_words(column); };
  std::set<std::string> notes;  // printed once per advice, whatever the rank counts
  struct AtP {
    int nprocs;
    std::vector<advice::Scenario> scenarios;
    std::vector<advice::Setup> setups;
    std::vector<const RunSpec*> specs;
    std::size_t none_index = 0;
  };
  std::vector<AtP> inputs;
  for (const auto& [nprocs, by_setup] : cells) {
    const auto none = by_setup.find("none");
    if (none == by_setup.end()) continue;
    // The scenarios: every combination some set-up ran under, each set-up taken where it agrees (cell_in).
    std::set<Scenario> seen;
    for (const auto& [label, list] : by_setup) {
      for (const Cell& c : list) seen.insert(c.scenario);
    }
    const std::vector<Scenario> scenario_list(seen.begin(), seen.end());
    std::vector<advice::Scenario> scenarios;
    for (const Scenario& sc : scenario_list) scenarios.push_back({sc, scenario_weight(sc, o.draws)});
    std::vector<advice::Setup> setups;
    std::vector<const RunSpec*> specs;
    std::size_t none_index = 0;
    for (const std::string& label : setup_order[nprocs]) {
      advice::Setup s{label, family_of(label), {}, {}};
      for (const Scenario& sc : scenario_list) {
        const Cell* c = cell_in(by_setup.at(label), sc);
        s.run_s.push_back(c != nullptr ? c->time_s : std::nan(""));
        s.once_s.push_back(c != nullptr ? c->once_s : 0);
      }
      if (label == "none") none_index = setups.size();
      setups.push_back(std::move(s));
      specs.push_back(&by_setup.at(label).front().point->spec);
    }
    inputs.push_back({nprocs, std::move(scenarios), std::move(setups), std::move(specs), none_index});
  }
  const auto rank_all = [&](double tol, const std::string& tol_words) {
    std::vector<advice::Ranking> out;
    for (const AtP& at : inputs) {
      out.push_back(advice::rank(at.scenarios, at.setups, at.none_index, tol, tol_words, dimension));
    }
    return out;
  };
  std::vector<advice::Ranking> rankings = rank_all(tolerance, tolerance_words);
  double tolerance_pct = o.tolerance_pct;
  std::string measured_words = tolerance_words;
  if (checked && checked->tolerance_pct) {
    tolerance_pct = *checked->tolerance_pct;
    measured_words = checked->words;
    rankings = rank_all(tolerance_pct / 100, measured_words);
  } else if (o.check_reps > 0 && !checked && !inputs.empty()) {
    // The two leading balancers of each rank count, with none: their replay measured against its simulation.
    std::vector<std::string> leaders = {"none"};
    for (std::size_t k = 0; k < rankings.size(); ++k) {
      std::vector<std::string> in_order;
      for (const advice::Row& row : rankings[k].rows)
        in_order.push_back(inputs[k].specs[row.members.front()]->balancer);
      add_leaders(leaders, in_order);
    }
    const CheckResult check = check_replay(o, plan, sweep, study, leaders);
    if (check.tolerance_pct) {
      tolerance_pct = *check.tolerance_pct;
      measured_words = check.words;
      rankings = rank_all(tolerance_pct / 100, measured_words);
    }
  }
  std::vector<advice::AtRanks> at_ranks;  // each rank count's winner, for how many ranks are worth it
  for (std::size_t k_at = 0; k_at < inputs.size(); ++k_at) {
    const int nprocs = inputs[k_at].nprocs;
    const auto& setups = inputs[k_at].setups;
    const auto& specs = inputs[k_at].specs;
    const advice::Ranking& ranking = rankings[k_at];
    for (const auto& note : ranking.notes) notes.insert(note);
    const advice::Verdict& v = ranking.verdict;
    const std::string question = walkers_words(plan, nprocs);
    const std::size_t m = ranking.scenarios.size();
    std::printf("\n%s", wrapped("advice at P = " + std::to_string(nprocs) + ": " + question + "; simulated, " +
                                    std::to_string(m) + (m == 1 ? " scenario" : " scenarios"),
                                100, "")
                            .c_str());
    std::printf("%-4s  %-36s  %-24s  %-14s  %s\n", "rank", "set-up", "whole / none [min, max]", "regret max/med",
                "break-even");
    const std::string winner = setups[ranking.rows.front().members.front()].label;
    const std::string runner = v.runner_up ? setups[ranking.rows[*v.runner_up].members.front()].label : std::string();
    std::vector<double> weights;
    for (const advice::Scenario& sc : ranking.scenarios) weights.push_back(sc.weight);
    at_ranks.push_back({nprocs, advice::weighted_median(ranking.rows.front().whole_s, weights), winner});
    // One row of advice.csv: the set-up's own columns, then this rank count's verdict on every row.
    const auto advice_row = [&](std::size_t rank, const std::string& label, const std::string& same_as,
                                const RunSpec& spec, std::size_t scenarios, double median, double lo, double hi,
                                double regret_max, double regret_median, const std::string& worst,
                                const std::string& once, const std::string& even, const std::string& why,
                                const std::string& text) {
      return csv::line({std::to_string(nprocs),
                        question,
                        std::to_string(rank),
                        label,
                        same_as,
                        spec.balancer,
                        spec.interval > 0 ? std::to_string(spec.interval) : "",
                        spec.method,
                        spec.finished ? std::string(to_string(*spec.finished)) : "",
                        std::to_string(scenarios),
                        csv::number(median),
                        csv::number(lo),
                        csv::number(hi),
                        csv::number(regret_max),
                        csv::number(regret_median),
                        worst,
                        once,
                        even,
                        why,
                        winner,
                        runner,
                        csv::number(v.gain_median),
                        v.robust ? "yes" : "no",
                        v.depends_on,
                        csv::number(tolerance_pct),
                        measured_words,
                        text});
    };
    for (std::size_t k = 0; k < ranking.rows.size(); ++k) {
      const advice::Row& r = ranking.rows[k];
      const advice::Setup& first = setups[r.members.front()];
      std::vector<std::string> same_as;
      for (std::size_t i = 1; i < r.members.size(); ++i) same_as.push_back(setups[r.members[i]].label);
      const std::string even = r.break_even_s        ? csv::number(*r.break_even_s)
                               : r.never_breaks_even ? std::string("never")
                                                     : std::string();
      std::printf("%-4zu  %-36s  %-24s  %-14s  %s\n", k + 1, first.label.c_str(),
                  (fixed(r.vs_none_median) + " [" + fixed(r.vs_none_min) + ", " + fixed(r.vs_none_max) + "]").c_str(),
                  (fixed(r.regret_max * 100, 1) + "/" + fixed(r.regret_median * 100, 1) + " %").c_str(),
                  r.break_even_s ? (fixed_significant(*r.break_even_s) + " s").c_str() : even.c_str());
      if (!same_as.empty()) std::printf("%s", wrapped("same times: " + join(same_as), 100, "      ").c_str());
      const RunSpec& spec = *specs[r.members.front()];
      csv_text +=
          advice_row(k + 1, first.label, join(same_as, "; "), spec, m, r.vs_none_median, r.vs_none_min, r.vs_none_max,
                     r.regret_max, r.regret_median, advice::scenario_words(ranking.scenarios[r.worst], dimension),
                     r.once_median_s ? csv::number(*r.once_median_s) : "", even, "", k == 0 ? v.text : "");
    }
    // What the race dropped here: one scenario each, ranked after every set-up that ran them all.
    const std::string first_words = first_scenario_words(plan);
    std::vector<std::string> shown;
    std::size_t k = ranking.rows.size();
    for (const Dropped& d : dropped[nprocs]) {
      const std::string why = "after the first scenario (" + first_words + "): regret " + fixed(d.regret * 100, 1) +
                              " % > tolerance " + fixed(tolerance_pct, 1) + " %";
      shown.push_back(d.label + " (" + fixed(d.regret * 100, 1) + " %)");
      ++k;
      csv_text += advice_row(k, d.label, "", d.spec, 1, d.vs_none, d.vs_none, d.vs_none, d.regret, d.regret,
                             first_words, "", "", why, "");
    }
    if (!shown.empty()) {
      std::printf("%s", wrapped("dropped by the race after the first scenario (" + first_words +
                                    "), regret there: " + join(shown),
                                100, "      ")
                            .c_str());
    }
    std::printf("verdict at P = %d:\n%s", nprocs, wrapped(v.text, 100, "  ").c_str());
  }
  if (at_ranks.size() > 1) {
    const auto answer = advice::fewest_ranks(at_ranks, tolerance_pct / 100);
    std::printf("\n%s",
                wrapped("ranks: " + answer->text + " (each rank count's winner, its median time)", 100, "").c_str());
  }
  for (const auto& note : notes) std::printf("%s", wrapped("note: " + note, 100, "").c_str());
  std::printf("\n%s",
              wrapped("limits: simulated with SimGrid on " + platform_identity(sweep.platform) +
                          ", a model of a machine, not a measurement; each set-up with its default creation method; " +
                          (plan.assumptions.empty() ? "nothing assumed" : "assumed: " + join(plan.assumptions, "; ")) +
                          ". A replay is only as good as its trace: validate it against your program "
                          "(docs/guide/your-workload.md).",
                      100, "")
                  .c_str());
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
