// SPDX-License-Identifier: BSD-3-Clause
// Workload `random`: S uniform in [min, max], drawn from a hash of (seed, leader).
#include <string>

#include "mcmclb/input_error.hpp"
#include "mcmclb/workload.hpp"

namespace mcmclb {

namespace {
class Random final : public Workload {
 public:
  explicit Random(const WorkloadSpec& s) : min_(s.integer("min")), max_(s.integer("max")) {
    seed_ = static_cast<uint64_t>(s.integer("seed"));
  }
  int64_t items(int leader) const override {
    const double u = unit_draw(seed_, static_cast<uint64_t>(leader), 0x72616e64ULL);
    return min_ + static_cast<int64_t>(u * static_cast<double>(max_ - min_ + 1));
  }

 private:
  int64_t min_, max_;
  uint64_t seed_ = 0;
};
}  // namespace

WorkloadEntry random_workload() {
  return {.name = "random",
          .params = {{.key = "min", .default_value = int64_t{0}, .lo = int64_t{0}, .hi = kMaxItems},
                     {.key = "max", .default_value = int64_t{100}, .lo = int64_t{0}, .hi = kMaxItems},
                     seed_param()},
          .make = [](const WorkloadSpec& s) -> std::unique_ptr<Workload> { return std::make_unique<Random>(s); },
          .check =
              [](const WorkloadSpec& s) {
                if (s.integer("min") > s.integer("max")) {
                  throw InputError("key workload.min: must not exceed workload.max (" +
                                   std::to_string(s.integer("min")) + " > " + std::to_string(s.integer("max")) + ")");
                }
              }};
}

}  // namespace mcmclb
