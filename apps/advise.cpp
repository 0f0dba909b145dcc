// SPDX-License-Identifier: BSD-3-Clause
// `mcmclb advise` (apps/advise.hpp): the advice study as a sweep of the simulation launcher, then the ranking.
//
// The study is the workload under every registered balancer (each with its default creation method) and finished
// rule, crossed with what the workload leaves open: for a trace, its speed-up past the largest measured group size
// (workload.extrapolate: usl, flat, amdahl, perfect) and, when it advises copies of the walkers (--copies), the map of
// its C recorded chains onto the study's chains (tile, and `draws` seeded draws); for another model, `draws` seeds of
// it. By default a trace's C walkers run as they ran (advice::walker_layout), several to a group where P < C. A
// set-up whose groups never grow (none, steal, stealrandom) runs under the first assumption only when its groups are
// no larger than every measured size, since the others cannot change it. Each combination is a scenario. The ranking
// and the verdict are the rule of mcmclb/advice.hpp: whole times (the calibration of pays and each set-up's own initial
// groups' creation included), minimax regret; the rank counts by the same rule. With --check, the tolerance of that
// rule is measured: the replay run for real at a core per rank against its simulation.
#include "advise.hpp"

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
#include <thread>
#include <vector>

#include "advise_plan.hpp"
#include "mcmclb/advice.hpp"
#include "mcmclb/advice_check.hpp"
#include "mcmclb/advice_speedups.hpp"
#include "mcmclb/advice_table.hpp"
#include "mcmclb/configurations.hpp"
#include "mcmclb/driver.hpp"  // emulated_ideal_s
#include "mcmclb/input_error.hpp"
#include "mcmclb/launch.hpp"
#include "mcmclb/provenance.hpp"  // host_busy_share
#include "mcmclb/runs_csv.hpp"
#include "mcmclb/study.hpp"
#include "mcmclb/text.hpp"
#include "mcmclb/trace.hpp"
#include "sweep.hpp"

namespace mcmclb {

namespace {

namespace fs = std::filesystem;
using namespace advising;
using advice::add_leaders;
using advice::Dropped;
using advice::first_round;
using advice::setup_label;

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

/// A point's ideal as its run computes it, without simulating it: it bounds a scenario that none alone was not
/// simulated under (none never merges, so it runs under one speed-up rule, but the others lower the ideal).
std::optional<double> ideal_of(const RunSpec& spec) { return emulated_ideal_s(spec); }

/// "; 3 speed-ups above their ranks set aside" for a trace that gave some (named at the start), else nothing.
std::string set_aside_words(const Options& o, const Plan& plan) {
  if (plan.trace_chains == 0) return "";
  const std::size_t n = load_trace(o.input)->set_aside().size();
  if (n == 0) return "";
  return "; " + std::to_string(n) + (n == 1 ? " speed-up" : " speed-ups") + " above their ranks set aside";
}

/// The race's first scenario in words, as scenario_words names scenarios.
std::string first_scenario_words(const Plan& plan) {
  std::vector<std::string> parts;
  for (const auto& [key, value] : plan.keys) {
    if (key == "workload.extrapolate") parts.push_back("extrapolate " + plan.first_extrapolate);
    if (key == "zip" && is_map_zip(value)) parts.emplace_back("map tile");
    if (key == "workload.seed") parts.emplace_back("seed 1");
    if (key == "workload.speedups") parts.emplace_back("speedups median");
  }
  return join(parts);
}

/// Whether the plan varies anything: more than one scenario, so that racing can save simulations.
bool varies_scenarios(const Plan& plan) {
  return std::any_of(plan.keys.begin(), plan.keys.end(), [](const auto& k) {
    return k.first == "workload.extrapolate" || (k.first == "zip" && is_map_zip(k.second)) ||
           k.first == "workload.seed" || k.first == "workload.speedups";
  });
}

/// --check's real runs, at most: a replay of the trace at a core per rank (check_run_s), repeated check_reps times
/// for none and each rule of the two leading balancers of each rank count. Which balancers lead is known only after
/// the race's first round, so the count is a bound: the balancers with the most rules, two per rank count.
struct CheckEstimate {
  std::size_t runs = 0, setups = 0;
  double each_s = 0, wall_s = 0;
};

CheckEstimate check_estimate(const Options& o, const Plan& plan, const Study& study) {
  CheckEstimate e;
  if (o.check_reps <= 0 || plan.trace_chains == 0) return e;
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
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
  e.wall_s = check_wall_s(static_cast<double>(e.runs) * e.each_s, e.runs);
  return e;
}

}  // namespace

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

namespace {

/// What the race decided: the set-ups it dropped per rank count, the study file for the rest, the first round's
/// exit status, and --check's result where the check ran after the first round.
struct Race {
  std::map<int, std::vector<Dropped>> dropped;
  std::map<int, advice::NoneSettles> settled;  // the rank counts none settles: nothing else simulated there
  std::string final_text;
  std::vector<std::string> cut_exclude, settled_exclude;  // final_text's exclude rules: the cut's, none's round's
  int status = 0;
  std::optional<CheckResult> checked;
};

/// A study of advise's own, kept as OUT/name beside its results so that the folder says what ran: the sweep options
/// that run it (sweep's, with that file as the study) and the study loaded from text. The store is opened as for
/// owner, or for that study where owner is null.
std::pair<SweepOptions, Study> own_study(const Options& o, const SweepOptions& sweep, const std::string& name,
                                         const std::string& text, const Study* owner) {
  SweepOptions s = sweep;
  s.study = launch::not_an_option((fs::path(o.out) / name).string());
  Study study = launch::load(s, text);
  auto store = launch::open_output(sweep, owner != nullptr ? *owner : study);
  store.rewrite_file(name, [&](const fs::path&) { return text; });
  return {std::move(s), std::move(study)};
}

/// The exclude rules that leave every balancer asked but none out, at nprocs ranks (0: at every rank count).
std::vector<std::string> all_but_none(const Options& o, int nprocs) {
  std::vector<std::string> exclude;
  for (const std::string& b : o.balancers) {
    if (b != "none")
      exclude.push_back("{" + (nprocs > 0 ? "nprocs: " + std::to_string(nprocs) + ", " : std::string()) +
                        "balancer: " + b + "}");
  }
  return exclude;
}

/// The race: none in every scenario (advise-race-none.yaml), which settles a rank count where it comes within the
/// tolerance of every scenario's ideal; then at the other rank counts every set-up on the first scenario
/// (advise-race.yaml), then --check where asked, then none and the two fastest in every scenario
/// (advise-race-leaders.yaml), which bound the winner's largest regret; the set-ups whose regret in the first
/// scenario exceeds that bound plus the tolerance are dropped from study, which is loaded again for the rest.
Race run_race(const Options& o, const Plan& plan, const SweepOptions& sweep, Study& study, const char* where,
              const std::optional<advice::ToleranceSource>& spread) {
  Race race;
  // The none round: the runs the second round makes anyway, first. No set-up beats a scenario's ideal, so where
  // none's whole time is within the tolerance of the ideal in every scenario, no set-up can gain more than that:
  // the rank count is settled without simulating a balancer (at 8192 ranks each costs minutes of host time). The
  // tolerance before --check, which can only widen it: it settles no more than the check's would.
  std::vector<std::string> settled_exclude;
  const auto [nones, nones_study] =
      own_study(o, sweep, "advise-race-none.yaml", study_text(plan, o, false, all_but_none(o, 0)), &study);
  race.status = simulate(o, nones, nones_study, launch::estimate_to_run(nones, nones_study).host_s);
  // Tabulated over the whole study, not the none round's: every scenario asked at a rank count must bound none,
  // including those none was not simulated under (their ideal computed), or a count settles on the flat rule alone.
  race.settled = advice::none_settles(
      advice::tabulate(study, read_configurations(nones.out), launch::sweep_backend(nones), o.draws, ideal_of),
      tolerance_of(o, std::nullopt, spread).fraction);
  std::vector<std::string> settled_words;
  for (const auto& [nprocs, s] : race.settled) {
    const std::vector<std::string> here = all_but_none(o, nprocs);
    settled_exclude.insert(settled_exclude.end(), here.begin(), here.end());
    settled_words.push_back("P = " + std::to_string(nprocs) + " (within " + fixed(s.regret * 100, 1) + " %)");
  }
  std::printf("%s", wrapped("advise: none in every scenario: " +
                                (settled_words.empty()
                                     ? std::string("it settles no rank count (its whole time exceeds an ideal by more "
                                                   "than the tolerance there)")
                                     : "within the tolerance of every scenario's ideal at " + join(settled_words) +
                                           ": no balancer is simulated there, none can gain more"),
                            100, "")
                        .c_str());
  if (race.settled.size() == std::set<long>(o.ranks.begin(), o.ranks.end()).size()) {  // no balancer to race
    race.final_text = study_text(plan, o, false, settled_exclude);
    study = launch::load(sweep, race.final_text);
    if (o.check_reps > 0) race.checked = check_replay(o, plan, sweep, study, {"none"});
    return race;
  }
  const auto with_settled = [&](std::vector<std::string> exclude) {
    exclude.insert(exclude.end(), settled_exclude.begin(), settled_exclude.end());
    return exclude;
  };
  const auto [first, first_study] =
      own_study(o, sweep, "advise-race.yaml", study_text(plan, o, true, settled_exclude), &study);
  const SimulationEstimate first_estimate = launch::estimate_to_run(first, first_study);
  const auto first_start = std::chrono::steady_clock::now();
  race.status |= simulate(o, first, first_study, first_estimate.host_s);
  const double first_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - first_start).count();
  const Backend first_backend = launch::sweep_backend(first);
  const auto round = first_round(first_study, read_configurations(first.out), first_backend);
  if (o.check_reps > 0) {
    std::vector<std::string> leaders = {"none"};
    for (const auto& [nprocs, setups] : round) {
      std::vector<std::string> in_order;
      for (const auto& [price, label_spec] : setups) in_order.push_back(label_spec.second->balancer);
      add_leaders(leaders, in_order);
    }
    race.checked = check_replay(o, plan, sweep, study, leaders);
  }
  const double race_tolerance = tolerance_of(o, race.checked, spread).fraction;
  // The second round, in the same folder (the first round's points are not run again).
  const auto [second, second_study] =
      own_study(o, sweep, "advise-race-leaders.yaml",
                study_text(plan, o, false, with_settled(advice::second_round_exclude(round))), &study);
  race.status |= simulate(o, second, second_study, launch::estimate_to_run(second, second_study).host_s);
  const std::map<int, double> bounds = advice::winner_regret_bounds(
      advice::tabulate(second_study, read_configurations(second.out), first_backend, o.draws, ideal_of));
  advice::RaceCut cut = advice::race_cut(round, race_tolerance, bounds);
  race.dropped = std::move(cut.dropped);
  const std::vector<std::string> exclude = std::move(cut.exclude);
  std::size_t count = 0;
  for (const auto& [nprocs, list] : race.dropped) count += list.size();
  std::string why;
  for (const auto& [nprocs, list] : round) {
    if (race.settled.contains(nprocs)) continue;  // none settled it: no balancer ran there to drop
    const auto b = bounds.find(nprocs);
    why += std::string(why.empty() ? "" : "; ") + "P = " + std::to_string(nprocs) + ": " +
           (b == bounds.end() ? "no bound, nothing dropped"
                              : fixed(b->second * 100, 1) + " % + " + advice::tolerance_percent(race_tolerance));
  }
  std::printf(
      "advise: racing dropped %zu set-up%s whose regret in the first scenario exceeds the most the "
      "winner's can reach, plus the tolerance (%s)\n",
      count, count == 1 ? "" : "s", why.c_str());
  race.final_text = study_text(plan, o, false, with_settled(exclude));
  race.cut_exclude = exclude;
  race.settled_exclude = settled_exclude;
  study = launch::load(sweep, race.final_text);
  // The rest, estimated again: the survivors only, scaled by how the first round's estimate came out on this
  // host and this trace (the table behind the estimate is other traces', on another load).
  const SimulationEstimate rest = launch::estimate_to_run(sweep, study);
  const double scale = first_estimate.wall_s > 0 && first_wall_s > 1 ? first_wall_s / first_estimate.wall_s : 1;
  std::printf("advise: %zu simulations left: about %s of wall time %s (the first round took %s, estimated %s)\n",
              rest.count, launch::format_seconds(rest.wall_s * scale).c_str(), where,
              launch::format_seconds(first_wall_s).c_str(), launch::format_seconds(first_estimate.wall_s).c_str());
  return race;
}

/// The rank counts the search between those asked tries at most (search_between); search_bound prices as many.
constexpr int kSearchedCounts = 3;

/// The rank search between the counts asked (search_between), bounded before anything runs: up to 3 counts, each
/// running none and one set-up in every scenario, none of them above the largest count asked nor dearer there than
/// the dearest set-up (`any`); where none settles every count, the set-up searched with is none alone (`none_only`).
/// Nothing where one count is asked, or the walkers come from no trace.
struct SearchBound {
  SimulationEstimate none_only, any;
};
SearchBound search_bound(const Options& o, const Plan& plan, const Study& study) {
  const std::set<long> counts(o.ranks.begin(), o.ranks.end());
  if (plan.trace_chains == 0 || counts.size() < 2) return {};
  const long top = *counts.rbegin();
  std::vector<const RunSpec*> nones;
  const RunSpec* dearest = nullptr;
  double dearest_s = 0;
  for (const Point& point : study.points) {
    const RunSpec& spec = point.spec;
    if (spec.nprocs != top) continue;
    if (spec.balancer == "none") {
      nones.push_back(&spec);
    } else if (const double s = simulated_host_s(spec); !dearest || s > dearest_s) {
      dearest = &spec;
      dearest_s = s;
    }
  }
  std::vector<const RunSpec*> none_only, any;
  for (int round = 0; round < kSearchedCounts; ++round) {
    for (const RunSpec* none : nones) {
      none_only.push_back(none);
      any.push_back(none);
      if (dearest) any.push_back(dearest);
    }
  }
  return {estimate_simulations(none_only, o.jobs), estimate_simulations(any, o.jobs)};
}

/// The keys of the advice study at nprocs ranks alone, for the rank counts searched between those asked: the walkers'
/// groups there (walker_layout, as plan_trace lays them out) and only the set-up given, with none (every rank
/// count's table prices against it).
std::vector<std::pair<std::string, std::string>> keys_at(const Plan& plan, const Options& o, long nprocs,
                                                         const RunSpec& setup) {
  std::vector<std::pair<std::string, std::string>> keys;
  const bool walkers = !plan.copies;
  const advice::WalkerLayout layout =
      walkers ? advice::walker_layout(*load_trace(o.input), nprocs) : advice::WalkerLayout{};
  const bool once = std::any_of(plan.keys.begin(), plan.keys.end(),
                                [](const auto& k) { return k.first == "workload.map" && k.second == "once"; });
  const std::string finished = setup.finished ? std::string(to_string(*setup.finished)) : "retire";
  for (const auto& [key, value] : plan.keys) {
    if (walkers && (key == "zip" || key == "groups.count" || key == "chains_per_group" || key == "nprocs")) continue;
    if (key == "nprocs") {
      keys.emplace_back(key, "[" + std::to_string(nprocs) + "]");
    } else if (key == "balancer") {
      keys.emplace_back(key, setup.balancer == "none" ? "[none]" : "[none, " + setup.balancer + "]");
    } else if (key == "interval") {
      // A balancer without an interval (none, steal, async) runs at 0, which no study may name: the plan's list
      // stands, and the study gives such a balancer one point whatever it lists.
      keys.emplace_back(key, setup.interval > 0 ? "[" + std::to_string(setup.interval) + "]" : value);
    } else if (key == "finished") {
      keys.emplace_back(key, "[" + finished + "]");
    } else {
      keys.emplace_back(key, value);
    }
  }
  if (walkers) {
    keys.emplace(keys.begin(), "nprocs", "[" + std::to_string(nprocs) + "]");
    keys.emplace_back("groups.count", std::to_string(layout.groups));
    if (once) keys.emplace_back("chains_per_group", std::to_string(layout.most));
  }
  return keys;
}

/// The rank counts between the fewest asked within the tolerance (fewest) and the next count asked below it:
/// bisected, up to 3 counts, each running fewest's advised set-up alone (with none) in every scenario. A count where
/// that set-up is within the tolerance of the fastest in every scenario is taken (its own best can only be faster);
/// one where it is not is passed over, though a set-up of its own might do better: said in `searched`.
struct Between {
  std::vector<advice::AtRanks> at;
  std::string searched;
};
Between search_between(const Options& o, const Plan& plan, const SweepOptions& sweep,
                       const std::vector<advice::AtRankCount>& inputs, const std::vector<advice::Ranking>& rankings,
                       const std::vector<advice::AtRanks>& asked, const std::vector<advice::Scenario>& scenarios,
                       double tolerance) {
  Between out;
  out.searched = "among the rank counts asked only";
  const auto first = advice::fewest_ranks(asked, scenarios, tolerance, advice::dimension_words, "");
  if (!first || plan.trace_chains == 0 || first->regret_max[first->fewest] > tolerance + 1e-12) return out;
  const int top = asked[first->fewest].nprocs;
  int below = 0;
  for (const advice::AtRanks& a : asked) {
    if (a.nprocs < top) below = std::max(below, a.nprocs);
  }
  const int step = plan.copies ? static_cast<int>(plan.group_size) : 1;  // copies: whole groups of G
  if (below == 0 || top - below <= step) return out;
  std::size_t k_top = 0;
  while (inputs[k_top].nprocs != top) ++k_top;
  const advice::Ranking& ranking = rankings[k_top];
  const RunSpec& setup = *inputs[k_top].specs[ranking.rows[ranking.verdict.winner].members.front()];
  const std::string label = setup_label(setup);
  std::vector<int> tried;
  std::string stopped;  // the counts the search could not judge over every scenario, and why it stopped early
  int lo = below, hi = top;
  for (int round = 0; round < kSearchedCounts; ++round) {
    const int mid = (lo + hi) / 2 / step * step;
    if (mid <= lo || mid >= hi) break;
    Plan at = plan;
    at.keys = keys_at(plan, o, mid, setup);
    const auto [s, study] = own_study(o, sweep, "advise-ranks.yaml", study_text(at, o, false, {}), nullptr);
    const SimulationEstimate cost = launch::estimate_to_run(s, study);
    std::printf("advise: searching %d ranks, between %d and %d asked, with %s alone%s: %zu simulations, about %s\n",
                mid, below, top, label.c_str(), setup.balancer == "none" ? "" : " (and none)", cost.count,
                launch::format_seconds(cost.wall_s).c_str());
    std::fflush(stdout);
    (void)simulate(o, s, study, cost.host_s);
    const Backend backend = launch::sweep_backend(s);
    const advice::Tables tables = advice::tabulate(study, read_configurations(s.out), backend, o.draws, ideal_of);
    advice::AtRanks found{mid, std::vector<double>(scenarios.size(), std::nan("")), label};
    for (const advice::AtRankCount& t : tables.at) {
      for (std::size_t k = 0; k < t.setups.size(); ++k) {
        if (t.setups[k].label != label) continue;
        for (std::size_t sc = 0; sc < scenarios.size(); ++sc) {
          for (std::size_t x = 0; x < t.scenarios.size(); ++x) {
            if (t.scenarios[x].values == scenarios[sc].values) found.whole_s[sc] = t.setups[k].price[x].whole_s();
          }
        }
      }
    }
    std::vector<std::string> lacking;  // the scenarios the set-up has no time in here
    for (std::size_t sc = 0; sc < scenarios.size(); ++sc) {
      if (!std::isfinite(found.whole_s[sc])) lacking.push_back(scenario_words(scenarios[sc], advice::dimension_words));
    }
    if (lacking.size() == scenarios.size()) {
      // No time in any scenario (failed simulations, in failures.csv): nothing to judge the count by.
      stopped += "; it stopped at " + std::to_string(mid) + " ranks, where " + label + " has no time at all (" +
                 (fs::path(o.out) / "failures.csv").string() + ")";
      std::printf("%s", wrapped("advise: search" + stopped, 100, "").c_str());
      break;
    }
    tried.push_back(mid);
    std::vector<advice::AtRanks> with = asked;
    with.push_back(found);
    // A count with no time in some scenario (a failed simulation) steers the search by the scenarios it has, and is
    // left out of the answer, which is judged over every scenario: said where it happens.
    const auto judged = advice::fewest_ranks(with, scenarios, tolerance, advice::dimension_words, "");
    const bool fits = judged && judged->regret_max.back() <= tolerance + 1e-12;
    if (lacking.empty()) {
      out.at.push_back(std::move(found));
    } else {
      const std::string gap = "; " + std::to_string(mid) + " ranks, where " + label + " has no time under " +
                              join(lacking) + " (" + (fs::path(o.out) / "failures.csv").string() +
                              "), steered it by the other scenarios and are left out of the answer";
      std::printf("%s", wrapped("advise: search" + gap, 100, "").c_str());
      stopped += gap;
    }
    (fits ? hi : lo) = mid;
  }
  if (tried.empty()) {
    out.searched += stopped;
    return out;
  }
  std::vector<std::string> counts;
  for (const int t : tried) counts.push_back(std::to_string(t));
  out.searched = "the counts asked and, between " + std::to_string(below) + " and " + std::to_string(top) + ", " +
                 join(counts) + " ranks by bisection, each with " + label +
                 " alone: a count it does not fit might fit with a set-up of its own" + stopped;
  return out;
}

/// The advice at one rank count: its table and verdict printed, its rows added to advice.csv's text, its notes,
/// and its winner's median time for the question how many ranks are worth it.
void print_at(const Plan& plan, const advice::AtRankCount& at, const advice::Ranking& ranking,
              const std::vector<Dropped>& dropped_here, const advice::NoneSettles* settled, double tolerance_pct,
              const std::string& measured_words, const advice::ToleranceSource& source, const std::string& ranks_answer,
              std::string& csv_text, std::set<std::string>& notes) {
  const int nprocs = at.nprocs;
  const auto& setups = at.setups;
  for (const auto& note : ranking.notes) notes.insert(note);
  // Where none settled the rank count, the verdict says so: the rule saw none alone.
  const std::string verdict =
      advice::verdict_words(plan, nprocs,
                            settled != nullptr ? advice::settled_verdict(*settled, tolerance_pct / 100, measured_words)
                                               : ranking.verdict.text);
  const std::string question = advice::walkers_words(plan, nprocs);
  const std::size_t m = ranking.scenarios.size();
  std::printf("\n%s", wrapped("advice at P = " + std::to_string(nprocs) + ": " + question + "; simulated, " +
                                  std::to_string(m) + (m == 1 ? " scenario" : " scenarios"),
                              100, "")
                          .c_str());
  std::printf("%-4s  %-36s  %-24s  %-14s  %s\n", "rank", "set-up", "whole / none [min, max]", "regret max/med",
              "break-even");
  advice::AdviceWords words{question, verdict, tolerance_pct, measured_words, ranks_answer, first_scenario_words(plan),
                            source};
  for (const csv::Row& row : advice::advice_rows(at, ranking, dropped_here, words)) csv_text += csv::line(row);
  for (std::size_t k = 0; k < ranking.rows.size(); ++k) {
    const advice::Row& r = ranking.rows[k];
    std::vector<std::string> same_as;
    for (std::size_t i = 1; i < r.members.size(); ++i) same_as.push_back(setups[r.members[i]].label);
    std::printf("%-4zu  %-36s  %-24s  %-14s  %s\n", k + 1, setups[r.members.front()].label.c_str(),
                (fixed(r.vs_none_median) + " [" + fixed(r.vs_none_min) + ", " + fixed(r.vs_none_max) + "]").c_str(),
                (fixed(r.regret_max * 100, 1) + "/" + fixed(r.regret_median * 100, 1) + " %").c_str(),
                r.break_even_s        ? (fixed_significant(*r.break_even_s) + " s").c_str()
                : r.never_breaks_even ? "never"
                                      : "");
    if (!same_as.empty()) std::printf("%s", wrapped("same times: " + join(same_as), 100, "      ").c_str());
  }
  // What the race dropped here: one scenario each, ranked after every set-up that ran them all.
  std::vector<std::string> shown;
  for (const Dropped& d : dropped_here) {
    const std::string same = d.same_as.empty() ? std::string() : " = " + join(d.same_as, " = ");
    shown.push_back(d.label + same + " (" + fixed(d.regret * 100, 1) + " %)");
  }
  if (!shown.empty()) {
    std::printf("%s", wrapped("dropped by the race after the first scenario (" + words.first_scenario +
                                  "), regret there: " + join(shown),
                              100, "      ")
                          .c_str());
  }
  // Its first line says where the tolerance came from: a verdict on an assumed one is read differently.
  std::printf("verdict at P = %d (tolerance %s, %s):\n%s", nprocs,
              advice::tolerance_percent(tolerance_pct / 100).c_str(), measured_words.c_str(),
              wrapped(verdict, 100, "  ").c_str());
  // The line to run: the advised set-up as a walkers program's options, and as a study's keys.
  const RunSpec& advised = *at.specs[ranking.rows[ranking.verdict.winner].members.front()];
  std::printf("run it at P = %d: mpiexec -n %d YOUR_PROGRAM %s\n  (in a study: %s)\n", nprocs, nprocs,
              advice::run_flags(advised).c_str(), advice::run_keys(advised).c_str());
}

}  // namespace

int advise_main(const std::vector<std::string>& args) {
  std::vector<std::string> words = {"mcmclb", "advise"};
  words.insert(words.end(), args.begin(), args.end());
  std::string command_line;
  for (const auto& w : words) command_line += (command_line.empty() ? "" : " ") + shell_quote(w);
  Options o = parse(args, command_line);
  if (o.out.empty()) o.out = default_out(o);
  const Plan plan = make_plan(o);
  // How busy the host is now, over 1 s with --check (whose refusal needs a steady figure), else 0.2 s: the estimate
  // stretches by it. The load average would lag by a minute behind a host just made idle.
  const auto busy = host_busy_share(std::chrono::milliseconds(o.check_reps > 0 ? 1000 : 200));
  // --check on a busy host is refused before anything runs: its real runs would time the other programs too, and
  // their error would set the tolerance. A dry run only says so.
  if (o.check_reps > 0) {
    if (busy && *busy > o.check_busy_share) {
      const std::string line =
          "--check: " + advice::busy_refusal(*busy, o.check_busy_share, "the host is",
                                             "(its CPU time over 1 s, /proc/stat)",
                                             "its real runs would time the other programs too", false);
      if (!o.dry_run) throw InputError(line);
      std::printf("advise: warning: %s\n", line.c_str());
    }
  }
  const ProgramRuns& program = plan.program;

  SweepOptions sweep;
  sweep.study = launch::not_an_option(plan.study_path);
  sweep.launcher = "smpi";
  sweep.platform = o.platform.empty() ? std::string(MCMCLB_SOURCE_DIR) + "/configs/platforms/fattree.xml" : o.platform;
  sweep.sim_binary = o.sim_binary.empty() ? simulation_build() : o.sim_binary;
  sweep.smpi_flags = o.smpi_flags;
  sweep.out = launch::not_an_option(o.out);
  sweep.jobs = static_cast<int>(o.jobs);
  sweep.points_per_launch = 1;  // a point that fails or is stopped loses no other; a start-up costs about 0.1 s
  // The whole study, checked before anything is written: the workload, every key, the platform and the build.
  Study study = launch::load(sweep, plan.study_text);
  launch::check_smpi(sweep, study);
  std::size_t skipped = 0;
  const SimulationEstimate whole = launch::estimate_to_run(sweep, study, &skipped);
  if (o.launcher == "local") launch::check_memory(whole, "fewer --jobs, fewer --ranks, or --launcher slurm");
  std::vector<std::string> ranks;
  for (const long r : o.ranks) ranks.push_back(std::to_string(r));
  std::printf("advise: %s at P = %s, simulated on %s\n", plan.workload.c_str(), join(ranks).c_str(),
              platform_identity(sweep.platform).c_str());
  for (const long r : o.ranks) {
    std::printf("  asks at P = %ld: %s\n", r, advice::walkers_words(plan, static_cast<int>(r)).c_str());
  }
  for (const auto& w : plan.warnings) std::printf("advise: warning: %s\n", w.c_str());
  if (!plan.cut_short.empty()) std::printf("advise: warning: %s\n", plan.cut_short.c_str());
  for (const auto& a : plan.assumptions) std::printf("  varies %s\n", a.c_str());
  for (const auto& s : plan.skipped) std::printf("  skips %s\n", s.c_str());
  if (program.spread) {
    std::printf("%s", wrapped("advise: your program's own runs at P = " + std::to_string(program.spread->nprocs) +
                                  ", n = " + std::to_string(program.spread->n) + ": " + program.spread->detail +
                                  "; the tolerance is at least that",
                              100, "")
                          .c_str());
  }
  for (const std::string& line : program.advice) std::printf("advise: %s\n", line.c_str());
  const bool racing = o.race && varies_scenarios(plan);
  const char* where = o.launcher == "slurm" ? "in batch jobs, once they start" : "here";
  std::printf(
      "advise: %zu simulations, %zu already in %s, %zu to run, %ld at a time: about %s of wall time %s%s "
      "(each simulation's host time from its set-up, its ranks and its items, as measured on a 2-core VM)\n",
      study.points.size(), skipped, sweep.out.c_str(), whole.count, o.jobs,
      launch::format_seconds(whole.wall_s).c_str(), where, racing ? " if racing drops nothing" : "");
  // Racing, none runs first in every scenario; where it settles every rank count asked, that is all.
  std::optional<SimulationEstimate> nones;
  if (racing) {
    nones = launch::estimate_to_run(sweep, launch::load(sweep, study_text(plan, o, false, all_but_none(o, 0))));
  }
  {
    // The whole advice: the simulations, --check's real runs, stretched by the host's load (the simulations and
    // the runs share the cores with what else runs: other programs busy a share b of the cores' time, b C of them,
    // so each of ours gets C / (C + b C)).
    const CheckEstimate check = check_estimate(o, plan, study);
    const SearchBound search = search_bound(o, plan, study);
    double total_s = whole.wall_s + search.any.wall_s + check.wall_s;
    double settled_s = nones ? nones->wall_s + search.none_only.wall_s + check.wall_s : 0;
    double unsearched_s = whole.wall_s + check.wall_s;  // without racing: the advice if it searches no count
    std::string parts = "the simulations";
    if (search.any.count > 0) {
      parts += ", the search between the rank counts asked (up to " + std::to_string(search.any.count) +
               " simulations, " + launch::format_seconds(search.any.wall_s) + ")";
    }
    if (check.runs > 0) {
      parts += " and --check's " + std::to_string(check.runs) + " real runs (" + std::to_string(check.setups) +
               " set-ups at most x " + std::to_string(o.check_reps) + " repetitions x about " +
               launch::format_seconds(check.each_s) +
               " each, start-up included: " + launch::format_seconds(check.wall_s) + ")";
    }
    std::string stretched;
    if (busy && *busy > 0.05) {
      const double factor = 1 + *busy;
      total_s *= factor;
      settled_s *= factor;
      unsearched_s *= factor;
      stretched = ", x" + fixed(factor, 2) + " for the host's load (other programs kept " + fixed(100 * *busy, 0) +
                  " % of its CPU time busy just now, /proc/stat)";
    }
    // A race's time depends on what none's round finds, and whether the counts between those asked are searched
    // on what the simulations find, so either is given as a range, not one figure.
    std::string span = launch::format_seconds(total_s) + " " + where;
    if (nones) {
      span = launch::format_seconds(settled_s) + " " + where + " if none settles every rank count asked, up to " +
             launch::format_seconds(total_s) + " if racing drops no set-up";
    } else if (search.any.count > 0) {
      span = launch::format_seconds(unsearched_s) + " " + where + ", up to " + launch::format_seconds(total_s) +
             " if it searches between the rank counts asked";
    }
    std::printf("%s", wrapped("advise: in all about " + span + ": " + parts + stretched, 100, "").c_str());
  }
  std::optional<SimulationEstimate> first_estimate;
  if (racing) {
    first_estimate = launch::estimate_to_run(sweep, launch::load(sweep, study_text(plan, o, true, {})));
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
  if (o.dry_run) {
    std::printf("advise: dry run, nothing run or written\n");
    return 0;
  }
  std::optional<CheckResult> checked;  // --check's result, once made
  std::map<int, std::vector<Dropped>> dropped;
  std::map<int, advice::NoneSettles> settled;
  std::string final_text = plan.study_text;
  int raced = 0;
  Race race;
  if (racing) {
    race = run_race(o, plan, sweep, study, where, program.spread);
    dropped = std::move(race.dropped);
    settled = std::move(race.settled);
    final_text = std::move(race.final_text);
    raced = race.status;
    checked = std::move(race.checked);
  }
  // The study file the launches read, replaced whole under the folder's lock (never seen half written), and its
  // simulations.
  const auto sweep_final = [&] {
    {
      auto store = launch::open_output(sweep, study);
      store.rewrite_file(fs::path(plan.study_path).filename().string(), [&](const fs::path&) { return final_text; });
    }
    return simulate(o, sweep, study, launch::estimate_to_run(sweep, study).host_s);
  };
  int swept = sweep_final() != 0 || raced != 0 ? 1 : 0;
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
      std::vector<std::string> exclude = race.settled_exclude, words;
      for (const std::string& rule : race.cut_exclude) {
        const bool undone = std::any_of(
            undo.begin(), undo.end(), [&](int n) { return rule.rfind("{nprocs: " + std::to_string(n) + ",", 0) == 0; });
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
      final_text = study_text(plan, o, false, exclude);
      study = launch::load(sweep, final_text);
      swept |= sweep_final() != 0 ? 1 : 0;
    }
  }

  // The ranking, from what the folder holds for this study's points.
  const auto samples = read_configurations(sweep.out);
  // Per rank count, the rule's input: each set-up's time and one-off costs in every scenario.
  const advice::Tables tables = advice::tabulate(study, samples, backend, o.draws, ideal_of);
  const std::vector<advice::AtRankCount>& inputs = tables.at;
  const std::size_t missing = tables.missing;
  std::string csv_text = csv::line(advice::advice_header());
  std::set<std::string> notes;  // printed once per advice, whatever the rank counts
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
  const std::string& measured_words = tolerance.words;
  // How many ranks are worth it: each rank count's advised set-up, its whole time in each scenario (matched across
  // the counts by what the scenario assumes), judged by the rule that ranks the set-ups.
  std::vector<advice::AtRanks> at_ranks;
  const std::vector<advice::Scenario> rank_scenarios =
      inputs.empty() ? std::vector<advice::Scenario>{} : inputs[0].scenarios;
  for (std::size_t k_at = 0; k_at < inputs.size(); ++k_at) {
    const advice::Ranking& r = rankings[k_at];
    const advice::AtRankCount& in = inputs[k_at];
    const advice::Setup& advised = in.setups[r.rows[r.verdict.winner].members.front()];
    advice::AtRanks a{in.nprocs, std::vector<double>(rank_scenarios.size(), std::nan("")), advised.label};
    for (std::size_t s = 0; s < rank_scenarios.size(); ++s) {
      for (std::size_t t = 0; t < in.scenarios.size(); ++t) {
        if (in.scenarios[t].values == rank_scenarios[s].values) a.whole_s[s] = advised.price[t].whole_s();
      }
    }
    at_ranks.push_back(std::move(a));
  }
  std::optional<advice::RanksAnswer> answer;
  if (at_ranks.size() > 1) {
    // Between the counts asked, where the fewest within the tolerance lies above the next one asked.
    Between between = search_between(o, plan, sweep, inputs, rankings, at_ranks, rank_scenarios, tolerance_pct / 100);
    at_ranks.insert(at_ranks.end(), between.at.begin(), between.at.end());
    std::sort(at_ranks.begin(), at_ranks.end(),
              [](const advice::AtRanks& a, const advice::AtRanks& b) { return a.nprocs < b.nprocs; });
    answer =
        advice::fewest_ranks(at_ranks, rank_scenarios, tolerance_pct / 100, advice::dimension_words, between.searched);
  }
  // On a cut-short trace the rank counts compare walkers that may lack their last items, and with copies they
  // compare more walkers at more ranks: each said with the answer.
  std::string ranks_answer;
  if (answer) {
    ranks_answer = (plan.cut_short.empty() ? "" : "on the cut-short trace: ") +
                   (plan.copies ? "copies (P / G x W walkers, more at more ranks): " : std::string()) + answer->text;
  }
  for (std::size_t k_at = 0; k_at < inputs.size(); ++k_at) {
    const auto settles = settled.find(inputs[k_at].nprocs);
    print_at(plan, inputs[k_at], rankings[k_at], dropped[inputs[k_at].nprocs],
             settles == settled.end() ? nullptr : &settles->second, tolerance_pct, measured_words, tolerance.source,
             ranks_answer, csv_text, notes);
  }
  if (answer) {
    std::printf("\n%s", wrapped("ranks: " + ranks_answer, 100, "").c_str());
  }
  for (const auto& note : notes) std::printf("%s", wrapped("note: " + note, 100, "").c_str());
  std::printf("\n%s",
              wrapped("limits: simulated with SimGrid on " + platform_identity(sweep.platform) +
                          ", a model of a machine, not a measurement; each set-up with its default creation method; " +
                          (plan.assumptions.empty() ? "nothing assumed" : "assumed: " + join(plan.assumptions, "; ")) +
                          set_aside_words(o, plan) +
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
