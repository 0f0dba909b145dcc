// SPDX-License-Identifier: BSD-3-Clause
// Range communicators (mcmclb/range_comm.hpp): local O(1) creation, binomial-tree collectives of
// point-to-point messages on the context's private duplicate (in the simulation, a view of the parent with tags
// of the ranges' own: kSimulatedTagBase), and the tag scheme that keeps ranges apart.
//
// Why no message is ever taken by the wrong operation, for any mix of ranges and timings:
//  - Every message of a range operation goes from a member s to a member d != s of its range, on the context's
//    message duplicate (which nothing else uses), with the operation's tag t = range_tag(first, last, seq), and
//    every receive names its source: no wildcards. One operation sends at most one message from s to d (tree
//    edges: parent to child for a broadcast; child to parent, then parent to child, for an allreduce).
//  - For one (source, destination, tag, communicator), MPI matches sends and receives in the order each side
//    posted them (non-overtaking). So a message of operation o can be taken by another operation o' only if
//    t(o') = t(o), both ranges contain s and d (they share two or more ranks), and s posts the two sends in
//    one order while d posts the two receives in the other.
//  - An operation posts all its sends and receives between its start and its completion on that rank, and
//    RangeContext::admit refuses (mpi::UsageError) to start an operation while one with the same tag is in
//    flight on this rank on a range sharing two or more ranks with it. So s posts the sends of o and o' in the
//    order it started the two operations, and d its receives likewise. A mismatch would therefore need s to run
//    o then o' while d runs o' then o, each completing the first before starting the second. MPI's rule for
//    collectives (a correct program must not deadlock if collectives synchronize) excludes exactly that: were
//    they synchronizing, o could not complete at s before d started it, nor o' at d before s started it.
//  - Hence the two cases the kernel lives with are safe: a rank that moved on to a new range and sends there
//    while a peer still works in an old one (the peer posted its old receives first, and the sender had posted
//    its old sends first), and ranges re-created over the same ranks (sequence numbers restart, but the old
//    operations are complete on every rank that could confuse them).
//
// Tags only need to differ where two operations can be in flight together on one rank. range_tag gives every
// range of a parent of up to kRangeMaxDistinct ranks its own slot (its triangular index), and successive
// operations of a range kRangeTagWindow different tags, all within 0..32767, the least MPI_TAG_UB the standard
// allows. So on such parents up to 16 pipelined operations per range, on any number of ranges, never collide;
// on larger parents two overlapping ranges may share a slot, and admit turns that rare case into a clear error
// instead of a silent mismatch.
#include "mcmclb/range_comm.hpp"

#include <algorithm>
#include <cstring>
#include <exception>
#include <string>
#include <utility>

namespace mcmclb {

static_assert(kRangeTagSlots * kRangeTagWindow - 1 <= 32767, "tags must fit the least MPI_TAG_UB");
static_assert(kRangeMaxDistinct * (kRangeMaxDistinct + 1) / 2 <= kRangeTagSlots, "one slot per range up to 63");

int range_tag(int first, int last, std::uint64_t seq) noexcept {
  const auto f = static_cast<std::uint64_t>(first);
  const auto l = static_cast<std::uint64_t>(last);
  const std::uint64_t index = l * (l + 1) / 2 + f;  // distinct for distinct 0 <= first <= last
  const std::uint64_t slot = index % kRangeTagSlots;
  return static_cast<int>(slot * kRangeTagWindow + seq % kRangeTagWindow);
}

namespace {

std::string range_text(int first, int last) { return "[" + std::to_string(first) + ", " + std::to_string(last) + "]"; }

int shared_ranks(int first_a, int last_a, int first_b, int last_b) {
  return std::max(0, std::min(last_a, last_b) - std::max(first_a, first_b) + 1);
}

[[noreturn]] void throw_bad_range(int first, int last, int parent_size, int parent_rank) {
  if (first > last) {
    throw mpi::UsageError("range " + range_text(first, last) + " is empty: first must not exceed last", MPI_ERR_ARG);
  }
  if (first < 0 || last >= parent_size) {
    throw mpi::UsageError(
        "range " + range_text(first, last) + " is not inside the parent's ranks 0.." + std::to_string(parent_size - 1),
        MPI_ERR_RANK);
  }
  throw mpi::UsageError("rank " + std::to_string(parent_rank) + " is not in range " + range_text(first, last) +
                            ": only members create a range communicator",
                        MPI_ERR_RANK);
}

using Combine = void (*)(unsigned char*, const unsigned char*, int);

template <typename T, ReduceOp Op>
void combine_into(unsigned char* acc, const unsigned char* in, int count) {
  for (int i = 0; i < count; ++i) {
    T a;
    T b;
    std::memcpy(&a, acc + i * sizeof(T), sizeof(T));
    std::memcpy(&b, in + i * sizeof(T), sizeof(T));
    if constexpr (Op == ReduceOp::sum) a = a + b;
    if constexpr (Op == ReduceOp::max) a = std::max(a, b);
    if constexpr (Op == ReduceOp::min) a = std::min(a, b);
    std::memcpy(acc + i * sizeof(T), &a, sizeof(T));
  }
}

template <typename T>
Combine combine_for(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum:
      return &combine_into<T, ReduceOp::sum>;
    case ReduceOp::max:
      return &combine_into<T, ReduceOp::max>;
    case ReduceOp::min:
      return &combine_into<T, ReduceOp::min>;
  }
  throw mpi::UsageError("unknown reduction operation", MPI_ERR_OP);
}

enum Kind : int { kBcast = 0, kAllreduce = 1 };

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// RangeContext

namespace {

/// Where a simulated context's tags start. The simulation uses views of the parent, not duplicates: SMPI keeps
/// tables over every rank of each communicator on every rank, so a duplicate of a WORLD-sized parent costs O(P)
/// bytes per simulated rank and O(P^2) in the one process (two of them: about 100 GB at 65,536 ranks). On the shared
/// context the ranges' tags are moved above every other tag used there (the kernel's and the balancers' are below
/// 32768; SMPI's MPI_TAG_UB is 2^31 - 1), so "nothing else uses them" still holds for the argument above, as long as
/// one context per parent is alive at a time, which is how the kernel and commbench use it.
constexpr int kSimulatedTagBase = 1 << 30;
/// The same for the members' point-to-point messages in the simulation: their tags are moved to 2^29 and up.
constexpr int kSimulatedPointTagBase = 1 << 29;

mpi::Comm context_comm(const mpi::Comm& parent) {
  return mpi::kSimulated ? mpi::Comm::view(parent.get()) : parent.dup();
}

}  // namespace

RangeContext::RangeContext(const mpi::Comm& parent)
    : messages_(context_comm(parent)),
      creation_(context_comm(parent)),
      points_(context_comm(parent)),
      group_(creation_.group()),
      tag_base_(mpi::kSimulated ? kSimulatedTagBase : 0) {
  if (tag_base_ > 0) mpi::check_tag(tag_base_ + kRangeTagSlots * kRangeTagWindow - 1);
  rank_ = messages_.rank();
  size_ = messages_.size();
}

void RangeContext::admit(const Active& op) {
  for (const Active& a : active_) {
    if (a.tag == op.tag && shared_ranks(a.first, a.last, op.first, op.last) >= 2) {
      throw mpi::UsageError(
          "range " + range_text(op.first, op.last) + ": its next operation would use tag " + std::to_string(op.tag) +
              ", which an operation still in flight on range " + range_text(a.first, a.last) +
              " uses; complete one first (at most " + std::to_string(kRangeTagWindow) +
              " operations of one range may be in flight, and overlapping ranges of parents larger than " +
              std::to_string(kRangeMaxDistinct) + " ranks may share tags)",
          MPI_ERR_TAG);
    }
  }
  active_.push_back(op);
}

void RangeContext::retire(const void* op) noexcept {
  for (std::size_t i = 0; i < active_.size(); ++i) {
    if (active_[i].op == op) {
      active_[i] = active_.back();
      active_.pop_back();
      return;
    }
  }
}

bool RangeContext::owner_busy(std::uint64_t owner) const noexcept {
  return std::any_of(active_.begin(), active_.end(), [owner](const Active& a) { return a.owner == owner; });
}

// ---------------------------------------------------------------------------------------------------------------
// The operations: binomial trees over the range's ranks relative to the root (v = (rank - root) mod n). Node v's
// parent is v without its lowest set bit; its children are v + m for the powers of two m below that bit (all m
// for the root) with v + m < n. A broadcast goes down the tree; an allreduce goes up to range rank 0, combining
// at each node its own value and then its children's in increasing m, and its result comes down the same tree.

struct RangeRequest::State {
  enum Phase { kUp, kExchange, kDownReceive, kDownSend, kDone };

  RangeContext* context = nullptr;
  MPI_Comm comm = MPI_COMM_NULL;
  int kind = kBcast;
  int first = 0;
  int n = 1;
  int root = 0;
  int v = 0;  // this rank relative to root
  int tag = 0;
  unsigned char* buffer = nullptr;
  int count = 0;
  MPI_Datatype type = MPI_BYTE;
  std::size_t bytes = 0;  // of count elements
  Combine combine = nullptr;
  MPI_Op op = MPI_OP_NULL;  // combines with MPI_Reduce_local where combine is null
  int children = 0;         // allreduce: how many partial results come up
  Phase phase = kDone;
  std::vector<MPI_Request> requests;
  std::vector<unsigned char> scratch;  // allreduce: the partial result, then one slot per child

  [[nodiscard]] int parent_rank_of(int relative) const { return first + (relative + root) % n; }
  [[nodiscard]] int child_limit() const { return v == 0 ? n : (v & -v); }

  void send_to(void* data, int peer_relative) {
    MPI_Request request = MPI_REQUEST_NULL;
    mpi::check(MPI_Isend(data, count, type, parent_rank_of(peer_relative), tag, comm, &request), "MPI_Isend");
    requests.push_back(request);
  }

  void receive_from(void* data, int peer_relative) {
    MPI_Request request = MPI_REQUEST_NULL;
    mpi::check(MPI_Irecv(data, count, type, parent_rank_of(peer_relative), tag, comm, &request), "MPI_Irecv");
    requests.push_back(request);
  }

  /// The children's offsets m in increasing order (at most 31 of them).
  [[nodiscard]] int child_offsets(int* offsets) const {
    int k = 0;
    for (long long m = 1; m < child_limit() && v + m < n; m *= 2) offsets[k++] = static_cast<int>(m);
    return k;
  }

  /// Sends buffer to every child, farthest subtree first (it has the most forwarding left to do).
  void send_down() {
    int offsets[32];
    for (int i = child_offsets(offsets) - 1; i >= 0; --i) send_to(buffer, v + offsets[i]);
    phase = kDownSend;
  }

  void begin() {
    if (kind == kBcast) {
      if (v == 0) {
        send_down();
      } else {
        receive_from(buffer, v - (v & -v));
        phase = kDownReceive;
      }
      return;
    }
    int offsets[32];
    children = child_offsets(offsets);
    scratch.assign((1 + static_cast<std::size_t>(children)) * bytes, 0);
    for (int c = 0; c < children; ++c) {
      receive_from(scratch.data() + static_cast<std::size_t>(c + 1) * bytes, v + offsets[c]);
    }
    phase = kUp;
  }

  /// Combines the children's partial results into this rank's own value, in the fixed order (increasing m).
  void reduce_children() {
    if (bytes == 0) return;
    unsigned char* acc = scratch.data();
    std::memcpy(acc, buffer, bytes);
    for (int c = 1; c <= children; ++c) {
      unsigned char* child = acc + static_cast<std::size_t>(c) * bytes;
      if (combine != nullptr) {
        combine(acc, child, count);
      } else {
        // inout = in op inout: the child's part first, which only a non-commutative op would notice.
        mpi::check(MPI_Reduce_local(child, acc, count, type, op), "MPI_Reduce_local");
      }
    }
  }

  /// Advances as far as the completed messages allow; true when the operation is complete on this rank.
  bool progress() {
    for (;;) {
      if (phase == kDone) return true;
      int all_done = 0;
      mpi::check(MPI_Testall(static_cast<int>(requests.size()), requests.data(), &all_done, MPI_STATUSES_IGNORE),
                 "MPI_Testall");
      if (!all_done) return false;
      step();
    }
  }

  /// Waits for the operation phase by phase where mpi::wait_all_politely decides how a rank waits: tests and
  /// naps on real MPI; a blocking MPI_Waitall in the simulation build, where every failed test would cost
  /// smpi/test of simulated time (docs/guide/simulation.md).
  void complete(std::chrono::microseconds nap) {
    while (phase != kDone) {
      mpi::wait_all_politely(requests, nap);
      step();
    }
  }

  /// The current phase's requests are complete: starts the next phase.
  void step() {
    requests.clear();
    switch (phase) {
      case kDownReceive:
      case kExchange:
        send_down();
        break;
      case kUp:
        reduce_children();
        if (v == 0) {
          if (bytes > 0) std::memcpy(buffer, scratch.data(), bytes);
          send_down();
        } else {
          send_to(scratch.data(), v - (v & -v));
          receive_from(buffer, v - (v & -v));
          phase = kExchange;
        }
        break;
      case kDownSend:
        phase = kDone;
        break;
      case kDone:
        break;
    }
  }
};

RangeRequest::RangeRequest() noexcept = default;
RangeRequest::RangeRequest(std::unique_ptr<State> state) noexcept : state_(std::move(state)) {}
RangeRequest::RangeRequest(RangeRequest&& other) noexcept = default;

RangeRequest& RangeRequest::operator=(RangeRequest&& other) noexcept {
  if (this != &other) {
    RangeRequest old(std::move(*this));  // completes what this held when old goes out of scope
    state_ = std::move(other.state_);
  }
  return *this;
}

RangeRequest::~RangeRequest() {
  if (!state_) return;
  if (std::uncaught_exceptions() == 0 && !mpi::finalized()) {
    try {
      wait();
      return;
    } catch (...) {  // fall through: abandon it
    }
  }
  // MPI may still write into the state's buffers, so it is deliberately leaked; the job is going down.
  state_->context->retire(state_.get());
  (void)state_.release();
}

bool RangeRequest::test() {
  if (!state_) return true;
  if (!state_->progress()) return false;
  state_->context->retire(state_.get());
  state_.reset();
  return true;
}

void RangeRequest::wait(std::chrono::microseconds nap) {
  if (!state_) return;
  state_->complete(nap);
  state_->context->retire(state_.get());
  state_.reset();
}

// ---------------------------------------------------------------------------------------------------------------
// RangeComm

RangeComm::RangeComm(RangeContext& context, int first, int last) {
  const int me = context.parent_rank();
  if (first > last || first < 0 || last >= context.parent_size() || me < first || me > last) {
    throw_bad_range(first, last, context.parent_size(), me);
  }
  context_ = &context;
  id_ = context.next_id_++;
  first_ = first;
  last_ = last;
  rank_ = me - first;
}

RangeComm RangeComm::from_group(RangeContext& context, const mpi::Group& group) {
  const std::vector<int> ranks = group.translate_all(context.group_);
  if (ranks.empty()) throw mpi::UsageError("range communicator: the group is empty", MPI_ERR_GROUP);
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i] == MPI_UNDEFINED) {
      throw mpi::UsageError("range communicator: group member " + std::to_string(i) + " is not in the parent",
                            MPI_ERR_GROUP);
    }
    const int expected = ranks[0] + static_cast<int>(i);
    if (ranks[i] != expected) {
      throw mpi::UsageError("range communicator: the group is not a contiguous range of the parent (member " +
                                std::to_string(i) + " is parent rank " + std::to_string(ranks[i]) + ", expected " +
                                std::to_string(expected) + "); `range` needs parent ranks first..last in order",
                            MPI_ERR_GROUP);
    }
  }
  return {context, ranks.front(), ranks.back()};
}

RangeComm::RangeComm(RangeComm&& other) noexcept
    : context_(std::exchange(other.context_, nullptr)),
      id_(std::exchange(other.id_, 0)),
      seq_(std::exchange(other.seq_, 0)),
      first_(std::exchange(other.first_, 0)),
      last_(std::exchange(other.last_, -1)),
      rank_(std::exchange(other.rank_, MPI_UNDEFINED)) {}

RangeComm& RangeComm::operator=(RangeComm&& other) noexcept {
  if (this != &other) {
    context_ = std::exchange(other.context_, nullptr);
    id_ = std::exchange(other.id_, 0);
    seq_ = std::exchange(other.seq_, 0);
    first_ = std::exchange(other.first_, 0);
    last_ = std::exchange(other.last_, -1);
    rank_ = std::exchange(other.rank_, MPI_UNDEFINED);
  }
  return *this;
}

void RangeComm::require_usable(const char* what) const {
  if (context_ == nullptr) {
    throw mpi::UsageError(std::string(what) + " on a null range communicator", MPI_ERR_COMM);
  }
}

RangeRequest RangeComm::start(int kind, void* buffer, int count, MPI_Datatype type, std::size_t element_size, int root,
                              Combine combine, MPI_Op op) {
  const int n = size();
  if (root < 0 || root >= n) {
    throw mpi::UsageError("range " + range_text(first_, last_) + ": root " + std::to_string(root) +
                              " is not a rank of the range (0.." + std::to_string(n - 1) + ")",
                          MPI_ERR_ROOT);
  }
  if (count < 0) throw mpi::UsageError("negative count " + std::to_string(count), MPI_ERR_COUNT);
  // Every member counts every operation, even when n == 1.
  const int tag = context_->tag_base_ + range_tag(first_, last_, seq_++);
  if (n == 1) return {};  // nothing to exchange: complete at once

  auto state = std::make_unique<RangeRequest::State>();
  state->context = context_;
  state->comm = context_->messages_.get();
  state->kind = kind;
  state->first = first_;
  state->n = n;
  state->root = root;
  state->v = (rank_ - root + n) % n;
  state->tag = tag;
  state->buffer = static_cast<unsigned char*>(buffer);
  state->count = count;
  state->type = type;
  state->bytes = element_size * static_cast<std::size_t>(count);
  state->combine = combine;
  state->op = op;

  context_->admit({state.get(), id_, tag, first_, last_});
  try {
    state->begin();
  } catch (...) {
    context_->retire(state.get());
    throw;
  }
  return RangeRequest(std::move(state));
}

RangeRequest RangeComm::ibcast(void* buffer, int count, MPI_Datatype type, int root) {
  require_usable("ibcast");
  return start(kBcast, buffer, count, type, 0, root, nullptr);
}

void RangeComm::bcast(void* buffer, int count, MPI_Datatype type, int root, std::chrono::microseconds nap) {
  ibcast(buffer, count, type, root).wait(nap);
}

RangeRequest RangeComm::ibarrier() {
  require_usable("ibarrier");
  return start(kAllreduce, nullptr, 0, MPI_BYTE, 0, 0, nullptr);
}

void RangeComm::barrier(std::chrono::microseconds nap) { ibarrier().wait(nap); }

RangeRequest RangeComm::iallreduce(std::span<std::int64_t> values, ReduceOp op) {
  require_usable("iallreduce");
  return start(kAllreduce, values.data(), static_cast<int>(values.size()), MPI_INT64_T, sizeof(std::int64_t), 0,
               combine_for<std::int64_t>(op));
}

RangeRequest RangeComm::iallreduce(std::span<double> values, ReduceOp op) {
  require_usable("iallreduce");
  return start(kAllreduce, values.data(), static_cast<int>(values.size()), MPI_DOUBLE, sizeof(double), 0,
               combine_for<double>(op));
}

void RangeComm::allreduce(std::span<std::int64_t> values, ReduceOp op, std::chrono::microseconds nap) {
  iallreduce(values, op).wait(nap);
}

void RangeComm::allreduce(std::span<double> values, ReduceOp op, std::chrono::microseconds nap) {
  iallreduce(values, op).wait(nap);
}

RangeRequest RangeComm::iallreduce(void* values, int count, MPI_Datatype type, MPI_Op op) {
  require_usable("iallreduce");
  return start(kAllreduce, values, count, type, static_cast<std::size_t>(mpi::extent_of(type)), 0, nullptr, op);
}

void RangeComm::gatherv(const void* mine, int count, void* all, const int* counts, const int* displacements,
                        MPI_Datatype type, int root, std::chrono::microseconds nap) {
  require_usable("gatherv");
  const int n = size();
  if (root < 0 || root >= n) {
    throw mpi::UsageError("range " + range_text(first_, last_) + ": root " + std::to_string(root) +
                              " is not a rank of the range (0.." + std::to_string(n - 1) + ")",
                          MPI_ERR_ROOT);
  }
  // A tag of the range's sequence, admitted as the trees' are, so no other operation of an overlapping range
  // can take these messages.
  const int tag = context_->tag_base_ + range_tag(first_, last_, seq_++);
  const MPI_Aint extent = mpi::extent_of(type);
  std::vector<MPI_Request> requests;
  const int marker = 0;
  context_->admit({&marker, id_, tag, first_, last_});
  try {
    if (rank_ == root) {
      auto* out = static_cast<unsigned char*>(all);
      for (int r = 0; r < n; ++r) {
        unsigned char* at = out + static_cast<std::ptrdiff_t>(displacements[r]) * extent;
        if (r == root) {
          if (counts[r] != count) {
            throw mpi::UsageError("gatherv: root's count " + std::to_string(count) + " differs from counts[root] " +
                                      std::to_string(counts[r]),
                                  MPI_ERR_COUNT);
          }
          if (count > 0) std::memcpy(at, mine, static_cast<std::size_t>(count) * static_cast<std::size_t>(extent));
          continue;
        }
        MPI_Request request = MPI_REQUEST_NULL;
        mpi::check(MPI_Irecv(at, counts[r], type, first_ + r, tag, context_->messages_.get(), &request), "MPI_Irecv");
        requests.push_back(request);
      }
    } else {
      MPI_Request request = MPI_REQUEST_NULL;
      mpi::check(MPI_Isend(mine, count, type, first_ + root, tag, context_->messages_.get(), &request), "MPI_Isend");
      requests.push_back(request);
    }
    mpi::wait_all_politely(requests, nap);
  } catch (...) {
    context_->retire(&marker);
    throw;
  }
  context_->retire(&marker);
}

int RangeComm::point_tag(int tag) const {
  require_usable("point-to-point");
  if constexpr (mpi::kSimulated) {
    if (tag < 0 || tag >= kSimulatedPointTagBase) {
      throw mpi::UsageError("tag " + std::to_string(tag) + " is not allowed on a simulated range (allowed: 0.." +
                                std::to_string(kSimulatedPointTagBase - 1) + ")",
                            MPI_ERR_TAG);
    }
    return kSimulatedPointTagBase + tag;
  }
  mpi::check_tag(tag);
  return tag;
}

int RangeComm::peer(int rank, const char* what) const {
  if (rank < 0 || rank >= size()) {
    throw mpi::UsageError(
        "range " + range_text(first_, last_) + ": " + what + " " + std::to_string(rank) + " is not a rank of the range",
        MPI_ERR_RANK);
  }
  return first_ + rank;
}

void RangeComm::send(const void* data, int count, MPI_Datatype type, int dest, int tag) const {
  const int t = point_tag(tag);
  mpi::send_politely(context_->points_.get(), data, count, type, peer(dest, "destination"), t);
}

void RangeComm::recv(void* data, int count, MPI_Datatype type, int source, int tag) const {
  const int t = point_tag(tag);
  mpi::recv_politely(context_->points_.get(), data, count, type, peer(source, "source"), t);
}

int RangeComm::probe_count(int source, int tag, MPI_Datatype type) const {
  const int t = point_tag(tag);
  return mpi::probe_count_politely(context_->points_.get(), peer(source, "source"), t, type);
}

mpi::Comm RangeComm::to_mpi(int tag) const {
  require_usable("to_mpi");
  mpi::check_tag(tag);
  int ranges[1][3] = {{first_, last_, 1}};
  MPI_Group members = MPI_GROUP_NULL;
  mpi::check(MPI_Group_range_incl(context_->group_.get(), 1, ranges, &members), "MPI_Group_range_incl");
  const mpi::Group owned(members);
  MPI_Comm comm = MPI_COMM_NULL;
  mpi::check(MPI_Comm_create_group(context_->creation_.get(), owned.get(), tag, &comm), "MPI_Comm_create_group");
  return mpi::Comm::adopt(comm);
}

void RangeComm::free() {
  if (context_ != nullptr && context_->owner_busy(id_)) {
    throw mpi::UsageError("range " + range_text(first_, last_) + " freed while one of its operations is in flight",
                          MPI_ERR_PENDING);
  }
  context_ = nullptr;
  id_ = 0;
  seq_ = 0;
  first_ = 0;
  last_ = -1;
  rank_ = MPI_UNDEFINED;
}

}  // namespace mcmclb
