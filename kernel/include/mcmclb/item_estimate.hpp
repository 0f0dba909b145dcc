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

/// One item's cost, on the leader of the group that worked it (compute mode with work.record: a row of costs.csv;
/// an application's recording: a row of its trace).
struct ItemCost {
  int chain = 0;
  int64_t item = 0;  // 0-based, as trace files number items
  int ranks = 0;     // the group size that worked it
  double seconds = 0;
};

/// A chain's speed-up at `ranks`, measured by one pair of neighbouring stretches of its items (paired_speedups).
struct PairedSpeedup {
  int chain = 0;
  int ranks = 0;
  double speedup = 0;
};

/// The most items, and the most seconds of items, a pair takes on the two sides of a size change: a pair spans
/// half a minute at most, so a host that drifts over a run's minutes or hours moves both of its sides alike.
inline constexpr int64_t kPairItems = 32;
inline constexpr double kPairSeconds = 30;

/// Each chain's speed-ups, one per change of its group's size, measured from items worked close in time. Where the
/// chain goes from a size a to a size b, its last items at a and its first at b (as many on each side: at most
/// kPairItems, and at most kPairSeconds both sides together, one item each at least) give the ratio of their mean
/// times. The ratios are chained from the chain's latest stretch at 1 rank: a chain at 1, then 2, then 4 ranks gives
/// its speed-ups at 2 and at 4; a chain never at 1 rank gives none. costs: one job's items (items from before a
/// restart ran on another allocation, perhaps another node), sorted by chain and item; a gap in a chain's item
/// numbers ends a stretch and the pairing through it. The mean of all of a chain's items at each size instead would
/// compare items far apart in time, and take a drifting host for the chain's scaling.
[[nodiscard]] std::vector<PairedSpeedup> paired_speedups(std::span<const ItemCost> costs);

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
