// The MCMC walker-group kernel's per-rank runtime (Dinan et al., Sect. 4.2): the group this rank works in, the
// emulated items, the polling point, regrouping, and the bookkeeping every run reports (time split per rank,
// regroup events, invariant counters). Balancers (balancers/) drive it.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mcmclb/group.hpp"
#include "mcmclb/mpi.hpp"
#include "mcmclb/pace.hpp"
#include "mcmclb/run_spec.hpp"
#include "mcmclb/run_stats.hpp"

namespace mcmclb {

/// A walker group: the contiguous world ranks [first, last] working one chain. Groups stay contiguous because
/// every merge joins a group with its right neighbour.
struct GroupState {
  int first = 0;
  int last = 0;
  int chain = -1;          // index of the chain worked (chain c started in the group led by rank c*G)
  int64_t next_item = 0;   // index in that chain of the next item to work
  int64_t items_left = 0;  // items of the chain not worked yet
  [[nodiscard]] int size() const noexcept { return last - first + 1; }
  [[nodiscard]] bool finished() const noexcept { return items_left == 0; }
  [[nodiscard]] bool contains(int rank) const noexcept { return first <= rank && rank <= last; }
  [[nodiscard]] std::string range() const { return std::to_string(first) + "-" + std::to_string(last); }

  /// The state as words, for messages; from_words(to_words(g)) == g.
  using Words = std::array<int64_t, 5>;
  [[nodiscard]] Words to_words() const noexcept { return {first, last, chain, next_item, items_left}; }
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

/// Where a rank's time goes; the four parts add up to its elapsed time.
enum class Phase { work, polling, waiting, regroup };

class Kernel {
 public:
  /// Collective over MPI_COMM_WORLD. chain_items[c] is S of chain c; method creates every group communicator.
  Kernel(const RunSpec& run, std::vector<int64_t> chain_items, const std::string& method);
  ~Kernel();
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;

  // --- set-up (untimed) ---
  /// Forms the initial walker groups of G consecutive ranks. count_as_regroup: the initial formation counts in
  /// the regroup statistics (balancers that regroup; see README, "Regroup counts").
  void form_initial_groups(bool count_as_regroup);
  /// Synchronised start: barrier, then the clock starts.
  void start();

  // --- what balancers use ---
  [[nodiscard]] const RunSpec& run() const noexcept { return run_; }
  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] int nprocs() const noexcept { return nprocs_; }
  [[nodiscard]] const GroupState& group() const noexcept { return group_; }
  [[nodiscard]] bool in_group() const noexcept { return group_comm_ != nullptr; }
  [[nodiscard]] bool is_leader() const noexcept { return in_group() && rank_ == group_.first; }
  [[nodiscard]] const mpi::Comm& world() const noexcept { return world_; }
  /// Private duplicate of WORLD for the balancers' control messages.
  [[nodiscard]] const mpi::Comm& control() const noexcept { return control_; }
  [[nodiscard]] GroupCommCreator& creator() noexcept { return *creator_; }
  [[nodiscard]] double now_s() const;  // since start()

  /// Works the group's next item: T/|group| ms (with jitter), counted for the invariants on the leader.
  void work_one_item();
  /// The polling point: the leader's decision, broadcast over the group (waiting politely). Timed as phase
  /// (polling; waiting where members wait for the leader to hear from another group).
  Decision agree(const Decision& leader_choice, Phase phase = Phase::polling);
  /// Creates the communicator over next with the group's other members (and, for a parent-collective method,
  /// with every world rank, the others calling regroup_without_joining) and switches to it. before describes
  /// the merged groups for the event log. Timed as regrouping.
  void regroup(const GroupState& next, const std::string& before);
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
  /// Per chain: items worked and the sum of their indices, counted once per group (on its leader).
  [[nodiscard]] const std::vector<int64_t>& items_counted() const noexcept { return items_counted_; }
  [[nodiscard]] const std::vector<int64_t>& index_sums() const noexcept { return index_sums_; }
  [[nodiscard]] int64_t comms_created() const noexcept { return comms_created_; }
  [[nodiscard]] int64_t comms_freed() const noexcept { return comms_freed_; }
  [[nodiscard]] bool finished() const noexcept { return finished_; }

 private:
  void add(Phase p, double seconds);
  /// Creates the communicator over next (none: take part in a parent-collective creation without joining),
  /// switches to it, counts it (if asked) and logs it as an event of this kind.
  void form(const std::optional<GroupState>& next, EventKind kind, const std::string& before, bool count_as_regroup);
  void switch_to(std::unique_ptr<GroupComm> comm, const GroupState& next);

  RunSpec run_;
  std::vector<int64_t> chain_items_;
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
  std::vector<int64_t> items_counted_, index_sums_;
  int64_t comms_created_ = 0, comms_freed_ = 0;
};

}  // namespace mcmclb
