// SPDX-License-Identifier: BSD-3-Clause
// Calibration ping-pong for the simulated platforms (configs/platforms/*.xml): ranks 0 and 1 bounce a message of
// each size with the ping-pong `mcmclb calibrate` times a real machine with (mcmclb/calibrate.hpp), one repetition
// (simulated time is deterministic); prints "bytes,one_way_us,bandwidth_MBps" per size, the one-way time being half
// the round trip. Run under smpirun with a hostfile that places the two ranks where the hop to measure is
// (calibrate.sh).
#include <cstdio>

#include "mcmclb/calibrate.hpp"
#include "mcmclb/mpi.hpp"

namespace {

int pingpong_main(int, char**) {
  const auto world = mcmclb::mpi::Comm::world();
  if (world.size() < 2) throw mcmclb::InputError("pingpong: needs at least 2 ranks");
  const auto points = mcmclb::calibrate::pingpong(world, 0, 1, mcmclb::calibrate::message_sizes(), 1);
  if (world.rank() == 0) {
    std::printf("bytes,one_way_us,bandwidth_MBps\n");
    for (const auto& p : points) {
      std::printf("%lld,%.3f,%.1f\n", static_cast<long long>(p.bytes), p.seconds * 1e6,
                  static_cast<double>(p.bytes) / p.seconds / 1e6);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return mcmclb::mpi::run_main(argc, argv, pingpong_main); }
