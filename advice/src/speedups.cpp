// SPDX-License-Identifier: BSD-3-Clause
// The speed-up rules an advice may assume (mcmclb/advice_speedups.hpp).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "mcmclb/advice_plan.hpp"
#include "mcmclb/advice_speedups.hpp"
#include "mcmclb/text.hpp"

namespace mcmclb::advice {

namespace {

/// "1.25 at 2, 1.4 at 4 ranks", a size given several times with its count and range: "1.84 at 2 (3 times, 1.8 to
/// 1.88)".
std::string curve_words(const std::vector<Repetitions>& sizes, const std::vector<std::pair<int, double>>& points) {
  std::string words;
  char one[120];
  for (std::size_t i = 0; i < points.size(); ++i) {
    const Repetitions& r = sizes.at(i);
    if (r.n > 1) {
      std::snprintf(one, sizeof one, "%.3g at %d (%d times, %.3g to %.3g)", points[i].second, points[i].first, r.n,
                    r.low, r.high);
    } else {
      std::snprintf(one, sizeof one, "%.3g at %d", points[i].second, points[i].first);
    }
    words += (words.empty() ? "" : ", ") + std::string(one);
  }
  return words + " ranks";
}

}  // namespace

std::string measured_words(const Trace& trace) {
  // The chains that share one curve are named by it once: `*`'s for every chain without rows of its own.
  std::map<std::string, std::vector<int>> by_curve;
  for (int c = 0; c < trace.chains(); ++c) {
    if (trace.items(c) == 0 || trace.measured_speedups(c).empty()) continue;
    by_curve[curve_words(trace.repetitions(c), trace.measured_speedups(c))].push_back(c);
  }
  if (by_curve.empty()) return "";
  if (by_curve.size() == 1) return "the speed-ups measured: " + by_curve.begin()->first;
  const auto& [words, chains] = *std::max_element(
      by_curve.begin(), by_curve.end(), [](const auto& a, const auto& b) { return a.second.size() < b.second.size(); });
  return "the speed-ups measured: " + words + " for " + std::to_string(chains.size()) + " of the walkers, " +
         std::to_string(by_curve.size() - 1) + " other curve" + (by_curve.size() == 2 ? "" : "s") + " for the rest";
}

SpeedupRules speedup_rules(const Trace& trace, double tolerance) {
  SpeedupRules r;
  bool any = false;
  int smallest = 0, at_best = 1;
  double best = 0, best_up = 1;
  double peak = 0;  // the earliest peak of any chain's Universal Scalability Law fit that bends down (0: none)
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
    if (const auto [sigma, kappa] = trace.usl_coefficients(c); kappa > 0) {
      const double at = std::sqrt((1 - std::min(sigma, 1.0)) / kappa);
      peak = peak == 0 ? at : std::min(peak, at);
    }
  }
  r.measured_up_to = std::max(1, smallest);
  if (!any) return r;  // perfect scaling at every size, assumed: no rule to vary
  r.best_efficiency = best;
  r.measured = measured_words(trace);
  // The band past the measured sizes: from the Universal Scalability Law's, where its fit bends down (its speed-up
  // then falls past a peak), through the last speed-up held, to Amdahl's law.
  if (peak > 0) {
    r.rules.emplace_back("usl");
    char words[160];
    std::snprintf(words, sizeof words, "the Universal Scalability Law's fit peaks at %.3g ranks and falls past it",
                  peak);
    r.usl_peak = words;
  }
  r.rules.emplace_back("flat");
  r.rules.emplace_back("amdahl");
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

TraceScenarios trace_scenarios(const Trace& trace, const ScenarioQuestion& q) {
  TraceScenarios s;
  const SpeedupRules rules = speedup_rules(trace, q.tolerance);
  s.measured_up_to = rules.measured_up_to;
  std::vector<std::string> varied;  // the rules the scenarios vary
  if (q.within_measured) {
    s.assumptions.push_back("no speed-up past what the trace measured: every group works at " +
                            (rules.measured_up_to == 1
                                 ? std::string("1 rank")
                                 : "up to " + std::to_string(rules.measured_up_to) + " ranks, the sizes it measured"));
  } else if (rules.rules.empty()) {
    s.assumptions.emplace_back("perfect scaling at every group size: the trace gives no speed-ups");
  } else if (rules.measured_up_to >= q.largest_rank) {
    s.assumptions.push_back("nothing past the measured sizes: the trace gives speed-ups up to " +
                            std::to_string(rules.measured_up_to) + " ranks");
  } else {
    static const std::map<std::string, std::string> kWords = {
        {"flat", "held (flat)"},
        {"amdahl", "Amdahl's law fitted through the measured sizes (amdahl)"},
        {"perfect", "in proportion to the ranks (perfect)"},
        {"usl", "Gunther's Universal Scalability Law fitted through the measured sizes (usl)"}};
    std::vector<std::string> words;
    for (const std::string& r : rules.rules) words.push_back(kWords.at(r));
    varied = rules.rules;
    s.keys.emplace_back("workload.extrapolate", flow_list(rules.rules));
    s.assumptions.push_back("the speed-up past the " + std::to_string(rules.measured_up_to) +
                            " ranks measured: " + join(words) + (rules.usl_peak.empty() ? "" : "; " + rules.usl_peak) +
                            (rules.measured.empty() ? "" : "; " + rules.measured));
    if (!rules.perfect_left_out.empty()) s.skipped.push_back(rules.perfect_left_out);
    s.first_extrapolate = rules.first;
    if (q.largest_group > 0 && q.largest_group <= rules.measured_up_to && !q.fixed.empty()) {
      s.first_extrapolate = "flat";
      for (const std::string& b : q.fixed) {
        for (const std::string& x : rules.rules) {
          if (x != "flat") s.exclude.push_back("{balancer: " + b + ", workload.extrapolate: " + x + "}");
        }
      }
      std::string who = q.fixed.front();
      for (std::size_t k = 1; k < q.fixed.size(); ++k) who += (k + 1 == q.fixed.size() ? " and " : ", ") + q.fixed[k];
      s.skipped.push_back(who + " under the rules other than flat: their groups never grow past " +
                          std::to_string(q.largest_group) + " ranks, where the speed-ups were measured");
    }
  }
  if (!q.speedups_given && trace.repetitions_differ()) {
    s.keys.emplace_back("workload.speedups", "[median, low, high]");
    for (const std::string& x : varied) {
      if (x == s.first_extrapolate) continue;
      s.exclude.push_back("{workload.speedups: low, workload.extrapolate: " + x + "}");
      s.exclude.push_back("{workload.speedups: high, workload.extrapolate: " + x + "}");
    }
    s.assumptions.push_back(
        "a size measured several times: the median of its speed-ups, and the lowest and the "
        "highest" +
        (varied.empty() ? std::string() : " under " + s.first_extrapolate) + " (workload.speedups)");
  }
  return s;
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
