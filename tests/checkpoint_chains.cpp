// SPDX-License-Identifier: BSD-3-Clause
// Chains for the checkpoint tests (tests/test_checkpoint.py): doubles summed exactly over the group, an early end
// (done) for some chains, items of a few milliseconds so that a kill lands mid-run. Every rank writes its pid where
// the test can kill it; rank 0 writes every chain's answer as hex. After the run, the program checks that no chain
// a checkpoint held as finished was started or worked, and that no resumed chain worked an item before its
// checkpoint's: else it exits 1. A run whose checkpoints the folder lacks at its end, or whose trace could not be
// written whole (Report::output_lost), writes its answers, then exits 4, as a job that must notice does. --seed S
// changes every chain's answer and is the run's Options::parameters ("seed S"). --spread 1 runs chains whose state
// stays spread over the group (SpreadChains): --rows R integers (24 by default) split by rows over the members, no
// member holding them all; rank 0 then prints each rank's heap over the run (every block counted, the library's too)
// beside the largest piece it held. --fail-at I makes chain 1 throw at its item I (the job ends, exit 3).
// Usage: mpiexec -n P checkpoint_chains --out F [--pids DIR] [--item-ms T] [--chains N] [--seed S] [--spread 1]
// [--rows R] [--fail-at I] plus the library's flags (--mcmclb-balancer B, --mcmclb-checkpoint DIR and the others);
// checkpoint_chains --balancers lists the balancers.
#include <mpi.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <map>
#include <new>
#include <span>
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

/// Every byte the program holds on the heap, the library's too (operator new is replaced below): now, at most since
/// the run began, and the largest single block. What shows whether a rank ever held a whole spread state.
struct Heap {
  std::atomic<int64_t> live{0}, peak{0}, largest{0};
  void add(int64_t n) {
    const int64_t now = live.fetch_add(n) + n;
    for (int64_t p = peak.load(); now > p && !peak.compare_exchange_weak(p, now);) {
    }
    for (int64_t l = largest.load(); n > l && !largest.compare_exchange_weak(l, n);) {
    }
  }
};
Heap g_heap;

/// A lattice of `rows` integers split by rows over the group: member r of n holds rows [r*R/n, (r+1)*R/n), each
/// row's 8 bytes in order. Each item updates every row from its own value and the lattice's total, which the group
/// sums exactly (integers); so every row depends on every other, and a piece restored on the wrong member or rows
/// lost show in the answer. A rank holds one chain's piece at a time, and the largest piece it held is kept, to
/// compare its heap with.
class SpreadChains final : public mcmclb::walkers::SpreadChains {
 public:
  static constexpr uint64_t kModulus = uint64_t{1} << 40;  // keeps the group's sum of rows far from overflow
  SpreadChains(int count, double item_s, uint64_t seed, int64_t rows, int64_t fail_at)
      : count_(count), item_s_(item_s), seed_(seed), rows_(rows), fail_at_(fail_at) {}
  [[nodiscard]] int count() const override { return count_; }
  [[nodiscard]] int64_t items(int c) const override { return 6 + (c * 7) % 13; }
  [[nodiscard]] bool done(int c, int64_t item) const override {
    return (c == 2 || c == 5) && item >= 3 && held_.at(c).total % 3 == 0;  // from the total every member holds
  }
  [[nodiscard]] Piece piece(int /*c*/, int member, int size) const override {
    return {8 * (rows_ * member / size), 8 * (rows_ * (member + 1) / size)};
  }
  void start(int c, mcmclb::GroupComm& group) override {
    held_.clear();
    State& p = held_[c];
    p.first = rows_ * group.rank() / group.size();
    p.rows.resize(static_cast<std::size_t>(8 * (rows_ * (group.rank() + 1) / group.size() - p.first)));
    for (std::size_t i = 0; i < p.count(); ++i) {
      const uint64_t h = mix(seed_ ^ static_cast<uint64_t>(c * 100 + p.first + static_cast<int64_t>(i)));
      p.set(i, static_cast<int64_t>(h % kModulus));
    }
    p.total = group.allreduce(p.sum(), mcmclb::ops::sum);
    held(p);
    ++tally.started[c];
  }
  void work(int c, int64_t item, mcmclb::GroupComm& group) override {
    State& p = held_.at(c);
    if (p.next != item) throw std::logic_error("item " + std::to_string(item) + " before " + std::to_string(p.next));
    // On member 0, which has written the chain's checkpoint before this item by then (with one due).
    if (c == 1 && item == fail_at_ && group.rank() == 0) throw std::runtime_error("failing as --fail-at asked");
    tally.work(c, item);
    for (std::size_t i = 0; i < p.count(); ++i) {
      const auto row = static_cast<uint64_t>(p.first) + i;
      const uint64_t h = mix(seed_ ^ (static_cast<uint64_t>(c) * 1000003 + static_cast<uint64_t>(item) * 64 + row));
      p.set(i, static_cast<int64_t>((static_cast<uint64_t>(p.get(i)) * 5 + static_cast<uint64_t>(p.total) + h) %
                                    kModulus));
    }
    p.total = group.allreduce(p.sum(), mcmclb::ops::sum);
    ++p.next;
    if (item_s_ > 0) std::this_thread::sleep_for(std::chrono::duration<double>(item_s_));
  }
  void finish(int c, mcmclb::GroupComm& group) override {
    // Every row with its number, summed over the group: the same at any split, and no member gathers the rows.
    const State& p = held_.at(c);
    uint64_t mine = 0;
    for (std::size_t i = 0; i < p.count(); ++i) {
      mine += mix((static_cast<uint64_t>(p.first) + i) ^ (static_cast<uint64_t>(p.get(i)) << 24));
    }
    const uint64_t all = group.allreduce(mine, mcmclb::ops::sum);
    if (group.rank() == 0) answers_[c] = mix(static_cast<uint64_t>(p.total) ^ all);
    held_.erase(c);
  }
  [[nodiscard]] std::vector<std::byte> result(int c) const override {
    return mcmclb::walkers::bytes_of(answers_.at(c));
  }
  [[nodiscard]] std::span<const std::byte> save_piece(int c) const override { return held_.at(c).rows; }
  [[nodiscard]] std::vector<std::byte> save_shared(int c) const override {
    const State& p = held_.at(c);
    return mcmclb::walkers::bytes_of(std::array<int64_t, 2>{p.next, p.total});
  }
  void restore_piece(int c, std::vector<std::byte>& piece, std::span<const std::byte> shared,
                     mcmclb::GroupComm& group) override {
    const auto both = mcmclb::walkers::result_as<std::array<int64_t, 2>>(shared);
    const Piece mine = this->piece(c, group.rank(), group.size());
    if (static_cast<int64_t>(piece.size()) != mine.end - mine.begin) throw std::runtime_error("a piece of other rows");
    // Any other chain's piece is gone (merges take a rank's last chain up once it ended), this one's after the move.
    for (auto it = held_.begin(); it != held_.end();) it = it->first == c ? std::next(it) : held_.erase(it);
    State taken;
    taken.next = both[0];
    taken.total = both[1];
    taken.first = mine.begin / 8;
    taken.rows = std::move(piece);
    held_[c] = std::move(taken);
    held(held_[c]);
    ++restored_;
  }
  Tally tally;
  int64_t restored_ = 0;
  int64_t largest_piece_ = 0;  // bytes: the largest piece this rank held

 private:
  struct State {
    int64_t next = 0, total = 0, first = 0;
    std::vector<std::byte> rows;
    [[nodiscard]] std::size_t count() const { return rows.size() / 8; }
    [[nodiscard]] int64_t get(std::size_t i) const {
      int64_t v = 0;
      std::memcpy(&v, rows.data() + 8 * i, 8);
      return v;
    }
    void set(std::size_t i, int64_t v) { std::memcpy(rows.data() + 8 * i, &v, 8); }
    [[nodiscard]] int64_t sum() const {
      int64_t s = 0;
      for (std::size_t i = 0; i < count(); ++i) s += get(i);
      return s;
    }
  };
  void held(const State& p) { largest_piece_ = std::max(largest_piece_, static_cast<int64_t>(p.rows.size())); }
  int count_;
  double item_s_;
  uint64_t seed_;
  int64_t rows_, fail_at_;
  std::map<int, State> held_;
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
  int64_t rows = 24, fail_at = -1;
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
    } else if (flag == "--rows") {
      rows = std::stoll(value);
    } else if (flag == "--fail-at") {
      fail_at = std::stoll(value);
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
  SpreadChains pieces(count, item_ms / 1000, seed, rows, fail_at);
  mcmclb::walkers::Chains& chains = spread ? static_cast<mcmclb::walkers::Chains&>(pieces) : whole;
  const Tally& tally = spread ? pieces.tally : whole.tally;
  const int64_t before = g_heap.live.load();
  g_heap.peak.store(before);
  g_heap.largest.store(0);
  const mcmclb::walkers::Report report = mcmclb::walkers::run(MPI_COMM_WORLD, chains, options);
  if (spread) {
    // Each rank's heap over the run, above what it held before, beside the largest piece it held: one line each.
    const std::array<int64_t, 3> mine{g_heap.peak.load() - before, g_heap.largest.load(), pieces.largest_piece_};
    int ranks = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    std::vector<int64_t> all(3 * static_cast<std::size_t>(ranks));
    MPI_Gather(mine.data(), 3, MPI_INT64_T, all.data(), 3, MPI_INT64_T, 0, MPI_COMM_WORLD);
    for (int r = 0; r < ranks && rank == 0; ++r) {
      std::printf("heap: rank %d peak %lld largest %lld piece %lld state %lld\n", r,
                  static_cast<long long>(all[3 * static_cast<std::size_t>(r)]),
                  static_cast<long long>(all[3 * static_cast<std::size_t>(r) + 1]),
                  static_cast<long long>(all[3 * static_cast<std::size_t>(r) + 2]), static_cast<long long>(8 * rows));
    }
  }
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

// The heap counted (Heap): each block carries its size in front, 16 bytes to keep new's alignment.
void* counted_new(std::size_t n) {
  void* p = std::malloc(n + 16);
  if (p == nullptr) throw std::bad_alloc();
  std::memcpy(p, &n, sizeof n);
  g_heap.add(static_cast<int64_t>(n));
  return static_cast<char*>(p) + 16;
}
void counted_delete(void* p) noexcept {
  if (p == nullptr) return;
  void* block = static_cast<char*>(p) - 16;
  std::size_t n = 0;
  std::memcpy(&n, block, sizeof n);
  g_heap.live.fetch_sub(static_cast<int64_t>(n));
  std::free(block);
}

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

void* operator new(std::size_t n) { return counted_new(n); }
void* operator new[](std::size_t n) { return counted_new(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return counted_new(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept { return operator new(n, t); }
void operator delete(void* p) noexcept { counted_delete(p); }
void operator delete[](void* p) noexcept { counted_delete(p); }
void operator delete(void* p, std::size_t) noexcept { counted_delete(p); }
void operator delete[](void* p, std::size_t) noexcept { counted_delete(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { counted_delete(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { counted_delete(p); }
