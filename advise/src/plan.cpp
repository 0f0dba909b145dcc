// SPDX-License-Identifier: BSD-3-Clause
// `mcmclb advise`'s study (mcmclb/advise_plan.hpp): the workload read and checked, the advice study planned.
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

#include "mcmclb/advice_plan.hpp"
#include "mcmclb/advise_plan.hpp"
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

namespace mcmclb::advising {

namespace fs = std::filesystem;

namespace {

/// "1 chain", "3 chains".
std::string plural(long n, const std::string& noun) { return std::to_string(n) + " " + noun + (n == 1 ? "" : "s"); }

}  // namespace

bool is_study_file(const std::string& path) {
  const std::string ext = fs::path(path).extension().string();
  return ext == ".yaml" || ext == ".yml";
}

namespace {

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
  // The recording's own word on its host's drift, where it measured one.
  if (!trace->drift().empty()) {
    std::string said = trace->drift().substr(0, 1000);  // as written, UTF-8 kept (its spread is a ±), controls not
    for (char& c : said) c = static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
    warnings.push_back(printable(o.input, 200) + ": the recording says: " + said);
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

bool is_map_zip(const StudyEntry& zip) {
  const auto* lists = std::get_if<StudyZip>(&zip);
  return lists != nullptr && !lists->empty() && lists->front().first == "workload.map";
}

StudyValue study_of(const Plan& p, const Options& o, bool first_only, const StudyExclude& extra_exclude) {
  StudyValue study = p.base;
  study.comment = "Written by mcmclb advise (" + o.command_line +
                  "): " + (first_only ? "the first round of its race, one scenario." : "the study it simulates.");
  for (const auto& [key, given] : p.keys.keys) {
    StudyEntry value = given;
    if (first_only && key == "workload.extrapolate") value = StudyList{p.first_extrapolate};
    // The chain map's zip (copies); the zip of the walkers' groups by rank count stays.
    if (first_only && key == "zip" && is_map_zip(value)) {
      value = StudyZip{{"workload.map", StudyList{"tile"}}, {"workload.seed", StudyList{int64_t{1}}}};
    }
    if (first_only && key == "workload.seed") value = StudyList{int64_t{1}};
    if (first_only && key == "workload.speedups") value = StudyList{"median"};
    if (key == "exclude") {
      auto& rules = std::get<StudyExclude>(value);
      rules.insert(rules.end(), extra_exclude.begin(), extra_exclude.end());
    }
    study.set(key, std::move(value));
  }
  return study;
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
    // The trace lists its runs newest first: the spread pairs neighbours in the order they ran.
    std::reverse(by_layout[most].begin(), by_layout[most].end());
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
    p.base.keys = {
        {"experiment", experiment}, {"workload.model", "trace"}, {"workload.file", o.input}, {"work.mode", "sleep"}};
    if (!o.plan_from.empty()) p.base.keys.emplace_back("workload.plan_file", o.plan_from);
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
    const std::string text = launch::read_file(o.input, "study file");
    SweepOptions own;
    own.study = o.input;
    const Study given = launch::load(own, text);  // its own errors first, named as its own
    // The line advise prints runs the groups it simulated, and a program asks for them by G, groups.count or
    // groups.sizes (advice::run_flags): a layout by node cannot be asked for.
    for (const Point& pt : given.points) {
      if (pt.spec.groups.by == GroupsSpec::By::node) {
        throw InputError("key groups.by: node in " + printable(o.input, 200) +
                         " is not advised on: the line advise prints could not ask a program for it (allowed: G, "
                         "groups.count or groups.sizes)");
      }
    }
    p.base = study_value(text, o.input);
    advice::GivenStudy g;
    g.sets_speedups = text.find("workload.speedups") != std::string::npos;
    g.sets_zip = text.find("zip") != std::string::npos;
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
  p.study = study_of(p, o, false, {});
  return p;
}

}  // namespace mcmclb::advising
