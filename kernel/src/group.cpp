// Group communicators backed by MPI communicators (mcmclb/group.hpp).
#include "mcmclb/group.hpp"

#include <algorithm>
#include <array>
#include <string>

#include "mcmclb/comm_create.hpp"
#include "mcmclb/pace.hpp"
#include "mcmclb/text.hpp"

namespace mcmclb {

namespace {

/// An MPI request as a pending operation.
class MpiPending final : public PendingOp {
 public:
  bool test() override {
    int done = 0;
    mpi::check(MPI_Test(&request_, &done, MPI_STATUS_IGNORE), "MPI_Test");
    return done != 0;
  }
  MPI_Request request_ = MPI_REQUEST_NULL;
};

class MpiGroupComm final : public GroupComm {
 public:
  explicit MpiGroupComm(mpi::Comm comm) : comm_(std::move(comm)) {}
  int size() const override { return comm_.size(); }
  int rank() const override { return comm_.rank(); }
  std::unique_ptr<PendingOp> ibcast(std::span<int64_t> words, int root) override {
    auto pending = std::make_unique<MpiPending>();
    mpi::check(
        MPI_Ibcast(words.data(), static_cast<int>(words.size()), MPI_INT64_T, root, comm_.get(), &pending->request_),
        "MPI_Ibcast");
    return pending;
  }
  void barrier() override { mpi::barrier_politely(comm_); }
  void allreduce_sum(std::span<int64_t> values) override {
    MPI_Request request = MPI_REQUEST_NULL;
    mpi::check(MPI_Iallreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_INT64_T, MPI_SUM,
                              comm_.get(), &request),
               "MPI_Iallreduce");
    pace::wait(request);
  }
  std::unique_ptr<PendingOp> iallreduce_sum(std::span<int64_t> values) override {
    auto pending = std::make_unique<MpiPending>();
    mpi::check(MPI_Iallreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_INT64_T, MPI_SUM,
                              comm_.get(), &pending->request_),
               "MPI_Iallreduce");
    return pending;
  }
  void free() override { comm_.free(); }

 private:
  mpi::Comm comm_;
};

class MpiGroupCommCreator final : public GroupCommCreator {
 public:
  explicit MpiGroupCommCreator(std::unique_ptr<CommCreator> creator) : creator_(std::move(creator)) {}
  std::string_view name() const noexcept override { return creator_->name(); }
  bool group_collective() const noexcept override { return creator_->group_collective(); }
  std::unique_ptr<GroupComm> create(const mpi::Group& members, int tag) override {
    mpi::Comm comm = creator_->create(members, tag);
    if (comm.is_null()) return nullptr;
    return std::make_unique<MpiGroupComm>(std::move(comm));
  }
  std::unique_ptr<GroupComm> create_range(int first, int last, int tag) override {
    std::vector<int> ranks;
    for (int r = first; r <= last; ++r) ranks.push_back(r);
    return create(mpi::Group::include(creator_->parent().group(), ranks), tag);
  }

 private:
  std::unique_ptr<CommCreator> creator_;
};

/// Methods whose communicators are not MPI communicators, one line each: name and factory.
struct GroupMethod {
  std::string_view name;
  std::unique_ptr<GroupCommCreator> (*make)(const mpi::Comm& parent);
};
constexpr std::array<GroupMethod, 1> kGroupMethods = {{
    {"range", make_range_group_comm_creator},
}};

}  // namespace

namespace {
class Completed final : public PendingOp {
 public:
  bool test() override { return true; }
};
}  // namespace

std::unique_ptr<PendingOp> GroupComm::iallreduce_sum(std::span<int64_t> values) {
  allreduce_sum(values);
  return std::make_unique<Completed>();
}

void GroupComm::bcast(std::span<int64_t> words, int root, std::chrono::microseconds nap) {
  const auto pending = ibcast(words, root);
  pace::wait_until([&] { return pending->test(); }, nap);
}

std::vector<std::string_view> group_comm_method_names() {
  const auto names = comm_creator_names();
  std::vector<std::string_view> all(names.begin(), names.end());
  for (const auto& m : kGroupMethods) all.push_back(m.name);
  return all;
}

std::unique_ptr<GroupCommCreator> make_group_comm_creator(std::string_view method, const mpi::Comm& parent) {
  for (const auto& m : kGroupMethods) {
    if (m.name == method) return m.make(parent);
  }
  const auto names = comm_creator_names();
  if (std::find(names.begin(), names.end(), method) == names.end()) {
    throw mpi::UsageError("unknown communicator creation method '" + std::string(method) +
                              "' (known: " + join(group_comm_method_names()) + ")",
                          MPI_ERR_ARG);
  }
  return std::make_unique<MpiGroupCommCreator>(make_comm_creator(method, parent));
}

}  // namespace mcmclb
