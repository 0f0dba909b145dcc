// What one kernel run is: every parameter resolved to a single value. Plain data, no MPI and no YAML, so the
// study library (which produces runs) and the kernel (which executes them) share it without depending on each
// other.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace mcmclb {

/// A workload parameter's value; integers stay exact (seeds use all 64 bits).
using ParamValue = std::variant<int64_t, double>;

/// Which workload model a run uses and its parameters (the keys workload.<key>, defined by the models in
/// kernel/src/workloads/). A key not set here has the default its model declares.
struct WorkloadSpec {
  std::string model = "cyclic";
  std::map<std::string, ParamValue, std::less<>> values;  // keys set explicitly

  /// The value of key (set here, else the registered default); throws std::out_of_range for an unknown key.
  [[nodiscard]] int64_t integer(std::string_view key) const;
  [[nodiscard]] double real(std::string_view key) const;
  [[nodiscard]] ParamValue value(std::string_view key) const;
  void set(std::string_view key, ParamValue v) { values.insert_or_assign(std::string(key), v); }
};

/// How emulated work passes time: sleeping (the core is free for other ranks) or busy until a deadline.
enum class WorkMode { sleep, spin };
inline constexpr std::array<std::pair<std::string_view, WorkMode>, 2> kWorkModes = {
    {{"sleep", WorkMode::sleep}, {"spin", WorkMode::spin}}};
[[nodiscard]] constexpr std::string_view to_string(WorkMode m) noexcept {
  return m == WorkMode::spin ? "spin" : "sleep";
}

struct WorkSpec {
  WorkMode mode = WorkMode::sleep;
  double jitter_pct = 0.0;  // per-item cost varies uniformly within +- this percentage
  uint64_t seed = 1;        // jitter seed
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
