// SPDX-License-Identifier: BSD-3-Clause
// mcmclb's balancers for an application's own Markov chains: the application says what one item of a chain does
// on a group's communicator and how a chain's state becomes bytes and back; run() works every chain under the
// balancer, creation method and finished rule named as in a study file, and can record the items' costs as a trace
// file for `mcmclb advise`. Link mcmclb::walkers (CMake) or use pkg-config mcmclb-walkers; docs/guide/library.md.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "mcmclb/group_comm.hpp"
#include "mcmclb/input_error.hpp"

namespace mcmclb::walkers {

/// An application's chains, numbered 0 .. count() - 1. A group of ranks works one chain at a time, item by item;
/// every member of the group makes the same calls with the same arguments. A chain's answer must not depend on
/// which ranks work it: draw its random numbers from the chain and the item (a counter-based generator), never
/// from a rank's own stream, and add each term of a sum of doubles to an ExactSum that the group reduces with
/// ops::exact_sum (GroupComm); a rank's share summed in a double would round differently as the terms split.
class Chains {
 public:
  virtual ~Chains() = default;
  /// How many chains: the same on every rank, any number from 1 (groups start chain counts that differ by one at
  /// most where they do not split evenly).
  [[nodiscard]] virtual int count() const = 0;
  /// Items of chain c: the same on every rank, known before the run (balancers plan with it). For a chain that
  /// ends when it is done (done()), a bound: the most items it may take.
  [[nodiscard]] virtual int64_t items(int chain) const = 0;
  /// Whether chain c has what it needs before item `item` (for example, its estimate has settled), so that it ends
  /// before items(c). Asked on every member of the group before each item: answer from the chain's state, which
  /// every member holds alike (a value the items summed with the group), never from the rank; once true, stay true.
  /// The chain's remaining items are then passed over: no work() call and no cost recorded, but a polling point
  /// each, so a bound far above what chains take costs time. A member that joins the chain later gets the state it
  /// was done with and is asked with a later item. Balancers that plan (lookahead, mostwork, the finished
  /// rule pays) plan with the bound, or with items_bound() where the chain lowers it, and plan nothing more for
  /// a chain once it is done. Default: never, every chain works items(c) items.
  [[nodiscard]] virtual bool done(int /*chain*/, int64_t /*item*/) const { return false; }
  /// The most items chain c takes in all, as it knows before item `item`: a bound the chain lowers as it learns
  /// (for example, from how fast its estimate settles), at most items(c), which stays the bound that places the
  /// chains and names a checkpoint. Asked like done(), on every member before each item, where the balancers plan
  /// from measured costs: answer from the chain's state, never from the rank. The planners then count the items
  /// past it as taking no time. A wrong answer costs only plans, never items: done() alone ends a chain. Default:
  /// items(c).
  [[nodiscard]] virtual int64_t items_bound(int chain, int64_t /*item*/) const { return items(chain); }
  /// Sets up chain c's initial state, before its first item, on every member of the group that starts it. The same
  /// state on any rank: a chain moved to another group before it started (balancer steal) is started there afresh.
  virtual void start(int chain, GroupComm& group) = 0;
  /// Works item `item` (0, 1, ...) of chain c on every member of the group; group is the communicator the creation
  /// method made over the group's ranks (size() members, this one rank()).
  virtual void work(int chain, int64_t item, GroupComm& group) = 0;
  /// Chain c after its last item, on every member of the group that ended it: where its result can be kept.
  virtual void finish(int /*chain*/, GroupComm& /*group*/) {}
  /// Chain c's result, on member 0 of the group that ended it, right after finish(): what run() collects for
  /// Report::results when Options::results asks for them. Default: save(chain), the chain's final state.
  [[nodiscard]] virtual std::vector<std::byte> result(int chain) const { return save(chain); }
  /// Chain c's state as bytes, on a member of the group that has worked it so far. Its size may vary.
  [[nodiscard]] virtual std::vector<std::byte> save(int chain) const = 0;
  /// Chain c's state from save()'s bytes, on a rank that joins the chain's group when groups merge. Throw (any
  /// std::exception) for bytes that do not make a state.
  virtual void restore(int chain, std::span<const std::byte> state) = 0;
};

/// Chains whose state stays spread over the group's members (a lattice split by rows, particles split over ranks),
/// so that no member ever holds a whole state. The application lays the state out as one run of bytes (a lattice's
/// rows one after another) and says which bytes each member holds (piece); a merge or a resume then gives each member
/// only the bytes of its new piece, from the members or the checkpoint's files that hold them, whatever the two
/// groups' sizes, and each member writes its own piece at a checkpoint. run() calls these in place of save() and
/// restore().
class SpreadChains : public Chains {
 public:
  /// Bytes [begin, end) of a state laid out as one run of bytes.
  struct Piece {
    int64_t begin = 0, end = 0;
  };
  /// The bytes of chain c's state that member `member` of a group of `size` members holds: the same answer on every
  /// rank, for any size, before the chain starts. The members' pieces follow each other in rank order from byte 0,
  /// and the last ends at the state's length, the same for every size (chains may differ). Asked on every member of
  /// a group that moves the chain, for the old size and the new one.
  [[nodiscard]] virtual Piece piece(int chain, int member, int size) const = 0;
  /// This member's bytes of chain c's state, exactly its piece() long, as a view into the chain's own memory that
  /// stays valid until the library's next call for the chain: merges send from it and checkpoints write it, with
  /// no copy. Called on every member of the group that has worked the chain so far; no group call.
  [[nodiscard]] virtual std::span<const std::byte> save_piece(int chain) const = 0;
  /// What every member holds alike besides its piece (an item count, sums so far), taken on one member and given to
  /// every member's restore_piece. Default: nothing.
  [[nodiscard]] virtual std::vector<std::byte> save_shared(int /*chain*/) const { return {}; }
  /// Chain c on this member of group: `piece` holds exactly the bytes piece(c, group.rank(), group.size()) names,
  /// never the whole state; take them (std::move) to spare a copy. `shared` is save_shared's. Called on every member
  /// of a group that takes the chain up: a merged group, the former holders too (their piece changes), and a group
  /// resuming from a checkpoint. Every member is called alike, so it may use the group's collectives. Throw (any
  /// std::exception) for bytes that do not make a state.
  virtual void restore_piece(int chain, std::vector<std::byte>& piece, std::span<const std::byte> shared,
                             GroupComm& group) = 0;
  /// Chain c's result, on member 0 after finish(), which every member calls and can gather it in: no default here,
  /// as no member holds the whole state.
  [[nodiscard]] std::vector<std::byte> result(int chain) const override = 0;
  /// Not called for spread chains: they throw std::logic_error.
  [[nodiscard]] std::vector<std::byte> save(int chain) const final;
  void restore(int chain, std::span<const std::byte> state) final;
};

/// How run() lays the chains out over the initial groups before any item is worked.
enum class Placement {
  /// From the chains' item bounds (Chains::items): each chain, longest first, goes to the group with the fewest
  /// items so far; the groups then stand in order of their totals, least on the left, each working its longest
  /// chain first. The merging balancers (collective, async, lookahead) hand a finished group to the group on its
  /// right, so they gain whatever order the application numbers its chains in. Chains of equal bounds stay as
  /// numbered.
  by_items,
  /// As numbered: initial group g takes chains g*W .. g*W + W - 1, fewer at the end where the count does not
  /// split evenly. The merging balancers then gain most where the chains are numbered shortest first.
  as_numbered
};

/// The chains each of `groups` initial groups starts with, in the order the group works them, as run() places
/// chains with these item bounds; the groups' counts differ by one at most. Throws std::invalid_argument for
/// groups < 1 or a negative bound.
[[nodiscard]] std::vector<std::vector<int>> place_chains(std::span<const int64_t> items, int groups, Placement how);

/// Where run() collects every chain's result (Chains::result): nowhere (no cost), on rank 0 of the communicator,
/// or on every rank.
enum class Results { none, root, all };

/// How to run: the names and values a study file's keys take (docs/reference/keys.md), checked the same way.
struct Options {
  std::string balancer = "none";  ///< key balancer
  std::string method;             ///< key method; empty: the balancer's default
  std::string finished;           ///< key finished; empty: the balancer's default
  int interval = 1;               ///< key interval (collective's period; lookahead's, mostwork's window)
  /// The initial groups, by one of a study file's three keys (docs/reference/keys.md says what each allows): this
  /// many ranks each (key G), this many groups (key groups.count) or these sizes (key groups.sizes). Set one:
  /// group_size stays 1 beside the others. The chains then split as Chains::count() says.
  int group_size = 1;
  int groups = 0;                             ///< key groups.count; 0: by group_size
  std::vector<int> group_sizes;               ///< key groups.sizes, in rank order; empty: by group_size or groups
  Placement placement = Placement::by_items;  ///< which chains each initial group starts with (place_chains)
  /// What one item takes on one rank, in seconds, read by the balancers that plan ahead (lookahead, mostwork)
  /// and the finished rule pays. 0 (the default): measured as the run goes. Each item's time is its slowest
  /// member's; a chain's item cost is the mean of its items so far, and the speed-up with the group's size follows
  /// Amdahl's law fitted to the chains worked at two sizes or more, perfect until then. A value > 0 is used
  /// instead, with perfect speed-up.
  double item_s = 0;
  /// key work.wait: how a waiting rank spends its time, `spin`, `polite` (naps), `yield` (yields 1 ms, then naps)
  /// or `auto`: spin where each rank has a core of its own and runs on it, yield where other programs take the
  /// cores' time (run() measures that at the start, mcmclb/mpi.hpp's NodeOccupancy::core_share), polite where ranks
  /// outnumber a node's cores. Where other programs share
  /// the cores, a spinning rank takes the core its partner needs, and each of an item's sums can wait a time slice.
  std::string wait = "auto";
  /// Seconds any one Chains call may take; one that has not returned by then ends the job with one line naming the
  /// rank, the chain, the item and the call (exit status 4), instead of a job that waits forever. 0: no limit.
  double item_timeout_s = 0;
  /// A trace file to write (docs/reference/columns.md, "Trace files"): every item's cost, each chain's speed-ups
  /// where it worked at more than one group size (one a change of size, from the items just before and just after
  /// it, so that a host that drifts over the run cancels), and the run's own time (its `# run:` line). Empty: nothing
  /// is recorded. Rows reach the file as chains end, under a first line that marks it incomplete; when the run ends
  /// well the file is replaced whole, sorted and with the speed-ups, without that line. So a run that fails or is
  /// killed leaves every ended chain's items, which `mcmclb advise` refuses unless told --incomplete; so does a run
  /// whose last write fails (a full disk), which says so in Report::record_error.
  std::string record;
  Results results = Results::none;  ///< where Report::results holds every chain's result
  std::string name = "app";         ///< what the trace's comment lines call the application
  /// What the chains' answers depend on besides Options::name, their count and their item bounds, as the
  /// application states it: its parameters as text or bytes, for example "seed 7; temperatures 1.5 2 2.5". A
  /// checkpoint folder keeps it, and a folder made with other parameters is refused in one line before any work,
  /// where resuming would mix the chains of two set-ups. Empty (the default): none. Not read by options_from_args:
  /// the program states it, from its own arguments.
  std::string parameters;
  /// A folder (made if missing, on a file system every rank sees) where each chain's state is kept as the run goes,
  /// so that a run killed at any instant can be run again and continue: finished chains are not worked again, and
  /// started ones go on from their last checkpoint, under any balancer and at any rank count, to the same answers,
  /// bit for bit. Each chain's file holds its state (Chains::save; for SpreadChains, what every member holds alike
  /// and the names of its pieces, each member having written its own file in the subfolder pieces/ first) before its
  /// next item, or its result once it ended, and, with Options::record, every item's cost so far; the
  /// member 0 of the chain's group replaces it whole (a temporary file, fsync, rename), so a kill leaves the last
  /// whole one, and the one before stays as chain-N.prev. No rank outside the group takes part, and the chains need
  /// not be saved at one instant, as a chain's answer depends on the chain alone. A folder made for another
  /// application (Options::name), chain count, item bounds, parameters (Options::parameters) or form (whole states
  /// against SpreadChains' pieces: the folder's meta file says which) is refused in one line, before anything is
  /// written. A chain whose file is torn or gone goes on from chain-N.prev, said in a line (the bad file kept as
  /// chain-N.bad); one whose two files are torn or gone, though the folder held them (its subfolder saved/ marks
  /// each), is refused so. An empty file afresh-N in the folder asks the next run to start chain N anew, once. A run
  /// that resumes says so in one line on rank 0: the chains finished before, those going on and from which item, those
  /// starting afresh. A checkpoint that cannot be written (a full disk) does not stop the run: its end says, in
  /// Report::checkpoints_lost and in one line on rank 0, which chains' latest state the folder lacks, and notes them in
  /// the folder (file `lost`) for the next run's line to repeat. A run that ends with nothing lost leaves the folder
  /// whole: run again, it works nothing and returns the results; remove the folder to start anew. Empty (the default):
  /// no checkpoints. With a folder, SIGTERM, SIGUSR1 (what Slurm's --signal sends before a job's limit) and SIGINT (a
  /// second one ends the process at once) make every group's member 0 write its chain's checkpoint at its next item,
  /// and no write start after; then rank 0 writes the file `stopped` in the folder, which the next run removes with any
  /// temporary file a kill left, and ends the job with kExitResumable (docs/guide/your-chains.md, "Jobs that end on
  /// time").
  std::string checkpoint;
  /// Seconds between two checkpoints of a chain, counted on the member that writes them.
  double checkpoint_every_s = 60;
  /// Items between two checkpoints of a chain instead; 0 (the default): every checkpoint_every_s seconds.
  int64_t checkpoint_every_items = 0;
  /// The expected seconds between failures that end the job (for example a node's mean time between failures
  /// over the job's node count). Above 0, each chain's checkpoint interval follows from what its own checkpoints
  /// cost, in place of checkpoint_every_s: checkpoint_interval_s(C, this), C the chain's mean seconds for one
  /// (Chains::save and the write, measured on the rank that writes it). A chain's first checkpoint on a rank then
  /// comes after one item, to measure C. 0 (the default): checkpoint_every_s or checkpoint_every_items.
  double checkpoint_mtbf_s = 0;
  /// Seconds a signalled run waits for every rank's last checkpoint before it exits anyway (a rank held in a long
  /// item), each chain then resuming from its latest checkpoint.
  double stop_grace_s = 30;
};

/// The seconds of work between two checkpoints that lose the least time to checkpoints and to the work redone after
/// a failure, for a checkpoint of cost_s seconds and failures every mtbf_s seconds on average: Daly's optimum,
/// sqrt(2 C M) (1 + sqrt(C / 2M) / 3 + (C / 2M) / 9) - C for C < 2M, and M from 2M on (C = cost_s, M = mtbf_s).
/// Its first term is Young's first-order optimum sqrt(2 C M), which it refines where C is not small against M.
/// 0 for mtbf_s <= 0 or cost_s < 0.
[[nodiscard]] double checkpoint_interval_s(double cost_s, double mtbf_s);

/// The exit status of a run that stopped on a signal after its checkpoints (Options::checkpoint): run the same
/// command again to resume. EX_TEMPFAIL of BSD's sysexits: a temporary failure, to be retried. mpiexec (Hydra)
/// returns it; srun returns 137 for an aborted step, so a job script reads the file `stopped` instead.
inline constexpr int kExitResumable = 75;

/// Where one rank's time went (ranks.csv's columns).
struct RankReport {
  double elapsed_s = 0, work_s = 0, polling_s = 0, waiting_s = 0, regroup_s = 0;
  int64_t regroups = 0;         ///< communicators joined, the initial one included for balancers that regroup
  int64_t items_worked = 0;     ///< items worked as a group member
  int64_t items_passed = 0;     ///< items passed over as a group member, their chain being done
  int64_t state_bytes = 0;      ///< bytes of chain state restored on this rank
  int64_t chains_migrated = 0;  ///< chains this rank's groups took from another group (steal)
  int64_t checkpoints = 0;      ///< checkpoint files this rank wrote (Options::checkpoint)
  double checkpoint_s = 0;      ///< seconds it spent writing them, state and fsync included
};

/// One run (runs.csv's columns). Every field is known on every rank of the communicator but Report::ranks, which
/// rank 0 alone holds.
struct Report {
  std::string balancer, method, finished;  ///< as run: the defaults filled in ("" where the balancer has no rule)
  int interval = 0;                        ///< 0 for balancers that use none
  int nprocs = 0, groups = 0, chains_per_group = 0;
  double time_s = 0;  ///< the slowest rank's elapsed time
  double regroups_avg = 0, regroups_std = 0;
  int64_t regroups_min = 0, regroups_max = 0;
  double migrated_avg = 0;
  bool valid = false;      ///< every item of every chain worked once, every rank finished, no communicator leaked
  std::string violations;  ///< why not valid
  RankReport rank;         ///< this rank
  std::vector<RankReport> ranks;  ///< rank 0 only: every rank, in rank order
  /// The items each chain worked, by chain (items(c), or fewer where done() ended it sooner).
  std::vector<int64_t> chain_items;
  /// How waiting ranks spent their time (spin, polite or yield: Options::wait as run) and why: "as asked", or
  /// what `auto` found (mcmclb/mpi.hpp's machine_wait_reason), e.g. "auto: each rank has a core of its own (...)".
  std::string wait, wait_why;
  Placement placement = Placement::by_items;  ///< as Options::placement asked
  /// Per chain, the initial group that started it, numbered from the left (what place_chains gave).
  std::vector<int> chain_groups;
  /// Every chain's result (Chains::result), by chain, on the ranks Options::results names (empty elsewhere).
  std::vector<std::vector<std::byte>> results;
  /// On every rank: what one item took at one rank, the mean over every item worked (Options::item_s 0), or
  /// Options::item_s as given.
  double item_s = 0;
  /// On every rank: Amdahl's parallel fraction of the items' speed-up with the group's size, as measured over the
  /// chains worked at two sizes or more (weighted by chain); 1 where none was, or where Options::item_s was given.
  double parallel_fraction = 1;
  int64_t recorded_items = 0;     ///< item rows written to Options::record (where record_error is set: those it holds)
  int64_t recorded_speedups = 0;  ///< speed-up rows written to it
  /// On every rank, with Options::record: empty where the trace file holds the whole run; else why it could not be
  /// written whole at the run's end (a full disk), as rank 0's line said. The file then keeps its first line
  /// `# incomplete:` and the rows that reached it as chains ended; the results returned are whole.
  std::string record_error;
  /// On every rank, with Options::checkpoint: per chain, the item this run took it up at from the checkpoint (0:
  /// from its start), or -1 for a chain the checkpoint held as finished, which this run did not work.
  std::vector<int64_t> resumed_at;
  /// On every rank, with Options::checkpoint: the checkpoint writes that failed on any rank (a full disk, a folder
  /// made read-only), and the first one's line (rank, chain, cause).
  int64_t checkpoint_failures = 0;
  std::string checkpoint_error;
  /// On every rank, with Options::checkpoint: the chains whose latest state the folder lacks as the run ends, as the
  /// last write of each failed: a running chain's, or its finish's. The results returned are whole; a run again
  /// works these chains again from the folder's older checkpoint (or their start). A job that must notice exits
  /// non-zero where this is not empty, as examples/ising does.
  std::vector<int> checkpoints_lost;
  /// On every rank, with Options::checkpoint, by chain: the mean seconds its checkpoints took in this run
  /// (Chains::save and the write; 0: none written), and with Options::checkpoint_mtbf_s the interval that mean
  /// gives (checkpoint_interval_s; 0 elsewhere).
  std::vector<double> checkpoint_cost_s, checkpoint_interval_s;
  /// On every rank, with Options::checkpoint, by chain: the writes checkpoint_cost_s is the mean of, and with
  /// Options::checkpoint_mtbf_s the interval at the fastest (low) and at the slowest (high) of them, which the
  /// interval lies between (it grows with the cost). A mean of one or two writes moves with a disk's noise: the
  /// range shows how far, and is one value where one write was made, which shows no spread at all.
  std::vector<int64_t> checkpoint_writes;
  std::vector<double> checkpoint_interval_low_s, checkpoint_interval_high_s;
  /// Whether some output the run owed is missing, on every rank alike: the trace (record_error) or a chain's latest
  /// checkpoint (checkpoints_lost). The results are whole either way; a job that must notice exits with
  /// mcmclb::kOutputErrorExit (4, mcmclb/input_error.hpp) on every rank, as mcmclb's own commands do where they
  /// cannot record a run, and as the examples do.
  [[nodiscard]] bool output_lost() const noexcept { return !record_error.empty() || !checkpoints_lost.empty(); }
};

/// Collective over comm: works every chain under the options. Bad options throw mcmclb::InputError on every rank
/// alike, with the line a study file's key gets, before any work. An exception thrown by a Chains call on any rank
/// prints one line naming the rank, the chain, the item and the cause, and aborts the job (MPI_Abort, exit 3), as
/// the other ranks would otherwise wait for that rank forever; so does a call that outlasts item_timeout_s (exit 4).
/// A recording's rows reach its file as chains end (Options::record). A write that fails on any rank never leaves
/// another rank waiting: before any work (a trace's head, a checkpoint folder's meta file), every rank throws the same
/// InputError; during the run and at its end, the run goes on and returns its results, and the Report says what was
/// not written (Report::output_lost), as does one line on rank 0.
Report run(MPI_Comm comm, Chains& chains, const Options& options);

/// A result's bytes as the trivially copyable value T they hold (what Chains::result made of one); throws
/// std::invalid_argument when the size differs.
template <class T>
[[nodiscard]] T result_as(std::span<const std::byte> bytes) {
  static_assert(std::is_trivially_copyable_v<T>, "result_as: a trivially copyable type");
  if (bytes.size() != sizeof(T)) {
    throw std::invalid_argument("result_as: " + std::to_string(bytes.size()) + " bytes, where the type has " +
                                std::to_string(sizeof(T)));
  }
  T value;
  std::memcpy(&value, bytes.data(), sizeof(T));
  return value;
}
/// A value's bytes, for Chains::result.
template <class T>
[[nodiscard]] std::vector<std::byte> bytes_of(const T& value) {
  static_assert(std::is_trivially_copyable_v<T>, "bytes_of: a trivially copyable type");
  const auto* p = reinterpret_cast<const std::byte*>(&value);
  return {p, p + sizeof(T)};
}

/// Options from a program's command line and environment, so that a job chooses its balancer, rule, recording and
/// checkpoints without a rebuild: each key of Options as --mcmclb-KEY VALUE or --mcmclb-KEY=VALUE (for example
/// --mcmclb-balancer mostwork, --mcmclb-checkpoint ckpt), or as the variable MCMCLB_KEY (MCMCLB_BALANCER), the
/// command line winning; options_help() lists the keys. The flags are taken out of argv (argc lowered) and the
/// application's own arguments are left in order; so is everything after a "--". Keys not given keep their value
/// in `defaults`. Call it on every rank with the same arguments, after MPI_Init (which may edit argv). Throws
/// mcmclb::InputError with one line naming the flag or variable and what is allowed (check_options' lines).
Options options_from_args(int& argc, char** argv, Options defaults = {});
/// The keys options_from_args reads, one line each, for a program's --help.
std::string options_help();
/// Throws mcmclb::InputError, with the line a study file's key gets, for options run() would refuse whatever the
/// rank count: names of balancers, methods, rules and waits, and the numbers.
void check_options(const Options& options);

/// The balancer names run() accepts, in the order users see them.
std::vector<std::string> balancer_names();

}  // namespace mcmclb::walkers
