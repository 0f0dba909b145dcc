// SPDX-License-Identifier: BSD-3-Clause
// Lennard-Jones walkers (mcmclb/lj.hpp): known energies, slices that cover every pair once for every group size,
// bit-identical trajectories whatever the group sizes that work a chain, and the exact MPI reduction.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "mcmclb/lj.hpp"
#include "mcmclb/mpi.hpp"

namespace lj = mcmclb::lj;
namespace mpi = mcmclb::mpi;

namespace {

constexpr int kMagicSizes[] = {13, 19, 26, 38, 55};

// A state moved away from its start by some accepted moves, so tests do not only see lattice positions.
lj::State shaken_state(int atoms, uint64_t seed, int items = 40) {
  lj::Spec spec;
  spec.atoms = atoms;
  spec.temperature = 1.0;
  spec.max_step = 0.15;
  const lj::ChainKey key{seed, 7};
  lj::State state = lj::initial_state(atoms, key);
  for (int k = 0; k < items; ++k) (void)lj::work_item_split(spec, key, state, 1);
  return state;
}

// What a chain looked like after each item.
struct Trace {
  std::vector<lj::Energy> energy;
  std::vector<int64_t> accepted;
  bool operator==(const Trace&) const = default;
};

}  // namespace

// ---- Known energies ----------------------------------------------------------------------------------------------

TEST(LjEnergy, DimerAtPairMinimumIsMinusOne) {
  const double r_min = std::pow(2.0, 1.0 / 6.0);
  EXPECT_NEAR(lj::pair_energy(r_min * r_min), -1.0, 1e-14);
  EXPECT_NEAR(lj::pair_energy(1.0), 0.0, 1e-15);  // E(sigma) = 0
  const lj::State dimer = lj::state_at({0, 0, 0, r_min, 0, 0});
  EXPECT_NEAR(lj::to_epsilon(dimer.energy), -1.0, 1e-9);
  // Either side of the minimum is higher.
  EXPECT_GT(lj::state_at({0, 0, 0, r_min * 0.99, 0, 0}).energy, dimer.energy);
  EXPECT_GT(lj::state_at({0, 0, 0, r_min * 1.01, 0, 0}).energy, dimer.energy);
}

TEST(LjEnergy, Icosahedron13ReachesTheKnownGlobalMinimum) {
  // LJ13's global minimum is the Mackay icosahedron, E = -44.326801 (Wales & Doye 1997). Its Ih symmetry leaves
  // one free parameter, the radius; minimise over it by golden-section search.
  const auto energy = [](double radius) { return lj::to_epsilon(lj::state_at(lj::icosahedron13(radius)).energy); };
  double lo = 1.0, hi = 1.2;
  const double golden = (std::sqrt(5.0) - 1.0) / 2.0;
  for (int k = 0; k < 100; ++k) {
    const double a = hi - golden * (hi - lo), b = lo + golden * (hi - lo);
    if (energy(a) < energy(b)) {
      hi = b;
    } else {
      lo = a;
    }
  }
  const double radius = (lo + hi) / 2.0;
  EXPECT_NEAR(energy(radius), -44.326801, 2e-6);
  // All 12 surface atoms sit at that radius.
  EXPECT_NEAR(lj::max_radius(lj::icosahedron13(radius)), radius, 1e-12);
}

TEST(LjEnergy, QuantizeRoundsToNearestQuantumAndClampsTheCore) {
  EXPECT_EQ(lj::quantize(-1.0), -(int64_t{1} << 32));
  EXPECT_EQ(lj::quantize(0.0), 0);
  EXPECT_EQ(lj::quantize(1.25 * lj::kEnergyQuantum), 1);
  EXPECT_EQ(lj::quantize(-1.75 * lj::kEnergyQuantum), -2);
  const lj::Energy cap = lj::quantize(lj::kPairEnergyCap);
  EXPECT_EQ(cap, int64_t{1} << 48);
  EXPECT_EQ(lj::quantize(1e300), cap);
  EXPECT_EQ(lj::quantize(lj::pair_energy(0.0)), cap);  // coincident atoms: inf/NaN must clamp, not overflow
  EXPECT_EQ(lj::quantize(std::numeric_limits<double>::quiet_NaN()), cap);
  for (const double r : {0.9, 1.0, 1.1, 1.5, 2.5}) {
    const double e = lj::pair_energy(r * r);
    EXPECT_LE(std::abs(lj::to_epsilon(lj::quantize(e)) - e), 0.5 * lj::kEnergyQuantum);
  }
  // The worst case the header documents stays far below the energies that matter.
  EXPECT_LT(lj::max_rounding_error(55), 2e-7);
}

TEST(LjEnergy, RunningEnergyEqualsAFreshTotalAfterEveryItem) {
  for (const lj::MoveKind move : {lj::MoveKind::single, lj::MoveKind::all}) {
    lj::Spec spec;
    spec.atoms = 26;
    spec.temperature = 0.8;
    spec.move = move;
    spec.max_step = move == lj::MoveKind::single ? 0.2 : 0.03;
    const lj::ChainKey key{11, 3};
    lj::State state = lj::initial_state(spec.atoms, key);
    for (int k = 0; k < 200; ++k) {
      (void)lj::work_item_split(spec, key, state, 1 + k % 5);
      ASSERT_EQ(state.energy, lj::total_energy(state.positions)) << lj::to_string(move) << " item " << k;
    }
    EXPECT_GT(state.accepted, 0);
    EXPECT_LT(state.accepted, state.item);
  }
}

TEST(LjInitial, StartsAreCompactWithoutOverlapAndDifferPerChain) {
  for (const int atoms : kMagicSizes) {
    const lj::State a = lj::initial_state(atoms, {5, 0});
    const lj::State b = lj::initial_state(atoms, {5, 1});
    ASSERT_EQ(a.atoms(), atoms);
    EXPECT_NE(a.positions, b.positions);
    EXPECT_EQ(a, lj::initial_state(atoms, {5, 0}));  // deterministic
    double closest = 1e9;
    for (int i = 0; i < atoms; ++i)
      for (int j = i + 1; j < atoms; ++j) {
        double r2 = 0;
        for (int d = 0; d < 3; ++d) r2 += std::pow(a.positions[3 * i + d] - a.positions[3 * j + d], 2);
        closest = std::min(closest, std::sqrt(r2));
      }
    EXPECT_GE(closest, 0.95) << atoms << " atoms";
    // Bound: every atom has at most 12 neighbours at about -1 each, so E > -6 N; a compact cluster is well below 0.
    EXPECT_LT(lj::to_epsilon(a.energy), -2.0 * atoms) << atoms << " atoms";
    EXPECT_GT(lj::to_epsilon(a.energy), -6.0 * atoms) << atoms << " atoms";
  }
}

// ---- Slices ------------------------------------------------------------------------------------------------------

TEST(LjSlices, SlicesTileTheRangeAndAreBalanced) {
  for (int64_t count = 0; count <= 120; ++count)
    for (int g = 1; g <= 60; ++g) {
      int64_t next = 0;
      for (int r = 0; r < g; ++r) {
        const lj::Range s = lj::slice(count, g, r);
        ASSERT_EQ(s.begin, next) << count << " over " << g;
        ASSERT_GE(s.size(), count / g);
        ASSERT_LE(s.size(), count / g + 1);
        next = s.end;
      }
      ASSERT_EQ(next, count);
    }
}

TEST(LjSlices, EveryPairIsInExactlyOneSliceForEveryGroupSize) {
  for (const int atoms : {2, 3, 13, 19, 26, 38, 55}) {
    for (int g = 1; g <= atoms; ++g) {
      std::vector<int> seen(static_cast<std::size_t>(atoms * atoms), 0);
      for (int r = 0; r < g; ++r) {
        const lj::Range s = lj::slice(lj::pair_count(atoms), g, r);
        for (int64_t p = s.begin; p < s.end; ++p) {
          const auto [i, j] = lj::pair_at(atoms, p);
          ASSERT_TRUE(0 <= i && i < j && j < atoms);
          ++seen[static_cast<std::size_t>(i * atoms + j)];
        }
      }
      for (int i = 0; i < atoms; ++i)
        for (int j = i + 1; j < atoms; ++j) ASSERT_EQ(seen[static_cast<std::size_t>(i * atoms + j)], 1);
    }
  }
}

TEST(LjSlices, PartsAddUpToTheWholeForEveryGroupSize) {
  for (const int atoms : kMagicSizes) {
    const lj::State state = shaken_state(atoms, 21);
    const lj::Energy whole = lj::total_energy(state.positions);
    for (int g = 1; g <= atoms; ++g) {
      lj::Energy sum = 0;
      for (int r = 0; r < g; ++r) sum += lj::total_energy_part(state.positions, g, r);
      ASSERT_EQ(sum, whole) << atoms << " atoms, g = " << g;
    }
    // Single-atom moves: the g = 1 delta equals the change of a fresh total, and every g gives the same sum.
    for (const int atom : {0, atoms / 2, atoms - 1}) {
      const std::array<double, 3> to = {state.positions[3 * atom] + 0.07, state.positions[3 * atom + 1] - 0.05,
                                        state.positions[3 * atom + 2] + 0.02};
      std::vector<double> moved = state.positions;
      std::copy(to.begin(), to.end(), moved.begin() + 3 * atom);
      const lj::Energy delta = lj::single_move_delta_part(state.positions, atom, to, 1, 0);
      ASSERT_EQ(delta, lj::total_energy(moved) - whole);
      for (int g = 1; g <= atoms; ++g) {
        lj::Energy sum = 0;
        for (int r = 0; r < g; ++r) sum += lj::single_move_delta_part(state.positions, atom, to, g, r);
        ASSERT_EQ(sum, delta) << atoms << " atoms, atom " << atom << ", g = " << g;
      }
    }
  }
}

// ---- Trajectories ------------------------------------------------------------------------------------------------

// For 20 seeds: a chain worked in pieces of 1..5 items, each piece at another group size g (and its state passed
// through serialize/deserialize as on a merge), has the same energy and acceptance count after every item, and the
// same final bits, as the chain worked at g = 1.
TEST(LjTrajectory, PiecesAtVaryingGroupSizesMatchOneRankBitForBit) {
  int64_t accepted_total = 0, items_total = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    lj::Spec spec;
    spec.atoms = kMagicSizes[seed % 5];
    spec.move = seed % 2 == 0 ? lj::MoveKind::single : lj::MoveKind::all;
    spec.temperature = 0.4;
    spec.max_step = spec.move == lj::MoveKind::single ? 0.12 : 0.02;
    spec.confine_radius = seed % 3 == 0 ? 4.0 : 0.0;
    lj::validate(spec);
    const lj::ChainKey key{seed, seed * 31 % 17};
    const int items = 60;

    lj::State reference = lj::initial_state(spec.atoms, key);
    Trace expected;
    for (int k = 0; k < items; ++k) {
      (void)lj::work_item_split(spec, key, reference, 1);
      expected.energy.push_back(reference.energy);
      expected.accepted.push_back(reference.accepted);
    }

    lj::State state = lj::initial_state(spec.atoms, key);
    Trace got;
    uint64_t pick = seed;
    while (state.item < items) {
      pick = pick * 6364136223846793005ULL + 1442695040888963407ULL;  // any deterministic sequence of g
      const int g = 1 + static_cast<int>((pick >> 33) % static_cast<uint64_t>(spec.atoms));
      const int piece = 1 + static_cast<int>((pick >> 17) % 5);
      for (int k = 0; k < piece && state.item < items; ++k) {
        (void)lj::work_item_split(spec, key, state, g);
        got.energy.push_back(state.energy);
        got.accepted.push_back(state.accepted);
      }
      state = lj::deserialize(lj::serialize(state));  // the merge broadcast's round trip
    }
    ASSERT_EQ(got, expected) << "seed " << seed;
    ASSERT_EQ(state, reference) << "seed " << seed;
    ASSERT_EQ(lj::serialize(state), lj::serialize(reference)) << "seed " << seed;  // every bit
    accepted_total += reference.accepted;
    items_total += reference.item;
  }
  // The comparison means something only if the chains both accept and reject.
  EXPECT_GT(accepted_total, items_total / 10);
  EXPECT_LT(accepted_total, items_total);
}

TEST(LjTrajectory, DifferentSeedsGiveDifferentTrajectories) {
  lj::Spec spec;
  spec.atoms = 19;
  spec.temperature = 0.5;
  lj::State a = lj::initial_state(spec.atoms, {1, 0});
  lj::State b = a;  // same start: only the move draws differ
  for (int k = 0; k < 50; ++k) {
    (void)lj::work_item_split(spec, {1, 0}, a, 1);
    (void)lj::work_item_split(spec, {2, 0}, b, 1);
  }
  EXPECT_NE(a.positions, b.positions);
}

TEST(LjTrajectory, TheWallKeepsEveryAtomInside) {
  lj::Spec spec;
  spec.atoms = 13;
  spec.temperature = 5.0;  // hot: atoms would evaporate without the wall
  spec.max_step = 0.5;
  spec.confine_radius = 2.5;
  lj::validate(spec);
  const lj::ChainKey key{3, 4};
  lj::State state = lj::initial_state(spec.atoms, key);
  int outside = 0;
  for (int k = 0; k < 2000; ++k) {
    const lj::ItemResult result = lj::work_item_split(spec, key, state, 2);
    if (!result.evaluated) ++outside;
    ASSERT_LE(lj::max_radius(state.positions), spec.confine_radius);
  }
  EXPECT_GT(outside, 0);
  EXPECT_EQ(state.energy, lj::total_energy(state.positions));
}

// ---- Cost (the simulated time of an evaluation) ------------------------------------------------------------------

// The pair terms a member sums: its slices add up to the whole evaluation (single move: the N-1 pairs of the moved
// atom at the old and the new position; all-atom: every pair), balanced within one pair (two terms for single moves).
TEST(LjCost, PairTermsOfTheSlicesAddUpToTheWholeEvaluation) {
  for (const auto move : {lj::MoveKind::single, lj::MoveKind::all}) {
    for (const int atoms : kMagicSizes) {
      lj::Spec spec;
      spec.atoms = atoms;
      spec.move = move;
      const lj::State state = lj::initial_state(atoms, {5, 1});
      const lj::Trial trial = lj::propose(spec, {5, 1}, state);
      const int64_t whole = move == lj::MoveKind::single ? 2 * (atoms - 1) : lj::pair_count(atoms);
      ASSERT_EQ(lj::pair_terms(trial, atoms, 1, 0), whole);
      for (int g = 1; g <= 8; ++g) {
        int64_t sum = 0, least = whole, most = 0;
        for (int r = 0; r < g; ++r) {
          const int64_t terms = lj::pair_terms(trial, atoms, g, r);
          sum += terms;
          least = std::min(least, terms);
          most = std::max(most, terms);
        }
        EXPECT_EQ(sum, whole) << atoms << " atoms, g = " << g;
        EXPECT_LE(most - least, move == lj::MoveKind::single ? 2 : 1) << atoms << " atoms, g = " << g;
      }
      EXPECT_GT(lj::trial_flops(move, atoms, whole), lj::trial_flops(move, atoms, whole / 2));
    }
  }
}

// work_item reports each trial's cost to `computed` once, before the trial's reduction (where the simulation build
// passes its time), with 0 pair terms and no reduction for a trial the wall rejects.
TEST(LjCost, ComputedIsCalledOncePerTrialBeforeItsReduction) {
  lj::Spec spec;
  spec.atoms = 13;
  spec.temperature = 5.0;
  spec.max_step = 0.5;
  spec.confine_radius = 2.5;  // some trials leave the sphere
  const lj::ChainKey key{3, 4};
  lj::State state = lj::initial_state(spec.atoms, key);
  std::string calls;
  int64_t terms_seen = 0;
  const int g = 3, r = 1;
  const auto reduce = [&](lj::Energy part) {
    calls += 'r';
    return part;  // the order of calls is tested here, not the physics
  };
  const auto computed = [&](int64_t terms) {
    calls += terms == 0 ? 'z' : 'c';
    terms_seen += terms;
  };
  int64_t evaluated = 0;
  for (int k = 0; k < 500; ++k) evaluated += lj::work_item(spec, key, state, g, r, reduce, computed).evaluated;
  std::string::size_type zeros = 0;
  for (std::string::size_type i = 0; i < calls.size();) {
    if (calls[i] == 'z') {
      ++zeros;
      ++i;
    } else {
      ASSERT_EQ(calls.substr(i, 2), "cr") << "at call " << i;
      i += 2;
    }
  }
  EXPECT_EQ(static_cast<int64_t>(zeros) + evaluated, 500);
  EXPECT_GT(zeros, 0u);
  EXPECT_EQ(terms_seen, evaluated * 2 * lj::slice(spec.atoms - 1, g, r).size());
}

TEST(LjState, SerializesToAFlatBufferAndBack) {
  const lj::State state = shaken_state(38, 5);
  const std::vector<std::byte> buffer = lj::serialize(state);
  EXPECT_EQ(buffer.size(), lj::serialized_bytes(38));
  EXPECT_EQ(lj::serialized_bytes(55), 1352u);
  EXPECT_EQ(lj::deserialize(buffer), state);
  EXPECT_THROW((void)lj::deserialize(std::span(buffer).first(buffer.size() - 8)), std::invalid_argument);
  EXPECT_THROW((void)lj::deserialize(std::span(buffer).first(16)), std::invalid_argument);
}

TEST(LjSpec, BadValuesAreOneLineErrorsNamingTheKey) {
  const auto message = [](lj::Spec spec) -> std::string {
    try {
      lj::validate(spec, "workload.lj.");
    } catch (const mpi::InputError& e) {
      return e.what();
    }
    return "";
  };
  lj::Spec ok;
  EXPECT_EQ(message(ok), "");
  lj::Spec bad = ok;
  bad.atoms = 1;
  EXPECT_EQ(message(bad), "workload.lj.atoms: 1 is not in 2..256");
  bad = ok;
  bad.temperature = 0;
  EXPECT_EQ(message(bad), "workload.lj.temperature: 0 is not a positive number");
  bad = ok;
  bad.max_step = std::numeric_limits<double>::infinity();
  EXPECT_EQ(message(bad), "workload.lj.max_step: inf is not a positive number");
  bad = ok;
  bad.confine_radius = 1.0;
  EXPECT_NE(message(bad).find("workload.lj.confine_radius: 1 cannot hold the initial cluster of 13 atoms"),
            std::string::npos);
  EXPECT_EQ(lj::parse_move_kind("all"), lj::MoveKind::all);
  EXPECT_EQ(lj::parse_move_kind("single"), lj::MoveKind::single);
  EXPECT_EQ(lj::parse_move_kind("some"), std::nullopt);
}

// ---- Under mpiexec -----------------------------------------------------------------------------------------------

namespace {

// The walkers hold no MPI; these helpers give them plain MPI communicators, as the kernel gives them its groups.

/// Exact group sum of fixed-point parts (MPI_Allreduce, MPI_INT64_T, MPI_SUM).
lj::Energy allreduce_energy(lj::Energy part, const mpi::Comm& group) {
  lj::Energy sum = 0;
  mpi::check(MPI_Allreduce(&part, &sum, 1, MPI_INT64_T, MPI_SUM, group.get()), "MPI_Allreduce");
  return sum;
}

/// One item worked by the calling member of group, its slices summed by allreduce_energy.
lj::ItemResult work_item(const lj::Spec& spec, const lj::ChainKey& key, lj::State& state, const mpi::Comm& group) {
  return lj::work_item(spec, key, state, group.size(), group.rank(),
                       [&group](lj::Energy part) { return allreduce_energy(part, group); });
}

/// A merge's traffic: root's state replaces every other member's (MPI_Bcast of the serialize() buffer). Returns
/// the bytes broadcast.
std::size_t broadcast_state(lj::State& state, int atoms, int root, const mpi::Comm& group) {
  std::vector<std::byte> buffer =
      group.rank() == root ? lj::serialize(state) : std::vector<std::byte>(lj::serialized_bytes(atoms));
  if (buffer.size() != lj::serialized_bytes(atoms))
    throw std::invalid_argument("broadcast_state: the root's state does not have the given atom count");
  mpi::check(MPI_Bcast(buffer.data(), static_cast<int>(buffer.size()), MPI_BYTE, root, group.get()), "MPI_Bcast");
  if (group.rank() != root) state = lj::deserialize(buffer);
  return buffer.size();
}

}  // namespace

// Every rank sums its slice; MPI_Allreduce(MPI_INT64_T, MPI_SUM) gives exactly the one-rank total.
TEST(LjMpi, AllreduceOfSlicesEqualsTheOneRankEvaluation) {
  const mpi::Comm world = mpi::Comm::world();
  for (const int atoms : kMagicSizes) {
    const lj::State state = shaken_state(atoms, 9);  // the same on every rank: it depends on the seed alone
    const lj::Energy total =
        allreduce_energy(lj::total_energy_part(state.positions, world.size(), world.rank()), world);
    EXPECT_EQ(total, lj::total_energy(state.positions)) << atoms << " atoms";
    const std::array<double, 3> to = {0.3, -0.2, 0.1};
    const lj::Energy delta =
        allreduce_energy(lj::single_move_delta_part(state.positions, 1, to, world.size(), world.rank()), world);
    EXPECT_EQ(delta, lj::single_move_delta_part(state.positions, 1, to, 1, 0)) << atoms << " atoms";
  }
}

// A chain worked alone, then by the whole world after a broadcast from rank 0, then by groups of two, has the
// one-rank trajectory.
TEST(LjMpi, ChainWorkedByChangingGroupsMatchesOneRank) {
  const mpi::Comm world = mpi::Comm::world();
  for (const lj::MoveKind move : {lj::MoveKind::single, lj::MoveKind::all}) {
    lj::Spec spec;
    spec.atoms = 26;
    spec.move = move;
    spec.temperature = 0.4;
    spec.max_step = move == lj::MoveKind::single ? 0.12 : 0.02;
    const lj::ChainKey key{42, 5};
    lj::State reference = lj::initial_state(spec.atoms, key);
    Trace expected;
    for (int k = 0; k < 45; ++k) {
      (void)lj::work_item_split(spec, key, reference, 1);
      expected.energy.push_back(reference.energy);
      expected.accepted.push_back(reference.accepted);
    }

    Trace got;
    const auto work = [&](lj::State& state, const mpi::Comm& group, int items) {
      for (int k = 0; k < items; ++k) {
        (void)work_item(spec, key, state, group);
        got.energy.push_back(state.energy);
        got.accepted.push_back(state.accepted);
      }
    };
    // Phase 1: rank 0 alone; the others hold another chain's start, which the broadcast must overwrite.
    lj::State state = lj::initial_state(spec.atoms, world.rank() == 0 ? key : lj::ChainKey{43, 6});
    if (world.rank() == 0) {
      work(state, mpi::Comm::self(), 15);
    } else {  // only rank 0 saw phase 1
      got.energy.assign(expected.energy.begin(), expected.energy.begin() + 15);
      got.accepted.assign(expected.accepted.begin(), expected.accepted.begin() + 15);
    }
    // Phase 2: everyone, after the merge's broadcast.
    const std::size_t bytes = broadcast_state(state, spec.atoms, 0, world);
    EXPECT_EQ(bytes, lj::serialized_bytes(spec.atoms));
    work(state, world, 15);
    // Phase 3: groups of two consecutive ranks, each working its own copy of the chain.
    MPI_Comm pairs = MPI_COMM_NULL;
    mpi::check(MPI_Comm_split(world.get(), world.rank() / 2, world.rank(), &pairs), "MPI_Comm_split");
    const mpi::Comm pair = mpi::Comm::adopt(pairs);
    work(state, pair, 15);
    EXPECT_EQ(got, expected) << lj::to_string(move);
    EXPECT_EQ(state, reference) << lj::to_string(move);
    EXPECT_EQ(lj::serialize(state), lj::serialize(reference)) << lj::to_string(move);
  }
}
