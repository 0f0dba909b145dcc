// SPDX-License-Identifier: BSD-3-Clause
// Workload `uniform`: every chain has `items` items.
#include "mcmclb/workload.hpp"

namespace mcmclb {

namespace {
class Uniform final : public Workload {
 public:
  explicit Uniform(const WorkloadSpec& s) : items_(s.integer("items")) {}
  int64_t items(int) const override { return items_; }

 private:
  int64_t items_;
};
}  // namespace

WorkloadEntry uniform_workload() {
  return {.name = "uniform",
          .params = {{.key = "items", .default_value = int64_t{100}, .lo = int64_t{0}, .hi = kMaxItems}},
          .make = [](const WorkloadSpec& s) -> std::unique_ptr<Workload> { return std::make_unique<Uniform>(s); }};
}

}  // namespace mcmclb
