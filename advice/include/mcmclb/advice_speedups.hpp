// SPDX-License-Identifier: BSD-3-Clause
// What a trace's measured speed-ups allow an advice to assume past the group sizes they were measured at, with no
// I/O: the speed-up rules the scenarios take (workload.extrapolate), the one the race starts from, and where an
// answer rests on groups far larger than any measured. `mcmclb advise` plans its study with it.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mcmclb/study_value.hpp"
#include "mcmclb/trace.hpp"

namespace mcmclb::advice {

/// The speed-up rules an advice varies past the measured sizes, and why any is left out.
struct SpeedupRules {
  /// workload.extrapolate values, in order: usl (the Universal Scalability Law fitted through the measured sizes)
  /// where its fit bends down, so that a larger group can be slower; flat (the last speed-up held); amdahl (Amdahl's
  /// law fitted through the measured sizes: the centre); and perfect only where the measurements allow it. Empty
  /// where the trace gives no speed-ups: every size is then perfect scaling, assumed.
  std::vector<std::string> rules;
  /// The measured speed-ups in words, each size given several times with its count and range; empty where none.
  std::string measured;
  /// Where usl is a rule: where its fit peaks, in words.
  std::string usl_peak;
  /// The race's first scenario: the fit's centre, the most plausible rule (amdahl; where it is dropped, usl if
  /// admissible, else flat).
  std::string first = "amdahl";
  /// Over the chains with items, the smallest of each chain's largest measured size (1: none measured): past
  /// it some chain's speed-up is extrapolated.
  int measured_up_to = 1;
  /// The largest size any chain's speed-up was measured at (1: none measured).
  int measured_largest = 1;
  /// The highest efficiency (speed-up over ranks) any chain reached at its largest measured size.
  double best_efficiency = 1;
  /// Why perfect scaling is not a scenario, in words; empty where it is one.
  std::string perfect_left_out;
  /// The fitted rules (amdahl, usl) that contradict a measured size, one line each saying where: a law fitted
  /// through the measured sizes and scaled through the last, as the replay extrapolates it, must fall within each
  /// size's band, the repetitions' range widened to at least the tolerance either side of the replayed speed-up.
  std::vector<std::string> dropped;
};

/// "the speed-ups measured: 1.25 at 2, 1.4 at 4 ranks", a size given several times with its count and range, the
/// curve most chains share where they differ; empty where the trace gives none.
[[nodiscard]] std::string measured_words(const Trace& trace);

/// The rules for a trace. Perfect scaling past the measured sizes means every further rank adds what the measured
/// ones did on average; a chain whose efficiency has already fallen below 1 - tolerance (a fraction) contradicts
/// it, so perfect is a scenario only where some chain's efficiency at its largest measured size is within the
/// tolerance of 1. A fitted rule (amdahl, usl) is a scenario only where it agrees with every measured size of every
/// chain (SpeedupRules::dropped says where one does not); flat always is.
[[nodiscard]] SpeedupRules speedup_rules(const Trace& trace, double tolerance);

/// What an advice on a trace is asked: how far its groups reach, which set-ups never grow theirs, and what its
/// study fixes already.
struct ScenarioQuestion {
  long largest_rank = 1;  // the most ranks asked
  /// The largest initial group at those ranks, where the advice lays the groups out itself (0: the study's own
  /// layout, not known here). Set-ups in `fixed` work at that size only.
  long largest_group = 0;
  std::vector<std::string> fixed = {"none", "steal", "stealrandom"};  // the balancers that never merge
  bool speedups_given = false;  // the study sets workload.speedups itself: no end of the repetitions is varied
  double tolerance = 0.05;      // a fraction: how close to 1 an efficiency must be for perfect scaling
  /// A cut-short trace's advice, whose set-ups never work a group past the measured sizes: no speed-up rule is
  /// varied, and none assumed.
  bool within_measured = false;
};

/// The scenarios an advice on a trace varies past what was measured, as study keys: the admissible speed-up rules
/// past the measured sizes (workload.extrapolate) and, where a size's repetitions differ, their ends
/// (workload.speedups: the median, the lowest and the highest, each under every admissible rule). With the exclude
/// rules that pair them, what it assumed and skipped in words, the race's first rule, and where the measured sizes end.
struct TraceScenarios {
  StudyValue keys;                       // the keys that vary the scenarios
  StudyExclude exclude;                  // the rules that leave set-ups out of some
  std::vector<std::string> assumptions;  // what the scenarios vary, one phrase each
  std::vector<std::string> skipped;      // what they leave out, and why
  /// The race's first rule: the rules' centre, or flat where the set-ups in `fixed` run under flat alone (their
  /// groups never pass the measured sizes, so every rule gives them the same speed-ups and flat stands for all).
  std::string first_extrapolate = "amdahl";
  int measured_up_to = 1;  // SpeedupRules::measured_up_to
};
[[nodiscard]] TraceScenarios trace_scenarios(const Trace& trace, const ScenarioQuestion& question);

/// Where the advised set-up's groups at nprocs ranks reach past twice the measured sizes (largest_group: nprocs for
/// a balancer that merges, which can gain every rank on one walker; the initial groups for one that never does), a
/// sentence that says the answer is extrapolated and which measurement narrows it: for a trace recorded by
/// mcmclb::walkers (from_library), recording the program at P under mostwork; for one converted from another
/// program's log, timing one walker at larger groups and adding those speed-up rows. Else nothing.
/// The measurement extrapolation_note names, alone: "record your program at P = ..." or "time one walker's items on
/// ... ranks and add those speed-up rows to the trace (...)".
[[nodiscard]] std::string extrapolation_measure(int nprocs, int largest_group, int measured_up_to, bool from_library);
[[nodiscard]] std::optional<std::string> extrapolation_note(int nprocs, int largest_group, int measured_up_to,
                                                            bool from_library);

/// Where a trace's work sits, in words: the walkers with over twice the median walker's work, their share of all of
/// it and whether they start next to each other in the replay's order (Trace::layout), which decides the initial
/// groups beside them, with a way to see whether that matters. Empty where no walker is that long, or most are.
[[nodiscard]] std::string work_words(const Trace& trace);

}  // namespace mcmclb::advice
