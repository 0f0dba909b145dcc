// SPDX-License-Identifier: BSD-3-Clause
// The walker-group kernel's per-rank runtime (mcmclb/kernel.hpp): groups, the polling point, regrouping and the
// bookkeeping. Compute mode's walkers are in compute.cpp.
#include "mcmclb/kernel.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <numeric>
#include <optional>
#include <span>
#include <stdexcept>

#include "mcmclb/input_error.hpp"
#include "mcmclb/workload.hpp"

namespace mcmclb {

namespace {
constexpr int kRegroupTag = 7;  // on the control communicator: no balancer tag (balancers/src/protocol.hpp)
constexpr std::chrono::microseconds kPollNap{20};  // members of a group reach the polling point together

/// Ranks per node run, in rank order: node_first[r] is the lowest world rank on rank r's node. Throws when a
/// node's ranks are not one contiguous range (groups must be contiguous; ask the launcher for block placement).
std::vector<int> node_runs(const std::vector<int>& node_first) {
  std::vector<int> runs;
  for (std::size_t r = 0; r < node_first.size(); ++r) {
    const int here = node_first[r];
    if (r > 0 && here == node_first[r - 1]) {
      ++runs.back();
    } else if (here == static_cast<int>(r)) {
      runs.push_back(1);
    } else {
      throw InputError("key groups.by: node: the ranks of the node holding rank " + std::to_string(here) +
                       " are not contiguous (rank " + std::to_string(r) +
                       " lies on it); launch with block placement, one range of ranks per node");
    }
  }
  return runs;
}

std::vector<int> node_group_sizes(int node_size, const mpi::Comm& world) {
  MPI_Comm raw = MPI_COMM_NULL;
  mpi::check(MPI_Comm_split_type(world.get(), MPI_COMM_TYPE_SHARED, world.rank(), MPI_INFO_NULL, &raw),
             "MPI_Comm_split_type");
  mpi::Comm node = mpi::Comm::adopt(raw);
  int mine = world.rank(), first = 0;
  mpi::check(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, node.get()), "MPI_Allreduce");
  std::vector<int> node_first(static_cast<std::size_t>(world.size()));
  mpi::check(MPI_Allgather(&first, 1, MPI_INT, node_first.data(), 1, MPI_INT, world.get()), "MPI_Allgather");
  node.free();
  // Every rank decides from the same gathered list, so every rank throws the same error or none.
  const std::vector<int> runs = node_runs(node_first);
  if (node_size == 0) return runs;
  std::vector<int> sizes;
  int first_rank = 0;
  for (const int run : runs) {
    if (run % node_size != 0) {
      throw InputError("key groups.size: " + std::to_string(node_size) + " does not divide the " + std::to_string(run) +
                       " ranks of the node holding ranks " + std::to_string(first_rank) + "-" +
                       std::to_string(first_rank + run - 1) + " (groups may not straddle a node)");
    }
    sizes.insert(sizes.end(), static_cast<std::size_t>(run / node_size), node_size);
    first_rank += run;
  }
  return sizes;
}

}  // namespace

std::optional<std::vector<int>> initial_group_sizes(const RunSpec& run, int n) {
  return group_sizes_of(run.groups, run.G, n);
}

std::vector<int> initial_group_sizes(const RunSpec& run, const mpi::Comm& world) {
  if (run.groups.by == GroupsSpec::By::node) return node_group_sizes(run.groups.node_size, world);
  return *initial_group_sizes(run, world.size());
}

Decision::Words Decision::to_words() const noexcept {
  const GroupState::Words g = next.to_words();
  return {kind, g[0], g[1], g[2], g[3], g[4], other_first, other_last};
}

Decision Decision::from_words(const Words& w) noexcept {
  Decision d;
  d.kind = w[0];
  d.next = GroupState::from_words({w[1], w[2], w[3], w[4], w[5]});
  d.other_first = w[6];
  d.other_last = w[7];
  return d;
}

Kernel::Kernel(const RunSpec& run, std::vector<int> group_sizes, const std::string& method)
    : Kernel(run, std::move(group_sizes), method, MPI_COMM_WORLD, nullptr) {}

Kernel::Kernel(const RunSpec& run, std::vector<int> group_sizes, const std::string& method, MPI_Comm parent,
               ChainWork& chains)
    : Kernel(run, std::move(group_sizes), method, parent, &chains) {}

Kernel::Kernel(const RunSpec& run, std::vector<int> group_sizes, const std::string& method, MPI_Comm parent,
               ChainWork* chains)
    : run_(run),
      chains_per_group_(run.workload.chains_per_group),
      workload_(make_workload(run.workload)),
      world_(mpi::Comm::view(parent)),
      // The simulation build has no private duplicate: SMPI keeps per-rank tables over every rank of each
      // communicator, so a duplicate of WORLD costs each simulated rank O(P) bytes, O(P^2) over the one process.
      // WORLD serves, as every message on it is told apart by its tag (balancers/src/protocol.hpp).
      control_(mpi::kSimulated ? mpi::Comm::world() : world_.dup()),
      creator_(make_group_comm_creator(method, control_)),
      rank_(world_.rank()),
      nprocs_(world_.size()),
      chains_(chains) {
  // Every rank keeps the initial groups as runs of equal sizes, not one entry per group: a simulation runs all
  // its ranks in one process, where a table per rank over all groups or chains is quadratic in the rank count.
  int first_rank = 0;
  for (const int size : group_sizes) {
    if (!size_runs_.empty() && size_runs_.back().size == size) {
      ++size_runs_.back().count;
    } else {
      size_runs_.push_back({.size = size, .count = 1, .first_unit = units_, .first_rank = first_rank});
    }
    ++units_;
    first_rank += size;
  }
  if (chains_per_group_ < 1 || int64_t{units_} * chains_per_group_ > kMaxInt || first_rank != nprocs_) {
    throw std::logic_error("Kernel: the initial groups do not cover the ranks with chains_per_group chains each");
  }
  if (chains_ == nullptr && run_.work.mode == WorkMode::compute) {
    own_chains_ = lennard_jones_chains();
    chains_ = own_chains_.get();
  }
  replayed_ = workload_->trace();
  planned_ = workload_->plan_trace();
  // The planners' window: what they believe the longest item takes.
  if (replaying()) longest_replayed_ms_ = 1000.0 * planned_->longest_item_s();
}

double Kernel::replay_ms(int chain, int64_t item, int m, bool planned) const {
  // The workload index of the chain (chain_length()), which workload.map takes to a trace chain.
  // A plan reads the trace planning consults (workload.plan_file), the work the one replayed.
  const int replayed = workload_->trace_chain(workload_index(chain));
  const Trace& from = planned ? *planned_ : *replayed_;
  if (planned && run_.workload.scaling == TraceScaling::perfect) {
    return 1000.0 * from.single_rank_s(replayed, item) / m;
  }
  return 1000.0 * from.item_s(replayed, item, m);
}

std::vector<int> Kernel::initial_sizes() const {
  std::vector<int> sizes;
  for (const SizeRun& r : size_runs_) sizes.insert(sizes.end(), static_cast<std::size_t>(r.count), r.size);
  return sizes;
}

int Kernel::initial_first(int unit) const {
  // The last run starting at or before unit.
  const auto after = std::upper_bound(size_runs_.begin(), size_runs_.end(), unit,
                                      [](int u, const SizeRun& r) { return u < r.first_unit; });
  const SizeRun& r = *std::prev(after);
  return r.first_rank + (unit - r.first_unit) * r.size;
}

int64_t Kernel::chain_length(int chain) const {
  if (chain < 0 || chain >= chain_count()) {
    throw std::out_of_range("Kernel::chain_length: no chain " + std::to_string(chain) + " of " +
                            std::to_string(chain_count()));
  }
  if (chains_ != nullptr) return chains_->items(chain);
  return workload_->items(workload_index(chain));
}

int Kernel::workload_index(int chain) const {
  const int unit = chain / chains_per_group_;
  return chain_index(*workload_, unit, units_, initial_first(unit), chains_per_group_, chain % chains_per_group_);
}

Kernel::~Kernel() = default;

Kernel::Timer::~Timer() { kernel_.add(phase_, pace::now_s() - start_); }

void Kernel::add(Phase p, double seconds) {
  switch (p) {
    case Phase::work:
      stats_.work_s += seconds;
      break;
    case Phase::polling:
      stats_.polling_s += seconds;
      break;
    case Phase::waiting:
      stats_.waiting_s += seconds;
      break;
    case Phase::regroup:
      stats_.regroup_s += seconds;
      break;
  }
}

double Kernel::now_s() const { return pace::now_s() - start_s_; }

ChainPos Kernel::locate(int unit, int64_t item) const {
  if (unit >= units_) return {unit - units_, item};
  const int first = unit * chains_per_group_;
  ChainPos end{first, 0};  // where the unit ends: the end of its last chain with items
  for (int c = first; c < first + chains_per_group_; ++c) {
    const int64_t s = chain_length(c);
    if (item < s) return {c, item};
    item -= s;
    if (s > 0) end = {c, s};
  }
  return end;
}

double Kernel::item_ms(const GroupState& g, int64_t i) const {
  const ChainPos at = locate(g.unit, g.next_item + i);
  if (replaying()) return replay_ms(at.chain, at.item, g.size(), false);
  return item_cost_ms(run_, g.size(), at.chain, at.item);
}

std::optional<int> Kernel::spare_chain() const {
  const GroupState& g = group_;
  if (g.items_left == 0) return std::nullopt;
  const int last = locate(g.unit, g.next_item + g.items_left - 1).chain;
  if (last == current_chain()) return std::nullopt;
  return last;
}

std::vector<int64_t> Kernel::give_chain(int chain) {
  if (spare_chain() != chain) {
    throw std::logic_error("rank " + std::to_string(rank_) + " cannot give chain " + std::to_string(chain) +
                           ": it is not the group's last unstarted chain");
  }
  group_.items_left -= chain_length(chain);
  const std::size_t words = shipped_state_words(chain);
  if (words == 0 || !is_leader()) return {};
  const std::vector<std::byte> bytes = chains_->unstarted_state(chain);
  std::vector<int64_t> state(words, 0);
  if (bytes.size() != *chains_->state_size(chain)) {
    throw std::logic_error("chain " + std::to_string(chain) + ": its initial state has " +
                           std::to_string(bytes.size()) + " bytes, not " + std::to_string(*chains_->state_size(chain)));
  }
  std::memcpy(state.data(), bytes.data(), bytes.size());
  return state;
}

std::size_t Kernel::shipped_state_words(int chain) const {
  if (chains_ == nullptr || !chains_->ships_unstarted()) return 0;
  const std::optional<std::size_t> bytes = chains_->state_size(chain);
  if (!bytes) throw std::logic_error("chains that ship unstarted states must say their size");
  return (*bytes + sizeof(int64_t) - 1) / sizeof(int64_t);
}

void Kernel::take_chain(int chain, std::vector<int64_t> state, int64_t message_bytes) {
  if (!group_.finished()) {
    throw std::logic_error("group " + group_.range() + " takes chain " + std::to_string(chain) +
                           " before its own unit is done");
  }
  group_.unit = single_unit(chain);
  group_.next_item = 0;
  group_.items_left = chain_length(chain);
  ++stats_.chains_migrated;
  stats_.migrated_bytes += message_bytes;
  if (chains_ == nullptr) return;
  const std::size_t words = shipped_state_words(chain);
  if (words == 0) {  // every member of the thief starts it, nothing travels
    start_app_chain(chain);
    return;
  }
  state.resize(words);
  if (group_.size() > 1) {  // rebalancing time, as a regrouping's broadcast of a state is
    auto timer = timed(Phase::regroup);
    group_comm_->bcast(std::span<int64_t>(state), 0);
    if (!is_leader()) stats_.migrated_bytes += static_cast<int64_t>(words * sizeof(int64_t));
  }
  chains_->restore(chain, 0, std::as_bytes(std::span<const int64_t>(state)).first(*chains_->state_size(chain)));
  hold_app_chain(chain, 0);
}

void Kernel::form_initial_groups(bool count_as_regroup) {
  // The initial groups' creation is a cost a run pays (mcmclb advise prices it): it starts with every rank, so it
  // measures the creation and not how far apart the ranks arrived, which in simulation depends on what the launch
  // ran before (an output folder read, an earlier point).
  mpi::barrier_together(world_, mpi::setup_patience);
  GroupState initial;
  for (const SizeRun& r : size_runs_) {
    if (rank_ >= r.first_rank + r.count * r.size) continue;
    const int within = (rank_ - r.first_rank) / r.size;
    initial.unit = r.first_unit + within;
    initial.first = r.first_rank + within * r.size;
    initial.last = initial.first + r.size - 1;
    break;
  }
  const int first_chain = initial.unit * chains_per_group_;
  for (int c = first_chain; c < first_chain + chains_per_group_; ++c) initial.items_left += chain_length(c);
  form(initial, EventKind::initial, "", count_as_regroup);
}

void Kernel::start(CalibrationPass pass) {
  if (pass != CalibrationPass::none) calibrate_merges(pass);
  // Ranks arrive here far apart (the setup before is uneven); the clock starts when they leave together.
  mpi::barrier_together(world_, mpi::setup_patience);
  start_s_ = pace::now_s();
}

namespace {
/// When the next progress line is due, in host nanoseconds of the steady clock. Shared on purpose: the simulated
/// ranks of one simulation are one process (-no-privatize), and one line per interval is wanted, not one per
/// rank. The first rank to pass an item boundary after the deadline claims the line.
std::atomic<int64_t> next_progress_ns{0};
/// The items the run's groups have worked so far, each counted once (by its group's leader); shared as above, so
/// that a progress line, and a point killed after it, says how much of the run was done.
std::atomic<int64_t> items_done{0};

int64_t host_ns(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}
}  // namespace

void Kernel::report_progress(double every_host_s, double expected_s, double baseline_s) {
  progress_every_s_ = mpi::kSimulated ? every_host_s : 0;
  progress_expected_s_ = expected_s;
  progress_baseline_s_ = baseline_s;
  progress_start_ = std::chrono::steady_clock::now();
  items_done.store(0);  // every rank resets it before the start's barrier, so before any item is worked
  // Every rank of the run sets the same deadline, give or take the host time between their calls.
  next_progress_ns.store(host_ns(progress_start_) + static_cast<int64_t>(every_host_s * 1e9));
}

void Kernel::progress_tick() {
  const auto now = std::chrono::steady_clock::now();
  const int64_t now_ns = host_ns(now);
  int64_t due = next_progress_ns.load(std::memory_order_relaxed);
  const int64_t next = now_ns + static_cast<int64_t>(progress_every_s_ * 1e9);
  if (now_ns < due || !next_progress_ns.compare_exchange_strong(due, next)) return;
  const double host_s = std::chrono::duration<double>(now - progress_start_).count();
  // The host's peak memory so far: every simulated rank lives in this one process.
  rusage usage{};
  const double peak_mib = getrusage(RUSAGE_SELF, &usage) == 0 ? static_cast<double>(usage.ru_maxrss) / 1024.0 : 0.0;
  std::printf(
      "  progress: simulated %.2f s of ~%.2f s (ideal; none %.2f s), %lld items done, host %.0f s elapsed, peak RSS "
      "%.0f MiB\n",
      pace::now_s() - start_s_, progress_expected_s_, progress_baseline_s_,
      static_cast<long long>(items_done.load(std::memory_order_relaxed)), host_s, peak_mib);
  std::fflush(stdout);
}

void Kernel::work_one_item() {
  auto timer = timed(Phase::work);
  const ChainPos at = locate(group_.unit, group_.next_item);
  if (chains_ != nullptr) {
    work_app_item(at);
  } else {
    pace::work(run_.work.mode, replaying() ? replay_ms(at.chain, at.item, group_.size(), false)
                                           : item_cost_ms(run_, group_.size(), at.chain, at.item));
  }
  if (is_leader()) {
    // A leader works a chain's items one after another: one entry per chain and stay.
    if (counted_.empty() || counted_.back().chain != at.chain) counted_.push_back({.chain = at.chain});
    ++counted_.back().items;
    counted_.back().index_sum += at.item;
  }
  ++stats_.items_worked;
  ++group_.next_item;
  --group_.items_left;
  if (chains_ != nullptr && at.item + 1 == chain_length(at.chain)) next_app_chain(at.chain);
  if (progress_every_s_ > 0) {
    if (is_leader()) items_done.fetch_add(1, std::memory_order_relaxed);
    progress_tick();
  }
}

Decision Kernel::agree(const Decision& leader_choice, Phase phase) {
  auto timer = timed(phase);
  if (group_.size() == 1) return leader_choice;
  Decision::Words words = is_leader() ? leader_choice.to_words() : Decision::Words{};
  group_comm_->bcast(words, 0, kPollNap);
  return Decision::from_words(words);
}

void Kernel::broadcast(std::span<int64_t> words, Phase phase) {
  auto timer = timed(phase);
  if (group_.size() == 1) return;
  group_comm_->bcast(words, 0, kPollNap);
}

void Kernel::regroup(const GroupState& next, const std::string& before, int holder, ChainProgress progress) {
  auto timer = timed(Phase::regroup);
  form(next, EventKind::merge, before, true, holder, progress);
}

void Kernel::regroup_without_joining() {
  if (creator_->group_collective()) return;  // only the members take part
  auto timer = timed(Phase::regroup);
  form(std::nullopt, EventKind::merge, "", true);
}

void Kernel::form(const std::optional<GroupState>& next, EventKind kind, const std::string& before,
                  bool count_as_regroup, int holder, ChainProgress progress) {
  // Groups are contiguous ranges: members create from the bounds (range: O(1), no MPI group built); a rank that
  // does not join takes part in a parent-collective creation with the empty group.
  const double t0 = pace::now_s();
  std::unique_ptr<GroupComm> comm = next ? creator_->create_range(next->first, next->last, kRegroupTag)
                                         : creator_->create(mpi::Group::view(MPI_GROUP_EMPTY), kRegroupTag);
  const double create_s = pace::now_s() - t0;
  if (!next) return;
  switch_to(std::move(comm), *next);
  if (progress == ChainProgress::from_last && group_.size() > 1) {
    std::array<int64_t, 2> words{group_.next_item, group_.items_left};
    group_comm_->bcast(words, group_.size() - 1, kPollNap);
    group_.next_item = words[0];
    group_.items_left = words[1];
  }
  if (chains_ != nullptr) take_app_chain(kind, holder);
  if (count_as_regroup) ++stats_.regroups;
  if (is_leader()) {
    const double t_s = kind == EventKind::initial ? 0.0 : now_s();  // initial groups precede the clock
    events_.push_back({t_s, kind, before, next->first, next->last, current_chain(), group_.items_left,
                       std::string(creator_->name()), create_s});
  }
  // Regroupings can outlast the items (finished groups that keep merging): they report progress too.
  if (progress_every_s_ > 0 && kind == EventKind::merge) progress_tick();
}

void Kernel::switch_to(std::unique_ptr<GroupComm> comm, const GroupState& next) {
  if (comm == nullptr || comm->size() != next.size()) {
    throw std::logic_error("regroup to " + next.range() + " produced no communicator of that size");
  }
  leave_group();
  group_comm_ = std::move(comm);
  ++comms_created_;
  group_ = next;
}

void Kernel::pass_costs() {
  if (!cost_sink_ || costs_passed_ == costs_.size()) return;
  cost_sink_(std::span<const ItemCost>(costs_).subspan(costs_passed_));
  costs_passed_ = costs_.size();
}

void Kernel::leave_group() {
  pass_costs();
  if (group_comm_ == nullptr) return;
  group_comm_->free();
  group_comm_.reset();
  ++comms_freed_;
}

void Kernel::finish() {
  leave_group();
  stats_.elapsed_s = now_s();
  stats_.final_first = group_.first;
  stats_.final_last = group_.last;
  finished_ = true;
}

}  // namespace mcmclb
