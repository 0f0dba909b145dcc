// SPDX-License-Identifier: BSD-3-Clause
// What `mcmclb advise --check` may say of its runs (advise/src/check.cpp runs them), apart from the runs, so that
// each sentence can be tested on hand-made outcomes: which error the check can form from what finished, none's own
// error where it replayed none alone, and what a user on a busy host may do.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "mcmclb/advice.hpp"

namespace mcmclb::advice {

/// What the check's runs left: the two sweeps' exit statuses, and which whole times the folders hold.
struct CheckOutcome {
  int real_status = 0, sim_status = 0;  // the real and the simulated sweep's exit status
  std::size_t balancers = 0;            // the balancers checked besides none
  std::size_t measured = 0;             // the set-ups besides none with both real and simulated whole times
  bool none_real = false;               // none has real whole times
  bool none_sim = false;                // none has a simulated whole time above 0
};

/// What the check can measure from its outcome.
enum class CheckForms {
  nothing,     // no error: the tolerance stays assumed
  ratios,      // each balancer's whole time over none's, simulated against real
  none_alone,  // none was checked alone: its simulated whole time against its real replay
};

struct CheckVerdict {
  CheckForms forms = CheckForms::nothing;
  /// Why, in a line after "advise: check: " (empty where the ratios form as they should).
  std::string words;
};

/// Which error the check forms and, where it is not the ratios, why, in words true of the outcome: a check of none
/// alone has no ratio to none, but none's own replay still measures the simulation; a sweep that failed, or a set-up
/// the folders lack, is named as such.
[[nodiscard]] CheckVerdict check_verdict(const CheckOutcome& outcome);

/// none's simulated whole time (sim_s) against its real replay's whole times (real_s): real_ratio is their median
/// over sim_s (its interval the median's), sim_ratio 1, and the error sim_s / real - 1 at the interval's ends, as
/// replay_error's. A check of none alone measures this: none's regret against the ideal, which no set-up beats and
/// which the trace gives exactly, is off by just this error.
[[nodiscard]] ReplayError none_error(const std::string& label, const std::vector<double>& real_s, double sim_s);

/// The --check-busy value that would accept a host busy_share busy (0 to 1): the next ten percent above it, at
/// most 100.
[[nodiscard]] int busy_limit_to_accept(double busy_share);

/// Why a check is not run, or not trusted, on a host busy_share busy (0 to 1) where limit_share allows less, and what
/// the user may do: check when the host is quieter, accept the load with a higher --check-busy (its cost in honesty:
/// the errors then count the other programs' load as the simulation's), or go without --check. One line: host
/// ("the host is"), the load, measured ("(its CPU time over 1 s, /proc/stat)"), the limit, so (what follows), then
/// the choices. made: the real runs were made (now or by an earlier check in the folder), and advise run again would
/// keep them, so a quieter host needs a new folder.
[[nodiscard]] std::string busy_refusal(double busy_share, double limit_share, const std::string& host,
                                       const std::string& measured, const std::string& so, bool made);

}  // namespace mcmclb::advice
