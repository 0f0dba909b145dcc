// SPDX-License-Identifier: BSD-3-Clause
// Method `range`: the group communicator is a RangeComm (mcmclb/range_comm.hpp, after RBC), created from the
// group's bounds locally in O(1), without any message; group-collective, and only for contiguous ranges. Its
// collectives are nonblocking point-to-point trees that progress only when tested or waited for; the blocking
// ones wait in RangeRequest::wait (mpi::wait_all_politely: tests and naps on real MPI, MPI_Waitall in the
// simulation build, where each failed test would cost smpi/test of simulated time).
#include <memory>
#include <utility>

#include "mcmclb/range_comm.hpp"
#include "method.hpp"

namespace mcmclb {

namespace {

/// A started range operation as a pending group operation.
class RangePending final : public PendingOp {
 public:
  explicit RangePending(RangeRequest request) : request_(std::move(request)) {}
  bool test() override { return request_.test(); }

 private:
  RangeRequest request_;
};

class RangeGroupComm final : public GroupComm {
 public:
  explicit RangeGroupComm(RangeComm comm) : comm_(std::move(comm)) {}
  int size() const override { return comm_.size(); }
  int rank() const override { return comm_.rank(); }
  std::unique_ptr<PendingOp> ibcast(std::span<int64_t> words, int root) override {
    return std::make_unique<RangePending>(
        comm_.ibcast(words.data(), static_cast<int>(words.size()), MPI_INT64_T, root));
  }
  void bcast(std::span<int64_t> words, int root, std::chrono::microseconds nap) override {
    comm_.bcast(words.data(), static_cast<int>(words.size()), MPI_INT64_T, root, nap);
  }
  void barrier() override { comm_.barrier(); }
  void allreduce_sum(std::span<int64_t> values) override { comm_.allreduce(values, ReduceOp::sum); }
  /// Compute mode waits on this with its own short nap, as it does on the MPI methods'. Simulation: the blocking
  /// sum, completed at once (GroupComm's default), as for the MPI methods (mpi_group_comm.cpp): tests of a pending
  /// one would cost smpi/test of simulated time each, once per trial.
  std::unique_ptr<PendingOp> iallreduce_sum(std::span<int64_t> values) override {
    if constexpr (mpi::kSimulated) return GroupComm::iallreduce_sum(values);
    return std::make_unique<RangePending>(comm_.iallreduce(values, ReduceOp::sum));
  }

  std::unique_ptr<PendingOp> ibcast(void* data, int count, MPI_Datatype type, int root) override {
    return std::make_unique<RangePending>(comm_.ibcast(data, count, type, root));
  }
  std::unique_ptr<PendingOp> iallreduce(void* data, int count, MPI_Datatype type, MPI_Op op) override {
    return std::make_unique<RangePending>(comm_.iallreduce(data, count, type, op));
  }
  void bcast(void* data, int count, MPI_Datatype type, int root) override { comm_.bcast(data, count, type, root); }
  void allreduce(void* data, int count, MPI_Datatype type, MPI_Op op) override {
    comm_.iallreduce(data, count, type, op).wait();
  }
  void gatherv(const void* mine, int count, void* all, const int* counts, const int* displacements, MPI_Datatype type,
               int root) override {
    comm_.gatherv(mine, count, all, counts, displacements, type, root);
  }
  void send(const void* data, int count, MPI_Datatype type, int dest, int tag) override {
    comm_.send(data, count, type, dest, tag);
  }
  void recv(void* data, int count, MPI_Datatype type, int source, int tag) override {
    comm_.recv(data, count, type, source, tag);
  }
  int probe_count(int source, int tag, MPI_Datatype type) override { return comm_.probe_count(source, tag, type); }
  /// Made on the first call (MPI_Comm_create_group over the members), kept until free().
  MPI_Comm mpi_comm() override {
    if (mpi_.is_null()) mpi_ = comm_.to_mpi(kMpiCommTag);
    return mpi_.get();
  }
  void free() override {
    mpi_.free();
    comm_.free();
  }

 private:
  // The groups alive at once are disjoint, so one tag serves every range's MPI_Comm_create_group.
  static constexpr int kMpiCommTag = 1;
  RangeComm comm_;
  mpi::Comm mpi_;
};

/// Only the members create, and each does so alone. The tag is not needed: range operations draw their tags
/// from the range and a sequence number (range_comm.cpp argues why they never cross).
class RangeGroupCommCreator final : public GroupCommCreator {
 public:
  RangeGroupCommCreator(const MethodInfo& info, const mpi::Comm& parent) : GroupCommCreator(info), context_(parent) {}
  /// From an MPI group (O(|group|)): null for a non-member; mpi::UsageError for a group that is not a contiguous
  /// ascending run of parent ranks.
  std::unique_ptr<GroupComm> create(const mpi::Group& members, int /*tag*/) override {
    if (members.rank() == MPI_UNDEFINED) return nullptr;
    return std::make_unique<RangeGroupComm>(RangeComm::from_group(context_, members));
  }
  /// The native path: O(1), no message, no MPI call.
  std::unique_ptr<GroupComm> create_range(int first, int last, int /*tag*/) override {
    return std::make_unique<RangeGroupComm>(RangeComm(context_, first, last));
  }

 private:
  RangeContext context_;
};

std::unique_ptr<GroupCommCreator> make_range(const MethodInfo& info, const mpi::Comm& parent) {
  return std::make_unique<RangeGroupCommCreator>(info, parent);
}

}  // namespace

CreationMethod range_method() {
  return {.info = {.name = "range", .group_collective = true, .contiguous_only = true}, .make_group_comm = make_range};
}

}  // namespace mcmclb
