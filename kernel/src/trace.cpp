// SPDX-License-Identifier: BSD-3-Clause
// Trace files (mcmclb/trace.hpp): parsing, validation, the speed-up model and the chain map.
#include "mcmclb/trace.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <numeric>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "mcmclb/input_error.hpp"
#include "mcmclb/text.hpp"
#include "mcmclb/workload.hpp"

namespace mcmclb {

namespace {

constexpr int kMaxTraceChains = 1 << 24;
constexpr int64_t kMaxTraceItems = int64_t{1} << 31;
constexpr int kMaxRanks = 1 << 24;
constexpr double kMaxSeconds = 1e6;
constexpr std::uintmax_t kMaxTraceBytes = std::uintmax_t{256} << 20;

enum Column { kChain, kItem, kRanks, kSeconds, kSpeedup, kGroup, kColumns };
constexpr std::array<std::string_view, kColumns> kNames = {"chain", "item", "ranks", "seconds", "speedup", "group"};

/// Where an error lies, for the one line every error is.
struct Place {
  const std::string& file;
  int64_t row;
  [[nodiscard]] InputError error(Column c, std::string_view field, std::string_view allowed) const {
    return InputError("trace file " + file + " row " + std::to_string(row) + " column " + std::string(kNames[c]) +
                      ": '" + std::string(field) + "' is not allowed (allowed: " + std::string(allowed) + ")");
  }
  [[nodiscard]] InputError error(std::string_view what) const {
    return InputError("trace file " + file + " row " + std::to_string(row) + ": " + std::string(what));
  }
};

std::optional<int64_t> parse_int(std::string_view s) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

std::optional<double> parse_real(std::string_view s) {
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty() || !std::isfinite(v)) return std::nullopt;
  return v;
}

int64_t int_field(const Place& at, Column c, std::string_view s, int64_t lo, int64_t hi, std::string_view allowed) {
  const auto v = parse_int(s);
  if (!v || *v < lo || *v > hi) throw at.error(c, s, allowed);
  return *v;
}

constexpr std::string_view kRunLineAllowed =
    "'# run: ranks=P groups=G balancer=NAME seconds=S [share=F] [walkers=HEX]', P and G from 1 to 2^24, NAME a "
    "balancer's name, S seconds > 0, F from 0 to 1, HEX 1 to 16 hex digits, as mcmclb::walkers writes it";

/// The run line's values: `# run: ranks=P groups=G balancer=NAME seconds=S`, each key once, in any order, and
/// optionally `share=F` and `walkers=HEX`; an earlier run's line (kTraceEarlierRunLine) the same. The error: what is
/// wrong, or nothing.
std::optional<std::string> parse_run_keys(std::string_view line, RecordedRun& run) {
  const std::size_t colon = line.find(':');
  std::string_view rest = colon == std::string_view::npos ? std::string_view() : line.substr(colon + 1);
  const std::string_view what =
      line.substr(0, kTraceEarlierRunLine.size()) == kTraceEarlierRunLine ? "the earlier run line" : "the run line";
  const std::string bad = std::string(what) + " is not " + std::string(kRunLineAllowed);
  int seen = 0;
  while (!rest.empty()) {
    const std::size_t start = rest.find_first_not_of(' ');
    if (start == std::string_view::npos) break;
    rest = rest.substr(start);
    const std::size_t end = std::min(rest.find(' '), rest.size());
    const std::string_view token = rest.substr(0, end);
    rest = rest.substr(end);
    const std::size_t eq = token.find('=');
    const std::string_view key = token.substr(0, eq), value = eq == std::string_view::npos ? "" : token.substr(eq + 1);
    const auto count = [&](int bit) {
      if ((seen & bit) != 0 || value.empty()) return false;
      seen |= bit;
      return true;
    };
    if (key == "ranks" || key == "groups") {
      if (!count(key == "ranks" ? 1 : 2)) return bad;
      const auto v = parse_int(value);
      if (!v || *v < 1 || *v > kMaxRanks)
        return std::string(what) + "'s " + std::string(key) + " is not " + std::string(kRunLineAllowed);
      (key == "ranks" ? run.ranks : run.groups) = static_cast<int>(*v);
    } else if (key == "balancer") {
      if (!count(4)) return bad;
      if (value.size() > 64 ||
          value.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != std::string_view::npos)
        return std::string(what) + "'s balancer is not " + std::string(kRunLineAllowed);
      run.balancer = value;
    } else if (key == "seconds") {
      if (!count(8)) return bad;
      const auto v = parse_real(value);
      if (!v || !(*v > 0)) return std::string(what) + "'s seconds is not " + std::string(kRunLineAllowed);
      run.seconds = *v;
    } else if (key == "share") {
      if (!count(16)) return bad;
      const auto v = parse_real(value);
      if (!v || *v < 0 || *v > 1) return std::string(what) + "'s share is not " + std::string(kRunLineAllowed);
      run.share = *v;
    } else if (key == "walkers") {
      if (!count(32)) return bad;
      if (value.size() > 16 || value.find_first_not_of("0123456789abcdef") != std::string_view::npos)
        return std::string(what) + "'s walkers is not " + std::string(kRunLineAllowed);
      run.walkers = value;
    } else {
      return bad;
    }
  }
  if ((seen & 15) != 15 || run.groups > run.ranks) return bad;
  return std::nullopt;
}

RecordedRun parse_run_line(std::string_view line, const Place& at) {
  RecordedRun run;
  if (const auto error = parse_run_keys(line, run)) throw at.error(*error);
  return run;
}

std::vector<std::string_view> split(std::string_view line) {
  std::vector<std::string_view> fields;
  for (std::size_t start = 0;;) {
    const std::size_t comma = line.find(',', start);
    fields.push_back(line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) return fields;
    start = comma + 1;
  }
}

}  // namespace

namespace {
/// A number as every CSV of mcmclb writes it (csv::number's 9 significant digits).
std::string number_text(double v) {
  char text[64];
  std::snprintf(text, sizeof text, "%.9g", v);
  return text;
}
}  // namespace

std::string run_line(std::string_view prefix, const RecordedRun& run) {
  std::string text = std::string(prefix) + " ranks=" + std::to_string(run.ranks) +
                     " groups=" + std::to_string(run.groups) + " balancer=" + run.balancer +
                     " seconds=" + number_text(run.seconds);
  if (run.share > 0) text += " share=" + number_text(run.share);
  if (!run.walkers.empty()) text += " walkers=" + run.walkers;
  return text;
}

std::optional<RecordedRun> parse_run_line(std::string_view line) {
  RecordedRun run;
  if (line.substr(0, kTraceRunLine.size()) != kTraceRunLine &&
      line.substr(0, kTraceEarlierRunLine.size()) != kTraceEarlierRunLine)
    return std::nullopt;
  if (parse_run_keys(line, run)) return std::nullopt;
  return run;
}

std::string set_aside_line(const std::string& file, const SetAside& s) {
  const std::string walker = s.chain < 0 ? std::string("*") : std::to_string(s.chain);
  const std::string ranks = std::to_string(s.ranks) + (s.ranks == 1 ? " rank" : " ranks");
  return "trace file " + printable(file, 200) + " row " + std::to_string(s.row) + ": walker " + walker +
         "'s speed-up " + number_text(s.speedup) + " at " + ranks + " is above " + std::to_string(s.ranks) +
         ", more than " + ranks + " can give: set aside as a measurement error" +
         (s.size_dropped ? " (no repetition of that size is left, so the size is dropped)" : "") +
         (s.trimmed_low > 0
              ? " (with it, the " +
                    std::string(s.trimmed_low == 1 ? "lowest repetition"
                                                   : std::to_string(s.trimmed_low) + " lowest repetitions") +
                    " of that size, so the kept ones stay centred)"
              : "") +
         " (allowed: at most the ranks, or any speed-up after a line '" + std::string(kTraceSuperlinear) +
         " WHY' above the header)";
}

double Trace::at(const Curve& curve, double m) const {
  if (m <= 1) return 1.0;
  const Points& points = curve.points;
  if (points.empty()) return m;
  const auto hi =
      std::lower_bound(points.begin(), points.end(), m, [](const auto& p, double size) { return p.first < size; });
  if (hi == points.end()) {
    const auto [last_m, last_s] = points.back();
    // Past the measured sizes no rule gives more than m ranks' worth: each rule's own law never exceeds m, but drawn
    // through a last speed-up above its size (kept only in a trace declared superlinear) it would carry that excess
    // to every size. A last speed-up above m stands until m passes it, so the curve still never falls.
    const double most = std::max(last_s, m);
    switch (extrapolation_) {
      case TraceExtrapolation::flat:
        return last_s;
      case TraceExtrapolation::perfect:
        return std::min(most, last_s * m / last_m);
      case TraceExtrapolation::amdahl: {
        const double p = curve.amdahl_p;
        const auto amdahl = [p](double size) { return 1.0 / ((1.0 - p) + p / size); };
        return std::min(most, last_s * amdahl(m) / amdahl(last_m));
      }
      case TraceExtrapolation::usl: {
        const auto usl = [&curve](double size) {
          return size / (1.0 + curve.usl_sigma * (size - 1.0) + curve.usl_kappa * size * (size - 1.0));
        };
        return std::min(most, last_s * usl(m) / usl(last_m));
      }
    }
  }
  if (hi->first == m) return hi->second;
  // Below the smallest given size, from (1, 1), the size every speed-up is relative to.
  const auto [lo_m, lo_s] = hi == points.begin() ? std::pair{1, 1.0} : *(hi - 1);
  const double w = (std::log2(m) - std::log2(lo_m)) / (std::log2(hi->first) - std::log2(lo_m));
  return lo_s + w * (hi->second - lo_s);
}

Trace::Curve Trace::fitted(Points points) {
  Curve c;
  // Least squares through the origin of y = p x, x = 1/m - 1, y = 1/s - 1: Amdahl's 1/s = (1 - p) + p/m made
  // linear. The (1, 1) point adds nothing; a super-linear speed-up asks p > 1 and a slow-down p < 0: kept in [0, 1].
  double xy = 0, xx = 0;
  for (const auto& [m, s] : points) {
    const double x = 1.0 / m - 1.0, y = 1.0 / s - 1.0;
    xy += x * y;
    xx += x * x;
  }
  c.amdahl_p = xx > 0 ? std::clamp(xy / xx, 0.0, 1.0) : 1.0;
  // Gunther's Universal Scalability Law s = m / (1 + sigma (m - 1) + kappa m (m - 1)), made linear: m/s - 1 =
  // sigma (m - 1) + kappa m (m - 1), least squares through the origin with sigma, kappa >= 0. Contention (sigma)
  // caps the speed-up as Amdahl's serial share does; coherence (kappa) makes it fall past a peak. Two terms pass
  // exactly through any two measured sizes, which tells nothing of a bend: below three sizes kappa is 0 and the
  // law is Amdahl's.
  double aa = 0, ab = 0, bb = 0, ay = 0, by = 0;
  for (const auto& [m, s] : points) {
    const double a = m - 1.0, b = m * (m - 1.0), y = m / s - 1.0;
    aa += a * a;
    ab += a * b;
    bb += b * b;
    ay += a * y;
    by += b * y;
  }
  const double det = aa * bb - ab * ab;
  if (points.size() >= 3 && det > 1e-12 * aa * bb) {
    c.usl_sigma = (ay * bb - by * ab) / det;
    c.usl_kappa = (by * aa - ay * ab) / det;
  }
  if (c.usl_sigma < 0 || c.usl_kappa <= 1e-12) {  // the best fit on the boundary: one term alone
    c.usl_kappa = 0;
    c.usl_sigma = aa > 0 ? ay / aa : 0;
  }
  if (c.usl_sigma < 0) c.usl_sigma = 0;
  c.points = std::move(points);
  return c;
}

double Trace::speedup(int chain, double m) const { return at(curve(chain), m); }

double Trace::best_speedup(int chain, double m) const {
  const Curve& c = curve(chain);
  // Between given sizes the curve is linear in log2(m), so its largest value up to m is at a given size or at m;
  // past the largest given size flat, perfect and amdahl only rise, and usl rises to its peak, where
  // 1 - sigma = kappa m^2, then falls.
  double best = std::max(1.0, at(c, m));
  for (const auto& [size, up] : c.points) {
    if (size <= m) best = std::max(best, up);
  }
  if (extrapolation_ == TraceExtrapolation::usl && !c.points.empty() && c.usl_kappa > 0 && c.usl_sigma < 1) {
    const double peak = std::sqrt((1 - c.usl_sigma) / c.usl_kappa);
    if (peak > c.points.back().first && peak < m) best = std::max(best, at(c, peak));
  }
  return best;
}

bool Trace::repetitions_differ() const noexcept {
  // The curves a replay takes: a chain's own, else `*`'s; a chain without items replays nothing.
  for (int c = 0; c < chains(); ++c) {
    const auto& reps = curve(c).repetitions;
    if (!single_s_[static_cast<std::size_t>(c)].empty() &&
        std::any_of(reps.begin(), reps.end(), [](const Repetitions& r) { return r.low < r.high; })) {
      return true;
    }
  }
  return false;
}

Trace Trace::parse(std::string_view text, const std::string& file, TraceExtrapolation extrapolation,
                   TraceSpeedups taken) {
  struct ItemRow {
    int64_t row, item;
    int ranks;
    double seconds;
    int group;  // -1: no group column
  };
  std::map<int, std::vector<ItemRow>> items;  // chain -> its item rows
  // chain (-1: `*`) -> ranks -> (its first row, the speed-ups given there: repetitions of one measurement)
  std::map<int, std::map<int, std::pair<int64_t, std::vector<double>>>> ups;
  int64_t row = 0;
  bool header_seen = false;
  bool incomplete = false;
  bool superlinear = false;
  std::string drift;
  std::vector<SetAside> set_aside;
  int given = 0;
  std::optional<RecordedRun> recorded;
  std::vector<RecordedRun> earlier;
  // The first run line (either kind) that names its walkers, and its row: every other that names them must agree.
  std::optional<std::pair<std::string, int64_t>> fingerprinted;
  std::size_t columns = kColumns - 1;  // kColumns with the group column
  std::vector<int> first_seen;         // chains in the order their first item row appears
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++row;
    const Place at{file, row};
    if (!line.empty() && line.back() == '\r') {
      throw at.error(
          "the line ends in \\r\\n, Windows line endings (allowed: \\n alone, as every CSV mcmclb reads; "
          "convert with: sed -i 's/\\r$//' FILE)");
    }
    if (!header_seen) {
      if (line.substr(0, 3) == "\xEF\xBB\xBF") {
        throw at.error(
            "the file starts with a UTF-8 byte-order mark, as some spreadsheets save CSV (allowed: none, as every "
            "file mcmclb itself reads; remove it with: sed -i '1s/^\\xEF\\xBB\\xBF//' FILE)");
      }
      // Lines before the header that start with '#' say where the trace came from (a recording's command and
      // commit); a person reads them, the replay does not.
      if (line.substr(0, kTraceIncomplete.size()) == kTraceIncomplete) incomplete = true;
      if (line.substr(0, kTraceSuperlinear.size()) == kTraceSuperlinear) superlinear = true;
      if (line.substr(0, kTraceDrift.size()) == kTraceDrift && drift.empty()) {
        drift = std::string(line.substr(kTraceDrift.size()));
        drift.erase(0, drift.find_first_not_of(' '));
      }
      if (line.substr(0, kTraceRunLine.size()) == kTraceRunLine) {
        if (recorded)
          throw at.error(
              "a second run line (allowed: one `# run:`, the recording's own; earlier runs "
              "of the same walkers as `# earlier run:` lines)");
        recorded = parse_run_line(line, at);
      }
      if (line.substr(0, kTraceEarlierRunLine.size()) == kTraceEarlierRunLine) {
        earlier.push_back(parse_run_line(line, at));
      }
      // Run lines are the runs of one program's walkers: their spread is the program's run-to-run spread, and the
      // rows replay the walkers the lines name. A line naming other walkers (a file joined from two recordings, or
      // edited by hand) would put another program's time into that spread. A line without the key names none.
      const bool is_run = line.substr(0, kTraceRunLine.size()) == kTraceRunLine;
      if (is_run || line.substr(0, kTraceEarlierRunLine.size()) == kTraceEarlierRunLine) {
        const std::string& walkers = is_run ? recorded->walkers : earlier.back().walkers;
        if (!walkers.empty() && !fingerprinted) {
          fingerprinted.emplace(walkers, row);
        } else if (!walkers.empty() && walkers != fingerprinted->first) {
          throw at.error(std::string(is_run ? "the run line" : "the earlier run line") + "'s walkers=" + walkers +
                         " differ from walkers=" + fingerprinted->first + " on row " +
                         std::to_string(fingerprinted->second) +
                         ": a run of other walkers (allowed: run lines of one program's walkers, one walkers=HEX "
                         "in a file or none; record each program into a file of its own)");
        }
      }
      if (!line.empty() && line.front() == '#') continue;
      if (line != kTraceHeader && line != kTraceHeaderWithGroup) {
        throw at.error("the header is '" + std::string(line) + "' (allowed: exactly " + std::string(kTraceHeader) +
                       " or " + std::string(kTraceHeaderWithGroup) + ", after any comment lines that start with #)");
      }
      if (line == kTraceHeaderWithGroup) columns = kColumns;
      header_seen = true;
      continue;
    }
    if (line.empty()) continue;  // blank lines, a hand-written file's
    const auto f = split(line);
    if (f.size() != columns) {
      throw at.error(std::to_string(f.size()) + (f.size() == 1 ? " field" : " fields") +
                     " (allowed: " + std::to_string(columns) + ", as the header " +
                     std::string(columns == kColumns ? kTraceHeaderWithGroup : kTraceHeader) + ")");
    }
    const int ranks = static_cast<int>(
        int_field(at, kRanks, f[kRanks], 1, kMaxRanks, "an integer from 1 to " + std::to_string(kMaxRanks)));
    if (!f[kItem].empty()) {  // an item row
      const int chain = static_cast<int>(int_field(at, kChain, f[kChain], 0, kMaxTraceChains - 1,
                                                   "an integer from 0 to " + std::to_string(kMaxTraceChains - 1)));
      const int64_t item =
          int_field(at, kItem, f[kItem], 0, kMaxTraceItems - 1,
                    "an integer from 0 to " + std::to_string(kMaxTraceItems - 1) + ", or empty on a speed-up row");
      const auto seconds = parse_real(f[kSeconds]);
      if (!seconds || *seconds < 0 || *seconds > kMaxSeconds) {
        throw at.error(kSeconds, f[kSeconds], "on an item row, a number of seconds from 0 to 1e6");
      }
      if (!f[kSpeedup].empty()) throw at.error(kSpeedup, f[kSpeedup], "empty on an item row (it has an item)");
      const int group = columns == kColumns ? static_cast<int>(int_field(at, kGroup, f[kGroup], 0, kMaxTraceChains - 1,
                                                                         "on an item row, the initial group that "
                                                                         "ran the chain, an integer from 0 to " +
                                                                             std::to_string(kMaxTraceChains - 1)))
                                            : -1;
      auto& rows = items[chain];
      if (rows.empty()) first_seen.push_back(chain);
      if (!rows.empty() && rows.front().group != group) {
        throw at.error(kGroup, f[kGroup],
                       "one group per chain; chain " + std::to_string(chain) + " has group " +
                           std::to_string(rows.front().group) + " on row " + std::to_string(rows.front().row));
      }
      rows.push_back({row, item, ranks, *seconds, group});
      continue;
    }
    if (columns == kColumns && !f[kGroup].empty()) {
      throw at.error(kGroup, f[kGroup], "empty on a speed-up row (a group is a chain's, on its item rows)");
    }
    // A speed-up row.
    const int chain = f[kChain] == "*"
                          ? -1
                          : static_cast<int>(int_field(at, kChain, f[kChain], 0, kMaxTraceChains - 1,
                                                       "an integer from 0 to " + std::to_string(kMaxTraceChains - 1) +
                                                           ", or * on a speed-up row"));
    if (!f[kSeconds].empty()) {
      throw at.error(kSeconds, f[kSeconds], "empty on a speed-up row (it has no item)");
    }
    const auto up = parse_real(f[kSpeedup]);
    if (!up || *up <= 0) throw at.error(kSpeedup, f[kSpeedup], "a number > 0 on a speed-up row (it has no item)");
    if (ranks == 1 && *up != 1.0) throw at.error(kSpeedup, f[kSpeedup], "1 at ranks 1, the reference");
    ++given;
    std::vector<double>& repetitions = ups[chain].try_emplace(ranks, row, std::vector<double>{}).first->second.second;
    // m ranks work at most m times as fast as one: more is a measurement's error, unless the trace declares
    // superlinear speed-ups. A relative slack of 1e-9 keeps exactly m, written with a few digits fewer.
    if (!superlinear && *up > ranks * (1 + 1e-9)) {
      set_aside.push_back({chain, ranks, *up, row, false, 0});
      continue;
    }
    repetitions.push_back(*up);
  }
  if (!header_seen)
    throw Place{file, 1}.error("the file is empty (allowed: the header " + std::string(kTraceHeaderWithGroup) + " or " +
                               std::string(kTraceHeader) + ", then rows)");
  if (items.empty()) throw Place{file, row}.error("no item rows (allowed: at least one item of chain 0)");
  Trace t;
  t.incomplete_ = incomplete;
  t.recorded_run_ = recorded;
  t.earlier_runs_ = std::move(earlier);
  t.extrapolation_ = extrapolation;
  t.taken_ = taken;
  t.fnv1a64_ = fnv1a64_hex(text);
  const int chains = items.rbegin()->first + 1;
  for (const auto& [chain, points] : ups) {
    if (chain >= chains) {
      const Place at{file, points.begin()->second.first};
      throw at.error(kChain, std::to_string(chain),
                     "a chain that has item rows, 0 to " + std::to_string(chains - 1) + ", or *");
    }
  }
  // Set aside symmetrically: for each value above its ranks, the lowest repetition of the same size too, while
  // one or more remain, so the kept values stay centred where all of them were (SetAside::trimmed_low). The
  // count goes on the size's last value set aside.
  {
    std::map<std::pair<int, int>, SetAside*> last;  // (chain, ranks) -> its last value set aside
    std::map<std::pair<int, int>, int> above;
    for (SetAside& a : set_aside) {
      last[{a.chain, a.ranks}] = &a;
      ++above[{a.chain, a.ranks}];
    }
    for (auto& [size, a] : last) {
      const auto it = ups.at(size.first).find(size.second);
      if (it == ups.at(size.first).end()) continue;
      std::vector<double>& kept = it->second.second;
      const int trim = std::min(above[size], std::max(0, static_cast<int>(kept.size()) - 1));
      std::sort(kept.begin(), kept.end());
      kept.erase(kept.begin(), kept.begin() + trim);
      a->trimmed_low = trim;
    }
  }
  // A size whose every repetition was set aside is no measured size: the curve goes on as if it were not given.
  for (SetAside& a : set_aside) {
    auto& sizes = ups.at(a.chain);
    if (const auto it = sizes.find(a.ranks); it != sizes.end() && it->second.second.empty()) sizes.erase(it);
    a.size_dropped = sizes.count(a.ranks) == 0;
  }
  t.superlinear_ = superlinear;
  t.drift_ = std::move(drift);
  t.set_aside_ = std::move(set_aside);
  t.speedups_given_ = given;
  // A size given several times replays at the median of its repetitions, or at the end `taken` says; their range
  // goes with it.
  const auto curve_of = [&](int chain) {
    Points p;
    std::vector<Repetitions> spread;
    if (const auto it = ups.find(chain); it != ups.end()) {
      for (auto& [ranks, where] : it->second) {
        std::vector<double>& v = where.second;
        std::sort(v.begin(), v.end());
        const std::size_t n = v.size();
        const double median = n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
        p.emplace_back(ranks, taken == TraceSpeedups::low    ? v.front()
                              : taken == TraceSpeedups::high ? v.back()
                                                             : median);
        spread.push_back({ranks, static_cast<int>(n), v.front(), v.back()});
      }
    }
    Curve c = fitted(std::move(p));
    c.repetitions = std::move(spread);
    return c;
  };
  t.default_speedups_ = curve_of(-1);
  for (int c = 0; c < chains; ++c) {
    t.speedups_.push_back(curve_of(c));
    auto& rows = items[c];  // none: a chain of no items (chains run 0 .. the largest given)
    std::stable_sort(rows.begin(), rows.end(), [](const ItemRow& a, const ItemRow& b) { return a.item < b.item; });
    std::vector<double> single;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const ItemRow& r = rows[i];
      const Place at{file, r.row};
      if (i > 0 && rows[i - 1].item == r.item) {
        throw at.error(kItem, std::to_string(r.item),
                       "each item of a chain once; chain " + std::to_string(c) + " item " + std::to_string(r.item) +
                           " is also on row " + std::to_string(rows[i - 1].row));
      }
      if (r.item != static_cast<int64_t>(i)) {
        throw at.error(kItem, std::to_string(r.item),
                       "items 0, 1, 2, ... of each chain without gaps; chain " + std::to_string(c) + " has no item " +
                           std::to_string(i));
      }
      single.push_back(r.seconds * t.speedup(c, r.ranks));
      t.longest_s_ = std::max(t.longest_s_, single.back());
    }
    double sum = 0;
    for (const double s : single) sum += s;
    t.chain_s_.push_back(sum);
    t.single_s_.push_back(std::move(single));
    t.group_.push_back(rows.empty() ? -1 : rows.front().group);
    int worked = 1;
    for (const ItemRow& r : rows) worked = std::max(worked, r.ranks);
    t.worked_.push_back(worked);
  }
  // The layout: by recorded group, each group's chains in the order they first appear, chains of no items last.
  t.has_groups_ = columns == kColumns;
  t.layout_.resize(static_cast<std::size_t>(chains));
  std::iota(t.layout_.begin(), t.layout_.end(), 0);
  if (t.has_groups_) {
    std::vector<int> appearance(static_cast<std::size_t>(chains), chains);
    for (std::size_t k = 0; k < first_seen.size(); ++k)
      appearance[static_cast<std::size_t>(first_seen[k])] = static_cast<int>(k);
    const auto key = [&](int c) {
      const int g = t.group_[static_cast<std::size_t>(c)];
      return std::pair{g < 0 ? kMaxTraceChains : g, appearance[static_cast<std::size_t>(c)]};
    };
    std::stable_sort(t.layout_.begin(), t.layout_.end(), [&](int a, int b) { return key(a) < key(b); });
  }
  return t;
}

std::shared_ptr<const Trace> load_trace(const std::string& file, TraceExtrapolation extrapolation,
                                        TraceSpeedups taken) {
  // One parse per process, path, extrapolation and end: a simulation's thousands of ranks share it; the mutex, because
  // SMPI may run its ranks as threads.
  static std::mutex mutex;
  static std::map<std::tuple<std::string, TraceExtrapolation, TraceSpeedups>, std::shared_ptr<const Trace>> loaded;
  const std::lock_guard lock(mutex);
  if (const auto it = loaded.find({file, extrapolation, taken}); it != loaded.end()) return it->second;
  // Through read_text_file: a FIFO or device is refused from what it is, before a byte is read (an open() of a
  // FIFO without a writer would block every rank), and a file too large from its size.
  std::string why;
  const auto text = read_text_file(file, &why, kMaxTraceBytes);
  if (!text) {
    // The reason in words of its own: missing, not a regular file (said as it is), too large, not readable.
    if (why == std::strerror(ENOENT) || why == std::strerror(ENOTDIR)) {
      why = "does not exist";
    } else if (const auto bytes = why.find(" bytes (allowed"); bytes != std::string::npos) {
      why = "is too large (" + why.substr(3, bytes - 3) + " bytes)";
    } else if (why.rfind("is ", 0) != 0) {
      why = "is not readable (" + why + ")";
    }
    throw InputError("key workload.file: trace file " + printable(file, 200) + " " + why +
                     " (allowed: a readable regular CSV file of at most 256 MiB)");
  }
  auto trace = std::make_shared<const Trace>(Trace::parse(*text, file, extrapolation, taken));
  loaded.emplace(std::tuple{file, extrapolation, taken}, trace);
  return trace;
}

namespace {

/// The rates a chain can keep on average over a stretch of time, against the ranks it holds on average: the upper
/// concave envelope of (0, 0) and (m, best speed-up at m) for every whole group size m from the smallest it may
/// work on to nprocs. A run that works a chain part of the time on m ranks and part on m' (a merge, or a group
/// shared with other chains) reaches any mix of the two, and no more. Vertices by ranks, rising, up to the peak rate.
std::vector<std::pair<double, double>> rate_envelope(const Trace& trace, int chain, int min_ranks, int nprocs) {
  std::vector<std::pair<double, double>> hull = {{0.0, 0.0}};
  double peak = 0;
  for (int m = std::max(1, min_ranks); m <= nprocs; ++m) {
    const double rate = trace.best_speedup(chain, m);
    if (rate <= peak) continue;  // more ranks at no more speed: never on the rising envelope
    peak = rate;
    const std::pair<double, double> p{m, rate};
    // Pop vertices that fall on or below the chord from the one before to the new point (a monotone chain).
    while (hull.size() >= 2) {
      const auto& [x1, y1] = hull[hull.size() - 2];
      const auto& [x2, y2] = hull.back();
      if ((y2 - y1) * (p.first - x1) > (p.second - y1) * (x2 - x1)) break;
      hull.pop_back();
    }
    hull.push_back(p);
  }
  return hull;
}

/// The least average ranks on which an envelope keeps a rate, or infinity past its peak.
double ranks_for(const std::vector<std::pair<double, double>>& hull, double rate) {
  if (rate <= 0) return 0;
  if (rate > hull.back().second) return std::numeric_limits<double>::infinity();
  const auto above = std::lower_bound(hull.begin(), hull.end(), rate,
                                      [](const std::pair<double, double>& v, double r) { return v.second < r; });
  const auto& [x2, y2] = *above;
  const auto& [x1, y1] = *(above - 1);
  return x1 + (rate - y1) * (x2 - x1) / (y2 - y1);
}

}  // namespace

double steady_share_s(const Trace& trace, const std::vector<ReplayedChains>& chains, int nprocs) {
  // A chain of single-rank work w ends within t when it keeps a rate w / t; the ranks that needs, on average, come
  // from its envelope (rate_envelope), at the best speed-up up to each size (Trace::best_speedup: a group may work
  // on fewer of its ranks). Every chain ending within t needs their sum to fit in nprocs, so the least such t is a
  // bound no run beats, whatever its merges. Chains that share a curve and an initial size share an envelope.
  std::map<std::pair<const void*, int>, std::vector<std::pair<double, double>>> envelopes;
  std::vector<const std::vector<std::pair<double, double>>*> of_chain;
  double total_s = 0, steepest = 1;  // steepest: the most rate a rank gives (above 1 only where superlinear)
  for (const ReplayedChains& c : chains) {
    const void* curve = &trace.measured_speedups(c.chain);
    auto [it, added] = envelopes.try_emplace({curve, c.min_ranks});
    if (added) it->second = rate_envelope(trace, c.chain, c.min_ranks, nprocs);
    of_chain.push_back(&it->second);
    if (it->second.size() > 1) steepest = std::max(steepest, it->second[1].second / it->second[1].first);
    total_s += static_cast<double>(c.count) * trace.chain_single_rank_s(c.chain);
  }
  if (total_s == 0) return 0;
  const auto total_needed = [&](double t) {
    double ranks = 0;
    for (std::size_t k = 0; k < chains.size(); ++k) {
      ranks += static_cast<double>(chains[k].count) *
               ranks_for(*of_chain[k], trace.chain_single_rank_s(chains[k].chain) / t);
    }
    return ranks;
  };
  // Speed-ups of at most m need at least total_s / nprocs, exactly that with perfect ones.
  double lo = total_s / (nprocs * steepest), hi = total_s / nprocs;
  if (total_needed(lo) <= nprocs) return lo;
  while (total_needed(hi) > nprocs) hi *= 2;
  for (int i = 0; i < 100 && hi - lo > 1e-12 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (total_needed(mid) <= nprocs ? hi : lo) = mid;
  }
  return hi;
}

namespace {
std::atomic<long> steady_share_computed{0};
}  // namespace

double shared_steady_share_s(const Trace& trace, const std::vector<ReplayedChains>& chains, int nprocs) {
  // Keyed by what the answer depends on, not by the trace's address: a Trace parsed again from the same bytes
  // gives the same bits, and an address can be reused by another trace.
  using Key =
      std::tuple<std::string, TraceExtrapolation, TraceSpeedups, std::vector<std::tuple<int, int, int64_t>>, int>;
  static std::mutex mutex;
  static std::map<Key, double> known;
  Key key{trace.fnv1a64(), trace.extrapolation(), trace.speedups_taken(), {}, nprocs};
  for (const ReplayedChains& c : chains) std::get<3>(key).emplace_back(c.chain, c.min_ranks, c.count);
  const std::lock_guard lock(mutex);
  if (const auto it = known.find(key); it != known.end()) return it->second;
  ++steady_share_computed;
  const double s = steady_share_s(trace, chains, nprocs);
  known.emplace(std::move(key), s);
  return s;
}

long steady_share_computations() noexcept { return steady_share_computed.load(); }

std::vector<int> Trace::recorded_shares() const {
  if (!has_groups_ || std::any_of(group_.begin(), group_.end(), [](int g) { return g < 0; })) return {};
  const int largest = *std::max_element(group_.begin(), group_.end());
  std::vector<int> shares(static_cast<std::size_t>(std::max(largest + 1, recorded_run_ ? recorded_run_->groups : 0)));
  for (const int g : group_) ++shares[static_cast<std::size_t>(g)];
  return shares;
}

std::shared_ptr<const std::vector<int>> replay_order(const std::shared_ptr<const Trace>& trace, TraceMap map,
                                                     uint64_t seed) {
  if (map != TraceMap::draw) return std::shared_ptr<const std::vector<int>>(trace, &trace->layout());
  // A draw: the layout sorted by a key drawn per position, so every chain appears once. Made once per process,
  // trace and seed (a simulation's thousands of ranks would each sort it); the mutex, as load_trace's.
  // Each entry keeps its trace alive, so no other trace can take its address while the entry stands.
  static std::mutex mutex;
  static std::map<std::pair<const Trace*, uint64_t>,
                  std::pair<std::shared_ptr<const Trace>, std::shared_ptr<const std::vector<int>>>>
      made;
  const std::lock_guard lock(mutex);
  auto& [kept, order] = made[{trace.get(), seed}];
  if (!order) {
    kept = trace;
    const std::vector<int>& layout = trace->layout();
    std::vector<std::pair<double, int>> keyed;
    for (std::size_t k = 0; k < layout.size(); ++k) {
      // "trace": a stream of its own; ties (a chance of about C^2 / 2^53) keep the layout's order.
      keyed.emplace_back(unit_draw(seed, 0x7472616365ULL, k), layout[k]);
    }
    std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    auto drawn = std::make_shared<std::vector<int>>();
    for (const auto& [key, chain] : keyed) drawn->push_back(chain);
    order = std::move(drawn);
  }
  return order;
}

}  // namespace mcmclb
