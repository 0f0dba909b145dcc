// SPDX-License-Identifier: BSD-3-Clause
// What a checkpoint costs each member of a group, by the state's size, for the two forms of a chain's state
// (docs/data/checkpoint-forms): whole (Chains: every member holds the state, member 0 saves and writes all of it)
// and spread (SpreadChains: each member holds and writes its own piece). One chain of ITEMS items, worked by one
// group of every rank under `none` (no merge), a checkpoint before every item, so ITEMS - 1 checkpoints of the state
// and one of the chain's end (its result, 8 bytes in both forms). An item costs nothing but a byte flipped on each
// member: the run's time is its checkpoints'. Each round runs every (form, size) once in a fresh random order (drawn
// on rank 0, the same on every rank) and prints one CSV row per rank and run with the run's provenance: the rank's
// checkpoints, their seconds (state, write and fsync), and its peak resident memory in that run (VmHWM, reset
// before it through /proc/self/clear_refs). Checkpoints go to a new folder under DIR each run, removed after it.
//   mpiexec -n 2 build/tests/bench_checkpoint_forms [ROUNDS] [SIZES_MB] [ITEMS] [DIR]
//   (defaults: 6 rounds, 1,16,128,1024 MB a state, 9 items, bench-checkpoint-forms)
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "mcmclb/mpi.hpp"
#include "mcmclb/provenance.hpp"
#include "mcmclb/walkers.hpp"

namespace {

namespace walkers = mcmclb::walkers;

/// An item's work on any state: one byte flipped, so that every checkpoint holds a new state.
void flip(std::span<std::byte> bytes, int64_t item) {
  if (!bytes.empty()) bytes[static_cast<std::size_t>(item) % bytes.size()] ^= std::byte{1};
}

/// The whole form: every member holds all `bytes`; member 0's save() copies them for the checkpoint.
class Whole final : public walkers::Chains {
 public:
  Whole(int64_t bytes, int64_t items) : bytes_(bytes), items_(items) {}
  int count() const override { return 1; }
  int64_t items(int) const override { return items_; }
  void start(int, mcmclb::GroupComm&) override { state_.assign(static_cast<std::size_t>(bytes_), std::byte{0}); }
  void work(int, int64_t item, mcmclb::GroupComm&) override { flip(state_, item); }
  std::vector<std::byte> result(int) const override { return walkers::bytes_of(int64_t{bytes_}); }
  std::vector<std::byte> save(int) const override { return state_; }
  void restore(int, std::span<const std::byte> state) override { state_.assign(state.begin(), state.end()); }

 private:
  int64_t bytes_, items_;
  std::vector<std::byte> state_;
};

/// The spread form: member m of n holds bytes [S m / n, S (m + 1) / n) and writes them itself.
class Spread final : public walkers::SpreadChains {
 public:
  Spread(int64_t bytes, int64_t items) : bytes_(bytes), items_(items) {}
  int count() const override { return 1; }
  int64_t items(int) const override { return items_; }
  Piece piece(int, int member, int size) const override {
    return {bytes_ * member / size, bytes_ * (member + 1) / size};
  }
  void start(int chain, mcmclb::GroupComm& group) override {
    const Piece p = piece(chain, group.rank(), group.size());
    held_.assign(static_cast<std::size_t>(p.end - p.begin), std::byte{0});
  }
  void work(int, int64_t item, mcmclb::GroupComm&) override { flip(held_, item); }
  std::vector<std::byte> result(int) const override { return walkers::bytes_of(int64_t{bytes_}); }
  std::span<const std::byte> save_piece(int) const override { return held_; }
  void restore_piece(int, std::vector<std::byte>& piece, std::span<const std::byte>, mcmclb::GroupComm&) override {
    held_ = std::move(piece);
  }

 private:
  int64_t bytes_, items_;
  std::vector<std::byte> held_;
};

/// This process's peak resident memory since the last reset_peak(), in MiB (VmHWM of /proc/self/status).
double peak_mib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::strtod(line.c_str() + 6, nullptr) / 1024.0;  // kB
  }
  return -1;
}
void reset_peak() { std::ofstream("/proc/self/clear_refs") << "5"; }

std::vector<int64_t> sizes_mb(const std::string& list) {
  std::vector<int64_t> sizes;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');) sizes.push_back(std::atoll(item.c_str()));
  return sizes;
}

int body(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 6;
  const std::vector<int64_t> sizes = sizes_mb(argc > 2 ? argv[2] : "1,16,128,1024");
  const int64_t items = argc > 3 ? std::atoll(argv[3]) : 9;
  const std::string dir = argc > 4 ? argv[4] : "bench-checkpoint-forms";
  const mcmclb::mpi::Comm world = mcmclb::mpi::Comm::world();
  if (rounds < 1 || items < 2 || sizes.empty() ||
      std::any_of(sizes.begin(), sizes.end(), [](int64_t mb) { return mb < 1; })) {
    if (world.rank() == 0) {
      std::fprintf(stderr, "bench_checkpoint_forms: ROUNDS >= 1, SIZES_MB a list of sizes >= 1, ITEMS >= 2\n");
    }
    return 2;
  }
  const mcmclb::Provenance p = mcmclb::collect_provenance(mcmclb::mpi::library_version(), world.size());
  const mcmclb::mpi::NodeOccupancy occupancy = mcmclb::mpi::node_occupancy(world);
  if (world.rank() == 0) {
    std::printf(
        "round,form,state_mb,rank,checkpoints,checkpoint_s,peak_mib,run_s,valid,items,ranks,commit,"
        "mpi_library,host,cores,utc_start\n");
  }
  std::mt19937 rng(std::random_device{}());
  const int runs = 2 * static_cast<int>(sizes.size());
  for (int round = 1; round <= rounds; ++round) {
    std::vector<int> order(static_cast<std::size_t>(runs));
    for (int i = 0; i < runs; ++i) order[static_cast<std::size_t>(i)] = i;
    std::shuffle(order.begin(), order.end(), rng);
    MPI_Bcast(order.data(), runs, MPI_INT, 0, MPI_COMM_WORLD);
    for (const int run : order) {
      const bool spread = run % 2 == 1;
      const int64_t mb = sizes[static_cast<std::size_t>(run / 2)];
      walkers::Options o;
      o.balancer = "none";
      o.groups = 1;
      o.item_s = 1e-3;
      o.checkpoint = dir + "/ck-" + std::to_string(round) + "-" + std::to_string(run);
      o.checkpoint_every_items = 1;
      if (world.rank() == 0) std::filesystem::create_directories(dir);
      MPI_Barrier(MPI_COMM_WORLD);
      reset_peak();
      walkers::Report r;
      if (spread) {
        Spread chains(mb << 20, items);
        r = walkers::run(MPI_COMM_WORLD, chains, o);
      } else {
        Whole chains(mb << 20, items);
        r = walkers::run(MPI_COMM_WORLD, chains, o);
      }
      // Each rank's checkpoints, their seconds and its peak memory, gathered on rank 0.
      const std::array<double, 3> mine{static_cast<double>(r.rank.checkpoints), r.rank.checkpoint_s, peak_mib()};
      std::vector<double> all(3 * static_cast<std::size_t>(world.size()));
      MPI_Gather(mine.data(), 3, MPI_DOUBLE, all.data(), 3, MPI_DOUBLE, 0, MPI_COMM_WORLD);
      if (world.rank() == 0) {
        std::filesystem::remove_all(o.checkpoint);
        for (int rank = 0; rank < world.size(); ++rank) {
          const double* x = &all[3 * static_cast<std::size_t>(rank)];
          std::printf("%d,%s,%lld,%d,%.0f,%.6f,%.1f,%.6f,%d,%lld,%d,%s,%s,%s,%d,%s\n", round,
                      spread ? "spread" : "whole", static_cast<long long>(mb), rank, x[0], x[1], x[2], r.time_s,
                      r.valid ? 1 : 0, static_cast<long long>(items), world.size(), p.git_commit.c_str(),
                      p.mpi_library.c_str(), p.host.c_str(), occupancy.cores_available, p.utc_start.c_str());
        }
        std::fflush(stdout);
      }
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return mcmclb::mpi::run_main(argc, argv, body); }
