// SPDX-License-Identifier: BSD-3-Clause
// The measuring half of mcmclb::calibrate: the ping-pong, the reduction and the per-call costs, every MPI call
// checked. The timed loops use MPI's own blocking calls (not the project's polite waits): what is measured is the
// library and the network as a program's messages meet them.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <ctime>
#include <numeric>
#include <random>
#include <vector>

#include "mcmclb/calibrate.hpp"
#include "mcmclb/stats.hpp"

namespace mcmclb::calibrate {

namespace {

/// Round trips per repetition: each is timed on its own (the clock resolves nanoseconds), so a few give the median
/// its interval; fewer for the large sizes, whose every round trip takes milliseconds on a slow network.
int round_trips(std::int64_t bytes) {
  if (bytes <= 8192) return 20;
  if (bytes <= 65536) return 10;
  return bytes <= 1048576 ? 4 : 2;
}

/// Ranks a and b start together: a zero-byte exchange, which neither leaves before the other entered.
void meet(MPI_Comm comm, int partner) {
  mpi::check(MPI_Sendrecv(nullptr, 0, MPI_BYTE, partner, 1, nullptr, 0, MPI_BYTE, partner, 1, comm, MPI_STATUS_IGNORE),
             "MPI_Sendrecv");
}

/// Waits for seconds: the receiver's lateness. Here it spins on the clock, so that the receive is timed on a core
/// as warm as the ping-pong's: after a sleep of 50 us the first MPI_Recv took twice the whole one-way time of a
/// ping-pong on the 2-core VM. The simulation build sleeps instead (the C library's nanosleep, which its compiler
/// makes SMPI's simulated sleep): a spin there would read a clock that only MPI calls move.
void wait_for(double seconds) {
#if MCMCLB_SMPI
  timespec t{static_cast<time_t>(seconds), static_cast<long>((seconds - std::floor(seconds)) * 1e9)};
  while (nanosleep(&t, &t) != 0 && errno == EINTR) {
  }
#else
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < until) {
  }
#endif
}

/// One round trip of bytes between a and b, its half on rank a (0 elsewhere).
double round_trip(MPI_Comm comm, bool is_a, int partner, std::vector<char>& buffer) {
  const int count = static_cast<int>(buffer.size());
  const double start = MPI_Wtime();
  if (is_a) {
    mpi::check(MPI_Send(buffer.data(), count, MPI_BYTE, partner, 0, comm), "MPI_Send");
    mpi::check(MPI_Recv(buffer.data(), count, MPI_BYTE, partner, 0, comm, MPI_STATUS_IGNORE), "MPI_Recv");
  } else {
    mpi::check(MPI_Recv(buffer.data(), count, MPI_BYTE, partner, 0, comm, MPI_STATUS_IGNORE), "MPI_Recv");
    mpi::check(MPI_Send(buffer.data(), count, MPI_BYTE, partner, 0, comm), "MPI_Send");
  }
  return is_a ? 0.5 * (MPI_Wtime() - start) : 0.0;
}

enum class Call { send, isend, recv };

/// One timed call of bytes between rank 0 (the sender) and its partner (the receiver), the receiver late by `late`
/// seconds. send and isend: the sender's call, timed on rank 0 (MPI_Isend's wait untimed); recv: the receiver's
/// MPI_Recv after its lateness, when an eager message has arrived, timed on the partner. 0 on the other rank.
double timed_call(MPI_Comm comm, bool sender, int partner, Call call, std::vector<char>& buffer, double late) {
  const int count = static_cast<int>(buffer.size());
  meet(comm, partner);
  double took = 0;
  if (sender) {
    const double start = MPI_Wtime();
    if (call == Call::isend) {
      MPI_Request request = MPI_REQUEST_NULL;
      mpi::check(MPI_Isend(buffer.data(), count, MPI_BYTE, partner, 0, comm, &request), "MPI_Isend");
      took = MPI_Wtime() - start;
      mpi::check(MPI_Wait(&request, MPI_STATUS_IGNORE), "MPI_Wait");
    } else {
      mpi::check(MPI_Send(buffer.data(), count, MPI_BYTE, partner, 0, comm), "MPI_Send");
      took = MPI_Wtime() - start;
    }
    return call == Call::recv ? 0.0 : took;
  }
  wait_for(late);
  const double start = MPI_Wtime();
  mpi::check(MPI_Recv(buffer.data(), count, MPI_BYTE, partner, 0, comm, MPI_STATUS_IGNORE), "MPI_Recv");
  took = MPI_Wtime() - start;
  return call == Call::recv ? took : 0.0;
}

/// The receiver's lateness for a size: twice its one-way time, so that an eager message has arrived well before the
/// receive and an eager send has returned well before the receiver comes; at least 50 us.
double lateness(double one_way_s) { return std::max(50e-6, 2 * one_way_s); }

/// Whether MPI_Send waited for the late receiver: it took over half the lateness.
bool waited(double send_s, double late_s) { return send_s > 0.5 * late_s; }

}  // namespace

std::vector<Point> pingpong(const mpi::Comm& world, int a, int b, const std::vector<std::int64_t>& sizes, int reps) {
  const int rank = world.rank();
  const bool in_pair = rank == a || rank == b;
  const int partner = rank == a ? b : a;
  const MPI_Comm comm = world.get();
  std::vector<Point> out;
  std::vector<char> buffer;
  for (const std::int64_t bytes : sizes) {
    buffer.assign(static_cast<std::size_t>(bytes), 'x');
    std::vector<double> one_way;
    for (int rep = -1; rep < reps && in_pair; ++rep) {  // repetition -1 warms up and is dropped
      meet(comm, partner);
      for (int i = 0; i < round_trips(bytes); ++i) {
        const double t = round_trip(comm, rank == a, partner, buffer);
        if (rep >= 0) one_way.push_back(t);
      }
    }
    mpi::barrier_politely(world, mpi::setup_patience);
    double m = rank == a ? stats::median(one_way) : 0;
    if (a != 0) {
      if (rank == a) mpi::check(MPI_Send(&m, 1, MPI_DOUBLE, 0, 2, comm), "MPI_Send");
      if (rank == 0) mpi::recv_politely(comm, &m, 1, MPI_DOUBLE, a, 2);
    }
    if (rank == 0) out.push_back(Point{bytes, m});
  }
  return out;
}

PairTimes time_pair(const mpi::Comm& world, int b, const std::vector<std::int64_t>& sizes, int reps,
                    std::uint64_t seed) {
  const int rank = world.rank();
  const bool in_pair = rank == 0 || rank == b;
  const bool sender = rank == 0;
  const int partner = sender ? b : 0;
  const MPI_Comm comm = world.get();
  PairTimes times;
  if (!in_pair) {
    mpi::barrier_politely(world, mpi::setup_patience);
    return times;
  }
  std::mt19937_64 order(seed);
  std::vector<char> buffer;
  const std::size_t n = sizes.size();

  // The ping-pong: sizes in a fresh order each round, after one warm-up round trip of every size.
  std::vector<Sample> trips(n);
  for (std::size_t i = 0; i < n; ++i) trips[i].bytes = sizes[i];
  std::vector<std::size_t> which(n);
  std::iota(which.begin(), which.end(), 0);
  for (int rep = -1; rep < reps; ++rep) {
    std::shuffle(which.begin(), which.end(), order);
    for (const std::size_t i : which) {
      buffer.assign(static_cast<std::size_t>(sizes[i]), 'x');
      meet(comm, partner);
      for (int t = 0; t < (rep < 0 ? 1 : round_trips(sizes[i])); ++t) {
        const double one_way = round_trip(comm, sender, partner, buffer);
        if (rep >= 0) trips[i].seconds.push_back(one_way);
      }
    }
  }
  // Each size's lateness from its median one-way time, on both ranks (rank 0 alone timed them).
  std::vector<double> late(n);
  if (sender) {
    for (std::size_t i = 0; i < n; ++i) late[i] = lateness(stats::median(trips[i].seconds));
  }
  if (sender) {
    mpi::check(MPI_Send(late.data(), static_cast<int>(n), MPI_DOUBLE, partner, 3, comm), "MPI_Send");
  } else {
    mpi::check(MPI_Recv(late.data(), static_cast<int>(n), MPI_DOUBLE, 0, 3, comm, MPI_STATUS_IGNORE), "MPI_Recv");
  }

  // The three calls, every (size, call) in a fresh order each round.
  std::vector<std::pair<std::size_t, Call>> calls;
  for (std::size_t i = 0; i < n; ++i) {
    for (const Call c : {Call::send, Call::isend, Call::recv}) calls.emplace_back(i, c);
  }
  std::vector<Sample> send(n), isend(n), recv(n);
  for (std::size_t i = 0; i < n; ++i) send[i].bytes = isend[i].bytes = recv[i].bytes = sizes[i];
  for (int rep = 0; rep < reps; ++rep) {
    std::shuffle(calls.begin(), calls.end(), order);
    for (const auto& [i, c] : calls) {
      buffer.assign(static_cast<std::size_t>(sizes[i]), 'x');
      const double t = timed_call(comm, sender, partner, c, buffer, late[i]);
      if (c == Call::send && sender) send[i].seconds.push_back(t);
      if (c == Call::isend && sender) isend[i].seconds.push_back(t);
      if (c == Call::recv && !sender) recv[i].seconds.push_back(t);
    }
  }
  // The receiver's MPI_Recv timings reach rank 0, size by size.
  for (std::size_t i = 0; i < n; ++i) {
    if (sender) {
      recv[i].seconds.resize(static_cast<std::size_t>(reps));
      mpi::check(MPI_Recv(recv[i].seconds.data(), reps, MPI_DOUBLE, partner, 4, comm, MPI_STATUS_IGNORE), "MPI_Recv");
    } else {
      mpi::check(MPI_Send(recv[i].seconds.data(), reps, MPI_DOUBLE, 0, 4, comm), "MPI_Send");
    }
  }

  // The eager limit: the smallest size whose MPI_Send waited for its late receiver, narrowed to the byte between the
  // largest size that did not wait below it and it (three sends a step, by their median). Rank 0 decides each step
  // and tells b the size (-1: done).
  std::int64_t eager = 0;
  if (sender) {
    std::int64_t lo = 0, hi = sizes.back() + 1;  // lo did not wait, hi did (hi past the largest: none did)
    for (std::size_t i = 0; i < n; ++i) {
      if (waited(stats::median(send[i].seconds), late[i])) {
        hi = std::min(hi, sizes[i]);
      }
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (sizes[i] < hi) lo = std::max(lo, sizes[i]);
    }
    const double late_hi = late[static_cast<std::size_t>(
        std::find(sizes.begin(), sizes.end(), std::min(hi, sizes.back())) - sizes.begin())];
    while (hi <= sizes.back() && hi - lo > 1) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      mpi::check(MPI_Send(&mid, 1, MPI_INT64_T, partner, 5, comm), "MPI_Send");
      mpi::check(MPI_Send(&late_hi, 1, MPI_DOUBLE, partner, 6, comm), "MPI_Send");
      buffer.assign(static_cast<std::size_t>(mid), 'x');
      std::vector<double> t;
      for (int k = 0; k < 3; ++k) t.push_back(timed_call(comm, true, partner, Call::send, buffer, late_hi));
      (waited(stats::median(t), late_hi) ? hi : lo) = mid;
    }
    const std::int64_t done = -1;
    mpi::check(MPI_Send(&done, 1, MPI_INT64_T, partner, 5, comm), "MPI_Send");
    eager = hi;
  } else {
    for (;;) {
      std::int64_t mid = 0;
      mpi::check(MPI_Recv(&mid, 1, MPI_INT64_T, 0, 5, comm, MPI_STATUS_IGNORE), "MPI_Recv");
      if (mid < 0) break;
      buffer.assign(static_cast<std::size_t>(mid), 'x');
      double late_b = 0;  // the receiver's lateness: the same as rank 0's, sent along
      mpi::check(MPI_Recv(&late_b, 1, MPI_DOUBLE, 0, 6, comm, MPI_STATUS_IGNORE), "MPI_Recv");
      for (int k = 0; k < 3; ++k) (void)timed_call(comm, false, partner, Call::send, buffer, late_b);
    }
  }
  mpi::barrier_politely(world, mpi::setup_patience);
  if (!sender) return times;
  for (std::size_t i = 0; i < n; ++i) {
    times.pingpong.push_back(spread_of(trips[i]));
    times.send.push_back(spread_of(send[i]));
    times.isend.push_back(spread_of(isend[i]));
    times.recv.push_back(spread_of(recv[i]));
  }
  times.eager_limit = eager;
  return times;
}

double allreduce_time(const mpi::Comm& world, int calls, std::int64_t bytes) {
  const auto count = static_cast<std::size_t>(std::max<std::int64_t>(1, bytes / 8));
  std::vector<double> times, in(count, 1.0), out(count, 0.0);
  for (int i = -1; i < calls; ++i) {  // call -1 warms up
    mpi::check(MPI_Barrier(world.get()), "MPI_Barrier");
    const double start = MPI_Wtime();
    mpi::check(MPI_Allreduce(in.data(), out.data(), static_cast<int>(count), MPI_DOUBLE, MPI_SUM, world.get()),
               "MPI_Allreduce");
    double elapsed = MPI_Wtime() - start;
    mpi::check(MPI_Allreduce(MPI_IN_PLACE, &elapsed, 1, MPI_DOUBLE, MPI_MAX, world.get()), "MPI_Allreduce");
    if (i >= 0) times.push_back(elapsed);
  }
  return stats::median(times);
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
