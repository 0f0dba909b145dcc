// SPDX-License-Identifier: BSD-3-Clause
// Whether the merging balancers gain whatever order an application numbers its chains in
// (docs/notes/chain-order): 8 chains of 40, 35, ..., 5 items, numbered longest first or shortest first, placed as
// numbered or from their item bounds (walkers::Placement), run under none, collective, async and lookahead.
// An item is item_ms of spinning split over the group's members, then an exact sum of a double over the group.
// Each round runs every case once in a fresh random order (drawn on rank 0, the same on every rank) and prints one
// CSV row per run with the run's provenance.
//   mpiexec -n 2 build/tests/bench_chain_order [ROUNDS] [ITEM_MS]
// Without MPI, `bench_chain_order place GROUPS` reads item bounds (one per line) and prints where
// walkers::place_chains puts each chain, as `group,slot,chain` lines: how the simulated comparison replays the
// library's placement.
#include <mpi.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "mcmclb/exact_sum.hpp"
#include "mcmclb/mpi.hpp"
#include "mcmclb/provenance.hpp"
#include "mcmclb/walkers.hpp"

namespace {

constexpr int kChains = 8;
constexpr std::array<const char*, 4> kBalancers = {"none", "collective", "async", "lookahead"};
/// (numbering, placement) of each case, in the table's order.
constexpr std::array<const char*, 3> kCases = {"shortest-first as numbered", "longest-first as numbered",
                                               "longest-first placed by items"};

class SpinChains final : public mcmclb::walkers::Chains {
 public:
  SpinChains(bool longest_first, double item_s) : longest_first_(longest_first), item_s_(item_s) {}
  [[nodiscard]] int count() const override { return kChains; }
  [[nodiscard]] int64_t items(int chain) const override { return 5 * (longest_first_ ? kChains - chain : chain + 1); }
  void start(int chain, mcmclb::GroupComm&) override { value_[chain] = 0; }
  void work(int chain, int64_t item, mcmclb::GroupComm& group) override {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(item_s_ / group.size());
    while (std::chrono::steady_clock::now() < until) {
    }
    const double mine = 1.0 / static_cast<double>(1 + item + group.rank());
    value_[chain] += group.allreduce(mine, mcmclb::ops::exact_sum);
  }
  [[nodiscard]] std::vector<std::byte> save(int chain) const override {
    return mcmclb::walkers::bytes_of(value_.at(chain));
  }
  void restore(int chain, std::span<const std::byte> state) override {
    value_[chain] = mcmclb::walkers::result_as<double>(state);
  }

 private:
  bool longest_first_;
  double item_s_;
  std::map<int, double> value_;
};

int body(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 8;
  const double item_s = (argc > 2 ? std::atof(argv[2]) : 10.0) / 1000.0;
  const mcmclb::mpi::Comm world = mcmclb::mpi::Comm::world();
  const mcmclb::Provenance p = mcmclb::collect_provenance(mcmclb::mpi::library_version(), world.size());
  if (world.rank() == 0) {
    std::printf("round,balancer,case,seconds,valid,ranks,item_ms,commit,mpi_library,host,cores,utc_start\n");
  }
  std::mt19937 rng(std::random_device{}());
  constexpr int kRuns = static_cast<int>(kBalancers.size() * kCases.size());
  for (int round = 1; round <= rounds; ++round) {
    std::array<int, kRuns> order{};
    for (int i = 0; i < kRuns; ++i) order[static_cast<std::size_t>(i)] = i;
    std::shuffle(order.begin(), order.end(), rng);
    MPI_Bcast(order.data(), kRuns, MPI_INT, 0, MPI_COMM_WORLD);
    for (const int run : order) {
      const auto balancer = static_cast<std::size_t>(run) / kCases.size();
      const auto which = static_cast<std::size_t>(run) % kCases.size();
      SpinChains chains(/*longest_first=*/which != 0, item_s);
      mcmclb::walkers::Options o;
      o.balancer = kBalancers[balancer];
      o.item_s = item_s;
      o.placement = which == 2 ? mcmclb::walkers::Placement::by_items : mcmclb::walkers::Placement::as_numbered;
      const mcmclb::walkers::Report r = mcmclb::walkers::run(MPI_COMM_WORLD, chains, o);
      if (world.rank() == 0) {
        std::printf("%d,%s,%s,%.6f,%d,%d,%g,%s,%s,%s,%d,%s\n", round, kBalancers[balancer], kCases[which], r.time_s,
                    r.valid ? 1 : 0, world.size(), 1000.0 * item_s, p.git_commit.c_str(), p.mpi_library.c_str(),
                    p.host.c_str(), p.cores_available, p.utc_start.c_str());
        std::fflush(stdout);
      }
    }
  }
  return 0;
}

/// `place GROUPS`: bounds from standard input, the placement on standard output.
int place(int groups) {
  std::vector<int64_t> bounds;
  long long n = 0;
  while (std::scanf("%lld", &n) == 1) bounds.push_back(n);
  const auto layout = mcmclb::walkers::place_chains(bounds, groups, mcmclb::walkers::Placement::by_items);
  for (std::size_t g = 0; g < layout.size(); ++g) {
    for (std::size_t j = 0; j < layout[g].size(); ++j) std::printf("%zu,%zu,%d\n", g, j, layout[g][j]);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "place") return place(std::atoi(argv[2]));
  return mcmclb::mpi::run_main(argc, argv, body);
}
