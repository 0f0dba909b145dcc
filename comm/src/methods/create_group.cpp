// SPDX-License-Identifier: BSD-3-Clause
// Method `create_group`: MPI_Comm_create_group (MPI-3), group-collective.
//
// MPI says the tag "does not conflict with tags used in point-to-point communication" (MPI-3.1 Sect. 6.4.2), and
// MPICH keeps it apart (its creation messages carry a tag bit above MPI_TAG_UB). Open MPI does not: in 4.1.4
// (and, by their source, in 5.0.0 and on its main branch) ompi_comm_create_group hands the tag to ompi_comm_nextcid
// and ompi_comm_activate, whose allreduce over the group (ompi_comm_allreduce_group_nb, comm_cid.c) is a tree of
// plain isend/irecv on the parent with that very tag. A user's message on the parent with the same tag from a
// member is then taken as a context id, and the creation's message as the user's: the members disagree on the
// id, one returns and the other waits in ompi_comm_nextcid forever (seen with Open MPI 4.1.4 at 2 ranks). So under
// Open MPI the creations run on a private duplicate of the parent, made once with the creator (make_comm_creator
// is collective over the parent): the result is the same communicator over the same group, and nothing the user
// sends on the parent can meet the creation's messages. Elsewhere the parent itself, as MPI promises it is safe.
#include "method.hpp"
#include "smpi_patterns.hpp"

namespace mcmclb {

namespace {

#ifdef OPEN_MPI
constexpr bool kCreationTagIsPointToPointTag = true;
#else
constexpr bool kCreationTagIsPointToPointTag = false;
#endif

class CreateGroupCreator final : public CommCreator {
 public:
  CreateGroupCreator(const MethodInfo& info, const mpi::Comm& parent)
      : CommCreator(info, parent),
        bridge_(simulation_bridge(parent)),
        creation_(kCreationTagIsPointToPointTag ? parent.dup() : mpi::Comm::view(parent.get())) {}

 protected:
  mpi::Comm do_create(const mpi::Group& group, std::span<const int> parent_ranks, int group_rank, int tag) override {
    if constexpr (mpi::kSimulated) {
      smpi_patterns::comm_create_group(bridge_, parent_ranks, group_rank, tag);
      return take_from_simulator(bridge_, parent_ranks, tag);
    }
    // group is a group of parent's ranks, and the duplicate has the parent's group: the same ranks.
    MPI_Comm out = MPI_COMM_NULL;
    mpi::check(MPI_Comm_create_group(creation_.get(), group.get(), tag, &out), "MPI_Comm_create_group");
    return mpi::Comm::adopt(out);
  }

 private:
  mpi::Comm bridge_;
  mpi::Comm creation_;  // the communicator MPI_Comm_create_group runs on: the parent, or under Open MPI its duplicate
};

}  // namespace

CreationMethod create_group_method() {
  return {.info = {.name = "create_group", .group_collective = true}, .make_comm = make_creator<CreateGroupCreator>};
}

}  // namespace mcmclb
