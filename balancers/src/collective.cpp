// SPDX-License-Identifier: BSD-3-Clause
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
//
// The finished rule pays (the paper's rule is retire: every finished run merges): a finished run joins only as
// many of its groups as make the merge pay most (Kernel::merge_margin_s, the nearest groups first, as groups stay
// contiguous), and none if no number pays; the groups it leaves out are done for good, unless some number of them
// would pay from a later polling point of the working group's unit on (Kernel::merge_outlook: with several chains
// per group, items that a larger group works slower can come first): those stay done and eligible, and are weighed
// again after the next exchange. Either way they stay in the table; the run still ends when no chain is left.
// Merges that pay are not enough: every exchange makes every group wait for the slowest one. So under pays the run
// first predicts its own schedule from the model (exchanging_pays: each interval as long as its slowest group, an
// exchange and the merges' creation after it) and, unless that ends sooner than the longest unit worked alone,
// works as under none, with no exchange at all. An application's chains planned from measured costs
// (mcmclb::walkers) have nothing to predict from before the run, so they exchange; each exchange then also sums what
// every rank has measured (eight words more, the spread included), so that every rank decides from the same estimate.
// The rule needs the working groups' positions in their chains, and those too are known everywhere without a word more:
// every group works exactly min(i, items left) items between two exchanges, and a merged group continues its right-hand
// group's position. So every rank keeps every group's position in the table and the exchange stays the one bit per
// group (each bit is checked against the position it implies). When no merge can ever pay (Kernel::merging_can_pay),
// there are no exchanges at all: every group works its own chain as under none.
#include <algorithm>
#include <array>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>

#include "mcmclb/balancer.hpp"
#include "mcmclb/mpi.hpp"
#include "mcmclb/text.hpp"
#include "protocol.hpp"

namespace mcmclb {

namespace {

constexpr int kBitsPerWord = 64;

class CollectiveBalancer final : public Balancer {
 public:
  CollectiveBalancer(int interval, FinishedRule rule) : interval_(interval), pays_(rule == FinishedRule::pays) {}

  void run(Kernel& k) override {
    if (protocol::worked_alone_as_nothing_pays(k, pays_)) return;
    if (pays_ && !exchanging_pays(k)) {  // every group works its own chains, as under none
      protocol::work_alone(k);
      return;
    }
    groups_ = share(initial_groups(k));
    for (;;) {
      if (k.in_group()) work_interval(k);
      if (!regroup(k, exchange(k))) break;
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
    bool retired = false;    // pays: done and left out of a merge, so done for good
    int64_t next_item = 0;   // its position in its unit's items after the latest exchange
    int64_t items_left = 0;  //
    bool operator==(const Entry&) const = default;
  };
  using Table = std::vector<Entry>;

  /// The table as this rank holds it. The simulation build's ranks share one copy of each table: every rank
  /// computes the same tables in the same order (above), and in the simulation's one process (-no-privatize) a copy
  /// per rank cost 32 bytes x groups on each, O(P^2) in all (about 2 GiB of 4 at 16,384 ranks in groups of 4).
  /// The table a rank makes is compared with those still held and replaced by the equal one.
  static std::shared_ptr<const Table> share(Table table) {
    auto made = std::make_shared<const Table>(std::move(table));
    if constexpr (!mpi::kSimulated) return made;
    static std::mutex mutex;
    static std::vector<std::weak_ptr<const Table>> held;
    const std::scoped_lock lock(mutex);
    std::erase_if(held, [](const std::weak_ptr<const Table>& t) { return t.expired(); });
    for (const std::weak_ptr<const Table>& t : held) {
      if (auto same = t.lock(); same && *same == *made) return same;
    }
    held.push_back(made);
    return made;
  }

  /// The initial groups, in rank order, as every rank knows them (the kernel formed them from the same sizes).
  static std::vector<Entry> initial_groups(const Kernel& k) {
    std::vector<Entry> groups;
    int first = 0;
    for (int size : k.initial_sizes()) {
      const int unit = static_cast<int>(groups.size());
      int64_t items = 0;
      for (int c = unit * k.chains_per_group(); c < (unit + 1) * k.chains_per_group(); ++c) items += k.chain_length(c);
      groups.push_back({.first = first, .last = first + size - 1, .unit = unit, .items_left = items});
      first += size;
    }
    return groups;
  }

  void work_interval(Kernel& k) const {
    // Every member knows when the chain is done (it works the same items), so no per-item decision is sent.
    for (int worked = 0; worked < interval_ && !k.group().finished(); ++worked) k.work_one_item();
  }

  /// Learns which groups that may still work are done: one bit per such group, from its leader. Returns the table
  /// with what the bits imply: this rank's own copy, which regroup() drops before its next MPI call (else every
  /// simulated rank would hold one through the creation).
  Table exchange(Kernel& k) const {
    auto timer = k.timed(Phase::waiting);
    // The groups not known to be done, in table order, are the bits' slots; counted, not listed, as the list would
    // be held by every rank through the reduction.
    std::size_t open = 0;
    std::optional<std::size_t> mine;
    const bool report = k.is_leader() && k.group().finished();
    for (const Entry& g : *groups_) {
      if (g.done) continue;
      if (report && g.first == k.rank()) mine = open;
      ++open;
    }
    std::vector<int64_t> bits((open + kBitsPerWord - 1) / kBitsPerWord, 0);
    if (mine) bits[*mine / kBitsPerWord] = int64_t{1} << (*mine % kBitsPerWord);
    // Under pays with measured costs the decisions below need one estimate on every rank: the world's, summed in
    // the same reduction (its words, with their spread, after the bits).
    const bool agree = pays_ && k.measuring();
    const std::size_t words = bits.size();
    if (agree) {
      const ItemEstimate::WorldWords share = k.item_estimate().world_words();
      bits.insert(bits.end(), share.begin(), share.end());
    }
    pace::allreduce_sum(k.world().get(), bits);
    if (agree) {
      ItemEstimate::WorldWords sums{};
      std::copy_n(bits.begin() + static_cast<std::ptrdiff_t>(words), sums.size(), sums.begin());
      k.use_world_estimate(sums);
    }
    Table table = *groups_;
    std::size_t slot = 0;
    for (Entry& g : table) {
      if (g.done) continue;
      if ((bits[slot / kBitsPerWord] >> (slot % kBitsPerWord)) & 1) g.done = true;
      ++slot;
      // The interval every open group has just worked (work_interval), and what that implies.
      const int64_t worked = std::min<int64_t>(interval_, g.items_left);
      g.next_item += worked;
      g.items_left -= worked;
      if (g.done != (g.items_left == 0)) {
        throw std::logic_error("collective: group " + std::to_string(g.first) + "-" + std::to_string(g.last) +
                               (g.done ? " is done with items left" : " has no items left but is not done"));
      }
    }
    return table;
  }

  /// How many of the finished groups [from, to) next to unfinished group u join it: all of them (retire), or
  /// (pays) the number, nearest first, whose merge pays most; none when no number pays. later: (pays) whether the
  /// groups left out might still join u at a later exchange (Kernel::merge_outlook: some number of them would pay
  /// from a later polling point of u's unit on).
  std::size_t joiners(const Kernel& k, const std::vector<Entry>& groups, std::size_t from, std::size_t to,
                      const Entry& u, bool& later) const {
    later = false;
    if (!pays_) return to - from;
    const GroupState g{u.first, u.last, u.unit, u.next_item, u.items_left};
    // The count that pays most by the point estimate; where none does, measured costs are weighed at the high end
    // of their spread, as Kernel::merge_pays weighs them: a count that pays there is taken (the spread spans both
    // choices, and a merge is what the rule takes where the measurement cannot tell).
    std::size_t best = 0, best_high = 0;
    double best_margin = 0, best_high_margin = 0;
    for (std::size_t j = 1; j <= to - from; ++j) {
      const int ranks = u.first - groups[to - j].first;
      const double margin = k.merge_margin_s(g, ranks);
      if (margin > best_margin) {
        best = j;
        best_margin = margin;
      }
      const double high = k.merge_margin_s(g, ranks, ItemEstimate::End::high);
      if (high > best_high_margin) {
        best_high = j;
        best_high_margin = high;
      }
      later = later || k.merge_outlook(g, ranks) == Kernel::Outlook::later;
    }
    return best > 0 ? best : best_high;
  }

  /// What the merge rule makes of a table after an exchange, as seen from one rank (rank < 0: from none, for the
  /// prediction): the next table, whether any chain is still worked, and this rank's part.
  struct Step {
    std::vector<Entry> next;
    bool working = false;       // some group's chain is not done
    bool any_merge = false;     // some groups merge (parent-collective: every rank takes part)
    int largest_merge = 0;      // ranks in the largest merged group
    std::optional<Entry> mine;  // the merged group this rank joins
    std::string before;         // the groups it merges, for the event log
    bool end_mine = false;      // this rank's group is done for good
  };

  /// Applies the merge rule to the table (identical on every rank for the same table).
  Step step(const Kernel& k, const std::vector<Entry>& groups, int rank) const {
    Step s;
    const auto holds = [rank](const Entry& e) { return e.first <= rank && rank <= e.last; };
    std::size_t run_start = 0;  // the finished run pending to the left of the current group
    for (std::size_t i = 0; i < groups.size(); ++i) {
      const Entry& g = groups[i];
      if (g.retired) {
        s.next.push_back(g);
        run_start = i + 1;
        continue;
      }
      if (g.done) continue;
      s.working = true;
      // The finished groups left out (pays) are done for good unless they might join g later; the others merge
      // with g.
      bool later = false;
      const std::size_t join_from = i - joiners(k, groups, run_start, i, g, later);
      for (std::size_t j = run_start; j < join_from; ++j) {
        s.next.push_back(groups[j]);
        if (later) continue;  // still done and eligible: weighed again after the next exchange
        s.next.back().retired = true;
        s.end_mine |= holds(groups[j]);
      }
      run_start = join_from;
      const Entry merged{.first = groups[run_start].first,
                         .last = g.last,
                         .unit = g.unit,
                         .next_item = g.next_item,
                         .items_left = g.items_left};
      if (run_start < i) {  // merge groups[run_start..i] into one group continuing g's chain
        s.any_merge = true;
        s.largest_merge = std::max(s.largest_merge, merged.last - merged.first + 1);
        if (holds(merged)) {
          s.mine = merged;
          std::vector<std::string> ranges;
          for (std::size_t j = run_start; j <= i; ++j) {
            ranges.push_back(std::to_string(groups[j].first) + "-" + std::to_string(groups[j].last));
          }
          s.before = join(ranges, " ");
        }
      }
      s.next.push_back(merged);
      run_start = i + 1;
    }
    // Finished groups with no unfinished group to their right are done for good (and stay in the table, done).
    for (std::size_t j = run_start; j < groups.size(); ++j) {
      s.next.push_back(groups[j]);
      s.end_mine |= holds(groups[j]);
    }
    return s;
  }

  /// Applies the merge rule to the table after an exchange and regroups. Returns false when every chain is done.
  bool regroup(Kernel& k, Table after_exchange) {
    Step s = step(k, after_exchange, k.rank());
    Table().swap(after_exchange);
    if (!s.working) return false;
    groups_ = share(std::move(s.next));
    if (s.end_mine && k.in_group()) k.leave_group();
    if (!s.any_merge) return true;
    // Parent-collective: every rank takes part.
    if (!s.mine) {
      k.regroup_without_joining();
      return true;
    }
    // The continuing group's members know how far its chain has got; the joiners learn it from the new group's
    // last rank, one of those members (ChainProgress::from_last).
    GroupState merged{s.mine->first, s.mine->last, s.mine->unit, 0, 0};
    if (k.in_group() && k.group().unit == merged.unit) {
      merged.next_item = k.group().next_item;
      merged.items_left = k.group().items_left;
    }
    k.regroup(merged, s.before, -1, ChainProgress::from_last);
    return true;
  }

  /// pays: the run's time predicted from the model (every rank alike): each interval lasts as long as its slowest
  /// group's items, then one exchange over every rank (a reduction at P ranks) and, when groups merge, one
  /// parent-collective creation; against the time of the longest unit worked alone (none). Waiting for the slowest
  /// group at every exchange is a cost the merges must also recover.
  bool exchanging_pays(const Kernel& k) const {
    if (k.measuring()) return true;  // nothing is measured yet to predict from
    const MergeModel& model = k.merge_model();
    const double exchange_s = model.at(k.nprocs()).reduce_s;
    std::vector<Entry> groups = initial_groups(k);
    double alone_s = 0;
    for (const Entry& g : groups) {
      const GroupState state{g.first, g.last, g.unit, 0, g.items_left};
      double unit_s = 0;
      for (int64_t i = 0; i < g.items_left; ++i) unit_s += k.expected_item_s(state, i, state.size());
      alone_s = std::max(alone_s, unit_s);
    }
    double predicted_s = 0;
    for (;;) {
      double slowest_s = 0;
      for (Entry& g : groups) {
        if (g.done) continue;
        const GroupState state{g.first, g.last, g.unit, g.next_item, g.items_left};
        const int64_t worked = std::min<int64_t>(interval_, g.items_left);
        double interval_s = 0;
        for (int64_t i = 0; i < worked; ++i) interval_s += k.expected_item_s(state, i, state.size());
        slowest_s = std::max(slowest_s, interval_s);
        g.next_item += worked;
        g.items_left -= worked;
        g.done = g.items_left == 0;
      }
      predicted_s += slowest_s + exchange_s;
      if (predicted_s >= alone_s) return false;
      Step s = step(k, groups, -1);
      if (!s.working) return true;
      if (s.any_merge) predicted_s += model.regroup_s(s.largest_merge);
      groups = std::move(s.next);
    }
  }

  int interval_;
  bool pays_;  // the finished rule pays (else retire, the paper's)
  std::shared_ptr<const Table> groups_;
};

}  // namespace

BalancerEntry collective_balancer() {
  return {{.name = "collective",
           .uses_interval = true,
           .regroups = true,
           .default_method = "create",
           .methods = {"create", "split", "range"},
           .initial_method = "create",
           .finished_rules = {FinishedRule::retire, FinishedRule::pays}},
          [](const RunSpec& run) -> std::unique_ptr<Balancer> {
            return std::make_unique<CollectiveBalancer>(run.interval, run.finished.value_or(FinishedRule::retire));
          }};
}

}  // namespace mcmclb
