// Workload models (how many items each walker chain holds) and the emulated cost of one item.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "mcmclb/run_spec.hpp"

namespace mcmclb {

/// Chain lengths, chosen by name (WorkloadSpec::model). Deterministic: every rank computes the same S for the
/// same chain, whatever the rank count, so runs are reproducible and need no communication.
class Workload {
 public:
  virtual ~Workload() = default;
  [[nodiscard]] virtual std::string_view name() const noexcept = 0;
  /// S for the chain whose initial group is led by world rank leader.
  [[nodiscard]] virtual int64_t items(int leader) const = 0;
};

std::unique_ptr<Workload> make_workload(const WorkloadSpec& spec);

/// S of every chain for nprocs ranks in groups of G (chain c is led by rank c*G).
std::vector<int64_t> chain_items(const Workload& w, int nprocs, int G);

/// A well-mixed 64-bit hash (splitmix64 finaliser): the source of every seeded draw here.
uint64_t mix64(uint64_t x) noexcept;
/// Uniform in [0, 1) from a hash of the given words.
double unit_draw(uint64_t a, uint64_t b, uint64_t c) noexcept;

/// Emulated milliseconds of item `item` of chain `chain` for a group of group_size ranks: T/|group|, times the
/// seeded jitter factor (the same on every member, so a group stays in step).
double item_cost_ms(const RunSpec& run, int group_size, int chain, int64_t item) noexcept;

/// Occupies this rank for ms milliseconds: sleeping (mode sleep) or busy until a monotonic deadline (spin).
void emulate_work(bool spin, double ms);

}  // namespace mcmclb
