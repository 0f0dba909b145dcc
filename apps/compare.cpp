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
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "mcmclb/comparison.hpp"
#include "mcmclb/configurations.hpp"
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
  // --baseline KEY=VALUE,...: one folder (a), each set-up against the set-up with these values (compare_within()).
  std::vector<std::pair<std::string, std::string>> baseline;
  CompareRule rule;  // --threshold PCT, --alpha P
};

const char* const kAllowed =
    "allowed: mcmclb compare A B [--threshold PCT] [--alpha P] [--csv FILE] [--ignore COLUMN[,COLUMN...]], or "
    "mcmclb compare DIR --baseline KEY=VALUE[,KEY=VALUE...] [--threshold PCT] [--alpha P] [--csv FILE]";

/// runs.csv's columns that tell configurations apart (--ignore's and --baseline's keys).
std::vector<std::string> configuration_keys() {
  std::vector<std::string> keys;
  for (const auto& c : runs_columns()) {
    if (c.is_configuration_key()) keys.push_back(c.name);
  }
  return keys;
}

/// --baseline's value: KEY=VALUE pairs separated by commas, each key a configuration column named once.
std::vector<std::pair<std::string, std::string>> parse_baseline(const std::string& text) {
  const std::vector<std::string> keys = configuration_keys();
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const std::string& item : csv::split_line(text)) {
    const auto eq = item.find('=');
    const std::string key = item.substr(0, eq);
    if (eq == std::string::npos || key.empty()) {
      throw InputError("--baseline: '" + printable(item) + "' is not KEY=VALUE (allowed: e.g. balancer=none or " +
                       "balancer=collective,interval=10)");
    }
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
      throw InputError("--baseline: '" + printable(key) +
                       "' is not a runs.csv key column (allowed: " + join(keys, ", ") + ")");
    }
    for (const auto& [named, value] : pairs) {
      if (named == key) throw InputError("--baseline: " + printable(key) + " given twice (allowed: once)");
    }
    pairs.emplace_back(key, item.substr(eq + 1));
  }
  return pairs;
}

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
      o.rule.threshold_pct = number_flag(a, value(), 0, 100, "a percentage from 0 to 100");
    } else if (a == "--alpha") {
      o.rule.alpha = number_flag(a, value(), 1e-12, 0.5, "a significance level in (0, 0.5]");
    } else if (a == "--csv") {
      o.csv = value();
      if (o.csv.empty()) throw InputError("--csv: empty (allowed: a FILE.csv path)");
    } else if (a == "--baseline") {
      if (!o.baseline.empty()) throw InputError("--baseline: given twice (allowed: once, KEY=VALUE pairs joined by ,)");
      o.baseline = parse_baseline(value());
    } else if (a == "--ignore") {
      // Configurations that differ in these columns are matched (one balancer against another, say).
      const std::vector<std::string> keys = configuration_keys();
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
  if (!o.baseline.empty()) {  // one folder, its set-ups ranked against the baseline
    if (folders.size() != 1) {
      throw InputError("--baseline: " + std::to_string(folders.size()) + " folder(s) given, one needed (" + kAllowed +
                       ")");
    }
    if (!o.ignore.empty()) {
      throw InputError(
          "--ignore: only with two folders (with --baseline, a set-up and its baseline differ only in "
          "the columns --baseline names)");
    }
    o.a = folders[0];
  } else if (folders.size() != 2) {
    throw InputError("compare: " + std::to_string(folders.size()) + " folder(s) given, two needed, or one with " +
                     "--baseline KEY=VALUE (" + kAllowed + ")");
  } else {
    o.a = folders[0];
    o.b = folders[1];
  }
  if (!o.csv.empty()) {
    if (const std::string problem = csv_problem(o.csv); !problem.empty()) throw InputError(problem);
  }
  return o;
}

using Samples = ConfigurationSamples;

using Columns = RunsColumns;

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

/// cells as columns of aligned text: the first `left` columns and the last to the left, the others to the right.
void print_aligned(const std::vector<std::vector<std::string>>& cells, std::size_t left = 1) {
  std::vector<std::size_t> width(cells.front().size(), 0);
  for (const auto& row : cells) {
    for (std::size_t k = 0; k < row.size(); ++k) width[k] = std::max(width[k], row[k].size());
  }
  for (const auto& row : cells) {
    std::string line;
    for (std::size_t k = 0; k < row.size(); ++k) {
      const std::string& cell = row[k];
      const bool to_left = k < left || k + 1 == row.size();
      const std::string pad(width[k] - cell.size(), ' ');
      line += (k ? "  " : "") + (to_left ? cell + (k + 1 == row.size() ? "" : pad) : pad + cell);
    }
    std::printf("%s\n", line.c_str());
  }
}

/// A ratio's cell: "ratio [low, high]", "ratio" without an interval, "-" without a ratio.
std::string ratio_cell(const Comparison& r) {
  std::string ratio = r.ratio ? seconds(*r.ratio) : "-";
  if (r.ratio_low) ratio += " [" + seconds(*r.ratio_low) + ", " + seconds(*r.ratio_high) + "]";
  return ratio;
}

/// A p-value's cell: three digits, "-" where no test applies.
std::string p_cell(const Comparison& r) {
  char p[32] = "-";
  if (r.p) std::snprintf(p, sizeof p, "%.3g", *r.p);
  return p;
}

void print_table(const std::vector<Comparison>& rows, const Options& o) {
  std::vector<std::vector<std::string>> cells = {
      {"point", "n A", "time A s [95% CI]", "n B", "time B s [95% CI]", "B/A [CI]", "p", "regroups A -> B", "verdict"}};
  for (const auto& r : rows) {
    const std::string regroups = r.regroups_a && r.regroups_b ? seconds(*r.regroups_a) + " -> " + seconds(*r.regroups_b)
                                 : r.regroups_a               ? seconds(*r.regroups_a) + " -> -"
                                 : r.regroups_b               ? "- -> " + seconds(*r.regroups_b)
                                                              : "-";
    cells.push_back({r.point, r.a ? std::to_string(r.a->n) : "-", side_cell(r.a, r.backend == "smpi"),
                     r.b ? std::to_string(r.b->n) : "-", side_cell(r.b, r.backend == "smpi"), ratio_cell(r), p_cell(r),
                     regroups, r.verdict});
  }
  print_aligned(cells);
  std::printf(
      "(A: %s, B: %s; slower/faster: Mann-Whitney p < %g and B/A beyond 1 +/- %g %%; simulated points "
      "compared exactly)\n",
      o.a.c_str(), o.b.c_str(), o.rule.alpha, o.rule.threshold_pct);
}

/// Key columns whose value differs between the points: a label shows them.
std::set<std::size_t> varying_columns(const std::vector<const Samples*>& points, const Columns& c) {
  std::set<std::size_t> varying;
  for (std::size_t k = 0; k < c.key.size(); ++k) {
    std::set<std::string> values;
    for (const Samples* s : points) values.insert(s->key_fields[k]);
    if (values.size() > 1) varying.insert(k);
  }
  return varying;
}

/// compare.csv with rows, written at once (--csv).
void write_csv(const std::string& path, const std::vector<Comparison>& rows) {
  std::string content = csv::line(compare_header());
  for (const auto& r : rows) content += csv::line(compare_row(r));
  csv::write_atomically(path, content);
  std::printf("wrote %s\n", path.c_str());
}

/// A field of runs.csv equals a --baseline value: as text, or as the same number (T_ms=40 matches 40.0).
bool same_field(const std::string& field, const std::string& wanted) {
  if (field == wanted) return true;
  const auto a = parse_finite(field), b = parse_finite(wanted);
  return a && b && *a == *b;
}

/// `mcmclb compare DIR --baseline KEY=VALUE,...`: each set-up of one folder against its baseline, the set-up equal
/// to it in every key column but those --baseline names, which hold the values named there. Naming the balancer
/// frees its own columns too (interval, method, finished), unless named: `none` has neither an interval nor a
/// method to match. The set-ups of one baseline are ranked by the ratio of medians, with the interval and test that
/// compare A B gives (compare_configurations(), the baseline as A). Exit 0; 2 when the baseline names no set-up of the
/// folder or several beside one set-up.
int compare_within(const Options& o) {
  const Columns c = runs_columns_index();
  const auto points = read_configurations(o.a);
  const auto index_of = [&](const std::string& name) {
    return static_cast<std::size_t>(std::find(c.key_names.begin(), c.key_names.end(), name) - c.key_names.begin());
  };
  std::vector<std::pair<std::size_t, std::string>> named;  // key column -> the baseline's value
  std::set<std::size_t> free;                              // columns in which a set-up and its baseline may differ
  for (const auto& [key, value] : o.baseline) {
    named.emplace_back(index_of(key), value);
    free.insert(index_of(key));
  }
  if (free.count(index_of("balancer")) != 0) {
    for (const char* follows : {"interval", "method", "finished"}) free.insert(index_of(follows));
  }
  const std::string given = "--baseline " + printable(o.baseline.front().first + "=" + o.baseline.front().second);
  const auto is_baseline = [&](const Samples& s) {
    return std::all_of(named.begin(), named.end(),
                       [&](const auto& kv) { return same_field(s.key_fields[kv.first], kv.second); });
  };
  // A value no set-up has is named with the values the folder holds.
  for (const auto& [k, value] : named) {
    std::set<std::string> values;
    for (const auto& [key, s] : points) values.insert(s.key_fields[k]);
    if (std::none_of(values.begin(), values.end(), [&](const std::string& v) { return same_field(v, value); })) {
      std::vector<std::string> shown;
      for (const std::string& v : values) shown.push_back(v.empty() ? "(empty: " + c.key_names[k] + "=)" : v);
      throw InputError("--baseline: no set-up of " + printable(o.a, 200) + " has " + c.key_names[k] + "=" +
                       printable(value) + " (allowed: its values there: " + printable(join(shown), 400) + ")");
    }
  }
  std::vector<const Samples*> all;
  for (const auto& [key, s] : points) all.push_back(&s);
  const std::set<std::size_t> varying = varying_columns(all, c);
  const auto label_of = [&](const Samples& s) { return label(s.key_fields, c, varying); };
  // Each set-up's baseline: equal to it outside the free columns.
  std::map<const Samples*, std::vector<const Samples*>> ranked;  // baseline -> the set-ups it is the baseline of
  std::vector<const Samples*> without;                           // set-ups no set-up of the folder is a baseline of
  // Set-ups in the order of their key columns, numbers as numbers (P=64 before P=1024).
  std::stable_sort(all.begin(), all.end(), [](const Samples* x, const Samples* y) {
    for (std::size_t k = 0; k < x->key_fields.size(); ++k) {
      const std::string &a = x->key_fields[k], &b = y->key_fields[k];
      if (a == b) continue;
      const auto na = parse_finite(a), nb = parse_finite(b);
      return na && nb && *na != *nb ? *na < *nb : a < b;
    }
    return false;
  });
  for (const Samples* s : all) {
    std::vector<const Samples*> found;
    for (const Samples* b : all) {
      bool same = is_baseline(*b);
      for (std::size_t k = 0; same && k < c.key.size(); ++k) {
        same = free.count(k) != 0 || b->key_fields[k] == s->key_fields[k];
      }
      if (same) found.push_back(b);
    }
    if (found.size() > 1) {  // named with a pair that picks the first: a column in which they differ
      std::vector<std::string> labels;
      for (const Samples* b : found) labels.push_back(label_of(*b));
      std::string pick;
      for (std::size_t k = 0; k < c.key.size() && pick.empty(); ++k) {
        if (found[0]->key_fields[k] != found[1]->key_fields[k]) pick = c.key_names[k] + "=" + found[0]->key_fields[k];
      }
      std::vector<std::string> pairs;
      for (const auto& [key, value] : o.baseline) pairs.push_back(key + "=" + value);
      throw InputError(given + ": " + std::to_string(found.size()) + " set-ups of " + printable(o.a, 200) +
                       " match it beside " + label_of(*s) + ": " + join(labels, "; ") +
                       " (allowed: pairs that pick one, e.g. --baseline " + printable(join(pairs, ",") + "," + pick) +
                       ")");
    }
    (found.empty() ? without : ranked[found.front()]).push_back(s);
  }
  if (ranked.empty()) {
    throw InputError(given + ": no set-up of " + printable(o.a, 200) +
                     " has every value it names (allowed: " + "values of one set-up)");
  }
  std::vector<const Samples*> baselines;  // in the order of the set-ups
  for (const Samples* s : all) {
    if (ranked.count(s) != 0) baselines.push_back(s);
  }
  std::vector<Comparison> rows;
  std::map<std::string, int> counts;
  bool simulated = false;
  for (const Samples* baseline : baselines) {
    std::vector<Comparison> group;
    for (const Samples* s : ranked[baseline]) {
      Comparison r = compare_configurations(*baseline, *s, o.rule);
      r.point = label_of(*s);
      if (s == baseline) {  // its ratio is 1 by definition: no interval, no test
        r.ratio_low = r.ratio_high = r.p = std::nullopt;
        r.verdict = "baseline";
      } else if (s->simulated) {  // deterministic: the ratio is the answer, exact, with no interval or test
        r.verdict = !r.ratio || *r.ratio == 1 ? "same time (simulated)"
                    : *r.ratio < 1            ? "faster (simulated)"
                                              : "slower (simulated)";
      } else if (r.verdict == "no significant change") {
        r.verdict = "no significant difference";
      }
      simulated = simulated || s->simulated;
      group.push_back(std::move(r));
    }
    // Fastest first; a set-up without a ratio (a baseline of time 0) last.
    std::stable_sort(group.begin(), group.end(), [](const Comparison& x, const Comparison& y) {
      return x.ratio && (!y.ratio || *x.ratio < *y.ratio);
    });
    std::vector<std::vector<std::string>> cells = {
        {"rank", "set-up", "n", "time s [95% CI]", "/ baseline [CI]", "p", "verdict"}};
    int rank = 0;
    for (const Comparison& r : group) {
      cells.push_back({std::to_string(++rank), r.point, r.b ? std::to_string(r.b->n) : "-",
                       side_cell(r.b, r.backend == "smpi"), ratio_cell(r), p_cell(r), r.verdict});
      ++counts[r.verdict];
    }
    std::printf("baseline: %s\n", label_of(*baseline).c_str());
    print_aligned(cells, 2);
    std::printf("\n");
    rows.insert(rows.end(), group.begin(), group.end());
  }
  for (const Samples* s : without) {
    Comparison r;
    r.backend = s->simulated ? "smpi" : "mpi";
    r.b = stats::median_ci(s->time_s);
    r.regroups_b = stats::median(s->regroups_avg);
    r.point = label_of(*s);
    r.verdict = "no baseline";
    std::printf("no baseline: %s (no set-up equal to it but in the columns --baseline names)\n", r.point.c_str());
    ++counts[r.verdict];
    rows.push_back(std::move(r));
  }
  std::vector<std::string> pairs;
  for (const auto& [key, value] : o.baseline) pairs.push_back(key + "=" + value);
  std::printf(
      "(each set-up against its baseline: the set-up with %s, equal to it in every other key column%s; "
      "faster/slower: Mann-Whitney p < %g and time / baseline beyond 1 +/- %g %%)\n",
      join(pairs, ",").c_str(), free.size() > named.size() ? " but the balancer's interval, method and finished" : "",
      o.rule.alpha, o.rule.threshold_pct);
  if (simulated) {
    std::printf(
        "(simulated set-ups: their runs are deterministic, so one run each and their ratio is exact: no interval, "
        "no test)\n");
  }
  std::vector<std::string> summary;
  for (const auto& [verdict, count] : counts) summary.push_back(std::to_string(count) + " " + verdict);
  std::printf("compare: %zu set-up(s) against %zu baseline(s): %s\n", rows.size(), ranked.size(),
              join(summary).c_str());
  if (!o.csv.empty()) write_csv(o.csv, rows);
  return 0;
}

}  // namespace

int compare_main(const std::vector<std::string>& args) {
  if (std::find(args.begin(), args.end(), "--help") != args.end()) {
    std::printf(
        "usage: mcmclb compare A B [--threshold PCT] [--alpha P] [--csv FILE] [--ignore COLUMN[,COLUMN...]]\n"
        "       mcmclb compare DIR --baseline KEY=VALUE[,KEY=VALUE...] [--threshold PCT] [--alpha P] [--csv FILE]\n"
        "(docs/guide/statistics.md)\n");
    return 0;
  }
  const Options o = parse(args);
  if (!o.baseline.empty()) return compare_within(o);
  const Columns c = runs_columns_index();
  const auto a = without_columns(read_configurations(o.a), o.a, o.ignore, c);
  const auto b = without_columns(read_configurations(o.b), o.b, o.ignore, c);
  std::map<std::string, const Samples*> all;
  for (const auto* side : {&a, &b}) {
    for (const auto& [key, s] : *side) all.emplace(key, &s);
  }
  std::vector<const Samples*> points;
  for (const auto& [key, s] : all) points.push_back(s);
  const std::set<std::size_t> varying = varying_columns(points, c);
  std::vector<Comparison> rows;
  std::map<std::string, int> counts;
  for (const auto& [key, s] : all) {
    const auto in_a = a.find(key), in_b = b.find(key);
    Comparison r;
    if (in_a != a.end() && in_b != b.end()) {
      r = compare_configurations(in_a->second, in_b->second, o.rule);
    } else {
      r = one_side(*s, in_a != a.end());
    }
    r.point = label(s->key_fields, c, varying);
    ++counts[r.verdict];
    rows.push_back(std::move(r));
  }
  print_table(rows, o);
  std::vector<std::string> summary;
  for (const auto& [verdict, count] : counts) summary.push_back(std::to_string(count) + " " + verdict);
  std::printf("compare: %zu point(s): %s\n", rows.size(), summary.empty() ? "none" : join(summary).c_str());
  if (!o.csv.empty()) write_csv(o.csv, rows);
  return counts["slower"] + counts["changed (simulated)"] > 0 ? 1 : 0;
}

}  // namespace mcmclb
