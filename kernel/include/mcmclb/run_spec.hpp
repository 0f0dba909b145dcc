// SPDX-License-Identifier: BSD-3-Clause
// What one kernel run is: every parameter resolved to a single value. Plain data, no MPI and no YAML, so the
// study library (which produces runs) and the kernel (which executes them) share it without depending on each
// other.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "mcmclb/lj.hpp"
#include "mcmclb/name_table.hpp"
#include "mcmclb/trace.hpp"
#include "mcmclb/wait_policy.hpp"

namespace mcmclb {

/// A workload parameter's value; integers stay exact (seeds use all 64 bits).
using ParamValue = std::variant<int64_t, double>;

/// Which workload model a run uses and its parameters (the keys workload.<key>, defined by the models in
/// kernel/src/workloads/). A key not set here has the default its model declares.
struct WorkloadSpec {
  std::string model = "cyclic";
  std::map<std::string, ParamValue, std::less<>> values;  // keys set explicitly
  /// W: chains each initial group owns, worked one after another (key chains_per_group). The chains of the group
  /// led by rank L take the model's S at the indices L*W .. L*W + W - 1 (chain_items()), so W = 1 is the model
  /// as it is; chains keep their identity (a global index) whichever group works them.
  int chains_per_group = 1;
  /// Model trace (keys workload.file, workload.map, workload.scaling, workload.extrapolate, workload.speedups): the
  /// trace file replayed, how the study's chains take its chains, what the merge model and planning predict of the
  /// items' costs, the speed-up past the largest group size the trace gives, and which of a size's repeated
  /// speed-ups the replay takes.
  std::string file;
  TraceMap map = TraceMap::tile;
  TraceScaling scaling = TraceScaling::trace;
  TraceExtrapolation extrapolate = TraceExtrapolation::flat;
  TraceSpeedups speedups = TraceSpeedups::median;
  /// The file's content hash (Trace::fnv1a64), set when the study is read: runs.csv records it and a point's
  /// resume key holds it, so an edited trace is run again.
  std::string file_fnv1a64;
  /// Model trace (key workload.plan_file): a trace of the same walkers and items that the balancers that plan and
  /// the rule pays consult in place of `file`, which the replay still charges: what a run believes apart from what
  /// it pays, as when a user's noisy recording plans a run whose true costs are another trace's. Empty: `file`.
  std::string plan_file;
  std::string plan_fnv1a64;  // its content hash, as file_fnv1a64

  /// The value of key (set here, else the registered default); throws std::out_of_range for an unknown key.
  [[nodiscard]] int64_t integer(std::string_view key) const;
  [[nodiscard]] double real(std::string_view key) const;
  [[nodiscard]] ParamValue value(std::string_view key) const;
  void set(std::string_view key, ParamValue v) { values.insert_or_assign(std::string(key), v); }
};

inline constexpr std::array<std::pair<std::string_view, TraceMap>, 3> kTraceMaps = {
    {{"tile", TraceMap::tile}, {"draw", TraceMap::draw}, {"once", TraceMap::once}}};
inline constexpr std::array<std::pair<std::string_view, TraceScaling>, 2> kTraceScalings = {
    {{"trace", TraceScaling::trace}, {"perfect", TraceScaling::perfect}}};
inline constexpr std::array<std::pair<std::string_view, TraceExtrapolation>, 4> kTraceExtrapolations = {
    {{"flat", TraceExtrapolation::flat},
     {"amdahl", TraceExtrapolation::amdahl},
     {"perfect", TraceExtrapolation::perfect},
     {"usl", TraceExtrapolation::usl}}};
inline constexpr std::array<std::pair<std::string_view, TraceSpeedups>, 3> kTraceSpeedups = {
    {{"median", TraceSpeedups::median}, {"low", TraceSpeedups::low}, {"high", TraceSpeedups::high}}};
[[nodiscard]] constexpr std::string_view to_string(TraceSpeedups t) noexcept { return name_in(kTraceSpeedups, t); }
[[nodiscard]] constexpr std::string_view to_string(TraceMap m) noexcept { return name_in(kTraceMaps, m); }
[[nodiscard]] constexpr std::string_view to_string(TraceExtrapolation x) noexcept {
  return name_in(kTraceExtrapolations, x);
}
[[nodiscard]] constexpr std::string_view to_string(TraceScaling s) noexcept { return name_in(kTraceScalings, s); }

/// What an item does: emulated work that sleeps (the core is free for other ranks) or is busy until a deadline,
/// or real work (compute: Metropolis trial moves of a Lennard-Jones walker, mcmclb/lj.hpp).
enum class WorkMode { sleep, spin, compute };
inline constexpr std::array<std::pair<std::string_view, WorkMode>, 3> kWorkModes = {
    {{"sleep", WorkMode::sleep}, {"spin", WorkMode::spin}, {"compute", WorkMode::compute}}};
[[nodiscard]] constexpr std::string_view to_string(WorkMode m) noexcept {
  return m == WorkMode::spin ? "spin" : m == WorkMode::compute ? "compute" : "sleep";
}

/// Trial moves of a compute item (one atom or every atom displaced): the physics' own kind and names, so the
/// kernel hands them to the walkers as they are.
using lj::kMoveKinds;
using lj::MoveKind;

/// The magic Lennard-Jones cluster sizes (closed Mackay shells and their neighbours) that work.atoms = 0 cycles
/// through by chain index, so chains differ in cost as in DNTMC.
inline constexpr std::array<int, 5> kMagicAtoms = {13, 19, 26, 38, 55};

/// A merge model told to misjudge on purpose: it predicts the compute rate and the reduction times as these factors
/// times what its calibration measured. That asks what the finished rule `pays` and the planning balancers decide
/// when the machine's costs are not what the calibration saw; in the simulation, whose charged costs a calibration
/// measures exactly, it is the only way to ask.
struct ModelError {
  double compute = 1.0;  // predicted seconds per flop / measured
  double reduce = 1.0;   // predicted reduction time / measured
  friend bool operator==(const ModelError&, const ModelError&) = default;
};

/// work.mode compute: chain c is a Metropolis walker on a cluster of atoms_of(c) atoms (reduced LJ units); an
/// item is moves_per_item trial moves, each energy evaluation split over the group that works the chain.
struct ComputeSpec {
  int atoms = 0;  // 0: kMagicAtoms[c mod 5] for chain c; else 2..256 for every chain
  double temperature = 0.25;
  MoveKind move = MoveKind::single;
  double max_step = 0.1;
  int64_t moves_per_item = 1000;
  bool trace = false;   // record every chain's energy and acceptances after each item (traces.csv)
  bool record = false;  // record every item's cost and each chain's speed-ups (costs.csv, a trace file)
  /// An application's chains (mcmclb::walkers): plan from the items' measured costs (Kernel::item_estimate) rather
  /// than from T_ms, which then only stands in until an item is measured.
  bool measured = false;
  [[nodiscard]] int atoms_of(int chain) const noexcept {
    return atoms > 0 ? atoms : kMagicAtoms[static_cast<std::size_t>(chain) % kMagicAtoms.size()];
  }
};

struct WorkSpec {
  WorkMode mode = WorkMode::sleep;
  double jitter_pct = 0.0;  // per-item cost varies uniformly within +- this percentage (sleep, spin)
  uint64_t seed = 1;        // jitter seed; compute: the walkers' random stream seed
  ComputeSpec compute;      // compute only
  /// How a waiting rank spends its time (mcmclb/wait_policy.hpp); unset (the key's `auto`): the machine's, spin
  /// where every rank has a core of its own, polite where ranks outnumber cores. The simulation build's waits
  /// block whatever this says.
  std::optional<WaitPolicy> wait;
  /// What the merge model predicts against what it measured (1, 1: as measured); for sensitivity experiments.
  ModelError model_error;
};

/// The initial walker groups. Default: groups of G consecutive ranks. sizes: explicit sizes covering the ranks
/// in order. count: that many groups of nearly equal sizes (count_sizes()), the same study at every rank count.
/// by node: one group per shared-memory node (MPI_Comm_split_type SHARED), or with node_size > 0, groups of
/// node_size consecutive ranks that never straddle a node. Groups are contiguous rank ranges either way.
struct GroupsSpec {
  enum class By { G, sizes, node, count };
  By by = By::G;
  std::vector<int> sizes;  // by sizes
  int node_size = 0;       // by node: 0 = the whole node
  int count = 0;           // by count
  /// As runs.csv records it: "" (G), "sizes:4,4,8", "node", "node:4", "count:6".
  [[nodiscard]] std::string text() const;
  friend bool operator==(const GroupsSpec&, const GroupsSpec&) = default;
};

/// count groups over nprocs ranks, in rank order: nprocs / count ranks each, the first nprocs % count of them one
/// more (64 ranks in 6 groups: 11, 11, 11, 11, 10, 10). Requires 1 <= count <= nprocs.
[[nodiscard]] std::vector<int> count_sizes(int nprocs, int count);

/// The initial groups' sizes on nprocs ranks, in rank order, by whichever key gives them (G, groups.sizes or
/// groups.count); nullopt by node, where the machine decides. The one rule of what each key allows: G must divide
/// nprocs, sizes must be >= 1 and add up to nprocs, a count must be 1 to nprocs. InputError, one line, otherwise.
[[nodiscard]] std::optional<std::vector<int>> group_sizes_of(const GroupsSpec& groups, int G, int nprocs);
/// How many groups group_sizes_of gives, checked by the same rule, without making the list: a study of 2^31 - 1
/// ranks in groups of one is checked in microseconds, where the list would take 8 GiB.
[[nodiscard]] std::optional<int> group_count_of(const GroupsSpec& groups, int G, int nprocs);

/// What a group whose chain is done does (the async family and collective): retire (when no working group is
/// left to its right it ends, and so does every done group that asks it), coalesce (finished groups keep merging
/// until one group spans every rank) or pays (it joins a working group only when that group's chain then ends
/// sooner, the regrouping's measured cost included, by the model of mcmclb/merge_model.hpp; otherwise it ends as
/// under retire). The protocols and their termination arguments are at the balancers.
enum class FinishedRule { retire, coalesce, pays };
inline constexpr std::array<std::pair<std::string_view, FinishedRule>, 3> kFinishedRules = {
    {{"retire", FinishedRule::retire}, {"coalesce", FinishedRule::coalesce}, {"pays", FinishedRule::pays}}};
[[nodiscard]] constexpr std::string_view to_string(FinishedRule r) noexcept { return name_in(kFinishedRules, r); }

/// Where a simulation's ranks go on the platform's hosts (key placement): `block` fills the hostfile's hosts in
/// order; `groups` deals them round-robin over a dragonfly's groups, so consecutive nodes sit in different groups
/// and a run of a few nodes crosses the global links; `scatter` deals single ranks over the nodes in turn (a
/// dragonfly's alternating over its groups), so that every group of ranks, and every merge, spans nodes.
/// Real MPI has only `block` (the site places its ranks).
enum class Placement { block, groups, scatter };
inline constexpr std::array<std::pair<std::string_view, Placement>, 3> kPlacements = {
    {{"block", Placement::block}, {"groups", Placement::groups}, {"scatter", Placement::scatter}}};
[[nodiscard]] constexpr std::string_view to_string(Placement p) noexcept { return name_in(kPlacements, p); }

/// One run: every parameter resolved to a single value.
struct RunSpec {
  std::string experiment;
  int nprocs = 1;
  int G = 1;
  GroupsSpec groups;  // by G unless the experiment names groups
  double T_ms = 100.0;
  WorkloadSpec workload;
  WorkSpec work;
  std::string balancer;
  int interval = 0;                        // balancers with uses_interval (collective: period; lookahead,
                                           // mostwork: window), else 0
  std::string method;                      // communicator creation method used for regrouping ("" for none)
  std::optional<FinishedRule> finished;    // balancers with a finished rule only
  Placement placement = Placement::block;  // one per study (key placement)
  int rep = 0;
};

/// What planning runs needs to know about a balancer (its implementation lives in balancers/).
struct BalancerInfo {
  std::string_view name;
  bool uses_interval;                             // reads `interval` (collective: period; lookahead/mostwork: window)
  bool regroups;                                  // counts the initial formation as a regroup (docs/guide/running.md)
  std::string_view default_method;                // "" for none
  std::vector<std::string_view> methods;          // creation methods it can regroup with
  std::string_view initial_method;                // forms the initial groups when the run names no method
  std::vector<FinishedRule> finished_rules = {};  // the rules it offers, its default first; empty: no such option
  bool plans_ahead = false;  // plans merges from predicted item times (Kernel::planned_item_s): in compute mode
                             // these come from the calibrated model, so such a run calibrates first
};

/// The balancers and creation methods a study may name, supplied by the libraries that implement them
/// (mcmclb::catalog() in balancers/), so the study library validates names at parse time without linking MPI.
struct Catalog {
  std::vector<BalancerInfo> balancers;
  std::vector<std::string> methods;                              // known creation methods, in order
  std::vector<std::pair<std::string, std::string>> unsupported;  // method -> why this build cannot use it

  /// Throws InputError (key balancer) for an unknown name, listing the known ones.
  [[nodiscard]] const BalancerInfo& balancer(std::string_view name) const;
  /// Throws InputError naming key for an unknown method (listing the known ones) or one this build does not
  /// support (saying why).
  void check_method(const std::string& name, std::string_view key = "method") const;
  /// The methods this build can use, in order (methods less unsupported).
  [[nodiscard]] std::vector<std::string> supported_methods() const;
};

}  // namespace mcmclb
