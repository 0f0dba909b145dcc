// SPDX-License-Identifier: BSD-3-Clause
// Run ids: the text that joins a run's rows across runs.csv, ranks.csv, events.csv and the per-run tables, made so
// that no two runs of a folder share one, whatever the rate of runs, the process, the host or the simulator.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

namespace mcmclb {

/// Makes run ids "EXPERIMENT-UTC-SALT-SEQUENCE": the experiment's first 40 characters, the UTC second, a 64-bit
/// salt drawn once (16 hex digits) and a sequence number counted from 0 by this object. Two ids of one object
/// differ in their sequence number, whatever the clock says; ids of two objects differ unless their salts are
/// equal, which for salts drawn by draw_salt() is a chance of 2^-64 per pair (the results store refuses a run
/// whose id is already in its folder, so even that is caught). Thread-safe.
class RunIds {
 public:
  /// A salt from draw_salt(getpid(), the host's real-time clock in ns).
  RunIds();
  explicit RunIds(uint64_t salt) : salt_(salt) {}
  RunIds(const RunIds&) = delete;
  RunIds& operator=(const RunIds&) = delete;

  [[nodiscard]] std::string next(std::string_view experiment);
  [[nodiscard]] uint64_t salt() const { return salt_; }

  /// 64 bits of the kernel's entropy (std::random_device) mixed with pid and clock_ns. The entropy does the work:
  /// simulated processes (SimGrid's SMPI) share one host pid or report simulated ones, and read a simulated clock
  /// that starts at 0 in every simulation, so pid and clock alone repeat between processes.
  static uint64_t draw_salt(uint64_t pid, uint64_t clock_ns);

 private:
  uint64_t salt_;
  std::atomic<uint64_t> sequence_{0};
};

/// The next id of this process's RunIds, made on first use (and again in a forked child). Thread-safe.
std::string next_run_id(std::string_view experiment);

}  // namespace mcmclb
