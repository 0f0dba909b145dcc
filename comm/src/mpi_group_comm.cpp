// SPDX-License-Identifier: BSD-3-Clause
// Group communicators backed by MPI communicators (mcmclb/group_comm.hpp): what every method of CommCreator
// yields, wrapped by the factory, and GroupComm's default operations.
#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
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
    return ibcast(words.data(), static_cast<int>(words.size()), MPI_INT64_T, root);
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
    return iallreduce(values.data(), static_cast<int>(values.size()), MPI_INT64_T, MPI_SUM);
  }

  std::unique_ptr<PendingOp> ibcast(void* data, int count, MPI_Datatype type, int root) override {
    auto pending = std::make_unique<MpiPending>();
    mpi::check(MPI_Ibcast(data, count, type, root, comm_.get(), pending->request_.out()), "MPI_Ibcast");
    return pending;
  }
  std::unique_ptr<PendingOp> iallreduce(void* data, int count, MPI_Datatype type, MPI_Op op) override {
    auto pending = std::make_unique<MpiPending>();
    mpi::check(MPI_Iallreduce(MPI_IN_PLACE, data, count, type, op, comm_.get(), pending->request_.out()),
               "MPI_Iallreduce");
    return pending;
  }
  void bcast(void* data, int count, MPI_Datatype type, int root) override {
    mpi::bcast_politely(comm_, data, count, type, root, mpi::default_nap);
  }
  void allreduce(void* data, int count, MPI_Datatype type, MPI_Op op) override {
    mpi::allreduce_politely(comm_, MPI_IN_PLACE, data, count, type, op, mpi::default_nap);
  }
  void reduce(void* data, int count, MPI_Datatype type, MPI_Op op, int root) override {
    const bool at_root = comm_.rank() == root;
    mpi::reduce_politely(comm_, at_root ? MPI_IN_PLACE : data, at_root ? data : nullptr, count, type, op, root,
                         mpi::default_nap);
  }
  void gatherv(const void* mine, int count, void* all, const int* counts, const int* displacements, MPI_Datatype type,
               int root) override {
    mpi::gatherv_politely(comm_, mine, count, all, counts, displacements, type, root);
  }
  void allgatherv(const void* mine, int count, void* all, const int* counts, const int* displacements,
                  MPI_Datatype type) override {
    mpi::allgatherv_politely(comm_, mine, count, all, counts, displacements, type);
  }
  void send(const void* data, int count, MPI_Datatype type, int dest, int tag) override {
    mpi::send_politely(comm_.get(), data, count, type, dest, tag);
  }
  void recv(void* data, int count, MPI_Datatype type, int source, int tag) override {
    mpi::recv_politely(comm_.get(), data, count, type, source, tag);
  }
  int probe_count(int source, int tag, MPI_Datatype type) override {
    return mpi::probe_count_politely(comm_.get(), source, tag, type);
  }
  MPI_Comm mpi_comm() override { return comm_.get(); }
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

/// A group of one: every collective is the member's own value, so nothing is communicated and nothing costs more
/// than a copy (the reference loop a user times against mcmclb must not pay for MPI calls that do nothing).
/// Messages to itself wait in a queue until received; MPI itself only on asking for mpi_comm().
class SelfGroupComm final : public GroupComm {
 public:
  int size() const override { return 1; }
  int rank() const override { return 0; }
  std::unique_ptr<PendingOp> ibcast(std::span<int64_t> words, int root) override {
    return ibcast(words.data(), static_cast<int>(words.size()), MPI_INT64_T, root);
  }
  void barrier() override {}
  void allreduce_sum(std::span<int64_t> /*values*/) override {}
  std::unique_ptr<PendingOp> ibcast(void* /*data*/, int /*count*/, MPI_Datatype /*type*/, int root) override {
    check_rank(root, "root");
    return std::make_unique<Completed>();
  }
  std::unique_ptr<PendingOp> iallreduce(void* /*data*/, int /*count*/, MPI_Datatype /*type*/, MPI_Op /*op*/) override {
    return std::make_unique<Completed>();
  }
  void gatherv(const void* mine, int count, void* all, const int* counts, const int* displacements, MPI_Datatype type,
               int root) override {
    check_rank(root, "root");
    if (counts[0] != count) throw mpi::UsageError("gatherv: count differs from counts[0]", MPI_ERR_COUNT);
    const MPI_Aint extent = mpi::extent_of(type);
    if (count > 0) {
      std::memmove(static_cast<unsigned char*>(all) + displacements[0] * extent, mine,
                   static_cast<std::size_t>(count) * static_cast<std::size_t>(extent));
    }
  }
  void allgatherv(const void* mine, int count, void* all, const int* counts, const int* displacements,
                  MPI_Datatype type) override {
    gatherv(mine, count, all, counts, displacements, type, 0);
  }
  void send(const void* data, int count, MPI_Datatype type, int dest, int tag) override {
    check_rank(dest, "destination");
    const auto* bytes = static_cast<const unsigned char*>(data);
    queue_.push_back({tag, std::vector<unsigned char>(bytes, bytes + count * mpi::extent_of(type))});
  }
  void recv(void* data, int count, MPI_Datatype type, int source, int tag) override {
    const auto message = take(source, tag);
    if (static_cast<MPI_Aint>(message->bytes.size()) > count * mpi::extent_of(type)) {
      throw mpi::UsageError("recv: the message is longer than the buffer", MPI_ERR_TRUNCATE);
    }
    std::memcpy(data, message->bytes.data(), message->bytes.size());
    queue_.erase(message);
  }
  int probe_count(int source, int tag, MPI_Datatype type) override {
    const auto message = take(source, tag);
    return static_cast<int>(static_cast<MPI_Aint>(message->bytes.size()) / std::max<MPI_Aint>(mpi::extent_of(type), 1));
  }
  MPI_Comm mpi_comm() override {
    if (comm_.is_null()) comm_ = mpi::Comm::self().dup();
    return comm_.get();
  }
  void free() override {
    comm_.free();
    queue_.clear();
  }

 private:
  struct Message {
    int tag;
    std::vector<unsigned char> bytes;
  };
  static void check_rank(int r, const char* what) {
    if (r != 0) {
      throw mpi::UsageError(
          std::string(what) + " " + std::to_string(r) + " is not a rank of a group of one (allowed: 0)", MPI_ERR_RANK);
    }
  }
  /// The oldest message with tag; a group of one has no one else to wait for, so none is an error, not a hang.
  std::vector<Message>::iterator take(int source, int tag) {
    check_rank(source, "source");
    const auto it = std::find_if(queue_.begin(), queue_.end(), [tag](const Message& m) { return m.tag == tag; });
    if (it == queue_.end()) {
      throw mpi::UsageError("recv: no message with tag " + std::to_string(tag) + " was sent in this group of one",
                            MPI_ERR_TAG);
    }
    return it;
  }

  std::vector<Message> queue_;
  mpi::Comm comm_;
};

}  // namespace

std::unique_ptr<GroupCommCreator> wrap_mpi_creator(std::unique_ptr<CommCreator> creator) {
  return std::make_unique<MpiGroupCommCreator>(std::move(creator));
}

std::unique_ptr<GroupComm> self_group() { return std::make_unique<SelfGroupComm>(); }

std::unique_ptr<PendingOp> GroupComm::iallreduce_sum(std::span<int64_t> values) {
  allreduce_sum(values);
  return std::make_unique<Completed>();
}

void GroupComm::bcast(std::span<int64_t> words, int root, std::chrono::microseconds nap) {
  const auto pending = ibcast(words, root);
  mpi::wait_until_politely([&] { return pending->test(); }, nap);
}

void GroupComm::bcast(void* data, int count, MPI_Datatype type, int root) {
  const auto pending = ibcast(data, count, type, root);
  mpi::wait_until_politely([&] { return pending->test(); });
}

void GroupComm::allreduce(void* data, int count, MPI_Datatype type, MPI_Op op) {
  const auto pending = iallreduce(data, count, type, op);
  mpi::wait_until_politely([&] { return pending->test(); });
}

void GroupComm::reduce(void* data, int count, MPI_Datatype type, MPI_Op op, int /*root*/) {
  allreduce(data, count, type, op);
}

void GroupComm::allgatherv(const void* mine, int count, void* all, const int* counts, const int* displacements,
                           MPI_Datatype type) {
  gatherv(mine, count, all, counts, displacements, type, 0);
  int total = 0;
  for (int r = 0; r < size(); ++r) total = std::max(total, displacements[r] + counts[r]);
  bcast(all, total, type, 0);
}

int GroupComm::checked_count(std::size_t n) {
  if (n > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    throw mpi::UsageError("a group collective of " + std::to_string(n) + " elements: MPI counts stop at 2^31 - 1",
                          MPI_ERR_COUNT);
  }
  return static_cast<int>(n);
}

namespace detail {

Datatype Datatype::contiguous_bytes(std::size_t bytes) {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  mpi::check(MPI_Type_contiguous(static_cast<int>(bytes), MPI_BYTE, &type), "MPI_Type_contiguous");
  Datatype owned(type, true);
  mpi::check(MPI_Type_commit(&owned.type_), "MPI_Type_commit");
  return owned;
}

Datatype::~Datatype() {
  if (owned_ && !mpi::finalized()) (void)MPI_Type_free(&type_);  // a destructor cannot throw; freeing cannot fail here
}

UserOp::UserOp(MPI_User_function* function) { mpi::check(MPI_Op_create(function, 1, &op_), "MPI_Op_create"); }

UserOp::~UserOp() {
  if (op_ != MPI_OP_NULL && !mpi::finalized()) (void)MPI_Op_free(&op_);
}

}  // namespace detail

}  // namespace mcmclb
