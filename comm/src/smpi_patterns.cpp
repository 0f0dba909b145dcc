// SPDX-License-Identifier: BSD-3-Clause
// MPICH 4.0.2's constructor messages replayed point to point (mcmclb/smpi_patterns.hpp).
#include "smpi_patterns.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace mcmclb::smpi_patterns {

namespace {

void send(const mpi::Comm& bridge, const void* buffer, int count, MPI_Datatype type, int dest, int tag) {
  mpi::check(MPI_Send(buffer, count, type, dest, tag, bridge.get()), "MPI_Send");
}

void recv(const mpi::Comm& bridge, void* buffer, int count, MPI_Datatype type, int source, int tag) {
  mpi::check(MPI_Recv(buffer, count, type, source, tag, bridge.get(), MPI_STATUS_IGNORE), "MPI_Recv");
}

/// The leaders' exchange of MPIC_Sendrecv: count elements each way with bridge rank peer.
template <typename T>
void swap_with(const mpi::Comm& bridge, int peer, std::vector<T>& mine, std::vector<T>& theirs, MPI_Datatype type,
               int tag) {
  mpi::check(MPI_Sendrecv(mine.data(), static_cast<int>(mine.size()), type, peer, tag, theirs.data(),
                          static_cast<int>(theirs.size()), type, peer, tag, bridge.get(), MPI_STATUS_IGNORE),
             "MPI_Sendrecv");
}

/// Bridge ranks of the members [first, last) of the group.
std::span<const int> block(std::span<const int> parent_ranks, int first, int last) {
  return parent_ranks.subspan(static_cast<std::size_t>(first), static_cast<std::size_t>(last - first));
}

}  // namespace

void bcast(const mpi::Comm& bridge, Members members, int me, int root, void* buffer, int count, MPI_Datatype type,
           int tag) {
  const int size = members.size();
  if (size < 2) return;
  const int relative = (me - root + size) % size;
  auto member = [&](int rel) { return members[(rel + root) % size]; };
  int mask = 1;
  while (mask < size) {  // receive from the parent: the rank that differs in our lowest set bit
    if (relative & mask) {
      recv(bridge, buffer, count, type, member(relative - mask), tag);
      break;
    }
    mask <<= 1;
  }
  for (mask >>= 1; mask > 0; mask >>= 1) {  // then send to the children below that bit
    if (relative + mask < size) send(bridge, buffer, count, type, member(relative + mask), tag);
  }
}

void allreduce_band(const mpi::Comm& bridge, Members members, int me, int* values, int count, int tag) {
  const int size = members.size();
  if (size < 2) return;
  std::vector<int> incoming(static_cast<std::size_t>(count));
  auto combine = [&] {
    for (int i = 0; i < count; ++i) values[i] &= incoming[static_cast<std::size_t>(i)];
  };
  auto member = [&](int index) { return members[index]; };
  int pof2 = 1;
  while (pof2 * 2 <= size) pof2 *= 2;
  const int rem = size - pof2;
  int new_rank = 0;
  if (me < 2 * rem) {  // fold the first 2*rem members pairwise so that a power of two remains
    if (me % 2 == 0) {
      send(bridge, values, count, MPI_INT, member(me + 1), tag);
      new_rank = -1;
    } else {
      recv(bridge, incoming.data(), count, MPI_INT, member(me - 1), tag);
      combine();
      new_rank = me / 2;
    }
  } else {
    new_rank = me - rem;
  }
  if (new_rank != -1) {
    for (int mask = 1; mask < pof2; mask <<= 1) {
      const int new_peer = new_rank ^ mask;
      const int peer = new_peer < rem ? new_peer * 2 + 1 : new_peer + rem;
      mpi::check(MPI_Sendrecv(values, count, MPI_INT, member(peer), tag, incoming.data(), count, MPI_INT, member(peer),
                              tag, bridge.get(), MPI_STATUS_IGNORE),
                 "MPI_Sendrecv");
      combine();
    }
  }
  if (me < 2 * rem) {  // unfold: the odd members return the result to their even partners
    if (me % 2 != 0) {
      send(bridge, values, count, MPI_INT, member(me - 1), tag);
    } else {
      recv(bridge, values, count, MPI_INT, member(me + 1), tag);
    }
  }
}

namespace {

/// Bruck's exchanges: on entry rotated[0, count) holds my block; on return rotated holds every member's block in
/// rotated order (my block first), size * count ints.
void bruck(const mpi::Comm& bridge, Members members, int me, int* rotated, int count, int tag) {
  const int size = members.size();
  const auto block = static_cast<std::size_t>(count);
  for (int have = 1; have < size; have *= 2) {
    const int blocks = std::min(have, size - have);
    mpi::check(MPI_Sendrecv(rotated, blocks * count, MPI_INT, members[(me - have + size) % size], tag,
                            rotated + block * static_cast<std::size_t>(have), blocks * count, MPI_INT,
                            members[(me + have) % size], tag, bridge.get(), MPI_STATUS_IGNORE),
               "MPI_Sendrecv");
  }
}

/// Simulation build: a buffer of at least `ints` ints that every simulated rank shares, for replayed messages
/// whose values nobody reads. MPICH's MPI_Comm_split allgathers every rank's {color, key}: 8 bytes x P on each
/// rank, which is nothing on a real machine and O(P^2) in the one process that holds every simulated rank (2.2
/// GiB of a 8192-rank run). The simulated ranks share one address space (-no-privatize) and SMPI copies a
/// message at delivery, so the ranks may send from and receive into the same bytes; within one message the
/// source and target blocks never overlap. A larger request gets a new buffer and the old one stays allocated,
/// since a rank blocked in an exchange may still point into it.
int* shared_scratch(std::size_t ints) {
  static std::mutex mutex;
  static std::vector<std::unique_ptr<int[]>> buffers;
  static std::size_t capacity = 0;
  const std::scoped_lock lock(mutex);
  if (ints > capacity) {
    capacity = std::max(ints, 2 * capacity);
    buffers.push_back(std::make_unique<int[]>(capacity));
  }
  return buffers.back().get();
}

}  // namespace

void allgather(const mpi::Comm& bridge, Members members, int me, const int* mine, int* all, int count, int tag) {
  const int size = members.size();
  const auto block = static_cast<std::size_t>(count);
  // Bruck: gather in rotated order (my block first), doubling the blocks held each step, then rotate back.
  std::vector<int> rotated(block * static_cast<std::size_t>(size));
  std::copy_n(mine, count, rotated.begin());
  bruck(bridge, members, me, rotated.data(), count, tag);
  for (int i = 0; i < size; ++i) {
    const auto from = block * static_cast<std::size_t>(i);
    const auto to = block * static_cast<std::size_t>((me + i) % size);
    std::copy_n(rotated.begin() + static_cast<std::ptrdiff_t>(from), count, all + to);
  }
}

namespace {

void mask_allreduce(const mpi::Comm& bridge, Members members, int me, int tag) {
  std::array<int, kContextMaskWords> mask{};
  mask.fill(-1);
  allreduce_band(bridge, members, me, mask.data(), kContextMaskWords, tag);
}

}  // namespace

void comm_create(const mpi::Comm& bridge, int tag) {
  mask_allreduce(bridge, Members::everyone(bridge.size()), bridge.rank(), tag);
}

void comm_split(const mpi::Comm& bridge, int color, int key, int tag) {
  const Members everyone = Members::everyone(bridge.size());
  const std::array<int, 2> mine{color, key};
  if constexpr (mpi::kSimulated) {
    // The split's communicator is taken from the simulator afterwards: the gathered values are never read.
    int* rotated = shared_scratch(2 * static_cast<std::size_t>(everyone.size()));
    bruck(bridge, everyone, bridge.rank(), rotated, 2, tag);
  } else {
    std::vector<int> all(2 * static_cast<std::size_t>(everyone.size()));
    allgather(bridge, everyone, bridge.rank(), mine.data(), all.data(), 2, tag);
  }
  mask_allreduce(bridge, everyone, bridge.rank(), tag);
}

void comm_create_group(const mpi::Comm& bridge, std::span<const int> parent_ranks, int group_rank, int tag) {
  mask_allreduce(bridge, parent_ranks, group_rank, tag);
}

void intercomm_create_merge(const mpi::Comm& bridge, std::span<const int> parent_ranks, int group_rank, int tag) {
  const int group_size = static_cast<int>(parent_ranks.size());
  for (int merge_size = 1; merge_size < group_size; merge_size *= 2) {
    const int my_block = group_rank / merge_size;
    const int other_block = my_block % 2 == 0 ? my_block + 1 : my_block - 1;
    if (other_block * merge_size >= group_size) continue;  // no right neighbour: joins in a later round
    auto block_range = [&](int b) {
      return std::array<int, 2>{b * merge_size, std::min((b + 1) * merge_size, group_size)};
    };
    const auto [first, last] = block_range(my_block);
    const auto [other_first, other_last] = block_range(other_block);
    const std::span<const int> local = block(parent_ranks, first, last);
    const int me = group_rank - first;
    const bool leader = me == 0;
    const int remote_leader = parent_ranks[static_cast<std::size_t>(other_first)];
    const int local_size = last - first;
    const int remote_size = other_last - other_first;

    // MPI_Intercomm_create (comm_impl.c: MPIR_Intercomm_create_impl). MPID_Intercomm_exchange_map (ch4_comm.c):
    // the leaders swap group sizes, then process ids; the local groups broadcast map_info and the ids.
    if (leader) {
      std::vector<int> size_out{local_size}, size_in(1);
      swap_with(bridge, remote_leader, size_out, size_in, MPI_INT, tag);
      std::vector<uint64_t> ids_out(static_cast<std::size_t>(local_size)),
          ids_in(static_cast<std::size_t>(remote_size));
      swap_with(bridge, remote_leader, ids_out, ids_in, MPI_UINT64_T, tag);
    }
    std::array<int, 4> map_info{};
    bcast(bridge, local, me, 0, map_info.data(), 4, MPI_INT, tag);
    std::vector<uint64_t> remote_ids(static_cast<std::size_t>(remote_size));
    bcast(bridge, local, me, 0, remote_ids.data(), remote_size, MPI_UINT64_T, tag);
    // MPIR_Get_contextid_sparse over the local group (contextid.c), then the leaders swap context ids and
    // broadcast the remote one.
    std::array<int, kContextMaskWords> mask{};
    mask.fill(-1);
    allreduce_band(bridge, local, me, mask.data(), kContextMaskWords, tag);
    if (leader) {
      std::vector<uint16_t> id_out{1}, id_in(1);
      swap_with(bridge, remote_leader, id_out, id_in, MPI_UINT16_T, tag);
    }
    int context_info = 0;
    bcast(bridge, local, me, 0, &context_info, 1, MPI_INT, tag);

    // MPI_Intercomm_merge (comm_impl.c: MPIR_Intercomm_merge_impl): the leaders swap `high`, the local groups
    // broadcast it, and the merged group agrees on a context id.
    if (leader) {
      std::vector<int> high_out{my_block % 2}, high_in(1);
      swap_with(bridge, remote_leader, high_out, high_in, MPI_INT, tag);
    }
    int high = 0;
    bcast(bridge, local, me, 0, &high, 1, MPI_INT, tag);
    const int merged_first = std::min(first, other_first);
    const int merged_last = std::max(last, other_last);
    mask.fill(-1);
    allreduce_band(bridge, block(parent_ranks, merged_first, merged_last), group_rank - merged_first, mask.data(),
                   kContextMaskWords, tag);
  }
}

}  // namespace mcmclb::smpi_patterns
