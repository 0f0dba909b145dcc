// SPDX-License-Identifier: BSD-3-Clause
// A chain whose state no rank holds whole (mcmclb::walkers::SpreadChains): Metropolis on a ring of Ising spins, one
// chain per temperature, each member of a group holding its own stretch of the ring. Merges, resumes and checkpoints
// move each member's bytes only (piece), so a ring far larger than one rank's memory runs. A chain's answer has the
// same bits on any group: every random number is a hash of (chain, sweep, site), a half-sweep updates one colour of
// sites whose neighbours it does not change, and every sum is of integers.
// Usage: mpiexec -n P spread [--sites N] [--sweeps K] [--throw-at C:I] [--mcmclb-KEY VALUE ...] (--help)
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "mcmclb/walkers.hpp"

namespace {

/// A uniform number in [0, 1) from (chain, sweep, site): a hash, never a rank's own stream.
double uniform(uint64_t chain, uint64_t sweep, uint64_t site) {
  uint64_t x = chain * 0x9e3779b97f4a7c15ULL ^ sweep * 0xbf58476d1ce4e5b9ULL ^ (site + 1) * 0x94d049bb133111ebULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return static_cast<double>((x ^ (x >> 31)) >> 11) * 0x1.0p-53;
}

/// What every member of a chain's group holds alike: sweeps done, and the energy and |magnetisation| summed after
/// each item. The chain's answer is these sums.
struct Sums {
  int64_t sweeps = 0, energy = 0, abs_m = 0;
};

class Ring final : public mcmclb::walkers::SpreadChains {
 public:
  Ring(int64_t sites, int sweeps, int throw_chain, int64_t throw_item)
      : sites_(sites), sweeps_(sweeps), throw_chain_(throw_chain), throw_item_(throw_item) {}
  int count() const override { return 6; }
  int64_t items(int chain) const override { return 4 * (chain + 1); }
  // Member m of n holds sites [N m / n, N (m + 1) / n), one byte each (1: spin up).
  Piece piece(int, int member, int size) const override {
    return {sites_ * member / size, sites_ * (member + 1) / size};
  }
  void start(int chain, mcmclb::GroupComm& group) override {
    Stretch& s = held_[chain];
    const Piece p = piece(chain, group.rank(), group.size());
    s = {p.begin, std::vector<std::byte>(static_cast<std::size_t>(p.end - p.begin)), {}};
    for (std::size_t i = 0; i < s.spins.size(); ++i)
      s.spins[i] = static_cast<std::byte>(uniform(chain, 0, s.first + i) < 0.5);
  }
  void work(int chain, int64_t item, mcmclb::GroupComm& group) override {
    // On member 0, which has written the chain's checkpoint before this item by then (with one due).
    if (chain == throw_chain_ && item == throw_item_ && group.rank() == 0) {
      throw std::runtime_error("failing as --throw-at asked");
    }
    Stretch& s = held_.at(chain);
    const double beta = 1.0 / (0.5 + 0.25 * chain);
    for (int k = 0; k < sweeps_; ++k, ++s.sums.sweeps) {
      for (int colour = 0; colour < 2; ++colour) {
        const auto [left, right] = edges(s, group);  // the spins just outside this stretch, as they stand
        for (std::size_t i = (s.first + colour) % 2; i < s.spins.size(); i += 2) {
          const int sum = spin(i == 0 ? left : s.spins[i - 1]) + spin(i + 1 == s.spins.size() ? right : s.spins[i + 1]);
          const int dE = 2 * spin(s.spins[i]) * sum;
          if (dE <= 0 || uniform(chain, static_cast<uint64_t>(s.sums.sweeps) + 1, s.first + i) < std::exp(-beta * dE)) {
            s.spins[i] ^= std::byte{1};
          }
        }
      }
    }
    const auto [energy, m] = measure(s, group);
    s.sums.energy += energy;
    s.sums.abs_m += std::llabs(m);
  }
  void finish(int chain, mcmclb::GroupComm& group) override {
    const auto [energy, m] = measure(held_.at(chain), group);
    if (group.rank() == 0) answers_[chain] = {held_.at(chain).sums.energy, held_.at(chain).sums.abs_m, energy, m};
    held_.erase(chain);  // a rank holds a chain's stretch only while its group works the chain
  }
  std::vector<std::byte> result(int chain) const override { return mcmclb::walkers::bytes_of(answers_.at(chain)); }
  std::span<const std::byte> save_piece(int chain) const override { return held_.at(chain).spins; }
  std::vector<std::byte> save_shared(int chain) const override {
    return mcmclb::walkers::bytes_of(held_.at(chain).sums);
  }
  void restore_piece(int chain, std::vector<std::byte>& piece, std::span<const std::byte> shared,
                     mcmclb::GroupComm& group) override {
    // Only this member's own sites arrive: taken as they are, with no copy.
    const int64_t first = this->piece(chain, group.rank(), group.size()).begin;
    held_[chain] = {first, std::move(piece), mcmclb::walkers::result_as<Sums>(shared)};
  }

 private:
  struct Stretch {
    int64_t first = 0;  // the ring's site this member's spins start at
    std::vector<std::byte> spins;
    Sums sums;
  };
  static int spin(std::byte b) { return b == std::byte{1} ? 1 : -1; }
  /// The spin left of this stretch and the one right of it: every member's two end spins, gathered.
  static std::array<std::byte, 2> edges(const Stretch& s, mcmclb::GroupComm& group) {
    const std::array<std::byte, 2> mine{s.spins.front(), s.spins.back()};
    const std::vector<std::byte> all = group.allgatherv(std::span(mine));
    const auto n = static_cast<std::size_t>(group.size()), r = static_cast<std::size_t>(group.rank());
    return {all[2 * ((r + n - 1) % n) + 1], all[2 * ((r + 1) % n)]};
  }
  /// The ring's energy (minus the sum of neighbours' products) and magnetisation, summed over the group.
  static std::array<int64_t, 2> measure(const Stretch& s, mcmclb::GroupComm& group) {
    const std::byte right = edges(s, group)[1];
    std::array<int64_t, 2> mine{0, 0};
    for (std::size_t i = 0; i < s.spins.size(); ++i) {
      mine[0] -= spin(s.spins[i]) * spin(i + 1 == s.spins.size() ? right : s.spins[i + 1]);
      mine[1] += spin(s.spins[i]);
    }
    group.allreduce(std::span(mine), mcmclb::ops::sum);
    return mine;
  }
  int64_t sites_;
  int sweeps_, throw_chain_;
  int64_t throw_item_;
  std::map<int, Stretch> held_;                    // this member's stretch of the chains its group works
  std::map<int, std::array<int64_t, 4>> answers_;  // on the member 0 that ended each chain
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  mcmclb::walkers::Report report;
  try {
    mcmclb::walkers::Options options = mcmclb::walkers::options_from_args(argc, argv);
    options.name = "examples/spread";
    options.results = mcmclb::walkers::Results::root;
    int64_t sites = 1 << 16, throw_item = -1;
    int sweeps = 4, throw_chain = -1;
    for (int i = 1; i < argc; i += 2) {
      const std::string flag = argv[i], value = i + 1 < argc ? argv[i + 1] : "";
      if (flag == "--sites" && std::atoll(value.c_str()) >= 2 && std::atoll(value.c_str()) % 2 == 0) {
        sites = std::atoll(value.c_str());
      } else if (flag == "--sweeps" && std::atoi(value.c_str()) >= 1) {
        sweeps = std::atoi(value.c_str());
      } else if (flag == "--throw-at" && value.find(':') != std::string::npos) {
        throw_chain = std::atoi(value.c_str());
        throw_item = std::atoll(value.c_str() + value.find(':') + 1);
      } else {
        throw std::invalid_argument(flag + " " + value + ": not allowed (allowed: --sites N, even, at least 2; " +
                                    "--sweeps K >= 1; --throw-at C:I; --mcmclb-KEY VALUE)");
      }
    }
    int ranks = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    if (sites < 2 * int64_t{ranks}) {  // every member of a group of all ranks holds two sites at least
      throw std::invalid_argument("--sites " + std::to_string(sites) + ": not allowed at " + std::to_string(ranks) +
                                  " ranks (allowed: twice the ranks at least)");
    }
    options.parameters = "sites " + std::to_string(sites) + "; sweeps " + std::to_string(sweeps);
    Ring chains(sites, sweeps, throw_chain, throw_item);
    report = mcmclb::walkers::run(MPI_COMM_WORLD, chains, options);
  } catch (const std::exception& e) {  // bad options: the same line on every rank, before any work
    if (rank == 0) std::fprintf(stderr, "spread: %s\n", e.what());
    MPI_Finalize();
    return 2;
  }
  if (rank == 0) {
    for (std::size_t c = 0; c < report.results.size(); ++c) {
      const auto a = mcmclb::walkers::result_as<std::array<int64_t, 4>>(report.results[c]);
      std::printf("chain %zu: energy summed %lld, |magnetisation| summed %lld, last energy %lld, magnetisation %lld\n",
                  c, static_cast<long long>(a[0]), static_cast<long long>(a[1]), static_cast<long long>(a[2]),
                  static_cast<long long>(a[3]));
    }
  }
  MPI_Finalize();
  if (!report.valid) return 1;
  return report.output_lost() ? mcmclb::kOutputErrorExit : 0;
}
