// Name lookups of the run catalog (mcmclb/run_spec.hpp).
#include "mcmclb/run_spec.hpp"

#include <algorithm>

#include "mcmclb/input_error.hpp"

namespace mcmclb {

const BalancerInfo& Catalog::balancer(std::string_view name) const {
  for (const auto& info : balancers) {
    if (info.name == name) return info;
  }
  std::vector<std::string_view> names;
  for (const auto& info : balancers) names.push_back(info.name);
  throw_unknown_name("balancer", "balancer", name, names);
}

void Catalog::check_method(const std::string& name) const {
  if (std::find(methods.begin(), methods.end(), name) == methods.end()) {
    throw_unknown_name("method", "method", name, {methods.begin(), methods.end()});
  }
  for (const auto& [method, why] : unsupported) {
    if (method == name) throw InputError("key method: " + name + " is not supported by " + why);
  }
}

}  // namespace mcmclb
