// SPDX-License-Identifier: BSD-3-Clause
// Load balancers for the walker-group kernel, chosen by name from a registry (balancers/src/balancers.def lists
// them all: none, collective, async, lookahead, mostwork). A balancer is one file balancers/src/<name>.cpp that
// defines `BalancerEntry <name>_balancer()` (name, planning facts, factory) and one line MCMCLB_BALANCER(<name>)
// in balancers.def; the point-to-point ones share their messaging and handshakes (balancers/src/protocol.hpp).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "mcmclb/kernel.hpp"
#include "mcmclb/run_spec.hpp"

namespace mcmclb {

/// Drives the kernel from the synchronised start until this rank has nothing left to do (Kernel::finish()).
class Balancer {
 public:
  virtual ~Balancer() = default;
  virtual void run(Kernel& kernel) = 0;
};

/// One registered balancer: what planning needs to know, and how to make one for a run.
struct BalancerEntry {
  BalancerInfo info;
  std::unique_ptr<Balancer> (*make)(const RunSpec& run);
};

/// Every registered balancer, in registration order.
std::span<const BalancerEntry> balancer_entries();
/// Throws InputError (key balancer) for an unknown name, listing the known ones.
const BalancerInfo& balancer_info(std::string_view name);
std::unique_ptr<Balancer> make_balancer(const RunSpec& run);
/// A short name for a run's balancer set-up, e.g. "collective(4) create" or "async intercomm": the finished rule
/// is named where it is not the balancer's default.
std::string run_label(const RunSpec& spec);

/// Local, after a run: true when a balancer's message waits unreceived for this rank on kernel.control() (a
/// protocol that lost track of a message). Probes the balancers' tags one by one, not any tag: in the simulation
/// build the control communicator is WORLD, which carries other messages too.
[[nodiscard]] bool control_message_pending(const Kernel& kernel);

/// The balancers and creation methods this build offers, for the study library's name checks.
Catalog catalog();

}  // namespace mcmclb
