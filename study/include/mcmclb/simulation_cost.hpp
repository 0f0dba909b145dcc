// SPDX-License-Identifier: BSD-3-Clause
// What simulating a point costs the host that runs SimGrid: its host seconds and its peak memory, and what a set of
// simulations run some at once takes together. `mcmclb advise` estimates its wall time and refuses simulations that
// would not fit in memory with it before anything starts; --launcher smpi weighs its progress line with it and
// refuses the same way. A model fitted on measured simulations (study/src/simulation_cost.cpp says on which), with
// no I/O but a trace file's size.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "mcmclb/run_spec.hpp"

namespace mcmclb {

/// The host CPU seconds one simulation of spec is expected to take: the start-up, the set-up's cost grown with P,
/// and its items rank by rank (simulated_rank_items()).
[[nodiscard]] double simulated_cpu_s(const RunSpec& spec);

/// The host seconds one simulation of spec is expected to take, the work around it included: its CPU
/// (simulated_cpu_s()) stretched by the launch and the writes, and a launch's own cost.
[[nodiscard]] double simulated_host_s(const RunSpec& spec);

/// The host time around a simulation's CPU, fitted on advise's tuning advices (docs/notes/advise-estimate/tuning/
/// fit-wall.csv): twice the wall time of their simulations, two at once, came to kWallPerCpu times their host CPU
/// plus kLaunchS a launch (the launcher, the writes); advise's own work between two sweeps of its search adds
/// kSearchStepS. The launch and the step are mostly waiting, not CPU: a busy host does not stretch them.
inline constexpr double kWallPerCpu = 1.045, kLaunchS = 0.254, kSearchStepS = 0.288;

/// The rank-items a simulation of spec steps through: expected_rank_items(), or, under the finished rule coalesce
/// (finished groups join those still working), at least 1.2 times the ranks times the longest unit's items
/// (longest_unit_items()).
[[nodiscard]] double simulated_rank_items(const RunSpec& spec);

/// The peak memory (bytes) one simulation of spec is expected to take: the process, each simulated rank's stack and
/// state, and a trace's items held in memory. An upper envelope of the shipped traces' simulations (their
/// provenance.csv, host_peak_rss_kib), so that a simulation refused for it would not have fitted.
[[nodiscard]] double simulated_peak_bytes(const RunSpec& spec);

/// The CPU this host gives busy processes of ours just now, as measure_cpu_capacity() finds it: the cores one of
/// them gets alone (1 on an idle host) and the cores `threads` of them get together (`threads` on an idle host with
/// as many cores). A busy host gives less: other programs take their share, and under the kernel's session groups
/// (autogroup) that share is not the one a count of busy cores suggests, hence a measurement, not a formula.
struct CpuCapacity {
  double one = 1;       // cores one busy process gets
  double all = 0;       // cores `threads` busy processes get together (0: as many as they are, an idle host)
  long threads = 0;     // how many were measured at once, at most usable_cores() (0: nothing measured, idle assumed)
  double window_s = 0;  // how long the threads together spun (the slices the median was taken over)
  /// The cores k busy processes get: measured at 1 and at `threads`, linear between, and no more past them.
  [[nodiscard]] double cores_for(long k) const;
  /// True where nothing was measured or the host gave what an idle one would, within 5 %.
  [[nodiscard]] bool idle() const;
};

/// Measures CpuCapacity: one thread of this process spins for `window`, then `threads` of them together (at most
/// usable_cores(): more would only share those CPUs), and the CPU time they get is read slice by slice (50 ms)
/// against the wall time; each figure is the median slice. Where the threads together do not get a core each in the
/// first `window`, they spin five times as long: a burst above the steady share, common just after they start, then
/// does not decide it. Costs twice `window` on an idle host, six times on a busy one. The threads share a process's
/// session group with the simulations it starts, so they see the share those will get.
[[nodiscard]] CpuCapacity measure_cpu_capacity(long threads, std::chrono::milliseconds window);

/// The steady share of a probe's slices (the cores got in each): their median, so a burst in fewer than half of them
/// does not move it.
[[nodiscard]] double steady_cores(std::vector<double> slices);

/// What a set of simulations is expected to take at `jobs` at once: their count, their host seconds, the wall time
/// (the larger of the host seconds shared out over the cores they get and the longest single simulation on the core
/// one gets, both from `cpu`), and the largest one's peak memory.
struct SimulationEstimate {
  std::size_t count = 0;
  double host_s = 0, wall_s = 0;
  double peak_bytes = 0;
  long at_once = 0;  // how many run at once: jobs, or fewer where there are fewer simulations
};
[[nodiscard]] SimulationEstimate estimate_simulations(const std::vector<const RunSpec*>& specs, long jobs,
                                                      const CpuCapacity& cpu = {});

/// Where the estimate's simulations, at_once of them each as large as the largest, would need more than
/// available_bytes: the one-line refusal, starting "--jobs: " and ending with what is allowed (`allowed`, e.g.
/// "fewer --jobs, fewer --ranks"). Nothing where they fit, or where the memory available is not known.
[[nodiscard]] std::optional<std::string> memory_refusal(const SimulationEstimate& estimate,
                                                        std::optional<double> available_bytes,
                                                        const std::string& allowed);

}  // namespace mcmclb
