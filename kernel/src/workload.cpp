// SPDX-License-Identifier: BSD-3-Clause
// Seeded draws, chain lengths and item costs (mcmclb/workload.hpp); the models are in workloads/.
#include "mcmclb/workload.hpp"

namespace mcmclb {

uint64_t mix64(uint64_t x) noexcept {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

double unit_draw(uint64_t a, uint64_t b, uint64_t c) noexcept {
  const uint64_t h = mix64(mix64(mix64(a) ^ b) ^ c);
  return static_cast<double>(h >> 11) * 0x1.0p-53;
}

std::vector<int64_t> chain_items(const Workload& w, int nprocs, int G, int W) {
  std::vector<int> leaders;
  for (int leader = 0; leader < nprocs; leader += G) leaders.push_back(leader);
  return chain_items(w, leaders, W);
}

std::vector<int64_t> chain_items(const Workload& w, const std::vector<int>& leaders, int W) {
  std::vector<int64_t> s;
  for (std::size_t g = 0; g < leaders.size(); ++g) {
    for (int c = 0; c < W; ++c)
      s.push_back(w.items(chain_index(w, static_cast<int>(g), static_cast<int>(leaders.size()), leaders[g], W, c)));
  }
  return s;
}

double item_cost_ms(const RunSpec& run, int group_size, int chain, int64_t item) noexcept {
  double ms = run.T_ms / group_size;
  if (run.work.jitter_pct > 0.0) {
    const double u = unit_draw(run.work.seed, static_cast<uint64_t>(chain), static_cast<uint64_t>(item));
    ms *= 1.0 + run.work.jitter_pct / 100.0 * (2.0 * u - 1.0);
  }
  return ms;
}

}  // namespace mcmclb
