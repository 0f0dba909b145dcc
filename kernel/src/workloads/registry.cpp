// SPDX-License-Identifier: BSD-3-Clause
// The workload registry (mcmclb/workload.hpp): the models listed in workloads.def and their keys.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "mcmclb/input_error.hpp"
#include "mcmclb/workload.hpp"

namespace mcmclb {

#define MCMCLB_WORKLOAD(name) WorkloadEntry name##_workload();
#include "workloads.def"
#undef MCMCLB_WORKLOAD

namespace {

bool same(const WorkloadParam& a, const WorkloadParam& b) {
  return a.key == b.key && a.default_value == b.default_value && a.lo == b.lo && a.hi == b.hi && a.lo_open == b.lo_open;
}

/// Built once, on first use, and never changed: no mutable global state (SMPI may run ranks as threads).
struct Registry {
  std::vector<WorkloadEntry> entries;
  std::vector<WorkloadParam> params;

  Registry() {
#define MCMCLB_WORKLOAD(name) entries.push_back(name##_workload());
#include "workloads.def"
#undef MCMCLB_WORKLOAD
    for (const auto& e : entries) {
      for (const auto& p : e.params) {
        const auto known = std::find_if(params.begin(), params.end(), [&](const auto& q) { return q.key == p.key; });
        if (known == params.end()) {
          if (p.key != seed_param().key) params.push_back(p);
        } else if (!same(*known, p)) {
          throw std::logic_error("workload " + std::string(e.name) + " declares key " + std::string(p.key) +
                                 " differently from an earlier model");
        }
      }
    }
    params.push_back(seed_param());
  }
};

const Registry& registry() {
  static const Registry r;
  return r;
}

}  // namespace

const WorkloadParam& seed_param() {
  static const WorkloadParam seed{
      .key = "seed", .default_value = int64_t{1}, .lo = int64_t{0}, .hi = std::numeric_limits<int64_t>::max()};
  return seed;
}

std::span<const WorkloadEntry> workload_entries() { return registry().entries; }

std::span<const WorkloadParam> workload_params() { return registry().params; }

const WorkloadEntry& workload_entry(std::string_view name) {
  std::vector<std::string_view> names;
  for (const auto& e : registry().entries) {
    if (e.name == name) return e;
    names.push_back(e.name);
  }
  throw InputError("key workload.model: '" + std::string(name) + "' is not allowed (allowed: " + join(names) + ")");
}

bool workload_uses(const WorkloadSpec& spec, std::string_view key) {
  const auto& params = workload_entry(spec.model).params;
  return std::any_of(params.begin(), params.end(), [&](const auto& p) { return p.key == key; });
}

std::unique_ptr<Workload> make_workload(const WorkloadSpec& spec) { return workload_entry(spec.model).make(spec); }

ParamValue WorkloadSpec::value(std::string_view key) const {
  if (const auto it = values.find(key); it != values.end()) return it->second;
  for (const auto& p : workload_params()) {
    if (p.key == key) return p.default_value;
  }
  throw std::out_of_range("no workload key '" + std::string(key) + "'");
}

int64_t WorkloadSpec::integer(std::string_view key) const { return std::get<int64_t>(value(key)); }

double WorkloadSpec::real(std::string_view key) const { return std::get<double>(value(key)); }

}  // namespace mcmclb
