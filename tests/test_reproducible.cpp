// SPDX-License-Identifier: BSD-3-Clause
// What the README promises of the code it teaches: the README's skeleton (the block itself, extracted by
// tests/readme/skeleton.sh at build time) and examples/minimal's chains give every chain's answer with the same
// bits under every balancer, at this run's rank count, as a plain loop over the chains on one rank. A sum that adds
// a rank's share of terms in a double before the group's exact reduction fails here: the shares round differently
// when the terms split over 2 or 3 ranks. One launch per rank count runs both programs under every balancer.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "mcmclb/walkers.hpp"
#include "skeleton/chains.hpp"  // the README's MyChains, generated from README.md

// examples/minimal's source, its main renamed: this suite runs its chains (Gaussian) with a main of its own. Every
// header it includes is included above, so the macro reaches its own lines only.
#define main minimal_main
#include "minimal.cpp"
#undef main

namespace {

using mcmclb::walkers::Chains;

/// Every chain's result(), worked chain after chain on this rank alone over a group of one: the loop a user
/// writes to check mcmclb's answers.
std::vector<std::vector<std::byte>> one_rank_loop(Chains& chains) {
  const std::unique_ptr<mcmclb::GroupComm> group = mcmclb::self_group();
  std::vector<std::vector<std::byte>> out;
  for (int c = 0; c < chains.count(); ++c) {
    chains.start(c, *group);
    for (int64_t item = 0; item < chains.items(c) && !chains.done(c, item); ++item) chains.work(c, item, *group);
    chains.finish(c, *group);
    out.push_back(chains.result(c));
  }
  return out;
}

/// FNV-1a of bytes, as 16 hex digits: a short name for an answer's bits in the log and in a failure.
std::string hash_of(const std::vector<std::vector<std::byte>>& answers) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const auto& answer : answers) {
    for (const std::byte b : answer) h = (h ^ static_cast<std::uint64_t>(b)) * 0x100000001b3ULL;
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(h));
  return text;
}

/// Runs fresh chains of type C under every balancer the library accepts, and under none in one group of every
/// rank, and compares every chain's result with the one-rank loop's, byte for byte, on rank 0 (where
/// Results::root collects them). Where a balancer merges groups depends on timing; the one group of every rank
/// splits each item's terms over all ranks at any timing, so a sum that depends on the split shows at every P > 1.
template <class C>
void expect_the_loops_bits(const char* what) {
  int rank = 0;
  int ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  C alone;
  const std::vector<std::vector<std::byte>> expected = one_rank_loop(alone);
  std::vector<std::pair<std::string, int>> setups;  // a balancer, and the ranks of each initial group
  for (const std::string& balancer : mcmclb::walkers::balancer_names()) setups.emplace_back(balancer, 1);
  setups.emplace_back("none", ranks);
  for (const auto& [balancer, group_size] : setups) {
    const std::string setup = balancer + ", groups of " + std::to_string(group_size);
    SCOPED_TRACE(setup);
    mcmclb::walkers::Options options;
    options.balancer = balancer;
    options.group_size = group_size;
    options.results = mcmclb::walkers::Results::root;
    options.wait = "yield";  // ranks may outnumber the cores here: a spinning rank would hold its partner's
    C chains;
    const mcmclb::walkers::Report report = mcmclb::walkers::run(MPI_COMM_WORLD, chains, options);
    EXPECT_TRUE(report.valid) << report.violations;
    if (rank != 0) continue;
    ASSERT_EQ(report.results.size(), expected.size());
    for (std::size_t c = 0; c < expected.size(); ++c) {
      EXPECT_EQ(report.results[c], expected[c])
          << what << ", chain " << c << " under " << setup << " at " << ranks << " ranks: answer "
          << hash_of({report.results[c]}) << ", the one-rank loop's " << hash_of({expected[c]});
    }
    std::printf("%s under %s at %d ranks: answers %s, the one-rank loop's %s\n", what, setup.c_str(), ranks,
                hash_of(report.results).c_str(), hash_of(expected).c_str());
  }
}

TEST(Reproducible, ReadmeSkeletonGivesTheOneRankLoopsBits) { expect_the_loops_bits<MyChains>("README skeleton"); }

TEST(Reproducible, MinimalExampleGivesTheOneRankLoopsBits) { expect_the_loops_bits<Gaussian>("examples/minimal"); }

}  // namespace
