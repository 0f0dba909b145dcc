// SPDX-License-Identifier: BSD-3-Clause
// What the point-to-point balancers (async, lookahead, mostwork) share: the tags of their control messages,
// sending and receiving small int64 arrays on the kernel's control communicator, the one merge request an initial
// leader receives from its left neighbour and the handshake of a group that ends, and the planning arithmetic
// (when a chain will be done, at which polling point two groups merge). Internal to balancers/.
//
// Every wait here is polite (pace::wait: testing and napping, or a blocking wait in the simulation), since the
// other side may be busy working an item. Each helper makes exactly the MPI calls its callers made before they
// shared it, in the same order: the simulator charges simulated time per call.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "mcmclb/kernel.hpp"
#include "mcmclb/mpi.hpp"
#include "mcmclb/pace.hpp"

namespace mcmclb::protocol {

/// Every tag used on the kernel's control communicator (Kernel::control(): a private duplicate of WORLD made for
/// each run; WORLD itself in the simulation build), in one place so that two messages can never share one by
/// accident. Only one balancer runs on a control communicator, but each keeps its own tags, so a stray message
/// names its sender. The kernel's communicator creations run on it too, with tags 7 (regrouping, kernel.cpp) and 8
/// (calibration, merge_model.cpp), which no value here may take: in the simulation build the creation methods
/// replay their messages on it with those tags rather than on a duplicate. Every receive names its tag
/// here, so none takes another's message. The range method's trees use a private duplicate of WORLD with tags of
/// their own (comm/). After each run the driver probes the control communicator for each tag here by name
/// (control_message_pending), never for any tag: in the simulation build WORLD carries the driver's gathers and
/// collectives then.
enum class Tag : int {
  async_request = 1,       // async: REQUEST{first, last} from a done group's leader to its right neighbour's leader
  async_answer = 2,        // async: the answer to it, a Decision (MERGE or ENDED), back to the requester's leader
  lookahead_request = 11,  // lookahead: REQUEST{first, last, eta} to the right neighbour's leader
  lookahead_answer = 12,   // lookahead: the answer to it, a Decision (PLAN or ENDED) and the answerer's eta
  mostwork_channel = 13,   // mostwork: STATUS, REQUEST and PLAN across one group boundary (a FIFO channel)
  mostwork_facts = 14,     // mostwork: a group's last rank to its leader, the right port's facts at each polling point
  steal_request = 21,      // steal: ASK{thief's leader} to a victim group's leader (and STOP, a leader to itself)
  steal_answer = 22,       // steal: the answer to it, CHAIN{chain, S} or NONE{hint}, back to the thief's leader
  steal_state = 23,        // steal: the migrated chain's initial state (compute mode), after its CHAIN answer
  steal_up = 24,           // steal's leader barrier (stealmerge: "nothing to give"): DONE to the parent group's leader
  steal_down = 25,         // ... and END back down to the child groups' leaders
  drained_up = 26,         // stealmerge's second leader barrier ("every ASK answered"): DONE up
  drained_down = 27,       // ... and END down
};

/// Every value of Tag, for the check after a run that none of them left a message unreceived.
inline constexpr Tag kAllTags[] = {
    Tag::async_request,  Tag::async_answer,  Tag::lookahead_request, Tag::lookahead_answer, Tag::mostwork_channel,
    Tag::mostwork_facts, Tag::steal_request, Tag::steal_answer,      Tag::steal_state,      Tag::steal_up,
    Tag::steal_down,     Tag::drained_up,    Tag::drained_down};

/// The decisions of the merge-right balancers (async, lookahead), after the kernel's own (mcmclb/kernel.hpp).
/// Merge into the group named in the payload (answered to a request: the merge is agreed, or planned).
constexpr int64_t kMerge = Decision::kFirstBalancerKind;
/// Answered to a request: the asked group has ended (the `finished` rule retire); the requester ends too.
constexpr int64_t kEnded = Decision::kFirstBalancerKind + 1;
/// Within a done group only (coalesce): the leader has taken the left neighbour's request; answer it and merge.
constexpr int64_t kTakeLeft = Decision::kFirstBalancerKind + 2;

/// True when a message of one of the balancers' tags waits unreceived on the control communicator.
[[nodiscard]] bool control_message_pending(const Kernel& k);

/// Starts sending words to dest on the control communicator; request completes it (words must outlive it).
void post_send(const Kernel& k, std::span<const int64_t> words, int dest, Tag tag, mpi::Request& request);
/// Starts receiving words from source (or MPI_ANY_SOURCE); request completes it (words must outlive it).
void post_receive(const Kernel& k, std::span<int64_t> words, int source, Tag tag, mpi::Request& request);
/// Sends words to dest and waits politely until the send is done.
void send(const Kernel& k, std::span<const int64_t> words, int dest, Tag tag);
/// Receives words from source, waiting politely (napping nap between tests).
void receive(const Kernel& k, std::span<int64_t> words, int source, Tag tag,
             std::chrono::microseconds nap = mpi::default_nap);

/// Works the group's chains to their end with no polling point and no message, then finishes: balancer none, and
/// every balancer under the finished rule pays when Kernel::merging_can_pay() says no merge ever can.
void work_alone(Kernel& k);
/// The start of a balancer offering the finished rule pays: under pays, when no merge can ever pay
/// (Kernel::merging_can_pay), works alone (work_alone) and returns true, and the balancer has nothing left to do;
/// otherwise returns false at once.
[[nodiscard]] bool worked_alone_as_nothing_pays(Kernel& k, bool pays);

/// Works the group's next item (Kernel::work_one_item) and returns what the group does next unless its leader
/// decides otherwise at this polling point: continue, or done when the chain has just ended.
[[nodiscard]] Decision work_item(Kernel& k);

/// Microseconds on the run's clock, as messages carry times, and back.
[[nodiscard]] inline int64_t to_us(double s) { return static_cast<int64_t>(s * 1e6); }
[[nodiscard]] inline double from_us(int64_t us) { return static_cast<double>(us) / 1e6; }

/// "first-last" of a range of ranks, as events.csv names groups.
[[nodiscard]] std::string range_text(int64_t first, int64_t last);
/// The two groups a merge joins, left one first ("0-3 4-7"), for Kernel::regroup's before.
[[nodiscard]] std::string merged_text(int64_t a_first, int64_t a_last, int64_t b_first, int64_t b_last);

/// Seconds from now until g's chain is done, from the items' predicted costs (Kernel::planned_item_ms: a pure
/// function of the run, the calibrated model, the group's size, the chain and the item).
[[nodiscard]] double time_to_finish(const Kernel& k, const GroupState& g);

/// time_to_finish(k, g) <= limit_s, the same answer, summing only the items up to the limit: a polling point's
/// "is the chain nearly done?" costs the window, not the whole chain left (quadratic in a chain's items otherwise).
[[nodiscard]] bool finishes_within(const Kernel& k, const GroupState& g, double limit_s);

/// The merge point: how many more items of g's chain (from the polling point at now_s) g works before it merges
/// with a requesting group of requester_size ranks whose chain is done at requester_eta_s. Of the last polling
/// point before the requester's eta (g's ranks then wait for it) and the first one after (the requester's ranks
/// wait), the one that leaves fewer rank-seconds idle; the current one (0) when that eta has passed. The result
/// is g.items_left when g's chain ends first: merging there gives the requester no work, which the caller rules
/// out or accepts.
[[nodiscard]] int64_t merge_point(const Kernel& k, const GroupState& g, double now_s, double requester_eta_s,
                                  int requester_size);

/// The one merge request an initial leader L > 0 receives in the whole run, from the group holding rank L-1 (its
/// left neighbour): {first, last} of that group, then (lookahead) its eta. Each balancer argues at its protocol
/// why exactly one comes. Its receive is posted once, at the start: a posted receive is matched as soon as the
/// library progresses, whereas with MPICH ch4:ucx a bare MPI_Iprobe after a long item checks before it progresses
/// and misses a request that arrived during the item (measured: found on the second call), which would cost the
/// sender a whole extra item. Requests go to last + 1 and groups stay contiguous, so the sender must be the left
/// neighbour of whichever group L leads when it is taken (check_from_left).
class LeftRequest {
 public:
  /// balancer names the owner in errors; words (2 or 3) is how many the request carries.
  LeftRequest(std::string_view balancer, Tag tag, int words) : balancer_(balancer), tag_(tag), count_(words) {}

  /// At the run's start: posts the receive on an initial leader but rank 0 (nobody else ever receives one).
  void post(const Kernel& k);
  /// Has it arrived (and not been answered yet)? One MPI_Test while the receive is pending; no MPI call when it
  /// is held already or was never posted.
  [[nodiscard]] bool arrived();
  /// Waits for it unless it is held already; then it is held.
  void wait();
  /// Throws unless the request came from g's left neighbour (groups stay contiguous).
  void check_from_left(const GroupState& g) const;
  /// Sends words to the requesting group's leader and waits; the request is answered (no longer held).
  void answer(const Kernel& k, std::span<const int64_t> words, Tag tag);
  /// Still to be received or answered.
  [[nodiscard]] bool open() const { return recv_.pending() || held_; }
  /// Received and answered (under the finished rule pays, possibly while the group goes on working).
  [[nodiscard]] bool answered() const { return answered_; }

  [[nodiscard]] int64_t first() const { return words_[0]; }
  [[nodiscard]] int64_t last() const { return words_[1]; }
  [[nodiscard]] int64_t eta_us() const { return words_[2]; }
  [[nodiscard]] int size() const { return static_cast<int>(last() - first() + 1); }
  [[nodiscard]] std::string_view balancer() const { return balancer_; }

  /// The decision (of the given kind) merging the requesting group into g, which it joins from the left: the
  /// merged group continues g's chain from where g is now; the payload's range is the requester's.
  [[nodiscard]] Decision merge_into(int64_t kind, const GroupState& g) const;

 private:
  std::string_view balancer_;
  Tag tag_;
  int count_;
  std::array<int64_t, 3> words_{};
  mpi::Request recv_;
  bool held_ = false;      // arrived and not answered yet
  bool answered_ = false;  // arrived and answered
};

/// A merge-right group's chain is done (async, lookahead): what it does next is the run's `finished` rule. Under
/// retire the rightmost group ends. Otherwise its leader asks the right neighbour (ask_right: the request, then
/// its answer, a MERGE or ENDED decision), except under coalesce when the left neighbour's request is there first
/// or this is the rightmost group (and may_take_left: no request of its own is out): then it takes that request
/// (TAKE_LEFT), and answers it MERGE through answer_take_left once every member has agreed. Returns true when
/// the group merged (the merged group goes on), false when it ends: retire, when it is the rightmost or its right
/// neighbour has ended; coalesce, when it spans every rank.
bool merge_after_done(Kernel& k, FinishedRule rule, LeftRequest& left, bool may_take_left,
                      const std::function<Decision()>& ask_right,
                      const std::function<void(const Decision&)>& answer_take_left);

/// The end of a merge-right run on this rank (retire, pays, or coalesce's last group): leaves the group; the ended
/// group's leader, unless it is rank 0 or has answered it already (pays: declined), waits for the one request its
/// left neighbour is certain to send (each balancer argues why at its protocol) and answers ENDED through
/// answer_ended, so that group ends too; then the
/// rank finishes. Throws when a request is still open here or other_open (the balancer's
/// own outstanding state): the kernel checks no message is left unreceived, this names the rank that left it.
void end_merge_right(Kernel& k, LeftRequest& left, const std::function<void(const Decision&)>& answer_ended,
                     bool other_open);

/// mostwork's protocol (balancers/src/mostwork.cpp) on this rank from the group's current state until the rank
/// finishes: groups join the neighbour with the most work left until one group spans every rank. window: the
/// lookahead window k. Every rank must enter it, each at a polling point of its group (all members at the same
/// one); a rank entering later only delays its neighbours' first decisions (they wait for its first STATUS).
/// rule: coalesce, or pays (a host plans a merge only where it pays; the coalescing of done groups at the end,
/// which the protocol needs to end, stays).
void most_work(Kernel& k, int window, FinishedRule rule = FinishedRule::coalesce);
/// The planning facts of a balancer named name whose regrouping is mostwork's protocol (window: `interval`), offering
/// the finished rules rules (its default first).
[[nodiscard]] BalancerInfo most_work_info(std::string_view name, std::vector<FinishedRule> rules);

}  // namespace mcmclb::protocol
