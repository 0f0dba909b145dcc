// SPDX-License-Identifier: BSD-3-Clause
// What `mcmclb advise` simulates, with no I/O: the advice study's keys from the question its flags ask and the
// workload (a trace, or what a study file's points say), what they assume and skip in words, and the question
// each rank count answers. The advise library (advise/src/plan.cpp) reads the files, checks them and writes the study
// this plans.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "mcmclb/study_value.hpp"
#include "mcmclb/trace.hpp"

namespace mcmclb::advice {

/// What an advice is asked, from its flags.
struct PlanQuestion {
  std::vector<long> ranks;
  std::vector<std::string> balancers;  // none among them
  long group_size = 0;                 // G of the copies; 0: one rank (a trace), the study's own (a study file)
  long chains_per_group = 0;           // W; 0: one
  bool copies = false;                 // P / G * W copies of the recorded walkers instead of the walkers themselves
  long draws = 3;                      // seeded draws of the chain map, or of a seeded model's workload
  double tolerance = 0.05;             // a fraction
};

/// What a study file's points say about its workload, which the advice keeps as it is.
struct GivenStudy {
  const Trace* replayed = nullptr;  // the trace its points replay, if they replay one
  long largest_rank = 1;            // its largest nprocs
  bool copies = false;              // more chains than the trace holds: the chain map is open
  bool sets_speedups = false;       // it names workload.speedups itself
  bool sets_zip = false;            // it has a zip of its own
  bool seeded = false;              // its workload model takes a seed
};

/// The advice study's keys and what they assume and skip, with the shape of the walkers each rank count asks about.
struct StudyPlan {
  StudyValue keys;                       // the keys set on the workload's study, in the study's order
  std::vector<std::string> assumptions;  // what the scenarios vary, one phrase each
  std::vector<std::string> skipped;      // what it does not run, and why
  /// The race's first speed-up rule (TraceScenarios::first_extrapolate).
  std::string first_extrapolate = "amdahl";
  int measured_up_to = 0;     // the trace's speed-ups hold up to this size (SpeedupRules); 0: no trace
  int trace_chains = 0;       // a trace's walkers (0: a study file)
  int idle_chains = 0;        // of those, the ones without items
  bool copies = false;        // P / G * W walkers, not the recorded ones
  long group_size = 1;        // G of the copies
  long chains_per_group = 1;  // W
  /// The recorded walkers' initial groups at each rank count asked (not copies): walker_layout().
  std::map<long, long> walker_groups;
  std::vector<int> recorded_shares;  // Trace::recorded_shares: the walkers of each recorded group
  int recorded_ranks = 0;            // the trace's run line's ranks (0: none)
  bool from_library = false;         // recorded by mcmclb::walkers (its run line names the walkers), not converted
  std::string work_sits;             // work_words: where the trace's work sits, or empty
  /// For a trace whose recording did not end: what it lacks, in one sentence that opens every verdict (empty for
  /// a whole trace).
  std::string cut_short;
};

/// The recorded walkers' initial groups at P ranks, as mcmclb::walkers would run them: the recorded groups at the
/// rank count of the trace's run line; elsewhere its group size kept (P over it, at least 1), at most one group
/// per walker (a trace without a run line: groups of one rank). And the most walkers one of them holds (W).
struct WalkerLayout {
  long groups = 1, most = 1;
};
[[nodiscard]] WalkerLayout walker_layout(const Trace& trace, long nprocs);

/// The plan for a trace file (named `file` in errors): every balancer and rule at each rank count asked, over the
/// scenarios the trace leaves open. Without copies, the recorded walkers in their layout (walker_layout): several
/// to a group where the ranks are fewer, each replayed once (workload.map once where a group holds more than one).
///
/// A trace whose recording did not end (Trace::incomplete) lacks the speed-ups a finished one gets at its end, and
/// its walkers may lack their last items. Its advice assumes no speed-up it did not measure: the set-ups that merge
/// groups are left out unless every rank count asked is within the measured sizes, and the question is refused
/// (InputError, one line) where even the initial groups would be larger than those sizes, or where items were
/// worked at group sizes without a measured speed-up (their cost on one rank is then unknown).
[[nodiscard]] StudyPlan plan_trace(const PlanQuestion& q, const Trace& trace, const std::string& file);

/// The plan for a study file's workload: its own axes stay, and what it leaves open is varied.
[[nodiscard]] StudyPlan plan_study(const PlanQuestion& q, const GivenStudy& given);

/// The question an advice answers at P ranks, in words: whose walkers, on how many ranks, in what groups.
[[nodiscard]] std::string walkers_words(const StudyPlan& plan, int nprocs);

/// The largest group the balancer works a walker with at P ranks: P for one that merges groups, the largest initial
/// group for one that never does (ScenarioQuestion::fixed).
[[nodiscard]] int largest_group(const StudyPlan& plan, int nprocs, const std::string& balancer);

/// Where the balancer's groups at P ranks reach past twice the sizes the trace measured speed-ups at, the sentence
/// that says so (extrapolation_note); nothing for a cut-short trace, whose groups stay within the measured sizes.
[[nodiscard]] std::optional<std::string> extrapolated(const StudyPlan& plan, int nprocs, const std::string& balancer);

/// What to measure next at P ranks under the balancer, a sentence: where its groups reach past twice the measured
/// sizes, the measurement extrapolation_note names; where only a merging set-up's would, that measurement as what
/// decides whether merging pays; else empty.
[[nodiscard]] std::string measure_next(const StudyPlan& plan, int nprocs, const std::string& balancer);

/// The verdict at P ranks as printed and written to advice.csv: a cut-short trace's sentence first, then the
/// rule's verdict, then where the advised balancer's groups reach past twice the measured sizes, a note that says
/// so (extrapolation_note).
[[nodiscard]] std::string verdict_words(const StudyPlan& plan, int nprocs, const std::string& balancer,
                                        const std::string& verdict);

/// The exclude rules that keep each of these balancers at its interval of the scaling studies
/// (configs/trace-lj-scale.yaml): collective every 16 items, the planners looking one item ahead.
[[nodiscard]] StudyExclude interval_excludes(const std::vector<std::string>& balancers);

}  // namespace mcmclb::advice
