// SPDX-License-Identifier: BSD-3-Clause
// Workload models (how many items each walker chain holds), chosen by name from a registry. A workload is one
// file under kernel/src/workloads/ that defines its entry (name, keys, factory) and one line in
// kernel/src/workloads/workloads.def; its keys become YAML keys workload.<key> and runs.csv columns
// workload_<key> without further edits.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "mcmclb/run_spec.hpp"

namespace mcmclb {

/// Chain lengths. Deterministic: every rank computes the same S for the same chain, whatever the rank count, so
/// runs are reproducible and need no communication.
class Workload {
 public:
  virtual ~Workload() = default;
  /// S for the chain of index `leader`: the chain whose initial group is led by world rank leader when each
  /// group owns one chain; with W chains per group, chain c of the group led by L has index L*W + c.
  [[nodiscard]] virtual int64_t items(int leader) const = 0;
  /// Model trace: the trace replayed, else null.
  [[nodiscard]] virtual const Trace* trace() const noexcept { return nullptr; }
  /// Model trace: the trace planning consults (workload.plan_file, else trace()).
  [[nodiscard]] virtual const Trace* plan_trace() const noexcept { return trace(); }
  /// Model trace: the trace chain that the chain of this index replays (workload.map).
  [[nodiscard]] virtual int trace_chain(int index) const noexcept { return index; }
  /// Whether the index of a chain counts initial groups (g*W + c, chain_index()) instead of ranks (L*W + c).
  [[nodiscard]] virtual bool indexes_groups() const noexcept { return false; }
  /// For a model that deals its chains to the initial groups itself (a trace under workload.map once): the index
  /// of the c-th chain of the g-th of `groups` groups, -1 for a slot past the group's share (a chain of no items);
  /// nullopt for the others, whose every slot holds a chain (chain_index()).
  [[nodiscard]] virtual std::optional<int> dealt(int /*g*/, int /*groups*/, int /*c*/) const noexcept {
    return std::nullopt;
  }
  /// The most chains dealt() gives one of `groups` groups (0 for a model that does not deal).
  [[nodiscard]] virtual int most_dealt(int /*groups*/) const noexcept { return 0; }
};

/// The workload index of chain c of the g-th of `groups` initial groups, led by world rank `leader`, with W chains
/// per group. The models take L*W + c, so that a rank holds the same work at any G (the paper's workload). A trace
/// takes g*W + c: its C recorded chains are dealt to the groups in order, so that every one of them is replayed at
/// any G (by the leader, groups of 4 would replay only every fourth recorded chain). A model that deals (dealt())
/// gives its own index, or -1: a slot with no chain, of no items (Workload::items(-1) is 0).
[[nodiscard]] inline int chain_index(const Workload& w, int g, int groups, int leader, int W, int c) noexcept {
  if (const std::optional<int> d = w.dealt(g, groups, c)) return *d;
  return static_cast<int>(int64_t{w.indexes_groups() ? g : leader} * W + c);
}

/// Common bounds for workload keys.
inline constexpr int64_t kMaxItems = int64_t{1} << 40;
inline constexpr int64_t kMaxInt = std::numeric_limits<int>::max();
/// The most chains an initial group may own (key chains_per_group); nprocs * W must stay an int.
inline constexpr int64_t kMaxChainsPerGroup = 1024;

/// One key of a workload: YAML key workload.<key>, runs.csv column workload_<key>. The default's type is the
/// key's type (int64_t: integer, double: real); lo and hi bound it (closed, or open at lo if lo_open).
struct WorkloadParam {
  std::string_view key;
  ParamValue default_value;
  ParamValue lo, hi;
  bool lo_open = false;
  [[nodiscard]] bool is_integer() const noexcept { return std::holds_alternative<int64_t>(default_value); }
};

/// One registered workload model.
struct WorkloadEntry {
  std::string_view name;
  std::vector<WorkloadParam> params;  // the keys it reads, in its own order
  std::unique_ptr<Workload> (*make)(const WorkloadSpec& spec);
  /// Checks between keys (e.g. min <= max); throws InputError naming the key. May be null.
  void (*check)(const WorkloadSpec& spec) = nullptr;
};

/// Every registered workload, in registration order (workloads.def).
std::span<const WorkloadEntry> workload_entries();
/// Every workload key once: in order of first appearance over the registered models, except `seed`, which
/// every seeded model shares and which comes last (the order of the YAML key list and of runs.csv). A key that
/// several models read must be declared identically by each (checked when the registry is first used).
std::span<const WorkloadParam> workload_params();
/// The shared seed key, for seeded models to list among their params.
const WorkloadParam& seed_param();
/// The entry of model name; throws InputError (key workload.model) listing the known names.
const WorkloadEntry& workload_entry(std::string_view name);
/// True when spec's model reads key (runs.csv leaves the other workload columns empty).
bool workload_uses(const WorkloadSpec& spec, std::string_view key);

std::unique_ptr<Workload> make_workload(const WorkloadSpec& spec);

/// S of every chain for nprocs ranks in groups of G, W chains per group (the chains of each group in the order of
/// chain_index()).
std::vector<int64_t> chain_items(const Workload& w, int nprocs, int G, int W = 1);
/// S of every chain, the group led by world rank leaders[g] holding chains g*W .. g*W + W - 1 (groups of any
/// sizes), each chain's S from its workload index (chain_index()).
std::vector<int64_t> chain_items(const Workload& w, const std::vector<int>& leaders, int W = 1);

/// A well-mixed 64-bit hash (splitmix64 finaliser): the source of every seeded draw here.
uint64_t mix64(uint64_t x) noexcept;
/// Uniform in [0, 1) from a hash of the given words.
double unit_draw(uint64_t a, uint64_t b, uint64_t c) noexcept;

/// Emulated milliseconds of item `item` of chain `chain` for a group of group_size ranks: T/|group|, times the
/// seeded jitter factor (the same on every member, so a group stays in step).
double item_cost_ms(const RunSpec& run, int group_size, int chain, int64_t item) noexcept;

}  // namespace mcmclb
