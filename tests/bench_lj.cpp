// SPDX-License-Identifier: BSD-3-Clause
// Cost of the Lennard-Jones workload on one core (no MPI): seconds per item by cluster size and move kind, and the
// parallel efficiency of one energy evaluation split over g members, simulated in one process by timing each
// member's slice. Calibration data for the compute workload, not a test.
//
//   bench_lj --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
// The calibration table of docs/guide/simulation.md (plots/doc_tables.py, block lj-cost) reads every repetition of
// BM_Split at g = 1 and BM_Trial, written with --benchmark_out=FILE.csv --benchmark_out_format=csv.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <ctime>

#include "mcmclb/lj.hpp"

namespace lj = mcmclb::lj;

namespace {

lj::Spec spec_for(int atoms, lj::MoveKind move) {
  lj::Spec spec;
  spec.atoms = atoms;
  spec.move = move;
  spec.temperature = 0.3;
  spec.max_step = move == lj::MoveKind::single ? 0.1 : 0.02;
  return spec;
}

// One item (draws, pair sum, verdict, update) at g = 1: the per-item cost of a chain worked by one rank. Read
// the CPU column: the machine is shared, and wall time includes preemption.
void BM_Item(benchmark::State& bench) {
  const lj::Spec spec = spec_for(static_cast<int>(bench.range(0)), static_cast<lj::MoveKind>(bench.range(1)));
  const lj::ChainKey key{1, 0};
  lj::State state = lj::initial_state(spec.atoms, key);
  for (auto _ : bench) benchmark::DoNotOptimize(lj::work_item_split(spec, key, state, 1));
  bench.counters["accept_ratio"] = static_cast<double>(state.accepted) / static_cast<double>(state.item);
  bench.SetLabel(std::string(lj::to_string(spec.move)));
}

// The work of a trial besides its pair sum, on every member of a group alike: the draws of propose() and the
// update of apply() (a rejection: only the move counter advances). With BM_Split at g = 1 (the pair sum alone),
// the calibration of the simulated cost, lj::kTrialFlops, lj::kMovedAtomFlops and lj::kPairTermFlops.
void BM_Trial(benchmark::State& bench) {
  const lj::Spec spec = spec_for(static_cast<int>(bench.range(0)), static_cast<lj::MoveKind>(bench.range(1)));
  const lj::ChainKey key{1, 0};
  lj::State state = lj::initial_state(spec.atoms, key);
  for (auto _ : bench) {
    lj::Trial trial = lj::propose(spec, key, state);
    benchmark::DoNotOptimize(trial);
    lj::apply(state, std::move(trial), lj::ItemResult{});
  }
  // The unit of lj::kMovedAtomFlops: the atoms a trial moves (one for a single move, whose trial is the unit).
  bench.counters["moved_atoms"] = spec.move == lj::MoveKind::all ? spec.atoms : 1;
  bench.SetLabel(std::string(lj::to_string(spec.move)));
}

// This thread's CPU seconds: on the shared 2-core machine, time spent preempted by other jobs must not count.
double thread_cpu_s() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

// One energy evaluation (the dE of a trial) split over g members. Iteration time: the slowest member's slice in
// thread CPU seconds, i.e. the evaluation's time on g ideal cores with free communication. Counter efficiency:
// T(g=1) / (g * that).
void BM_Split(benchmark::State& bench) {
  const lj::Spec spec = spec_for(static_cast<int>(bench.range(0)), static_cast<lj::MoveKind>(bench.range(1)));
  const int g = static_cast<int>(bench.range(2));
  const lj::ChainKey key{1, 0};
  lj::State state = lj::initial_state(spec.atoms, key);
  const lj::Trial trial = lj::propose(spec, key, state);
  // Each timing repeats its evaluation so that a slice of a few pairs is well above the clock's resolution.
  const int repeat = spec.move == lj::MoveKind::single ? 2000 : 50;
  const auto time_part = [&](int parts, int r) {
    const double start = thread_cpu_s();
    for (int k = 0; k < repeat; ++k) benchmark::DoNotOptimize(lj::delta_part(state, trial, parts, r));
    return (thread_cpu_s() - start) / repeat;
  };
  double whole_s = 0, slowest_s = 0;
  for (auto _ : bench) {
    const double whole = time_part(1, 0);
    double slowest = 0;
    for (int r = 0; r < g; ++r) slowest = std::max(slowest, time_part(g, r));
    bench.SetIterationTime(slowest);
    whole_s += whole;
    slowest_s += slowest;
  }
  bench.counters["efficiency"] = whole_s / (g * slowest_s);
  // The unit of lj::kPairTermFlops: the whole evaluation's pair terms.
  bench.counters["pair_terms"] = static_cast<double>(lj::pair_terms(trial, spec.atoms, 1, 0));
  bench.SetLabel(std::string(lj::to_string(spec.move)));
}

void item_args(benchmark::internal::Benchmark* b) {
  for (const int move : {0, 1})
    for (const int atoms : {13, 26, 38, 55}) b->Args({atoms, move});
}

void split_args(benchmark::internal::Benchmark* b) {
  for (const int move : {0, 1})
    for (const int atoms : {13, 26, 55})
      for (int g = 1; g <= 8; ++g) b->Args({atoms, move, g});
}

}  // namespace

static_assert(static_cast<int>(lj::MoveKind::single) == 0 && static_cast<int>(lj::MoveKind::all) == 1);
BENCHMARK(BM_Item)->Apply(item_args)->ArgNames({"atoms", "move"});
BENCHMARK(BM_Trial)->Apply(item_args)->ArgNames({"atoms", "move"});
// A fixed iteration count: the manual time is per evaluation, while an iteration runs 1 + g repeated timings.
BENCHMARK(BM_Split)->Apply(split_args)->ArgNames({"atoms", "move", "g"})->UseManualTime()->Iterations(40);
BENCHMARK_MAIN();
