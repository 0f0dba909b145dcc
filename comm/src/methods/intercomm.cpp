// SPDX-License-Identifier: BSD-3-Clause
// Method `intercomm`: the paper's Algorithm 1 (intercomm_create_merge), group-collective. Its leaders handshake
// on a private duplicate of the parent made once, when the creator is made, so a handshake can never match a
// user's message on the parent, whatever tag the user picks. The simulation build replays them on the parent
// itself (simulation_bridge: a duplicate of WORLD costs SMPI O(P) bytes per simulated rank).
#include "method.hpp"
#include "smpi_patterns.hpp"

namespace mcmclb {

namespace {

class IntercommCreator final : public CommCreator {
 public:
  IntercommCreator(const MethodInfo& info, const mpi::Comm& parent)
      : CommCreator(info, parent), bridge_(mpi::kSimulated ? simulation_bridge(parent) : parent.dup()) {}

 protected:
  mpi::Comm do_create(const mpi::Group&, std::span<const int> parent_ranks, int group_rank, int tag) override {
    return intercomm_create_merge(bridge_, parent_ranks, group_rank, tag);
  }

 private:
  mpi::Comm bridge_;
};

}  // namespace

CreationMethod intercomm_method() {
  return {.info = {.name = "intercomm", .group_collective = true}, .make_comm = make_creator<IntercommCreator>};
}

mpi::Comm intercomm_create_merge(const mpi::Comm& bridge, std::span<const int> parent_ranks, int group_rank, int tag) {
  if constexpr (mpi::kSimulated) {
    // SMPI aborts in MPI_Intercomm_create/merge: replay the messages MPICH 4.0.2 sends for Algorithm 1, then take
    // the communicator over the whole group from the simulator in one step (docs/reference/mpich-patterns.md).
    smpi_patterns::intercomm_create_merge(bridge, parent_ranks, group_rank, tag);
    return take_from_simulator(bridge, parent_ranks, tag);
  }
  const int group_size = static_cast<int>(parent_ranks.size());
  // Start from a private copy of MPI_COMM_SELF. Not MPI_Comm_dup: a dup is collective over MPI_COMM_SELF, and
  // threads of one process calling it concurrently make the program erroneous. MPI_Comm_create_group is the
  // constructor MPI-4.1 Sect. 8.4.2 lets threads call concurrently: "If multiple threads at a given MPI process
  // perform concurrent MPI_COMM_CREATE_GROUP operations, the user must distinguish these operations by providing
  // different tag or comm arguments" -- the caller's distinct tag does exactly that.
  const mpi::Group self_group = mpi::Comm::self().group();
  MPI_Comm self_copy = MPI_COMM_NULL;
  mpi::check(MPI_Comm_create_group(MPI_COMM_SELF, self_group.get(), tag, &self_copy), "MPI_Comm_create_group");
  mpi::Comm current = mpi::Comm::adopt(self_copy);
  for (int merge_size = 1; merge_size < group_size; merge_size *= 2) {
    const int block = group_rank / merge_size;  // the paper's gid: this caller's block of merge_size members
    int remote_leader = -1;
    int high = 0;
    if (block % 2 == 0) {
      if ((block + 1) * merge_size >= group_size) continue;  // no right neighbour: join in a later round
      remote_leader = parent_ranks[static_cast<std::size_t>((block + 1) * merge_size)];
      high = 0;  // LOW: our block keeps the lower ranks
    } else {
      remote_leader = parent_ranks[static_cast<std::size_t>((block - 1) * merge_size)];
      high = 1;
    }
    MPI_Comm inter = MPI_COMM_NULL;
    mpi::check(MPI_Intercomm_create(current.get(), 0, bridge.get(), remote_leader, tag, &inter),
               "MPI_Intercomm_create");
    mpi::Comm inter_owned = mpi::Comm::adopt(inter);
    MPI_Comm merged = MPI_COMM_NULL;
    mpi::check(MPI_Intercomm_merge(inter, high, &merged), "MPI_Intercomm_merge");
    current = mpi::Comm::adopt(merged);  // frees the previous intracommunicator; inter_owned frees at scope end
  }
  return current;
}

}  // namespace mcmclb
