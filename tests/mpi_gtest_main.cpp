// SPDX-License-Identifier: BSD-3-Clause
// GoogleTest main for tests run under mpiexec: rank 0 prints the usual report, other ranks print only their
// failures (prefixed with the rank), and the exit code is the same on every rank: non-zero if any rank failed.
#include <gtest/gtest.h>

#include <cstdio>

#include "mcmclb/mpi.hpp"

namespace {
class RankFailurePrinter : public testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "[rank %d] %s:%d: failure\n%s\n", rank_, result.file_name() ? result.file_name() : "?",
                 result.line_number(), result.summary());
  }

 private:
  int rank_;
};
}  // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  mcmclb::mpi::Environment env(argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    auto& listeners = testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new RankFailurePrinter(rank));
  }
  const int local = RUN_ALL_TESTS();
  int any = local;
  MPI_Allreduce(&local, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0 && any != 0 && local == 0) std::fprintf(stderr, "FAILED: a test failed on another rank (see above)\n");
  return any;
}
