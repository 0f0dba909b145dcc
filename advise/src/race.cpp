// SPDX-License-Identifier: BSD-3-Clause
// `mcmclb advise`'s simulations (mcmclb/advise.hpp): one round as a sweep, the race between the set-ups and the search
// between the rank counts asked.
//
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

#include "mcmclb/advice.hpp"
#include "mcmclb/advice_check.hpp"
#include "mcmclb/advice_speedups.hpp"
#include "mcmclb/advice_table.hpp"
#include "mcmclb/advise.hpp"
#include "mcmclb/configurations.hpp"
#include "mcmclb/driver.hpp"  // emulated_ideal_s
#include "mcmclb/input_error.hpp"
#include "mcmclb/launch.hpp"
#include "mcmclb/provenance.hpp"  // host_busy_share
#include "mcmclb/runs_csv.hpp"
#include "mcmclb/study.hpp"
#include "mcmclb/text.hpp"
#include "mcmclb/trace.hpp"
#include "rounds.hpp"

namespace mcmclb::advising {

namespace fs = std::filesystem;
using advice::add_leaders;
using advice::Dropped;
using advice::first_round;
using advice::setup_label;

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

std::optional<double> ideal_of(const RunSpec& spec) { return emulated_ideal_s(spec); }

std::string set_aside_words(const Options& o, const Plan& plan) {
  if (plan.trace_chains == 0) return "";
  const std::size_t n = load_trace(o.input)->set_aside().size();
  if (n == 0) return "";
  return "; " + std::to_string(n) + (n == 1 ? " speed-up" : " speed-ups") + " above their ranks set aside";
}

std::string first_scenario_words(const Plan& plan) {
  std::vector<std::string> parts;
  for (const auto& [key, value] : plan.keys.keys) {
    if (key == "workload.extrapolate") parts.push_back("extrapolate " + plan.first_extrapolate);
    if (key == "zip" && is_map_zip(value)) parts.emplace_back("map tile");
    if (key == "workload.seed") parts.emplace_back("seed 1");
    if (key == "workload.speedups") parts.emplace_back("speedups median");
  }
  return join(parts);
}

bool varies_scenarios(const Plan& plan) {
  return std::any_of(plan.keys.keys.begin(), plan.keys.keys.end(), [](const auto& k) {
    return k.first == "workload.extrapolate" || (k.first == "zip" && is_map_zip(k.second)) ||
           k.first == "workload.seed" || k.first == "workload.speedups";
  });
}

// With --launcher slurm, sbatch --wait returns when the job ends; what finished stays in the folder either way, and
// advise run again resumes from it.
int simulate(const Options& o, const SweepOptions& sweep, const Study& study, const StudyValue& value, double host_s) {
  // The study as loaded, handed to the simulation launcher: its file, written beside the results, is for the user.
  if (o.launcher != "slurm") return launch::sweep_study(sweep, study, study_file_text(value));
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

/// A study of advise's own, kept as OUT/name beside its results so that the folder says what ran: the sweep options
/// that run it (sweep's, with that file as the study) and the study loaded from text. The store is opened as for
/// owner, or for that study where owner is null.
std::pair<SweepOptions, Study> own_study(const Options& o, const SweepOptions& sweep, const std::string& name,
                                         const StudyValue& value, const Study* owner) {
  SweepOptions s = sweep;
  s.study = launch::not_an_option((fs::path(o.out) / name).string());
  Study study = launch::load(s, value);
  auto store = launch::open_output(sweep, owner != nullptr ? *owner : study);
  store.rewrite_file(name, [&](const fs::path&) { return study_file_text(value); });
  return {std::move(s), std::move(study)};
}

StudyExclude all_but_none(const Options& o, int nprocs) {
  StudyExclude exclude;
  for (const std::string& b : o.balancers) {
    if (b == "none") continue;
    StudyRule rule;
    if (nprocs > 0) rule.emplace_back("nprocs", int64_t{nprocs});
    rule.emplace_back("balancer", b);
    exclude.push_back(std::move(rule));
  }
  return exclude;
}

Race run_race(const Options& o, const Plan& plan, const SweepOptions& sweep, Study& study, const char* where,
              const std::optional<advice::ToleranceSource>& spread) {
  Race race;
  // The none round: the runs the second round makes anyway, first. No set-up beats a scenario's ideal, so where
  // none's whole time is within the tolerance of the ideal in every scenario, no set-up can gain more than that:
  // the rank count is settled without simulating a balancer (at 8192 ranks each costs minutes of host time). The
  // tolerance before --check, which can only widen it: it settles no more than the check's would.
  StudyExclude settled_exclude;
  const StudyValue nones_value = study_of(plan, o, false, all_but_none(o, 0));
  const auto [nones, nones_study] = own_study(o, sweep, "advise-race-none.yaml", nones_value, &study);
  race.status = simulate(o, nones, nones_study, nones_value, launch::estimate_to_run(nones, nones_study).host_s);
  // Tabulated over the whole study, not the none round's: every scenario asked at a rank count must bound none,
  // including those none was not simulated under (their ideal computed), or a count settles on the flat rule alone.
  race.settled = advice::none_settles(
      advice::tabulate(study, read_configurations(nones.out), launch::sweep_backend(nones), o.draws, ideal_of),
      tolerance_of(o, std::nullopt, spread).fraction);
  std::vector<std::string> settled_words;
  for (const auto& [nprocs, s] : race.settled) {
    const StudyExclude here = all_but_none(o, nprocs);
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
    race.final = study_of(plan, o, false, settled_exclude);
    study = launch::load(sweep, race.final);
    if (o.check_reps > 0) race.checked = check_replay(o, plan, sweep, study, {"none"});
    return race;
  }
  const auto with_settled = [&](StudyExclude exclude) {
    exclude.insert(exclude.end(), settled_exclude.begin(), settled_exclude.end());
    return exclude;
  };
  const StudyValue first_value = study_of(plan, o, true, settled_exclude);
  const auto [first, first_study] = own_study(o, sweep, "advise-race.yaml", first_value, &study);
  const SimulationEstimate first_estimate = launch::estimate_to_run(first, first_study);
  const auto first_start = std::chrono::steady_clock::now();
  race.status |= simulate(o, first, first_study, first_value, first_estimate.host_s);
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
  const StudyValue second_value = study_of(plan, o, false, with_settled(advice::second_round_exclude(round)));
  const auto [second, second_study] = own_study(o, sweep, "advise-race-leaders.yaml", second_value, &study);
  race.status |= simulate(o, second, second_study, second_value, launch::estimate_to_run(second, second_study).host_s);
  const std::map<int, double> bounds = advice::winner_regret_bounds(
      advice::tabulate(second_study, read_configurations(second.out), first_backend, o.draws, ideal_of));
  advice::RaceCut cut = advice::race_cut(round, race_tolerance, bounds);
  race.dropped = std::move(cut.dropped);
  const StudyExclude exclude = std::move(cut.exclude);
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
  race.final = study_of(plan, o, false, with_settled(exclude));
  race.cut_exclude = exclude;
  race.settled_exclude = settled_exclude;
  study = launch::load(sweep, race.final);
  // The rest, estimated again: the survivors only, scaled by how the first round's estimate came out on this
  // host and this trace (the table behind the estimate is other traces', on another load).
  const SimulationEstimate rest = launch::estimate_to_run(sweep, study);
  race.pace = pace_of(first_wall_s, first_estimate.wall_s);
  std::printf("advise: %zu simulations left: about %s of wall time %s (the first round took %s, estimated %s)\n",
              rest.count, launch::format_seconds(rest.wall_s * race.pace.scale).c_str(), where,
              launch::format_seconds(first_wall_s).c_str(), launch::format_seconds(first_estimate.wall_s).c_str());
  return race;
}

}  // namespace mcmclb::advising
