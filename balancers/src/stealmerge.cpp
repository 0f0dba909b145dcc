// SPDX-License-Identifier: BSD-3-Clause
// Balancer `stealmerge` (beyond the paper: the two families of dynamic load balancing in one): `steal` while any
// group still has an unstarted chain, then `mostwork` regrouping once only chains in progress remain. Why this
// order: moving an unstarted chain costs one small message and no communicator, and the thief then runs a whole
// chain at full efficiency (no item split over a group); but once every chain has started there is nothing left
// to move, and under `steal` a group that is done stays idle while the longest chains in progress finish alone.
// Only regrouping lets it help with those, so the hybrid regroups exactly then. The lookahead window k of the
// regrouping phase is the run's `interval`, as in `mostwork`.
//
// Protocol. Phase 1 is steal's (balancers/src/steal.cpp, its steps 1-4) with two barriers over the groups'
// leaders (steal::LeaderBarrier, point-to-point so that they are waited on together with ASKs) in place of its
// step 5:
//  B1, "nothing to give": a group's leader enters it once the group's unit has no unstarted chain left to give
//     (Kernel::spare_chain; permanent, as units only lose chains), checked at its polling points and when its unit
//     is done. So B1 is through only when no group anywhere has a chain to give, for good.
//  B2, "every ASK answered": a leader enters it once B1 is through on it, never with an ASK of its own out (it
//     asks only between polling points, and sends no ASK once B1 is through). So when B2 is through every ASK ever
//     sent has been answered and received.
// A working group's leader advances the barriers at its polling points (after deciding any GIVE); once B2 is
// through on it, the whole group leaves phase 1 at that polling point (LEAVE). A done group's leader asks victims
// as in steal, stops asking once B1 is through (or its walk of the ring is complete), then waits for B1 and B2,
// answering NONE to every ASK meanwhile, and the group leaves with it (its members wait at a polling point).
// Leaving, the leader matches its posted ASK receive with its own STOP, and the group enters phase 2:
// mostwork's protocol from the group's current state (protocol::most_work), whose STATUS, REQUEST and PLAN use
// tags of their own.
//
// Why it terminates, with no message left unmatched:
//  - Phase 1 ends on every rank. Each group's unit ends or gives away its last unstarted chain after finitely many
//    items, so every leader enters B1; steal's argument bounds every wait for an answer; so B1 is through on every
//    leader, each then enters B2 at its next polling point or at once (a done group), B2 is through, and every
//    group leaves phase 1 at its next polling point. A group never waits on another's leaving.
//  - No ASK or answer crosses into phase 2: B2 is through only after every ASK sent has been answered and
//    received, and no ASK is sent after B1 is through on its sender; so STOP is each leader's last match. Each
//    barrier's DONE and END messages are matched by receives posted at the start.
//  - Phase 2 is mostwork's, whose termination argument (balancers/src/mostwork.cpp) starts from any set of
//    contiguous groups with finite work: every group enters it in finite time (the first polling point after
//    B2), and a group that enters first only waits for its neighbours' first STATUS, which comes once they enter.
//    Its units hold at most one chain with items left (none has an unstarted chain after B1), so no chain is split
//    between groups: a merged group continues the host's chain where it is.
#include <functional>
#include <memory>
#include <optional>

#include "mcmclb/balancer.hpp"
#include "steal.hpp"

namespace mcmclb {

namespace {

using protocol::Tag;

class StealMergeBalancer final : public Balancer {
 public:
  explicit StealMergeBalancer(int window) : window_(window) {}

  void run(Kernel& k) override {
    steal::Stealer s(k);
    std::optional<steal::LeaderBarrier> b1, b2;  // leaders only: the others decide nothing and are asked nothing
    if (k.is_leader()) {
      b1.emplace(k, s.barrier_leaders(), s.group(), Tag::steal_up, Tag::steal_down);
      b2.emplace(k, s.barrier_leaders(), s.group(), Tag::drained_up, Tag::drained_down);
    }
    /// Leader: enters and advances the barriers as far as the group's state allows; true once B2 is through.
    const auto poll = [&] {
      if (!b1->entered() && !k.spare_chain()) b1->enter(k);
      if (b1->progress(k) && !b2->entered()) b2->enter(k);
      return b2->progress(k);
    };
    const auto nothing_to_take = [&] {
      (void)poll();
      return b1->through();
    };
    for (;;) {
      if (!s.work_unit(k, poll)) break;
      if (s.take_chain(k, nothing_to_take)) continue;
      {  // the unit is done and no chain came: the leader waits for both barriers, answering NONE
        auto timer = k.timed(Phase::waiting);
        if (k.is_leader()) {
          s.serve_until(k, *b1);
          s.serve_until(k, *b2);
        }
      }
      (void)k.agree(Decision{}, Phase::waiting);  // the members leave together with their leader
      break;
    }
    {
      auto timer = k.timed(Phase::waiting);
      s.close(k);
    }
    protocol::most_work(k, window_);
  }

 private:
  int window_;
};

}  // namespace

BalancerEntry stealmerge_balancer() {
  return {protocol::most_work_info("stealmerge", {FinishedRule::coalesce}),
          [](const RunSpec& run) -> std::unique_ptr<Balancer> {
            return std::make_unique<StealMergeBalancer>(run.interval);
          }};
}

}  // namespace mcmclb
