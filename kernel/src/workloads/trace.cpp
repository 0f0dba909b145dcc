// SPDX-License-Identifier: BSD-3-Clause
// Workload `trace`: the chains and item costs of a recorded trace file (mcmclb/trace.hpp, workload.file), mapped
// onto the study's chains by workload.map (tile, or a draw seeded by workload.seed).
#include "mcmclb/input_error.hpp"
#include "mcmclb/workload.hpp"

namespace mcmclb {

namespace {
class Replay final : public Workload {
 public:
  explicit Replay(const WorkloadSpec& s)
      : trace_(load_trace(s.file, s.extrapolate)), map_(s.map), seed_(static_cast<uint64_t>(s.integer("seed"))) {}
  int64_t items(int index) const override { return trace_->items(trace_chain(index)); }
  const Trace* trace() const noexcept override { return trace_.get(); }
  int trace_chain(int index) const noexcept override {
    return mcmclb::trace_chain(map_, seed_, trace_->chains(), index);
  }
  bool indexes_groups() const noexcept override { return true; }

 private:
  std::shared_ptr<const Trace> trace_;
  TraceMap map_;
  uint64_t seed_;
};

void check(const WorkloadSpec& s) {
  if (s.file.empty()) {
    throw InputError("key workload.file: missing (allowed: the trace file that workload.model trace replays)");
  }
  (void)load_trace(s.file, s.extrapolate);  // every error of the file, before any work
}
}  // namespace

WorkloadEntry trace_workload() {
  return {.name = "trace",
          .params = {seed_param()},
          .make = [](const WorkloadSpec& s) -> std::unique_ptr<Workload> { return std::make_unique<Replay>(s); },
          .check = check};
}

}  // namespace mcmclb
