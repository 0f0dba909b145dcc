// SPDX-License-Identifier: BSD-3-Clause
// The point-to-point balancers' shared messaging, handshakes and planning (protocol.hpp).
#include "protocol.hpp"

#include <stdexcept>

#include "mcmclb/workload.hpp"

namespace mcmclb {

bool control_message_pending(const Kernel& k) { return protocol::control_message_pending(k); }

}  // namespace mcmclb

namespace mcmclb::protocol {

bool control_message_pending(const Kernel& k) {
  for (const Tag tag : kAllTags) {
    int pending = 0;
    mpi::check(MPI_Iprobe(MPI_ANY_SOURCE, static_cast<int>(tag), k.control().get(), &pending, MPI_STATUS_IGNORE),
               "MPI_Iprobe");
    if (pending != 0) return true;
  }
  return false;
}

void post_send(const Kernel& k, std::span<const int64_t> words, int dest, Tag tag, mpi::Request& request) {
  mpi::check(MPI_Isend(words.data(), static_cast<int>(words.size()), MPI_INT64_T, dest, static_cast<int>(tag),
                       k.control().get(), request.out()),
             "MPI_Isend");
}

void post_receive(const Kernel& k, std::span<int64_t> words, int source, Tag tag, mpi::Request& request) {
  mpi::check(MPI_Irecv(words.data(), static_cast<int>(words.size()), MPI_INT64_T, source, static_cast<int>(tag),
                       k.control().get(), request.out()),
             "MPI_Irecv");
}

void send(const Kernel& k, std::span<const int64_t> words, int dest, Tag tag) {
  mpi::Request request;
  post_send(k, words, dest, tag, request);
  pace::wait(request);
}

void receive(const Kernel& k, std::span<int64_t> words, int source, Tag tag, std::chrono::microseconds nap) {
  mpi::Request request;
  post_receive(k, words, source, tag, request);
  pace::wait(request, nap);
}

void work_alone(Kernel& k) {
  // Every member knows when the chain is done, and nothing else is decided: no polling point, no message.
  while (!k.group().finished()) k.work_one_item();
  k.finish();
}

bool worked_alone_as_nothing_pays(Kernel& k, bool pays) {
  if (!pays || k.merging_can_pay()) return false;
  work_alone(k);
  return true;
}

Decision work_item(Kernel& k) {
  k.work_one_item();
  Decision d;
  d.kind = k.group().finished() ? Decision::kDone : Decision::kContinue;
  return d;
}

std::string range_text(int64_t first, int64_t last) { return std::to_string(first) + "-" + std::to_string(last); }

std::string merged_text(int64_t a_first, int64_t a_last, int64_t b_first, int64_t b_last) {
  if (b_first < a_first) return range_text(b_first, b_last) + " " + range_text(a_first, a_last);
  return range_text(a_first, a_last) + " " + range_text(b_first, b_last);
}

double time_to_finish(const Kernel& k, const GroupState& g) {
  double ms = 0;
  for (int64_t i = 0; i < g.items_left; ++i) ms += k.planned_item_ms(g, i);
  return ms / 1000.0;
}

bool finishes_within(const Kernel& k, const GroupState& g, double limit_s) {
  // The same sum as time_to_finish, item by item in the same order, stopped once it passes the limit: item costs
  // are not negative, so the rest can only add to it (rounding included: adding a non-negative number never makes
  // a float smaller). The answer is time_to_finish(k, g) <= limit_s bit for bit, at a cost of the items within the
  // limit rather than every item left, which every member of a long chain's group paid at every polling point.
  double ms = 0;
  for (int64_t i = 0; i < g.items_left; ++i) {
    ms += k.planned_item_ms(g, i);
    if (ms / 1000.0 > limit_s) return false;
  }
  return ms / 1000.0 <= limit_s;
}

int64_t merge_point(const Kernel& k, const GroupState& g, double now_s, double requester_eta_s, int requester_size) {
  int64_t c = 0;
  double p = now_s;  // the polling point after c more items
  while (p < requester_eta_s && c < g.items_left) {
    const double before = p;
    p += k.planned_item_ms(g, c) / 1000.0;
    ++c;
    if (p >= requester_eta_s) {  // the eta lies in item c-1: stop before it (g waits) or after it (the requester)
      const double g_idle = g.size() * (requester_eta_s - before);
      const double requester_idle = requester_size * (p - requester_eta_s);
      if (g_idle < requester_idle) --c;
    }
  }
  return c;
}

void LeftRequest::post(const Kernel& k) {
  if (!k.is_leader() || k.group().first == 0) return;
  post_receive(k, std::span(words_).first(static_cast<std::size_t>(count_)), MPI_ANY_SOURCE, tag_, recv_);
}

bool LeftRequest::arrived() {
  if (!held_) held_ = recv_.test();
  return held_;
}

void LeftRequest::wait() {
  if (!held_) pace::wait(recv_);
  held_ = true;
}

void LeftRequest::check_from_left(const GroupState& g) const {
  if (last() != g.first - 1 || first() > last()) {
    throw std::logic_error(std::string(balancer_) + ": merge request from group " + range_text(first(), last()) +
                           " reached group " + g.range() + ", which is not its right neighbour");
  }
}

void LeftRequest::answer(const Kernel& k, std::span<const int64_t> words, Tag tag) {
  send(k, words, static_cast<int>(first()), tag);
  held_ = false;
  answered_ = true;
}

Decision LeftRequest::merge_into(int64_t kind, const GroupState& g) const {
  Decision d;
  d.kind = kind;
  d.next = {static_cast<int>(first()), g.last, g.unit, g.next_item, g.items_left};
  d.other_first = first();
  d.other_last = last();
  return d;
}

bool merge_after_done(Kernel& k, FinishedRule rule, LeftRequest& left, bool may_take_left,
                      const std::function<Decision()>& ask_right,
                      const std::function<void(const Decision&)>& answer_take_left) {
  const GroupState g = k.group();
  const bool rightmost = g.last == k.nprocs() - 1;
  const bool coalesce = rule == FinishedRule::coalesce;
  if (rightmost && (!coalesce || g.first == 0)) return false;
  Decision d;
  {
    auto timer = k.timed(Phase::waiting);
    if (k.is_leader()) {
      if (coalesce && may_take_left && (rightmost || left.arrived())) {
        left.wait();
        left.check_from_left(g);
        d = left.merge_into(kTakeLeft, g);
      } else {
        d = ask_right();
      }
    }
  }
  d = k.agree(d, Phase::waiting);
  if (d.kind == kTakeLeft) {
    if (k.is_leader()) {
      Decision answer = d;
      answer.kind = kMerge;
      answer_take_left(answer);
    }
    k.regroup(d.next, merged_text(d.other_first, d.other_last, g.first, g.last));
    return true;
  }
  if (d.kind != kMerge) return false;
  // The right neighbour answered: the merged group spans this group and all of that one (up to next.last).
  k.regroup(d.next, merged_text(g.first, g.last, g.last + 1, d.next.last));
  return true;
}

void end_merge_right(Kernel& k, LeftRequest& left, const std::function<void(const Decision&)>& answer_ended,
                     bool other_open) {
  const GroupState g = k.group();
  const bool leader = k.is_leader();
  k.leave_group();
  if (leader && g.first > 0 && !left.answered()) {
    auto timer = k.timed(Phase::waiting);
    left.wait();
    left.check_from_left(g);
    Decision ended;
    ended.kind = kEnded;
    answer_ended(ended);
  }
  if (left.open() || other_open) {
    throw std::logic_error(std::string(left.balancer()) + ": rank " + std::to_string(k.rank()) +
                           " ends with a merge request unanswered");
  }
  k.finish();
}

}  // namespace mcmclb::protocol
