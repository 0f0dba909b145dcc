// SPDX-License-Identifier: BSD-3-Clause
// Balancer `none`: every group works its own chain; nobody regroups. Its run time is the baseline.
#include "mcmclb/balancer.hpp"
#include "protocol.hpp"

namespace mcmclb {

namespace {
class NoneBalancer final : public Balancer {
 public:
  void run(Kernel& k) override { protocol::work_alone(k); }
};
}  // namespace

BalancerEntry none_balancer() {
  return {{.name = "none",
           .uses_interval = false,
           .regroups = false,
           .default_method = "",
           .methods = {},
           .initial_method = "split"},
          [](const RunSpec&) -> std::unique_ptr<Balancer> { return std::make_unique<NoneBalancer>(); }};
}

}  // namespace mcmclb
