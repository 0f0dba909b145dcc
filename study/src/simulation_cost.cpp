// SPDX-License-Identifier: BSD-3-Clause
// What simulating a point costs the host (mcmclb/simulation_cost.hpp).
#include "mcmclb/simulation_cost.hpp"

#include <pthread.h>
#include <time.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "mcmclb/provenance.hpp"
#include "mcmclb/stats.hpp"
#include "mcmclb/study.hpp"

namespace mcmclb {

namespace fs = std::filesystem;

/// Host CPU seconds one simulation of spec takes: about 0.07 s to start, the set-up's host CPU at 1024 ranks grown as P
/// to a power of its own, and a cost per rank-item (simulated_rank_items(): an item worked by a group of 8 is 8 steps
/// of simulated ranks, each of which the simulator runs). The start-up, the powers up to 1024 ranks and the
/// per-set-up costs were fitted on three tuning traces at 64 and 1024 ranks and the counts advise searched between
/// them: 8 walkers of 60 items, the same 8 of 1034, and 64 walkers of 1577, two simulations at once on advise's
/// default platform, the 2-core development VM held idle, with the simulation build a user makes (RelWithDebInfo,
/// -O2, as the README builds build-sim; docs/notes/advise-estimate/tuning/fit.csv, by fit.py there, which says each
/// set-up's error in sample: up to about a third). The 8-walker traces were advised twice. The powers past 1024
/// come from the shipped trace advised at 8192 ranks by an earlier release (tuning/fit-past-1024.csv, by
/// fit_past_1024.py; how they did on other traces: that folder's README). At these sizes a simulation's host time
/// is mostly the ranks' messages (SimGrid's max-min solver, docs/notes/host-time-8192) and their steps per item.
double simulated_cpu_s(const RunSpec& spec) {
  struct Cost {
    const char* balancer;
    const char* rule;  // the finished rule, "" for a balancer without one
    double at_1024_s;
    double power, power_past_1024;  // how its host CPU grows with P, up to 1024 ranks and past them
    double rank_item_us;            // host microseconds per rank-item
  };
  static constexpr std::array<Cost, 14> kCosts = {{
      {"none", "", 1.56, 1.52, 1.62, 0.0},
      {"collective", "retire", 1.02, 1.88, 1.65, 7.1},
      {"collective", "pays", 5.47, 1.52, 1.66, 5.7},
      {"async", "retire", 2.03, 1.84, 2.41, 22.7},
      {"async", "coalesce", 6.71, 1.61, 1.94, 5.4},
      {"async", "pays", 13.11, 1.72, 1.85, 17.1},
      {"lookahead", "retire", 0.88, 1.84, 1.37, 16.4},
      {"lookahead", "coalesce", 0.94, 1.66, 1.37, 6.8},
      {"lookahead", "pays", 4.56, 1.48, 1.56, 14.2},
      {"mostwork", "coalesce", 0.93, 1.66, 1.45, 8.5},
      {"mostwork", "pays", 4.63, 1.45, 1.63, 16.8},
      {"steal", "", 1.65, 1.56, 1.47, 6.1},
      {"stealrandom", "", 1.64, 1.49, 1.51, 5.9},
      {"stealmerge", "coalesce", 0.96, 1.88, 1.54, 9.9},
  }};
  const std::string rule = spec.finished ? std::string(to_string(*spec.finished)) : "";
  Cost cost{"", "", 2.3, 1.5, 1.5, 18};  // a set-up not measured: about the median
  for (const Cost& c : kCosts) {
    if (spec.balancer == c.balancer && rule == c.rule) cost = c;
  }
  const double scale = spec.nprocs / 1024.0;
  const double grown = std::pow(scale, scale <= 1 ? cost.power : cost.power_past_1024);
  return 0.07 + cost.at_1024_s * grown + cost.rank_item_us * 1e-6 * simulated_rank_items(spec);
}

double simulated_host_s(const RunSpec& spec) { return kWallPerCpu * simulated_cpu_s(spec) + kLaunchS; }

double simulated_rank_items(const RunSpec& spec) {
  // Where finished groups join the groups still working (the rule coalesce), the ranks of every finished group
  // step the items left of the longest unit too. Simulated at 40 to 160 ranks on 40 walkers, 4 of them 2000 items
  // long, mostwork stepped 1.0 to 1.36 times the ranks times the longest unit's items (1.2 at 160 ranks), where the
  // initial groups alone count a ninth of it. Under pays, whether a merge happens depends on what it gains, which
  // the estimate does not know: the initial count stands (fit.py counts alike).
  constexpr double kMergedShare = 1.2;
  const double initial = expected_rank_items(spec);
  if (spec.finished != FinishedRule::coalesce) return initial;
  return std::max(initial, kMergedShare * spec.nprocs * longest_unit_items(spec));
}

double simulated_peak_bytes(const RunSpec& spec) {
  // The traces' advice (docs/data/trace-lj/advise-p16-64, docs/notes/advise-estimate, and the earlier advice of
  // docs/notes/archive/2026-11-trace-lj-advice.md): 55-65 MiB at 16 and 64 ranks, at most 260 MiB at 1024 and
  // 1.38 GiB at 8192. 64 MiB plus 200 KiB a rank lies above every one. A trace replayed adds its items: the file's
  // text while it is parsed, and about 48 bytes an item (its row, then its cost) on top; a trace row is about 24
  // bytes, so three times the file's size bounds both.
  double bytes = 64.0 * (1 << 20) + 200.0 * 1024 * static_cast<double>(spec.nprocs);
  if (spec.workload.model == "trace" && !spec.workload.file.empty()) {
    std::error_code error;
    const auto size = fs::file_size(spec.workload.file, error);
    if (!error) bytes += 3.0 * static_cast<double>(size);
  }
  return bytes;
}

double CpuCapacity::cores_for(long k) const {
  if (threads <= 0) return static_cast<double>(std::max<long>(k, 1));
  if (k <= 1 || threads == 1) return one;
  if (k >= threads) return all;
  return one + (all - one) * static_cast<double>(k - 1) / static_cast<double>(threads - 1);
}

bool CpuCapacity::idle() const { return threads <= 0 || (one >= 0.95 && all >= 0.95 * static_cast<double>(threads)); }

namespace {

// The probe reads the spinning threads' CPU clocks every slice; past an idle-looking start it spins kSettleSlices
// times as long as asked and keeps the median slice.
constexpr std::chrono::milliseconds kProbeSlice{50};
constexpr std::size_t kSettleSlices = 5;

/// One thread's CPU clock, read from another thread.
double thread_cpu_s(std::thread& t) {
  clockid_t clock{};
  timespec now{};
  if (pthread_getcpuclockid(t.native_handle(), &clock) != 0 || clock_gettime(clock, &now) != 0) return 0;
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

/// The cores `threads` threads spinning together got in each of `slices` slices of kProbeSlice: their CPU time in
/// it over its wall time, read from this thread. It ends after the first `first` slices where their median is already
/// as many cores as threads spin (within 5 %): a host cannot give more, so an idle one costs no more than that.
std::vector<double> slices_spinning(long threads, std::size_t first, std::size_t slices) {
  std::atomic<bool> stop{false};
  std::vector<std::thread> spinning;
  for (long t = 0; t < std::max<long>(threads, 1); ++t) {
    spinning.emplace_back([&stop] {
      volatile unsigned long sink = 0;
      while (!stop.load(std::memory_order_relaxed)) sink = sink + 1;
    });
  }
  const auto cpu_s = [&spinning] {
    double sum = 0;
    for (std::thread& t : spinning) sum += thread_cpu_s(t);
    return sum;
  };
  std::vector<double> got;
  auto at = std::chrono::steady_clock::now();
  double cpu = cpu_s();
  while (got.size() < slices) {
    std::this_thread::sleep_for(kProbeSlice);
    const auto now = std::chrono::steady_clock::now();
    const double now_cpu = cpu_s();
    got.push_back((now_cpu - cpu) / std::chrono::duration<double>(now - at).count());
    at = now;
    cpu = now_cpu;
    if (got.size() == first && steady_cores(got) >= 0.95 * static_cast<double>(spinning.size())) break;
  }
  stop = true;
  for (std::thread& t : spinning) t.join();
  return got;
}

}  // namespace

double steady_cores(std::vector<double> slices) { return slices.empty() ? 0 : stats::median(std::move(slices)); }

CpuCapacity measure_cpu_capacity(long threads, std::chrono::milliseconds window) {
  CpuCapacity cpu;
  // More threads than the CPUs this process may use would only share those CPUs, measuring nothing more, and would
  // keep the reading thread waiting behind them: 1024 asked on 2 cores spun 14 s, where the probe takes 0.2-0.6 s.
  cpu.threads = std::clamp<long>(threads, 1, usable_cores());
  const auto count = static_cast<std::size_t>(std::max<long>(window / kProbeSlice, 2));
  const std::vector<double> one = slices_spinning(1, count, count);
  cpu.one = std::max(std::min(steady_cores(one), 1.0), 0.05);
  // Several threads get a burst of more than their steady share now and then, most of all just after they start
  // (a kernel's load balancer moving them; seen for up to 0.35 s beside another session's spinning process, 1.3 cores
  // instead of 1.0): past an idle-looking start, the median slice over kSettleSlices times as long. One thread is
  // the measurement above (the clamp then gives cpu.one).
  const std::vector<double> all = cpu.threads == 1 ? one : slices_spinning(cpu.threads, count, kSettleSlices * count);
  cpu.all = std::clamp(steady_cores(all), cpu.one, static_cast<double>(cpu.threads));
  cpu.window_s = static_cast<double>(all.size()) * std::chrono::duration<double>(kProbeSlice).count();
  return cpu;
}

SimulationEstimate estimate_simulations(const std::vector<const RunSpec*>& specs, long jobs, const CpuCapacity& cpu) {
  SimulationEstimate e;
  double busy_s = 0, longest_s = 0;  // the CPU part, which runs on the cores the host gives
  for (const RunSpec* spec : specs) {
    const double busy = kWallPerCpu * simulated_cpu_s(*spec);
    e.host_s += busy + kLaunchS;
    busy_s += busy;
    longest_s = std::max(longest_s, busy);
    e.peak_bytes = std::max(e.peak_bytes, simulated_peak_bytes(*spec));
  }
  e.count = specs.size();
  e.at_once = std::min<long>(std::max<long>(jobs, 1), std::max<long>(static_cast<long>(e.count), 1));
  // A launch is mostly waiting (a simulation of 24 ranks: 0.31 s wall, 0.11 s CPU), so a busy host does not
  // stretch it; the rest is CPU, shared over the cores the simulations get.
  const double launches_s = kLaunchS * static_cast<double>(e.count) / static_cast<double>(e.at_once);
  e.wall_s = e.count == 0
                 ? 0
                 : std::max(longest_s / cpu.cores_for(1) + kLaunchS, busy_s / cpu.cores_for(e.at_once) + launches_s);
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
