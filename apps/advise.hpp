// SPDX-License-Identifier: BSD-3-Clause
// `mcmclb advise WORKLOAD --ranks P[,P...]`: which balancer for a workload at the rank counts asked, and how sure.
// It simulates the workload (a trace file, or a study file's workload) under every balancer and finished rule as
// one sweep of the simulation launcher, over the assumptions the workload leaves open (a trace's speed-up past
// the sizes it measured; how its chains map onto the ranks), then ranks the set-ups per rank count against
// `none` and says whether the winner wins under every assumption. No MPI of its own: it launches simulations.
// The command parses and prints; the advise library (advise/, mcmclb/advise.hpp) plans and runs.
#pragma once

#include <string>
#include <vector>

namespace mcmclb {

/// The command: args are those after `advise`. Exit 0 (advice printed and written), 2 (bad input: one line naming
/// the flag or file, before anything is written), 3 (a simulation failed: the advice covers what finished).
int advise_main(const std::vector<std::string>& args);

}  // namespace mcmclb
