// SPDX-License-Identifier: BSD-3-Clause
// The communication MPICH 4.0.2 performs inside a communicator constructor, replayed with point-to-point
// messages so that the SMPI simulation build charges each creation method what MPICH charges
// (docs/reference/mpich-patterns.md cites the MPICH sources). SMPI cannot run some constructors (MPI_Intercomm_create
// and MPI_Intercomm_merge abort), and those it runs cost what SimGrid's implementation costs, not what MPICH's does; so
// the simulation build first replays MPICH's messages, then takes the communicator from SMPI.
//
// Every message travels on `bridge` (a private duplicate of the parent) with the caller's tag, between the
// bridge ranks listed in `members` (a member's index in that list is its rank in the collective).
#pragma once

#include <mpi.h>

#include <span>
#include <vector>

#include "mcmclb/mpi.hpp"

namespace mcmclb::smpi_patterns {

/// The context-id mask MPICH 4.0.2 allreduces (MPI_BAND) to agree on a new communicator's context id:
/// MPIR_MAX_CONTEXT_MASK = 64 words of 32 bits for 16-bit context ids, plus one flag word.
inline constexpr int kContextMaskWords = 64 + 1;

/// The bridge ranks taking part in a replayed collective, in its order: a list (member i is bridge rank list[i]),
/// or every rank of the bridge in rank order, which holds no list: at P simulated ranks a list of all of them
/// would cost each rank 4 x P bytes, O(P^2) over the simulation's one process.
class Members {
 public:
  Members(std::span<const int> list) noexcept  // NOLINT(google-explicit-constructor): a list is the common case
      : list_(list), size_(static_cast<int>(list.size())), everyone_(false) {}
  Members(const std::vector<int>& list) noexcept  // NOLINT(google-explicit-constructor)
      : Members(std::span<const int>(list)) {}
  static Members everyone(int size) noexcept { return Members(size); }
  [[nodiscard]] int size() const noexcept { return size_; }
  [[nodiscard]] int operator[](int index) const noexcept {
    return everyone_ ? index : list_[static_cast<std::size_t>(index)];
  }

 private:
  explicit Members(int size) noexcept : size_(size), everyone_(true) {}
  std::span<const int> list_;
  int size_ = 0;
  bool everyone_ = true;
};

/// Binomial-tree broadcast of count elements from members[root] (MPICH's MPIR_Bcast_intra_binomial shape).
void bcast(const mpi::Comm& bridge, Members members, int me, int root, void* buffer, int count, MPI_Datatype type,
           int tag);

/// Allreduce (MPI_BAND) of count ints by recursive doubling with MPICH's fold for non-powers of two
/// (MPII_Allreduce_group_intra's shape for short vectors).
void allreduce_band(const mpi::Comm& bridge, Members members, int me, int* values, int count, int tag);

/// Allgather of count ints per member by Bruck's algorithm (MPICH's MPIR_Allgather_intra_brucks; for powers of
/// two MPICH uses recursive doubling, which sends as many messages: size * ceil(log2 size) in all).
void allgather(const mpi::Comm& bridge, Members members, int me, const int* mine, int* all, int count, int tag);

/// MPI_Comm_create (MPIR_Comm_create_intra, comm_impl.c): one context-id mask allreduce over the whole parent
/// (bridge), members and non-members alike.
void comm_create(const mpi::Comm& bridge, int tag);

/// MPI_Comm_split (MPIR_Comm_split_impl, comm_split.c): allgather of {color, key} over the whole parent, then one
/// mask allreduce over the whole parent.
void comm_split(const mpi::Comm& bridge, int color, int key, int tag);

/// MPI_Comm_create_group (MPIR_Comm_create_group_impl, comm_impl.c): one mask allreduce over the group only
/// (MPII_Allreduce_group), point to point on the parent with the caller's tag. MPI_Comm_create_from_group is
/// exactly this over MPI_COMM_WORLD (MPIR_Comm_create_from_group_impl).
void comm_create_group(const mpi::Comm& bridge, std::span<const int> parent_ranks, int group_rank, int tag);

/// Algorithm 1's messages, as MPICH 4.0.2 sends them (intercomm create + merge in each of the ceil(log2 |g|)
/// rounds), among the group whose member i is bridge rank parent_ranks[i]; group_rank is the caller's index.
/// Returns nothing: the caller then takes the communicator from the simulator.
void intercomm_create_merge(const mpi::Comm& bridge, std::span<const int> parent_ranks, int group_rank, int tag);

}  // namespace mcmclb::smpi_patterns
