// SPDX-License-Identifier: BSD-3-Clause
// Word conversions of the per-rank statistics (mcmclb/run_stats.hpp).
#include "mcmclb/run_stats.hpp"

namespace mcmclb {

RankStats::Words RankStats::to_words() const noexcept {
  return {elapsed_s,
          work_s,
          polling_s,
          waiting_s,
          regroup_s,
          static_cast<double>(regroups),
          static_cast<double>(items_worked),
          static_cast<double>(final_first),
          static_cast<double>(final_last),
          static_cast<double>(state_bytes),
          state_s,
          static_cast<double>(chains_migrated),
          static_cast<double>(migrated_bytes)};
}

RankStats RankStats::from_words(const Words& w) noexcept {
  RankStats s;
  s.elapsed_s = w[0];
  s.work_s = w[1];
  s.polling_s = w[2];
  s.waiting_s = w[3];
  s.regroup_s = w[4];
  s.regroups = static_cast<int64_t>(w[5]);
  s.items_worked = static_cast<int64_t>(w[6]);
  s.final_first = static_cast<int>(w[7]);
  s.final_last = static_cast<int>(w[8]);
  s.state_bytes = static_cast<int64_t>(w[9]);
  s.state_s = w[10];
  s.chains_migrated = static_cast<int64_t>(w[11]);
  s.migrated_bytes = static_cast<int64_t>(w[12]);
  return s;
}

}  // namespace mcmclb
