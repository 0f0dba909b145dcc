// Load balancers for the walker-group kernel, chosen by name: none, collective (interval i), async.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "mcmclb/config.hpp"
#include "mcmclb/kernel.hpp"

namespace mcmclb {

struct BalancerInfo {
  std::string_view name;
  bool uses_interval;                     // collective: regroup every `interval` items
  bool regroups;                          // counts the initial formation as a regroup (README)
  std::string_view default_method;        // "" for none
  std::vector<std::string_view> methods;  // creation methods it can regroup with
  std::string_view initial_method;        // forms the initial groups when the run names no method
};

/// Drives the kernel from the synchronised start until this rank has nothing left to do (Kernel::finish()).
class Balancer {
 public:
  virtual ~Balancer() = default;
  virtual void run(Kernel& kernel) = 0;
};

std::span<const BalancerInfo> balancer_infos();
/// Throws mpi::InputError (key balancer) for an unknown name, listing the known ones.
const BalancerInfo& balancer_info(std::string_view name);
std::unique_ptr<Balancer> make_balancer(const RunSpec& run);

/// The runs an experiment iterates, in order: balancer, interval (collective only), method (those of the
/// experiment's methods the balancer can use; its default if none is named), rep. Validates balancer and method
/// names (mpi::InputError naming the key).
std::vector<RunSpec> expand_runs(const Experiment& e, int nprocs);

std::unique_ptr<Balancer> make_none_balancer();
std::unique_ptr<Balancer> make_collective_balancer(int interval);
std::unique_ptr<Balancer> make_async_balancer();

}  // namespace mcmclb
