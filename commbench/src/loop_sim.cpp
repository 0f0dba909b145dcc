// SPDX-License-Identifier: BSD-3-Clause
// mcmclb-commbench-sim's timing loop (the simulation build, commbench.hpp): every benchmark is set up, repeated
// and torn down in turn. Simulated time is deterministic, so one Measurement::once() per repetition is the
// sample (iterations = 1, min = max = median = time); Google Benchmark is not used, because its global state would be
// shared by all simulated ranks (smpirun -no-privatize). One benchmark at a time also bounds memory: at P
// simulated ranks every world-sized duplicate costs O(P) per rank, O(P^2) in all.
#include <cstdio>
#include <vector>

#include "mcmclb/commbench.hpp"

namespace mcmclb::commbench {

std::vector<Sample> measure(const std::vector<Spec>& selected, const Options& o, const mpi::Comm& world,
                            const Provenance& /*provenance*/, const Progress& progress) {
  const bool report = world.rank() == 0;
  std::vector<Sample> samples;
  for (const Spec& spec : selected) {
    Measurement m(spec, world, o.group_layout);
    for (int i = 0; i < o.warmup_iterations; ++i) (void)m.once();
    double first_us = 0.0;
    for (int rep = 0; rep < o.repetitions; ++rep) {
      const double t_us = m.once() * 1e6;
      if (rep == 0) first_us = t_us;
      if (report) samples.push_back({spec, rep, 1, t_us, t_us, t_us, t_us});
    }
    if (report) {  // progress: a long simulation shows where it is
      std::printf("%-40s %12.3f us simulated\n", spec_name(spec).c_str(), first_us);
      std::fflush(stdout);
      progress(samples);
    }
  }
  return samples;
}

}  // namespace mcmclb::commbench
