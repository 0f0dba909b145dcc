// Balancer `async`: point-to-point merge requests followed by group-collective regrouping (Dinan et al., 4.2).
//
// Protocol (control messages on the kernel's private duplicate of WORLD; groups are contiguous rank ranges and
// a group's leader is its first rank):
//  1. A group whose chain is done sends REQUEST{first, last} from its leader to the rank after its last rank,
//     the leader of its right neighbour, and waits for the ANSWER. While done and waiting it takes no requests.
//  2. A working group's leader checks for a REQUEST (only its left neighbour's leader sends it one) once after
//     each item (the polling point). On one it answers MERGE{merged group, chain state}; both groups then create
//     the communicator over exactly their members, and the merged group continues the right group's chain at
//     T/|merged| ms per item. Its leader is the left group's leader.
//  3. What a finished group does when no working group is left to its right is the run's `finished` rule:
//     - retire: the rightmost group, when done, ends. An ended group's leader (unless it is rank 0) waits for the
//       one REQUEST its left neighbour will send and answers ENDED; that group then ends too.
//     - coalesce: finished groups keep merging until one group spans every rank. The rightmost group, when done
//       and not spanning every rank, waits for its left neighbour's REQUEST and answers MERGE (the merged group
//       has no work left, and is again the rightmost). A done group takes a REQUEST that has already arrived
//       before it asks its right neighbour (merging with its left neighbour), and only then asks.
//
// Why it terminates without deadlock, for every workload, jitter, timing and rule:
//  - Each chain is finite and groups only grow, so every working group finishes its chain in finite time. Every
//    merge joins two adjacent groups, so there are at most (initial groups - 1) merges.
//  - Every rank that leads a group at some point was an initial leader, and every initial leader L > 0 receives
//    exactly one REQUEST in the whole run: from the group holding rank L-1, which sends exactly once, when it is
//    done and (coalesce) has taken no request of its own left neighbour first; afterwards that group is merged
//    with L's (L leads no more) or has ended (sends nothing more). Taking a left request keeps the group's last
//    rank, so the group holding L-1 is still the one that will send.
//  - A REQUEST is answered once its receiver's group is working (at its next polling point), ended (retire), or
//    done and the rightmost (coalesce: it waits for that very REQUEST). A done group waits only on its right
//    neighbour, and the rightmost group never waits on a right neighbour, so waits that point right form chains
//    that end at a working group (it finishes or merges in finite time), an ended group (it answers) or the
//    rightmost group; by induction from the right, every waiting group is answered.
//  - coalesce: the rightmost done group waits on its left neighbour, which is working (it finishes), or done:
//    then it either sends its REQUEST (the wait ends) or first takes its own left neighbour's, which removes a
//    group; there are finitely many groups, so it sends. With every chain done and one group left, that group
//    spans every rank and ends.
//  - An ended leader waits only for the single REQUEST that is certain to come, so every rank finishes, and no
//    control message is left unreceived (the kernel checks this after every run).
#include <array>
#include <stdexcept>
#include <string>

#include "mcmclb/balancer.hpp"

namespace mcmclb {

namespace {

constexpr int kRequestTag = 1;
// This balancer's decisions (mcmclb/kernel.hpp): merge with the group named in the payload; or, answered to a
// request, the asked group has ended.
constexpr int64_t kMerge = Decision::kFirstBalancerKind;
constexpr int64_t kEnded = Decision::kFirstBalancerKind + 1;
// Within a done group only (coalesce): the leader has taken the left neighbour's request; answer it and merge.
constexpr int64_t kTakeLeft = Decision::kFirstBalancerKind + 2;
constexpr int kAnswerTag = 2;
/// Sends and waits politely: control messages are tiny, but the receiver may be busy working an item.
template <std::size_t N>
void send(const Kernel& k, const std::array<int64_t, N>& words, int dest, int tag) {
  MPI_Request request = MPI_REQUEST_NULL;
  mpi::check(MPI_Isend(words.data(), static_cast<int>(N), MPI_INT64_T, dest, tag, k.control().get(), &request),
             "MPI_Isend");
  pace::wait(request);
}

template <std::size_t N>
std::array<int64_t, N> receive(const Kernel& k, int source, int tag) {
  std::array<int64_t, N> words{};
  MPI_Request request = MPI_REQUEST_NULL;
  mpi::check(MPI_Irecv(words.data(), static_cast<int>(N), MPI_INT64_T, source, tag, k.control().get(), &request),
             "MPI_Irecv");
  pace::wait(request);
  return words;
}

/// A request names the sender's group; it must be our left neighbour (groups stay contiguous).
void check_from_left_neighbour(const GroupState& g, const std::array<int64_t, 2>& left) {
  if (left[1] != g.first - 1 || left[0] > left[1]) {
    throw std::logic_error("async: merge request from group " + std::to_string(left[0]) + "-" +
                           std::to_string(left[1]) + " reached group " + g.range() +
                           ", which is not its right neighbour");
  }
}

class AsyncBalancer final : public Balancer {
 public:
  explicit AsyncBalancer(FinishedRule rule) : rule_(rule) {}

  void run(Kernel& k) override {
    // Every initial leader but rank 0 receives exactly one request in the whole run (see above), so its receive
    // is posted once, now. A posted receive is matched as soon as the library progresses; with MPICH ch4:ucx a
    // bare MPI_Iprobe after a long item checks before it progresses and misses a request that arrived during
    // the item (measured: found on the second call), which would cost the sender a whole extra item.
    if (k.is_leader() && k.group().first > 0) {
      mpi::check(
          MPI_Irecv(request_.data(), 2, MPI_INT64_T, MPI_ANY_SOURCE, kRequestTag, k.control().get(), &pending_request_),
          "MPI_Irecv");
    }
    for (;;) {
      work_until_done(k);
      if (!merge_after_done(k)) break;
    }
    end(k);
  }

 private:
  /// The polling point's check: has our left neighbour's request arrived?
  bool request_arrived() {
    if (pending_request_ == MPI_REQUEST_NULL) return false;
    int done = 0;
    mpi::check(MPI_Test(&pending_request_, &done, MPI_STATUS_IGNORE), "MPI_Test");
    return done != 0;
  }

  /// Works the chain, taking merge requests from the left at every polling point.
  void work_until_done(Kernel& k) {
    while (!k.group().finished()) {
      k.work_one_item();
      const GroupState& g = k.group();
      Decision d;
      d.kind = g.finished() ? Decision::kDone : Decision::kContinue;
      if (k.is_leader() && !g.finished() && request_arrived()) {
        check_from_left_neighbour(g, request_);
        d.kind = kMerge;
        d.next = {static_cast<int>(request_[0]), g.last, g.chain, g.next_item, g.items_left};
        d.other_first = request_[0];
        d.other_last = request_[1];
      }
      d = k.agree(d);
      if (d.kind == kMerge) {
        const GroupState before = k.group();
        if (k.is_leader()) send(k, d.to_words(), static_cast<int>(d.other_first), kAnswerTag);
        k.regroup(d.next, std::to_string(d.other_first) + "-" + std::to_string(d.other_last) + " " + before.range());
      }
    }
  }

  /// The chain is done: asks the right neighbour to merge, or (coalesce) takes the left neighbour's request.
  /// Returns true if merged (the merged group goes on), false if this group ends: retire, when it is the
  /// rightmost or its right neighbour has ended; coalesce, when it spans every rank.
  bool merge_after_done(Kernel& k) {
    const GroupState g = k.group();
    const bool rightmost = g.last == k.nprocs() - 1;
    const bool coalesce = rule_ == FinishedRule::coalesce;
    if (rightmost && (!coalesce || g.first == 0)) return false;
    Decision d;
    {
      auto timer = k.timed(Phase::waiting);
      if (k.is_leader()) {
        if (coalesce && (rightmost || request_arrived())) {
          if (pending_request_ != MPI_REQUEST_NULL) pace::wait(pending_request_);
          check_from_left_neighbour(g, request_);
          d.kind = kTakeLeft;
          d.next = {static_cast<int>(request_[0]), g.last, g.chain, g.next_item, g.items_left};
          d.other_first = request_[0];
          d.other_last = request_[1];
        } else {
          send(k, std::array<int64_t, 2>{g.first, g.last}, g.last + 1, kRequestTag);
          d = Decision::from_words(receive<std::tuple_size_v<Decision::Words>>(k, g.last + 1, kAnswerTag));
        }
      }
    }
    d = k.agree(d, Phase::waiting);
    if (d.kind == kTakeLeft) {
      if (k.is_leader()) {
        Decision answer = d;
        answer.kind = kMerge;
        send(k, answer.to_words(), static_cast<int>(d.other_first), kAnswerTag);
      }
      k.regroup(d.next, std::to_string(d.other_first) + "-" + std::to_string(d.other_last) + " " + g.range());
      return true;
    }
    if (d.kind != kMerge) return false;
    k.regroup(d.next, g.range() + " " + std::to_string(g.last + 1) + "-" + std::to_string(d.next.last));
    return true;
  }

  /// This group ends; its leader answers the one request its left neighbour is certain to send.
  void end(Kernel& k) {
    const GroupState g = k.group();
    const bool leader = k.is_leader();
    k.leave_group();
    if (leader && g.first > 0) {
      auto timer = k.timed(Phase::waiting);
      pace::wait(pending_request_);
      check_from_left_neighbour(g, request_);
      Decision ended;
      ended.kind = kEnded;
      send(k, ended.to_words(), static_cast<int>(request_[0]), kAnswerTag);
    }
    if (pending_request_ != MPI_REQUEST_NULL) {
      throw std::logic_error("async: rank " + std::to_string(k.rank()) + " ends with its merge request unreceived");
    }
    k.finish();
  }

  FinishedRule rule_;
  std::array<int64_t, 2> request_{};  // {first, last} of the requesting group
  MPI_Request pending_request_ = MPI_REQUEST_NULL;
};

}  // namespace

BalancerEntry async_balancer() {
  return {{.name = "async",
           .uses_interval = false,
           .regroups = true,
           .default_method = "intercomm",
           .methods = {"intercomm", "create_group", "from_group", "range"},
           .initial_method = "intercomm",
           .finished_rules = {FinishedRule::retire, FinishedRule::coalesce}},
          [](const RunSpec& run) -> std::unique_ptr<Balancer> {
            return std::make_unique<AsyncBalancer>(run.finished.value_or(FinishedRule::retire));
          }};
}

}  // namespace mcmclb
