// SPDX-License-Identifier: BSD-3-Clause
// A results folder read by configuration (mcmclb/configurations.hpp): runs.csv's valid runs grouped by their
// configuration key, with each run's set-up from events.csv.
#include "mcmclb/configurations.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <unordered_map>

#include "mcmclb/input_error.hpp"
#include "mcmclb/run_files.hpp"
#include "mcmclb/runs_csv.hpp"
#include "mcmclb/text.hpp"

namespace mcmclb {

namespace fs = std::filesystem;

namespace {

using Samples = ConfigurationSamples;

/// Each run's set-up, the creation of its initial groups before the clock starts: the slowest group leader's
/// create_s on its `initial` rows of events.csv (every group is created at once). Runs without such rows (a
/// folder without events.csv, or older runs) are absent: nothing is charged for them.
std::map<std::string, double> initial_creation_s(const std::string& dir) {
  std::map<std::string, double> setup;
  std::ifstream in(fs::path(dir) / "events.csv");
  std::string line;
  if (!in || !std::getline(in, line)) return setup;
  const csv::Row header = csv::split_line(line);
  const auto at = [&](const char* name) {
    return static_cast<std::size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  const std::size_t run = at("run_id"), kind = at("kind"), create = at("create_s");
  if (std::max({run, kind, create}) >= header.size()) return setup;
  while (std::getline(in, line)) {
    if (line.find(",initial,") == std::string::npos) continue;  // most rows are merges: skipped unparsed
    const csv::Row row = csv::split_line(line);
    if (row.size() != header.size() || row[kind] != "initial") continue;
    const double s = parse_finite(row[create]).value_or(0);
    auto [it, fresh] = setup.emplace(row[run], s);
    if (!fresh) it->second = std::max(it->second, s);
  }
  return setup;
}

}  // namespace

std::optional<double> parse_finite(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

RunsColumns runs_columns_index() {
  const csv::Row& header = runs_header();
  const auto at = [&](const std::string& name) {
    return static_cast<std::size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  RunsColumns c;
  for (const auto& column : runs_columns()) {
    if (column.is_configuration_key()) {
      c.key.push_back(at(column.name));
      c.key_names.push_back(column.name);
    }
  }
  c.time = at("time_s");
  c.ideal = at("ideal_s");
  c.calibration = at("calibration_s");
  c.run_id = at("run_id");
  c.commit = at("git_commit");
  c.library = at("mpi_library");
  c.valid = at("valid");
  c.backend = at("backend");
  c.balancer = at("balancer");
  c.finished = at("finished");
  for (const char* name : {"regroups_avg", "regroups_std", "regroups_min", "regroups_max"}) {
    c.regroups.push_back(at(name));
  }
  return c;
}

std::map<std::string, ConfigurationSamples> read_configurations(const std::string& dir) {
  const RunsColumns c = runs_columns_index();
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
  const std::map<std::string, double> setup = initial_creation_s(dir);
  std::unordered_map<std::string, std::size_t> line_of_id;
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
    // Every run counts here, valid or not: two runs under one id cannot be told apart in events.csv, read below.
    if (const auto [was, fresh] = line_of_id.try_emplace(row[c.run_id], line_no); !fresh) {
      throw InputError(shown + ": line " + std::to_string(line_no) + ": run_id " + printable(row[c.run_id], 120) +
                       " is also on line " + std::to_string(was->second) +
                       " (allowed: each run_id once, as runs, ranks and events are joined by it)");
    }
    // A rule left empty is the balancer's former one (collective's rows before it offered a choice).
    if (row[c.finished].empty()) row[c.finished] = older_finished_rule(row[c.balancer]);
    if (row[c.valid] != "true") continue;  // an invalid run measured something else: not a sample
    const auto time = parse_finite(row[c.time]);
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
    s.ideal_s.push_back(parse_finite(row[c.ideal]).value_or(0));
    s.calibration_s.push_back(parse_finite(row[c.calibration]).value_or(0));
    const auto created = setup.find(row[c.run_id]);
    s.setup_s.push_back(created != setup.end() ? created->second : 0);
    s.git_commits.insert(row[c.commit]);
    s.mpi_library = row[c.library];
    s.regroups_avg.push_back(parse_finite(row[c.regroups[0]]).value_or(0));
    std::string exact = row[c.time];
    for (const std::size_t i : c.regroups) exact += "," + row[i];
    s.exact.insert(exact);
  }
  return points;
}

}  // namespace mcmclb
