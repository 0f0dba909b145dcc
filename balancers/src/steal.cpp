// SPDX-License-Identifier: BSD-3-Clause
// Balancer `steal` (beyond the paper: moving work instead of ranks, as work stealing and walker migration do):
// groups never change; a group whose own chains are done takes an unstarted chain from another group and runs
// it. It needs chains_per_group W > 1 to have anything to move: with W = 1 every chain starts at once and steal
// behaves as `none`. A chain in progress is never split or moved.
//
// Protocol (control messages on the kernel's control communicator, between group leaders; groups are the
// initial ones, numbered 0 .. U-1 in rank order, and every rank knows every group's leader):
//  1. Victim order: a ring to the right. A thief asks its right neighbour first (group g+1, wrapping around to
//     0), and keeps a hint h: the next group to ask. Every leader's hint starts at g+1.
//  2. ASK. A group whose unit is done (its own chains, or the one it took) sends, from its leader, ASK{its
//     leader} to group h's leader and waits for the answer. While it waits it answers every ASK that reaches it
//     NONE{its hint} (it has no unstarted chain).
//  3. A working group's leader tests for an ASK once after each item (the polling point). If the group's unit
//     has an unstarted chain after the one it works next (Kernel::spare_chain: its last one), the leader decides
//     GIVE; every member learns it at the polling point and drops that chain from the unit, and the leader answers
//     CHAIN{chain, S}, then (chains that ship unstarted states: compute mode) sends the chain's initial state.
//     Otherwise it answers NONE{its hint}.
//  4. CHAIN: the thief's members learn the chain at their polling point, the leader broadcasts that state
//     (compute mode), and the group works the chain as its unit single_unit(chain); the thief asks the same
//     victim again when done. NONE{h'} from victim v: the thief's hint becomes h'; if the walk from v to h' passes
//     (or reaches) the thief itself, every other group has answered, directly or through a hint, that it has
//     nothing to give, and the group is done for good.
//  5. END. A group done for good leaves its group and finishes (its clock stops). Its leader then enters a barrier
//     over the groups' leaders (LeaderBarrier: DONE up a binary tree of the groups, END back down, point-to-point
//     so that it is waited on together with ASKs), keeps answering NONE until that barrier is through, then sends
//     STOP to itself to match its own posted ASK receive. The other members have nothing more to do.
//
// Why it terminates, and why no message is left unmatched:
//  - Unstarted chains only ever disappear: a victim gives one away (the thief starts it at once, and a unit of
//    one chain has no spare) or starts it. So "group v has no unstarted chain" stays true once true, and a NONE
//    is a permanent fact.
//  - The hint claim: "no group strictly between me and my hint, walking right around the ring, has an unstarted
//    chain". It holds initially (nothing lies between g and g+1) and is kept by step 4: the thief's claim covered
//    the groups up to v, v answered NONE (it has none) and v's claim covers those up to h'. So a thief whose walk
//    reaches itself knows that no group has an unstarted chain, for good.
//  - Each ASK is answered in finite time: a working group answers within one item; a group waiting for its own
//    answer or done for good answers at once (it waits on its answer, the barrier and incoming ASKs together).
//    No wait is on anything but an answer or the barrier, so there is no cycle of waits.
//  - A thief makes progress: each CHAIN removes an unstarted chain (finitely many); each NONE moves its hint
//    strictly forward around the ring (past v), so after at most U-1 NONE answers in a row it is done for good.
//    Every chain is finite, so every group becomes done for good, and every rank enters the barrier.
//  - No message unmatched: a leader enters the barrier only after every ASK it sent has been answered and every
//    answer (and walker state) received; a leader is through only when every leader has entered. So then every
//    ASK ever sent has been received and answered, and each leader's one posted ASK receive is matched by its own
//    STOP. Each DONE and END is sent once and received by the one posted receive for it (a leader is through only
//    after its END, after sending END to its children, whose receives were posted at the start). The kernel
//    checks after each run that nothing is left unreceived.
//  - Exactly once: a chain leaves a unit (every member agrees at one polling point) before the CHAIN answer is
//    sent, and the thief, the only receiver, starts it at item 0; the victim never reaches it.
#include "steal.hpp"

#include <array>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "mcmclb/balancer.hpp"

namespace mcmclb::steal {

using protocol::Tag;

namespace {
// Message words.
constexpr int64_t kStop = -1;  // ASK's word on a leader's message to itself at the end
constexpr int64_t kChain = 1;  // CHAIN{kChain, chain, S}
constexpr int64_t kNone = 2;   // NONE{kNone, hint, 0}
}  // namespace

Stealer::Stealer(const Kernel& k, Victims victims) : victims_(victims) {
  int first = 0;
  for (const int size : k.initial_sizes()) {
    if (k.group().first == first) group_ = static_cast<int>(leaders_.size());
    leaders_.push_back(first);
    first += size;
  }
  hint_ = (group_ + 1) % static_cast<int>(leaders_.size());
  if (!k.is_leader()) return;
  post_ask(k);
  if (victims_ == Victims::random) {
    slot_.assign(leaders_.size(), -1);
    for (int g = 0; g < static_cast<int>(leaders_.size()); ++g) {
      if (g == group_) continue;
      slot_[static_cast<std::size_t>(g)] = static_cast<int>(candidates_.size());
      candidates_.push_back(g);
    }
    draws_ = k.run().work.seed * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(group_);
  }
}

int Stealer::random_victim() {
  if (candidates_.empty()) return -1;
  // splitmix64: a good spread from consecutive states, and no state beyond one word.
  uint64_t z = (draws_ += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return candidates_[static_cast<std::size_t>(z % candidates_.size())];
}

void Stealer::learn_none(int victim, int h) {
  const auto forget = [&](int g) {
    const int at = slot_[static_cast<std::size_t>(g)];
    if (at < 0) return;
    const int moved = candidates_.back();  // swap-remove, keeping every remaining group's slot right
    candidates_[static_cast<std::size_t>(at)] = moved;
    slot_[static_cast<std::size_t>(moved)] = at;
    candidates_.pop_back();
    slot_[static_cast<std::size_t>(g)] = -1;
  };
  const int u = static_cast<int>(leaders_.size());
  forget(victim);
  for (int g = (victim + 1) % u; g != h && g != victim; g = (g + 1) % u) forget(g);
  // The hint claims only what this thief knows (every group it skips has answered NONE, itself or through a hint),
  // so the claim stays true. Answering with its right neighbour instead taught an asker one group per ASK: at the
  // end every thief asked every other group, U^2 asks in all.
  while (hint_ != group_ && slot_[static_cast<std::size_t>(hint_)] < 0) hint_ = (hint_ + 1) % u;
}

int Stealer::distance(int g) const {
  const int u = static_cast<int>(leaders_.size());
  return ((g - group_) % u + u) % u;
}

void Stealer::post_ask(const Kernel& k) {
  protocol::post_receive(k, ask_, MPI_ANY_SOURCE, Tag::steal_request, ask_recv_);
}

void Stealer::answer_none(const Kernel& k) {
  const Answer none = {kNone, hint_, 0};
  protocol::send(k, none, static_cast<int>(ask_[0]), Tag::steal_answer);
  post_ask(k);
}

bool Stealer::work_unit(Kernel& k, const std::function<bool()>& leave) {
  while (!k.group().finished()) {
    Decision d = protocol::work_item(k);
    if (k.is_leader()) {
      const bool asked = ask_recv_.test();
      const std::optional<int> spare = asked ? k.spare_chain() : std::nullopt;
      if (spare) {
        d.kind = kGive;
        d.other_first = *spare;
      } else if (asked) {
        answer_none(k);
      }
      if (d.kind == Decision::kContinue && leave && leave()) d.kind = kLeave;
    }
    d = k.agree(d);
    if (d.kind == kLeave) return false;
    if (d.kind != kGive) continue;
    const auto chain = static_cast<int>(d.other_first);
    const std::vector<int64_t> state = k.give_chain(chain);
    if (!k.is_leader()) continue;
    const int thief = static_cast<int>(ask_[0]);
    const Answer give = {kChain, chain, k.chain_length(chain)};
    protocol::send(k, give, thief, Tag::steal_answer);
    if (!state.empty()) protocol::send(k, state, thief, Tag::steal_state);
    post_ask(k);
  }
  return true;
}

bool Stealer::take_chain(Kernel& k, const std::function<bool()>& stop) {
  Decision d;
  std::vector<int64_t> state;
  int64_t bytes = 0;
  {
    auto timer = k.timed(Phase::waiting);
    d.kind = kOver;
    const bool random = victims_ == Victims::random;
    while (k.is_leader() && !(stop && stop())) {
      const int victim = random ? random_victim() : hint_ != group_ ? hint_ : -1;
      if (victim < 0) break;  // every other group has nothing to give
      const Answer answer = ask(k, victim);
      bytes = static_cast<int64_t>(sizeof answer);
      if (answer[0] == kChain) {
        d.kind = kTake;
        d.other_first = answer[1];
        if (const std::size_t words = k.shipped_state_words(static_cast<int>(answer[1])); words > 0) {
          state.resize(words);
          protocol::receive(k, state, leaders_[static_cast<std::size_t>(victim)], Tag::steal_state);
          bytes += static_cast<int64_t>(state.size() * sizeof(int64_t));
        }
        break;
      }
      if (answer[0] != kNone) {
        throw std::logic_error("steal: rank " + std::to_string(k.rank()) + " got answer " + std::to_string(answer[0]));
      }
      const auto h = static_cast<int>(answer[1]);
      if (random) {
        learn_none(victim, h);
        continue;
      }
      // The walk from the victim to its hint passes this group: every other group has nothing to give.
      hint_ = distance(h) <= distance(victim) ? group_ : h;
    }
  }
  d = k.agree(d, Phase::waiting);
  if (d.kind != kTake) return false;
  k.take_chain(static_cast<int>(d.other_first), std::move(state), k.is_leader() ? bytes : 0);
  return true;
}

Stealer::Answer Stealer::ask(const Kernel& k, int victim) {
  const int dest = leaders_[static_cast<std::size_t>(victim)];
  Answer answer{};
  mpi::Request answer_recv;
  protocol::post_receive(k, answer, dest, Tag::steal_answer, answer_recv);
  const std::array<int64_t, 1> words = {k.rank()};
  protocol::send(k, words, dest, Tag::steal_request);
  serve_until(k, answer_recv);
  return answer;
}

void Stealer::serve_until(const Kernel& k, mpi::Request& request) {
  if (!ask_recv_.pending()) {  // not a leader: nobody asks this rank
    pace::wait(request);
    return;
  }
  const std::array<mpi::Request*, 2> waits = {&request, &ask_recv_};
  while (request.pending()) {
    if (mpi::Request::wait_any(waits) == 1) answer_none(k);
  }
}

LeaderBarrier::LeaderBarrier(const Kernel& k, const std::vector<int>& leaders, int group, protocol::Tag up,
                             protocol::Tag down)
    : up_(up), down_(down) {
  const auto u = static_cast<int>(leaders.size());
  for (const int child : {2 * group + 1, 2 * group + 2}) {
    if (child < u) children_.push_back(leaders[static_cast<std::size_t>(child)]);
  }
  if (group > 0) parent_ = leaders[static_cast<std::size_t>((group - 1) / 2)];
  done_words_.resize(children_.size());
  done_recv_.resize(children_.size());
  for (std::size_t i = 0; i < children_.size(); ++i) {
    protocol::post_receive(k, done_words_[i], children_[i], up_, done_recv_[i]);
  }
  if (parent_ >= 0) protocol::post_receive(k, end_word_, parent_, down_, end_recv_);
}

void LeaderBarrier::enter(const Kernel& k) {
  entered_ = true;
  (void)progress(k);
}

bool LeaderBarrier::progress(const Kernel& k) {
  if (through_) return true;
  bool children_done = true;
  for (auto& r : done_recv_) {
    if (r.pending() && !r.test()) children_done = false;
  }
  if (!entered_ || !children_done) return false;
  const std::array<int64_t, 1> word = {k.rank()};
  if (parent_ >= 0 && !sent_up_) {
    protocol::send(k, word, parent_, up_);
    sent_up_ = true;
  }
  if (parent_ >= 0 && end_recv_.pending() && !end_recv_.test()) return false;
  for (const int child : children_) protocol::send(k, word, child, down_);
  through_ = true;
  return true;
}

std::vector<mpi::Request*> LeaderBarrier::pending() {
  std::vector<mpi::Request*> out;
  for (auto& r : done_recv_) {
    if (r.pending()) out.push_back(&r);
  }
  if (end_recv_.pending()) out.push_back(&end_recv_);
  return out;
}

void Stealer::serve_until(const Kernel& k, LeaderBarrier& barrier) {
  if (!barrier.entered()) barrier.enter(k);
  while (!barrier.progress(k)) {
    std::vector<mpi::Request*> waits = barrier.pending();
    waits.push_back(&ask_recv_);
    if (mpi::Request::wait_any(waits) == waits.size() - 1) answer_none(k);
  }
}

void Stealer::close(const Kernel& k) {
  if (!ask_recv_.pending()) return;
  const std::array<int64_t, 1> stop = {kStop};
  mpi::Request stop_send;
  protocol::post_send(k, stop, k.rank(), Tag::steal_request, stop_send);
  pace::wait(ask_recv_);
  pace::wait(stop_send);
  if (ask_[0] != kStop) {
    throw std::logic_error("steal: rank " + std::to_string(k.rank()) + " got an ASK after every rank ended");
  }
}

namespace {

class StealBalancer final : public Balancer {
 public:
  explicit StealBalancer(Victims victims) : victims_(victims) {}

  void run(Kernel& k) override {
    Stealer s(k, victims_);
    for (;;) {
      s.work_unit(k);
      if (!s.take_chain(k)) break;
    }
    // Step 5: the clock stops; the leader answers NONE until every rank has entered the barrier, then matches its
    // own posted ASK receive.
    const bool leader = k.is_leader();
    k.leave_group();
    k.finish();
    if (!leader) return;  // nobody asks it
    LeaderBarrier end(k, s.barrier_leaders(), s.group(), Tag::steal_up, Tag::steal_down);
    s.serve_until(k, end);
    s.close(k);
  }

 private:
  Victims victims_;
};

template <Victims kVictims>
std::unique_ptr<Balancer> make_stealer(const RunSpec& /*run*/) {
  return std::make_unique<StealBalancer>(kVictims);
}

}  // namespace

BalancerEntry steal_entry(std::string_view name, Victims victims) {
  return {{.name = name,
           .uses_interval = false,
           .regroups = false,
           .default_method = "",
           .methods = {},
           .initial_method = "split"},
          victims == Victims::ring ? make_stealer<Victims::ring> : make_stealer<Victims::random>};
}

}  // namespace mcmclb::steal

namespace mcmclb {

BalancerEntry steal_balancer() { return steal::steal_entry("steal", steal::Victims::ring); }

}  // namespace mcmclb
