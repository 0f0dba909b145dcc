// SPDX-License-Identifier: BSD-3-Clause
// Method `create`: MPI_Comm_create, parent-collective (every parent rank calls it, each with its own group).
#include "method.hpp"
#include "smpi_patterns.hpp"

namespace mcmclb {

namespace {

class CreateCreator final : public CommCreator {
 public:
  CreateCreator(const MethodInfo& info, const mpi::Comm& parent)
      : CommCreator(info, parent), bridge_(simulation_bridge(parent)) {}

 protected:
  mpi::Comm do_create(const mpi::Group& group, std::span<const int> parent_ranks, int group_rank, int tag) override {
    if constexpr (mpi::kSimulated) {
      smpi_patterns::comm_create(bridge_, tag);
      return group_rank == MPI_UNDEFINED ? mpi::Comm{} : take_from_simulator(bridge_, parent_ranks, tag);
    }
    MPI_Comm out = MPI_COMM_NULL;
    mpi::check(MPI_Comm_create(parent().get(), group.get(), &out), "MPI_Comm_create");
    return mpi::Comm::adopt(out);
  }

 private:
  mpi::Comm bridge_;
};

}  // namespace

CreationMethod create_method() {
  return {.info = {.name = "create", .group_collective = false}, .make_comm = make_creator<CreateCreator>};
}

}  // namespace mcmclb
