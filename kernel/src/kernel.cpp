// The walker-group kernel's per-rank runtime (mcmclb/kernel.hpp).
#include "mcmclb/kernel.hpp"

#include <chrono>

#include "mcmclb/workload.hpp"

namespace mcmclb {

namespace {
constexpr int kRegroupTag = 7;
constexpr std::chrono::microseconds kPollNap{20};  // members of a group reach the polling point together

}  // namespace

Decision::Words Decision::to_words() const noexcept {
  const GroupState::Words g = next.to_words();
  return {kind, g[0], g[1], g[2], g[3], g[4], other_first, other_last};
}

Decision Decision::from_words(const Words& w) noexcept {
  Decision d;
  d.kind = w[0];
  d.next = GroupState::from_words({w[1], w[2], w[3], w[4], w[5]});
  d.other_first = w[6];
  d.other_last = w[7];
  return d;
}

Kernel::Kernel(const RunSpec& run, std::vector<int64_t> chain_items, const std::string& method)
    : run_(run),
      chain_items_(std::move(chain_items)),
      world_(mpi::Comm::world()),
      control_(world_.dup()),
      creator_(make_group_comm_creator(method, world_)),
      rank_(world_.rank()),
      nprocs_(world_.size()),
      items_counted_(chain_items_.size(), 0),
      index_sums_(chain_items_.size(), 0) {}

Kernel::~Kernel() = default;

Kernel::Timer::~Timer() { kernel_.add(phase_, pace::now_s() - start_); }

void Kernel::add(Phase p, double seconds) {
  switch (p) {
    case Phase::work:
      stats_.work_s += seconds;
      break;
    case Phase::polling:
      stats_.polling_s += seconds;
      break;
    case Phase::waiting:
      stats_.waiting_s += seconds;
      break;
    case Phase::regroup:
      stats_.regroup_s += seconds;
      break;
  }
}

double Kernel::now_s() const { return pace::now_s() - start_s_; }

void Kernel::form_initial_groups(bool count_as_regroup) {
  const int G = run_.G;
  GroupState initial;
  initial.first = rank_ / G * G;
  initial.last = initial.first + G - 1;
  initial.chain = rank_ / G;
  initial.items_left = chain_items_[static_cast<std::size_t>(initial.chain)];
  form(initial, EventKind::initial, "", count_as_regroup);
}

void Kernel::start() {
  mpi::check(MPI_Barrier(world_.get()), "MPI_Barrier");  // a real barrier: all ranks start the clock together
  start_s_ = pace::now_s();
}

void Kernel::work_one_item() {
  auto timer = timed(Phase::work);
  pace::work(run_.work.mode, item_cost_ms(run_, group_.size(), group_.chain, group_.next_item));
  if (is_leader()) {
    ++items_counted_[static_cast<std::size_t>(group_.chain)];
    index_sums_[static_cast<std::size_t>(group_.chain)] += group_.next_item;
  }
  ++stats_.items_worked;
  ++group_.next_item;
  --group_.items_left;
}

Decision Kernel::agree(const Decision& leader_choice, Phase phase) {
  auto timer = timed(phase);
  if (group_.size() == 1) return leader_choice;
  Decision::Words words = is_leader() ? leader_choice.to_words() : Decision::Words{};
  group_comm_->bcast(words, 0, kPollNap);
  return Decision::from_words(words);
}

void Kernel::regroup(const GroupState& next, const std::string& before) {
  auto timer = timed(Phase::regroup);
  form(next, EventKind::merge, before, true);
}

void Kernel::regroup_without_joining() {
  if (creator_->group_collective()) return;  // only the members take part
  auto timer = timed(Phase::regroup);
  form(std::nullopt, EventKind::merge, "", true);
}

void Kernel::form(const std::optional<GroupState>& next, EventKind kind, const std::string& before,
                  bool count_as_regroup) {
  // Groups are contiguous ranges: members create from the bounds (range: O(1), no MPI group built); a rank that
  // does not join takes part in a parent-collective creation with the empty group.
  const double t0 = pace::now_s();
  std::unique_ptr<GroupComm> comm = next ? creator_->create_range(next->first, next->last, kRegroupTag)
                                         : creator_->create(mpi::Group::view(MPI_GROUP_EMPTY), kRegroupTag);
  const double create_s = pace::now_s() - t0;
  if (!next) return;
  switch_to(std::move(comm), *next);
  if (count_as_regroup) ++stats_.regroups;
  if (is_leader()) {
    const double t_s = kind == EventKind::initial ? 0.0 : now_s();  // initial groups precede the clock
    events_.push_back({t_s, kind, before, next->first, next->last, next->chain, next->items_left,
                       std::string(creator_->name()), create_s});
  }
}

void Kernel::switch_to(std::unique_ptr<GroupComm> comm, const GroupState& next) {
  if (comm == nullptr || comm->size() != next.size()) {
    throw std::logic_error("regroup to " + next.range() + " produced no communicator of that size");
  }
  leave_group();
  group_comm_ = std::move(comm);
  ++comms_created_;
  group_ = next;
}

void Kernel::leave_group() {
  if (group_comm_ == nullptr) return;
  group_comm_->free();
  group_comm_.reset();
  ++comms_freed_;
}

void Kernel::finish() {
  leave_group();
  stats_.elapsed_s = now_s();
  stats_.final_first = group_.first;
  stats_.final_last = group_.last;
  finished_ = true;
}

}  // namespace mcmclb
