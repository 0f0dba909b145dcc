// SPDX-License-Identifier: BSD-3-Clause
// SMPI fact probe: which MPI calls the simulator implements, and how time passes under it. Run one case per
// invocation (some cases abort on purpose): smpirun -np 4 ... ./facts CASE. Prints "CASE ok ..." on rank 0.
#include <mpi.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

namespace {

int shared_counter = 0;  // the one mutable global here: it shows whether ranks share the binary's globals

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

void report(const char* name, const char* what) {
  if (world_rank() == 0) std::printf("%s ok %s\n", name, what);
}

/// Checks a new communicator by using it: its size and an allreduce of ones.
bool usable(MPI_Comm c, int expected_size) {
  int size = 0, sum = 0, one = 1;
  MPI_Comm_size(c, &size);
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c);
  return size == expected_size && sum == expected_size;
}

int run(const char* which) {
  const int rank = world_rank();
  int nprocs = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  MPI_Group world_group;
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  const int half = nprocs / 2;
  int lower[64];
  for (int i = 0; i < half; ++i) lower[i] = i;
  MPI_Group lower_group;
  MPI_Group_incl(world_group, half, lower, &lower_group);
  if (!std::strcmp(which, "version")) {
    int v = 0, s = 0;
    MPI_Get_version(&v, &s);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(lib, &len);
    if (rank == 0)
      std::printf("version ok MPI %d.%d (MPI_VERSION %d.%d) library '%s'\n", v, s, MPI_VERSION, MPI_SUBVERSION, lib);
  } else if (!std::strcmp(which, "create")) {
    MPI_Comm c;
    MPI_Comm_create(MPI_COMM_WORLD, lower_group, &c);
    const bool ok = rank < half ? usable(c, half) : c == MPI_COMM_NULL;
    if (!ok) return 1;
    report(which, "MPI_Comm_create gives the lower half a working communicator");
  } else if (!std::strcmp(which, "split")) {
    MPI_Comm c;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &c);
    if (!usable(c, (nprocs + 1 - rank % 2) / 2)) return 1;
    int r = 0;
    MPI_Comm_rank(c, &r);
    report(which, "MPI_Comm_split by parity with reversed keys works");
  } else if (!std::strcmp(which, "create_group")) {
    if (rank < half) {
      MPI_Comm c;
      MPI_Comm_create_group(MPI_COMM_WORLD, lower_group, 5, &c);
      if (!usable(c, half)) return 1;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    report(which, "MPI_Comm_create_group called by the lower half only works");
  } else if (!std::strcmp(which, "ibcast")) {
    int value = rank == 0 ? 42 : 0;
    MPI_Request req;
    MPI_Ibcast(&value, 1, MPI_INT, 0, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    if (value != 42) return 1;
    int mine[2] = {rank, rank * rank}, all[128];
    MPI_Iallgather(mine, 2, MPI_INT, all, 2, MPI_INT, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    for (int i = 0; i < nprocs; ++i)
      if (all[2 * i] != i || all[2 * i + 1] != i * i) return 1;
    report(which, "MPI_Ibcast and MPI_Iallgather deliver the right values");
  } else if (!std::strcmp(which, "iprobe")) {
    if (rank == 1) {
      int v = 7;
      MPI_Send(&v, 1, MPI_INT, 0, 3, MPI_COMM_WORLD);
    } else if (rank == 0) {
      int flag = 0, probes = 0;
      MPI_Status st;
      const double t0 = MPI_Wtime();
      while (!flag) {
        MPI_Iprobe(MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &flag, &st);
        ++probes;
      }
      int v = 0;
      MPI_Recv(&v, 1, MPI_INT, st.MPI_SOURCE, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (v != 7) return 1;
      std::printf("iprobe ok found after %d probes, %.1f us simulated\n", probes, (MPI_Wtime() - t0) * 1e6);
    }
  } else if (!std::strcmp(which, "injected")) {
    // Simulated time passed by failed MPI_Test / MPI_Iprobe calls on rank 0 while nothing arrives.
    if (rank == 0) {
      int flag = 0;
      MPI_Request req;
      int v = 0;
      MPI_Irecv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &req);
      double t0 = MPI_Wtime();
      for (int i = 0; i < 10; ++i) MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
      const double test_s = MPI_Wtime() - t0;
      t0 = MPI_Wtime();
      for (int i = 0; i < 10; ++i) MPI_Iprobe(MPI_ANY_SOURCE, 98, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
      const double probe_s = MPI_Wtime() - t0;
      std::printf("injected ok 10 failed MPI_Test: %.1f us, 10 failed MPI_Iprobe: %.1f us simulated\n", test_s * 1e6,
                  probe_s * 1e6);
      MPI_Send(&v, 1, MPI_INT, 0, 99, MPI_COMM_WORLD);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
  } else if (!std::strcmp(which, "clocks")) {
    // Which sleeps and clocks move simulated time (MPI_Wtime) and which read the host.
    auto sim = [] { return MPI_Wtime(); };
    double t0 = sim();
    usleep(10000);
    const double usleep_s = sim() - t0;
    t0 = sim();
    timespec ts{0, 10000000};
    nanosleep(&ts, nullptr);
    const double nanosleep_s = sim() - t0;
    t0 = sim();
    const auto h0 = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    const double host_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - h0).count();
    const double sleep_for_s = sim() - t0;
    timespec a{}, b{};
    clock_gettime(CLOCK_MONOTONIC, &a);
    usleep(50000);
    clock_gettime(CLOCK_MONOTONIC, &b);
    const double cgt_ms = (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6;
    const auto c0 = std::chrono::steady_clock::now();
    usleep(50000);
    const double chrono_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - c0).count();
    if (rank == 0)
      std::printf(
          "clocks ok simulated ms passed: usleep(10ms) %.3f, nanosleep(10ms) %.3f, sleep_for(10ms) %.3f "
          "(host %.1f ms); clock_gettime across usleep(50ms) %.3f ms, steady_clock across usleep(50ms) %.3f ms\n",
          usleep_s * 1e3, nanosleep_s * 1e3, sleep_for_s * 1e3, host_ms, cgt_ms, chrono_ms);
  } else if (!std::strcmp(which, "globals")) {
    ++shared_counter;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) std::printf("globals ok every rank incremented a global once; rank 0 sees %d\n", shared_counter);
  } else if (!std::strcmp(which, "intercomm")) {
    MPI_Comm inter;
    const int remote_leader = rank % 2 ? rank - 1 : rank + 1;
    MPI_Intercomm_create(MPI_COMM_SELF, 0, MPI_COMM_WORLD, remote_leader, 11, &inter);
    report(which, "MPI_Intercomm_create returned");
  } else if (!std::strcmp(which, "merge")) {
    MPI_Comm merged;
    MPI_Intercomm_merge(MPI_COMM_WORLD, 0, &merged);
    report(which, "MPI_Intercomm_merge returned");
  } else if (!std::strcmp(which, "idup")) {
    MPI_Comm copy;
    MPI_Request req;
    MPI_Comm_idup(MPI_COMM_WORLD, &copy, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    report(which, "MPI_Comm_idup returned");
  } else {
    if (rank == 0) std::fprintf(stderr, "unknown case %s\n", which);
    return 2;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rc = run(argc > 1 ? argv[1] : "");
  MPI_Finalize();
  return rc;
}
