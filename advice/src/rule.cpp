// SPDX-License-Identifier: BSD-3-Clause
// The rule of `mcmclb advise` (mcmclb/advice.hpp): whole prices, minimax regret, the verdict in words.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <set>
#include <stdexcept>

#include "mcmclb/advice.hpp"
#include "mcmclb/balancer.hpp"
#include "mcmclb/stats.hpp"
#include "mcmclb/text.hpp"

namespace mcmclb::advice {

bool same_times(double a, double b) {
  return std::abs(a - b) <= kSameTimesAbsS + kSameTimesRel * std::max(std::abs(a), std::abs(b));
}

bool within_tolerance(double a_s, double b_s, double tolerance) {
  return std::max(a_s, b_s) / std::min(a_s, b_s) - 1 <= tolerance + 1e-12;
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// The verdict's robust sentence, up to its count of scenarios (not_robust finds it by this).
constexpr std::string_view kRobustWords = "Robust: within the tolerance of the fastest in each of ";

/// Equal to the resolution the ranking uses (same_times).
bool same(double a, double b) { return same_times(a, b); }

bool same_all(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), same);
}

std::string pct(double fraction, int digits = 1) {
  char text[32];
  std::snprintf(text, sizeof text, "%.*f %%", digits, fraction * 100);
  return text;
}

}  // namespace

std::array<int, 4> simplicity(const std::string& label) {
  const auto place = [](const auto& table, std::string_view name) {
    return static_cast<int>(std::find(table.begin(), table.end(), name) - table.begin());
  };
  std::vector<std::string> word;
  for (std::size_t at = 0; at < label.size();) {
    const std::size_t end = std::min(label.find(' ', at), label.size());
    if (end > at) word.push_back(label.substr(at, end - at));
    at = end + 1;
  }
  if (word.empty()) return {place(kSimplestFirst, ""), 0, 0, 0};
  const std::size_t paren = word.front().find('(');
  const std::string balancer = word.front().substr(0, paren);
  const int interval = paren == std::string::npos ? 0 : std::atoi(word.front().c_str() + paren + 1);
  std::array<int, 4> key = {place(kSimplestFirst, balancer), 0, 0, interval};
  // The methods in the creation methods' table order, after the balancer's default.
  static const std::vector<std::string> methods = catalog().methods;
  for (std::size_t k = 1; k < word.size(); ++k) {
    if (std::find(kSimplestRulesFirst.begin(), kSimplestRulesFirst.end(), word[k]) != kSimplestRulesFirst.end()) {
      key[1] = place(kSimplestRulesFirst, word[k]);
    } else {
      const bool known = key[0] < static_cast<int>(kSimplestFirst.size());
      key[2] = known && balancer_info(balancer).default_method == word[k] ? 0 : 1 + place(methods, word[k]);
    }
  }
  return key;
}

std::string simplicity_words() {
  return "none first, then " + join(std::vector<std::string_view>(kSimplestFirst.begin() + 1, kSimplestFirst.end())) +
         "; within a balancer " + join(kSimplestRulesFirst) + ", then its default method";
}

std::string tolerance_percent(double fraction) {
  char text[32];
  if (fraction * 100 >= 1) {
    std::snprintf(text, sizeof text, "%.1f %%", fraction * 100);
  } else {
    std::snprintf(text, sizeof text, "%.2g %%", fraction * 100);
  }
  return text;
}

namespace {

std::string seconds(double s) {
  char text[32];
  std::snprintf(text, sizeof text, s < 10 ? "%.3g s" : "%.0f s", s);
  return text;
}

/// The row's name: its first set-up, and the others that share its times.
std::string row_name(const Row& r, const std::vector<Setup>& setups) {
  std::string name = setups[r.members.front()].label;
  if (r.members.size() > 1) {
    std::vector<std::string> others;
    for (std::size_t k = 1; k < r.members.size(); ++k) others.push_back(setups[r.members[k]].label);
    name += " (same times: " + join(others, ", ") + ")";
  }
  return name;
}

/// The index of the row with the smallest largest regret over the scenarios in `use`, then the smallest median
/// regret there, then the first.
std::size_t minimax(const std::vector<Row>& rows, const std::vector<std::size_t>& use,
                    const std::vector<Scenario>& scenarios) {
  std::size_t best = 0;
  double best_max = kInf, best_median = kInf;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    double mx = 0;
    std::vector<double> values, weights;
    for (const std::size_t s : use) {
      mx = std::max(mx, rows[i].regret[s]);
      values.push_back(rows[i].regret[s]);
      weights.push_back(scenarios[s].weight);
    }
    const double md = weighted_median(values, weights);
    if (mx < best_max - 1e-12 || (std::abs(mx - best_max) <= 1e-12 && md < best_median - 1e-12)) {
      best = i;
      best_max = mx;
      best_median = md;
    }
  }
  return best;
}

/// The assumption past the measured sizes a scenario makes (its workload_extrapolate; "" where it varies none): the
/// one grouping of scenarios by assumption, for the gains and the rank answer alike.
std::string assumption_of(const Scenario& s) {
  const auto rule = s.values.find("workload_extrapolate");
  return rule == s.values.end() ? "" : rule->second;
}

/// Each gain over none grouped by the assumption past the measured sizes (workload_extrapolate; "" where a scenario
/// names none), in the scenarios' order: that assumption's lowest and highest gain, one within the tolerance of 0
/// counted as 0 (within_tolerance). Gains that are not finite are left out.
std::vector<std::pair<std::string, std::pair<double, double>>> gains_by_rule(const std::vector<double>& gains,
                                                                             const std::vector<Scenario>& scenarios,
                                                                             double tolerance) {
  std::vector<std::pair<std::string, std::pair<double, double>>> out;
  for (std::size_t k = 0; k < gains.size() && k < scenarios.size(); ++k) {
    if (!std::isfinite(gains[k])) continue;
    const double g = within_tolerance(1 - gains[k], 1, tolerance) ? 0.0 : gains[k];
    const std::string name = assumption_of(scenarios[k]);
    const auto it = std::find_if(out.begin(), out.end(), [&](const auto& x) { return x.first == name; });
    if (it == out.end()) {
      out.emplace_back(name, std::pair{g, g});
    } else {
      it->second = {std::min(it->second.first, g), std::max(it->second.second, g)};
    }
  }
  return out;
}

}  // namespace

std::string scenario_words(const Scenario& s, const Words&) {
  std::vector<std::string> parts;
  for (const auto& [dimension, value] : s.values) {
    const std::string name = dimension.rfind("workload_", 0) == 0 ? dimension.substr(9) : dimension;
    parts.push_back(name + " " + value);
  }
  return parts.empty() ? "the one scenario" : join(parts, ", ");
}

std::string gain_words(const std::vector<double>& gains, const std::vector<Scenario>& scenarios, double tolerance,
                       const Words& words) {
  if (gains.empty()) return "";
  const auto lo = std::min_element(gains.begin(), gains.end());
  const auto hi = std::max_element(gains.begin(), gains.end());
  const bool one = scenarios.size() == 1;
  // A gain g is a whole time of 1 - g against none's 1: measurable where the two are not within the tolerance.
  const auto measurable = [&](double g) { return !within_tolerance(1 - g, 1, tolerance); };
  const std::string within = "within the " + tolerance_percent(tolerance) + " tolerance";
  std::vector<double> weights;
  for (const Scenario& x : scenarios) weights.push_back(x.weight);
  const double median = weighted_median(gains, weights);
  const bool agree = *hi - *lo <= tolerance + 1e-12;  // one figure: the worst, a gain some scenario gives
  if (std::none_of(gains.begin(), gains.end(), measurable) || (agree && !measurable(median))) {
    return "no difference from none you can measure (" + (one ? pct(*lo) : pct(*lo) + " to " + pct(*hi)) + " faster, " +
           within + (one ? std::string(")") : " in each of " + std::to_string(gains.size()) + " scenarios)");
  }
  const auto faster = [](double g) { return g >= 0 ? pct(g) + " faster" : pct(-g) + " slower"; };
  const auto bare = [](double g) {  // a percentage without its sign, e.g. "0.0"
    char text[32];
    std::snprintf(text, sizeof text, "%.1f", g * 100);
    return std::string(text);
  };
  if (agree) {
    return one ? faster(*lo) + " than none"
               : "at least " + faster(*lo) + " than none in each of " + std::to_string(gains.size()) + " scenarios (" +
                     pct(*lo) + " to " + pct(*hi) + ", " + within + " of each other)";
  }
  // Worst case first: the end where it gains least. An end within the tolerance of 0 counts as 0.
  const std::size_t lo_at = static_cast<std::size_t>(lo - gains.begin());
  const std::size_t hi_at = static_cast<std::size_t>(hi - gains.begin());
  const double low = measurable(*lo) ? *lo : 0, high = measurable(*hi) ? *hi : 0;
  const bool mixed = low < 0 && high > 0;
  const auto end = [&](double g, std::size_t at) {
    const std::string where = " under " + scenario_words(scenarios[at], words);
    if (!measurable(g)) return "no difference you can measure" + where;
    return (mixed ? faster(g) : pct(std::abs(g))) + where;
  };
  std::string range;
  if (low >= 0) {
    range = bare(low) + " to " + pct(high) + " faster than none";
  } else if (high <= 0) {
    range = bare(-low) + " to " + pct(-high) + " slower than none";
  } else {
    range = "from " + faster(low) + " to " + faster(high) + " than none";
  }
  // Beside the range, the gain under each assumption past the measured sizes, where the scenarios vary more than
  // the two ends name: a figure or range each assumption gives, never a midpoint that none of them gives.
  const auto rules = gains_by_rule(gains, scenarios, tolerance);
  std::string per_rule;
  if (rules.size() > 1 && gains.size() > 2) {
    std::vector<std::string> each;
    for (const auto& [rule, range] : rules) {
      const auto [x, y] = range;
      each.push_back(rule + " " + (same_times(x, y) ? faster(x) : bare(x) + " to " + faster(y)));
    }
    per_rule = "; by the speed-up past the measured sizes: " + join(each, ", ");
  }
  return range + ": " + end(*lo, lo_at) + ", " + end(*hi, hi_at) + per_rule;
}

double weighted_median(const std::vector<double>& values, const std::vector<double>& weights) {
  if (values.empty()) return std::nan("");
  std::vector<std::size_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return values[a] < values[b]; });
  const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  double sum = 0;
  for (std::size_t k = 0; k < order.size(); ++k) {
    sum += weights[order[k]];
    // At exactly half, the lower of the two: a value some scenario gives, never a midpoint between two.
    if (sum >= total / 2 - 1e-12 * total) return values[order[k]];
  }
  return values[order.back()];
}

std::string tolerance_source_words(const std::string& tolerance_words) {
  const std::size_t colon = tolerance_words.find(':');
  return tolerance_words.rfind("assumed", 0) == 0 ? "assumed"
         : tolerance_words.rfind("measured by ", 0) == 0 && colon != std::string::npos
             ? tolerance_words.substr(0, colon)
             : "measured";
}

Ranking rank(std::vector<Scenario> scenarios, const std::vector<Setup>& setups, std::size_t none, double tolerance,
             const std::string& tolerance_words, const Words& words) {
  if (scenarios.empty()) throw std::invalid_argument("advice: no scenario");
  if (none >= setups.size()) throw std::invalid_argument("advice: no none among the set-ups");
  const std::size_t n = scenarios.size();
  const auto complete = [&](const Setup& s) {
    return s.price.size() == n && std::all_of(s.price.begin(), s.price.end(),
                                              [](const Price& p) { return std::isfinite(p.run_s) && p.run_s > 0; });
  };
  if (!complete(setups[none])) throw std::invalid_argument("advice: none lacks a time in some scenario");
  Ranking out;
  std::vector<std::size_t> kept;
  std::vector<std::vector<double>> whole;  // per kept set-up, per scenario
  for (std::size_t k = 0; k < setups.size(); ++k) {
    if (!complete(setups[k])) {
      out.notes.push_back(setups[k].label + " is left out: it has no valid time in some scenario");
      continue;
    }
    kept.push_back(k);
    std::vector<double> w(n);
    for (std::size_t s = 0; s < n; ++s) w[s] = setups[k].price[s].whole_s();
    whole.push_back(std::move(w));
  }
  // Scenarios that give every set-up the same times are one: the later is dropped, with a note.
  std::vector<std::size_t> distinct;
  for (std::size_t s = 0; s < n; ++s) {
    const auto twin = std::find_if(distinct.begin(), distinct.end(), [&](std::size_t d) {
      return std::all_of(whole.begin(), whole.end(), [&](const std::vector<double>& w) { return same(w[s], w[d]); });
    });
    if (twin == distinct.end()) {
      distinct.push_back(s);
    } else {
      // One scenario, with both weights: the weights stay those stated, whatever happens to coincide.
      scenarios[*twin].weight += scenarios[s].weight;
      if (scenarios[s].bound_s > 0 &&
          !(scenarios[*twin].bound_s > 0 && scenarios[*twin].bound_s <= scenarios[s].bound_s))
        scenarios[*twin].bound_s = scenarios[s].bound_s;  // the lower ideal bounds both
      out.notes.push_back(scenario_words(scenarios[s], words) + " gives every set-up the times of " +
                          scenario_words(scenarios[*twin], words) + ": counted once, with both weights");
    }
  }
  for (const std::size_t s : distinct) out.scenarios.push_back(scenarios[s]);
  const std::size_t m = distinct.size();
  std::vector<double> weights;
  for (const auto& s : out.scenarios) weights.push_back(s.weight);
  const auto pick = [&](const std::vector<double>& all) {
    std::vector<double> v;
    for (const std::size_t s : distinct) v.push_back(all[s]);
    return v;
  };
  // One part of a set-up's price in the distinct scenarios.
  const auto part = [&](const Setup& setup, auto of) {
    std::vector<double> all;
    for (const Price& p : setup.price) all.push_back(of(p));
    return pick(all);
  };
  const auto run_part = [](const Price& p) { return p.run_s; };
  const auto once_part = [](const Price& p) { return p.once_s(); };
  // Rows: set-ups with the same whole times everywhere are one.
  std::vector<Row> rows;
  for (std::size_t i = 0; i < kept.size(); ++i) {
    const std::vector<double> w = pick(whole[i]);
    const auto twin = std::find_if(rows.begin(), rows.end(), [&](const Row& r) { return same_all(r.whole_s, w); });
    if (twin != rows.end()) {
      twin->members.push_back(kept[i]);
    } else {
      Row r;
      r.members = {kept[i]};
      r.whole_s = w;
      rows.push_back(std::move(r));
    }
  }
  // A row is named by its simplest member, the one a tie would pick.
  for (Row& r : rows) {
    std::stable_sort(r.members.begin(), r.members.end(), [&](std::size_t a, std::size_t b) {
      return simplicity(setups[a].label) < simplicity(setups[b].label);
    });
  }
  const auto none_row = std::find_if(rows.begin(), rows.end(), [&](const Row& r) {
    return std::find(r.members.begin(), r.members.end(), none) != r.members.end();
  });
  const std::vector<double> none_whole = none_row->whole_s;
  const std::vector<double> none_run = part(setups[none], run_part), none_once = part(setups[none], once_part);
  std::vector<double> best(m, kInf);
  for (const Row& r : rows) {
    for (std::size_t s = 0; s < m; ++s) best[s] = std::min(best[s], r.whole_s[s]);
  }
  for (Row& r : rows) {
    r.regret.resize(m);
    r.vs_none.resize(m);
    for (std::size_t s = 0; s < m; ++s) {
      r.regret[s] = r.whole_s[s] / best[s] - 1;
      r.vs_none[s] = r.whole_s[s] / none_whole[s];
    }
    const auto worst = std::max_element(r.regret.begin(), r.regret.end());
    r.regret_max = *worst;
    r.worst = static_cast<std::size_t>(worst - r.regret.begin());
    r.regret_median = weighted_median(r.regret, weights);
    r.vs_none_median = weighted_median(r.vs_none, weights);
    const auto vs_min = std::min_element(r.vs_none.begin(), r.vs_none.end());
    const auto vs_max = std::max_element(r.vs_none.begin(), r.vs_none.end());
    r.vs_none_min = *vs_min;
    r.vs_none_max = *vs_max;
    r.vs_none_min_at = static_cast<std::size_t>(vs_min - r.vs_none.begin());
    r.vs_none_max_at = static_cast<std::size_t>(vs_max - r.vs_none.begin());
    {
      std::vector<double> gains;
      for (const double x : r.vs_none) gains.push_back(1 - x);
      r.gain_words = gain_words(gains, out.scenarios, tolerance, words);
    }
    const Setup& first = setups[r.members.front()];
    const std::vector<double> once = part(first, once_part), run = part(first, run_part);
    r.parts_median = {weighted_median(run, weights),
                      weighted_median(part(first, [](const Price& p) { return p.calibration_s; }), weights),
                      weighted_median(part(first, [](const Price& p) { return p.initial_groups_s; }), weights)};
    if (std::any_of(once.begin(), once.end(), [](double c) { return c > 0; })) {
      r.once_median_s = weighted_median(once, weights);
      // A run k times as long takes k * run + once against k * none + none's once (its groups are created too):
      // it pays once none's run lasts longer than (once - none's once) * none / (none - run), at any length where
      // it adds nothing over none's, and never where its run is not the faster.
      std::vector<double> even(m);
      bool adds = false;  // more than none's own one-off cost somewhere
      for (std::size_t s = 0; s < m; ++s) {
        const double extra = std::max(0.0, once[s] - none_once[s]);
        adds = adds || extra > 0;
        even[s] = run[s] < none_run[s] ? extra * none_run[s] / (none_run[s] - run[s]) : kInf;
      }
      const double median = adds ? weighted_median(even, weights) : 0;
      if (!std::isfinite(median)) {
        r.never_breaks_even = true;
      } else if (median > 0) {
        r.break_even_s = median;
      }
    }
  }
  std::vector<std::size_t> all(m);
  std::iota(all.begin(), all.end(), 0);
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    if (std::abs(a.regret_max - b.regret_max) > 1e-12) return a.regret_max < b.regret_max;
    if (std::abs(a.regret_median - b.regret_median) > 1e-12) return a.regret_median < b.regret_median;
    return a.members.front() < b.members.front();
  });
  out.rows = rows;

  // The verdict.
  Verdict& v = out.verdict;
  const auto holds_none = [&](const Row& r) {
    return std::find(r.members.begin(), r.members.end(), none) != r.members.end();
  };
  std::size_t none_at = 0;  // none's place in the ranking
  while (none_at < out.rows.size() && !holds_none(out.rows[none_at])) ++none_at;
  // The tie over the scenarios in `use`, simplest first: the rows whose largest regret there lies within the
  // tolerance of the smallest. None is tied by that rule alone, never for a gain measured another way: the gain
  // words judge a gain by within_tolerance too, so "no difference you can measure" and the tie agree.
  const auto tie = [&](const std::vector<std::size_t>& use) {
    const auto largest = [&](const Row& r) {
      double mx = 0;
      for (const std::size_t s : use) mx = std::max(mx, r.regret[s]);
      return mx;
    };
    const std::size_t top = minimax(out.rows, use, out.scenarios);
    const double least = largest(out.rows[top]);
    std::vector<std::size_t> tied;
    for (std::size_t i = 0; i < out.rows.size(); ++i) {
      if (largest(out.rows[i]) <= least + tolerance + 1e-12) tied.push_back(i);
    }
    std::stable_sort(tied.begin(), tied.end(), [&](std::size_t a, std::size_t b) {
      return simplicity(setups[out.rows[a].members.front()].label) <
             simplicity(setups[out.rows[b].members.front()].label);
    });
    return tied;
  };
  v.tied = tie(all);
  v.winner = v.tied.front();
  const Row& w = out.rows[v.winner];
  const std::string& family = setups[w.members.front()].family;
  const bool is_none = holds_none(w);
  const bool none_tied = is_none && none_at > 0;  // none advised, though a balancer ranks first
  {
    std::vector<double> gains;
    for (const double x : w.vs_none) gains.push_back(1 - x);
    v.gain_median = weighted_median(gains, weights);
    v.gain_min = *std::min_element(gains.begin(), gains.end());
    v.gain_max = *std::max_element(gains.begin(), gains.end());
  }
  for (std::size_t i = 0; i < out.rows.size(); ++i) {
    if (i != v.winner && setups[out.rows[i].members.front()].family != family) {
      v.runner_up = i;
      break;
    }
  }
  // Robust: within the tolerance of the fastest in every scenario; else the scenario where it is furthest from it.
  v.robust = w.regret_max <= tolerance + 1e-12;
  // The dimensions whose values have different winners, by the same tie rule.
  std::set<std::string> dimensions;
  for (const auto& s : out.scenarios) {
    for (const auto& [d, value] : s.values) dimensions.insert(d);
  }
  std::vector<std::string> depends;
  for (const std::string& d : dimensions) {
    std::vector<std::string> values;
    for (const auto& s : out.scenarios) {
      const std::string& value = s.values.at(d);
      if (std::find(values.begin(), values.end(), value) == values.end()) values.push_back(value);
    }
    if (values.size() < 2) continue;
    std::vector<std::string> per_value;
    std::set<std::size_t> winners;
    for (const std::string& value : values) {
      std::vector<std::size_t> use;
      for (std::size_t s = 0; s < m; ++s) {
        if (out.scenarios[s].values.at(d) == value) use.push_back(s);
      }
      const std::size_t top = tie(use).front();
      winners.insert(top);
      per_value.push_back(value + ": " + setups[out.rows[top].members.front()].label);
    }
    if (winners.size() > 1) depends.push_back(words(d) + " (" + join(per_value, "; ") + ")");
  }
  v.depends_on = join(depends, " and ");

  const std::string source = tolerance_source_words(tolerance_words);
  const std::string tol = tolerance_percent(tolerance) + " tolerance (" + source + ")";
  const std::string count = std::to_string(m) + (m == 1 ? " scenario" : " scenarios");
  const Row& first = out.rows.front();
  std::vector<std::string> text;
  if (none_tied && w.regret_max <= tolerance + 1e-12) {
    text.push_back("Keep none: it comes within the " + tol + " of the fastest set-up in each of " + count +
                   ", its largest regret " + pct(w.regret_max) +
                   ", so no balancer gains more than the replay resolves");
  } else if (none_tied && std::all_of(first.vs_none.begin(), first.vs_none.end(),
                                      [&](double x) { return within_tolerance(x, 1, tolerance); })) {
    text.push_back("Keep none: " + row_name(first, setups) + ", the first ranked, gains " + first.gain_words +
                   "; none's largest regret " + pct(w.regret_max) + " is that gain against the faster time");
  } else if (none_tied) {
    text.push_back("Keep none: its largest regret, " + pct(w.regret_max) + ", is within the " + tol + " of " +
                   row_name(first, setups) + "'s, " + pct(first.regret_max) +
                   ", so no balancer gains more than the replay resolves");
  } else if (is_none) {
    text.push_back("Keep none: no balancer has a smaller largest regret than its " + pct(w.regret_max) + " over " +
                   count);
  } else {
    text.push_back("Use " + row_name(w, setups) + ": " + w.gain_words + " (" + count + ")");
  }
  if (v.tied.size() > 1) {
    std::vector<std::string> names;
    for (const std::size_t i : v.tied) {
      names.push_back(setups[out.rows[i].members.front()].label + " (" + pct(out.rows[i].regret_max) + ")");
    }
    const std::string last = names.back();
    names.pop_back();
    text.push_back("Tied within the " + tol + " of the smallest largest regret: " + join(names, ", ") + " and " + last +
                   "; " + (is_none ? "keep" : "use") + " " + setups[w.members.front()].label + ", the simplest (" +
                   simplicity_words() + ")");
  } else if (!is_none && out.rows.size() > 1) {
    text.push_back("No other set-up comes within the " + tol + " of its largest regret, " + pct(w.regret_max));
  }
  if (!v.robust) {
    std::size_t fastest = 0;  // the row with no regret in the winner's worst scenario
    while (fastest + 1 < out.rows.size() && out.rows[fastest].regret[w.worst] > 1e-12) ++fastest;
    text.push_back("Not robust: under " + scenario_words(out.scenarios[w.worst], words) + " it is " +
                   pct(w.regret[w.worst]) + " slower than " + setups[out.rows[fastest].members.front()].label +
                   ", beyond the " + tol);
    if (!v.depends_on.empty()) text.push_back("The winner depends on " + v.depends_on);
  } else if (m > 1) {
    text.push_back(std::string(kRobustWords) + count);
  }
  if (is_none && v.runner_up) {
    const Row& r = out.rows[*v.runner_up];
    text.push_back("The best balancer is " + row_name(r, setups) + ", " + r.gain_words + "; its largest regret " +
                   pct(r.regret_max));
  }
  if (!is_none) {
    // The winner's family: its other rules and methods.
    std::vector<const Row*> kin;
    for (std::size_t i = 0; i < out.rows.size(); ++i) {
      if (i != v.winner && setups[out.rows[i].members.front()].family == family) kin.push_back(&out.rows[i]);
    }
    if (!kin.empty()) {
      const Row* far = *std::max_element(kin.begin(), kin.end(),
                                         [](const Row* a, const Row* b) { return a->regret_max < b->regret_max; });
      if (far->regret_max <= tolerance + 1e-12) {
        text.push_back("Every " + family +
                       " variant is within the tolerance in every scenario: its rule and "
                       "creation method matter less than the balancer");
      } else {
        text.push_back("Its variant matters: " + row_name(*far, setups) + " reaches " + pct(far->regret_max) +
                       " regret");
      }
    }
    if (w.once_median_s) {
      text.push_back("Its one-off cost before the run (median " + seconds(*w.once_median_s) + ") is priced in");
      if (w.break_even_s) {
        text.back() += "; it beats none once none's run lasts over " + seconds(*w.break_even_s) + " (median scenario)";
      }
    }
  }
  if (v.runner_up && !is_none) {
    const Row& r = out.rows[*v.runner_up];
    text.push_back("Runner-up from another balancer: " + row_name(r, setups) + ", largest regret " + pct(r.regret_max));
  }
  v.text = join(text, ". ") + ".";
  return out;
}

void not_robust(Verdict& verdict, const std::string& why) {
  verdict.robust = false;
  const std::size_t at = verdict.text.find(kRobustWords);
  if (at == std::string::npos) return;
  const std::size_t end = verdict.text.find('.', at);
  verdict.text.replace(at, end - at, "Not robust: " + why);
}

ReplayError replay_error(const std::string& label, const std::vector<double>& real_s,
                         const std::vector<double>& real_none_s, double sim_ratio) {
  ReplayError e;
  e.label = label;
  e.n = real_s.size();
  e.sim_ratio = sim_ratio;
  const stats::MedianCi a = stats::median_ci(real_s), none = stats::median_ci(real_none_s);
  e.real_ratio = a.median / none.median;
  if (a.low && a.high && none.low && none.high && *none.low > 0) {
    // Both medians' intervals hold with 95 %: their ratio's ends bound the ratio with at least 0.95^2.
    e.real_low = *a.low / *none.high;
    e.real_high = *a.high / *none.low;
    e.error_low = sim_ratio / *e.real_high - 1;
    e.error_high = sim_ratio / *e.real_low - 1;
  }
  return e;
}

ReplayError program_error(const std::string& label, const std::vector<double>& real_s, double program_s) {
  ReplayError e;
  e.label = label;
  e.n = real_s.size();
  e.sim_ratio = 1;
  const stats::MedianCi a = stats::median_ci(real_s);
  e.real_ratio = a.median / program_s;
  if (a.low && a.high) {  // the program's one run is the reference; the replay's median carries the interval
    e.real_low = *a.low / program_s;
    e.real_high = *a.high / program_s;
    e.error_low = *e.real_low - 1;
    e.error_high = *e.real_high - 1;
  }
  return e;
}

std::optional<double> measured_tolerance(const std::vector<ReplayError>& errors) {
  if (errors.empty()) return std::nullopt;
  double worst = 0;
  for (const ReplayError& e : errors) {
    if (!e.error_low || !e.error_high) return std::nullopt;
    worst = std::max({worst, std::abs(*e.error_low), std::abs(*e.error_high)});
  }
  return worst;
}

std::optional<ToleranceSource> program_spread(const std::vector<double>& seconds, int nprocs,
                                              std::optional<double> busy) {
  if (seconds.size() < 2) return std::nullopt;
  ToleranceSource s;
  s.kind = "program_runs";
  s.what = "your program's own runs";
  s.nprocs = nprocs;
  s.n = seconds.size();
  s.busy = busy;
  const auto [lo, hi] = std::minmax_element(seconds.begin(), seconds.end());
  const stats::MedianCi ci = stats::median_ci(seconds);
  char text[320];
  if (ci.low && ci.high && ci.median > 0) {
    // A comparison of set-ups pairs runs close in time, so a host that drifts over the runs is not noise the
    // comparison sees. The runs' scatter is taken from neighbouring runs' differences (von Neumann's estimator,
    // sqrt(sum d^2 / (2 (n - 1)))), which a slow drift hardly moves, and gives the half-width a median of n runs
    // has at 95 % (1.96 x 1.2533 sigma / sqrt(n)). The drift is reported beside it, not counted.
    double squares = 0;
    for (std::size_t k = 1; k < seconds.size(); ++k) squares += std::pow(seconds[k] - seconds[k - 1], 2);
    const double sigma = std::sqrt(squares / (2.0 * static_cast<double>(seconds.size() - 1)));
    s.fraction = 1.96 * 1.2533 * sigma / std::sqrt(static_cast<double>(seconds.size())) / ci.median;
    const std::size_t half = seconds.size() / 2;
    const double earlier = stats::median({seconds.begin(), seconds.begin() + static_cast<std::ptrdiff_t>(half)});
    const double later = stats::median({seconds.end() - static_cast<std::ptrdiff_t>(half), seconds.end()});
    std::snprintf(text, sizeof text,
                  "median %.4g s, half-width %s from neighbouring runs' differences; the runs drifted %+.1f %% from "
                  "the first %zu to the last %zu, not counted (all %d: 95 %% interval %.4g to %.4g s)",
                  ci.median, tolerance_percent(s.fraction).c_str(), 100 * (later / earlier - 1), half, half,
                  static_cast<int>(seconds.size()), *ci.low, *ci.high);
  } else {
    // Fewer runs give no interval and cannot tell a drift from noise: the slowest over the fastest is what one run
    // of the program may differ by.
    s.fraction = *hi / *lo - 1;
    std::snprintf(text, sizeof text, "%.4g to %.4g s, the slowest %s over the fastest", *lo, *hi,
                  tolerance_percent(s.fraction).c_str());
  }
  s.detail = text;
  return s;
}

namespace {

/// A share as a percentage rounded up to a tenth, without a trailing ".0": what follows "at most" never reads
/// below the share itself (3.2 % is "3.2", never "3"). The nudge keeps a share that prints as 3.2 from reading 3.3.
std::string percent_at_most(double share) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", std::ceil(share * 1000 - 1e-6) / 10);
  std::string s = text;
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  return s;
}

/// Where a source was measured, e.g. "at P = 2, n = 2, the host at most 3.2 % busy".
std::string where_measured(const ToleranceSource& s) {
  std::string text = "at P = " + std::to_string(s.nprocs) + ", n = " + std::to_string(s.n) + ", the host ";
  if (s.busy) {
    text += "at most " + percent_at_most(*s.busy) + " % busy";
  } else {
    text += "load unknown";
  }
  return text;
}

}  // namespace

Tolerance largest_tolerance(std::vector<ToleranceSource> sources) {
  if (sources.empty()) throw std::invalid_argument("largest_tolerance: no source");
  const ToleranceSource* spread = nullptr;
  for (const ToleranceSource& s : sources) {
    // advice.csv records the kind, and its readers allow only the table's: a new kind goes into the table first.
    if (std::find(kToleranceKinds.begin(), kToleranceKinds.end(), s.kind) == kToleranceKinds.end()) {
      throw std::logic_error("largest_tolerance: a source of kind '" + s.kind + "', not in kToleranceKinds");
    }
    if (s.kind == "program_runs") spread = &s;
  }
  // kToleranceRule: a prediction check measures the simulation against real runs of the trace, and those runs vary
  // by their host's load as well; where the program's own repeated runs vary by less, that is what a user would see,
  // so the check never widens the tolerance past them.
  if (spread != nullptr) {
    const double cap = spread->fraction;
    for (ToleranceSource& s : sources) {
      if (s.kind == "prediction" && s.fraction > cap) {
        s.detail += ", cut to your program's own spread, " + tolerance_percent(cap);
        s.fraction = cap;
      }
    }
  }
  std::size_t at = 0;
  for (std::size_t k = 1; k < sources.size(); ++k) {
    if (sources[k].fraction > sources[at].fraction) at = k;
  }
  Tolerance t;
  t.fraction = sources[at].fraction;
  t.source = sources[at];
  std::vector<std::string> others;
  for (std::size_t k = 0; k < sources.size(); ++k) {
    if (k == at || sources[k].kind == "assumed") continue;
    others.push_back(sources[k].what + " " + where_measured(sources[k]) + ": " + sources[k].detail);
  }
  if (t.source.kind == "assumed") {
    t.words = "assumed, not measured";
    if (!t.source.detail.empty()) t.words += ", " + t.source.detail;
    if (!others.empty()) t.words += "; measured: " + join(others, "; ");
  } else {
    t.words = "measured by " + t.source.what + " " + where_measured(t.source) + ": " + t.source.detail;
    if (!others.empty()) t.words += "; also " + join(others, "; ");
  }
  return t;
}

AtRanks at_ranks_of(int nprocs, const Ranking& ranking, const std::vector<Setup>& setups,
                    const std::vector<Scenario>& scenarios, const std::vector<Scenario>& order) {
  const Setup& advised = setups[ranking.rows[ranking.verdict.winner].members.front()];
  AtRanks a{nprocs, std::vector<double>(order.size(), std::nan("")), advised.label,
            std::vector<double>(order.size(), std::nan("")), std::vector<double>(order.size(), std::nan(""))};
  for (std::size_t s = 0; s < order.size(); ++s) {
    for (std::size_t t = 0; t < scenarios.size(); ++t) {
      if (scenarios[t].values != order[s].values) continue;
      a.whole_s[s] = advised.price[t].whole_s();
      for (const Row& row : ranking.rows) {  // the set-ups the ranking kept: each has a time in every scenario
        for (const std::size_t k : row.members) {
          const double whole = setups[k].price[t].whole_s();
          if (std::isnan(a.best_s[s]) || whole < a.best_s[s]) a.best_s[s] = whole;
          if (setups[k].label == "none") a.none_s[s] = whole;
        }
      }
    }
  }
  return a;
}

std::string first_words(const AtRanks& answer, const std::vector<Scenario>& scenarios, double tolerance,
                        const std::string& run_flags, const std::string& next) {
  std::vector<double> gain(answer.none_s.size(), std::nan(""));
  for (std::size_t s = 0; s < gain.size() && s < answer.whole_s.size(); ++s)
    gain[s] = 1 - answer.whole_s[s] / answer.none_s[s];  // NaN where either is unknown: left out
  const auto rules = gains_by_rule(gain, scenarios, tolerance);
  std::vector<std::string> gains;
  for (const auto& [rule, range] : rules) {
    const auto [lo, hi] = range;
    gains.push_back((rule.empty() ? "" : rule + " ") + (same_times(lo, hi) ? pct(lo) : pct(lo) + " to " + pct(hi)));
  }
  const bool none = answer.winner == "none";
  std::string words = (none ? "Keep none at P = " : "Use " + answer.winner + " at P = ") +
                      std::to_string(answer.nprocs) + " (simulated)";
  if (!gains.empty() && !none) {
    words += "; faster than none by " + join(gains, ", ") +
             (rules.size() > 1 || !rules.front().first.empty() ? " by the speed-up past the measured sizes" : "");
  }
  words += ". Run: mpiexec -n " + std::to_string(answer.nprocs) + " YOUR_PROGRAM " + run_flags + ".";
  if (!next.empty()) words += " Next: " + next;
  return words;
}

std::optional<RanksAnswer> fewest_ranks(const std::vector<AtRanks>& at, const std::vector<Scenario>& scenarios,
                                        double tolerance, const Words& words, const std::string& searched) {
  if (at.empty()) return std::nullopt;
  // The scenarios every count has a time in: a count is compared with the others only where all ran.
  std::vector<std::size_t> use;
  for (std::size_t s = 0; s < scenarios.size(); ++s) {
    if (std::all_of(at.begin(), at.end(), [&](const AtRanks& a) {
          return s < a.whole_s.size() && std::isfinite(a.whole_s[s]) && a.whole_s[s] > 0;
        })) {
      use.push_back(s);
    }
  }
  if (use.empty()) return std::nullopt;
  RanksAnswer a;
  const std::size_t n = at.size();
  a.regret_max.assign(n, 0);
  a.worst.assign(n, use.front());
  a.core_hours_lo.assign(n, kInf);
  a.core_hours_hi.assign(n, 0);
  std::vector<double> lo_s(n, kInf), hi_s(n, 0);
  // regret[k][s]: count k's advised set-up against the fastest set-up at any count, in scenario s.
  std::vector<std::vector<double>> regret(n, std::vector<double>(scenarios.size(), 0));
  for (const std::size_t s : use) {
    double best = kInf;  // the fastest set-up simulated at any count
    for (const AtRanks& x : at) {
      best = std::min(best, x.whole_s[s]);
      if (s < x.best_s.size() && std::isfinite(x.best_s[s])) best = std::min(best, x.best_s[s]);
    }
    for (std::size_t k = 0; k < n; ++k) {
      const double t = at[k].whole_s[s];
      regret[k][s] = t / best - 1;
      if (regret[k][s] > a.regret_max[k] + 1e-12) {
        a.regret_max[k] = regret[k][s];
        a.worst[k] = s;
      }
      lo_s[k] = std::min(lo_s[k], t);
      hi_s[k] = std::max(hi_s[k], t);
      const double core_hours = t * at[k].nprocs / 3600;
      a.core_hours_lo[k] = std::min(a.core_hours_lo[k], core_hours);
      a.core_hours_hi[k] = std::max(a.core_hours_hi[k], core_hours);
    }
  }
  // The rule, over some of the scenarios: of the counts within the tolerance in each, the cheapest: the fewest
  // core-hours in its dearest scenario (what a user pays at most), the fewer ranks on a tie. Usually the fewest
  // ranks; more ranks only where they finish so much sooner that they cost less. Else the smallest largest regret,
  // the fewer ranks on a tie. Returns (the count, whether it is within the tolerance).
  const auto choose = [&](const std::vector<std::size_t>& among) {
    std::vector<double> worst_regret(n, 0), dearest(n, 0);
    for (std::size_t k = 0; k < n; ++k) {
      for (const std::size_t s : among) {
        worst_regret[k] = std::max(worst_regret[k], regret[k][s]);
        dearest[k] = std::max(dearest[k], at[k].whole_s[s] * at[k].nprocs / 3600);
      }
    }
    const auto cheaper = [&](std::size_t k, std::size_t than) {
      const double d = dearest[k] - dearest[than];
      if (std::abs(d) > 1e-12 * std::max(dearest[k], dearest[than])) return d < 0;
      return at[k].nprocs < at[than].nprocs;
    };
    std::optional<std::size_t> within;
    std::size_t minimax_at = 0;
    for (std::size_t k = 0; k < n; ++k) {
      if (worst_regret[k] <= tolerance + 1e-12 && (!within || cheaper(k, *within))) within = k;
      const double d = worst_regret[k] - worst_regret[minimax_at];
      if (d < -1e-12 || (std::abs(d) <= 1e-12 && at[k].nprocs < at[minimax_at].nprocs)) minimax_at = k;
    }
    return std::pair{within.value_or(minimax_at), within.has_value()};
  };
  const auto [chosen, within] = choose(use);
  a.fewest = chosen;
  // The same rule under each assumption past the measured sizes alone: where they answer differently, the answer
  // is one that only some favour, and the words say which count each would pick.
  std::vector<std::pair<std::string, std::vector<std::size_t>>> rules;
  for (const std::size_t s : use) {
    const std::string name = assumption_of(scenarios[s]);
    auto it = std::find_if(rules.begin(), rules.end(), [&](const auto& r) { return r.first == name; });
    if (it == rules.end()) it = rules.insert(rules.end(), {name, {}});
    it->second.push_back(s);
  }
  if (rules.size() > 1) {
    for (const auto& [name, among] : rules) a.by_rule.emplace_back(name, at[choose(among).first].nprocs);
  }
  a.answer = at[a.fewest];
  const std::string count = std::to_string(use.size()) + (use.size() == 1 ? " scenario" : " scenarios");
  const std::string tol = tolerance_percent(tolerance);
  const auto range = [](double lo, double hi, const std::string& unit) {
    char text[96];
    if (same_times(lo, hi)) {
      std::snprintf(text, sizeof text, "%.4g%s", lo, unit.c_str());
    } else {
      std::snprintf(text, sizeof text, "%.4g to %.4g%s", lo, hi, unit.c_str());
    }
    return std::string(text);
  };
  std::string text;
  const AtRanks& pick = at[a.fewest];
  if (within) {
    text = std::to_string(pick.nprocs) + " ranks: the fewest core-hours in the dearest scenario among the counts " +
           "whose advised set-up is within the " + tol + " tolerance of the fastest set-up at any count in each of " +
           count + " (a threshold rule: more ranks are not advised for a gain inside the tolerance)";
  } else {
    text = std::to_string(pick.nprocs) + " ranks: no rank count's advised set-up is within the " + tol +
           " tolerance of the fastest set-up at any count in each of " + count + "; " + std::to_string(pick.nprocs) +
           " ranks have the smallest largest regret (minimax regret over the rank counts)";
  }
  // What the answer's ranks buy over the fewest counted: its gain in time against its cost in core-hours, the
  // trade a user weighs, each as a range over the scenarios.
  std::size_t fewest_at = 0;
  for (std::size_t k = 1; k < n; ++k) {
    if (at[k].nprocs < at[fewest_at].nprocs) fewest_at = k;
  }
  if (fewest_at != a.fewest) {
    double gain_lo = kInf, gain_hi = -kInf, cost_lo = kInf, cost_hi = 0;
    for (const std::size_t s : use) {
      const double gain = 1 - pick.whole_s[s] / at[fewest_at].whole_s[s];
      const double cost = pick.whole_s[s] * pick.nprocs / (at[fewest_at].whole_s[s] * at[fewest_at].nprocs);
      gain_lo = std::min(gain_lo, gain);
      gain_hi = std::max(gain_hi, gain);
      cost_lo = std::min(cost_lo, cost);
      cost_hi = std::max(cost_hi, cost);
    }
    char trade[160];
    std::snprintf(trade, sizeof trade, "%.1f to %.1f %% faster for %.1f to %.1f times the core-hours", 100 * gain_lo,
                  100 * gain_hi, cost_lo, cost_hi);
    text += ". Against " + std::to_string(at[fewest_at].nprocs) + " ranks, the fewest counted, they are " + trade;
  }
  std::vector<std::string> each;
  for (std::size_t k = 0; k < n; ++k) {
    std::string e = std::to_string(at[k].nprocs) + " ranks (" + at[k].winner + ") take " +
                    range(lo_s[k], hi_s[k], " s") + ", " + range(a.core_hours_lo[k], a.core_hours_hi[k], "") +
                    " core-hours, largest regret " + pct(a.regret_max[k]);
    if (a.regret_max[k] > 1e-12) e += " under " + scenario_words(scenarios[a.worst[k]], words);
    each.push_back(std::move(e));
  }
  std::string split;
  if (std::any_of(a.by_rule.begin(), a.by_rule.end(), [&](const auto& r) { return r.second != pick.nprocs; })) {
    std::vector<std::string> each_rule;
    for (const auto& [name, ranks] : a.by_rule)
      each_rule.push_back("extrapolate " + name + " " + std::to_string(ranks));
    const std::string ranks = std::to_string(pick.nprocs);
    split = ". Only some assumptions favour " + ranks + " ranks: alone, the same rule gives " + join(each_rule, ", ") +
            (within ? "; " + ranks + " ranks are within the tolerance under all of them" : std::string()) +
            ", and measuring the speed-up past the measured sizes tells which holds";
  }
  a.text = text + split + ". " + join(each, "; ") + (searched.empty() ? std::string() : ". Searched " + searched) + ".";
  return a;
}

}  // namespace mcmclb::advice
