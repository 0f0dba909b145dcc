// SPDX-License-Identifier: BSD-3-Clause
// An MCMC application under mcmclb's balancers, written against the installed API only (mcmclb/walkers.hpp):
// independent Metropolis walkers on 2-D Ising lattices, one chain per temperature. A group of ranks works one chain
// together, each rank updating its own rows of the lattice. The README beside this file is the tutorial.
//
// Why a chain's answer does not depend on who works it: every random number is a hash of (seed, chain, sweep,
// site), never a rank's own stream; a checkerboard half-sweep updates sites whose neighbours it does not change,
// so splitting the rows over any number of ranks gives the same spins; and every sum is of integers.
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "mcmclb/input_error.hpp"
#include "mcmclb/mpi.hpp"
#include "mcmclb/walkers.hpp"

namespace {

using mcmclb::GroupComm;
using mcmclb::InputError;
using namespace std::chrono_literals;

/// splitmix64's finaliser: a well-mixed hash, the source of every random number here.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// Uniform in [0, 1) from (seed, chain, sweep, site): the same number whichever rank draws it.
double uniform(uint64_t seed, int chain, int64_t sweep, int site) {
  const uint64_t h =
      mix(mix(mix(seed ^ static_cast<uint64_t>(chain)) ^ static_cast<uint64_t>(sweep)) ^ static_cast<uint64_t>(site));
  return static_cast<double>(h >> 11) * 0x1p-53;
}

/// What one run of the application does.
struct Settings {
  int size = 64;       // L: an L x L periodic lattice, one 64-bit word per row (L <= 64)
  int chains = 8;      // one per temperature, from 1.5 to 3.5
  int base_items = 4;  // chain c has base_items * (c + 1) items: the later chains are the longer ones
  int sweeps = 100;    // Metropolis sweeps per item
  uint64_t seed = 1;
  int throw_chain = -1;     // a test of failures: this chain's item throw_item throws
  bool bad_states = false;  // and every saved state is cut short, so that restoring any fails
  int64_t throw_item = -1;
  int hang_chain = -1;  // and this chain's item hang_item never returns on the group's first rank
  int64_t hang_item = -1;
  int ordered_pct = 0;  // > 0: a chain is done once |magnetisation| reaches this percentage of the sites
  [[nodiscard]] double temperature(int chain) const { return chains == 1 ? 2.269 : 1.5 + 2.0 * chain / (chains - 1); }
};

/// One chain's state: the spins (bit set: +1) and what the chain has summed over its items so far.
struct Lattice {
  int64_t sweeps_done = 0;
  int64_t energy_sum = 0;  // the energy after each item, summed
  int64_t abs_m_sum = 0;   // |magnetisation| after each item, summed
  std::vector<uint64_t> rows;
};

/// A chain's final answer, and the items it worked (fewer than items() where it ended when done).
struct Answer {
  int64_t energy = 0, magnetisation = 0, energy_sum = 0, abs_m_sum = 0;
  int64_t items = 0;
};

class IsingChains final : public mcmclb::walkers::Chains {
 public:
  explicit IsingChains(const Settings& s) : s_(s) {}

  [[nodiscard]] int count() const override { return s_.chains; }
  [[nodiscard]] int64_t items(int chain) const override { return int64_t{s_.base_items} * (chain + 1); }

  void start(int chain, GroupComm&) override {
    Lattice& l = held_[chain];
    l = Lattice{};
    l.rows.assign(static_cast<std::size_t>(s_.size), 0);
    for (int y = 0; y < s_.size; ++y) {
      for (int x = 0; x < s_.size; ++x) {
        if (uniform(s_.seed, chain, -1, y * s_.size + x) < 0.5) l.rows[static_cast<std::size_t>(y)] |= bit(x);
      }
    }
  }

  void work(int chain, int64_t item, GroupComm& group) override {
    if (chain == s_.throw_chain && item == s_.throw_item) throw std::runtime_error("the test's failure on request");
    while (chain == s_.hang_chain && item == s_.hang_item && group.rank() == 0) std::this_thread::sleep_for(1s);
    Lattice& l = held_.at(chain);
    const double beta = 1.0 / s_.temperature(chain);
    // Boltzmann factors of the two uphill flips (dE = 4, 8): computed alike on every rank.
    const std::array<double, 2> uphill = {std::exp(-4.0 * beta), std::exp(-8.0 * beta)};
    const int g = group.size(), r = group.rank();
    const int first = s_.size * r / g, last = s_.size * (r + 1) / g;  // this rank's rows [first, last)
    std::vector<int64_t> shared(static_cast<std::size_t>(s_.size));
    for (int sweep = 0; sweep < s_.sweeps; ++sweep, ++l.sweeps_done) {
      for (int colour = 0; colour < 2; ++colour) {
        for (int y = first; y < last; ++y) update_row(l, chain, y, colour, uphill);
        if (g == 1) continue;
        // Every rank gets every row: each sends its own rows and zeros elsewhere, so the sum is the lattice.
        std::fill(shared.begin(), shared.end(), 0);
        for (int y = first; y < last; ++y) shared[static_cast<std::size_t>(y)] = static_cast<int64_t>(rowv(l, y));
        group.allreduce_sum(shared);
        for (int y = 0; y < s_.size; ++y) l.rows[static_cast<std::size_t>(y)] = static_cast<uint64_t>(shared[y]);
      }
    }
    const Answer a = measure(l);
    l.energy_sum += a.energy;
    l.abs_m_sum += std::llabs(a.magnetisation);
  }

  /// With --until-ordered: done once the lattice has ordered, |magnetisation| at least ordered_pct % of the sites
  /// after an item. Every member holds the whole lattice, so every member answers alike.
  [[nodiscard]] bool done(int chain, int64_t /*item*/) const override {
    const Lattice& l = held_.at(chain);
    if (s_.ordered_pct == 0 || l.sweeps_done == 0) return false;
    return 100 * std::llabs(measure(l).magnetisation) >= int64_t{s_.ordered_pct} * s_.size * s_.size;
  }

  void finish(int chain, GroupComm& group) override {
    if (group.rank() != 0) return;  // one member keeps the answer
    const Lattice& l = held_.at(chain);
    Answer a = measure(l);
    a.energy_sum = l.energy_sum;
    a.abs_m_sum = l.abs_m_sum;
    a.items = l.sweeps_done / s_.sweeps;
    answers_[chain] = a;
  }

  /// The chain's answer, for Report::results: the library keeps it in the chain's checkpoint, so a run resumed after
  /// the chain ended still reports it.
  [[nodiscard]] std::vector<std::byte> result(int chain) const override {
    const Lattice& l = held_.at(chain);
    Answer a = measure(l);
    a.energy_sum = l.energy_sum;
    a.abs_m_sum = l.abs_m_sum;
    a.items = l.sweeps_done / s_.sweeps;
    return mcmclb::walkers::bytes_of(a);
  }

  [[nodiscard]] std::vector<std::byte> save(int chain) const override {
    const Lattice& l = held_.at(chain);
    std::vector<int64_t> words = {s_.size, l.sweeps_done, l.energy_sum, l.abs_m_sum};
    for (const uint64_t row : l.rows) words.push_back(static_cast<int64_t>(row));
    if (s_.bad_states) words.pop_back();
    std::vector<std::byte> bytes(words.size() * sizeof(int64_t));
    std::memcpy(bytes.data(), words.data(), bytes.size());
    return bytes;
  }

  void restore(int chain, std::span<const std::byte> state) override {
    const std::size_t expected = (4 + static_cast<std::size_t>(s_.size)) * sizeof(int64_t);
    if (state.size() != expected) {
      throw std::invalid_argument("a state of " + std::to_string(state.size()) + " bytes, expected " +
                                  std::to_string(expected));
    }
    std::vector<int64_t> words(state.size() / sizeof(int64_t));
    std::memcpy(words.data(), state.data(), state.size());
    if (words[0] != s_.size) throw std::invalid_argument("a state of another lattice size");
    Lattice& l = held_[chain];
    l.sweeps_done = words[1];
    l.energy_sum = words[2];
    l.abs_m_sum = words[3];
    l.rows.assign(words.begin() + 4, words.end());
  }

  /// Collective over comm: every chain's answer on rank 0 (each was kept by exactly one rank), for the hand-written
  /// loop; under run() the answers come from Report::results.
  [[nodiscard]] std::vector<Answer> gather(MPI_Comm comm) const {
    std::vector<int64_t> mine(static_cast<std::size_t>(6 * s_.chains), 0), all(mine.size(), 0);
    for (const auto& [chain, a] : answers_) {
      int64_t* v = &mine[static_cast<std::size_t>(6 * chain)];
      v[0] += 1;
      v[1] = a.energy;
      v[2] = a.magnetisation;
      v[3] = a.energy_sum;
      v[4] = a.abs_m_sum;
      v[5] = a.items;
    }
    mcmclb::mpi::check(
        MPI_Reduce(mine.data(), all.data(), static_cast<int>(mine.size()), MPI_INT64_T, MPI_SUM, 0, comm),
        "MPI_Reduce");
    std::vector<Answer> out;
    for (int c = 0; c < s_.chains; ++c) {
      const int64_t* v = &all[static_cast<std::size_t>(6 * c)];
      if (v[0] != 1)
        out.push_back({0, 0, -1, -1, 0});  // not kept exactly once: shown as impossible sums
      else
        out.push_back({v[1], v[2], v[3], v[4], v[5]});
    }
    return out;
  }

 private:
  static uint64_t bit(int x) { return uint64_t{1} << x; }
  [[nodiscard]] uint64_t rowv(const Lattice& l, int y) const {
    return l.rows[static_cast<std::size_t>((y + s_.size) % s_.size)];
  }
  static int spin(uint64_t row, int x) { return (row >> x & 1) != 0 ? 1 : -1; }

  /// One colour's sites of row y: a Metropolis flip each, with the neighbours as they stand.
  void update_row(Lattice& l, int chain, int y, int colour, const std::array<double, 2>& uphill) const {
    const int n = s_.size;
    const uint64_t up = rowv(l, y - 1), down = rowv(l, y + 1);
    uint64_t row = rowv(l, y);
    for (int x = (y + colour) % 2; x < n; x += 2) {
      const int s = spin(row, x);
      const int sum = spin(up, x) + spin(down, x) + spin(row, (x + n - 1) % n) + spin(row, (x + 1) % n);
      const int dE = 2 * s * sum;  // -4 .. 8 in steps of 4, J = 1
      if (dE <= 0 || uniform(s_.seed, chain, l.sweeps_done, y * n + x) < uphill[static_cast<std::size_t>(dE / 4 - 1)]) {
        row ^= bit(x);
      }
    }
    l.rows[static_cast<std::size_t>(y)] = row;
  }

  /// Energy (-sum over bonds of s_i s_j) and magnetisation of the whole lattice.
  [[nodiscard]] Answer measure(const Lattice& l) const {
    Answer a;
    const int n = s_.size;
    for (int y = 0; y < n; ++y) {
      const uint64_t row = rowv(l, y), down = rowv(l, y + 1);
      for (int x = 0; x < n; ++x) {
        const int s = spin(row, x);
        a.magnetisation += s;
        a.energy -= s * (spin(row, (x + 1) % n) + spin(down, x));
      }
    }
    return a;
  }

  Settings s_;
  std::map<int, Lattice> held_;    // the chains whose state this rank holds
  std::map<int, Answer> answers_;  // the chains this rank kept the answer of
};

/// FNV-1a 64 over the answers: one number to compare between runs (the items a chain worked show in its sums).
uint64_t fingerprint(const std::vector<Answer>& answers) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (const Answer& a : answers) {
    for (const int64_t v : {a.energy, a.magnetisation, a.energy_sum, a.abs_m_sum}) {
      for (int b = 0; b < 8; ++b) h = (h ^ (static_cast<uint64_t>(v) >> (8 * b) & 0xff)) * 0x100000001b3ULL;
    }
  }
  return h;
}

int64_t integer(std::string_view flag, const char* text, int64_t lo, int64_t hi) {
  char* end = nullptr;
  const long long v = std::strtoll(text, &end, 10);
  if (*text == '\0' || *end != '\0' || v < lo || v > hi) {
    throw InputError(std::string(flag) + ": '" + text + "' is not allowed (allowed: an integer from " +
                     std::to_string(lo) + " to " + std::to_string(hi) + ")");
  }
  return v;
}

constexpr const char* kUsage =
    "usage: ising [--balancer B] [--method M] [--finished F] [--interval N] [--group-size G] [--wait W]\n"
    "             [--record FILE] [--chains C] [--items N] [--sweeps K] [--size L] [--seed S] [--plain]\n"
    "             [--plain-virtual] [--item-timeout S] [--throw-at C:I] [--hang-at C:I] [--bad-states]\n"
    "             [--until-ordered PCT] [--placement numbered|items]\n"
    "and every option of mcmclb::walkers as --mcmclb-KEY VALUE or MCMCLB_KEY:\n";

int body(int argc, char** argv) {
  mcmclb::walkers::Options options;
  options.name = "examples/ising";
  // One item's cost typed rather than measured (the library's default), so that a run plans alike on any machine:
  // the tutorial's recording under mostwork then has the speed-up rows its README shows.
  options.item_s = 0.01;
  // The chains stay where their numbers put them, so the ranks start with unequal work for the balancers to even
  // out; --placement items is the library's default, which places them by their bounds first.
  options.placement = mcmclb::walkers::Placement::as_numbered;
  // Every option also as --mcmclb-KEY VALUE or MCMCLB_KEY (the checkpoint folder among them); the tutorial's own
  // short flags below set the same options.
  options = mcmclb::walkers::options_from_args(argc, argv, options);
  Settings s;
  bool plain = false, virtual_calls = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (flag == "--bad-states") {
      s.bad_states = true;
      continue;
    }
    if (flag == "--plain" || flag == "--plain-virtual") {
      plain = true;
      virtual_calls = flag == "--plain-virtual";
      continue;
    }
    if (flag == "--help") {
      std::printf("%s%s", kUsage, mcmclb::walkers::options_help().c_str());
      return 0;
    }
    if (i + 1 >= argc) throw InputError(std::string(flag) + ": unknown flag or missing value\n" + kUsage);
    const char* value = argv[++i];
    if (flag == "--balancer")
      options.balancer = value;
    else if (flag == "--method")
      options.method = value;
    else if (flag == "--finished")
      options.finished = value;
    else if (flag == "--interval")
      options.interval = static_cast<int>(integer(flag, value, 1, 1 << 30));
    else if (flag == "--group-size")
      options.group_size = static_cast<int>(integer(flag, value, 1, 1 << 20));
    else if (flag == "--record")
      options.record = value;
    else if (flag == "--wait")
      options.wait = value;
    else if (flag == "--chains")
      s.chains = static_cast<int>(integer(flag, value, 1, 1 << 16));
    else if (flag == "--items")
      s.base_items = static_cast<int>(integer(flag, value, 0, 1 << 20));
    else if (flag == "--sweeps")
      s.sweeps = static_cast<int>(integer(flag, value, 1, 1 << 20));
    else if (flag == "--size")
      s.size = static_cast<int>(integer(flag, value, 4, 64));
    else if (flag == "--seed")
      s.seed = static_cast<uint64_t>(integer(flag, value, 0, INT64_MAX));
    else if (flag == "--until-ordered")
      s.ordered_pct = static_cast<int>(integer(flag, value, 1, 100));
    else if (flag == "--placement") {
      const std::string_view how = value;
      if (how != "numbered" && how != "items")
        throw InputError("--placement: '" + std::string(how) + "' is not allowed (allowed: numbered, items)");
      options.placement =
          how == "items" ? mcmclb::walkers::Placement::by_items : mcmclb::walkers::Placement::as_numbered;
    } else if (flag == "--item-timeout")
      options.item_timeout_s = static_cast<double>(integer(flag, value, 0, 86400));
    else if (flag == "--throw-at" || flag == "--hang-at") {
      const std::string text = value;
      const auto colon = text.find(':');
      if (colon == std::string::npos)
        throw InputError(std::string(flag) + ": '" + text + "' is not allowed (allowed: C:I)");
      const auto chain = static_cast<int>(integer(flag, text.substr(0, colon).c_str(), 0, 1 << 16));
      const int64_t item = integer(flag, text.substr(colon + 1).c_str(), 0, INT64_MAX);
      (flag == "--throw-at" ? s.throw_chain : s.hang_chain) = chain;
      (flag == "--throw-at" ? s.throw_item : s.hang_item) = item;
    } else {
      throw InputError(std::string(flag) + ": unknown flag\n" + kUsage);
    }
  }
  if (s.size % 2 != 0) throw InputError("--size: " + std::to_string(s.size) + " is odd (a checkerboard needs even L)");
  // The lattice uses a 64-bit word per row and shift by x < L, so L <= 64 holds.
  int rank = 0, nprocs = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  // What the answers depend on besides the chains' count and items: a checkpoint folder made with other values is
  // refused rather than mixed with this run's chains.
  options.parameters = "size " + std::to_string(s.size) + " sweeps " + std::to_string(s.sweeps) + " seed " +
                       std::to_string(s.seed) + " until-ordered " + std::to_string(s.ordered_pct);
  IsingChains chains(s);
  double time_s = 0;
  std::string how;
  bool output_lost = false;
  std::vector<Answer> answers;
  if (plain) {
    // The hand-written loop mcmclb's `none` replaces: rank r works chains r*W .. r*W + W - 1 alone.
    if (s.chains % nprocs != 0) throw InputError("--plain: the chains must split evenly over the ranks");
    const int per_rank = s.chains / nprocs;
    const std::unique_ptr<GroupComm> group_of_one = mcmclb::self_group();  // nothing to communicate
    GroupComm& self = *group_of_one;
    mcmclb::mpi::check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    const double t0 = MPI_Wtime();
    // With --plain-virtual the loop calls the chains as the library does, through the interface, on a group whose
    // size the compiler cannot see; plainly, it may compile the item for a group of one (docs/notes/walkers-overhead).
    mcmclb::walkers::Chains* volatile through_interface = &chains;
    GroupComm* volatile unknown_group = &self;
    for (int c = rank * per_rank; c < (rank + 1) * per_rank; ++c) {
      if (virtual_calls) {
        through_interface->start(c, *unknown_group);
        for (int64_t i = 0; i < through_interface->items(c) && !through_interface->done(c, i); ++i) {
          through_interface->work(c, i, *unknown_group);
        }
        through_interface->finish(c, *unknown_group);
        continue;
      }
      chains.start(c, self);
      for (int64_t i = 0; i < chains.items(c) && !chains.done(c, i); ++i) chains.work(c, i, self);
      chains.finish(c, self);
    }
    const double mine = MPI_Wtime() - t0;
    mcmclb::mpi::check(MPI_Allreduce(&mine, &time_s, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
    how = virtual_calls ? "a hand-written loop through the interface" : "a hand-written loop";
  } else {
    // Every chain's answer through the library, which also returns those of chains a resumed run skips.
    if (options.results == mcmclb::walkers::Results::none) options.results = mcmclb::walkers::Results::root;
    const mcmclb::walkers::Report report = mcmclb::walkers::run(MPI_COMM_WORLD, chains, options);
    if (!report.valid) throw std::runtime_error("mcmclb reports an invalid run: " + report.violations);
    time_s = report.time_s;
    output_lost = report.output_lost();
    how = "balancer " + report.balancer + (report.method.empty() ? "" : " " + report.method) +
          (report.finished.empty() ? "" : " " + report.finished);
    if (rank == 0) {
      for (const auto& bytes : report.results) answers.push_back(mcmclb::walkers::result_as<Answer>(bytes));
      std::printf("run: %s, %.3f s, %.1f regroupings per rank, %.1f chains moved per rank\n", how.c_str(), time_s,
                  report.regroups_avg, report.migrated_avg);
      if (!options.record.empty() && report.record_error.empty()) {
        std::printf("recorded %s: %lld items, %lld speed-up rows\n", options.record.c_str(),
                    static_cast<long long>(report.recorded_items), static_cast<long long>(report.recorded_speedups));
      }
      if (options.checkpoint_mtbf_s > 0) {  // each chain's checkpoint cost and the interval set from it
        for (std::size_t c = 0; c < report.checkpoint_cost_s.size(); ++c) {
          std::printf(
              "checkpoints of chain %zu: %.3g s each over %lld writes, one every %.3g s (%.3g to %.3g s at "
              "the fastest and slowest write; failures every %g s)\n",
              c, report.checkpoint_cost_s[c], static_cast<long long>(report.checkpoint_writes[c]),
              report.checkpoint_interval_s[c], report.checkpoint_interval_low_s[c],
              report.checkpoint_interval_high_s[c], options.checkpoint_mtbf_s);
        }
      }
    }
  }
  if (plain) answers = chains.gather(MPI_COMM_WORLD);
  // The answers are whole either way, but a job whose checkpoints the folder lacks, or whose trace a full disk cut
  // short, ends non-zero, so that a job script notices before it trusts them (the library's line says what is lost).
  const int status = output_lost ? mcmclb::kOutputErrorExit : 0;
  if (rank != 0) return status;
  if (plain) std::printf("run: %s, %.3f s\n", how.c_str(), time_s);
  std::printf("chain temperature items energy magnetisation mean_energy mean_abs_m\n");
  for (int c = 0; c < s.chains; ++c) {
    const Answer& a = answers[static_cast<std::size_t>(c)];
    const auto n = static_cast<double>(std::max<int64_t>(a.items, 1));
    std::printf("%d %.3f %lld %lld %lld %.1f %.1f\n", c, s.temperature(c), static_cast<long long>(a.items),
                static_cast<long long>(a.energy), static_cast<long long>(a.magnetisation),
                static_cast<double>(a.energy_sum) / n, static_cast<double>(a.abs_m_sum) / n);
  }
  std::printf("answers %016llx\n", static_cast<unsigned long long>(fingerprint(answers)));
  return status;
}

}  // namespace

int main(int argc, char** argv) { return mcmclb::mpi::run_main(argc, argv, body); }
