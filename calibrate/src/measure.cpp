// SPDX-License-Identifier: BSD-3-Clause
// The measuring half of mcmclb::calibrate: the ping-pong, the reduction and the per-call costs, every MPI call
// checked. The timed loops use MPI's own blocking calls (not the project's polite waits): what is measured is the
// library and the network as a program's messages meet them.
#include <algorithm>
#include <vector>

#include "mcmclb/calibrate.hpp"

namespace mcmclb::calibrate {

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// Round trips per repetition: enough that a small message's repetition lasts well over the clock's resolution,
/// few for the large ones, whose every round trip takes milliseconds on a slow network.
int round_trips(std::int64_t bytes) {
  if (bytes <= 8192) return 200;
  if (bytes <= 65536) return 50;
  return bytes <= 1048576 ? 10 : 4;
}

}  // namespace

std::vector<Point> pingpong(const mpi::Comm& world, int a, int b, const std::vector<std::int64_t>& sizes, int reps) {
  const int rank = world.rank();
  const bool in_pair = rank == a || rank == b;
  const int partner = rank == a ? b : a;
  const MPI_Comm comm = world.get();
  std::vector<Point> fastest;
  std::vector<char> buffer;
  for (const std::int64_t bytes : sizes) {
    buffer.assign(static_cast<std::size_t>(bytes), 'x');
    const int count = static_cast<int>(bytes);
    const int trips = round_trips(bytes);
    std::vector<double> one_way;             // rank a's: every timed round trip's half
    for (int rep = -1; rep < reps; ++rep) {  // repetition -1 warms up (connections, registration) and is dropped
      if (!in_pair) continue;
      // The pair starts together; the others wait asleep in the barrier below, off the pair's cores.
      mpi::check(
          MPI_Sendrecv(nullptr, 0, MPI_BYTE, partner, 1, nullptr, 0, MPI_BYTE, partner, 1, comm, MPI_STATUS_IGNORE),
          "MPI_Sendrecv");
      for (int i = 0; i < trips; ++i) {
        const double start = MPI_Wtime();
        if (rank == a) {
          mpi::check(MPI_Send(buffer.data(), count, MPI_BYTE, b, 0, comm), "MPI_Send");
          mpi::check(MPI_Recv(buffer.data(), count, MPI_BYTE, b, 0, comm, MPI_STATUS_IGNORE), "MPI_Recv");
        } else {
          mpi::check(MPI_Recv(buffer.data(), count, MPI_BYTE, a, 0, comm, MPI_STATUS_IGNORE), "MPI_Recv");
          mpi::check(MPI_Send(buffer.data(), count, MPI_BYTE, a, 0, comm), "MPI_Send");
        }
        if (rep >= 0 && rank == a) one_way.push_back(0.5 * (MPI_Wtime() - start));
      }
    }
    mpi::barrier_politely(world, mpi::setup_patience);
    // Rank a's fastest reaches rank 0 (a is 0 in every pair the command times, but the function does not rely on it).
    double m = rank == a ? *std::min_element(one_way.begin(), one_way.end()) : 0;
    if (a != 0) {
      if (rank == a) mpi::check(MPI_Send(&m, 1, MPI_DOUBLE, 0, 2, comm), "MPI_Send");
      if (rank == 0) mpi::recv_politely(comm, &m, 1, MPI_DOUBLE, a, 2);
    }
    if (rank == 0) fastest.push_back(Point{bytes, m});
  }
  return fastest;
}

double allreduce_time(const mpi::Comm& world, int calls) {
  std::vector<double> times;
  for (int i = -1; i < calls; ++i) {  // call -1 warms up
    double in = 1, out = 0;
    mpi::check(MPI_Barrier(world.get()), "MPI_Barrier");
    const double start = MPI_Wtime();
    mpi::check(MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, world.get()), "MPI_Allreduce");
    double elapsed = MPI_Wtime() - start;
    mpi::check(MPI_Allreduce(MPI_IN_PLACE, &elapsed, 1, MPI_DOUBLE, MPI_MAX, world.get()), "MPI_Allreduce");
    if (i >= 0) times.push_back(elapsed);
  }
  return median(times);
}

PollCosts poll_costs(int calls) {
  PollCosts c;
  // A receive from this rank itself on MPI_COMM_SELF that nothing sends: pending all along, then cancelled.
  int value = 0;
  MPI_Request request = MPI_REQUEST_NULL;
  mpi::check(MPI_Irecv(&value, 1, MPI_INT, 0, 3, MPI_COMM_SELF, &request), "MPI_Irecv");
  int flag = 0;
  double start = MPI_Wtime();
  for (int i = 0; i < calls; ++i) mpi::check(MPI_Test(&request, &flag, MPI_STATUS_IGNORE), "MPI_Test");
  c.test_s = (MPI_Wtime() - start) / calls;
  mpi::check(MPI_Cancel(&request), "MPI_Cancel");
  mpi::check(MPI_Wait(&request, MPI_STATUS_IGNORE), "MPI_Wait");
  start = MPI_Wtime();
  for (int i = 0; i < calls; ++i) {
    mpi::check(MPI_Iprobe(0, 4, MPI_COMM_SELF, &flag, MPI_STATUS_IGNORE), "MPI_Iprobe");
  }
  c.iprobe_s = (MPI_Wtime() - start) / calls;
  return c;
}

}  // namespace mcmclb::calibrate
