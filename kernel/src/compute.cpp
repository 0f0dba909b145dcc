// SPDX-License-Identifier: BSD-3-Clause
// Compute mode's part of the kernel (mcmclb/kernel.hpp, work.mode compute): each chain is a Lennard-Jones walker
// (mcmclb/lj.hpp) whose trials the group works together, one exact reduction per evaluated trial, and whose
// state a merge broadcasts to the new members. kernel.cpp is the regroup runtime that calls into this.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "mcmclb/kernel.hpp"

namespace mcmclb {

namespace {

/// The walker state as words for GroupComm::bcast: lj::serialize()'s bytes (32 + 24 N, a multiple of 8).
std::vector<int64_t> state_words(const lj::State& state) {
  const std::vector<std::byte> bytes = lj::serialize(state);
  std::vector<int64_t> words(bytes.size() / sizeof(int64_t));
  std::memcpy(words.data(), bytes.data(), bytes.size());
  return words;
}

}  // namespace

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

void Kernel::work_walker_item(const ChainPos& at) {
  const double t0 = pace::now_s();
  const lj::Spec spec = lj_spec(run_, at.chain);
  const lj::ChainKey key = lj_key(run_, at.chain);
  // The modelled cost of the trials since the last reduction, passed (pace::compute: simulated time in the
  // simulation build, nothing otherwise) before the next one and at the end of the item: exactly when it would
  // have been spent as far as any other rank can tell, in one simulated activity instead of one per trial.
  double flops = 0;
  const auto computed = [&](int64_t pair_terms) { flops += lj::trial_flops(spec.move, spec.atoms, pair_terms); };
  const auto spend = [&flops] {
    pace::compute(flops);
    flops = 0;
  };
  // One exact integer allreduce per evaluated trial: the next trial starts from the verdict on this one.
  const auto reduce = [&](lj::Energy part) {
    spend();
    const auto pending = group_comm_->iallreduce_sum(std::span<int64_t>(&part, 1));
    pace::wait_until([&] { return pending->test(); }, kComputeNap);
    return part;
  };
  for (int64_t m = 0; m < run_.work.compute.moves_per_item; ++m) {
    (void)lj::work_item(spec, key, *walker_, group_.size(), group_comm_->rank(), reduce, computed);
  }
  spend();
  if (is_leader()) {
    const double seconds = pace::now_s() - t0;
    ItemTiming& t = timings_[{at.chain, group_.size()}];
    ++t.items;
    t.seconds += seconds;
    if (run_.work.compute.record) costs_.push_back({at.chain, at.item, group_.size(), seconds});
    if (run_.work.compute.trace) {
      trace_.push_back({at.chain, at.item + 1, walker_->energy, walker_->accepted, group_.size()});
    }
  }
}

void Kernel::next_walker(int ended) {
  if (is_leader()) record_final(ended);
  if (group_.finished()) return;
  const int chain = current_chain();
  walker_ = lj::initial_state(run_.work.compute.atoms_of(chain), lj_key(run_, chain));
  walker_chain_ = chain;
}

std::vector<int64_t> Kernel::initial_walker_words(int chain) const {
  return state_words(lj::initial_state(run_.work.compute.atoms_of(chain), lj_key(run_, chain)));
}

int Kernel::state_holder(int holder, const char* what) const {
  const int root_rank = holder < 0 ? group_.last : holder;
  if (!group_.contains(root_rank)) {
    throw std::logic_error("merge into " + group_.range() + ": " + what + " holder " + std::to_string(root_rank) +
                           " is not a member");
  }
  return root_rank;
}

void Kernel::take_chain(int chain, std::vector<int64_t> walker, int64_t message_bytes) {
  if (!group_.finished()) {
    throw std::logic_error("group " + group_.range() + " takes chain " + std::to_string(chain) +
                           " before its own unit is done");
  }
  group_.unit = single_unit(chain);
  group_.next_item = 0;
  group_.items_left = chain_length(chain);
  ++stats_.chains_migrated;
  stats_.migrated_bytes += message_bytes;
  if (chains_ != nullptr) {  // an unstarted chain: every member of the thief starts it, nothing travels
    start_app_chain(chain);
    return;
  }
  if (!computing()) return;
  const int atoms = run_.work.compute.atoms_of(chain);
  walker.resize(lj::serialized_bytes(atoms) / sizeof(int64_t));
  if (group_.size() > 1) {  // rebalancing time, as a regrouping's broadcast of the walker is
    auto timer = timed(Phase::regroup);
    group_comm_->bcast(walker, 0);
    if (!is_leader()) stats_.migrated_bytes += static_cast<int64_t>(walker.size() * sizeof(int64_t));
  }
  walker_ = lj::deserialize(std::as_bytes(std::span<const int64_t>(walker)));
  walker_chain_ = chain;
  // A migrated chain has not started: what travelled must be the chain's own initial state, bit for bit.
  if (walker_->item != 0 || state_words(*walker_) != initial_walker_words(chain)) {
    throw std::logic_error("group " + group_.range() + " received a walker that is not chain " + std::to_string(chain) +
                           "'s initial state");
  }
}

void Kernel::record_final(int chain) {
  ChainTally& t = tallies_[static_cast<std::size_t>(chain)];
  ++t.recorded;
  t.energy = walker_->energy;
  t.accepted = walker_->accepted;
  t.moves = walker_->item;
}

void Kernel::take_walker(EventKind kind, int holder) {
  const ChainPos at = locate(group_.unit, group_.next_item);
  const int chain = at.chain;
  const int atoms = run_.work.compute.atoms_of(chain);
  if (kind == EventKind::initial) {
    // Deterministic from (seed, chain): every member computes it, nothing is sent.
    walker_ = lj::initial_state(atoms, lj_key(run_, chain));
    walker_chain_ = chain;
    // A chain of no items ends where it starts: the unit's are recorded now (they hold no item to pass).
    if (is_leader()) {
      const int first = group_.unit * chains_per_group_;
      for (int c = first; c < first + chains_per_group_; ++c) {
        if (chain_length(c) > 0) continue;
        if (c != chain) walker_ = lj::initial_state(run_.work.compute.atoms_of(c), lj_key(run_, c));
        record_final(c);
      }
      walker_ = lj::initial_state(atoms, lj_key(run_, chain));
    }
    return;
  }
  // A merge continues the chain of one merged group, the rightmost one for merge-right balancers (async,
  // collective, lookahead), so by default the merged group's last rank holds the state; a balancer that merges
  // left too names a holder. The holder checks that before anyone relies on it.
  // A unit that gave its last chains away (steal) ends before them, so when nothing is left its position names the
  // first chain given away, at item 0, which its thief holds and no member ever started: there is no walker to
  // pass. (Every member sees the same group state, so all skip alike; a unit that gave nothing away ends at its
  // last chain's last item, as before.)
  if (group_.items_left == 0 && at.item == 0 && chain_length(chain) > 0) return;
  const int root_rank = state_holder(holder, "walker");
  const int root = root_rank - group_.first;
  const bool is_root = rank_ == root_rank;
  const int64_t moves = at.item * run_.work.compute.moves_per_item;
  if (is_root && (walker_chain_ != chain || !walker_ || walker_->item != moves)) {
    throw std::logic_error("merge into " + group_.range() + ": rank " + std::to_string(root_rank) +
                           " does not hold chain " + std::to_string(chain) + " after " + std::to_string(moves) +
                           " moves");
  }
  const double t0 = pace::now_s();
  std::vector<int64_t> words =
      is_root ? state_words(*walker_) : std::vector<int64_t>(lj::serialized_bytes(atoms) / sizeof(int64_t));
  group_comm_->bcast(words, root);
  const double bcast_s = pace::now_s() - t0;
  const auto bytes = static_cast<int64_t>(words.size() * sizeof(int64_t));
  if (!is_root) {
    walker_ = lj::deserialize(std::as_bytes(std::span<const int64_t>(words)));
    walker_chain_ = chain;
    stats_.state_bytes += bytes;
  }
  stats_.state_s += bcast_s;
  if (is_leader()) {
    ChainTally& t = tallies_[static_cast<std::size_t>(chain)];
    ++t.merges;
    t.state_bytes += bytes * (group_.size() - 1);
    t.state_s += bcast_s;
  }
}

}  // namespace mcmclb
