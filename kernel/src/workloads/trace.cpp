// SPDX-License-Identifier: BSD-3-Clause
// Workload `trace`: the chains and item costs of a recorded trace file (mcmclb/trace.hpp, workload.file), mapped
// onto the study's chains by workload.map (the recorded layout, or a draw of it seeded by workload.seed).
#include <algorithm>
#include <string>
#include <string_view>

#include "mcmclb/input_error.hpp"
#include "mcmclb/text.hpp"
#include "mcmclb/workload.hpp"

namespace mcmclb {

namespace {

/// workload.plan_file's trace, checked to hold the replayed trace's walkers and items (a plan of other walkers
/// would plan items that do not exist), or null where the key is not set.
std::shared_ptr<const Trace> load_plan(const WorkloadSpec& s, const Trace& replayed) {
  if (s.plan_file.empty()) return nullptr;
  std::shared_ptr<const Trace> plan;
  try {
    plan = load_trace(s.plan_file, s.extrapolate, s.speedups);
  } catch (const InputError& e) {  // the file's own errors, named by the key that gave it
    const std::string_view said = "key workload.file: ";
    const std::string what = e.what();
    if (!what.starts_with(said)) throw;
    throw InputError("key workload.plan_file: " + what.substr(said.size()));
  }
  const auto refuse = [&](const std::string& what) {
    throw InputError("key workload.plan_file: " + printable(s.plan_file, 200) + " " + what + " (allowed: a trace " +
                     "of the walkers and items of workload.file " + printable(s.file, 200) + ")");
  };
  if (plan->chains() != replayed.chains()) {
    refuse("holds walkers 0 to " + std::to_string(plan->chains() - 1) + ", workload.file 0 to " +
           std::to_string(replayed.chains() - 1));
  }
  for (int c = 0; c < plan->chains(); ++c) {
    if (plan->items(c) != replayed.items(c)) {
      refuse("gives walker " + std::to_string(c) + " " + std::to_string(plan->items(c)) + " items, workload.file " +
             std::to_string(replayed.items(c)));
    }
  }
  return plan;
}

class Replay final : public Workload {
 public:
  explicit Replay(const WorkloadSpec& s)
      : trace_(load_trace(s.file, s.extrapolate, s.speedups)),
        plan_(load_plan(s, *trace_)),
        order_(replay_order(trace_, s.map, static_cast<uint64_t>(s.integer("seed")))),
        once_(s.map == TraceMap::once) {
    if (!once_) return;
    shares_ = trace_->recorded_shares();
    firsts_.assign(shares_.size(), 0);
    for (std::size_t g = 1; g < shares_.size(); ++g) firsts_[g] = firsts_[g - 1] + shares_[g - 1];
  }
  int64_t items(int index) const override { return index < 0 ? 0 : trace_->items(trace_chain(index)); }
  const Trace* trace() const noexcept override { return trace_.get(); }
  const Trace* plan_trace() const noexcept override { return plan_ ? plan_.get() : trace_.get(); }
  int trace_chain(int index) const noexcept override {
    return (*order_)[static_cast<std::size_t>(index) % order_->size()];
  }
  bool indexes_groups() const noexcept override { return true; }
  std::optional<int> dealt(int g, int groups, int c) const noexcept override {
    if (!once_) return std::nullopt;
    // The layout holds the recorded groups one after another: at their count, group g's share starts where the
    // earlier groups' end. Elsewhere the first C mod groups groups take one chain more, as the library deals.
    if (static_cast<std::size_t>(groups) == shares_.size()) {
      return c < shares_[static_cast<std::size_t>(g)] ? firsts_[static_cast<std::size_t>(g)] + c : -1;
    }
    const int count = trace_->chains(), q = count / groups, r = count % groups;
    return c < q + (g < r ? 1 : 0) ? g * q + std::min(g, r) + c : -1;
  }
  int most_dealt(int groups) const noexcept override {
    if (!once_) return 0;
    if (static_cast<std::size_t>(groups) == shares_.size()) return *std::max_element(shares_.begin(), shares_.end());
    return (trace_->chains() + groups - 1) / groups;
  }

 private:
  std::shared_ptr<const Trace> trace_;
  std::shared_ptr<const Trace> plan_;              // workload.plan_file, or null: trace_ plans
  std::shared_ptr<const std::vector<int>> order_;  // replay_order: study chain k replays order[k mod C]
  bool once_ = false;                              // workload.map once: the walkers dealt, each once (dealt())
  std::vector<int> shares_, firsts_;               // once: the recorded groups' shares, and where each starts
};

void check(const WorkloadSpec& s) {
  if (s.file.empty()) {
    throw InputError("key workload.file: missing (allowed: the trace file that workload.model trace replays)");
  }
  // Every error of the files, before any work.
  (void)load_plan(s, *load_trace(s.file, s.extrapolate, s.speedups));
}
}  // namespace

WorkloadEntry trace_workload() {
  return {.name = "trace",
          .params = {seed_param()},
          .make = [](const WorkloadSpec& s) -> std::unique_ptr<Workload> { return std::make_unique<Replay>(s); },
          .check = check};
}

}  // namespace mcmclb
