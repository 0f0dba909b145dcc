// SPDX-License-Identifier: BSD-3-Clause
// mcmclb-commbench's timing loop in the MPI build (commbench.hpp): Google Benchmark repeats Measurement::once()
// as manual time, with every benchmark's iteration count fixed from a MAX-reduced pilot, so that every rank runs
// exactly the same iterations.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "mcmclb/commbench.hpp"

namespace mcmclb::commbench {

namespace {

/// Rank 0's reporter: keeps every repetition's result (the raw samples) for the CSV and the summary table, and
/// shows only the aggregates (median, mean, stddev, cv, min, max) on the console.
class Collector : public benchmark::ConsoleReporter {
 public:
  Collector(const std::map<std::string, Spec>& specs, const Progress& progress)
      : benchmark::ConsoleReporter(OO_Tabular), specs_(specs), progress_(progress) {}
  void ReportRuns(const std::vector<Run>& runs) override {
    std::vector<Run> aggregates;
    const std::size_t before = samples.size();
    for (const Run& run : runs) {
      if (run.run_type == Run::RT_Aggregate) {
        aggregates.push_back(run);
        continue;
      }
      const auto found = specs_.find(run.run_name.function_name);
      if (run.error_occurred || found == specs_.end()) continue;
      samples.push_back({found->second, run.repetition_index, run.iterations, run.GetAdjustedRealTime(),
                         run.counters.at("min_us").value, run.counters.at("max_us").value,
                         run.counters.at("median_us").value});
    }
    if (!aggregates.empty()) ConsoleReporter::ReportRuns(aggregates);
    if (samples.size() > before) progress_(samples);  // a benchmark's repetitions come in one call
  }
  std::vector<Sample> samples;

 private:
  const std::map<std::string, Spec>& specs_;
  const Progress& progress_;
};

/// Suppresses output on ranks other than 0.
class Silent : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

}  // namespace

std::vector<Sample> measure(const std::vector<Spec>& selected, const Options& o, const mpi::Comm& world,
                            const Provenance& provenance, const Progress& progress) {
  const int rank = world.rank();
  // Pilot: a few MAX-reduced iterations fix each benchmark's iteration count identically on every rank.
  std::map<std::string, Spec> specs;
  std::vector<std::unique_ptr<Measurement>> measurements;
  for (const Spec& spec : selected) {
    const std::string name = spec_name(spec);
    auto m = std::make_unique<Measurement>(spec, world, o.group_layout);
    // Sized by wall time per iteration (synchronisation included), so a repetition lasts about
    // --rep-time however cheap the operation itself is.
    const double pilot_start = MPI_Wtime();
    constexpr int kPilotIterations = 3;
    for (int i = 0; i < kPilotIterations; ++i) m->once();
    const double wall_per_iteration_s =
        std::max(mpi::max_politely(world, (MPI_Wtime() - pilot_start) / kPilotIterations), 1e-7);
    const auto iterations = static_cast<benchmark::IterationCount>(
        std::clamp(o.repetition_s / wall_per_iteration_s, double(o.min_iterations), double(o.max_iterations)));
    Measurement* raw = m.get();
    const int warmup = o.warmup_iterations;
    benchmark::RegisterBenchmark(name.c_str(),
                                 [raw, warmup](benchmark::State& state) {
                                   for (int i = 0; i < warmup; ++i) raw->once();
                                   // Every iteration's time, for the median: the count is fixed (between
                                   // Options::min_iterations, 3, and max_iterations, 100000: at most 800 kB),
                                   // so the vector is reserved once, before timing.
                                   std::vector<double> times;
                                   times.reserve(static_cast<std::size_t>(state.max_iterations));
                                   for (auto _ : state) {
                                     const double t = raw->once();
                                     times.push_back(t);
                                     state.SetIterationTime(t);
                                   }
                                   // Never empty: Iterations() is at least Options::min_iterations (3).
                                   state.counters["min_us"] = *std::min_element(times.begin(), times.end()) * 1e6;
                                   state.counters["max_us"] = *std::max_element(times.begin(), times.end()) * 1e6;
                                   state.counters["median_us"] = median_in_place(times) * 1e6;
                                 })
        ->UseManualTime()
        ->Iterations(iterations)
        ->Repetitions(o.repetitions)
        ->Unit(benchmark::kMicrosecond)
        ->ComputeStatistics("min", [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); })
        ->ComputeStatistics("max", [](const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); });
    specs.emplace(name, spec);
    measurements.push_back(std::move(m));
  }

  benchmark::AddCustomContext("mpi_library", provenance.mpi_library);
  benchmark::AddCustomContext("nprocs", std::to_string(provenance.nprocs));
  benchmark::AddCustomContext("host", provenance.host);
  benchmark::AddCustomContext("git_commit", provenance.git_commit);
  benchmark::AddCustomContext("utc_start", provenance.utc_start);
  benchmark::AddCustomContext("command_line", provenance.command_line);
  // Printed into the job's output file (slurm-%x-%j.out); commbench-n<P>.csv keeps the header plots/fig1.py reads.
  if (!provenance.launcher.empty()) benchmark::AddCustomContext("launcher", provenance.launcher);
  if (!provenance.slurm_job_id.empty()) {
    benchmark::AddCustomContext("slurm_job_id", provenance.slurm_job_id);
    benchmark::AddCustomContext("slurm_nodelist", provenance.slurm_nodelist);
  }
  benchmark::AddCustomContext("timer", "MPI_Wtime per rank, MAX over ranks, per iteration");
  int one = 1;
  static char program[] = "mcmclb-commbench";  // Google Benchmark keeps argv[0]
  char* no_args[] = {program, nullptr};
  benchmark::Initialize(&one, no_args);

  Collector collector(specs, progress);
  Silent silent;
  benchmark::RunSpecifiedBenchmarks(rank == 0 ? static_cast<benchmark::BenchmarkReporter*>(&collector) : &silent);
  benchmark::Shutdown();

  return collector.samples;
}

}  // namespace mcmclb::commbench
