// SPDX-License-Identifier: BSD-3-Clause
// How a waiting rank spends the time between two completion tests (mcmclb/mpi.hpp's waits follow it). No MPI
// here, so the MPI-free run description (mcmclb/run_spec.hpp) can name a run's policy too.
#pragma once

#include <array>
#include <string_view>
#include <utility>

#include "mcmclb/name_table.hpp"

namespace mcmclb {

///  - polite: as each wait's Patience says (yield, then nap), so a waiting rank leaves its core to ranks that work.
///    Right where ranks outnumber cores: there busy-polling ranks slow each other down 100-1000x, and a nap of
///    200 us is cheap beside that.
///  - spin: test again at once and never give up the core, as a blocking MPI call does (each MPI_Test drives the
///    library's own progress). Right where every rank has a core of its own: a nap there is only delay, and a
///    program on dedicated cores waits in MPI_Allreduce, not in a sleep.
///  - yield: give the core up at each test (std::this_thread::yield) for the first kYieldFirst of a wait, then nap
///    as polite does. For cores that other programs use too: a partner the scheduler runs answers within the first
///    millisecond, and meanwhile whoever needs this core gets it. Naps from the start cost a wait a whole nap where
///    the answer comes in microseconds: examples/ising under mostwork at 2 ranks took 4.5 times as long with polite
///    as with spin or yield on the 2-core VM (docs/notes/wait).
enum class WaitPolicy { polite, spin, yield };
inline constexpr std::array<std::pair<std::string_view, WaitPolicy>, 3> kWaitPolicies = {
    {{"polite", WaitPolicy::polite}, {"spin", WaitPolicy::spin}, {"yield", WaitPolicy::yield}}};
[[nodiscard]] constexpr std::string_view to_string(WaitPolicy p) noexcept { return name_in(kWaitPolicies, p); }

}  // namespace mcmclb
