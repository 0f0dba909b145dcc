// SPDX-License-Identifier: BSD-3-Clause
// mcmclb/comparison.hpp: two configurations compared, and compare.csv's table.
#include "mcmclb/comparison.hpp"

#include <algorithm>
#include <functional>
#include <utility>

#include "mcmclb/input_error.hpp"
#include "mcmclb/runs_csv.hpp"
#include "mcmclb/text.hpp"

namespace mcmclb {

namespace {

std::string opt(const std::optional<double>& v) { return v ? csv::number(*v) : std::string(); }

/// compare.csv: one table, from which its header and rows derive.
struct CompareColumn {
  std::string name;
  std::function<std::string(const Comparison&)> get;
};

const std::vector<CompareColumn>& compare_columns() {
  using C = Comparison;
  const auto side = [](const std::optional<stats::MedianCi> C::*which,
                       const std::function<std::optional<double>(const stats::MedianCi&)>& field) {
    return [which, field](const C& c) { return (c.*which) ? opt(field(*(c.*which))) : std::string(); };
  };
  const auto n = [](const stats::MedianCi& m) { return std::optional<double>(static_cast<double>(m.n)); };
  const auto median = [](const stats::MedianCi& m) { return std::optional<double>(m.median); };
  const auto low = [](const stats::MedianCi& m) { return m.low; };
  const auto high = [](const stats::MedianCi& m) { return m.high; };
  static const std::vector<CompareColumn> table = {
      {"point", [](const C& c) { return c.point; }},
      {"backend", [](const C& c) { return c.backend; }},
      {"n_a", side(&C::a, n)},
      {"median_a_s", side(&C::a, median)},
      {"ci_low_a_s", side(&C::a, low)},
      {"ci_high_a_s", side(&C::a, high)},
      {"n_b", side(&C::b, n)},
      {"median_b_s", side(&C::b, median)},
      {"ci_low_b_s", side(&C::b, low)},
      {"ci_high_b_s", side(&C::b, high)},
      {"ratio", [](const C& c) { return opt(c.ratio); }},
      {"ratio_low", [](const C& c) { return opt(c.ratio_low); }},
      {"ratio_high", [](const C& c) { return opt(c.ratio_high); }},
      {"p_value", [](const C& c) { return opt(c.p); }},
      {"regroups_avg_a", [](const C& c) { return opt(c.regroups_a); }},
      {"regroups_avg_b", [](const C& c) { return opt(c.regroups_b); }},
      {"verdict", [](const C& c) { return c.verdict; }},
  };
  return table;
}

}  // namespace

double smallest_p(std::size_t m, std::size_t n) {
  double orderings = 1;  // C(m+n, m), as a double (only compared with 2 / alpha)
  for (std::size_t i = 1; i <= m; ++i) orderings = orderings * static_cast<double>(n + i) / static_cast<double>(i);
  return std::min(1.0, 2 / orderings);
}

Comparison compare_configurations(const ConfigurationSamples& a, const ConfigurationSamples& b,
                                  const CompareRule& rule) {
  Comparison c;
  c.backend = a.simulated ? "smpi" : "mpi";
  c.a = stats::median_ci(a.time_s);
  c.b = stats::median_ci(b.time_s);
  c.regroups_a = stats::median(a.regroups_avg);
  c.regroups_b = stats::median(b.regroups_avg);
  if (c.a->median > 0) c.ratio = c.b->median / c.a->median;
  // The ratio's interval from the two medians' intervals (docs/guide/statistics.md says why not a bootstrap).
  if (c.a->low && c.b->low && *c.a->low > 0) {
    c.ratio_low = *c.b->low / *c.a->high;
    c.ratio_high = *c.b->high / *c.a->low;
  }
  if (a.simulated) {  // deterministic: any difference is a change, and no test applies
    c.verdict = a.exact == b.exact ? "identical" : "changed (simulated)";
    return c;
  }
  const auto test = stats::mann_whitney(a.time_s, b.time_s);
  c.p = test.p;
  if (smallest_p(a.time_s.size(), b.time_s.size()) >= rule.alpha) {
    c.verdict = "too few repetitions";
  } else if (test.p < rule.alpha && c.ratio && *c.ratio > 1 + rule.threshold_pct / 100) {
    c.verdict = "slower";
  } else if (test.p < rule.alpha && c.ratio && *c.ratio < 1 - rule.threshold_pct / 100) {
    c.verdict = "faster";
  } else {
    c.verdict = "no significant change";
  }
  return c;
}

Comparison one_side(const ConfigurationSamples& s, bool in_a) {
  Comparison c;
  c.backend = s.simulated ? "smpi" : "mpi";
  (in_a ? c.a : c.b) = stats::median_ci(s.time_s);
  (in_a ? c.regroups_a : c.regroups_b) = stats::median(s.regroups_avg);
  c.verdict = in_a ? "only in A" : "only in B";
  return c;
}

std::map<std::string, ConfigurationSamples> without_columns(std::map<std::string, ConfigurationSamples> configurations,
                                                            const std::string& dir,
                                                            const std::vector<std::string>& ignore,
                                                            const RunsColumns& columns) {
  if (ignore.empty()) return configurations;
  std::map<std::string, ConfigurationSamples> out;
  for (auto& [key, s] : configurations) {
    for (std::size_t k = 0; k < columns.key_names.size(); ++k) {
      if (std::find(ignore.begin(), ignore.end(), columns.key_names[k]) != ignore.end()) s.key_fields[k].clear();
    }
    if (!out.emplace(key_of_fields(s.key_fields), std::move(s)).second) {
      throw InputError("--ignore " + join(ignore, ",") + ": " + printable(dir, 200) +
                       " holds several configurations that differ only in those columns (allowed: columns in "
                       "which each folder's configurations are all alike, e.g. one balancer per folder)");
    }
  }
  return out;
}

const csv::Row& compare_header() {
  static const csv::Row header = [] {
    csv::Row h;
    for (const auto& c : compare_columns()) h.push_back(c.name);
    return h;
  }();
  return header;
}

csv::Row compare_row(const Comparison& c) {
  csv::Row row;
  for (const auto& column : compare_columns()) row.push_back(column.get(c));
  return row;
}

}  // namespace mcmclb
