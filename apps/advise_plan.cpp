// SPDX-License-Identifier: BSD-3-Clause
// `mcmclb advise`'s command line and its study (apps/advise_plan.hpp).
#include "advise_plan.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "advise_flags.hpp"
#include "mcmclb/advice_plan.hpp"
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

/// What a refusal lists: the usage line, written from the flag table.
const std::string& allowed() {
  static const std::string text = "allowed: " + advise_usage();
  return text;
}

/// "1 chain", "3 chains".
std::string plural(long n, const std::string& noun) { return std::to_string(n) + " " + noun + (n == 1 ? "" : "s"); }

bool is_study_file(const std::string& path) {
  const std::string ext = fs::path(path).extension().string();
  return ext == ".yaml" || ext == ".yml";
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
  // Each speed-up above its ranks that the curves left out, one line each (the plan says how many).
  for (const SetAside& a : trace->set_aside()) warnings.push_back(set_aside_line(o.input, a));
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
    // The table names every flag: one not in it is refused here, whatever the branches below would do.
    if (a.rfind("--", 0) == 0 && find_flag(kAdviseFlags, a) == nullptr) {
      throw InputError("unknown flag " + printable(a) + " (" + allowed() + ")");
    }
    const auto value = [&]() -> std::string {
      if (i + 1 >= args.size()) throw InputError(a + ": missing value (" + allowed() + ")");
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
    } else if (a == "--check-busy") {
      // A replay timed beside other programs times them too, and its error would set the tolerance: 10 % by
      // default. A shared machine whose user accepts that (or a test, asserting no speed) may raise it.
      const std::string v = value();
      char* end = nullptr;
      const double pct = std::strtod(v.c_str(), &end);
      if (v.empty() || end != v.c_str() + v.size() || !(pct >= 0 && pct <= 100)) {
        throw InputError("--check-busy: '" + printable(v) + "' is not a percentage in [0, 100]");
      }
      o.check_busy_share = pct / 100;
    } else if (a == "--platform") {
      o.platform = require_path(a, value());
    } else if (a == "--prediction") {
      o.prediction = require_path(a, value());
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
    } else if (a.rfind("--", 0) == 0) {  // in the table, but no branch above reads it
      throw std::logic_error("mcmclb advise: the flag " + a +
                             " is in the table (apps/advise_flags.hpp) but not parsed");
    } else if (o.input.empty()) {
      o.input = require_path("TRACE.csv|STUDY.yaml", a);
    } else {
      throw InputError("a second workload '" + printable(a) + "' (" + allowed() + ")");
    }
  }
  if (o.input.empty()) throw InputError(std::string("missing TRACE.csv or STUDY.yaml (") + allowed() + ")");
  if (o.ranks.empty()) throw InputError(std::string("--ranks: required (") + allowed() + ")");
  if ((!o.partition.empty() || !o.account.empty()) && o.launcher != "slurm") {
    throw InputError("--partition and --account: only with --launcher slurm");
  }
  if (o.launcher == "slurm" && o.check_reps > 0) {
    throw InputError(
        "--check: not with --launcher slurm (the check replays the trace for real on this host, a core per rank; "
        "run it without --launcher slurm, where the host may run MPI)");
  }
  if (!o.prediction.empty()) {
    // The error of one platform says nothing of another's: read now, and refused now, before any work.
    if (o.platform.empty()) {
      throw InputError("--prediction: only with --platform (allowed: the platform whose prediction.csv it is)");
    }
    o.prediction_error = advice::prediction_error(launch::read_file(o.prediction, "prediction file"), o.prediction,
                                                  fnv1a64_hex(launch::read_file(o.platform, "platform")));
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

bool is_map_zip(const std::string& zip) { return zip.rfind("{workload.map:", 0) == 0; }

/// A YAML double-quoted scalar of text (control characters are refused by the study's own checks).
std::string quoted(const std::string& text) {
  std::string q = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') q += '\\';
    q += c;
  }
  return q + "\"";
}

/// The text of the advice study: the workload's with the plan's keys, or (first_only) its first scenario alone (the
/// plan's first speed-up rule and the tile map), the race's first round; extra_exclude: set-ups dropped by it.
std::string study_text(const Plan& p, const Options& o, bool first_only,
                       const std::vector<std::string>& extra_exclude) {
  auto keys = p.keys;
  for (auto& [key, value] : keys) {
    if (first_only && key == "workload.extrapolate") value = "[" + p.first_extrapolate + "]";
    // The chain map's zip (copies); the zip of the walkers' groups by rank count stays.
    if (first_only && key == "zip" && is_map_zip(value)) value = "{workload.map: [tile], workload.seed: [1]}";
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

ProgramRuns program_runs(const Options& o, const Trace& trace) {
  ProgramRuns out;
  std::vector<RecordedRun> runs;
  if (trace.recorded_run()) runs.push_back(*trace.recorded_run());
  runs.insert(runs.end(), trace.earlier_runs().begin(), trace.earlier_runs().end());
  // Runs compare at one layout of the same walkers: the layout with the most runs, the recording's own first.
  const auto key = [](const RecordedRun& r) {
    return std::to_string(r.ranks) + " " + std::to_string(r.groups) + " " + r.balancer + " " + r.walkers;
  };
  std::map<std::string, std::vector<const RecordedRun*>> by_layout;
  for (const RecordedRun& r : runs) by_layout[key(r)].push_back(&r);
  // The recording's own layout wherever no other has more runs: a tie goes to the layout the trace's run line ran in.
  std::string most = runs.empty() ? std::string() : key(runs.front());
  for (const auto& [layout, list] : by_layout) {
    if (list.size() > by_layout[most].size()) most = layout;
  }
  if (!most.empty() && by_layout[most].size() >= 2) {
    std::vector<double> seconds;
    std::optional<double> busy;  // the busiest run's host, where any run measured it
    for (const RecordedRun* r : by_layout[most]) {
      seconds.push_back(r->seconds);
      if (r->share > 0 && (!busy || 1 - r->share > *busy)) busy = 1 - r->share;
    }
    out.spread = advice::program_spread(seconds, by_layout[most].front()->ranks, busy);
    if (out.spread) out.spread->detail += " (" + by_layout[most].front()->balancer + ", the trace's run lines)";
    return out;
  }
  const std::string ranks = runs.empty() ? std::string("P") : std::to_string(runs.front().ranks);
  out.advice.push_back("your program's own run-to-run spread is not measured: the trace records " +
                       std::to_string(runs.size()) + (runs.size() == 1 ? " run" : " runs") +
                       " of it. Gains inside that spread are none you would see. To measure it, run your "
                       "program again with recording on into the same file, e.g. 5 times:");
  out.advice.push_back("  for i in 1 2 3 4 5; do MCMCLB_RECORD=" + shell_quote(o.input) + " mpiexec -n " + ranks +
                       " YOUR_PROGRAM; done");
  out.advice.push_back(
      "each run keeps the earlier runs' lines (# earlier run:), and advise takes their spread into the tolerance");
  return out;
}

advice::Tolerance tolerance_of(const Options& o, const std::optional<CheckResult>& checked,
                               const std::optional<advice::ToleranceSource>& spread) {
  std::vector<advice::ToleranceSource> sources;
  if (!(checked && checked->measured_program())) {
    advice::ToleranceSource assumed;
    assumed.kind = "assumed";
    assumed.what = "the tolerance assumed (--tolerance)";
    assumed.fraction = o.tolerance_pct / 100;
    sources.push_back(assumed);
  }
  if (checked) sources.insert(sources.end(), checked->sources.begin(), checked->sources.end());
  if (spread) sources.push_back(*spread);
  if (o.prediction_error) sources.push_back(*o.prediction_error);
  return advice::largest_tolerance(sources);
}

/// The advice study for o, not yet written anywhere: the files read and checked here, the keys planned by the
/// advice library. Throws InputError for a workload it cannot advise on.
Plan make_plan(const Options& o) {
  Plan p;
  advice::PlanQuestion q;
  q.ranks = o.ranks;
  q.balancers = o.balancers;
  q.group_size = o.group_size;
  q.chains_per_group = o.chains_per_group;
  q.copies = o.copies;
  q.draws = o.draws;
  q.tolerance = o.tolerance_pct / 100;
  p.study_path = (fs::path(o.out) / "advise-study.yaml").string();
  if (!is_study_file(o.input)) {
    const std::string experiment = experiment_of(o.input);
    p.base = "experiment: " + quoted(experiment) + "\nworkload: {model: trace, file: " + quoted(o.input) +
             "}\nwork: {mode: sleep}\n";
    std::vector<std::string> warnings;
    const auto trace = checked_trace(o, warnings);  // before anything is written
    // Perfect scaling is admitted within the tolerance the verdict is judged by: the program's own spread is
    // known from the trace now. What --check measures is known only after the simulations this plan asks for, so
    // it cannot widen (or, measuring both errors, replace) the one taken here.
    p.program = program_runs(o, *trace);
    q.tolerance = tolerance_of(o, std::nullopt, p.program.spread).fraction;
    static_cast<advice::StudyPlan&>(p) = advice::plan_trace(q, *trace, o.input);
    p.warnings = std::move(warnings);
    p.workload =
        "trace file " + o.input + " (fnv1a64 " + trace->fnv1a64() + ", " + plural(trace->chains(), "chain") + ")";
  } else {
    if (o.copies) {
      throw InputError("--copies: only for a trace file (a study file's groups are its own; allowed: a trace)");
    }
    p.base = launch::read_file(o.input, "study file");
    SweepOptions own;
    own.study = o.input;
    const Study given = launch::load(own, p.base);  // its own errors first, named as its own
    advice::GivenStudy g;
    g.sets_speedups = p.base.find("workload.speedups") != std::string::npos;
    g.sets_zip = p.base.find("zip") != std::string::npos;
    std::shared_ptr<const Trace> trace;
    if (!given.points.empty() && given.points.front().spec.workload.model == "trace") {
      trace = load_trace(given.points.front().spec.workload.file);
      for (const SetAside& a : trace->set_aside())
        p.warnings.push_back(set_aside_line(given.points.front().spec.workload.file, a));
      g.replayed = trace.get();
      for (const Point& pt : given.points) {
        g.largest_rank = std::max<long>(g.largest_rank, pt.spec.nprocs);
        const GroupsSpec& groups = pt.spec.groups;
        const long count = groups.by == GroupsSpec::By::G       ? pt.spec.nprocs / std::max(1, pt.spec.G)
                           : groups.by == GroupsSpec::By::sizes ? static_cast<long>(groups.sizes.size())
                           : groups.by == GroupsSpec::By::count ? groups.count
                                                                : 0;
        g.copies = g.copies || (count * pt.spec.workload.chains_per_group > trace->chains() &&
                                pt.spec.workload.map != TraceMap::once);
      }
    } else {
      g.seeded = !given.points.empty() && workload_uses(given.points.front().spec.workload, "seed");
    }
    static_cast<advice::StudyPlan&>(p) = advice::plan_study(q, g);
    p.workload = "the workload of study file " + o.input;
  }
  p.study_text = study_text(p, o, false, {});
  return p;
}

}  // namespace mcmclb::advising
