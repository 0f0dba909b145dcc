// SPDX-License-Identifier: BSD-3-Clause
// Workload `cyclic`: S = scale * (leader mod period), the paper's synthetic imbalance.
#include "mcmclb/workload.hpp"

namespace mcmclb {

namespace {
class Cyclic final : public Workload {
 public:
  explicit Cyclic(const WorkloadSpec& s) : scale_(s.integer("scale")), period_(s.integer("period")) {}
  int64_t items(int leader) const override { return scale_ * (leader % period_); }

 private:
  int64_t scale_, period_;
};
}  // namespace

WorkloadEntry cyclic_workload() {
  return {.name = "cyclic",
          .params = {{.key = "scale", .default_value = int64_t{10}, .lo = int64_t{0}, .hi = kMaxItems},
                     {.key = "period", .default_value = int64_t{32}, .lo = int64_t{1}, .hi = kMaxInt}},
          .make = [](const WorkloadSpec& s) -> std::unique_ptr<Workload> { return std::make_unique<Cyclic>(s); }};
}

}  // namespace mcmclb
