// SPDX-License-Identifier: BSD-3-Clause
// What simulating a point costs the host (mcmclb/simulation_cost.hpp).
#include "mcmclb/simulation_cost.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>

#include "mcmclb/study.hpp"

namespace mcmclb {

namespace fs = std::filesystem;

/// Host seconds one simulation of spec takes: about 0.25 s to start, the set-up's host CPU at 1024 ranks grown as P
/// to a power of its own, and a cost per rank-item (expected_rank_items(): an item worked by a group of 8 is 8 steps
/// of simulated ranks, each of which the simulator runs). The start-up and the per-set-up costs were fitted on two
/// tuning traces of 8 walkers, one of 60 items and one of 1034 (the same speed-ups), at 64 and 1024 ranks, two
/// simulations at once on the idle 2-core development VM, with the simulation build a user makes (RelWithDebInfo,
/// -O2, as the README builds build-sim; docs/notes/advise-estimate/tuning/fit.csv, by fit.py there). The powers
/// come from earlier advice at 1024 and 8192 ranks (docs/data/trace-lj/advise, advise-8192, advise-long), so past
/// 1024 ranks the estimate is less sure. At these sizes a simulation's host time is mostly the ranks' messages
/// (SimGrid's max-min solver, docs/notes/host-time-8192) and their steps per item, most for the balancers that plan
/// or talk per item (async, mostwork, stealmerge: 40 to 70 us per rank-item in fit.csv).
double simulated_host_s(const RunSpec& spec) {
  struct Cost {
    const char* balancer;
    const char* rule;  // the finished rule, "" for a balancer without one
    double at_1024_s, power;
    double rank_item_us;  // host microseconds per rank-item
  };
  static constexpr std::array<Cost, 14> kCosts = {{
      {"none", "", 2.12, 1.73, 4.1},
      {"collective", "retire", 1.57, 1.42, 19.1},
      {"collective", "pays", 6.75, 1.51, 18.7},
      {"async", "retire", 2.10, 1.68, 68.2},
      {"async", "coalesce", 7.90, 1.50, 42.8},
      {"async", "pays", 15.82, 1.48, 66.3},
      {"lookahead", "retire", 1.63, 1.02, 31.0},
      {"lookahead", "coalesce", 1.65, 1.11, 32.5},
      {"lookahead", "pays", 7.45, 1.26, 34.8},
      {"mostwork", "coalesce", 1.47, 1.13, 48.3},
      {"mostwork", "pays", 7.45, 1.32, 50.1},
      {"steal", "", 2.28, 1.71, 14.8},
      {"stealrandom", "", 2.61, 1.70, 11.0},
      {"stealmerge", "coalesce", 1.77, 1.17, 46.4},
  }};
  const std::string rule = spec.finished ? std::string(to_string(*spec.finished)) : "";
  Cost cost{"", "", 2.3, 1.5, 35};  // a set-up not measured: about the median
  for (const Cost& c : kCosts) {
    if (spec.balancer == c.balancer && rule == c.rule) cost = c;
  }
  // Host CPU, and the wall time around it: the two tuning advices took 1.28 and 1.23 times their simulations' host
  // CPU over the two at once (the launch, the writes and the advice between simulations).
  constexpr double kWallPerCpu = 1.25;
  return kWallPerCpu * (0.25 + cost.at_1024_s * std::pow(spec.nprocs / 1024.0, cost.power) +
                        cost.rank_item_us * 1e-6 * expected_rank_items(spec));
}

double simulated_peak_bytes(const RunSpec& spec) {
  // The shipped traces' advice (docs/data/trace-lj/advise*, docs/notes/advise-estimate): 55-65 MiB at 16 and 64
  // ranks, at most 260 MiB at 1024 and 1.38 GiB at 8192. 64 MiB plus 200 KiB a rank lies above every one. A trace
  // replayed adds its items: the file's text while it is parsed, and about 48 bytes an item (its row, then its cost)
  // on top; a trace row is about 24 bytes, so three times the file's size bounds both.
  double bytes = 64.0 * (1 << 20) + 200.0 * 1024 * static_cast<double>(spec.nprocs);
  if (spec.workload.model == "trace" && !spec.workload.file.empty()) {
    std::error_code error;
    const auto size = fs::file_size(spec.workload.file, error);
    if (!error) bytes += 3.0 * static_cast<double>(size);
  }
  return bytes;
}

SimulationEstimate estimate_simulations(const std::vector<const RunSpec*>& specs, long jobs) {
  SimulationEstimate e;
  double longest = 0;
  for (const RunSpec* spec : specs) {
    const double s = simulated_host_s(*spec);
    e.host_s += s;
    longest = std::max(longest, s);
    e.peak_bytes = std::max(e.peak_bytes, simulated_peak_bytes(*spec));
  }
  e.count = specs.size();
  e.at_once = std::min<long>(std::max<long>(jobs, 1), std::max<long>(static_cast<long>(e.count), 1));
  e.wall_s = std::max(longest, e.host_s / static_cast<double>(e.at_once));
  return e;
}

std::optional<std::string> memory_refusal(const SimulationEstimate& estimate, std::optional<double> available_bytes,
                                          const std::string& allowed) {
  const double needed = estimate.peak_bytes * static_cast<double>(estimate.at_once);
  if (estimate.count == 0 || !available_bytes || needed <= *available_bytes) return std::nullopt;
  const auto gib = [](double bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.3g GiB", bytes / (1024.0 * 1024 * 1024));
    return std::string(text);
  };
  return "--jobs: " + std::to_string(estimate.at_once) + " simulation" + (estimate.at_once == 1 ? "" : "s") +
         " at once need about " + gib(needed) + " (" + gib(estimate.peak_bytes) +
         " each at the largest), and this host has " + gib(*available_bytes) + " available (allowed: " + allowed + ")";
}

}  // namespace mcmclb
