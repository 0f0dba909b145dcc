// SPDX-License-Identifier: BSD-3-Clause
// What checkpoints cost a run of an application's chains (docs/notes/checkpoint-cost): 8 chains of 40, 35, ..., 5
// items, each chain's state STATE_KB kilobytes of doubles (every checkpoint writes and fsyncs them), an item
// item_ms of spinning split over the group's members and an exact sum over it; under mostwork, recording a trace.
// Modes: no checkpoint; a checkpoint after every item; every second; every 60 s (Options' default: at this run's
// length, none but each chain's last). Each round runs every mode once in a fresh random order (drawn on rank 0, the
// same on every rank) and prints one CSV row per run with the run's provenance. Checkpoints go to a new folder under
// DIR each run.
//   mpiexec -n 2 build/tests/bench_checkpoint [ROUNDS] [ITEM_MS] [STATE_KB] [DIR]
#include <mpi.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
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
struct Mode {
  const char* name;
  double every_s;       // Options::checkpoint_every_s
  int64_t every_items;  // Options::checkpoint_every_items
  bool keep;
};
constexpr std::array<Mode, 4> kModes = {Mode{"none", 0, 0, false}, Mode{"every-item", 0, 1, true},
                                        Mode{"every-1s", 1, 0, true}, Mode{"every-60s", 60, 0, true}};

class SpinChains final : public mcmclb::walkers::Chains {
 public:
  SpinChains(double item_s, std::size_t state_doubles) : item_s_(item_s), doubles_(state_doubles) {}
  [[nodiscard]] int count() const override { return kChains; }
  [[nodiscard]] int64_t items(int chain) const override { return 5 * (kChains - chain); }
  void start(int chain, mcmclb::GroupComm&) override { state_[chain].assign(doubles_, 0.0); }
  void work(int chain, int64_t item, mcmclb::GroupComm& group) override {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(item_s_ / group.size());
    while (std::chrono::steady_clock::now() < until) {
    }
    mcmclb::ExactSum mine;
    mine.add(1.0 / static_cast<double>(1 + item + group.rank()));
    std::vector<double>& s = state_.at(chain);
    s[static_cast<std::size_t>(item) % s.size()] += group.allreduce(mine, mcmclb::ops::exact_sum).value();
  }
  [[nodiscard]] std::vector<std::byte> save(int chain) const override {
    const std::vector<double>& s = state_.at(chain);
    const auto bytes = std::as_bytes(std::span(s));
    return {bytes.begin(), bytes.end()};
  }
  void restore(int chain, std::span<const std::byte> state) override {
    std::vector<double>& s = state_[chain];
    s.resize(state.size() / sizeof(double));
    std::memcpy(s.data(), state.data(), s.size() * sizeof(double));
  }

 private:
  double item_s_;
  std::size_t doubles_;
  std::map<int, std::vector<double>> state_;
};

int body(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 10;
  const double item_s = (argc > 2 ? std::atof(argv[2]) : 10.0) / 1000.0;
  const int state_kb = argc > 3 ? std::atoi(argv[3]) : 32;
  const std::string dir = argc > 4 ? argv[4] : "bench-checkpoint";
  const mcmclb::mpi::Comm world = mcmclb::mpi::Comm::world();
  const mcmclb::Provenance p = mcmclb::collect_provenance(mcmclb::mpi::library_version(), world.size());
  const mcmclb::mpi::NodeOccupancy occupancy = mcmclb::mpi::node_occupancy(world);
  const std::string wait(mcmclb::to_string(mcmclb::mpi::machine_wait_policy(occupancy)));
  if (world.rank() == 0) {
    std::printf(
        "round,mode,seconds,valid,checkpoints,checkpoint_s,ranks,item_ms,state_kb,commit,mpi_library,wait,"
        "host,cores,utc_start\n");
  }
  std::mt19937 rng(std::random_device{}());
  constexpr int kRuns = static_cast<int>(kModes.size());
  for (int round = 1; round <= rounds; ++round) {
    std::array<int, kRuns> order{};
    for (int i = 0; i < kRuns; ++i) order[static_cast<std::size_t>(i)] = i;
    std::shuffle(order.begin(), order.end(), rng);
    MPI_Bcast(order.data(), kRuns, MPI_INT, 0, MPI_COMM_WORLD);
    for (const int run : order) {
      const Mode& mode = kModes[static_cast<std::size_t>(run)];
      SpinChains chains(item_s, static_cast<std::size_t>(state_kb) * 1024 / sizeof(double));
      mcmclb::walkers::Options o;
      o.balancer = "mostwork";
      o.item_s = item_s;
      o.record = dir + "/trace.csv";
      if (mode.keep) {
        o.checkpoint = dir + "/ck-" + std::to_string(round) + "-" + mode.name;
        o.checkpoint_every_s = mode.every_s;
        o.checkpoint_every_items = mode.every_items;
      }
      if (world.rank() == 0) std::filesystem::create_directories(dir);
      MPI_Barrier(MPI_COMM_WORLD);
      const mcmclb::walkers::Report r = mcmclb::walkers::run(MPI_COMM_WORLD, chains, o);
      // Every rank's checkpoints and the seconds they took, summed.
      std::array<double, 2> spent{static_cast<double>(r.rank.checkpoints), r.rank.checkpoint_s};
      MPI_Allreduce(MPI_IN_PLACE, spent.data(), 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      if (world.rank() == 0) {
        if (mode.keep) std::filesystem::remove_all(o.checkpoint);
        std::printf("%d,%s,%.6f,%d,%.0f,%.6f,%d,%g,%d,%s,%s,%s,%s,%d,%s\n", round, mode.name, r.time_s, r.valid ? 1 : 0,
                    spent[0], spent[1], world.size(), 1000.0 * item_s, state_kb, p.git_commit.c_str(),
                    p.mpi_library.c_str(), wait.c_str(), p.host.c_str(), occupancy.cores_available,
                    p.utc_start.c_str());
        std::fflush(stdout);
      }
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return mcmclb::mpi::run_main(argc, argv, body); }
