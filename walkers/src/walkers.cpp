// SPDX-License-Identifier: BSD-3-Clause
// The public API for an application's chains (mcmclb/walkers.hpp): the options become a run as a study file's keys
// would (the study library's parser and checks), the kernel works the application's chains through ChainWork, and
// the results come back as runs.csv's and ranks.csv's numbers, with the items' costs as a trace file if asked.
#include "mcmclb/walkers.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <numeric>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <utility>

#include "checkpoint.hpp"
#include "mcmclb/balancer.hpp"
#include "mcmclb/config.hpp"
#include "mcmclb/csv.hpp"
#include "mcmclb/input_error.hpp"
#include "mcmclb/kernel.hpp"
#include "mcmclb/mpi.hpp"
#include "mcmclb/pace.hpp"
#include "mcmclb/provenance.hpp"
#include "mcmclb/text.hpp"
#include "mcmclb/trace.hpp"
#include "trace_writer.hpp"

namespace mcmclb::walkers {

namespace {

/// T_ms where the items' costs are measured (Options::item_s 0): a study's T_ms must be positive, and the kernel
/// plans from what it measures instead (RunSpec's work.compute.measured).
constexpr double kStandInItemMs = 10;

/// A number as a message shows it, every digit kept.
std::string number_text(double x) {
  char text[40];
  std::snprintf(text, sizeof text, "%.17g", x);
  return text;
}

/// The options as a study's keys, which the study library checks as it checks a study file's: the same names, the
/// same defaults and the same one-line errors. Typed values: whatever the application passes stays one string (a
/// name with a comma or a bracket never turns into a list of names), and no text is parsed on the way.
StudyValue study_keys(const Options& o) {
  StudyValue study;
  study.keys = {{"experiment", "walkers"},
                {"balancer", o.balancer},
                {"interval", StudyScalar(int64_t{o.interval})},
                {"T_ms", StudyScalar(o.item_s > 0 ? 1000.0 * o.item_s : kStandInItemMs)},
                {"work.wait", o.wait}};
  if (!o.method.empty()) study.set("method", o.method);
  if (!o.finished.empty()) study.set("finished", o.finished);
  // The layout by the study file's own keys, so that two of them given are refused by its line; G is left out
  // where it is its default beside another, as a study file leaves it out.
  if (o.group_size != 1 || (o.groups == 0 && o.group_sizes.empty())) study.set("G", StudyScalar(int64_t{o.group_size}));
  if (o.groups != 0) study.set("groups.count", StudyScalar(int64_t{o.groups}));
  if (!o.group_sizes.empty())
    study.set("groups.sizes", study_list(std::vector<long>(o.group_sizes.begin(), o.group_sizes.end())));
  return study;
}

/// The options' numbers that no study key checks.
void check_numbers(const Options& o) {
  if (!(std::isfinite(o.item_s) && o.item_s >= 0)) {
    throw InputError("Options::item_s: " + number_text(o.item_s) +
                     " is not allowed (allowed: 0, measured as the run goes, or seconds > 0)");
  }
  if (!(std::isfinite(o.item_timeout_s) && o.item_timeout_s >= 0)) {
    throw InputError("Options::item_timeout_s: " + number_text(o.item_timeout_s) +
                     " is not allowed (allowed: 0, no limit, or seconds > 0)");
  }
  if (!(std::isfinite(o.checkpoint_every_s) && o.checkpoint_every_s >= 0)) {
    throw InputError("Options::checkpoint_every_s: " + number_text(o.checkpoint_every_s) +
                     " is not allowed (allowed: seconds >= 0)");
  }
  if (o.checkpoint_every_items < 0) {
    throw InputError("Options::checkpoint_every_items: " + std::to_string(o.checkpoint_every_items) +
                     " is not allowed (allowed: 0, by seconds, or items > 0)");
  }
  if (!(std::isfinite(o.checkpoint_mtbf_s) && o.checkpoint_mtbf_s >= 0)) {
    throw InputError("Options::checkpoint_mtbf_s: " + number_text(o.checkpoint_mtbf_s) +
                     " is not allowed (allowed: 0, the interval as given, or seconds > 0)");
  }
  if (o.checkpoint_mtbf_s > 0 && o.checkpoint_every_items > 0) {
    throw InputError("Options::checkpoint_mtbf_s: set with checkpoint_every_items " +
                     std::to_string(o.checkpoint_every_items) +
                     " (allowed: one of them; the time between failures sets the interval in seconds)");
  }
  if (!(std::isfinite(o.stop_grace_s) && o.stop_grace_s >= 0)) {
    throw InputError("Options::stop_grace_s: " + number_text(o.stop_grace_s) +
                     " is not allowed (allowed: seconds >= 0)");
  }
}

/// The run the options ask for on nprocs ranks, built and checked by the study library as the keys of a study file
/// would be: the same names, the same defaults and the same one-line errors.
RunSpec run_spec(const Options& o, int nprocs, int chain_count) {
  check_numbers(o);
  StudyValue keys = study_keys(o);
  Experiment e = parse_experiment(keys, {}, "mcmclb::walkers::Options");
  check_against_nprocs(e, nprocs);
  if (chain_count < 1) {
    throw InputError("Chains::count(): " + std::to_string(chain_count) + " is not allowed (allowed: 1 or more chains)");
  }
  // The groups as the kernel lays them out (never by node here), then counts that do not split evenly give some
  // groups one chain fewer (AppChains::place).
  const int groups = group_count_of(e.groups, e.G, nprocs).value();
  keys.set("chains_per_group", StudyScalar(int64_t{(chain_count + groups - 1) / groups}));
  e = parse_experiment(keys, {}, "mcmclb::walkers::Options");
  std::vector<RunSpec> runs = expand_runs(e, nprocs, catalog(), 1);
  RunSpec spec = std::move(runs.front());
  spec.work.compute.record = !o.record.empty();
  // Measured costs are read where the run plans (lookahead, mostwork) or weighs merges (pays); elsewhere the
  // kernel need not agree on them, and Report::item_s comes from the leaders' timings alone.
  spec.work.compute.measured =
      o.item_s == 0 && (balancer_info(spec.balancer).plans_ahead || spec.finished == FinishedRule::pays);
  return spec;
}

/// One line on standard error and the whole job ends: a rank whose chain failed cannot take part in its group's
/// next collective, so the others would wait for it forever.
[[noreturn]] void abort_run(MPI_Comm comm, int rank, const std::string& what) {
  mpi::abort_with_line(comm, 3, "mcmclb: rank " + std::to_string(rank) + ": " + what);
}

/// The application's chains as the kernel works them: every call guarded, so that an exception names the chain,
/// the item and the call; with a time limit, a watchdog thread ends the process when a call outlasts it.
class AppChains final : public ChainWork {
 public:
  AppChains(Chains& chains, MPI_Comm comm, int rank)
      : chains_(chains), spread_(dynamic_cast<SpreadChains*>(&chains)), comm_(comm), rank_(rank) {}
  ~AppChains() override { stop_watchdog(); }
  AppChains(const AppChains&) = delete;
  AppChains& operator=(const AppChains&) = delete;

  // The kernel works slots: groups * W of them, W per initial group. Where the application's chains do not split
  // evenly, some slots hold no chain (items 0: nothing is called for them), one per group at most, so the groups'
  // chain counts differ by one at most. Every call below takes a slot and passes the application its chain.
  [[nodiscard]] int64_t items(int slot) const override {
    const int chain = chain_of(slot);
    return chain < 0 ? 0 : left(chain);
  }
  void start(int slot, GroupComm& group) override {
    const int chain = chain_of(slot);
    if (chain < 0 || finished_before(chain)) return;
    if (first(chain) > 0) {
      resume(chain, group);
    } else {
      guard(chain, 0, "start", [&] { chains_.start(chain, group); });
    }
    if (keeping_) since_[chain] = {0, pace::now_s()};
  }
  void work(int slot, int64_t item, GroupComm& group) override {
    const int chain = chain_of(slot);
    const int64_t at = first(chain) + item;
    if (keeping_ && group.rank() == 0) {
      before_item(chain, at, group);
    } else {
      // A merge made another rank the chain's member 0: that one writes the chain's record. Each member of a spread
      // state's group writes its own piece, when member 0 says one is due, and owes it when the run stops.
      if (stop_ != nullptr) stop_->leading(keeping_ && spread_ != nullptr);
      if (keeping_ && spread_ != nullptr) {
        int64_t write = kNoWrite;
        group.bcast(write, 0);
        if (write == kDueWrite || write == kStopWrite) (void)keep_spread(chain, at, group, nullptr);
        // Member 0 stops: it asks for no checkpoint of this chain after this one, so this member owes none.
        if ((write == kStopWrite || write == kStopNothing) && stop_ != nullptr) stop_->saved();
      }
    }
    const double t0 = pace::now_s();
    guard(chain, at, "work", [&] { chains_.work(chain, at, group); });
    if (keeping_) {
      if (rows_kept_) {
        rows_[chain].push_back({chain, at, group.size(), pace::now_s() - t0});
      }
      ++since_[chain].first;
    }
  }
  int64_t bound(int slot, int64_t item) override {
    const int chain = chain_of(slot);
    if (chain < 0 || finished_before(chain)) return 0;
    const int64_t at = first(chain) + item;
    int64_t most = 0;
    guard(chain, at, "items_bound", [&] { most = chains_.items_bound(chain, at); });
    return most - first(chain);  // the kernel counts the slot's items from where this run took the chain up
  }
  bool done(int slot, int64_t item) override {
    const int chain = chain_of(slot);
    const int64_t at = first(chain) + item;
    bool is_done = false;
    guard(chain, at, "done", [&] { is_done = chains_.done(chain, at); });
    if (!is_done) return false;
    // The kernel asks again only after this rank takes the chain anew; the first answer is where it ended.
    int64_t& ended = ended_at_.at(static_cast<std::size_t>(chain));
    ended = std::min(ended, at);
    return true;
  }
  void finish(int slot, GroupComm& group) override {
    const int chain = chain_of(slot);
    if (chain < 0 || finished_before(chain)) return;
    const int64_t end = lengths_[static_cast<std::size_t>(chain)];
    guard(chain, end, "finish", [&] { chains_.finish(chain, group); });
    // A spread state's other members owe no piece of it any more: the finished record, member 0's, holds the result.
    if (stop_ != nullptr && group.rank() != 0) stop_->leading(false);
    if ((collect_results_ || keeping_) && group.rank() == 0) {
      std::vector<std::byte> result;
      guard(chain, end, "result", [&] { result = chains_.result(chain); });
      if (keeping_) {
        keep({.chain = chain,
              .finished = true,
              .next_item = ended_at_[static_cast<std::size_t>(chain)],
              .bytes = result,
              .rows = std::move(rows_[chain])});
        if (stop_ != nullptr) stop_->leading(false);
      }
      if (collect_results_) results_[chain] = std::move(result);
    }
    rows_.erase(chain);
    since_.erase(chain);
  }
  /// Keep every result of a chain this rank's groups end (Chains::result on the group's member 0).
  void collect_results() { collect_results_ = true; }
  /// The results kept on this rank, by chain.
  [[nodiscard]] const std::map<int, std::vector<std::byte>>& results() const noexcept { return results_; }
  /// A result this run did not make: a chain a checkpoint held as finished.
  void add_result(int chain, std::vector<std::byte> bytes) { results_[chain] = std::move(bytes); }
  std::vector<std::byte> save(int slot, int64_t item) override {
    const int chain = chain_of(slot);
    std::vector<std::byte> bytes;
    if (chain >= 0) guard(chain, first(chain) + item, "save", [&] { bytes = chains_.save(chain); });
    // Where the run keeps checkpoints, what whichever member writes the chain's next one must know travels too.
    if (!keeping_ || chain < 0) return bytes;
    return detail::pack_state(bytes, ended_at_[static_cast<std::size_t>(chain)], rows_[chain]);
  }
  void restore(int slot, int64_t item, std::span<const std::byte> state) override {
    const int chain = chain_of(slot);
    if (chain < 0) return;
    if (!keeping_) {
      guard(chain, first(chain) + item, "restore", [&] { chains_.restore(chain, state); });
      return;
    }
    adopt(chain, first(chain) + item, detail::unpack_state(state, chain));
  }
  [[nodiscard]] bool spread() const override { return spread_ != nullptr; }
  std::vector<int64_t> piece_bounds(int slot, int size) override {
    const int chain = chain_of(slot);
    return chain < 0 ? std::vector<int64_t>(static_cast<std::size_t>(size) + 1, 0) : bounds(chain, size);
  }
  std::span<const std::byte> save_piece(int slot, int64_t item, int member, int size) override {
    const int chain = chain_of(slot);
    return chain < 0 ? std::span<const std::byte>{} : own_piece(chain, first(chain) + item, member, size);
  }
  std::vector<std::byte> save_shared(int slot, int64_t item) override {
    const int chain = chain_of(slot);
    if (chain < 0) return {};
    std::vector<std::byte> bytes;
    guard(chain, first(chain) + item, "save_shared", [&] { bytes = spread_->save_shared(chain); });
    // Where the run keeps checkpoints, what whichever member writes the chain's next one must know travels too.
    if (!keeping_) return bytes;
    return detail::pack_state(bytes, ended_at_[static_cast<std::size_t>(chain)], rows_[chain]);
  }
  void restore_piece(int slot, int64_t item, std::vector<std::byte>& piece, std::span<const std::byte> shared,
                     GroupComm& group) override {
    const int chain = chain_of(slot);
    if (chain < 0) return;
    const int64_t at = first(chain) + item;
    if (!keeping_) {
      restore_spread(chain, at, piece, shared, group);
      return;
    }
    detail::Travelling got;
    try {
      got = detail::unpack_state(shared, chain);
    } catch (const std::exception& e) {
      abort_run(comm_, rank_, "chain " + std::to_string(chain) + ": its state's shared part is torn: " + e.what());
    }
    take_extras(chain, got.ended_at, std::move(got.rows));
    restore_spread(chain, at, piece, got.state, group);
  }

  /// Takes every chain up where a checkpoint left it: per chain, the item it resumes at (0: its start; -1:
  /// finished before, with ended_at its items). Before place().
  void resume_from(std::vector<int64_t> resumed_at, const std::vector<int64_t>& ended_at) {
    resumed_at_ = std::move(resumed_at);
    for (std::size_t c = 0; c < resumed_at_.size(); ++c) {
      if (resumed_at_[c] < 0) ended_at_[c] = ended_at[c];
    }
  }
  /// From now on, keep each chain's checkpoints in folder (Options::checkpoint), every every_items items or
  /// every_s seconds, with its trace rows where the run records them; a stop asked by a signal (stop, if not null)
  /// writes them at the next item.
  void keep_checkpoints(const detail::CheckpointFolder& folder, uint64_t fingerprint, const Options& o,
                        detail::StopOnSignal* stop) {
    folder_ = &folder;
    fingerprint_ = fingerprint;
    every_items_ = o.checkpoint_every_items;
    every_s_ = o.checkpoint_every_s;
    mtbf_s_ = o.checkpoint_mtbf_s;
    keeping_ = true;
    rows_kept_ = !o.record.empty();
    stop_ = stop;
  }
  /// Per chain, the item this run took it up at (0: its start; -1: finished before): Report::resumed_at.
  [[nodiscard]] const std::vector<int64_t>& resumed_at() const noexcept { return resumed_at_; }
  /// The checkpoints this rank tried to write, per chain: the latest (an item before which the state was, or
  /// kFinishedRecord), and the latest that failed (-1: none).
  struct Attempts {
    int64_t latest = -1, failed = -1;
  };
  static constexpr int64_t kFinishedRecord = std::numeric_limits<int64_t>::max();
  /// What a spread state's member 0 tells its other members before each item: no checkpoint, one due, one for a
  /// stop on a signal, or a stop with nothing worked since the last checkpoint (after a stop, members owe nothing).
  static constexpr int64_t kNoWrite = 0, kDueWrite = 1, kStopWrite = 2, kStopNothing = 3;
  [[nodiscard]] const std::map<int, Attempts>& attempts() const noexcept { return attempts_; }
  [[nodiscard]] int64_t failures() const noexcept { return failures_; }
  /// What this rank's running checkpoints of each chain took: Chains::save and the write, those written only.
  struct Cost {
    double seconds = 0;
    int64_t count = 0;
    double fastest = std::numeric_limits<double>::infinity(), slowest = 0;  // one write's
    [[nodiscard]] double mean() const { return count > 0 ? seconds / static_cast<double>(count) : 0; }
    void add(double s) {
      seconds += s;
      ++count;
      fastest = std::min(fastest, s);
      slowest = std::max(slowest, s);
    }
  };
  [[nodiscard]] const std::map<int, Cost>& costs() const noexcept { return costs_; }
  [[nodiscard]] const std::string& first_failure() const noexcept { return first_failure_; }
  [[nodiscard]] int64_t checkpoints() const noexcept { return checkpoints_; }
  [[nodiscard]] double checkpoint_s() const noexcept { return checkpoint_s_; }

  /// Lays the chains out over `groups` initial groups of `per_group` slots each (place_chains); a group's unused
  /// slots come last.
  void place(int groups, int per_group, Placement how) {
    slot_chain_.assign(static_cast<std::size_t>(groups) * static_cast<std::size_t>(per_group), -1);
    chain_group_.assign(lengths_.size(), -1);
    // A resumed run lays out what is left of each chain.
    std::vector<int64_t> remaining(lengths_.size());
    for (std::size_t c = 0; c < remaining.size(); ++c) remaining[c] = left(static_cast<int>(c));
    const std::vector<std::vector<int>> layout = place_chains(remaining, groups, how);
    for (int g = 0; g < groups; ++g) {
      const std::vector<int>& mine = layout[static_cast<std::size_t>(g)];
      for (std::size_t j = 0; j < mine.size(); ++j) {
        slot_chain_[static_cast<std::size_t>(g * per_group) + j] = mine[j];
        chain_group_[static_cast<std::size_t>(mine[j])] = g;
      }
    }
  }
  /// Per chain, the initial group that started it: what a trace records so that a replay lays the chains out
  /// as this run did.
  [[nodiscard]] const std::vector<int>& chain_groups() const noexcept { return chain_group_; }
  /// The application's chain in slot (-1: none).
  [[nodiscard]] int chain_of(int slot) const { return slot_chain_.at(static_cast<std::size_t>(slot)); }
  /// Items per slot, as the kernel counts them.
  [[nodiscard]] std::vector<int64_t> slot_lengths() const {
    std::vector<int64_t> out;
    for (std::size_t k = 0; k < slot_chain_.size(); ++k) out.push_back(items(static_cast<int>(k)));
    return out;
  }
  /// Costs with the application's chain numbers in place of slots.
  [[nodiscard]] std::vector<ItemCost> by_chain(std::span<const ItemCost> costs) const {
    std::vector<ItemCost> out(costs.begin(), costs.end());
    for (ItemCost& c : out) {
      c.chain = chain_of(c.chain);
      c.item += first(c.chain);
    }
    return out;
  }

  /// Reads every chain's length once (the kernel asks often) and checks it.
  void read_lengths() {
    lengths_.clear();
    for (int c = 0; c < chains_.count(); ++c) {
      const int64_t n = chains_.items(c);
      if (n < 0 || n > kMaxItems) {
        throw InputError("Chains::items(" + std::to_string(c) + "): " + std::to_string(n) +
                         " is not allowed (allowed: 0 to 2^40 items)");
      }
      lengths_.push_back(n);
    }
    ended_at_ = lengths_;
  }
  /// Where each chain ended as far as this rank saw it: the item before which done() was true, else its length.
  [[nodiscard]] const std::vector<int64_t>& ended_at() const noexcept { return ended_at_; }
  [[nodiscard]] const std::vector<int64_t>& lengths() const noexcept { return lengths_; }

  /// From now on, a call that has not returned after limit_s seconds ends this process with one line. Not
  /// MPI_Abort: the watchdog is not the thread MPI was initialised on. The launcher then ends the other ranks.
  void start_watchdog(double limit_s) {
    const auto limit = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(limit_s));
    const auto tick = std::clamp(limit / 20, std::chrono::nanoseconds(std::chrono::milliseconds(1)),
                                 std::chrono::nanoseconds(std::chrono::milliseconds(100)));
    watchdog_ = std::thread([this, limit, tick, limit_s] {
      std::unique_lock lock(watchdog_mutex_);
      while (!watchdog_stop_) {
        watchdog_wake_.wait_for(lock, tick);
        const int64_t since = call_started_ns_.load();
        // A rank waiting for another member in a group call gives that member a second limit to report first:
        // the line that ends the job is then the hung rank's own.
        const bool waiting = group_calls_.load() > 0;
        if (since == 0 || now_ns() - since < (waiting ? 2 : 1) * limit.count()) continue;
        const int64_t item = call_item_.load();
        const std::string where = item >= 0 ? " item " + std::to_string(item) : std::string();
        char limit[32];
        std::snprintf(limit, sizeof limit, "%g", limit_s);
        // Every rank whose call outlasts the limit prints its line; the one that hung is the one not waiting in
        // a group call, and the others say they wait for it.
        const char* why = waiting ? ", waiting in a group call for another member of its group (the one that hung)"
                                  : ", hung in the application's own code (not waiting for another member)";
        mpi::last_line("mcmclb: rank " + std::to_string(rank_) + ": chain " + std::to_string(call_chain_.load()) +
                       where + ": Chains::" + call_name_.load() + " did not return within " + limit + " s" + why);
        std::_Exit(4);
      }
    });
  }
  /// The group calls in progress on this rank, counted by the kernel (Kernel::count_group_calls).
  [[nodiscard]] std::atomic<int>& group_calls() noexcept { return group_calls_; }
  void stop_watchdog() {
    if (!watchdog_.joinable()) return;
    {
      const std::lock_guard lock(watchdog_mutex_);
      watchdog_stop_ = true;
    }
    watchdog_wake_.notify_all();
    watchdog_.join();
  }

 private:
  [[nodiscard]] int64_t first(int chain) const {
    return resumed_at_.empty() ? 0 : std::max<int64_t>(resumed_at_.at(static_cast<std::size_t>(chain)), 0);
  }
  [[nodiscard]] bool finished_before(int chain) const {
    return !resumed_at_.empty() && resumed_at_.at(static_cast<std::size_t>(chain)) < 0;
  }
  /// The items of chain c this run works: what its checkpoint left of it (all of it without one).
  [[nodiscard]] int64_t left(int chain) const {
    return finished_before(chain) ? 0 : lengths_.at(static_cast<std::size_t>(chain)) - first(chain);
  }
  /// On the member 0 of chain's group, before item `at`: the chain's checkpoint when one is due, or when a signal
  /// asked the run to stop (then the thread that ends the process may go on).
  void before_item(int chain, int64_t at, GroupComm& group) {
    const bool stopping = stop_ != nullptr && detail::StopOnSignal::requested();
    if (stop_ != nullptr) stop_->leading(true);
    const auto& [items, since_s] = since_[chain];
    const auto cost = costs_.find(chain);
    // With a time between failures, the interval follows from the chain's own checkpoints' cost, measured first.
    const double every_s = mtbf_s_ <= 0           ? every_s_
                           : cost == costs_.end() ? 0
                                                  : checkpoint_interval_s(cost->second.mean(), mtbf_s_);
    const bool due = every_items_ > 0 ? items >= every_items_ : pace::now_s() - since_s >= every_s;
    // Nothing worked since the last checkpoint (or the chain's start, which needs none): nothing to write.
    const bool write = items > 0 && (due || stopping);
    // A spread state's other members follow member 0's clock, so that they write their pieces at the same item.
    if (spread_ != nullptr && group.size() > 1) {
      int64_t says = write ? (stopping ? kStopWrite : kDueWrite) : (stopping ? kStopNothing : kNoWrite);
      group.bcast(says, 0);
    }
    if (write) {
      const double t0 = pace::now_s();
      bool written = false;
      if (spread_ != nullptr) {
        written = keep_spread(chain, at, group, &rows_[chain]);
      } else {
        std::vector<std::byte> state;
        guard(chain, at, "save", [&] { state = chains_.save(chain); });
        written =
            keep({.chain = chain, .finished = false, .next_item = at, .bytes = std::move(state), .rows = rows_[chain]});
      }
      if (written) costs_[chain].add(pace::now_s() - t0);
      since_[chain] = {0, pace::now_s()};
    }
    if (stopping) stop_->saved();
  }
  /// Writes a chain's checkpoint. One that cannot be written is said at once (the first on this rank) and kept
  /// for the run's end, which says which chains the folder then lacks (checkpoint_losses); the run goes on. A
  /// spread state's record is not written where a member's piece was not (piece_error: the first one's why).
  bool keep(const detail::ChainRecord& record, const std::string& piece_error = {}) {
    const int64_t key = record.finished ? kFinishedRecord : record.next_item;
    Attempts& a = attempts_.try_emplace(record.chain).first->second;
    a.latest = std::max(a.latest, key);
    if (!piece_error.empty()) {
      // A stop closes the members' writes too: what goes unwritten then is no news.
      failed(record.chain, key, piece_error, !detail::StopOnSignal::requested());
      return false;
    }
    if (stop_ != nullptr && !stop_->begin_write()) {
      // The run is stopping and this rank is marked: the chain goes on from its checkpoint before.
      failed(record.chain, key, "not written: the run was stopping on a signal", false);
      return false;
    }
    bool written = false;
    const double t0 = pace::now_s();
    try {
      folder_->write_record(record, fingerprint_);
      ++checkpoints_;
      written = true;
      // Pieces of a spread state's older records go once two newer ones stand.
      if (spread_ != nullptr) folder_->prune_pieces(record.chain, fingerprint_);
    } catch (const std::exception& e) {
      failed(record.chain, key, e.what(), true);
    }
    if (stop_ != nullptr) stop_->end_write();
    checkpoint_s_ += pace::now_s() - t0;
    return written;
  }
  void failed(int chain, int64_t key, const std::string& why, bool say) {
    attempts_[chain].failed = key;
    ++failures_;
    if (first_failure_.empty()) {
      first_failure_ = "rank " + std::to_string(rank_) + ", chain " + std::to_string(chain) + ": " + why;
      if (say) {
        std::fprintf(stderr,
                     "mcmclb: rank %d: chain %d: checkpoint not written (%s); the run goes on, and its end says which "
                     "chains the folder lacks\n",
                     rank_, chain, why.c_str());
      }
    }
  }
  /// A chain this run takes up from its checkpoint, on every member of the group that starts it: the member 0
  /// reads it and passes it on, each member restores the state and takes the rows.
  void resume(int chain, GroupComm& group) {
    std::vector<std::byte> packed;
    if (group.rank() == 0) {
      try {
        detail::ChainRecord r = folder_->read_record(chain, fingerprint_);
        if (r.finished || r.next_item != first(chain)) throw std::runtime_error("changed since the run started");
        packed = detail::pack_state(r.bytes, lengths_[static_cast<std::size_t>(chain)], r.rows);
      } catch (const std::exception& e) {
        abort_run(comm_, rank_, "chain " + std::to_string(chain) + ": its checkpoint cannot be read: " + e.what());
      }
    }
    group.bcast(packed, 0);
    if (spread_ == nullptr) {
      adopt(chain, first(chain), detail::unpack_state(packed, chain));
      return;
    }
    // Each member reads the bytes of its own piece from the files of the pieces that hold them, and no others.
    detail::Travelling got = detail::unpack_state(packed, chain);
    take_extras(chain, got.ended_at, std::move(got.rows));
    const std::vector<int64_t> at = bounds(chain, group.size());
    std::vector<std::byte> piece;
    detail::PieceManifest manifest;
    try {
      manifest = detail::unpack_manifest(got.state);
      if (manifest.bounds.back() != at.back()) {
        throw std::runtime_error("its pieces hold " + std::to_string(manifest.bounds.back()) +
                                 " bytes, where SpreadChains::piece gives the state " + std::to_string(at.back()));
      }
      const auto member = static_cast<std::size_t>(group.rank());
      piece = folder_->read_piece_bytes(chain, first(chain), manifest, at[member], at[member + 1]);
    } catch (const std::exception& e) {
      abort_run(comm_, rank_, "chain " + std::to_string(chain) + ": its checkpoint cannot be read: " + e.what());
    }
    restore_spread(chain, first(chain), piece, manifest.shared, group);
  }
  /// A chain's state and what travels with it, on a member that takes the chain up before item `at`.
  void adopt(int chain, int64_t at, detail::Travelling got) {
    take_extras(chain, got.ended_at, std::move(got.rows));
    guard(chain, at, "restore", [&] { chains_.restore(chain, got.state); });
  }
  /// What travels with a chain's state: where it ended, and its trace rows.
  void take_extras(int chain, int64_t ended_at, std::vector<ItemCost> rows) {
    int64_t& ended = ended_at_[static_cast<std::size_t>(chain)];
    ended = std::min(ended, ended_at);
    if (rows_kept_) rows_[chain] = std::move(rows);
  }
  /// Where chain's spread state lies over a group of size members (ChainWork::piece_bounds), from the application's
  /// SpreadChains::piece, checked: pieces that do not follow each other from byte 0, or a length that changes with
  /// the size, end the job with one line (each member would take other bytes than the holders sent).
  std::vector<int64_t> bounds(int chain, int size) {
    std::vector<int64_t> at(static_cast<std::size_t>(size) + 1, 0);
    SpreadChains::Piece whole, p;
    guard(chain, -1, "piece", [&] {
      whole = spread_->piece(chain, 0, 1);
      for (int m = 0; m < size; ++m) {
        p = spread_->piece(chain, m, size);
        if (p.begin != at[static_cast<std::size_t>(m)] || p.end < p.begin) {
          throw std::invalid_argument("member " + std::to_string(m) + " of " + std::to_string(size) + " holds bytes " +
                                      std::to_string(p.begin) + " to " + std::to_string(p.end) +
                                      ", not a piece starting where the one before ends (byte " +
                                      std::to_string(at[static_cast<std::size_t>(m)]) + ")");
        }
        at[static_cast<std::size_t>(m) + 1] = p.end;
      }
      if (whole.begin != 0 || at.back() != whole.end) {
        throw std::invalid_argument("the pieces of a group of " + std::to_string(size) + " end at byte " +
                                    std::to_string(at.back()) + ", those of a group of 1 at " +
                                    std::to_string(whole.end) + " (a state's length is the same at every size)");
      }
    });
    return at;
  }
  /// This member's piece, checked against its length.
  std::span<const std::byte> own_piece(int chain, int64_t at, int member, int size) {
    std::span<const std::byte> bytes;
    guard(chain, at, "save_piece", [&] { bytes = spread_->save_piece(chain); });
    const std::vector<int64_t> b = bounds(chain, size);
    const int64_t length = b[static_cast<std::size_t>(member) + 1] - b[static_cast<std::size_t>(member)];
    if (static_cast<int64_t>(bytes.size()) != length) {
      abort_run(comm_, rank_,
                "chain " + std::to_string(chain) + " item " + std::to_string(at) + ": SpreadChains::save_piece gave " +
                    std::to_string(bytes.size()) + " bytes, where SpreadChains::piece gives member " +
                    std::to_string(member) + " of " + std::to_string(size) + " " + std::to_string(length));
    }
    return bytes;
  }
  /// A spread state's checkpoint before item `at`, on every member of the group: each writes its own piece's file,
  /// then member 0, told whether every piece is in place, writes the record that names them (rows: the chain's
  /// trace rows, on member 0) and says whether it did. No member ever holds another's piece.
  bool keep_spread(int chain, int64_t at, GroupComm& group, const std::vector<ItemCost>* rows) {
    const int member = group.rank(), size = group.size();
    const std::span<const std::byte> piece = own_piece(chain, at, member, size);
    std::array<uint64_t, 2> mine{0, 0};  // written, checksum
    std::string why;
    if (stop_ != nullptr && !stop_->begin_write()) {
      why = "not written: the run was stopping on a signal";
    } else {
      const double t0 = pace::now_s();
      try {
        mine = {1, folder_->write_piece(chain, at, member, size, piece)};
        ++checkpoints_;
      } catch (const std::exception& e) {
        why = "the piece of rank " + std::to_string(rank_) + ": " + e.what();
      }
      if (stop_ != nullptr) stop_->end_write();
      checkpoint_s_ += pace::now_s() - t0;
    }
    // Every member's word and why, on member 0: the record is written where every piece is, else the first why.
    std::vector<int> lengths;
    const std::vector<uint64_t> all = group.gatherv(std::span<const uint64_t>(mine), 0);
    const std::vector<char> whys = group.gatherv(std::span<const char>(why.data(), why.size()), 0, &lengths);
    if (member != 0) return false;
    detail::PieceManifest manifest;
    manifest.bounds = bounds(chain, size);
    std::string error;
    std::size_t from = 0;
    for (std::size_t k = 0; k < lengths.size(); ++k) {
      manifest.checksums.push_back(all[2 * k + 1]);
      const auto n = static_cast<std::size_t>(lengths[k]);
      if (all[2 * k] == 0 && error.empty()) error = std::string(whys.begin() + from, whys.begin() + from + n);
      from += n;
    }
    guard(chain, at, "save_shared", [&] { manifest.shared = spread_->save_shared(chain); });
    return keep({.chain = chain,
                 .finished = false,
                 .next_item = at,
                 .bytes = detail::pack_manifest(manifest),
                 .rows = rows != nullptr ? *rows : std::vector<ItemCost>{}},
                error);
  }
  /// A spread state's piece on this member.
  void restore_spread(int chain, int64_t at, std::vector<std::byte>& piece, std::span<const std::byte> shared,
                      GroupComm& group) {
    guard(chain, at, "restore_piece", [&] { spread_->restore_piece(chain, piece, shared, group); });
  }

  static int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

  template <typename Call>
  void guard(int chain, int64_t item, const char* call, Call&& body) {
    call_chain_.store(chain);
    call_item_.store(item);
    call_name_.store(call);
    call_started_ns_.store(now_ns());
    try {
      body();
    } catch (const std::exception& e) {
      const std::string where = item >= 0 ? " item " + std::to_string(item) : std::string();
      abort_run(comm_, rank_, "chain " + std::to_string(chain) + where + ": Chains::" + call + " threw: " + e.what());
    } catch (...) {
      abort_run(comm_, rank_,
                "chain " + std::to_string(chain) + ": Chains::" + call + " threw a non-standard exception");
    }
    call_started_ns_.store(0);
  }

  Chains& chains_;
  SpreadChains* spread_;  // the same chains where their state is spread over the group (else null)
  MPI_Comm comm_;
  int rank_;
  std::vector<int64_t> lengths_;
  std::vector<int64_t> ended_at_;
  std::vector<int> slot_chain_;
  std::vector<int> chain_group_;  // per chain: its initial group (chain_groups())
  bool collect_results_ = false;
  std::map<int, std::vector<std::byte>> results_;
  // Checkpoints (keep_checkpoints): per chain, where this run took it up; the rows and the items and time since the
  // last checkpoint of the chains this rank works.
  const detail::CheckpointFolder* folder_ = nullptr;
  uint64_t fingerprint_ = 0;
  int64_t every_items_ = 0;
  double every_s_ = 0, mtbf_s_ = 0;
  std::map<int, Cost> costs_;
  bool keeping_ = false, rows_kept_ = false;
  std::map<int, Attempts> attempts_;
  int64_t failures_ = 0;
  std::string first_failure_;
  std::vector<int64_t> resumed_at_;
  std::map<int, std::vector<ItemCost>> rows_;
  std::map<int, std::pair<int64_t, double>> since_;
  detail::StopOnSignal* stop_ = nullptr;
  int64_t checkpoints_ = 0;
  double checkpoint_s_ = 0;
  // The call in progress, for the watchdog: started_ns 0 when none is.
  std::atomic<int64_t> call_started_ns_{0};
  std::atomic<int> call_chain_{-1};
  std::atomic<int64_t> call_item_{-1};
  std::atomic<const char*> call_name_{""};
  std::atomic<int> group_calls_{0};
  std::thread watchdog_;
  std::mutex watchdog_mutex_;
  std::condition_variable watchdog_wake_;
  bool watchdog_stop_ = false;
};

/// Collective: the chains' count and lengths must be the same on every rank (a hash compared by MIN and MAX).
void check_same_chains(const mpi::Comm& comm, const std::vector<int64_t>& lengths) {
  uint64_t h = mix64(lengths.size());
  for (const int64_t n : lengths) h = mix64(h ^ static_cast<uint64_t>(n));
  const auto mine = static_cast<int64_t>(h >> 1);
  std::array<int64_t, 2> both{mine, -mine};
  mpi::check(MPI_Allreduce(MPI_IN_PLACE, both.data(), 2, MPI_INT64_T, MPI_MIN, comm.get()), "MPI_Allreduce");
  if (both[0] != -both[1]) {
    throw InputError("Chains::count() and Chains::items() differ between ranks (every rank must see the same chains)");
  }
}

/// Collective: the record file can be written (checked on rank 0, before any work), else the same error everywhere.
void check_record_path(const mpi::Comm& comm, const std::string& path) {
  std::array<char, 256> why{};
  if (comm.rank() == 0) {
    const std::string probe = path + ".probe";
    std::FILE* f = std::fopen(probe.c_str(), "w");
    if (f == nullptr) {
      std::snprintf(why.data(), why.size(), "%s", std::strerror(errno));
    } else {
      std::fclose(f);
      std::remove(probe.c_str());
    }
  }
  mpi::check(MPI_Bcast(why.data(), static_cast<int>(why.size()), MPI_CHAR, 0, comm.get()), "MPI_Bcast");
  if (why[0] != '\0') throw InputError("Options::record: cannot write " + path + ": " + why.data());
}

/// Collective: a write on rank 0 before any work (a trace's head, a checkpoint folder's meta file), its failure the
/// same one-line InputError on every rank, naming key: a rank that threw alone would leave the others waiting in the
/// run's next collective for ever.
void write_before_work(const mpi::Comm& comm, const std::string& key, const std::function<void()>& write) {
  std::string error;
  if (comm.rank() == 0) {
    try {
      write();
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  error = mpi::bcast_text(error, 0, comm);
  if (!error.empty()) {
    throw InputError(key + ": " + error + " (allowed: a path on a file system with room, that rank 0 can write)");
  }
}

/// A rank's report from its statistics and the items it passed over (which the statistics count as worked).
RankReport rank_report(const RankStats& s, int64_t passed) {
  return {.elapsed_s = s.elapsed_s,
          .work_s = s.work_s,
          .polling_s = s.polling_s,
          .waiting_s = s.waiting_s,
          .regroup_s = s.regroup_s,
          .regroups = s.regroups,
          .items_worked = s.items_worked - passed,
          .items_passed = passed,
          .state_bytes = s.state_bytes,
          .chains_migrated = s.chains_migrated};
}

/// What a rank's report holds that its statistics lack: the items it passed over (which they count as worked) and
/// the checkpoints it wrote, with their seconds.
struct OwnCounts {
  int64_t passed = 0, checkpoints = 0;
  double checkpoint_s = 0;
};

/// Collective: every rank's OwnCounts on rank 0, by rank.
std::vector<OwnCounts> gather_own(const OwnCounts& own, const mpi::Comm& comm) {
  // Counts below 2^53 travel exactly as doubles.
  const std::array<double, 3> mine = {static_cast<double>(own.passed), static_cast<double>(own.checkpoints),
                                      own.checkpoint_s};
  std::vector<double> all(comm.rank() == 0 ? mine.size() * static_cast<std::size_t>(comm.size()) : 0);
  mpi::check(MPI_Gather(mine.data(), 3, MPI_DOUBLE, all.data(), 3, MPI_DOUBLE, 0, comm.get()), "MPI_Gather");
  std::vector<OwnCounts> out;
  for (std::size_t at = 0; at + 2 < all.size(); at += 3) {
    out.push_back({static_cast<int64_t>(all[at]), static_cast<int64_t>(all[at + 1]), all[at + 2]});
  }
  return out;
}

/// Collective: the items each chain worked, on rank 0: the earliest item before which any rank found it done, else
/// its length.
std::vector<int64_t> chain_items(const AppChains& app, const mpi::Comm& comm) {
  std::vector<int64_t> all(app.ended_at().size());
  mpi::check(
      MPI_Reduce(app.ended_at().data(), all.data(), static_cast<int>(all.size()), MPI_INT64_T, MPI_MIN, 0, comm.get()),
      "MPI_Reduce");
  return all;
}

/// Collective: what every item took, each timed once on its group's leader, as one estimate on every rank (a
/// chain's sizes are often timed by different leaders, so the speed-ups need every rank's timings together).
ItemEstimate measured_items(const Kernel& kernel, const mpi::Comm& comm) {
  ItemEstimate mine;
  for (const auto& [key, t] : kernel.item_timings()) mine.add(key.first, key.second, t.items, t.seconds, true);
  const std::vector<int64_t> words = mine.words();
  const int count = static_cast<int>(words.size());
  std::vector<int> counts(static_cast<std::size_t>(comm.size()), 1), displacements(counts.size());
  std::iota(displacements.begin(), displacements.end(), 0);
  std::vector<int> all_counts(counts.size());
  mpi::allgatherv_politely(comm, &count, 1, all_counts.data(), counts.data(), displacements.data(), MPI_INT);
  std::exclusive_scan(all_counts.begin(), all_counts.end(), displacements.begin(), 0);
  std::vector<int64_t> all(static_cast<std::size_t>(displacements.back() + all_counts.back()));
  mpi::allgatherv_politely(comm, words.data(), count, all.data(), all_counts.data(), displacements.data(), MPI_INT64_T);
  ItemEstimate together;
  for (std::size_t i = 0; i + 4 < all.size(); i += 5) {  // ItemEstimate::words(): five per chain and size
    together.add(static_cast<int>(all[i]), static_cast<int>(all[i + 1]), all[i + 2],
                 static_cast<double>(all[i + 3]) / 1e9, std::bit_cast<double>(all[i + 4]), true);
  }
  return together;
}

/// Collective: the run's invariants on rank 0 (every rank finished, every communicator freed, no balancer message
/// left, each item of each chain worked exactly once).
std::vector<std::string> check_invariants(const Kernel& kernel, const std::vector<int64_t>& lengths,
                                          const mpi::Comm& comm) {
  const std::size_t chains = lengths.size();
  std::vector<int64_t> mine(3 + 2 * chains, 0), all(mine.size(), 0);
  mine[0] = kernel.finished() ? 0 : 1;
  mine[1] = kernel.comms_created() - kernel.comms_freed();
  mine[2] = control_message_pending(kernel) ? 1 : 0;
  for (const ChainCount& c : kernel.counted()) {
    mine[3 + 2 * static_cast<std::size_t>(c.chain)] += c.items;
    mine[4 + 2 * static_cast<std::size_t>(c.chain)] += c.index_sum;
  }
  mpi::reduce_sum_politely(comm, mine.data(), all.data(), static_cast<int>(mine.size()), 0);
  std::vector<std::string> violations;
  if (comm.rank() != 0) return violations;
  if (all[0] != 0) violations.push_back(std::to_string(all[0]) + " rank(s) did not finish");
  if (all[1] != 0) violations.push_back(std::to_string(all[1]) + " communicator(s) not freed");
  if (all[2] != 0) violations.push_back(std::to_string(all[2]) + " rank(s) with unreceived balancer messages");
  for (std::size_t c = 0; c < chains && violations.size() < 8; ++c) {
    const int64_t n = lengths[c];
    const int64_t items = all[3 + 2 * c], sum = all[4 + 2 * c];
    if (items != n || sum != n * (n - 1) / 2) {
      violations.push_back("chain " + std::to_string(c) + ": " + std::to_string(items) + " of " + std::to_string(n) +
                           " items worked");
    }
  }
  return violations;
}

/// Collective: every rank's statistics on rank 0, by rank.
std::vector<RankStats> gather_stats(const Kernel& kernel, const mpi::Comm& comm) {
  const RankStats::Words mine = kernel.stats().to_words();
  const int words = static_cast<int>(mine.size());
  std::vector<double> all(comm.rank() == 0 ? mine.size() * static_cast<std::size_t>(comm.size()) : 0);
  mpi::check(MPI_Gather(mine.data(), words, MPI_DOUBLE, all.data(), words, MPI_DOUBLE, 0, comm.get()), "MPI_Gather");
  std::vector<RankStats> ranks;
  for (std::size_t at = 0; at < all.size(); at += mine.size()) {
    RankStats::Words w{};
    std::copy_n(all.begin() + static_cast<std::ptrdiff_t>(at), mine.size(), w.begin());
    ranks.push_back(RankStats::from_words(w));
  }
  return ranks;
}

/// The summary runs.csv gives a run, from every rank's statistics.
void summarise(const std::vector<RankStats>& ranks, const std::vector<OwnCounts>& own, Report& r) {
  double sum = 0, sum_sq = 0, migrated = 0;
  r.regroups_min = ranks.empty() ? 0 : ranks.front().regroups;
  for (const RankStats& s : ranks) {
    r.time_s = std::max(r.time_s, s.elapsed_s);
    sum += static_cast<double>(s.regroups);
    sum_sq += static_cast<double>(s.regroups) * static_cast<double>(s.regroups);
    r.regroups_min = std::min(r.regroups_min, s.regroups);
    r.regroups_max = std::max(r.regroups_max, s.regroups);
    migrated += static_cast<double>(s.chains_migrated);
    const OwnCounts& o = own[r.ranks.size()];
    r.ranks.push_back(rank_report(s, o.passed));
    r.ranks.back().checkpoints = o.checkpoints;
    r.ranks.back().checkpoint_s = o.checkpoint_s;
  }
  const auto n = static_cast<double>(std::max<std::size_t>(ranks.size(), 1));
  r.regroups_avg = sum / n;
  r.regroups_std = std::sqrt(std::max(0.0, sum_sq / n - r.regroups_avg * r.regroups_avg));
  r.migrated_avg = migrated / n;
}

/// Collective: every item's cost on rank 0, by chain and item.
std::vector<ItemCost> gather_costs(const std::vector<ItemCost>& own, const mpi::Comm& comm) {
  std::vector<double> mine;  // chain, item, ranks, seconds: small integers are exact in a double
  for (const ItemCost& c : own) {
    mine.insert(mine.end(),
                {static_cast<double>(c.chain), static_cast<double>(c.item), static_cast<double>(c.ranks), c.seconds});
  }
  int count = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<std::size_t>(comm.size())), offsets(counts.size());
  mpi::check(MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm.get()), "MPI_Gather");
  int total = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    offsets[r] = total;
    total += counts[r];
  }
  std::vector<double> all(comm.rank() == 0 ? static_cast<std::size_t>(total) : 0);
  mpi::check(
      MPI_Gatherv(mine.data(), count, MPI_DOUBLE, all.data(), counts.data(), offsets.data(), MPI_DOUBLE, 0, comm.get()),
      "MPI_Gatherv");
  std::vector<ItemCost> costs;
  for (std::size_t at = 0; at + 3 < all.size(); at += 4) {
    costs.push_back(
        {static_cast<int>(all[at]), static_cast<int64_t>(all[at + 1]), static_cast<int>(all[at + 2]), all[at + 3]});
  }
  std::sort(costs.begin(), costs.end(), [](const ItemCost& a, const ItemCost& b) {
    return std::pair(a.chain, a.item) < std::pair(b.chain, b.item);
  });
  return costs;
}

/// Collective: the results each rank kept, by chain, on rank 0 (Results::root) or every rank (Results::all). Every
/// chain's result must arrive exactly once.
std::vector<std::vector<std::byte>> collect_results(const std::map<int, std::vector<std::byte>>& mine, int chains,
                                                    Results where, const mpi::Comm& comm) {
  // Packed as (chain, size) words then the bytes, each result rounded up to whole words.
  std::vector<int64_t> packed;
  for (const auto& [chain, bytes] : mine) {
    packed.push_back(chain);
    packed.push_back(static_cast<int64_t>(bytes.size()));
    const std::size_t at = packed.size();
    packed.resize(at + (bytes.size() + 7) / 8, 0);
    if (!bytes.empty()) std::memcpy(packed.data() + at, bytes.data(), bytes.size());
  }
  int count = static_cast<int>(packed.size());
  std::vector<int> counts(comm.rank() == 0 ? static_cast<std::size_t>(comm.size()) : 0);
  mpi::gather_politely(comm, &count, 1, MPI_INT, counts.data(), 0);
  std::vector<int> offsets(counts.size());
  int64_t total = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    offsets[r] = static_cast<int>(total);
    total += counts[r];
  }
  if (total > std::numeric_limits<int>::max()) throw std::runtime_error("results: over 2^31 words in all");
  std::vector<int64_t> all(static_cast<std::size_t>(total));
  mpi::check(MPI_Gatherv(packed.data(), count, MPI_INT64_T, all.data(), counts.data(), offsets.data(), MPI_INT64_T, 0,
                         comm.get()),
             "MPI_Gatherv");
  if (where == Results::all) {
    mpi::bcast_politely(comm, &total, 1, MPI_INT64_T, 0);
    all.resize(static_cast<std::size_t>(total));
    mpi::bcast_politely(comm, all.data(), static_cast<int>(total), MPI_INT64_T, 0);
  } else if (comm.rank() != 0) {
    return {};
  }
  std::vector<std::vector<std::byte>> results(static_cast<std::size_t>(chains));
  std::vector<bool> seen(results.size(), false);
  for (std::size_t at = 0; at + 1 < all.size();) {
    const auto chain = static_cast<std::size_t>(all[at]);
    const auto size = static_cast<std::size_t>(all[at + 1]);
    at += 2;
    if (chain >= results.size() || seen[chain])
      throw std::logic_error("results: chain " + std::to_string(chain) + " twice");
    seen[chain] = true;
    results[chain].resize(size);
    if (size > 0) std::memcpy(results[chain].data(), all.data() + at, size);
    at += (size + 7) / 8;
  }
  for (std::size_t c = 0; c < seen.size(); ++c) {
    if (!seen[c]) throw std::logic_error("results: no result of chain " + std::to_string(c));
  }
  return results;
}

/// Collective: rank 0's summary of the run on every rank (all but Report::ranks).
void share_summary(const mpi::Comm& comm, Report& r) {
  std::array<double, 9> numbers = {r.valid ? 1.0 : 0.0,
                                   r.time_s,
                                   r.regroups_avg,
                                   r.regroups_std,
                                   static_cast<double>(r.regroups_min),
                                   static_cast<double>(r.regroups_max),
                                   r.migrated_avg,
                                   static_cast<double>(r.recorded_items),
                                   static_cast<double>(r.recorded_speedups)};
  mpi::bcast_politely(comm, numbers.data(), static_cast<int>(numbers.size()), MPI_DOUBLE, 0);
  r.valid = numbers[0] != 0.0;
  r.time_s = numbers[1];
  r.regroups_avg = numbers[2];
  r.regroups_std = numbers[3];
  r.regroups_min = static_cast<int64_t>(numbers[4]);
  r.regroups_max = static_cast<int64_t>(numbers[5]);
  r.migrated_avg = numbers[6];
  r.recorded_items = static_cast<int64_t>(numbers[7]);
  r.recorded_speedups = static_cast<int64_t>(numbers[8]);
  int64_t length = static_cast<int64_t>(r.violations.size());
  mpi::bcast_politely(comm, &length, 1, MPI_INT64_T, 0);
  r.violations.resize(static_cast<std::size_t>(length));
  if (length > 0) mpi::bcast_politely(comm, r.violations.data(), static_cast<int>(length), MPI_CHAR, 0);
  r.record_error = mpi::bcast_text(r.record_error, 0, comm);
  r.chain_items.resize(r.chain_groups.size());
  mpi::bcast_politely(comm, r.chain_items.data(), static_cast<int>(r.chain_items.size()), MPI_INT64_T, 0);
}

/// Collective, where the run keeps checkpoints: which chains' latest state the folder lacks (Report::checkpoints_lost:
/// the last write tried of each, on whichever rank, failed), the failed writes and the first one's line. Where any
/// failed, rank 0 says so in one line, the library's last, and notes the chains in the folder for the run after
/// (CheckpointFolder::lost_note); where none did, it removes an earlier run's note.
void checkpoint_losses(const AppChains& app, const detail::CheckpointFolder& folder, const mpi::Comm& comm, Report& r) {
  const std::size_t chains = app.lengths().size();
  std::vector<int64_t> words(2 * chains + 1, -1);
  for (const auto& [chain, a] : app.attempts()) {
    words[static_cast<std::size_t>(chain)] = a.latest;
    words[chains + static_cast<std::size_t>(chain)] = a.failed;
  }
  words[2 * chains] = app.failures();
  std::vector<int64_t> most(words.size());
  mpi::check(MPI_Allreduce(words.data(), most.data(), static_cast<int>(2 * chains), MPI_INT64_T, MPI_MAX, comm.get()),
             "MPI_Allreduce");
  mpi::check(MPI_Allreduce(&words[2 * chains], &r.checkpoint_failures, 1, MPI_INT64_T, MPI_SUM, comm.get()),
             "MPI_Allreduce");
  for (std::size_t c = 0; c < chains; ++c) {
    if (most[c] >= 0 && most[chains + c] == most[c]) r.checkpoints_lost.push_back(static_cast<int>(c));
  }
  if (r.checkpoint_failures == 0) {
    if (comm.rank() == 0) folder.write_lost_note("");
    return;
  }
  // The first failure's line, from the lowest rank that had one.
  int first = app.failures() > 0 ? comm.rank() : comm.size();
  mpi::check(MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm.get()), "MPI_Allreduce");
  r.checkpoint_error = mpi::bcast_text(app.first_failure(), first, comm);
  if (comm.rank() != 0) return;
  std::string listed;
  for (std::size_t i = 0; i < r.checkpoints_lost.size() && i < 8; ++i) {
    listed += (i == 0 ? "" : ", ") + std::to_string(r.checkpoints_lost[i]);
  }
  if (r.checkpoints_lost.size() > 8) listed += " and " + std::to_string(r.checkpoints_lost.size() - 8) + " more";
  const std::string failures = std::to_string(r.checkpoint_failures) + " checkpoint write" +
                               (r.checkpoint_failures == 1 ? "" : "s") + " failed (first: " + r.checkpoint_error + ")";
  std::string line;
  if (r.checkpoints_lost.empty()) {
    line = "mcmclb: " + failures + "; a later write of each of those chains succeeded, so " + one_line(folder.path()) +
           " holds every chain's latest state";
    folder.write_lost_note("");
  } else {
    const std::string note = "a run that ended at " + utc_now() + " could not save the latest state of " +
                             std::to_string(r.checkpoints_lost.size()) + " chain" +
                             (r.checkpoints_lost.size() == 1 ? "" : "s") + " (" + listed + "); " + failures;
    line = "mcmclb: checkpoints lost: " + one_line(folder.path()) + " lacks the latest state of " +
           std::to_string(r.checkpoints_lost.size()) + " of " + std::to_string(chains) + " chains (" + listed +
           ") after " + failures + "; the results returned are whole, but a run again works those chains again from " +
           "what the folder holds (Report::checkpoints_lost)";
    try {
      folder.write_lost_note(note);
    } catch (const std::exception& e) {
      line += "; this could not be noted in the folder either (" + std::string(e.what()) + ")";
    }
  }
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
}

/// Collective, where the run keeps checkpoints: each chain's mean checkpoint cost over every rank that wrote it, and
/// the interval it gives with mtbf_s (Report::checkpoint_cost_s, checkpoint_interval_s).
void checkpoint_costs(const AppChains& app, double mtbf_s, const mpi::Comm& comm, Report& r) {
  const std::size_t chains = app.lengths().size();
  std::vector<double> sums(2 * chains, 0);  // seconds, then counts (exact in a double)
  // Each chain's fastest write negated, then its slowest: one MPI_MAX gives both.
  std::vector<double> ends(2 * chains, -std::numeric_limits<double>::infinity());
  for (const auto& [chain, c] : app.costs()) {
    const auto at = static_cast<std::size_t>(chain);
    sums[at] = c.seconds;
    sums[chains + at] = static_cast<double>(c.count);
    ends[at] = -c.fastest;
    ends[chains + at] = c.slowest;
  }
  mpi::check(MPI_Allreduce(MPI_IN_PLACE, sums.data(), static_cast<int>(sums.size()), MPI_DOUBLE, MPI_SUM, comm.get()),
             "MPI_Allreduce");
  mpi::check(MPI_Allreduce(MPI_IN_PLACE, ends.data(), static_cast<int>(ends.size()), MPI_DOUBLE, MPI_MAX, comm.get()),
             "MPI_Allreduce");
  r.checkpoint_cost_s.assign(chains, 0);
  r.checkpoint_writes.assign(chains, 0);
  r.checkpoint_interval_s.assign(chains, 0);
  r.checkpoint_interval_low_s.assign(chains, 0);
  r.checkpoint_interval_high_s.assign(chains, 0);
  for (std::size_t c = 0; c < chains; ++c) {
    if (!(sums[chains + c] > 0)) continue;
    r.checkpoint_writes[c] = static_cast<int64_t>(sums[chains + c]);
    r.checkpoint_cost_s[c] = sums[c] / sums[chains + c];
    if (mtbf_s > 0) {
      r.checkpoint_interval_s[c] = checkpoint_interval_s(r.checkpoint_cost_s[c], mtbf_s);
      r.checkpoint_interval_low_s[c] = checkpoint_interval_s(-ends[c], mtbf_s);
      r.checkpoint_interval_high_s[c] = checkpoint_interval_s(ends[chains + c], mtbf_s);
    }
  }
}

/// Collective: a name for this run that no other run of the same folder shares (rank 0's pid and clock), where
/// ranks stopped by a signal leave their marks.
std::string run_token(const mpi::Comm& comm) {
  std::array<int64_t, 2> words{static_cast<int64_t>(::getpid()),
                               std::chrono::system_clock::now().time_since_epoch().count()};
  mpi::bcast_politely(comm, words.data(), 2, MPI_INT64_T, 0);
  return std::to_string(words[0]) + "-" + std::to_string(words[1]);
}

}  // namespace

double checkpoint_interval_s(double cost_s, double mtbf_s) {
  if (!(mtbf_s > 0) || !(cost_s >= 0)) return 0;
  if (cost_s >= 2 * mtbf_s) return mtbf_s;
  const double ratio = cost_s / (2 * mtbf_s);
  return std::max(0.0, std::sqrt(2 * cost_s * mtbf_s) * (1 + std::sqrt(ratio) / 3 + ratio / 9) - cost_s);
}

std::vector<std::vector<int>> place_chains(std::span<const int64_t> items, int groups, Placement how) {
  if (groups < 1) throw std::invalid_argument("place_chains: groups must be at least 1");
  if (std::any_of(items.begin(), items.end(), [](int64_t n) { return n < 0; })) {
    throw std::invalid_argument("place_chains: an item bound is negative");
  }
  const int count = static_cast<int>(items.size());
  const int q = count / groups, r = count % groups;
  std::vector<std::vector<int>> layout(static_cast<std::size_t>(groups));
  const bool equal = std::adjacent_find(items.begin(), items.end(), std::not_equal_to<>()) == items.end();
  if (how == Placement::as_numbered || equal) {
    int next = 0;
    for (int g = 0; g < groups; ++g) {
      for (int j = 0; j < q + (g < r ? 1 : 0); ++j) layout[static_cast<std::size_t>(g)].push_back(next++);
    }
    return layout;
  }
  // Longest processing time first: each chain, longest first (ties: lower number), to the group with the fewest
  // items so far among those with room (ties: lower group), r of them taking q + 1 chains and the rest q.
  std::vector<int> order(static_cast<std::size_t>(count));
  std::iota(order.begin(), order.end(), 0);
  const auto bound = [&](int c) { return items[static_cast<std::size_t>(c)]; };
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return bound(a) > bound(b); });
  std::vector<int64_t> total(static_cast<std::size_t>(groups), 0);
  int taller = 0;  // groups holding q + 1 chains
  for (const int c : order) {
    int best = -1;
    for (int g = 0; g < groups; ++g) {
      const auto held = static_cast<int>(layout[static_cast<std::size_t>(g)].size());
      if (held >= q + (taller < r ? 1 : 0)) continue;
      if (best < 0 || total[static_cast<std::size_t>(g)] < total[static_cast<std::size_t>(best)]) best = g;
    }
    auto& mine = layout[static_cast<std::size_t>(best)];
    mine.push_back(c);
    total[static_cast<std::size_t>(best)] += bound(c);
    if (static_cast<int>(mine.size()) == q + 1) ++taller;
  }
  // The least loaded group on the left: a merging balancer's finished groups join the group on their right.
  std::vector<int> rank_of(static_cast<std::size_t>(groups));
  std::iota(rank_of.begin(), rank_of.end(), 0);
  std::stable_sort(rank_of.begin(), rank_of.end(), [&](int a, int b) {
    return total[static_cast<std::size_t>(a)] < total[static_cast<std::size_t>(b)];
  });
  std::vector<std::vector<int>> placed;
  placed.reserve(layout.size());
  for (const int g : rank_of) placed.push_back(std::move(layout[static_cast<std::size_t>(g)]));
  return placed;
}

void check_options(const Options& options) {
  check_numbers(options);
  Experiment e = parse_experiment(study_keys(options), {}, "mcmclb::walkers::Options");
  // The names, as a run on as many ranks as the groups need would check them; the rank count is checked by run().
  const int64_t sized = std::accumulate(options.group_sizes.begin(), options.group_sizes.end(), int64_t{0});
  const int64_t ranks = options.groups != 0 ? options.groups : sized > 0 ? sized : e.G;
  (void)expand_runs(e, static_cast<int>(std::min<int64_t>(ranks, 1 << 30)), catalog(), 1);
}

std::vector<std::string> balancer_names() {
  std::vector<std::string> names;
  for (const BalancerEntry& e : balancer_entries()) names.emplace_back(e.info.name);
  return names;
}

std::vector<std::byte> SpreadChains::save(int chain) const {
  throw std::logic_error("chain " + std::to_string(chain) + ": SpreadChains are saved piece by piece (save_piece)");
}

void SpreadChains::restore(int chain, std::span<const std::byte> /*state*/) {
  throw std::logic_error("chain " + std::to_string(chain) +
                         ": SpreadChains are restored piece by piece (restore_piece)");
}

Report run(MPI_Comm comm_handle, Chains& chains, const Options& options) {
  const mpi::Comm comm = mpi::Comm::view(comm_handle);
  const int rank = comm.rank();
  const int nprocs = comm.size();
  AppChains app(chains, comm_handle, rank);
  // Checked everywhere before anything is sent, so every rank throws the same line or none does.
  const RunSpec spec = run_spec(options, nprocs, chains.count());
  app.read_lengths();
  check_same_chains(comm, app.lengths());
  if (!options.record.empty()) check_record_path(comm, options.record);
  const detail::CheckpointFolder folder(options.checkpoint);
  detail::Resumption resumption;
  if (!options.checkpoint.empty()) {
    resumption = detail::open_checkpoint(comm, folder, options.name, options.parameters, app.lengths(),
                                         app.spread() ? detail::kFormSpread : detail::kFormWhole);
    app.resume_from(resumption.resumed_at, resumption.ended_at);
    for (auto& [chain, bytes] : resumption.results) app.add_result(chain, std::move(bytes));
  }
  const BalancerInfo& info = balancer_info(spec.balancer);
  std::vector<int> sizes = initial_group_sizes(spec, comm);
  app.place(static_cast<int>(sizes.size()), spec.workload.chains_per_group, options.placement);
  // The trace's initial groups: a resumed run's chains keep those of the run that started them.
  const std::vector<int>& trace_groups = resumption.resumed ? resumption.meta.chain_groups : app.chain_groups();
  // Each initial group of this run, its ranks and the chains it starts with, for the trace's head.
  detail::InitialGroups initial{sizes, std::vector<int>(sizes.size(), 0)};
  for (const int g : app.chain_groups()) ++initial.chains.at(static_cast<std::size_t>(g));

  Report r;
  r.balancer = spec.balancer;
  r.method = spec.method;
  r.finished = spec.finished ? std::string(to_string(*spec.finished)) : std::string();
  r.interval = spec.interval;
  r.nprocs = nprocs;
  r.groups = static_cast<int>(sizes.size());
  r.chains_per_group = spec.workload.chains_per_group;
  if (!options.checkpoint.empty() && !resumption.resumed) {
    write_before_work(comm, "Options::checkpoint", [&] {
      folder.write_meta({.name = options.name,
                         .chains = static_cast<int>(app.lengths().size()),
                         .fingerprint = resumption.fingerprint,
                         .parameters = detail::parameters_hash(options.parameters),
                         .parameters_text = options.parameters,
                         .ranks = nprocs,
                         .groups = r.groups,
                         .balancer = r.balancer,
                         .chain_groups = app.chain_groups(),
                         .form = std::string(app.spread() ? detail::kFormSpread : detail::kFormWhole),
                         .held = {}});
    });
  }

  // Waits as work.wait says; by default they spin where every rank has a core of its own and nap where ranks share
  // them, as mcmclb's own runs do.
  const mpi::NodeOccupancy occupancy = mpi::node_occupancy(comm);
  const mpi::ScopedWaitPolicy waiting(spec.work.wait ? *spec.work.wait : mpi::machine_wait_policy(occupancy));
  r.wait = to_string(mpi::wait_policy());
  r.wait_why = spec.work.wait ? "as asked" : "auto: " + mpi::machine_wait_reason(occupancy);
  r.placement = options.placement;
  r.chain_groups = trace_groups;
  Kernel kernel(spec, std::move(sizes), spec.method.empty() ? std::string(info.initial_method) : spec.method,
                comm_handle, app);
  std::optional<detail::TraceStream> stream;
  // The walkers' fingerprint, and the runs of the same walkers that the file about to be replaced records: they
  // stay in the new trace as earlier runs, so that recording a program several times measures its own spread.
  std::string walkers_hex;
  std::vector<RecordedRun> earlier;
  if (!options.record.empty()) {
    char hex[24];
    std::snprintf(hex, sizeof hex, "%llx",
                  static_cast<unsigned long long>(detail::chains_fingerprint(options.name, app.lengths())));
    walkers_hex = hex;
    // The file starts as an incomplete trace, its rows added as chains end; every rank opens it once it hears that
    // rank 0 made it.
    write_before_work(comm, "Options::record", [&] {
      earlier = detail::earlier_runs_of(options.record, walkers_hex);
      std::string rows;  // a resumed run's items worked before
      for (const ItemCost& c : resumption.rows) detail::append_row(rows, c, trace_groups);
      detail::write_text_whole(options.record,
                               std::string(kTraceIncomplete) +
                                   " the run recording this trace has not ended; if it failed or was killed, the "
                                   "rows below are the items of the chains that ended, and the first of the "
                                   "others\n" +
                                   detail::trace_head(r, options, initial) + detail::earlier_lines(earlier) +
                                   std::string(kTraceHeaderWithGroup) + "\n" + rows);
    });
    stream.emplace(options.record, rank);
    kernel.set_cost_sink([&stream, &app, &trace_groups](std::span<const ItemCost> costs) {
      stream->append(app.by_chain(costs), trace_groups);
    });
  }
  if (options.results != Results::none) app.collect_results();
  const auto balancer = make_balancer(spec);
  if (options.item_timeout_s > 0) {
    kernel.count_group_calls(&app.group_calls());
    app.start_watchdog(options.item_timeout_s);
  }
  std::optional<detail::StopOnSignal> stop;
  if (!options.checkpoint.empty()) {
    stop.emplace(folder, run_token(comm), comm_handle, options.stop_grace_s);
    app.keep_checkpoints(folder, resumption.fingerprint, options, &*stop);
  }
  kernel.form_initial_groups(info.regroups);
  kernel.start(spec.finished == FinishedRule::pays ? Kernel::CalibrationPass::to_price : Kernel::CalibrationPass::none);
  balancer->run(kernel);
  if (stop) stop->ended();  // the handlers stay until run() returns: a signal in the checks after is still a stop
  mpi::barrier_politely(comm, mpi::setup_patience);  // everyone has finished; what follows is checking
  app.stop_watchdog();
  stream.reset();

  const std::vector<std::string> violations = check_invariants(kernel, app.slot_lengths(), comm);
  const std::vector<RankStats> ranks = gather_stats(kernel, comm);
  const std::vector<OwnCounts> own = gather_own({kernel.items_passed(), app.checkpoints(), app.checkpoint_s()}, comm);
  r.chain_items = chain_items(app, comm);
  r.rank = rank_report(kernel.stats(), kernel.items_passed());
  r.rank.checkpoints = app.checkpoints();
  r.rank.checkpoint_s = app.checkpoint_s();
  r.resumed_at = app.resumed_at();
  if (options.results != Results::none) {
    r.results = collect_results(app.results(), static_cast<int>(app.lengths().size()), options.results, comm);
  }
  std::vector<ItemCost> costs;
  std::vector<PairedSpeedup> measured_pairs;
  if (!options.record.empty()) {
    costs = gather_costs(app.by_chain(kernel.item_costs()), comm);
    measured_pairs = paired_speedups(costs);  // this job's items alone: the earlier ones ran elsewhere
    if (rank == 0 && resumption.resumed) {
      costs.insert(costs.end(), resumption.rows.begin(), resumption.rows.end());
      std::sort(costs.begin(), costs.end(), [](const ItemCost& a, const ItemCost& b) {
        return std::pair(a.chain, a.item) < std::pair(b.chain, b.item);
      });
    }
  }
  std::string record_line;  // rank 0: the line saying the trace could not be written whole
  if (rank == 0) {
    summarise(ranks, own, r);
    r.valid = violations.empty();
    r.violations = join(violations, "; ");
    if (!options.record.empty() && r.valid) {
      const std::string resumed = resumption.resumed
                                      ? "this run continued from the checkpoints in " + one_line(options.checkpoint) +
                                            " of a run of " + std::to_string(resumption.meta.ranks) + " ranks in " +
                                            std::to_string(resumption.meta.groups) +
                                            " initial groups; no one run took the whole time, so no run line is given"
                                      : std::string();
      const std::string text = detail::trace_text(costs, measured_pairs, trace_groups, r, options, initial, resumed,
                                                  r.recorded_speedups, occupancy.core_share, walkers_hex, earlier);
      try {
        (void)Trace::parse(text, options.record);  // what mcmclb reads back: one it would refuse is a bug here
        detail::write_text_whole(options.record, text);
        r.recorded_items = static_cast<int64_t>(costs.size());
      } catch (const std::exception& e) {
        // The file stays as the run left it: its first line says it is incomplete, above the rows that reached it
        // as chains ended. The results are whole, so the run still returns them; every rank learns of the loss
        // (share_summary) and the application's exit status can say it.
        r.record_error = e.what();
        r.recorded_items = detail::item_rows_in(options.record);
        r.recorded_speedups = 0;
        record_line = "mcmclb: the trace " + one_line(options.record) +
                      " could not be written whole: " + one_line(r.record_error) + "; it keeps its first line '" +
                      std::string(kTraceIncomplete) + "' and " + std::to_string(r.recorded_items) + " of " +
                      std::to_string(costs.size()) +
                      " item rows, those that reached it as chains ended, without the speed-ups; the results " +
                      "returned are whole (Report::record_error)";
      }
    }
  }
  // What the run measured, as the world's estimate (the same on every rank), or what the options typed.
  if (options.item_s == 0) {
    const ItemEstimate measured = measured_items(kernel, comm);
    r.item_s = measured.single_rank_s(-1);
    r.parallel_fraction = measured.parallel_fraction();
  } else {
    r.item_s = options.item_s;
  }
  share_summary(comm, r);
  if (!record_line.empty()) {
    std::fprintf(stderr, "%s\n", record_line.c_str());
    std::fflush(stderr);
  }
  if (!options.checkpoint.empty()) {
    checkpoint_losses(app, folder, comm, r);
    checkpoint_costs(app, options.checkpoint_mtbf_s, comm, r);
    if (rank == 0) folder.note_held();  // every rank's writes are done: the allreduces above came after them
  }
  return r;
}

}  // namespace mcmclb::walkers
