// SPDX-License-Identifier: BSD-3-Clause
// What a creation method's file defines, and what method files share (private to comm/). A method NAME is
// comm/src/methods/NAME.cpp defining `CreationMethod NAME_method()` plus the line MCMCLB_METHOD(NAME) in
// methods.def; creation_methods.cpp builds the one table and the factories from that list.
#pragma once

#include <memory>
#include <span>

#include "mcmclb/comm_create.hpp"
#include "mcmclb/group_comm.hpp"
#include "mcmclb/mpi.hpp"

namespace mcmclb {

/// One entry of the method table: the facts, and how to make the method's creator over a parent. A method whose
/// result is an MPI communicator gives make_comm (the factory wraps it as a GroupCommCreator); any other method
/// gives make_group_comm. Both are collective over parent, and get info to hand to their creator.
struct CreationMethod {
  MethodInfo info;
  std::unique_ptr<CommCreator> (*make_comm)(const MethodInfo& info, const mpi::Comm& parent) = nullptr;
  std::unique_ptr<GroupCommCreator> (*make_group_comm)(const MethodInfo& info, const mpi::Comm& parent) = nullptr;
};

/// make_comm for a CommCreator whose constructor takes (info, parent).
template <typename Creator>
std::unique_ptr<CommCreator> make_creator(const MethodInfo& info, const mpi::Comm& parent) {
  return std::make_unique<Creator>(info, parent);
}

/// The group communicator over an MPI communicator's creator (mpi_group_comm.cpp).
std::unique_ptr<GroupCommCreator> wrap_mpi_creator(std::unique_ptr<CommCreator> creator);

/// The simulation build's communicator for the replayed messages: a view of the parent itself; none on real MPI.
/// Every replayed message names its source and the creation's tag (no wildcards), so it can only be taken by the
/// same creation as long as nothing else sends on the parent with that tag while creations are in flight. The
/// kernel creates on its control communicator with tags 7 and 8, which no balancer message uses (the balancers'
/// tags are balancers/src/protocol.hpp's Tag enum); commbench's parent carries only its creations (tag 11).
mpi::Comm simulation_bridge(const mpi::Comm& parent);

/// The simulation build's communicator for members (bridge ranks, in order): taken from SMPI with
/// MPI_Comm_create_group after the method's MPICH messages were replayed. SMPI's constructor adds one bcast over
/// the new group, which stands for MPICH's init_comm_seq bcast in MPIR_Comm_commit (docs/reference/mpich-patterns.md).
mpi::Comm take_from_simulator(const mpi::Comm& bridge, std::span<const int> members, int tag);

}  // namespace mcmclb
