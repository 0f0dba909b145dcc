// SPDX-License-Identifier: BSD-3-Clause
// Group communicators backed by MPI communicators (mcmclb/group_comm.hpp): what every method of CommCreator
// yields, wrapped by the factory, and GroupComm's default operations.
#include <utility>
#include <vector>

#include "mcmclb/group_comm.hpp"
#include "methods/method.hpp"

namespace mcmclb {

namespace {

/// An MPI nonblocking collective as a pending operation, started by the call that makes it: one MPI_Test per
/// test() until it completes; once complete, test() answers true without calling MPI.
class MpiPending final : public PendingOp {
 public:
  bool test() override { return !request_.pending() || request_.test(); }
  mpi::Request request_;
};

class MpiGroupComm final : public GroupComm {
 public:
  explicit MpiGroupComm(mpi::Comm comm) : comm_(std::move(comm)) {}
  int size() const override { return comm_.size(); }
  int rank() const override { return comm_.rank(); }
  std::unique_ptr<PendingOp> ibcast(std::span<int64_t> words, int root) override {
    auto pending = std::make_unique<MpiPending>();
    mpi::check(MPI_Ibcast(words.data(), static_cast<int>(words.size()), MPI_INT64_T, root, comm_.get(),
                          pending->request_.out()),
               "MPI_Ibcast");
    return pending;
  }
  /// The nonblocking call plus a polite wait on real MPI, the blocking call in simulation (mpi::bcast_politely).
  void bcast(std::span<int64_t> words, int root, std::chrono::microseconds nap) override {
    mpi::bcast_politely(comm_, words, root, nap);
  }
  void barrier() override { mpi::barrier_politely(comm_); }
  void allreduce_sum(std::span<int64_t> values) override { mpi::allreduce_sum_politely(comm_, values); }
  std::unique_ptr<PendingOp> iallreduce_sum(std::span<int64_t> values) override {
    // Simulation: the blocking sum, completed at once (GroupComm's default), as for every collective there.
    if constexpr (mpi::kSimulated) return GroupComm::iallreduce_sum(values);
    auto pending = std::make_unique<MpiPending>();
    mpi::check(MPI_Iallreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_INT64_T, MPI_SUM,
                              comm_.get(), pending->request_.out()),
               "MPI_Iallreduce");
    return pending;
  }
  void free() override { comm_.free(); }

 private:
  mpi::Comm comm_;
};

class MpiGroupCommCreator final : public GroupCommCreator {
 public:
  explicit MpiGroupCommCreator(std::unique_ptr<CommCreator> creator)
      : GroupCommCreator(creator->info()), creator_(std::move(creator)) {}
  std::unique_ptr<GroupComm> create(const mpi::Group& members, int tag) override {
    return wrap(creator_->create(members, tag));
  }
  std::unique_ptr<GroupComm> create_range(int first, int last, int tag) override {
    return wrap(creator_->create_range(first, last, tag));
  }

 private:
  static std::unique_ptr<GroupComm> wrap(mpi::Comm comm) {
    if (comm.is_null()) return nullptr;
    return std::make_unique<MpiGroupComm>(std::move(comm));
  }

  std::unique_ptr<CommCreator> creator_;
};

class Completed final : public PendingOp {
 public:
  bool test() override { return true; }
};

}  // namespace

std::unique_ptr<GroupCommCreator> wrap_mpi_creator(std::unique_ptr<CommCreator> creator) {
  return std::make_unique<MpiGroupCommCreator>(std::move(creator));
}

std::unique_ptr<PendingOp> GroupComm::iallreduce_sum(std::span<int64_t> values) {
  allreduce_sum(values);
  return std::make_unique<Completed>();
}

void GroupComm::bcast(std::span<int64_t> words, int root, std::chrono::microseconds nap) {
  const auto pending = ibcast(words, root);
  mpi::wait_until_politely([&] { return pending->test(); }, nap);
}

}  // namespace mcmclb
