// SPDX-License-Identifier: BSD-3-Clause
// The shortest mcmclb application: Metropolis walkers on a 64-dimensional Gaussian whose dimensions a group of ranks
// shares. Each member adds the energy change of its dimensions to an ExactSum and the group reduces those, so the
// change, and every chain's answer, has the same bits on any group and under any balancer (a member's share summed
// in a double would round differently as the dimensions split over 2 or 3 ranks).
// Usage: mpiexec -n P minimal [--mcmclb-balancer B] [--mcmclb-record F] [--mcmclb-checkpoint DIR] ... (--help)
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "mcmclb/walkers.hpp"

namespace {

constexpr int kDims = 64;

/// A uniform number in [0, 1) from (chain, item, slot): a hash, never a rank's own stream.
double uniform(uint64_t chain, uint64_t item, uint64_t slot) {
  uint64_t x = chain * 0x9e3779b97f4a7c15ULL ^ item * 0xbf58476d1ce4e5b9ULL ^ (slot + 1) * 0x94d049bb133111ebULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return static_cast<double>((x ^ (x >> 31)) >> 11) * 0x1.0p-53;
}

struct Walker {
  double x[kDims];
  double energy;   // |x|^2 / 2, kept by adding each accepted move's change
  double mean_x0;  // the sample means of x[0] and of the energy so far
  double mean_energy;
};

class Gaussian final : public mcmclb::walkers::Chains {
 public:
  int count() const override { return 8; }
  int64_t items(int chain) const override { return 50 * (chain + 1); }  // chains of different lengths
  void start(int chain, mcmclb::GroupComm&) override { walkers_[chain] = Walker{}; }
  void work(int chain, int64_t item, mcmclb::GroupComm& group) override {
    Walker& w = walkers_.at(chain);
    // Each member proposes the moves of its own dimensions and adds their energy change, each term exactly.
    mcmclb::ExactSum part;
    std::vector<double> proposed(kDims);
    for (int d = 0; d < kDims; ++d) {
      proposed[d] = w.x[d] + (uniform(chain, item, d) - 0.5);
      if (d % group.size() == group.rank()) part += 0.5 * (proposed[d] * proposed[d] - w.x[d] * w.x[d]);
    }
    const double delta = group.allreduce(part, mcmclb::ops::exact_sum).value();  // the same bits at any group size
    if (std::log(uniform(chain, item, kDims)) < -delta) {
      std::copy(proposed.begin(), proposed.end(), w.x);
      w.energy += delta;
    }
    const double n = static_cast<double>(item + 1);
    w.mean_x0 += (w.x[0] - w.mean_x0) / n;
    w.mean_energy += (w.energy - w.mean_energy) / n;
  }
  std::vector<std::byte> result(int chain) const override {
    const Walker& w = walkers_.at(chain);
    return mcmclb::walkers::bytes_of(std::array{w.mean_x0, w.mean_energy});
  }
  std::vector<std::byte> save(int chain) const override { return mcmclb::walkers::bytes_of(walkers_.at(chain)); }
  void restore(int chain, std::span<const std::byte> state) override {
    walkers_[chain] = mcmclb::walkers::result_as<Walker>(state);
  }

 private:
  std::map<int, Walker> walkers_;  // the chains this rank works or has worked
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc == 2 && std::string(argv[1]) == "--help") {
    if (rank == 0) std::printf("usage: minimal [--mcmclb-KEY VALUE ...]\n%s", mcmclb::walkers::options_help().c_str());
    MPI_Finalize();
    return 0;
  }
  Gaussian chains;
  mcmclb::walkers::Report report;
  try {
    // The balancer, its rule, a trace, checkpoints: chosen per job on the command line (--mcmclb-balancer mostwork)
    // or in the environment (MCMCLB_BALANCER=mostwork), with a study file's one-line errors.
    mcmclb::walkers::Options options = mcmclb::walkers::options_from_args(argc, argv);
    options.results = mcmclb::walkers::Results::root;  // every chain's result() on rank 0, in chain order
    if (argc > 1) throw std::invalid_argument(std::string(argv[1]) + ": unknown (allowed: --mcmclb-KEY VALUE; --help)");
    report = mcmclb::walkers::run(MPI_COMM_WORLD, chains, options);
  } catch (const std::exception& e) {  // bad options: the same line on every rank, before any work
    if (rank == 0) std::fprintf(stderr, "minimal: %s\n", e.what());
    MPI_Finalize();
    return 2;
  }
  if (rank == 0) {
    std::printf("%s: %.3f s, %s\n", report.balancer.c_str(), report.time_s, report.valid ? "valid" : "INVALID");
    for (std::size_t c = 0; c < report.results.size(); ++c) {
      const auto means = mcmclb::walkers::result_as<std::array<double, 2>>(report.results[c]);
      std::printf("chain %zu: mean of x0 %.17g, mean energy %.17g\n", c, means[0], means[1]);
    }
  }
  MPI_Finalize();
  // The results above are whole, but a trace or a checkpoint that a full disk kept from being written ends the job
  // non-zero on every rank, so that a job script notices (the library's line on rank 0 says what is missing).
  if (!report.valid) return 1;
  return report.output_lost() ? mcmclb::kOutputErrorExit : 0;
}
