// SPDX-License-Identifier: BSD-3-Clause
// mcmclb/commbench.hpp: commbench's rows, the samples' table (commbench.csv, whose header is the results library's
// commbench_header()) and the live-communicator table.
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "mcmclb/commbench.hpp"
#include "mcmclb/csv.hpp"
#include "mcmclb/stats.hpp"
#include "mcmclb/study.hpp"

namespace mcmclb::commbench {

/// The benchmark as its CSV rows name it: a --groups layout is recorded in the column groups, and its group_size
/// is the largest group of the layout.
CommbenchBenchmark recorded_as(const Spec& spec, const Options& o) {
  const int largest = o.group_layout.empty() ? 0 : *std::max_element(o.group_layout.begin(), o.group_layout.end());
  return {spec.method, mcmclb::kCommbenchOps[spec.op == Op::create ? 0 : 1],
          spec.group_size > 0 ? spec.group_size : largest, spec.group_size > 0 ? std::string() : o.groups_text};
}

/// The kept rows (--resume: the benchmarks --out already held complete) and then the samples' rows, for
/// one atomic replacement: the file is never torn, and a benchmark's rows appear only once all its repetitions are.
std::string samples_csv(const std::vector<csv::Row>& kept, const std::vector<Sample>& samples, const Options& o,
                        const Provenance& p) {
  // The summary of each benchmark's repetitions: reps (how many), the median of their time_us and its 95 %
  // interval by order statistics (mcmclb/stats.hpp; empty below 6 repetitions, never a made-up interval), repeated
  // on each repetition's row so the file stays one row per sample. Kept rows carry their own.
  std::map<std::tuple<std::string, Op, int>, std::vector<double>> repetitions;
  for (const auto& s : samples) repetitions[{s.spec.method, s.spec.op, s.spec.group_size}].push_back(s.time_us);
  std::map<std::tuple<std::string, Op, int>, mcmclb::stats::MedianCi> summary;
  for (const auto& [spec, times] : repetitions) summary.emplace(spec, mcmclb::stats::median_ci(times));
  const auto optional_number = [](const std::optional<double>& v) { return v ? csv::number(*v) : std::string(); };
  const std::string timer =
      mpi::kSimulated ? "simulated MPI_Wtime (SimGrid SMPI) max over ranks" : "MPI_Wtime max over ranks";
  std::string content = csv::line(mcmclb::commbench_header());
  for (const auto& row : kept) content += csv::line(row);
  for (const auto& s : samples) {
    const mcmclb::CommbenchBenchmark b = recorded_as(s.spec, o);
    const auto& m = summary.at({s.spec.method, s.spec.op, s.spec.group_size});
    content += csv::line({s.spec.method,
                          std::string(b.op),
                          std::to_string(p.nprocs),
                          std::to_string(b.group_size),
                          std::to_string(s.repetition),
                          std::to_string(s.iterations),
                          csv::number(s.time_us),
                          csv::number(s.min_us),
                          csv::number(s.max_us),
                          timer,
                          p.mpi_library,
                          p.host,
                          p.git_commit,
                          p.utc_start,
                          b.groups,
                          p.backend,
                          p.platform,
                          p.platform_fnv1a64,
                          p.simgrid_cfg,
                          csv::number(s.median_us),
                          p.slurm_job_id,
                          p.slurm_nodelist,
                          std::to_string(m.n),
                          csv::number(m.median),
                          optional_number(m.low),
                          optional_number(m.high),
                          p.simgrid_version});
  }
  return content;
}

/// The live-communicator table (one row per method; its own schema, since it measures a count, not a time).
const csv::Row& live_header() {
  static const csv::Row header = {"method",    "nprocs",       "group_size",    "cap",  "live",
                                  "refused",   "error",        "mpi_library",   "host", "git_commit",
                                  "utc_start", "slurm_job_id", "slurm_nodelist"};
  return header;
}

/// The live-communicator CSV of the counts so far, replaced atomically after each method: a library that crashes
/// after refusing one (Open MPI 4.1.4 after Algorithm 1 is refused at its limit) loses only that method's row.
std::string live_csv(const std::vector<LiveCount>& counts, const Options& o, const Provenance& p) {
  std::string content = csv::line(live_header());
  for (const auto& c : counts) {
    content += csv::line({c.method, std::to_string(p.nprocs), std::to_string(p.nprocs), std::to_string(o.live_cap),
                          std::to_string(c.live), c.refused ? "true" : "false", c.error, p.mpi_library, p.host,
                          p.git_commit, p.utc_start, p.slurm_job_id, p.slurm_nodelist});
  }
  return content;
}

}  // namespace mcmclb::commbench
