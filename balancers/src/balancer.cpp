// The balancer factory and run expansion (mcmclb/balancer.hpp).
#include "mcmclb/balancer.hpp"

#include <algorithm>
#include <array>

#include "mcmclb/comm_create.hpp"
#include "mcmclb/mpi.hpp"
#include "mcmclb/text.hpp"

namespace mcmclb {

namespace {
const std::array<BalancerInfo, 3> kInfos = {{
    {"none", false, false, "", {}, "split"},
    {"collective", true, true, "create", {"create", "split"}, "create"},
    {"async", false, true, "intercomm", {"intercomm", "create_group", "from_group"}, "intercomm"},
}};

}  // namespace

std::span<const BalancerInfo> balancer_infos() { return kInfos; }

const BalancerInfo& balancer_info(std::string_view name) {
  for (const auto& info : kInfos) {
    if (info.name == name) return info;
  }
  std::vector<std::string_view> names;
  for (const auto& info : kInfos) names.push_back(info.name);
  throw mpi::InputError("key balancer: unknown balancer '" + std::string(name) + "' (allowed: " + join(names) + ")");
}

std::unique_ptr<Balancer> make_balancer(const RunSpec& run) {
  const auto& info = balancer_info(run.balancer);
  if (info.name == "collective") return make_collective_balancer(run.interval);
  if (info.name == "async") return make_async_balancer();
  return make_none_balancer();
}

std::vector<RunSpec> expand_runs(const Experiment& e, int nprocs) {
  const auto known = comm_creator_names();
  for (const auto& m : e.methods) {
    if (std::find(known.begin(), known.end(), m) == known.end()) {
      throw mpi::InputError("key method: unknown method '" + m + "' (allowed: " + join(known) + ")");
    }
    if (m == "from_group" && !from_group_supported()) {
      throw mpi::InputError("key method: from_group is not supported by " + mpi::library_version());
    }
  }
  std::vector<RunSpec> runs;
  for (const auto& balancer : e.balancers) {
    const BalancerInfo& info = balancer_info(balancer);
    std::vector<std::string> methods;
    for (const auto& m : e.methods) {
      if (std::find(info.methods.begin(), info.methods.end(), m) != info.methods.end()) methods.push_back(m);
    }
    if (methods.empty()) methods.emplace_back(info.default_method);
    const std::vector<int> intervals = info.uses_interval ? e.intervals : std::vector<int>{0};
    for (int interval : intervals) {
      for (const auto& method : methods) {
        for (int rep = 0; rep < e.reps; ++rep) {
          RunSpec r;
          r.experiment = e.name;
          r.nprocs = nprocs;
          r.G = e.G;
          r.T_ms = e.T_ms;
          r.workload = e.workload;
          r.work = e.work;
          r.balancer = balancer;
          r.interval = interval;
          r.method = method;
          r.rep = rep;
          runs.push_back(r);
        }
      }
    }
  }
  return runs;
}

}  // namespace mcmclb
