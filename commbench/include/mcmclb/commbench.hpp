// SPDX-License-Identifier: BSD-3-Clause
// What mcmclb-commbench measures, shared by its two timing loops: the options, what one benchmark is, and
// Measurement::once(), the one place an operation is timed (barrier over WORLD, MPI_Wtime around the operation
// on every rank, MAX over ranks). Which loop repeats once() is the build's choice (measure()):
//  - the MPI build: Google Benchmark (src/loop_gbench.cpp), with iteration counts sized by wall time;
//  - the simulation build (-DMCMCLB_SMPI=ON, mcmclb-commbench-sim): a plain loop (src/loop_sim.cpp), since
//    Google Benchmark keeps global state that ranks sharing one copy of the binary (smpirun -no-privatize)
//    would share, and simulated time is deterministic, so one iteration per repetition suffices.
// Both give the same rows (samples_csv()), whose backend column says which one measured. Also the live-communicator
// count. No flags and no printing: the command (apps/commbench.cpp) parses, prints and writes.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "mcmclb/csv.hpp"
#include "mcmclb/group_comm.hpp"
#include "mcmclb/mpi.hpp"
#include "mcmclb/provenance.hpp"
#include "mcmclb/study.hpp"

namespace mcmclb::commbench {

/// Everything commbench measures: the creation methods (mcmclb/comm_create.hpp's table), then the timing floor (not
/// a method: every rank's iteration makes nothing, so it times what the loop itself costs), and their names.
std::vector<MethodInfo> measured_methods();
std::vector<std::string_view> method_names();

struct Options {
  std::vector<std::string> methods;  // empty: every method the library supports
  std::vector<int> sizes;            // empty: 1, 2, 4, ..., P plus one non-power-of-two size
  // Simulated time is deterministic: a few repetitions show that it is, and one warm-up iteration suffices.
  int repetitions = mpi::kSimulated ? 3 : 5;
  int warmup_iterations = mpi::kSimulated ? 1 : 2;
  double repetition_s = 0.2;  // target measured time per repetition (MPI build only)
  int min_iterations = 3;
  int max_iterations = 100000;
  std::string filter = ".";
  std::string out = "results/commbench.csv";
  std::string groups_file;  // --groups: measure this layout of groups instead of sizes
  int groups_of = 0;        // --groups-of K: the layout of consecutive groups of K ranks (the last may be smaller)
  int live_cap = 0;         // --live-communicators CAP: count live communicators per method instead of timing
  std::vector<int> group_layout;  // its group sizes in rank order (resolved on every rank)
  std::string groups_text;        // as runs.csv records it, e.g. sizes:2,2 or node:4
  bool resume = false;            // --resume: keep the benchmarks --out holds complete, write after each one
};

enum class Op { create, free };

struct Spec {
  std::string method;
  Op op;
  int group_size;  // 0: the --groups layout, every rank in its own group
};

/// The benchmark's name, e.g. "create_group/create/size:8" (what --filter matches).
std::string spec_name(const Spec& s);

/// The median of t (not empty), reordering it: std::nth_element, linear rather than a full sort.
double median_in_place(std::vector<double>& t);

/// One benchmark, set up on every rank of world (collective over world: creators may duplicate it), repeated by
/// once(). Every method, and the timing floor, is measured through the same GroupCommCreator interface the kernel
/// creates its groups with; the method's facts (MethodInfo) say who takes part and whether it creates from the
/// bounds or from an MPI group built once here, outside the timed window.
class Measurement {
 public:
  Measurement(const Spec& spec, const mpi::Comm& world, const std::vector<int>& layout);
  /// One iteration on every rank: returns the MAX over ranks of the operation's elapsed seconds.
  double once();

 private:
  /// This rank's creation (null where it gets no communicator).
  std::unique_ptr<GroupComm> create();

  Spec spec_;
  const mpi::Comm& world_;
  std::unique_ptr<GroupCommCreator> creator_;
  mpi::Group group_;          // the measured group, for methods that create from an MPI group
  int first_ = 0, last_ = 0;  // the measured group's bounds
  bool takes_part_ = false;
};

/// One repetition's result (a raw sample of the CSV).
struct Sample {
  Spec spec;
  int64_t repetition;
  int64_t iterations;
  double time_us;  // mean over the repetition's iterations
  double min_us;
  double max_us;
  // Median over the repetition's iterations: for a cheap operation (range: tens of ns) on oversubscribed cores,
  // one scheduler preemption of a few ms inside a timed window in thousands of iterations dominates the mean;
  // the median says what the operation itself costs.
  double median_us;
};

/// Called on rank 0 after each benchmark with every sample so far (commbench --resume writes them at once).
using Progress = std::function<void(const std::vector<Sample>&)>;

/// Runs every benchmark of specs (collective over world, same specs on every rank) with the build's timing loop
/// and returns the samples on rank 0 (nothing elsewhere).
std::vector<Sample> measure(const std::vector<Spec>& specs, const Options& o, const mpi::Comm& world,
                            const Provenance& provenance, const Progress& progress);

/// --live-communicators: how far one method got.
struct LiveCount {
  std::string method;
  int live = 0;          // communicators every rank held at the end (the fewest over ranks)
  bool refused = false;  // the library refused one before the cap
  std::string error;     // the refused call and the library's words, from the lowest rank that was refused
};

/// Collective over world: communicators over every rank made by method, all kept alive, until the library refuses
/// one or cap are live; then all are freed. The error is the refused call and the library's last line, from the
/// lowest rank refused.
LiveCount count_live(const std::string& method, int cap, const mpi::Comm& world);

/// The benchmark as its CSV rows name it: a --groups layout is recorded in the column groups, and its group_size
/// is the largest group of the layout.
CommbenchBenchmark recorded_as(const Spec& spec, const Options& o);

/// commbench.csv's content: the kept rows (--resume: the benchmarks --out already held complete), then a row per
/// sample with its benchmark's median and interval over the repetitions, for one atomic replacement of the file.
std::string samples_csv(const std::vector<csv::Row>& kept, const std::vector<Sample>& samples, const Options& o,
                        const Provenance& p);

/// The live-communicator table (its own schema: it measures a count, not a time): a row per method counted so far.
const csv::Row& live_header();
std::string live_csv(const std::vector<LiveCount>& counts, const Options& o, const Provenance& p);

}  // namespace mcmclb::commbench
