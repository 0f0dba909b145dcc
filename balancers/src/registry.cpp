// SPDX-License-Identifier: BSD-3-Clause
// The balancer registry (mcmclb/balancer.hpp): the balancers listed in balancers.def.
#include <vector>

#include "mcmclb/balancer.hpp"
#include "mcmclb/comm_create.hpp"
#include "mcmclb/mpi.hpp"

namespace mcmclb {

#define MCMCLB_BALANCER(name) BalancerEntry name##_balancer();
#include "balancers.def"
#undef MCMCLB_BALANCER

namespace {
/// Built once, on first use, and never changed: no mutable global state (SMPI may run ranks as threads).
const std::vector<BalancerEntry>& entries() {
  static const std::vector<BalancerEntry> all = {
#define MCMCLB_BALANCER(name) name##_balancer(),
#include "balancers.def"
#undef MCMCLB_BALANCER
  };
  return all;
}

const BalancerEntry& entry(std::string_view name) {
  std::vector<std::string_view> names;
  for (const auto& e : entries()) {
    if (e.info.name == name) return e;
    names.push_back(e.info.name);
  }
  throw_unknown_name("balancer", "balancer", name, names);
}
}  // namespace

std::span<const BalancerEntry> balancer_entries() { return entries(); }

Catalog catalog() {
  Catalog c;
  for (const auto& e : entries()) c.balancers.push_back(e.info);
  for (const auto& m : creation_methods()) {
    c.methods.emplace_back(m.name);
    if (!m.supported) c.unsupported.emplace_back(m.name, unsupported_reason(m));
  }
  return c;
}

const BalancerInfo& balancer_info(std::string_view name) { return entry(name).info; }

std::unique_ptr<Balancer> make_balancer(const RunSpec& run) { return entry(run.balancer).make(run); }

std::string run_label(const RunSpec& spec) {
  std::string label = spec.balancer;
  if (spec.interval > 0) label.append("(").append(std::to_string(spec.interval)).append(")");
  if (!spec.method.empty()) label.append(" ").append(spec.method);
  // The finished rule is named where it is not the balancer's default, as plots/mcmclb_csv.py does.
  if (spec.finished && *spec.finished != balancer_info(spec.balancer).finished_rules.front()) {
    label.append(" ").append(to_string(*spec.finished));
  }
  return label;
}

}  // namespace mcmclb
