// SPDX-License-Identifier: BSD-3-Clause
// The speed-up rules an advice may assume (mcmclb/advice_speedups.hpp).
#include <algorithm>
#include <cstdio>

#include "mcmclb/advice_speedups.hpp"

namespace mcmclb::advice {

SpeedupRules speedup_rules(const Trace& trace, double tolerance) {
  SpeedupRules r;
  bool any = false;
  int smallest = 0, at_best = 1;
  double best = 0, best_up = 1;
  for (int c = 0; c < trace.chains(); ++c) {
    if (trace.items(c) == 0) continue;
    const auto& ups = trace.measured_speedups(c);
    const int largest = ups.empty() ? 1 : ups.back().first;
    smallest = smallest == 0 ? largest : std::min(smallest, largest);
    r.measured_largest = std::max(r.measured_largest, largest);
    if (ups.empty()) continue;
    any = true;
    const double efficiency = ups.back().second / ups.back().first;
    if (efficiency > best) {
      best = efficiency;
      at_best = ups.back().first;
      best_up = ups.back().second;
    }
  }
  r.measured_up_to = std::max(1, smallest);
  if (!any) return r;  // perfect scaling at every size, assumed: no rule to vary
  r.best_efficiency = best;
  r.rules = {"flat", "amdahl"};
  if (best >= 1 - tolerance - 1e-12) {
    r.rules.emplace_back("perfect");
  } else {
    char words[200];
    std::snprintf(words, sizeof words,
                  "perfect scaling past the measured sizes: the best efficiency measured is %.0f %% (a speed-up of "
                  "%.3g at %d ranks), below the %.0f %% perfect scaling needs within the tolerance",
                  100 * best, best_up, at_best, 100 * (1 - tolerance));
    r.perfect_left_out = words;
  }
  return r;
}

std::optional<std::string> extrapolation_note(int nprocs, int measured_up_to) {
  if (nprocs <= 2 * measured_up_to) return std::nullopt;
  const std::string measured =
      measured_up_to > 1 ? "twice the " + std::to_string(measured_up_to) + " ranks the speed-ups were measured at"
                         : "1 rank: the trace measured no speed-up, so perfect scaling is "
                           "assumed";
  return "Extrapolated: groups here work at up to " + std::to_string(nprocs) + " ranks, past " + measured +
         ". To measure there, record your program at P = " + std::to_string(nprocs) +
         " under mostwork (docs/guide/your-chains.md), whose merges grow the groups towards P, and advise on that "
         "trace";
}

}  // namespace mcmclb::advice
