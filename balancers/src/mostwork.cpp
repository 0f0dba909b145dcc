// SPDX-License-Identifier: BSD-3-Clause
// Balancer `mostwork` (beyond the paper: the partner choice): lookahead whose finishing group joins the neighbour,
// left or right, with the most remaining work, instead of always the right one (`lookahead`, the paper's rule).
// Groups stay contiguous: a group only ever merges with an adjacent group. The lookahead window k is the run's
// `interval` as in `lookahead` (a group asks once at most k*T of its work is left; k = 0: when its chain is done,
// which is the paper's async with this partner rule).
//
// Ports and channels. A boundary b between adjacent groups A (left) and B (right) has two fixed endpoints for
// its whole life: rank b-1, A's last rank, and rank b, B's first rank (the leader). A merge across another
// boundary never moves them (groups only grow outwards). So every message across b goes between b-1 and b, on
// one tag of the kernel's control communicator: a FIFO channel, and no rank needs to know where a
// neighbour's leader is. A group's first rank is its left port, its last rank its right port (one rank may be
// both). At each polling point the ports drain their channels, the right port sends what it holds to the leader
// (which takes the previous polling point's message, so neither waits for the other; facts only accumulate, so a
// late one is still true), and the leader broadcasts both sides' facts with its clock: every member takes the same
// decision from the same words, and the ports then send what was decided. The one facts message in flight is
// received before the group regroups or ends.
//
// Messages on a channel: STATUS{eta} (sent by each port of a group when the group forms: when its chain would
// be done; the initial STATUS is awaited before the first decision), REQUEST{first, last, eta} (this group wants to
// join you), PLAN{merged group, host range, eta}.
//  1. REQUEST. A group with no request of its own outstanding and no merge planned, once at most k*T of its work
//     is left (or when its chain is done), asks the neighbour whose latest STATUS or REQUEST promises the later
//     finish (ties: the right one, the paper's choice), with its own eta. It sends one request at a time.
//  2. PLAN (the host plans in its own chain, as in `lookahead`). A group holding a neighbour's request, with no
//     request of its own outstanding and no merge planned, picks the polling point p of its chain nearest the
//     requester's eta (fewer idle rank-seconds; the current one if eta has passed). If its chain ends at or
//     before p it defers; otherwise it answers PLAN and is committed: at p it regroups into the planned group,
//     which continues the host's chain. Two held requests: the earlier eta first.
//  3. Mutual requests. Two neighbours that requested each other both hold both etas; the later eta hosts (tie:
//     the left group). The host plans without deferring (p may be its chain's end: the merged group then has no
//     work and goes on at step 1); the guest sends nothing more and waits for the PLAN.
//  4. A requester whose chain is done waits at its port for the answer, takes the PLAN and regroups. There is no
//     "ended" answer: the run ends when one group spans every rank and its chain is done (the `finished` rule
//     coalesce; retire is not offered: a group here can be asked from both sides, and this protocol has no ENDED
//     answer with which a group could end under either of its neighbours).
//
// Why it terminates without deadlock, for every workload, jitter, timing and k:
//  - Every merge joins two adjacent groups into one, so there are at most (initial groups - 1) merges; chains
//    are finite, so a group that is not waiting finishes its chain in finite time.
//  - A committed host merges at p, a finite number of its items away (its chain continues beyond p, or p is its
//    end in the mutual case); the guest joins once done, and it is already waiting for or holding the PLAN. So a
//    PLAN always becomes a merge.
//  - Suppose two or more groups remain and no merge ever happens again. Then every group's chain ends and every
//    group, having a neighbour, has sent exactly one request and waits at that port. On a line, the leftmost
//    group's request points right and the rightmost's points left, so some adjacent pair points at each other.
//    Each port of that pair receives the other's REQUEST (the channel delivers everything in order and the
//    waiting port is blocked on it), both derive the same host, the host plans at once (step 3 never defers)
//    and they merge: a contradiction. Hence merges continue until one group is left, whose chain then ends.
//  - Inside a group, only the leader waits on a member: for the last rank's facts message, which the last rank
//    sends at every polling point after at most its own channel wait (the one above). A fact that arrives late
//    (facts only accumulate) delays a decision by one polling point: a done group repeats its polling point,
//    and its requesting port blocks again only while neither its PLAN nor the neighbour's REQUEST has come.
//  - Exactly-once work: a host stops after exactly the planned items and the merged group continues its chain
//    from there; the guest's chain is done. Each item is worked by the group owning its chain at that time.
//  - No message is left unreceived: a side sends no STATUS after its REQUEST or PLAN on a channel (it does not
//    form again before merging across it), so REQUEST and PLAN are each channel's last messages, and a port
//    knows when its channel is drained: it stops receiving after a PLAN, and after the neighbour's REQUEST unless
//    it requested too and is the guest (it then takes the PLAN). Both ports of a boundary are drained when it is
//    merged away (checked), and a rank with no channel left posts nothing.
//
// Under the finished rule pays, a host plans in step 2 only when the merge pays at p (Kernel::merge_pays for its
// chain from p: it ends sooner with the requester's ranks, the regrouping's measured cost included); otherwise it
// defers, as when its chain ends first. That is the deferral the argument above already allows a working host, so
// it stands; the requester waits until the host is done, and then the two coalesce (step 3), as the protocol needs
// to end with one group: those last merges carry no work. Step 3's host, which may not defer, likewise plans at p
// only when sharing its work from p pays, and otherwise at its chain's end (a merge with no work to share). When no
// merge can ever pay (Kernel::merging_can_pay), nothing is sent at all: every group works its own chain as under none.
#include <algorithm>
#include <array>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>

#include "mcmclb/balancer.hpp"
#include "protocol.hpp"

namespace mcmclb {

namespace {

using protocol::Tag;
using protocol::to_us;

// A group's last rank and its leader reach the polling point together, so the facts message is waited for briefly.
constexpr std::chrono::microseconds kFactsNap{20};
constexpr int64_t kStatus = 1;
constexpr int64_t kRequest = 2;
constexpr int64_t kPlan = 3;
constexpr int64_t kUnknownEta = -1;  // no STATUS yet: the least promising neighbour

/// type, first, last, eta (us on the run's clock), then a PLAN's merged group (GroupState words).
constexpr std::size_t kMessageWords = 4 + std::tuple_size_v<GroupState::Words>;
using Message = std::array<int64_t, kMessageWords>;

enum Side : std::size_t { kLeft = 0, kRight = 1 };

/// One port's end of a boundary's channel, on the port rank.
struct Channel {
  int partner = -1;
  bool group_is_left = false;  // this port is the left group's last rank
  Message in{};
  mpi::Request recv;
  int64_t nbr_eta = kUnknownEta;    // the neighbour's eta from its latest STATUS or REQUEST
  std::optional<Message> req;       // the neighbour's REQUEST (until the boundary is merged away)
  std::optional<int64_t> sent_eta;  // our REQUEST's eta, once sent
  std::optional<Message> plan;      // the neighbour's PLAN answering our REQUEST

  /// Mutual requests: does this port's group host? (the later eta; tie: the left group)
  [[nodiscard]] bool hosts() const { return *sent_eta > (*req)[3] || (*sent_eta == (*req)[3] && group_is_left); }
  /// Can the neighbour still send something? (see the protocol: REQUEST and PLAN are the last messages)
  [[nodiscard]] bool expecting() const { return !plan && (!req || (sent_eta && !hosts())); }

  void open(const Kernel& k) {
    if (recv.pending() || !expecting()) return;
    protocol::post_receive(k, in, partner, Tag::mostwork_channel, recv);
  }

  /// The message in has arrived (its receive is complete).
  void take(const Kernel& k) {
    if (in[0] == kStatus) {
      nbr_eta = in[3];
    } else if (in[0] == kRequest && !req) {
      req = in;
      nbr_eta = in[3];
    } else if (in[0] == kPlan && sent_eta && !plan) {
      plan = in;
    } else {
      throw std::logic_error("mostwork: rank " + std::to_string(k.rank()) + " got message " + std::to_string(in[0]) +
                             " from " + std::to_string(partner) + " out of protocol");
    }
    open(k);
  }

  /// Takes every message that has arrived.
  void poll(const Kernel& k) {
    while (recv.pending() && recv.test()) take(k);
  }

  /// Waits for the next message.
  void wait_one(const Kernel& k) {
    if (!recv.pending()) throw std::logic_error("mostwork: waiting on a drained channel");
    pace::wait(recv);
    take(k);
  }

  void send(const Kernel& k, const Message& m) const { protocol::send(k, m, partner, Tag::mostwork_channel); }
};

/// What the group shares at a polling point: the leader's clock, then per side what its port holds.
enum Word : std::size_t {
  kExists,
  kNbrEta,
  kHasReq,
  kReqFirst,
  kReqLast,
  kReqEta,
  kSent,
  kSentEta,
  kHasPlan,
  kPlanState,  // the merged group's words, then:
  kPlanHostFirst = kPlanState + std::tuple_size_v<GroupState::Words>,
  kPlanHostLast,
  kSideWords
};
constexpr std::size_t kNowWord = 2 * kSideWords;
using Facts = std::array<int64_t, kNowWord + 1>;

/// The protocol's state on one rank, from the polling point where it starts (the run's start for mostwork; for
/// stealmerge, once nothing is left to steal) to this rank's finish.
class MostWork {
 public:
  MostWork(int k, FinishedRule rule) : k_(k), rule_(rule) {}

  void run(Kernel& k) {
    if (protocol::worked_alone_as_nothing_pays(k, rule_ == FinishedRule::pays)) return;
    attach_ports(k);
    send_status(k);
    // Every port's first message is its partner's initial STATUS, certain to come: take it before the first
    // decision, so a group done at the start already knows which neighbour has more work.
    for (auto& p : ports_) {
      if (p) p->wait_one(k);
    }
    start_facts(k);
    for (;;) {
      if (!k.group().finished()) k.work_one_item();
      if (!polling_point(k)) break;
    }
    if (ports_[kLeft] || ports_[kRight]) {
      throw std::logic_error("mostwork: rank " + std::to_string(k.rank()) + " ends with a channel open");
    }
    drain_facts(k);
    k.leave_group();
    k.finish();
  }

 private:
  /// The channels this rank ports for its current group (initial formation).
  void attach_ports(const Kernel& k) {
    const GroupState& g = k.group();
    if (k.rank() == g.first && g.first > 0) {
      ports_[kLeft].emplace();
      ports_[kLeft]->partner = g.first - 1;
      ports_[kLeft]->open(k);
    }
    if (k.rank() == g.last && g.last < k.nprocs() - 1) {
      ports_[kRight].emplace();
      ports_[kRight]->partner = g.last + 1;
      ports_[kRight]->group_is_left = true;
      ports_[kRight]->open(k);
    }
  }

  void send_status(const Kernel& k) {
    Message m{};
    m[0] = kStatus;
    m[3] = to_us(k.now_s() + protocol::time_to_finish(k, k.group()));
    for (auto& p : ports_) {
      if (!p) continue;
      if (p->sent_eta) throw std::logic_error("mostwork: STATUS after our request on its channel");
      p->send(k, m);
    }
  }

  /// Everything the group needs for its decision, identical on every member.
  Facts gather(Kernel& k, bool waiting) {
    // A done requester's port waits for its answer (or the neighbour's own request) before sharing.
    if (waiting && own_side_ && ports_[*own_side_]) {
      Channel& c = *ports_[*own_side_];
      if (!c.plan && !(c.req && c.hosts())) {
        auto timer = k.timed(Phase::waiting);
        c.wait_one(k);
      }
    }
    Facts f{};
    for (std::size_t s : {kLeft, kRight}) {
      if (!ports_[s]) continue;
      Channel& c = *ports_[s];
      c.poll(k);
      int64_t* w = f.data() + s * kSideWords;
      w[kExists] = 1;
      w[kNbrEta] = c.nbr_eta;
      if (c.req) {
        w[kHasReq] = 1;
        w[kReqFirst] = (*c.req)[1];
        w[kReqLast] = (*c.req)[2];
        w[kReqEta] = (*c.req)[3];
      }
      if (c.sent_eta) {
        w[kSent] = 1;
        w[kSentEta] = *c.sent_eta;
      }
      if (c.plan) {
        w[kHasPlan] = 1;
        std::copy_n(c.plan->begin() + 4, std::tuple_size_v<GroupState::Words>, w + kPlanState);
        w[kPlanHostFirst] = (*c.plan)[1];
        w[kPlanHostLast] = (*c.plan)[2];
      }
    }
    // The right port's facts reach the leader one polling point late: the last rank sends them at every polling
    // point (and once when the group forms) and the leader takes the previous one, which has normally arrived
    // during the item, so neither waits for the other. Facts only accumulate until the group regroups (a held
    // request, a PLAN, a newer eta), so a late fact is still true; the group's own requests are remembered by
    // every member (own_side_), not read from facts.
    const GroupState& g = k.group();
    const Phase phase = waiting ? Phase::waiting : Phase::polling;
    if (g.size() > 1 && k.rank() == g.last) {
      std::copy_n(f.begin() + static_cast<std::ptrdiff_t>(kRight * std::size_t{kSideWords}), kSideWords,
                  facts_out_.begin());
      send_facts(k);
    } else if (g.size() > 1 && k.is_leader()) {
      auto timer = k.timed(phase);
      receive_facts(k, f.data() + static_cast<std::size_t>(kRight) * kSideWords);
    }
    if (k.is_leader()) f[kNowWord] = to_us(k.now_s());
    k.broadcast(f, phase);
    return f;
  }

  /// Last rank of a group of two or more: sends facts_out_ to the leader (the previous send is long done).
  void send_facts(const Kernel& k) {
    wait_facts_sent();
    protocol::post_send(k, facts_out_, k.group().first, Tag::mostwork_facts, facts_send_);
  }

  /// Last rank: waits until the previous facts message is sent. When the group has just formed none is in flight;
  /// the wait is made all the same, on a null request (it returns at once), because it is an MPI call (MPI_Wait in
  /// the simulation, which charges simulated time for it) that every formation has always made.
  void wait_facts_sent() {
    if (facts_send_.pending()) {
      pace::wait(facts_send_, kFactsNap);
      return;
    }
    MPI_Request none = MPI_REQUEST_NULL;
    pace::wait(none, kFactsNap);
  }

  /// Leader of a group of two or more: the last rank's next facts message (into words, if not null).
  static void receive_facts(const Kernel& k, int64_t* words) {
    std::array<int64_t, kSideWords> in{};
    protocol::receive(k, in, k.group().last, Tag::mostwork_facts, kFactsNap);
    if (words != nullptr) std::copy(in.begin(), in.end(), words);
  }

  /// Before the group regroups or ends: the one facts message still in flight is received.
  void drain_facts(Kernel& k) {
    const GroupState& g = k.group();
    if (g.size() == 1) return;
    auto timer = k.timed(Phase::regroup);
    if (k.rank() == g.last) wait_facts_sent();
    if (k.is_leader()) receive_facts(k, nullptr);
  }

  /// A group of two or more just formed: its last rank sends its first facts.
  void start_facts(const Kernel& k) {
    const GroupState& g = k.group();
    if (g.size() == 1 || k.rank() != g.last) return;
    facts_out_ = {};
    if (ports_[kRight]) {
      facts_out_[kExists] = 1;
      facts_out_[kNbrEta] = ports_[kRight]->nbr_eta;
      if (ports_[kRight]->req) {
        facts_out_[kHasReq] = 1;
        facts_out_[kReqFirst] = (*ports_[kRight]->req)[1];
        facts_out_[kReqLast] = (*ports_[kRight]->req)[2];
        facts_out_[kReqEta] = (*ports_[kRight]->req)[3];
      }
    }
    send_facts(k);
  }

  /// Commits to host the requester on side s after c more items; the port on that side answers PLAN.
  void commit(Kernel& k, const Facts& f, std::size_t s, int64_t c, double now_s) {
    const GroupState& g = k.group();
    const int64_t* w = f.data() + s * kSideWords;
    const auto req_first = static_cast<int>(w[kReqFirst]);
    const auto req_last = static_cast<int>(w[kReqLast]);
    plan_ = {std::min(g.first, req_first), std::max(g.last, req_last), g.unit, g.next_item + c, g.items_left - c};
    plan_holder_ = g.first;
    plan_before_ = protocol::merged_text(g.first, g.last, req_first, req_last);
    committed_ = c;
    if (ports_[s]) {
      Message m{};
      m[0] = kPlan;
      m[1] = g.first;
      m[2] = g.last;
      m[3] = to_us(now_s + protocol::time_to_finish(k, g));
      const GroupState::Words gw = plan_.to_words();
      std::copy(gw.begin(), gw.end(), m.begin() + 4);
      ports_[s]->send(k, m);
    }
  }

  /// One polling point (after an item, or again while the group's chain is done). Returns false when the run's
  /// one remaining group is done.
  bool polling_point(Kernel& k) {
    const GroupState g = k.group();
    const bool done = g.finished() && committed_ < 0;
    Facts f = gather(k, done);
    const double now_s = protocol::from_us(f[kNowWord]);
    const auto side = [&](std::size_t s) -> int64_t* { return f.data() + s * kSideWords; };

    if (own_side_) {  // our request, as every member remembers it (the right port's facts may be late)
      side(*own_side_)[kSent] = 1;
      side(*own_side_)[kSentEta] = own_eta_;
    }
    if (committed_ < 0) {
      if (!own_side_) {
        // Step 2: host a held request, the earlier eta first.
        std::array<std::size_t, 2> order = {kLeft, kRight};
        if (side(kRight)[kHasReq] != 0 && side(kLeft)[kHasReq] != 0 && side(kRight)[kReqEta] < side(kLeft)[kReqEta]) {
          order = {kRight, kLeft};
        }
        for (std::size_t s : order) {
          if (side(s)[kHasReq] == 0) continue;
          const auto req_size = static_cast<int>(side(s)[kReqLast] - side(s)[kReqFirst] + 1);
          const int64_t c = protocol::merge_point(k, g, now_s, protocol::from_us(side(s)[kReqEta]), req_size);
          // Else defer: the chain ends first, or (pays) the merge would not pay.
          if (c < g.items_left &&
              (rule_ != FinishedRule::pays ||
               k.merge_pays({g.first, g.last, g.unit, g.next_item + c, g.items_left - c}, req_size))) {
            commit(k, f, s, c, now_s);
            break;
          }
        }
        // Step 1: our own request, to the neighbour promising the later finish.
        const bool any = side(kLeft)[kExists] != 0 || side(kRight)[kExists] != 0;
        if (committed_ < 0 && any && protocol::finishes_within(k, g, k_ * k.window_item_ms() / 1000.0)) {
          std::size_t s = kRight;
          if (side(kRight)[kExists] == 0 ||
              (side(kLeft)[kExists] != 0 && side(kLeft)[kNbrEta] > side(kRight)[kNbrEta])) {
            s = kLeft;
          }
          const int64_t eta = to_us(now_s + protocol::time_to_finish(k, g));
          if (ports_[s]) {
            Message m{};
            m[0] = kRequest;
            m[1] = g.first;
            m[2] = g.last;
            m[3] = eta;
            ports_[s]->sent_eta = eta;
            ports_[s]->send(k, m);
            ports_[s]->open(k);  // a mutual guest still takes the PLAN
          }
          side(s)[kSent] = 1;  // what the port now holds, for step 3 below
          side(s)[kSentEta] = eta;
          own_side_ = s;
          own_eta_ = eta;
        }
      }
      // Step 3: mutual requests; the host plans at once.
      if (own_side_ && committed_ < 0) {
        const int64_t* w = side(*own_side_);
        const bool group_is_left = *own_side_ == kRight;  // our request went right: we are the left group
        const bool hosts = w[kHasReq] != 0 && w[kHasPlan] == 0 &&
                           (w[kSentEta] > w[kReqEta] || (w[kSentEta] == w[kReqEta] && group_is_left));
        if (hosts) {
          const auto req_size = static_cast<int>(w[kReqLast] - w[kReqFirst] + 1);
          int64_t c = protocol::merge_point(k, g, now_s, protocol::from_us(w[kReqEta]), req_size);
          // pays: sharing the host's remaining work must pay like any other merge; if it does not, the two merge
          // at the host's end instead, with no work left to share (the merge the protocol needs to end).
          if (rule_ == FinishedRule::pays && c < g.items_left &&
              !k.merge_pays({g.first, g.last, g.unit, g.next_item + c, g.items_left - c}, req_size)) {
            c = g.items_left;
          }
          commit(k, f, *own_side_, c, now_s);
        }
      }
    }
    // The host merges at p.
    if (committed_ == 0) {
      merge(k, plan_, plan_holder_, plan_before_);
      return true;
    }
    if (committed_ > 0) {
      --committed_;
      return true;
    }
    // A done guest takes its PLAN.
    if (g.finished() && own_side_ && side(*own_side_)[kHasPlan] != 0) {
      const int64_t* w = side(*own_side_);
      GroupState::Words gw{};
      std::copy_n(w + kPlanState, gw.size(), gw.begin());
      const GroupState next = GroupState::from_words(gw);
      merge(k, next, static_cast<int>(w[kPlanHostFirst]),
            protocol::merged_text(g.first, g.last, w[kPlanHostFirst], w[kPlanHostLast]));
      return true;
    }
    // Done and alone: the run is over. Done otherwise: wait (gather blocks the requesting port).
    return !(g.finished() && side(kLeft)[kExists] == 0 && side(kRight)[kExists] == 0);
  }

  /// Regroups into next; the channels across the merged boundary are drained and closed, the outer ones kept,
  /// and the new group's ports announce it.
  void merge(Kernel& k, const GroupState& next, int holder, const std::string& before) {
    drain_facts(k);
    k.regroup(next, before, holder);
    const int r = k.rank();
    const std::array<bool, 2> keep = {r == next.first && next.first > 0, r == next.last && next.last < k.nprocs() - 1};
    for (std::size_t s : {kLeft, kRight}) {
      if (!ports_[s] || keep[s]) continue;
      if (ports_[s]->recv.pending() || ports_[s]->expecting()) {
        throw std::logic_error("mostwork: rank " + std::to_string(r) + " merged away its channel with " +
                               std::to_string(ports_[s]->partner) + " before it was drained");
      }
      ports_[s].reset();
    }
    committed_ = -1;
    own_side_.reset();
    send_status(k);
    start_facts(k);
  }

  int k_;  // lookahead window, in units of T
  FinishedRule rule_;
  std::array<std::optional<Channel>, 2> ports_;
  int64_t committed_ = -1;  // items until the planned merge as host; -1: none planned
  GroupState plan_;
  int plan_holder_ = -1;
  std::string plan_before_;
  std::optional<std::size_t> own_side_;          // the side of our outstanding request (every member)
  int64_t own_eta_ = 0;                          // its eta
  std::array<int64_t, kSideWords> facts_out_{};  // last rank: the facts being sent to the leader
  mpi::Request facts_send_;
};

class MostWorkBalancer final : public Balancer {
 public:
  MostWorkBalancer(int k, FinishedRule rule) : k_(k), rule_(rule) {}
  void run(Kernel& k) override { protocol::most_work(k, k_, rule_); }

 private:
  int k_;
  FinishedRule rule_;
};

}  // namespace

void protocol::most_work(Kernel& k, int window, FinishedRule rule) { MostWork(window, rule).run(k); }

BalancerInfo protocol::most_work_info(std::string_view name, std::vector<FinishedRule> rules) {
  return {.name = name,
          .uses_interval = true,
          .regroups = true,
          .default_method = "range",
          .methods = {"range", "intercomm", "create_group", "from_group"},
          .initial_method = "range",
          // Its partner rule needs no ENDED answer: a done group always has a neighbour to ask until one group
          // spans every rank (the termination argument above), so it offers no retire.
          .finished_rules = std::move(rules),
          .plans_ahead = true};
}

BalancerEntry mostwork_balancer() {
  return {protocol::most_work_info("mostwork", {FinishedRule::coalesce, FinishedRule::pays}),
          [](const RunSpec& run) -> std::unique_ptr<Balancer> {
            return std::make_unique<MostWorkBalancer>(run.interval, run.finished.value_or(FinishedRule::coalesce));
          }};
}

}  // namespace mcmclb
