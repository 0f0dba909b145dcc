// SPDX-License-Identifier: BSD-3-Clause
// Study expansion: experiments into runs, runs into points (mcmclb/study.hpp).
#include "mcmclb/study.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <sstream>
#include <utility>

#include "mcmclb/input_error.hpp"
#include "mcmclb/runs_csv.hpp"
#include "mcmclb/text.hpp"
#include "mcmclb/workload.hpp"

namespace mcmclb {

namespace {

bool same_value(const std::string& rule, const std::string& actual) {
  if (rule == actual) return true;
  char* end_a = nullptr;
  char* end_b = nullptr;
  const double a = std::strtod(rule.c_str(), &end_a);
  const double b = std::strtod(actual.c_str(), &end_b);
  return !rule.empty() && !actual.empty() && *end_a == '\0' && *end_b == '\0' && a == b;
}

int64_t each_initial_group(const RunSpec& spec, const std::function<void(int64_t, int64_t, int)>& unit);

/// A replay of the walkers themselves (workload.map once) refused where a group's share of them would not fit its
/// chains_per_group slots: the walkers past them would silently not run.
void check_dealt(const RunSpec& run) {
  if (run.workload.model != "trace" || run.workload.map != TraceMap::once || run.groups.by == GroupsSpec::By::node) {
    return;
  }
  const auto groups = static_cast<int>(each_initial_group(run, [](int64_t, int64_t, int) {}));
  const int most = make_workload(run.workload)->most_dealt(groups);
  if (most > run.workload.chains_per_group) {
    throw InputError("key chains_per_group: " + std::to_string(run.workload.chains_per_group) +
                     ", but workload.map once deals up to " + std::to_string(most) + " walkers of " +
                     run.workload.file + " to one of the " + std::to_string(groups) +
                     " groups at nprocs=" + std::to_string(run.nprocs) + " (allowed: chains_per_group " +
                     std::to_string(most) + " or more, or more groups)");
  }
}

}  // namespace

std::vector<RunSpec> expand_runs(const Experiment& e, int nprocs, const Catalog& catalog, std::size_t max_runs) {
  for (const auto& m : e.methods) catalog.check_method(m);
  // What each balancer iterates, first: the runs are counted before any is made.
  struct Plan {
    std::string balancer;
    std::vector<int> intervals;
    std::vector<std::optional<FinishedRule>> rules;
    std::vector<std::string> methods;
  };
  std::vector<Plan> plans;
  std::size_t count = 0;
  for (const auto& balancer : e.balancers) {
    const BalancerInfo& info = catalog.balancer(balancer);
    std::vector<std::string> methods;
    for (const auto& m : e.methods) {
      if (std::find(info.methods.begin(), info.methods.end(), m) != info.methods.end()) methods.push_back(m);
    }
    // Named methods of which this balancer can use none: running its default instead would measure a method
    // nobody asked for (balancer async with method create ran intercomm).
    if (methods.empty() && !e.methods.empty() && !info.methods.empty()) {
      throw InputError("key method: balancer " + std::string(info.name) + " can use none of " + join(e.methods) +
                       " (allowed for " + std::string(info.name) + ": " + join(info.methods) + ")");
    }
    if (methods.empty()) methods.emplace_back(info.default_method);
    std::vector<int> intervals = info.uses_interval ? e.intervals : std::vector<int>{0};
    std::vector<std::optional<FinishedRule>> rules;
    for (FinishedRule rule : info.finished_rules) {
      if (e.finished.empty() ? rules.empty()
                             : std::find(e.finished.begin(), e.finished.end(), rule) != e.finished.end()) {
        rules.emplace_back(rule);
      }
    }
    if (info.finished_rules.empty()) {
      rules.emplace_back(std::nullopt);
    } else if (rules.empty()) {
      std::vector<std::string> offered;
      for (FinishedRule rule : info.finished_rules) offered.emplace_back(to_string(rule));
      throw InputError("key finished: balancer " + std::string(info.name) + " offers only " + join(offered));
    }
    // Each factor is bounded (the YAML walk, reps), so the product of four fits in 64 bits.
    count += intervals.size() * rules.size() * methods.size() * static_cast<std::size_t>(e.reps);
    if (count > max_runs) {
      throw InputError("the study expands to more than " + std::to_string(kMaxStudyPoints) +
                       " runs (allowed: at most " + std::to_string(kMaxStudyPoints) +
                       ", counting combinations x balancer x interval x finished x method x reps before exclude; "
                       "split the study into several files)");
    }
    plans.push_back({balancer, std::move(intervals), std::move(rules), std::move(methods)});
  }
  std::vector<RunSpec> runs;
  runs.reserve(count);
  for (const Plan& plan : plans) {
    for (int interval : plan.intervals) {
      for (const auto& finished : plan.rules) {
        for (const auto& method : plan.methods) {
          for (int rep = 0; rep < e.reps; ++rep) {
            RunSpec r;
            r.experiment = e.name;
            r.nprocs = nprocs;
            r.G = e.G;
            r.groups = e.groups;
            r.T_ms = e.T_ms;
            r.workload = e.workload;
            r.work = e.work;
            r.balancer = plan.balancer;
            r.interval = interval;
            r.method = method;
            r.finished = finished;
            r.placement = e.placement;
            r.rep = rep;
            runs.push_back(r);
          }
        }
      }
    }
  }
  return runs;
}

std::map<int, std::vector<std::size_t>> Study::launches() const {
  std::map<int, std::vector<std::size_t>> by_size;
  for (const Point& p : points) by_size[p.spec.nprocs].push_back(p.index);
  for (auto& [nprocs, indices] : by_size) indices = run_order(std::move(indices));
  return by_size;
}

namespace {

/// A uniform draw from [0, n) by rejection from std::mt19937_64, whose output the standard fixes; neither
/// std::uniform_int_distribution nor std::shuffle is fixed by it, so with them a seed could give another order on
/// another standard library.
std::size_t uniform_below(std::mt19937_64& engine, std::size_t n) {
  const std::uint64_t range = n;
  const std::uint64_t limit =
      std::numeric_limits<std::uint64_t>::max() - std::numeric_limits<std::uint64_t>::max() % range;
  std::uint64_t x = engine();
  while (x >= limit) x = engine();
  return static_cast<std::size_t>(x % range);
}

}  // namespace

std::vector<std::size_t> Study::run_order(std::vector<std::size_t> indices) const {
  std::sort(indices.begin(), indices.end());
  if (order == RunOrder::blocked || indices.empty()) return indices;
  const auto rep = [this](std::size_t i) { return points[i].spec.rep; };
  // Interleaved: by repetition, then the study's order (stable: indices are sorted).
  std::stable_sort(indices.begin(), indices.end(), [&](std::size_t a, std::size_t b) { return rep(a) < rep(b); });
  if (order == RunOrder::interleaved) return indices;
  // Shuffled: each round's position of every set-up it holds, drawn over the round as the whole launch has it, so
  // that a subset keeps the whole launch's order.
  const int nprocs = points[indices.front()].spec.nprocs;
  std::map<int, std::vector<std::size_t>> rounds;  // rep -> the launch's points of that repetition, by index
  for (const Point& p : points) {
    if (p.spec.nprocs == nprocs) rounds[p.spec.rep].push_back(p.index);
  }
  std::map<std::size_t, std::size_t> position;  // point -> its place in its round
  for (auto& [r, round] : rounds) {
    const auto seed = static_cast<std::uint64_t>(order_seed);
    std::seed_seq seq{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                      static_cast<std::uint32_t>(nprocs), static_cast<std::uint32_t>(r)};
    std::mt19937_64 engine(seq);
    for (std::size_t k = round.size(); k > 1; --k) std::swap(round[k - 1], round[uniform_below(engine, k)]);
    for (std::size_t k = 0; k < round.size(); ++k) position[round[k]] = k;
  }
  std::stable_sort(indices.begin(), indices.end(), [&](std::size_t a, std::size_t b) {
    return rep(a) != rep(b) ? rep(a) < rep(b) : position.at(a) < position.at(b);
  });
  return indices;
}

int64_t draw_order_seed() {
  std::random_device entropy;
  const std::uint64_t bits = (std::uint64_t{entropy()} << 32) ^ entropy();
  return static_cast<int64_t>(bits % (std::uint64_t{std::numeric_limits<int>::max()} + 1));
}

Study build_study(const std::string& text, const std::vector<std::string>& overrides, const std::string& source,
                  std::optional<int> default_nprocs, const Catalog& catalog) {
  return build_study(expand_study(text, overrides, source), source, default_nprocs, catalog);
}

Study build_study(const StudyValue& value, const std::vector<std::string>& overrides, const std::string& source,
                  std::optional<int> default_nprocs, const Catalog& catalog) {
  return build_study(expand_study(value, overrides, source), source, default_nprocs, catalog);
}

Study build_study(const StudyAxes& axes, const std::string& source, std::optional<int> default_nprocs,
                  const Catalog& catalog) {
  // Every key of every exclude rule must name a column of a run, and a balancer or method a registered one: checked
  // here once, as the matching below stops at a rule's first key that differs and would never look at the others.
  for (std::size_t r = 0; r < axes.excludes.size(); ++r) {
    const std::string which = "key exclude: rule " + std::to_string(r + 1) + ": ";
    for (const auto& [key, value] : axes.excludes[r]) {
      try {
        (void)excluded_value(RunSpec{}, key);
      } catch (const InputError&) {
        throw InputError(which + key + " cannot be matched (allowed: keys of a run, e.g. T_ms, nprocs, balancer)");
      }
      try {
        if (key == "balancer") (void)catalog.balancer(value);
        if (key == "method") catalog.check_method(value);
      } catch (const InputError& e) {
        throw InputError(which + e.what());
      }
    }
  }
  Study study;
  std::size_t expanded = 0;  // runs made so far, excluded ones too: the bound on memory
  // A run equal to an earlier one in every key column and job setting is the same point, run once: an axis over a
  // key that only some workload models read (workload.seed beside cyclic, which has none) repeats the others' runs
  // as they are. (Runs that differ in job settings only are left to check_launch_jobs, which refuses them.)
  std::map<std::string, std::vector<JobSpec>> seen;
  study.name = axes.experiments.front().name;
  study.order = axes.experiments.front().order;
  const std::optional<int64_t> seed = axes.experiments.front().order_seed;
  for (const Experiment& e : axes.experiments) {
    // One order per study: its launches mix the experiments' points.
    if (e.placement != axes.experiments.front().placement) {
      throw InputError(
          "key placement: one placement per study, not a list (allowed: one of block, groups, scatter; a launch "
          "places all its points alike)");
    }
    if (e.order != study.order || e.order_seed != seed) {
      std::vector<std::string> names;
      for (const auto& [name, order] : kRunOrders) names.emplace_back(name);
      throw InputError("key order: one order and one order_seed per study, not lists (allowed: one of " + join(names) +
                       "; its launches mix every combination's points)");
    }
  }
  study.order_seed_drawn = !seed && study.order == RunOrder::shuffled;
  study.order_seed = seed ? *seed : study.order_seed_drawn ? draw_order_seed() : 0;
  study.out = axes.experiments.front().out.empty() ? std::filesystem::path("results") / study.name
                                                   : std::filesystem::path(axes.experiments.front().out);
  for (const Experiment& e : axes.experiments) {
    const std::optional<int> nprocs = e.nprocs ? e.nprocs : default_nprocs;
    if (!nprocs) throw InputError("key nprocs: a study needs nprocs (a number or a list) to be planned or swept");
    if (e.program == Program::commbench) {  // one point per rank count: the benchmark sweeps methods and sizes itself
      if (!axes.excludes.empty()) {
        throw InputError(
            "key exclude: a commbench study has no runs to exclude (allowed: exclude with program: kernel)");
      }
      // Checked here, at plan time, against the registry: each name becomes an argument of a launch command.
      for (const auto& m : e.commbench.methods) catalog.check_method(m, "commbench.methods");
      for (const Point& p : study.points) {
        if (p.program == Program::commbench && p.spec.nprocs == *nprocs) {
          throw InputError("key program: a commbench study runs once per rank count; nprocs=" +
                           std::to_string(*nprocs) + " appears twice (vary commbench.* across studies)");
        }
      }
      RunSpec spec;
      spec.experiment = e.name;
      spec.nprocs = *nprocs;
      study.points.push_back({study.points.size(), spec, e.job, e.program, e.commbench});
      continue;
    }
    check_against_nprocs(e, *nprocs);
    const std::vector<RunSpec> runs = expand_runs(e, *nprocs, catalog, kMaxStudyPoints - expanded);
    expanded += runs.size();
    for (const RunSpec& run : runs) {
      bool excluded = false;
      for (const auto& rule : axes.excludes) {
        bool all = !rule.empty();
        for (const auto& [key, value] : rule) all = all && same_value(value, excluded_value(run, key));
        excluded = excluded || all;
      }
      if (excluded) continue;
      check_dealt(run);
      std::vector<JobSpec>& jobs = seen[point_key(run, {})];
      if (std::find(jobs.begin(), jobs.end(), e.job) != jobs.end()) continue;
      jobs.push_back(e.job);
      study.points.push_back({study.points.size(), run, e.job, e.program, e.commbench});
    }
  }
  if (study.points.empty()) throw InputError(source + ": the exclude rules leave no point to run");
  return study;
}

namespace {

/// The job.* values that reach a batch script as shell text: launcher_args as words that are each quoted for the
/// shell (so nothing in them can run as a command), setup as one shell line each that cannot add a directive.
void check_job_values(const JobSpec& job) {
  if (job.srun_mpi && job.launcher_args && names_srun_plugin(*job.launcher_args)) {
    throw InputError("key job.srun_mpi: '" + *job.srun_mpi + "' while job.launcher_args '" +
                     printable(*job.launcher_args) +
                     "' names srun's plugin too (allowed: the plugin in one of them, "
                     "best job.srun_mpi)");
  }
  if (job.launcher_args) {
    const std::string& args = *job.launcher_args;
    const auto bad =
        args.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.,=:/+@% ");
    if (bad != std::string::npos) {
      throw InputError("key job.launcher_args: '" + printable(args) + "' holds '" + printable(args.substr(bad, 1)) +
                       "' (allowed: words of letters, digits and _ - . , = : / + @ % separated by spaces; each "
                       "reaches the batch script as one quoted word, so no quotes, $, `, ;, |, &, < or >)");
    }
  }
  // sbatch runs --wrap's text as the job's script: an #SBATCH line must not carry a command.
  for (const auto& line : job.extra) {
    if (line.find("--wrap") != std::string::npos) {
      throw InputError("key job.extra: '" + printable(line) +
                       "' holds --wrap, which would run a command (allowed: #SBATCH options that do not; commands "
                       "go in job.setup)");
    }
  }
  // Slurm's formats with numbers of any length pass the key's pattern: the total is bounded here, so a typo
  // cannot overflow Slurm's minute count (sbatch would refuse it only at submission).
  if (!job.time_limit.empty()) {
    // A number past a double's range (hundreds of digits) counts as too long.
    const auto number = [](const std::string& digits) {
      return digits.size() > 300 ? std::numeric_limits<double>::infinity() : std::stod(digits);
    };
    double minutes = 0;
    std::string t = job.time_limit;
    double days = 0;
    if (const auto dash = t.find('-'); dash != std::string::npos) {
      days = number(t.substr(0, dash));
      t = t.substr(dash + 1);
    }
    std::vector<double> parts;
    std::stringstream in(t);
    for (std::string part; std::getline(in, part, ':');) parts.push_back(number(part));
    const bool with_days = job.time_limit.find('-') != std::string::npos;
    if (with_days) {  // D-HH[:MM[:SS]]
      minutes = parts[0] * 60 + (parts.size() > 1 ? parts[1] : 0) + (parts.size() > 2 ? parts[2] / 60 : 0);
    } else if (parts.size() == 3) {  // HH:MM:SS
      minutes = parts[0] * 60 + parts[1] + parts[2] / 60;
    } else {  // MM[:SS]
      minutes = parts[0] + (parts.size() > 1 ? parts[1] / 60 : 0);
    }
    minutes += days * 24 * 60;
    if (!(minutes <= kMaxTimeLimitMin)) {
      throw InputError("key job.time_limit: '" + printable(job.time_limit) +
                       "' is more than 365 days (allowed: MM, MM:SS, HH:MM:SS or D-HH:MM:SS up to 365-00:00:00)");
    }
  }
  for (const auto& line : job.setup) {
    const bool control = std::any_of(line.begin(), line.end(), [](char c) {
      return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;  // a tab too: one rule for every script line
    });
    const auto first = line.find_first_not_of(" \t");
    if (control || (first != std::string::npos && line.compare(first, 7, "#SBATCH") == 0)) {
      throw InputError("key job.setup: '" + printable(line) +
                       "' is not one shell line (allowed: one line each, without control characters, not "
                       "'#SBATCH ...': directives go in job.extra)");
    }
  }
}

}  // namespace

void check_launch_jobs(const Study& study) {
  using Field = std::function<std::string(const JobSpec&)>;
  const auto lines = [](const std::vector<std::string>& v) { return "[" + join(v, ", ") + "]"; };
  // Every job.* key with its value as text: the first that differs names the error.
  const std::vector<std::pair<std::string, Field>> fields = {
      {"job.scheduler", [](const JobSpec& j) { return j.scheduler; }},
      {"job.partition", [](const JobSpec& j) { return j.partition; }},
      {"job.account", [](const JobSpec& j) { return j.account; }},
      {"job.time_limit", [](const JobSpec& j) { return j.time_limit; }},
      {"job.tasks_per_node", [](const JobSpec& j) { return std::to_string(j.tasks_per_node); }},
      {"job.extra", [&](const JobSpec& j) { return lines(j.extra); }},
      {"job.setup", [&](const JobSpec& j) { return lines(j.setup); }},
      {"job.launcher", [](const JobSpec& j) { return j.launcher; }},
      {"job.srun_mpi", [](const JobSpec& j) { return j.srun_mpi.value_or("(unset)"); }},
      {"job.launcher_args", [](const JobSpec& j) { return j.launcher_args.value_or("(unset)"); }},
  };
  std::map<int, std::vector<std::size_t>> by_size;  // in index order, so the message does not follow key order
  for (const Point& p : study.points) by_size[p.spec.nprocs].push_back(p.index);
  for (const auto& [nprocs, indices] : by_size) {
    const Point& first = study.points[indices.front()];
    check_job_values(first.job);
    for (std::size_t i : indices) {
      const Point& other = study.points[i];
      if (first.job == other.job) continue;
      for (const auto& [key, value] : fields) {
        if (value(first.job) == value(other.job)) continue;
        throw InputError("key " + key + ": one batch job runs every point of nprocs=" + std::to_string(nprocs) +
                         ", but point " + std::to_string(first.index) + " has '" + value(first.job) + "' and point " +
                         std::to_string(i) + " has '" + value(other.job) +
                         "' (vary job settings only together with nprocs)");
      }
    }
  }
}

namespace {

/// Calls unit(g, leader, size) for the initial groups of a kernel point, in rank order: every group where the
/// point names their sizes or count, else its groups of G, the first kEstimatedChains at most (nprocs may be
/// 2^31 - 1, and an estimate must come at once without storing the chains). Returns how many groups the point has;
/// groups by node are taken as groups of G (the node layout is known only inside the job).
int64_t each_initial_group(const RunSpec& spec, const std::function<void(int64_t, int64_t, int)>& unit) {
  const int nprocs = spec.nprocs;
  if ((spec.groups.by == GroupsSpec::By::sizes && !spec.groups.sizes.empty()) ||
      (spec.groups.by == GroupsSpec::By::count && spec.groups.count <= nprocs)) {
    const std::vector<int> sizes =
        spec.groups.by == GroupsSpec::By::count ? count_sizes(nprocs, spec.groups.count) : spec.groups.sizes;
    int64_t first = 0, g = 0;
    for (const int size : sizes) {
      unit(g++, first, size);
      first += size;
    }
    return g;
  }
  const int64_t groups = (static_cast<int64_t>(nprocs) + spec.G - 1) / spec.G;
  for (int64_t g = 0; g < std::min(groups, kEstimatedChains); ++g) unit(g, g * spec.G, spec.G);
  return groups;
}

}  // namespace

double expected_point_s(const Point& point, const Catalog& catalog) {
  const int nprocs = point.spec.nprocs;
  if (point.program == Program::commbench) {
    // Each benchmark's repetitions last about rep_time_s each (its iteration count is sized by wall time); the
    // pilot and warm-up iterations before them are few.
    const auto benchmarks = commbench_benchmarks(
        commbench_methods(point.commbench.methods, catalog.supported_methods()), commbench_sizes(nprocs));
    return static_cast<double>(benchmarks.size()) * point.commbench.reps * point.commbench.rep_time_s;
  }
  // The longest unit of chains on its initial group; compute mode's items as T_ms each (set job.time_limit for
  // it). A replayed trace: its chains' recorded seconds at the group's speed-up.
  const auto workload = make_workload(point.spec.workload);
  const Trace* trace = workload->trace();
  const int W = point.spec.workload.chains_per_group;
  double longest_s = 0;
  const auto groups = static_cast<int>(each_initial_group(point.spec, [](int64_t, int64_t, int) {}));
  each_initial_group(point.spec, [&](int64_t g, int64_t leader, int size) {
    // Seconds of a group's unit: its W chains one after another (chain_items()).
    double s = 0;
    for (int c = 0; c < W; ++c) {
      const int index = chain_index(*workload, static_cast<int>(g), groups, static_cast<int>(leader), W, c);
      if (index < 0) continue;  // a slot the trace's walkers leave empty (workload.map once)
      if (trace != nullptr) {
        s += trace->chain_s(workload->trace_chain(index), size);
      } else {
        s += static_cast<double>(workload->items(index)) * point.spec.T_ms / 1000.0 / size;
      }
    }
    longest_s = std::max(longest_s, s);
  });
  return longest_s;
}

double expected_rank_items(const RunSpec& spec) {
  const auto workload = make_workload(spec.workload);
  const int W = spec.workload.chains_per_group;
  double walked = 0, rank_items = 0;
  const auto count = static_cast<int>(each_initial_group(spec, [](int64_t, int64_t, int) {}));
  const int64_t groups = each_initial_group(spec, [&](int64_t g, int64_t leader, int size) {
    for (int c = 0; c < W; ++c) {
      const int index = chain_index(*workload, static_cast<int>(g), count, static_cast<int>(leader), W, c);
      rank_items += static_cast<double>(workload->items(index)) * size;
    }
    ++walked;
  });
  return walked > 0 ? rank_items * static_cast<double>(groups) / walked : 0;
}

double longest_unit_items(const RunSpec& spec) {
  const auto workload = make_workload(spec.workload);
  const int W = spec.workload.chains_per_group;
  double longest = 0;
  const auto count = static_cast<int>(each_initial_group(spec, [](int64_t, int64_t, int) {}));
  each_initial_group(spec, [&](int64_t g, int64_t leader, int) {
    double unit = 0;
    for (int c = 0; c < W; ++c) {
      const int index = chain_index(*workload, static_cast<int>(g), count, static_cast<int>(leader), W, c);
      unit += static_cast<double>(workload->items(index));
    }
    longest = std::max(longest, unit);
  });
  return longest;
}

std::string commbench_file(int nprocs) { return "commbench-n" + std::to_string(nprocs) + ".csv"; }

std::string CommbenchBenchmark::key() const {
  return method + "/" + std::string(op) + "/" + std::to_string(group_size) + (groups.empty() ? "" : "/" + groups);
}

std::vector<int> commbench_sizes(int nprocs) {
  std::vector<int> sizes;
  for (int n = 1; n < nprocs; n *= 2) sizes.push_back(n);
  sizes.push_back(nprocs);
  const bool power_of_two = (nprocs & (nprocs - 1)) == 0;
  if (power_of_two && nprocs >= 4) sizes.push_back(nprocs - 1);  // P itself is the odd size otherwise
  std::sort(sizes.begin(), sizes.end());
  return sizes;
}

std::vector<std::string> commbench_methods(const std::vector<std::string>& named,
                                           const std::vector<std::string>& supported) {
  if (!named.empty()) return named;
  std::vector<std::string> methods = supported;
  methods.emplace_back(kCommbenchFloor);
  return methods;
}

std::vector<CommbenchBenchmark> commbench_benchmarks(const std::vector<std::string>& methods,
                                                     const std::vector<int>& sizes, const std::string& groups) {
  std::vector<CommbenchBenchmark> all;
  for (const auto& method : methods) {
    for (std::string_view op : kCommbenchOps) {
      for (int size : sizes) all.push_back({method, op, size, groups});
    }
  }
  return all;
}

const csv::Row& commbench_header() {
  // backend (mpi | smpi) and the platform columns keep real and simulated rows apart in any merged file; smpi
  // rows are simulated times on the platform named, never measurements of hardware. Later columns are appended
  // (kCommbenchHeaderVersions), so files written before them keep their layout and positional readers keep
  // working: iter_median_us, then the Slurm job and its nodes (empty outside Slurm), then the summary of the
  // benchmark's repetitions on each of its rows (reps, the median of time_us and its 95 % interval), then the
  // version of the SimGrid library that simulated (smpi rows; mpi_library names only its major and minor).
  static const csv::Row header = {"method",
                                  "op",
                                  "nprocs",
                                  "group_size",
                                  "rep",
                                  "iterations",
                                  "time_us",
                                  "iter_min_us",
                                  "iter_max_us",
                                  "timer",
                                  "mpi_library",
                                  "host",
                                  "git_commit",
                                  "utc_start",
                                  "groups",
                                  "backend",
                                  "platform",
                                  "platform_fnv1a64",
                                  "simgrid_cfg",
                                  "iter_median_us",
                                  "slurm_job_id",
                                  "slurm_nodelist",
                                  "reps",
                                  "median_us",
                                  "median_ci_low_us",
                                  "median_ci_high_us",
                                  "simgrid_version"};
  static_assert(kCommbenchHeaderVersions.back() == 27);
  return header;
}

std::optional<std::vector<csv::Row>> read_commbench_csv(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  const auto text = read_text_file(path);
  if (!text) throw InputError(path.string() + ": cannot be read (allowed: a regular commbench CSV file)");
  std::stringstream in(*text);
  std::string line;
  if (!std::getline(in, line)) return std::vector<csv::Row>{};
  const csv::Row header = csv::split_line(line);
  const csv::Row& current = commbench_header();
  const bool known = std::any_of(kCommbenchHeaderVersions.begin(), kCommbenchHeaderVersions.end(), [&](std::size_t n) {
    return header.size() == n && std::equal(header.begin(), header.end(), current.begin());
  });
  if (!known) {
    throw InputError(path.string() + ": its header is not one of a commbench CSV's (allowed: " + join(current, ",") +
                     ", or an older file's first 14, 19, 20, 22 or 26 of these columns)");
  }
  std::vector<csv::Row> rows;
  // Only whole lines (a file torn while being written ends without its line break) with the header's fields.
  for (std::size_t at = text->find('\n'); at != std::string::npos && at + 1 < text->size();) {
    const std::size_t end = text->find('\n', at + 1);
    if (end == std::string::npos) break;
    csv::Row row = csv::split_line(std::string_view(*text).substr(at + 1, end - at - 1));
    at = end;
    if (row.size() != header.size()) continue;
    row.resize(current.size());
    rows.push_back(std::move(row));
  }
  return rows;
}

std::set<std::string> commbench_complete(const std::vector<csv::Row>& rows, int nprocs, int reps) {
  // method, op, nprocs, group_size, rep ... groups (commbench_header())
  std::map<std::string, std::set<int>> seen;
  std::set<std::string> repeated;
  for (const auto& row : rows) {
    if (row[2] != std::to_string(nprocs) || row[4].empty() || row[4].size() > 6 ||
        row[4].find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    const int group_size =
        row[3].size() < 10 && !row[3].empty() && row[3].find_first_not_of("0123456789") == std::string::npos
            ? std::stoi(row[3])
            : -1;
    const std::string key = CommbenchBenchmark{row[0], row[1], group_size, row[14]}.key();
    if (!seen[key].insert(std::stoi(row[4])).second) repeated.insert(key);
  }
  std::set<std::string> complete;
  for (const auto& [key, got] : seen) {
    if (repeated.count(key) == 0 && static_cast<int>(got.size()) == reps && *got.begin() == 0 &&
        *got.rbegin() == reps - 1) {
      complete.insert(key);
    }
  }
  return complete;
}

std::vector<std::size_t> parse_point_list(const std::string& text) {
  if (text.empty()) throw InputError("--points: empty; expected a comma-separated list of point indices (e.g. 0,2)");
  std::vector<std::size_t> out;
  std::stringstream in(text + ",");  // so a trailing comma shows up as an empty item
  for (std::string item; std::getline(in, item, ',');) {
    // Digits only: stoul would accept "-1" (as 2^64-1), "+1" and leading spaces.
    std::size_t used = 0;
    unsigned long value = 0;
    if (!item.empty() && item.size() <= 18 && item.find_first_not_of("0123456789") == std::string::npos) {
      value = std::stoul(item, &used);
    }
    if (used == 0) {
      throw InputError("--points: '" + printable(item) + "' is not a point index (expected 0, 1, 2, ...)");
    }
    if (std::find(out.begin(), out.end(), value) != out.end()) {
      throw InputError("--points: point " + std::to_string(value) + " is listed twice");
    }
    out.push_back(value);
  }
  return out;
}

std::string point_list(const std::vector<std::size_t>& indices) {
  std::vector<std::string> items;
  for (auto i : indices) items.push_back(std::to_string(i));
  return join(items, ",");
}

}  // namespace mcmclb
