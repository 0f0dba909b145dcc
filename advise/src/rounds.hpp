// SPDX-License-Identifier: BSD-3-Clause
// The rounds of `mcmclb advise` that advise/src/advise.cpp runs (mcmclb/advise.hpp): the race between the set-ups
// (race.cpp) and the search between the rank counts asked (search.cpp), with what their estimates need.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mcmclb/advice.hpp"
#include "mcmclb/advice_table.hpp"
#include "mcmclb/advise_plan.hpp"
#include "mcmclb/launch.hpp"
#include "mcmclb/simulation_cost.hpp"
#include "mcmclb/study.hpp"

namespace mcmclb::advising {

/// How the simulations so far came out against their estimate: the later estimates are scaled by it, and say so.
struct Pace {
  double scale = 1;   // measured wall time over estimated (1: nothing to judge by)
  std::string words;  // "" or " (scaled by ...)" for an estimate's line
};
/// The pace of a round that took took_s against estimated_s: judged only on a round long enough to time (5 s) and
/// held within [1/4, 4], a bound on how far one trace can stray from the model.
Pace pace_of(double took_s, double estimated_s);

/// What the race decided: the set-ups it dropped per rank count, the study file for the rest, the first round's
/// exit status, and --check's result where the check ran after the first round.
struct Race {
  std::map<int, std::vector<advice::Dropped>> dropped;
  std::map<int, advice::NoneSettles> settled;  // the rank counts none settles: nothing else simulated there
  StudyValue final;                            // the advice study for the rest
  StudyExclude cut_exclude, settled_exclude;   // final's exclude rules: the cut's, none's round's
  int status = 0;
  std::optional<CheckResult> checked;
  Pace pace;  // how the first round came out against its estimate
};

/// A study of advise's own, kept as OUT/name beside its results so that the folder says what ran: the sweep options
/// that run it (sweep's, with that file as the study) and the study loaded from the value. The store is opened as for
/// owner, or for that study where owner is null.
std::pair<SweepOptions, Study> own_study(const Options& o, const SweepOptions& sweep, const std::string& name,
                                         const StudyValue& value, const Study* owner);

/// The exclude rules that leave every balancer asked but none out, at nprocs ranks (0: at every rank count).
StudyExclude all_but_none(const Options& o, int nprocs);

/// The race: none in every scenario (advise-race-none.yaml), which settles a rank count where it comes within the
/// tolerance of every scenario's ideal; then at the other rank counts every set-up on the first scenario
/// (advise-race.yaml), then --check where asked, then none and the two fastest in every scenario
/// (advise-race-leaders.yaml), which bound the winner's largest regret; the set-ups whose regret in the first
/// scenario exceeds that bound plus the tolerance are dropped from study, which is loaded again for the rest.
Race run_race(const Options& o, const Plan& plan, const SweepOptions& sweep, Study& study, const char* where,
              const std::optional<advice::ToleranceSource>& spread);

/// The rank counts the search between those asked tries at most (search_between); search_bound prices as many.
constexpr int kSearchedCounts = 3;

/// The rank search between the counts asked (search_between), priced before anything runs: between the two largest
/// counts asked, the bisection's counts toward the larger (the dearest way it can go), each running none and every
/// set-up asked in every scenario it was asked in, one sweep per set-up as the search runs them (`any`); where none
/// settles every count, none alone (`none_only`); and the counts the scenarios' ideals foresee it trying
/// (`foreseen`, search.cpp's foresee_search), with the scenario that foresees it (`likely`). Nothing where one count
/// is asked, or the walkers come from no trace.
struct SearchBound {
  SimulationEstimate none_only, any;
  SimulationEstimate foreseen;  // the counts the ideals foresee it trying (foresee_search), none where it would not
  int lo = 0, hi = 0;
  std::optional<advice::Scenario> likely;  // the scenario whose ideal says the search may run, if any
  double ideal_above = 0;                  // by how much its ideal at lo lies above that at hi (a fraction)
};
SearchBound search_bound(const Options& o, const Plan& plan, const Study& study, const SweepOptions& sweep);

/// The rank counts between the answer among those asked (fewest_ranks) and the next count asked below it: bisected,
/// up to 3 counts, each running, with none, every set-up that can win there: the winners and the tied set-ups of the
/// two counts asked around it. The count's time in each scenario is that of the set-up with the smallest largest
/// regret among them there (the rule that ranks the set-ups). Which set-ups and counts ran is said in `searched`.
struct Between {
  std::vector<advice::AtRanks> at;
  std::string searched;
};
Between search_between(const Options& o, const Plan& plan, const SweepOptions& sweep,
                       const std::vector<advice::AtRankCount>& inputs, const std::vector<advice::Ranking>& rankings,
                       const std::vector<advice::AtRanks>& asked, const std::vector<advice::Scenario>& scenarios,
                       double tolerance, const Pace& pace);

}  // namespace mcmclb::advising
