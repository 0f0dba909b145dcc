// Moving unstarted chains between fixed groups (the protocol and its termination argument: balancers/src/steal.cpp),
// shared by the balancers `steal` and `stealmerge`. Internal to balancers/.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

#include "mcmclb/kernel.hpp"
#include "mcmclb/mpi.hpp"
#include "protocol.hpp"

namespace mcmclb::steal {

/// The decisions a group's members learn at a polling point (payload other_first: the chain), after the kernel's.
constexpr int64_t kGive = Decision::kFirstBalancerKind;       // drop the chain from our unit (a thief took it)
constexpr int64_t kTake = Decision::kFirstBalancerKind + 1;   // our unit is done: work this chain
constexpr int64_t kOver = Decision::kFirstBalancerKind + 2;   // no chain to take: stop asking
constexpr int64_t kLeave = Decision::kFirstBalancerKind + 3;  // leave the stealing loop now (stealmerge)

/// One rank's side of the protocol while the initial groups are unchanged.
class Stealer {
 public:
  /// At the run's start: the groups' leaders, this group's hint (its right neighbour); a leader posts its receive
  /// for the first ASK.
  explicit Stealer(const Kernel& k);

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

  std::vector<int> leaders_;  // the first rank of each initial group, in rank order
  int group_ = 0;             // this rank's initial group
  int hint_ = 0;              // the next group to ask (leader)
  std::array<int64_t, 1> ask_{};
  mpi::Request ask_recv_;  // leader: the posted receive for the next ASK
};

}  // namespace mcmclb::steal
