// SPDX-License-Identifier: BSD-3-Clause
// One kernel run end to end (mcmclb/driver.hpp).
#include "mcmclb/driver.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>

#include "mcmclb/balancer.hpp"
#include "mcmclb/run_id.hpp"
#include "mcmclb/study.hpp"
#include "mcmclb/text.hpp"
#include "mcmclb/workload.hpp"

namespace mcmclb {

namespace {

constexpr int kStatWords = std::tuple_size_v<RankStats::Words>;

std::string make_run_id(const RunSpec& spec, const mpi::Comm& world) {
  std::array<char, 128> id{};  // 40 characters of experiment, the UTC second, 16 hex digits and a 20-digit count
  if (world.rank() == 0) {
    const std::string made = next_run_id(spec.experiment);
    std::snprintf(id.data(), id.size(), "%s", made.c_str());
  }
  mpi::bcast_politely(world, id.data(), static_cast<int>(id.size()), MPI_CHAR, 0);
  return id.data();
}

/// Rank 0 gets every rank's text, concatenated in rank order, over a binomial tree of point-to-point messages:
/// log2(P) rounds, and no rank but 0 holds more than its subtree's text. Not MPI_Gatherv, which SMPI always runs
/// flat (rank 0 posts P receives and completes them one scan at a time: minutes of host time at 8192 ranks).
std::string gather_text(const mpi::Comm& world, const std::string& mine) {
  constexpr int kTag = 31;  // the kernel's traffic is over by now; no balancer tag (balancers/src/protocol.hpp)
  const int n = world.size();
  const int rank = world.rank();
  std::string all = mine;  // the text of ranks [rank, rank + mask) after each round
  for (int mask = 1; mask < n; mask <<= 1) {
    if ((rank & mask) != 0) {
      mpi::check(MPI_Send(all.data(), static_cast<int>(all.size()), MPI_CHAR, rank - mask, kTag, world.get()),
                 "MPI_Send");
      return {};
    }
    if (rank + mask < n) {
      MPI_Status status;
      if constexpr (mpi::kSimulated) {
        mpi::check(MPI_Probe(rank + mask, kTag, world.get(), &status), "MPI_Probe");
      } else {  // the sender may still be checking its own subtree: wait without taking its core
        mpi::wait_until_politely(
            [&] {
              int arrived = 0;
              mpi::check(MPI_Iprobe(rank + mask, kTag, world.get(), &arrived, &status), "MPI_Iprobe");
              return arrived != 0;
            },
            mpi::setup_patience);
      }
      int count = 0;
      mpi::check(MPI_Get_count(&status, MPI_CHAR, &count), "MPI_Get_count");
      const std::size_t at = all.size();
      all.resize(at + static_cast<std::size_t>(count));
      mpi::check(MPI_Recv(all.data() + at, count, MPI_CHAR, rank + mask, kTag, world.get(), MPI_STATUS_IGNORE),
                 "MPI_Recv");
    }
  }
  return all;
}

/// The run time without balancing (the longest unit, an initial group's W chains one after another, on that
/// group) and the ideal (all work spread over every rank). chain_s[c]: chain c's work on one rank (emulated: S*T;
/// compute: the measured reference); initial group g owns the chains g*W .. g*W + W - 1.
void reference_times(const std::vector<double>& chain_s, const std::vector<int>& sizes, int W, int nprocs,
                     RunResult& r) {
  r.baseline_s = 0;
  // chain_s may be empty (compute mode's reference is known on rank 0 only, the rank that writes these times).
  for (std::size_t g = 0; g < sizes.size() && (g + 1) * static_cast<std::size_t>(W) <= chain_s.size(); ++g) {
    const auto first = chain_s.begin() + static_cast<std::ptrdiff_t>(g * static_cast<std::size_t>(W));
    r.baseline_s = std::max(r.baseline_s, std::accumulate(first, first + W, 0.0) / sizes[g]);
  }
  r.ideal_s = std::accumulate(chain_s.begin(), chain_s.end(), 0.0) / nprocs;
}

/// Emulated work: reference_times from the workload, chain by chain in the same order and arithmetic (so the
/// same bits), without a table of every chain: every rank needs the times (its progress lines), and a simulation
/// runs all ranks in one process, where a table per rank over all chains is quadratic in the rank count. A replayed
/// trace: its speed-ups at each initial group's size for the baseline, and steady_share_s() for the ideal, once per
/// process (shared_steady_share_s). Returns, for a trace whose chains with work the run does not all replay (fewer
/// study chains than recorded ones, or a draw that missed some), one line saying how many it replays; else "".
std::string emulated_reference_times(const RunSpec& spec, const std::vector<int>& sizes, int nprocs, RunResult& r) {
  const auto workload = make_workload(spec.workload);
  const Trace* trace = workload->trace();
  const int W = spec.workload.chains_per_group;
  r.baseline_s = 0;
  double total_s = 0;
  // A trace's chains as steady_share_s() takes them: few distinct (trace chain, group size) pairs, counted.
  std::map<std::pair<int, int>, int64_t> replayed;
  int leader = 0, g = 0;
  for (const int size : sizes) {
    double unit_s = 0;
    for (int c = 0; c < W; ++c) {
      const int index = chain_index(*workload, g, static_cast<int>(sizes.size()), leader, W, c);
      if (index < 0) continue;  // a slot the trace's walkers leave empty (workload.map once)
      if (trace != nullptr) {   // the unit's time on its group: each chain at the group's speed-up
        const int chain = workload->trace_chain(index);
        unit_s += trace->chain_s(chain, size);
        ++replayed[{chain, size}];
      } else {  // its work on one rank, divided by the size below (perfect scaling)
        const double chain_s = static_cast<double>(workload->items(index)) * spec.T_ms / 1000.0;
        unit_s += chain_s;
        total_s += chain_s;
      }
    }
    r.baseline_s = std::max(r.baseline_s, trace != nullptr ? unit_s : unit_s / size);
    leader += size;
    ++g;
  }
  if (trace == nullptr) {
    r.ideal_s = total_s / nprocs;
    return "";
  }
  std::vector<ReplayedChains> chains;
  std::set<int> distinct;
  for (const auto& [key, count] : replayed) {
    chains.push_back({key.first, key.second, count});
    if (trace->items(key.first) > 0) distinct.insert(key.first);
  }
  r.ideal_s = shared_steady_share_s(*trace, chains, nprocs);
  int with_work = 0;
  for (int c = 0; c < trace->chains(); ++c) with_work += trace->items(c) > 0 ? 1 : 0;
  if (static_cast<int>(distinct.size()) == with_work) return "";
  return "the " + std::to_string(sizes.size() * static_cast<std::size_t>(W)) +
         " chains of this run (P=" + std::to_string(nprocs) + ", " + std::to_string(sizes.size()) + " groups, " +
         std::to_string(W) + " each) replay " + std::to_string(distinct.size()) + " of the " +
         std::to_string(with_work) + " chains with items of trace file " + spec.workload.file + " (workload.map " +
         std::string(to_string(spec.workload.map)) + ")";
}

}  // namespace

std::optional<double> emulated_ideal_s(const RunSpec& spec) {
  if (spec.work.mode == WorkMode::compute) return std::nullopt;
  const auto sizes = initial_group_sizes(spec, spec.nprocs);
  if (!sizes) return std::nullopt;
  RunResult r;
  (void)emulated_reference_times(spec, *sizes, spec.nprocs, r);
  return r.ideal_s;
}

namespace {

/// Compute mode, collective: each chain's whole trajectory on one rank (chain c on rank c mod P, g = 1, no
/// communication), before the run and untimed. Rank 0 gets every chain's final energy, acceptances and the CPU
/// seconds it took: the reference the run must reproduce and the calibration of the ideal time (CPU time, so
/// ranks sharing cores do not inflate it; simulation: the modelled cost as simulated time, pace::compute).
std::vector<ChainOutcome> reference_chains(const RunSpec& spec, const std::vector<int64_t>& items,
                                           const mpi::Comm& world) {
  const auto chains = static_cast<int>(items.size());
  std::vector<int64_t> ints(static_cast<std::size_t>(2 * chains), 0);
  std::vector<double> cpu(static_cast<std::size_t>(chains), 0.0);
  for (int c = world.rank(); c < chains; c += world.size()) {
    const double t0 = pace::cpu_s();
    const lj::Spec physics = Kernel::lj_spec(spec, c);
    const lj::ChainKey key = Kernel::lj_key(spec, c);
    lj::State state = lj::initial_state(physics.atoms, key);
    const int64_t moves = items[static_cast<std::size_t>(c)] * spec.work.compute.moves_per_item;
    double flops = 0;  // the modelled cost, the simulated time of the reference (nothing under real MPI)
    for (int64_t m = 0; m < moves; ++m) {
      const lj::ItemResult done = lj::work_item_split(physics, key, state, 1);
      flops += lj::trial_flops(physics.move, physics.atoms, done.pair_terms);
    }
    pace::compute(flops);
    ints[static_cast<std::size_t>(2 * c)] = state.energy;
    ints[static_cast<std::size_t>(2 * c + 1)] = state.accepted;
    cpu[static_cast<std::size_t>(c)] = pace::cpu_s() - t0;
  }
  std::vector<int64_t> all_ints(ints.size());
  std::vector<double> all_cpu(cpu.size());
  // Reductions wait asleep, so ranks that finish their chains early leave the cores to those still computing.
  MPI_Request requests[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  mpi::check(MPI_Ireduce(ints.data(), all_ints.data(), 2 * chains, MPI_INT64_T, MPI_SUM, 0, world.get(), &requests[0]),
             "MPI_Ireduce");
  mpi::check(MPI_Ireduce(cpu.data(), all_cpu.data(), chains, MPI_DOUBLE, MPI_SUM, 0, world.get(), &requests[1]),
             "MPI_Ireduce");
  pace::wait(requests[0]);
  pace::wait(requests[1]);
  std::vector<ChainOutcome> out;
  if (world.rank() != 0) return out;
  for (int c = 0; c < chains; ++c) {
    ChainOutcome o;
    o.chain = c;
    o.atoms = spec.work.compute.atoms_of(c);
    o.items = items[static_cast<std::size_t>(c)];
    o.ref_energy_q32 = all_ints[static_cast<std::size_t>(2 * c)];
    o.ref_accepted = all_ints[static_cast<std::size_t>(2 * c + 1)];
    o.ref_cpu_s = all_cpu[static_cast<std::size_t>(c)];
    out.push_back(o);
  }
  return out;
}

/// Compute mode with work.trace, collective: every leader's trace points on rank 0, by chain and item.
std::vector<TracePoint> gather_trace(const Kernel& kernel, const mpi::Comm& world) {
  std::string mine;
  for (const TracePoint& p : kernel.trace()) {
    mine += std::to_string(p.chain) + ' ' + std::to_string(p.item) + ' ' + std::to_string(p.energy_q32) + ' ' +
            std::to_string(p.accepted) + ' ' + std::to_string(p.group_size) + '\n';
  }
  const std::string all = gather_text(world, mine);
  std::vector<TracePoint> trace;
  std::istringstream in(all);
  TracePoint p;
  while (in >> p.chain >> p.item >> p.energy_q32 >> p.accepted >> p.group_size) trace.push_back(p);
  std::sort(trace.begin(), trace.end(), [](const TracePoint& a, const TracePoint& b) {
    return std::pair(a.chain, a.item) < std::pair(b.chain, b.item);
  });
  return trace;
}

/// Compute mode with work.record, collective: every item's cost on rank 0, as costs.csv rows (a trace file with
/// the run id first, docs/reference/columns.md): the item rows by chain and item, then each chain's speed-up at
/// every size the calibration measured. A chain's speed-ups at m are its own measured ones where its group grew
/// to m (paired_speedups: the items just before and just after each change, so a drifting host cancels), else the
/// calibrated model's (MergeModel::compute_item_s at 1 over at m): the sizes it never worked are the calibration's.
std::vector<csv::Row> gather_costs(const Kernel& kernel, const RunSpec& spec, const std::string& run_id,
                                   const mpi::Comm& world) {
  std::string mine;
  for (const ItemCost& c : kernel.item_costs()) {
    char line[96];
    std::snprintf(line, sizeof line, "%d %lld %d %.17g\n", c.chain, static_cast<long long>(c.item), c.ranks, c.seconds);
    mine += line;
  }
  const std::string all = gather_text(world, mine);
  std::vector<csv::Row> rows;
  if (world.rank() != 0) return rows;
  std::vector<ItemCost> costs;
  std::istringstream in(all);
  ItemCost c;
  long long item = 0;
  while (in >> c.chain >> item >> c.ranks >> c.seconds) {
    c.item = item;
    costs.push_back(c);
  }
  std::sort(costs.begin(), costs.end(), [](const ItemCost& a, const ItemCost& b) {
    return std::pair(a.chain, a.item) < std::pair(b.chain, b.item);
  });
  for (const ItemCost& x : costs) {
    rows.push_back(
        {run_id, std::to_string(x.chain), std::to_string(x.item), std::to_string(x.ranks), csv::number(x.seconds), ""});
  }
  std::map<std::pair<int, int>, std::vector<double>> measured;  // (chain, ranks): its pairs there
  for (const PairedSpeedup& p : paired_speedups(costs)) measured[{p.chain, p.ranks}].push_back(p.speedup);
  const MergeModel& model = kernel.merge_model();
  const ComputeSpec& cs = spec.work.compute;
  for (int chain = 0; chain < kernel.chain_count(); ++chain) {
    if (kernel.chain_length(chain) == 0) continue;
    for (const SizeCosts& size : model.table()) {
      const int m = size.size;
      if (m == 1) continue;
      const auto it = measured.find({chain, m});
      const std::vector<double> ups =
          it != measured.end() ? it->second
                               : std::vector{model.compute_item_s(cs.move, cs.atoms_of(chain), cs.moves_per_item, 1) /
                                             model.compute_item_s(cs.move, cs.atoms_of(chain), cs.moves_per_item, m)};
      for (const double up : ups)
        rows.push_back({run_id, std::to_string(chain), "", std::to_string(m), "", csv::number(up)});
    }
  }
  return rows;
}

/// Compute mode, collective: the run's per-chain tallies and item timings onto rank 0's outcomes; each chain
/// must be recorded once and equal its reference (violations otherwise).
std::vector<std::string> check_chains(const Kernel& kernel, std::vector<ChainOutcome>& outcomes,
                                      const mpi::Comm& world) {
  const auto& tallies = kernel.chain_tallies();
  const auto chains = static_cast<int>(tallies.size());
  constexpr int kInts = 6;
  std::vector<int64_t> ints;
  std::vector<double> secs;
  for (const ChainTally& t : tallies) {
    ints.insert(ints.end(), {t.recorded, t.energy, t.accepted, t.moves, t.merges, t.state_bytes});
    secs.push_back(t.state_s);
  }
  std::vector<int64_t> all_ints(ints.size());
  std::vector<double> all_secs(secs.size());
  mpi::reduce_sum_politely(world, ints.data(), all_ints.data(), kInts * chains, 0);
  mpi::reduce_sum_politely(world, secs.data(), all_secs.data(), chains, 0);
  std::string mine;
  for (const auto& [key, t] : kernel.item_timings()) {
    char line[96];
    std::snprintf(line, sizeof line, "%d %d %lld %.9g\n", key.first, key.second, static_cast<long long>(t.items),
                  t.seconds);
    mine += line;
  }
  const std::string timings = gather_text(world, mine);
  std::vector<std::string> violations;
  if (world.rank() != 0) return violations;
  std::map<std::pair<int, int>, ItemTiming> per_size;  // (chain, size), summed over the leaders that worked it
  std::istringstream in(timings);
  int chain = 0, size = 0;
  long long items = 0;
  double seconds = 0;
  while (in >> chain >> size >> items >> seconds) {
    ItemTiming& t = per_size[{chain, size}];
    t.items += items;
    t.seconds += seconds;
  }
  for (int c = 0; c < chains; ++c) {
    ChainOutcome& o = outcomes[static_cast<std::size_t>(c)];
    const int64_t* v = &all_ints[static_cast<std::size_t>(kInts * c)];
    o.energy_q32 = v[1];
    o.accepted = v[2];
    o.moves = v[3];
    o.merges = v[4];
    o.state_bytes = v[5];
    o.state_s = all_secs[static_cast<std::size_t>(c)];
    o.matches = v[0] == 1 && o.energy_q32 == o.ref_energy_q32 && o.accepted == o.ref_accepted;
    for (const auto& [key, t] : per_size) {
      if (key.first != c || t.items == 0) continue;
      if (!o.s_per_item.empty()) o.s_per_item += ' ';
      o.s_per_item += std::to_string(key.second) + ":" + csv::number(t.seconds / static_cast<double>(t.items));
    }
    if (v[0] != 1) {
      violations.push_back("chain " + std::to_string(c) + ": final state recorded " + std::to_string(v[0]) +
                           " times (expected once)");
    } else if (!o.matches) {
      violations.push_back("chain " + std::to_string(c) + ": energy " + std::to_string(o.energy_q32) +
                           " q32, accepted " + std::to_string(o.accepted) + "; the single-rank reference has " +
                           std::to_string(o.ref_energy_q32) + " q32, accepted " + std::to_string(o.ref_accepted));
    }
    if (violations.size() > 8) break;
  }
  return violations;
}

/// Collective: the run's invariants, as violations (rank 0 gets them all): every rank finished, every
/// communicator freed, no control message left unreceived, and each item of each chain worked exactly once
/// (counts and index sums over all ranks against the workload). The counts travel as each rank's entries for the
/// chains it led, gathered to rank 0 (gather_text), so no rank but 0 holds a table over all chains.
std::vector<std::string> check_invariants(const Kernel& kernel, const mpi::Comm& world) {
  std::array<int64_t, 3> local_bad = {kernel.finished() ? 0 : 1, kernel.comms_created() - kernel.comms_freed(),
                                      control_message_pending(kernel) ? 1 : 0};
  std::array<int64_t, 3> bad{};
  mpi::reduce_sum_politely(world, local_bad.data(), bad.data(), 3, 0);
  std::string mine;
  for (const ChainCount& c : kernel.counted()) {
    mine += std::to_string(c.chain) + ' ' + std::to_string(c.items) + ' ' + std::to_string(c.index_sum) + '\n';
  }
  const std::string all = gather_text(world, mine);
  std::vector<std::string> violations;
  if (world.rank() != 0) return violations;
  if (bad[0] != 0) violations.push_back(std::to_string(bad[0]) + " rank(s) did not finish");
  if (bad[1] != 0) violations.push_back(std::to_string(bad[1]) + " communicator(s) not freed");
  if (bad[2] != 0) violations.push_back(std::to_string(bad[2]) + " rank(s) with unreceived control messages");
  const auto chains = static_cast<std::size_t>(kernel.chain_count());
  std::vector<int64_t> counted(chains, 0), sums(chains, 0);
  std::istringstream in(all);
  long long chain = 0, items = 0, index_sum = 0;
  while (in >> chain >> items >> index_sum) {
    if (chain < 0 || static_cast<std::size_t>(chain) >= chains) {
      violations.push_back(std::to_string(items) + " items counted for chain " + std::to_string(chain) + " of " +
                           std::to_string(chains));
      continue;
    }
    counted[static_cast<std::size_t>(chain)] += items;
    sums[static_cast<std::size_t>(chain)] += index_sum;
  }
  for (std::size_t c = 0; c < chains; ++c) {
    const int64_t n = kernel.chain_length(static_cast<int>(c));
    const int64_t expected_sum = n * (n - 1) / 2;
    if (counted[c] != n || sums[c] != expected_sum) {
      violations.push_back("chain " + std::to_string(c) + ": " + std::to_string(counted[c]) + " of " +
                           std::to_string(n) + " items processed (index sum " + std::to_string(sums[c]) +
                           ", expected " + std::to_string(expected_sum) + ")");
      if (violations.size() > 8) break;
    }
  }
  return violations;
}

/// Collective: every rank's statistics, by rank, on rank 0 (empty elsewhere).
std::vector<RankStats> gather_rank_stats(const Kernel& kernel, const mpi::Comm& world) {
  const RankStats::Words mine = kernel.stats().to_words();
  // As bytes over gather_text's tree, where each rank holds only its subtree's words. Not MPI_Gather: SMPI 3.32
  // runs it as Open MPI's binomial gather, which gives every inner node of the tree a buffer for all P ranks, O(P^2)
  // bytes in the one simulated process (heaptrack: 415 MB at 4096 ranks, 16 times its 27 MB at 1024).
  const std::string all = gather_text(world, std::string(reinterpret_cast<const char*>(mine.data()), sizeof mine));
  std::vector<RankStats> ranks;
  if (world.rank() != 0) return ranks;
  if (all.size() != sizeof mine * static_cast<std::size_t>(world.size())) {
    throw std::logic_error("gather_rank_stats: " + std::to_string(all.size()) + " bytes gathered from " +
                           std::to_string(world.size()) + " ranks of " + std::to_string(sizeof mine));
  }
  for (std::size_t at = 0; at < all.size(); at += sizeof mine) {
    RankStats::Words w{};
    std::memcpy(w.data(), all.data() + at, sizeof w);
    ranks.push_back(RankStats::from_words(w));
  }
  return ranks;
}

/// The run time (MAX over ranks) and the regroup counts' summary, from every rank's statistics.
void summarise(RunResult& r) {
  double sum = 0, sum_sq = 0;
  r.regroups_min = INT64_MAX;
  r.regroups_max = 0;
  for (const RankStats& rs : r.ranks) {
    r.time_s = std::max(r.time_s, rs.elapsed_s);
    sum += static_cast<double>(rs.regroups);
    sum_sq += static_cast<double>(rs.regroups) * static_cast<double>(rs.regroups);
    r.regroups_min = std::min(r.regroups_min, rs.regroups);
    r.regroups_max = std::max(r.regroups_max, rs.regroups);
  }
  const auto n = static_cast<double>(r.ranks.size());
  double migrated = 0;
  for (const RankStats& rs : r.ranks) migrated += static_cast<double>(rs.chains_migrated);
  r.migrated_avg = migrated / n;
  r.regroups_avg = sum / n;
  r.regroups_std = std::sqrt(std::max(0.0, sum_sq / n - r.regroups_avg * r.regroups_avg));
}

}  // namespace

/// Host seconds between progress lines of a simulated run: MCMCLB_PROGRESS_S (a number > 0; 0 turns them off),
/// else 30.
double progress_every_s() {
  const char* text = std::getenv("MCMCLB_PROGRESS_S");
  if (text == nullptr || *text == '\0') return 30;
  char* end = nullptr;
  const double s = std::strtod(text, &end);
  if (*end != '\0' || !std::isfinite(s) || s < 0) {
    throw InputError(std::string("MCMCLB_PROGRESS_S: '") + text + "' is not a number of seconds >= 0 (0: no progress)");
  }
  return s;
}

RunResult run_once(const RunSpec& spec) {
  const mpi::Comm world = mpi::Comm::world();
  const int nprocs = world.size();
  RunResult r;
  r.spec = spec;
  r.provenance = collect_provenance(mpi::library_version(), nprocs);
  add_backend_provenance(r.provenance, mpi::backend_name());
  // The hostfile placed the ranks and the study only says how it should have: the sweep makes both agree, and a run
  // started another way must not record a placement it did not have. Real MPI places ranks as its site does.
  const std::string placed = mpi::kSimulated ? r.provenance.placement : "block";
  if (placed != to_string(spec.placement)) {
    throw InputError("key placement: " + std::string(to_string(spec.placement)) + ", but the ranks were placed " +
                     placed + " (allowed here: " + placed +
                     "; `groups` and `scatter` need mcmclb sweep --launcher smpi)");
  }
  // How busy other programs kept the host just before the run, whose host cost (add_host_usage) they inflate. In
  // simulation only: every simulated rank is in this process, asleep while rank 0 measures, where on real MPI the
  // other ranks would spin and count as load. 0.1 s of host time before and after each run, no simulated time.
  constexpr std::chrono::milliseconds busy_window{100};
  if constexpr (mpi::kSimulated) {
    if (world.rank() == 0) r.provenance.host_busy_before_pct = host_busy_pct(busy_window);
  }
  // Collective, once per process: every rank runs every run, so the first run asks on all ranks at once; the
  // nodes' ranks and cores do not change between the runs of one launch.
  static const mpi::NodeOccupancy occupancy = mpi::node_occupancy(world);
  r.occupancy = occupancy;
  r.provenance.ranks_per_node = occupancy.ranks_on_node;
  r.provenance.cores_available = occupancy.cores_available;
  r.provenance.oversubscribed = !occupancy.known() ? "" : occupancy.oversubscribed() ? "true" : "false";
  r.provenance.nodes = occupancy.nodes;
  r.provenance.node_layout = occupancy.layout;
  if (occupancy.core_share > 0) {
    char share[16];
    std::snprintf(share, sizeof share, "%.3f", occupancy.core_share);
    r.provenance.core_share = share;
  }
  // The whole run, its checks included, waits as the key work.wait says or, by default, as the machine suggests
  // (spin unless some node holds more ranks than cores).
  std::optional<mpi::ScopedWaitPolicy> waiting;
  if constexpr (mpi::kSimulated) {
    r.provenance.wait_policy = "blocking";
  } else {
    const WaitPolicy policy = spec.work.wait ? *spec.work.wait : mpi::machine_wait_policy(occupancy);
    waiting.emplace(policy);
    r.provenance.wait_policy = std::string(to_string(policy));
  }
  r.run_id = make_run_id(spec, world);
  std::vector<int> sizes = initial_group_sizes(spec, world);
  const int W = spec.workload.chains_per_group;
  if (int64_t{nprocs} * W > kMaxInt) {
    throw InputError("key chains_per_group: " + std::to_string(W) + " chains on each of up to " +
                     std::to_string(nprocs) + " groups is more chains than an int indexes");
  }
  const bool computing = spec.work.mode == WorkMode::compute;
  std::vector<ChainOutcome> outcomes;
  if (computing) {
    std::vector<int> leaders;
    for (int first = 0; const int size : sizes) {
      leaders.push_back(first);
      first += size;
    }
    outcomes = reference_chains(spec, chain_items(*make_workload(spec.workload), leaders, W), world);
    std::vector<double> chain_s;
    for (const auto& o : outcomes) chain_s.push_back(o.ref_cpu_s);
    reference_times(chain_s, sizes, W, nprocs, r);  // meaningful on rank 0, which writes them
  } else if (const std::string note = emulated_reference_times(spec, sizes, nprocs, r);
             !note.empty() && world.rank() == 0) {
    std::printf("note: %s\n", note.c_str());
  }

  const BalancerInfo& info = balancer_info(spec.balancer);
  // The kernel keeps the sizes compactly; this frame keeps nothing per group or chain while the run goes on.
  Kernel kernel(spec, std::move(sizes), spec.method.empty() ? std::string(info.initial_method) : spec.method);
  const auto balancer = make_balancer(spec);
  kernel.form_initial_groups(info.regroups);
  kernel.report_progress(progress_every_s(), r.ideal_s, r.baseline_s);
  // A recording needs the model too, for its speed-ups at the sizes a chain never worked: timed as pays times it
  // (four times the reductions a pass that only plans takes), since a trace's speed-ups outlive the run.
  kernel.start(spec.finished == FinishedRule::pays || spec.work.compute.record ? Kernel::CalibrationPass::to_price
               : computing && info.plans_ahead                                 ? Kernel::CalibrationPass::to_plan
                                                                               : Kernel::CalibrationPass::none);
  balancer->run(kernel);
  mpi::barrier_politely(world, mpi::setup_patience);  // everyone has finished; what follows is checking

  std::vector<std::string> violations = check_invariants(kernel, world);
  if (computing) {
    const auto wrong = check_chains(kernel, outcomes, world);
    violations.insert(violations.end(), wrong.begin(), wrong.end());
    r.chains = std::move(outcomes);
    if (spec.work.compute.trace) r.trace = gather_trace(kernel, world);
    if (spec.work.compute.record) r.costs = gather_costs(kernel, spec, r.run_id, world);
  }
  r.ranks = gather_rank_stats(kernel, world);
  if (kernel.merge_model().calibrated()) {
    // Its cost is the slowest rank's, as a run's time is; the table is the same on every rank.
    const double mine = kernel.calibration_s();
    double slowest = 0;
    mpi::reduce_politely(world, &mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0);
    r.calibration_s = slowest;
    r.calibration = kernel.merge_model().calibration();
  }
  std::string my_events;
  for (const auto& e : kernel.events()) my_events += event_line(r.run_id, e);
  r.event_lines = gather_text(world, my_events);
  if (world.rank() == 0) {
    add_host_usage(r.provenance);  // the launch's host cost so far; in simulation, of every simulated rank
    if constexpr (mpi::kSimulated) r.provenance.host_busy_after_pct = host_busy_pct(busy_window);
    r.valid = violations.empty();
    r.violations = join(violations, "; ");
    summarise(r);
  }
  // Everyone learns the verdict and the run time (the CLI's exit code and progress line).
  std::array<double, 2> verdict = {r.valid ? 1.0 : 0.0, r.time_s};
  mpi::bcast_politely(world, verdict.data(), 2, MPI_DOUBLE, 0);
  r.valid = verdict[0] != 0.0;
  r.time_s = verdict[1];
  return r;
}

namespace {

/// The run under another id: every row that names it. Its events.csv lines each begin with the id's field (their
/// other fields are numbers and names, never a quoted line break), so a line-by-line swap is exact.
RunResult renamed(const RunResult& r, const std::string& id) {
  RunResult out = r;
  out.run_id = id;
  std::string was = csv::line({r.run_id});
  was.back() = ',';
  std::string now = csv::line({id});
  now.back() = ',';
  out.event_lines.clear();
  for (std::size_t at = 0; at < r.event_lines.size();) {
    const std::size_t end = std::min(r.event_lines.find('\n', at), r.event_lines.size() - 1) + 1;
    const std::string_view line(r.event_lines.data() + at, end - at);
    if (line.substr(0, was.size()) == was) {
      out.event_lines += now;
      out.event_lines += line.substr(was.size());
    } else {
      out.event_lines += line;
    }
    at = end;
  }
  for (csv::Row& row : out.costs) {
    if (!row.empty() && row[0] == r.run_id) row[0] = id;
  }
  return out;
}

}  // namespace

bool record_result(results::ResultStore& store, const RunResult& r, results::ResultStore::IfDone if_done) {
  // An id already in the folder (a copied or merged folder, or two salts alike) is refused by the store under its
  // lock; the run is then recorded under a fresh salt's id, so it is kept and never joined to the other run.
  constexpr int kTries = 3;
  std::optional<RunResult> again;
  for (int attempt = 1;; ++attempt) {
    const RunResult& run = again ? *again : r;
    try {
      return record_run(store, run, run.ranks, run.event_lines, run.chains, run.trace, run.calibration, run.costs,
                        if_done);
    } catch (const results::DuplicateRunId& e) {
      if (attempt == kTries) throw;
      std::fprintf(stderr, "mcmclb: %s; recording the run under a new run_id\n", e.what());
      again = renamed(r, RunIds().next(r.spec.experiment));
    }
  }
}

}  // namespace mcmclb
