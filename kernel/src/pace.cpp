// Real time and polite waits (mcmclb/pace.hpp).
#include "mcmclb/pace.hpp"

#include <thread>

namespace mcmclb::pace {

double now_s() { return MPI_Wtime(); }

void wait(MPI_Request& request, std::chrono::microseconds nap) { mpi::wait_politely(request, nap); }

void wait_until(const std::function<bool()>& done, std::chrono::microseconds nap) {
  while (!done()) std::this_thread::sleep_for(nap);
}

void work(WorkMode mode, double ms) {
  using clock = std::chrono::steady_clock;
  const auto deadline =
      clock::now() + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double, std::milli>(ms));
  if (mode == WorkMode::spin) {
    while (clock::now() < deadline) {
    }
  } else {
    std::this_thread::sleep_until(deadline);
  }
}

}  // namespace mcmclb::pace
