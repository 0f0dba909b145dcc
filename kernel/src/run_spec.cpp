// SPDX-License-Identifier: BSD-3-Clause
// Name lookups of the run catalog (mcmclb/run_spec.hpp).
#include "mcmclb/run_spec.hpp"

#include <algorithm>

#include "mcmclb/input_error.hpp"

namespace mcmclb {

std::string GroupsSpec::text() const {
  switch (by) {
    case By::G:
      return "";
    case By::sizes: {
      std::string t = "sizes:";
      for (std::size_t i = 0; i < sizes.size(); ++i) t += (i ? "," : "") + std::to_string(sizes[i]);
      return t;
    }
    case By::node:
      return node_size > 0 ? "node:" + std::to_string(node_size) : "node";
    case By::count:
      return "count:" + std::to_string(count);
  }
  return "";
}

std::vector<int> count_sizes(int nprocs, int count) {
  std::vector<int> sizes(static_cast<std::size_t>(count), nprocs / count);
  for (int g = 0; g < nprocs % count; ++g) ++sizes[static_cast<std::size_t>(g)];
  return sizes;
}

const BalancerInfo& Catalog::balancer(std::string_view name) const {
  for (const auto& info : balancers) {
    if (info.name == name) return info;
  }
  std::vector<std::string_view> names;
  for (const auto& info : balancers) names.push_back(info.name);
  throw_unknown_name("balancer", "balancer", name, names);
}

void Catalog::check_method(const std::string& name, std::string_view key) const {
  if (std::find(methods.begin(), methods.end(), name) == methods.end()) {
    throw_unknown_name(key, "method", name, {methods.begin(), methods.end()});
  }
  for (const auto& [method, why] : unsupported) {
    if (method == name) {
      throw InputError("key " + std::string(key) + ": " + name + " is not supported by this build: " + why);
    }
  }
}

std::vector<std::string> Catalog::supported_methods() const {
  std::vector<std::string> supported;
  for (const auto& m : methods) {
    if (std::none_of(unsupported.begin(), unsupported.end(), [&](const auto& u) { return u.first == m; })) {
      supported.push_back(m);
    }
  }
  return supported;
}

}  // namespace mcmclb
