// The walker-group kernel's per-rank runtime (mcmclb/kernel.hpp).
#include "mcmclb/kernel.hpp"

#include <chrono>

#include "mcmclb/workload.hpp"

namespace mcmclb {

namespace {
constexpr int kRegroupTag = 7;
constexpr std::chrono::microseconds kPollNap{20};  // members of a group reach the polling point together

std::vector<int> ranks_of(const GroupState& g) {
  std::vector<int> r;
  for (int i = g.first; i <= g.last; ++i) r.push_back(i);
  return r;
}
}  // namespace

DecisionWords encode(const Decision& d) noexcept {
  return {d.kind,           d.next.first,      d.next.last,   d.next.chain,
          d.next.next_item, d.next.items_left, d.other_first, d.other_last};
}

Decision decode(const DecisionWords& w) noexcept {
  Decision d;
  d.kind = w[0];
  d.next = {static_cast<int>(w[1]), static_cast<int>(w[2]), static_cast<int>(w[3]), w[4], w[5]};
  d.other_first = w[6];
  d.other_last = w[7];
  return d;
}

Kernel::Kernel(const RunSpec& run, std::vector<int64_t> chain_items, const std::string& method)
    : run_(run),
      chain_items_(std::move(chain_items)),
      world_(mpi::Comm::world()),
      control_(world_.dup()),
      creator_(make_comm_creator(method, world_)),
      rank_(world_.rank()),
      nprocs_(world_.size()),
      spin_(run.work.mode == "spin"),
      items_counted_(chain_items_.size(), 0),
      index_sums_(chain_items_.size(), 0) {}

Kernel::~Kernel() = default;

Kernel::Timer::~Timer() { kernel_.add(phase_, MPI_Wtime() - start_); }

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

double Kernel::now_s() const { return MPI_Wtime() - start_s_; }

void Kernel::form_initial_groups(bool count_as_regroup) {
  const int G = run_.G;
  GroupState initial;
  initial.first = rank_ / G * G;
  initial.last = initial.first + G - 1;
  initial.chain = rank_ / G;
  initial.items_left = chain_items_[static_cast<std::size_t>(initial.chain)];
  form(&initial, "initial", "", count_as_regroup);
}

void Kernel::start() {
  mpi::check(MPI_Barrier(world_.get()), "MPI_Barrier");
  start_s_ = MPI_Wtime();
}

void Kernel::work_one_item() {
  auto timer = timed(Phase::work);
  emulate_work(spin_, item_cost_ms(run_, group_.size(), group_.chain, group_.next_item));
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
  DecisionWords words = is_leader() ? encode(leader_choice) : DecisionWords{};
  MPI_Request request = MPI_REQUEST_NULL;
  mpi::check(MPI_Ibcast(words.data(), static_cast<int>(words.size()), MPI_INT64_T, 0, group_comm_.get(), &request),
             "MPI_Ibcast");
  mpi::wait_politely(request, kPollNap);
  return decode(words);
}

void Kernel::regroup(const GroupState* next, const std::string& before) {
  if (next == nullptr && creator_->group_collective()) return;  // not a member: nothing to take part in
  auto timer = timed(Phase::regroup);
  form(next, "merge", before, true);
}

void Kernel::form(const GroupState* next, const char* kind, const std::string& before, bool count_as_regroup) {
  mpi::Group members = next ? mpi::Group::include(world_.group(), ranks_of(*next)) : mpi::Group::view(MPI_GROUP_EMPTY);
  const double t0 = MPI_Wtime();
  mpi::Comm comm = creator_->create(members, kRegroupTag);
  const double create_s = MPI_Wtime() - t0;
  if (next == nullptr) return;
  switch_to(std::move(comm), *next);
  if (count_as_regroup) ++stats_.regroups;
  if (is_leader()) {
    const double t_s = std::string_view(kind) == "initial" ? 0.0 : now_s();  // initial groups precede the clock
    events_.push_back({t_s, kind, before, next->first, next->last, next->chain, next->items_left,
                       std::string(creator_->name()), create_s});
  }
}

void Kernel::switch_to(mpi::Comm comm, const GroupState& next) {
  if (comm.is_null() || comm.size() != next.size()) {
    throw std::logic_error("regroup to " + next.range() + " produced no communicator of that size");
  }
  leave_group();
  group_comm_ = std::move(comm);
  ++comms_created_;
  group_ = next;
}

void Kernel::leave_group() {
  if (group_comm_.is_null()) return;
  group_comm_.free();
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
