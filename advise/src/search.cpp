// SPDX-License-Identifier: BSD-3-Clause
// The search between the rank counts `mcmclb advise` is asked (advise/src/rounds.hpp): bounded before anything runs,
// then bisected where the fewest ranks within the tolerance lie above the next count asked.
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

namespace {

/// The counts a bisection between lo and hi (in steps of `step`) tries, at most kSearchedCounts: toward lo after a
/// count that fits, toward hi after one that does not.
template <typename Fits>
std::vector<int> bisect(int lo, int hi, int step, Fits&& fits) {
  std::vector<int> out;
  for (int round = 0; round < kSearchedCounts; ++round) {
    const int mid = (lo + hi) / 2 / step * step;
    if (mid <= lo || mid >= hi) break;
    out.push_back(mid);
    (fits(mid) ? hi : lo) = mid;
  }
  return out;
}

/// The counts the bisection between lo and hi tries toward hi, the dearest way it can go.
std::vector<int> counts_toward(int lo, int hi, int step) {
  return bisect(lo, hi, step, [](int) { return false; });
}

/// A point of the study moved to nprocs ranks, its initial groups no more than the ranks: what the search runs
/// there, near enough to price it.
RunSpec moved_to(const RunSpec& spec, int nprocs) {
  RunSpec at = spec;
  at.nprocs = nprocs;
  at.groups.count = std::min<int64_t>(at.groups.count, nprocs);
  return at;
}

/// The search's steps priced at `counts`, as search_between runs them: at each count one sweep per set-up (its
/// points, one per scenario, moved there), none's points in the first, and advise's own work between sweeps.
SimulationEstimate price_search(const std::vector<const RunSpec*>& nones,
                                const std::vector<std::vector<const RunSpec*>>& setups, const std::vector<int>& counts,
                                long jobs, const CpuCapacity& cpu) {
  SimulationEstimate price;
  for (const int at : counts) {
    for (std::size_t c = 0; c < std::max<std::size_t>(setups.size(), 1); ++c) {
      std::vector<RunSpec> moved;
      if (c == 0) {
        for (const RunSpec* none : nones) moved.push_back(moved_to(*none, at));
      }
      if (c < setups.size()) {
        for (const RunSpec* spec : setups[c]) moved.push_back(moved_to(*spec, at));
      }
      std::vector<const RunSpec*> specs;
      for (const RunSpec& m : moved) specs.push_back(&m);
      const SimulationEstimate step = estimate_simulations(specs, jobs, cpu);
      price.count += step.count;
      price.host_s += step.host_s;
      price.wall_s += step.wall_s + kSearchStepS;
    }
  }
  return price;
}

/// The search as the scenarios' ideals foresee it (the ideal depends on the scenario and the count, not on the
/// set-up, so the points at hi moved to each count give it there). A count fits where its ideal lies within the
/// tolerance of the best of the counts judged in every scenario, the rank rule's threshold on ideals instead of
/// times. The search may run wherever lo's ideal lies above the best at all: the set-up advised at lo is the
/// simplest of those tied within the tolerance of the fastest, so its time can lie up to the tolerance above lo's
/// ideal, and past the tolerance of hi's (or `searching`: it is known to run). It bisects toward lo where a count
/// fits, toward hi where not: the counts it would try. A foresight, not a bound.
struct Foreseen {
  std::vector<int> counts;                 // the counts the search would try; empty where it would not run
  std::optional<advice::Scenario> reason;  // where it runs: the scenario whose ideal at lo lies furthest above
  double above = 0;                        // by how much (a fraction of the best)
};
Foreseen foresee_search(const std::vector<const RunSpec*>& at_hi, int lo, int hi, int step, double tolerance,
                        bool searching) {
  std::map<int, std::map<advice::ScenarioValues, double>> ideals;
  const auto ideals_at = [&](int n) -> const std::map<advice::ScenarioValues, double>& {
    if (!ideals.contains(n)) {
      Study moved;
      for (const RunSpec* spec : at_hi) moved.points.push_back(Point{0, moved_to(*spec, n), {}, Program::kernel, {}});
      ideals[n] = advice::scenario_ideals(moved, [](const RunSpec& spec) { return emulated_ideal_s(spec); })[n];
    }
    return ideals[n];
  };
  std::vector<int> judged = {lo, hi};
  // The largest fraction by which n's ideal lies above the best of the counts judged, and in which scenario.
  const auto above_best = [&](int n) {
    std::pair<double, std::optional<advice::ScenarioValues>> worst{0, std::nullopt};
    for (const auto& [scenario, ideal] : ideals_at(n)) {
      double best = ideal;
      for (const int j : judged) {
        const auto& at = ideals_at(j);
        if (const auto found = at.find(scenario); found != at.end()) best = std::min(best, found->second);
      }
      if (best > 0 && ideal / best - 1 > worst.first) worst = {ideal / best - 1, scenario};
    }
    return worst;
  };
  Foreseen out;
  const auto [lo_above, lo_scenario] = above_best(lo);
  constexpr double kApart = 1e-3;  // ideals closer than this are the same ideal, computed twice
  if (lo_above <= kApart && !searching) return out;
  if (lo_above > kApart) {
    out.reason = advice::Scenario{*lo_scenario, 1, 0};
    out.above = lo_above;
  }
  out.counts = bisect(lo, hi, step, [&](int mid) {
    judged.push_back(mid);
    return above_best(mid).first <= tolerance;
  });
  return out;
}

}  // namespace

Pace pace_of(double took_s, double estimated_s) {
  Pace pace;
  if (estimated_s <= 0 || took_s <= 1) return pace;  // nothing ran long enough to judge by
  pace.scale = took_s / estimated_s;
  pace.words = " (scaled by how the simulations so far came out: " + launch::format_seconds(took_s) + " against " +
               launch::format_seconds(estimated_s) + " estimated)";
  return pace;
}

SearchBound search_bound(const Options& o, const Plan& plan, const Study& study, const SweepOptions& sweep) {
  const std::set<long> asked(o.ranks.begin(), o.ranks.end());
  if (plan.trace_chains == 0 || asked.size() < 2) return {};
  // The two largest counts asked: the widest stretch of the dearest simulations the search can walk.
  const int hi = static_cast<int>(*asked.rbegin());
  const int lo = static_cast<int>(*std::next(asked.rbegin()));
  const int step = plan.copies ? static_cast<int>(plan.group_size) : 1;
  // Each set-up's own points at hi, one per scenario: at most every one asked can win around the search's counts.
  std::vector<const RunSpec*> nones;
  std::map<std::string, std::vector<const RunSpec*>> by_label;
  for (const Point& point : study.points) {
    if (point.spec.nprocs != hi) continue;
    if (point.spec.balancer == "none") {
      nones.push_back(&point.spec);
    } else {
      by_label[advice::setup_label(point.spec)].push_back(&point.spec);
    }
  }
  std::vector<std::vector<const RunSpec*>> setups;
  for (auto& [label, specs] : by_label) setups.push_back(std::move(specs));
  const std::vector<int> toward = counts_toward(lo, hi, step);
  SearchBound bound;
  bound.none_only = price_search(nones, {}, toward, o.jobs, sweep.cpu);
  bound.any = price_search(nones, setups, toward, o.jobs, sweep.cpu);
  std::vector<const RunSpec*> at_hi = nones;
  for (const auto& specs : setups) at_hi.insert(at_hi.end(), specs.begin(), specs.end());
  const Foreseen foreseen =
      foresee_search(at_hi, lo, hi, step, tolerance_of(o, std::nullopt, plan.program.spread).fraction, false);
  if (!foreseen.counts.empty()) bound.foreseen = price_search(nones, setups, foreseen.counts, o.jobs, sweep.cpu);
  bound.likely = foreseen.reason;
  bound.ideal_above = foreseen.above;
  bound.lo = lo;
  bound.hi = hi;
  return bound;
}

namespace {

/// The keys of the advice study at nprocs ranks alone, for the rank counts searched between those asked: the walkers'
/// groups there (walker_layout, as plan_trace lays them out) and only the set-up given, with none (every rank
/// count's table prices against it).
StudyValue keys_at(const Plan& plan, const Options& o, long nprocs, const RunSpec& setup) {
  StudyValue keys;
  const bool walkers = !plan.copies;
  const advice::WalkerLayout layout =
      walkers ? advice::walker_layout(*load_trace(o.input), nprocs) : advice::WalkerLayout{};
  const StudyEntry* map = plan.keys.find("workload.map");
  const bool once = map != nullptr && *map == StudyEntry(StudyScalar("once"));
  const std::string finished = setup.finished ? std::string(to_string(*setup.finished)) : "retire";
  for (const auto& [key, value] : plan.keys.keys) {
    if (walkers && (key == "zip" || key == "groups.count" || key == "chains_per_group" || key == "nprocs")) continue;
    if (key == "nprocs") {
      keys.keys.emplace_back(key, StudyList{int64_t{nprocs}});
    } else if (key == "balancer") {
      keys.keys.emplace_back(key, setup.balancer == "none" ? StudyList{"none"} : StudyList{"none", setup.balancer});
    } else if (key == "interval") {
      // A balancer without an interval (none, steal, async) runs at 0, which no study may name: the plan's list
      // stands, and the study gives such a balancer one point whatever it lists.
      keys.keys.emplace_back(key, setup.interval > 0 ? StudyEntry(StudyList{int64_t{setup.interval}}) : value);
    } else if (key == "finished") {
      keys.keys.emplace_back(key, StudyList{finished});
    } else {
      keys.keys.emplace_back(key, value);
    }
  }
  if (walkers) {
    keys.keys.emplace(keys.keys.begin(), "nprocs", StudyList{int64_t{nprocs}});
    keys.keys.emplace_back("groups.count", StudyScalar(int64_t{layout.groups}));
    if (once) keys.keys.emplace_back("chains_per_group", StudyScalar(int64_t{layout.most}));
  }
  return keys;
}

}  // namespace

Between search_between(const Options& o, const Plan& plan, const SweepOptions& sweep,
                       const std::vector<advice::AtRankCount>& inputs, const std::vector<advice::Ranking>& rankings,
                       const std::vector<advice::AtRanks>& asked, const std::vector<advice::Scenario>& scenarios,
                       double tolerance, const Pace& pace) {
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
  // The set-ups that can win between the two counts: the winner and the tied set-ups of each, simplest first, once.
  std::vector<const RunSpec*> setups;
  std::vector<std::string> labels;
  for (const int count : {below, top}) {
    std::size_t k = 0;
    while (inputs[k].nprocs != count) ++k;
    const advice::Verdict& verdict = rankings[k].verdict;
    std::vector<std::size_t> rows = verdict.tied;
    if (rows.empty()) rows.push_back(verdict.winner);
    for (const std::size_t row : rows) {
      const RunSpec* spec = inputs[k].specs[rankings[k].rows[row].members.front()];
      const std::string label = advice::setup_label(*spec);
      if (std::find(labels.begin(), labels.end(), label) != labels.end()) continue;
      labels.push_back(label);
      setups.push_back(spec);
    }
  }
  {
    // What the search will take, before it starts: the set-ups that can win, priced as search_bound prices them,
    // scaled by how the simulations so far came out.
    std::size_t k = 0;
    while (inputs[k].nprocs != top) ++k;
    std::vector<std::vector<const RunSpec*>> points(setups.size());
    std::vector<const RunSpec*> nones;
    for (const RunSpec* spec : inputs[k].specs) {
      if (spec->balancer == "none") nones.push_back(spec);
      const auto c = std::find(labels.begin(), labels.end(), advice::setup_label(*spec));
      if (c != labels.end() && spec->balancer != "none")
        points[static_cast<std::size_t>(c - labels.begin())].push_back(spec);
    }
    std::vector<const RunSpec*> at_top(inputs[k].specs.begin(), inputs[k].specs.end());
    const Foreseen foreseen = foresee_search(at_top, below, top, step, tolerance, true);
    const SimulationEstimate likely = price_search(nones, points, foreseen.counts, o.jobs, sweep.cpu);
    const SimulationEstimate most = price_search(nones, points, counts_toward(below, top, step), o.jobs, sweep.cpu);
    std::vector<std::string> foreseen_counts;
    for (const int c : foreseen.counts) foreseen_counts.push_back(std::to_string(c));
    std::printf(
        "%s", wrapped("advise: searching between " + std::to_string(below) + " and " + std::to_string(top) +
                          " ranks with " + std::to_string(labels.size()) + " set-up" + (labels.size() == 1 ? "" : "s") +
                          ": about " + launch::format_seconds(likely.wall_s * pace.scale) +
                          " (the ideals foresee it at " + join(foreseen_counts) + " ranks), up to " +
                          launch::format_seconds(most.wall_s * pace.scale) + pace.words,
                      100, "")
                  .c_str());
    std::fflush(stdout);
  }
  std::vector<int> tried;
  std::string stopped;  // the counts the search could not judge over every scenario, and why it stopped early
  int lo = below, hi = top;
  for (int round = 0; round < kSearchedCounts; ++round) {
    const int mid = (lo + hi) / 2 / step * step;
    if (mid <= lo || mid >= hi) break;
    // Every set-up searched, with none, priced in the scenarios' order (NaN where it has no time): ranked at mid by
    // the rule that ranks every count asked, so each count's set-up is chosen the same way.
    std::vector<advice::Setup> at_mid;
    for (std::size_t c = 0; c < setups.size(); ++c) {
      const RunSpec& setup = *setups[c];
      Plan at = plan;
      at.keys = keys_at(plan, o, mid, setup);
      const StudyValue value = study_of(at, o, false, {});
      const std::string name = c == 0 ? "advise-ranks.yaml" : "advise-ranks-" + std::to_string(c + 1) + ".yaml";
      const auto [s, study] = own_study(o, sweep, name, value, nullptr);
      const SimulationEstimate cost = launch::estimate_to_run(s, study);
      std::printf("advise: searching %d ranks, between %d and %d asked, with %s%s: %zu simulations, about %s\n", mid,
                  below, top, labels[c].c_str(), setup.balancer == "none" ? "" : " (and none)", cost.count,
                  launch::format_seconds(cost.wall_s * pace.scale).c_str());
      std::fflush(stdout);
      (void)simulate(o, s, study, value, cost.host_s);
      const Backend backend = launch::sweep_backend(s);
      const advice::Tables tables = advice::tabulate(study, read_configurations(s.out), backend, o.draws, ideal_of);
      for (const advice::AtRankCount& t : tables.at) {
        for (const advice::Setup& found : t.setups) {
          if (std::any_of(at_mid.begin(), at_mid.end(), [&](const advice::Setup& x) { return x.label == found.label; }))
            continue;
          advice::Setup moved{found.label, found.family, std::vector<advice::Price>(scenarios.size())};
          for (std::size_t sc = 0; sc < scenarios.size(); ++sc) {
            moved.price[sc].run_s = std::nan("");
            for (std::size_t x = 0; x < t.scenarios.size(); ++x) {
              if (t.scenarios[x].values == scenarios[sc].values) moved.price[sc] = found.price[x];
            }
          }
          at_mid.push_back(std::move(moved));
        }
      }
    }
    const auto none_at =
        std::find_if(at_mid.begin(), at_mid.end(), [](const advice::Setup& x) { return x.label == "none"; });
    std::optional<advice::Ranking> ranking;
    if (none_at != at_mid.end()) {
      try {
        ranking = advice::rank(scenarios, at_mid, static_cast<std::size_t>(none_at - at_mid.begin()), tolerance, "",
                               advice::dimension_words);
      } catch (const std::invalid_argument&) {  // none lacks a time in some scenario: every count is priced against it
      }
    }
    if (!ranking) {
      // none lacks a time in some scenario (failed simulations, in failures.csv): every set-up is priced against
      // none's, so nothing judges the count.
      stopped += "; it stopped at " + std::to_string(mid) + " ranks, where none lacks a time in some scenario (" +
                 (fs::path(o.out) / "failures.csv").string() + ")";
      std::printf("%s", wrapped("advise: search" + stopped, 100, "").c_str());
      break;
    }
    for (const std::string& note : ranking->notes) {  // a set-up left out for a failed simulation, said where it is
      std::printf("%s", wrapped("advise: search at " + std::to_string(mid) + " ranks: " + note, 100, "").c_str());
    }
    advice::AtRanks found = advice::at_ranks_of(mid, *ranking, at_mid, scenarios, scenarios);
    tried.push_back(mid);
    std::vector<advice::AtRanks> with = asked;
    with.push_back(found);
    const auto judged = advice::fewest_ranks(with, scenarios, tolerance, advice::dimension_words, "");
    const bool fits = judged && judged->regret_max.back() <= tolerance + 1e-12;
    out.at.push_back(std::move(found));
    (fits ? hi : lo) = mid;
  }
  if (tried.empty()) {
    out.searched += stopped;
    return out;
  }
  std::vector<std::string> counts;
  for (const int t : tried) counts.push_back(std::to_string(t));
  out.searched = "the counts asked and, between " + std::to_string(below) + " and " + std::to_string(top) + ", " +
                 join(counts) + " ranks by bisection, each with the set-ups that won or tied at " +
                 std::to_string(below) + " or " + std::to_string(top) + " ranks (" + join(labels) + ")" + stopped;
  return out;
}

}  // namespace mcmclb::advising
