// SPDX-License-Identifier: BSD-3-Clause
// Chains for the checkpoint tests (tests/test_checkpoint.py): doubles summed exactly over the group, an early end
// (done) for some chains, items of a few milliseconds so that a kill lands mid-run. Every rank writes its pid where
// the test can kill it; rank 0 writes every chain's answer as hex. After the run, the program checks that no chain
// a checkpoint held as finished was started or worked, and that no resumed chain worked an item before its
// checkpoint's: else it exits 1. A run whose checkpoints the folder lacks at its end, or whose trace could not be
// written whole (Report::output_lost), writes its answers, then exits 4, as a job that must notice does. --seed S
// changes every chain's answer and is the run's Options::parameters ("seed S"). --spread 1 runs chains whose state
// stays spread over the group (SpreadChains): integers split by rows over the members, no member holding them all.
// Usage: mpiexec -n P checkpoint_chains --out F [--pids DIR] [--item-ms T] [--chains N] [--seed S] [--spread 1] plus
// the library's flags
// (--mcmclb-balancer B, --mcmclb-checkpoint DIR and the others); checkpoint_chains --balancers lists the balancers.
#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "mcmclb/exact_sum.hpp"
#include "mcmclb/input_error.hpp"
#include "mcmclb/walkers.hpp"

namespace {

uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

struct State {
  int64_t next = 0;
  double x = 0;
};

/// What a rank did to each chain: how often it started it, and the first item it worked.
struct Tally {
  std::map<int, int64_t> started, worked;
  void work(int c, int64_t item) { worked[c] = std::min(worked.count(c) != 0 ? worked[c] : item, item); }
  [[nodiscard]] std::vector<int64_t> started_by_chain(int count) const {
    std::vector<int64_t> out(static_cast<std::size_t>(count), 0);
    for (const auto& [c, n] : started) out[static_cast<std::size_t>(c)] = n;
    return out;
  }
  [[nodiscard]] std::vector<int64_t> first_worked(int count) const {
    std::vector<int64_t> out(static_cast<std::size_t>(count), INT64_MAX);
    for (const auto& [c, i] : worked) out[static_cast<std::size_t>(c)] = i;
    return out;
  }
};

class Chains final : public mcmclb::walkers::Chains {
 public:
  Chains(int count, double item_s, uint64_t seed) : count_(count), item_s_(item_s), seed_(seed) {}
  [[nodiscard]] int count() const override { return count_; }
  [[nodiscard]] int64_t items(int c) const override { return 6 + (c * 7) % 13; }
  [[nodiscard]] bool done(int c, int64_t item) const override {
    // Chains 2 and 5 end once their value passes a mark, from the state every member holds alike.
    return (c == 2 || c == 5) && item >= 3 && held_.at(c).x > 0;
  }
  void start(int c, mcmclb::GroupComm&) override {
    held_[c] = {0, 1.0 / (c + 1)};
    ++tally.started[c];
  }
  void work(int c, int64_t item, mcmclb::GroupComm& group) override {
    State& s = held_.at(c);
    if (s.next != item) throw std::logic_error("item " + std::to_string(item) + " before " + std::to_string(s.next));
    tally.work(c, item);
    mcmclb::ExactSum part;
    for (int t = group.rank(); t < 64; t += group.size()) {
      const uint64_t h = mix(seed_ ^ (static_cast<uint64_t>(c) * 1000003 + static_cast<uint64_t>(item) * 64 + t));
      part.add(std::ldexp(static_cast<double>(h >> 11) * 0x1.0p-53 - 0.5, static_cast<int>(h % 60) - 30) * s.x);
    }
    s.x += group.allreduce(part, mcmclb::ops::exact_sum).value();
    ++s.next;
    if (item_s_ > 0) std::this_thread::sleep_for(std::chrono::duration<double>(item_s_));
  }
  [[nodiscard]] std::vector<std::byte> result(int c) const override { return mcmclb::walkers::bytes_of(held_.at(c).x); }
  [[nodiscard]] std::vector<std::byte> save(int c) const override { return mcmclb::walkers::bytes_of(held_.at(c)); }
  void restore(int c, std::span<const std::byte> state) override {
    held_[c] = mcmclb::walkers::result_as<State>(state);
  }
  Tally tally;

 private:
  int count_;
  double item_s_;
  uint64_t seed_;
  std::map<int, State> held_;
};

/// A lattice of kRows integers split by rows over the group: member r of n holds rows [r*R/n, (r+1)*R/n). Each item
/// updates every row from its own value and the lattice's total, which the group sums exactly (integers); so every
/// row depends on every other, and a piece restored on the wrong member or rows lost show in the answer.
class SpreadChains final : public mcmclb::walkers::SpreadChains {
 public:
  static constexpr int64_t kRows = 24;
  static constexpr uint64_t kModulus = uint64_t{1} << 40;  // keeps the group's sum of rows far from overflow
  SpreadChains(int count, double item_s, uint64_t seed) : count_(count), item_s_(item_s), seed_(seed) {}
  [[nodiscard]] int count() const override { return count_; }
  [[nodiscard]] int64_t items(int c) const override { return 6 + (c * 7) % 13; }
  [[nodiscard]] bool done(int c, int64_t item) const override {
    return (c == 2 || c == 5) && item >= 3 && held_.at(c).total % 3 == 0;  // from the total every member holds
  }
  void start(int c, mcmclb::GroupComm& group) override {
    Piece& p = held_[c] = rows_of(group);
    for (int64_t row = p.first; row < p.first + static_cast<int64_t>(p.rows.size()); ++row) {
      const uint64_t h = mix(seed_ ^ static_cast<uint64_t>(c * 100 + row));
      p.rows[static_cast<std::size_t>(row - p.first)] = static_cast<int64_t>(h % kModulus);
    }
    p.total = group.allreduce(sum(p), mcmclb::ops::sum);
    ++tally.started[c];
  }
  void work(int c, int64_t item, mcmclb::GroupComm& group) override {
    Piece& p = held_.at(c);
    if (p.next != item) throw std::logic_error("item " + std::to_string(item) + " before " + std::to_string(p.next));
    tally.work(c, item);
    for (std::size_t i = 0; i < p.rows.size(); ++i) {
      const auto row = static_cast<uint64_t>(p.first) + i;
      const uint64_t h = mix(seed_ ^ (static_cast<uint64_t>(c) * 1000003 + static_cast<uint64_t>(item) * 64 + row));
      p.rows[i] =
          static_cast<int64_t>((static_cast<uint64_t>(p.rows[i]) * 5 + static_cast<uint64_t>(p.total) + h) % kModulus);
    }
    p.total = group.allreduce(sum(p), mcmclb::ops::sum);
    ++p.next;
    if (item_s_ > 0) std::this_thread::sleep_for(std::chrono::duration<double>(item_s_));
  }
  void finish(int c, mcmclb::GroupComm& group) override {
    // Every row, in order, on member 0: the chain's answer.
    const std::vector<int64_t> all = group.gatherv(held_.at(c).rows, 0);
    if (group.rank() != 0) return;
    uint64_t h = static_cast<uint64_t>(held_.at(c).total);
    for (const int64_t v : all) h = mix(h ^ static_cast<uint64_t>(v));
    answers_[c] = static_cast<int64_t>(all.size()) == kRows ? h : 0;
  }
  [[nodiscard]] std::vector<std::byte> result(int c) const override {
    return mcmclb::walkers::bytes_of(answers_.at(c));
  }
  [[nodiscard]] std::vector<std::byte> save_piece(int c) const override {
    const Piece& p = held_.at(c);
    std::vector<int64_t> words = {p.next, p.total, p.first};
    words.insert(words.end(), p.rows.begin(), p.rows.end());
    const auto* b = reinterpret_cast<const std::byte*>(words.data());
    return {b, b + words.size() * sizeof(int64_t)};
  }
  void restore_piece(int c, std::span<const std::span<const std::byte>> pieces, mcmclb::GroupComm& group) override {
    // The saving group's pieces, whatever its size, back to one lattice; then this member's rows of it.
    std::vector<int64_t> lattice;
    int64_t next = -1, total = 0;
    for (const std::span<const std::byte> piece : pieces) {
      std::vector<int64_t> words(piece.size() / sizeof(int64_t));
      if (piece.size() % sizeof(int64_t) != 0 || words.size() < 3) throw std::runtime_error("a torn piece");
      std::memcpy(words.data(), piece.data(), piece.size());
      if (words[2] != static_cast<int64_t>(lattice.size()) || (next >= 0 && (words[0] != next || words[1] != total))) {
        throw std::runtime_error("pieces out of order or of different items");
      }
      next = words[0];
      total = words[1];
      lattice.insert(lattice.end(), words.begin() + 3, words.end());
    }
    if (static_cast<int64_t>(lattice.size()) != kRows) throw std::runtime_error("pieces missing rows");
    Piece& p = held_[c] = rows_of(group);
    p.next = next;
    p.total = total;
    std::copy_n(lattice.begin() + p.first, p.rows.size(), p.rows.begin());
    ++restored_;
  }
  Tally tally;
  int64_t restored_ = 0;

 private:
  struct Piece {
    int64_t next = 0, total = 0, first = 0;
    std::vector<int64_t> rows;
  };
  /// This member's rows, zero, before item 0.
  static Piece rows_of(const mcmclb::GroupComm& group) {
    Piece p;
    p.first = kRows * group.rank() / group.size();
    p.rows.assign(static_cast<std::size_t>(kRows * (group.rank() + 1) / group.size() - p.first), 0);
    return p;
  }
  static int64_t sum(const Piece& p) {
    int64_t s = 0;
    for (const int64_t v : p.rows) s += v;
    return s;
  }
  int count_;
  double item_s_;
  uint64_t seed_;
  std::map<int, Piece> held_;
  std::map<int, uint64_t> answers_;
};

int body(int argc, char** argv) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  mcmclb::walkers::Options options = mcmclb::walkers::options_from_args(argc, argv);
  std::string out, pids;
  double item_ms = 0;
  int count = 9;
  uint64_t seed = 0;
  bool spread = false;
  if (argc == 2 && std::string(argv[1]) == "--balancers") {
    for (const std::string& name : mcmclb::walkers::balancer_names()) {
      if (rank == 0) std::printf("%s\n", name.c_str());
    }
    return 0;
  }
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--out") {
      out = value;
    } else if (flag == "--pids") {
      pids = value;
    } else if (flag == "--chains") {
      count = std::stoi(value);
    } else if (flag == "--seed") {
      seed = std::stoull(value);
      options.parameters = "seed " + value;
    } else if (flag == "--spread") {
      spread = value == "1";
    } else if (flag == "--item-ms") {
      item_ms = std::stod(value);
    } else {
      throw mcmclb::InputError(flag + ": unknown flag");
    }
  }
  if (!pids.empty()) std::ofstream(pids + "/" + std::to_string(rank)) << ::getpid() << "\n";
  options.results = mcmclb::walkers::Results::root;
  options.wait = "polite";
  Chains whole(count, item_ms / 1000, seed);
  SpreadChains pieces(count, item_ms / 1000, seed);
  mcmclb::walkers::Chains& chains = spread ? static_cast<mcmclb::walkers::Chains&>(pieces) : whole;
  const Tally& tally = spread ? pieces.tally : whole.tally;
  const mcmclb::walkers::Report report = mcmclb::walkers::run(MPI_COMM_WORLD, chains, options);
  // How often a member took its piece of a spread state from pieces (merges, resumes), over the ranks.
  int64_t restored = pieces.restored_;
  MPI_Allreduce(MPI_IN_PLACE, &restored, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  if (spread && rank == 0) std::printf("pieces restored: %lld\n", static_cast<long long>(restored));
  // What a checkpoint held must not be worked again: summed over the ranks.
  const std::size_t n = static_cast<std::size_t>(chains.count());
  std::vector<int64_t> started = tally.started_by_chain(count), first = tally.first_worked(count);
  MPI_Allreduce(MPI_IN_PLACE, started.data(), static_cast<int>(n), MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, first.data(), static_cast<int>(n), MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD);
  int bad = 0;
  for (std::size_t c = 0; c < n && rank == 0; ++c) {
    const int64_t at = report.resumed_at.empty() ? 0 : report.resumed_at[c];
    if (at < 0 && (started[c] != 0 || first[c] != INT64_MAX)) {
      std::fprintf(stderr, "chain %zu: finished before, yet worked again\n", c);
      bad = 1;
    }
    if (at > 0 && (started[c] != 0 || first[c] < at)) {
      std::fprintf(stderr, "chain %zu: resumed at %lld, yet started or worked before it\n", c,
                   static_cast<long long>(at));
      bad = 1;
    }
  }
  if (rank == 0) {
    std::ofstream answers(out);
    for (std::size_t c = 0; c < n; ++c) {
      for (const std::byte b : report.results[c]) {
        char hex[3];
        std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned>(b));
        answers << hex;
      }
      answers << " " << report.chain_items[c] << " " << (report.resumed_at.empty() ? 0 : report.resumed_at[c]) << "\n";
    }
    if (!report.valid) {
      std::fprintf(stderr, "invalid run: %s\n", report.violations.c_str());
      bad = 1;
    }
  }
  MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (bad == 0 && report.output_lost()) return mcmclb::kOutputErrorExit;
  return bad;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, status = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  try {
    status = body(argc, argv);
  } catch (const mcmclb::InputError& e) {
    if (rank == 0) std::fprintf(stderr, "checkpoint_chains: %s\n", e.what());
    MPI_Finalize();
    return 2;
  }
  MPI_Finalize();
  return status;
}
