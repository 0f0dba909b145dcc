// SPDX-License-Identifier: BSD-3-Clause
// Communicator creation methods: the one table of them (creation_methods(), each with the facts a caller needs),
// and CommCreator, the interface of the methods whose result is an MPI communicator: the paper's Algorithm 1
// (`intercomm`), MPI_Comm_create_group (`create_group`), MPI_Comm_create_from_group (`from_group`),
// MPI_Comm_create (`create`) and MPI_Comm_split (`split`). Every method, these and the others (`range`), is also a
// group communicator of mcmclb/group_comm.hpp, made by one factory there. A method is one file in
// comm/src/methods/ plus one line in comm/src/methods/methods.def.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "mcmclb/mpi.hpp"

namespace mcmclb {

/// What a caller needs to know about a creation method, before and without creating with it.
struct MethodInfo {
  std::string_view name;
  /// True when only the group's members take part in a creation; false when every rank of the parent does, each
  /// passing its own group (parent-collective; a rank that joins no group passes the empty group).
  bool group_collective = true;
  /// True when a group must be a contiguous ascending run of parent ranks. Such a method creates from the bounds
  /// (GroupCommCreator::create_range) without building an MPI group; other groups are an mpi::UsageError.
  bool contiguous_only = false;
  /// True when the result is an MPI communicator: make_comm_creator() knows the method too. The table sets it
  /// from the kind of factory the method's entry gives.
  bool mpi_communicator = false;
  /// False when this MPI library lacks what the method needs (from_group: MPI-4's MPI_Comm_create_from_group);
  /// making its creator is then an mpi::UsageError saying so (unsupported_reason()).
  bool supported = true;
  /// What the method needs of the MPI library beyond MPI-3.1, named when the library lacks it.
  std::string_view needs = {};
};

/// Every creation method, in the order users see them (comm/src/methods/methods.def).
std::span<const MethodInfo> creation_methods();

/// Why this build cannot use method: "" when it can, else one line naming what it needs and the library that lacks
/// it, e.g. "needs MPI_Comm_create_from_group (MPI-4), which Open MPI v4.1.4 (MPI 3.1) lacks". Every program says
/// this same line wherever it lists or refuses the method. Local; callable before MPI_Init.
std::string unsupported_reason(const MethodInfo& method);

/// Creates communicators over groups of one parent communicator.
///
/// Group-collective methods are called by the group's members only; parent-collective methods by every rank
/// of the parent, each passing the group it belongs to (disjoint groups may be created in one call). Callers
/// not in their group get a null communicator; with a group-collective method they do so without
/// communicating. Arguments are validated locally before any communication (tag range, group a subset of
/// the parent), so a bad argument raises mpi::UsageError on every caller instead of hanging. The tag must be the
/// same on every caller of one creation (as for MPI_Comm_create_group); that is not checked, and callers whose
/// tags differ may hang (MPI_Comm_create_group, and Algorithm 1's leaders, never match them).
class CommCreator {
 public:
  virtual ~CommCreator() = default;
  CommCreator(const CommCreator&) = delete;
  CommCreator& operator=(const CommCreator&) = delete;

  [[nodiscard]] const MethodInfo& info() const noexcept { return info_; }
  [[nodiscard]] std::string_view name() const noexcept { return info_.name; }
  /// True when only the group's members take part in create().
  [[nodiscard]] bool group_collective() const noexcept { return info_.group_collective; }

  /// The new communicator over group, ranks in the group's order; null for callers outside group.
  [[nodiscard]] mpi::Comm create(const mpi::Group& group, int tag);
  /// create() for the group of parent ranks first..last in that order (first > last: the empty group). The
  /// simulation build makes no MPI group for it: an SMPI group costs its maker about 4 bytes x the highest member's
  /// process id (Group::set_mapping), so one per simulated rank and creation was O(P^2) bytes in the run's one
  /// process; the simulated methods need only the parent ranks.
  [[nodiscard]] mpi::Comm create_range(int first, int last, int tag);

  [[nodiscard]] const mpi::Comm& parent() const noexcept { return parent_; }

 protected:
  CommCreator(const MethodInfo& info, const mpi::Comm& parent);

  /// Called on members (group-collective) or on every parent rank (parent-collective) after validation.
  /// parent_ranks[i] is the parent rank of the group's member i; group_rank is MPI_UNDEFINED for non-members.
  /// In the simulation build group may be null (create_range): the simulated methods use parent_ranks alone.
  virtual mpi::Comm do_create(const mpi::Group& group, std::span<const int> parent_ranks, int group_rank, int tag) = 0;

 private:
  mpi::Comm checked(mpi::Comm made, int group_rank) const;

  MethodInfo info_;
  mpi::Comm parent_;  // a view: the caller keeps the parent alive for the creator's lifetime
  mpi::Group parent_group_;
};

/// The names of the methods make_comm_creator() knows (those with mpi_communicator), in table order.
std::span<const std::string_view> comm_creator_names();

/// True when the MPI library provides MPI_Comm_create_from_group (detected at configure time), or in simulation.
bool from_group_supported() noexcept;

/// Collective over parent (every parent rank calls it): the creator for method name bound to parent.
/// `intercomm` duplicates parent here, once, so its handshakes can never match a user's message on parent, and so
/// does `create_group` under Open MPI, whose creation messages share parent's tags (methods/create_group.cpp).
/// Unknown name (or one whose result is not an MPI communicator) → mpi::UsageError listing the known names; a method
/// the library does not support → mpi::UsageError saying so (unsupported_reason()). Programs refuse such names from
/// their input first, as InputError.
std::unique_ptr<CommCreator> make_comm_creator(std::string_view name, const mpi::Comm& parent);

/// Parent ranks of group's members 0..size-1; throws mpi::UsageError (MPI_ERR_GROUP) naming who if a member
/// is not in parent_group. Local: no communication.
std::vector<int> parent_ranks_of(const mpi::Group& group, const mpi::Group& parent_group, std::string_view who);

/// Algorithm 1 of Dinan et al. (EuroMPI 2011): builds the communicator over the group whose member i has rank
/// parent_ranks[i] in bridge, by log2|group| rounds of MPI_Intercomm_create + MPI_Intercomm_merge starting
/// from a communicator over this process alone (MPI_Comm_create_group on MPI_COMM_SELF with tag). Collective over the
/// members only; leaders handshake on bridge with tag. Every intermediate communicator is freed. group_rank is this
/// caller's rank in the group (a member).
mpi::Comm intercomm_create_merge(const mpi::Comm& bridge, std::span<const int> parent_ranks, int group_rank, int tag);

}  // namespace mcmclb
