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

std::optional<int> group_count_of(const GroupsSpec& groups, int G, int nprocs) {
  const std::string on = " but nprocs=" + std::to_string(nprocs);
  switch (groups.by) {
    case GroupsSpec::By::G:
      if (G < 1 || nprocs % G != 0) {
        throw InputError("key G: G=" + std::to_string(G) + " does not divide nprocs=" + std::to_string(nprocs) +
                         " (walker groups must all have G ranks; or groups.count or groups.sizes)");
      }
      return nprocs / G;
    case GroupsSpec::By::sizes: {
      long long total = 0;
      for (const int s : groups.sizes) {
        if (s < 1) throw InputError("key groups.sizes: a group of size " + std::to_string(s) + " (sizes are >= 1)");
        total += s;
      }
      if (total != nprocs) {
        throw InputError("key groups.sizes: the sizes add up to " + std::to_string(total) + on +
                         " (they must cover every rank once, in order)");
      }
      return static_cast<int>(groups.sizes.size());
    }
    case GroupsSpec::By::count:
      if (groups.count < 1 || groups.count > nprocs) {
        throw InputError("key groups.count: " + std::to_string(groups.count) + " groups" + on +
                         " (allowed: 1 to nprocs groups)");
      }
      return groups.count;
    case GroupsSpec::By::node:
      break;
  }
  return std::nullopt;  // the machine's nodes decide
}

std::optional<std::vector<int>> group_sizes_of(const GroupsSpec& groups, int G, int nprocs) {
  const std::optional<int> count = group_count_of(groups, G, nprocs);
  if (!count) return std::nullopt;
  switch (groups.by) {
    case GroupsSpec::By::G:
      return std::vector<int>(static_cast<std::size_t>(*count), G);
    case GroupsSpec::By::sizes:
      return groups.sizes;
    default:
      return count_sizes(nprocs, *count);
  }
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
