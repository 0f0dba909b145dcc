// SPDX-License-Identifier: BSD-3-Clause
// The measured item costs (mcmclb/item_estimate.hpp): running sums per chain and group size, and Amdahl's
// fraction fitted to them when asked, each with its spread (ItemEstimate::End).
#include "mcmclb/item_estimate.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <optional>
#include <span>
#include <stdexcept>
#include <vector>

namespace mcmclb {

namespace {

/// Time at m ranks over time at one rank under fraction p.
double amdahl(double p, int m) { return (1.0 - p) + p / m; }

}  // namespace

void ItemEstimate::add(int chain, int size, int64_t items, double seconds, double squares, bool own) {
  Sum& s = sums_[{chain, size}];
  s.items += items;
  s.seconds += seconds;
  s.squares += squares;
  if (own) {
    Sum& o = owned_[{chain, size}];
    o.items += items;
    o.seconds += seconds;
    o.squares += squares;
  }
  fitted_ = false;
}

std::vector<int64_t> ItemEstimate::words() const {
  std::vector<int64_t> out;
  out.reserve(5 * sums_.size());
  for (const auto& [key, s] : sums_) {
    out.insert(out.end(), {int64_t{key.first}, int64_t{key.second}, s.items, std::llround(s.seconds * 1e9),
                           std::bit_cast<int64_t>(s.squares)});
  }
  return out;
}

void ItemEstimate::adopt(std::span<const int64_t> words) {
  if (words.size() % 5 != 0) throw std::logic_error("ItemEstimate::adopt: words come in fives");
  sums_.clear();
  for (std::size_t i = 0; i < words.size(); i += 5) {
    sums_[{static_cast<int>(words[i]), static_cast<int>(words[i + 1])}] = {
        words[i + 2], static_cast<double>(words[i + 3]) / 1e9, std::bit_cast<double>(words[i + 4])};
  }
  fitted_ = false;
}

namespace {

/// Each item's relative scatter in s (standard deviation over mean), where s has two items or more.
std::optional<double> relative_scatter(int64_t items, double seconds, double squares) {
  if (items < 2 || seconds <= 0) return std::nullopt;
  const auto n = static_cast<double>(items);
  const double mean = seconds / n;
  // Items alike leave a difference of rounding errors: below a relative 1e-6, no scatter.
  const double cv = std::sqrt(std::max(0.0, (squares - seconds * mean) / (n - 1))) / mean;
  return cv < 1e-6 ? 0.0 : cv;
}

/// Least-squares Amdahl fraction in [0, 1] for ratios of mean item times (ratio, (smallest size, larger size)).
/// The squared error is smooth in p, so a golden-section search finds p.
double fit_fraction(const std::vector<std::pair<double, std::pair<int, int>>>& ratios) {
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
  return std::clamp((lo + hi) / 2, 0.0, 1.0);
}

constexpr auto kPoint = static_cast<std::size_t>(ItemEstimate::End::point);
constexpr auto kLow = static_cast<std::size_t>(ItemEstimate::End::low);
constexpr auto kHigh = static_cast<std::size_t>(ItemEstimate::End::high);

}  // namespace

double ItemEstimate::total_at(const Sum& s, End end) const {
  if (end == End::point) return s.seconds;
  // Two standard errors of the mean, for each item; a size with one item takes the relative scatter the other
  // sizes show.
  const auto n = static_cast<double>(s.items);
  const double cv = relative_scatter(s.items, s.seconds, s.squares).value_or(pooled_cv_);
  const double margin = 2 * cv * s.seconds / std::sqrt(n);
  return end == End::low ? std::max(0.0, s.seconds - margin) : s.seconds + margin;
}

double ItemEstimate::mean_at(const Sum& s, End end) const { return total_at(s, end) / static_cast<double>(s.items); }

void ItemEstimate::fit() const {
  if (fitted_) return;
  double cv_sum = 0;
  int cv_count = 0;
  for (const auto& [key, s] : sums_) {
    if (const auto cv = relative_scatter(s.items, s.seconds, s.squares)) {
      cv_sum += *cv;
      ++cv_count;
    }
  }
  pooled_cv_ = cv_count > 0 ? cv_sum / cv_count : 0.0;
  // Per chain, the ratio of its mean item at each larger size to its mean at its smallest: amdahl(p, m) /
  // amdahl(p, smallest) in the model. The point fit takes every chain's ratios together; each chain's own fit at
  // its ratios' high end (larger sizes slow, the smallest fast) gives its least fraction, at the low end its most.
  std::vector<std::pair<double, std::pair<int, int>>> ratios, chain_high, chain_low;
  fit_chains_ = 0;
  p_ = {1, 1, 1};
  bool any = false;
  const auto fit_chain = [&] {
    if (chain_high.empty()) return;
    const double least = fit_fraction(chain_high), most = fit_fraction(chain_low);
    p_[kLow] = any ? std::min(p_[kLow], least) : least;
    p_[kHigh] = any ? std::max(p_[kHigh], most) : most;
    any = true;
    ++fit_chains_;
  };
  for (auto it = sums_.begin(); it != sums_.end();) {
    const int chain = it->first.first;
    const int smallest = it->first.second;
    const Sum& base = it->second;
    const double mean = base.seconds / static_cast<double>(base.items);
    const double fast = mean_at(base, End::low), slow = mean_at(base, End::high);
    chain_high.clear();
    chain_low.clear();
    for (++it; it != sums_.end() && it->first.first == chain; ++it) {
      if (mean <= 0) continue;
      const std::pair<int, int> sizes{smallest, it->first.second};
      const Sum& s = it->second;
      ratios.push_back({s.seconds / static_cast<double>(s.items) / mean, sizes});
      chain_high.push_back({mean_at(s, End::high) / std::max(fast, mean * 1e-9), sizes});
      chain_low.push_back({mean_at(s, End::low) / slow, sizes});
    }
    fit_chain();
  }
  if (!ratios.empty()) {
    p_[kPoint] = fit_fraction(ratios);
    // The spread holds the point: what a merge gains then lies between its ends, so both ends agreeing means the
    // point estimate agrees too.
    p_[kLow] = std::min(p_[kLow], p_[kPoint]);
    p_[kHigh] = std::max(p_[kHigh], p_[kPoint]);
  }
  fitted_ = true;
}

double ItemEstimate::parallel_fraction(End end) const {
  if (world_) return world_p_[static_cast<std::size_t>(end)];
  fit();
  return p_[static_cast<std::size_t>(end)];
}

double ItemEstimate::speedup(int m, End end) const { return 1.0 / amdahl(parallel_fraction(end), std::max(m, 1)); }

double ItemEstimate::single_rank_s(int chain, End end) const {
  if (world_) return world_s_[static_cast<std::size_t>(end)];
  fit();
  double seconds = 0, all_seconds = 0;
  int64_t items = 0, all_items = 0;
  for (const auto& [key, s] : sums_) {
    const double single = total_at(s, end) * speedup(key.second, end);
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
  if (world_) return world_s_[kPoint];
  double longest = 0;
  for (const auto& [key, s] : sums_) longest = std::max(longest, single_rank_s(key.first));
  return longest;
}

ItemEstimate::WorldWords ItemEstimate::world_words() const {
  WorldWords words{};
  fit();
  std::array<double, 3> single{};
  for (const auto& [key, s] : owned_) {
    words[0] += s.items;
    for (const End end : {End::point, End::low, End::high}) {
      // At an end, the owned items' mean is taken at that end of the chain's scatter as this rank knows it.
      const auto it = sums_.find(key);
      const Sum& scatter = it != sums_.end() ? it->second : s;
      const double ratio = end == End::point || scatter.seconds <= 0 ? 1.0 : total_at(scatter, end) / scatter.seconds;
      single[static_cast<std::size_t>(end)] += s.seconds * ratio * speedup(key.second, end);
    }
  }
  words[1] = std::llround(single[kPoint] * 1e9);
  words[2] = fit_chains_;
  words[3] = std::llround(p_[kPoint] * 1e9) * fit_chains_;
  words[4] = std::llround(p_[kLow] * 1e9) * fit_chains_;
  words[5] = std::llround(p_[kHigh] * 1e9) * fit_chains_;
  words[6] = std::llround(single[kLow] * 1e9);
  words[7] = std::llround(single[kHigh] * 1e9);
  return words;
}

ItemEstimate ItemEstimate::from_world(const WorldWords& sums) {
  ItemEstimate e;
  e.world_ = true;
  const auto per_item = [&](int64_t ns) {
    return sums[0] > 0 ? static_cast<double>(ns) / 1e9 / static_cast<double>(sums[0]) : 0.0;
  };
  const auto fraction = [&](int64_t weighted) {
    return sums[2] > 0 ? std::clamp(static_cast<double>(weighted) / 1e9 / static_cast<double>(sums[2]), 0.0, 1.0) : 1.0;
  };
  e.world_s_ = {per_item(sums[1]), per_item(sums[6]), per_item(sums[7])};
  e.world_p_ = {fraction(sums[3]), fraction(sums[4]), fraction(sums[5])};
  return e;
}

std::vector<PairedSpeedup> paired_speedups(std::span<const ItemCost> costs) {
  struct Stretch {
    std::size_t begin, end;  // [begin, end) in costs: one chain's consecutive items at one size
  };
  std::vector<PairedSpeedup> out;
  for (std::size_t at = 0; at < costs.size();) {
    const int chain = costs[at].chain;
    std::vector<Stretch> stretches;
    for (; at < costs.size() && costs[at].chain == chain; ++at) {
      const bool goes_on =
          !stretches.empty() && costs[at - 1].ranks == costs[at].ranks && costs[at - 1].item + 1 == costs[at].item;
      if (goes_on) {
        ++stretches.back().end;
      } else {
        stretches.push_back({at, at + 1});
      }
    }
    std::optional<double> up;  // the current stretch's speed-up over 1 rank, once a stretch at 1 rank was seen
    for (std::size_t s = 0; s < stretches.size(); ++s) {
      const Stretch& here = stretches[s];
      const int m = costs[here.begin].ranks;
      if (s > 0 && up) {
        const Stretch& before = stretches[s - 1];
        const bool adjacent = costs[before.end - 1].item + 1 == costs[here.begin].item;  // no gap between
        const auto most =
            static_cast<std::size_t>(std::min<int64_t>({kPairItems, static_cast<int64_t>(before.end - before.begin),
                                                        static_cast<int64_t>(here.end - here.begin)}));
        double a = costs[before.end - 1].seconds, b = costs[here.begin].seconds;
        std::size_t n = 1;
        for (; n < most; ++n) {
          const double more_a = costs[before.end - 1 - n].seconds, more_b = costs[here.begin + n].seconds;
          if (a + b + more_a + more_b > kPairSeconds) break;
          a += more_a;
          b += more_b;
        }
        up = adjacent && a > 0 && b > 0 ? std::optional(*up * a / b) : std::nullopt;
      }
      if (m == 1) up = 1.0;
      if (up && m > 1) out.push_back({chain, m, *up});
    }
  }
  return out;
}

}  // namespace mcmclb
