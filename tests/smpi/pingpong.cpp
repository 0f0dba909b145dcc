// SPDX-License-Identifier: BSD-3-Clause
// Calibration ping-pong for the simulated platforms (configs/platforms/*.xml): ranks 0 and 1 bounce a message
// of each size; prints "bytes,one_way_us,bandwidth_MBps" per size, the one-way time being half the round trip.
// Run under smpirun with a hostfile that places the two ranks where the hop to measure is (calibrate.sh).
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int nprocs = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  if (nprocs < 2) {
    if (rank == 0) std::fprintf(stderr, "pingpong: needs at least 2 ranks\n");
    MPI_Finalize();
    return 2;
  }
  const int rounds = 10;
  const long sizes[] = {8, 1024, 65536, 4L << 20};
  if (rank == 0) std::printf("bytes,one_way_us,bandwidth_MBps\n");
  for (const long bytes : sizes) {
    std::vector<char> buffer(static_cast<std::size_t>(bytes), 'x');
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    for (int i = 0; i < rounds && rank < 2; ++i) {
      if (rank == 0) {
        MPI_Send(buffer.data(), static_cast<int>(bytes), MPI_CHAR, 1, 0, MPI_COMM_WORLD);
        MPI_Recv(buffer.data(), static_cast<int>(bytes), MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(buffer.data(), static_cast<int>(bytes), MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buffer.data(), static_cast<int>(bytes), MPI_CHAR, 0, 0, MPI_COMM_WORLD);
      }
    }
    const double one_way_s = (MPI_Wtime() - start) / (2.0 * rounds);
    if (rank == 0) std::printf("%ld,%.3f,%.1f\n", bytes, one_way_s * 1e6, static_cast<double>(bytes) / one_way_s / 1e6);
  }
  MPI_Finalize();
  return 0;
}
