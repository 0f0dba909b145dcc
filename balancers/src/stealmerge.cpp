// Balancer `stealmerge` (beyond the paper: the two families of dynamic load balancing in one): `steal` while any
// group still has an unstarted chain, then `mostwork` regrouping once only chains in progress remain. Why this
// order: moving an unstarted chain costs one small message and no communicator, and the thief then runs a whole
// chain at full efficiency (no item split over a group); but once every chain has started there is nothing left
// to move, and under `steal` a group that is done stays idle while the longest chains in progress finish alone.
// Only regrouping lets it help with those, so the hybrid regroups exactly then. The lookahead window k of the
// regrouping phase is the run's `interval`, as in `mostwork`.
//
// Protocol. Phase 1 is steal's (balancers/src/steal.cpp, its steps 1-4) with two nonblocking barriers over the
// kernel's control communicator in place of its step 5:
//  B1, "nothing to give": a group's leader enters it once the group's unit has no unstarted chain left to give
//     (Kernel::spare_chain; permanent, as units only lose chains), checked at its polling points and when its unit
//     is done; every other rank enters it at the start (it decides nothing). So B1 completes only when no group
//     anywhere has a chain to give, for good.
//  B2, "every ASK answered": a leader enters it once B1 has completed on it, never with an ASK of its own out (it
//     asks only between polling points, and sends no ASK once B1 has completed); the other ranks enter it right
//     after B1, at the start. So when B2 completes every ASK ever sent has been answered and received.
// A working group's leader tests the barriers at its polling points (after deciding any GIVE); once B2 has
// completed on it, the whole group leaves phase 1 at that polling point (LEAVE). A done group's leader asks
// victims as in steal, stops asking once B1 has completed (or its walk of the ring is complete), then waits for
// B1 and B2, answering NONE to every ASK meanwhile, and the group leaves. Leaving, the leader matches its posted
// ASK receive with its own STOP, every rank completes its barrier requests, and the group enters phase 2:
// mostwork's protocol from the group's current state (protocol::most_work), whose STATUS, REQUEST and PLAN use
// tags of their own.
//
// Why it terminates, with no message left unmatched:
//  - Phase 1 ends on every rank. Each group's unit ends or gives away its last unstarted chain after finitely many
//    items, so every leader enters B1; steal's argument bounds every wait for an answer; so B1 completes, every
//    leader then enters B2 at its next polling point or at once (a done group), B2 completes, and every group
//    leaves phase 1 at its next polling point. A group never waits on another's leaving.
//  - No ASK or answer crosses into phase 2: B2 completes only after every ASK sent has been answered and
//    received, and no ASK is sent after B1 has completed on its sender; so STOP is each leader's last match.
//  - Phase 2 is mostwork's, whose termination argument (balancers/src/mostwork.cpp) starts from any set of
//    contiguous groups with finite work: every group enters it in finite time (the first polling point after
//    B2), and a group that enters first only waits for its neighbours' first STATUS, which comes once they enter.
//    Its units hold at most one chain with items left (none has an unstarted chain after B1), so no chain is split
//    between groups: a merged group continues the host's chain where it is.
#include <functional>
#include <memory>

#include "mcmclb/balancer.hpp"
#include "steal.hpp"

namespace mcmclb {

namespace {

class StealMergeBalancer final : public Balancer {
 public:
  explicit StealMergeBalancer(int window) : window_(window) {}

  void run(Kernel& k) override {
    steal::Stealer s(k);
    const bool leader = k.is_leader();
    if (!leader) {  // only leaders decide when to enter
      enter(k, b1_);
      enter(k, b2_);
    }
    const auto phase_over = [&] { return poll(k); };
    const auto nothing_to_take = [&] {
      (void)poll(k);
      return b1_done_;
    };
    for (;;) {
      if (!s.work_unit(k, phase_over)) break;
      if (s.take_chain(k, nothing_to_take)) continue;
      if (leader) {  // the unit is done and no chain came: wait for both barriers, answering NONE
        auto timer = k.timed(Phase::waiting);
        (void)poll(k);
        if (!b1_done_) s.serve_until(k, b1_);
        b1_done_ = true;
        (void)poll(k);
        s.serve_until(k, b2_);
      }
      break;
    }
    {
      auto timer = k.timed(Phase::waiting);
      s.close(k);
      pace::wait(b1_);
      pace::wait(b2_);
    }
    protocol::most_work(k, window_);
  }

 private:
  void enter(const Kernel& k, mpi::Request& barrier) {
    mpi::check(MPI_Ibarrier(k.control().get(), barrier.out()), "MPI_Ibarrier");
  }

  /// Leader: enters and tests the barriers as far as the group's state allows; true once B2 has completed.
  bool poll(const Kernel& k) {
    if (!b1_in_ && !k.spare_chain()) {
      enter(k, b1_);
      b1_in_ = true;
    }
    if (b1_in_ && !b1_done_) b1_done_ = b1_.test();
    if (b1_done_ && !b2_in_) {
      enter(k, b2_);
      b2_in_ = true;
    }
    if (b2_in_ && !b2_done_) b2_done_ = b2_.test();
    return b2_done_;
  }

  int window_;
  mpi::Request b1_, b2_;
  bool b1_in_ = false, b1_done_ = false, b2_in_ = false, b2_done_ = false;  // leader
};

}  // namespace

BalancerEntry stealmerge_balancer() {
  return {protocol::most_work_info("stealmerge"), [](const RunSpec& run) -> std::unique_ptr<Balancer> {
            return std::make_unique<StealMergeBalancer>(run.interval);
          }};
}

}  // namespace mcmclb
