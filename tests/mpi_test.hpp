// SPDX-License-Identifier: BSD-3-Clause
// What the MPI test suites share: WORLD's rank and size, and how many seeds a many-seed test runs at this size.
#pragma once

#include <algorithm>
#include <cstdint>

#include "mcmclb/mpi.hpp"

namespace mcmclb::testing {

inline int world_rank() { return mpi::Comm::world().rank(); }
inline int world_size() { return mpi::Comm::world().size(); }

/// Seeds a many-seed test runs: all of them up to 4 ranks; a third (at least one) beyond, where the ranks outnumber
/// the 2 cores the test command is sized for and MPICH's busy polling makes every run several times slower. The
/// assertions are the same at every size, and every seed still runs at 1 to 4 ranks.
inline uint64_t seeds(uint64_t all) { return world_size() > 4 ? std::max<uint64_t>(1, all / 3) : all; }

}  // namespace mcmclb::testing
