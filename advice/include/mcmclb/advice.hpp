// SPDX-License-Identifier: BSD-3-Clause
// The rule of `mcmclb advise` (apps/advise.hpp, advise/), apart from the simulations it judges, so that it can be read
// and tested alone: set-ups priced whole over scenarios, ranked by their largest regret, and a verdict a user can act
// on.
//
// A set-up's whole time in a scenario is what the user waits for: its run plus the one-off costs before the run's
// clock (Price: the calibration of the finished rule pays, and its own initial groups' creation). Its regret there is
// its whole time over the best whole time of that scenario, minus 1. Set-ups are ranked by their largest regret over
// the scenarios (minimax regret), then by their median regret, each scenario weighted as the caller states. Set-ups
// whose largest regrets lie within the tolerance of the smallest are tied: a difference the replay cannot resolve, so
// the verdict names the tie and advises its simplest member (kSimplestFirst), none where none is in it. The winner is
// robust when each scenario alone, by the same rule, advises it too; otherwise the verdict names the dimension whose
// values have different winners.
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mcmclb::advice {

/// The order a tie is settled by, simplest first: the one table of it. A set-up's place is its balancer's here, then
/// its finished rule's (kSimplestRulesFirst), then its method (the balancer's default first, then the creation
/// methods' table order), then its interval (the smaller first: neither end needs less machinery, so this only makes
/// the pick one). The balancers: none, which does nothing; then those that move work and never regroup; then those
/// that regroup, each the one before with something added (running.md: lookahead is async with merges planned
/// ahead, mostwork is lookahead choosing the neighbour with more work); then stealmerge, which does both. A balancer
/// missing here comes last.
inline constexpr std::array<std::string_view, 8> kSimplestFirst = {"none",  "steal",     "stealrandom", "collective",
                                                                   "async", "lookahead", "mostwork",    "stealmerge"};
/// The finished rules, simplest first: retire ends done groups, coalesce merges them on until one group spans every
/// rank, and pays calibrates a cost model before the run to decide each merge.
inline constexpr std::array<std::string_view, 3> kSimplestRulesFirst = {"retire", "coalesce", "pays"};

/// A set-up's place in that order from its label ("mostwork(1) range pays": balancer(interval), method, rule);
/// compared as a whole, the smaller is the simpler.
[[nodiscard]] std::array<int, 4> simplicity(const std::string& label);

/// The order in words, as the verdict states it: "none first, then steal, ..., stealmerge; ...".
[[nodiscard]] std::string simplicity_words();

/// The resolution of the ranking, stated once: two whole times within 0.1 us plus a part in 10^5 are the same. Two
/// runs of one point repeat to the bit, or to tens of nanoseconds; set-ups that differ by a few microseconds a
/// second (none and steal with nothing to steal: a probe's messages) differ by far less than any tolerance a replay
/// has been checked to, so no ranking could tell them apart, and they share a row.
inline constexpr double kSameTimesAbsS = 1e-7, kSameTimesRel = 1e-5;
[[nodiscard]] bool same_times(double a, double b);

/// The one comparison every part of the rule makes: two whole times are within the tolerance (a fraction) when the
/// slower over the faster, less 1, is at most it. A regret is that quantity against the fastest time, so a set-up
/// tied, a gain too small to measure, a robust answer and a rank count worth its ranks all use this same test.
[[nodiscard]] bool within_tolerance(double a_s, double b_s, double tolerance);

/// One combination of what the workload leaves open: a value per dimension (e.g. workload_extrapolate -> flat),
/// and its weight in the medians (the weights need not add up to 1).
struct Scenario {
  std::map<std::string, std::string> values;
  double weight = 1;
  double bound_s = 0;  // no set-up's run here is shorter (the runs' ideal time); 0 where none ran here itself
};

/// What a set-up costs the user in one scenario: its run, and the one-off costs before the run's clock starts, its
/// calibration (the rule pays) and the creation of its initial groups. Each set-up pays its own creation, by its own
/// method: the method is part of the set-up a user picks, so none pays MPI_Comm_split's even where another set-up's
/// method creates the same groups for less. The one definition of a whole time: advice.csv and check.csv add it so.
struct Price {
  double run_s = 0, calibration_s = 0, initial_groups_s = 0;
  [[nodiscard]] double once_s() const { return calibration_s + initial_groups_s; }
  [[nodiscard]] double whole_s() const { return run_s + once_s(); }
};

/// One set-up as simulated: its price in each scenario (same order as the scenarios).
struct Setup {
  std::string label;   // e.g. "mostwork(1) range pays"
  std::string family;  // the balancer with its interval, e.g. "mostwork(1)": variants differ in rule or method
  std::vector<Price> price;
};

/// A row of the ranking: one set-up, or several whose whole times agree in every scenario (within 0.1 us plus a
/// part in 10^5: same_times).
struct Row {
  std::vector<std::size_t> members;  // indices into the set-ups, the first named first
  std::vector<double> whole_s;       // per scenario: run plus one-off cost
  std::vector<double> regret;        // per scenario
  std::vector<double> vs_none;       // per scenario: whole time over none's
  double regret_max = 0, regret_median = 0;
  double vs_none_median = 1, vs_none_min = 1, vs_none_max = 1;
  std::size_t vs_none_min_at = 0, vs_none_max_at = 0;  // the scenarios of vs_none_min and vs_none_max
  std::string gain_words;                              // its gain over none as gain_words() says it
  std::size_t worst = 0;                               // the scenario of regret_max
  std::optional<double> once_median_s;                 // when it adds a one-off cost
  Price parts_median;  // each part's weighted median over the scenarios (the first member's; need not add up)
  std::optional<double> break_even_s;  // none's run length past which it beats none (median scenario); with
  bool never_breaks_even = false;      // once_median_s only: or never, where it is not faster than none's run
};

/// The answer at one rank count.
struct Verdict {
  // The row advised: the simplest of the tie (tied.front()). A row is tied when its largest regret lies within the
  // tolerance of the first row's, and none's row also where the first row's gain over none is within the tolerance
  // in every scenario (its gain words then say no difference you can measure): an edge below the tolerance is not
  // one the replay resolves, so it never picks the winner.
  std::size_t winner = 0;
  std::vector<std::size_t> tied;         // the tied rows, simplest first (kSimplestFirst); the winner alone: no tie
  std::optional<std::size_t> runner_up;  // the best row of another family
  // Robust: the winner is within the tolerance of the fastest set-up in every scenario (within_tolerance), so no
  // assumption the scenarios vary makes it a loss a user could measure. depends_on names the dimensions whose
  // values, each alone, advise different set-ups by the same tie rule.
  bool robust = false;
  double gain_median = 0, gain_min = 0, gain_max = 0;  // 1 - whole time / none's, over the scenarios
  std::string depends_on;  // words: the dimension that flips the winner, and who wins at each value
  std::string text;        // the sentences a user reads
};

/// The verdict made not robust, for a reason the ranking cannot see (an answer that rests on extrapolation): its
/// robust sentence replaced by "Not robust: " and the reason.
void not_robust(Verdict& verdict, const std::string& why);

/// The decision rule of `mcmclb advise`, in the three sentences `mcmclb advise --help` prints and
/// docs/guide/your-workload.md quotes: one rule for the set-up, the tie, robust and the rank count.
inline constexpr std::string_view kDecisionRule =
    "At each rank count, advise takes the simplest set-up whose largest regret lies within the tolerance "
    "of the smallest; a regret is a whole time over the scenario's fastest, less 1. That set-up is robust"
    " where its regret is within the tolerance in every scenario and its groups stay within twice the "
    "measured sizes. The rank count advised has the fewest core-hours in its dearest scenario among the "
    "counts whose set-up is within the tolerance of the fastest at any count, else the smallest largest "
    "regret.";

struct Ranking {
  std::vector<Scenario> scenarios;  // distinct: two that give every set-up the same times are one, weights added
  std::vector<std::string> notes;   // what was merged, in words
  std::vector<Row> rows;            // ranked, best first
  Verdict verdict;
};

/// Words for a scenario dimension and for a scenario, for the verdict.
using Words = std::function<std::string(const std::string& dimension)>;

/// A tolerance (a fraction) in percent as the verdicts print it: "5.0 %" from 1 % up, two significant digits below
/// ("0.018 %"), so that a measured tolerance of hundredths of a percent never reads as 0.0 %.
[[nodiscard]] std::string tolerance_percent(double fraction);

/// The scenario as words, e.g. "extrapolate flat, map draw 2".
std::string scenario_words(const Scenario& s, const Words& words);

/// A set-up's gain over none (1 - its whole time over none's) over the scenarios, in words: the range, worst case
/// first, with the scenario at each end ("0.0 to 22.7 % faster than none: 0.0 % under extrapolate flat, 22.7 % under
/// extrapolate amdahl"), then, where more scenarios vary than the ends name, the gain under each assumption past the
/// measured sizes ("; by the speed-up past the measured sizes: flat 0.0 % faster, amdahl 12.0 to 22.7 % faster");
/// the worst figure alone ("at least ...") where every scenario's gain is within the tolerance of every other's; "no
/// difference you can measure" for an end, or the one figure, within the tolerance of 0 (within_tolerance), whatever
/// its sign. Never a figure that no scenario gives. gains and scenarios have the same length.
[[nodiscard]] std::string gain_words(const std::vector<double>& gains, const std::vector<Scenario>& scenarios,
                                     double tolerance, const Words& words);

/// The weighted median of values: the smallest value whose cumulative weight reaches half the total, so always one
/// of the values (at exactly half, the lower of the two, never their mean). values and weights have the same length,
/// weights > 0.
double weighted_median(const std::vector<double>& values, const std::vector<double>& weights);

/// Ranks the set-ups over the scenarios. setups[none] is the reference of every "vs none"; a set-up with no time
/// in some scenario (NaN) is left out. tolerance is a fraction (0.05: 5 %); tolerance_words says where it comes
/// from ("assumed, not measured"). Throws std::invalid_argument for no scenario or a none without times.
Ranking rank(std::vector<Scenario> scenarios, const std::vector<Setup>& setups, std::size_t none, double tolerance,
             const std::string& tolerance_words, const Words& words);

/// A set-up's replay checked against its simulation at one rank count: its whole time over none's, measured (the
/// median's ratio, with the interval of the two medians' 95 % intervals) and simulated, and the simulated ratio's
/// error against the measured one (simulated / measured - 1) over that interval.
struct ReplayError {
  std::string label;
  std::size_t n = 0;                                                 // real repetitions of the set-up
  double real_ratio = 0, sim_ratio = 0;                              // whole time / none's
  std::optional<double> real_low, real_high, error_low, error_high;  // absent below 6 repetitions on either side
};

/// The error of sim_ratio against the measured whole times of a set-up (real_s) and of none (real_none_s).
ReplayError replay_error(const std::string& label, const std::vector<double>& real_s,
                         const std::vector<double>& real_none_s, double sim_ratio);

/// The error of the real replay against the application's own run (program_s, the time its trace's run line
/// records): the replay's run times of the set-up the application ran (real_s: time_s, the clock the run line
/// records too, neither counting the one-off costs) over program_s. real_ratio and its interval are replay /
/// program, error_low and error_high that less 1; sim_ratio is 1, the program's own.
ReplayError program_error(const std::string& label, const std::vector<double>& real_s, double program_s);

/// The tolerance the errors measure, a fraction: the largest |error| over both ends of every interval. Nothing when
/// an error has no interval (too few repetitions) or there is none.
std::optional<double> measured_tolerance(const std::vector<ReplayError>& errors);

/// Every kind a tolerance source has, advice.csv's tolerance_source: plots/mcmclb_csv.py allows exactly these
/// (tests/test_reference.py), and largest_tolerance refuses any other.
inline constexpr std::array<std::string_view, 5> kToleranceKinds = {"assumed", "simulation", "replay", "program_runs",
                                                                    "prediction"};

/// One source of the tolerance: what it measures (or the tolerance assumed), as a fraction, and where it was
/// measured. The tolerance is the largest source: a gain inside any of them is none a user can tell from noise.
struct ToleranceSource {
  std::string kind;  // advice.csv's tolerance_source: assumed, simulation, replay, program_runs or prediction
  std::string what;  // words, e.g. "your program's own runs"
  double fraction = 0;
  int nprocs = 0;              // the rank count measured at; 0: assumed
  std::size_t n = 0;           // the repetitions (runs) measured
  std::optional<double> busy;  // the host's busy share (0 to 1) while measured, the largest known; none: unknown
  std::string detail;          // what was measured, e.g. "31.99 to 33.32 s"
};

/// The program's own run-to-run spread, from its run times at one layout (seconds, oldest first, at least 2) on
/// nprocs ranks. From 6 runs up: the half-width of a median of n runs at 95 % (1.96 x 1.2533 sigma / sqrt(n)) over
/// the median, sigma from neighbouring runs' differences, so that a host drifting over the runs does not count; the
/// drift (the later half's median over the earlier half's) is given in the words. Fewer: the slowest over the
/// fastest, less 1. busy: the host's largest busy share over the runs, where known. Nothing below 2 runs.
[[nodiscard]] std::optional<ToleranceSource> program_spread(const std::vector<double>& seconds, int nprocs,
                                                            std::optional<double> busy);

/// prediction.csv's header (plots/prediction_check.py writes it): one row per set-up the check ran both ways, its
/// real runs' median with the 95 % interval and the simulated time, and simulated / real with the interval mcmclb
/// compare forms (the simulated time over the real interval's ends), and the trace the row replayed (its file's
/// FNV-1a 64, Trace::fnv1a64; empty for an emulated workload). A file written before that column is read too.
inline constexpr std::string_view kPredictionHeader =
    "check,setup,nprocs,n,real_median_s,real_low_s,real_high_s,sim_s,ratio,ratio_low,ratio_high,busy_pct,"
    "platform_fnv1a64,git_commit,trace_fnv1a64";

/// A prediction.csv as the tolerance rule (kToleranceRule) takes it: the source its rows of the trace advised on
/// form, or nothing, with the one line that says why it is not used.
struct Prediction {
  std::optional<ToleranceSource> source;
  std::string not_used;  // empty where source is set
};

/// The simulation's measured error on a platform as a tolerance source (kind "prediction"), from the text of a
/// prediction.csv named name: the largest distance of a ratio interval's end from 1 over the rows that replayed the
/// trace whose bytes hash to trace_fnv1a64 (the trace advise advises on; empty: none), at the check's P, its fewest
/// real runs and its busiest host. No such row: nothing, and why. platform_fnv1a64 is the platform advise simulates
/// on (16 hex digits): a file measured on another is refused, and so are those rows measured on a host busier than
/// busy_limit (a share, advise's --check-busy). Throws InputError, one line naming name (and the row), for those and
/// for anything malformed.
[[nodiscard]] Prediction prediction_error(std::string_view text, const std::string& name,
                                          const std::string& platform_fnv1a64, const std::string& trace_fnv1a64,
                                          double busy_limit);

/// The tolerance the sources give: the largest (the first of equals), and words naming it, its P, n and the host's
/// load, then the others: "measured by your program's own runs at P = 2, n = 2, the host at most 3 % busy: 31.99 to
/// 33.32 s, 4.2 %; also ...". An assumed largest reads "assumed, not measured" (with what was measured after it).
/// The tolerance's source in a word, for a verdict (the whole account is its heading and advice.csv's `tolerance`):
/// "assumed", "measured", or the source named with where it was measured (largest_tolerance's words up to their
/// colon: "measured by your program's own runs at P = 2, n = 2, the host at most 3 % busy").
[[nodiscard]] std::string tolerance_source_words(const std::string& tolerance_words);

struct Tolerance {
  double fraction = 0;
  ToleranceSource source;
  std::string words;
};

/// Which measurements set the tolerance, and how far, in the words `mcmclb advise --help` prints and
/// docs/guide/your-workload.md quotes. largest_tolerance applies it to the sources it is given; prediction_error
/// keeps a prediction check to the rows of the user's own trace and refuses a busy host's.
inline constexpr std::string_view kToleranceRule =
    "The tolerance is the largest of: an assumed 5 % (--tolerance) unless --check measured your program's own run, "
    "--check's errors, your program's run-to-run spread, and a prediction check (--prediction). The spread "
    "leaves the host's drift out. A prediction check "
    "counts only where it replayed this very trace on a host at most --check-busy busy (a busier one is refused), "
    "and never above your program's spread where the trace measures one.";

/// The tolerance the sources give by kToleranceRule; sources not empty. A prediction's fraction is cut to the
/// program's own spread (kind program_runs) where that is smaller, and its words say so.
[[nodiscard]] Tolerance largest_tolerance(std::vector<ToleranceSource> sources);

/// One rank count for the question how many ranks are worth it: its advised set-up and that set-up's whole time in
/// each scenario (the scenarios fewest_ranks is given, in their order; NaN where it has none), and the fastest
/// whole time of any set-up simulated there (best_s; empty: the advised set-up's own), and none's (none_s; empty:
/// not known).
struct AtRanks {
  int nprocs = 0;
  std::vector<double> whole_s;
  std::string winner;
  std::vector<double> best_s;
  std::vector<double> none_s = {};
};
/// A rank count's entry made from its ranking, the one way every count gets one (asked or searched): the
/// verdict's winner (the tie's simplest member, the same selection at every count) and the fastest of setups,
/// each matched to `order` by what the scenario assumes. setups[k].price follows `scenarios`.
[[nodiscard]] AtRanks at_ranks_of(int nprocs, const Ranking& ranking, const std::vector<Setup>& setups,
                                  const std::vector<Scenario>& scenarios, const std::vector<Scenario>& order);
/// The rank counts judged by the rule that ranks the set-ups: a count's regret in a scenario is its advised set-up's
/// whole time over the fastest set-up's at any count there, minus 1 (best_s), so the tolerance is spent once: the
/// answer's set-up is within it of the fastest simulated anywhere. The answer is, of the counts whose largest regret
/// is within the tolerance, the one with the fewest core-hours in its dearest scenario (the fewer ranks on a tie),
/// else the count with the smallest largest regret (minimax). Indices into at.
struct RanksAnswer {
  std::size_t fewest = 0;
  AtRanks answer;                                    // at[fewest]
  std::vector<double> regret_max;                    // per count
  std::vector<std::size_t> worst;                    // per count: the scenario of its largest regret
  std::vector<double> core_hours_lo, core_hours_hi;  // per count: ranks x whole time, over the scenarios
  /// The count the same rule picks under each assumption past the measured sizes alone (workload_extrapolate),
  /// in the scenarios' order; empty where one assumption is varied or none. Where one differs from the answer, the
  /// text says the answer is one only some assumptions favour.
  std::vector<std::pair<std::string, int>> by_rule;
  std::string text;  // the rule, the answer and each count's time, core-hours and largest regret, in words
};
/// The answer a user reads first, in at most 60 words: the set-up at the rank count answered, its gain over none under
/// each assumption past the measured sizes (or its range where none is varied), the line that runs it, and what to
/// measure next (next: a sentence, or empty). answer.none_s must be given; scenarios are its times' order.
[[nodiscard]] std::string first_words(const AtRanks& answer, const std::vector<Scenario>& scenarios, double tolerance,
                                      const std::string& run_flags, const std::string& next);

/// The answer over the scenarios every count has a time in (scenarios: at[k].whole_s's order); nullopt for no
/// count or no such scenario. tolerance is a fraction; searched says in words which counts were simulated.
std::optional<RanksAnswer> fewest_ranks(const std::vector<AtRanks>& at, const std::vector<Scenario>& scenarios,
                                        double tolerance, const Words& words, const std::string& searched);

}  // namespace mcmclb::advice
