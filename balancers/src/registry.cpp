// The balancer registry (mcmclb/balancer.hpp): adding a balancer adds one line to entries().
#include <vector>

#include "mcmclb/balancer.hpp"
#include "mcmclb/comm_create.hpp"
#include "mcmclb/mpi.hpp"

namespace mcmclb {

namespace {
/// Built once, on first use, and never changed: no mutable global state (SMPI may run ranks as threads).
const std::vector<BalancerEntry>& entries() {
  static const std::vector<BalancerEntry> all = {
      none_balancer(),
      collective_balancer(),
      async_balancer(),
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
  for (auto name : comm_creator_names()) c.methods.emplace_back(name);
  if (!from_group_supported()) c.unsupported.emplace_back("from_group", mpi::library_version());
  return c;
}

const BalancerInfo& balancer_info(std::string_view name) { return entry(name).info; }

std::unique_ptr<Balancer> make_balancer(const RunSpec& run) { return entry(run.balancer).make(run); }

}  // namespace mcmclb
