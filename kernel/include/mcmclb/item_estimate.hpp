// SPDX-License-Identifier: BSD-3-Clause
// What an application's items cost, learned from the items as they are worked, for the balancers that plan ahead
// and the finished rule pays: each chain's mean item at one rank, and how the items speed up with the group's
// size, each with its spread over the items and chains (End). No MPI here: the kernel adds every item it times and
// asks; a balancer whose decisions every rank makes alike (collective) agrees on one estimate for the whole run through
// world_words() and from_world().
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <span>
#include <utility>
#include <vector>

namespace mcmclb {

class ItemEstimate {
 public:
  /// Which end of the estimate's spread a value comes from. A chain's mean item time at one group size is known to
  /// within two standard errors of the mean; a size with one item takes the relative scatter of the sizes with
  /// more (none: no scatter known). Each chain worked at two sizes or more gives its own fraction, fitted once with
  /// every mean at the end that gives the least fraction and once at the end that gives the most; the spread of the
  /// fraction runs from the least of the chains' low ends to the most of their high ends, and holds the fitted
  /// fraction. `low` pairs the least fraction with each item cost less two standard errors, `high` the most with
  /// the cost plus two: what a merge gains (an item's time at the group's size less that at a larger size) grows
  /// with both, so a merge gains least at `low`, most at `high`, and between them at `point`.
  enum class End { point, low, high };
  /// The words world_words() gives and from_world() takes.
  static constexpr std::size_t kWorldWords = 8;
  using WorldWords = std::array<int64_t, kWorldWords>;

  /// One item of chain `chain` took `seconds` on a group of `size` ranks. own: this rank is the one that counts
  /// the item towards the world's estimate (the group's leader), so that each item is counted once.
  void add(int chain, int size, double seconds, bool own) { add(chain, size, 1, seconds, seconds * seconds, own); }
  /// `items` items of chain `chain` took `seconds` in all on a group of `size` ranks, each alike (no scatter).
  void add(int chain, int size, int64_t items, double seconds, bool own) {
    add(chain, size, items, seconds, items > 0 ? seconds * seconds / static_cast<double>(items) : 0.0, own);
  }
  /// The same, with the sum of the items' squared seconds.
  void add(int chain, int size, int64_t items, double seconds, double squares, bool own);
  /// The sums the estimate is made of (not what this rank owns), as words that adopt() takes: per chain and size,
  /// five (chain, size, items, seconds in ns, the squares' double bits).
  [[nodiscard]] std::vector<int64_t> words() const;
  /// Takes another rank's sums in place of its own (what it owns stays), so that a group whose members came from
  /// different groups decides from one estimate. Seconds travel as nanoseconds: the rank that sent them adopts its
  /// own words too, so that every member holds the same numbers bit for bit.
  void adopt(std::span<const int64_t> words);

  /// Whether any item was added.
  [[nodiscard]] bool empty() const noexcept { return sums_.empty(); }
  /// Amdahl's parallel fraction p: the group's time at m ranks is t1 ((1 - p) + p / m). Fitted by least squares
  /// to the ratios of each chain's mean item times at the sizes it was worked at, within [0, 1]; 1 (the work
  /// splits perfectly) until some chain was worked at two sizes, at every end: an assumption, not a measurement.
  [[nodiscard]] double parallel_fraction(End end = End::point) const;
  /// Speed-up at m ranks under parallel_fraction(end).
  [[nodiscard]] double speedup(int m, End end = End::point) const;
  /// Seconds one item of chain c takes at one rank: the chain's items, each times the speed-up at its size,
  /// averaged; a chain with none takes the average over every chain's items; 0 before any item. At `low` and
  /// `high`, each size's mean less or plus two standard errors, and the speed-up at that end's fraction.
  [[nodiscard]] double single_rank_s(int chain, End end = End::point) const;
  /// Seconds one item of chain c takes at m ranks.
  [[nodiscard]] double item_s(int chain, int m, End end = End::point) const {
    return single_rank_s(chain, end) / speedup(m, end);
  }
  /// The largest single_rank_s of any chain with items (0 before any).
  [[nodiscard]] double longest_single_rank_s() const;

  /// This rank's share of the world's estimate: the items it owns, their single-rank seconds (ns), and its fit's
  /// weight (the chains it saw at two sizes or more) with the fraction times that weight (in 1e-9); then the
  /// fraction's low and high ends times the weight, and the items' single-rank seconds at the low and high ends
  /// (ns). Summed over the world, from_world() makes the same estimate on every rank.
  [[nodiscard]] WorldWords world_words() const;
  /// The estimate every rank makes from world_words() summed over the world: one item cost for every chain (the
  /// world's mean) and the world's fraction, the fits weighted by their chains, each with its ends alike.
  [[nodiscard]] static ItemEstimate from_world(const WorldWords& sums);

 private:
  struct Sum {
    int64_t items = 0;
    double seconds = 0;
    double squares = 0;  // of each item's seconds: the scatter of the items
  };
  /// Fits the fraction and its ends once per change of the sums.
  void fit() const;
  /// Seconds of s's items at `end`: each item's mean less or plus two standard errors of the mean.
  [[nodiscard]] double total_at(const Sum& s, End end) const;
  /// The same for one item.
  [[nodiscard]] double mean_at(const Sum& s, End end) const;
  std::map<std::pair<int, int>, Sum> sums_;  // (chain, size) -> items worked there
  std::map<std::pair<int, int>, Sum> owned_;
  // from_world(): every chain costs world_s_ at one rank, and world_p_ is the fraction (world_ set); by End.
  bool world_ = false;
  std::array<double, 3> world_s_{}, world_p_{1, 1, 1};
  mutable bool fitted_ = false;
  mutable std::array<double, 3> p_{1, 1, 1};  // by End
  mutable double pooled_cv_ = 0;              // the items' relative scatter over the sizes with two items or more
  mutable int fit_chains_ = 0;
};

}  // namespace mcmclb
