// SPDX-License-Identifier: BSD-3-Clause
// `mpiexec -n N mcmclb calibrate`: the machine's latency and bandwidth, written as a SimGrid platform
// (apps/calibrate.cpp; what is measured: mcmclb/calibrate.hpp).
#pragma once

#include <string>

namespace mcmclb {

/// The command's usage line, as `mcmclb --help` lists it.
std::string calibrate_usage();
/// The command, inside mpi::run_main: bad flags are an InputError thrown on every rank alike.
int calibrate_main(int argc, char** argv);

}  // namespace mcmclb
