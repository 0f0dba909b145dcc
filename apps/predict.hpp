// SPDX-License-Identifier: BSD-3-Clause
// `mcmclb predict`: what the finished rule `pays` predicts a compute-mode item costs at each group size, from a
// run's calibration.csv, computed by the rule's own model (mcmclb::MergeModel), so that a document's table of the
// model's predictions is the program's output and not a copy of its arithmetic. No MPI.
#pragma once

#include <string>
#include <vector>

#include "mcmclb/csv.hpp"

namespace mcmclb {

/// predict.csv's header (`mcmclb predict`; docs/reference/columns.md).
const csv::Row& predict_header();

/// The command: args are those after `predict`. Prints predict.csv on stdout; exit 0, or 2 with one line on stderr
/// naming the flag or file (bad input, before any output).
int predict_main(const std::vector<std::string>& args);

}  // namespace mcmclb
