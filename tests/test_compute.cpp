// SPDX-License-Identifier: BSD-3-Clause
// Work mode compute: Lennard-Jones walkers whose per-chain results do not depend on the balancer. For
// 20 seeds (8 at 3 and 4 ranks, 2 beyond), every registered balancer with each of its methods gives every chain the
// same final energy (bit for bit, fixed point) and acceptance count, and each run's own check against a single-rank
// reference passes. Also walker groups of explicit sizes, and groups by node.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "mcmclb/balancer.hpp"
#include "mcmclb/comm_create.hpp"
#include "mcmclb/driver.hpp"
#include "mcmclb/input_error.hpp"
#include "mcmclb/mpi.hpp"
#include "mpi_test.hpp"

namespace mpi = mcmclb::mpi;
using mcmclb::testing::world_rank;
using mcmclb::testing::world_size;

namespace {

/// CI-sized: a few items of a few trial moves per chain, so 20 seeds x every balancer stay quick on 2 cores.
mcmclb::RunSpec compute_run(uint64_t seed) {
  mcmclb::RunSpec r;
  r.experiment = "compute-test";
  r.nprocs = world_size();
  r.workload.model = "random";  // 1..6 items per chain, drawn from the seed: imbalance that differs per seed
  r.workload.set("min", int64_t{1});
  r.workload.set("max", int64_t{6});
  r.workload.set("seed", static_cast<int64_t>(seed));
  r.work.mode = mcmclb::WorkMode::compute;
  r.work.seed = seed;
  r.work.compute.moves_per_item = 3;
  r.work.compute.max_step = 0.15;
  r.balancer = "none";
  return r;
}

struct Case {
  std::string balancer, method;
  int interval;
};

/// Every registered balancer with each of its methods. A balancer with an interval gets 1 for odd seeds and 2 for
/// even ones, so over the seeds every (method, interval) pair runs while a seed costs one run per method.
std::vector<Case> every_balancer_and_method(uint64_t seed) {
  std::vector<Case> cases;
  for (const auto& entry : mcmclb::balancer_entries()) {
    const auto& info = entry.info;
    const int interval = info.uses_interval ? static_cast<int>(2 - seed % 2) : 0;
    std::vector<std::string> methods(info.methods.begin(), info.methods.end());
    if (methods.empty()) methods.emplace_back("");
    for (const auto& m : methods) {
      if (m == "from_group" && !mcmclb::from_group_supported()) continue;
      cases.push_back({std::string(info.name), m, interval});
    }
  }
  return cases;
}

struct ChainResult {
  int64_t energy, accepted, moves;
  bool operator==(const ChainResult&) const = default;
};

/// The trace without the group sizes (which differ between balancers by design).
std::vector<std::array<int64_t, 4>> trajectory(const std::vector<mcmclb::TracePoint>& trace) {
  std::vector<std::array<int64_t, 4>> t;
  for (const auto& p : trace) t.push_back({p.chain, p.item, p.energy_q32, p.accepted});
  return t;
}

/// Runs spec; checks its verdict everywhere; rank 0 returns every chain's result (and its trace if asked).
std::vector<ChainResult> run_chains(const mcmclb::RunSpec& spec, std::vector<std::array<int64_t, 4>>* trace = nullptr,
                                    mcmclb::RunResult* result = nullptr) {
  const mcmclb::RunResult r = mcmclb::run_once(spec);
  if (result != nullptr) *result = r;
  if (trace != nullptr) *trace = trajectory(r.trace);
  EXPECT_TRUE(r.valid) << mcmclb::run_label(spec) << ": " << r.violations;
  std::vector<ChainResult> out;
  for (const auto& c : r.chains) {
    EXPECT_TRUE(c.matches) << "chain " << c.chain;
    EXPECT_EQ(c.moves, c.items * spec.work.compute.moves_per_item) << "chain " << c.chain;
    out.push_back({c.energy_q32, c.accepted, c.moves});
  }
  return out;
}

TEST(Compute, EveryBalancerGivesEveryChainTheSameEnergyAndAcceptances) {
  // Seeds 1 and 2 between them run every (method, interval) pair. All 20 seeds where the ranks have cores of their
  // own (1 and 2 ranks on the 2-core CI machine); 4 at 3 and 4 ranks and 2 beyond, oversubscribed, where every run
  // is several times slower (and the planning balancers calibrate before each). The walkers suite checks the same
  // identity for an application's chains, which take the same path through the kernel, under every balancer.
  const uint64_t seeds = world_size() > 4 ? 2 : world_size() > 2 ? 4 : 20;
  for (uint64_t seed = 1; seed <= seeds; ++seed) {
    std::vector<ChainResult> first;
    std::vector<std::array<int64_t, 4>> first_trace;
    for (const Case& c : every_balancer_and_method(seed)) {
      mcmclb::RunSpec spec = compute_run(seed);
      spec.balancer = c.balancer;
      spec.method = c.method;
      spec.interval = c.interval;
      spec.work.compute.trace = true;  // the energy and acceptances after every item, not only the last
      SCOPED_TRACE("seed " + std::to_string(seed) + ", " + mcmclb::run_label(spec));
      std::vector<std::array<int64_t, 4>> trace;
      const auto chains = run_chains(spec, &trace);
      if (world_rank() != 0) continue;
      ASSERT_EQ(chains.size(), static_cast<std::size_t>(world_size()));
      int64_t items = 0;
      for (const auto& ch : chains) items += ch.moves / spec.work.compute.moves_per_item;
      EXPECT_EQ(trace.size(), static_cast<std::size_t>(items)) << "one trace point per item";
      if (first.empty()) {
        first = chains;
        first_trace = trace;
      } else {
        EXPECT_EQ(chains, first);
        EXPECT_EQ(trace, first_trace);
      }
    }
  }
}

/// Several chains per group (W = 3): every balancer still gives every chain its single-rank reference result, since a
/// chain's random stream and physics derive from its global index, not from the group that runs it.
TEST(Compute, SeveralChainsPerGroupMatchTheReferenceUnderEveryBalancer) {
  for (uint64_t seed = 1; seed <= 2; ++seed) {
    std::vector<ChainResult> first;
    for (const Case& c : every_balancer_and_method(seed)) {
      // Each balancer with its default method (decided alike on every rank: each must make the same runs).
      if (c.method != mcmclb::balancer_info(c.balancer).default_method) continue;
      mcmclb::RunSpec spec = compute_run(seed);
      spec.workload.chains_per_group = 3;
      spec.balancer = c.balancer;
      spec.method = c.method;
      spec.interval = c.interval;
      SCOPED_TRACE("seed " + std::to_string(seed) + ", " + mcmclb::run_label(spec));
      const auto chains = run_chains(spec);
      if (world_rank() != 0) continue;
      ASSERT_EQ(chains.size(), static_cast<std::size_t>(3 * world_size()));
      if (first.empty()) {
        first = chains;
      } else {
        EXPECT_EQ(chains, first);
      }
    }
  }
}

/// The finished rule pays: every balancer offering it gives every chain its single-rank reference result, with one
/// chain per group and with three (whichever merges the rule lets happen here, and none if it finds that no merge
/// can pay).
TEST(Compute, PaysMatchesTheReferenceUnderEveryBalancerOfferingIt) {
  for (const auto& entry : mcmclb::balancer_entries()) {
    const auto& info = entry.info;
    if (std::find(info.finished_rules.begin(), info.finished_rules.end(), mcmclb::FinishedRule::pays) ==
        info.finished_rules.end()) {
      continue;
    }
    for (int chains_per_group : {1, 3}) {
      mcmclb::RunSpec spec = compute_run(11);
      spec.workload.chains_per_group = chains_per_group;
      spec.balancer = info.name;
      spec.method = "range";  // every balancer offering pays can use it, and its creation keeps the calibration cheap
      spec.interval = info.uses_interval ? 1 : 0;
      spec.finished = mcmclb::FinishedRule::pays;
      SCOPED_TRACE(mcmclb::run_label(spec) + " W=" + std::to_string(chains_per_group));
      (void)run_chains(spec);
    }
  }
}

/// The finished rule pays takes a merge in compute mode where splitting a trial clearly pays: 256 atoms, all-atom
/// moves (32 640 pair terms a trial, over a hundred microseconds on one rank) and cyclic S_r = 20 (r mod 2), so rank
/// 0 has nothing to do beside rank 1's chain. With a core per rank (the ranks spin: work.wait auto) a reduction
/// costs microseconds and halving the trials saves milliseconds, so async and lookahead merge rank 0 into rank 1's
/// group, and the merged chain still matches its reference. Where ranks outnumber cores the polite reductions cost
/// more than half a trial, so whether a merge pays is the machine's to say: there only the results are checked.
TEST(Compute, PaysMergesWhereSplittingTrialsPays) {
  for (const char* balancer : {"async", "lookahead"}) {
    mcmclb::RunSpec spec = compute_run(5);
    spec.G = 1;
    spec.workload.model = "cyclic";
    spec.workload.set("scale", int64_t{20});
    spec.workload.set("period", int64_t{2});
    spec.work.compute.atoms = 256;
    spec.work.compute.move = mcmclb::lj::MoveKind::all;
    spec.work.compute.max_step = 0.01;
    spec.work.compute.moves_per_item = 4;
    spec.balancer = balancer;
    spec.method = "range";  // a cheap creation, so calibrating on oversubscribed ranks stays cheap too
    spec.interval = spec.balancer == "lookahead" ? 1 : 0;
    spec.finished = mcmclb::FinishedRule::pays;
    SCOPED_TRACE(mcmclb::run_label(spec));
    mcmclb::RunResult r;
    (void)run_chains(spec, nullptr, &r);
    if (world_rank() != 0 || world_size() < 2 || r.provenance.wait_policy != "spin") continue;
    EXPECT_GE(r.ranks.at(0).regroups, 2) << "rank 0 never merged";
  }
}

/// A pass that prices merges stops after 2 ranks when even free creations and reductions as cheap as at 2 ranks
/// leave every merge unpaid, and times every size otherwise. Which case a machine is in is the machine's to say, so
/// the model is told to misjudge on purpose: reductions a thousand times dearer than measured (no merge can pay), or
/// trials a thousand times dearer (splitting them pays at any size).
TEST(Compute, APricingCalibrationStopsAtTwoRanksWhenNoMergeCanPay) {
  for (const bool can_pay : {false, true}) {
    mcmclb::RunSpec spec = compute_run(5);
    spec.work.compute.move = mcmclb::lj::MoveKind::all;
    spec.balancer = "async";
    spec.method = "range";
    spec.finished = mcmclb::FinishedRule::pays;
    (can_pay ? spec.work.model_error.compute : spec.work.model_error.reduce) = 1000.0;
    SCOPED_TRACE(can_pay ? "trials predicted dear" : "reductions predicted dear");
    mcmclb::RunResult r;
    (void)run_chains(spec, nullptr, &r);
    std::vector<int> sizes;
    for (const auto& c : r.calibration.sizes) sizes.push_back(c.size);
    const std::vector<int> all = mcmclb::calibration_sizes(world_size());
    EXPECT_EQ(sizes, can_pay
                         ? all
                         : std::vector<int>(all.begin(), all.begin() + std::min<std::ptrdiff_t>(2, std::ssize(all))));
    if (can_pay || world_rank() != 0) continue;
    for (const auto& x : r.ranks) EXPECT_EQ(x.regroups, 1) << "a merge where none can pay";
  }
}

/// steal moves an unstarted chain with its walker state (cyclic, W = 4: rank 0's chains are the shortest, so it
/// finishes first and asks for a chain from another group), and every chain's result is still its reference's,
/// wherever it was worked. Whether a chain is still unstarted when the request is read depends on scheduling on real
/// MPI, so the count is not asserted here (the simulated goldens, deterministic, require the thieves to move walkers
/// in compute mode); what is: each migration carries at least the state of the smallest walker.
TEST(Compute, StealMovesTheWalkerStateWithTheChain) {
  mcmclb::RunSpec spec = compute_run(5);
  spec.work.compute.moves_per_item = 30;
  spec.balancer = "steal";
  spec.workload.model = "cyclic";
  spec.workload.set("scale", int64_t{2});
  spec.workload.chains_per_group = 4;
  const mcmclb::RunResult r = mcmclb::run_once(spec);
  EXPECT_TRUE(r.valid) << r.violations;
  if (world_rank() != 0) return;
  int64_t migrated = 0, bytes = 0;
  for (const auto& x : r.ranks) {
    migrated += x.chains_migrated;
    bytes += x.migrated_bytes;
  }
  for (const auto& c : r.chains) EXPECT_TRUE(c.matches) << "chain " << c.chain;
  if (world_size() == 1) {
    EXPECT_EQ(migrated, 0);
  }
  // At least the walker state of a 13-atom cluster (the smallest) per migrated chain.
  EXPECT_GE(bytes, migrated * static_cast<int64_t>(mcmclb::lj::serialized_bytes(13)));
}

TEST(Compute, AllAtomMovesInGroupsOfTwoMatchTheReference) {
  if (world_size() % 2 != 0) GTEST_SKIP() << "needs an even rank count";
  for (const char* balancer : {"none", "async", "collective"}) {
    mcmclb::RunSpec spec = compute_run(7);
    spec.G = 2;
    spec.work.compute.move = mcmclb::MoveKind::all;
    spec.work.compute.atoms = 13;
    spec.balancer = balancer;
    spec.interval = spec.balancer == "collective" ? 1 : 0;
    spec.method = spec.balancer == "async" ? "create_group" : spec.balancer == "collective" ? "split" : "";
    SCOPED_TRACE(mcmclb::run_label(spec));
    (void)run_chains(spec);
  }
}

TEST(Compute, MergesMoveTheWalkerState) {
  if (world_size() < 2) GTEST_SKIP() << "needs a merge";
  mcmclb::RunSpec spec = compute_run(3);
  spec.balancer = "async";
  spec.method = "intercomm";
  spec.workload.model = "cyclic";  // rank 0's chain is empty, so it joins rank 1's at once
  spec.workload.set("scale", int64_t{4});
  const mcmclb::RunResult r = mcmclb::run_once(spec);
  EXPECT_TRUE(r.valid) << r.violations;
  if (world_rank() != 0) return;
  int64_t bytes = 0;
  for (const auto& c : r.chains) bytes += c.state_bytes;
  // State moved at least once (rank 0 into rank 1's group).
  EXPECT_GT(bytes, 0);
}

TEST(Groups, ExplicitSizesFormTheInitialGroups) {
  const int p = world_size();
  // One group of 1, then the rest in one group: groups of different sizes.
  mcmclb::RunSpec spec = compute_run(5);
  spec.groups.by = mcmclb::GroupsSpec::By::sizes;
  spec.groups.sizes = p == 1 ? std::vector<int>{1} : std::vector<int>{1, p - 1};
  for (const char* balancer : {"none", "async"}) {
    spec.balancer = balancer;
    SCOPED_TRACE(balancer);
    const mcmclb::RunResult r = mcmclb::run_once(spec);
    EXPECT_TRUE(r.valid) << r.violations;
    if (world_rank() == 0) {
      EXPECT_EQ(r.chains.size(), spec.groups.sizes.size());
    }
  }
  EXPECT_EQ(mcmclb::initial_group_sizes(spec, mpi::Comm::world()), spec.groups.sizes);
}

TEST(Groups, ACountFormsNearlyEqualGroups) {
  // Two groups at any rank count (one at P = 1): sizes differing by at most one, the larger first; one chain each.
  const int p = world_size();
  mcmclb::RunSpec spec = compute_run(5);
  spec.groups.by = mcmclb::GroupsSpec::By::count;
  spec.groups.count = std::min(p, 2);
  const std::vector<int> sizes = mcmclb::initial_group_sizes(spec, mpi::Comm::world());
  const std::vector<int> expected = p == 1 ? std::vector<int>{1} : std::vector<int>{(p + 1) / 2, p / 2};
  EXPECT_EQ(sizes, expected);
  spec.balancer = "async";
  const mcmclb::RunResult r = mcmclb::run_once(spec);
  EXPECT_TRUE(r.valid) << r.violations;
  if (world_rank() == 0) {
    EXPECT_EQ(r.chains.size(), sizes.size());
  }
  spec.groups.count = p + 1;  // more groups than ranks: refused on every rank
  EXPECT_THROW((void)mcmclb::initial_group_sizes(spec, mpi::Comm::world()), mcmclb::InputError);
}

TEST(Groups, SizesThatDoNotCoverTheRanksAreAnErrorOnEveryRank) {
  mcmclb::RunSpec spec = compute_run(1);
  spec.groups.by = mcmclb::GroupsSpec::By::sizes;
  spec.groups.sizes = {world_size(), 1};
  EXPECT_THROW((void)mcmclb::initial_group_sizes(spec, mpi::Comm::world()), mcmclb::InputError);
}

TEST(Groups, ByNodeGivesOneGroupPerNode) {
  // mpiexec on one machine: every rank shares one node, so one group of all ranks; groups of one never straddle.
  mcmclb::RunSpec spec = compute_run(1);
  spec.groups.by = mcmclb::GroupsSpec::By::node;
  EXPECT_EQ(mcmclb::initial_group_sizes(spec, mpi::Comm::world()), std::vector<int>{world_size()});
  spec.groups.node_size = 1;
  EXPECT_EQ(mcmclb::initial_group_sizes(spec, mpi::Comm::world()), std::vector<int>(world_size(), 1));
  if (world_size() % 2 != 0) {
    spec.groups.node_size = 2;  // the node's ranks cannot be cut into groups of 2
    EXPECT_THROW((void)mcmclb::initial_group_sizes(spec, mpi::Comm::world()), mcmclb::InputError);
  }
  spec.balancer = "collective";
  spec.interval = 1;
  spec.groups.node_size = 0;
  const mcmclb::RunResult r = mcmclb::run_once(spec);
  EXPECT_TRUE(r.valid) << r.violations;
}

}  // namespace
