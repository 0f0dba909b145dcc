// SPDX-License-Identifier: BSD-3-Clause
// Thin, owning C++ layer over the MPI handles mcmclb uses: checked calls, the environment object, move-only
// communicators and groups, and waits that sleep instead of spinning.
#pragma once

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <source_location>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "mcmclb/input_error.hpp"
#include "mcmclb/wait_policy.hpp"

// 1 in the simulation build (docs/guide/simulation.md; -DMCMCLB_SMPI=ON: compiled with SimGrid's smpicxx, run
// under smpirun). Set PUBLIC on mcmclb::comm, so every target that includes this header reads the same value.
#ifndef MCMCLB_SMPI
#define MCMCLB_SMPI 0
#endif

namespace mcmclb::mpi {

/// True in the simulation build. The polite waits and collectives below, the group communicators' nonblocking
/// sums (mcmclb/group_comm.hpp), mcmclb/pace.hpp and the Algorithm 1 replay (mcmclb/smpi_patterns.hpp) are the
/// only code that behaves differently there.
inline constexpr bool kSimulated = MCMCLB_SMPI != 0;

/// "smpi" in the simulation build, "mpi" otherwise: the back end every output names.
constexpr std::string_view backend_name() noexcept { return kSimulated ? "smpi" : "mpi"; }

/// An MPI call that returned an error: carries the call's name, the code, its class and the library's text.
class Error : public std::runtime_error {
 public:
  Error(std::string_view call, int code, const std::source_location& where);
  [[nodiscard]] int code() const noexcept { return code_; }
  [[nodiscard]] int error_class() const noexcept { return error_class_; }
  [[nodiscard]] const std::string& call() const noexcept { return call_; }
  /// The library's own words for the code (MPI_Error_string), without where the call was made.
  [[nodiscard]] const std::string& library_text() const noexcept { return library_text_; }

 private:
  std::string call_;
  std::string library_text_;
  int code_;
  int error_class_;
};

/// A caller's mistake detected before any communication (bad tag, group not in the parent, unknown name).
/// Carries the MPI error class that the C interface returns for it.
class UsageError : public std::invalid_argument {
 public:
  UsageError(const std::string& what, int error_class) : std::invalid_argument(what), error_class_(error_class) {}
  [[nodiscard]] int error_class() const noexcept { return error_class_; }

 private:
  int error_class_;
};

/// Bad user input: defined without MPI in mcmclb/input_error.hpp; named here too for the MPI code that throws it.
using mcmclb::InputError;

/// Throws Error if rc is not MPI_SUCCESS:
/// <!-- compile: body(MPI_Comm c) -->
/// ```cpp
/// MPI_Comm d;
/// mcmclb::mpi::check(MPI_Comm_dup(c, &d), "MPI_Comm_dup");
/// ```
inline void check(int rc, std::string_view call, std::source_location where = std::source_location::current()) {
  if (rc != MPI_SUCCESS) throw Error(call, rc, where);
}

/// First object in main: initialises MPI, makes errors return (so check() sees them), finalises at scope end.
class Environment {
 public:
  Environment(int& argc, char**& argv);
  ~Environment();
  Environment(const Environment&) = delete;
  Environment& operator=(const Environment&) = delete;
};

/// Runs body inside an Environment and returns its exit code. InputError: one line on rank 0, exit code 2 on
/// every rank. Any other exception escaping body on any rank aborts the whole job, so one rank's error never
/// leaves the others hanging.
int run_main(int argc, char** argv, int (*body)(int, char**));

/// Writes line and a newline to standard error, then waits (at most max_wait_s) until whatever reads it has taken
/// every byte. A process about to end abruptly calls it first: a launcher (MPICH's Hydra is one) that ends the
/// job on MPI_Abort may otherwise drop what the rank wrote last, which is the line saying why.
void last_line(const std::string& line, double max_wait_s = 2.0) noexcept;

/// last_line(line), then MPI_Abort(comm, code): the one way a rank ends the whole job with a reason.
[[noreturn]] void abort_with_line(MPI_Comm comm, int code, const std::string& line) noexcept;

/// True once MPI_Finalize has run (destructors must not call MPI after that).
bool finalized() noexcept;

class Group;

/// Move-only communicator handle. Owning handles free on destruction; views (world(), self(), view()) never do.
class Comm {
 public:
  Comm() = default;
  ~Comm();
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;
  Comm(Comm&& other) noexcept
      : handle_(std::exchange(other.handle_, MPI_COMM_NULL)), owned_(std::exchange(other.owned_, false)) {}
  Comm& operator=(Comm&& other) noexcept;

  static Comm world() noexcept { return Comm(MPI_COMM_WORLD, false); }
  static Comm self() noexcept { return Comm(MPI_COMM_SELF, false); }
  /// Non-owning view of a handle someone else frees.
  static Comm view(MPI_Comm handle) noexcept { return Comm(handle, false); }
  /// Takes ownership of handle (MPI_COMM_NULL gives a null Comm).
  static Comm adopt(MPI_Comm handle) noexcept { return Comm(handle, handle != MPI_COMM_NULL); }

  /// Collective over this communicator: an owned duplicate with its own context. Waits politely (MPI_Comm_idup;
  /// simulation build: MPI_Comm_dup): duplicates are made while setting up, where ranks arrive far apart and a
  /// busy-polling wait would take the cores from the ranks still on their way.
  [[nodiscard]] Comm dup() const;
  [[nodiscard]] int rank() const;
  [[nodiscard]] int size() const;
  [[nodiscard]] Group group() const;
  [[nodiscard]] MPI_Comm get() const noexcept { return handle_; }
  [[nodiscard]] bool is_null() const noexcept { return handle_ == MPI_COMM_NULL; }
  [[nodiscard]] bool owned() const noexcept { return owned_; }
  /// Frees now (throwing on error); a no-op for views and null handles.
  void free();
  /// Gives up ownership: returns the handle, which the caller now frees.
  [[nodiscard]] MPI_Comm release() noexcept {
    owned_ = false;
    return std::exchange(handle_, MPI_COMM_NULL);
  }

 private:
  Comm(MPI_Comm handle, bool owned) noexcept : handle_(handle), owned_(owned) {}
  MPI_Comm handle_ = MPI_COMM_NULL;
  bool owned_ = false;
};

/// Move-only group handle. Owning unless made by view(); MPI_GROUP_EMPTY and MPI_GROUP_NULL are never freed.
class Group {
 public:
  Group() = default;
  /// Takes ownership of handle.
  explicit Group(MPI_Group handle) noexcept : handle_(handle), owned_(true) {}
  /// Non-owning view of a group someone else frees.
  static Group view(MPI_Group handle) noexcept {
    Group g;
    g.handle_ = handle;
    return g;
  }
  ~Group();
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;
  Group(Group&& other) noexcept
      : handle_(std::exchange(other.handle_, MPI_GROUP_NULL)), owned_(std::exchange(other.owned_, false)) {}
  Group& operator=(Group&& other) noexcept;

  /// The members of base at the given ranks, in that order (MPI_Group_incl).
  [[nodiscard]] static Group include(const Group& base, std::span<const int> ranks);
  [[nodiscard]] int size() const;
  /// This process's rank in the group, or MPI_UNDEFINED.
  [[nodiscard]] int rank() const;
  /// Ranks in other of this group's members 0..size-1 (MPI_UNDEFINED where a member is not in other).
  [[nodiscard]] std::vector<int> translate_all(const Group& other) const;
  /// Ranks in other of this group's members at the given ranks (MPI_UNDEFINED where one is not in other).
  [[nodiscard]] std::vector<int> translate(std::span<const int> ranks, const Group& other) const;
  [[nodiscard]] MPI_Group get() const noexcept { return handle_; }
  [[nodiscard]] bool is_null() const noexcept { return handle_ == MPI_GROUP_NULL; }
  [[nodiscard]] bool owned() const noexcept { return owned_; }
  /// Frees now (throwing on error); a no-op for views and null handles.
  void free();

 private:
  MPI_Group handle_ = MPI_GROUP_NULL;
  bool owned_ = false;
};

/// MPI_Group_compare: MPI_IDENT, MPI_SIMILAR or MPI_UNEQUAL.
int compare(const Group& a, const Group& b);

/// The largest tag value the library allows (attribute MPI_TAG_UB of MPI_COMM_WORLD).
int tag_ub();

/// Throws UsageError (class MPI_ERR_TAG) unless 0 <= tag <= tag_ub().
void check_tag(int tag);

/// Nap between completion tests in the polite waits below.
inline constexpr std::chrono::microseconds default_nap{200};

/// How a polite wait spends the time between its completion tests: it yields the core (std::this_thread::yield)
/// until yield_for has passed since the wait began, then sleeps nap each time. Yielding sees at once a partner that
/// runs on another core, and still lets any runnable rank have this one; the naps then leave the cores to the
/// ranks that work, however many share them. A microseconds value converts to naps from the start.
struct Patience {
  constexpr Patience(std::chrono::microseconds nap_between = default_nap,  // NOLINT: implicit on purpose
                     std::chrono::microseconds yield_first = std::chrono::microseconds{0})
      : nap(nap_between), yield_for(yield_first) {}
  std::chrono::microseconds nap;
  std::chrono::microseconds yield_for;
};

/// The patience of the waits in a run's untimed setup and checks (duplicating WORLD, the start barrier, the checks
/// and gathers after a run, the command line's broadcasts): there every rank waits for every other at each step, and
/// naps from the start cost a run a few milliseconds on as many ranks as cores (thousands of tiny runs in the
/// tests: most of their time). 2 ms of yielding covers a partner that is merely busy on another core.
inline constexpr Patience setup_patience{default_nap, std::chrono::microseconds{2000}};

/// The wait policy (mcmclb/wait_policy.hpp) of every wait below, one setting for the whole process: it follows
/// from where the process runs, not from what it waits for. polite until set. The simulation build ignores it: its
/// waits block (MPI_Wait), which costs no host core.
using mcmclb::WaitPolicy;
[[nodiscard]] WaitPolicy wait_policy() noexcept;
void set_wait_policy(WaitPolicy policy) noexcept;

/// Sets the wait policy for a scope and restores the previous one when it ends (a run under its own policy).
class ScopedWaitPolicy {
 public:
  explicit ScopedWaitPolicy(WaitPolicy policy) noexcept : previous_(wait_policy()) { set_wait_policy(policy); }
  ~ScopedWaitPolicy() { set_wait_policy(previous_); }
  ScopedWaitPolicy(const ScopedWaitPolicy&) = delete;
  ScopedWaitPolicy& operator=(const ScopedWaitPolicy&) = delete;

 private:
  WaitPolicy previous_;
};

/// Waits for request with MPI_Test between naps (see Patience), so a waiting rank leaves its core to ranks that
/// work. Simulation build: MPI_Wait, since each MPI_Test there injects simulated time (smpi/test) and waiting costs
/// no host core anyway.
void wait_politely(MPI_Request& request, Patience patience = default_nap);

/// Waits for every request the same way (MPI_Testall plus naps; simulation build: MPI_Waitall). Completed
/// requests become MPI_REQUEST_NULL. The range communicators' trees wait here, phase by phase.
void wait_all_politely(std::span<MPI_Request> requests, std::chrono::microseconds nap = default_nap);

/// Move-only owner of one nonblocking operation's request. A nonblocking call stores into out(); test() or wait()
/// completes it. A request still pending when its owner is destroyed (only on an unwinding error path: the job
/// then ends) is cancelled and freed without waiting, so no rank hangs on its way out; the operation's buffer
/// must outlive the Request, which is why owners keep the two side by side.
/// <!-- compile: body(std::int64_t* buf, int n, int src, int tag, MPI_Comm comm) -->
/// ```cpp
/// mcmclb::mpi::Request r;
/// mcmclb::mpi::check(MPI_Irecv(buf, n, MPI_INT64_T, src, tag, comm, r.out()), "MPI_Irecv");
/// r.wait();
/// ```
class Request {
 public:
  Request() = default;
  ~Request();
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;
  Request(Request&& other) noexcept : handle_(std::exchange(other.handle_, MPI_REQUEST_NULL)) {}
  Request& operator=(Request&& other) noexcept;

  /// Where a nonblocking call stores its request. Throws std::logic_error while one is still pending here, since
  /// overwriting it would leak an operation nobody completes.
  [[nodiscard]] MPI_Request* out();
  /// True from the nonblocking call until completion.
  [[nodiscard]] bool pending() const noexcept { return handle_ != MPI_REQUEST_NULL; }
  /// MPI_Test once: true when the operation has completed (it is then no longer pending). False, without any
  /// MPI call, when nothing is pending: there is nothing that could have completed.
  [[nodiscard]] bool test();
  /// Waits as wait_politely() waits; returns at once when nothing is pending.
  void wait(Patience patience = default_nap);
  /// Waits as wait_politely() waits until one of requests completes (simulation build: MPI_Waitany); returns its
  /// index, and that request is no longer pending. Throws std::logic_error when none of them is pending.
  static std::size_t wait_any(std::span<Request* const> requests, std::chrono::microseconds nap = default_nap);

 private:
  MPI_Request handle_ = MPI_REQUEST_NULL;
};

/// Barrier over comm that sleeps while waiting (MPI_Ibarrier + wait_politely; simulation build: tree_barrier, since
/// SMPI's nonblocking collectives are flat).
void barrier_politely(const Comm& comm, Patience patience = default_nap);

/// Barrier that the ranks leave together, to start a timed section: on real MPI a polite barrier gathers ranks that
/// arrive far apart without taking the cores from the latecomers, then MPI_Barrier, which all reach within a nap,
/// releases them at once. Returns 0 there. In simulation every rank leaves at the same simulated date, whatever ran
/// before: a reduction of the arrival dates (the barrier), a second that agrees on a start date after the last rank
/// is out, then a sleep until that date; returns the seconds of that second reduction and sleep, the price of a
/// common start, which a timed section holding barriers may leave out.
double barrier_together(const Comm& comm, Patience patience = default_nap);

/// The tag of tree_barrier's messages, the largest every MPI must allow. A range communicator's tags reach it too
/// (range_comm.hpp), so a rank enters tree_barrier on a communicator only when its own operations over it are
/// complete: then no message to it is left to match. The kernel's and the driver's barriers come after such work.
inline constexpr int kTreeBarrierTag = 32767;

/// Barrier over the intracommunicator comm by blocking point-to-point calls on kTreeBarrierTag: gathered up a binomial
/// tree to rank 0 and released back down, 2 (P - 1) empty messages. A rank sends up only once its whole subtree has
/// arrived and otherwise waits on receives it posted itself. That is the point in simulation, where ranks reach a
/// barrier far apart (the end of a run): SMPI's MPI_Barrier (Bruck's dissemination, as MPICH's) leaves each
/// waiting rank's send of the round it is stuck in outstanding, SimGrid 3.32 keeps every outstanding small send in
/// one list of the whole simulation, and every message that completes scans that list, so each waiting rank makes
/// every later message of the ranks still working dearer (docs/explanation/simulator-host-cost.md, "Ranks that wait at
/// the end of a run").
void tree_barrier(const Comm& comm);

/// Collective over comm: root's text on every rank (its length, then its bytes; MPI_Bcast).
std::string bcast_text(std::string text, int root, const Comm& comm);

/// MAX of value over comm, waiting politely (MPI_Iallreduce + wait_politely; simulation build: MPI_Allreduce).
double max_politely(const Comm& comm, double value, std::chrono::microseconds nap = default_nap);

/// Broadcasts words from root over comm, waiting politely (MPI_Ibcast + wait_politely; simulation build:
/// MPI_Bcast).
void bcast_politely(const Comm& comm, std::span<std::int64_t> words, int root,
                    std::chrono::microseconds nap = default_nap);

/// Sums values over comm in place, waiting politely (MPI_Iallreduce + wait_politely; simulation build:
/// MPI_Allreduce).
void allreduce_sum_politely(const Comm& comm, std::span<std::int64_t> values,
                            std::chrono::microseconds nap = default_nap);

/// The extent of one element of type (MPI_Type_get_extent): where the next element starts in a buffer.
[[nodiscard]] MPI_Aint extent_of(MPI_Datatype type);

/// MPI_Gatherv and MPI_Allgatherv, waiting politely (the nonblocking form + wait_politely; simulation build: the
/// blocking form).
void gatherv_politely(const Comm& comm, const void* in, int count, void* out, const int* counts,
                      const int* displacements, MPI_Datatype type, int root, Patience patience = default_nap);
void allgatherv_politely(const Comm& comm, const void* in, int count, void* out, const int* counts,
                         const int* displacements, MPI_Datatype type, Patience patience = default_nap);

/// Point to point, waiting politely (the nonblocking call + wait_politely; simulation build: the blocking call).
void send_politely(MPI_Comm comm, const void* data, int count, MPI_Datatype type, int dest, int tag);
void recv_politely(MPI_Comm comm, void* data, int count, MPI_Datatype type, int source, int tag);
/// Elements of type in the next message from source with tag on comm, once it has arrived (MPI_Iprobe between naps;
/// simulation build: MPI_Probe), and MPI_Get_count of it.
int probe_count_politely(MPI_Comm comm, int source, int tag, MPI_Datatype type);

/// The element type T's MPI datatype, for the typed polite collectives below.
template <class T>
MPI_Datatype datatype_of() {
  if constexpr (std::is_same_v<T, std::int64_t>) {
    return MPI_INT64_T;
  } else if constexpr (std::is_same_v<T, double>) {
    return MPI_DOUBLE;
  } else {
    static_assert(std::is_same_v<T, char>, "datatype_of: int64_t, double or char");
    return MPI_CHAR;
  }
}

/// Collectives for untimed setup and checks, waiting with setup_patience unless told otherwise (the nonblocking
/// form + wait_politely; simulation build: the blocking form). out is read on root only.
void reduce_politely(const Comm& comm, const void* in, void* out, int count, MPI_Datatype type, MPI_Op op, int root,
                     Patience patience = setup_patience);
void allreduce_politely(const Comm& comm, const void* in, void* out, int count, MPI_Datatype type, MPI_Op op,
                        Patience patience = setup_patience);
void gather_politely(const Comm& comm, const void* in, int count, MPI_Datatype type, void* out, int root,
                     Patience patience = setup_patience);
void bcast_politely(const Comm& comm, void* data, int count, MPI_Datatype type, int root,
                    Patience patience = setup_patience);

/// SUM of count elements per rank onto root's out.
template <class T>
void reduce_sum_politely(const Comm& comm, const T* in, T* out, int count, int root) {
  reduce_politely(comm, in, out, count, datatype_of<T>(), MPI_SUM, root);
}

/// Every rank's count elements onto root's out, rank by rank (count * comm.size() elements).
template <class T>
void gather_politely(const Comm& comm, const T* in, int count, T* out, int root) {
  gather_politely(comm, in, count, datatype_of<T>(), out, root);
}

/// Waits until done() returns true (done tests, and may progress, an operation), waiting in between as patience
/// says. In the simulation build the nap is simulated time (smpicxx redirects the sleep).
void wait_until_politely(const std::function<bool()>& done, Patience patience = default_nap);

/// First line of MPI_Get_library_version, e.g. "MPICH Version: 4.0.2".
std::string library_version();

/// How a communicator's ranks share their nodes' cores: what decides whether a measurement is of the algorithm
/// or of ranks waiting for a core. With more ranks than cores on a node, an MPI that busy-polls (MPICH does)
/// keeps every waiting rank spinning, so a rank that must act waits for the scheduler: collectives and
/// communicator creation then cost 100-1000 x more than on a core of their own.
struct NodeOccupancy {
  // Cores are counted per host, the machine whose cores ranks share: on a cluster each node is a host, but one
  // machine can run several nodes (Hydra's fork bootstrap: -hosts a:2,b:2), whose ranks compete for its cores.
  /// The most ranks of the communicator on one host; 0 when unknown.
  int ranks_on_node = 0;
  /// The fewest CPUs the ranks of one host may run on, over the hosts: on each the union of its ranks'
  /// sched_getaffinity masks, i.e. what the job may use there (a cgroup or binding of the job counts, the
  /// machine's other CPUs do not); 0 when unknown.
  int cores_available = 0;
  /// Hosts holding more ranks than CPUs available to them (exact per host, unlike comparing the two fields above
  /// when hosts differ).
  int nodes_oversubscribed = 0;
  /// How many nodes (MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) groups) the communicator spans; 0 when unknown.
  int nodes = 0;
  /// Rank 0 of the communicator only (empty elsewhere): every node in the order of its lowest rank, as
  /// HOST[RANKS]/CPUS separated by spaces, RANKS as runs of the communicator's ranks, CPUS the union of the
  /// node's ranks' masks (0: unknown), e.g. "n01[0-3]/4 n02[4-7]/2". Nodes emulated on one machine share a HOST.
  std::string layout;
  /// What the cores give the job: the least, over its ranks, of the part of a short window (kCoreShareWindow) a
  /// rank's thread ran while every rank spun at once. About 1 where each rank has a core to itself; lower where
  /// other programs run on the same cores (a node shared with other jobs, a build beside the run). 0 when not
  /// measured: unknown occupancy, or some node oversubscribed already (its waits are polite either way).
  double core_share = 0;

  [[nodiscard]] bool known() const noexcept { return ranks_on_node > 0 && cores_available > 0; }
  /// Some node runs more ranks than it has CPUs for the job. False when unknown.
  [[nodiscard]] bool oversubscribed() const noexcept { return known() && nodes_oversubscribed > 0; }
};

/// Collective over comm (every rank gets the same answer, but for the layout, which only rank 0 gets): the
/// occupancy of comm's nodes and hosts. Every MPI call is checked; the node communicator it makes is freed before it
/// returns. In the simulation build the answer is "not applicable" (all fields 0, known() false): simulated ranks are
/// threads of one host process whose simulated times do not depend on the host's cores, so no simulated point is
/// oversubscribed in the sense that matters here.
NodeOccupancy node_occupancy(const Comm& comm);

/// How long node_occupancy lets every rank spin to measure NodeOccupancy::core_share: a few of the scheduler's
/// slices, so that a core shared with one other busy program shows about half.
inline constexpr std::chrono::milliseconds kCoreShareWindow{30};
/// The core_share below which a rank counts as sharing its core with other programs (its waits then yield).
inline constexpr double kCoreShareToSpin = 0.8;
/// How long a wait under WaitPolicy::yield gives its core up at each test before it naps.
inline constexpr std::chrono::microseconds kYieldFirst{1000};

/// The wait policy that follows the machine: spin where every rank has a core of its own and runs on it
/// (core_share at least kCoreShareToSpin); yield where each rank has a core but other programs take the cores'
/// time; polite where some node holds more ranks than cores, and where that is not known (the safe side: a nap
/// costs little, spinning on shared cores costs 100-1000 x).
[[nodiscard]] WaitPolicy machine_wait_policy(const NodeOccupancy& occupancy);
/// Why machine_wait_policy chose what it did, in a few words for a report ("each rank has a core of its own (core
/// share 0.97, at least 0.80)").
[[nodiscard]] std::string machine_wait_reason(const NodeOccupancy& occupancy);

}  // namespace mcmclb::mpi
