// SPDX-License-Identifier: BSD-3-Clause
// From an advice study's results to the rule's input (mcmclb/advice_table.hpp).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>
#include <stdexcept>

#include "mcmclb/advice_table.hpp"
#include "mcmclb/balancer.hpp"
#include "mcmclb/stats.hpp"
#include "mcmclb/text.hpp"

namespace mcmclb::advice {

std::vector<Price> prices(const ConfigurationSamples& c) {
  std::vector<Price> out;
  for (std::size_t k = 0; k < c.time_s.size(); ++k) out.push_back({c.time_s[k], c.calibration_s[k], c.setup_s[k]});
  return out;
}

std::vector<double> whole_s(const ConfigurationSamples& c) {
  std::vector<double> w;
  for (const Price& p : prices(c)) w.push_back(p.whole_s());
  return w;
}

Price median_parts(const ConfigurationSamples& c) {
  return {stats::median(c.time_s), stats::median(c.calibration_s), stats::median(c.setup_s)};
}

std::vector<std::pair<std::string, std::string>> key_columns(const RunSpec& spec) {
  RunRecord record;
  record.spec = spec;
  std::vector<std::pair<std::string, std::string>> fields;
  for (const auto& c : runs_columns()) {
    if (c.is_configuration_key() && c.role == RunsColumn::Role::parameter) fields.emplace_back(c.name, c.get(record));
  }
  return fields;
}

bool is_setup_column(const std::string& name) {
  return name == "balancer" || name == "interval" || name == "method" || name == "finished";
}

std::string setup_label(const RunSpec& spec) {
  std::string label = run_label(spec);
  const auto& rules = balancer_info(spec.balancer).finished_rules;
  if (spec.finished && rules.size() > 1 && *spec.finished == rules.front())
    label += " " + std::string(to_string(*spec.finished));
  return label;
}

namespace {
/// A set-up's choices as (key, value), in the order the options table lists them.
std::vector<std::pair<std::string, std::string>> setup_choices(const RunSpec& spec) {
  std::vector<std::pair<std::string, std::string>> c = {{"balancer", spec.balancer}};
  if (spec.interval > 0) c.emplace_back("interval", std::to_string(spec.interval));
  if (!spec.method.empty()) c.emplace_back("method", spec.method);
  if (spec.finished) c.emplace_back("finished", std::string(to_string(*spec.finished)));
  return c;
}

/// The initial groups simulated as (study key, walkers option, value): always named, since a program's or a study's
/// own layout would otherwise run instead of the one advised. The line names the groups simulated, rather than
/// advise simulating only groups of one size G: the recorded walkers fill every rank only in groups of unequal
/// sizes (9 walkers on 64 ranks: 8 and 7 ranks), which no G gives, and G = 1 would leave 55 ranks idle.
std::array<std::string, 3> layout_choice(const RunSpec& spec) {
  switch (spec.groups.by) {
    case GroupsSpec::By::G:
      return {"G", "group-size", std::to_string(spec.G)};
    case GroupsSpec::By::count:
      return {"groups.count", "groups", std::to_string(spec.groups.count)};
    case GroupsSpec::By::sizes: {
      std::vector<std::string> sizes;
      for (const int s : spec.groups.sizes) sizes.push_back(std::to_string(s));
      return {"groups.sizes", "group-sizes", join(sizes, ",")};
    }
    case GroupsSpec::By::node:  // refused before an advice simulates it (advise's plan)
      break;
  }
  throw std::logic_error("run_flags: groups by node have no walkers option");
}
}  // namespace

std::string run_flags(const RunSpec& spec) {
  std::vector<std::string> flags;
  for (const auto& [key, value] : setup_choices(spec)) flags.push_back("--mcmclb-" + key + " " + value);
  const auto [key, option, value] = layout_choice(spec);
  flags.push_back("--mcmclb-" + option + " " + value);
  return join(flags, " ");
}

std::string run_keys(const RunSpec& spec) {
  std::vector<std::string> keys;
  for (const auto& [key, value] : setup_choices(spec)) keys.push_back(key + ": " + value);
  const auto [key, option, value] = layout_choice(spec);
  keys.push_back(key + ": " + (key == "groups.sizes" ? "[" + value + "]" : value));
  return join(keys, ", ");
}

std::string family_of(const std::string& label) { return label.substr(0, label.find(' ')); }

std::string dimension_words(const std::string& column) {
  if (column == "workload_extrapolate") return "the speed-up past the measured sizes";
  if (column == "workload_speedups") return "which of a size's repeated speed-ups";
  if (column == "workload_map") return "the chain map";
  if (column == "workload_seed") return "the workload's seed";
  return column;
}

double scenario_weight(const ScenarioValues& scenario, long draws) {
  const auto map = scenario.find("workload_map");
  if (map == scenario.end() || draws == 0) return 1;
  return map->second == "tile" ? 0.5 : 0.5 / static_cast<double>(draws);
}

FirstRound first_round(const Study& study, const std::map<std::string, ConfigurationSamples>& samples,
                       const Backend& backend) {
  FirstRound round;
  for (const Point& p : study.points) {
    const auto it = samples.find(configuration_key(p.spec, backend));
    if (it == samples.end() || it->second.time_s.empty()) continue;
    round[p.spec.nprocs].push_back({prices(it->second).front(), {setup_label(p.spec), &p.spec}});
  }
  for (auto& [nprocs, list] : round) {
    std::stable_sort(list.begin(), list.end(),
                     [](const auto& a, const auto& b) { return a.first.whole_s() < b.first.whole_s(); });
  }
  return round;
}

void add_leaders(std::vector<std::string>& leaders, const std::vector<std::string>& balancers_best_first) {
  std::vector<std::string> taken;
  for (const std::string& b : balancers_best_first) {
    if (b == "none" || std::find(taken.begin(), taken.end(), b) != taken.end()) continue;
    if (taken.size() == 2) break;
    taken.push_back(b);
    if (std::find(leaders.begin(), leaders.end(), b) == leaders.end()) leaders.push_back(b);
  }
}

StudyRule exclude_rule(int nprocs, const RunSpec& spec) {
  StudyRule rule = {{"nprocs", int64_t{nprocs}}, {"balancer", spec.balancer}};
  if (spec.interval > 0) rule.emplace_back("interval", int64_t{spec.interval});
  if (spec.finished) rule.emplace_back("finished", std::string(to_string(*spec.finished)));
  return rule;
}

StudyExclude second_round_exclude(const FirstRound& round) {
  StudyExclude exclude;
  for (const auto& [nprocs, setups] : round) {
    std::size_t leaders = 0;
    for (const auto& [price, label_spec] : setups) {
      const RunSpec& spec = *label_spec.second;
      if (spec.balancer == "none") continue;
      if (leaders < 2) {
        ++leaders;
        continue;
      }
      exclude.push_back(exclude_rule(nprocs, spec));
    }
  }
  return exclude;
}

std::map<int, double> winner_regret_bounds(const Tables& second_round) {
  std::map<int, double> bounds;
  for (const AtRankCount& at : second_round.at) {
    const bool bounded = !at.scenarios.empty() && std::all_of(at.scenarios.begin(), at.scenarios.end(),
                                                              [](const Scenario& sc) { return sc.bound_s > 0; });
    if (!bounded) continue;
    double least = std::numeric_limits<double>::infinity();
    for (const Setup& s : at.setups) {
      // A set-up with a scenario it has no time in (a failed simulation) bounds nothing.
      double largest = 0;
      for (std::size_t k = 0; k < at.scenarios.size() && !std::isnan(largest); ++k) {
        // The bound with a part in 10^6 to spare: a simulated run may meet its ideal to the rounding of its clock.
        const double regret = s.price[k].whole_s() / (at.scenarios[k].bound_s * (1 - 1e-6)) - 1;
        largest = std::isnan(regret) ? regret : std::max(largest, regret);
      }
      if (!std::isnan(largest)) least = std::min(least, largest);
    }
    if (std::isfinite(least)) bounds[at.nprocs] = least;
  }
  return bounds;
}

std::map<int, NoneSettles> none_settles(const Tables& none_round, double tolerance) {
  std::map<int, NoneSettles> settled;
  for (const AtRankCount& at : none_round.at) {
    if (at.scenarios.empty() || at.none_index >= at.setups.size()) continue;
    NoneSettles s;
    bool bounded = true;
    for (std::size_t k = 0; k < at.scenarios.size() && bounded; ++k) {
      // As winner_regret_bounds: a part in 10^6 to spare, for a run that meets its ideal to its clock's rounding.
      const double bound = at.scenarios[k].bound_s * (1 - 1e-6);
      const double regret = at.setups[at.none_index].price[k].whole_s() / bound - 1;
      bounded = at.scenarios[k].bound_s > 0 && !std::isnan(regret);
      if (bounded && (k == 0 || regret > s.regret)) {
        s.regret = regret;
        s.worst = at.scenarios[k];
      }
    }
    if (bounded && s.regret <= tolerance + 1e-12) settled[at.nprocs] = s;
  }
  return settled;
}

std::string settled_verdict(const NoneSettles& s, double tolerance, const std::string& tolerance_words) {
  char most_text[32];
  std::snprintf(most_text, sizeof most_text, "%.1f %%", std::max(s.regret, 0.0) * 100);
  const std::string most = most_text;
  return "Keep none: no set-up can be faster than none by more than " + most + " in any scenario. That is inside the " +
         tolerance_percent(tolerance) + " tolerance (" + tolerance_source_words(tolerance_words) +
         "). None's whole time is within " + most + " of the ideal, which no set-up beats, even under " +
         scenario_words(s.worst, dimension_words) + ". So the balancers were not simulated at this rank count.";
}

RaceCut race_cut(const FirstRound& round, double tolerance, const std::map<int, double>& bounds) {
  RaceCut cut;
  for (const auto& [nprocs, setups] : round) {
    const auto bound = bounds.find(nprocs);
    if (bound == bounds.end()) continue;  // no bound on the winner's regret: nothing can be shown to lose
    const double best = setups.empty() ? 0 : setups.front().first.whole_s();
    const auto none =
        std::find_if(setups.begin(), setups.end(), [](const auto& t) { return t.second.second->balancer == "none"; });
    for (const auto& [price, label_spec] : setups) {
      const RunSpec& spec = *label_spec.second;
      const double whole = price.whole_s();
      const double regret = whole / best - 1;
      if (spec.balancer == "none" || regret <= bound->second + tolerance + 1e-12) continue;
      auto& here = cut.dropped[nprocs];
      const auto twin = std::find_if(here.begin(), here.end(),
                                     [&](const Dropped& d) { return same_times(d.price.whole_s(), whole); });
      if (twin != here.end()) {
        twin->same_as.push_back(label_spec.first);
      } else {
        here.push_back({label_spec.first,
                        spec,
                        price,
                        regret,
                        none != setups.end() ? whole / none->first.whole_s() : std::nan(""),
                        bound->second,
                        {}});
      }
      cut.exclude.push_back(exclude_rule(nprocs, spec));
    }
  }
  return cut;
}

bool cut_may_mislead(const Ranking& kept, double tolerance) {
  if (kept.rows.empty()) return false;
  const Row& winner = kept.rows[kept.verdict.winner];
  // The least largest regret among the kept: the true winner's can be no less. The set-up advised may be a simpler
  // one of its tie, whose own regret lies up to the tolerance above it.
  double least = winner.regret_max;
  for (const Row& r : kept.rows) least = std::min(least, r.regret_max);
  for (std::size_t k = 0; k < kept.scenarios.size(); ++k) {
    const double bound = kept.scenarios[k].bound_s;
    if (!(bound > 0)) return true;
    // As winner_regret_bounds: a part in 10^6 to spare, for a run that meets its ideal to its clock's rounding.
    if (winner.whole_s[k] / (bound * (1 - 1e-6)) - 1 > least + tolerance + 1e-12) return true;
  }
  return false;
}

namespace {

/// One simulation's result: its point, its price (run and one-off costs), and the scenario it ran under.
struct Cell {
  const Point* point;
  Price price;
  double ideal_s;  // the run's ideal: the work spread over every rank at the scenario's speed-ups
  ScenarioValues scenario;
};

/// A set-up's cell in a scenario: the one that agrees on every column the set-up varies over (none, run under one
/// assumption only, stands for itself under the others).
const Cell* cell_in(const std::vector<Cell>& list, const ScenarioValues& scenario) {
  for (const Cell& c : list) {
    bool agrees = true;
    for (const auto& [name, value] : c.scenario) {
      const bool varies =
          std::any_of(list.begin(), list.end(), [&](const Cell& other) { return other.scenario.at(name) != value; });
      if (varies && scenario.at(name) != value) agrees = false;
    }
    if (agrees) return &c;
  }
  return nullptr;
}

/// The columns besides the set-up's that take more than one value over the points of one rank count: one that
/// changes only with the rank count (the walkers' groups at each) is part of the question there, not a scenario.
std::set<std::string> scenario_columns(const Study& study) {
  std::map<std::pair<int, std::string>, std::set<std::string>> column_values;
  for (const Point& p : study.points) {
    for (const auto& [name, value] : key_columns(p.spec)) {
      if (!is_setup_column(name) && name != "nprocs") column_values[{p.spec.nprocs, name}].insert(value);
    }
  }
  std::set<std::string> columns;
  for (const auto& [at, values] : column_values) {
    if (values.size() > 1) columns.insert(at.second);
  }
  return columns;
}

/// A point's scenario: its values of the varying columns, the chain map and its draw's seed one choice (tile, draw
/// 1, draw 2, ...).
ScenarioValues scenario_of(const RunSpec& spec, const std::set<std::string>& varying) {
  ScenarioValues scenario;
  for (const auto& [name, value] : key_columns(spec)) {
    if (varying.count(name) != 0) scenario[name] = value;
  }
  if (const auto seed = scenario.find("workload_seed"); seed != scenario.end()) {
    if (const auto map = scenario.find("workload_map"); map != scenario.end()) {
      if (map->second == "draw") map->second += " " + seed->second;
      scenario.erase(seed);
    }
  }
  return scenario;
}

/// The least of two bounds, 0 standing for none known.
double least_bound(double a, double b) { return a > 0 && b > 0 ? std::min(a, b) : std::max(a, b); }

/// One rank count's set-ups (in their first point's order) and their cells as the rule's input. asked: the
/// scenarios of every point asked at this count, each with the least ideal computed for them (0: none computed),
/// so that a scenario no simulation ran under is still one, bounded.
AtRankCount at_rank_count(int nprocs, const std::map<std::string, std::vector<Cell>>& by_setup,
                          const std::vector<std::string>& order, long draws,
                          const std::map<ScenarioValues, double>& asked) {
  std::map<ScenarioValues, double> bounds = asked;
  for (const auto& [label, list] : by_setup) {
    // Each run's ideal bounds its scenario (one standing in from another scenario ran other speed-ups): every
    // set-up of a rank count spreads the same work, so each run's ideal bounds them all.
    for (const Cell& c : list) bounds[c.scenario] = least_bound(bounds[c.scenario], c.ideal_s);
  }
  AtRankCount at;
  at.nprocs = nprocs;
  std::vector<ScenarioValues> scenario_list;
  for (const auto& [sc, bound] : bounds) {
    scenario_list.push_back(sc);
    at.scenarios.push_back({sc, scenario_weight(sc, draws), bound});
  }
  for (const std::string& label : order) {
    Setup s{label, family_of(label), {}};
    for (const ScenarioValues& sc : scenario_list) {
      const Cell* c = cell_in(by_setup.at(label), sc);
      s.price.push_back(c != nullptr ? c->price : Price{std::nan(""), 0, 0});
    }
    if (label == "none") at.none_index = at.setups.size();
    at.setups.push_back(std::move(s));
    at.specs.push_back(&by_setup.at(label).front().point->spec);
  }
  return at;
}

}  // namespace

Tables tabulate(const Study& study, const std::map<std::string, ConfigurationSamples>& samples, const Backend& backend,
                long draws, const IdealOf& ideal) {
  const std::set<std::string> varying = scenario_columns(study);
  std::map<int, std::map<std::string, std::vector<Cell>>> cells;
  std::map<int, std::vector<std::string>> setup_order;
  std::map<int, std::map<ScenarioValues, double>> asked;
  Tables tables;
  for (const Point& p : study.points) {
    ScenarioValues scenario = scenario_of(p.spec, varying);
    if (ideal) {
      const std::optional<double> computed = ideal(p.spec);
      auto& bound = asked[p.spec.nprocs][scenario];
      bound = least_bound(bound, computed.value_or(0));
    }
    const auto it = samples.find(configuration_key(p.spec, backend));
    if (it == samples.end() || it->second.time_s.empty()) {
      ++tables.missing;
      continue;
    }
    const double run_ideal = it->second.ideal_s.empty() ? 0 : it->second.ideal_s.front();
    const std::string label = setup_label(p.spec);
    auto& of_p = cells[p.spec.nprocs];
    if (of_p.count(label) == 0) setup_order[p.spec.nprocs].push_back(label);
    of_p[label].push_back({&p, prices(it->second).front(), run_ideal, std::move(scenario)});
  }
  for (const auto& [nprocs, by_setup] : cells) {
    if (by_setup.count("none") == 0) continue;
    tables.at.push_back(at_rank_count(nprocs, by_setup, setup_order[nprocs], draws, asked[nprocs]));
  }
  return tables;
}

const csv::Row& advice_header() {
  static const csv::Row h = {"nprocs",
                             "walkers",
                             "rank",
                             "setup",
                             "same_as",
                             "balancer",
                             "interval",
                             "method",
                             "finished",
                             "scenarios",
                             "vs_none_median",
                             "vs_none_min",
                             "vs_none_max",
                             "regret_max",
                             "regret_median",
                             "worst_scenario",
                             "once_s",
                             "break_even_s",
                             "dropped",
                             "winner",
                             "runner_up",
                             "gain_median",
                             "robust",
                             "depends_on",
                             "tolerance_pct",
                             "tolerance",
                             "verdict",
                             "ranks_answer",
                             "gain_worst",
                             "gain_worst_scenario",
                             "gain_best",
                             "gain_best_scenario",
                             "gain",
                             "tolerance_source",
                             "tolerance_nprocs",
                             "tolerance_n",
                             "tolerance_busy_pct",
                             "run_s",
                             "calibration_s",
                             "initial_groups_s",
                             "tied"};
  return h;
}

std::string dropped_why(const Dropped& d, const std::string& first_scenario, double tolerance_pct) {
  char text[160];
  std::snprintf(text, sizeof text, "regret %.1f %% > the winner's at most %.1f %% + tolerance ", d.regret * 100,
                d.winner_bound * 100);
  return "after the first scenario (" + first_scenario + "): " + text + tolerance_percent(tolerance_pct / 100);
}

std::vector<csv::Row> advice_rows(const AtRankCount& at, const Ranking& ranking, const std::vector<Dropped>& dropped,
                                  const AdviceWords& words) {
  const Verdict& v = ranking.verdict;
  const std::string winner = at.setups[ranking.rows[v.winner].members.front()].label;
  const std::string runner = v.runner_up ? at.setups[ranking.rows[*v.runner_up].members.front()].label : std::string();
  const ToleranceSource& src = words.tolerance_source;
  // One row: the set-up's own columns, then this rank count's verdict on every row.
  const auto row = [&](std::size_t rank, const std::string& label, const std::string& same_as, const RunSpec& spec,
                       std::size_t scenarios, double median, double lo, double hi, double regret_max,
                       double regret_median, const std::string& worst, const std::string& once, const std::string& even,
                       const std::string& why, const std::string& text, double gain_worst, const std::string& worst_at,
                       double gain_best, const std::string& best_at, const std::string& gain, const Price& parts,
                       bool tied) {
    return csv::Row{std::to_string(at.nprocs),
                    words.question,
                    std::to_string(rank),
                    label,
                    same_as,
                    spec.balancer,
                    spec.interval > 0 ? std::to_string(spec.interval) : "",
                    spec.method,
                    spec.finished ? std::string(to_string(*spec.finished)) : "",
                    std::to_string(scenarios),
                    csv::number(median),
                    csv::number(lo),
                    csv::number(hi),
                    csv::number(regret_max),
                    csv::number(regret_median),
                    worst,
                    once,
                    even,
                    why,
                    winner,
                    runner,
                    csv::number(v.gain_median),
                    v.robust ? "yes" : "no",
                    v.depends_on,
                    csv::number(words.tolerance_pct),
                    words.tolerance_words,
                    text,
                    words.ranks_answer,
                    csv::number(gain_worst),
                    worst_at,
                    csv::number(gain_best),
                    best_at,
                    gain,
                    src.kind.empty() ? std::string("assumed") : src.kind,
                    src.nprocs > 0 ? std::to_string(src.nprocs) : "",
                    src.n > 0 ? std::to_string(src.n) : "",
                    src.busy ? csv::number(100 * *src.busy) : "",
                    csv::number(parts.run_s),
                    csv::number(parts.calibration_s),
                    csv::number(parts.initial_groups_s),
                    tied ? "yes" : "no"};
  };
  std::vector<csv::Row> rows;
  for (std::size_t k = 0; k < ranking.rows.size(); ++k) {
    const Row& r = ranking.rows[k];
    std::vector<std::string> same_as;
    for (std::size_t i = 1; i < r.members.size(); ++i) same_as.push_back(at.setups[r.members[i]].label);
    const std::string even = r.break_even_s        ? csv::number(*r.break_even_s)
                             : r.never_breaks_even ? std::string("never")
                                                   : std::string();
    rows.push_back(row(k + 1, at.setups[r.members.front()].label, join(same_as, "; "), *at.specs[r.members.front()],
                       ranking.scenarios.size(), r.vs_none_median, r.vs_none_min, r.vs_none_max, r.regret_max,
                       r.regret_median, scenario_words(ranking.scenarios[r.worst], dimension_words),
                       r.once_median_s ? csv::number(*r.once_median_s) : "", even, "", k == 0 ? words.verdict : "",
                       1 - r.vs_none_max, scenario_words(ranking.scenarios[r.vs_none_max_at], dimension_words),
                       1 - r.vs_none_min, scenario_words(ranking.scenarios[r.vs_none_min_at], dimension_words),
                       r.gain_words, r.parts_median, std::find(v.tied.begin(), v.tied.end(), k) != v.tied.end()));
  }
  std::size_t k = ranking.rows.size();
  for (const Dropped& d : dropped) {
    rows.push_back(row(++k, d.label, join(d.same_as, "; "), d.spec, 1, d.vs_none, d.vs_none, d.vs_none, d.regret,
                       d.regret, words.first_scenario, "", "",
                       dropped_why(d, words.first_scenario, words.tolerance_pct), "", 1 - d.vs_none,
                       words.first_scenario, 1 - d.vs_none, words.first_scenario,
                       gain_words({1 - d.vs_none}, {Scenario{}}, words.tolerance_pct / 100, dimension_words) +
                           " under " + words.first_scenario + ", the one scenario it ran",
                       d.price, false));
  }
  return rows;
}

std::map<int, std::map<ScenarioValues, double>> scenario_ideals(const Study& study, const IdealOf& ideal) {
  const std::set<std::string> varying = scenario_columns(study);
  std::map<int, std::map<ScenarioValues, double>> out;
  for (const Point& p : study.points) {
    const ScenarioValues scenario = scenario_of(p.spec, varying);
    auto& at = out[p.spec.nprocs];
    if (at.contains(scenario)) continue;  // one ideal per scenario and count, whatever the set-up
    if (const auto s = ideal(p.spec)) at.emplace(scenario, *s);
  }
  return out;
}

}  // namespace mcmclb::advice
