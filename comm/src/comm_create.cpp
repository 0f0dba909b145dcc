// CommCreator's checks before any communication, and what the MPI-communicator methods (comm/src/methods/)
// share: the parent ranks of a group and, in the simulation build, the bridge and the communicator taken from
// the simulator.
#include "mcmclb/comm_create.hpp"

#include <algorithm>

#include "methods/method.hpp"

namespace mcmclb {

CommCreator::CommCreator(const MethodInfo& info, const mpi::Comm& parent)
    : info_(info), parent_(mpi::Comm::view(parent.get())), parent_group_(parent.group()) {}

mpi::Comm CommCreator::create(const mpi::Group& group, int tag) {
  mpi::check_tag(tag);
  const int group_rank = group.rank();
  if (group_rank == MPI_UNDEFINED && group_collective()) return {};  // outside: no communication at all
  mpi::Comm made = do_create(group, parent_ranks_of(group, parent_group_, name()), group_rank, tag);
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

mpi::Comm take_from_simulator(const mpi::Comm& bridge, std::span<const int> members, int tag) {
  const mpi::Group group = mpi::Group::include(bridge.group(), members);
  MPI_Comm out = MPI_COMM_NULL;
  mpi::check(MPI_Comm_create_group(bridge.get(), group.get(), tag, &out), "MPI_Comm_create_group");
  return mpi::Comm::adopt(out);
}

}  // namespace mcmclb
