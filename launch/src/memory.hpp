// SPDX-License-Identifier: BSD-3-Clause
// The host memory of a running launch (mpiexec or smpirun and everything it started), for the sweep's progress
// lines: how much a simulated rank count needs shows while it runs, not only in provenance.csv afterwards.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace mcmclb::launch {

/// Resident memory of the processes this one started, read from /proc (Linux).
struct LaunchMemory {
  std::int64_t rss_kib = 0;   // now: the sum of their resident sets (VmRSS)
  std::int64_t peak_kib = 0;  // the sum of each one's own peak (VmHWM): for a simulation, one process, its peak
};

/// The memory of this process's descendants; empty when /proc cannot be read or none is alive.
std::optional<LaunchMemory> launch_memory();

/// Samples launch_memory() while one launch runs and keeps what the progress line shows: the last sample and the
/// largest peak, so the line of a launch's last point still has them after its processes have exited.
class LaunchMemoryWatch {
 public:
  void start_launch() { seen_.reset(); }
  void sample();
  /// "host RSS 1.14 GiB, peak 1.20 GiB", or empty when nothing was sampled.
  [[nodiscard]] std::string text() const;

 private:
  std::optional<LaunchMemory> seen_;
};

/// 512 KiB, 37.2 MiB, 1.14 GiB.
std::string format_kib(std::int64_t kib);

}  // namespace mcmclb::launch
