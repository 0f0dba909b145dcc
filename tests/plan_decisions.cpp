// SPDX-License-Identifier: BSD-3-Clause
// What the planners decide from measured costs over repeated identical runs: one chain per rank, chain c of
// ITEMS[c] items (a comma-separated list, one per rank), each item spinning SERIAL_MS on every member and SPLIT_MS
// split over the group's members, then a sum over the group (Amdahl's p = SPLIT / (SERIAL + SPLIT)). Runs RUNS times
// under BALANCER with the finished rule pays and prints per run the measured parallel fraction and, per chain, how many
// items each group size worked: which merges were taken and where. Not a timing benchmark.
// A group decides from the items its own members worked, so a decision weighs a fitted fraction only where the
// deciding group has worked a chain at two sizes: at 3 ranks, 6,40,20 under mostwork (the first group joins the
// second, and the third, done, asks that merged group); at 4 ranks, 6,40,6,40 under lookahead.
//   mpiexec -n 3 build-test/tests/plan_decisions [BALANCER] [RUNS] [SERIAL_MS] [SPLIT_MS] [ITEMS]
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <span>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "mcmclb/walkers.hpp"

namespace {

void spin_ms(double ms) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double, std::milli>(ms);
  while (std::chrono::steady_clock::now() < end) {
  }
}

class Spinning final : public mcmclb::walkers::Chains {
 public:
  Spinning(std::vector<int64_t> items, double serial_ms, double split_ms, int max_size)
      : items_(std::move(items)),
        serial_ms_(serial_ms),
        split_ms_(split_ms),
        max_size_(max_size),
        at_size_(items_.size() * static_cast<std::size_t>(max_size + 1), 0) {}
  [[nodiscard]] int count() const override { return static_cast<int>(items_.size()); }
  [[nodiscard]] int64_t items(int chain) const override { return items_.at(static_cast<std::size_t>(chain)); }
  void start(int /*chain*/, mcmclb::GroupComm& /*group*/) override {}
  void work(int chain, int64_t /*item*/, mcmclb::GroupComm& group) override {
    spin_ms(serial_ms_ + split_ms_ / group.size());
    (void)group.allreduce(1, mcmclb::ops::sum);
    if (group.rank() == 0) ++at_size_[static_cast<std::size_t>(chain * (max_size_ + 1) + group.size())];
  }
  [[nodiscard]] std::vector<std::byte> save(int /*chain*/) const override { return {std::byte{0}}; }
  void restore(int /*chain*/, std::span<const std::byte> /*state*/) override {}
  std::vector<long long>& at_size() { return at_size_; }

 private:
  std::vector<int64_t> items_;
  double serial_ms_, split_ms_;
  int max_size_;
  std::vector<long long> at_size_;  // chain * (max_size + 1) + size -> items worked there
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const std::string balancer = argc > 1 ? argv[1] : "mostwork";
  const int runs = argc > 2 ? std::atoi(argv[2]) : 10;
  const double serial_ms = argc > 3 ? std::atof(argv[3]) : 2.0;
  const double split_ms = argc > 4 ? std::atof(argv[4]) : 4.0;
  std::vector<int64_t> items;
  for (std::stringstream list(argc > 5 ? argv[5] : "6,40,20"); list.good();) {
    std::string one;
    std::getline(list, one, ',');
    items.push_back(std::atoll(one.c_str()));
  }
  if (static_cast<int>(items.size()) != ranks) {
    if (rank == 0) std::fprintf(stderr, "plan_decisions: ITEMS lists %zu chains for %d ranks\n", items.size(), ranks);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  if (rank == 0) std::printf("run,balancer,ranks,parallel_fraction,items_per_chain_at_sizes\n");
  for (int run = 0; run < runs; ++run) {
    Spinning chains(items, serial_ms, split_ms, ranks);
    mcmclb::walkers::Options options;
    options.balancer = balancer;
    options.finished = "pays";
    options.placement = mcmclb::walkers::Placement::as_numbered;
    const mcmclb::walkers::Report report = mcmclb::walkers::run(MPI_COMM_WORLD, chains, options);
    std::vector<long long> total(chains.at_size().size(), 0);
    MPI_Reduce(chains.at_size().data(), total.data(), static_cast<int>(total.size()), MPI_LONG_LONG, MPI_SUM, 0,
               MPI_COMM_WORLD);
    if (rank != 0) continue;
    std::string sizes;
    for (int c = 0; c < ranks; ++c) {
      sizes += c > 0 ? " | " : "";
      sizes += std::to_string(c) + ":";
      for (int m = 1; m <= ranks; ++m) {
        const long long n = total[static_cast<std::size_t>(c * (ranks + 1) + m)];
        if (n > 0) sizes += " " + std::to_string(n) + "@" + std::to_string(m);
      }
    }
    std::printf("%d,%s,%d,%.2f,%s\n", run, balancer.c_str(), ranks, report.parallel_fraction, sizes.c_str());
    std::fflush(stdout);
  }
  MPI_Finalize();
  return 0;
}
