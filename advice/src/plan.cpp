// SPDX-License-Identifier: BSD-3-Clause
// What `mcmclb advise` simulates (mcmclb/advice_plan.hpp).
#include <algorithm>
#include <cctype>
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
StudyExclude common_keys(StudyPlan& p, const PlanQuestion& q) {
  p.keys.set("nprocs", study_list(q.ranks));
  p.keys.set("reps", int64_t{1});  // a simulation is deterministic: a second repetition repeats the first
  p.keys.set("balancer", study_list(q.balancers));
  p.keys.set("interval", StudyList{int64_t{1}, int64_t{16}});
  p.keys.set("finished", study_list({"retire", "coalesce", "pays"}));
  if (std::find(q.balancers.begin(), q.balancers.end(), "collective") != q.balancers.end()) {
    p.skipped.emplace_back(
        "collective(1): it stops every rank after each item, the costliest set-up to simulate; collective(16) "
        "stands for the collective family");
  }
  p.skipped.emplace_back(
      "creation methods other than each balancer's default (docs/guide/commbench.md compares them): a method "
      "changes only what a merge costs");
  if (q.group_size > 0) p.keys.set("G", int64_t{q.group_size});
  if (q.chains_per_group > 0) p.keys.set("chains_per_group", int64_t{q.chains_per_group});
  return interval_excludes({"collective", "lookahead", "mostwork", "stealmerge"});
}

/// The draws of a map or seed as a zip's lists: tile (seed 1), then draw with seeds 1 to q.draws.
StudyZip map_zip(const PlanQuestion& q) {
  std::vector<std::string> maps = {"tile"};
  std::vector<long> seeds = {1};
  for (long d = 1; d <= q.draws; ++d) {
    maps.emplace_back("draw");
    seeds.push_back(d);
  }
  return {{"workload.map", study_list(maps)}, {"workload.seed", study_list(seeds)}};
}

/// The scenarios a trace leaves open, into the plan, and the exclude key last.
void add_scenarios(StudyPlan& p, const TraceScenarios& s, StudyExclude& exclude) {
  for (const auto& [key, value] : s.keys.keys) p.keys.set(key, value);
  p.assumptions.insert(p.assumptions.end(), s.assumptions.begin(), s.assumptions.end());
  p.skipped.insert(p.skipped.end(), s.skipped.begin(), s.skipped.end());
  exclude.insert(exclude.end(), s.exclude.begin(), s.exclude.end());
  p.first_extrapolate = s.first_extrapolate;
  p.measured_up_to = s.measured_up_to;
}

/// "0-2, 5, 7": chain numbers (ascending) as runs, at most 8 of them, then how many more.
std::string chain_list(const std::vector<int>& chains) {
  std::vector<std::string> runs;
  std::size_t shown = 0;
  for (std::size_t i = 0; i < chains.size();) {
    std::size_t j = i;
    while (j + 1 < chains.size() && chains[j + 1] == chains[j] + 1) ++j;
    if (runs.size() < 8) {
      runs.push_back(std::to_string(chains[i]) + (j == i ? "" : "-" + std::to_string(chains[j])));
      shown = j + 1;
    }
    i = j + 1;
  }
  if (shown < chains.size()) runs.push_back("and " + std::to_string(chains.size() - shown) + " more");
  return join(runs);
}

/// "walker 3", "walkers 0-2, 5".
std::string walkers_named(const std::vector<int>& chains) {
  return (chains.size() == 1 ? "walker " : "walkers ") + chain_list(chains);
}

/// A cut-short trace's advice: the question checked against what the trace measured (InputError where it needs a
/// speed-up the trace lacks), the balancers that would merge groups past the measured sizes left out of q, and
/// the sentence that opens every verdict. Returns the sizes the speed-ups were measured up to.
int cut_short_question(PlanQuestion& q, StudyPlan& p, const Trace& trace, const std::string& file) {
  const std::string name = printable(file, 200);
  int measured = 0;  // over the walkers with items, the smallest of their largest measured sizes
  std::vector<int> worked_past, unmeasured, without_items;
  int worked_at = 1;
  for (int c = 0; c < trace.chains(); ++c) {
    if (trace.items(c) == 0) {
      without_items.push_back(c);
      continue;
    }
    measured = measured == 0 ? trace.largest_measured(c) : std::min(measured, trace.largest_measured(c));
    if (trace.measured_speedups(c).empty()) unmeasured.push_back(c);
    if (trace.largest_worked(c) > trace.largest_measured(c)) {
      worked_past.push_back(c);
      worked_at = std::max(worked_at, trace.largest_worked(c));
    }
  }
  measured = std::max(measured, 1);
  const std::string up_to = std::to_string(measured) + (measured == 1 ? " rank" : " ranks");
  // Items worked in a group larger than any measured size: the trace holds their time at that size only.
  if (!worked_past.empty()) {
    throw InputError(name + ": cut short (its recording did not end), and " + walkers_named(worked_past) +
                     " worked items at up to " + std::to_string(worked_at) +
                     " ranks without a measured speed-up there, so their cost on one rank is unknown (allowed with "
                     "--incomplete: a trace whose items were worked at measured sizes; or the recording run to its "
                     "end)");
  }
  // The initial groups: every set-up starts with them, even one that never merges.
  for (const long r : q.ranks) {
    const long groups = walker_layout(trace, r).groups;
    const long largest = q.copies ? (q.group_size > 0 ? q.group_size : 1) : (r + groups - 1) / groups;
    if (largest <= measured) continue;
    if (q.copies) {
      throw InputError("--group-size: groups of " + std::to_string(largest) + " ranks, but " + name +
                       " was cut short with speed-ups measured up to " + up_to +
                       " only (allowed with --incomplete: --group-size up to " + std::to_string(measured) + ")");
    }
    throw InputError("--ranks: " + std::to_string(r) + " ranks give the " + std::to_string(trace.chains()) +
                     " walkers of " + name + " groups of up to " + std::to_string(largest) +
                     " ranks, but it was cut short with speed-ups measured up to " + up_to +
                     " only (allowed with --incomplete: --ranks up to " +
                     std::to_string(static_cast<long>(trace.chains()) * measured) + ", or --copies)");
  }
  // A merging set-up may gather every rank on one walker: within the measured sizes only where P is.
  const long most = *std::max_element(q.ranks.begin(), q.ranks.end());
  if (most > measured) {
    const std::vector<std::string> fixed = ScenarioQuestion{}.fixed;
    std::vector<std::string> kept, merging;
    for (const std::string& b : q.balancers) {
      (std::find(fixed.begin(), fixed.end(), b) != fixed.end() ? kept : merging).push_back(b);
    }
    if (kept.size() == 1 && !merging.empty()) {  // none alone: no question left
      throw InputError("--balancers: " + join(merging) + " merge groups past the " + up_to + " " + name +
                       " measured before it was cut short (allowed with --incomplete: " + join(fixed) + ")");
    }
    if (!merging.empty()) {
      p.skipped.push_back(join(merging) + ": they merge groups, here up to " + std::to_string(most) +
                          " ranks, past the " + up_to + " the cut-short trace measured speed-ups at");
    }
    q.balancers = std::move(kept);
  }
  std::string what =
      "The trace was cut short: its recording did not end, so any walker may lack its last items "
      "(the trace does not say which had finished)";
  if (!without_items.empty()) what += ", and " + walkers_named(without_items) + " have none in it";
  if (unmeasured.size() == static_cast<std::size_t>(trace.chains()) - without_items.size()) {
    what += "; it measured no speed-up above 1 rank";
  } else if (!unmeasured.empty()) {
    what += "; " + walkers_named(unmeasured) + " measured no speed-up above 1 rank";
  } else {
    what += "; it measured speed-ups up to " + up_to;
  }
  p.cut_short = what + ", so no set-up here works a group past " + up_to + ".";
  return measured;
}

}  // namespace

/// The study's exclude rules that give each of the balancers its interval of the scaling studies
/// (configs/trace-lj-scale.yaml): collective every 16 items, the planners looking one item ahead.
StudyExclude interval_excludes(const std::vector<std::string>& balancers) {
  StudyExclude rules;
  for (const std::string& b : balancers) {
    if (b == "collective") rules.push_back({{"balancer", "collective"}, {"interval", int64_t{1}}});
    if (b == "lookahead" || b == "mostwork" || b == "stealmerge")
      rules.push_back({{"balancer", b}, {"interval", int64_t{16}}});
  }
  return rules;
}

WalkerLayout walker_layout(const Trace& trace, long nprocs) {
  const auto& run = trace.recorded_run();
  const std::vector<int> shares = trace.recorded_shares();
  const long chains = trace.chains();
  WalkerLayout w;
  if (run && run->ranks == nprocs && run->groups > 0) {
    w.groups = run->groups;
  } else {
    const long size = run && run->groups > 0 ? std::max(1, run->ranks / run->groups) : 1;
    w.groups = std::clamp(nprocs / size, 1L, std::min(chains, nprocs));
  }
  // The trace workload deals as this does (workload.map once): the recorded shares at their count.
  w.most = static_cast<std::size_t>(w.groups) == shares.size() ? *std::max_element(shares.begin(), shares.end())
                                                               : (chains + w.groups - 1) / w.groups;
  return w;
}

StudyPlan plan_trace(const PlanQuestion& asked, const Trace& trace, const std::string& file) {
  StudyPlan p;
  PlanQuestion q = asked;
  const int cut_measured = trace.incomplete() ? cut_short_question(q, p, trace, file) : 0;
  StudyExclude exclude = common_keys(p, q);
  p.trace_chains = trace.chains();
  p.from_library = trace.recorded_run() && !trace.recorded_run()->walkers.empty();
  p.copies = q.copies;
  p.group_size = q.group_size > 0 ? q.group_size : 1;
  p.chains_per_group = q.chains_per_group > 0 ? q.chains_per_group : 1;
  for (int c = 0; c < trace.chains(); ++c) p.idle_chains += trace.items(c) == 0 ? 1 : 0;
  p.keys.set("workload.scaling", "trace");
  if (q.copies) {
    // More walkers than recorded: each group replays a recorded chain in turn (tile) or drawn, so the chain map
    // is a scenario.
    if (q.group_size == 0) p.keys.set("G", int64_t{1});
    p.keys.set("zip", map_zip(q));
    p.assumptions.push_back(
        "the chain map: tile" +
        (q.draws > 0 ? " and " + plural(q.draws, "seeded draw") + " (workload.map, seed)" : std::string()));
  } else {
    // The user's own walkers, each replayed once, in groups of nearly equal sizes as walker_layout says: where a
    // group holds several, the trace deals them as the library does (workload.map once), the recorded groups at the
    // recorded rank count. Counts that differ by rank count are zipped with it.
    std::vector<long> counts, per_group;
    for (const long r : q.ranks) {
      const WalkerLayout w = walker_layout(trace, r);
      p.walker_groups[r] = w.groups;
      counts.push_back(w.groups);
      per_group.push_back(w.most);
    }
    p.recorded_shares = trace.recorded_shares();
    p.recorded_ranks = trace.recorded_run() ? trace.recorded_run()->ranks : 0;
    p.work_sits = work_words(trace);
    const bool several = std::any_of(per_group.begin(), per_group.end(), [](long w) { return w != 1; });
    if (several) p.keys.set("workload.map", "once");
    const auto same = [](const std::vector<long>& v) { return std::equal(v.begin() + 1, v.end(), v.begin()); };
    if (same(counts) && same(per_group)) {
      p.keys.set("groups.count", int64_t{counts.front()});
      if (several) p.keys.set("chains_per_group", int64_t{per_group.front()});
    } else {  // the rank counts go into the zip: a key is given once
      p.keys.erase("nprocs");
      StudyZip zip = {{"nprocs", study_list(q.ranks)}, {"groups.count", study_list(counts)}};
      if (several) zip.emplace_back("chains_per_group", study_list(per_group));
      p.keys.set("zip", std::move(zip));
    }
  }
  // The sizes the speed-ups were measured at: past the smallest of them, the extrapolation decides. The largest
  // initial group of any rank count: a set-up that never merges works at that size only.
  ScenarioQuestion s;
  s.largest_rank = *std::max_element(q.ranks.begin(), q.ranks.end());
  s.largest_group = p.group_size;
  if (!q.copies) {
    for (const long r : q.ranks) {
      const long groups = walker_layout(trace, r).groups;
      s.largest_group = std::max(s.largest_group, (r + groups - 1) / groups);
    }
  }
  s.tolerance = q.tolerance;
  s.within_measured = cut_measured > 0;
  add_scenarios(p, trace_scenarios(trace, s), exclude);
  p.keys.set("exclude", std::move(exclude));
  return p;
}

int largest_group(const StudyPlan& plan, int nprocs, const std::string& balancer) {
  const std::vector<std::string> fixed = ScenarioQuestion{}.fixed;
  if (std::find(fixed.begin(), fixed.end(), balancer) == fixed.end()) return nprocs;
  if (plan.copies) return static_cast<int>(plan.group_size);
  const auto at = plan.walker_groups.find(nprocs);
  const long groups = at == plan.walker_groups.end() ? std::max(plan.trace_chains, 1) : at->second;
  return static_cast<int>((nprocs + groups - 1) / groups);
}

std::optional<std::string> extrapolated(const StudyPlan& plan, int nprocs, const std::string& balancer) {
  if (!plan.cut_short.empty() || plan.measured_up_to == 0) return std::nullopt;
  return extrapolation_note(nprocs, largest_group(plan, nprocs, balancer), plan.measured_up_to, plan.from_library);
}

std::string measure_next(const StudyPlan& plan, int nprocs, const std::string& balancer) {
  if (!plan.cut_short.empty() || plan.measured_up_to == 0) return "";
  std::string how;
  if (extrapolated(plan, nprocs, balancer)) {
    how = extrapolation_measure(nprocs, largest_group(plan, nprocs, balancer), plan.measured_up_to, plan.from_library);
  } else if (extrapolation_note(nprocs, nprocs, plan.measured_up_to, plan.from_library)) {
    // The advised set-up stays within the measured sizes, but a merging one would not: whether merging pays there
    // rests on the scenarios' assumptions, and this measurement replaces them.
    how = "to know whether merging pays past " + std::to_string(2 * plan.measured_up_to) + " ranks, " +
          extrapolation_measure(nprocs, nprocs, plan.measured_up_to, plan.from_library);
  } else {
    return "";
  }
  how[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(how[0])));
  return how + ".";
}

std::string verdict_words(const StudyPlan& plan, int nprocs, const std::string& balancer, const std::string& verdict) {
  if (!plan.cut_short.empty()) return plan.cut_short + " " + verdict;  // its groups stay within the measured sizes
  std::string words = verdict;
  if (const auto note = extrapolated(plan, nprocs, balancer)) words += " " + *note + ".";
  if (!plan.work_sits.empty()) words += " " + plan.work_sits + ".";
  return words;
}

StudyPlan plan_study(const PlanQuestion& q, const GivenStudy& given) {
  StudyPlan p;
  StudyExclude exclude = common_keys(p, q);
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
      p.keys.set("zip", map_zip(q));
      p.assumptions.push_back("the chain map of the study's copies: tile and " + plural(q.draws, "seeded draw"));
    }
  } else if (q.draws > 0 && given.seeded) {
    // Seeds only for a seeded model: another has one workload, with nothing drawn to vary.
    std::vector<long> seeds;
    for (long d = 1; d <= q.draws; ++d) seeds.push_back(d);
    p.keys.set("workload.seed", study_list(seeds));
    p.assumptions.push_back("the workload's seed (workload.seed 1 to " + std::to_string(q.draws) + ")");
  }
  p.keys.set("exclude", std::move(exclude));
  return p;
}

/// The question an advice answers at P ranks, in words: whose walkers, on how many ranks, in what groups.
std::string walkers_words(const StudyPlan& plan, int nprocs) {
  if (plan.trace_chains == 0) return "the study file's walkers on " + std::to_string(nprocs) + " ranks";
  if (!plan.copies) {
    const auto at = plan.walker_groups.find(nprocs);
    const int groups = at == plan.walker_groups.end() ? plan.trace_chains : static_cast<int>(at->second);
    const std::vector<int> sizes = count_sizes(nprocs, groups);
    const int lo = sizes.back(), hi = sizes.front();
    // Walkers per group as the trace workload deals them: the recorded shares at their count, else C / groups.
    int fewest = plan.trace_chains / groups, most = (plan.trace_chains + groups - 1) / groups;
    if (static_cast<std::size_t>(groups) == plan.recorded_shares.size()) {
      fewest = *std::min_element(plan.recorded_shares.begin(), plan.recorded_shares.end());
      most = *std::max_element(plan.recorded_shares.begin(), plan.recorded_shares.end());
    }
    std::string words =
        plural(plan.trace_chains, "walker") + " on " + std::to_string(nprocs) + " ranks (" +
        (hi == 1 && most == 1
             ? std::string("one rank each")
             : (most > 1 ? std::to_string(groups) + " " : std::string()) + "groups of " +
                   (hi == 1 ? std::string("one rank")
                            : std::to_string(lo) + (lo == hi ? "" : "-" + std::to_string(hi))) +
                   (most == 1 ? std::string()
                              : ", " + std::to_string(fewest) + (fewest == most ? "" : "-" + std::to_string(most)) +
                                    " walkers each")) +
        ")" + (nprocs == plan.recorded_ranks ? ", as recorded" : ", the recorded walkers");
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
