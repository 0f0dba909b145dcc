// SPDX-License-Identifier: BSD-3-Clause
// Balancer `async`: point-to-point merge requests followed by group-collective regrouping (Dinan et al., 4.2).
//
// Protocol (control messages on the kernel's control communicator; groups are contiguous rank ranges and
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
//
// Under the finished rule pays, a working group's leader answers a REQUEST with MERGE only when the merge pays now
// (Kernel::merge_outlook: the chain ends sooner with the requester's ranks, the regrouping's measured cost
// included), with ENDED when it pays at no later polling point either (the requester ends, exactly as under retire
// when it asks an ended group, and the working group goes on), and otherwise holds it and weighs it again at the
// next polling point: with several chains per group, items that a larger group works slower (fewer atoms) can come
// before items it works faster, so a merge that does not pay now can pay later. A held REQUEST is answered by the
// end of the unit at the latest (at its last item no later point is left; a done group answers at its end as any
// ended group does), so the argument above is that of retire with one more way for a REQUEST to be answered (at a
// polling point, by ENDED); a leader still answers its one REQUEST exactly once. When no merge can ever pay
// (Kernel::merging_can_pay), no REQUEST is sent at all: every group works its own chain as under none.
#include <array>

#include "mcmclb/balancer.hpp"
#include "protocol.hpp"

namespace mcmclb {

namespace {

using protocol::Tag;

class AsyncBalancer final : public Balancer {
 public:
  explicit AsyncBalancer(FinishedRule rule) : rule_(rule) {}

  void run(Kernel& k) override {
    if (protocol::worked_alone_as_nothing_pays(k, rule_ == FinishedRule::pays)) return;
    left_.post(k);  // the one request an initial leader receives in the whole run (see above), posted once
    for (;;) {
      work_until_done(k);
      if (!merge_after_done(k)) break;
    }
    protocol::end_merge_right(
        k, left_, [&](const Decision& ended) { answer_left(k, ended); }, false);
  }

 private:
  /// Leader: answers the held left request with d and waits until the answer is sent.
  void answer_left(const Kernel& k, const Decision& d) { left_.answer(k, d.to_words(), Tag::async_answer); }

  /// Works the chain, taking merge requests from the left at every polling point.
  void work_until_done(Kernel& k) {
    while (!k.group().finished()) {
      Decision d = protocol::work_item(k);
      const GroupState& g = k.group();
      if (k.is_leader() && !g.finished() && left_.arrived()) {
        left_.check_from_left(g);
        const Kernel::Outlook outlook =
            rule_ == FinishedRule::pays ? k.merge_outlook(g, left_.size()) : Kernel::Outlook::now;
        if (outlook == Kernel::Outlook::now) {
          d = left_.merge_into(protocol::kMerge, g);
        } else if (outlook == Kernel::Outlook::never) {
          Decision ended;  // the merge would not pay: the requester ends, this group goes on
          ended.kind = protocol::kEnded;
          answer_left(k, ended);
        }  // later: the request stays held and is weighed again at the next polling point
      }
      d = k.agree(d);
      if (d.kind == protocol::kMerge) {
        const GroupState before = k.group();
        if (k.is_leader()) answer_left(k, d);
        k.regroup(d.next, protocol::merged_text(d.other_first, d.other_last, before.first, before.last));
      }
    }
  }

  /// The chain is done: merges with a neighbour, or not (the group ends; see the protocol, step 3).
  bool merge_after_done(Kernel& k) {
    return protocol::merge_after_done(
        k, rule_, left_, true,
        [&] {
          const GroupState& g = k.group();
          const std::array<int64_t, 2> request = {g.first, g.last};
          protocol::send(k, request, g.last + 1, Tag::async_request);
          Decision::Words answer{};
          protocol::receive(k, answer, g.last + 1, Tag::async_answer);
          return Decision::from_words(answer);
        },
        [&](const Decision& answer) { answer_left(k, answer); });
  }

  FinishedRule rule_;
  protocol::LeftRequest left_{"async", Tag::async_request, 2};  // {first, last} of the requesting group
};

}  // namespace

BalancerEntry async_balancer() {
  return {{.name = "async",
           .uses_interval = false,
           .regroups = true,
           .default_method = "intercomm",
           .methods = {"intercomm", "create_group", "from_group", "range"},
           .initial_method = "intercomm",
           .finished_rules = {FinishedRule::retire, FinishedRule::coalesce, FinishedRule::pays}},
          [](const RunSpec& run) -> std::unique_ptr<Balancer> {
            return std::make_unique<AsyncBalancer>(run.finished.value_or(FinishedRule::retire));
          }};
}

}  // namespace mcmclb
