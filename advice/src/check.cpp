// SPDX-License-Identifier: BSD-3-Clause
// What `mcmclb advise --check` may say of its runs (mcmclb/advice_check.hpp).
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "mcmclb/advice_check.hpp"
#include "mcmclb/stats.hpp"

namespace mcmclb::advice {

namespace {

std::string whole_percent(double share) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f %%", 100 * share);
  return text;
}

}  // namespace

CheckVerdict check_verdict(const CheckOutcome& c) {
  CheckVerdict v;
  const std::string assumed = "the tolerance stays assumed";
  if (c.real_status != 0 || c.sim_status != 0) {
    // A failed run may be the set-up whose error is largest: the errors of the rest could understate the tolerance.
    v.words = "not every run of the check finished (real exit " + std::to_string(c.real_status) + ", simulated exit " +
              std::to_string(c.sim_status) + "): no error is formed from the rest; " + assumed;
    return v;
  }
  if (!c.none_real || !c.none_sim) {
    const std::string lacks = !c.none_real && !c.none_sim ? "real (check-real/) or simulated (check-sim/)"
                              : !c.none_real              ? "real (check-real/)"
                                                          : "simulated (check-sim/)";
    v.words = "every run exited 0, but none's replay left no " + lacks +
              " whole time: every error is a ratio to none's or none's own, so none forms; " + assumed;
    return v;
  }
  if (c.balancers == 0) {
    v.forms = CheckForms::none_alone;
    v.words =
        "the check replayed none only, so no balancer's whole time over none's forms: it measures none's simulated "
        "whole time against its real replay, the error of none's regret against the ideal";
    return v;
  }
  if (c.measured == 0) {
    v.words =
        "every run exited 0, but no balancer besides none left both a real and a simulated whole time: no "
        "ratio to none forms; " +
        assumed;
    return v;
  }
  v.forms = CheckForms::ratios;
  return v;
}

ReplayError none_error(const std::string& label, const std::vector<double>& real_s, double sim_s) {
  ReplayError e;
  e.label = label;
  e.n = real_s.size();
  e.sim_ratio = 1;  // none's simulated whole time is the reference: the ratio asks how far the real one is from it
  const stats::MedianCi a = stats::median_ci(real_s);
  e.real_ratio = a.median / sim_s;
  if (a.low && a.high && *a.low > 0) {
    e.real_low = *a.low / sim_s;
    e.real_high = *a.high / sim_s;
    // As replay_error: the simulated over the measured, less 1, at the interval's far ends.
    e.error_low = e.sim_ratio / *e.real_high - 1;
    e.error_high = e.sim_ratio / *e.real_low - 1;
  }
  return e;
}

int busy_limit_to_accept(double busy_share) {
  const double pct = 100 * std::max(0.0, busy_share);
  return std::min(100, 10 * (static_cast<int>(std::floor(pct / 10)) + 1));
}

std::string busy_refusal(double busy_share, double limit_share, const std::string& host, const std::string& measured,
                         const std::string& so, bool made) {
  const std::string limit = whole_percent(limit_share);
  // The choices, each with its price: a quieter host costs waiting, a higher limit costs what the error means (the
  // other programs slow the real runs unevenly, and the check cannot tell that from the simulation's own error; the
  // tolerance's words then name the load), and no check leaves the tolerance assumed.
  const std::string quieter = made ? "advise --check into a new --out folder (this one keeps its real runs) "
                                     "when the host is at most " +
                                         limit + " busy"
                                   : "advise --check when the host is at most " + limit + " busy";
  return host + " " + whole_percent(busy_share) + " busy" + (measured.empty() ? "" : " " + measured) +
         ", more than the " + limit + " a check allows: " + so + " (allowed: " + quieter + "; --check-busy " +
         std::to_string(busy_limit_to_accept(busy_share)) +
         " to accept this load, whose cost is that the errors then count the other programs' load as the "
         "simulation's, the tolerance naming the load; or advise without --check, the tolerance assumed)";
}

}  // namespace mcmclb::advice
