// SPDX-License-Identifier: BSD-3-Clause
// `mcmclb compare A B`: whether the results in folder B differ from those in folder A, point by point (a point:
// the runs.csv key without the repetition). Real-MPI points are compared statistically (medians with their
// order-statistics intervals, the ratio of medians, the Mann-Whitney test), simulated points exactly. No MPI.
#pragma once

#include <string>
#include <vector>

#include "mcmclb/comparison.hpp"  // compare_header(): compare.csv's columns

namespace mcmclb {

/// The command: args are those after `compare`. Exit 0 (no point slower or changed), 1 (some point slower, or a
/// simulated point changed), 2 (bad input: one line on stderr naming the flag or file, before any work).
int compare_main(const std::vector<std::string>& args);

}  // namespace mcmclb
