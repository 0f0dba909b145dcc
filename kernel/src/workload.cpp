// Workload models and work emulation (mcmclb/workload.hpp).
#include "mcmclb/workload.hpp"

#include <chrono>
#include <cmath>
#include <numbers>
#include <thread>

#include "mcmclb/input_error.hpp"

namespace mcmclb {

uint64_t mix64(uint64_t x) noexcept {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

double unit_draw(uint64_t a, uint64_t b, uint64_t c) noexcept {
  const uint64_t h = mix64(mix64(mix64(a) ^ b) ^ c);
  return static_cast<double>(h >> 11) * 0x1.0p-53;
}

namespace {

class Cyclic final : public Workload {
 public:
  explicit Cyclic(const WorkloadSpec& s) : scale_(s.scale), period_(s.period) {}
  std::string_view name() const noexcept override { return "cyclic"; }
  int64_t items(int leader) const override { return scale_ * (leader % period_); }

 private:
  int64_t scale_, period_;
};

class Uniform final : public Workload {
 public:
  explicit Uniform(const WorkloadSpec& s) : items_(s.items) {}
  std::string_view name() const noexcept override { return "uniform"; }
  int64_t items(int) const override { return items_; }

 private:
  int64_t items_;
};

class Random final : public Workload {
 public:
  explicit Random(const WorkloadSpec& s) : min_(s.min), max_(s.max), seed_(s.seed) {}
  std::string_view name() const noexcept override { return "random"; }
  int64_t items(int leader) const override {
    const double u = unit_draw(seed_, static_cast<uint64_t>(leader), 0x72616e64ULL);
    return min_ + static_cast<int64_t>(u * static_cast<double>(max_ - min_ + 1));
  }

 private:
  int64_t min_, max_;
  uint64_t seed_;
};

/// Heavy-tailed: S = round(median * exp(sigma * z)), z standard normal (Box-Muller), capped at max.
class LogNormal final : public Workload {
 public:
  explicit LogNormal(const WorkloadSpec& s) : median_(s.median), sigma_(s.sigma), cap_(s.max), seed_(s.seed) {}
  std::string_view name() const noexcept override { return "lognormal"; }
  int64_t items(int leader) const override {
    const double u1 = 1.0 - unit_draw(seed_, static_cast<uint64_t>(leader), 1);  // (0, 1]
    const double u2 = unit_draw(seed_, static_cast<uint64_t>(leader), 2);
    const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
    const double s = std::round(median_ * std::exp(sigma_ * z));
    return std::min<int64_t>(static_cast<int64_t>(s), cap_);
  }

 private:
  double median_, sigma_;
  int64_t cap_;
  uint64_t seed_;
};

}  // namespace

std::unique_ptr<Workload> make_workload(const WorkloadSpec& spec) {
  if (spec.model == "cyclic") return std::make_unique<Cyclic>(spec);
  if (spec.model == "uniform") return std::make_unique<Uniform>(spec);
  if (spec.model == "random") return std::make_unique<Random>(spec);
  if (spec.model == "lognormal") return std::make_unique<LogNormal>(spec);
  throw InputError("key workload.model: '" + spec.model +
                   "' is not allowed (allowed: cyclic, uniform, random, lognormal)");
}

std::vector<int64_t> chain_items(const Workload& w, int nprocs, int G) {
  std::vector<int64_t> s;
  for (int leader = 0; leader < nprocs; leader += G) s.push_back(w.items(leader));
  return s;
}

double item_cost_ms(const RunSpec& run, int group_size, int chain, int64_t item) noexcept {
  double ms = run.T_ms / group_size;
  if (run.work.jitter_pct > 0.0) {
    const double u = unit_draw(run.work.seed, static_cast<uint64_t>(chain), static_cast<uint64_t>(item));
    ms *= 1.0 + run.work.jitter_pct / 100.0 * (2.0 * u - 1.0);
  }
  return ms;
}

void emulate_work(bool spin, double ms) {
  using clock = std::chrono::steady_clock;
  const auto deadline =
      clock::now() + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double, std::milli>(ms));
  if (spin) {
    while (clock::now() < deadline) {
    }
  } else {
    std::this_thread::sleep_until(deadline);
  }
}

}  // namespace mcmclb
