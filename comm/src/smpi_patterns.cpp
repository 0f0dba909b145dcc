// MPICH 4.0.2's constructor messages replayed point to point (mcmclb/smpi_patterns.hpp).
#include "smpi_patterns.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
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

void bcast(const mpi::Comm& bridge, std::span<const int> members, int me, int root, void* buffer, int count,
           MPI_Datatype type, int tag) {
  const int size = static_cast<int>(members.size());
  if (size < 2) return;
  const int relative = (me - root + size) % size;
  auto member = [&](int rel) { return members[static_cast<std::size_t>((rel + root) % size)]; };
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

void allreduce_band(const mpi::Comm& bridge, std::span<const int> members, int me, int* values, int count, int tag) {
  const int size = static_cast<int>(members.size());
  if (size < 2) return;
  std::vector<int> incoming(static_cast<std::size_t>(count));
  auto combine = [&] {
    for (int i = 0; i < count; ++i) values[i] &= incoming[static_cast<std::size_t>(i)];
  };
  auto member = [&](int index) { return members[static_cast<std::size_t>(index)]; };
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

void allgather(const mpi::Comm& bridge, std::span<const int> members, int me, const int* mine, int* all, int count,
               int tag) {
  const int size = static_cast<int>(members.size());
  const auto block = static_cast<std::size_t>(count);
  // Bruck: gather in rotated order (my block first), doubling the blocks held each step, then rotate back.
  std::vector<int> rotated(block * static_cast<std::size_t>(size));
  std::copy_n(mine, count, rotated.begin());
  for (int have = 1; have < size; have *= 2) {
    const int blocks = std::min(have, size - have);
    const int to = members[static_cast<std::size_t>((me - have + size) % size)];
    const int from = members[static_cast<std::size_t>((me + have) % size)];
    mpi::check(MPI_Sendrecv(rotated.data(), blocks * count, MPI_INT, to, tag,
                            rotated.data() + block * static_cast<std::size_t>(have), blocks * count, MPI_INT, from, tag,
                            bridge.get(), MPI_STATUS_IGNORE),
               "MPI_Sendrecv");
  }
  for (int i = 0; i < size; ++i) {
    const auto from = block * static_cast<std::size_t>(i);
    const auto to = block * static_cast<std::size_t>((me + i) % size);
    std::copy_n(rotated.begin() + static_cast<std::ptrdiff_t>(from), count, all + to);
  }
}

namespace {

std::vector<int> all_ranks(const mpi::Comm& bridge) {
  std::vector<int> ranks(static_cast<std::size_t>(bridge.size()));
  for (std::size_t i = 0; i < ranks.size(); ++i) ranks[i] = static_cast<int>(i);
  return ranks;
}

void mask_allreduce(const mpi::Comm& bridge, std::span<const int> members, int me, int tag) {
  std::array<int, kContextMaskWords> mask{};
  mask.fill(-1);
  allreduce_band(bridge, members, me, mask.data(), kContextMaskWords, tag);
}

}  // namespace

void comm_create(const mpi::Comm& bridge, int tag) { mask_allreduce(bridge, all_ranks(bridge), bridge.rank(), tag); }

void comm_split(const mpi::Comm& bridge, int color, int key, int tag) {
  const std::vector<int> members = all_ranks(bridge);
  const std::array<int, 2> mine{color, key};
  std::vector<int> all(2 * members.size());
  allgather(bridge, members, bridge.rank(), mine.data(), all.data(), 2, tag);
  mask_allreduce(bridge, members, bridge.rank(), tag);
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
