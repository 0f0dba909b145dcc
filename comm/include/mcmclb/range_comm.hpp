// SPDX-License-Identifier: BSD-3-Clause
// Range communicators after Axtmann et al. (RBC, IPDPS 2018, Sect. V): the contiguous ranks [first, last] of a
// parent communicator, created locally in O(1) without any message. Their collectives (broadcast, barrier,
// allreduce, blocking and nonblocking) are binomial trees of point-to-point messages on one private duplicate
// of the parent, shared by every range over that parent. The tag scheme that keeps ranges apart is argued in
// range_comm.cpp, next to the code.
#pragma once

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "mcmclb/mpi.hpp"

namespace mcmclb {

/// Tags of range operations: a slot per range, a window of successive operations per slot.
inline constexpr int kRangeTagWindow = 16;    // operations of one range that may be in flight at once
inline constexpr int kRangeTagSlots = 2048;   // kRangeTagSlots * kRangeTagWindow - 1 == 32767, MPI's minimum UB
inline constexpr int kRangeMaxDistinct = 63;  // parents up to this size give every range its own slot

/// The tag of the operation with sequence number seq on range [first, last] (0 <= first <= last). Pure; the
/// same on every member, since members run a range's operations in the same order.
int range_tag(int first, int last, std::uint64_t seq) noexcept;

/// What every range over one parent shares: three private duplicates of the parent (one carries the ranges'
/// collective messages, one the MPI_Comm_create_group calls of to_mpi, one the members' point-to-point messages, so
/// none can match another's or the user's messages) and this rank's table of operations in flight. Not movable: ranges
/// and requests point at it, and it must outlive them.
class RangeContext {
 public:
  /// Collective over parent (every parent rank calls it): duplicates parent three times (the simulation build: views
  /// of it, its tags moved above every other tag used there; range_comm.cpp says why).
  explicit RangeContext(const mpi::Comm& parent);
  RangeContext(const RangeContext&) = delete;
  RangeContext& operator=(const RangeContext&) = delete;
  RangeContext(RangeContext&&) = delete;
  RangeContext& operator=(RangeContext&&) = delete;
  ~RangeContext() = default;

  [[nodiscard]] int parent_rank() const noexcept { return rank_; }
  [[nodiscard]] int parent_size() const noexcept { return size_; }
  /// The duplicate that carries the ranges' messages.
  [[nodiscard]] const mpi::Comm& comm() const noexcept { return messages_; }
  /// Operations started on this rank and not yet complete, over all ranges of this context.
  [[nodiscard]] std::size_t in_flight() const noexcept { return active_.size(); }

 private:
  friend class RangeComm;
  friend class RangeRequest;
  struct Active {
    const void* op;       // the operation's state, to retire it
    std::uint64_t owner;  // id of the RangeComm that started it
    int tag;
    int first;
    int last;
  };
  /// Records an operation about to start; throws mpi::UsageError if it would share a tag with one in flight
  /// on a range that shares two or more ranks with it (the rule the tag argument in range_comm.cpp needs).
  void admit(const Active& op);
  void retire(const void* op) noexcept;
  [[nodiscard]] bool owner_busy(std::uint64_t owner) const noexcept;

  mpi::Comm messages_;
  mpi::Comm creation_;
  mpi::Comm points_;  // the members' own point-to-point messages
  mpi::Group group_;  // of creation_, for to_mpi
  int tag_base_ = 0;  // added to range_tag() on messages_
  int rank_ = 0;
  int size_ = 0;
  std::uint64_t next_id_ = 1;
  std::vector<Active> active_;
};

enum class ReduceOp { sum, max, min };

/// A nonblocking range operation. test() progresses it (a tree node forwards only when it tests or waits);
/// wait() waits as mpi::wait_all_politely does (tests and naps in between, so a waiting rank leaves its core to
/// ranks that work; the simulation build blocks in MPI_Waitall instead). A default-made or
/// completed request is inactive. Destroying an active request first waits for it, since MPI still reads and
/// writes its buffers (during exception unwinding it is abandoned instead: the job is being aborted).
class RangeRequest {
 public:
  RangeRequest() noexcept;
  ~RangeRequest();
  RangeRequest(const RangeRequest&) = delete;
  RangeRequest& operator=(const RangeRequest&) = delete;
  RangeRequest(RangeRequest&& other) noexcept;
  RangeRequest& operator=(RangeRequest&& other) noexcept;

  /// Progresses the operation; true once it is complete on this rank (its results are then in the buffer).
  bool test();
  void wait(std::chrono::microseconds nap = mpi::default_nap);
  [[nodiscard]] bool active() const noexcept { return state_ != nullptr; }

  struct State;

 private:
  friend class RangeComm;
  explicit RangeRequest(std::unique_ptr<State> state) noexcept;
  std::unique_ptr<State> state_;
};

/// The parent ranks [first, last] as a communicator: range rank i is parent rank first + i. Creation, moves and
/// free() are local and O(1). Collective operations must be called by every member, in the same order on
/// every member (as MPI requires of collectives); besides that, a rank may interleave operations on any ranges
/// of the same context (see the tag rule at range_tag and RangeContext::admit). Move-only, like mpi::Comm.
class RangeComm {
 public:
  RangeComm() = default;
  /// Local, O(1), no message. Throws mpi::UsageError unless 0 <= first <= last < parent size and the calling
  /// rank is in [first, last].
  RangeComm(RangeContext& context, int first, int last);
  /// The whole parent.
  static RangeComm whole(RangeContext& context) { return {context, 0, context.parent_size() - 1}; }
  /// The range whose members are group's (a group of the parent, in its rank order). Local but O(|group|), for
  /// callers that hold an MPI group: throws mpi::UsageError (MPI_ERR_GROUP) if group is empty, has a member
  /// outside the parent, is not a contiguous ascending run of parent ranks, or does not contain the caller.
  static RangeComm from_group(RangeContext& context, const mpi::Group& group);

  ~RangeComm() = default;
  RangeComm(const RangeComm&) = delete;
  RangeComm& operator=(const RangeComm&) = delete;
  RangeComm(RangeComm&& other) noexcept;
  RangeComm& operator=(RangeComm&& other) noexcept;

  [[nodiscard]] bool is_null() const noexcept { return context_ == nullptr; }
  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] int size() const noexcept { return last_ - first_ + 1; }
  [[nodiscard]] int first() const noexcept { return first_; }
  [[nodiscard]] int last() const noexcept { return last_; }
  [[nodiscard]] bool contains_parent_rank(int parent_rank) const noexcept {
    return first_ <= parent_rank && parent_rank <= last_;
  }

  /// Broadcast of count elements of type from range rank root (MPI_Bcast semantics).
  [[nodiscard]] RangeRequest ibcast(void* buffer, int count, MPI_Datatype type, int root);
  void bcast(void* buffer, int count, MPI_Datatype type, int root, std::chrono::microseconds nap = mpi::default_nap);
  [[nodiscard]] RangeRequest ibarrier();
  void barrier(std::chrono::microseconds nap = mpi::default_nap);
  /// Element-wise reduction over the members, in place: on completion every member holds the same result.
  /// Doubles are combined in one fixed order that depends only on the range's size (own value, then the
  /// binomial subtrees in increasing distance), so results are bitwise equal on every member and every run.
  [[nodiscard]] RangeRequest iallreduce(std::span<std::int64_t> values, ReduceOp op);
  [[nodiscard]] RangeRequest iallreduce(std::span<double> values, ReduceOp op);
  void allreduce(std::span<std::int64_t> values, ReduceOp op, std::chrono::microseconds nap = mpi::default_nap);
  void allreduce(std::span<double> values, ReduceOp op, std::chrono::microseconds nap = mpi::default_nap);

  /// Element-wise reduction in place by any MPI operation (predefined or MPI_Op_create's), combined with
  /// MPI_Reduce_local in the same fixed order; op must live until the operation completes.
  [[nodiscard]] RangeRequest iallreduce(void* values, int count, MPI_Datatype type, MPI_Op op);
  /// MPI_Gatherv's meaning, by direct messages to root (linear: a group's sizes are small next to its parent).
  void gatherv(const void* mine, int count, void* all, const int* counts, const int* displacements, MPI_Datatype type,
               int root, std::chrono::microseconds nap = mpi::default_nap);
  /// Point to point between range ranks, on the context's own duplicate for them, so that they never match the
  /// collectives' messages. Tags are the user's (0 .. tag_ub, or 2^29 - 1 in the simulation build). As on a shared
  /// communicator, messages are not kept apart from those of an earlier range over the same ranks: receive every
  /// message a range sends before it is freed.
  void send(const void* data, int count, MPI_Datatype type, int dest, int tag) const;
  void recv(void* data, int count, MPI_Datatype type, int source, int tag) const;
  [[nodiscard]] int probe_count(int source, int tag, MPI_Datatype type) const;

  /// A real MPI communicator over the range (MPI_Comm_create_group over the context's creation duplicate),
  /// for code that needs one. Collective over the members only; tag separates concurrent calls as in MPI.
  [[nodiscard]] mpi::Comm to_mpi(int tag) const;

  /// Makes this null. Local. Throws mpi::UsageError if an operation this range started is still in flight.
  void free();

 private:
  RangeRequest start(int kind, void* buffer, int count, MPI_Datatype type, std::size_t element_size, int root,
                     void (*combine)(unsigned char*, const unsigned char*, int), MPI_Op op = MPI_OP_NULL);
  [[nodiscard]] int point_tag(int tag) const;
  /// The parent rank of range rank `rank`; mpi::UsageError naming `what` where it is not a rank of the range.
  [[nodiscard]] int peer(int rank, const char* what) const;
  void require_usable(const char* what) const;

  RangeContext* context_ = nullptr;
  std::uint64_t id_ = 0;
  std::uint64_t seq_ = 0;  // operations started on this range, the same count on every member
  int first_ = 0;
  int last_ = -1;
  int rank_ = MPI_UNDEFINED;
};

}  // namespace mcmclb
