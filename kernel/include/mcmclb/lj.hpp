// SPDX-License-Identifier: BSD-3-Clause
// Metropolis Monte Carlo walkers on Lennard-Jones clusters (work mode `compute`): the walker state,
// counter-based random numbers, pair sums split over the members of a group, and an exact fixed-point
// reduction, so that a chain's trajectory does not depend on how many ranks evaluate its energies.
//
// Units are reduced LJ units: epsilon = sigma = 1, k_B = 1, so energies are in epsilon and the temperature is
// k_B T / epsilon.
//
// Reproducibility contract. Every random number of chain c under seed s comes from Philox4x64 (Random123) keyed
// by (s, c), with the counter (item, draw, stream, 0); nothing else is random. Energies are sums of pair terms
// that are each rounded to a fixed-point integer (quantum 2^-32 epsilon) before they are added, so sums are
// exact and associative: any split of the pairs over g members, added in any order (or by MPI_Allreduce with
// MPI_INT64_T / MPI_SUM), gives the same bits. Hence the energy after item k, the acceptance count and the
// positions are bit-identical for every g, every sequence of regroupings and every balancer.
//
// No MPI here: a group's reduction and a merge's broadcast are the caller's (the kernel passes its group
// communicator's allreduce to work_item), so the study library can share MoveKind through mcmclb/run_spec.hpp.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "mcmclb/input_error.hpp"

namespace mcmclb::lj {

// ---- Fixed-point energies --------------------------------------------------------------------------------------

/// An energy in units of kEnergyQuantum epsilon. Sums of these are exact, so they do not depend on order.
using Energy = int64_t;

/// Bits after the binary point: one quantum is 2^-32 epsilon (about 2.3e-10).
inline constexpr int kFractionBits = 32;
inline constexpr double kEnergyQuantum = 0x1p-32;

/// Pair energies are clamped to this many epsilon (reached at r = 0.445 sigma), which bounds every sum of
/// kMaxAtoms*(kMaxAtoms-1)/2 pair terms below 2^63 quanta: 32640 * 2^16 * 2^32 < 2^63. A trial that puts two
/// atoms this close is rejected anyway (acceptance exp(-65536/T)); the clamp keeps the integers from overflowing.
inline constexpr double kPairEnergyCap = 65536.0;
inline constexpr int kMaxAtoms = 256;

/// Precision versus a plain double sum: each pair term is rounded to the nearest quantum, an error of at most
/// 2^-33 epsilon per pair, so a total over M pairs differs from the exact sum of the (unclamped) double terms
/// by at most M * 2^-33 epsilon (1.7e-7 epsilon for 55 atoms). A double sum in rank-count-dependent order would
/// differ between group sizes by rounding of similar size; the fixed-point sum does not differ at all.
[[nodiscard]] double max_rounding_error(int atoms) noexcept;

/// 4 (r^-12 - r^-6) for the squared distance r2, in double.
[[nodiscard]] double pair_energy(double r2) noexcept;
/// One pair term as fixed point: clamped to kPairEnergyCap (also for r2 = 0 and NaN), rounded to nearest.
[[nodiscard]] Energy quantize(double pair_epsilon) noexcept;
[[nodiscard]] inline double to_epsilon(Energy e) noexcept { return static_cast<double>(e) * kEnergyQuantum; }

// ---- Configuration ---------------------------------------------------------------------------------------------

/// Trial moves of a compute item (work.compute.move). The one definition: RunSpec names it as mcmclb::MoveKind.
enum class MoveKind {
  single,  ///< one atom, chosen at random, displaced uniformly within max_step per coordinate
  all,     ///< every atom displaced uniformly within max_step per coordinate
};
/// The names of the move kinds, as study files and runs.csv write them.
inline constexpr std::array<std::pair<std::string_view, MoveKind>, 2> kMoveKinds = {
    {{"single", MoveKind::single}, {"all", MoveKind::all}}};
[[nodiscard]] std::optional<MoveKind> parse_move_kind(std::string_view name) noexcept;
[[nodiscard]] constexpr std::string_view to_string(MoveKind kind) noexcept {
  return kind == MoveKind::single ? "single" : "all";
}

/// One walker's physics. Validated by validate() before any work starts.
struct Spec {
  int atoms = 13;             ///< N, 2..kMaxAtoms (13, 19, 26, 38, 55 are magic cluster sizes)
  double temperature = 0.25;  ///< k_B T / epsilon, > 0
  MoveKind move = MoveKind::single;
  double max_step = 0.1;        ///< sigma, > 0
  double confine_radius = 0.0;  ///< sigma; 0: no wall. A trial that puts an atom outside is rejected.
};

/// Throws InputError with one line naming the key (prefixed by key_prefix, e.g. "workload.lj.") and what is
/// allowed. Deterministic, so every rank throws the same error before any communication.
void validate(const Spec& spec, std::string_view key_prefix = "lj.");

/// Identifies one chain's random stream.
struct ChainKey {
  uint64_t seed = 0;
  uint64_t chain = 0;
};

// ---- Walker state ----------------------------------------------------------------------------------------------

/// Everything a chain carries between items; the whole of it moves on a merge.
struct State {
  int64_t item = 0;               ///< index of the next item (trial move) to work
  int64_t accepted = 0;           ///< accepted trial moves so far
  Energy energy = 0;              ///< total energy of positions, fixed point
  std::vector<double> positions;  ///< x0 y0 z0 x1 y1 z1 ... (3N values, sigma)
  [[nodiscard]] int atoms() const noexcept { return static_cast<int>(positions.size() / 3); }
  /// Doubles compared with == (which ignores the sign of zero); compare serialize() buffers for bit-identity.
  bool operator==(const State&) const = default;
};

/// The initial state of a chain: the first N sites of an fcc lattice with nearest-neighbour distance 2^(1/6)
/// (the pair minimum), ordered by distance from the central atom, each coordinate jittered by up to +-0.05 sigma
/// from (key.seed, key.chain). No two atoms closer than 0.95 sigma, so no pair is near the repulsive core.
[[nodiscard]] State initial_state(int atoms, const ChainKey& key);
/// A state at the given positions (item 0, nothing accepted), its energy computed in one piece.
[[nodiscard]] State state_at(std::vector<double> positions);
/// The largest distance of an atom from the origin (where the confining sphere is centred).
[[nodiscard]] double max_radius(std::span<const double> positions) noexcept;

/// The 13-atom Mackay icosahedron (one central atom) whose 12 surface atoms lie at distance radius.
[[nodiscard]] std::vector<double> icosahedron13(double radius);

/// Flat buffer: atoms, item, accepted, energy as int64, then 3N doubles (native byte order: the ranks of one job
/// share an ABI). serialized_bytes(N) = 32 + 24 N, 1352 bytes for 55 atoms.
[[nodiscard]] std::size_t serialized_bytes(int atoms) noexcept;
[[nodiscard]] std::vector<std::byte> serialize(const State& state);
/// Throws std::invalid_argument if the buffer's size does not match the atom count it holds.
[[nodiscard]] State deserialize(std::span<const std::byte> buffer);

// ---- Slices of the pair sum ------------------------------------------------------------------------------------

/// Half-open index range.
struct Range {
  int64_t begin = 0;
  int64_t end = 0;
  [[nodiscard]] int64_t size() const noexcept { return end - begin; }
  bool operator==(const Range&) const = default;
};
/// Member r's share of count items split over g members: contiguous, in member order, sizes differing by at most
/// one, together exactly [0, count). Requires 1 <= g and 0 <= r < g (g may exceed count: some slices are empty).
[[nodiscard]] Range slice(int64_t count, int g, int r) noexcept;

/// Pair (i, j), i < j, at index p of the lexicographic order (0,1) (0,2) ... (0,N-1) (1,2) ... (N-2,N-1).
[[nodiscard]] std::array<int, 2> pair_at(int atoms, int64_t p) noexcept;
[[nodiscard]] inline int64_t pair_count(int atoms) noexcept { return static_cast<int64_t>(atoms) * (atoms - 1) / 2; }

/// Member r of g: the sum over its slice of all N(N-1)/2 pairs.
[[nodiscard]] Energy total_energy_part(std::span<const double> positions, int g, int r) noexcept;
/// The whole total energy (g = 1).
[[nodiscard]] Energy total_energy(std::span<const double> positions) noexcept;
/// Member r of g: its slice of the N-1 pairs (atom, j), j != atom in increasing order, evaluated with the atom at
/// new_xyz minus the same pairs at the atom's current position. Summed over members: the dE of moving the atom.
[[nodiscard]] Energy single_move_delta_part(std::span<const double> positions, int atom,
                                            const std::array<double, 3>& new_xyz, int g, int r) noexcept;

// ---- Items -----------------------------------------------------------------------------------------------------

/// The trial move of item state.item, drawn from (key, item) alone; every member of a group draws the same one.
///
/// Draws (counter = (item, draw, stream 0, 0), each giving four 64-bit words):
///   draw 0: word 0 -> acceptance uniform u in (0, 1], word 1 -> atom index (single moves, word mod N)
///   draw 1: single moves: words 0..2 -> the displacement of the chosen atom
///   draw 1 + a: all-atom moves: words 0..2 -> the displacement of atom a
/// The initial jitter uses stream 1, so it never overlaps a move's numbers.
struct Trial {
  MoveKind kind = MoveKind::single;
  int atom = -1;                      ///< single: the atom moved
  std::array<double, 3> new_xyz{};    ///< single: its trial position
  std::vector<double> new_positions;  ///< all: every trial position
  double accept_draw = 1.0;           ///< u in (0, 1]: accept if u < exp(-dE / T)
  bool leaves_sphere = false;         ///< rejected by the wall, no energy evaluated
};
[[nodiscard]] Trial propose(const Spec& spec, const ChainKey& key, const State& state);

/// Member r of g's share of the trial's dE (0 when the trial leaves the sphere). Summed over r: the whole dE.
[[nodiscard]] Energy delta_part(const State& state, const Trial& trial, int g, int r) noexcept;

/// The Metropolis rule, from the exact dE: accept when dE <= 0 or u < exp(-dE / T).
[[nodiscard]] bool metropolis_accept(const Spec& spec, Energy delta, double accept_draw) noexcept;

/// What one item did.
struct ItemResult {
  bool evaluated = false;  ///< false when the trial left the sphere (no pair sum, no reduction)
  bool accepted = false;
  Energy delta = 0;
  int64_t pair_terms = 0;  ///< pair terms this member summed (work_item_split: all members' together)
};

/// The pair terms member r of g sums for the trial's dE: single moves 2 per partner of its slice of the N-1
/// (old and new position), all-atom moves its slice of the N(N-1)/2 pairs, 0 when the trial leaves the sphere.
/// Summed over r: the whole evaluation's terms, the measure of its cost (trial_flops()).
[[nodiscard]] int64_t pair_terms(const Trial& trial, int atoms, int g, int r) noexcept;

// Simulated cost of the compute workload (simulation build, pace::compute), in SimGrid flops where one flop is
// one cycle of the simulated core (configs/platforms/bgp.xml: speed 850Mf, an 850 MHz BG/P core). Calibrated on
// the development VM (AMD EPYC at 2.596 GHz, GCC 12 -O2; thread CPU time, tests/bench_lj.cpp BM_Split at g = 1
// and BM_Trial; docs/guide/simulation.md, "Compute mode's cost model"): ns there times 2.596 cycles/ns. The simulated
// core is assumed to need as many cycles as that core: a stated model, not a measurement of a BG/P.
/// One pair term of an energy sum (4.6 ns: 4.6-5.3 ns/term for 13-55 atoms, single and all-atom alike).
inline constexpr double kPairTermFlops = 12;
/// Per trial, on every member of the group alike (each draws the same trial and applies the verdict, work a
/// larger group does not share): Philox draws, the acceptance test, the update (single move: 46 ns).
inline constexpr double kTrialFlops = 120;
/// Per atom an all-atom trial moves (its draws and the copied positions: 15 ns/atom, 13-55 atoms).
inline constexpr double kMovedAtomFlops = 40;
/// The simulated flops of one trial on one member: kTrialFlops, kMovedAtomFlops per moved atom (all-atom moves),
/// kPairTermFlops per pair term it summed (pair_terms()). Deterministic: a function of the trial alone.
[[nodiscard]] double trial_flops(MoveKind move, int atoms, int64_t pair_terms) noexcept;

/// Applies the verdict: on acceptance moves the atoms and adds delta to the energy; always advances item.
void apply(State& state, Trial&& trial, const ItemResult& result);

/// One item with the pair sum split over g members, simulated here by adding the g parts (for tests and
/// single-process calibration). Equal, bit for bit, to work_item on a group of g ranks.
ItemResult work_item_split(const Spec& spec, const ChainKey& key, State& state, int g);

/// One item worked by member r of g members, whose parts reduce() sums over the group (any exact integer
/// reduction: an MPI_Allreduce, the kernel's GroupComm::allreduce_sum over any creation method). reduce is
/// called once per evaluated trial, by every member alike. g = 1 never calls it. computed, if given, is called
/// once per trial with this member's pair terms (0 when the trial leaves the sphere) after its slice is summed
/// and before reduce: where the simulation build passes the slice's cost as simulated time.
ItemResult work_item(const Spec& spec, const ChainKey& key, State& state, int g, int r,
                     const std::function<Energy(Energy)>& reduce,
                     const std::function<void(int64_t pair_terms)>& computed = {});

}  // namespace mcmclb::lj
