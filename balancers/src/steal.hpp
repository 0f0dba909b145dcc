// SPDX-License-Identifier: BSD-3-Clause
// Moving unstarted chains between fixed groups (the protocol and its termination argument: balancers/src/steal.cpp),
// shared by the balancers `steal` and `stealmerge`. Internal to balancers/.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "mcmclb/balancer.hpp"
#include "mcmclb/kernel.hpp"
#include "mcmclb/mpi.hpp"
#include "protocol.hpp"

namespace mcmclb::steal {

/// The decisions a group's members learn at a polling point (payload other_first: the chain), after the kernel's.
constexpr int64_t kGive = Decision::kFirstBalancerKind;       // drop the chain from our unit (a thief took it)
constexpr int64_t kTake = Decision::kFirstBalancerKind + 1;   // our unit is done: work this chain
constexpr int64_t kOver = Decision::kFirstBalancerKind + 2;   // no chain to take: stop asking
constexpr int64_t kLeave = Decision::kFirstBalancerKind + 3;  // leave the stealing loop now (stealmerge)

/// A barrier over the initial groups' leaders made of point-to-point messages on a binary tree of the groups (group
/// g's parent (g-1)/2, its children 2g+1 and 2g+2): once a leader has entered and DONE has come from each child,
/// it sends DONE to its parent; the root, which then knows every leader has entered, sends END down, and a leader
/// that has END passes it on and is through. Its requests are plain receives, which MPI_Waitany waits on together
/// with ASKs under both back ends (SMPI's MPI_Waitany does not progress a nonblocking collective).
class LeaderBarrier {
 public:
  /// Leader of group `group` of the groups led by leaders: posts the receives of its children's DONE and its
  /// parent's END.
  LeaderBarrier(const Kernel& k, const std::vector<int>& leaders, int group, protocol::Tag up, protocol::Tag down);
  // Pinned: the posted receives write into its members.
  LeaderBarrier(const LeaderBarrier&) = delete;
  LeaderBarrier& operator=(const LeaderBarrier&) = delete;
  void enter(const Kernel& k);
  /// Takes what has arrived and sends what is due; true once through (every leader has entered).
  bool progress(const Kernel& k);
  [[nodiscard]] bool entered() const { return entered_; }
  [[nodiscard]] bool through() const { return through_; }
  /// The receives still pending, to wait on.
  [[nodiscard]] std::vector<mpi::Request*> pending();

 private:
  std::vector<int> children_;  // their leaders' ranks
  int parent_ = -1;            // its leader's rank; -1: the root
  protocol::Tag up_, down_;
  std::vector<std::array<int64_t, 1>> done_words_;
  std::vector<mpi::Request> done_recv_;
  std::array<int64_t, 1> end_word_{};
  mpi::Request end_recv_;
  bool entered_ = false, sent_up_ = false, through_ = false;
};

/// Whom a thief asks: its right neighbour, then on around the ring (`steal`), or a group drawn uniformly at random
/// from those not yet known to have nothing to give (`stealrandom`, the classic randomized work stealing).
enum class Victims { ring, random };

/// One rank's side of the protocol while the initial groups are unchanged.
class Stealer {
 public:
  /// At the run's start: the groups' leaders, this group's hint (its right neighbour); a leader posts its receive
  /// for the first ASK.
  explicit Stealer(const Kernel& k, Victims victims = Victims::ring);

  /// Works the group's unit, the leader taking at most one ASK at each polling point (step 3). leave, if given, is
  /// asked by the leader at each polling point where nothing else is decided; when it says true the whole group
  /// leaves here. Returns true when the unit is done, false when the group left.
  bool work_unit(Kernel& k, const std::function<bool()>& leave = {});
  /// The unit is done: the leader asks victims in ring order (steps 2 and 4) until one gives a chain, no group has
  /// one left, or stop (if given, asked by the leader before each ASK) says true; the members learn which.
  /// Returns true when the group took a chain (it is then the group's unit).
  bool take_chain(Kernel& k, const std::function<bool()>& stop = {});
  /// Waits for request, a leader answering NONE to every ASK that comes meanwhile.
  void serve_until(const Kernel& k, mpi::Request& request);
  /// Leader: enters barrier (if not yet) and waits until it is through, answering NONE to every ASK meanwhile.
  void serve_until(const Kernel& k, LeaderBarrier& barrier);
  /// The initial groups' leaders, and this rank's group among them (for a LeaderBarrier).
  [[nodiscard]] const std::vector<int>& barrier_leaders() const { return leaders_; }
  [[nodiscard]] int group() const { return group_; }
  /// Once no ASK can come any more (every rank has passed a barrier entered after its last ASK was answered): a
  /// leader matches its own posted ASK receive with STOP.
  void close(const Kernel& k);

 private:
  using Answer = std::array<int64_t, 3>;
  /// Steps from this group to g walking right around the ring (0: this group).
  [[nodiscard]] int distance(int g) const;
  void post_ask(const Kernel& k);
  /// Leader: answers the ASK just received NONE{hint} and posts the receive for the next one.
  void answer_none(const Kernel& k);
  /// Leader: ASK victim and wait for its answer, answering NONE to every ASK that comes meanwhile.
  Answer ask(const Kernel& k, int victim);
  /// Leader, random victims: the next group to ask, or -1 once every other group is known to have nothing.
  [[nodiscard]] int random_victim();
  /// Leader, random victims: victim answered NONE{h}: it and every group strictly between it and h (walking right,
  /// the claim its hint makes) have nothing to give, for good. Moves this thief's own hint past every group it now
  /// knows to be empty, so that its NONE answers pass on what it has learnt.
  void learn_none(int victim, int h);

  std::vector<int> leaders_;  // the first rank of each initial group, in rank order
  int group_ = 0;             // this rank's initial group
  int hint_ = 0;              // leader: ring, the next group to ask; random, the first group to its right not known
                              // to be empty (itself once every other group is)
  std::array<int64_t, 1> ask_{};
  mpi::Request ask_recv_;  // leader: the posted receive for the next ASK
  Victims victims_ = Victims::ring;
  // Random victims (leader): the groups not known to have nothing to give, and each group's place among them (-1:
  // known empty, or this group); the draws come from a generator seeded by the run's seed and the group, so a run
  // is repeatable (and a simulated one deterministic).
  std::vector<int> candidates_, slot_;
  uint64_t draws_ = 0;
};

/// The registry entry of a stealing balancer named name whose thieves pick victims as victims says.
[[nodiscard]] BalancerEntry steal_entry(std::string_view name, Victims victims);

}  // namespace mcmclb::steal
