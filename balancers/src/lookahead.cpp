// SPDX-License-Identifier: BSD-3-Clause
// Balancer `lookahead` (beyond the paper): async merge-right whose merges are agreed before the requesting
// group's chain ends, so neither the request's round trip nor the partner's polling point is waited for when
// it can be planned. The lookahead window k is the run's `interval`, in items of the longest kind (T, a single
// rank's): a group asks once its remaining work is at most k*T, so k = 1 already reaches any partner's next
// polling point in time; k = 0 is no lookahead (the request leaves when the chain is done, as in `async`).
//
// Protocol (control messages on the kernel's control communicator; groups are contiguous rank ranges and
// a group's leader is its first rank; item costs are a pure function of (run, group size, chain, item), so a
// leader can predict when its group reaches any of its polling points):
//  1. REQUEST. A group L that is not the rightmost sends, from its leader, REQUEST{first, last, eta} to the rank
//     after its last rank (the leader of its right neighbour R) at the first polling point where at most k*T of
//     its work is left (or when its chain is done, whichever comes first); eta is when L's chain will be
//     done on the run's clock. L keeps working; it sends no second request before this one is answered.
//  2. PLAN. R's leader tests for a REQUEST at each polling point. It answers only when R has no request of its
//     own outstanding and R is not committed to another merge (else it defers: the request stays held and is
//     re-examined at later polling points). It then picks the polling point p of R's chain at which to merge:
//     the last one before eta (R's ranks wait for L from p to eta) or the first one after it (L's ranks wait
//     until p), whichever leaves fewer rank-seconds idle; a request whose eta has passed takes the current
//     polling point. If R's chain ends at or before p, R defers (merging there would give L no work). Otherwise
//     R answers PLAN{merged group, R's chain state at p, R's own eta} and is committed: at p it decides MERGE
//     and regroups into the planned group.
//  3. L, once its chain is done, waits for the answer (usually there already), broadcasts it to its members and
//     regroups into the planned group at once; the merged group continues R's chain from p, led by L's
//     leader. If L is done before R reaches p, L's ranks wait at the merged group's first polling point.
//  4. What a finished group does when no working group is left to its right is the run's `finished` rule:
//     retire: ENDED. The rightmost group, when done, ends. An ended group's leader (unless it is rank 0) waits
//     for the one REQUEST its left neighbour will send and answers ENDED; that group then ends too.
//     coalesce: finished groups keep merging until one group spans every rank. The rightmost group, when done
//     and not spanning every rank, waits for its left neighbour's REQUEST and answers PLAN for the current
//     point (the merged group has no work left and is again the rightmost). A done group that has not sent its
//     own request yet takes a REQUEST that has already arrived first (merging with its left neighbour).
//
// Why it terminates without deadlock, for every workload, jitter, timing and k:
//  - Chains are finite and groups only grow, so every working group finishes its chain in finite time.
//  - Each initial leader P > 0 receives exactly one REQUEST in the whole run: requests go to last + 1, a group's
//    last rank changes only when it merges right, and the group holding rank P-1 sends one request per last
//    rank; once answered, that group has merged with P's (P leads no more) or ended.
//  - A held REQUEST is answered in finite time. R defers it only (a) while R's own request is outstanding,
//    (b) while R is committed to a merge, or (c) when R's chain ends before the planned point. (b) ends at p, a
//    finite number of R's items away, and the merged group is led by the same rank, which holds the request.
//    (a) and (c) end when R's chain is done: R then waits for its own answer, which is a wait that points right;
//    waits only ever point right and the rightmost group never waits, so by induction from the right every
//    such wait ends, in a merge (R's leader leads the merged group and re-examines the request there) or an
//    end (R's leader answers ENDED). A merged group's chain is again finite, and once eta has passed a working
//    R plans the current polling point, so (c) recurs only on groups whose chain ends first; there are finitely
//    many chains, so eventually R is working past eta or ends.
//  - A PLAN commits both sides to one group and one item of R's chain: R stops after exactly the planned
//    items (its chain continues beyond p by construction), L joins as soon as it is done, the merged group's
//    first polling point waits for whichever side comes later. Every item is worked once by the group owning
//    its chain at that time.
//  - coalesce: there is no ENDED; a done group waits on its right neighbour as above, and the rightmost done
//    group waits on its left neighbour's REQUEST, which comes: that neighbour is working (it finishes), or done
//    and sends (or first takes its own left neighbour's request, which removes a group; finitely many). Every
//    merge removes a group, so the run ends with one group spanning every rank, its chain done.
//  - Every REQUEST is answered exactly once and every answer received, and each initial leader's one receive is
//    posted once and matched once, so no control message is left unreceived (the kernel checks after each run).
//
// Under the finished rule pays, R plans a merge only when it pays at p (Kernel::merge_outlook for R's chain from p:
// it ends sooner with L's ranks, the regrouping's measured cost included). When it would pay only from a later
// polling point on (several chains per group, items a larger group works slower first), R defers, as in (c) above:
// that ends within R's unit, at whose last item no later point is left. When it would pay at no point, R answers
// ENDED at once (L ends when its chain is done, as under retire when it asks an ended group) and goes on: one more
// way for a held REQUEST to be answered exactly once, so the argument above stands. When no merge can ever pay
// (Kernel::merging_can_pay), no REQUEST is sent at all: every group works its own chain as under none.
#include <algorithm>
#include <array>
#include <string>

#include "mcmclb/balancer.hpp"
#include "protocol.hpp"

namespace mcmclb {

namespace {

using protocol::Tag;

using RequestWords = std::array<int64_t, 3>;  // first, last, eta (microseconds on the run's clock)
constexpr int kAnswerWords = std::tuple_size_v<Decision::Words> + 1;
using Answer = std::array<int64_t, kAnswerWords>;  // the decision's words, then the answerer's eta (us)

class LookaheadBalancer final : public Balancer {
 public:
  LookaheadBalancer(int k, FinishedRule rule) : k_(k), rule_(rule) {}

  void run(Kernel& k) override {
    if (protocol::worked_alone_as_nothing_pays(k, rule_ == FinishedRule::pays)) return;
    left_.post(k);  // the one request this initial leader will receive
    for (;;) {
      work_until_done(k);
      if (!join_after_done(k)) break;
    }
    protocol::end_merge_right(
        k, left_, [&](const Decision& ended) { answer_left(k, ended, k.now_s()); }, committed_ >= 0 || own_sent_);
  }

 private:
  /// Leader: answers the held left request with d and our eta, and waits until the answer is sent.
  void answer_left(const Kernel& k, const Decision& d, double eta_s) {
    Answer words{};
    const Decision::Words dw = d.to_words();
    std::copy(dw.begin(), dw.end(), words.begin());
    words.back() = protocol::to_us(eta_s);
    left_.answer(k, words, Tag::lookahead_answer);
  }

  /// Leader, at a polling point of a working group: plan a merge with the held left request if the rules allow
  /// (see the protocol, step 2). Returns the number of further items before the merge, kDeferred, or kDeclined
  /// (the finished rule pays: the merge would not pay; the request is to be answered ENDED).
  static constexpr int64_t kDeferred = -1;
  static constexpr int64_t kDeclined = -2;
  int64_t plan_left(const Kernel& k) {
    const GroupState& g = k.group();
    if (own_sent_ || committed_ >= 0 || !left_.arrived()) return kDeferred;
    left_.check_from_left(g);
    const double now = k.now_s();
    const int64_t c = protocol::merge_point(k, g, now, protocol::from_us(left_.eta_us()), left_.size());
    if (c >= g.items_left) return kDeferred;  // R's chain ends first: L would get no work there
    const GroupState at_p{g.first, g.last, g.unit, g.next_item + c, g.items_left - c};
    if (rule_ != FinishedRule::pays) return c;
    switch (k.merge_outlook(at_p, left_.size())) {
      case Kernel::Outlook::now:
        return c;
      case Kernel::Outlook::later:
        return kDeferred;  // weighed again at the next polling point
      case Kernel::Outlook::never:
        break;
    }
    return kDeclined;
  }

  /// Works the chain; at each polling point the leader sends its own early request, answers a held one and
  /// counts down a committed merge.
  void work_until_done(Kernel& k) {
    while (!k.group().finished()) {
      Decision d = protocol::work_item(k);
      const GroupState& g = k.group();
      if (k.is_leader() && !g.finished()) {
        if (committed_ < 0) {
          const int64_t c = plan_left(k);
          if (c == kDeclined) {
            Decision ended;  // the merge would not pay: the requester ends when done, this group goes on
            ended.kind = protocol::kEnded;
            answer_left(k, ended, k.now_s() + protocol::time_to_finish(k, g));
          } else if (c >= 0) {
            plan_ = {static_cast<int>(left_.first()), g.last, g.unit, g.next_item + c, g.items_left - c};
            plan_before_ = protocol::merged_text(left_.first(), left_.last(), g.first, g.last);
            Decision answer;
            answer.kind = protocol::kMerge;
            answer.next = plan_;
            answer.other_first = g.first;
            answer.other_last = g.last;
            answer_left(k, answer, k.now_s() + protocol::time_to_finish(k, g));
            committed_ = c;
          }
        }
        if (committed_ == 0) {
          d.kind = protocol::kMerge;
          d.next = plan_;
          committed_ = -1;
        } else if (committed_ > 0) {
          --committed_;
        } else {
          maybe_send_own(k, g);
        }
      }
      d = k.agree(d);
      if (d.kind == protocol::kMerge) k.regroup(d.next, plan_before_);
    }
  }

  /// Leader of a working group not committed elsewhere: the early request once at most k items are left.
  void maybe_send_own(Kernel& k, const GroupState& g) {
    if (own_sent_ || g.last == k.nprocs() - 1) return;
    if (!protocol::finishes_within(k, g, k_ * k.window_item_ms() / 1000.0)) return;
    send_own(k, g, k.now_s() + protocol::time_to_finish(k, g));
  }

  void send_own(Kernel& k, const GroupState& g, double eta_s) {
    own_request_ = {g.first, g.last, protocol::to_us(eta_s)};
    protocol::post_send(k, own_request_, g.last + 1, Tag::lookahead_request, own_send_);
    protocol::post_receive(k, answer_, g.last + 1, Tag::lookahead_answer, answer_recv_);
    own_sent_ = true;
  }

  /// The chain is done: takes the right neighbour's answer (requesting now if not yet), or (coalesce) the left
  /// neighbour's request, if no request of our own is out (see the protocol, steps 3 and 4). Returns true if
  /// merged, false if this group ends.
  bool join_after_done(Kernel& k) {
    return protocol::merge_after_done(
        k, rule_, left_, !own_sent_,
        [&] {
          if (!own_sent_) send_own(k, k.group(), k.now_s());
          pace::wait(own_send_);
          pace::wait(answer_recv_);
          own_sent_ = false;
          Decision::Words w{};
          std::copy_n(answer_.begin(), w.size(), w.begin());
          return Decision::from_words(w);
        },
        [&](const Decision& merge) {
          Decision answer = merge;
          answer.other_first = k.group().first;  // the answerer, as a PLAN names it
          answer.other_last = k.group().last;
          answer_left(k, answer, k.now_s());
        });
  }

  int k_;  // lookahead window, in units of T
  FinishedRule rule_;
  protocol::LeftRequest left_{"lookahead", Tag::lookahead_request, 3};  // first, last, eta (us)
  int64_t committed_ = -1;  // items until the planned merge; -1: none planned
  GroupState plan_;
  std::string plan_before_;
  RequestWords own_request_{};
  mpi::Request own_send_;
  Answer answer_{};
  mpi::Request answer_recv_;
  bool own_sent_ = false;
};

}  // namespace

BalancerEntry lookahead_balancer() {
  return {{.name = "lookahead",
           .uses_interval = true,
           .regroups = true,
           .default_method = "range",
           .methods = {"range", "intercomm", "create_group", "from_group"},
           .initial_method = "range",
           .finished_rules = {FinishedRule::retire, FinishedRule::coalesce, FinishedRule::pays},
           .plans_ahead = true},
          [](const RunSpec& run) -> std::unique_ptr<Balancer> {
            return std::make_unique<LookaheadBalancer>(run.interval, run.finished.value_or(FinishedRule::retire));
          }};
}

}  // namespace mcmclb
