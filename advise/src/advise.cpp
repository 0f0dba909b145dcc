// SPDX-License-Identifier: BSD-3-Clause
// `mcmclb advise` after its plan (mcmclb/advise.hpp): the estimate, then the rounds, --check, the ranking and the
// search between the rank counts, handed back to the command to print.
#include "mcmclb/advise.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "mcmclb/advice.hpp"
#include "mcmclb/advice_check.hpp"
#include "mcmclb/advice_speedups.hpp"
#include "mcmclb/advice_table.hpp"
#include "mcmclb/configurations.hpp"
#include "mcmclb/driver.hpp"  // emulated_ideal_s
#include "mcmclb/input_error.hpp"
#include "mcmclb/launch.hpp"
#include "mcmclb/provenance.hpp"  // host_busy_share, usable_cores
#include "mcmclb/runs_csv.hpp"
#include "mcmclb/study.hpp"
#include "mcmclb/text.hpp"
#include "mcmclb/trace.hpp"
#include "rounds.hpp"

namespace mcmclb::advising {

namespace fs = std::filesystem;
using advice::add_leaders;
using advice::Dropped;

namespace {

/// --check's real runs, at most: a replay of the trace at a core per rank (check_run_s), repeated check_reps times
/// for none and each rule of the two leading balancers of each rank count. Which balancers lead is known only after
/// the race's first round, so the count is a bound: the balancers with the most rules, two per rank count.
struct CheckEstimate {
  std::size_t runs = 0, setups = 0;
  double each_s = 0, wall_s = 0;
};

CheckEstimate check_estimate(const Options& o, const Plan& plan, const Study& study, const CpuCapacity& cpu) {
  CheckEstimate e;
  if (o.check_reps <= 0 || plan.trace_chains == 0) return e;
  const int cores = usable_cores();
  if (cores < 2) return e;
  e.each_s = check_run_s(o, cores);
  std::map<std::string, std::set<std::string>> labels;
  std::set<int> ranks;
  for (const Point& p : study.points) {
    ranks.insert(p.spec.nprocs);
    if (p.spec.nprocs == study.points.front().spec.nprocs) labels[p.spec.balancer].insert(advice::setup_label(p.spec));
  }
  std::vector<std::size_t> counts;
  for (const auto& [balancer, set] : labels) {
    if (balancer != "none") counts.push_back(set.size());
  }
  std::sort(counts.rbegin(), counts.rend());
  e.setups = 1;
  for (std::size_t k = 0; k < counts.size() && k < 2 * ranks.size(); ++k) e.setups += counts[k];
  e.runs = e.setups * static_cast<std::size_t>(o.check_reps);
  // Each run busies a core per rank: on a busy host its ranks get the cores cpu says, not one each.
  e.wall_s =
      check_wall_s(static_cast<double>(e.runs) * e.each_s, e.runs) * static_cast<double>(cores) / cpu.cores_for(cores);
  return e;
}

}  // namespace

SweepOptions simulation_sweep(const Options& o, const Plan& plan) {
  SweepOptions sweep;
  sweep.study = launch::not_an_option(plan.study_path);
  sweep.launcher = "smpi";
  sweep.platform = o.platform.empty() ? std::string(MCMCLB_SOURCE_DIR) + "/configs/platforms/fattree.xml" : o.platform;
  sweep.sim_binary = o.sim_binary.empty() ? simulation_build() : o.sim_binary;
  sweep.smpi_flags = o.smpi_flags;
  sweep.out = launch::not_an_option(o.out);
  sweep.jobs = static_cast<int>(o.jobs);
  sweep.points_per_launch = 1;
  return sweep;
}

const char* where_words(const Options& o) { return o.launcher == "slurm" ? "in batch jobs, once they start" : "here"; }

void print_estimate(const Options& o, const Plan& plan, const SweepOptions& sweep, const Study& study,
                    const SimulationEstimate& whole, std::size_t skipped) {
  const bool racing = o.race && varies_scenarios(plan);
  const char* where = where_words(o);
  std::printf(
      "advise: %zu simulations, %zu already in %s, %zu to run, %ld at a time: about %s of wall time %s%s "
      "(each simulation's host time from its set-up, its ranks and its items, as measured on a 2-core VM%s)\n",
      study.points.size(), skipped, sweep.out.c_str(), whole.count, o.jobs,
      launch::format_seconds(whole.wall_s).c_str(), where, racing ? " if racing drops nothing" : "",
      sweep.cpu.idle() ? "" : ", over the CPU this host gives just now");
  // Racing, none runs first in every scenario; where it settles every rank count asked, that is all.
  std::optional<SimulationEstimate> nones;
  if (racing) {
    nones = launch::estimate_to_run(sweep, launch::load(sweep, study_of(plan, o, false, all_but_none(o, 0))));
  }
  {
    // The whole advice: the simulations, the search between the rank counts, --check's real runs, each over the
    // CPU this host gives (sweep.cpu, measured).
    const CheckEstimate check = check_estimate(o, plan, study, sweep.cpu);
    const SearchBound search = search_bound(o, plan, study, sweep);
    const double total_s = whole.wall_s + search.any.wall_s + check.wall_s;
    const double expected_s = whole.wall_s + search.foreseen.wall_s + check.wall_s;  // searching, as foreseen
    const double settled_s = nones ? nones->wall_s + search.none_only.wall_s + check.wall_s : 0;
    const double unsearched_s = whole.wall_s + check.wall_s;  // without racing: the advice if it searches no count
    std::string parts = "the simulations";
    if (search.any.count > 0) {
      parts += ", the search between " + std::to_string(search.lo) + " and " + std::to_string(search.hi) +
               " ranks (up to " + std::to_string(search.any.count) + " simulations, " +
               launch::format_seconds(search.any.wall_s) + ")";
    }
    if (check.runs > 0) {
      parts += " and --check's " + std::to_string(check.runs) + " real runs (" + std::to_string(check.setups) +
               " set-ups at most x " + std::to_string(o.check_reps) + " repetitions x about " +
               launch::format_seconds(check.each_s) +
               " each, start-up included: " + launch::format_seconds(check.wall_s) + ")";
    }
    if (!sweep.cpu.idle()) {
      parts += "; this host gives " + std::to_string(sweep.cpu.threads) + " busy processes of ours " +
               fixed(sweep.cpu.all, 2) + " cores and one alone " + fixed(sweep.cpu.one, 2) +
               " just now (measured: the median of their CPU time in 50 ms slices over " +
               fixed(sweep.cpu.window_s, 1) + " s of spinning), so each estimate is stretched by it";
    }
    // A race's time depends on what none's round finds, and whether the counts between those asked are searched
    // on what the simulations find, so either is given as a range; without racing, the figure is the one the
    // scenarios' ideals foresee (searched or not), the range beside it.
    std::string span = launch::format_seconds(total_s) + " " + where;
    if (nones) {
      span = launch::format_seconds(settled_s) + " " + where + " if none settles every rank count asked, up to " +
             launch::format_seconds(total_s) + " if racing drops no set-up";
    } else if (search.foreseen.count > 0 && search.likely) {
      span = launch::format_seconds(expected_s) + " " + where + " if it searches between the rank counts, as it may " +
             "(under " + scenario_words(*search.likely, advice::dimension_words) + ", " + std::to_string(search.lo) +
             " ranks' ideal lies " + fixed(100 * search.ideal_above, 1) + " % above " + std::to_string(search.hi) +
             " ranks'), " + launch::format_seconds(unsearched_s) + " if not, up to " + launch::format_seconds(total_s) +
             " if it bisects toward " + std::to_string(search.hi);
    } else if (search.any.count > 0) {
      span = launch::format_seconds(unsearched_s) + " " + where + ", up to " + launch::format_seconds(total_s) +
             " if it searches between the rank counts (no scenario's ideal is lower at more ranks)";
    }
    std::printf("%s", wrapped("advise: in all about " + span + ": " + parts, 100, "").c_str());
  }
  std::optional<SimulationEstimate> first_estimate;
  if (racing) {
    first_estimate = launch::estimate_to_run(sweep, launch::load(sweep, study_of(plan, o, true, {})));
    std::printf("%s",
                wrapped("advise: racing: none in every scenario first (" + std::to_string(nones->count) +
                            (nones->count == 1 ? " simulation" : " simulations") + ", about " +
                            launch::format_seconds(nones->wall_s) +
                            "); a rank count where none comes within the tolerance of every scenario's ideal is "
                            "settled, no balancer can gain more. Elsewhere every set-up on the first scenario (" +
                            std::to_string(first_estimate->count) + " simulations at most, about " +
                            launch::format_seconds(first_estimate->wall_s) +
                            "), then the two fastest in every scenario; one whose regret in the first exceeds the "
                            "most the winner's can reach, plus the tolerance, cannot win and is dropped (--no-race "
                            "runs every simulation)",
                        100, "")
                    .c_str());
  }
}

Outcome run_advice(const Options& o, const Plan& plan, const SweepOptions& sweep, Study& study) {
  const ProgramRuns& program = plan.program;
  const bool racing = o.race && varies_scenarios(plan);
  const char* where = where_words(o);
  std::optional<CheckResult> checked;  // --check's result, once made
  std::map<int, std::vector<Dropped>> dropped;
  std::map<int, advice::NoneSettles> settled;
  StudyValue final_study = plan.study;
  int raced = 0;
  Race race;
  if (racing) {
    race = run_race(o, plan, sweep, study, where, program.spread);
    dropped = std::move(race.dropped);
    settled = std::move(race.settled);
    final_study = std::move(race.final);
    raced = race.status;
    checked = std::move(race.checked);
  }
  // The study file the launches read, replaced whole under the folder's lock (never seen half written), and its
  // simulations.
  SimulationEstimate final_estimate;  // the final round's, last made, for its pace below
  const auto sweep_final = [&] {
    {
      auto store = launch::open_output(sweep, study);
      store.rewrite_file(fs::path(plan.study_path).filename().string(),
                         [&](const fs::path&) { return study_file_text(final_study); });
    }
    final_estimate = launch::estimate_to_run(sweep, study);
    return simulate(o, sweep, study, final_study, final_estimate.host_s);
  };
  // How the simulations came out against their estimate, which the search's estimates are scaled by: the final
  // round's, or where it had too little left to run, the race's first round's.
  const auto final_start = std::chrono::steady_clock::now();
  int swept = sweep_final() != 0 || raced != 0 ? 1 : 0;
  Pace pace = pace_of(std::chrono::duration<double>(std::chrono::steady_clock::now() - final_start).count(),
                      final_estimate.wall_s);
  if (pace.words.empty()) pace = race.pace;
  const Backend backend = launch::sweep_backend(sweep);
  if (!dropped.empty()) {
    // The cut undone where it may have moved the answer: a dropped set-up ran the first scenario only, and elsewhere
    // it may have been the fastest (advice::cut_may_mislead). Then it runs every scenario there, as --no-race would.
    const double tol = tolerance_of(o, checked, program.spread).fraction;
    const advice::Tables kept = advice::tabulate(study, read_configurations(sweep.out), backend, o.draws, ideal_of);
    std::set<int> undo;
    for (const advice::AtRankCount& at : kept.at) {
      if (!dropped.contains(at.nprocs)) continue;
      try {
        const advice::Ranking r =
            advice::rank(at.scenarios, at.setups, at.none_index, tol, "", advice::dimension_words);
        if (advice::cut_may_mislead(r, tol)) undo.insert(at.nprocs);
      } catch (const std::invalid_argument&) {
        undo.insert(at.nprocs);  // none lacks a time somewhere: nothing vouches for the cut
      }
    }
    if (!undo.empty()) {
      StudyExclude exclude = race.settled_exclude;
      std::vector<std::string> words;
      for (const StudyRule& rule : race.cut_exclude) {  // each begins with its rank count (advice::exclude_rule)
        const bool undone = std::any_of(undo.begin(), undo.end(), [&](int n) {
          return !rule.empty() && rule.front() == std::pair<std::string, StudyScalar>("nprocs", int64_t{n});
        });
        if (!undone) exclude.push_back(rule);
      }
      for (const int n : undo) {
        words.push_back("P = " + std::to_string(n));
        dropped.erase(n);
      }
      std::printf("%s", wrapped("advise: racing's cut undone at " + join(words) +
                                    ": a set-up it dropped may be the fastest in a scenario it did not run, by enough "
                                    "to change the answer, so every set-up runs every scenario there",
                                100, "")
                            .c_str());
      final_study = study_of(plan, o, false, exclude);
      study = launch::load(sweep, final_study);
      swept |= sweep_final() != 0 ? 1 : 0;
    }
  }

  // The ranking, from what the folder holds for this study's points.
  const auto samples = read_configurations(sweep.out);
  // Per rank count, the rule's input: each set-up's time and one-off costs in every scenario.
  const advice::Tables tables = advice::tabulate(study, samples, backend, o.draws, ideal_of);
  const std::vector<advice::AtRankCount>& inputs = tables.at;
  const auto rank_all = [&](double tol, const std::string& tol_words) {
    std::vector<advice::Ranking> out;
    for (const advice::AtRankCount& at : inputs) {
      out.push_back(advice::rank(at.scenarios, at.setups, at.none_index, tol, tol_words, advice::dimension_words));
    }
    return out;
  };
  advice::Tolerance tolerance = tolerance_of(o, checked, program.spread);
  std::vector<advice::Ranking> rankings = rank_all(tolerance.fraction, tolerance.words);
  if (o.check_reps > 0 && !checked && !inputs.empty()) {
    // The two leading balancers of each rank count, with none: their replay measured against its simulation.
    std::vector<std::string> leaders = {"none"};
    for (std::size_t k = 0; k < rankings.size(); ++k) {
      std::vector<std::string> in_order;
      for (const advice::Row& row : rankings[k].rows)
        in_order.push_back(inputs[k].specs[row.members.front()]->balancer);
      add_leaders(leaders, in_order);
    }
    checked = check_replay(o, plan, sweep, study, leaders);
    tolerance = tolerance_of(o, checked, program.spread);
    rankings = rank_all(tolerance.fraction, tolerance.words);
  }
  const double tolerance_pct = tolerance.fraction * 100;
  // How many ranks are worth it: each rank count's advised set-up, its whole time in each scenario (matched across
  // the counts by what the scenario assumes), judged by the rule that ranks the set-ups.
  std::vector<advice::AtRanks> at_ranks;
  const std::vector<advice::Scenario> rank_scenarios =
      inputs.empty() ? std::vector<advice::Scenario>{} : inputs[0].scenarios;
  for (std::size_t k_at = 0; k_at < inputs.size(); ++k_at) {
    const advice::AtRankCount& in = inputs[k_at];
    at_ranks.push_back(advice::at_ranks_of(in.nprocs, rankings[k_at], in.setups, in.scenarios, rank_scenarios));
  }
  std::optional<advice::RanksAnswer> answer;
  if (at_ranks.size() > 1) {
    // Between the counts asked, where the fewest within the tolerance lies above the next one asked.
    Between between =
        search_between(o, plan, sweep, inputs, rankings, at_ranks, rank_scenarios, tolerance_pct / 100, pace);
    at_ranks.insert(at_ranks.end(), between.at.begin(), between.at.end());
    std::sort(at_ranks.begin(), at_ranks.end(),
              [](const advice::AtRanks& a, const advice::AtRanks& b) { return a.nprocs < b.nprocs; });
    answer =
        advice::fewest_ranks(at_ranks, rank_scenarios, tolerance_pct / 100, advice::dimension_words, between.searched);
  }
  Outcome out;
  out.tables = tables;
  out.rankings = std::move(rankings);
  out.dropped = std::move(dropped);
  out.settled = std::move(settled);
  out.tolerance = std::move(tolerance);
  out.answer = std::move(answer);
  out.failed = swept != 0;
  return out;
}

}  // namespace mcmclb::advising
