// SPDX-License-Identifier: BSD-3-Clause
// A recorded workload: every item's cost and each chain's speed-up by group size, read from a trace file
// (docs/reference/columns.md, trace files), so that a study replays an application's measured costs under any
// balancer and at any scale (workload.model trace). Plain data and a parser, no MPI: the study library validates
// the file at plan time with it, and the kernel replays from it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mcmclb {

/// The header a trace file has, in this order.
inline constexpr std::string_view kTraceHeader = "chain,item,ranks,seconds,speedup";
/// The header of a trace that also says which initial group ran each chain (column `group`, on item rows): a
/// replay then lays the chains out as the application did, whatever order its log numbered them in.
inline constexpr std::string_view kTraceHeaderWithGroup = "chain,item,ranks,seconds,speedup,group";

/// What a trace's speed-up is at group sizes past the largest it gives (workload.extrapolate): a trace measures a
/// few sizes, and an answer at scale must say what it assumed of the others. `flat`: the last measured speed-up
/// (a larger group gains nothing more); `amdahl`: it grows as Amdahl's law fitted through the measured sizes
/// (Trace::amdahl_fraction), scaled to pass through the last one; `perfect`: every further rank adds as much as
/// the last measured size's ranks did on average (speed-up in proportion to m); `usl`: Gunther's Universal
/// Scalability Law fitted through the measured sizes (Trace::usl_coefficients), scaled through the last one, which
/// can peak and fall where contention between ranks grows faster than their work shrinks.
enum class TraceExtrapolation { flat, amdahl, perfect, usl };

/// Which of a size's repeated speed-ups a replay takes (workload.speedups): their median, the lowest or the highest.
/// A trace may measure a size several times; an advice replays each end as a scenario of its own, so that its
/// answer spans what the repetitions measured rather than their middle alone. A size given once is the same at
/// every end.
enum class TraceSpeedups { median, low, high };

/// The speed-ups a trace gives a chain at one group size: how many times (repetitions of the measurement) and
/// their range. The replay takes their median unless workload.speedups says otherwise.
struct Repetitions {
  int ranks, n;
  double low, high;
};

/// The first line of a trace whose recording has not ended: mcmclb::walkers::run writes it when the run starts and
/// replaces the file whole, without it, when the run ends well. A run that fails or is killed leaves it, above the
/// rows of every chain that ended (and the first items of those that had not).
inline constexpr std::string_view kTraceIncomplete = "# incomplete:";

/// The comment line that says what the recording's own run measured: `# run: ranks=P groups=G balancer=NAME
/// seconds=S` (mcmclb::walkers writes it when the run ends well). A real replay of the trace in the same layout and
/// under the same balancer should take S: `mcmclb advise --check` measures how far it is.
inline constexpr std::string_view kTraceRunLine = "# run:";

/// The comment line of an earlier run of the same walkers, in the run line's form: mcmclb::walkers carries the run
/// lines of the trace it replaces into the new one when their `walkers` key is its own, so that a program run n
/// times with recording on into one file leaves its n run times there, its run-to-run spread.
inline constexpr std::string_view kTraceEarlierRunLine = "# earlier run:";

/// The comment line by which a trace declares that its speed-ups may exceed their ranks (superlinear scaling, as
/// a working set that fits the caches of more ranks gives): `# superlinear: WHY`. Without it a speed-up above m at
/// m ranks is a measurement error (a noisy host, a reference run slowed by something else): m ranks cannot work m
/// times faster than one, so the replay sets it aside (Trace::set_aside).
inline constexpr std::string_view kTraceSuperlinear = "# superlinear:";

/// The comment line by which a recording says how far its host drifted between its early and late repetitions
/// (plots/trace_of_run.py writes it): `# drift: ...`. A person reads it; advise repeats it, so a user who never
/// opens the trace still learns that the host was not steady while the speed-ups were measured.
inline constexpr std::string_view kTraceDrift = "# drift:";

/// A speed-up a trace gives that no replay takes: above its ranks, in a trace without kTraceSuperlinear.
struct SetAside {
  int chain;          // -1: `*`
  int ranks;          // the size it was given at
  double speedup;     // what was given
  int64_t row;        // the file's row (1: the first line)
  bool size_dropped;  // every repetition of that size was set aside, so the size has none left
  /// How many of the lowest repetitions of that size were set aside with it, the same number as above the ranks
  /// where that many remain (at least one is kept): noise that pushed some values past the ranks pushed as many
  /// down, and dropping one side only would tilt the kept range upward (its "high" end then noise just below m).
  int trimmed_low = 0;
};

/// One line naming the file, the walker, the size and the value set aside, and the line that would keep it.
[[nodiscard]] std::string set_aside_line(const std::string& file, const SetAside& s);

/// What a trace's run line says: the application's own run, as it measured it.
struct RecordedRun {
  int ranks = 0, groups = 0;
  std::string balancer;
  double seconds = 0;
  /// Optional key `share`: the part of a core each rank had when the run started (mcmclb/mpi.hpp's
  /// NodeOccupancy::core_share), about 1 on an idle host; 0 where not measured.
  double share = 0;
  /// Optional key `walkers`: the fingerprint of the walkers run (name, count, item bounds), in hex; empty where
  /// not recorded. Run lines of one fingerprint are runs of the same walkers.
  std::string walkers;
};

/// A run line's text from its prefix on (kTraceRunLine or kTraceEarlierRunLine), as mcmclb::walkers writes it.
[[nodiscard]] std::string run_line(std::string_view prefix, const RecordedRun& run);
/// A run line parsed (either prefix); nothing where the line is not one a trace allows.
[[nodiscard]] std::optional<RecordedRun> parse_run_line(std::string_view line);

/// A parsed and validated trace file.
class Trace {
 public:
  /// Chains 0 .. chains() - 1: up to the largest chain with an item row; a chain without one has no items.
  [[nodiscard]] int chains() const noexcept { return static_cast<int>(single_s_.size()); }
  /// Items of chain c (items 0 .. items(c) - 1).
  [[nodiscard]] int64_t items(int chain) const { return static_cast<int64_t>(single_s_.at(chain).size()); }
  /// Seconds item `item` of chain c takes on one rank: the recorded seconds times the speed-up at the group size
  /// that worked it.
  [[nodiscard]] double single_rank_s(int chain, int64_t item) const {
    return single_s_.at(chain).at(static_cast<std::size_t>(item));
  }
  /// The speed-up of chain c at m ranks (m may be fractional): the chain's own rows, else the rows of chain `*`,
  /// else m (perfect), a size given several times at the median of its rows (or the end speedups_taken() says); between
  /// given sizes linear in log2(m), past the largest given size as the extrapolation says, 1 at m = 1.
  [[nodiscard]] double speedup(int chain, double m) const;
  /// The largest speed-up of chain c at any size from 1 to m ranks: what a group of m ranks reaches at best, since
  /// it may leave ranks idle. It equals speedup() where the curve only rises; past a peak (a measured bend, or usl's
  /// fit) it holds the peak's.
  [[nodiscard]] double best_speedup(int chain, double m) const;
  /// Seconds item `item` of chain c takes at m ranks: single_rank_s / speedup.
  [[nodiscard]] double item_s(int chain, int64_t item, int m) const {
    return single_rank_s(chain, item) / speedup(chain, m);
  }
  /// The sum of single_rank_s over the chain's items.
  [[nodiscard]] double chain_single_rank_s(int chain) const { return chain_s_.at(chain); }
  /// Seconds the whole of chain c takes at m ranks: chain_single_rank_s / speedup.
  [[nodiscard]] double chain_s(int chain, double m) const { return chain_single_rank_s(chain) / speedup(chain, m); }
  /// The longest single-rank item of any chain.
  [[nodiscard]] double longest_item_s() const noexcept { return longest_s_; }
  /// The recording's own run (its kTraceRunLine), where the trace has one.
  [[nodiscard]] const std::optional<RecordedRun>& recorded_run() const noexcept { return recorded_run_; }
  /// The earlier runs of the same walkers (its kTraceEarlierRunLine lines), newest first.
  [[nodiscard]] const std::vector<RecordedRun>& earlier_runs() const noexcept { return earlier_runs_; }
  /// The text of the trace's kTraceDrift line, after its tag; empty where it has none.
  [[nodiscard]] const std::string& drift() const noexcept { return drift_; }
  /// Whether the trace declares superlinear speed-ups (a kTraceSuperlinear line): then none is set aside.
  [[nodiscard]] bool superlinear() const noexcept { return superlinear_; }
  /// The speed-ups given above their ranks that the curves leave out, in the file's order (none where superlinear()).
  [[nodiscard]] const std::vector<SetAside>& set_aside() const noexcept { return set_aside_; }
  /// How many speed-up rows the trace gives, those set aside included.
  [[nodiscard]] int speedups_given() const noexcept { return speedups_given_; }
  /// True for a recording that did not end (its first line is kTraceIncomplete): its last chains may be cut short.
  [[nodiscard]] bool incomplete() const noexcept { return incomplete_; }
  /// The largest group size the speed-ups of chain c were given for (1: none given, or perfect scaling).
  [[nodiscard]] int largest_measured(int chain) const {
    return curve(chain).points.empty() ? 1 : curve(chain).points.back().first;
  }
  /// The largest group size any item row of chain c was recorded at (1: none, or every item at 1 rank). Past the
  /// chain's largest measured size, those items' single-rank costs rest on the extrapolated speed-up.
  [[nodiscard]] int largest_worked(int chain) const { return worked_.at(static_cast<std::size_t>(chain)); }
  /// The speed-ups chain c was given (its own rows, else chain `*`'s), as (ranks, speed-up) in ascending ranks;
  /// empty where none was given (perfect scaling). The speed-up at 1 rank is 1 and is not listed.
  [[nodiscard]] const std::vector<std::pair<int, double>>& measured_speedups(int chain) const {
    return curve(chain).points;
  }
  /// Amdahl's parallel fraction p of chain c's speed-ups, fitted by least squares on 1/speed-up - 1 =
  /// p (1/m - 1) over its given sizes and kept within [0, 1]; 1 where none is given (perfect scaling).
  [[nodiscard]] double amdahl_fraction(int chain) const { return curve(chain).amdahl_p; }
  /// The Universal Scalability Law's (sigma, kappa) of chain c's speed-ups: least squares on m/s - 1 = sigma (m - 1)
  /// + kappa m (m - 1) over its given sizes, both >= 0; kappa is 0 (the law is then Amdahl's) where fewer than
  /// three sizes are given (two terms pass through any two) or the sizes do not bend down; (0, 0) where none is
  /// given.
  [[nodiscard]] std::pair<double, double> usl_coefficients(int chain) const {
    return {curve(chain).usl_sigma, curve(chain).usl_kappa};
  }
  /// Per size of measured_speedups(c), how often it was given and the range of what was given (one entry per
  /// size, ascending ranks).
  [[nodiscard]] const std::vector<Repetitions>& repetitions(int chain) const { return curve(chain).repetitions; }
  [[nodiscard]] TraceExtrapolation extrapolation() const noexcept { return extrapolation_; }
  /// Which of a size's repetitions the curve took: their median, or their lowest or highest.
  [[nodiscard]] TraceSpeedups speedups_taken() const noexcept { return taken_; }
  /// Whether some size of a curve a chain with items replays (its own, else `*`'s) was given several times with
  /// different speed-ups: only then do the ends differ from the median.
  [[nodiscard]] bool repetitions_differ() const noexcept;
  /// The initial group that ran chain c, as the trace's `group` column records it; -1 where it records none.
  [[nodiscard]] int group(int chain) const { return group_.at(static_cast<std::size_t>(chain)); }
  /// Whether the trace records its chains' groups.
  [[nodiscard]] bool has_groups() const noexcept { return has_groups_; }
  /// How many chains each recorded initial group ran, group 0 first: one entry per group of the run line (or up to
  /// the largest group recorded); empty unless every chain has a recorded group.
  [[nodiscard]] std::vector<int> recorded_shares() const;
  /// The chains in the order their recorded groups ran them: group 0's in the order their rows first appear in
  /// the file, then group 1's, and so on, chains without items last; 0, 1, 2, ... where no group is recorded.
  /// A replay's study chain k takes the chain at position k mod C of this order (workload.map tile).
  [[nodiscard]] const std::vector<int>& layout() const noexcept { return layout_; }
  /// FNV-1a 64 of the file's bytes, 16 hex digits: what identifies the recorded workload in runs.csv and in a
  /// point's resume key, so that an edited trace is not taken for the one already run.
  [[nodiscard]] const std::string& fnv1a64() const noexcept { return fnv1a64_; }

  /// Parses text as the trace file `file`. Throws InputError, one line naming the file, the row (1: the header)
  /// and the column, and what is allowed.
  static Trace parse(std::string_view text, const std::string& file,
                     TraceExtrapolation extrapolation = TraceExtrapolation::flat,
                     TraceSpeedups taken = TraceSpeedups::median);

 private:
  using Points = std::vector<std::pair<int, double>>;  // (ranks, speed-up), ascending ranks, from (1, 1)
  struct Curve {
    Points points;  // empty: perfect scaling; a size given several times: the end `taken_` of its repetitions
    double amdahl_p = 1;
    double usl_sigma = 0, usl_kappa = 0;
    std::vector<Repetitions> repetitions;  // per size of points
  };
  [[nodiscard]] const Curve& curve(int chain) const {
    const Curve& own = speedups_.at(static_cast<std::size_t>(chain));
    return own.points.empty() ? default_speedups_ : own;
  }
  [[nodiscard]] double at(const Curve& curve, double m) const;
  static Curve fitted(Points points);
  std::vector<std::vector<double>> single_s_;
  std::vector<double> chain_s_;
  std::vector<Curve> speedups_;  // per chain; empty points: the default's
  Curve default_speedups_;       // chain `*`; empty points: perfect
  double longest_s_ = 0;
  TraceExtrapolation extrapolation_ = TraceExtrapolation::flat;
  TraceSpeedups taken_ = TraceSpeedups::median;
  std::string fnv1a64_;
  bool incomplete_ = false;
  bool superlinear_ = false;
  std::string drift_;
  std::vector<SetAside> set_aside_;
  int speedups_given_ = 0;
  std::optional<RecordedRun> recorded_run_;
  std::vector<RecordedRun> earlier_runs_;
  std::vector<int> group_;   // per chain; -1: not recorded
  std::vector<int> worked_;  // per chain: largest_worked()
  std::vector<int> layout_;  // layout()
  bool has_groups_ = false;
};

/// The trace in file under an extrapolation and an end of its repetitions, read and parsed once per process, path,
/// extrapolation and end (the simulation runs every rank in one process): later calls share it. Throws InputError as
/// Trace::parse does, or naming the file and why it cannot be read (missing, not a regular file, too large, not
/// readable).
std::shared_ptr<const Trace> load_trace(const std::string& file,
                                        TraceExtrapolation extrapolation = TraceExtrapolation::flat,
                                        TraceSpeedups taken = TraceSpeedups::median);

/// The least time in which a trace's chains can all end on nprocs ranks: a bound no run beats. Each chain may
/// spend its time on any mix of whole group sizes from its initial group's (min_ranks) up to nprocs, sharing a group
/// with other chains too, so the rate it keeps against the ranks it holds on average is the concave envelope of its
/// best speed-ups (Trace::best_speedup, so a speed-up that falls past a peak bounds runs too). With perfect
/// speed-ups it is the total single-rank work over nprocs. chains: (trace chain, its initial group's size, how
/// many study chains replay it from a group of that size).
struct ReplayedChains {
  int chain, min_ranks;
  int64_t count;
};
[[nodiscard]] double steady_share_s(const Trace& trace, const std::vector<ReplayedChains>& chains, int nprocs);
/// steady_share_s, computed once per process for the same trace (its bytes, extrapolation and repetitions' end),
/// chains and nprocs, and shared after: every rank of a run needs the ideal (its progress lines), and a simulation
/// runs all P ranks in one process, where each computing it would cost P times its searches over every chain.
[[nodiscard]] double shared_steady_share_s(const Trace& trace, const std::vector<ReplayedChains>& chains, int nprocs);
/// How many times shared_steady_share_s has computed rather than shared, in this process.
[[nodiscard]] long steady_share_computations() noexcept;

/// How a study's chains take the trace's chains (workload.map): chain k (the workload index every model uses,
/// chain_items()) replays the chain at position k mod C of an order of the C trace chains. tile: the recorded
/// layout (Trace::layout), so groups of W study chains replay the recorded groups of W. draw: that layout in an
/// order drawn with workload.seed, the same on every rank and at every rank count. Either way every C consecutive
/// study chains replay each recorded chain once: a map never leaves a walker out while it repeats another.
/// once: the recorded walkers themselves, each once, in the layout, dealt to the initial groups as
/// mcmclb::walkers deals chains (a group takes one more than another at most, the first ones the more); at the
/// recorded group count, the recorded groups (Trace::recorded_shares). A group's slots past its share are empty.
enum class TraceMap { tile, draw, once };
/// The order of the trace's chains that map takes (its size: trace.chains()). Made once per process, trace,
/// map and seed: a simulation's ranks share it.
[[nodiscard]] std::shared_ptr<const std::vector<int>> replay_order(const std::shared_ptr<const Trace>& trace,
                                                                   TraceMap map, uint64_t seed);

/// What the merge model (finished rule pays) and the planning balancers predict an item to cost at m ranks in a
/// replay (workload.scaling): the trace's own speed-ups (trace), or the single-rank cost over m (perfect: what they
/// assume of emulated work).
enum class TraceScaling { trace, perfect };

}  // namespace mcmclb
