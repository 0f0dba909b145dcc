// SPDX-License-Identifier: BSD-3-Clause
// From a simulated advice study's results to the rule's input (mcmclb/advice.hpp), with no I/O: what each set-up pays
// (its run and its one-off costs, each its own), which columns are the set-up and which the scenario, the race's
// first round and what it drops, the per-rank-count tables the rule ranks, and advice.csv's rows. `mcmclb advise`
// (advise/, mcmclb/advise.hpp) reads the folder; everything it decides with is here, testable alone.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mcmclb/advice.hpp"
#include "mcmclb/configurations.hpp"
#include "mcmclb/csv.hpp"
#include "mcmclb/runs_csv.hpp"
#include "mcmclb/study.hpp"

namespace mcmclb::advice {

/// A configuration's price per run (mcmclb/advice.hpp): its time, its calibration and its own initial groups'
/// creation (events.csv's initial rows, by its own method), which a user waits for too before the run's clock
/// starts. Every price the advice and its check make comes from here.
[[nodiscard]] std::vector<Price> prices(const ConfigurationSamples& c);

/// A configuration's whole times: each run's Price::whole_s().
[[nodiscard]] std::vector<double> whole_s(const ConfigurationSamples& c);

/// Each part's median over a configuration's runs (they need not add up to the whole times' median).
[[nodiscard]] Price median_parts(const ConfigurationSamples& c);

/// The columns of a point's configuration key, by name.
[[nodiscard]] std::vector<std::pair<std::string, std::string>> key_columns(const RunSpec& spec);

/// The set-up columns: what a user chooses. The others that vary are the scenario.
[[nodiscard]] bool is_setup_column(const std::string& name);

/// A set-up's name in the table: its run label, with the finished rule even where it is the balancer's default
/// (the table sets retire beside coalesce and pays).
[[nodiscard]] std::string setup_label(const RunSpec& spec);

/// How a user runs a set-up: the `--mcmclb-*` options of a program built on mcmclb::walkers (options_from_args),
/// e.g. "--mcmclb-balancer mostwork --mcmclb-interval 1 --mcmclb-method range --mcmclb-finished pays", and the study
/// keys that select it, e.g. "balancer: mostwork, interval: 1, method: range, finished: pays". Each names only what
/// the set-up sets (no interval for none).
[[nodiscard]] std::string run_flags(const RunSpec& spec);
[[nodiscard]] std::string run_keys(const RunSpec& spec);

/// A set-up's family: its balancer with the interval (the label's first word); its variants differ in the rule.
[[nodiscard]] std::string family_of(const std::string& label);

/// Words for a scenario column in a verdict.
[[nodiscard]] std::string dimension_words(const std::string& column);

/// One scenario as the study's columns say it: scenario column -> value.
using ScenarioValues = std::map<std::string, std::string>;

/// A scenario's weight in the medians, a stated choice: every value of a dimension weighs the same, and the chain
/// map has two values, tile and drawn, the draws sharing the drawn half equally (three draws do not outweigh the
/// tile map 3 : 1).
[[nodiscard]] double scenario_weight(const ScenarioValues& scenario, long draws);

/// The first round of the race: per rank count, each set-up's price in the one scenario, fastest whole time first,
/// with its label and point.
using FirstRound = std::map<int, std::vector<std::pair<Price, std::pair<std::string, const RunSpec*>>>>;
[[nodiscard]] FirstRound first_round(const Study& study, const std::map<std::string, ConfigurationSamples>& samples,
                                     const Backend& backend);

/// Adds to leaders the first two balancers other than none of one rank count's set-ups, best first (a balancer's
/// rules are one balancer): the check replays every rule of each.
void add_leaders(std::vector<std::string>& leaders, const std::vector<std::string>& balancers_best_first);

struct Tables;

/// A set-up the race dropped at a rank count: its price in the first scenario, its regret there (a lower bound of
/// its largest regret), its whole time over none's, and the bound on the winner's largest regret it exceeded;
/// same_as, the other dropped set-ups with the same whole time there (same_times), which share its row.
struct Dropped {
  std::string label;
  RunSpec spec;
  Price price;
  double regret, vs_none, winner_bound;
  std::vector<std::string> same_as;
};

/// The study's exclude rule that leaves a set-up out at a rank count.
[[nodiscard]] StudyRule exclude_rule(int nprocs, const RunSpec& spec);

/// The race's second round: at each rank count none and the first round's two fastest other set-ups run every
/// scenario. The exclude rules that leave every other set-up out.
[[nodiscard]] StudyExclude second_round_exclude(const FirstRound& round);

/// Per rank count, a bound the winner's largest regret cannot exceed, from the second round: the least, over the
/// set-ups that ran every scenario, of their largest whole time over the scenario's bound_s (a regret measured
/// against a time no set-up beats, so never smaller than the true one). Absent where a scenario has no bound.
[[nodiscard]] std::map<int, double> winner_regret_bounds(const Tables& second_round);

/// A rank count where none alone answers: its whole time comes within the tolerance of each scenario's bound (the
/// ideal, which no set-up beats), so no set-up can be faster than none by more than that in any scenario. regret:
/// none's largest whole time over the bound, less 1; worst: the scenario it is reached in.
struct NoneSettles {
  double regret = 0;
  Scenario worst;
};

/// The rank counts none settles at this tolerance, from tables holding none in every scenario (the race's none
/// round): those where every scenario has a bound and none's largest regret against it is within the tolerance.
[[nodiscard]] std::map<int, NoneSettles> none_settles(const Tables& none_round, double tolerance);

/// The verdict where none settles a rank count, in words: keep none, the most any set-up could gain, and that the
/// balancers were not simulated there. tolerance_words: the tolerance's account, as the rule takes it.
[[nodiscard]] std::string settled_verdict(const NoneSettles& s, double tolerance, const std::string& tolerance_words);

/// What the race's first round drops: per rank count, every set-up but none whose regret there exceeds the bound
/// on the winner's largest regret plus the tolerance. Its largest regret is at least that regret, so it can be
/// neither the winner nor within the tolerance of it; a rank count without a bound drops nothing. Set-ups of the
/// same time share one entry; exclude holds the study's rule for every one of them.
struct RaceCut {
  std::map<int, std::vector<Dropped>> dropped;
  StudyExclude exclude;
};
[[nodiscard]] RaceCut race_cut(const FirstRound& round, double tolerance, const std::map<int, double>& bounds);

/// Whether the race's cut may have changed the answer at a rank count, from the ranking of what it kept. A set-up it
/// dropped ran the first scenario only; elsewhere it may have been the fastest, as fast as the scenario's bound (the
/// ideal), and so have raised the kept winner's regret there past what the kept set-ups show. The answer stands
/// where the set-up advised, against each scenario's bound, stays within the tolerance of the least largest regret
/// among the kept set-ups, which no set-up of the whole study undercuts (the true winner is never dropped, and
/// dropping others only lowers its regret); otherwise the dropped set-ups must run every scenario there. A scenario
/// without a bound may always mislead.
[[nodiscard]] bool cut_may_mislead(const Ranking& kept, double tolerance);

/// One rank count's input to the rule: its scenarios, its set-ups' times in each, their points, and none's index.
struct AtRankCount {
  int nprocs = 0;
  std::vector<Scenario> scenarios;
  std::vector<Setup> setups;
  std::vector<const RunSpec*> specs;
  std::size_t none_index = 0;
};

/// A point's ideal time computed without simulating it (runs.csv's ideal_s), or nothing where it cannot be.
using IdealOf = std::function<std::optional<double>(const RunSpec&)>;

/// The rule's input per rank count from the study's points and the folder's samples, each priced by prices(): the
/// columns that vary over the points besides the set-up's are the scenarios (the chain map and its draw's seed are
/// one choice: tile, draw 1, draw 2, ...); a set-up that ran under one assumption only stands for itself under the
/// others. Each scenario's bound is the least ideal of the runs made under it and, where `ideal` is given, of every
/// point asked under it, run or not: so a scenario that none alone was not simulated under still counts, bounded
/// (the race's none round). Rank counts without none are left out; missing counts the points with no valid sample.
struct Tables {
  std::vector<AtRankCount> at;
  std::size_t missing = 0;
};
[[nodiscard]] Tables tabulate(const Study& study, const std::map<std::string, ConfigurationSamples>& samples,
                              const Backend& backend, long draws, const IdealOf& ideal = {});

/// Each scenario's ideal time at each rank count of study, as `ideal` gives it for the points there (the scenarios
/// as tabulate finds them; nothing simulated): by rank count, then by the scenario's values. What advise's estimate
/// reads to foresee whether the fewest ranks lie above the smallest count asked.
[[nodiscard]] std::map<int, std::map<ScenarioValues, double>> scenario_ideals(const Study& study, const IdealOf& ideal);

/// advice.csv's header (docs/reference/columns.md): one row per rank count and set-up, ranked.
[[nodiscard]] const csv::Row& advice_header();

/// What a rank count's rows of advice.csv say besides the ranking: the question in words, the verdict as printed
/// (with any extrapolation note), the tolerance (percent) and where it came from, the answer on how many ranks,
/// and the race's first scenario in words (where the dropped set-ups ran).
struct AdviceWords {
  std::string question, verdict;
  double tolerance_pct = 5;
  std::string tolerance_words, ranks_answer, first_scenario;
  ToleranceSource tolerance_source{};  // the source that set the tolerance (kind "assumed" where nothing larger)
};

/// Why the race dropped a set-up, in words: its regret in the first scenario over the winner's bound and the
/// tolerance (percent).
[[nodiscard]] std::string dropped_why(const Dropped& d, const std::string& first_scenario, double tolerance_pct);

/// One rank count's rows of advice.csv: every ranked row (the verdict on the first), then the set-ups the race
/// dropped there, ranked after them.
[[nodiscard]] std::vector<csv::Row> advice_rows(const AtRankCount& at, const Ranking& ranking,
                                                const std::vector<Dropped>& dropped, const AdviceWords& words);

}  // namespace mcmclb::advice
