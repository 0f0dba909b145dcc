// SPDX-License-Identifier: BSD-3-Clause
// CommCreator's checks before any communication, and what the MPI-communicator methods (comm/src/methods/)
// share: the parent ranks of a group and, in the simulation build, the bridge and the communicator taken from
// the simulator.
#include "mcmclb/comm_create.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "methods/method.hpp"

namespace mcmclb {

CommCreator::CommCreator(const MethodInfo& info, const mpi::Comm& parent)
    : info_(info), parent_(mpi::Comm::view(parent.get())), parent_group_(parent.group()) {}

mpi::Comm CommCreator::create(const mpi::Group& group, int tag) {
  mpi::check_tag(tag);
  const int group_rank = group.rank();
  if (group_rank == MPI_UNDEFINED && group_collective()) return {};  // outside: no communication at all
  return checked(do_create(group, parent_ranks_of(group, parent_group_, name()), group_rank, tag), group_rank);
}

mpi::Comm CommCreator::create_range(int first, int last, int tag) {
  std::vector<int> parent_ranks(static_cast<std::size_t>(std::max(0, last - first + 1)));
  std::iota(parent_ranks.begin(), parent_ranks.end(), first);
  if constexpr (!mpi::kSimulated) return create(mpi::Group::include(parent_group_, parent_ranks), tag);
  mpi::check_tag(tag);
  if (!parent_ranks.empty() && (first < 0 || last >= parent_.size())) {
    throw mpi::UsageError(std::string(name()) + ": the range " + std::to_string(first) + ".." + std::to_string(last) +
                              " is not within the parent communicator's " + std::to_string(parent_.size()) + " ranks",
                          MPI_ERR_GROUP);
  }
  const int me = parent_.rank();
  const int group_rank = me >= first && me <= last ? me - first : MPI_UNDEFINED;
  if (group_rank == MPI_UNDEFINED && group_collective()) return {};
  return checked(do_create(mpi::Group{}, parent_ranks, group_rank, tag), group_rank);
}

mpi::Comm CommCreator::checked(mpi::Comm made, int group_rank) const {
  // A member must get a communicator. MPICH 4.0.2's MPI_Comm_create_from_group returns MPI_SUCCESS with
  // MPI_COMM_NULL once its context ids have run out; taken as a communicator, that null would fail at its first
  // use, far from the cause, or count as a creation that worked.
  if (group_rank != MPI_UNDEFINED && made.is_null()) {
    throw mpi::Error(std::string(name()) + " gave a member of the group MPI_COMM_NULL without an error", MPI_ERR_COMM,
                     std::source_location::current());
  }
  return made;
}

std::vector<int> parent_ranks_of(const mpi::Group& group, const mpi::Group& parent_group, std::string_view who) {
  std::vector<int> parent_ranks = group.translate_all(parent_group);
  if (std::find(parent_ranks.begin(), parent_ranks.end(), MPI_UNDEFINED) != parent_ranks.end()) {
    throw mpi::UsageError(std::string(who) + ": the group is not a subset of the parent communicator's group",
                          MPI_ERR_GROUP);
  }
  return parent_ranks;
}

mpi::Comm simulation_bridge(const mpi::Comm& parent) {
  // A view, not a duplicate: SMPI keeps per-rank tables over every rank of each communicator, so a duplicate of
  // a WORLD-sized parent costs each simulated rank O(P) bytes, O(P^2) over the run's one process. The replayed
  // messages then share the parent's context: see method.hpp for why the tags keep them apart.
  return mpi::kSimulated ? mpi::Comm::view(parent.get()) : mpi::Comm{};
}

namespace {

/// The group objects of the communicators the simulator is making, one per communicator, shared by its members.
/// SMPI 3.32's group keeps a table indexed by process id up to its highest member's (Group::set_mapping), so a
/// group of four ranks near the end of WORLD costs about 4 bytes x P; one copy per member made every group
/// communicator cost each simulated rank O(P) bytes, O(P^2) over the run's one process. A group is never changed
/// once made and the simulated ranks share one address space (-no-privatize), so the members can use one object:
/// each communicator holds its own reference (MPI_Comm_create refs the group), and the table drops its reference
/// once every member has taken the group. Members of a key are interchangeable (same members, same group), so a
/// member that takes twice before a slow member's first take only moves that take to a fresh entry.
class SharedGroups {
 public:
  /// The group over members (bridge ranks), made by the first member to arrive; a view that stays valid until the
  /// caller's MPI_Comm_create_group has taken its own reference.
  MPI_Group take(const mpi::Comm& bridge, std::span<const int> members, int tag) {
    const std::scoped_lock lock(mutex_);
    Key key{tag, std::vector<int>(members.begin(), members.end())};
    auto it = entries_.find(key);
    if (it == entries_.end()) {
      it = entries_.emplace(std::move(key), Entry{mpi::Group::include(bridge.group(), members), 0}).first;
    }
    return it->second.group.get();
  }
  /// After the caller's MPI_Comm_create_group: the table's reference goes once every member has been through.
  void taken(std::span<const int> members, int tag) {
    const std::scoped_lock lock(mutex_);
    const auto it = entries_.find(Key{tag, std::vector<int>(members.begin(), members.end())});
    if (it != entries_.end() && ++it->second.takes == members.size()) entries_.erase(it);
  }

 private:
  using Key = std::pair<int, std::vector<int>>;
  struct Entry {
    mpi::Group group;
    std::size_t takes = 0;
  };
  std::mutex mutex_;
  std::map<Key, Entry> entries_;
};

}  // namespace

mpi::Comm take_from_simulator(const mpi::Comm& bridge, std::span<const int> members, int tag) {
  static SharedGroups shared;
  const MPI_Group group = shared.take(bridge, members, tag);
  MPI_Comm out = MPI_COMM_NULL;
  mpi::check(MPI_Comm_create_group(bridge.get(), group, tag, &out), "MPI_Comm_create_group");
  shared.taken(members, tag);
  return mpi::Comm::adopt(out);
}

}  // namespace mcmclb
