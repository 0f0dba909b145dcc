// SPDX-License-Identifier: BSD-3-Clause
// The speed-up rules an advice may assume (mcmclb/advice_speedups.hpp).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
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

/// Where a fitted law, scaled through the last measured size as the replay extrapolates it, leaves a measured
/// size's band the most: the size, the law's speed-up there and the band. The band is the repetitions' range,
/// widened to at least the tolerance either side of the replayed speed-up (a size measured once has no range).
struct Miss {
  int chain = -1, ranks = 0;
  double law = 0, low = 0, high = 0, excess = 0;  // excess: how far outside, a fraction of the band's nearer end
};

template <class Law>
void worst_miss(Miss& worst, int chain, const std::vector<std::pair<int, double>>& points,
                const std::vector<Repetitions>& reps, double tolerance, const Law& law) {
  if (points.empty()) return;
  const auto [last_m, last_s] = points.back();
  const double at_last = law(last_m);
  if (!(at_last > 0)) return;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const double s = last_s * law(points[i].first) / at_last;
    const double low = std::min(reps.at(i).low, points[i].second * (1 - tolerance));
    const double high = std::max(reps.at(i).high, points[i].second * (1 + tolerance));
    const double excess = s < low ? 1 - s / low : s > high ? s / high - 1 : 0;
    if (excess > worst.excess + 1e-12) worst = {chain, points[i].first, s, low, high, excess};
  }
}

/// The line that says why a fitted rule is no scenario.
std::string dropped_words(const std::string& rule, const std::string& law, const Miss& m, bool one_curve) {
  char words[320];
  std::snprintf(words, sizeof words,
                "%s: %s, scaled through the last measured size, gives %.3g at %d ranks%s, outside the band of %.3g to "
                "%.3g there (the repetitions' range, at least the tolerance either side), so it contradicts the trace",
                rule.c_str(), law.c_str(), m.law, m.ranks,
                one_curve ? "" : (" for walker " + std::to_string(m.chain)).c_str(), m.low, m.high);
  return words;
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
  Miss amdahl_miss, usl_miss;    // where each fitted law leaves a measured size's band the most
  std::size_t fewest_sizes = 0;  // the fewest sizes above 1 any measured curve holds
  std::set<const void*> curves;  // the distinct curves checked (walkers that share `*`'s are checked once)
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
    const auto [sigma, kappa] = trace.usl_coefficients(c);
    if (kappa > 0) {
      const double at = std::sqrt((1 - std::min(sigma, 1.0)) / kappa);
      peak = peak == 0 ? at : std::min(peak, at);
    }
    if (!curves.insert(&ups).second) continue;
    fewest_sizes = fewest_sizes == 0 ? ups.size() : std::min(fewest_sizes, ups.size());
    const auto& reps = trace.repetitions(c);
    const double p = trace.amdahl_fraction(c);
    worst_miss(amdahl_miss, c, ups, reps, tolerance, [p](double m) { return 1.0 / ((1.0 - p) + p / m); });
    worst_miss(usl_miss, c, ups, reps, tolerance,
               [sigma, kappa](double m) { return m / (1.0 + sigma * (m - 1.0) + kappa * m * (m - 1.0)); });
  }
  r.measured_up_to = std::max(1, smallest);
  if (!any) return r;  // perfect scaling at every size, assumed: no rule to vary
  r.best_efficiency = best;
  r.measured = measured_words(trace);
  // The band past the measured sizes: from the Universal Scalability Law's, where its fit bends down (its speed-up
  // then falls past a peak), through the last speed-up held, to Amdahl's law. A fitted law is admissible only where
  // it agrees with every measured size (worst_miss): one that misses a measured bend says nothing of the sizes
  // past it. Flat and perfect fit nothing: the replay takes the measured sizes as measured under them.
  const bool one_curve = curves.size() == 1;
  if (peak > 0) {
    if (usl_miss.excess > 0) {
      r.dropped.push_back(
          dropped_words("usl", "the Universal Scalability Law fitted through the measured sizes", usl_miss, one_curve));
    } else {
      r.rules.emplace_back("usl");
      char words[160];
      std::snprintf(words, sizeof words, "the Universal Scalability Law's fit peaks at %.3g ranks and falls past it",
                    peak);
      r.usl_peak = words;
    }
  }
  r.rules.emplace_back("flat");
  if (fewest_sizes < 2) {
    // Through one size Amdahl's law fits exactly whatever was measured there, noise included, and carries it to
    // every size past it: it says no more than that one measurement, so it is no scenario of its own.
    r.dropped.emplace_back(
        "amdahl: Amdahl's law through one measured size above 1 rank would carry that one size's noise to every "
        "size past it; it needs two");
    r.first = r.rules.front();
  } else if (amdahl_miss.excess > 0) {
    r.dropped.push_back(
        dropped_words("amdahl", "Amdahl's law fitted through the measured sizes", amdahl_miss, one_curve));
    r.first = r.rules.front();  // usl where it is admissible (the fit that follows the bend), else flat
  } else {
    r.rules.emplace_back("amdahl");
  }
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
    s.keys.set("workload.extrapolate", study_list(rules.rules));
    s.assumptions.push_back("the speed-up past the " + std::to_string(rules.measured_up_to) +
                            " ranks measured: " + join(words) + (rules.usl_peak.empty() ? "" : "; " + rules.usl_peak) +
                            (rules.measured.empty() ? "" : "; " + rules.measured));
    if (!rules.perfect_left_out.empty()) s.skipped.push_back(rules.perfect_left_out);
    s.skipped.insert(s.skipped.end(), rules.dropped.begin(), rules.dropped.end());
    s.first_extrapolate = rules.first;
    if (q.largest_group > 0 && q.largest_group <= rules.measured_up_to && !q.fixed.empty()) {
      s.first_extrapolate = "flat";
      for (const std::string& b : q.fixed) {
        for (const std::string& x : rules.rules) {
          if (x != "flat") s.exclude.push_back({{"balancer", b}, {"workload.extrapolate", x}});
        }
      }
      std::string who = q.fixed.front();
      for (std::size_t k = 1; k < q.fixed.size(); ++k) who += (k + 1 == q.fixed.size() ? " and " : ", ") + q.fixed[k];
      s.skipped.push_back(who + " under the rules other than flat: their groups never grow past " +
                          std::to_string(q.largest_group) + " ranks, where the speed-ups were measured");
    }
  }
  if (const std::size_t n = trace.set_aside().size(); n > 0) {
    // Each is named on a line of its own where the trace is read (set_aside_line); the plan says how many.
    int trimmed = 0;
    for (const SetAside& a : trace.set_aside()) trimmed += a.trimmed_low;
    s.skipped.push_back(
        std::to_string(n) + " of the " + std::to_string(trace.speedups_given()) +
        " speed-ups the trace gives: above their ranks, which no run can reach, so set aside as "
        "measurement errors (a line '" +
        std::string(kTraceSuperlinear) + " WHY' above its header keeps them)" +
        (trimmed > 0 ? ", and " + std::to_string(trimmed) + " lowest of the same sizes, so the kept ones stay centred"
                     : std::string()));
  }
  if (!q.speedups_given && trace.repetitions_differ()) {
    // Every end under every admissible rule: an end's curve past the measured sizes is the rule's through it.
    s.keys.set("workload.speedups", study_list({"median", "low", "high"}));
    s.assumptions.push_back(
        "a size measured several times: the median of its speed-ups, and the lowest and the "
        "highest" +
        (varied.size() > 1 ? std::string(" under every rule") : std::string()) + " (workload.speedups)");
  }
  return s;
}

std::string extrapolation_measure(int nprocs, int largest_group, int measured_up_to, bool from_library) {
  std::string how;
  if (from_library) {
    how = "record your program at P = " + std::to_string(nprocs) +
          " under mostwork (docs/guide/your-chains.md), whose merges grow the groups towards P, and advise on that "
          "trace";
  } else {
    // A trace converted from a log has no recording run to repeat: the walker's own speed-up at larger groups is
    // what the extrapolation stands in for.
    const int first = std::min(largest_group, 2 * std::max(measured_up_to, 2));
    const int second = std::min(largest_group, 2 * first);
    how = "time one walker's items on " + std::to_string(first) +
          (second > first ? " and " + std::to_string(second) : std::string()) +
          " ranks and add those speed-up rows to the trace (docs/guide/your-workload.md)";
  }
  return how;
}

std::optional<std::string> extrapolation_note(int nprocs, int largest_group, int measured_up_to, bool from_library) {
  if (largest_group <= 2 * measured_up_to) return std::nullopt;
  const std::string measured =
      measured_up_to > 1 ? "twice the " + std::to_string(measured_up_to) + " ranks the speed-ups were measured at"
                         : "1 rank: the trace measured no speed-up, so perfect scaling is "
                           "assumed";
  const std::string how = extrapolation_measure(nprocs, largest_group, measured_up_to, from_library);
  return "Extrapolated: groups here work at up to " + std::to_string(largest_group) + " ranks, past " + measured +
         ". To measure there, " + how;
}

std::string work_words(const Trace& trace) {
  std::vector<std::pair<double, int>> work;  // single-rank seconds, position in the replay's order
  double total = 0;
  for (std::size_t k = 0; k < trace.layout().size(); ++k) {
    const int c = trace.layout()[k];
    if (trace.items(c) == 0) continue;
    work.emplace_back(trace.chain_single_rank_s(c), static_cast<int>(k));
    total += work.back().first;
  }
  if (work.size() < 3 || !(total > 0)) return "";
  std::vector<double> sizes;
  for (const auto& w : work) sizes.push_back(w.first);
  std::nth_element(sizes.begin(), sizes.begin() + static_cast<std::ptrdiff_t>(sizes.size() / 2), sizes.end());
  const double median = sizes[sizes.size() / 2];
  std::vector<int> long_at;  // positions of the long walkers, in order
  double share = 0;
  for (const auto& [s, at] : work) {
    if (s > 2 * median) {
      long_at.push_back(at);
      share += s / total;
    }
  }
  if (long_at.empty() || 2 * long_at.size() > work.size()) return "";
  std::vector<std::string> names;
  for (const int at : long_at) names.push_back(std::to_string(trace.layout()[static_cast<std::size_t>(at)]));
  const bool together = long_at.size() > 1 && long_at.back() - long_at.front() + 1 == static_cast<int>(long_at.size());
  char pct[32];
  std::snprintf(pct, sizeof pct, "%.0f %%", 100 * share);
  std::string words = "Where the work sits: " + std::to_string(long_at.size()) + " of " + std::to_string(work.size()) +
                      " walkers (" + (long_at.size() == 1 ? "walker " : "walkers ") + join(names) +
                      (long_at.size() == 1 ? ") holds " : ") hold ") + pct +
                      " of it, each over twice the median walker's work";
  if (together) {
    words +=
        "; they start next to each other, so a balancer that merges neighbouring groups finds few short walkers "
        "beside them. Advise on the trace with its walkers reordered to see whether their placement matters";
  }
  return words;
}

}  // namespace mcmclb::advice
