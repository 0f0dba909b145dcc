// SPDX-License-Identifier: BSD-3-Clause
// Workload `lognormal`, heavy-tailed: S = round(median * exp(sigma * z)), z standard normal (Box-Muller),
// capped at max.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "mcmclb/workload.hpp"

namespace mcmclb {

namespace {
class LogNormal final : public Workload {
 public:
  explicit LogNormal(const WorkloadSpec& s)
      : median_(s.real("median")), sigma_(s.real("sigma")), cap_(s.integer("max")) {
    seed_ = static_cast<uint64_t>(s.integer("seed"));
  }
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
  uint64_t seed_ = 0;
};
}  // namespace

WorkloadEntry lognormal_workload() {
  return {.name = "lognormal",
          .params = {{.key = "median", .default_value = 50.0, .lo = 0.0, .hi = 1e12},
                     {.key = "sigma", .default_value = 1.0, .lo = 0.0, .hi = 10.0},
                     {.key = "max", .default_value = int64_t{100}, .lo = int64_t{0}, .hi = kMaxItems},
                     seed_param()},
          .make = [](const WorkloadSpec& s) -> std::unique_ptr<Workload> { return std::make_unique<LogNormal>(s); }};
}

}  // namespace mcmclb
