// What one kernel run is: every parameter resolved to a single value. Plain data, no MPI and no YAML, so the
// study library (which produces runs) and the kernel (which executes them) share it without depending on each
// other.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mcmclb {

struct WorkloadSpec {
  std::string model = "cyclic";  // cyclic | uniform | random | lognormal
  int64_t scale = 10;            // cyclic: S = scale * (leader mod period)
  int64_t period = 32;
  int64_t items = 100;   // uniform: every chain has this many items
  int64_t min = 0;       // random: S uniform in [min, max]
  int64_t max = 100;     // random: upper bound; lognormal: cap
  double median = 50.0;  // lognormal: median S
  double sigma = 1.0;    // lognormal: sigma of ln S
  uint64_t seed = 1;     // random, lognormal
};

struct WorkSpec {
  std::string mode = "sleep";  // sleep | spin
  double jitter_pct = 0.0;     // per-item cost varies uniformly within +- this percentage
  uint64_t seed = 1;           // jitter seed
};

/// One run: every parameter resolved to a single value.
struct RunSpec {
  std::string experiment;
  int nprocs = 1;
  int G = 1;
  double T_ms = 100.0;
  WorkloadSpec workload;
  WorkSpec work;
  std::string balancer;
  int interval = 0;    // collective only, else 0
  std::string method;  // communicator creation method used for regrouping ("" for none)
  int rep = 0;
};

/// What planning runs needs to know about a balancer (its implementation lives in balancers/).
struct BalancerInfo {
  std::string_view name;
  bool uses_interval;                     // collective: regroup every `interval` items
  bool regroups;                          // counts the initial formation as a regroup (README)
  std::string_view default_method;        // "" for none
  std::vector<std::string_view> methods;  // creation methods it can regroup with
  std::string_view initial_method;        // forms the initial groups when the run names no method
};

/// The balancers and creation methods a study may name, supplied by the libraries that implement them
/// (mcmclb::catalog() in balancers/), so the study library validates names at parse time without linking MPI.
struct Catalog {
  std::vector<BalancerInfo> balancers;
  std::vector<std::string> methods;                              // known creation methods, in order
  std::vector<std::pair<std::string, std::string>> unsupported;  // method -> why this build cannot use it

  /// Throws InputError (key balancer) for an unknown name, listing the known ones.
  [[nodiscard]] const BalancerInfo& balancer(std::string_view name) const;
  /// Throws InputError (key method) for an unknown or unsupported method.
  void check_method(const std::string& name) const;
};

}  // namespace mcmclb
