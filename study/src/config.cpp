// YAML experiment parsing and validation (mcmclb/config.hpp).
#include "mcmclb/config.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <regex>
#include <sstream>

#include "mcmclb/input_error.hpp"
#include "mcmclb/text.hpp"
#include "mcmclb/workload.hpp"

namespace mcmclb {

namespace {

/// Every key an experiment may set, in the documented order; the workload keys come from the workload registry.
const std::vector<std::string>& all_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k = {"experiment", "nprocs",      "G",    "groups.sizes",
                                  "groups.by",  "groups.size", "T_ms", "workload.model"};
    for (const auto& p : workload_params()) k.push_back("workload." + std::string(p.key));
    for (const char* key : {"work.mode",
                            "work.jitter_pct",
                            "work.seed",
                            "work.atoms",
                            "work.temperature",
                            "work.move",
                            "work.max_step",
                            "work.moves_per_item",
                            "work.trace",
                            "balancer",
                            "interval",
                            "method",
                            "finished",
                            "reps",
                            "out",
                            "job.scheduler",
                            "job.partition",
                            "job.account",
                            "job.time_limit",
                            "job.tasks_per_node",
                            "job.extra",
                            "job.setup",
                            "job.launcher",
                            "job.launcher_args",
                            "program",
                            "commbench.reps",
                            "commbench.rep_time_s",
                            "commbench.methods"}) {
      k.emplace_back(key);
    }
    return k;
  }();
  return keys;
}

/// Keys whose value is a list by nature (iterated inside a run, or several lines), never an axis.
const std::vector<std::string> kListKeys = {"balancer",  "interval",  "method",       "finished",
                                            "job.extra", "job.setup", "groups.sizes", "commbench.methods"};
const std::vector<std::string> kSections = {"workload", "work", "job", "commbench", "groups"};

bool is_one_of(const std::string& key, const std::vector<std::string>& set) {
  return std::find(set.begin(), set.end(), key) != set.end();
}

std::string text_of(const YAML::Node& n) {
  if (n.IsScalar()) return n.Scalar();
  YAML::Emitter e;
  e << YAML::Flow << n;
  return e.c_str();
}

/// Flattens nested maps into dotted keys; rejects unknown keys.
void flatten(const YAML::Node& node, const std::string& prefix, std::map<std::string, YAML::Node>& out) {
  for (const auto& entry : node) {
    if (!entry.first.IsScalar()) throw InputError("a key is not a plain name: " + text_of(entry.first));
    const std::string key = prefix.empty() ? entry.first.Scalar() : prefix + "." + entry.first.Scalar();
    const bool is_section = prefix.empty() && is_one_of(key, kSections);
    if (is_section) {
      if (!entry.second.IsMap()) throw InputError("key " + key + ": expected a map of " + key + ".* keys");
      flatten(entry.second, key, out);
      continue;
    }
    if (!is_one_of(key, all_keys())) {
      throw InputError("unknown key '" + key + "' (allowed: " + join(all_keys()) + ")");
    }
    out[key] = entry.second;
  }
}

template <typename T>
T scalar(const std::string& key, const YAML::Node& n, const std::string& what) {
  if (!n.IsScalar()) throw InputError("key " + key + ": expected " + what + ", got " + text_of(n));
  try {
    return n.as<T>();
  } catch (const YAML::Exception&) {
    throw InputError("key " + key + ": expected " + what + ", got '" + n.Scalar() + "'");
  }
}

int64_t integer(const std::string& key, const YAML::Node& n, int64_t lo, int64_t hi) {
  const std::string what = "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  const auto v = scalar<int64_t>(key, n, what);
  if (v < lo || v > hi) throw InputError("key " + key + ": expected " + what + ", got " + std::to_string(v));
  return v;
}

double real(const std::string& key, const YAML::Node& n, double lo, double hi, bool lo_open) {
  const auto fmt = [](double v) {
    char text[32];
    std::snprintf(text, sizeof text, "%.12g", v);
    return std::string(text);
  };
  std::ostringstream what;
  what << "a number in " << (lo_open ? "(" : "[") << fmt(lo) << ", " << fmt(hi) << "]";
  const auto v = scalar<double>(key, n, what.str());
  if (!std::isfinite(v) || v < lo || v > hi || (lo_open && v == lo)) {
    throw InputError("key " + key + ": expected " + what.str() + ", got " + n.Scalar());
  }
  return v;
}

std::string choice(const std::string& key, const YAML::Node& n, const std::vector<std::string>& allowed) {
  const auto v = scalar<std::string>(key, n, "one of " + join(allowed));
  if (!is_one_of(v, allowed)) {
    throw InputError("key " + key + ": '" + v + "' is not allowed (allowed: " + join(allowed) + ")");
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
      throw InputError("key " + key + ": given twice (lines " + std::to_string(at->second) + " and " +
                       std::to_string(line) + "); give each key once");
    }
    check_duplicate_keys(entry.second, key);
  }
}

YAML::Node load(const std::string& text, const std::string& source) {
  try {
    return YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw InputError(source + ": not valid YAML (line " + std::to_string(e.mark.line + 1) + ": " + e.msg + ")");
  }
}

void apply_override(YAML::Node& root, const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw InputError("--set " + assignment + ": expected key=value (e.g. --set T_ms=50)");
  }
  const std::string key = assignment.substr(0, eq);
  if (!is_one_of(key, all_keys())) {
    throw InputError("--set: unknown key '" + key + "' (allowed: " + join(all_keys()) + ")");
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

}  // namespace

namespace {

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

std::regex time_limit_format() { return std::regex(R"(^(\d+-)?\d+(:\d{1,2}){0,2}$)"); }

/// Builds and validates one experiment from its flattened keys (no axes left).
Experiment parse_keys(const std::map<std::string, YAML::Node>& keys) {
  Experiment e;
  for (const auto& [key, n] : keys) {
    if (key == "experiment") {
      e.name = scalar<std::string>(key, n, "a name");
      if (e.name.empty() || e.name.find_first_of("/\\,\n\"") != std::string::npos) {
        throw InputError("key experiment: expected a non-empty name without / \\ , or quotes, got '" + e.name + "'");
      }
    } else if (key == "nprocs") {
      e.nprocs = static_cast<int>(integer(key, n, 1, kMaxInt));
    } else if (key == "G") {
      e.G = static_cast<int>(integer(key, n, 1, kMaxInt));
    } else if (key == "T_ms") {
      e.T_ms = real(key, n, 0.0, 3.6e6, true);
    } else if (key == "workload.model") {
      std::vector<std::string> names;
      for (const auto& w : workload_entries()) names.emplace_back(w.name);
      e.workload.model = choice(key, n, names);
    } else if (key.rfind("workload.", 0) == 0) {
      e.workload.set(key.substr(9), workload_value(key, n));
    } else if (key == "work.mode") {
      e.work.mode = lookup(kWorkModes, choice(key, n, names_of(kWorkModes)));
    } else if (key == "work.jitter_pct") {
      e.work.jitter_pct = real(key, n, 0.0, 99.0, false);
    } else if (key == "work.atoms") {
      // 0 or "magic": the magic sizes by chain; lj::kMaxAtoms bounds a cluster.
      if (n.IsScalar() && n.Scalar() == "magic") {
        e.work.compute.atoms = 0;
      } else {
        e.work.compute.atoms = static_cast<int>(integer(key, n, 0, 256));
        if (e.work.compute.atoms == 1)
          throw InputError("key work.atoms: a cluster needs 2..256 atoms (0 or magic: 13, 19, 26, 38, 55 by chain)");
      }
    } else if (key == "work.temperature") {
      e.work.compute.temperature = real(key, n, 0.0, 1e6, true);
    } else if (key == "work.move") {
      e.work.compute.move = lookup(kMoveKinds, choice(key, n, names_of(kMoveKinds)));
    } else if (key == "work.max_step") {
      e.work.compute.max_step = real(key, n, 0.0, 10.0, true);
    } else if (key == "work.trace") {
      e.work.compute.trace = scalar<bool>(key, n, "true or false");
    } else if (key == "work.moves_per_item") {
      e.work.compute.moves_per_item = integer(key, n, 1, int64_t{1} << 30);
    } else if (key == "groups.sizes") {
      e.groups.by = GroupsSpec::By::sizes;
      e.groups.sizes = list<int>(key, n, [&](const YAML::Node& x) {
        const auto v = static_cast<int>(integer(key, x, 0, kMaxInt));
        if (v == 0) throw InputError("key groups.sizes: a group of size 0 (every size is >= 1)");
        return v;
      });
    } else if (key == "groups.by") {
      (void)choice(key, n, {"node"});
      e.groups.by = GroupsSpec::By::node;
    } else if (key == "groups.size") {
      e.groups.node_size = static_cast<int>(integer(key, n, 1, kMaxInt));
    } else if (key == "work.seed") {
      e.work.seed = static_cast<uint64_t>(integer(key, n, 0, std::numeric_limits<int64_t>::max()));
    } else if (key == "balancer") {
      e.balancers = list<std::string>(
          key, n, [&](const YAML::Node& x) { return scalar<std::string>(key, x, "a balancer name"); });
    } else if (key == "interval") {
      e.intervals =
          list<int>(key, n, [&](const YAML::Node& x) { return static_cast<int>(integer(key, x, 1, kMaxInt)); });
    } else if (key == "method") {
      e.methods =
          list<std::string>(key, n, [&](const YAML::Node& x) { return scalar<std::string>(key, x, "a method name"); });
    } else if (key == "finished") {
      e.finished = list<FinishedRule>(key, n, [&](const YAML::Node& x) {
        return lookup(kFinishedRules, choice(key, x, names_of(kFinishedRules)));
      });
    } else if (key == "reps") {
      e.reps = static_cast<int>(integer(key, n, 1, 100000));
    } else if (key == "out") {
      e.out = scalar<std::string>(key, n, "a folder");
    } else if (key == "job.scheduler") {
      e.job.scheduler = choice(key, n, {"slurm"});
    } else if (key == "job.partition") {
      e.job.partition = slurm_name(key, n, "a partition name");
    } else if (key == "job.account") {
      e.job.account = slurm_name(key, n, "an account name");
    } else if (key == "job.time_limit") {
      e.job.time_limit = scalar<std::string>(key, n, "a time limit");
      if (!std::regex_match(e.job.time_limit, time_limit_format())) {
        throw InputError("key job.time_limit: '" + e.job.time_limit +
                         "' is not a Slurm time limit (MM, MM:SS, HH:MM:SS or D-HH:MM:SS)");
      }
    } else if (key == "job.tasks_per_node") {
      e.job.tasks_per_node = static_cast<int>(integer(key, n, 0, 1 << 20));
    } else if (key == "job.extra") {
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
    } else if (key == "job.setup") {
      e.job.setup =
          list<std::string>(key, n, [&](const YAML::Node& x) { return scalar<std::string>(key, x, "a shell line"); });
    } else if (key == "job.launcher_args") {
      e.job.launcher_args = scalar<std::string>(key, n, "launcher options (one line, e.g. \"--mpi=pmi2\")");
      if (has_control(*e.job.launcher_args)) {
        throw InputError("key job.launcher_args: expected one line of launcher options without control characters");
      }
    } else if (key == "job.launcher") {
      e.job.launcher = choice(key, n, {"srun", "mpiexec"});
    } else if (key == "program") {
      e.program = lookup(kPrograms, choice(key, n, names_of(kPrograms)));
    } else if (key == "commbench.reps") {
      e.commbench.reps = static_cast<int>(integer(key, n, 1, 1000));
    } else if (key == "commbench.rep_time_s") {
      e.commbench.rep_time_s = real(key, n, 0.0, 3600.0, true);
    } else if (key == "commbench.methods") {
      e.commbench.methods =
          list<std::string>(key, n, [&](const YAML::Node& x) { return scalar<std::string>(key, x, "a method name"); });
    }
  }
  if (const auto& model = workload_entry(e.workload.model); model.check != nullptr) model.check(e.workload);
  const bool by_sizes = keys.count("groups.sizes") != 0, by_node = keys.count("groups.by") != 0;
  if (by_sizes && by_node) throw InputError("key groups: give groups.sizes or groups.by, not both");
  if (keys.count("groups.size") != 0 && !by_node) {
    throw InputError("key groups.size: only with groups.by: node (groups of that size within each node)");
  }
  if ((by_sizes || by_node) && keys.count("G") != 0) {
    throw InputError("key G: give G or groups, not both (groups describes the initial walker groups)");
  }
  return e;
}

std::vector<std::pair<std::string, std::string>> exclude_rule(const YAML::Node& rule) {
  if (!rule.IsMap()) throw InputError("key exclude: each rule must be a map of key: value, got " + text_of(rule));
  std::map<std::string, YAML::Node> keys;
  flatten(rule, "", keys);
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const auto& [key, value] : keys) {
    if (key == "out" || key.rfind("job.", 0) == 0) throw InputError("key exclude: " + key + " cannot be matched");
    if (!value.IsScalar()) throw InputError("key exclude: " + key + " must be matched against one value");
    pairs.emplace_back(key, value.Scalar());
  }
  return pairs;
}

}  // namespace

StudyAxes expand_study(const std::string& yaml_text, const std::vector<std::string>& overrides,
                       const std::string& source_name) {
  YAML::Node root = load(yaml_text, source_name);
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
    if (!zip_node.IsMap()) throw InputError("key zip: expected a map of key: [list], got " + text_of(zip_node));
    flatten(zip_node, "", zipped);
    std::string first_key;
    for (const auto& [key, value] : zipped) {
      if (is_one_of(key, kListKeys)) throw InputError("key zip: " + key + " is a list by nature and cannot be zipped");
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
    if (!exclude_node.IsSequence())
      throw InputError("key exclude: expected a list of rules, got " + text_of(exclude_node));
    for (const auto& rule : exclude_node) study.excludes.push_back(exclude_rule(rule));
  }

  // Axes: every other list-valued parameter, in the documented key order.
  std::vector<std::string> axes;
  for (const auto& key : all_keys()) {
    const auto it = keys.find(key);
    if (it == keys.end() || is_one_of(key, kListKeys) || !it->second.IsSequence()) continue;
    if (it->second.size() == 0) throw InputError("key " + key + ": the list is empty");
    axes.push_back(key);
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
      for (const auto& [key, value] : zipped) set(key, value[z]);
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

Experiment parse_experiment(const std::string& yaml_text, const std::vector<std::string>& overrides,
                            const std::string& source_name) {
  StudyAxes study = expand_study(yaml_text, overrides, source_name);
  if (study.experiments.size() != 1 || !study.excludes.empty()) {
    throw InputError(source_name + ": a study with axes (" + std::to_string(study.experiments.size()) +
                     " combinations); expected a single experiment");
  }
  return study.experiments.front();
}

std::string launcher_default_args(const std::string& launcher) { return launcher == "srun" ? "--mpi=pmi2" : ""; }

std::string launcher_with_args(const JobSpec& job) {
  const std::string args = job.launcher_args.value_or(launcher_default_args(job.launcher));
  return args.empty() ? job.launcher : job.launcher + " " + args;
}

void check_against_nprocs(const Experiment& e, int nprocs) {
  if (e.nprocs && *e.nprocs != nprocs) {
    throw InputError("key nprocs: the experiment asks for " + std::to_string(*e.nprocs) + " ranks but " +
                     std::to_string(nprocs) + " were launched (mpiexec -n " + std::to_string(*e.nprocs) + ")");
  }
  if (e.groups.by == GroupsSpec::By::sizes) {
    int64_t total = 0;
    for (const int s : e.groups.sizes) total += s;
    if (total != nprocs) {
      throw InputError("key groups.sizes: the sizes add up to " + std::to_string(total) +
                       " but nprocs=" + std::to_string(nprocs) + " (they must cover every rank once, in order)");
    }
  } else if (e.groups.by == GroupsSpec::By::node && e.groups.node_size > 0 && e.job.tasks_per_node > 0 &&
             e.job.tasks_per_node % e.groups.node_size != 0) {
    throw InputError("key groups.size: " + std::to_string(e.groups.node_size) + " does not divide job.tasks_per_node=" +
                     std::to_string(e.job.tasks_per_node) + " (a group would straddle a node)");
  } else if (e.groups.by == GroupsSpec::By::G && nprocs % e.G != 0) {
    throw InputError("key G: G=" + std::to_string(e.G) + " does not divide nprocs=" + std::to_string(nprocs) +
                     " (walker groups must all have G ranks)");
  }
}

}  // namespace mcmclb
