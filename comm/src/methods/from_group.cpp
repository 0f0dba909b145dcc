// SPDX-License-Identifier: BSD-3-Clause
// Method `from_group`: MPI_Comm_create_from_group (MPI-4; detected at configure time), group-collective. The
// simulation build replays what MPICH 4.0.2 does for it, since SMPI reports MPI 3.1.
#include "method.hpp"
#include "smpi_patterns.hpp"

namespace mcmclb {

namespace {

constexpr bool kSupported = MCMCLB_HAVE_COMM_CREATE_FROM_GROUP != 0 || mpi::kSimulated;

#if MCMCLB_HAVE_COMM_CREATE_FROM_GROUP
class FromGroupCreator final : public CommCreator {
 public:
  FromGroupCreator(const MethodInfo& info, const mpi::Comm& parent) : CommCreator(info, parent) {}

 protected:
  mpi::Comm do_create(const mpi::Group& group, std::span<const int>, int, int tag) override {
    // The string tag plays the role of the integer tag: concurrent creations over overlapping groups must
    // differ in it, exactly as the integer tag of the other methods.
    const std::string string_tag = "mcmclb.from_group." + std::to_string(tag);
    MPI_Comm out = MPI_COMM_NULL;
    mpi::check(MPI_Comm_create_from_group(group.get(), string_tag.c_str(), MPI_INFO_NULL, MPI_ERRORS_RETURN, &out),
               "MPI_Comm_create_from_group");
    return mpi::Comm::adopt(out);
  }
};
#endif

/// The simulation build's from_group (SMPI has no MPI_Comm_create_from_group): what MPICH 4.0.2 does for it,
/// create_group over MPI_COMM_WORLD (MPIR_Comm_create_from_group_impl), here on a view of WORLD
/// (simulation_bridge: a duplicate would cost SMPI O(P) bytes per simulated rank).
class SimulatedFromGroupCreator final : public CommCreator {
 public:
  SimulatedFromGroupCreator(const MethodInfo& info, const mpi::Comm& parent)
      : CommCreator(info, parent),
        world_(simulation_bridge(mpi::Comm::world())),
        world_group_(world_.group()),
        parent_group_(parent.group()) {}

 protected:
  mpi::Comm do_create(const mpi::Group&, std::span<const int> parent_ranks, int group_rank, int tag) override {
    const std::vector<int> world_ranks = parent_group_.translate(parent_ranks, world_group_);
    smpi_patterns::comm_create_group(world_, world_ranks, group_rank, tag);
    return take_from_simulator(world_, world_ranks, tag);
  }

 private:
  mpi::Comm world_;
  mpi::Group world_group_;
  mpi::Group parent_group_;
};

std::unique_ptr<CommCreator> make_from_group([[maybe_unused]] const MethodInfo& info,
                                             [[maybe_unused]] const mpi::Comm& parent) {
  if constexpr (mpi::kSimulated) return std::make_unique<SimulatedFromGroupCreator>(info, parent);
#if MCMCLB_HAVE_COMM_CREATE_FROM_GROUP
  return std::make_unique<FromGroupCreator>(info, parent);
#else
  // Not reached: the factory refuses an unsupported method before making its creator.
  throw mpi::UsageError("method from_group: " + unsupported_reason(info), MPI_ERR_UNSUPPORTED_OPERATION);
#endif
}

}  // namespace

bool from_group_supported() noexcept { return kSupported; }

CreationMethod from_group_method() {
  return {.info = {.name = "from_group",
                   .group_collective = true,
                   .supported = kSupported,
                   .needs = "MPI_Comm_create_from_group (MPI-4)"},
          .make_comm = make_from_group};
}

}  // namespace mcmclb
