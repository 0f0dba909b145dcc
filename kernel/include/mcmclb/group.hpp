// The kernel's view of the communicator over its walker group, and of the method that creates it. The five
// methods of mcmclb::comm's CommCreator yield MPI communicators (wrapped in group.cpp); a method whose result is
// not an MPI communicator (issue 10's `range`: point-to-point collectives over a duplicate of the parent,
// kernel/src/range_group.cpp) implements GroupComm and GroupCommCreator and is one line of kGroupMethods in
// group.cpp.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "mcmclb/mpi.hpp"

namespace mcmclb {

/// A started nonblocking group operation.
class PendingOp {
 public:
  virtual ~PendingOp() = default;
  /// Progresses the operation; true once it is complete.
  virtual bool test() = 0;
};

/// What the kernel needs from its group's communicator.
class GroupComm {
 public:
  virtual ~GroupComm() = default;
  [[nodiscard]] virtual int size() const = 0;
  [[nodiscard]] virtual int rank() const = 0;
  /// Starts broadcasting words from root (words must stay alive until the operation completes).
  [[nodiscard]] virtual std::unique_ptr<PendingOp> ibcast(std::span<int64_t> words, int root) = 0;
  /// Broadcasts words from root, waiting as mcmclb/pace.hpp waits (nap: the pause between tests).
  void bcast(std::span<int64_t> words, int root, std::chrono::microseconds nap = mpi::default_nap);
  virtual void barrier() = 0;
  /// Sums values over the group, in place.
  virtual void allreduce_sum(std::span<int64_t> values) = 0;
  /// Starts summing values over the group, in place (values must stay alive until the operation completes). The
  /// default completes at once through allreduce_sum(); a method with a nonblocking reduction overrides it, so
  /// callers in lockstep (compute mode's energy sums) can wait with a shorter nap than allreduce_sum's.
  [[nodiscard]] virtual std::unique_ptr<PendingOp> iallreduce_sum(std::span<int64_t> values);
  /// Frees the communicator (collective over the group).
  virtual void free() = 0;
};

/// Creates group communicators by one method, over groups of the parent's ranks.
class GroupCommCreator {
 public:
  virtual ~GroupCommCreator() = default;
  [[nodiscard]] virtual std::string_view name() const noexcept = 0;
  /// True when only the group's members take part in create().
  [[nodiscard]] virtual bool group_collective() const noexcept = 0;
  /// The communicator over members (ranks of the parent, in order); null for callers outside members.
  [[nodiscard]] virtual std::unique_ptr<GroupComm> create(const mpi::Group& members, int tag) = 0;
  /// The communicator over the contiguous parent ranks [first, last], called by those ranks (and, for a
  /// parent-collective method, by every other parent rank through create() with an empty group). The kernel's
  /// groups are always such ranges, so a method that can create from the bounds alone (range: O(1), no message)
  /// skips building an MPI group.
  [[nodiscard]] virtual std::unique_ptr<GroupComm> create_range(int first, int last, int tag) = 0;
};

/// The methods make_group_comm_creator() knows, in a fixed order: those of mcmclb::comm, then those of
/// kGroupMethods (group.cpp).
std::vector<std::string_view> group_comm_method_names();

/// Collective over parent: the creator for method name (a name of comm_creator_names(), backed by an MPI
/// communicator, or of kGroupMethods). Unknown name: mpi::UsageError listing the known ones.
std::unique_ptr<GroupCommCreator> make_group_comm_creator(std::string_view method, const mpi::Comm& parent);

/// Method `range` (kernel/src/range_group.cpp): RBC-style range communicators (mcmclb/range_comm.hpp), created
/// locally in O(1). Collective over parent (makes the shared RangeContext: two duplicates of parent).
std::unique_ptr<GroupCommCreator> make_range_group_comm_creator(const mpi::Comm& parent);

}  // namespace mcmclb
