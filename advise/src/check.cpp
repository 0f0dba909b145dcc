// SPDX-License-Identifier: BSD-3-Clause
// `mcmclb advise --check`: the advice's replay run for real beside its simulation (mcmclb/advise_plan.hpp).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "mcmclb/advice.hpp"
#include "mcmclb/advice_check.hpp"
#include "mcmclb/advice_table.hpp"
#include "mcmclb/advise_plan.hpp"
#include "mcmclb/configurations.hpp"
#include "mcmclb/launch.hpp"
#include "mcmclb/provenance.hpp"  // host_busy_share, usable_cores
#include "mcmclb/runs_csv.hpp"
#include "mcmclb/stats.hpp"
#include "mcmclb/study.hpp"
#include "mcmclb/text.hpp"
#include "mcmclb/trace.hpp"

namespace mcmclb::advising {

namespace fs = std::filesystem;
using advice::median_parts;
using advice::Price;
using advice::setup_label;
using advice::whole_s;

const csv::Row& check_header() {
  static const csv::Row h = {"setup",
                             "nprocs",
                             "n",
                             "real_ratio",
                             "real_low",
                             "real_high",
                             "sim_ratio",
                             "error_low",
                             "error_high",
                             "busy_before_pct",
                             "busy_after_pct",
                             "real_run_s",
                             "real_calibration_s",
                             "real_initial_groups_s",
                             "sim_run_s",
                             "sim_calibration_s",
                             "sim_initial_groups_s"};
  return h;
}

std::string fixed(double v, int digits) {
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", digits, v);
  return text;
}

/// How busy the host was before and after the real runs of an earlier check in this folder, from its check.csv
/// (busy_before_pct, busy_after_pct): a check resumed with nothing left to run measured nothing itself, and the
/// host's load now says nothing of runs made then. Nothing where the file or the columns are absent (an older one).
std::pair<std::optional<double>, std::optional<double>> recorded_busy(const fs::path& check_csv) {
  std::ifstream in(check_csv);
  std::string line;
  if (!std::getline(in, line)) return {};
  const auto header = csv::split_line(line);
  const auto column = [&](const std::string& name) -> std::optional<std::size_t> {
    const auto at = std::find(header.begin(), header.end(), name);
    return at == header.end() ? std::nullopt : std::optional<std::size_t>(at - header.begin());
  };
  const auto before = column("busy_before_pct"), after = column("busy_after_pct");
  if (!before || !after || !std::getline(in, line)) return {};
  const auto fields = csv::split_line(line);
  const auto value = [&](std::size_t i) -> std::optional<double> {
    const auto percent = i < fields.size() ? parse_finite(fields[i]) : std::nullopt;
    return percent ? std::optional<double>(*percent / 100) : std::nullopt;
  };
  return {value(*before), value(*after)};
}

/// "3 %", or "unknown" where /proc/stat could not be read.
std::string busy_words(const std::optional<double>& share) {
  return share ? fixed(100 * *share, 0) + " %" : std::string("unknown");
}

double check_run_s(const Options& o, int cores) {
  if (cores < 2) return 0;
  const auto trace = load_trace(o.input);
  const int groups = std::min(trace->chains(), cores);
  const auto& run = trace->recorded_run();
  if (run && run->ranks == cores && run->groups == groups) return run->seconds;
  double work = 0, longest = 0;
  for (int c = 0; c < trace->chains(); ++c) {
    work += trace->chain_single_rank_s(c);
    longest = std::max(longest, trace->chain_s(c, static_cast<double>(cores / groups)));
  }
  return std::max(work / cores, longest);
}

/// The check of a trace's advice where this machine allows it: the trace replayed for real at P = the host's cores
/// (a core per rank), under the balancers given with all their rules, reps times each in interleaved rounds, and the
/// same replay simulated at that P. The tolerance is the largest error of the simulated whole time / none's against
/// the measured one, over every checked set-up and both ends of its interval. Writes OUT/check-study.yaml,
/// OUT/check-real/, OUT/check-sim/ and OUT/check.csv.
CheckResult check_replay(const Options& o, const Plan& /*plan*/, const SweepOptions& sim, const Study& main_study,
                         const std::vector<std::string>& balancers) {
  const int cores = usable_cores();
  if (cores < 2) {
    std::printf("advise: check: this process may use %d core, too few for a replay on a core per rank\n", cores);
    return {};
  }
  // The walkers as advise lays them out (the recorded groups at the recorded P), each once: no copies.
  const advice::WalkerLayout layout = advice::walker_layout(*load_trace(o.input), cores);
  const int groups = static_cast<int>(layout.groups);
  const int per_group = static_cast<int>(layout.most);
  const StudyExclude exclude = advice::interval_excludes(balancers);
  StudyValue check;
  check.comment =
      "Written by mcmclb advise (" + o.command_line + "): its replay at a core per rank, run for real and simulated.";
  check.keys = {{"experiment", experiment_of(o.input) + "-check"},
                {"workload.model", "trace"},
                {"workload.file", o.input},
                {"workload.scaling", "trace"},
                {"workload.map", "once"},
                {"work.mode", "spin"},
                {"nprocs", StudyScalar(int64_t{cores})},
                {"reps", StudyScalar(int64_t{o.check_reps})},
                {"groups.count", StudyScalar(int64_t{groups})},
                {"chains_per_group", StudyScalar(int64_t{per_group})},
                {"balancer", study_list(balancers)},
                {"interval", StudyList{int64_t{1}, int64_t{16}}},
                {"finished", study_list({"retire", "coalesce", "pays"})}};
  if (!o.plan_from.empty()) check.set("workload.plan_file", o.plan_from);  // planned as the simulations plan
  if (!exclude.empty()) check.set("exclude", exclude);
  const std::string text = study_file_text(check);
  const fs::path out = sim.out;
  SweepOptions real;
  real.study = launch::not_an_option((out / "check-study.yaml").string());
  real.launcher = "local";
  real.out = launch::not_an_option((out / "check-real").string());
  const Study study = launch::load(real, check);
  {
    auto store = launch::open_output(sim, main_study);
    store.rewrite_file("check-study.yaml", [&](const fs::path&) { return text; });
  }
  std::printf("\nadvise: check: the replay at P = %d, %d %s of %d walker%s, real (MPI, %ld rounds) and simulated\n",
              cores, groups, groups == 1 ? "group" : "groups", per_group, per_group == 1 ? "" : "s", o.check_reps);
  // How idle the host is, measured over 2 s before the real runs and again after them: the check's own MPI ranks
  // spin, so during them the share says nothing. A check resumed with every real run made earlier measures nothing
  // now and keeps what check.csv recorded of them.
  std::size_t made = 0;
  const auto to_run =
      launch::points_to_run(real, study, real.out, launch::recorded_in_output(real, study, std::nullopt), made);
  const bool runs_now = !to_run.empty();
  // The simulated replay first: it takes seconds, and predicts what each real run will take.
  SweepOptions simulated = sim;
  simulated.study = real.study;
  simulated.out = launch::not_an_option((out / "check-sim").string());
  simulated.overrides = {"reps=1"};  // deterministic: one run stands for all
  const int sim_status = launch::sweep_study(simulated, launch::load(simulated, check), text);
  const auto sim_runs = read_configurations(simulated.out);
  const Backend real_backend = launch::sweep_backend(real), sim_backend = launch::sweep_backend(simulated);
  std::optional<double> busy_before, busy_after;
  if (runs_now) {
    // What the real runs will take, now that the race chose the balancers: each its simulated replay's whole time
    // (the trace's run line where one was not simulated), and its start-up.
    std::size_t runs = 0;
    double replays_s = 0;
    for (const auto& [nprocs, points] : to_run) {
      for (const std::size_t i : points) {
        const auto s = sim_runs.find(configuration_key(study.points[i].spec, sim_backend));
        replays_s +=
            s == sim_runs.end() || s->second.time_s.empty() ? check_run_s(o, cores) : whole_s(s->second).front();
        ++runs;
      }
    }
    std::printf("advise: check: %zu real runs to make: about %s (each as its simulated replay took)\n", runs,
                launch::format_seconds(check_wall_s(replays_s, runs)).c_str());
    busy_before = host_busy_share(std::chrono::milliseconds(2000));
    std::printf("advise: check: the host was %s busy in the 2 s before the real runs\n",
                busy_words(busy_before).c_str());
  } else {
    std::tie(busy_before, busy_after) = recorded_busy(out / "check.csv");
    std::printf(
        "advise: check: every real run was made earlier; the host was %s and %s busy before and after them "
        "(check.csv)\n",
        busy_words(busy_before).c_str(), busy_words(busy_after).c_str());
  }
  const auto too_busy = [&o](const std::optional<double>& share) { return share && *share > o.check_busy_share; };
  if (runs_now && too_busy(busy_before)) {
    // Refused rather than run: a check on a busy host measures the other programs, and repeating it until the host
    // is idle could wait without end. advise refused it at its start too; the load rose since.
    std::printf(
        "advise: check: no real run made: %s\n",
        advice::busy_refusal(*busy_before, o.check_busy_share, "the host was", "in the 2 s before the real runs",
                             "the check does not set the tolerance, which stays assumed", false)
            .c_str());
    return {};
  }
  // The real runs' shuffled order, drawn afresh as a sweep of the file would draw it, and kept for their launches.
  SweepOptions real_kept = real;
  const Study real_study = launch::load_keeping_seed(real_kept, check);
  const int real_status = launch::sweep_study(real_kept, real_study, text);
  if (runs_now) {
    busy_after = host_busy_share(std::chrono::milliseconds(2000));
    std::printf("advise: check: the host was %s busy in the 2 s after them\n", busy_words(busy_after).c_str());
  }
  const bool busy = too_busy(busy_before) || too_busy(busy_after);
  const auto real_runs = read_configurations(real.out);
  std::vector<double> real_none;
  double sim_none = 0;
  std::set<std::string> checked_balancers;  // besides none
  std::string none_label;
  std::map<std::string, std::pair<std::string, std::vector<double>>> real_of;  // balancer -> its first set-up's runs
  std::vector<std::pair<std::string, std::pair<std::vector<double>, double>>> measured;  // label -> (real, sim)
  std::set<std::string> seen;  // a set-up's points are its repetitions: one configuration
  // Each set-up's parts (its run, calibration and initial groups), each part's median: (real, simulated).
  std::map<std::string, std::pair<Price, Price>> parts_of;
  for (const Point& p : study.points) {
    if (p.spec.balancer != "none") checked_balancers.insert(p.spec.balancer);
    if (!seen.insert(setup_label(p.spec)).second) continue;
    const auto r = real_runs.find(configuration_key(p.spec, real_backend));
    const auto s = sim_runs.find(configuration_key(p.spec, sim_backend));
    if (r == real_runs.end() || s == sim_runs.end() || r->second.time_s.empty() || s->second.time_s.empty()) continue;
    const double sim_whole = whole_s(s->second).front();
    parts_of[setup_label(p.spec)] = {median_parts(r->second), median_parts(s->second)};
    // The program's own run line records its run's clock, which starts after its calibration and initial groups:
    // the replay's run times are what compare with it.
    real_of.try_emplace(p.spec.balancer, setup_label(p.spec), r->second.time_s);
    if (p.spec.balancer == "none") {
      none_label = setup_label(p.spec);
      real_none = whole_s(r->second);
      sim_none = sim_whole;
    } else {
      measured.push_back({setup_label(p.spec), {whole_s(r->second), sim_whole}});
    }
  }
  advice::CheckOutcome outcome;
  outcome.real_status = real_status;
  outcome.sim_status = sim_status;
  outcome.balancers = checked_balancers.size();
  outcome.measured = measured.size();
  outcome.none_real = !real_none.empty();
  outcome.none_sim = sim_none > 0;
  const advice::CheckVerdict verdict = advice::check_verdict(outcome);
  if (!verdict.words.empty()) std::printf("advise: check: %s\n", verdict.words.c_str());
  if (verdict.forms == advice::CheckForms::nothing) return {};
  const bool none_alone = verdict.forms == advice::CheckForms::none_alone;
  std::vector<advice::ReplayError> errors;
  std::string csv_text = csv::line(check_header());
  const auto opt = [](const std::optional<double>& v) { return v ? csv::number(*v) : std::string(); };
  // One error: a line of the printed table (named as shown) and a row of check.csv, with the parts of the set-up
  // named `of` (real and simulated; the program's row: its replay's real parts only).
  const auto report = [&](const std::string& shown, const advice::ReplayError& e, const std::string& of,
                          bool simulated) {
    std::printf(
        "%-36s  %-26s  %-10s  %s\n", shown.c_str(),
        (fixed(e.real_ratio) +
         (e.real_low ? " [" + fixed(*e.real_low) + ", " + fixed(*e.real_high) + "]" : std::string()))
            .c_str(),
        fixed(e.sim_ratio).c_str(),
        e.error_low ? (fixed(*e.error_low * 100, 1) + " to " + fixed(*e.error_high * 100, 1) + " %").c_str() : "");
    const auto percent = [](const std::optional<double>& share) {
      return share ? csv::number(100 * *share) : std::string();
    };
    csv::Row row = {e.label,           std::to_string(cores), std::to_string(e.n),      csv::number(e.real_ratio),
                    opt(e.real_low),   opt(e.real_high),      csv::number(e.sim_ratio), opt(e.error_low),
                    opt(e.error_high), percent(busy_before),  percent(busy_after)};
    const auto parts = parts_of.find(of);
    for (const bool sim_side : {false, true}) {
      const bool known = parts != parts_of.end() && (simulated || !sim_side);
      const Price p = known ? (sim_side ? parts->second.second : parts->second.first) : Price{};
      for (const double v : {p.run_s, p.calibration_s, p.initial_groups_s})
        row.push_back(known ? csv::number(v) : std::string());
    }
    csv_text += csv::line(row);
  };
  std::printf("%-36s  %-26s  %-10s  %s\n", "set-up",
              none_alone ? "real / simulated [95 %]" : "real whole / none [95 %]", "simulated", "error [95 %]");
  for (const auto& [label, pair] : measured) {
    errors.push_back(advice::replay_error(label, pair.first, real_none, pair.second / sim_none));
    report(label, errors.back(), label, true);
  }
  if (none_alone) {
    // No ratio to none: none's own simulated whole time against its real replay is the error the advice rests on.
    errors.push_back(advice::none_error(none_label, real_none, sim_none));
    report(none_label, errors.back(), none_label, true);
  }
  // The other error of an advice, where the trace holds its program's own run (its `# run:` line) in the layout
  // replayed here: the real replay of the balancer the program ran against the time the program took.
  std::optional<advice::ReplayError> against_program;
  std::string program_run;
  if (const auto& run = load_trace(o.input)->recorded_run()) {
    const auto found = real_of.find(run->balancer);
    if (run->ranks != cores || run->groups != groups) {
      std::printf(
          "advise: check: your program ran at P = %d in %d groups, this replay at P = %d in %d: the replay "
          "against your program is not measured\n",
          run->ranks, run->groups, cores, groups);
    } else if (found == real_of.end()) {
      std::printf(
          "advise: check: your program ran under %s, which the check did not replay: the replay against "
          "your program is not measured (allowed: --balancers naming it)\n",
          run->balancer.c_str());
    } else {
      against_program =
          advice::program_error(found->second.first + " against your program", found->second.second, run->seconds);
      program_run = found->second.first + ", " + fixed(run->seconds, 4) + " s";
      report("your program (" + program_run + ")", *against_program, found->second.first, false);
    }
  }
  {
    auto store = launch::open_output(sim, main_study);
    store.rewrite_file("check.csv", [&](const fs::path&) { return csv_text; });
  }
  const auto tolerance = advice::measured_tolerance(errors);
  if (!tolerance) {
    std::printf(
        "advise: check: some set-up's real runs give no 95 %% interval (fewer than %zu): no error is formed; the "
        "tolerance stays assumed\n",
        stats::kMinCiSamples);
    return {};
  }
  if (busy) {
    const double busiest_share =
        std::max(too_busy(busy_before) ? *busy_before : 0.0, too_busy(busy_after) ? *busy_after : 0.0);
    std::printf(
        "advise: check: %s\n",
        advice::busy_refusal(busiest_share, o.check_busy_share, "the host was", "before or after the real runs",
                             "their errors are in check.csv but do not set the tolerance, which stays assumed", true)
            .c_str());
    return {};
  }
  const auto program_tolerance =
      against_program ? advice::measured_tolerance({*against_program}) : std::optional<double>();
  // The check measures the simulation against the real replay and, where the trace's run line is in its layout,
  // the real replay against the program; the caller adds the program's own spread and what is assumed.
  std::optional<double> busiest = busy_before;
  if (busy_after && (!busiest || *busy_after > *busiest)) busiest = busy_after;
  advice::ToleranceSource simulation;
  simulation.kind = "simulation";
  simulation.what = "the simulation against the real replay";
  simulation.fraction = *tolerance;
  simulation.nprocs = cores;
  simulation.n = static_cast<std::size_t>(o.check_reps);
  simulation.busy = busiest;
  simulation.detail = "the simulation within " + fixed(*tolerance * 100, 2) + " % of the real replay (check.csv)";
  if (none_alone) {
    simulation.what = "the simulation of none against its real replay";
    simulation.detail = "none's simulated whole time within " + fixed(*tolerance * 100, 2) +
                        " % of its real replay, no balancer checked (check.csv)";
  }
  CheckResult result;
  result.sources.push_back(simulation);
  if (program_tolerance.has_value()) {
    const double fraction = program_tolerance.value_or(0);  // value_or: GCC's may-be-uninitialized misfires on *
    advice::ToleranceSource replay = simulation;
    replay.kind = "replay";
    replay.what = "the real replay against your program";
    replay.fraction = fraction;
    replay.detail =
        "the real replay within " + fixed(fraction * 100, 2) + " % of your program's own run (" + program_run + ")";
    result.sources.push_back(replay);
  }
  return result;
}

}  // namespace mcmclb::advising
