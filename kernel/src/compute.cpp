// SPDX-License-Identifier: BSD-3-Clause
// Compute mode's chains (mcmclb/kernel.hpp, work.mode compute): each chain is a Lennard-Jones walker (mcmclb/lj.hpp)
// whose trials the group works together, one exact reduction per evaluated trial. They are a ChainWork, worked by
// the same steps as an application's chains (kernel/src/chain_work.cpp); they add what compute mode reports (each
// chain's final walker, the walker after every item with work.trace) and the messages its recorded simulations
// were made with (a fixed state size, a stolen chain's initial state sent along, finished states broadcast).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "mcmclb/kernel.hpp"

namespace mcmclb {

lj::Spec Kernel::lj_spec(const RunSpec& run, int chain) {
  const ComputeSpec& c = run.work.compute;
  lj::Spec spec;
  spec.atoms = c.atoms_of(chain);
  spec.temperature = c.temperature;
  spec.move = c.move;
  spec.max_step = c.max_step;
  return spec;
}

lj::ChainKey Kernel::lj_key(const RunSpec& run, int chain) { return {run.work.seed, static_cast<uint64_t>(chain)}; }

namespace {

/// The Lennard-Jones walkers of a compute-mode run. One rank holds one walker at a time: that of the chain its group
/// works, or last worked.
class LennardJonesChains final : public ChainWork {
 public:
  LennardJonesChains(const RunSpec& run, std::function<int64_t(int)> items, std::vector<ChainTally>& tallies,
                     std::vector<TracePoint>& trace)
      : run_(run), items_(std::move(items)), tallies_(tallies), trace_(trace) {}

  [[nodiscard]] int64_t items(int chain) const override { return items_(chain); }

  // Deterministic from (seed, chain): every member computes it, nothing is sent.
  void start(int chain, GroupComm& /*group*/) override {
    walker_ = initial(chain);
    chain_ = chain;
  }

  void work(int chain, int64_t item, GroupComm& group) override {
    const lj::Spec spec = Kernel::lj_spec(run_, chain);
    const lj::ChainKey key = Kernel::lj_key(run_, chain);
    // The modelled cost of the trials since the last reduction, passed (pace::compute: simulated time in the
    // simulation build, nothing otherwise) before the next one and at the end of the item: exactly when it would
    // have been spent as far as any other rank can tell, in one simulated activity instead of one per trial.
    double flops = 0;
    const auto computed = [&](int64_t pair_terms) { flops += lj::trial_flops(spec.move, spec.atoms, pair_terms); };
    const auto spend = [&flops] {
      pace::compute(flops);
      flops = 0;
    };
    // One exact integer sum per evaluated trial: the next trial starts from the verdict on this one.
    const auto reduce = [&](lj::Energy part) {
      spend();
      group.allreduce_sum(std::span<int64_t>(&part, 1));
      return part;
    };
    // Asked once per item, not per move: a move of a small cluster is a few hundred instructions, and the group's
    // size and rank are MPI calls.
    lj::State& walker = held(chain);
    const int size = group.size(), rank = group.rank();
    for (int64_t m = 0; m < run_.work.compute.moves_per_item; ++m) {
      (void)lj::work_item(spec, key, walker, size, rank, reduce, computed);
    }
    spend();
    if (run_.work.compute.trace && rank == 0) trace_.push_back({chain, item + 1, walker.energy, walker.accepted, size});
  }

  // The leader of the group that ends a chain records its final walker (once per chain over all ranks).
  void finish(int chain, GroupComm& group) override {
    if (group.rank() != 0) return;
    const lj::State& w = chain_ == chain ? *walker_ : initial(chain);  // a chain of no items was never started
    ChainTally& t = tallies_[static_cast<std::size_t>(chain)];
    ++t.recorded;
    t.energy = w.energy;
    t.accepted = w.accepted;
    t.moves = w.item;
  }

  std::vector<std::byte> save(int chain, int64_t item) override {
    // A chain at item 0 is in its initial state, held or not (a unit whose chains have no items ends at its first).
    if (chain_ != chain && item == 0) return lj::serialize(initial(chain));
    const lj::State& w = held(chain);
    if (w.item != item * run_.work.compute.moves_per_item) {
      throw std::logic_error("chain " + std::to_string(chain) + ": the walker is after " + std::to_string(w.item) +
                             " moves, not at item " + std::to_string(item));
    }
    return lj::serialize(w);
  }

  void restore(int chain, int64_t item, std::span<const std::byte> state) override {
    lj::State w = lj::deserialize(state);
    // A state at item 0 (a stolen chain, or a merge before a chain's first item) must be the chain's own initial
    // state, bit for bit.
    if (item == 0 && lj::serialize(w) != lj::serialize(initial(chain))) {
      throw std::logic_error("received a walker that is not chain " + std::to_string(chain) + "'s initial state");
    }
    walker_ = std::move(w);
    chain_ = chain;
  }

  [[nodiscard]] std::optional<std::size_t> state_size(int chain) const override {
    return lj::serialized_bytes(run_.work.compute.atoms_of(chain));
  }
  [[nodiscard]] bool ships_unstarted() const override { return true; }
  [[nodiscard]] std::vector<std::byte> unstarted_state(int chain) const override {
    return lj::serialize(initial(chain));
  }
  [[nodiscard]] bool sends_finished_state() const override { return true; }

 private:
  [[nodiscard]] lj::State initial(int chain) const {
    return lj::initial_state(run_.work.compute.atoms_of(chain), Kernel::lj_key(run_, chain));
  }
  lj::State& held(int chain) {
    if (chain_ != chain || !walker_) {
      throw std::logic_error("rank holds chain " + std::to_string(chain_) + "'s walker, not chain " +
                             std::to_string(chain) + "'s");
    }
    return *walker_;
  }

  const RunSpec& run_;
  std::function<int64_t(int)> items_;
  std::vector<ChainTally>& tallies_;
  std::vector<TracePoint>& trace_;
  std::optional<lj::State> walker_;  // the walker of chain_
  int chain_ = -1;
};

}  // namespace

std::unique_ptr<ChainWork> Kernel::lennard_jones_chains() {
  tallies_.resize(static_cast<std::size_t>(chain_count()));
  return std::make_unique<LennardJonesChains>(
      run_, [this](int chain) { return workload_->items(workload_index(chain)); }, tallies_, trace_);
}

}  // namespace mcmclb
