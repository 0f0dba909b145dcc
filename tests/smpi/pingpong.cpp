// SPDX-License-Identifier: BSD-3-Clause
// mcmclb-pingpong: the ping-pong `mcmclb calibrate` times a machine with (mcmclb/calibrate.hpp), alone, or an
// MPI_Allreduce at given sizes. Built twice, as mcmclb-commbench is: mcmclb-pingpong (MPI) times the machine, and
// mcmclb-pingpong-sim (SimGrid SMPI) times a simulated platform with the same code, so that a platform can be checked
// against the machine it describes (plots/calibration_check.py) and against the constants it was written with
// (tests/smpi/calibrate.sh).
//
//   mpiexec -n 2 mcmclb-pingpong                      # bytes,one_way_us,bandwidth_MBps per calibrated size
//   mpiexec -n P mcmclb-pingpong --allreduce 8,1024   # bytes,allreduce_us per size
//
// The ping-pong runs between ranks 0 and 1, one repetition of its round trips per size (their median); the one-way
// time is half a round trip. The allreduce is timed as commbench times an operation (a barrier, the call between two
// clock reads, the slowest rank's time), its median over 50 calls. Simulated time is deterministic: a repetition
// there repeats itself.
#include <cstdio>
#include <string>
#include <vector>

#include "mcmclb/calibrate.hpp"
#include "mcmclb/mpi.hpp"

namespace {

namespace cal = mcmclb::calibrate;

constexpr long kMaxAllreduceBytes = 64L << 20;  // 64 MiB: the largest reduction one rank's buffers are sized for
constexpr int kAllreduceCalls = 50;

int pingpong_main(int argc, char** argv) {
  const auto world = mcmclb::mpi::Comm::world();
  std::vector<long> allreduce;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag != "--allreduce" || i + 1 >= argc || !allreduce.empty()) {
      throw mcmclb::InputError("mcmclb-pingpong: '" + flag +
                               "' is not allowed (allowed: no flag, or --allreduce BYTES[,BYTES...] once)");
    }
    allreduce = mcmclb::parse_integer_list(flag, argv[++i], 8, kMaxAllreduceBytes, "a size in bytes");
    for (const long bytes : allreduce) {
      if (bytes % 8 != 0) {
        throw mcmclb::InputError("--allreduce: " + std::to_string(bytes) +
                                 " is not a whole number of doubles (allowed: multiples of 8 bytes)");
      }
    }
  }
  if (!allreduce.empty()) {
    if (world.rank() == 0) std::printf("bytes,allreduce_us\n");
    for (const long bytes : allreduce) {
      const double s = cal::allreduce_time(world, kAllreduceCalls, bytes);
      if (world.rank() == 0) std::printf("%ld,%.4f\n", bytes, s * 1e6);
    }
    return 0;
  }
  if (world.size() < 2) throw mcmclb::InputError("mcmclb-pingpong: needs at least 2 ranks");
  const auto points = cal::pingpong(world, 0, 1, cal::message_sizes(), 1);
  if (world.rank() == 0) {
    std::printf("bytes,one_way_us,bandwidth_MBps\n");
    for (const auto& p : points) {
      std::printf("%lld,%.4f,%.1f\n", static_cast<long long>(p.bytes), p.seconds * 1e6,
                  static_cast<double>(p.bytes) / p.seconds / 1e6);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return mcmclb::mpi::run_main(argc, argv, pingpong_main); }
