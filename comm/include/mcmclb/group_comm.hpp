// SPDX-License-Identifier: BSD-3-Clause
// Group communicators of every creation method behind one interface, and the one factory that makes their
// creators (after RBC's Comm, which keeps MPI and range communicators behind one type). A method's communicator is
// an MPI communicator (the CommCreator methods of mcmclb/comm_create.hpp, wrapped here) or not (`range`:
// point-to-point collectives over a duplicate of the parent, mcmclb/range_comm.hpp). The walker kernel and
// mcmclb-commbench both create through make_group_comm_creator(). Not to be confused with mcmclb/group_comm.h,
// the C entry point to Algorithm 1.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "mcmclb/comm_create.hpp"
#include "mcmclb/mpi.hpp"

namespace mcmclb {

/// A started nonblocking group operation. Destroying one still in flight is only for error paths.
class PendingOp {
 public:
  virtual ~PendingOp() = default;
  /// Progresses the operation; true once it is complete.
  virtual bool test() = 0;
};

/// What a group's members need from the communicator over their group.
class GroupComm {
 public:
  virtual ~GroupComm() = default;
  [[nodiscard]] virtual int size() const = 0;
  [[nodiscard]] virtual int rank() const = 0;
  /// Starts broadcasting words from root (words must stay alive until the operation completes).
  [[nodiscard]] virtual std::unique_ptr<PendingOp> ibcast(std::span<int64_t> words, int root) = 0;
  /// Broadcasts words from root, waiting politely (nap: the pause between tests). The default starts ibcast() and
  /// waits for it; an MPI communicator overrides it with mpi::bcast_politely (blocking in simulation).
  virtual void bcast(std::span<int64_t> words, int root, std::chrono::microseconds nap = mpi::default_nap);
  virtual void barrier() = 0;
  /// Sums values over the group, in place.
  virtual void allreduce_sum(std::span<int64_t> values) = 0;
  /// Starts summing values over the group, in place (values must stay alive until the operation completes). The
  /// default completes at once through allreduce_sum(); a method with a nonblocking reduction overrides it, so
  /// callers in lockstep (compute mode's energy sums) can wait with a shorter nap than allreduce_sum's.
  [[nodiscard]] virtual std::unique_ptr<PendingOp> iallreduce_sum(std::span<int64_t> values);
  /// Frees the communicator (collective over the group). Freeing again does nothing.
  virtual void free() = 0;
};

/// Creates group communicators by one method, over groups of the parent's ranks.
class GroupCommCreator {
 public:
  virtual ~GroupCommCreator() = default;
  GroupCommCreator(const GroupCommCreator&) = delete;
  GroupCommCreator& operator=(const GroupCommCreator&) = delete;

  [[nodiscard]] const MethodInfo& info() const noexcept { return info_; }
  [[nodiscard]] std::string_view name() const noexcept { return info_.name; }
  /// True when only the group's members take part in create().
  [[nodiscard]] bool group_collective() const noexcept { return info_.group_collective; }
  /// The communicator over members (ranks of the parent, in order); null for callers outside members.
  [[nodiscard]] virtual std::unique_ptr<GroupComm> create(const mpi::Group& members, int tag) = 0;
  /// The communicator over the contiguous parent ranks [first, last], called by those ranks (and, for a
  /// parent-collective method, by every other parent rank through create() with an empty group). The kernel's
  /// groups are always such ranges, so a method that can create from the bounds alone (contiguous_only; range:
  /// O(1), no message) skips building an MPI group; the others build the group here.
  [[nodiscard]] virtual std::unique_ptr<GroupComm> create_range(int first, int last, int tag) = 0;

 protected:
  explicit GroupCommCreator(const MethodInfo& info) : info_(info) {}

 private:
  MethodInfo info_;
};

/// The names of every creation method (creation_methods()), in table order.
std::vector<std::string_view> group_comm_method_names();

/// Collective over parent: the creator for method name, whichever kind of communicator it makes. Unknown name:
/// mpi::UsageError listing the known ones; a method this library does not support: mpi::UsageError saying so.
std::unique_ptr<GroupCommCreator> make_group_comm_creator(std::string_view method, const mpi::Comm& parent);

}  // namespace mcmclb
