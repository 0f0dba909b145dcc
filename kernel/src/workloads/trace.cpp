// SPDX-License-Identifier: BSD-3-Clause
// Workload `trace`: the chains and item costs of a recorded trace file (mcmclb/trace.hpp, workload.file), mapped
// onto the study's chains by workload.map (the recorded layout, or a draw of it seeded by workload.seed).
#include "mcmclb/input_error.hpp"
#include "mcmclb/workload.hpp"

namespace mcmclb {

namespace {
class Replay final : public Workload {
 public:
  explicit Replay(const WorkloadSpec& s)
      : trace_(load_trace(s.file, s.extrapolate, s.speedups)),
        order_(replay_order(trace_, s.map, static_cast<uint64_t>(s.integer("seed")))) {}
  int64_t items(int index) const override { return trace_->items(trace_chain(index)); }
  const Trace* trace() const noexcept override { return trace_.get(); }
  int trace_chain(int index) const noexcept override {
    return (*order_)[static_cast<std::size_t>(index) % order_->size()];
  }
  bool indexes_groups() const noexcept override { return true; }

 private:
  std::shared_ptr<const Trace> trace_;
  std::shared_ptr<const std::vector<int>> order_;  // replay_order: study chain k replays order[k mod C]
};

void check(const WorkloadSpec& s) {
  if (s.file.empty()) {
    throw InputError("key workload.file: missing (allowed: the trace file that workload.model trace replays)");
  }
  (void)load_trace(s.file, s.extrapolate, s.speedups);  // every error of the file, before any work
}
}  // namespace

WorkloadEntry trace_workload() {
  return {.name = "trace",
          .params = {seed_param()},
          .make = [](const WorkloadSpec& s) -> std::unique_ptr<Workload> { return std::make_unique<Replay>(s); },
          .check = check};
}

}  // namespace mcmclb
