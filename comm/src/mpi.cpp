// SPDX-License-Identifier: BSD-3-Clause
// Implementation of the checked MPI layer (mcmclb/mpi.hpp).
#include "mcmclb/mpi.hpp"

#include <sched.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <exception>
#include <map>
#include <numeric>
#include <thread>
#include <vector>

#if MCMCLB_SMPI
#include <simgrid/actor.h>
#include <simgrid/engine.h>
#endif

namespace mcmclb::mpi {

namespace {
std::string error_text(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) return "unknown MPI error " + std::to_string(code);
  return std::string(text, static_cast<std::size_t>(length));
}

int class_of(int code) {
  int error_class = MPI_ERR_OTHER;
  if (MPI_Error_class(code, &error_class) != MPI_SUCCESS) return MPI_ERR_OTHER;
  return error_class;
}
}  // namespace

Error::Error(std::string_view call, int code, const std::source_location& where)
    : std::runtime_error(std::string(call) + " failed: " + error_text(code) + " (at " + where.file_name() + ":" +
                         std::to_string(where.line()) + ")"),
      call_(call),
      library_text_(error_text(code)),
      code_(code),
      error_class_(class_of(code)) {}

bool finalized() noexcept {
  int done = 0;
  MPI_Finalized(&done);
  return done != 0;
}

Environment::Environment(int& argc, char**& argv) {
  int initialized = 0;
  check(MPI_Initialized(&initialized), "MPI_Initialized");
  if (!initialized) check(MPI_Init(&argc, &argv), "MPI_Init");
  check(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  // Not in the simulation build, which never uses MPI_COMM_SELF: SMPI makes a rank's MPI_COMM_SELF on first use,
  // with a group that costs about 4 bytes x the rank's process id (Group::set_mapping), O(P^2) bytes in all.
  if constexpr (!kSimulated) {
    check(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  }
}

Environment::~Environment() {
  if (!finalized()) MPI_Finalize();
}

void last_line(const std::string& line, double max_wait_s) noexcept {
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
  // FIONREAD on a pipe or socket counts the bytes its reader has not taken yet; on a terminal or a file it fails
  // or reads 0, and there is nothing to wait for.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(max_wait_s);
  int unread = 0;
  while (ioctl(STDERR_FILENO, FIONREAD, &unread) == 0 && unread > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  // The reader (a launcher's proxy) still forwards the line onwards; a moment lets it.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
}

void abort_with_line(MPI_Comm comm, int code, const std::string& line) noexcept {
  last_line(line);
  MPI_Abort(comm, code);
  std::abort();  // MPI_Abort does not return; should a library's do, the rank still ends
}

int run_main(int argc, char** argv, int (*body)(int, char**)) {
  Environment env(argc, argv);
  int rank = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  try {
    return body(argc, argv);
  } catch (const InputError& e) {
    if (rank == 0) {
      std::string program = argc > 0 ? argv[0] : "mcmclb";
      program = program.substr(program.find_last_of('/') + 1);
      std::fprintf(stderr, "%s: %s\n", program.c_str(), e.what());
      std::fflush(stderr);
    }
    return 2;
  } catch (const OutputError& e) {  // thrown on every rank alike, as InputError is
    if (rank == 0) {
      const std::string program = argc > 0 ? argv[0] : "mcmclb";
      std::fprintf(stderr, "%s: %s\n", program.substr(program.find_last_of('/') + 1).c_str(), e.what());
      std::fflush(stderr);
    }
    return kOutputErrorExit;
  } catch (const std::exception& e) {
    abort_with_line(MPI_COMM_WORLD, 1, "error on rank " + std::to_string(rank) + ": " + e.what());
  }
}

Comm::~Comm() {
  if (owned_ && handle_ != MPI_COMM_NULL && !finalized()) MPI_Comm_free(&handle_);
}

Comm& Comm::operator=(Comm&& other) noexcept {
  if (this != &other) {
    Comm old(std::move(*this));  // releases what this held when old goes out of scope
    handle_ = std::exchange(other.handle_, MPI_COMM_NULL);
    owned_ = std::exchange(other.owned_, false);
  }
  return *this;
}

Comm Comm::dup() const {
  MPI_Comm copy = MPI_COMM_NULL;
  if constexpr (kSimulated) {
    check(MPI_Comm_dup(handle_, &copy), "MPI_Comm_dup");
  } else {
    Request request;
    check(MPI_Comm_idup(handle_, &copy, request.out()), "MPI_Comm_idup");
    request.wait(setup_patience);
  }
  return adopt(copy);
}

int Comm::rank() const {
  int r = 0;
  check(MPI_Comm_rank(handle_, &r), "MPI_Comm_rank");
  return r;
}

int Comm::size() const {
  int s = 0;
  check(MPI_Comm_size(handle_, &s), "MPI_Comm_size");
  return s;
}

Group Comm::group() const {
  MPI_Group g = MPI_GROUP_NULL;
  check(MPI_Comm_group(handle_, &g), "MPI_Comm_group");
  return Group(g);
}

void Comm::free() {
  if (owned_ && handle_ != MPI_COMM_NULL) check(MPI_Comm_free(&handle_), "MPI_Comm_free");
  handle_ = MPI_COMM_NULL;
  owned_ = false;
}

namespace {
bool freeable(MPI_Group handle, bool owned) { return owned && handle != MPI_GROUP_NULL && handle != MPI_GROUP_EMPTY; }
}  // namespace

Group::~Group() {
  if (freeable(handle_, owned_) && !finalized()) MPI_Group_free(&handle_);
}

Group& Group::operator=(Group&& other) noexcept {
  if (this != &other) {
    Group old(std::move(*this));
    handle_ = std::exchange(other.handle_, MPI_GROUP_NULL);
    owned_ = std::exchange(other.owned_, false);
  }
  return *this;
}

Group Group::include(const Group& base, std::span<const int> ranks) {
  // The same group as MPI_Group_incl(ranks), given as runs of consecutive ranks: our groups are contiguous rank
  // ranges, and SimGrid 3.32's MPI_Group_incl checks its ranks for duplicates pairwise, O(n^2) per call (at 4096
  // simulated ranks it was most of a Fig. 1 simulation's host time), where MPI_Group_range_incl is O(runs).
  std::vector<std::array<int, 3>> runs;
  for (const int r : ranks) {
    if (!runs.empty() && runs.back()[1] + 1 == r) {
      runs.back()[1] = r;
    } else {
      runs.push_back({r, r, 1});
    }
  }
  MPI_Group g = MPI_GROUP_NULL;
  if (runs.empty() || runs.size() * 2 > ranks.size()) {  // empty, or mostly isolated ranks: plain incl
    check(MPI_Group_incl(base.get(), static_cast<int>(ranks.size()), ranks.data(), &g), "MPI_Group_incl");
  } else {
    // MPI-3 declares the ranges int[][3] (not const); std::array<int, 3> has exactly that layout.
    static_assert(sizeof(std::array<int, 3>) == 3 * sizeof(int));
    check(MPI_Group_range_incl(base.get(), static_cast<int>(runs.size()), reinterpret_cast<int(*)[3]>(runs.data()), &g),
          "MPI_Group_range_incl");
  }
  return Group(g);
}

int Group::size() const {
  int s = 0;
  check(MPI_Group_size(handle_, &s), "MPI_Group_size");
  return s;
}

int Group::rank() const {
  int r = MPI_UNDEFINED;
  check(MPI_Group_rank(handle_, &r), "MPI_Group_rank");
  return r;
}

std::vector<int> Group::translate_all(const Group& other) const {
  std::vector<int> mine(static_cast<std::size_t>(size()));
  std::iota(mine.begin(), mine.end(), 0);
  return translate(mine, other);
}

std::vector<int> Group::translate(std::span<const int> ranks, const Group& other) const {
  if (ranks.empty()) return {};
  std::vector<int> theirs(ranks.size(), MPI_UNDEFINED);
  check(MPI_Group_translate_ranks(handle_, static_cast<int>(ranks.size()), ranks.data(), other.get(), theirs.data()),
        "MPI_Group_translate_ranks");
  return theirs;
}

void Group::free() {
  if (freeable(handle_, owned_)) check(MPI_Group_free(&handle_), "MPI_Group_free");
  handle_ = MPI_GROUP_NULL;
  owned_ = false;
}

int compare(const Group& a, const Group& b) {
  int result = MPI_UNEQUAL;
  check(MPI_Group_compare(a.get(), b.get(), &result), "MPI_Group_compare");
  return result;
}

int tag_ub() {
  void* value = nullptr;
  int found = 0;
  check(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &value, &found), "MPI_Comm_get_attr(MPI_TAG_UB)");
  return found ? *static_cast<int*>(value) : 32767;  // 32767 is the standard's guaranteed minimum
}

void check_tag(int tag) {
  const int ub = tag_ub();
  if (tag < 0 || tag > ub) {
    throw UsageError(
        "tag " + std::to_string(tag) + " is out of range: allowed is 0.." + std::to_string(ub) + " (MPI_TAG_UB)",
        MPI_ERR_TAG);
  }
}

void wait_politely(MPI_Request& request, Patience patience) {
  if constexpr (kSimulated) {
    check(MPI_Wait(&request, MPI_STATUS_IGNORE), "MPI_Wait");
    return;
  }
  wait_until_politely(
      [&] {
        int done = 0;
        check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
        return done != 0;
      },
      patience);
}

namespace {
// One process-wide setting read by every wait (see WaitPolicy); atomic because threads of a process may wait too.
std::atomic<WaitPolicy> current_wait_policy{WaitPolicy::polite};

/// Between two completion tests of a wait that began at started: nothing under spin, else yield or nap as patience
/// says, yielding for kYieldFirst at least under yield.
void pause(const Patience& patience, std::chrono::steady_clock::time_point started) {
  const WaitPolicy policy = current_wait_policy.load(std::memory_order_relaxed);
  if (policy == WaitPolicy::spin) return;
  const auto yield_for = policy == WaitPolicy::yield
                             ? std::max<std::chrono::microseconds>(patience.yield_for, kYieldFirst)
                             : patience.yield_for;
  if (yield_for.count() > 0 && std::chrono::steady_clock::now() < started + yield_for) {
    std::this_thread::yield();
  } else {
    std::this_thread::sleep_for(patience.nap);
  }
}
}  // namespace

WaitPolicy wait_policy() noexcept { return current_wait_policy.load(); }

void set_wait_policy(WaitPolicy policy) noexcept { current_wait_policy.store(policy); }

WaitPolicy machine_wait_policy(const NodeOccupancy& occupancy) {
  if (!occupancy.known() || occupancy.oversubscribed()) return WaitPolicy::polite;
  return occupancy.core_share >= kCoreShareToSpin ? WaitPolicy::spin : WaitPolicy::yield;
}

std::string machine_wait_reason(const NodeOccupancy& occupancy) {
  char share[64];
  std::snprintf(share, sizeof share, "core share %.2f, %s %.2f", occupancy.core_share,
                occupancy.core_share >= kCoreShareToSpin ? "at least" : "under", kCoreShareToSpin);
  if (!occupancy.known()) return "the nodes' cores are not known";
  if (occupancy.oversubscribed()) {
    return std::to_string(occupancy.ranks_on_node) + " ranks on a node with " +
           std::to_string(occupancy.cores_available) + " cores for them";
  }
  if (occupancy.core_share >= kCoreShareToSpin) return std::string("each rank has a core of its own (") + share + ")";
  return std::string("other programs take the cores' time (") + share + ")";
}

Request::~Request() {
  if (handle_ == MPI_REQUEST_NULL || finalized()) return;
  // Best effort on an error path: a receive cancels; a send that cannot be cancelled completes in the background.
  MPI_Cancel(&handle_);
  MPI_Request_free(&handle_);
}

Request& Request::operator=(Request&& other) noexcept {
  if (this != &other) {
    Request dropped(std::move(*this));
    handle_ = std::exchange(other.handle_, MPI_REQUEST_NULL);
  }
  return *this;
}

MPI_Request* Request::out() {
  if (pending()) throw std::logic_error("mpi::Request: a new operation was started over one still pending");
  return &handle_;
}

bool Request::test() {
  if (!pending()) return false;
  int done = 0;
  check(MPI_Test(&handle_, &done, MPI_STATUS_IGNORE), "MPI_Test");
  return done != 0;
}

void Request::wait(Patience patience) {
  if (pending()) wait_politely(handle_, patience);
}

std::size_t Request::wait_any(std::span<Request* const> requests, std::chrono::microseconds nap) {
  std::vector<MPI_Request> handles;
  for (const Request* r : requests) handles.push_back(r->handle_);
  const auto finish = [&](int index) {
    if (index == MPI_UNDEFINED) throw std::logic_error("Request::wait_any: none of the requests is pending");
    for (std::size_t i = 0; i < handles.size(); ++i) requests[i]->handle_ = handles[i];
    return static_cast<std::size_t>(index);
  };
  const int count = static_cast<int>(handles.size());
  int index = MPI_UNDEFINED;
  if constexpr (kSimulated) {
    check(MPI_Waitany(count, handles.data(), &index, MPI_STATUS_IGNORE), "MPI_Waitany");
    return finish(index);
  }
  const auto started = std::chrono::steady_clock::now();
  for (;;) {
    int done = 0;
    check(MPI_Testany(count, handles.data(), &index, &done, MPI_STATUS_IGNORE), "MPI_Testany");
    if (done) return finish(index);
    pause(nap, started);
  }
}

void wait_all_politely(std::span<MPI_Request> requests, std::chrono::microseconds nap) {
  const int count = static_cast<int>(requests.size());
  if constexpr (kSimulated) {
    check(MPI_Waitall(count, requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
    return;
  }
  const auto started = std::chrono::steady_clock::now();
  for (;;) {
    int done = 0;
    check(MPI_Testall(count, requests.data(), &done, MPI_STATUSES_IGNORE), "MPI_Testall");
    if (done) return;
    pause(nap, started);
  }
}

void tree_barrier(const Comm& comm) {
  const int size = comm.size();
  const int rank = comm.rank();
  // Gather: receive from every child (rank + 1, + 2, + 4, ... below the lowest set bit of rank) at once, so that a
  // child's send finds its receive posted as soon as this rank is here, then tell the parent.
  std::vector<MPI_Request> children;
  int mask = 1;
  for (; mask < size && (rank & mask) == 0; mask <<= 1) {
    if (rank + mask >= size) continue;
    children.push_back(MPI_REQUEST_NULL);
    check(MPI_Irecv(nullptr, 0, MPI_BYTE, rank + mask, kTreeBarrierTag, comm.get(), &children.back()), "MPI_Irecv");
  }
  check(MPI_Waitall(static_cast<int>(children.size()), children.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  if (rank != 0) {
    check(MPI_Send(nullptr, 0, MPI_BYTE, rank - mask, kTreeBarrierTag, comm.get()), "MPI_Send");
    check(MPI_Recv(nullptr, 0, MPI_BYTE, rank - mask, kTreeBarrierTag, comm.get(), MPI_STATUS_IGNORE), "MPI_Recv");
  }
  // Release the children, farthest first (their subtrees are the largest).
  for (mask >>= 1; mask > 0; mask >>= 1) {
    if (rank + mask < size) check(MPI_Send(nullptr, 0, MPI_BYTE, rank + mask, kTreeBarrierTag, comm.get()), "MPI_Send");
  }
}

void barrier_politely(const Comm& comm, Patience patience) {
  if constexpr (kSimulated) {
    tree_barrier(comm);
    return;
  }
  Request request;
  check(MPI_Ibarrier(comm.get(), request.out()), "MPI_Ibarrier");
  request.wait(patience);
}

double barrier_together(const Comm& comm, Patience patience) {
#if MCMCLB_SMPI
  (void)patience;
  // Every rank starts at one common simulated date. A barrier lets its ranks out at dates that depend on how they
  // arrived: MPI_Barrier's exits spread over 0.9 us at 64 ranks on bgp.xml, and that spread moved by up to 2 ns with
  // what ran before in the launch (its set-up, an earlier point). A clock started at each rank's own exit carried
  // the difference into time_s, and the balancers' races passed it on, so a point gave other times alone than after
  // another point. The first reduction is the barrier and gives the date the last rank arrived; its longest duration
  // from there bounds the second's, after whose last entrant every rank is out within about that long again.
  const double arrived = simgrid_get_clock();
  double last_arrival = 0.0;
  check(MPI_Allreduce(&arrived, &last_arrival, 1, MPI_DOUBLE, MPI_MAX, comm.get()), "MPI_Allreduce");
  const double left = simgrid_get_clock();
  const std::array<double, 2> mine{left, left - last_arrival};
  std::array<double, 2> latest{};
  check(MPI_Allreduce(mine.data(), latest.data(), 2, MPI_DOUBLE, MPI_MAX, comm.get()), "MPI_Allreduce");
  // Four times that, and at least 1 ms: waiting costs the host nothing, and a rank still in the reduction at the
  // start date would start late and silently break the guarantee, so it stops the run instead.
  const double start = latest[0] + std::max(4.0 * latest[1], 1e-3);
  if (simgrid_get_clock() > start) {
    throw std::runtime_error("barrier_together: rank " + std::to_string(comm.rank()) + " left its reduction " +
                             std::to_string(simgrid_get_clock() - start) +
                             " s (simulated) after the common start date; the margin is too short for this platform");
  }
  sg_actor_sleep_until(start);
  return start - left;
#else
  barrier_politely(comm, patience);
  check(MPI_Barrier(comm.get()), "MPI_Barrier");
  return 0.0;
#endif
}

std::string bcast_text(std::string text, int root, const Comm& comm) {
  long long length = static_cast<long long>(text.size());
  check(MPI_Bcast(&length, 1, MPI_LONG_LONG, root, comm.get()), "MPI_Bcast");
  text.resize(static_cast<std::size_t>(length));
  check(MPI_Bcast(text.data(), static_cast<int>(length), MPI_CHAR, root, comm.get()), "MPI_Bcast");
  return text;
}

double max_politely(const Comm& comm, double value, std::chrono::microseconds nap) {
  double result = 0.0;
  allreduce_politely(comm, &value, &result, 1, MPI_DOUBLE, MPI_MAX, nap);
  return result;
}

void bcast_politely(const Comm& comm, std::span<std::int64_t> words, int root, std::chrono::microseconds nap) {
  bcast_politely(comm, words.data(), static_cast<int>(words.size()), MPI_INT64_T, root, nap);
}

void bcast_politely(const Comm& comm, void* data, int count, MPI_Datatype type, int root, Patience patience) {
  if constexpr (kSimulated) {
    check(MPI_Bcast(data, count, type, root, comm.get()), "MPI_Bcast");
    return;
  }
  Request request;
  check(MPI_Ibcast(data, count, type, root, comm.get(), request.out()), "MPI_Ibcast");
  request.wait(patience);
}

void reduce_politely(const Comm& comm, const void* in, void* out, int count, MPI_Datatype type, MPI_Op op, int root,
                     Patience patience) {
  if constexpr (kSimulated) {
    check(MPI_Reduce(in, out, count, type, op, root, comm.get()), "MPI_Reduce");
    return;
  }
  Request request;
  check(MPI_Ireduce(in, out, count, type, op, root, comm.get(), request.out()), "MPI_Ireduce");
  request.wait(patience);
}

void gather_politely(const Comm& comm, const void* in, int count, MPI_Datatype type, void* out, int root,
                     Patience patience) {
  if constexpr (kSimulated) {
    check(MPI_Gather(in, count, type, out, count, type, root, comm.get()), "MPI_Gather");
    return;
  }
  Request request;
  check(MPI_Igather(in, count, type, out, count, type, root, comm.get(), request.out()), "MPI_Igather");
  request.wait(patience);
}

void allreduce_sum_politely(const Comm& comm, std::span<std::int64_t> values, std::chrono::microseconds nap) {
  allreduce_politely(comm, MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_INT64_T, MPI_SUM, nap);
}

void allreduce_politely(const Comm& comm, const void* in, void* out, int count, MPI_Datatype type, MPI_Op op,
                        Patience patience) {
  if constexpr (kSimulated) {
    check(MPI_Allreduce(in, out, count, type, op, comm.get()), "MPI_Allreduce");
    return;
  }
  Request request;
  check(MPI_Iallreduce(in, out, count, type, op, comm.get(), request.out()), "MPI_Iallreduce");
  request.wait(patience);
}

MPI_Aint extent_of(MPI_Datatype type) {
  MPI_Aint lower = 0;
  MPI_Aint extent = 0;
  check(MPI_Type_get_extent(type, &lower, &extent), "MPI_Type_get_extent");
  return extent;
}

void gatherv_politely(const Comm& comm, const void* in, int count, void* out, const int* counts,
                      const int* displacements, MPI_Datatype type, int root, Patience patience) {
  if constexpr (kSimulated) {
    check(MPI_Gatherv(in, count, type, out, counts, displacements, type, root, comm.get()), "MPI_Gatherv");
    return;
  }
  Request request;
  check(MPI_Igatherv(in, count, type, out, counts, displacements, type, root, comm.get(), request.out()),
        "MPI_Igatherv");
  request.wait(patience);
}

void allgatherv_politely(const Comm& comm, const void* in, int count, void* out, const int* counts,
                         const int* displacements, MPI_Datatype type, Patience patience) {
  if constexpr (kSimulated) {
    check(MPI_Allgatherv(in, count, type, out, counts, displacements, type, comm.get()), "MPI_Allgatherv");
    return;
  }
  Request request;
  check(MPI_Iallgatherv(in, count, type, out, counts, displacements, type, comm.get(), request.out()),
        "MPI_Iallgatherv");
  request.wait(patience);
}

void send_politely(MPI_Comm comm, const void* data, int count, MPI_Datatype type, int dest, int tag) {
  if constexpr (kSimulated) {
    check(MPI_Send(data, count, type, dest, tag, comm), "MPI_Send");
    return;
  }
  Request request;
  check(MPI_Isend(data, count, type, dest, tag, comm, request.out()), "MPI_Isend");
  request.wait();
}

void recv_politely(MPI_Comm comm, void* data, int count, MPI_Datatype type, int source, int tag) {
  if constexpr (kSimulated) {
    check(MPI_Recv(data, count, type, source, tag, comm, MPI_STATUS_IGNORE), "MPI_Recv");
    return;
  }
  Request request;
  check(MPI_Irecv(data, count, type, source, tag, comm, request.out()), "MPI_Irecv");
  request.wait();
}

int probe_count_politely(MPI_Comm comm, int source, int tag, MPI_Datatype type) {
  MPI_Status status{};
  if constexpr (kSimulated) {
    check(MPI_Probe(source, tag, comm, &status), "MPI_Probe");
  } else {
    wait_until_politely([&] {
      int arrived = 0;
      check(MPI_Iprobe(source, tag, comm, &arrived, &status), "MPI_Iprobe");
      return arrived != 0;
    });
  }
  int count = 0;
  check(MPI_Get_count(&status, type, &count), "MPI_Get_count");
  if (count == MPI_UNDEFINED)
    throw UsageError("a message that is not a whole number of its elements", MPI_ERR_TRUNCATE);
  return count;
}

void wait_until_politely(const std::function<bool()>& done, Patience patience) {
  const auto started = std::chrono::steady_clock::now();
  while (!done()) pause(patience, started);
}

std::string library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  check(MPI_Get_library_version(text, &length), "MPI_Get_library_version");
  std::string version(text, static_cast<std::size_t>(length));
  if (auto end = version.find('\n'); end != std::string::npos) version.resize(end);
  while (!version.empty() && (version.back() == ' ' || version.back() == '\t' || version.back() == '\0')) {
    version.pop_back();
  }
  for (char& c : version) {
    if (c == '\t') c = ' ';
  }
  return version;
}

namespace {

/// "a-b" or "a" for the run of ranks [a, b].
std::string rank_range(int first, int last) {
  return first == last ? std::to_string(first) : std::to_string(first) + "-" + std::to_string(last);
}

/// What each rank tells rank 0 about where it runs.
struct Placement {
  int node = 0;      // the lowest rank of its shared-memory node, which names the node
  int readable = 0;  // whether its CPU mask could be read
  std::array<char, 64> host{};
  cpu_set_t cpus;
};

/// Ranks and the union of their CPU masks (a launcher that binds each rank to one core still gives the job all of
/// them); a rank whose mask could not be read makes the count unknown (0).
struct Share {
  std::vector<int> ranks;
  cpu_set_t cpus{};
  bool readable = true;

  void add(int rank, const Placement& p) {
    if (ranks.empty()) CPU_ZERO(&cpus);
    ranks.push_back(rank);
    readable = readable && p.readable != 0;
    CPU_OR(&cpus, &cpus, &p.cpus);
  }
  [[nodiscard]] int cpu_count() const { return readable ? CPU_COUNT(&cpus) : 0; }
};

/// The part of a window of wall time this thread ran, busy all along: its CPU clock over the wall clock.
double thread_cpu_share(std::chrono::nanoseconds window) {
  const auto cpu_now = [] {
    timespec t{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
  };
  const double cpu0 = cpu_now();
  const auto wall0 = std::chrono::steady_clock::now();
  auto wall = wall0;
  while (wall - wall0 < window) wall = std::chrono::steady_clock::now();
  const double wall_s = std::chrono::duration<double>(wall - wall0).count();
  return std::min(1.0, (cpu_now() - cpu0) / wall_s);
}

/// NodeOccupancy from every rank's placement (on rank 0), in one pass over the ranks. Cores are counted per host,
/// the machine whose cores the ranks share: on a cluster a host is a node, but a launcher can start several nodes on
/// one machine (Hydra's fork bootstrap with -hosts a:2,b:2), whose ranks then compete for the same cores.
NodeOccupancy occupancy_of(const std::vector<Placement>& all) {
  std::map<std::string, Share> hosts;
  std::map<int, Share> nodes;  // by lowest rank, so in the layout's order
  for (std::size_t r = 0; r < all.size(); ++r) {
    hosts[all[r].host.data()].add(static_cast<int>(r), all[r]);
    nodes[all[r].node].add(static_cast<int>(r), all[r]);
  }
  NodeOccupancy o;
  o.cores_available = hosts.empty() ? 0 : hosts.begin()->second.cpu_count();
  for (const auto& [host, share] : hosts) {
    const int ranks = static_cast<int>(share.ranks.size()), cpus = share.cpu_count();
    o.ranks_on_node = std::max(o.ranks_on_node, ranks);
    o.cores_available = std::min(o.cores_available, cpus);  // an unknown host's 0 makes the whole unknown
    if (cpus > 0 && ranks > cpus) ++o.nodes_oversubscribed;
  }
  o.nodes = static_cast<int>(nodes.size());
  // The layout: each node's ranks as runs of consecutive ranks.
  for (const auto& [first, share] : nodes) {
    std::string ranges;
    for (std::size_t i = 0; i < share.ranks.size();) {
      std::size_t j = i;
      while (j + 1 < share.ranks.size() && share.ranks[j + 1] == share.ranks[j] + 1) ++j;
      ranges += (ranges.empty() ? "" : ",") + rank_range(share.ranks[i], share.ranks[j]);
      i = j + 1;
    }
    o.layout += (o.layout.empty() ? "" : " ") + std::string(all[static_cast<std::size_t>(first)].host.data()) + "[" +
                ranges + "]/" + std::to_string(share.cpu_count());
  }
  return o;
}

}  // namespace

NodeOccupancy node_occupancy(const Comm& comm) {
  if constexpr (kSimulated) {
    (void)comm;
    return {};  // not applicable: see the header
  } else {
    MPI_Comm raw = MPI_COMM_NULL;
    check(MPI_Comm_split_type(comm.get(), MPI_COMM_TYPE_SHARED, comm.rank(), MPI_INFO_NULL, &raw),
          "MPI_Comm_split_type");
    Comm node = Comm::adopt(raw);
    Placement mine;
    mine.node = comm.rank();
    allreduce_politely(node, MPI_IN_PLACE, &mine.node, 1, MPI_INT, MPI_MIN);
    node.free();
    CPU_ZERO(&mine.cpus);
    mine.readable = ::sched_getaffinity(0, sizeof mine.cpus, &mine.cpus) == 0 ? 1 : 0;
    if (::gethostname(mine.host.data(), mine.host.size() - 1) != 0) mine.host = {'?'};
    const bool root = comm.rank() == 0;
    std::vector<Placement> all(root ? static_cast<std::size_t>(comm.size()) : 0);
    Request gather;
    check(MPI_Igather(&mine, static_cast<int>(sizeof mine), MPI_BYTE, all.data(), static_cast<int>(sizeof mine),
                      MPI_BYTE, 0, comm.get(), gather.out()),
          "MPI_Igather");
    gather.wait();
    NodeOccupancy o = root ? occupancy_of(all) : NodeOccupancy{};
    // Every rank gets the counts (the wait policy follows them); the layout stays on rank 0, which writes it.
    std::array<int, 4> counts = {o.ranks_on_node, o.cores_available, o.nodes_oversubscribed, o.nodes};
    bcast_politely(comm, counts.data(), static_cast<int>(counts.size()), MPI_INT, 0);
    o.ranks_on_node = counts[0];
    o.cores_available = counts[1];
    o.nodes_oversubscribed = counts[2];
    o.nodes = counts[3];
    // What the cores give: every rank spins for the same window at once and keeps the part of it its thread ran.
    // Ranks that each have a core run nearly all of it; where other programs use the cores, the scheduler shares
    // them out. Only where the counts alone would say spin (the branch is the same on every rank).
    if (o.known() && !o.oversubscribed()) {
      barrier_politely(comm, setup_patience);
      double share = thread_cpu_share(kCoreShareWindow);
      allreduce_politely(comm, MPI_IN_PLACE, &share, 1, MPI_DOUBLE, MPI_MIN);
      o.core_share = share;
    }
    return o;
  }
}

}  // namespace mcmclb::mpi
