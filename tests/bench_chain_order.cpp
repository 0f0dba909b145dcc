// SPDX-License-Identifier: BSD-3-Clause
// Whether the merging balancers gain whatever order an application numbers its chains in
// (docs/notes/chain-order): 8 chains of 40, 35, ..., 5 items, numbered longest first or shortest first, placed as
// numbered or from their item bounds (walkers::Placement), run under none, collective, async and lookahead.
// An item is item_ms of spinning split over the group's members, then an exact sum of a double over the group.
// Each round runs every case once in a fresh random order (drawn on rank 0, the same on every rank) and prints one
// CSV row per run with the run's provenance.
//   mpiexec -n 2 build/tests/bench_chain_order [ROUNDS] [ITEM_MS]
// Without MPI, `bench_chain_order traces P DIR` writes the simulated comparison's trace files (traces()).
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
#include <utility>
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
  const mcmclb::mpi::NodeOccupancy occupancy = mcmclb::mpi::node_occupancy(world);
  // What Options::wait `auto` resolves to on this machine, as run() resolves it.
  const std::string wait(mcmclb::to_string(mcmclb::mpi::machine_wait_policy(occupancy)));
  if (world.rank() == 0) {
    std::printf("round,balancer,case,seconds,valid,ranks,item_ms,commit,mpi_library,wait,host,cores,utc_start\n");
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
        std::printf("%d,%s,%s,%.6f,%d,%d,%g,%s,%s,%s,%s,%d,%s\n", round, kBalancers[balancer], kCases[which], r.time_s,
                    r.valid ? 1 : 0, world.size(), 1000.0 * item_s, p.git_commit.c_str(), p.mpi_library.c_str(),
                    wait.c_str(), p.host.c_str(), occupancy.cores_available, p.utc_start.c_str());
        std::fflush(stdout);
      }
    }
  }
  return 0;
}

/// Writes one trace: chain k replays the chain order[k] of the given bounds, each item item_s at one rank.
int write_trace(const std::string& path, const std::string& what, const std::vector<int64_t>& bounds,
                const std::vector<int>& order, const char* item_s) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    std::fprintf(stderr, "bench_chain_order: cannot write %s\n", path.c_str());
    return 2;
  }
  std::fprintf(f, "# %s (docs/notes/chain-order/README.md)\n", what.c_str());
  std::fprintf(f, "chain,item,ranks,seconds,speedup\n");
  for (std::size_t c = 0; c < order.size(); ++c) {
    for (int64_t i = 0; i < bounds[static_cast<std::size_t>(order[c])]; ++i) {
      std::fprintf(f, "%zu,%lld,1,%s,\n", c, static_cast<long long>(i), item_s);
    }
  }
  return std::fclose(f) == 0 ? 0 : 2;
}

/// `traces P DIR`: the simulated comparison's trace files for P ranks in DIR, 4 chains per rank (n = 4P), in three
/// orders each: longest first as numbered, shortest first (the same chains reversed), and placed (the order
/// place_chains lays the longest-first chains out over P groups in: the kernel's replay lays chains out as
/// numbered, so the trace carries the library's placement). Two shapes:
///  - gradient: chain c has 1 + (n - 1 - c) * 8 / n items of 50 ms, one slope over every rank;
///  - repeated: the measured case's 8 chains (40, 35, ..., 5 items of 10 ms) over every 2 ranks.
int traces(int p, const std::string& dir) {
  const int n = 4 * p;
  std::vector<int> longest(static_cast<std::size_t>(n));
  for (int c = 0; c < n; ++c) longest[static_cast<std::size_t>(c)] = c;
  std::vector<int> shortest(longest.rbegin(), longest.rend());
  struct Shape {
    const char* name;
    const char* item_s;
    std::vector<int64_t> bounds;
    std::string what;
  };
  std::vector<Shape> shapes(2);
  shapes[0] = {"", "0.05", {}, std::to_string(n) + " chains of 8 to 1 items of 50 ms at 1 rank: "};
  shapes[1] = {"repeated-", "0.01", {}, std::to_string(n) + " chains of 40 to 5 items of 10 ms at 1 rank, by 8: "};
  for (int c = 0; c < n; ++c) {
    shapes[0].bounds.push_back(1 + int64_t{n - 1 - c} * 8 / n);
    shapes[1].bounds.push_back(5 * (kChains - c % kChains));
  }
  for (const Shape& shape : shapes) {
    std::vector<int> placed;
    for (const auto& group : mcmclb::walkers::place_chains(shape.bounds, p, mcmclb::walkers::Placement::by_items)) {
      placed.insert(placed.end(), group.begin(), group.end());
    }
    for (const auto& [order_name, order] :
         {std::pair{"longest-first", &longest}, std::pair{"shortest-first", &shortest}, std::pair{"placed", &placed}}) {
      const std::string path = dir + "/" + shape.name + order_name + "-" + std::to_string(p) + ".csv";
      if (write_trace(path, shape.what + order_name, shape.bounds, *order, shape.item_s) != 0) return 2;
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "traces") return traces(std::atoi(argv[2]), argv[3]);
  return mcmclb::mpi::run_main(argc, argv, body);
}
