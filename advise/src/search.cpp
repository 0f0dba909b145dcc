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
    const StudyValue value = study_of(at, o, false, {});
    const auto [s, study] = own_study(o, sweep, "advise-ranks.yaml", value, nullptr);
    const SimulationEstimate cost = launch::estimate_to_run(s, study);
    std::printf("advise: searching %d ranks, between %d and %d asked, with %s alone%s: %zu simulations, about %s\n",
                mid, below, top, label.c_str(), setup.balancer == "none" ? "" : " (and none)", cost.count,
                launch::format_seconds(cost.wall_s).c_str());
    std::fflush(stdout);
    (void)simulate(o, s, study, value, cost.host_s);
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

}  // namespace mcmclb::advising
