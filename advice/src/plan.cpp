// SPDX-License-Identifier: BSD-3-Clause
// What `mcmclb advise` simulates (mcmclb/advice_plan.hpp).
#include <algorithm>
#include <string>
#include <vector>

#include "mcmclb/advice_plan.hpp"
#include "mcmclb/advice_speedups.hpp"
#include "mcmclb/input_error.hpp"
#include "mcmclb/run_spec.hpp"
#include "mcmclb/text.hpp"

namespace mcmclb::advice {

namespace {

/// "1 chain", "3 chains".
std::string plural(long n, const std::string& noun) { return std::to_string(n) + " " + noun + (n == 1 ? "" : "s"); }

/// How many of the C recorded walkers a replay of n walkers replays, and how often: each map replays every
/// recorded walker once in each C walkers (mcmclb/trace.hpp, TraceMap).
std::string replayed_words(long n, long c) {
  if (n < c) return std::to_string(n) + " of the " + std::to_string(c) + " recorded";
  if (n == c) return "the " + std::to_string(c) + " recorded, each once";
  const long lo = n / c, hi = (n + c - 1) / c;
  return "copies of the " + std::to_string(c) + " recorded, each replayed " + std::to_string(lo) +
         (lo == hi ? "" : " or " + std::to_string(hi)) + " times";
}

/// The keys every advice sets: the rank counts, one repetition, every balancer and rule at its interval. Returns
/// the exclude rules that keep each balancer at its interval.
std::vector<std::string> common_keys(StudyPlan& p, const PlanQuestion& q) {
  std::vector<std::string> ranks;
  for (const long r : q.ranks) ranks.push_back(std::to_string(r));
  p.keys.emplace_back("nprocs", flow_list(ranks));
  p.keys.emplace_back("reps", "1");  // a simulation is deterministic: a second repetition repeats the first
  p.keys.emplace_back("balancer", flow_list(q.balancers));
  p.keys.emplace_back("interval", "[1, 16]");
  p.keys.emplace_back("finished", "[retire, coalesce, pays]");
  p.skipped.emplace_back(
      "collective(1): it stops every rank after each item, the costliest set-up to simulate; collective(16) stands "
      "for the collective family");
  p.skipped.emplace_back(
      "creation methods other than each balancer's default (docs/guide/commbench.md compares them): a method "
      "changes only what a merge costs");
  if (q.group_size > 0) p.keys.emplace_back("G", std::to_string(q.group_size));
  if (q.chains_per_group > 0) p.keys.emplace_back("chains_per_group", std::to_string(q.chains_per_group));
  return interval_excludes({"collective", "lookahead", "mostwork", "stealmerge"});
}

/// The draws of a map or seed as a zip's lists: tile (seed 1), then draw with seeds 1 to q.draws.
std::string map_zip(const PlanQuestion& q) {
  std::vector<std::string> maps = {"tile"}, seeds = {"1"};
  for (long d = 1; d <= q.draws; ++d) {
    maps.emplace_back("draw");
    seeds.push_back(std::to_string(d));
  }
  return "{workload.map: " + flow_list(maps) + ", workload.seed: " + flow_list(seeds) + "}";
}

/// The scenarios a trace leaves open, into the plan, and the exclude key last.
void add_scenarios(StudyPlan& p, const TraceScenarios& s, std::vector<std::string>& exclude) {
  p.keys.insert(p.keys.end(), s.keys.begin(), s.keys.end());
  p.assumptions.insert(p.assumptions.end(), s.assumptions.begin(), s.assumptions.end());
  p.skipped.insert(p.skipped.end(), s.skipped.begin(), s.skipped.end());
  exclude.insert(exclude.end(), s.exclude.begin(), s.exclude.end());
  p.first_extrapolate = s.first_extrapolate;
  p.measured_up_to = s.measured_up_to;
}

}  // namespace

std::string flow_list(const std::vector<std::string>& items) { return "[" + join(items) + "]"; }

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

StudyPlan plan_trace(const PlanQuestion& q, const Trace& trace, const std::string& file) {
  StudyPlan p;
  std::vector<std::string> exclude = common_keys(p, q);
  p.trace_chains = trace.chains();
  p.copies = q.copies;
  p.group_size = q.group_size > 0 ? q.group_size : 1;
  p.chains_per_group = q.chains_per_group > 0 ? q.chains_per_group : 1;
  for (int c = 0; c < trace.chains(); ++c) p.idle_chains += trace.items(c) == 0 ? 1 : 0;
  p.keys.emplace_back("workload.scaling", "trace");
  const long fewest_ranks = *std::min_element(q.ranks.begin(), q.ranks.end());
  if (q.copies) {
    // More walkers than recorded: each group replays a recorded chain in turn (tile) or drawn, so the chain map
    // is a scenario.
    if (q.group_size == 0) p.keys.emplace_back("G", "1");
    p.keys.emplace_back("zip", map_zip(q));
    p.assumptions.push_back(
        "the chain map: tile" +
        (q.draws > 0 ? " and " + plural(q.draws, "seeded draw") + " (workload.map, seed)" : std::string()));
  } else {
    // The user's own walkers: one group per recorded chain, of nearly equal sizes, each chain replayed once.
    if (fewest_ranks < trace.chains()) {
      throw InputError("--ranks: " + std::to_string(fewest_ranks) + " ranks for the " +
                       plural(trace.chains(), "walker") + " of " + printable(file, 200) +
                       " (allowed: at least one rank per walker, or --copies to advise copies of them)");
    }
    p.keys.emplace_back("groups.count", std::to_string(trace.chains()));
  }
  // The sizes the speed-ups were measured at: past the smallest of them, the extrapolation decides. The largest
  // initial group of any rank count: a set-up that never merges works at that size only.
  ScenarioQuestion s;
  s.largest_rank = *std::max_element(q.ranks.begin(), q.ranks.end());
  s.largest_group = q.copies ? p.group_size : (s.largest_rank + trace.chains() - 1) / trace.chains();
  s.tolerance = q.tolerance;
  add_scenarios(p, trace_scenarios(trace, s), exclude);
  p.keys.emplace_back("exclude", flow_list(exclude));
  return p;
}

StudyPlan plan_study(const PlanQuestion& q, const GivenStudy& given) {
  StudyPlan p;
  std::vector<std::string> exclude = common_keys(p, q);
  if (given.replayed != nullptr) {
    // A replay leaves open what a trace file leaves open: the speed-up past the measured sizes and, where the
    // study runs more chains than the trace holds (copies), how they map onto them. Its seed alone changes
    // nothing under the tile map, so it is not varied by itself.
    ScenarioQuestion s;
    s.largest_rank = given.largest_rank;
    s.speedups_given = given.sets_speedups;  // never over an end of its own
    s.tolerance = q.tolerance;
    add_scenarios(p, trace_scenarios(*given.replayed, s), exclude);
    if (given.copies && q.draws > 0 && !given.sets_zip) {  // never over a zip of its own
      p.keys.emplace_back("zip", map_zip(q));
      p.assumptions.push_back("the chain map of the study's copies: tile and " + plural(q.draws, "seeded draw"));
    }
  } else if (q.draws > 0 && given.seeded) {
    // Seeds only for a seeded model: another has one workload, with nothing drawn to vary.
    std::vector<std::string> seeds;
    for (long d = 1; d <= q.draws; ++d) seeds.push_back(std::to_string(d));
    p.keys.emplace_back("workload.seed", flow_list(seeds));
    p.assumptions.push_back("the workload's seed (workload.seed 1 to " + std::to_string(q.draws) + ")");
  }
  p.keys.emplace_back("exclude", flow_list(exclude));
  return p;
}

/// The question an advice answers at P ranks, in words: whose walkers, on how many ranks, in what groups.
std::string walkers_words(const StudyPlan& plan, int nprocs) {
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

}  // namespace mcmclb::advice
