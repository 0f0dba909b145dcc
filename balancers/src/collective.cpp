// Balancer `collective(i)`: every group works i items (fewer if its chain ends), then all ranks exchange their
// groups' remaining load over WORLD and regroup parent-collectively: each maximal run of finished groups merges
// with the first unfinished group to its right, which keeps its chain. Finished groups with no unfinished group
// to their right are done for good but still take part in the exchanges, which are collective over WORLD.
// Waiting for the slowest group at each exchange is the cost this balancer pays; the waiting ranks sleep in a
// nonblocking allgather instead of spinning.
#include <algorithm>
#include <optional>

#include "mcmclb/balancer.hpp"
#include "mcmclb/text.hpp"

namespace mcmclb {

namespace {

constexpr int kWords = std::tuple_size_v<GroupState::Words>;

class CollectiveBalancer final : public Balancer {
 public:
  explicit CollectiveBalancer(int interval) : interval_(interval) {}

  void run(Kernel& k) override {
    for (;;) {
      if (k.in_group()) work_interval(k);
      const std::vector<GroupState> groups = exchange(k);
      if (!regroup(k, groups)) break;
    }
    k.finish();
  }

 private:
  void work_interval(Kernel& k) const {
    for (int worked = 0; worked < interval_ && !k.group().finished(); ++worked) {
      k.work_one_item();
      Decision d;
      d.kind = k.group().finished() ? Decision::kDone : Decision::kContinue;
      (void)k.agree(d);
    }
  }

  /// Every group's state, in rank order (ended ranks as finished singletons with chain -1).
  static std::vector<GroupState> exchange(Kernel& k) {
    auto timer = k.timed(Phase::waiting);
    const GroupState& g = k.group();
    const bool ended = !k.in_group();
    const GroupState::Words mine = ended ? GroupState{k.rank(), k.rank(), -1, g.next_item, 0}.to_words() : g.to_words();
    std::vector<int64_t> all(static_cast<std::size_t>(kWords * k.nprocs()));
    MPI_Request request = MPI_REQUEST_NULL;
    mpi::check(
        MPI_Iallgather(mine.data(), kWords, MPI_INT64_T, all.data(), kWords, MPI_INT64_T, k.world().get(), &request),
        "MPI_Iallgather");
    pace::wait(request);
    std::vector<GroupState> groups;
    for (int r = 0; r < k.nprocs(); ++r) {
      GroupState::Words w{};
      std::copy_n(all.begin() + static_cast<std::ptrdiff_t>(kWords * r), kWords, w.begin());
      if (w[0] != r) continue;  // one entry per group: its first rank's
      groups.push_back(GroupState::from_words(w));
    }
    return groups;
  }

  /// Applies the merge rule to groups (identical on every rank). Returns false when every chain is done.
  static bool regroup(Kernel& k, const std::vector<GroupState>& groups) {
    bool any_unfinished = false;
    bool any_merge = false;
    std::optional<GroupState> mine_next;
    std::string before;
    bool end_mine = false;
    std::size_t run_start = 0;  // the finished run pending to the left of the current group
    for (std::size_t i = 0; i < groups.size(); ++i) {
      const GroupState& g = groups[i];
      if (g.finished()) continue;
      any_unfinished = true;
      if (run_start < i) {  // merge groups[run_start..i] into one group continuing g's chain
        any_merge = true;
        const GroupState merged{groups[run_start].first, g.last, g.chain, g.next_item, g.items_left};
        if (merged.contains(k.rank())) {
          mine_next = merged;
          std::vector<std::string> ranges;
          for (std::size_t j = run_start; j <= i; ++j) ranges.push_back(groups[j].range());
          before = join(ranges, " ");
        }
      }
      run_start = i + 1;
    }
    if (!any_unfinished) return false;
    // Finished groups with no unfinished group to their right are done for good.
    for (std::size_t j = run_start; j < groups.size(); ++j) end_mine |= groups[j].contains(k.rank());
    if (end_mine && k.in_group()) k.leave_group();
    if (any_merge) {  // parent-collective: every rank takes part
      if (mine_next) {
        k.regroup(*mine_next, before);
      } else {
        k.regroup_without_joining();
      }
    }
    return true;
  }

  int interval_;
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
