// SPDX-License-Identifier: BSD-3-Clause
// YAML experiment parsing and validation (mcmclb/config.hpp), driven by one table of keys (key_table()).
#include "mcmclb/config.hpp"

#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <sstream>

#include "mcmclb/input_error.hpp"
#include "mcmclb/mpi_build.hpp"
#include "mcmclb/study_value.hpp"
#include "mcmclb/text.hpp"
#include "mcmclb/workload.hpp"

namespace mcmclb {

namespace {

bool is_one_of(const std::string& key, const std::vector<std::string>& set) {
  return std::find(set.begin(), set.end(), key) != set.end();
}

/// A value as a message quotes it: one line, at most 120 bytes of it (a value may be a 10 MB string or a big map).
std::string text_of(const YAML::Node& n) {
  if (n.IsScalar()) return printable(n.Scalar(), 120);
  YAML::Emitter e;
  e << YAML::Flow << n;
  return printable(e.c_str(), 120);
}

template <typename T>
T scalar(const std::string& key, const YAML::Node& n, const std::string& what) {
  if (!n.IsScalar()) throw InputError("key " + key + ": expected " + what + ", got " + text_of(n));
  try {
    return n.as<T>();
  } catch (const YAML::Exception&) {
    throw InputError("key " + key + ": expected " + what + ", got '" + printable(n.Scalar()) + "'");
  }
}

int64_t integer(const std::string& key, const YAML::Node& n, int64_t lo, int64_t hi) {
  const std::string what = "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  const auto v = scalar<int64_t>(key, n, what);
  if (v < lo || v > hi) throw InputError("key " + key + ": expected " + what + ", got " + std::to_string(v));
  return v;
}

/// A bound as messages and the key table show it.
std::string number_text(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.12g", v);
  return text;
}

double real(const std::string& key, const YAML::Node& n, double lo, double hi, bool lo_open) {
  const std::string what =
      "a number in " + std::string(lo_open ? "(" : "[") + number_text(lo) + ", " + number_text(hi) + "]";
  const auto v = scalar<double>(key, n, what);
  if (!std::isfinite(v) || v < lo || v > hi || (lo_open && v == lo)) {
    throw InputError("key " + key + ": expected " + what + ", got " + printable(n.Scalar()));
  }
  return v;
}

std::string choice(const std::string& key, const YAML::Node& n, const std::vector<std::string>& allowed) {
  const auto v = scalar<std::string>(key, n, "one of " + join(allowed));
  if (!is_one_of(v, allowed)) {
    throw InputError("key " + key + ": '" + printable(v) + "' is not allowed (allowed: " + join(allowed) + ")");
  }
  return v;
}

/// A scalar or a non-empty list of scalars, each converted by one.
template <typename T>
std::vector<T> list(const std::string& key, const YAML::Node& n, const std::function<T(const YAML::Node&)>& one) {
  std::vector<T> out;
  if (n.IsSequence()) {
    if (n.size() == 0) throw InputError("key " + key + ": the list is empty");
    for (const auto& item : n) out.push_back(one(item));
  } else {
    out.push_back(one(n));
  }
  return out;
}

/// Refuses a key given twice in one map, anywhere in the tree. yaml-cpp 0.7 keeps both entries and a lookup
/// finds only one of them, so a repeated key would otherwise be dropped silently.
void check_duplicate_keys(const YAML::Node& node, const std::string& prefix) {
  if (node.IsSequence()) {
    for (const auto& item : node) check_duplicate_keys(item, prefix);
    return;
  }
  if (!node.IsMap()) return;
  std::map<std::string, int> seen;  // key -> line (1-based)
  for (const auto& entry : node) {
    if (!entry.first.IsScalar()) continue;  // flatten() refuses it with its own message
    const std::string key = prefix.empty() ? entry.first.Scalar() : prefix + "." + entry.first.Scalar();
    const int line = entry.first.Mark().line + 1;
    if (const auto [at, added] = seen.emplace(key, line); !added) {
      throw InputError("key " + printable(key) + ": given twice (lines " + std::to_string(at->second) + " and " +
                       std::to_string(line) + "); give each key once");
    }
    check_duplicate_keys(entry.second, key);
  }
}

/// yaml-cpp resolves an alias to the anchored node itself, so a document is a graph: an alias inside its own anchor
/// is a cycle that every recursive walk here (duplicate keys, flatten, the emitter of messages) would follow until
/// the stack overflows, and aliases of aliases expand exponentially ("billion laughs"). This walk comes first and is
/// bounded in depth and in nodes visited with aliases expanded, so every later walk is bounded too.
void check_bounds(const YAML::Node& n, int depth, std::size_t& visited, const std::string& source) {
  if (depth > kMaxYamlDepth) {
    throw InputError(source + ": maps and lists nested more than " + std::to_string(kMaxYamlDepth) +
                     " levels deep (a recursive alias?); allowed: a study's few levels of keys, sections and lists");
  }
  if (++visited > kMaxYamlNodes) {
    throw InputError(source + ": more than " + std::to_string(kMaxYamlNodes) +
                     " YAML values, an alias counted each time it is used (allowed: at most " +
                     std::to_string(kMaxYamlNodes) + ")");
  }
  if (n.IsMap()) {
    for (const auto& entry : n) {
      check_bounds(entry.first, depth + 1, visited, source);
      check_bounds(entry.second, depth + 1, visited, source);
    }
  } else if (n.IsSequence()) {
    for (const auto& item : n) check_bounds(item, depth + 1, visited, source);
  }
}

/// One YAML document, bounded (check_bounds). A second document (after a line ---) is refused: the parser would
/// otherwise read only the first and drop the rest silently.
YAML::Node load(const std::string& text, const std::string& source) {
  std::vector<YAML::Node> documents;
  try {
    documents = YAML::LoadAll(text);
  } catch (const YAML::ParserException& e) {
    throw InputError(source + ": not valid YAML (line " + std::to_string(e.mark.line + 1) + ": " + e.msg + ")");
  }
  if (documents.size() > 1) {
    throw InputError(source + ": holds " + std::to_string(documents.size()) +
                     " YAML documents (a line --- starts another); allowed: one");
  }
  YAML::Node root = documents.empty() ? YAML::Node() : documents.front();
  std::size_t visited = 0;
  check_bounds(root, 0, visited, source);
  return root;
}

/// A workload key's value, typed and bounded as its model declares it.
ParamValue workload_value(const std::string& key, const YAML::Node& n) {
  const std::string_view name = std::string_view(key).substr(9);  // after "workload."
  const auto& params = workload_params();
  const auto p = std::find_if(params.begin(), params.end(), [&](const auto& q) { return q.key == name; });
  if (p->is_integer()) return integer(key, n, std::get<int64_t>(p->lo), std::get<int64_t>(p->hi));
  return real(key, n, std::get<double>(p->lo), std::get<double>(p->hi), p->lo_open);
}

/// The names of a name -> enum table, for choice(); lookup() maps a chosen name back.
template <typename Table>
std::vector<std::string> names_of(const Table& table) {
  std::vector<std::string> names;
  for (const auto& [name, value] : table) names.emplace_back(name);
  return names;
}

template <typename Table>
auto lookup(const Table& table, const std::string& name) {
  for (const auto& [n, value] : table) {
    if (n == name) return value;
  }
  return table.front().second;  // unreachable: choice() admitted only names of the table
}

bool has_control(const std::string& text) {
  return std::any_of(text.begin(), text.end(),
                     [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

/// A Slurm partition or account name: it reaches an #SBATCH line of the batch script, so no spaces, quotes or
/// control characters (a line break there would start a shell command).
std::string slurm_name(const std::string& key, const YAML::Node& n, const std::string& what) {
  const auto v = scalar<std::string>(key, n, what);
  // Empty stands for the cluster's default (the shipped paper configs write account: "").
  if (v.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.,+@:") !=
      std::string::npos) {
    throw InputError("key " + key + ": expected " + what +
                     " of letters, digits and _ - . , + @ : only (or \"\" for the cluster's default)");
  }
  return v;
}

/// An experiment name becomes a folder of its own (results/<name>: '.' and '..' would put the results elsewhere), part
/// of every run id and CSV row, and #SBATCH --job-name: a short name of characters safe in all of them.
std::string experiment_name(const std::string& key, const YAML::Node& n) {
  const auto v = scalar<std::string>(key, n, "a name");
  if (v.empty() || v.size() > kMaxNameBytes || v.front() == '.' ||
      v.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != std::string::npos) {
    throw InputError("key " + key + ": '" + printable(v) + "' is not allowed (allowed: 1 to " +
                     std::to_string(kMaxNameBytes) + " letters, digits, . _ or -, not starting with .)");
  }
  return v;
}

/// A Slurm time limit as `#SBATCH --time` takes it: [D-]N[:NN[:NN]], every N a decimal digit (what the regular
/// expression ^(\d+-)?\d+(:\d{1,2}){0,2}$ says; written out: <regex> made this file take a fifth to a quarter longer
/// to compile, in each of the four builds the test command makes).
bool is_time_limit(std::string_view t) {
  std::size_t i = 0;
  const auto digits = [&] {  // the run of digits from i, and i past it
    const std::size_t from = i;
    while (i < t.size() && t[i] >= '0' && t[i] <= '9') ++i;
    return i - from;
  };
  if (digits() == 0) return false;
  if (i < t.size() && t[i] == '-') {
    ++i;
    if (digits() == 0) return false;
  }
  for (int fields = 0; i < t.size(); ++fields) {
    if (fields == 2 || t[i] != ':') return false;
    ++i;
    const std::size_t n = digits();
    if (n < 1 || n > 2) return false;
  }
  return true;
}

// ---- The key table: every key an experiment or study file may set, written once ----

/// How a given value changes the experiment (it validates first and throws InputError naming the key).
using Apply = std::function<void(Experiment& e, const std::string& key, const YAML::Node& value)>;

/// Where a key's allowed names come from when they live outside the study library: the balancers and creation
/// methods are known to the catalog (balancers/), which config_keys_markdown() is given.
enum class NamesFrom { none, balancers, methods, finished_rules };

/// One row of the table. The parser, the defaults, --set, the "allowed:" list of an unknown key, which keys are
/// lists by nature, the sections of dotted keys and docs/reference/keys.md (mcmclb keys) all come from these rows.
struct KeyDef {
  KeyInfo info;
  std::optional<std::string>
      default_yaml;  // applied when the key is not given (YAML text), and documented as
                     // it is; none: the key stays unset (info.default_value says what that means)
  Apply apply;       // null for zip and exclude, which shape a study rather than set a value
  NamesFrom names = NamesFrom::none;
};

std::string code_list(const std::vector<std::string>& names) {
  std::vector<std::string> quoted;
  for (const auto& n : names) quoted.push_back("`" + n + "`");
  return join(quoted);
}

/// An integer key in [lo, hi]; set receives the checked value.
KeyDef int_key(std::string name, int64_t lo, int64_t hi, std::optional<std::string> def, std::string meaning,
               std::function<void(Experiment&, int64_t)> set) {
  std::string allowed =
      hi >= kMaxInt ? ">= " + std::to_string(lo) : "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  return {{std::move(name), "int", def.value_or(""), std::move(allowed), std::move(meaning)},
          std::move(def),
          [lo, hi, set = std::move(set)](Experiment& e, const std::string& key, const YAML::Node& n) {
            set(e, integer(key, n, lo, hi));
          }};
}

/// A number in [lo, hi], or (lo, hi] when lo_open.
KeyDef real_key(std::string name, double lo, double hi, bool lo_open, std::string def, std::string meaning,
                std::function<void(Experiment&, double)> set) {
  std::string allowed = (lo_open ? "(" : "[") + number_text(lo) + ", " + number_text(hi) + "]";
  return {{std::move(name), "number", def, std::move(allowed), std::move(meaning)},
          std::move(def),
          [lo, hi, lo_open, set = std::move(set)](Experiment& e, const std::string& key, const YAML::Node& n) {
            set(e, real(key, n, lo, hi, lo_open));
          }};
}

/// One name of a name -> value table (kWorkModes, kMoveKinds, ...).
template <typename Table>
KeyDef choice_key(std::string name, const Table& table, std::string def, std::string meaning,
                  std::function<void(Experiment&, decltype(table.front().second))> set) {
  const std::vector<std::string> names = names_of(table);
  return {{std::move(name), "name", def, code_list(names), std::move(meaning)},
          std::move(def),
          [&table, names, set = std::move(set)](Experiment& e, const std::string& key, const YAML::Node& n) {
            set(e, lookup(table, choice(key, n, names)));
          }};
}

/// One of fixed names that are stored as they are (job.scheduler, job.launcher).
KeyDef name_key(std::string name, std::vector<std::string> names, std::string def, std::string meaning,
                std::function<void(Experiment&, std::string)> set) {
  std::string allowed = code_list(names);
  return {{std::move(name), "name", def, std::move(allowed), std::move(meaning)},
          std::move(def),
          [names = std::move(names), set = std::move(set)](Experiment& e, const std::string& key, const YAML::Node& n) {
            set(e, choice(key, n, names));
          }};
}

/// A list of names checked later against the catalog (balancers, creation methods), or a single name.
std::function<std::vector<std::string>(const std::string&, const YAML::Node&)> names_list(const char* what) {
  return [what](const std::string& key, const YAML::Node& n) {
    return list<std::string>(key, n, [&](const YAML::Node& x) { return scalar<std::string>(key, x, what); });
  };
}

/// A workload key from the registry (kernel/src/workloads/): typed, bounded and defaulted as its models declare.
KeyDef workload_key(const WorkloadParam& p) {
  std::vector<std::string> readers;
  for (const auto& w : workload_entries()) {
    for (const auto& q : w.params) {
      if (q.key == p.key) readers.emplace_back(w.name);
    }
  }
  const auto text = [](const ParamValue& v) {
    return std::holds_alternative<int64_t>(v) ? std::to_string(std::get<int64_t>(v)) : number_text(std::get<double>(v));
  };
  std::string allowed = (p.lo_open ? "(" : "[") + text(p.lo) + ", " + text(p.hi) + "]";
  if (p.is_integer() && std::get<int64_t>(p.hi) >= kMaxInt) allowed = ">= " + text(p.lo);
  // The model applies its own default (WorkloadSpec::value), so the table documents it and sets nothing.
  return {{"workload." + std::string(p.key), p.is_integer() ? "int" : "number", "`" + text(p.default_value) + "`",
           std::move(allowed), "read by " + code_list(readers)},
          std::nullopt,
          [](Experiment& e, const std::string& key, const YAML::Node& n) {
            e.workload.set(key.substr(9), workload_value(key, n));
          }};
}

std::vector<KeyDef> build_key_table() {
  using E = Experiment;
  std::vector<KeyDef> t;
  const auto add = [&t](KeyDef k) { t.push_back(std::move(k)); };
  const auto list_by_nature = [&t] { t.back().info.list_by_nature = true; };
  const auto study_key = [&t] { t.back().info.scope = KeyInfo::Scope::study; };

  add({{"experiment", "name", "",
        "1 to " + std::to_string(kMaxNameBytes) + " letters, digits, `.` `_` or `-`, not starting with `.`",
        "names the output folder (`results/<experiment>`) and the run ids"},
       "experiment",
       [](E& e, const std::string& key, const YAML::Node& n) { e.name = experiment_name(key, n); }});
  add(int_key("nprocs", 1, kMaxInt, std::nullopt,
              "if given, must equal the launched rank count; a study needs it (a number or a list of them)",
              [](E& e, int64_t v) { e.nprocs = static_cast<int>(v); }));
  t.back().info.default_value = "(the launched rank count)";
  add(int_key("G", 1, kMaxInt, "1", "initial walker-group size: groups of G consecutive ranks; must divide nprocs",
              [](E& e, int64_t v) { e.G = static_cast<int>(v); }));
  add({{"groups.sizes", "list of ints", "", ">= 1 each, adding up to nprocs",
        "initial walker groups of these sizes, covering the ranks in order (instead of G)"},
       std::nullopt,
       [](E& e, const std::string& key, const YAML::Node& n) {
         e.groups.by = GroupsSpec::By::sizes;
         e.groups.sizes = list<int>(key, n, [&](const YAML::Node& x) {
           const auto v = static_cast<int>(integer(key, x, 0, kMaxInt));
           if (v == 0) throw InputError("key groups.sizes: a group of size 0 (every size is >= 1)");
           return v;
         });
       }});
  list_by_nature();
  add(int_key("groups.count", 1, kMaxInt, std::nullopt,
              "initial walker groups: this many, of nearly equal sizes in rank order, the larger first, at every rank "
              "count (instead of G); at most nprocs",
              [](E& e, int64_t v) {
                e.groups.by = GroupsSpec::By::count;
                e.groups.count = static_cast<int>(v);
              }));
  add({{"groups.by", "name", "", "`node`",
        "one initial group per shared-memory node (MPI_Comm_split_type SHARED); a node's ranks must be contiguous "
        "(block placement)"},
       std::nullopt,
       [](E& e, const std::string& key, const YAML::Node& n) {
         (void)choice(key, n, {"node"});
         e.groups.by = GroupsSpec::By::node;
       }});
  add(int_key("groups.size", 1, kMaxInt, std::nullopt,
              "with groups.by: node, groups of this size that never straddle a node (must divide each node's rank "
              "count, and job.tasks_per_node if given)",
              [](E& e, int64_t v) { e.groups.node_size = static_cast<int>(v); }));
  add(real_key("T_ms", 0.0, 3.6e6, true, "100", "cost of one item for a single rank, ms (unused in compute mode)",
               [](E& e, double v) { e.T_ms = v; }));
  {
    std::vector<std::string> models;
    for (const auto& w : workload_entries()) models.emplace_back(w.name);
    add({{"workload.model", "name", "", code_list(models),
          "how many items each chain holds (the models: docs/reference/keys.md, Workload models)"},
         "cyclic",
         [models](E& e, const std::string& key, const YAML::Node& n) { e.workload.model = choice(key, n, models); }});
  }
  for (const auto& p : workload_params()) add(workload_key(p));
  // The trace files: a path each, read from the working folder.
  const auto file_key = [](const char* name, std::string WorkloadSpec::*field, const char* allowed, const char* what) {
    return KeyDef{{name, "text", "", allowed, what},
                  std::nullopt,
                  [name, field](E& e, const std::string& key, const YAML::Node& n) {
                    std::string& path = e.workload.*field;
                    path = scalar<std::string>(key, n, "a file");
                    if (path.empty() || has_control(path)) {
                      throw InputError("key " + std::string(name) + ": '" + printable(path) +
                                       "' is not allowed (allowed: a non-empty path without control characters)");
                    }
                  }};
  };
  add(file_key("workload.file", &WorkloadSpec::file, "a readable trace file (docs/reference/columns.md, trace files)",
               "read by `trace`: the recorded item costs it replays (a path from the working folder)"));
  add(file_key("workload.plan_file", &WorkloadSpec::plan_file,
               "a trace file of workload.file's walkers and items; default: workload.file",
               "read by `trace`: what `pays` and the planners believe items cost; the replay charges "
               "workload.file's"));
  add(choice_key("workload.map", kTraceMaps, "tile",
                 "read by `trace`: the study's chains, group by group, replay the C trace chains in turn (`tile`), "
                 "one drawn with workload.seed each (`draw`), or each once as dealt ([`once`](columns.md#trace-files))",
                 [](E& e, TraceMap v) { e.workload.map = v; }));
  add(choice_key("workload.scaling", kTraceScalings, "trace",
                 "read by `trace`: what `pays` and the planners predict an item costs at m ranks: the trace's "
                 "speed-ups (`trace`) or its single-rank cost over m (`perfect`)",
                 [](E& e, TraceScaling v) { e.workload.scaling = v; }));
  add(choice_key("workload.extrapolate", kTraceExtrapolations, "flat",
                 "read by `trace`: the speed-up past the largest size given: held (`flat`), fitted by Amdahl's "
                 "law (`amdahl`) or the Universal Scalability Law (`usl`), or grown with the ranks (`perfect`)",
                 [](E& e, TraceExtrapolation v) { e.workload.extrapolate = v; }));
  add(choice_key("workload.speedups", kTraceSpeedups, "median",
                 "read by `trace`: which of a size's repeated speed-ups the replay takes: their median, the lowest "
                 "(`low`) or the highest (`high`)",
                 [](E& e, TraceSpeedups v) { e.workload.speedups = v; }));
  add(int_key("chains_per_group", 1, kMaxChainsPerGroup, "1",
              "W: chains each initial group owns, worked one after another; the group led by rank L takes the "
              "model's S at indices L*W to L*W+W-1",
              [](E& e, int64_t v) { e.workload.chains_per_group = static_cast<int>(v); }));
  add(choice_key("work.mode", kWorkModes, "sleep",
                 "`sleep` (many ranks can share few cores), `spin` (busy until a monotonic deadline) or `compute` "
                 "(Lennard-Jones walkers; T_ms and work.jitter_pct are then unused)",
                 [](E& e, WorkMode v) { e.work.mode = v; }));
  add(real_key("work.jitter_pct", 0.0, 99.0, false, "0",
               "per-item cost varies uniformly by +- this percent, seeded per chain and item",
               [](E& e, double v) { e.work.jitter_pct = v; }));
  add(int_key("work.seed", 0, std::numeric_limits<int64_t>::max(), "1",
              "jitter seed; compute: the walkers' random stream",
              [](E& e, int64_t v) { e.work.seed = static_cast<uint64_t>(v); }));
  add({{"work.atoms", "int or `magic`", "", "2..256, or `magic` (same as 0)",
        "compute: atoms per cluster; `magic`: 13, 19, 26, 38, 55 cyclic by chain"},
       "magic",
       [](E& e, const std::string& key, const YAML::Node& n) {
         // 0 or "magic": the magic sizes by chain; lj::kMaxAtoms bounds a cluster.
         if (n.IsScalar() && n.Scalar() == "magic") {
           e.work.compute.atoms = 0;
           return;
         }
         e.work.compute.atoms = static_cast<int>(integer(key, n, 0, 256));
         if (e.work.compute.atoms == 1)
           throw InputError("key work.atoms: a cluster needs 2..256 atoms (0 or magic: 13, 19, 26, 38, 55 by chain)");
       }});
  add(real_key("work.temperature", 0.0, 1e6, true, "0.25", "compute: k_B T / epsilon",
               [](E& e, double v) { e.work.compute.temperature = v; }));
  add(choice_key("work.move", kMoveKinds, "single",
                 "compute: `single` (one random atom) or `all` (every atom) displaced per trial",
                 [](E& e, MoveKind v) { e.work.compute.move = v; }));
  add(real_key("work.max_step", 0.0, 10.0, true, "0.1", "compute: largest displacement per coordinate, sigma",
               [](E& e, double v) { e.work.compute.max_step = v; }));
  add(int_key("work.moves_per_item", 1, int64_t{1} << 30, "1000",
              "compute: trial moves per item (one allreduce each in a group of 2 or more)",
              [](E& e, int64_t v) { e.work.compute.moves_per_item = v; }));
  add({{"work.trace", "bool", "", "`true`, `false`",
        "compute: write every chain's energy after each item to traces.csv"},
       "false",
       [](E& e, const std::string& key, const YAML::Node& n) {
         e.work.compute.trace = scalar<bool>(key, n, "true or false");
       }});
  add({{"work.record", "bool", "", "`true`, `false`",
        "compute: write every item's cost and each chain's speed-ups to costs.csv, a trace file per run "
        "(docs/guide/your-workload.md)"},
       "false",
       [](E& e, const std::string& key, const YAML::Node& n) {
         e.work.compute.record = scalar<bool>(key, n, "true or false");
       }});
  add(name_key("work.wait", {"auto", "spin", "polite", "yield"}, "auto",
               "real MPI only: `spin` (tests at once), `polite` (naps 200 us), `yield` (yields 1 ms, then naps) or "
               "`auto` (chosen from the cores, measured at the start); provenance.csv records it",
               [](E& e, const std::string& v) {
                 e.work.wait = v == "auto" ? std::nullopt : std::optional(lookup(kWaitPolicies, v));
               }));
  // Sensitivity experiments only, so both default to the model as measured and leave runs.csv's columns empty.
  add(real_key(
      "work.model_compute", 0.0, 1000.0, true, "1",
      "the merge model (`pays`, and compute-mode planning) predicts the compute rate as this factor times "
      "what its calibration measured: a sensitivity experiment (docs/explanation/merge-pays.md); 1 as measured",
      [](E& e, double v) { e.work.model_error.compute = v; }));
  add(real_key("work.model_reduce", 0.0, 1000.0, true, "1",
               "the merge model predicts each reduction's time as this factor times what its calibration measured "
               "(as work.model_compute); 1 as measured",
               [](E& e, double v) { e.work.model_error.reduce = v; }));
  add({{"balancer", "name or list", "", "",
        "the balancers to run, each in turn (the names: the balancer registry, balancers/src/balancers.def)"},
       "none",
       [](E& e, const std::string& key, const YAML::Node& n) { e.balancers = names_list("a balancer name")(key, n); },
       NamesFrom::balancers});
  list_by_nature();
  add({{"interval", "int or list", "", ">= 1 each",
        "collective's interval i (items between exchanges), lookahead's, mostwork's and stealmerge's window k; "
        "ignored by the balancers that do not use it"},
       "1",
       [](E& e, const std::string& key, const YAML::Node& n) {
         e.intervals =
             list<int>(key, n, [&](const YAML::Node& x) { return static_cast<int>(integer(key, x, 1, kMaxInt)); });
       }});
  list_by_nature();
  add({{"method", "name or list", "", "",
        "creation methods; each balancer runs with those it can use (one that can use none of them is an "
        "error)"},
       std::nullopt,
       [](E& e, const std::string& key, const YAML::Node& n) { e.methods = names_list("a method name")(key, n); },
       NamesFrom::methods});
  t.back().info.default_value = "each balancer's default";
  list_by_nature();
  add({{"finished", "name or list", "", code_list(names_of(kFinishedRules)),
        "a finished group: `retire` (ends when no working group is to its right), `coalesce` (keeps merging) or "
        "`pays` (joins only where the merge shortens the chain)"},
       std::nullopt,
       [](E& e, const std::string& key, const YAML::Node& n) {
         e.finished = list<FinishedRule>(key, n, [&](const YAML::Node& x) {
           return lookup(kFinishedRules, choice(key, x, names_of(kFinishedRules)));
         });
       },
       NamesFrom::finished_rules});
  t.back().info.default_value = "each balancer's default";
  list_by_nature();
  add(int_key("reps", 1, 100000, "1", "repetitions of every combination",
              [](E& e, int64_t v) { e.reps = static_cast<int>(v); }));
  add({{"out", "folder", "", "a non-empty path without control characters", "output folder (`--out` overrides)"},
       std::nullopt,
       [](E& e, const std::string& key, const YAML::Node& n) {
         // Empty would write every result file into the working folder.
         e.out = scalar<std::string>(key, n, "a folder");
         if (e.out.empty() || has_control(e.out)) {
           throw InputError("key out: '" + printable(e.out) +
                            "' is not allowed (allowed: a non-empty path without control characters)");
         }
       }});
  t.back().info.default_value = "`results/<experiment>`";
  study_key();
  add(choice_key("order", kRunOrders, "shuffled",
                 "real MPI: `shuffled` (rounds of one repetition per set-up, each round in a fresh random order "
                 "from order_seed), `interleaved` (rounds in the study's order) or `blocked`",
                 [](E& e, RunOrder v) { e.order = v; }));
  study_key();
  add(int_key("order_seed", 0, kMaxInt, std::nullopt,
              "the seed of `order: shuffled`'s random order, recorded in provenance.csv; give the recorded one to "
              "run the same order again",
              [](E& e, int64_t v) { e.order_seed = v; }));
  t.back().info.default_value = "a fresh one per sweep";
  study_key();
  add(choice_key(
      "placement", kPlacements, "block",
      "simulation: hosts filled in order (`block`), dealt over a dragonfly's groups (`groups`), or one rank per "
      "node in turn (`scatter`)",
      [](E& e, Placement v) { e.placement = v; }));
  study_key();
  add(name_key("job.scheduler", {"slurm"}, "slurm", "the only scheduler so far",
               [](E& e, std::string v) { e.job.scheduler = std::move(v); }));
  study_key();
  add({{"job.partition", "name", "", "letters, digits and _ - . , + @ : (or \"\")", "`#SBATCH --partition`"},
       std::nullopt,
       [](E& e, const std::string& key, const YAML::Node& n) {
         e.job.partition = slurm_name(key, n, "a partition name");
       }});
  t.back().info.default_value = "the cluster's default";
  study_key();
  add({{"job.account", "name", "", "letters, digits and _ - . , + @ : (or \"\")", "`#SBATCH --account`"},
       std::nullopt,
       [](E& e, const std::string& key, const YAML::Node& n) {
         e.job.account = slurm_name(key, n, "an account name");
       }});
  t.back().info.default_value = "none";
  study_key();
  add({{"job.time_limit", "text", "", "MM, MM:SS, HH:MM:SS or D-HH:MM:SS",
        "`#SBATCH --time`; unset: 2 x the points' expected time without balancing, plus 10 s per point, at least "
        "5 min"},
       std::nullopt,
       [](E& e, const std::string& key, const YAML::Node& n) {
         e.job.time_limit = scalar<std::string>(key, n, "a time limit");
         if (!is_time_limit(e.job.time_limit)) {
           throw InputError("key job.time_limit: '" + printable(e.job.time_limit) +
                            "' is not a Slurm time limit (MM, MM:SS, HH:MM:SS or D-HH:MM:SS)");
         }
       }});
  t.back().info.default_value = "estimated";
  study_key();
  add(int_key("job.tasks_per_node", 0, 1 << 20, "0", "`#SBATCH --ntasks-per-node`; 0: Slurm decides",
              [](E& e, int64_t v) { e.job.tasks_per_node = static_cast<int>(v); }));
  study_key();
  add({{"job.extra", "list of lines", "", "`#SBATCH ...` lines only",
        "added to the batch script's header as they are; any other line is refused (shell lines go in "
        "job.setup)"},
       std::nullopt,
       [](E& e, const std::string& key, const YAML::Node& n) {
         e.job.extra =
             list<std::string>(key, n, [&](const YAML::Node& x) { return scalar<std::string>(key, x, "a line"); });
         // Slurm stops reading directives at the first line that is not one: a shell line here would silently
         // drop every #SBATCH line after it (and the generated ones follow), so it is refused, not moved.
         for (const auto& line : e.job.extra) {
           if (line.rfind("#SBATCH ", 0) != 0 || has_control(line)) {
             throw InputError("key job.extra: '" + printable(line) +
                              "' is not one '#SBATCH ...' line (shell lines such as 'module load x' go in job.setup)");
           }
         }
       }});
  study_key();
  list_by_nature();
  add({{"job.setup", "list of lines", "", "shell lines", "run in the job before the launch (modules, environment)"},
       std::nullopt,
       [](E& e, const std::string& key, const YAML::Node& n) {
         e.job.setup = list<std::string>(
             key, n, [&](const YAML::Node& x) { return scalar<std::string>(key, x, "a shell line"); });
       }});
  study_key();
  list_by_nature();
  add(name_key("job.launcher", {"srun", "mpiexec"}, "srun",
               "`srun` (Slurm's launcher, with the plugin of the build's MPI by default) or `mpiexec` (the build's "
               "own, e.g. `/usr/bin/mpiexec.mpich` or `/usr/bin/mpiexec.openmpi`, inside the allocation)",
               [](E& e, std::string v) { e.job.launcher = std::move(v); }));
  study_key();
  add({{"job.srun_mpi", "name", "", "a plugin name of letters, digits and _ - (e.g. pmi2, pmix, cray_shasta), or site",
        "srun's `--mpi` plugin; `site`: no `--mpi`, the site's `MpiDefault` (slurm.conf) decides"},
       std::nullopt,
       [](E& e, const std::string& key, const YAML::Node& n) {
         const auto v = scalar<std::string>(key, n, "a plugin name");
         if (v.empty() || v.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") !=
                              std::string::npos) {
           throw InputError("key job.srun_mpi: '" + printable(v) +
                            "' is not allowed (allowed: a plugin name of letters, digits and _ -, e.g. pmi2, pmix, "
                            "cray_shasta; or site, for the site's MpiDefault)");
         }
         e.job.srun_mpi = v;
       }});
  t.back().info.default_value = "the build's MPI family's (`pmi2` MPICH, `pmix` Open MPI; `site` for another MPI)";
  study_key();
  add({{"job.launcher_args", "text", "", "one line without control characters",
        "options after the launcher's name, e.g. `\"--mpi=pmi2 --cpu-bind=cores\"`"},
       std::nullopt,
       [](E& e, const std::string& key, const YAML::Node& n) {
         e.job.launcher_args = scalar<std::string>(key, n, "launcher options (one line, e.g. \"--mpi=pmi2\")");
         if (has_control(*e.job.launcher_args)) {
           throw InputError("key job.launcher_args: expected one line of launcher options without control characters");
         }
       }});
  t.back().info.default_value =
      "for srun none (its plugin comes from job.srun_mpi unless these options hold `--mpi`); for mpiexec, as root, "
      "what its MPI needs to start as root (`--allow-run-as-root` Open MPI, none MPICH)";
  study_key();
  add(choice_key("program", kPrograms, "kernel",
                 "`kernel` (walker-group runs, mcmclb run) or `commbench` (the Fig. 1 benchmark, mcmclb-commbench)",
                 [](E& e, Program v) { e.program = v; }));
  study_key();
  add(int_key("commbench.reps", 1, 1000, "5", "repetitions, passed to mcmclb-commbench",
              [](E& e, int64_t v) { e.commbench.reps = static_cast<int>(v); }));
  study_key();
  add(real_key("commbench.rep_time_s", 0.0, 3600.0, true, "0.2", "seconds per repetition, passed to mcmclb-commbench",
               [](E& e, double v) { e.commbench.rep_time_s = v; }));
  study_key();
  add({{"commbench.methods", "list of names", "", "", "the creation methods mcmclb-commbench measures"},
       std::nullopt,
       [](E& e, const std::string& key, const YAML::Node& n) {
         e.commbench.methods = names_list("a method name")(key, n);
       },
       NamesFrom::methods});
  t.back().info.default_value = "all";
  study_key();
  list_by_nature();
  // zip and exclude shape the study (expand_study reads them); they set no value of a run.
  add({{"zip", "map of key: list", "", "lists of equal length, not of list-by-nature keys",
        "lists varied together, element by element (one axis); a null element (~) leaves its key unset there"},
       std::nullopt,
       nullptr});
  study_key();
  add({{"exclude", "list of maps", "",
        "non-empty maps of key: value, each value one the key accepts (not out, job.*, reps, order, order_seed or "
        "placement)",
        "drops each combination matching every key: value of one rule"},
       std::nullopt,
       nullptr});
  study_key();
  return t;
}

const std::vector<KeyDef>& key_table() {
  static const std::vector<KeyDef> table = build_key_table();
  return table;
}

const KeyDef* find_key(const std::string& name) {
  for (const auto& k : key_table()) {
    if (k.info.name == name && k.apply) return &k;
  }
  return nullptr;
}

/// The keys that set a value (not zip or exclude), in table order: the "allowed:" list of an unknown key.
const std::vector<std::string>& value_keys() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& k : key_table()) {
      if (k.apply) n.push_back(k.info.name);
    }
    return n;
  }();
  return names;
}

bool is_list_by_nature(const std::string& key) {
  const KeyDef* k = find_key(key);
  return k != nullptr && k->info.list_by_nature;
}

/// A top-level name under which dotted keys nest (workload, work, job, commbench, groups).
bool is_section(const std::string& name) {
  return std::any_of(key_table().begin(), key_table().end(),
                     [&](const KeyDef& k) { return k.info.name.rfind(name + ".", 0) == 0; });
}

/// An experiment with every default of the table applied (the keys without one stay unset).
const Experiment& defaults() {
  static const Experiment e = [] {
    Experiment d;
    for (const auto& k : key_table()) {
      if (k.apply && k.default_yaml) k.apply(d, k.info.name, YAML::Load(*k.default_yaml));
    }
    return d;
  }();
  return e;
}

/// Flattens nested maps into dotted keys; rejects unknown keys.
void flatten(const YAML::Node& node, const std::string& prefix, std::map<std::string, YAML::Node>& out) {
  for (const auto& entry : node) {
    if (!entry.first.IsScalar()) throw InputError("a key is not a plain name: " + text_of(entry.first));
    const std::string key = prefix.empty() ? entry.first.Scalar() : prefix + "." + entry.first.Scalar();
    if (prefix.empty() && is_section(key)) {
      if (!entry.second.IsMap() || entry.second.size() == 0) {
        // An empty map sets nothing: `groups: {}` would silently mean "no groups".
        std::vector<std::string> names;
        for (const auto& k : value_keys()) {
          if (k.rfind(key + ".", 0) == 0) names.push_back(k);
        }
        throw InputError("key " + key + ": expected a non-empty map of " + key + ".* keys (allowed: " + join(names) +
                         ")");
      }
      flatten(entry.second, key, out);
      continue;
    }
    if (find_key(key) == nullptr) {
      throw InputError("unknown key '" + printable(key) + "' (allowed: " + join(value_keys()) + ")");
    }
    out[key] = entry.second;
  }
}

void apply_override(YAML::Node& root, const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw InputError("--set " + printable(assignment) + ": expected key=value (e.g. --set T_ms=50)");
  }
  const std::string key = assignment.substr(0, eq);
  if (find_key(key) == nullptr) {
    throw InputError("--set: unknown key '" + printable(key) + "' (allowed: " + join(value_keys()) + ")");
  }
  YAML::Node value = load(assignment.substr(eq + 1), "--set " + key);
  if (!value.IsDefined() || value.IsNull()) value = YAML::Node(std::string());
  if (const auto dot = key.find('.'); dot != std::string::npos) {
    const std::string section = key.substr(0, dot);
    if (!root[section] || !root[section].IsMap()) root[section] = YAML::Node(YAML::NodeType::Map);
    YAML::Node sub = root[section];
    sub[key.substr(dot + 1)] = value;
  } else {
    root[key] = value;
  }
}

/// Builds and validates one experiment from its flattened keys (no axes left): the table's defaults, then each
/// given key (in name order, so the first of several bad keys named is always the same).
Experiment parse_keys(const std::map<std::string, YAML::Node>& keys) {
  Experiment e = defaults();
  for (const auto& [key, n] : keys) {
    if (const KeyDef* k = find_key(key)) k->apply(e, key, n);
  }
  const bool replay = e.workload.model == "trace";
  for (const char* key : {"workload.file", "workload.plan_file", "workload.map", "workload.scaling",
                          "workload.extrapolate", "workload.speedups"}) {
    if (!replay && keys.count(key) != 0) {
      throw InputError("key " + std::string(key) + ": only with workload.model: trace (the model that reads it)");
    }
  }
  if (replay && e.work.mode == WorkMode::compute) {
    throw InputError("key work.mode: compute cannot replay a trace (allowed with workload.model trace: sleep, spin)");
  }
  if (e.work.compute.record && e.work.mode != WorkMode::compute) {
    throw InputError("key work.record: true only with work.mode: compute (the costs it records are computed)");
  }
  if (const auto& model = workload_entry(e.workload.model); model.check != nullptr) model.check(e.workload);
  if (replay) {
    e.workload.file_fnv1a64 = load_trace(e.workload.file, e.workload.extrapolate, e.workload.speedups)->fnv1a64();
    if (!e.workload.plan_file.empty()) {
      e.workload.plan_fnv1a64 =
          load_trace(e.workload.plan_file, e.workload.extrapolate, e.workload.speedups)->fnv1a64();
    }
  }
  const bool by_sizes = keys.count("groups.sizes") != 0, by_node = keys.count("groups.by") != 0,
             by_count = keys.count("groups.count") != 0;
  if (static_cast<int>(by_sizes) + static_cast<int>(by_node) + static_cast<int>(by_count) > 1) {
    throw InputError("key groups: give one of groups.sizes, groups.count or groups.by");
  }
  if (keys.count("groups.size") != 0 && !by_node) {
    throw InputError("key groups.size: only with groups.by: node (groups of that size within each node)");
  }
  if ((by_sizes || by_node || by_count) && keys.count("G") != 0) {
    throw InputError("key G: give G or groups, not both (groups describes the initial walker groups)");
  }
  return e;
}

/// One exclude rule as key -> value text. Each value must be one the key accepts (a rule whose value no point can
/// hold, such as T_ms: abc, would match nothing and be dropped silently); balancer and method names are checked
/// against the registry and every key against the runs' columns by build_study.
std::vector<std::pair<std::string, std::string>> exclude_rule(const YAML::Node& rule, std::size_t number) {
  const std::string which = "key exclude: rule " + std::to_string(number) + ": ";
  if (!rule.IsMap() || rule.size() == 0) {
    throw InputError(which + "expected a non-empty map of key: value, got " + text_of(rule));
  }
  std::map<std::string, YAML::Node> keys;
  flatten(rule, "", keys);
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const auto& [key, value] : keys) {
    if (key == "out" || key.rfind("job.", 0) == 0 || key == "reps" || key == "order" || key == "order_seed" ||
        key == "placement") {
      throw InputError(which + key + " cannot be matched (allowed: keys of a run, e.g. T_ms, nprocs, balancer)");
    }
    if (!value.IsScalar()) throw InputError(which + key + " must be matched against one value, got " + text_of(value));
    Experiment scratch;
    try {
      find_key(key)->apply(scratch, key, value);
    } catch (const InputError& e) {
      throw InputError(which + e.what());
    }
    // runs.csv holds magic atoms as 0, so the rule compares with what the run holds.
    pairs.emplace_back(key, key == "work.atoms" && value.Scalar() == "magic" ? "0" : value.Scalar());
  }
  return pairs;
}

/// A study's keys expanded into its experiments and exclude rules: the checks every study gets, from a file's text
/// (expand_study) or a program's value (node_of) alike.
StudyAxes expand_root(YAML::Node root, const std::vector<std::string>& overrides, const std::string& source_name) {
  if (!root.IsDefined() || root.IsNull()) {
    // An empty, BOM-only or comment-only file is a mistake (wrong file?), not a request for the defaults; with
    // --set the keys may all come from the command line.
    if (overrides.empty()) {
      throw InputError(source_name +
                       ": holds no keys (the file is empty or only comments); expected a map of "
                       "keys such as experiment: NAME");
    }
    root = YAML::Node(YAML::NodeType::Map);
  }
  if (!root.IsMap()) throw InputError(source_name + ": expected a map of keys at the top level");
  check_duplicate_keys(root, "");
  for (const auto& o : overrides) apply_override(root, o);

  StudyAxes study;
  YAML::Node zip_node, exclude_node;
  bool have_zip = false, have_exclude = false;
  YAML::Node params(YAML::NodeType::Map);
  for (const auto& entry : root) {
    const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : "";
    if (key == "zip") {
      zip_node = entry.second;
      have_zip = true;
    } else if (key == "exclude") {
      exclude_node = entry.second;
      have_exclude = true;
    } else {
      params[entry.first] = entry.second;
    }
  }
  std::map<std::string, YAML::Node> keys;
  flatten(params, "", keys);

  // zip: lists of equal length, varied together (one axis).
  std::map<std::string, YAML::Node> zipped;
  std::size_t zip_length = 1;
  if (have_zip) {
    if (!zip_node.IsMap() || zip_node.size() == 0) {
      throw InputError("key zip: expected a non-empty map of key: [list], got " + text_of(zip_node));
    }
    flatten(zip_node, "", zipped);
    std::string first_key;
    for (const auto& [key, value] : zipped) {
      if (is_list_by_nature(key)) throw InputError("key zip: " + key + " is a list by nature and cannot be zipped");
      if (!value.IsSequence() || value.size() == 0) {
        throw InputError("key zip: " + key + " must be a non-empty list, got " + text_of(value));
      }
      if (keys.count(key)) throw InputError("key zip: " + key + " is also given outside zip");
      if (first_key.empty()) {
        first_key = key;
        zip_length = value.size();
      } else if (value.size() != zip_length) {
        throw InputError("key zip: the lists differ in length (" + first_key + " has " + std::to_string(zip_length) +
                         ", " + key + " has " + std::to_string(value.size()) + ")");
      }
    }
  }
  if (have_exclude) {
    if (!exclude_node.IsSequence() || exclude_node.size() == 0) {
      throw InputError("key exclude: expected a non-empty list of rules, got " + text_of(exclude_node));
    }
    for (const auto& rule : exclude_node) study.excludes.push_back(exclude_rule(rule, study.excludes.size() + 1));
  }

  // Axes: every other list-valued parameter, in the documented key order.
  std::vector<std::string> axes;
  for (const auto& key : value_keys()) {
    const auto it = keys.find(key);
    if (it == keys.end() || is_list_by_nature(key) || !it->second.IsSequence()) continue;
    if (it->second.size() == 0) throw InputError("key " + key + ": the list is empty");
    axes.push_back(key);
  }
  // Counted before anything is expanded: three lists of 1000 values would otherwise be 10^9 experiments in memory.
  std::size_t combinations = zip_length;
  std::string factors = have_zip ? "zip (" + std::to_string(zip_length) + ")" : "";
  for (const auto& key : axes) {
    const std::size_t size = keys.at(key).size();
    factors += (factors.empty() ? "" : " x ") + key + " (" + std::to_string(size) + ")";
    combinations = combinations > kMaxStudyPoints / size ? kMaxStudyPoints + 1 : combinations * size;
  }
  if (combinations > kMaxStudyPoints) {
    throw InputError(source_name + ": the axes " + factors + " make more than " + std::to_string(kMaxStudyPoints) +
                     " combinations (allowed: at most " + std::to_string(kMaxStudyPoints) +
                     "; split the study into several files)");
  }
  for (std::size_t z = 0; z < zip_length; ++z) {
    std::vector<std::size_t> index(axes.size(), 0);
    for (bool more = true; more;) {
      // yaml-cpp nodes are references: assigning to point[key] would overwrite the list in `keys` itself, so
      // the entry is replaced, not assigned to.
      std::map<std::string, YAML::Node> point = keys;
      const auto set = [&point](const std::string& key, const YAML::Node& value) {
        point.erase(key);
        point.emplace(key, value);
      };
      for (const auto& [key, value] : zipped) {
        // A null element leaves the key at its default in that combination, so one zip can pair set-ups that
        // take different keys (compute-mode runs beside replays of their trace, which need workload.file).
        if (value[z].IsNull()) {
          point.erase(key);
        } else {
          set(key, value[z]);
        }
      }
      for (std::size_t a = 0; a < axes.size(); ++a) set(axes[a], keys.at(axes[a])[index[a]]);
      study.experiments.push_back(parse_keys(point));
      more = false;  // advance like an odometer: the last axis varies fastest
      for (std::size_t a = axes.size(); a-- > 0;) {
        if (++index[a] < keys.at(axes[a]).size()) {
          more = true;
          break;
        }
        index[a] = 0;
      }
    }
  }
  return study;
}

/// The one experiment of a study without axes; InputError naming source otherwise.
Experiment single_experiment(StudyAxes study, const std::string& source_name) {
  if (study.experiments.size() != 1 || !study.excludes.empty()) {
    throw InputError(source_name + ": a study with axes (" + std::to_string(study.experiments.size()) +
                     " combinations); expected a single experiment");
  }
  return study.experiments.front();
}

// ---- A study as a value (mcmclb/study_value.hpp): the nodes the checks above read, built from typed keys ----

/// A scalar as YAML holds it: the text a file would have, so that every check reads it as it reads a file's.
std::string scalar_text(const StudyScalar& v) {
  if (std::holds_alternative<bool>(v)) return std::get<bool>(v) ? "true" : "false";
  if (std::holds_alternative<int64_t>(v)) return std::to_string(std::get<int64_t>(v));
  if (std::holds_alternative<double>(v)) {
    const double x = std::get<double>(v);
    if (std::isnan(x)) return ".nan";
    if (std::isinf(x)) return x > 0 ? ".inf" : "-.inf";
    char text[40];
    std::snprintf(text, sizeof text, "%.17g", x);
    return text;
  }
  if (std::holds_alternative<std::string>(v)) return std::get<std::string>(v);
  return "~";
}

YAML::Node node_of(const StudyScalar& v) {
  if (std::holds_alternative<std::nullptr_t>(v)) return YAML::Node(YAML::NodeType::Null);
  return YAML::Node(scalar_text(v));
}

YAML::Node flow_node(YAML::NodeType::value type) {
  YAML::Node n(type);
  n.SetStyle(YAML::EmitterStyle::Flow);
  return n;
}

YAML::Node node_of(const StudyEntry& entry) {
  if (const auto* v = std::get_if<StudyScalar>(&entry)) return node_of(*v);
  if (const auto* list = std::get_if<StudyList>(&entry)) {
    YAML::Node n = flow_node(YAML::NodeType::Sequence);
    for (const StudyScalar& v : *list) n.push_back(node_of(v));
    return n;
  }
  if (const auto* zip = std::get_if<StudyZip>(&entry)) {
    YAML::Node n = flow_node(YAML::NodeType::Map);
    for (const auto& [key, list] : *zip) n[key] = node_of(StudyEntry(list));
    return n;
  }
  YAML::Node n(YAML::NodeType::Sequence);
  for (const StudyRule& rule : std::get<StudyExclude>(entry)) {
    YAML::Node r = flow_node(YAML::NodeType::Map);
    for (const auto& [key, v] : rule) r[key] = node_of(v);
    n.push_back(r);
  }
  n.SetStyle(YAML::EmitterStyle::Flow);
  return n;
}

/// The study's root map: a section's keys (workload.map) under one map of the section, as a file writes them.
YAML::Node node_of(const StudyValue& study) {
  YAML::Node root(YAML::NodeType::Map);
  for (const auto& [key, entry] : study.keys) {
    const std::size_t dot = key.find('.');
    if (dot != std::string::npos && is_section(key.substr(0, dot))) {
      const std::string section = key.substr(0, dot);
      if (!root[section]) root[section] = YAML::Node(YAML::NodeType::Map);
      YAML::Node sub = root[section];
      sub[key.substr(dot + 1)] = node_of(entry);
    } else {
      root[key] = node_of(entry);
    }
  }
  return root;
}

/// A node of a study file as a scalar of a value; InputError naming the key where it is a map or a list.
StudyScalar scalar_of(const YAML::Node& n, const std::string& key, const std::string& source) {
  if (n.IsNull()) return nullptr;
  if (!n.IsScalar()) throw InputError(source + ": key " + key + ": expected a value, got " + text_of(n));
  return n.Scalar();
}

StudyEntry entry_of(const YAML::Node& n, const std::string& key, const std::string& source) {
  if (!n.IsSequence()) return scalar_of(n, key, source);
  StudyList list;
  for (const auto& item : n) list.push_back(scalar_of(item, key, source));
  return list;
}

/// A map's keys under dotted names: a section's map (workload: {map: ...}) flattened into workload.map.
void dotted(const YAML::Node& map, const std::string& prefix, std::vector<std::pair<std::string, YAML::Node>>& out,
            const std::string& source) {
  for (const auto& entry : map) {
    if (!entry.first.IsScalar()) throw InputError(source + ": a key is not a plain name: " + text_of(entry.first));
    const std::string key = prefix.empty() ? entry.first.Scalar() : prefix + "." + entry.first.Scalar();
    if (prefix.empty() && entry.second.IsMap() && is_section(key)) {
      dotted(entry.second, key, out, source);
    } else {
      out.emplace_back(key, entry.second);
    }
  }
}

}  // namespace

StudyAxes expand_study(const std::string& yaml_text, const std::vector<std::string>& overrides,
                       const std::string& source_name) {
  if (yaml_text.size() > kMaxStudyBytes) {
    throw InputError(source_name + ": " + std::to_string(yaml_text.size()) +
                     " bytes (allowed: a study file of at most " + std::to_string(kMaxStudyBytes >> 20) + " MiB)");
  }
  return expand_root(load(yaml_text, source_name), overrides, source_name);
}

StudyAxes expand_study(const StudyValue& study, const std::vector<std::string>& overrides,
                       const std::string& source_name) {
  YAML::Node root = node_of(study);
  std::size_t visited = 0;
  check_bounds(root, 0, visited, source_name);
  return expand_root(root, overrides, source_name);
}

Experiment parse_experiment(const std::string& yaml_text, const std::vector<std::string>& overrides,
                            const std::string& source_name) {
  return single_experiment(expand_study(yaml_text, overrides, source_name), source_name);
}

Experiment parse_experiment(const StudyValue& study, const std::vector<std::string>& overrides,
                            const std::string& source_name) {
  return single_experiment(expand_study(study, overrides, source_name), source_name);
}

void StudyValue::set(const std::string& key, StudyEntry value) {
  for (auto& [name, entry] : keys) {
    if (name == key) {
      entry = std::move(value);
      return;
    }
  }
  keys.emplace_back(key, std::move(value));
}

const StudyEntry* StudyValue::find(const std::string& key) const {
  for (const auto& [name, entry] : keys) {
    if (name == key) return &entry;
  }
  return nullptr;
}

void StudyValue::erase(const std::string& key) {
  std::erase_if(keys, [&](const auto& k) { return k.first == key; });
}

StudyValue study_value(const std::string& yaml_text, const std::string& source) {
  if (yaml_text.size() > kMaxStudyBytes) {
    throw InputError(source + ": " + std::to_string(yaml_text.size()) + " bytes (allowed: a study file of at most " +
                     std::to_string(kMaxStudyBytes >> 20) + " MiB)");
  }
  const YAML::Node root = load(yaml_text, source);
  StudyValue study;
  if (!root.IsDefined() || root.IsNull()) return study;
  if (!root.IsMap()) throw InputError(source + ": expected a map of keys at the top level");
  check_duplicate_keys(root, "");
  std::vector<std::pair<std::string, YAML::Node>> keys;
  dotted(root, "", keys, source);
  for (const auto& [key, n] : keys) {
    if (key == "zip") {
      if (!n.IsMap()) throw InputError("key zip: expected a non-empty map of key: [list], got " + text_of(n));
      std::vector<std::pair<std::string, YAML::Node>> lists;
      dotted(n, "", lists, source);
      StudyZip zip;
      for (const auto& [name, list] : lists) {
        if (!list.IsSequence())
          throw InputError("key zip: " + name + " must be a non-empty list, got " + text_of(list));
        zip.emplace_back(name, std::get<StudyList>(entry_of(list, "zip: " + name, source)));
      }
      study.keys.emplace_back(key, std::move(zip));
    } else if (key == "exclude") {
      if (!n.IsSequence()) throw InputError("key exclude: expected a non-empty list of rules, got " + text_of(n));
      StudyExclude exclude;
      for (const auto& rule : n) {
        if (!rule.IsMap()) throw InputError("key exclude: expected a map of key: value, got " + text_of(rule));
        std::vector<std::pair<std::string, YAML::Node>> pairs;
        dotted(rule, "", pairs, source);
        StudyRule typed;
        for (const auto& [name, value] : pairs) typed.emplace_back(name, scalar_of(value, "exclude: " + name, source));
        exclude.push_back(std::move(typed));
      }
      study.keys.emplace_back(key, std::move(exclude));
    } else {
      study.keys.emplace_back(key, entry_of(n, key, source));
    }
  }
  return study;
}

std::string study_file_text(const StudyValue& study) {
  std::string text;
  std::size_t start = 0;
  while (!study.comment.empty() && start < study.comment.size()) {
    const std::size_t end = study.comment.find('\n', start);
    text += "# " + study.comment.substr(start, end - start) + "\n";
    if (end == std::string::npos) break;
    start = end + 1;
  }
  YAML::Emitter out;
  out << node_of(study);
  return text + out.c_str() + "\n";
}

std::string flow_text(const StudyScalar& value) { return scalar_text(value); }

std::string flow_text(const StudyRule& rule) {
  std::vector<std::string> pairs;
  for (const auto& [key, v] : rule) pairs.push_back(key + ": " + scalar_text(v));
  return "{" + join(pairs) + "}";
}

std::string flow_text(const StudyEntry& value) {
  if (const auto* v = std::get_if<StudyScalar>(&value)) return scalar_text(*v);
  std::vector<std::string> items;
  if (const auto* list = std::get_if<StudyList>(&value)) {
    for (const StudyScalar& v : *list) items.push_back(scalar_text(v));
    return "[" + join(items) + "]";
  }
  if (const auto* zip = std::get_if<StudyZip>(&value)) {
    for (const auto& [key, list] : *zip) items.push_back(key + ": " + flow_text(StudyEntry(list)));
    return "{" + join(items) + "}";
  }
  for (const StudyRule& rule : std::get<StudyExclude>(value)) items.push_back(flow_text(rule));
  return "[" + join(items) + "]";
}

StudyList study_list(const std::vector<std::string>& names) { return StudyList(names.begin(), names.end()); }

StudyList study_list(const std::vector<long>& values) {
  StudyList list;
  for (const long v : values) list.emplace_back(int64_t{v});
  return list;
}

std::string srun_mpi_flag(const JobSpec& job) {
  // The plugin the build's MPI family speaks (cmake/Mpi.cmake's table) unless the study names its site's; an MPI
  // of no known family leaves it to the site. The simulation build has none of its own and writes MPICH's, whose
  // messages it replays.
  const std::string_view family = mpi_build::kFamily == "SMPI" ? std::string_view("pmi2") : mpi_build::kSrunMpi;
  const std::string plugin = job.srun_mpi.value_or(family.empty() ? "site" : std::string(family));
  return plugin == "site" ? std::string() : "--mpi=" + plugin;
}

std::string launcher_default_args(const JobSpec& job) {
  if (job.launcher == "srun") return srun_mpi_flag(job);
  // mpiexec as root: what the build's library needs to start as root (Open MPI refuses it otherwise). A batch job
  // runs as the user who submitted it, so this is decided where the script is written.
  std::string args;
  if (job.launcher == "mpiexec" && ::geteuid() == 0) {
    for (const std::string_view flag : mpi_build::kRootFlags) args += (args.empty() ? "" : " ") + std::string(flag);
  }
  return args;
}

std::string launcher_program(const std::string& launcher) {
  return launcher == "mpiexec" && !mpi_build::kMpiexec.empty() ? std::string(mpi_build::kMpiexec) : launcher;
}

bool names_srun_plugin(const std::string& launcher_args) {
  std::stringstream words(launcher_args);
  for (std::string w; words >> w;) {
    if (w == "--mpi" || w.rfind("--mpi=", 0) == 0) return true;
  }
  return false;
}

std::string launcher_with_args(const JobSpec& job) {
  const std::string program = launcher_program(job.launcher);
  std::string args = job.launcher_args.value_or(launcher_default_args(job));
  // srun's plugin goes first, from job.srun_mpi, unless the options name it themselves (the default options are
  // the plugin; studies before job.srun_mpi gave it in launcher_args; giving it in both is refused at plan time).
  if (job.launcher == "srun" && !names_srun_plugin(args)) {
    const std::string flag = srun_mpi_flag(job);
    if (!flag.empty()) args = args.empty() ? flag : flag + " " + args;
  }
  return args.empty() ? program : program + " " + args;
}

void check_against_nprocs(const Experiment& e, int nprocs) {
  if (e.nprocs && *e.nprocs != nprocs) {
    throw InputError("key nprocs: the experiment asks for " + std::to_string(*e.nprocs) + " ranks but " +
                     std::to_string(nprocs) + " were launched (mpiexec -n " + std::to_string(*e.nprocs) + ")");
  }
  if (e.groups.by == GroupsSpec::By::node && e.groups.node_size > 0 && e.job.tasks_per_node > 0 &&
      e.job.tasks_per_node % e.groups.node_size != 0) {
    throw InputError("key groups.size: " + std::to_string(e.groups.node_size) + " does not divide job.tasks_per_node=" +
                     std::to_string(e.job.tasks_per_node) + " (a group would straddle a node)");
  }
  (void)group_count_of(e.groups, e.G, nprocs);
}

std::vector<KeyInfo> config_keys(const Catalog* catalog) {
  std::vector<KeyInfo> keys;
  for (const auto& k : key_table()) {
    KeyInfo info = k.info;
    if (k.default_yaml) info.default_value = "`" + *k.default_yaml + "`";
    if (catalog != nullptr && k.names == NamesFrom::balancers) {
      std::vector<std::string> names;
      for (const auto& b : catalog->balancers) names.emplace_back(b.name);
      info.allowed = code_list(names);
    } else if (catalog != nullptr && k.names == NamesFrom::methods && info.name == "method") {
      std::vector<std::string> per_balancer, defaults_of;
      for (const auto& b : catalog->balancers) {
        if (b.methods.empty()) continue;
        per_balancer.push_back("`" + std::string(b.name) +
                               "`: " + code_list(std::vector<std::string>(b.methods.begin(), b.methods.end())));
        defaults_of.push_back("`" + std::string(b.name) + "`: `" + std::string(b.default_method) + "`");
      }
      info.allowed = join(per_balancer, "; ");
      info.default_value += " (" + join(defaults_of, "; ") + ")";
    } else if (catalog != nullptr && k.names == NamesFrom::methods) {
      info.allowed = code_list(catalog->methods);
    } else if (catalog != nullptr && k.names == NamesFrom::finished_rules) {
      std::vector<std::string> per_balancer, defaults_of;
      for (const auto& b : catalog->balancers) {
        if (b.finished_rules.empty()) continue;
        std::vector<std::string> rules;
        for (const FinishedRule r : b.finished_rules) rules.emplace_back(to_string(r));
        per_balancer.push_back("`" + std::string(b.name) + "`: " + code_list(rules));
        defaults_of.push_back("`" + std::string(b.name) + "`: `" + rules.front() + "`");
      }
      info.allowed += " (offered: " + join(per_balancer, "; ") + ")";
      info.default_value += " (" + join(defaults_of, "; ") + ")";
    }
    keys.push_back(std::move(info));
  }
  return keys;
}

std::string config_keys_markdown(const Catalog& catalog) {
  const auto table = [&](KeyInfo::Scope scope) {
    std::string text = "| key | type | default | allowed | meaning |\n|---|---|---|---|---|\n";
    for (const auto& k : config_keys(&catalog)) {
      if (k.scope != scope) continue;
      const std::string type = k.type + (k.list_by_nature ? " (list by nature)" : "");
      text += "| `" + k.name + "` | " + type + " | " + (k.default_value.empty() ? "-" : k.default_value) + " | " +
              (k.allowed.empty() ? "-" : k.allowed) + " | " + k.meaning + " |\n";
    }
    return text;
  };
  return "## Experiment keys\n\n" + table(KeyInfo::Scope::experiment) + "\n## Study keys\n\n" +
         table(KeyInfo::Scope::study);
}

}  // namespace mcmclb
