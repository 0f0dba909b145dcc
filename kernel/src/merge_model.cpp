// SPDX-License-Identifier: BSD-3-Clause
// The finished rule `pays` (mcmclb/merge_model.hpp): the model's arithmetic, the calibration pass that measures
// it, and the kernel's questions to it (is this merge worth its cost? can any merge ever be?).
#include "mcmclb/merge_model.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <span>
#include <stdexcept>

#include "mcmclb/kernel.hpp"
#include "mcmclb/trace.hpp"
#include "mcmclb/workload.hpp"

namespace mcmclb {

namespace {

constexpr int kCalibrationTag = 8;           // the calibration's creations on the control communicator (regrouping: 7)
constexpr int kCalibrationReductions = 16;   // to price merges; a pass that only plans times a quarter
constexpr int64_t kCalibrationTrials = 256;  // per rank; about 0.3-10 ms of work for 13-55 atoms

/// Pair terms the busiest of m members sums in one trial of an atoms-atom walker (lj::pair_terms's slices).
int64_t busiest_pair_terms(lj::MoveKind move, int atoms, int m) {
  const int64_t terms = move == lj::MoveKind::single ? 2 * int64_t{atoms - 1} : lj::pair_count(atoms);
  const int64_t per = move == lj::MoveKind::single ? 2 : 1;  // single moves: 2 terms per partner atom
  const int64_t units = terms / per;
  return per * ((units + m - 1) / m);
}

int64_t to_ns(double s) { return std::llround(s * 1e9); }

/// The calibration's barriers: the one it is timed from and those before each of its timed sections. In simulation
/// barrier_together (all ranks leave at one simulated date, and a simulated rank's wait costs no core); returns the
/// seconds it spent agreeing on that date and waiting for it, which no merge pays (0 on real MPI). On
/// real MPI the polite barrier alone, as before barrier_together existed, without its closing MPI_Barrier. Where
/// every rank has a core the polite barrier spins (WaitPolicy::spin takes no naps), so its ranks leave within
/// microseconds and MPI_Barrier adds nothing. Where ranks share cores, MPICH's MPI_Barrier busy-polls: the ranks
/// in it hold the cores, and each of its rounds, and the ranks' way out of it, waits for the scheduler to give a
/// descheduled rank a core, a time slice at a time. Inside the pass that waiting was timed; before it, the first
/// rank out started its clock while the others still waited for a core. Either way calibration_s on oversubscribed
/// cores became several times what the polite barriers give. A rank that leaves a polite barrier first waits
/// inside the next timed section for the last one (up to a nap), as a merge in the run waits for partners that nap
/// likewise: a cost the pass means to measure.
double calibration_barrier(const mpi::Comm& world) {
  if constexpr (mpi::kSimulated) {
    return mpi::barrier_together(world, mpi::setup_patience);
  } else {
    mpi::barrier_politely(world, mpi::setup_patience);
    return 0.0;
  }
}

}  // namespace

std::vector<int> calibration_sizes(int nprocs) {
  std::vector<int> sizes;
  for (int m = 1; m <= nprocs; m *= 2) {
    sizes.push_back(m);
    if (m > nprocs / 2) break;
  }
  if (sizes.back() != nprocs) sizes.push_back(nprocs);
  return sizes;
}

MergeModel::MergeModel(std::vector<SizeCosts> table, double s_per_flop, ModelError error)
    : table_(std::move(table)), s_per_flop_(s_per_flop), error_(error) {
  if (table_.empty() || table_.front().size != 1 ||
      !std::is_sorted(table_.begin(), table_.end(),
                      [](const SizeCosts& a, const SizeCosts& b) { return a.size < b.size; })) {
    throw std::logic_error("MergeModel: the table must start at size 1 and ascend");
  }
}

SizeCosts MergeModel::at(int m) const {
  if (table_.empty()) throw std::logic_error("MergeModel: not calibrated");
  const auto predicted = [this](SizeCosts c) {
    c.reduce_s *= error_.reduce;
    return c;
  };
  if (m <= table_.front().size) return predicted(table_.front());
  if (m >= table_.back().size) return predicted(table_.back());
  const auto hi =
      std::lower_bound(table_.begin(), table_.end(), m, [](const SizeCosts& c, int size) { return c.size < size; });
  if (hi->size == m) return predicted(*hi);
  const auto lo = hi - 1;
  const double w = (std::log2(m) - std::log2(lo->size)) / (std::log2(hi->size) - std::log2(lo->size));
  const auto mix = [w](double a, double b) { return a + w * (b - a); };
  return predicted(
      {m, mix(lo->create_s, hi->create_s), mix(lo->reduce_s, hi->reduce_s), mix(lo->bcast_s, hi->bcast_s)});
}

double MergeModel::regroup_s(int m) const {
  const SizeCosts c = at(m);
  return c.create_s + c.bcast_s;
}

double MergeModel::compute_item_s(lj::MoveKind move, int atoms, int64_t moves, int m) const {
  const double slice_s =
      lj::trial_flops(move, atoms, busiest_pair_terms(move, atoms, m)) * s_per_flop_ * error_.compute;
  const double reduce_s = m > 1 ? at(m).reduce_s : 0.0;
  return static_cast<double>(moves) * (slice_s + reduce_s);
}

void Kernel::calibrate_merges(CalibrationPass pass) {
  // Ranks arrive here far apart (compute mode's single-rank reference, group formation), so the pass is timed from
  // a barrier: otherwise the slowest rank's calibration_s would hold the others' set-up, about a whole unbalanced
  // run's worth in compute mode.
  calibration_barrier(world_);
  // measure_merges takes off the simulation's waits for a common start inside the pass, so that calibration_s is
  // what the pass costs (the one-off cost advise adds to a run), not that idle time.
  calibration_s_ = 0;
  const double t0 = pace::now_s();
  measure_merges(pass);
  calibration_s_ += pace::now_s() - t0;
}

void Kernel::measure_merges(CalibrationPass pass) {
  // Untimed set-up before the clock starts, collective over WORLD; every rank measures as the run will work (all
  // at once, by the run's creation method), and the sums over ranks make the table identical on every rank.
  const std::vector<int> sizes = calibration_sizes(nprocs_);
  int max_atoms = 0;
  if (computing()) {
    for (int c = 0; c < chain_count(); ++c) max_atoms = std::max(max_atoms, run_.work.compute.atoms_of(c));
  }
  const std::size_t state_words = computing() ? lj::serialized_bytes(max_atoms) / sizeof(int64_t) : 2;
  // Per size: create, reduce, bcast (ns summed over the ranks of full groups), and how many ranks those are;
  // then the compute rate: elapsed ns and model flops.
  std::vector<int64_t> sums(sizes.size() * 4 + 2, 0);
  const std::size_t rate = 4 * sizes.size();
  const auto model_of = [&](const std::vector<int64_t>& totals, std::size_t measured) {
    std::vector<SizeCosts> table;
    for (std::size_t s = 0; s < measured; ++s) {
      const auto n = static_cast<double>(totals[4 * s + 3]) * 1e9;
      table.push_back({sizes[s], static_cast<double>(totals[4 * s]) / n, static_cast<double>(totals[4 * s + 1]) / n,
                       static_cast<double>(totals[4 * s + 2]) / n});
    }
    const int64_t flops = totals[rate + 1];
    const double s_per_flop = flops > 0 ? static_cast<double>(totals[rate]) / 1e9 / static_cast<double>(flops) : 0.0;
    return MergeModel(std::move(table), s_per_flop, run_.work.model_error);
  };
  if (computing()) {
    // The compute rate: trial moves of the largest walker on one rank, timed as compute mode works them (the
    // simulation charges their model flops; real MPI takes what they take, all ranks working at once).
    lj::Spec spec = lj_spec(run_, 0);
    spec.atoms = max_atoms;
    lj::State scratch = lj::initial_state(max_atoms, {run_.work.seed, ~uint64_t{0}});
    double flops = 0;
    const auto computed = [&](int64_t terms) { flops += lj::trial_flops(spec.move, max_atoms, terms); };
    const auto no_reduce = [](lj::Energy e) { return e; };
    const lj::ChainKey key{run_.work.seed, ~uint64_t{0}};
    calibration_s_ -= calibration_barrier(world_);
    const double t0 = pace::now_s();
    for (int64_t i = 0; i < kCalibrationTrials; ++i) (void)lj::work_item(spec, key, scratch, 1, 0, no_reduce, computed);
    pace::compute(flops);  // one simulated activity, as compute mode passes its trials' cost between reductions
    sums[rate] = to_ns(pace::now_s() - t0);
    sums[rate + 1] = std::llround(flops);
  }
  // Planning reads item times only (the compute rate and the reductions), so a pass that only plans leaves out what
  // prices a merge (the warm creation, the broadcast) and times fewer reductions: it runs before many a short run.
  const bool pricing = pass == CalibrationPass::to_price;
  const int reductions = pricing ? kCalibrationReductions : kCalibrationReductions / 4;
  for (std::size_t s = 0; s < sizes.size(); ++s) {
    const int m = sizes[s];
    const int first = rank_ / m * m;
    const int last = std::min(first + m, nprocs_) - 1;
    calibration_s_ -= calibration_barrier(world_);
    if (pricing && m > 1 && !mpi::kSimulated) {
      // Untimed first: the first creation among ranks that have not exchanged a message yet also sets up their
      // connections (measured at 2 ranks with MPICH ch4:ucx: 2.8 ms against 35-55 us after), which a merge never
      // pays, its groups having exchanged the merge request first. (A simulated creation has no such cost.)
      creator_->create_range(first, last, kCalibrationTag)->free();
      calibration_s_ -= calibration_barrier(world_);
    }
    const double t0 = pace::now_s();
    std::unique_ptr<GroupComm> comm = creator_->create_range(first, last, kCalibrationTag);
    const double create_s = pace::now_s() - t0;
    double reduce_s = 0;
    if (m > 1) {
      if (!mpi::kSimulated) {
        // Untimed first, as the creation above: the first reduction on a launch's first communicator of this size
        // also sets up its connections (measured at 2 ranks with MPICH: about 1 ms of a 16-reduction mean against
        // 2-8 us after), which no item of the run pays.
        int64_t part = 1;
        const auto pending = comm->iallreduce_sum(std::span<int64_t>(&part, 1));
        pace::wait_until([&] { return pending->test(); }, kComputeNap);
      }
      const double t1 = pace::now_s();
      for (int i = 0; i < reductions; ++i) {
        int64_t part = 1;
        const auto pending = comm->iallreduce_sum(std::span<int64_t>(&part, 1));
        pace::wait_until([&] { return pending->test(); }, kComputeNap);
      }
      reduce_s = (pace::now_s() - t1) / reductions;
    }
    double bcast_s = 0;
    if (pricing) {
      std::vector<int64_t> words(state_words, 0);
      const double t2 = pace::now_s();
      comm->bcast(std::span<int64_t>(words), 0);
      bcast_s = pace::now_s() - t2;
    }
    comm->free();
    if (last - first + 1 == m) {
      sums[4 * s] = to_ns(create_s);
      sums[4 * s + 1] = to_ns(reduce_s);
      sums[4 * s + 2] = to_ns(bcast_s);
      sums[4 * s + 3] = 1;
    }
    if (pricing && computing() && m == 2 && sizes.size() > 2) {
      // Pricing a merge means creating communicators of every size, which by a parent-collective method on
      // oversubscribed cores costs more than many a run it prices. Reductions grow with the group, so a model whose
      // every size reduces as fast as 2 ranks do and creates and broadcasts for free bounds every merge's gain from
      // above; when even it finds that no merge can pay, the dearer sizes cannot change the answer, and the pass
      // stops with the sizes it has (calibration.csv then lists 1 and 2 only).
      std::vector<int64_t> so_far(sums);
      pace::allreduce_sum(world_.get(), so_far);
      std::vector<int64_t> bound(so_far);
      bound[4 * s] = bound[4 * s + 2] = 0;
      use_merge_model(model_of(bound, s + 1));
      if (!merging_can_pay()) {
        use_merge_model(model_of(so_far, s + 1));
        return;
      }
    }
  }
  pace::allreduce_sum(world_.get(), sums);
  use_merge_model(model_of(sums, sizes.size()));
}

double Kernel::expected_item_s(const GroupState& g, int64_t i, int size, ItemEstimate::End end) const {
  ++planned_items_;
  const ChainPos at = locate(g.unit, g.next_item + i);
  if (replaying()) return replay_ms(at.chain, at.item, size, true) / 1000.0;
  if (measuring()) {
    // Items past the bound the chain last gave (or past the item at which it was done) will be passed over.
    if (at.chain == bound_chain_ && at.item >= bound_items_) return 0.0;
    return (world_estimate_ ? *world_estimate_ : estimate_).item_s(at.chain, size, end);
  }
  if (!computing()) return item_cost_ms(run_, size, at.chain, at.item) / 1000.0;
  const ComputeSpec& c = run_.work.compute;
  return merge_model_.compute_item_s(c.move, c.atoms_of(at.chain), c.moves_per_item, size);
}

double Kernel::planned_item_ms(const GroupState& g, int64_t i) const {
  if (computing() || replaying() || measuring()) return 1000.0 * expected_item_s(g, i, g.size());
  ++planned_items_;  // expected_item_s counts the others
  return item_ms(g, i);
}

double Kernel::window_item_ms() const {
  if (measuring()) return 1000.0 * (world_estimate_ ? *world_estimate_ : estimate_).longest_single_rank_s();
  return computing() ? window_item_ms_ : replaying() ? longest_replayed_ms_ : run_.T_ms;
}

void Kernel::use_merge_model(MergeModel model) {
  merge_model_ = std::move(model);
  declined_.clear();
  if (!computing()) return;
  // Once per model, not at every polling point that asks: the longest item of any chain with items, at one rank.
  const ComputeSpec& c = run_.work.compute;
  double longest = 0;
  for (int chain = 0; chain < chain_count(); ++chain) {
    if (chain_length(chain) == 0) continue;
    longest = std::max(longest, merge_model_.compute_item_s(c.move, c.atoms_of(chain), c.moves_per_item, 1));
  }
  window_item_ms_ = 1000.0 * longest;
}

double Kernel::merge_margin_s(const GroupState& g, int joiners, ItemEstimate::End end) const {
  const int merged = g.size() + joiners;
  double gain = 0;
  for (int64_t i = 0; i < g.items_left; ++i) {
    gain += expected_item_s(g, i, g.size(), end) - expected_item_s(g, i, merged, end);
  }
  return gain - merge_model_.regroup_s(merged);
}

// The rule pays weighs a merge at the high end of the measured costs' spread (ItemEstimate::End), where it gains
// most: a merge is declined only where it does not pay even there. Where the spread spans both choices, the
// measurement cannot tell, and the group takes the merge its balancer would take without the rule, as it does
// before anything is measured (perfect speed-up assumed). A noisy fit thus no longer decides; a declined merge
// would leave ranks idle for the rest of a chain, while a needless one costs a regrouping and items no faster.
// Where both ends agree, the point estimate, which lies between them, agrees as well: such decisions are unchanged.
bool Kernel::merge_pays(const GroupState& g, int joiners) const {
  // merge_margin_s(g, joiners, high) > 0, item by item in the same order, stopped once the items left cannot change
  // the answer: where their gains are all 0, all at least 0 with the margin already positive, or all at most 0 with
  // it not (rounding is monotone: adding a number of one sign never moves a float the other way). A host that keeps
  // declining a held request asks this at every polling point, on every member: the walk of every item left made
  // that quadratic in a chain's items, while a merge that pays nowhere along a flat curve now costs no walk at all.
  // Declined before from an earlier item, with gains that can only shrink since (declined_): declined again, which
  // covers a host's requests where every merge gains a little and none enough.
  constexpr auto end = ItemEstimate::End::high;
  const int merged = g.size() + joiners;
  const double cost = merge_model_.regroup_s(merged);
  const int64_t end_item = g.next_item + g.items_left;
  const bool fixed = !measuring();  // measured costs change with every item worked
  const auto same = [&](const Declined& d) {
    return d.unit == g.unit && d.end == end_item && d.size == g.size() && d.merged == merged && d.cost == cost;
  };
  if (fixed && std::any_of(declined_.begin(), declined_.end(),
                           [&](const Declined& d) { return same(d) && g.next_item >= d.from; })) {
    return false;
  }
  double gain = 0;
  int64_t chain_end = 0;  // where the chain of item i ends, counted as i is
  GainSign rest = GainSign::mixed, all = GainSign::mixed;
  for (int64_t i = 0; i < g.items_left; ++i) {
    if (i == chain_end) {
      const ChainPos at = locate(g.unit, g.next_item + i);
      chain_end = i + chain_length(at.chain) - at.item;
      rest = gain_sign_from(g.unit, at.chain, g.size(), merged, end);
      if (i == 0) all = rest;
    }
    if (rest == GainSign::none || (rest == GainSign::nonnegative && gain - cost > 0) ||
        (rest == GainSign::nonpositive && !(gain - cost > 0))) {
      break;
    }
    gain += expected_item_s(g, i, g.size(), end) - expected_item_s(g, i, merged, end);
  }
  const bool pays = gain - cost > 0;
  if (fixed && !pays && all == GainSign::nonnegative) {
    const auto known = std::find_if(declined_.begin(), declined_.end(), same);
    if (known != declined_.end()) {
      known->from = std::min(known->from, g.next_item);
    } else {
      if (declined_.size() >= 4) declined_.erase(declined_.begin());
      declined_.push_back({g.unit, g.size(), merged, g.next_item, end_item, cost});
    }
  }
  return pays;
}

Kernel::Outlook Kernel::merge_outlook(const GroupState& g, int joiners) const {
  // Merging at the polling point k items from now gains the sum of the per-item gains from item k on: one pass
  // from the end finds the best such suffix after the current point (k >= 1) beside the whole (k = 0). At the
  // spread's high end, as merge_pays.
  constexpr auto end = ItemEstimate::End::high;
  const int merged = g.size() + joiners;
  const double cost = merge_model_.regroup_s(merged);
  // Gains all 0 (a flat curve): every suffix is 0, and the answer needs no walk. Gains all at least 0: no suffix
  // is more than the whole (rounding is monotone), so once one pays the whole does, and the answer is now. Asked at
  // every polling point while a request is held, a walk of every item left would be quadratic in a chain's items.
  const GainSign all = g.items_left > 0
                           ? gain_sign_from(g.unit, locate(g.unit, g.next_item).chain, g.size(), merged, end)
                           : GainSign::none;
  double suffix = 0, best_later = -cost;
  for (int64_t i = all == GainSign::none ? -1 : g.items_left - 1; i >= 0; --i) {
    suffix += expected_item_s(g, i, g.size(), end) - expected_item_s(g, i, merged, end);
    if (i >= 1) best_later = std::max(best_later, suffix - cost);
    if (all == GainSign::nonnegative && suffix - cost > 0) return Outlook::now;
  }
  if (suffix - cost > 0) return Outlook::now;
  return best_later > 0 ? Outlook::later : Outlook::never;
}

Kernel::GainSign Kernel::gain_sign(int chain, int size, int merged, ItemEstimate::End end) const {
  // Two values of the chain at the two sizes, one per size, that order every item's expected time alike: the item's
  // time itself where the chain's items cost the same (measured, compute), else the divisor of a non-negative
  // per-item base (a replay's single-rank time over its speed-up; emulated work's T, jittered, over the size).
  // Rounding is monotone, so a larger value, or a smaller divisor, never gives a smaller time, and equal ones give
  // equal times: the gain, the difference, then has one sign on every item. Anything else: mixed, and callers walk.
  const auto by_time = [](double at_size, double at_merged) {
    if (!std::isfinite(at_size) || !std::isfinite(at_merged)) return GainSign::mixed;
    if (at_size == at_merged) return GainSign::none;
    return at_size > at_merged ? GainSign::nonnegative : GainSign::nonpositive;
  };
  const auto by_divisor = [&](double at_size, double at_merged) {
    if (!(at_size > 0) || !(at_merged > 0)) return GainSign::mixed;
    return by_time(at_merged, at_size);
  };
  if (replaying()) {
    if (run_.workload.scaling == TraceScaling::perfect) return by_divisor(size, merged);
    const int replayed = workload_->trace_chain(workload_index(chain));
    return by_divisor(planned_->speedup(replayed, size), planned_->speedup(replayed, merged));
  }
  if (measuring()) {
    const ItemEstimate& e = world_estimate_ ? *world_estimate_ : estimate_;
    return by_time(e.item_s(chain, size, end), e.item_s(chain, merged, end));
  }
  if (computing()) {
    const ComputeSpec& c = run_.work.compute;
    return by_time(merge_model_.compute_item_s(c.move, c.atoms_of(chain), c.moves_per_item, size),
                   merge_model_.compute_item_s(c.move, c.atoms_of(chain), c.moves_per_item, merged));
  }
  // item_cost_ms: T / size, times a jitter factor of 1 +- jitter_pct %, positive below 100 %.
  if (!(run_.T_ms >= 0) || !(std::abs(run_.work.jitter_pct) < 100.0)) return GainSign::mixed;
  return by_divisor(size, merged);
}

Kernel::GainSign Kernel::gain_sign_from(int unit, int from, int size, int merged, ItemEstimate::End end) const {
  const int last = unit >= units_ ? from : (unit + 1) * chains_per_group_ - 1;
  GainSign all = GainSign::none;
  for (int c = from; c <= last && all != GainSign::mixed; ++c) {
    if (chain_length(c) == 0) continue;
    const GainSign one = gain_sign(c, size, merged, end);
    if (all == GainSign::none || one == GainSign::mixed) {
      all = one;
    } else if (one != GainSign::none && one != all) {
      all = GainSign::mixed;
    }
  }
  return all;
}

bool Kernel::merging_can_pay() const {
  // A replayed trace's items differ one by one, so the bound below would walk every item of every unit on every
  // rank (quadratic in the rank count in a simulation): a replay asks each merge instead.
  // Measured costs are not known before the run: likewise.
  if (replaying() || measuring()) return true;
  // For each initial group size w and each kind of item (compute: its atom count; emulated work: one kind, whose
  // cost at m ranks is at most T (1 + jitter) / m), the most items of that kind any initial group of w ranks owns.
  // Their gains bound any unit's: a first merge of f ranks into a group of w gains at most
  // sum over kinds of items x max(0, t(w) - t(w + f)).
  std::map<int, std::map<int, int64_t>> most;  // w -> kind -> items
  for (const SizeRun& r : size_runs_) {
    auto& at_w = most[r.size];
    for (int u = r.first_unit; u < r.first_unit + r.count; ++u) {
      std::map<int, int64_t> kinds;
      for (int c = u * chains_per_group_; c < (u + 1) * chains_per_group_; ++c) {
        kinds[computing() ? run_.work.compute.atoms_of(c) : 0] += chain_length(c);
      }
      for (const auto& [kind, items] : kinds) at_w[kind] = std::max(at_w[kind], items);
    }
  }
  const ComputeSpec& spec = run_.work.compute;
  const auto item_s = [&](int kind, int m) {
    if (computing()) return merge_model_.compute_item_s(spec.move, kind, spec.moves_per_item, m);
    return run_.T_ms * (1.0 + run_.work.jitter_pct / 100.0) / m / 1000.0;
  };
  for (const auto& [w, kinds] : most) {
    for (int merged = w + 1; merged <= nprocs_; ++merged) {
      double gain = 0;
      for (const auto& [kind, items] : kinds) {
        gain += static_cast<double>(items) * std::max(0.0, item_s(kind, w) - item_s(kind, merged));
      }
      if (gain > merge_model_.regroup_s(merged)) return true;
    }
  }
  return false;
}

}  // namespace mcmclb
