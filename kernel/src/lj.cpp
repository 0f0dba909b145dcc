// SPDX-License-Identifier: BSD-3-Clause
// Lennard-Jones Metropolis walkers (mcmclb/lj.hpp): pair sums in fixed point, Philox draws, slices, items.
#include "mcmclb/lj.hpp"

#include <Random123/philox.h>

#include <Random123/uniform.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <tuple>

namespace mcmclb::lj {

namespace {

using Philox = r123::Philox4x64;

// Counter word 2: which use of the chain's numbers. Disjoint streams never share a counter.
constexpr uint64_t kStreamMove = 0;
constexpr uint64_t kStreamInitial = 1;

Philox::ctr_type draw(const ChainKey& key, uint64_t item, uint64_t index, uint64_t stream) {
  const Philox::key_type k = {{key.seed, key.chain}};
  const Philox::ctr_type c = {{item, index, stream, 0}};
  return Philox{}(c, k);
}

double squared_distance(const double* a, const double* b) noexcept {
  const double dx = a[0] - b[0];
  const double dy = a[1] - b[1];
  const double dz = a[2] - b[2];
  return dx * dx + dy * dy + dz * dz;
}

// Sum of the quantized pair terms (atom at xyz, j) for the k-th..(end-1)-th partners j != atom.
Energy atom_pairs(std::span<const double> positions, int atom, const double* xyz, Range partners) noexcept {
  Energy sum = 0;
  for (int64_t k = partners.begin; k < partners.end; ++k) {
    const int64_t j = k < atom ? k : k + 1;  // the partners of atom in increasing order, skipping atom itself
    sum += quantize(pair_energy(squared_distance(xyz, &positions[static_cast<std::size_t>(3 * j)])));
  }
  return sum;
}

// Largest displacement per coordinate of the initial positions from their lattice sites.
constexpr double kJitter = 0.05;

// The first atoms sites of an fcc lattice with nearest-neighbour distance 2^(1/6), unjittered. fcc sites are the
// integer points with an even coordinate sum; ordering by squared norm (exact integers), then lexicographically,
// picks the same sites on every rank. |coordinate| <= 6 holds far more than kMaxAtoms sites.
std::vector<double> lattice_sites(int atoms) {
  if (atoms < 2 || atoms > kMaxAtoms) throw std::invalid_argument("lj: atoms out of range 2..256");
  std::vector<std::array<int, 4>> sites;  // {norm2, x, y, z}
  for (int x = -6; x <= 6; ++x)
    for (int y = -6; y <= 6; ++y)
      for (int z = -6; z <= 6; ++z)
        if ((x + y + z) % 2 == 0) sites.push_back({x * x + y * y + z * z, x, y, z});
  std::sort(sites.begin(), sites.end());
  // Integer neighbours such as (1,1,0) are sqrt(2) apart: scale so that they sit at the pair minimum 2^(1/6).
  const double unit = std::pow(2.0, 1.0 / 6.0) / std::sqrt(2.0);
  std::vector<double> positions;
  for (int a = 0; a < atoms; ++a)
    for (std::size_t d = 1; d <= 3; ++d) positions.push_back(unit * sites[static_cast<std::size_t>(a)][d]);
  return positions;
}

void require(bool ok, std::string_view prefix, std::string_view key, const std::string& what) {
  if (!ok) throw InputError(std::string(prefix) + std::string(key) + ": " + what);
}

std::string show(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", x);
  return text;
}

}  // namespace

double max_rounding_error(int atoms) noexcept { return static_cast<double>(pair_count(atoms)) * 0x1p-33; }

double pair_energy(double r2) noexcept {
  const double inv6 = 1.0 / (r2 * r2 * r2);
  return 4.0 * inv6 * (inv6 - 1.0);
}

Energy quantize(double pair_epsilon) noexcept {
  // The negated test also catches NaN (r2 = 0 gives inf * inf - ... ), which must not reach llround.
  if (!(pair_epsilon < kPairEnergyCap)) pair_epsilon = kPairEnergyCap;
  // Scaling by 2^32 is exact; llround rounds half away from zero, a fixed rule on every rank.
  return std::llround(pair_epsilon * 0x1p32);
}

std::optional<MoveKind> parse_move_kind(std::string_view name) noexcept {
  for (const auto& [known, kind] : kMoveKinds)
    if (name == known) return kind;
  return std::nullopt;
}

void validate(const Spec& spec, std::string_view key_prefix) {
  require(spec.atoms >= 2 && spec.atoms <= kMaxAtoms, key_prefix, "atoms",
          std::to_string(spec.atoms) + " is not in 2.." + std::to_string(kMaxAtoms));
  require(std::isfinite(spec.temperature) && spec.temperature > 0, key_prefix, "temperature",
          show(spec.temperature) + " is not a positive number");
  require(std::isfinite(spec.max_step) && spec.max_step > 0, key_prefix, "max_step",
          show(spec.max_step) + " is not a positive number");
  require(std::isfinite(spec.confine_radius) && spec.confine_radius >= 0, key_prefix, "confine_radius",
          show(spec.confine_radius) + " is not 0 (no wall) or a positive number");
  if (spec.confine_radius > 0) {
    // The lattice's radius plus the largest jitter: independent of the seed, so one verdict for every chain.
    const double needed = max_radius(lattice_sites(spec.atoms)) + kJitter * std::sqrt(3.0);
    require(spec.confine_radius >= needed, key_prefix, "confine_radius",
            show(spec.confine_radius) + " cannot hold the initial cluster of " + std::to_string(spec.atoms) +
                " atoms; use 0 (no wall) or at least " + show(std::ceil(needed * 100) / 100));
  }
}

State initial_state(int atoms, const ChainKey& key) {
  std::vector<double> positions = lattice_sites(atoms);
  for (int a = 0; a < atoms; ++a) {
    const auto words = draw(key, 0, static_cast<uint64_t>(a), kStreamInitial);
    for (std::size_t d = 0; d < 3; ++d)
      positions[3 * static_cast<std::size_t>(a) + d] += kJitter * r123::uneg11<double>(words[d]);
  }
  return state_at(std::move(positions));
}

State state_at(std::vector<double> positions) {
  if (positions.size() % 3 != 0 || positions.size() < 6 || positions.size() > 3 * std::size_t{kMaxAtoms})
    throw std::invalid_argument("lj::state_at: positions must hold 3 coordinates for each of 2..256 atoms");
  State state;
  state.positions = std::move(positions);
  state.energy = total_energy(state.positions);
  return state;
}

double max_radius(std::span<const double> positions) noexcept {
  double r2 = 0;
  const double origin[3] = {0, 0, 0};
  for (std::size_t a = 0; a + 2 < positions.size(); a += 3) r2 = std::max(r2, squared_distance(&positions[a], origin));
  return std::sqrt(r2);
}

std::vector<double> icosahedron13(double radius) {
  // The 12 vertices are the cyclic permutations of (0, +-1, +-phi), at distance sqrt(1 + phi^2) from the centre.
  const double phi = (1.0 + std::sqrt(5.0)) / 2.0;
  const double scale = radius / std::sqrt(1.0 + phi * phi);
  std::vector<double> positions = {0, 0, 0};
  for (const double s1 : {-1.0, 1.0})
    for (const double s2 : {-1.0, 1.0}) {
      const double a = s1 * scale, b = s2 * phi * scale;
      for (const std::array<double, 3> v : {std::array{0.0, a, b}, std::array{a, b, 0.0}, std::array{b, 0.0, a}})
        positions.insert(positions.end(), v.begin(), v.end());
    }
  return positions;
}

// ---- Serialization ---------------------------------------------------------------------------------------------

std::size_t serialized_bytes(int atoms) noexcept {
  return 4 * sizeof(int64_t) + 3 * static_cast<std::size_t>(atoms) * sizeof(double);
}

std::vector<std::byte> serialize(const State& state) {
  const int64_t header[4] = {state.atoms(), state.item, state.accepted, state.energy};
  std::vector<std::byte> buffer(serialized_bytes(state.atoms()));
  std::memcpy(buffer.data(), header, sizeof header);
  std::memcpy(buffer.data() + sizeof header, state.positions.data(), state.positions.size() * sizeof(double));
  return buffer;
}

State deserialize(std::span<const std::byte> buffer) {
  int64_t header[4] = {};
  if (buffer.size() < sizeof header) throw std::invalid_argument("lj::deserialize: buffer shorter than its header");
  std::memcpy(header, buffer.data(), sizeof header);
  if (header[0] < 2 || header[0] > kMaxAtoms || buffer.size() != serialized_bytes(static_cast<int>(header[0])))
    throw std::invalid_argument("lj::deserialize: buffer size does not match its atom count");
  State state;
  state.item = header[1];
  state.accepted = header[2];
  state.energy = header[3];
  state.positions.resize(static_cast<std::size_t>(3 * header[0]));
  std::memcpy(state.positions.data(), buffer.data() + sizeof header, state.positions.size() * sizeof(double));
  return state;
}

// ---- Slices ----------------------------------------------------------------------------------------------------

Range slice(int64_t count, int g, int r) noexcept {
  // floor(r * count / g): consecutive members' boundaries, so the slices tile [0, count) and differ by <= 1.
  return Range{count * r / g, count * (r + 1) / g};
}

std::array<int, 2> pair_at(int atoms, int64_t p) noexcept {
  int i = 0;
  while (p >= atoms - 1 - i) {  // row i holds the atoms-1-i pairs (i, i+1) .. (i, atoms-1)
    p -= atoms - 1 - i;
    ++i;
  }
  return {i, static_cast<int>(i + 1 + p)};
}

Energy total_energy_part(std::span<const double> positions, int g, int r) noexcept {
  const int atoms = static_cast<int>(positions.size() / 3);
  const Range range = slice(pair_count(atoms), g, r);
  if (range.size() == 0) return 0;
  auto [i, j] = pair_at(atoms, range.begin);
  Energy sum = 0;
  for (int64_t p = range.begin; p < range.end; ++p) {
    sum += quantize(pair_energy(
        squared_distance(&positions[3 * static_cast<std::size_t>(i)], &positions[3 * static_cast<std::size_t>(j)])));
    if (++j == atoms) {
      ++i;
      j = i + 1;
    }
  }
  return sum;
}

Energy total_energy(std::span<const double> positions) noexcept { return total_energy_part(positions, 1, 0); }

Energy single_move_delta_part(std::span<const double> positions, int atom, const std::array<double, 3>& new_xyz, int g,
                              int r) noexcept {
  const int atoms = static_cast<int>(positions.size() / 3);
  const Range partners = slice(atoms - 1, g, r);
  // Old and new terms of the same pairs: the pair (atom, j) at the old position is, bit for bit, the term the
  // total energy holds for it (the squared difference does not depend on the order of subtraction), so the
  // running energy plus this delta equals a fresh total_energy of the new positions exactly.
  return atom_pairs(positions, atom, new_xyz.data(), partners) -
         atom_pairs(positions, atom, &positions[3 * static_cast<std::size_t>(atom)], partners);
}

// ---- Items -----------------------------------------------------------------------------------------------------

Trial propose(const Spec& spec, const ChainKey& key, const State& state) {
  const int atoms = state.atoms();
  const auto item = static_cast<uint64_t>(state.item);
  const double wall2 = spec.confine_radius * spec.confine_radius;
  const auto outside = [&](const double* xyz) {
    return spec.confine_radius > 0 && xyz[0] * xyz[0] + xyz[1] * xyz[1] + xyz[2] * xyz[2] > wall2;
  };
  Trial trial;
  trial.kind = spec.move;
  const auto first = draw(key, item, 0, kStreamMove);
  trial.accept_draw = r123::u01<double>(first[0]);  // in (0, 1]
  if (spec.move == MoveKind::single) {
    // The modulo's bias is below N / 2^64: irrelevant, and the same on every rank.
    trial.atom = static_cast<int>(first[1] % static_cast<uint64_t>(atoms));
    const auto step = draw(key, item, 1, kStreamMove);
    for (std::size_t d = 0; d < 3; ++d)
      trial.new_xyz[d] =
          state.positions[3 * static_cast<std::size_t>(trial.atom) + d] + spec.max_step * r123::uneg11<double>(step[d]);
    trial.leaves_sphere = outside(trial.new_xyz.data());
  } else {
    trial.new_positions = state.positions;
    for (int a = 0; a < atoms; ++a) {
      const auto step = draw(key, item, 1 + static_cast<uint64_t>(a), kStreamMove);
      double* xyz = &trial.new_positions[3 * static_cast<std::size_t>(a)];
      for (std::size_t d = 0; d < 3; ++d) xyz[d] += spec.max_step * r123::uneg11<double>(step[d]);
      trial.leaves_sphere = trial.leaves_sphere || outside(xyz);
    }
  }
  return trial;
}

Energy delta_part(const State& state, const Trial& trial, int g, int r) noexcept {
  if (trial.leaves_sphere) return 0;
  if (trial.kind == MoveKind::single) return single_move_delta_part(state.positions, trial.atom, trial.new_xyz, g, r);
  // All-atom: the new total in slices; member 0 alone subtracts the old total, so the parts add up to dE.
  return total_energy_part(trial.new_positions, g, r) - (r == 0 ? state.energy : 0);
}

int64_t pair_terms(const Trial& trial, int atoms, int g, int r) noexcept {
  if (trial.leaves_sphere) return 0;
  if (trial.kind == MoveKind::single) return 2 * slice(atoms - 1, g, r).size();
  return slice(pair_count(atoms), g, r).size();
}

double trial_flops(MoveKind move, int atoms, int64_t pair_terms) noexcept {
  const double moved = move == MoveKind::all ? static_cast<double>(atoms) : 0.0;
  return kTrialFlops + moved * kMovedAtomFlops + static_cast<double>(pair_terms) * kPairTermFlops;
}

bool metropolis_accept(const Spec& spec, Energy delta, double accept_draw) noexcept {
  if (delta <= 0) return true;
  return accept_draw < std::exp(-to_epsilon(delta) / spec.temperature);
}

void apply(State& state, Trial&& trial, const ItemResult& result) {
  if (result.accepted) {
    if (trial.kind == MoveKind::single) {
      std::copy(trial.new_xyz.begin(), trial.new_xyz.end(),
                state.positions.begin() + 3 * static_cast<std::ptrdiff_t>(trial.atom));
    } else {
      state.positions = std::move(trial.new_positions);
    }
    state.energy += result.delta;
    ++state.accepted;
  }
  ++state.item;
}

ItemResult work_item_split(const Spec& spec, const ChainKey& key, State& state, int g) {
  if (g < 1) throw std::invalid_argument("lj::work_item_split: g must be at least 1");
  Trial trial = propose(spec, key, state);
  ItemResult result;
  result.evaluated = !trial.leaves_sphere;
  if (result.evaluated) {
    for (int r = 0; r < g; ++r) {
      result.delta += delta_part(state, trial, g, r);
      result.pair_terms += pair_terms(trial, state.atoms(), g, r);
    }
    result.accepted = metropolis_accept(spec, result.delta, trial.accept_draw);
  }
  apply(state, std::move(trial), result);
  return result;
}

ItemResult work_item(const Spec& spec, const ChainKey& key, State& state, int g, int r,
                     const std::function<Energy(Energy)>& reduce,
                     const std::function<void(int64_t pair_terms)>& computed) {
  Trial trial = propose(spec, key, state);
  ItemResult result;
  result.evaluated = !trial.leaves_sphere;
  result.pair_terms = pair_terms(trial, state.atoms(), g, r);
  const Energy part = result.evaluated ? delta_part(state, trial, g, r) : 0;
  if (computed) computed(result.pair_terms);
  if (result.evaluated) {
    result.delta = g == 1 ? part : reduce(part);
    result.accepted = metropolis_accept(spec, result.delta, trial.accept_draw);
  }
  apply(state, std::move(trial), result);
  return result;
}

}  // namespace mcmclb::lj
