// Balancer `collective(i)`: every group works i items (fewer if its chain ends), then all ranks exchange their
// groups' load over WORLD and regroup parent-collectively: each maximal run of finished groups merges with the
// first unfinished group to its right, which keeps its chain. Finished groups with no unfinished group to their
// right are done for good but still take part in the exchanges, which are collective over WORLD. Waiting for the
// slowest group at each exchange is the cost this balancer pays; the waiting ranks sleep in a nonblocking
// allreduce instead of spinning.
//
// What the exchange sends, and why that is all a fair collective balancer needs:
//  - The merge rule reads one fact per group: is its chain done? Everything else it needs is already known on
//    every rank. The group boundaries are, because every rank applies the same rule to the same facts after every
//    exchange (and the initial groups are known to all). Which chain each group works is, because a merged group
//    continues its right-hand group's chain. A group that is done for good stays done.
//  - So the exchange is one bit per group that may still be working, set by that group's leader: an allreduce of
//    ceil(groups / 64) words over WORLD (each bit has one writer, so the sum is the bitwise or). At 8192 ranks in
//    groups of 4 that is 256 bytes, where an allgather of every rank's full state was 320 KiB received per rank.
//  - The only state the rule does not decide is how far the continued chain has got (next item, items left).
//    Only the merged group's own members need it, and only the continuing group's members know it, so after the
//    communicator is created its last rank (always one of them) broadcasts it over the new group: log |group|
//    steps among the members, instead of every rank learning every group's state at every exchange.
// The decisions are identical on every rank by construction: the same table, the same bits, the same rule.
#include <algorithm>
#include <optional>

#include "mcmclb/balancer.hpp"
#include "mcmclb/text.hpp"

namespace mcmclb {

namespace {

constexpr int kBitsPerWord = 64;

class CollectiveBalancer final : public Balancer {
 public:
  explicit CollectiveBalancer(int interval) : interval_(interval) {}

  void run(Kernel& k) override {
    groups_ = initial_groups(k);
    for (;;) {
      if (k.in_group()) work_interval(k);
      exchange(k);
      if (!regroup(k)) break;
    }
    k.finish();
  }

 private:
  /// One entry of the table every rank keeps: a group's bounds, its chain, and whether it is known to be done.
  struct Entry {
    int first = 0;
    int last = 0;
    int unit = -1;  // the unit of chains it works (mcmclb/kernel.hpp)
    bool done = false;
  };

  /// The initial groups, in rank order, as every rank knows them (the kernel formed them from the same sizes).
  static std::vector<Entry> initial_groups(const Kernel& k) {
    std::vector<Entry> groups;
    int first = 0;
    for (int size : k.initial_sizes()) {
      groups.push_back({first, first + size - 1, static_cast<int>(groups.size()), false});
      first += size;
    }
    return groups;
  }

  void work_interval(Kernel& k) const {
    // Every member knows when the chain is done (it works the same items), so no per-item decision is sent.
    for (int worked = 0; worked < interval_ && !k.group().finished(); ++worked) k.work_one_item();
  }

  /// Learns which groups that may still work are done: one bit per such group, from its leader.
  void exchange(Kernel& k) {
    auto timer = k.timed(Phase::waiting);
    std::vector<std::size_t> open;  // table indices of the groups not known to be done
    for (std::size_t i = 0; i < groups_.size(); ++i) {
      if (!groups_[i].done) open.push_back(i);
    }
    std::vector<int64_t> bits((open.size() + kBitsPerWord - 1) / kBitsPerWord, 0);
    if (k.is_leader() && k.group().finished()) {
      const auto at =
          std::find_if(open.begin(), open.end(), [&](std::size_t i) { return groups_[i].first == k.rank(); });
      const auto slot = static_cast<std::size_t>(at - open.begin());
      bits[slot / kBitsPerWord] = int64_t{1} << (slot % kBitsPerWord);
    }
    pace::allreduce_sum(k.world().get(), bits);
    for (std::size_t slot = 0; slot < open.size(); ++slot) {
      if ((bits[slot / kBitsPerWord] >> (slot % kBitsPerWord)) & 1) groups_[open[slot]].done = true;
    }
  }

  /// Applies the merge rule to the table (identical on every rank). Returns false when every chain is done.
  bool regroup(Kernel& k) {
    std::vector<Entry> next;
    std::optional<Entry> mine_next;
    std::string before;
    bool any_merge = false;
    std::size_t run_start = 0;  // the finished run pending to the left of the current group
    for (std::size_t i = 0; i < groups_.size(); ++i) {
      const Entry& g = groups_[i];
      if (g.done) continue;
      const Entry merged{groups_[run_start].first, g.last, g.unit, false};
      if (run_start < i) {  // merge groups[run_start..i] into one group continuing g's chain
        any_merge = true;
        if (merged.first <= k.rank() && k.rank() <= merged.last) {
          mine_next = merged;
          std::vector<std::string> ranges;
          for (std::size_t j = run_start; j <= i; ++j) {
            ranges.push_back(std::to_string(groups_[j].first) + "-" + std::to_string(groups_[j].last));
          }
          before = join(ranges, " ");
        }
      }
      next.push_back(merged);
      run_start = i + 1;
    }
    if (next.empty()) return false;
    // Finished groups with no unfinished group to their right are done for good (and stay in the table, done).
    bool end_mine = false;
    for (std::size_t j = run_start; j < groups_.size(); ++j) {
      next.push_back(groups_[j]);
      end_mine |= groups_[j].first <= k.rank() && k.rank() <= groups_[j].last;
    }
    groups_ = std::move(next);
    if (end_mine && k.in_group()) k.leave_group();
    if (!any_merge) return true;
    // Parent-collective: every rank takes part.
    if (!mine_next) {
      k.regroup_without_joining();
      return true;
    }
    // The continuing group's members know how far its chain has got; the joiners learn it from the new group's
    // last rank, one of those members (ChainProgress::from_last).
    GroupState merged{mine_next->first, mine_next->last, mine_next->unit, 0, 0};
    if (k.in_group() && k.group().unit == merged.unit) {
      merged.next_item = k.group().next_item;
      merged.items_left = k.group().items_left;
    }
    k.regroup(merged, before, -1, ChainProgress::from_last);
    return true;
  }

  int interval_;
  std::vector<Entry> groups_;
};

}  // namespace

BalancerEntry collective_balancer() {
  return {{.name = "collective",
           .uses_interval = true,
           .regroups = true,
           .default_method = "create",
           .methods = {"create", "split", "range"},
           .initial_method = "create"},
          [](const RunSpec& run) -> std::unique_ptr<Balancer> {
            return std::make_unique<CollectiveBalancer>(run.interval);
          }};
}

}  // namespace mcmclb
