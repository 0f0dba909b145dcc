// SPDX-License-Identifier: BSD-3-Clause
// Run ids (mcmclb/run_id.hpp).
#include "mcmclb/run_id.hpp"

#include <unistd.h>

#include <array>
#include <cstdio>
#include <ctime>
#include <memory>
#include <mutex>
#include <random>

#include "mcmclb/provenance.hpp"
#include "mcmclb/workload.hpp"

namespace mcmclb {

RunIds::RunIds() {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  salt_ = draw_salt(static_cast<uint64_t>(::getpid()),
                    static_cast<uint64_t>(now.tv_sec) * 1'000'000'000U + static_cast<uint64_t>(now.tv_nsec));
}

uint64_t RunIds::draw_salt(uint64_t pid, uint64_t clock_ns) {
  std::random_device host;
  const uint64_t entropy = uint64_t{host()} << 32 | host();
  return mix64(entropy ^ mix64(pid ^ mix64(clock_ns)));
}

std::string RunIds::next(std::string_view experiment) {
  const uint64_t n = sequence_.fetch_add(1, std::memory_order_relaxed);
  std::array<char, 48> tail{};
  std::snprintf(tail.data(), tail.size(), "-%016llx-%llu", static_cast<unsigned long long>(salt_),
                static_cast<unsigned long long>(n));
  return std::string(experiment.substr(0, 40)) + "-" + utc_now() + tail.data();
}

std::string next_run_id(std::string_view experiment) {
  // One salt per process: a child forked after the first id draws its own, or it would repeat its parent's ids.
  static std::mutex mutex;
  static std::unique_ptr<RunIds> ids;
  static pid_t owner = 0;
  const std::lock_guard lock(mutex);
  if (const pid_t pid = ::getpid(); !ids || pid != owner) {
    ids = std::make_unique<RunIds>();
    owner = pid;
  }
  return ids->next(experiment);
}

}  // namespace mcmclb
