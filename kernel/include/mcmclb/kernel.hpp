// SPDX-License-Identifier: BSD-3-Clause
// The MCMC walker-group kernel's per-rank runtime (Dinan et al., Sect. 4.2): the group this rank works in, the
// emulated items, the polling point, regrouping, and the bookkeeping every run reports (time split per rank,
// regroup events, invariant counters). Balancers (balancers/) drive it.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "mcmclb/group_comm.hpp"
#include "mcmclb/item_estimate.hpp"
#include "mcmclb/lj.hpp"
#include "mcmclb/merge_model.hpp"
#include "mcmclb/mpi.hpp"
#include "mcmclb/pace.hpp"
#include "mcmclb/run_spec.hpp"
#include "mcmclb/run_stats.hpp"
#include "mcmclb/workload.hpp"

namespace mcmclb {

/// A walker group: the contiguous world ranks [first, last] working one unit of chains. Groups stay contiguous
/// because every merge joins two adjacent groups (a group with its right neighbour, or with its left one in
/// mostwork). A unit is what a group works from start to end, its chains one after another (Kernel::locate):
/// unit u of the U initial groups holds that group's chains_per_group chains W, u*W .. u*W + W - 1; unit U + c
/// holds chain c alone (a chain that migrated to another group, balancer steal). With W = 1, unit u is chain u.
struct GroupState {
  int first = 0;
  int last = 0;
  int unit = -1;           // the unit worked (unit u < U started in the u-th initial group)
  int64_t next_item = 0;   // index in that unit (its chains' items in order) of the next item to work
  int64_t items_left = 0;  // items of the unit not worked yet (a victim of steal gives its last chains away)
  [[nodiscard]] int size() const noexcept { return last - first + 1; }
  [[nodiscard]] bool finished() const noexcept { return items_left == 0; }
  [[nodiscard]] bool contains(int rank) const noexcept { return first <= rank && rank <= last; }
  [[nodiscard]] std::string range() const { return std::to_string(first) + "-" + std::to_string(last); }

  /// The state as words, for messages; from_words(to_words(g)) == g.
  using Words = std::array<int64_t, 5>;
  [[nodiscard]] Words to_words() const noexcept { return {first, last, unit, next_item, items_left}; }
  [[nodiscard]] static GroupState from_words(const Words& w) noexcept {
    return {static_cast<int>(w[0]), static_cast<int>(w[1]), static_cast<int>(w[2]), w[3], w[4]};
  }
  friend bool operator==(const GroupState&, const GroupState&) = default;
};

/// What a group does after an item; decided by the leader, learned by every member at the polling point. The
/// kernel knows two kinds; a balancer defines its own kinds (and the meaning of the payload) from
/// kFirstBalancerKind on, in its own file.
struct Decision {
  static constexpr int64_t kContinue = 0;  // work the next item
  static constexpr int64_t kDone = 1;      // the group's chain is done
  static constexpr int64_t kFirstBalancerKind = 16;
  int64_t kind = kContinue;
  GroupState next;                          // payload: a group (e.g. the merged group)
  int64_t other_first = 0, other_last = 0;  // payload: a range of ranks (e.g. the group merged with)

  /// The decision as words, for broadcasts and control messages; from_words(to_words(d)) == d.
  using Words = std::array<int64_t, 8>;
  [[nodiscard]] Words to_words() const noexcept;
  [[nodiscard]] static Decision from_words(const Words& w) noexcept;
  friend bool operator==(const Decision&, const Decision&) = default;
};

/// Who knows how far the chain of a group being formed has got (GroupState::next_item, items_left): every member
/// (merge-right balancers send the state with the decision), or only the members of the group that worked the
/// chain, whose last rank is also the new group's last rank; the other members then learn it from that rank.
enum class ChainProgress { known, from_last };

/// Where a rank's time goes; the four parts add up to its elapsed time.
enum class Phase { work, polling, waiting, regroup };

/// Collective over world when run.groups is by node (MPI_Comm_split_type SHARED), local otherwise: the sizes of
/// the initial walker groups in rank order (contiguous ranges covering every rank). Throws InputError, the same
/// line on every rank, when the groups cannot be formed (sizes that do not add up to the rank count, G not
/// dividing it, a node whose ranks are not contiguous or not a multiple of the group size asked for).
std::vector<int> initial_group_sizes(const RunSpec& run, const mpi::Comm& world);
/// The same sizes at nprocs ranks without MPI, where the study alone decides them: nothing for groups by node,
/// which the machine's nodes decide. Throws as the collective form does.
[[nodiscard]] std::optional<std::vector<int>> initial_group_sizes(const RunSpec& run, int nprocs);

/// What compute mode learns about one chain on the ranks that work it; summed over ranks, every field is exact
/// (each chain's final state is recorded once, by the leader of the group that finishes it).
struct ChainTally {
  int64_t recorded = 0;     // 1 on the rank that recorded the final state
  int64_t energy = 0;       // final energy, fixed point (lj::Energy)
  int64_t accepted = 0;     // accepted trial moves
  int64_t moves = 0;        // trial moves worked
  int64_t merges = 0;       // merges that moved the walker state to new members
  int64_t state_bytes = 0;  // bytes of walker state delivered to new members by those merges
  double state_s = 0;       // the new leaders' time broadcasting the state
};

/// Items of one chain worked by the groups a rank led, and the sum of their indices.
struct ChainCount {
  int64_t chain = 0;
  int64_t items = 0;
  int64_t index_sum = 0;
};

/// Where an item of a unit lies: its chain and its index in that chain.
struct ChainPos {
  int chain = 0;
  int64_t item = 0;
};

/// Seconds a chain's items took at one group size (on the group's leader).
struct ItemTiming {
  int64_t items = 0;
  double seconds = 0;
};

/// An application's chains, worked by the kernel in place of its own items (the public API of walkers/ adapts an
/// application's mcmclb::walkers::Chains to it). Every member of a group calls start, work and finish alike; save on
/// the one member that holds a chain's state, restore on the members that join it (or, for a state spread over the
/// group, save_piece and restore_piece on every member). The kernel never looks inside a
/// state: it only carries its bytes from one member to the others when groups merge.
class ChainWork {
 public:
  virtual ~ChainWork() = default;
  /// Items of chain c: the same on every rank.
  [[nodiscard]] virtual int64_t items(int chain) const = 0;
  /// Sets up chain c's initial state; called before its first item by every member of the group that starts it.
  virtual void start(int chain, GroupComm& group) = 0;
  /// Works item `item` of chain c with the group.
  virtual void work(int chain, int64_t item, GroupComm& group) = 0;
  /// Whether chain c, before item `item`, has what it needs (items(c) is then a bound): asked on every member before
  /// each item, from the state they share; once true, the chain's remaining items are passed over (no work, no
  /// cost recorded; a polling point each, so that every balancer's count of items stays right). Default: never.
  [[nodiscard]] virtual bool done(int /*chain*/, int64_t /*item*/) { return false; }
  /// The most items chain c takes in all, as it knows before item `item` (at most items(c)): asked on every member
  /// before each item it works where costs are measured, from the state they share. The planners count the items
  /// past it as free. Default: items(c).
  [[nodiscard]] virtual int64_t bound(int chain, int64_t /*item*/) { return items(chain); }
  /// Chain c after its last item, on every member of the group that ended it.
  virtual void finish(int chain, GroupComm& group) = 0;
  /// The state of chain c before item `item` as bytes, on a member whose group worked it so far.
  [[nodiscard]] virtual std::vector<std::byte> save(int chain, int64_t item) = 0;
  /// Takes chain c's state before item `item` from bytes save() made on another rank.
  virtual void restore(int chain, int64_t item, std::span<const std::byte> state) = 0;
  /// Whether a chain's state is spread over its group's members, each holding a piece: a merge then sends each
  /// member of the merged group the bytes of its new piece from the members of the group that worked the chain
  /// (save_piece), and calls restore_piece on each, in place of save and restore. False (the default): one member
  /// holds the whole state.
  [[nodiscard]] virtual bool spread() const { return false; }
  /// Where chain c's spread state lies over a group of `size` members: member m holds bytes [at[m], at[m + 1]) of
  /// it, at[0] = 0 and at[size] its length (spread()); the same on every rank. The default throws std::logic_error.
  [[nodiscard]] virtual std::vector<int64_t> piece_bounds(int chain, int size);
  /// This member's bytes of chain c's state before item `item`, member `member` of the `size` holding it, as a view
  /// valid until the next call for the chain (spread()); the default throws std::logic_error.
  [[nodiscard]] virtual std::span<const std::byte> save_piece(int chain, int64_t item, int member, int size);
  /// What every member holding chain c holds alike besides its piece, on one of them (spread()); the default throws
  /// std::logic_error.
  [[nodiscard]] virtual std::vector<std::byte> save_shared(int chain, int64_t item);
  /// Chain c's state before item `item` on this member of group, from its piece's bytes (piece_bounds at the group's
  /// size) and the shared bytes (spread()); the default throws std::logic_error.
  virtual void restore_piece(int chain, int64_t item, std::vector<std::byte>& piece, std::span<const std::byte> shared,
                             GroupComm& group);

  // How states travel. The defaults suit an application's chains; compute mode's Lennard-Jones walkers
  // (kernel/src/compute.cpp) override them to keep the messages of every simulation recorded with them.
  /// The size in bytes of every state of chain c, where it is fixed and known on every rank: a merge then
  /// broadcasts the state alone, not its length first. nullopt (the default): sizes may vary.
  [[nodiscard]] virtual std::optional<std::size_t> state_size(int /*chain*/) const { return std::nullopt; }
  /// Whether a chain given away before it started (balancer steal) carries its initial state, made on the giving
  /// group's leader by unstarted_state() and broadcast over the thief, whose members restore() it; state_size()
  /// must then be known. False (the default): every member of the thief start()s the chain, and nothing travels.
  [[nodiscard]] virtual bool ships_unstarted() const { return false; }
  /// Chain c's initial state as bytes, on a rank that need not hold it (ships_unstarted()).
  [[nodiscard]] virtual std::vector<std::byte> unstarted_state(int chain) const;
  /// Whether finished groups that coalesce still broadcast the state of the chain their unit ended with, which no
  /// one works again. False (the default): nothing travels once a group's unit is done.
  [[nodiscard]] virtual bool sends_finished_state() const { return false; }
};

class Kernel {
 public:
  /// Collective over MPI_COMM_WORLD. group_sizes: the initial groups (initial_group_sizes()); initial group g owns
  /// the chains g*W .. g*W + W - 1 (W: workload.chains_per_group), its unit g, and S of each is run.workload's
  /// (chain_items()); method creates every group communicator. What a rank keeps does not grow with the rank count
  /// (for groups of a few sizes): the sizes as runs of equal sizes, S computed where it is needed, the counts of
  /// the chains this rank led.
  Kernel(const RunSpec& run, std::vector<int> group_sizes, const std::string& method);
  /// The same over parent instead of MPI_COMM_WORLD (collective over parent, which must outlive the kernel), the
  /// items being chains' (chain c has chains.items(c) items; chains must outlive the kernel).
  Kernel(const RunSpec& run, std::vector<int> group_sizes, const std::string& method, MPI_Comm parent,
         ChainWork& chains);
  ~Kernel();
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;

  // --- set-up (untimed) ---
  /// Forms the initial walker groups (consecutive ranks, of the sizes given to the constructor). count_as_regroup: the
  /// initial formation counts in the regroup statistics (balancers that regroup; see docs/guide/running.md, "Regroup
  /// counts").
  void form_initial_groups(bool count_as_regroup);
  /// What the calibration pass before the clock measures: nothing; what planning reads (the compute rate and the
  /// reductions at each size: a balancer that plans ahead in compute mode); or also what a merge costs (creation
  /// after an untimed first one, the state's broadcast, and reductions four times as many: the finished rule pays).
  enum class CalibrationPass { none, to_plan, to_price };
  /// Synchronised start: first the calibration pass (calibrate_merges(), timed as calibration_s()) unless none;
  /// then a barrier, and the clock starts.
  void start(CalibrationPass pass);
  /// Simulation build: while the run goes on, one line on standard output every every_host_s seconds of host
  /// time, from whichever simulated rank passes an item boundary or a regrouping first, with the simulated time reached
  /// against expected_s (the ideal time) and the host time elapsed. A simulated run of thousands of ranks takes minutes
  /// of host time, which would otherwise pass in silence. The real MPI build reports nothing: its runs take the
  /// time they measure.
  void report_progress(double every_host_s, double expected_s, double baseline_s);

  // --- what balancers use ---
  [[nodiscard]] const RunSpec& run() const noexcept { return run_; }
  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] int nprocs() const noexcept { return nprocs_; }
  [[nodiscard]] const GroupState& group() const noexcept { return group_; }
  [[nodiscard]] bool in_group() const noexcept { return group_comm_ != nullptr; }
  [[nodiscard]] bool is_leader() const noexcept { return in_group() && rank_ == group_.first; }
  [[nodiscard]] const mpi::Comm& world() const noexcept { return world_; }
  /// The balancers' control messages and, with tags of its own, the parent of every group communicator the kernel
  /// creates: a private duplicate of WORLD; in the simulation build WORLD itself (tags keep the traffic apart).
  [[nodiscard]] const mpi::Comm& control() const noexcept { return control_; }
  [[nodiscard]] GroupCommCreator& creator() noexcept { return *creator_; }
  [[nodiscard]] double now_s() const;  // since start()

  /// Works the group's next item: T/|group| ms (with jitter), or in compute mode moves_per_item trial moves of
  /// the chain's walker, each energy evaluation split over the group and summed by GroupComm::allreduce_sum;
  /// counted for the invariants on the leader.
  void work_one_item();
  /// The polling point: the leader's decision, broadcast over the group (waiting politely). Timed as phase
  /// (polling; waiting where members wait for the leader to hear from another group).
  Decision agree(const Decision& leader_choice, Phase phase = Phase::polling);
  /// A polling point whose decision is not a Decision (a balancer that talks to both neighbours): broadcasts
  /// words from the leader over the group, waiting politely.
  void broadcast(std::span<int64_t> words, Phase phase = Phase::polling);
  /// The sizes of the initial walker groups, in rank order (known on every rank; built on each call, O(groups)).
  [[nodiscard]] std::vector<int> initial_sizes() const;
  /// U: the number of initial groups (units 0 .. U - 1).
  [[nodiscard]] int initial_groups() const noexcept { return units_; }

  // --- the finished rule pays (mcmclb/merge_model.hpp; calibrated by start()) ---
  /// Seconds item g.next_item + i of g's unit is expected to take at `size` ranks. Measured costs (measuring()):
  /// at `end` of their spread, and 0 for items past the bound the group's chain gave (ChainWork::bound).
  [[nodiscard]] double expected_item_s(const GroupState& g, int64_t i, int size,
                                       ItemEstimate::End end = ItemEstimate::End::point) const;
  /// Seconds by which joiners more ranks would end g's unit sooner, from its current position, net of the merge's
  /// own cost (creation and state broadcast at the merged size), with measured costs at `end` of their spread. The
  /// same on every rank for the same g.
  [[nodiscard]] double merge_margin_s(const GroupState& g, int joiners,
                                      ItemEstimate::End end = ItemEstimate::End::point) const;
  /// Whether the merge pays: its margin at the high end of the measured costs' spread is positive (the point
  /// estimate where costs are not measured). A merge whose margin's spread holds 0 is taken, as before anything
  /// is measured.
  [[nodiscard]] bool merge_pays(const GroupState& g, int joiners) const;
  /// Whether joiners more ranks merging into g pays at its current polling point (now), not now but from a later
  /// polling point of its unit on (later: the rest of the unit would then end sooner by more than the merge costs,
  /// which happens when items that a larger group works slower come first, e.g. a unit of chains of different atom
  /// counts), or at none (never). The same on every rank for the same g.
  /// Measured costs are weighed at the high end of their spread, as in merge_pays.
  enum class Outlook { now, later, never };
  [[nodiscard]] Outlook merge_outlook(const GroupState& g, int joiners) const;
  /// False when even the most any merge could gain cannot recover its cost: then no merge can ever pay, and a
  /// balancer under pays leaves every group to its own chains. A first merge joins an initial group (a larger group
  /// forms only through a merge that paid); f more ranks joining one of w ranks gain at most the positive part of
  /// t(w) - t(w + f) summed over all its items, and cost regroup_s(w + f). So: items too short for a creation to be
  /// worth it (sleep, spin), or reductions dearer than the work they split (compute). The same on every rank.
  [[nodiscard]] bool merging_can_pay() const;
  [[nodiscard]] const MergeModel& merge_model() const noexcept { return merge_model_; }
  /// Decides and plans by model (the calibration's, or one known by hand: the tests of the rule's arithmetic).
  void use_merge_model(MergeModel model);
  /// Seconds this rank spent in the calibration pass before the clock started (0 without one).
  [[nodiscard]] double calibration_s() const noexcept { return calibration_s_; }

  // --- planning (lookahead, mostwork): predicted item times ---
  /// Milliseconds g is predicted to take for item g.next_item + i of its unit at its own size: the item's declared
  /// cost (sleep, spin: item_ms) or, in compute mode, the calibrated model's (expected_item_s), never T_ms, which
  /// compute mode does not use. (Milliseconds, as item_ms, so that plans of emulated work add up exactly as before.)
  [[nodiscard]] double planned_item_ms(const GroupState& g, int64_t i) const;
  /// How many times an item's cost was asked on this rank (planned_item_ms, expected_item_s): a planner, or the
  /// finished rule pays, that walks every item left at every polling point asks quadratically often in a chain's
  /// items, which a simulation of long chains pays on every rank.
  [[nodiscard]] int64_t planned_item_evaluations() const noexcept { return planned_items_; }
  /// The unit of a lookahead window, ms: the longest item any chain has on a single rank (T_ms; compute mode: the
  /// calibrated model's slowest item at one rank).
  [[nodiscard]] double window_item_ms() const;
  /// An application's chains planned from measured costs (work.compute.measured): every member adds each item it
  /// works to its estimate, which expected_item_s, planned_item_ms and window_item_ms then use.
  [[nodiscard]] bool measuring() const noexcept {
    return chains_ != nullptr && !computing() && run_.work.compute.measured;
  }
  [[nodiscard]] const ItemEstimate& item_estimate() const noexcept { return estimate_; }
  /// Plans from one estimate on every rank from now on (ItemEstimate::from_world of the world's sums of
  /// item_estimate().world_words()), for a balancer whose decisions every rank makes alike.
  void use_world_estimate(const ItemEstimate::WorldWords& sums) { world_estimate_ = ItemEstimate::from_world(sums); }

  // --- units of chains (GroupState) ---
  /// W: the chains each initial group owns.
  [[nodiscard]] int chains_per_group() const noexcept { return chains_per_group_; }
  /// The number of chains, U*W.
  [[nodiscard]] int chain_count() const noexcept { return units_ * chains_per_group_; }
  /// S of chain c, from the workload (std::out_of_range for no such chain).
  [[nodiscard]] int64_t chain_length(int chain) const;
  /// The unit holding chain c alone (a migrated chain).
  [[nodiscard]] int single_unit(int chain) const noexcept { return units_ + chain; }
  /// Where item `item` of unit `unit` lies. Chains of no items hold no index; item == the unit's end lies at the
  /// end of its last chain that has items (of its first chain when none has).
  [[nodiscard]] ChainPos locate(int unit, int64_t item) const;
  /// The chain the group works next, or has just finished when its unit is done.
  [[nodiscard]] int current_chain() const { return locate(group_.unit, group_.next_item).chain; }
  /// Emulated milliseconds of item g.next_item + i of g's unit at g's size (item_cost_ms of its chain and index;
  /// a replayed trace's cost at that size).
  [[nodiscard]] double item_ms(const GroupState& g, int64_t i) const;
  /// True when the run replays a trace (workload.model trace).
  [[nodiscard]] bool replaying() const noexcept { return replayed_ != nullptr; }
  /// A replay: milliseconds item `item` of chain c costs at m ranks, as recorded (planned: as the merge model and
  /// planning predict it, workload.scaling: the trace's speed-ups, or the single-rank cost over m).
  [[nodiscard]] double replay_ms(int chain, int64_t item, int m, bool planned) const;
  /// Migration (balancer steal): the last chain of the group's unit that has items and has not started, if it
  /// is not the one the group works next (a chain in progress, or about to start, is never given away).
  [[nodiscard]] std::optional<int> spare_chain() const;
  /// Every member, at the same polling point: chain (spare_chain()) leaves the group's unit. On the leader, the
  /// state to send with it where the chains ship unstarted ones (ChainWork::ships_unstarted(): its initial state,
  /// as the chain has not started), shipped_state_words(chain) words; otherwise nothing.
  [[nodiscard]] std::vector<int64_t> give_chain(int chain);
  /// The words of state a chain given away carries (0: none; give_chain()).
  [[nodiscard]] std::size_t shipped_state_words(int chain) const;
  /// Every member of a group whose unit is done: the group takes chain (which another group gave) as its unit
  /// single_unit(chain). state: on the leader, what came with it (give_chain()), broadcast to the other members;
  /// message_bytes: the bytes the leader received for it (counted on every member as migrated_bytes, with the
  /// state's bytes on the members it is broadcast to).
  void take_chain(int chain, std::vector<int64_t> state, int64_t message_bytes);
  /// Creates the communicator over next with the group's other members (and, for a parent-collective method,
  /// with every world rank, the others calling regroup_without_joining) and switches to it. before describes
  /// the merged groups for the event log. holder: a world rank of next whose old group worked next.chain
  /// (compute mode sends the walker from it); -1: next's last rank (every merge-right balancer). Timed as
  /// regrouping.
  /// progress: from_last when only the continuing group's members know next's next_item and items_left (the
  /// others pass anything there); the new group's last rank then broadcasts them over the new communicator.
  void regroup(const GroupState& next, const std::string& before, int holder = -1,
               ChainProgress progress = ChainProgress::known);
  /// Takes part in a regrouping that this rank does not join: a parent-collective method needs every world
  /// rank; with a group-collective one there is nothing to do.
  void regroup_without_joining();
  /// Leaves the current group for good (its chain is done or handed over); frees the communicator.
  void leave_group();
  /// This rank has nothing left to do: stops its clock.
  void finish();

  /// Accumulates the time of a scope into a phase.
  class Timer {
   public:
    Timer(Kernel& k, Phase p) : kernel_(k), phase_(p), start_(pace::now_s()) {}
    ~Timer();
    Timer(const Timer&) = delete;
    Timer& operator=(const Timer&) = delete;

   private:
    Kernel& kernel_;
    Phase phase_;
    double start_;
  };
  [[nodiscard]] Timer timed(Phase p) { return Timer(*this, p); }

  // --- results (after finish) ---
  [[nodiscard]] const RankStats& stats() const noexcept { return stats_; }
  [[nodiscard]] const std::vector<EventRow>& events() const noexcept { return events_; }
  /// The items this rank worked as a group's leader, per chain (a chain may appear more than once: summed, every
  /// entry over every rank gives each item of each chain counted exactly once).
  [[nodiscard]] const std::vector<ChainCount>& counted() const noexcept { return counted_; }
  /// Entries this rank keeps per chain or per initial group (counted(), compute mode's tallies, the sizes' runs):
  /// with groups of one size and emulated work, bounded by the chains it led, not by the rank count.
  [[nodiscard]] std::size_t table_entries() const noexcept {
    return size_runs_.size() + counted_.size() + tallies_.size();
  }
  /// Items this rank passed over, their chain being done (ChainWork::done); RankStats::items_worked counts them.
  [[nodiscard]] int64_t items_passed() const noexcept { return items_passed_; }
  [[nodiscard]] int64_t comms_created() const noexcept { return comms_created_; }
  [[nodiscard]] int64_t comms_freed() const noexcept { return comms_freed_; }
  [[nodiscard]] bool finished() const noexcept { return finished_; }
  /// Compute mode, per chain: this rank's share of the tallies (sum over ranks for the whole).
  [[nodiscard]] const std::vector<ChainTally>& chain_tallies() const noexcept { return tallies_; }
  /// Compute mode, on leaders: (chain, group size) -> items and seconds worked at that size.
  [[nodiscard]] const std::map<std::pair<int, int>, ItemTiming>& item_timings() const noexcept { return timings_; }
  /// Compute mode with work.trace, on leaders: the walker after each item this rank's groups worked.
  [[nodiscard]] const std::vector<TracePoint>& trace() const noexcept { return trace_; }
  /// Compute mode with work.record, on leaders: every item this rank's groups worked, its group size and seconds.
  [[nodiscard]] const std::vector<ItemCost>& item_costs() const noexcept { return costs_; }
  /// Where item costs go as the run goes, so that a run that fails or is killed leaves them: called on a leader
  /// with the costs it has not yet passed on, whenever its group ends a chain or it leaves the group (a merge, the
  /// end). So every item of a chain has been passed on by the time the chain ends. item_costs() keeps them all.
  void set_cost_sink(std::function<void(std::span<const ItemCost>)> sink) { cost_sink_ = std::move(sink); }
  /// Counts the chains' group calls in progress on this rank into *calls (an application's watchdog reads it from
  /// another thread to tell a rank waiting for another member from one that hung in its own code).
  void count_group_calls(std::atomic<int>* calls) noexcept { group_calls_ = calls; }
  /// The physics of chain c in compute mode, and its random stream.
  [[nodiscard]] static lj::Spec lj_spec(const RunSpec& run, int chain);
  [[nodiscard]] static lj::ChainKey lj_key(const RunSpec& run, int chain);

 private:
  Kernel(const RunSpec& run, std::vector<int> group_sizes, const std::string& method, MPI_Comm parent,
         ChainWork* chains);
  void add(Phase p, double seconds);
  /// Collective over WORLD, before the clock: from a barrier, measure_merges(pass), timed as calibration_s_.
  void calibrate_merges(CalibrationPass pass);
  /// Measures the merge model's table at calibration_sizes() (creation by the run's method, a compute-mode
  /// reduction, the largest state's broadcast) and, in compute mode, the seconds per model flop of trial moves on
  /// one rank; sums over ranks, so the model is identical everywhere. Collective over WORLD.
  void measure_merges(CalibrationPass pass);
  void progress_tick();
  /// Creates the communicator over next (none: take part in a parent-collective creation without joining),
  /// switches to it, counts it (if asked) and logs it as an event of this kind.
  void form(const std::optional<GroupState>& next, EventKind kind, const std::string& before, bool count_as_regroup,
            int holder = -1, ChainProgress progress = ChainProgress::known);
  void switch_to(std::unique_ptr<GroupComm> comm, const GroupState& next);

  /// Compute mode (kernel/src/compute.cpp): the kernel's own Lennard-Jones walkers as chains, worked through the
  /// same ChainWork steps as an application's; they fill tallies_ and trace_.
  [[nodiscard]] std::unique_ptr<ChainWork> lennard_jones_chains();
  /// True in compute mode (the kernel's own walkers, whose cost model the calibration measures).
  [[nodiscard]] bool computing() const noexcept { return own_chains_ != nullptr; }

  // Chains (kernel/src/chain_work.cpp): an application's, or compute mode's walkers, through ChainWork.
  /// Works item at.item of chain at.chain through ChainWork::work, timed on the leader (work.record: costs_).
  void work_app_item(const ChainPos& at);
  /// After the item that ended chain `ended`: every member finishes it, and starts the unit's next chain if any.
  void next_app_chain(int ended);
  /// measuring(), after a regrouping: every member takes the state holder's estimate (ItemEstimate::adopt).
  void agree_on_estimate(int holder);
  /// Gives the new group its chain's state: initial, every member starts it (and ends the unit's chains of no
  /// items); merge, the holder's bytes broadcast to the members that join.
  void take_app_chain(EventKind kind, int holder);
  /// take_app_chain for a state spread over the group that worked it (ChainWork::spread).
  void take_spread_chain(const ChainPos& at, int root_rank);
  /// take_spread_chain's transfers, on every member of the merged group: the holders (members first_holder on, their
  /// bytes split at `from`; this one's are `mine` where it is one) send each member the bytes of its new piece
  /// (split at `to`) into `piece`. The bytes this member received from others.
  int64_t move_piece_bytes(std::span<const int64_t> from, int first_holder, std::span<const std::byte> mine,
                           std::span<const int64_t> to, std::span<std::byte> piece);
  /// This rank now holds chain's state (its piece) before item next, in the group it is in.
  void hold_app_chain(int chain, int64_t next);
  /// A merge's state holder: holder, or by default the new group's last rank, whose group continued the chain;
  /// logic_error naming the chain when that rank is not a member.
  [[nodiscard]] int state_holder(int holder) const;
  /// A chain taken from another group (steal) that carries no state: every member starts it.
  void start_app_chain(int chain);
  /// Compute mode's wait for a trial's reduction (and the calibration's, which times it): the members of a group
  /// sum each trial's energy in lockstep, one reduction every few microseconds of work, so a long nap would
  /// dominate the item (measured: 200 us naps made a 55-atom all-atom evaluation ~100x slower at g = 2); they
  /// test again after a short one instead.
  static constexpr std::chrono::microseconds kComputeNap{2};

  /// Initial groups of one size, consecutive: count groups of size ranks from unit first_unit and rank first_rank.
  struct SizeRun {
    int size = 0, count = 0, first_unit = 0, first_rank = 0;
  };
  /// The first world rank of initial group (unit) u < U.
  [[nodiscard]] int initial_first(int unit) const;
  /// What a merge of `size` ranks into `merged` gains on each item of a chain (expected_item_s at size less at
  /// merged, at `end`), as one sign for all of the chain's items: none (each is exactly 0), nonnegative, nonpositive,
  /// or mixed (unknown). An item's expected time at either size is one monotone function of the same per-item
  /// base, so comparing the chain's factor at the two sizes signs every item without walking them.
  enum class GainSign { none, nonnegative, nonpositive, mixed };
  [[nodiscard]] GainSign gain_sign(int chain, int size, int merged, ItemEstimate::End end) const;
  /// gain_sign of every chain of unit that has items, from chain `from` (which it holds) to the unit's end.
  [[nodiscard]] GainSign gain_sign_from(int unit, int from, int size, int merged, ItemEstimate::End end) const;
  /// The workload's index of a chain (chain_index(): its initial group's ordinal or leader, and its place there).
  [[nodiscard]] int workload_index(int chain) const;

  RunSpec run_;
  int chains_per_group_ = 1;
  std::vector<SizeRun> size_runs_;  // the initial groups (most runs are one or a few entries long)
  int units_ = 0;
  std::unique_ptr<Workload> workload_;  // S of every chain
  mpi::Comm world_;
  mpi::Comm control_;
  std::unique_ptr<GroupCommCreator> creator_;
  int rank_ = 0, nprocs_ = 1;
  GroupState group_;
  std::unique_ptr<GroupComm> group_comm_;
  bool finished_ = false;
  double start_s_ = 0;
  RankStats stats_;
  std::vector<EventRow> events_;
  std::vector<ChainCount> counted_;
  int64_t comms_created_ = 0, comms_freed_ = 0;
  double progress_every_s_ = 0;  // 0: no progress lines
  double progress_expected_s_ = 0, progress_baseline_s_ = 0;
  std::chrono::steady_clock::time_point progress_start_;
  // compute mode (kernel/src/compute.cpp) and chains' statistics
  std::vector<ChainTally> tallies_;  // compute mode: the walkers' (final state), the kernel's (merges)
  std::map<std::pair<int, int>, ItemTiming> timings_;
  ItemEstimate estimate_;                       // measuring(): the items this rank worked
  std::optional<ItemEstimate> world_estimate_;  // measuring(), once agreed: the one every rank plans with
  std::vector<TracePoint> trace_;
  std::vector<ItemCost> costs_;
  std::function<void(std::span<const ItemCost>)> cost_sink_;
  std::atomic<int>* group_calls_ = nullptr;
  std::size_t costs_passed_ = 0;  // costs_ handed to cost_sink_
  void pass_costs();
  // chains worked through ChainWork (null: emulated items): an application's, or own_chains_ (compute mode)
  std::unique_ptr<ChainWork> own_chains_;
  ChainWork* chains_ = nullptr;
  int app_chain_ = -1;    // the chain whose state this rank holds
  int64_t app_next_ = 0;  // that chain's next item, as far as this rank worked it
  // The group that holds that chain, as first rank and size: where a spread state's pieces are (ChainWork::spread).
  int app_first_ = 0, app_size_ = 0;
  int app_done_chain_ = -1;  // a chain this rank learned is done (ChainWork::done), whose items it passes over
  // measuring(): the group's chain and the items it may take in all (ChainWork::bound, or where it was done), the
  // same on every member: each learns it before each item, and joiners take the state holder's.
  int bound_chain_ = -1;
  int64_t bound_items_ = 0;
  int64_t items_passed_ = 0;  // items this rank passed over so far (counted in stats_.items_worked too)
  // workload.model trace: the trace replayed (owned by the workload), else null
  const Trace* replayed_ = nullptr;
  const Trace* planned_ = nullptr;  // what plans read (workload.plan_file, else replayed_)
  double longest_replayed_ms_ = 0;  // planned_'s longest single-rank item
  MergeModel merge_model_;          // calibrated runs only (start(true))
  double calibration_s_ = 0;
  double window_item_ms_ = 0;          // compute mode: window_item_ms() of the model in use
  mutable int64_t planned_items_ = 0;  // planned_item_evaluations()
  /// Merges merge_pays found not to pay from item `from` of a unit on, its gains all at least 0 up to item `end`:
  /// they pay from no later item either (a suffix of non-negative gains sums to no more, rounding included), which
  /// a host declining a request at each polling point asks. Costs that do not change as items are worked only (not
  /// measuring()); cleared with the model. A few, as a group may hold a request from each side.
  struct Declined {
    int unit = 0, size = 0, merged = 0;
    int64_t from = 0, end = 0;
    double cost = 0;
  };
  mutable std::vector<Declined> declined_;
};

}  // namespace mcmclb
