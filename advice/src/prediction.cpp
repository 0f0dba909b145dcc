// SPDX-License-Identifier: BSD-3-Clause
// The simulation's measured error on a platform (mcmclb/advice.hpp, prediction_error): prediction.csv read into a
// source of the tolerance. Text in, no I/O: apps/advise_plan.cpp reads the file.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>

#include "mcmclb/advice.hpp"
#include "mcmclb/advice_check.hpp"    // busy_limit_to_accept
#include "mcmclb/configurations.hpp"  // parse_finite
#include "mcmclb/csv.hpp"
#include "mcmclb/input_error.hpp"
#include "mcmclb/text.hpp"

namespace mcmclb::advice {

namespace {

constexpr const char* kAllowed = "(allowed: the prediction.csv plots/prediction_check.py writes)";

/// text as an integer in [low, high], the whole of it; nothing otherwise.
std::optional<long> whole_number(const std::string& text, long low, long high) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos || text.size() > 9) {
    return std::nullopt;
  }
  const long v = std::strtol(text.c_str(), nullptr, 10);
  return v >= low && v <= high ? std::optional<long>(v) : std::nullopt;
}

bool is_hex16(const std::string& text) {
  return text.size() == 16 && text.find_first_not_of("0123456789abcdef") == std::string::npos;
}

}  // namespace

Prediction prediction_error(std::string_view text, const std::string& name, const std::string& platform_fnv1a64,
                            const std::string& trace_fnv1a64, double busy_limit) {
  const std::string file = printable(name, 200);
  std::vector<std::string> lines;
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string line(text.substr(start, end - start));
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
    start = end + 1;
  }
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  // A file written before the trace column: every row is read and checked, but none names the trace it replayed.
  const std::string_view before = kPredictionHeader.substr(0, kPredictionHeader.rfind(','));
  if (lines.empty() || (lines.front() != kPredictionHeader && lines.front() != before)) {
    throw InputError(file + ": not a prediction.csv: its header must be " + std::string(kPredictionHeader) + " " +
                     kAllowed);
  }
  if (lines.size() < 2) throw InputError(file + ": no set-up measured " + kAllowed);
  const csv::Row header = csv::split_line(lines.front());
  const bool names_traces = lines.front() == kPredictionHeader;
  const auto at = [&](const std::string& column) {
    return static_cast<std::size_t>(std::find(header.begin(), header.end(), column) - header.begin());
  };
  ToleranceSource s;
  s.kind = "prediction";
  s.what = "the simulation on this platform against real runs";
  double low = 0, high = 0;
  std::string widest;
  std::size_t rows = 0;
  std::set<std::string> others;  // the traces the rows replayed that are not the one advised on
  for (std::size_t k = 1; k < lines.size(); ++k) {
    const std::string where = file + ": row " + std::to_string(k + 1) + ": ";
    const csv::Row f = csv::split_line(lines[k]);
    if (f.size() != header.size()) {
      throw InputError(where + std::to_string(f.size()) + " fields (allowed: " + std::to_string(header.size()) +
                       ", as the header)");
    }
    const std::string& check = f[at("check")];
    if (check != "model" && check != "replay" && check != "application") {
      throw InputError(where + "check '" + printable(check) + "' (allowed: model, replay, application)");
    }
    const auto nprocs = whole_number(f[at("nprocs")], 1, 1 << 20);
    if (!nprocs) throw InputError(where + "nprocs '" + printable(f[at("nprocs")]) + "' (allowed: 1 to 2^20)");
    if (s.nprocs != 0 && s.nprocs != *nprocs) {
      throw InputError(where + "nprocs " + std::to_string(*nprocs) + " differs from the rows above (" +
                       std::to_string(s.nprocs) + "; allowed: one check at one rank count)");
    }
    s.nprocs = static_cast<int>(*nprocs);
    // An interval of the median needs 6 runs (stats::median_ci): fewer measure no error to bound the advice by.
    const auto n = whole_number(f[at("n")], 6, 1000000);
    if (!n) throw InputError(where + "n '" + printable(f[at("n")]) + "' (allowed: 6 or more real runs)");
    const auto ratio_of = [&](const std::string& column) {
      const auto v = parse_finite(f[at(column)]);
      if (!v || !(*v > 0)) {
        throw InputError(where + column + " '" + printable(f[at(column)]) + "' (allowed: a positive number)");
      }
      return *v;
    };
    const double lo = ratio_of("ratio_low"), mid = ratio_of("ratio"), hi = ratio_of("ratio_high");
    if (!(lo <= mid && mid <= hi)) {
      throw InputError(where + "ratio " + f[at("ratio")] +
                       " outside [ratio_low, ratio_high] (allowed: low <= " + "ratio <= high)");
    }
    const std::string& busy_text = f[at("busy_pct")];
    std::optional<double> busy;
    if (!busy_text.empty()) {
      busy = parse_finite(busy_text);
      if (!busy || *busy < 0 || *busy > 100) {
        throw InputError(where + "busy_pct '" + printable(busy_text) + "' (allowed: empty, or 0 to 100)");
      }
    }
    const std::string& platform = f[at("platform_fnv1a64")];
    if (!is_hex16(platform)) {
      throw InputError(where + "platform_fnv1a64 '" + printable(platform) + "' (allowed: 16 lowercase hex digits)");
    }
    if (platform != platform_fnv1a64) {
      throw InputError(where + "measured on the platform whose fnv1a64 is " + platform + ", not on --platform's (" +
                       platform_fnv1a64 + "; allowed: the check of the platform advise simulates on)");
    }
    const std::string trace = names_traces ? f[at("trace_fnv1a64")] : std::string();
    if (!trace.empty() && !is_hex16(trace)) {
      throw InputError(where + "trace_fnv1a64 '" + printable(trace) + "' (allowed: empty, or 16 lowercase hex digits)");
    }
    // kToleranceRule: only the rows that replayed the trace advised on measure the error its advice rests on.
    if (trace_fnv1a64.empty() || trace != trace_fnv1a64) {
      if (names_traces) others.insert(trace.empty() ? std::string("an emulated workload") : "trace " + trace);
      continue;
    }
    if (busy) {
      // As --check: the real runs of a busy host time the other programs too, and their error would set the
      // tolerance.
      if (*busy / 100 > busy_limit) {
        char text[320];
        std::snprintf(text, sizeof text,
                      "measured on a host %.3g %% busy, more than the %.3g %% --check-busy allows: its real runs timed "
                      "the other programs too, and their error would set the tolerance (allowed: "
                      "plots/prediction_check.py on a quieter host, --check-busy %d to accept this load, or advise "
                      "without --prediction)",
                      *busy, 100 * busy_limit, busy_limit_to_accept(*busy / 100));
        throw InputError(where + text);
      }
      if (!s.busy || *busy / 100 > *s.busy) s.busy = *busy / 100;
    }
    s.n = rows == 0 ? static_cast<std::size_t>(*n) : std::min(s.n, static_cast<std::size_t>(*n));
    const double error = std::max(std::abs(lo - 1), std::abs(hi - 1));
    if (rows == 0 || error > s.fraction) {
      s.fraction = error;
      widest = printable(f[at("setup")]) + (check == "model" ? std::string() : " against the " + check);
    }
    low = rows == 0 ? lo : std::min(low, lo);
    high = rows == 0 ? hi : std::max(high, hi);
    ++rows;
  }
  Prediction out;
  if (rows == 0) {
    const std::string measured = names_traces ? "its rows replayed " + join(others, " and ")
                                              : "it names no trace it replayed (written before trace_fnv1a64)";
    const std::string advised =
        trace_fnv1a64.empty() ? "advise is given no trace file" : "not the trace advised on (" + trace_fnv1a64 + ")";
    out.not_used = file + " is not used in the tolerance: " + measured + ", " + advised +
                   "; plots/prediction_check.py --trace TRACE.csv checks yours";
    return out;
  }
  char detail[320];
  std::snprintf(detail, sizeof detail, "simulated / real %.3f to %.3f over %zu set-ups of your trace, widest %s, %s",
                low, high, rows, widest.c_str(), tolerance_percent(s.fraction).c_str());
  s.detail = detail;
  out.source = s;
  return out;
}

}  // namespace mcmclb::advice
