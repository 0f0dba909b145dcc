// Method `create_group`: MPI_Comm_create_group (MPI-3), group-collective.
#include "method.hpp"
#include "smpi_patterns.hpp"

namespace mcmclb {

namespace {

class CreateGroupCreator final : public CommCreator {
 public:
  CreateGroupCreator(const MethodInfo& info, const mpi::Comm& parent)
      : CommCreator(info, parent), bridge_(simulation_bridge(parent)) {}

 protected:
  mpi::Comm do_create(const mpi::Group& group, std::span<const int> parent_ranks, int group_rank, int tag) override {
    if constexpr (mpi::kSimulated) {
      smpi_patterns::comm_create_group(bridge_, parent_ranks, group_rank, tag);
      return take_from_simulator(bridge_, parent_ranks, tag);
    }
    MPI_Comm out = MPI_COMM_NULL;
    mpi::check(MPI_Comm_create_group(parent().get(), group.get(), tag, &out), "MPI_Comm_create_group");
    return mpi::Comm::adopt(out);
  }

 private:
  mpi::Comm bridge_;
};

}  // namespace

CreationMethod create_group_method() {
  return {.info = {.name = "create_group", .group_collective = true}, .make_comm = make_creator<CreateGroupCreator>};
}

}  // namespace mcmclb
