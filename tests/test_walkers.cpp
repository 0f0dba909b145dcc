// SPDX-License-Identifier: BSD-3-Clause
// The public API for an application's chains (mcmclb/walkers.hpp) under every balancer: each chain's answer equals
// the one worked on a single rank, bit for bit; every item is worked once and in order on every member; states
// travel whole; bad options get the study file's lines on every rank.
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "mcmclb/exact_sum.hpp"
#include "mcmclb/input_error.hpp"
#include "mcmclb/walkers.hpp"

namespace {

using mcmclb::GroupComm;

uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// A chain's state: a running hash of its items' sums, and the next item expected.
struct State {
  int64_t next = 0;
  int64_t value = 0;
};

/// Chain c has 1 + (c * 5) % 7 items. An item splits 64 terms over the group's members and sums them with the
/// group, so the answer is the group's work but not its size's.
/// With ends_early, a chain is done once it has worked an item and its value is a multiple of 3 (from the state,
/// which every member holds alike), before its bound of 1 + (c * 5) % 7 items in about two chains of three.
/// With lowers_bound, a chain says before each item that it takes at most two items more (items_bound), from its
/// state, and counts how often it is asked.
class HashChains final : public mcmclb::walkers::Chains {
 public:
  explicit HashChains(int chains, bool ends_early = false, bool lowers_bound = false)
      : chains_(chains), ends_early_(ends_early), lowers_bound_(lowers_bound) {}
  [[nodiscard]] int64_t items_bound(int chain, int64_t item) const override {
    if (!lowers_bound_) return items(chain);
    const State& s = held_.at(chain);
    if (s.next != item)
      throw std::logic_error("bound before item " + std::to_string(item) + " at " + std::to_string(s.next));
    ++bounds_asked_;
    return std::min(items(chain), s.next + 2);
  }
  [[nodiscard]] int64_t bounds_asked() const noexcept { return bounds_asked_; }
  [[nodiscard]] bool done(int chain, int64_t item) const override {
    const State& s = held_.at(chain);
    // Past where a chain was done, its state stays there (the items after it are passed over, not worked).
    if (s.next > item)
      throw std::logic_error("done before item " + std::to_string(item) + " at " + std::to_string(s.next));
    return ends_early_ && s.next >= 1 && s.value % 3 == 0;
  }
  [[nodiscard]] int count() const override { return chains_; }
  [[nodiscard]] int64_t items(int chain) const override { return 1 + (chain * 5) % 7; }
  void start(int chain, GroupComm&) override {
    held_[chain] = {0, static_cast<int64_t>(mix(chain) >> 2)};
    started_.push_back(chain);
  }
  void work(int chain, int64_t item, GroupComm& group) override {
    State& s = held_.at(chain);
    if (s.next != item) throw std::logic_error("item " + std::to_string(item) + " before " + std::to_string(s.next));
    int64_t part = 0;
    for (int t = group.rank(); t < 64; t += group.size()) {
      part += static_cast<int64_t>(mix(static_cast<uint64_t>(s.value) ^ static_cast<uint64_t>(t)) >> 8);
    }
    std::vector<int64_t> sum = {part};
    group.allreduce_sum(sum);
    s.value = static_cast<int64_t>(mix(static_cast<uint64_t>(sum[0])) >> 2);
    ++s.next;
  }
  void finish(int chain, GroupComm& group) override {
    if (group.rank() == 0) answers_[chain] = held_.at(chain).value;
  }
  [[nodiscard]] std::vector<std::byte> save(int chain) const override {
    std::vector<std::byte> bytes(sizeof(State));
    std::memcpy(bytes.data(), &held_.at(chain), sizeof(State));
    return bytes;
  }
  void restore(int chain, std::span<const std::byte> state) override {
    if (state.size() != sizeof(State)) throw std::invalid_argument("wrong size");
    std::memcpy(&held_[chain], state.data(), sizeof(State));
  }
  [[nodiscard]] const std::map<int, int64_t>& kept() const noexcept { return answers_; }
  /// The chains this rank started, in the order it started them.
  [[nodiscard]] const std::vector<int>& started() const noexcept { return started_; }
  /// Every chain's answer on every rank (each was kept by one rank only: a second keeper doubles the count).
  [[nodiscard]] std::vector<int64_t> answers(MPI_Comm comm = MPI_COMM_WORLD) const {
    std::vector<int64_t> mine(2 * static_cast<std::size_t>(chains_), 0), all(mine.size(), 0);
    for (const auto& [c, v] : answers_) {
      mine[2 * static_cast<std::size_t>(c)] = v;
      mine[2 * static_cast<std::size_t>(c) + 1] = 1;
    }
    MPI_Allreduce(mine.data(), all.data(), static_cast<int>(mine.size()), MPI_INT64_T, MPI_SUM, comm);
    return all;
  }

 private:
  int chains_;
  bool ends_early_, lowers_bound_;
  mutable int64_t bounds_asked_ = 0;
  std::map<int, State> held_;
  std::map<int, int64_t> answers_;
  std::vector<int> started_;
};

/// Chains of doubles: an item adds 64 terms of many magnitudes, split over the group's members and summed with
/// ops::exact_sum, and the members' shares are also gathered (allgatherv, sizes that differ by member) and summed
/// again on each member. A plain sum of doubles would differ with the group's size; these must not, by a bit.
class DoubleChains final : public mcmclb::walkers::Chains {
 public:
  explicit DoubleChains(int chains) : chains_(chains) {}
  [[nodiscard]] int count() const override { return chains_; }
  [[nodiscard]] int64_t items(int chain) const override { return 1 + (chain * 5) % 7; }
  void start(int chain, GroupComm&) override { held_[chain] = 1.0 / (chain + 1); }
  void work(int chain, int64_t item, GroupComm& group) override {
    double& x = held_.at(chain);
    std::vector<double> mine;
    for (int t = group.rank(); t < 64; t += group.size()) {
      const uint64_t h = mix(static_cast<uint64_t>(chain) * 1000003 + static_cast<uint64_t>(item) * 64 + t);
      mine.push_back(std::ldexp(static_cast<double>(h >> 11) * 0x1.0p-53 - 0.5, static_cast<int>(h % 80) - 40) * x);
    }
    mcmclb::ExactSum part;
    part.add(mine);
    const double sum = group.allreduce(part, mcmclb::ops::exact_sum).value();
    const std::vector<double> every = group.allgatherv(std::span<const double>(mine));
    if (every.size() != 64 || mcmclb::exact_sum(every) != sum) throw std::logic_error("the gather lost a term");
    x = x + sum;
  }
  [[nodiscard]] std::vector<std::byte> save(int chain) const override {
    return mcmclb::walkers::bytes_of(held_.at(chain));
  }
  void restore(int chain, std::span<const std::byte> state) override {
    held_[chain] = mcmclb::walkers::result_as<double>(state);
  }

 private:
  int chains_;
  std::map<int, double> held_;
};

int world_size() {
  int n = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

/// Every chain's answer worked on this rank alone, as answers() gives them: (answer, kept once) per chain; with
/// worked, the items each chain worked.
std::vector<int64_t> reference(int chains, bool ends_early = false, std::vector<int64_t>* worked = nullptr) {
  HashChains h(chains, ends_early);
  const std::unique_ptr<GroupComm> group_of_one = mcmclb::self_group();
  GroupComm& one = *group_of_one;
  std::vector<int64_t> out;
  for (int c = 0; c < chains; ++c) {
    h.start(c, one);
    int64_t i = 0;
    for (; i < h.items(c) && !h.done(c, i); ++i) h.work(c, i, one);
    h.finish(c, one);
    out.insert(out.end(), {h.kept().at(c), 1});
    if (worked != nullptr) worked->push_back(i);
  }
  return out;
}

/// Options for a run of every balancer in turn: short items, and waits that nap (ranks may share cores).
mcmclb::walkers::Options short_items(const std::string& balancer) {
  mcmclb::walkers::Options o;
  o.balancer = balancer;
  o.item_s = 1e-4;
  o.wait = "polite";
  return o;
}

TEST(Walkers, EveryBalancerGivesTheSingleRankAnswers) {
  const int chains = 3 * world_size();
  const std::vector<int64_t> expected = reference(chains);
  for (const std::string& balancer : mcmclb::walkers::balancer_names()) {
    SCOPED_TRACE(balancer);
    HashChains h(chains);
    mcmclb::walkers::Options o = short_items(balancer);
    o.results = mcmclb::walkers::Results::all;
    const mcmclb::walkers::Report r = mcmclb::walkers::run(MPI_COMM_WORLD, h, o);
    EXPECT_TRUE(r.valid) << r.violations;
    EXPECT_EQ(r.balancer, balancer);
    EXPECT_EQ(h.answers(), expected);
    // Every chain's result on every rank, in chain order: by default its final state, whose value is the answer.
    ASSERT_EQ(r.results.size(), static_cast<std::size_t>(chains));
    for (int c = 0; c < chains; ++c) {
      const State s = mcmclb::walkers::result_as<State>(r.results[static_cast<std::size_t>(c)]);
      EXPECT_EQ(s.value, expected[2 * static_cast<std::size_t>(c)]) << "chain " << c;
      EXPECT_EQ(s.next, h.items(c)) << "chain " << c;
    }
  }
}

// Doubles summed with ops::exact_sum: every chain's final value has the bits of the single-rank loop's, under every
// balancer and at every size, so merges, steals and groups of any size change nothing.
TEST(Walkers, DoublesSummedExactlyKeepTheirBitsUnderEveryBalancer) {
  const int chains = 3 * world_size();
  std::vector<double> expected;
  {
    DoubleChains d(chains);
    const std::unique_ptr<GroupComm> one = mcmclb::self_group();
    for (int c = 0; c < chains; ++c) {
      d.start(c, *one);
      for (int64_t i = 0; i < d.items(c); ++i) d.work(c, i, *one);
      expected.push_back(mcmclb::walkers::result_as<double>(d.result(c)));
    }
  }
  for (const std::string& balancer : mcmclb::walkers::balancer_names()) {
    SCOPED_TRACE(balancer);
    DoubleChains d(chains);
    mcmclb::walkers::Options o = short_items(balancer);
    o.results = mcmclb::walkers::Results::all;
    const mcmclb::walkers::Report r = mcmclb::walkers::run(MPI_COMM_WORLD, d, o);
    EXPECT_TRUE(r.valid) << r.violations;
    ASSERT_EQ(r.results.size(), expected.size());
    for (std::size_t c = 0; c < expected.size(); ++c) {
      const double got = mcmclb::walkers::result_as<double>(r.results[c]);
      EXPECT_EQ(std::memcmp(&got, &expected[c], sizeof got), 0)
          << "chain " << c << ": " << got << " vs " << expected[c];
    }
  }
}

// Chains that end when done: under every balancer each works the items it works alone, no more, gives the same
// answer, and the run reports where each ended; the items passed over are neither worked nor recorded.
TEST(Walkers, ChainsThatEndWhenDoneEndThereUnderEveryBalancer) {
  const int chains = 3 * world_size();
  std::vector<int64_t> worked;
  const std::vector<int64_t> expected = reference(chains, true, &worked);
  int64_t bound = 0, total = 0;
  for (int c = 0; c < chains; ++c) bound += HashChains(chains).items(c);
  for (const int64_t n : worked) total += n;
  ASSERT_LT(total, bound);  // some chain ends early, or this tests nothing
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (const std::string& balancer : mcmclb::walkers::balancer_names()) {
    SCOPED_TRACE(balancer);
    HashChains h(chains, true);
    mcmclb::walkers::Options o = short_items(balancer);
    o.results = mcmclb::walkers::Results::root;
    const mcmclb::walkers::Report r = mcmclb::walkers::run(MPI_COMM_WORLD, h, o);
    EXPECT_TRUE(r.valid) << r.violations;
    EXPECT_EQ(h.answers(), expected);
    // The results on rank 0 only: where each chain ended, with its answer.
    EXPECT_EQ(r.results.size(), rank == 0 ? static_cast<std::size_t>(chains) : 0U);
    for (std::size_t c = 0; c < r.results.size(); ++c) {
      const State s = mcmclb::walkers::result_as<State>(r.results[c]);
      EXPECT_EQ(s.value, expected[2 * c]) << "chain " << c;
      EXPECT_EQ(s.next, worked[c]) << "chain " << c;
    }
    if (rank == 0) {
      EXPECT_EQ(r.chain_items, worked);
      int64_t passed = 0;
      for (const mcmclb::walkers::RankReport& x : r.ranks) passed += x.items_passed;
      EXPECT_GE(passed, bound - total);  // every item past a chain's end, once per member of the group passing it
    }
  }
}

// A chain that lowers its bound as it learns (items_bound) is asked before each item where the balancers plan from
// measured costs (lookahead, mostwork, the rule pays), alike on every member (it checks its state), and not where
// nothing plans (none); the bound changes plans only, never an answer or the items a chain works.
TEST(Walkers, ALoweredBoundIsAskedWhereTheBalancersPlanAndChangesNoAnswer) {
  const int chains = 3 * world_size();
  std::vector<int64_t> worked;
  const std::vector<int64_t> expected = reference(chains, true, &worked);
  for (const std::string balancer : {"none", "lookahead", "mostwork"}) {
    SCOPED_TRACE(balancer);
    HashChains h(chains, true, true);
    mcmclb::walkers::Options o = short_items(balancer);
    o.item_s = 0;  // measured: what the planners read the bound with
    const mcmclb::walkers::Report r = mcmclb::walkers::run(MPI_COMM_WORLD, h, o);
    EXPECT_TRUE(r.valid) << r.violations;
    EXPECT_EQ(h.answers(), expected);
    EXPECT_EQ(r.chain_items, worked);
    int64_t asked = 0;
    const int64_t mine = h.bounds_asked();
    MPI_Allreduce(&mine, &asked, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (balancer == "none") {
      EXPECT_EQ(asked, 0);
    } else {
      EXPECT_GT(asked, 0);
    }
  }
}

// Two halves of WORLD run at once, each on its own communicator: a run that sent or waited on WORLD anywhere would
// mix the two runs' messages or wait for the other half.
TEST(Walkers, RunsOnTheCommunicatorGiven) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm half = MPI_COMM_NULL;
  ASSERT_EQ(MPI_Comm_split(MPI_COMM_WORLD, rank < world_size() / 2 ? 0 : 1, rank, &half), MPI_SUCCESS);
  int size = 0;
  MPI_Comm_size(half, &size);
  const int chains = 2 * size;
  const std::vector<int64_t> expected = reference(chains);
  for (const char* balancer : {"async", "mostwork", "collective"}) {
    SCOPED_TRACE(balancer);
    HashChains h(chains);
    mcmclb::walkers::Options o;
    o.balancer = balancer;
    o.wait = "polite";
    const mcmclb::walkers::Report r = mcmclb::walkers::run(half, h, o);
    EXPECT_TRUE(r.valid) << r.violations;
    EXPECT_EQ(r.nprocs, size);
    EXPECT_EQ(h.answers(half), expected);
  }
  MPI_Comm_free(&half);
}

TEST(Walkers, BadOptionsGetTheStudyFilesLines) {
  HashChains h(world_size());
  mcmclb::walkers::Options o;
  o.balancer = "mostwrok";
  try {
    (void)mcmclb::walkers::run(MPI_COMM_WORLD, h, o);
    FAIL() << "a misspelt balancer ran";
  } catch (const mcmclb::InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("key balancer: unknown balancer 'mostwrok' (allowed: none, ", 0), 0u)
        << e.what();
  }
  o.balancer = "async";
  o.finished = "retyre";
  EXPECT_THROW((void)mcmclb::walkers::run(MPI_COMM_WORLD, h, o), mcmclb::InputError);
  o.finished = "";
  o.method = "create";  // async creates group-collectively only
  EXPECT_THROW((void)mcmclb::walkers::run(MPI_COMM_WORLD, h, o), mcmclb::InputError);
  HashChains none_at_all(0);
  o.method = "";
  EXPECT_THROW((void)mcmclb::walkers::run(MPI_COMM_WORLD, none_at_all, o), mcmclb::InputError);
}

// Counts that do not split evenly over the groups (here 2P + 1 chains: one group gets one more): every balancer
// works each chain once with the single-rank answers, the results and the trace in the application's numbering.
TEST(Walkers, CountsThatDoNotSplitEvenlyRunUnderEveryBalancer) {
  const int chains = 2 * world_size() + 1;
  const std::vector<int64_t> expected = reference(chains);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (const std::string& balancer : mcmclb::walkers::balancer_names()) {
    SCOPED_TRACE(balancer);
    HashChains h(chains);
    mcmclb::walkers::Options o = short_items(balancer);
    o.results = mcmclb::walkers::Results::root;
    const mcmclb::walkers::Report r = mcmclb::walkers::run(MPI_COMM_WORLD, h, o);
    EXPECT_TRUE(r.valid) << r.violations;
    EXPECT_EQ(h.answers(), expected);
    if (rank != 0) continue;
    ASSERT_EQ(r.results.size(), static_cast<std::size_t>(chains));
    ASSERT_EQ(r.chain_items.size(), static_cast<std::size_t>(chains));
    for (int c = 0; c < chains; ++c) {
      EXPECT_EQ(mcmclb::walkers::result_as<State>(r.results[static_cast<std::size_t>(c)]).value,
                expected[2 * static_cast<std::size_t>(c)]);
      EXPECT_EQ(r.chain_items[static_cast<std::size_t>(c)], h.items(c));
    }
  }
}

// Placement from the item bounds: the same layout whatever order the chains are numbered in, the groups' totals
// balanced and rising from left to right, each group's chains longest first; equal bounds, and as_numbered, keep
// the application's order.
TEST(Walkers, PlacementIgnoresTheNumberingAndPutsTheLeastWorkOnTheLeft) {
  using mcmclb::walkers::place_chains;
  using mcmclb::walkers::Placement;
  const std::vector<int64_t> longest_first = {80, 70, 60, 50, 40, 30, 20, 10};
  const std::vector<int64_t> shortest_first(longest_first.rbegin(), longest_first.rend());
  const auto bounds_of = [](const std::vector<std::vector<int>>& layout, const std::vector<int64_t>& items) {
    std::vector<std::vector<int64_t>> out;
    for (const auto& group : layout) {
      out.emplace_back();
      for (const int c : group) out.back().push_back(items[static_cast<std::size_t>(c)]);
    }
    return out;
  };
  for (const int groups : {1, 2, 3, 5, 8, 11}) {
    SCOPED_TRACE(groups);
    const auto a = place_chains(longest_first, groups, Placement::by_items);
    const auto b = place_chains(shortest_first, groups, Placement::by_items);
    EXPECT_EQ(bounds_of(a, longest_first), bounds_of(b, shortest_first));
    std::vector<int> seen;
    int64_t previous = -1;
    for (const auto& group : a) {
      EXPECT_LE(group.size(), (longest_first.size() + groups - 1) / groups);
      EXPECT_GE(group.size(), longest_first.size() / groups);
      int64_t total = 0;
      for (std::size_t j = 0; j < group.size(); ++j) {
        total += longest_first[static_cast<std::size_t>(group[j])];
        if (j > 0) {
          EXPECT_GE(longest_first[static_cast<std::size_t>(group[j - 1])],
                    longest_first[static_cast<std::size_t>(group[j])]);
        }
      }
      EXPECT_GE(total, previous);
      previous = total;
      seen.insert(seen.end(), group.begin(), group.end());
    }
    std::sort(seen.begin(), seen.end());
    EXPECT_EQ(seen, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  }
  // Two groups: 80+30+20+10 against 70+60+50+40 would be the numbered halves; balanced, both hold 180.
  EXPECT_EQ(bounds_of(place_chains(longest_first, 2, Placement::by_items), longest_first),
            (std::vector<std::vector<int64_t>>{{80, 50, 40, 10}, {70, 60, 30, 20}}));
  EXPECT_EQ(place_chains(longest_first, 3, Placement::as_numbered),
            (std::vector<std::vector<int>>{{0, 1, 2}, {3, 4, 5}, {6, 7}}));
  EXPECT_EQ(place_chains(std::vector<int64_t>(5, 9), 2, Placement::by_items),
            (std::vector<std::vector<int>>{{0, 1, 2}, {3, 4}}));
  EXPECT_THROW((void)place_chains(longest_first, 0, Placement::by_items), std::invalid_argument);
  EXPECT_THROW((void)place_chains(std::vector<int64_t>{3, -1}, 2, Placement::by_items), std::invalid_argument);
}

// run() starts each chain where place_chains puts it (balancer none: one rank per group, nothing moves), under
// either placement, and the answers stay the single-rank ones.
TEST(Walkers, RunStartsTheChainsWherePlacementPutsThem) {
  using mcmclb::walkers::Placement;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int chains = 2 * world_size() + 1;
  const std::vector<int64_t> expected = reference(chains);
  for (const Placement how : {Placement::by_items, Placement::as_numbered}) {
    HashChains h(chains);
    std::vector<int64_t> bounds;
    for (int c = 0; c < chains; ++c) bounds.push_back(h.items(c));
    mcmclb::walkers::Options o = short_items("none");
    o.placement = how;
    const mcmclb::walkers::Report r = mcmclb::walkers::run(MPI_COMM_WORLD, h, o);
    EXPECT_TRUE(r.valid) << r.violations;
    EXPECT_EQ(h.answers(), expected);
    EXPECT_EQ(h.started(), mcmclb::walkers::place_chains(bounds, world_size(), how)[static_cast<std::size_t>(rank)]);
  }
}

// Costs measured, not typed (Options::item_s 0, the default): the planning balancers and the finished rule pays
// run from what the items took, with the single-rank answers.
TEST(Walkers, MeasuredCostsPlanEveryBalancerAndPays) {
  const int chains = 2 * world_size() + 1;
  const std::vector<int64_t> expected = reference(chains);
  for (const std::string& balancer : mcmclb::walkers::balancer_names()) {
    for (const std::string finished : {"", "pays"}) {
      SCOPED_TRACE(balancer + " " + finished);
      HashChains h(chains);
      mcmclb::walkers::Options o = short_items(balancer);
      o.item_s = 0;
      o.finished = finished;
      mcmclb::walkers::Report r;
      try {
        r = mcmclb::walkers::run(MPI_COMM_WORLD, h, o);
      } catch (const mcmclb::InputError&) {
        continue;  // a balancer without the rule pays
      }
      EXPECT_TRUE(r.valid) << r.violations;
      EXPECT_EQ(h.answers(), expected);
      EXPECT_GT(r.item_s, 0.0);
    }
  }
}

/// Chains whose state is a count summed over the group at each item (work() naps first, as a subclass says).
class CountingChains : public mcmclb::walkers::Chains {
 public:
  void start(int chain, GroupComm&) override { held_[chain] = 0; }
  [[nodiscard]] std::vector<std::byte> save(int chain) const override {
    return mcmclb::walkers::bytes_of(held_.at(chain));
  }
  void restore(int chain, std::span<const std::byte> state) override {
    held_[chain] = mcmclb::walkers::result_as<int64_t>(state);
  }

 protected:
  void count(int chain, GroupComm& group) { held_[chain] += group.allreduce(int64_t{1}, mcmclb::ops::sum); }

 private:
  std::map<int, int64_t> held_;
};

/// Chains whose items nap 20 ms, split over the group (or, without split, the whole nap on every member), then
/// sum with the group.
class NapChains final : public CountingChains {
 public:
  explicit NapChains(bool split) : split_(split) {}
  [[nodiscard]] int count() const override { return 4; }
  [[nodiscard]] int64_t items(int chain) const override { return chain < 2 ? 1 : 6; }
  void work(int chain, int64_t, GroupComm& group) override {
    usleep(static_cast<useconds_t>(split_ ? 20000 / group.size() : 20000));
    CountingChains::count(chain, group);
  }

 private:
  bool split_;
};

// The speed-up is measured: at two ranks, the short chains' group joins the long chains' (collective), so chain 2
// is worked at one rank and then at two. Split work fits a parallel fraction near 1, work that does not split one
// near 0. (Other rank counts check only that the run is valid: two ranks is where each has a core.)
TEST(Walkers, MeasuresHowTheItemsSpeedUp) {
  for (const bool split : {true, false}) {
    SCOPED_TRACE(split ? "split" : "not split");
    NapChains n(split);
    mcmclb::walkers::Options o = short_items("collective");
    o.item_s = 0;
    o.placement = mcmclb::walkers::Placement::as_numbered;
    const mcmclb::walkers::Report r = mcmclb::walkers::run(MPI_COMM_WORLD, n, o);
    EXPECT_TRUE(r.valid) << r.violations;
    EXPECT_GT(r.item_s, 0.005);
    if (world_size() != 2) continue;
    if (split) {
      EXPECT_GT(r.parallel_fraction, 0.7);
    } else {
      EXPECT_LT(r.parallel_fraction, 0.3);
    }
  }
}

/// Collective: a fresh file name, the same on every rank (made on rank 0).
std::string temporary_path() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::string path(64, '\0');
  if (rank == 0) {
    char name[] = "/tmp/mcmclb-walkers-XXXXXX";
    const int fd = mkstemp(name);
    if (fd >= 0) close(fd);
    path = name;
  }
  path.resize(64);
  MPI_Bcast(path.data(), 64, MPI_CHAR, 0, MPI_COMM_WORLD);
  return path.c_str();
}

// Recording again into one file keeps the earlier runs of the same walkers (their run lines, as earlier run lines):
// a program run n times with recording on leaves its n run times, its own spread. Other walkers' are not kept.
TEST(Walkers, RecordingAgainKeepsTheEarlierRunsOfTheSameWalkers) {
  const std::string path = temporary_path();
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  mcmclb::walkers::Options o;
  o.balancer = "none";
  o.wait = "polite";
  o.record = path;
  const auto record = [&](int chains) {
    HashChains h(chains);
    const mcmclb::walkers::Report r = mcmclb::walkers::run(MPI_COMM_WORLD, h, o);
    EXPECT_TRUE(r.valid);
    return r.time_s;
  };
  // The trace's run lines: its own (`# run:`) and its earlier ones, each as (seconds, ranks, walkers).
  struct RunLine {
    double seconds = 0;
    int ranks = 0;
    std::string walkers;
  };
  const auto read = [&](const std::string& prefix) {
    std::vector<RunLine> found;
    std::ifstream in(path);
    for (std::string line; std::getline(in, line) && line.rfind('#', 0) == 0;) {
      if (line.rfind(prefix + " ", 0) != 0) continue;
      RunLine run;
      const auto value = [&](const std::string& key) {
        const std::size_t at = line.find(" " + key + "=");
        return at == std::string::npos ? std::string()
                                       : line.substr(at + key.size() + 2, line.find(' ', at + 1) - at - key.size() - 2);
      };
      run.seconds = std::atof(value("seconds").c_str());
      run.ranks = std::atoi(value("ranks").c_str());
      run.walkers = value("walkers");
      found.push_back(run);
    }
    return found;
  };
  const double first = record(world_size() + 1);
  const double second = record(world_size() + 1);
  if (rank == 0) {
    const auto own = read("# run:"), earlier = read("# earlier run:");
    ASSERT_EQ(own.size(), 1U);
    EXPECT_NEAR(own[0].seconds, second, 1e-6 * second);
    EXPECT_FALSE(own[0].walkers.empty());
    ASSERT_EQ(earlier.size(), 1U);
    EXPECT_NEAR(earlier[0].seconds, first, 1e-6 * first);
    EXPECT_EQ(earlier[0].walkers, own[0].walkers);
    EXPECT_EQ(earlier[0].ranks, world_size());
  }
  (void)record(world_size() + 2);  // other walkers: the file's runs are not theirs
  if (rank == 0) {
    EXPECT_TRUE(read("# earlier run:").empty());
    EXPECT_EQ(read("# run:").size(), 1U);
    std::remove(path.c_str());
  }
}

// A recording holds the items each chain worked: all of them, or those before it was done.
TEST(Walkers, RecordsATraceThatParses) {
  for (const bool ends_early : {false, true}) {
    SCOPED_TRACE(ends_early ? "chains that end when done" : "chains of their full length");
    // 2P + 1 chains: one group has a chain more, so the trace's chains are the application's, not the kernel's slots.
    HashChains h(2 * world_size() + 1, ends_early);
    std::vector<int64_t> worked;
    (void)reference(2 * world_size() + 1, ends_early, &worked);
    mcmclb::walkers::Options o;
    o.balancer = "mostwork";
    o.wait = "polite";
    const std::string path = temporary_path();
    o.record = path;
    const mcmclb::walkers::Report r = mcmclb::walkers::run(MPI_COMM_WORLD, h, o);
    EXPECT_TRUE(r.valid);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank != 0) continue;
    int64_t total = 0;
    for (const int64_t n : worked) total += n;
    EXPECT_EQ(r.recorded_items, total);
    std::FILE* f = std::fopen(path.c_str(), "r");
    ASSERT_NE(f, nullptr);
    char line[512];
    ASSERT_NE(std::fgets(line, sizeof line, f), nullptr);
    EXPECT_EQ(std::string(line).rfind("# recorded by mcmclb::walkers::run", 0), 0u) << line;
    // Item rows per chain, in the application's numbering: each chain's items as it worked them alone.
    std::vector<int64_t> rows(worked.size(), 0);
    while (std::fgets(line, sizeof line, f) != nullptr) {
      int chain = -1;
      long long item = -1;
      char comma = 0;
      if (std::sscanf(line, "%d,%lld%c", &chain, &item, &comma) == 3 && comma == ',' && chain >= 0 &&
          static_cast<std::size_t>(chain) < rows.size()) {
        ++rows[static_cast<std::size_t>(chain)];
      }
    }
    EXPECT_EQ(rows, worked);
    std::fclose(f);
    // Each chain's recorded group (the last column of its item rows) is the initial group the run placed it in,
    // so a replay lays the chains out as the run did.
    std::vector<int64_t> bounds;
    for (int c = 0; c < h.count(); ++c) bounds.push_back(h.items(c));
    const auto placed = mcmclb::walkers::place_chains(bounds, world_size(), mcmclb::walkers::Placement::by_items);
    std::vector<int> placed_in(bounds.size(), -1);
    for (std::size_t g = 0; g < placed.size(); ++g) {
      for (const int c : placed[g]) placed_in[static_cast<std::size_t>(c)] = static_cast<int>(g);
    }
    const std::unique_ptr<std::FILE, int (*)(std::FILE*)> in(std::fopen(path.c_str(), "r"), &std::fclose);
    ASSERT_NE(in, nullptr);
    bool header = false;
    int64_t grouped = 0;
    while (std::fgets(line, sizeof line, in.get()) != nullptr) {
      header = header || std::string(line) == "chain,item,ranks,seconds,speedup,group\n";
      int chain = -1, ranks = 0, group = -1;
      long long item = -1;
      double seconds = 0;
      if (std::sscanf(line, "%d,%lld,%d,%lf,,%d", &chain, &item, &ranks, &seconds, &group) == 5) {
        ASSERT_LT(static_cast<std::size_t>(chain), placed_in.size()) << line;
        EXPECT_EQ(group, placed_in[static_cast<std::size_t>(chain)]) << line;
        ++grouped;
      }
    }
    EXPECT_TRUE(header);
    EXPECT_EQ(grouped, total) << "every item row names its chain's group";
    // The run's own time, layout and balancer, for advise --check to measure a replay against (the library parses
    // its text as mcmclb reads a trace before it writes it).
    std::ifstream file(path);
    std::string text, found;
    while (std::getline(file, text)) {
      if (text.rfind("# run: ", 0) == 0) found = text;
    }
    int ranks = 0, groups = 0;
    char balancer[64] = {};
    double seconds = 0;
    ASSERT_EQ(std::sscanf(found.c_str(), "# run: ranks=%d groups=%d balancer=%63s seconds=%lf", &ranks, &groups,
                          balancer, &seconds),
              4)
        << found;
    EXPECT_EQ(ranks, world_size());
    EXPECT_EQ(groups, r.groups);
    EXPECT_STREQ(balancer, "mostwork");
    EXPECT_NEAR(seconds, r.time_s, 1e-6 * r.time_s);
    std::remove(path.c_str());
  }
}

// A host that slows part-way through a run (another job lands on the node) must not be read as the chains' scaling.
// At two ranks chain 0 is short, so its rank joins chain 1's group and chain 1 works items at 1 rank, then at 2,
// each split in two: its true speed-up is 2 at every moment. A little after the merge every item takes twice as
// long. The recorded speed-up pairs the items on either side of the change; the mean of all its items at 1 rank
// over all at 2 is far below 2 (checked too, so that the slowdown is seen to matter).
class SlowingChains final : public CountingChains {
 public:
  [[nodiscard]] int count() const override { return 2; }
  [[nodiscard]] int64_t items(int chain) const override { return chain == 0 ? 60 : 300; }
  void work(int chain, int64_t, GroupComm& group) override {
    const auto now = std::chrono::steady_clock::now();
    if (group.size() > 1 && !merged_) merged_ = now;
    const bool slow = merged_ && now - *merged_ > std::chrono::milliseconds(150);
    usleep(static_cast<useconds_t>((slow ? 8000 : 4000) / group.size()));
    CountingChains::count(chain, group);
  }

 private:
  std::optional<std::chrono::steady_clock::time_point> merged_;
};

TEST(Walkers, SpeedUpsArePairedCloseInTimeSoADriftingHostCancels) {
  if (world_size() != 2) GTEST_SKIP() << "two ranks, a core each: chain 1 goes from 1 rank to 2";
  SlowingChains d;
  mcmclb::walkers::Options o = short_items("mostwork");
  o.placement = mcmclb::walkers::Placement::as_numbered;
  const std::string path = temporary_path();
  o.record = path;
  const mcmclb::walkers::Report r = mcmclb::walkers::run(MPI_COMM_WORLD, d, o);
  EXPECT_TRUE(r.valid) << r.violations;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) return;
  std::ifstream in(path);
  std::map<int, std::vector<double>> seconds;  // chain 1's item times by group size
  std::vector<double> pairs;
  for (std::string line; std::getline(in, line);) {
    int chain = -1, ranks = 0;
    long long item = -1;
    double value = 0;
    if (std::sscanf(line.c_str(), "%d,%lld,%d,%lf", &chain, &item, &ranks, &value) == 4 && chain == 1) {
      seconds[ranks].push_back(value);
    } else if (std::sscanf(line.c_str(), "1,,%d,,%lf", &ranks, &value) == 2 && ranks == 2) {
      pairs.push_back(value);
    }
  }
  std::remove(path.c_str());
  ASSERT_FALSE(seconds[1].empty());
  ASSERT_FALSE(seconds[2].empty()) << "chain 1 was never worked at 2 ranks: no merge happened";
  const auto mean = [](const std::vector<double>& v) {
    double sum = 0;
    for (const double x : v) sum += x;
    return sum / static_cast<double>(v.size());
  };
  const double unpaired = mean(seconds[1]) / mean(seconds[2]);
  EXPECT_LT(unpaired, 1.6) << "the slowdown was too small to tell a paired measurement from an unpaired one";
  ASSERT_EQ(pairs.size(), 1u) << "chain 1 changed size once: one pair";
  // On a busy host two ranks rarely run at once, so the pair itself may fall short of 2; it stays well above the
  // unpaired ratio, which takes the slowdown for the chain's scaling (the same value, before the pairs).
  EXPECT_GT(pairs[0], 1.25 * unpaired) << "unpaired, the run measured " << unpaired;
  EXPECT_LT(pairs[0], 2.2);
}

// The interval from costs (Options::checkpoint_mtbf_s): Daly's optimum is where the time lost to checkpoints and to
// redone work is least, in the model it comes from: a failure every M seconds on average (exponentially), so work
// of tau seconds and its checkpoint of C take M (e^((tau + C) / M) - 1) on average; per second of work, that over
// tau. Found here by a golden-section search: Daly's value within 0.5 % of it, and closer than Young's sqrt(2 C M).
TEST(Walkers, TheCheckpointIntervalIsWhereTheLeastTimeIsLost) {
  const auto lost = [](double tau, double c, double m) { return std::expm1((tau + c) / m) / tau; };
  for (const auto& [c, m] :
       std::vector<std::pair<double, double>>{{1, 3600}, {10, 100}, {30, 100}, {5, 20}, {0.01, 1}}) {
    double lo = 1e-9 * m, hi = 3 * m;
    const double g = (std::sqrt(5.0) - 1) / 2;
    for (int i = 0; i < 200; ++i) {
      const double a = hi - g * (hi - lo), b = lo + g * (hi - lo);
      if (lost(a, c, m) < lost(b, c, m)) {
        hi = b;
      } else {
        lo = a;
      }
    }
    const double best = (lo + hi) / 2, daly = mcmclb::walkers::checkpoint_interval_s(c, m);
    EXPECT_NEAR(daly, best, 0.005 * best) << "C " << c << ", M " << m;
    EXPECT_LT(std::abs(daly - best), std::abs(std::sqrt(2 * c * m) - best)) << "C " << c << ", M " << m;
  }
  EXPECT_EQ(mcmclb::walkers::checkpoint_interval_s(50, 20), 20);  // a checkpoint dearer than 2M: every M seconds
  EXPECT_EQ(mcmclb::walkers::checkpoint_interval_s(1, 0), 0);
}

/// Collective: a fresh folder's name, the same on every rank (made on rank 0).
std::string temporary_folder() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::string path(64, '\0');
  if (rank == 0) {
    char name[] = "/tmp/mcmclb-walkers-ck-XXXXXX";
    if (mkdtemp(name) != nullptr) path = name;
  }
  path.resize(64);
  MPI_Bcast(path.data(), 64, MPI_CHAR, 0, MPI_COMM_WORLD);
  return path.c_str();
}

// With a time between failures, each chain's checkpoints follow from their own measured cost: the first after one
// item (to measure it), then every checkpoint_interval_s(C, M) seconds, which Report gives per chain. A time far
// above every cost writes no second running checkpoint; one far below writes one before every item.
TEST(Walkers, CheckpointIntervalsFollowTheirCostAndTheTimeBetweenFailures) {
  const int chains = 2 * world_size() + 1;
  HashChains shape(chains);
  for (const double mtbf : {1e9, 1e-12}) {
    const std::string folder = temporary_folder();
    mcmclb::walkers::Options o = short_items("none");
    o.checkpoint = folder;
    o.checkpoint_mtbf_s = mtbf;
    HashChains h(chains);
    const mcmclb::walkers::Report r = mcmclb::walkers::run(MPI_COMM_WORLD, h, o);
    EXPECT_TRUE(r.valid) << r.violations;
    EXPECT_EQ(h.answers(), reference(chains));
    int64_t written = r.rank.checkpoints, expected = 0;
    MPI_Allreduce(MPI_IN_PLACE, &written, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    ASSERT_EQ(r.checkpoint_cost_s.size(), static_cast<std::size_t>(chains));
    ASSERT_EQ(r.checkpoint_interval_s.size(), static_cast<std::size_t>(chains));
    for (int c = 0; c < chains; ++c) {
      const int64_t n = shape.items(c);
      const auto at = static_cast<std::size_t>(c);
      // Running checkpoints come before items 1 .. n - 1 (none before the first), the finished one after.
      expected += (mtbf > 1 ? std::min<int64_t>(n - 1, 1) : n - 1) + 1;  // the running ones and the finished one
      EXPECT_EQ(r.checkpoint_cost_s[at] > 0, n > 1) << "chain " << c;
      EXPECT_EQ(r.checkpoint_interval_s[at], mcmclb::walkers::checkpoint_interval_s(r.checkpoint_cost_s[at], mtbf));
      // The running writes the cost rests on, and the interval's range over the fastest and slowest of them: one
      // value where one write was made.
      const int64_t running = mtbf > 1 ? std::min<int64_t>(n - 1, 1) : n - 1;
      EXPECT_EQ(r.checkpoint_writes.at(at), running) << "chain " << c;
      EXPECT_LE(r.checkpoint_interval_low_s.at(at), r.checkpoint_interval_s[at]) << "chain " << c;
      EXPECT_GE(r.checkpoint_interval_high_s.at(at), r.checkpoint_interval_s[at]) << "chain " << c;
      if (running == 1) {
        EXPECT_EQ(r.checkpoint_interval_low_s[at], r.checkpoint_interval_high_s[at]) << "chain " << c;
      }
    }
    EXPECT_EQ(written, expected) << "M " << mtbf;
    EXPECT_TRUE(r.checkpoints_lost.empty());
    MPI_Barrier(MPI_COMM_WORLD);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) std::filesystem::remove_all(folder);
  }
  mcmclb::walkers::Options o = short_items("none");
  o.checkpoint_mtbf_s = 60;
  o.checkpoint_every_items = 3;
  EXPECT_THROW(mcmclb::walkers::check_options(o), mcmclb::InputError);
  o.checkpoint_every_items = 0;
  o.checkpoint_mtbf_s = -1;
  EXPECT_THROW(mcmclb::walkers::check_options(o), mcmclb::InputError);
}

// Report::ranks on rank 0 holds what each rank's own Report::rank holds, every field: the checkpoints each wrote and
// the seconds they took too (they were 0 there, while each rank's own report had them).
TEST(Walkers, RankZerosReportOfEachRankIsThatRanksOwn) {
  const int chains = 2 * world_size() + 1;
  const std::string folder = temporary_folder();
  mcmclb::walkers::Options o = short_items("mostwork");
  o.checkpoint = folder;
  o.checkpoint_every_items = 1;
  HashChains h(chains);
  const mcmclb::walkers::Report r = mcmclb::walkers::run(MPI_COMM_WORLD, h, o);
  EXPECT_TRUE(r.valid) << r.violations;
  // Every field, as doubles (the counts are far below 2^53).
  const auto fields_of = [](const mcmclb::walkers::RankReport& k) {
    return std::vector<double>{k.elapsed_s,
                               k.work_s,
                               k.polling_s,
                               k.waiting_s,
                               k.regroup_s,
                               static_cast<double>(k.regroups),
                               static_cast<double>(k.items_worked),
                               static_cast<double>(k.items_passed),
                               static_cast<double>(k.state_bytes),
                               static_cast<double>(k.chains_migrated),
                               static_cast<double>(k.checkpoints),
                               k.checkpoint_s};
  };
  const mcmclb::walkers::RankReport& own = r.rank;
  const std::vector<double> mine = fields_of(own);
  const auto fields = static_cast<int>(mine.size());
  std::vector<double> all(mine.size() * static_cast<std::size_t>(world_size()));
  MPI_Gather(mine.data(), fields, MPI_DOUBLE, all.data(), fields, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  EXPECT_GT(own.checkpoints, 0) << "every rank works a chain of several items";
  if (rank == 0) {
    ASSERT_EQ(r.ranks.size(), static_cast<std::size_t>(world_size()));
    for (std::size_t k = 0; k < r.ranks.size(); ++k) {
      const std::vector<double> there = fields_of(r.ranks[k]);
      const auto at = static_cast<std::ptrdiff_t>(k * mine.size());
      EXPECT_EQ(there, std::vector<double>(all.begin() + at, all.begin() + at + fields)) << "rank " << k;
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) std::filesystem::remove_all(folder);
}

}  // namespace
