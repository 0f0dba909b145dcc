// SPDX-License-Identifier: BSD-3-Clause
// Method `split`: MPI_Comm_split with colour = membership and key = position in the group, parent-collective.
#include <algorithm>

#include "method.hpp"
#include "smpi_patterns.hpp"

namespace mcmclb {

namespace {

class SplitCreator final : public CommCreator {
 public:
  SplitCreator(const MethodInfo& info, const mpi::Comm& parent)
      : CommCreator(info, parent), bridge_(simulation_bridge(parent)) {}

 protected:
  mpi::Comm do_create(const mpi::Group&, std::span<const int> parent_ranks, int group_rank, int tag) override {
    // Disjoint groups get distinct colours: the smallest parent rank of each group is unique to it.
    const int color =
        group_rank == MPI_UNDEFINED ? MPI_UNDEFINED : *std::min_element(parent_ranks.begin(), parent_ranks.end());
    const int key = group_rank == MPI_UNDEFINED ? 0 : group_rank;
    if constexpr (mpi::kSimulated) {
      smpi_patterns::comm_split(bridge_, color, key, tag);
      return group_rank == MPI_UNDEFINED ? mpi::Comm{} : take_from_simulator(bridge_, parent_ranks, tag);
    }
    MPI_Comm out = MPI_COMM_NULL;
    mpi::check(MPI_Comm_split(parent().get(), color, key, &out), "MPI_Comm_split");
    return mpi::Comm::adopt(out);
  }

 private:
  mpi::Comm bridge_;
};

}  // namespace

CreationMethod split_method() {
  return {.info = {.name = "split", .group_collective = false}, .make_comm = make_creator<SplitCreator>};
}

}  // namespace mcmclb
