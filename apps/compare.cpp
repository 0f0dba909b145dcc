// SPDX-License-Identifier: BSD-3-Clause
// `mcmclb compare A B` (apps/compare.hpp): reads runs.csv of two results folders, groups the valid runs of each
// into points (the resume key without rep, so the repetitions of a point are its samples), and says per point
// whether B is slower, faster or not significantly different (real MPI), or identical or changed (simulated).
#include "compare.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "mcmclb/input_error.hpp"
#include "mcmclb/run_files.hpp"
#include "mcmclb/runs_csv.hpp"
#include "mcmclb/stats.hpp"
#include "mcmclb/text.hpp"

namespace mcmclb {

namespace {

namespace fs = std::filesystem;

struct Options {
  std::string a, b;
  std::string csv;                  // --csv FILE; empty: none
  std::vector<std::string> ignore;  // --ignore KEYS: runs.csv key columns left out of the match
  double threshold_pct = 5;
  double alpha = 0.05;
};

const char* const kAllowed =
    "allowed: mcmclb compare A B [--threshold PCT] [--alpha P] [--csv FILE] [--ignore COLUMN[,COLUMN...]]";

double number_flag(const std::string& flag, const std::string& text, double low, double high, const char* range) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v) || v < low || v > high) {
    throw InputError(flag + ": '" + printable(text) + "' is not " + range);
  }
  return v;
}

/// Why --csv FILE cannot be written ("" if it can): its folder must exist and be writable, and FILE not a folder.
std::string csv_problem(const std::string& path) {
  std::error_code ec;
  const fs::path p(path);
  if (fs::is_directory(p, ec)) return "--csv: " + printable(path) + " is a folder (allowed: a FILE.csv path)";
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec)) {
    return "--csv: " + printable(path) + ": its folder does not exist (allowed: a file in an existing folder)";
  }
  if (::access(dir.c_str(), W_OK) != 0) return "--csv: " + printable(path) + ": its folder is not writable";
  if (fs::exists(p, ec) && !fs::is_regular_file(p, ec)) {
    return "--csv: " + printable(path) + " is not a regular file (allowed: a FILE.csv path)";
  }
  return "";
}

Options parse(const std::vector<std::string>& args) {
  Options o;
  std::vector<std::string> folders;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const auto value = [&] {
      if (i + 1 >= args.size()) throw InputError(a + ": missing value (" + kAllowed + ")");
      return args[++i];
    };
    if (a == "--threshold") {
      o.threshold_pct = number_flag(a, value(), 0, 100, "a percentage from 0 to 100");
    } else if (a == "--alpha") {
      o.alpha = number_flag(a, value(), 1e-12, 0.5, "a significance level in (0, 0.5]");
    } else if (a == "--csv") {
      o.csv = value();
      if (o.csv.empty()) throw InputError("--csv: empty (allowed: a FILE.csv path)");
    } else if (a == "--ignore") {
      // Configurations that differ in these columns are matched (one balancer against another, say).
      std::vector<std::string> keys;
      for (const auto& c : runs_columns()) {
        if (c.is_configuration_key()) keys.push_back(c.name);
      }
      for (const std::string& name : csv::split_line(value())) {
        if (std::find(keys.begin(), keys.end(), name) == keys.end()) {
          throw InputError("--ignore: '" + printable(name) +
                           "' is not a runs.csv key column (allowed: " + join(keys, ", ") + ")");
        }
        o.ignore.push_back(name);
      }
    } else if (a.rfind("--", 0) == 0) {
      throw InputError("unknown flag " + printable(a) + " (" + kAllowed + ")");
    } else {
      folders.push_back(a);
    }
  }
  if (folders.size() != 2) {
    throw InputError("compare: " + std::to_string(folders.size()) + " folder(s) given, two needed (" + kAllowed + ")");
  }
  o.a = folders[0];
  o.b = folders[1];
  if (!o.csv.empty()) {
    if (const std::string problem = csv_problem(o.csv); !problem.empty()) throw InputError(problem);
  }
  return o;
}

using Samples = ConfigurationSamples;

/// runs.csv columns compare reads, found by name in the current header.
struct Columns {
  std::vector<std::size_t> key;  // is_configuration_key() columns
  std::vector<std::string> key_names;
  std::size_t time = 0, valid = 0, backend = 0, balancer = 0, finished = 0;
  std::vector<std::size_t> regroups;  // regroups_avg, _std, _min, _max
};

Columns columns() {
  const csv::Row& header = runs_header();
  const auto at = [&](const std::string& name) {
    return static_cast<std::size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  Columns c;
  for (const auto& column : runs_columns()) {
    if (column.is_configuration_key()) {
      c.key.push_back(at(column.name));
      c.key_names.push_back(column.name);
    }
  }
  c.time = at("time_s");
  c.valid = at("valid");
  c.backend = at("backend");
  c.balancer = at("balancer");
  c.finished = at("finished");
  for (const char* name : {"regroups_avg", "regroups_std", "regroups_min", "regroups_max"}) {
    c.regroups.push_back(at(name));
  }
  return c;
}

/// A folder's configurations keyed without the ignored columns (their fields emptied, so labels leave them out).
/// Two configurations of one folder that differ only there could not be told apart: an error naming the folder.
std::map<std::string, ConfigurationSamples> matched(std::map<std::string, ConfigurationSamples> points,
                                                    const std::string& dir, const std::vector<std::string>& ignore,
                                                    const Columns& c) {
  if (ignore.empty()) return points;
  std::map<std::string, ConfigurationSamples> out;
  for (auto& [key, s] : points) {
    for (std::size_t k = 0; k < c.key_names.size(); ++k) {
      if (std::find(ignore.begin(), ignore.end(), c.key_names[k]) != ignore.end()) s.key_fields[k].clear();
    }
    if (!out.emplace(key_of_fields(s.key_fields), std::move(s)).second) {
      throw InputError("--ignore " + join(ignore, ",") + ": " + printable(dir, 200) +
                       " holds several configurations that differ only in those columns (allowed: columns in "
                       "which each folder's configurations are all alike, e.g. one balancer per folder)");
    }
  }
  return out;
}

std::optional<double> parse_number(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace

std::map<std::string, ConfigurationSamples> read_configurations(const std::string& dir) {
  const Columns c = columns();
  std::error_code ec;
  const std::string allowed = " (allowed: a results folder of mcmclb run or sweep, holding runs.csv)";
  if (!fs::exists(dir, ec)) throw InputError(printable(dir, 200) + ": no such folder" + allowed);
  if (!fs::is_directory(dir, ec)) throw InputError(printable(dir, 200) + ": not a folder" + allowed);
  const fs::path file = fs::path(dir) / "runs.csv";
  const std::string shown = printable(file.string(), 200);
  std::string why;
  const auto text = read_text_file(file, &why);
  if (!text) throw InputError(shown + ": cannot be read (" + why + ")" + allowed);
  std::stringstream lines(*text);
  std::string line;
  if (!std::getline(lines, line)) throw InputError(shown + ": empty, not an mcmclb runs.csv" + allowed);
  // Damage is named in the words of the results store and the plot scripts (file, line, cause), and before the
  // header is judged: a header saved with CRLF line ends differs from this version's only by an invisible \r.
  const auto check_line = [&](const std::string& text, std::size_t line_no) {
    const std::string at = shown + ": line " + std::to_string(line_no);
    if (text.find('\0') != std::string::npos) throw InputError(at + " contains NUL bytes (allowed: a text CSV file)");
    if (!text.empty() && text.back() == '\r') {
      throw InputError(at + " ends in \\r (CRLF line endings; allowed: LF line endings, as mcmclb writes them)");
    }
  };
  check_line(line, 1);
  const csv::Row header = csv::split_line(line);
  std::function<csv::Row(const csv::Row&)> upgrade = [](const csv::Row& row) { return row; };
  if (header != runs_header()) {
    const auto schema = results_schema();
    const auto older = std::find_if(schema.runs.older.begin(), schema.runs.older.end(),
                                    [&](const results::OlderHeader& o) { return o.header == header; });
    if (older == schema.runs.older.end() || !older->upgrade) {
      throw InputError(shown + ": not the runs.csv of this or an older mcmclb (header: " + printable(line, 120) +
                       "; expected: " + printable(join(runs_header(), ","), 120) + ")");
    }
    upgrade = older->upgrade;
  }
  std::map<std::string, Samples> points;
  const auto quote_open = [](const std::string& text) { return std::count(text.begin(), text.end(), '"') % 2 == 1; };
  for (std::size_t line_no = 2; std::getline(lines, line); ++line_no) {
    // A quoted field may hold line breaks: a record ends on the first line that closes its quotes (or at the end
    // of the file), and is named by that line, as the store and the plot scripts name it.
    for (std::string more; quote_open(line) && std::getline(lines, more); ++line_no) line += "\n" + more;
    check_line(line, line_no);
    if (line.empty()) continue;
    const csv::Row raw = csv::split_line(line);
    if (raw.size() != header.size()) {
      throw InputError(shown + ": line " + std::to_string(line_no) + " has " + std::to_string(raw.size()) +
                       " fields, the header has " + std::to_string(header.size()) + " (a row cut off or edited?)");
    }
    csv::Row row = upgrade(raw);
    // A rule left empty is the balancer's former one (collective's rows before it offered a choice).
    if (row[c.finished].empty()) row[c.finished] = older_finished_rule(row[c.balancer]);
    if (row[c.valid] != "true") continue;  // an invalid run measured something else: not a sample
    const auto time = parse_number(row[c.time]);
    if (!time || *time < 0) {
      throw InputError(shown + ": line " + std::to_string(line_no) + ": time_s '" + printable(row[c.time]) +
                       "' is not a time in seconds");
    }
    std::vector<std::string> key;
    for (const std::size_t i : c.key) key.push_back(row[i]);
    Samples& s = points[key_of_fields(key)];
    s.key_fields = key;
    s.simulated = row[c.backend] == "smpi";
    s.time_s.push_back(*time);
    s.regroups_avg.push_back(parse_number(row[c.regroups[0]]).value_or(0));
    std::string exact = row[c.time];
    for (const std::size_t i : c.regroups) exact += "," + row[i];
    s.exact.insert(exact);
  }
  return points;
}

namespace {

/// One line of the comparison (a row of compare.csv).
struct Comparison {
  std::string point;
  std::string backend;
  std::optional<stats::MedianCi> a, b;
  std::optional<double> ratio, ratio_low, ratio_high, p;
  std::optional<double> regroups_a, regroups_b;  // median of regroups_avg
  std::string verdict;
};

std::string opt(const std::optional<double>& v) { return v ? csv::number(*v) : std::string(); }

/// compare.csv: one table, from which its header and rows derive.
struct CompareColumn {
  std::string name;
  std::function<std::string(const Comparison&)> get;
};

const std::vector<CompareColumn>& compare_columns() {
  using C = Comparison;
  const auto side = [](const std::optional<stats::MedianCi> C::*which,
                       const std::function<std::optional<double>(const stats::MedianCi&)>& field) {
    return [which, field](const C& c) { return (c.*which) ? opt(field(*(c.*which))) : std::string(); };
  };
  const auto n = [](const stats::MedianCi& m) { return std::optional<double>(static_cast<double>(m.n)); };
  const auto median = [](const stats::MedianCi& m) { return std::optional<double>(m.median); };
  const auto low = [](const stats::MedianCi& m) { return m.low; };
  const auto high = [](const stats::MedianCi& m) { return m.high; };
  static const std::vector<CompareColumn> table = {
      {"point", [](const C& c) { return c.point; }},
      {"backend", [](const C& c) { return c.backend; }},
      {"n_a", side(&C::a, n)},
      {"median_a_s", side(&C::a, median)},
      {"ci_low_a_s", side(&C::a, low)},
      {"ci_high_a_s", side(&C::a, high)},
      {"n_b", side(&C::b, n)},
      {"median_b_s", side(&C::b, median)},
      {"ci_low_b_s", side(&C::b, low)},
      {"ci_high_b_s", side(&C::b, high)},
      {"ratio", [](const C& c) { return opt(c.ratio); }},
      {"ratio_low", [](const C& c) { return opt(c.ratio_low); }},
      {"ratio_high", [](const C& c) { return opt(c.ratio_high); }},
      {"p_value", [](const C& c) { return opt(c.p); }},
      {"regroups_avg_a", [](const C& c) { return opt(c.regroups_a); }},
      {"regroups_avg_b", [](const C& c) { return opt(c.regroups_b); }},
      {"verdict", [](const C& c) { return c.verdict; }},
  };
  return table;
}

/// The point as a reader tells it from the others: nprocs, the balancer (with its interval) and every other key
/// column whose value is not the same for all points of both folders.
std::string label(const std::vector<std::string>& fields, const Columns& c, const std::set<std::size_t>& varying) {
  std::vector<std::string> parts;
  std::string interval;
  for (std::size_t k = 0; k < fields.size(); ++k) {
    if (c.key_names[k] == "interval") interval = fields[k];
  }
  for (std::size_t k = 0; k < fields.size(); ++k) {
    const std::string& name = c.key_names[k];
    if (name == "interval") continue;  // shown with the balancer
    if (name == "balancer") {
      parts.push_back(fields[k] + (interval.empty() ? "" : "(" + interval + ")"));
    } else if (name == "nprocs") {
      parts.push_back("P=" + fields[k]);
    } else if (varying.count(k) != 0) {
      parts.push_back(name + "=" + (fields[k].empty() ? "-" : fields[k]));
    }
  }
  return join(parts, " ");
}

/// The smallest two-sided p-value the exact Mann-Whitney test can give for samples of m and n: 2 / C(m+n, m).
double smallest_p(std::size_t m, std::size_t n) {
  double orderings = 1;  // C(m+n, m), as a double (only compared with 2 / alpha)
  for (std::size_t i = 1; i <= m; ++i) orderings = orderings * static_cast<double>(n + i) / static_cast<double>(i);
  return std::min(1.0, 2 / orderings);
}

Comparison compare_point(const Samples& a, const Samples& b, const Options& o) {
  Comparison c;
  c.backend = a.simulated ? "smpi" : "mpi";
  c.a = stats::median_ci(a.time_s);
  c.b = stats::median_ci(b.time_s);
  c.regroups_a = stats::median(a.regroups_avg);
  c.regroups_b = stats::median(b.regroups_avg);
  if (c.a->median > 0) c.ratio = c.b->median / c.a->median;
  // The ratio's interval from the two medians' intervals (docs/guide/statistics.md says why not a bootstrap).
  if (c.a->low && c.b->low && *c.a->low > 0) {
    c.ratio_low = *c.b->low / *c.a->high;
    c.ratio_high = *c.b->high / *c.a->low;
  }
  if (a.simulated) {  // deterministic: any difference is a change, and no test applies
    c.verdict = a.exact == b.exact ? "identical" : "changed (simulated)";
    return c;
  }
  const auto test = stats::mann_whitney(a.time_s, b.time_s);
  c.p = test.p;
  if (smallest_p(a.time_s.size(), b.time_s.size()) >= o.alpha) {
    c.verdict = "too few repetitions";
  } else if (test.p < o.alpha && c.ratio && *c.ratio > 1 + o.threshold_pct / 100) {
    c.verdict = "slower";
  } else if (test.p < o.alpha && c.ratio && *c.ratio < 1 - o.threshold_pct / 100) {
    c.verdict = "faster";
  } else {
    c.verdict = "no significant change";
  }
  return c;
}

std::string seconds(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", s);
  return text;
}

/// A side's cell: "median [low, high]"; without an interval, "median (no CI)", or "(simulated)" where none applies.
std::string side_cell(const std::optional<stats::MedianCi>& m, bool simulated) {
  if (!m) return "-";
  if (simulated) return seconds(m->median) + " (simulated)";
  if (!m->low) return seconds(m->median) + " (no CI)";
  return seconds(m->median) + " [" + seconds(*m->low) + ", " + seconds(*m->high) + "]";
}

void print_table(const std::vector<Comparison>& rows, const Options& o) {
  std::vector<std::vector<std::string>> cells = {
      {"point", "n A", "time A s [95% CI]", "n B", "time B s [95% CI]", "B/A [CI]", "p", "regroups A -> B", "verdict"}};
  for (const auto& r : rows) {
    char p[32] = "-";
    if (r.p) std::snprintf(p, sizeof p, "%.3g", *r.p);
    std::string ratio = r.ratio ? seconds(*r.ratio) : "-";
    if (r.ratio_low) ratio += " [" + seconds(*r.ratio_low) + ", " + seconds(*r.ratio_high) + "]";
    const std::string regroups = r.regroups_a && r.regroups_b ? seconds(*r.regroups_a) + " -> " + seconds(*r.regroups_b)
                                 : r.regroups_a               ? seconds(*r.regroups_a) + " -> -"
                                 : r.regroups_b               ? "- -> " + seconds(*r.regroups_b)
                                                              : "-";
    cells.push_back({r.point, r.a ? std::to_string(r.a->n) : "-", side_cell(r.a, r.backend == "smpi"),
                     r.b ? std::to_string(r.b->n) : "-", side_cell(r.b, r.backend == "smpi"), ratio, p, regroups,
                     r.verdict});
  }
  std::vector<std::size_t> width(cells.front().size(), 0);
  for (const auto& row : cells) {
    for (std::size_t k = 0; k < row.size(); ++k) width[k] = std::max(width[k], row[k].size());
  }
  for (const auto& row : cells) {
    std::string line;
    for (std::size_t k = 0; k < row.size(); ++k) {
      const std::string& cell = row[k];
      const bool left = k == 0 || k + 1 == row.size();
      const std::string pad(width[k] - cell.size(), ' ');
      line += (k ? "  " : "") + (left ? cell + (k + 1 == row.size() ? "" : pad) : pad + cell);
    }
    std::printf("%s\n", line.c_str());
  }
  std::printf(
      "(A: %s, B: %s; slower/faster: Mann-Whitney p < %g and B/A beyond 1 +/- %g %%; simulated points "
      "compared exactly)\n",
      o.a.c_str(), o.b.c_str(), o.alpha, o.threshold_pct);
}

}  // namespace

const csv::Row& compare_header() {
  static const csv::Row header = [] {
    csv::Row h;
    for (const auto& c : compare_columns()) h.push_back(c.name);
    return h;
  }();
  return header;
}

int compare_main(const std::vector<std::string>& args) {
  if (std::find(args.begin(), args.end(), "--help") != args.end()) {
    std::printf(
        "usage: mcmclb compare A B [--threshold PCT] [--alpha P] [--csv FILE] [--ignore COLUMN[,COLUMN...]]   "
        "(docs/guide/statistics.md)\n");
    return 0;
  }
  const Options o = parse(args);
  const Columns c = columns();
  const auto a = matched(read_configurations(o.a), o.a, o.ignore, c);
  const auto b = matched(read_configurations(o.b), o.b, o.ignore, c);
  // Key columns whose value differs between points: the label shows them.
  std::set<std::size_t> varying;
  std::map<std::string, const Samples*> all;
  for (const auto* side : {&a, &b}) {
    for (const auto& [key, s] : *side) all.emplace(key, &s);
  }
  for (std::size_t k = 0; k < c.key.size(); ++k) {
    std::set<std::string> values;
    for (const auto& [key, s] : all) values.insert(s->key_fields[k]);
    if (values.size() > 1) varying.insert(k);
  }
  std::vector<Comparison> rows;
  std::map<std::string, int> counts;
  for (const auto& [key, s] : all) {
    const auto in_a = a.find(key), in_b = b.find(key);
    Comparison r;
    if (in_a != a.end() && in_b != b.end()) {
      r = compare_point(in_a->second, in_b->second, o);
    } else {
      const bool only_a = in_a != a.end();
      r.backend = s->simulated ? "smpi" : "mpi";
      (only_a ? r.a : r.b) = stats::median_ci(s->time_s);
      (only_a ? r.regroups_a : r.regroups_b) = stats::median(s->regroups_avg);
      r.verdict = only_a ? "only in A" : "only in B";
    }
    r.point = label(s->key_fields, c, varying);
    ++counts[r.verdict];
    rows.push_back(std::move(r));
  }
  print_table(rows, o);
  std::vector<std::string> summary;
  for (const auto& [verdict, count] : counts) summary.push_back(std::to_string(count) + " " + verdict);
  std::printf("compare: %zu point(s): %s\n", rows.size(), summary.empty() ? "none" : join(summary).c_str());
  if (!o.csv.empty()) {
    std::string content = csv::line(compare_header());
    for (const auto& r : rows) {
      csv::Row row;
      for (const auto& column : compare_columns()) row.push_back(column.get(r));
      content += csv::line(row);
    }
    csv::write_atomically(o.csv, content);
    std::printf("wrote %s\n", o.csv.c_str());
  }
  return counts["slower"] + counts["changed (simulated)"] > 0 ? 1 : 0;
}

}  // namespace mcmclb
