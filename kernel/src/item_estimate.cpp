// SPDX-License-Identifier: BSD-3-Clause
// The measured item costs (mcmclb/item_estimate.hpp): running sums per chain and group size, and Amdahl's
// fraction fitted to them when asked.
#include "mcmclb/item_estimate.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

namespace mcmclb {

namespace {

/// Time at m ranks over time at one rank under fraction p.
double amdahl(double p, int m) { return (1.0 - p) + p / m; }

}  // namespace

void ItemEstimate::add(int chain, int size, int64_t items, double seconds, bool own) {
  Sum& s = sums_[{chain, size}];
  s.items += items;
  s.seconds += seconds;
  if (own) {
    Sum& o = owned_[{chain, size}];
    o.items += items;
    o.seconds += seconds;
  }
  fitted_ = false;
}

std::vector<int64_t> ItemEstimate::words() const {
  std::vector<int64_t> out;
  out.reserve(4 * sums_.size());
  for (const auto& [key, s] : sums_) {
    out.insert(out.end(), {int64_t{key.first}, int64_t{key.second}, s.items, std::llround(s.seconds * 1e9)});
  }
  return out;
}

void ItemEstimate::adopt(std::span<const int64_t> words) {
  if (words.size() % 4 != 0) throw std::logic_error("ItemEstimate::adopt: words come in fours");
  sums_.clear();
  for (std::size_t i = 0; i < words.size(); i += 4) {
    sums_[{static_cast<int>(words[i]), static_cast<int>(words[i + 1])}] = {words[i + 2],
                                                                           static_cast<double>(words[i + 3]) / 1e9};
  }
  fitted_ = false;
}

double ItemEstimate::parallel_fraction() const {
  if (world_) return world_p_;
  if (fitted_) return p_;
  // Per chain, the ratio of its mean item at each larger size to its mean at its smallest: amdahl(p, m) /
  // amdahl(p, smallest) in the model. The squared error is smooth in p, so a golden-section search finds p.
  std::vector<std::pair<double, std::pair<int, int>>> ratios;  // (ratio, (smallest, m))
  fit_chains_ = 0;
  for (auto it = sums_.begin(); it != sums_.end();) {
    const int chain = it->first.first;
    const int smallest = it->first.second;
    const double base = it->second.seconds / static_cast<double>(it->second.items);
    bool counted = false;
    for (++it; it != sums_.end() && it->first.first == chain; ++it) {
      if (base <= 0) continue;
      ratios.push_back(
          {it->second.seconds / static_cast<double>(it->second.items) / base, {smallest, it->first.second}});
      counted = true;
    }
    fit_chains_ += counted ? 1 : 0;
  }
  p_ = 1;
  if (!ratios.empty()) {
    const auto error = [&](double p) {
      double e = 0;
      for (const auto& [r, sizes] : ratios) {
        const double d = r - amdahl(p, sizes.second) / amdahl(p, sizes.first);
        e += d * d;
      }
      return e;
    };
    const double golden = (std::sqrt(5.0) - 1) / 2;
    double lo = 0, hi = 1;
    for (int step = 0; step < 60; ++step) {
      const double a = hi - golden * (hi - lo), b = lo + golden * (hi - lo);
      if (error(a) <= error(b)) {
        hi = b;
      } else {
        lo = a;
      }
    }
    p_ = std::clamp((lo + hi) / 2, 0.0, 1.0);
  }
  fitted_ = true;
  return p_;
}

double ItemEstimate::speedup(int m) const { return 1.0 / amdahl(parallel_fraction(), std::max(m, 1)); }

double ItemEstimate::single_rank_s(int chain) const {
  if (world_) return world_s_;
  double seconds = 0, all_seconds = 0;
  int64_t items = 0, all_items = 0;
  for (const auto& [key, s] : sums_) {
    const double single = s.seconds * speedup(key.second);
    all_seconds += single;
    all_items += s.items;
    if (key.first != chain) continue;
    seconds += single;
    items += s.items;
  }
  if (items > 0) return seconds / static_cast<double>(items);
  return all_items > 0 ? all_seconds / static_cast<double>(all_items) : 0.0;
}

double ItemEstimate::longest_single_rank_s() const {
  if (world_) return world_s_;
  double longest = 0;
  for (const auto& [key, s] : sums_) longest = std::max(longest, single_rank_s(key.first));
  return longest;
}

std::array<int64_t, 4> ItemEstimate::world_words() const {
  std::array<int64_t, 4> words{};
  double single = 0;
  for (const auto& [key, s] : owned_) {
    words[0] += s.items;
    single += s.seconds * speedup(key.second);
  }
  words[1] = std::llround(single * 1e9);
  (void)parallel_fraction();
  words[2] = fit_chains_;
  words[3] = std::llround(p_ * 1e9) * fit_chains_;
  return words;
}

ItemEstimate ItemEstimate::from_world(const std::array<int64_t, 4>& sums) {
  ItemEstimate e;
  e.world_ = true;
  e.world_s_ = sums[0] > 0 ? static_cast<double>(sums[1]) / 1e9 / static_cast<double>(sums[0]) : 0.0;
  e.world_p_ =
      sums[2] > 0 ? std::clamp(static_cast<double>(sums[3]) / 1e9 / static_cast<double>(sums[2]), 0.0, 1.0) : 1.0;
  return e;
}

}  // namespace mcmclb
