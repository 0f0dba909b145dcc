// SPDX-License-Identifier: BSD-3-Clause
// `mcmclb advise`'s orchestration, after the plan (mcmclb/advise_plan.hpp): the estimate, the simulations as
// sweeps of the simulation launcher, the race between the set-ups, --check, and the search between the rank counts
// asked; what it finds is handed back for apps/advise.cpp to print and write. The rule it judges by is the advice
// library's (mcmclb/advice.hpp), which does no I/O; this room runs and reads what the rule is fed.
#pragma once

#include <cstddef>
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

/// text cut into lines of at most width characters at spaces, each after indent.
std::string wrapped(const std::string& text, std::size_t width, const std::string& indent);

/// A point's ideal as its run computes it, without simulating it: it bounds a scenario that none alone was not
/// simulated under (none never merges, so it runs under one speed-up rule, but the others lower the ideal).
std::optional<double> ideal_of(const RunSpec& spec);

/// "; 3 speed-ups above their ranks set aside" for a trace that gave some (named at the start), else nothing.
std::string set_aside_words(const Options& o, const Plan& plan);

/// The race's first scenario in words, as scenario_words names scenarios.
std::string first_scenario_words(const Plan& plan);

/// Whether the plan varies anything: more than one scenario, so that racing can save simulations.
bool varies_scenarios(const Plan& plan);

/// The sweep that simulates the plan's study: the simulation launcher on o's platform and build, into o.out, one
/// point per launch (a point that fails or is stopped loses no other; a start-up costs about 0.1 s).
SweepOptions simulation_sweep(const Options& o, const Plan& plan);

/// Where the simulations run, in words: "here", or in batch jobs.
const char* where_words(const Options& o);

/// The estimate of the whole advice printed: the simulations, the search between the rank counts, --check's real
/// runs and, racing, its first rounds; each over the CPU the host gives (sweep.cpu, measured). skipped: the
/// simulations already in the folder.
void print_estimate(const Options& o, const Plan& plan, const SweepOptions& sweep, const Study& study,
                    const SimulationEstimate& whole, std::size_t skipped);

/// The simulations of one round: on this host (the smpi launcher, --jobs at once), or with --launcher slurm as one
/// batch job of --jobs tasks whose sweep runs each simulation as a job step. host_s: the round's estimated host
/// seconds, for the job's time limit. study: value loaded. The exit status: 0, or non-zero when a simulation failed.
int simulate(const Options& o, const SweepOptions& sweep, const Study& study, const StudyValue& value, double host_s);

/// What an advice found, for the command to print: per rank count asked, the rule's input and its ranking; what
/// the race dropped and where none settled a count; the tolerance; the answer to how many ranks are worth it.
struct Outcome {
  advice::Tables tables;
  std::vector<advice::Ranking> rankings;  // one per tables.at
  std::map<int, std::vector<advice::Dropped>> dropped;
  std::map<int, advice::NoneSettles> settled;
  advice::Tolerance tolerance;
  std::optional<advice::RanksAnswer> answer;
  bool failed = false;  // a simulation failed (its points are in failures.csv)
};

/// The advice study run: raced unless --no-race (or nothing varies), its study file kept in OUT, the cut undone
/// where it may have moved the answer, --check where asked, the ranking, and the search between the rank counts.
/// study: the plan's study, loaded; on return, the study whose points were ranked.
Outcome run_advice(const Options& o, const Plan& plan, const SweepOptions& sweep, Study& study);

}  // namespace mcmclb::advising
