// SPDX-License-Identifier: BSD-3-Clause
// What an application's items cost, learned from the items as they are worked, for the balancers that plan ahead
// and the finished rule pays: each chain's mean item at one rank, and how the items speed up with the group's
// size. No MPI here: the kernel adds every item it times and asks; a balancer whose decisions every rank makes
// alike (collective) agrees on one estimate for the whole run through world_words() and from_world().
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
  /// One item of chain `chain` took `seconds` on a group of `size` ranks. own: this rank is the one that counts
  /// the item towards the world's estimate (the group's leader), so that each item is counted once.
  void add(int chain, int size, double seconds, bool own) { add(chain, size, 1, seconds, own); }
  /// `items` items of chain `chain` took `seconds` in all on a group of `size` ranks.
  void add(int chain, int size, int64_t items, double seconds, bool own);
  /// The sums the estimate is made of (not what this rank owns), as words that adopt() takes.
  [[nodiscard]] std::vector<int64_t> words() const;
  /// Takes another rank's sums in place of its own (what it owns stays), so that a group whose members came from
  /// different groups decides from one estimate. Seconds travel as nanoseconds: the rank that sent them adopts its
  /// own words too, so that every member holds the same numbers bit for bit.
  void adopt(std::span<const int64_t> words);

  /// Whether any item was added.
  [[nodiscard]] bool empty() const noexcept { return sums_.empty(); }
  /// Amdahl's parallel fraction p: the group's time at m ranks is t1 ((1 - p) + p / m). Fitted by least squares
  /// to the ratios of each chain's mean item times at the sizes it was worked at, within [0, 1]; 1 (the work
  /// splits perfectly) until some chain was worked at two sizes.
  [[nodiscard]] double parallel_fraction() const;
  /// Speed-up at m ranks under parallel_fraction().
  [[nodiscard]] double speedup(int m) const;
  /// Seconds one item of chain c takes at one rank: the chain's items, each times the speed-up at its size,
  /// averaged; a chain with none takes the average over every chain's items; 0 before any item.
  [[nodiscard]] double single_rank_s(int chain) const;
  /// Seconds one item of chain c takes at m ranks.
  [[nodiscard]] double item_s(int chain, int m) const { return single_rank_s(chain) / speedup(m); }
  /// The largest single_rank_s of any chain with items (0 before any).
  [[nodiscard]] double longest_single_rank_s() const;

  /// This rank's share of the world's estimate: the items it owns, their single-rank seconds (ns), and its fit's
  /// weight (the chains it saw at two sizes or more) with the fraction times that weight (in 1e-9). Summed over
  /// the world, from_world() makes the same estimate on every rank.
  [[nodiscard]] std::array<int64_t, 4> world_words() const;
  /// The estimate every rank makes from world_words() summed over the world: one item cost for every chain (the
  /// world's mean) and the world's fraction, the fits weighted by their chains.
  [[nodiscard]] static ItemEstimate from_world(const std::array<int64_t, 4>& sums);

 private:
  struct Sum {
    int64_t items = 0;
    double seconds = 0;
  };
  std::map<std::pair<int, int>, Sum> sums_;  // (chain, size) -> items worked there
  std::map<std::pair<int, int>, Sum> owned_;
  // from_world(): every chain costs world_s_ at one rank, and world_p_ is the fraction (world_ set).
  bool world_ = false;
  double world_s_ = 0, world_p_ = 1;
  mutable bool fitted_ = false;
  mutable double p_ = 1;
  mutable int fit_chains_ = 0;
};

}  // namespace mcmclb
