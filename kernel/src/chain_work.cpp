// SPDX-License-Identifier: BSD-3-Clause
// Chains in the kernel (mcmclb/kernel.hpp, ChainWork): an application's (through mcmclb/walkers.hpp) or compute
// mode's Lennard-Jones walkers (compute.cpp), one path for both. The kernel keeps track of which chain and position
// each rank holds, so that a merge can check that the member sending the state really has it.
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "mcmclb/kernel.hpp"

namespace mcmclb {

namespace {

/// The group's communicator as an application's calls see it: its members sum in lockstep, as compute mode's do,
/// so a sum waits with the short nap compute mode's reductions use rather than the polling point's (a long nap per
/// reduction would dominate an item of many small ones). Freeing stays the kernel's.
class LockstepGroup final : public GroupComm {
 public:
  LockstepGroup(GroupComm& group, std::chrono::microseconds nap, std::atomic<int>* calls)
      : group_(group), nap_(nap), calls_(calls) {}
  [[nodiscard]] int size() const override { return group_.size(); }
  [[nodiscard]] int rank() const override { return group_.rank(); }
  [[nodiscard]] std::unique_ptr<PendingOp> ibcast(std::span<int64_t> words, int root) override {
    const InGroupCall in_call(calls_);
    return group_.ibcast(words, root);
  }
  void bcast(std::span<int64_t> words, int root, std::chrono::microseconds /*nap*/) override {
    const InGroupCall in_call(calls_);
    group_.bcast(words, root, nap_);
  }
  void barrier() override {
    const InGroupCall in_call(calls_);
    group_.barrier();
  }
  void allreduce_sum(std::span<int64_t> values) override {
    const InGroupCall in_call(calls_);
    const auto pending = group_.iallreduce_sum(values);
    pace::wait_until([&] { return pending->test(); }, nap_);
  }
  [[nodiscard]] std::unique_ptr<PendingOp> iallreduce_sum(std::span<int64_t> values) override {
    const InGroupCall in_call(calls_);
    return group_.iallreduce_sum(values);
  }
  [[nodiscard]] std::unique_ptr<PendingOp> ibcast(void* data, int count, MPI_Datatype type, int root) override {
    const InGroupCall in_call(calls_);
    return group_.ibcast(data, count, type, root);
  }
  [[nodiscard]] std::unique_ptr<PendingOp> iallreduce(void* data, int count, MPI_Datatype type, MPI_Op op) override {
    const InGroupCall in_call(calls_);
    return group_.iallreduce(data, count, type, op);
  }
  void bcast(void* data, int count, MPI_Datatype type, int root) override {
    const InGroupCall in_call(calls_);
    const auto pending = group_.ibcast(data, count, type, root);
    pace::wait_until([&] { return pending->test(); }, nap_);
  }
  void allreduce(void* data, int count, MPI_Datatype type, MPI_Op op) override {
    const InGroupCall in_call(calls_);
    const auto pending = group_.iallreduce(data, count, type, op);
    pace::wait_until([&] { return pending->test(); }, nap_);
  }
  void reduce(void* data, int count, MPI_Datatype type, MPI_Op op, int root) override {
    const InGroupCall in_call(calls_);
    group_.reduce(data, count, type, op, root);
  }
  void gatherv(const void* mine, int count, void* all, const int* counts, const int* displacements, MPI_Datatype type,
               int root) override {
    const InGroupCall in_call(calls_);
    group_.gatherv(mine, count, all, counts, displacements, type, root);
  }
  void allgatherv(const void* mine, int count, void* all, const int* counts, const int* displacements,
                  MPI_Datatype type) override {
    const InGroupCall in_call(calls_);
    group_.allgatherv(mine, count, all, counts, displacements, type);
  }
  void send(const void* data, int count, MPI_Datatype type, int dest, int tag) override {
    const InGroupCall in_call(calls_);
    group_.send(data, count, type, dest, tag);
  }
  void recv(void* data, int count, MPI_Datatype type, int source, int tag) override {
    const InGroupCall in_call(calls_);
    group_.recv(data, count, type, source, tag);
  }
  [[nodiscard]] int probe_count(int source, int tag, MPI_Datatype type) override {
    const InGroupCall in_call(calls_);
    return group_.probe_count(source, tag, type);
  }
  [[nodiscard]] MPI_Comm mpi_comm() override {
    const InGroupCall in_call(calls_);
    return group_.mpi_comm();
  }
  void free() override {
    throw std::logic_error("an application freed its group's communicator, which the kernel owns");
  }

 private:
  /// Counts the calls in progress while one runs, for a watchdog that tells a rank waiting for another member
  /// from one that hung in its own code.
  class InGroupCall {
   public:
    explicit InGroupCall(std::atomic<int>* calls) noexcept : calls_(calls) {
      if (calls_ != nullptr) calls_->fetch_add(1, std::memory_order_relaxed);
    }
    ~InGroupCall() {
      if (calls_ != nullptr) calls_->fetch_sub(1, std::memory_order_relaxed);
    }
    InGroupCall(const InGroupCall&) = delete;
    InGroupCall& operator=(const InGroupCall&) = delete;

   private:
    std::atomic<int>* calls_;
  };

  GroupComm& group_;
  std::chrono::microseconds nap_;
  std::atomic<int>* calls_;  // null: not counted
};

}  // namespace

std::vector<std::byte> ChainWork::unstarted_state(int chain) const {
  throw std::logic_error("chain " + std::to_string(chain) + ": these chains do not ship unstarted states");
}

std::vector<int64_t> ChainWork::piece_bounds(int chain, int /*size*/) {
  throw std::logic_error("chain " + std::to_string(chain) + ": these chains' states are not spread");
}

std::span<const std::byte> ChainWork::save_piece(int chain, int64_t /*item*/, int /*member*/, int /*size*/) {
  throw std::logic_error("chain " + std::to_string(chain) + ": these chains' states are not spread");
}

std::vector<std::byte> ChainWork::save_shared(int chain, int64_t /*item*/) {
  throw std::logic_error("chain " + std::to_string(chain) + ": these chains' states are not spread");
}

void ChainWork::restore_piece(int chain, int64_t /*item*/, std::vector<std::byte>& /*piece*/,
                              std::span<const std::byte> /*shared*/, GroupComm& /*group*/) {
  throw std::logic_error("chain " + std::to_string(chain) + ": these chains' states are not spread");
}

void Kernel::hold_app_chain(int chain, int64_t next) {
  app_chain_ = chain;
  app_next_ = next;
  app_first_ = group_.first;
  app_size_ = group_.size();
}

void Kernel::work_app_item(const ChainPos& at) {
  if (app_chain_ != at.chain || app_next_ != at.item) {
    throw std::logic_error("rank " + std::to_string(rank_) + " is to work item " + std::to_string(at.item) +
                           " of chain " + std::to_string(at.chain) + " but holds chain " + std::to_string(app_chain_) +
                           " at item " + std::to_string(app_next_));
  }
  // A chain that is done passes over its remaining items: nothing is worked or recorded, so a trace holds the
  // items the chain really worked.
  if (app_done_chain_ != at.chain && chains_->done(at.chain, at.item)) app_done_chain_ = at.chain;
  if (app_done_chain_ == at.chain) {
    if (measuring()) {
      bound_chain_ = at.chain;  // nothing more to plan for: the items left are passed over
      bound_items_ = at.item;
    }
    ++app_next_;
    ++items_passed_;
    return;
  }
  if (measuring()) {
    // The chain may have learned that it ends sooner than items(c) (ChainWork::bound): the planners count the items
    // past that as free. Every member asks alike, from the state they share.
    bound_chain_ = at.chain;
    bound_items_ = std::clamp(chains_->bound(at.chain, at.item), at.item, chain_length(at.chain));
  }
  const double t0 = pace::now_s();
  LockstepGroup group(*group_comm_, kComputeNap, group_calls_);
  chains_->work(at.chain, at.item, group);
  ++app_next_;
  double seconds = pace::now_s() - t0;
  if (measuring()) {
    // Every member decides from the estimate (mostwork, lookahead): they add the same time, the slowest member's.
    if (group_.size() > 1) seconds = group_comm_->allreduce(seconds, ops::max);
    estimate_.add(at.chain, group_.size(), seconds, is_leader());
  }
  if (is_leader()) {
    ItemTiming& t = timings_[{at.chain, group_.size()}];
    ++t.items;
    t.seconds += seconds;
    if (run_.work.compute.record) costs_.push_back({at.chain, at.item, group_.size(), seconds});
  }
}

void Kernel::next_app_chain(int ended) {
  LockstepGroup group(*group_comm_, kComputeNap, group_calls_);
  chains_->finish(ended, group);
  pass_costs();  // the chain's last items, so that a run killed from now on still leaves all of them
  if (group_.finished()) return;
  hold_app_chain(current_chain(), 0);
  chains_->start(app_chain_, group);
}

void Kernel::start_app_chain(int chain) {
  LockstepGroup group(*group_comm_, kComputeNap, group_calls_);
  chains_->start(chain, group);
  hold_app_chain(chain, 0);
}

int Kernel::state_holder(int holder) const {
  const int root_rank = holder < 0 ? group_.last : holder;
  if (!group_.contains(root_rank)) {
    throw std::logic_error("merge into " + group_.range() + ": chain " + std::to_string(current_chain()) + " holder " +
                           std::to_string(root_rank) + " is not a member");
  }
  return root_rank;
}

void Kernel::agree_on_estimate(int holder) {
  if (!measuring() || group_.size() == 1) return;
  // Members that came from other groups measured other items: every member takes the state holder's sums, and the
  // bound its chain last gave (two words after the sums), so that every member plans alike.
  const int root = (holder >= 0 && group_.contains(holder) ? holder : group_.last) - group_.first;
  std::vector<int64_t> words;
  if (rank_ == group_.first + root) {
    words = estimate_.words();
    words.insert(words.end(), {int64_t{bound_chain_}, bound_items_});
  }
  std::array<int64_t, 1> length{static_cast<int64_t>(words.size())};
  group_comm_->bcast(std::span<int64_t>(length), root);
  words.resize(static_cast<std::size_t>(length[0]));
  group_comm_->bcast(std::span<int64_t>(words), root);
  bound_chain_ = static_cast<int>(words[words.size() - 2]);
  bound_items_ = words.back();
  estimate_.adopt(std::span<const int64_t>(words).first(words.size() - 2));
}

void Kernel::take_app_chain(EventKind kind, int holder) {
  if (kind != EventKind::initial) agree_on_estimate(holder);
  const ChainPos at = locate(group_.unit, group_.next_item);
  LockstepGroup group(*group_comm_, kComputeNap, group_calls_);
  if (kind == EventKind::initial) {
    // A chain of no items ends where it starts: the unit's are started and finished now, as no item will.
    const int first = group_.unit * chains_per_group_;
    for (int c = first; c < first + chains_per_group_; ++c) {
      if (chain_length(c) > 0) continue;
      chains_->start(c, group);
      chains_->finish(c, group);
    }
    hold_app_chain(at.chain, 0);  // a unit of no items ends at its first chain, at item 0
    if (chain_length(at.chain) > 0) chains_->start(at.chain, group);
    return;
  }
  // A group with nothing left to work (finished groups that coalesce, a unit that gave its last chains away)
  // continues no chain, so no state travels; unless the chains send a finished one (then only a unit that gave its
  // last chains away, whose position names the first chain given, unstarted, sends nothing).
  if (group_.items_left == 0 && (!chains_->sends_finished_state() || (at.item == 0 && chain_length(at.chain) > 0))) {
    return;
  }
  const int root_rank = state_holder(holder);
  const int root = root_rank - group_.first;
  const bool is_root = rank_ == root_rank;
  if (is_root && (app_chain_ != at.chain || app_next_ != at.item)) {
    throw std::logic_error("merge into " + group_.range() + ": rank " + std::to_string(root_rank) +
                           " does not hold chain " + std::to_string(at.chain) + " at item " + std::to_string(at.item));
  }
  if (chains_->spread()) {
    take_spread_chain(at, root_rank);
    return;
  }
  const double t0 = pace::now_s();
  std::vector<std::byte> bytes = is_root ? chains_->save(at.chain, at.item) : std::vector<std::byte>{};
  // The state's length first, unless every rank knows it: an application's states need not all be of one size.
  const std::optional<std::size_t> fixed = chains_->state_size(at.chain);
  std::array<int64_t, 1> length{static_cast<int64_t>(fixed ? *fixed : bytes.size())};
  if (is_root && static_cast<std::size_t>(length[0]) != bytes.size()) {
    throw std::logic_error("chain " + std::to_string(at.chain) + ": save() made " + std::to_string(bytes.size()) +
                           " bytes where its state has " + std::to_string(length[0]));
  }
  if (!fixed) group_comm_->bcast(std::span<int64_t>(length), root);
  std::vector<int64_t> words(static_cast<std::size_t>((length[0] + 7) / 8), 0);
  if (is_root && !bytes.empty()) std::memcpy(words.data(), bytes.data(), bytes.size());
  if (!words.empty()) group_comm_->bcast(std::span<int64_t>(words), root);
  const double bcast_s = pace::now_s() - t0;
  stats_.state_s += bcast_s;
  if (!is_root) stats_.state_bytes += length[0];
  if (is_leader() && !tallies_.empty()) {
    ChainTally& t = tallies_[static_cast<std::size_t>(at.chain)];
    ++t.merges;
    t.state_bytes += length[0] * (group_.size() - 1);
    t.state_s += bcast_s;
  }
  // The members of the group that worked the chain hold it already, at this very item.
  if (app_chain_ != at.chain || app_next_ != at.item) {
    chains_->restore(at.chain, at.item,
                     std::as_bytes(std::span<const int64_t>(words)).first(static_cast<std::size_t>(length[0])));
  }
  hold_app_chain(at.chain, at.item);
}

void Kernel::take_spread_chain(const ChainPos& at, int root_rank) {
  // The group that worked the chain is a range of the merged group (merges take whole groups), and its members
  // hold the pieces in its rank order; the holder says which range, as the others' own notes may be stale (a chain
  // they started and then gave away unworked).
  const double t0 = pace::now_s();
  std::array<int64_t, 2> held{app_first_, app_size_};
  group_comm_->bcast(std::span<int64_t>(held), root_rank - group_.first);
  const int held_first = static_cast<int>(held[0]), held_size = static_cast<int>(held[1]);
  if (held_size < 1 || held_first < group_.first || held_first + held_size - 1 > group_.last) {
    throw std::logic_error("merge into " + group_.range() + ": chain " + std::to_string(at.chain) + " is held by " +
                           std::to_string(held_size) + " ranks from " + std::to_string(held_first) +
                           ", not a range of the group");
  }
  const bool holds = rank_ >= held_first && rank_ < held_first + held_size;
  if (holds && (app_chain_ != at.chain || app_next_ != at.item || app_first_ != held_first)) {
    throw std::logic_error("merge into " + group_.range() + ": rank " + std::to_string(rank_) +
                           " does not hold its piece of chain " + std::to_string(at.chain) + " at item " +
                           std::to_string(at.item));
  }
  // What every holder has alike, from the state holder; then each member's new piece from the holders' pieces it
  // overlaps, never the whole state (pieces of a state far larger than one rank's memory stay spread).
  const int root = root_rank - group_.first;
  std::vector<std::byte> shared =
      rank_ == root_rank ? chains_->save_shared(at.chain, at.item) : std::vector<std::byte>{};
  group_comm_->bcast(shared, root);
  const int member = rank_ - group_.first;
  const std::vector<int64_t> from = chains_->piece_bounds(at.chain, held_size);
  const std::vector<int64_t> to = chains_->piece_bounds(at.chain, group_.size());
  const std::span<const std::byte> mine =
      holds ? chains_->save_piece(at.chain, at.item, rank_ - held_first, held_size) : std::span<const std::byte>{};
  std::vector<std::byte> piece(
      static_cast<std::size_t>(to[static_cast<std::size_t>(member) + 1] - to[static_cast<std::size_t>(member)]));
  const int64_t received = move_piece_bytes(from, held_first - group_.first, mine, to, piece);
  const double gather_s = pace::now_s() - t0;
  stats_.state_s += gather_s;
  stats_.state_bytes += received;
  if (is_leader() && !tallies_.empty()) {
    ChainTally& t = tallies_[static_cast<std::size_t>(at.chain)];
    ++t.merges;
    t.state_bytes += to.back();
    t.state_s += gather_s;
  }
  // Every member takes its piece anew, the former holders too: their rank and the group's size have changed.
  LockstepGroup group(*group_comm_, kComputeNap, group_calls_);
  chains_->restore_piece(at.chain, at.item, piece, shared, group);
  hold_app_chain(at.chain, at.item);
}

int64_t Kernel::move_piece_bytes(std::span<const int64_t> from, int first_holder, std::span<const std::byte> mine,
                                 std::span<const int64_t> to, std::span<std::byte> piece) {
  // Every member walks the same list of transfers (holder k to member m, where their bytes overlap) in the same
  // order, each a blocking send and its receive: the earliest transfer not yet done always has both ends waiting
  // for it, so none waits for ever, whatever MPI buffers. Long ones go in parts, as MPI counts are ints.
  constexpr int64_t kPart = int64_t{1} << 28;
  constexpr int kPieceTag = 0x7069;
  const int member = rank_ - group_.first;
  int64_t received = 0;
  for (std::size_t k = 0; k + 1 < from.size(); ++k) {
    const int sender = first_holder + static_cast<int>(k);
    for (std::size_t m = 0; m + 1 < to.size(); ++m) {
      const int64_t begin = std::max(from[k], to[m]), end = std::min(from[k + 1], to[m + 1]);
      const int receiver = static_cast<int>(m);
      if (begin >= end || (sender != member && receiver != member)) continue;
      const auto mine_at = static_cast<std::size_t>(begin - from[k]);
      const auto piece_at = static_cast<std::size_t>(begin - to[m]);
      const auto length = static_cast<std::size_t>(end - begin);
      if (sender == receiver) {
        std::memcpy(piece.data() + piece_at, mine.data() + mine_at, length);
        continue;
      }
      for (std::size_t done = 0; done < length; done += static_cast<std::size_t>(kPart)) {
        const std::size_t n = std::min(length - done, static_cast<std::size_t>(kPart));
        if (sender == member) {
          group_comm_->send(mine.subspan(mine_at + done, n), receiver, kPieceTag);
        } else {
          group_comm_->recv(piece.subspan(piece_at + done, n), sender, kPieceTag);
          received += static_cast<int64_t>(n);
        }
      }
    }
  }
  return received;
}

}  // namespace mcmclb
