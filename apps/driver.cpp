// One kernel run end to end (apps/driver.hpp).
#include "driver.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <numeric>

#include "mcmclb/balancer.hpp"
#include "mcmclb/study.hpp"
#include "mcmclb/text.hpp"
#include "mcmclb/workload.hpp"

namespace mcmclb {

namespace {

constexpr int kStatWords = std::tuple_size_v<RankStats::Words>;

std::string make_run_id(const RunSpec& spec, const mpi::Comm& world) {
  std::array<char, 96> id{};
  if (world.rank() == 0) {
    const std::string t = utc_now();
    const uint64_t salt = mix64(static_cast<uint64_t>(MPI_Wtime() * 1e9) ^ static_cast<uint64_t>(::getpid()));
    std::snprintf(id.data(), id.size(), "%s-%s-%06llx", spec.experiment.substr(0, 40).c_str(), t.c_str(),
                  static_cast<unsigned long long>(salt & 0xffffff));
  }
  mpi::check(MPI_Bcast(id.data(), static_cast<int>(id.size()), MPI_CHAR, 0, world.get()), "MPI_Bcast");
  return id.data();
}

/// Rank 0 gets every rank's text, concatenated in rank order.
std::string gather_text(const mpi::Comm& world, const std::string& mine) {
  const int n = world.size();
  const int length = static_cast<int>(mine.size());
  std::vector<int> lengths(static_cast<std::size_t>(n)), offsets(static_cast<std::size_t>(n));
  mpi::check(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, world.get()), "MPI_Gather");
  std::string all;
  if (world.rank() == 0) {
    std::exclusive_scan(lengths.begin(), lengths.end(), offsets.begin(), 0);
    all.resize(static_cast<std::size_t>(offsets.back() + lengths.back()));
  }
  mpi::check(
      MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0, world.get()),
      "MPI_Gatherv");
  return all;
}

/// The run time without balancing (the longest chain on its initial group) and the ideal (all items spread over
/// every rank).
void reference_times(const RunSpec& spec, const std::vector<int64_t>& items, int nprocs, RunResult& r) {
  const int64_t longest = *std::max_element(items.begin(), items.end());
  const int64_t total = std::accumulate(items.begin(), items.end(), int64_t{0});
  r.baseline_s = static_cast<double>(longest) * spec.T_ms / 1000.0 / spec.G;
  r.ideal_s = static_cast<double>(total) * spec.T_ms / 1000.0 / nprocs;
}

/// Collective: the run's invariants, as violations (rank 0 gets them all): every rank finished, every
/// communicator freed, no control message left unreceived, and each item of each chain worked exactly once
/// (counts and index sums over all ranks against the workload).
std::vector<std::string> check_invariants(const Kernel& kernel, const std::vector<int64_t>& items,
                                          const mpi::Comm& world) {
  int pending = 0;
  mpi::check(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, kernel.control().get(), &pending, MPI_STATUS_IGNORE),
             "MPI_Iprobe");
  std::array<int64_t, 3> local_bad = {kernel.finished() ? 0 : 1, kernel.comms_created() - kernel.comms_freed(),
                                      pending ? 1 : 0};
  std::array<int64_t, 3> bad{};
  mpi::check(MPI_Reduce(local_bad.data(), bad.data(), 3, MPI_INT64_T, MPI_SUM, 0, world.get()), "MPI_Reduce");
  const int chains = static_cast<int>(items.size());
  std::vector<int64_t> counted(items.size()), sums(items.size());
  mpi::check(MPI_Reduce(kernel.items_counted().data(), counted.data(), chains, MPI_INT64_T, MPI_SUM, 0, world.get()),
             "MPI_Reduce");
  mpi::check(MPI_Reduce(kernel.index_sums().data(), sums.data(), chains, MPI_INT64_T, MPI_SUM, 0, world.get()),
             "MPI_Reduce");
  std::vector<std::string> violations;
  if (world.rank() != 0) return violations;
  if (bad[0] != 0) violations.push_back(std::to_string(bad[0]) + " rank(s) did not finish");
  if (bad[1] != 0) violations.push_back(std::to_string(bad[1]) + " communicator(s) not freed");
  if (bad[2] != 0) violations.push_back(std::to_string(bad[2]) + " rank(s) with unreceived control messages");
  for (std::size_t c = 0; c < items.size(); ++c) {
    const int64_t n = items[c];
    const int64_t expected_sum = n * (n - 1) / 2;
    if (counted[c] != n || sums[c] != expected_sum) {
      violations.push_back("chain " + std::to_string(c) + ": " + std::to_string(counted[c]) + " of " +
                           std::to_string(n) + " items processed (index sum " + std::to_string(sums[c]) +
                           ", expected " + std::to_string(expected_sum) + ")");
      if (violations.size() > 8) break;
    }
  }
  return violations;
}

/// Collective: every rank's statistics, by rank, on rank 0 (empty elsewhere).
std::vector<RankStats> gather_rank_stats(const Kernel& kernel, const mpi::Comm& world) {
  const RankStats::Words mine = kernel.stats().to_words();
  std::vector<double> all(static_cast<std::size_t>(kStatWords * world.size()));
  mpi::check(MPI_Gather(mine.data(), kStatWords, MPI_DOUBLE, all.data(), kStatWords, MPI_DOUBLE, 0, world.get()),
             "MPI_Gather");
  std::vector<RankStats> ranks;
  if (world.rank() != 0) return ranks;
  for (int i = 0; i < world.size(); ++i) {
    RankStats::Words w{};
    std::copy_n(all.begin() + static_cast<std::ptrdiff_t>(kStatWords * i), kStatWords, w.begin());
    ranks.push_back(RankStats::from_words(w));
  }
  return ranks;
}

/// The run time (MAX over ranks) and the regroup counts' summary, from every rank's statistics.
void summarise(RunResult& r) {
  double sum = 0, sum_sq = 0;
  r.regroups_min = INT64_MAX;
  r.regroups_max = 0;
  for (const RankStats& rs : r.ranks) {
    r.time_s = std::max(r.time_s, rs.elapsed_s);
    sum += static_cast<double>(rs.regroups);
    sum_sq += static_cast<double>(rs.regroups) * static_cast<double>(rs.regroups);
    r.regroups_min = std::min(r.regroups_min, rs.regroups);
    r.regroups_max = std::max(r.regroups_max, rs.regroups);
  }
  const auto n = static_cast<double>(r.ranks.size());
  r.regroups_avg = sum / n;
  r.regroups_std = std::sqrt(std::max(0.0, sum_sq / n - r.regroups_avg * r.regroups_avg));
}

}  // namespace

RunResult run_once(const RunSpec& spec) {
  const mpi::Comm world = mpi::Comm::world();
  const int nprocs = world.size();
  RunResult r;
  r.spec = spec;
  r.provenance = collect_provenance(mpi::library_version(), nprocs);
  r.run_id = make_run_id(spec, world);
  const std::vector<int64_t> items = chain_items(*make_workload(spec.workload), nprocs, spec.G);
  reference_times(spec, items, nprocs, r);

  const BalancerInfo& info = balancer_info(spec.balancer);
  Kernel kernel(spec, items, spec.method.empty() ? std::string(info.initial_method) : spec.method);
  const auto balancer = make_balancer(spec);
  kernel.form_initial_groups(info.regroups);
  kernel.start();
  balancer->run(kernel);
  mpi::barrier_politely(world);  // everyone has finished; what follows is checking, not the run

  const std::vector<std::string> violations = check_invariants(kernel, items, world);
  r.ranks = gather_rank_stats(kernel, world);
  std::string my_events;
  for (const auto& e : kernel.events()) my_events += event_line(r.run_id, e);
  r.event_lines = gather_text(world, my_events);
  if (world.rank() == 0) {
    r.valid = violations.empty();
    r.violations = join(violations, "; ");
    summarise(r);
  }
  // Everyone learns the verdict and the run time (the CLI's exit code and progress line).
  std::array<double, 2> verdict = {r.valid ? 1.0 : 0.0, r.time_s};
  mpi::check(MPI_Bcast(verdict.data(), 2, MPI_DOUBLE, 0, world.get()), "MPI_Bcast");
  r.valid = verdict[0] != 0.0;
  r.time_s = verdict[1];
  return r;
}

std::string run_label(const RunSpec& spec) {
  std::string label = spec.balancer;
  if (spec.interval > 0) label.append("(").append(std::to_string(spec.interval)).append(")");
  if (!spec.method.empty()) label.append(" ").append(spec.method);
  return label;
}

void record_result(results::ResultStore& store, const RunResult& r) { record_run(store, r, r.ranks, r.event_lines); }

}  // namespace mcmclb
