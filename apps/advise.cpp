// SPDX-License-Identifier: BSD-3-Clause
// `mcmclb advise` (apps/advise.hpp): its flags parsed, the plan and the estimate printed, the advice run by the advise
// library (mcmclb/advise.hpp: the race, --check, the search between the rank counts), and what it found printed and
// written to advice.csv. What the advice study is and how the set-ups are judged: mcmclb/advise_plan.hpp and the
// advice library's rule (mcmclb/advice.hpp).
#include "advise.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "advise_flags.hpp"
#include "mcmclb/advice.hpp"
#include "mcmclb/advice_check.hpp"
#include "mcmclb/advice_table.hpp"
#include "mcmclb/advise.hpp"
#include "mcmclb/advise_plan.hpp"
#include "mcmclb/balancer.hpp"
#include "mcmclb/input_error.hpp"
#include "mcmclb/launch.hpp"
#include "mcmclb/provenance.hpp"  // host_busy_share, usable_cores
#include "mcmclb/stats.hpp"
#include "mcmclb/study.hpp"
#include "mcmclb/text.hpp"
#include "mcmclb/trace.hpp"

namespace mcmclb {

namespace {

namespace fs = std::filesystem;
using namespace advising;
using advice::Dropped;

/// What a refusal lists: the usage line, written from the flag table.
const std::string& allowed() {
  static const std::string text = "allowed: " + advise_usage();
  return text;
}

/// What `advise` is asked: the advice's options, and whether stdout carries only the advised flags.
struct Asked {
  Options options;
  bool print_run_flags = false;
};

/// With --print-run-flags: everything advise and the programs it starts print goes to stderr (the descriptor 1
/// made a copy of 2), so that `$(mcmclb advise ...)` captures the one line print() writes to the stdout kept
/// aside; the reader still sees the plan, the progress and the verdict. stdout is put back when it goes.
class StdoutKeptAside {
 public:
  StdoutKeptAside() {
    std::fflush(stdout);
    kept_ = ::dup(STDOUT_FILENO);
    if (kept_ < 0)
      throw std::runtime_error(std::string("--print-run-flags: cannot copy stdout: ") + std::strerror(errno));
    if (::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
      const int err = errno;
      ::close(kept_);
      throw std::runtime_error(std::string("--print-run-flags: cannot send stdout to stderr: ") + std::strerror(err));
    }
  }
  StdoutKeptAside(const StdoutKeptAside&) = delete;
  StdoutKeptAside& operator=(const StdoutKeptAside&) = delete;
  StdoutKeptAside(StdoutKeptAside&&) = delete;
  StdoutKeptAside& operator=(StdoutKeptAside&&) = delete;
  ~StdoutKeptAside() {
    std::fflush(stdout);
    ::dup2(kept_, STDOUT_FILENO);  // nothing to tell if it fails: the process ends right after
    ::close(kept_);
  }
  /// line and a newline, whole, on the stdout kept aside; a failed write (a closed pipe) is an error, not a line lost.
  void print(const std::string& line) const {
    const std::string text = line + "\n";
    for (std::size_t done = 0; done < text.size();) {
      const ssize_t n = ::write(kept_, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0)
        throw std::runtime_error(std::string("--print-run-flags: cannot write stdout: ") + std::strerror(errno));
      done += static_cast<std::size_t>(n);
    }
  }

 private:
  int kept_ = -1;
};

/// The flags after `advise`, checked: InputError (one line naming the flag) for anything not allowed.
Asked parse_flags(const std::vector<std::string>& args, const std::string& command_line) {
  Asked asked;
  Options& o = asked.options;
  o.command_line = command_line;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    // The table names every flag: one not in it is refused here, whatever the branches below would do.
    if (a.rfind("--", 0) == 0 && find_flag(kAdviseFlags, a) == nullptr) {
      throw InputError("unknown flag " + printable(a) + " (" + allowed() + ")");
    }
    const auto value = [&]() -> std::string {
      if (i + 1 >= args.size()) throw InputError(a + ": missing value (" + allowed() + ")");
      if (!seen.insert(a).second) throw InputError(a + ": given twice (allowed: once)");
      return args[++i];
    };
    if (a == "--ranks") {
      o.ranks = parse_integer_list(a, value(), 2, 1 << 20, "a rank count");
    } else if (a == "--group-size") {
      o.group_size = parse_integer_flag(a, value(), 1, 1 << 20, "a group size");
    } else if (a == "--chains-per-group") {
      o.chains_per_group = parse_integer_flag(a, value(), 1, kMaxChainsPerGroup, "a number of chains");
    } else if (a == "--balancers") {
      const std::string v = value();
      std::vector<std::string_view> known;
      for (const auto& b : balancer_entries()) known.push_back(b.info.name);
      for (std::size_t start = 0;;) {
        const std::size_t comma = v.find(',', start);
        const std::string name = v.substr(start, comma - start);
        if (std::find(known.begin(), known.end(), name) == known.end()) {
          throw InputError("--balancers: unknown balancer '" + printable(name) + "' (allowed: " + join(known) + ")");
        }
        o.balancers.push_back(name);
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
    } else if (a == "--draws") {
      o.draws = parse_integer_flag(a, value(), 0, 100, "a number of seeded draws");
    } else if (a == "--tolerance") {
      const std::string v = value();
      char* end = nullptr;
      o.tolerance_pct = std::strtod(v.c_str(), &end);
      if (v.empty() || end != v.c_str() + v.size() || !(o.tolerance_pct >= 0 && o.tolerance_pct <= 100)) {
        throw InputError("--tolerance: '" + printable(v) + "' is not a percentage in [0, 100]");
      }
    } else if (a == "--check-busy") {
      // A replay timed beside other programs times them too, and its error would set the tolerance: 10 % by
      // default. A shared machine whose user accepts that (or a test, asserting no speed) may raise it.
      const std::string v = value();
      char* end = nullptr;
      const double pct = std::strtod(v.c_str(), &end);
      if (v.empty() || end != v.c_str() + v.size() || !(pct >= 0 && pct <= 100)) {
        throw InputError("--check-busy: '" + printable(v) + "' is not a percentage in [0, 100]");
      }
      o.check_busy_share = pct / 100;
    } else if (a == "--platform") {
      o.platform = require_path(a, value());
    } else if (a == "--prediction") {
      o.prediction = require_path(a, value());
    } else if (a == "--plan-from") {
      o.plan_from = require_path(a, value());
    } else if (a == "--sim-binary") {
      o.sim_binary = require_path(a, value());
    } else if (a == "--smpi-flags") {
      o.smpi_flags = require_path(a, value());
    } else if (a == "--out") {
      o.out = require_path(a, value());
    } else if (a == "--jobs") {
      o.jobs = parse_integer_flag(a, value(), 1, 1024, "a number of simulations at once");
    } else if (a == "--launcher") {
      o.launcher = value();
      if (o.launcher != "local" && o.launcher != "slurm") {
        throw InputError("--launcher: '" + printable(o.launcher) + "' is not allowed (allowed: local, slurm)");
      }
    } else if (a == "--partition" || a == "--account") {
      std::string& field = a == "--partition" ? o.partition : o.account;
      field = value();
      if (field.empty() ||
          field.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") !=
              std::string::npos) {
        throw InputError(a + ": '" + printable(field) + "' is not a Slurm name (allowed: letters, digits, _ . -)");
      }
    } else if (a == "--dry-run") {
      o.dry_run = true;
    } else if (a == "--print-run-flags") {
      asked.print_run_flags = true;
    } else if (a == "--no-race") {
      o.race = false;
    } else if (a == "--incomplete") {
      o.incomplete = true;
    } else if (a == "--copies") {
      o.copies = true;
    } else if (a == "--check") {
      if (o.check_reps == 0) o.check_reps = 10;
    } else if (a == "--check-reps") {
      o.check_reps = parse_integer_flag(a, value(), static_cast<long>(stats::kMinCiSamples), 100,
                                        "a number of real repetitions (at least 6, for the medians' intervals)");
    } else if (a.rfind("--", 0) == 0) {  // in the table, but no branch above reads it
      throw std::logic_error("mcmclb advise: the flag " + a +
                             " is in the table (apps/advise_flags.hpp) but not parsed");
    } else if (o.input.empty()) {
      o.input = require_path("TRACE.csv|STUDY.yaml", a);
    } else {
      throw InputError("a second workload '" + printable(a) + "' (" + allowed() + ")");
    }
  }
  if (o.input.empty()) throw InputError(std::string("missing TRACE.csv or STUDY.yaml (") + allowed() + ")");
  if (o.ranks.empty()) throw InputError(std::string("--ranks: required (") + allowed() + ")");
  // The flags are one set-up's, to run at one rank count; a dry run advises none.
  if (asked.print_run_flags && o.ranks.size() != 1) {
    throw InputError("--print-run-flags: only with one rank count (allowed: --ranks P)");
  }
  if (asked.print_run_flags && o.dry_run)
    throw InputError("--print-run-flags: not with --dry-run (it advises nothing)");
  if ((!o.partition.empty() || !o.account.empty()) && o.launcher != "slurm") {
    throw InputError("--partition and --account: only with --launcher slurm");
  }
  if (o.launcher == "slurm" && o.check_reps > 0) {
    throw InputError(
        "--check: not with --launcher slurm (the check replays the trace for real on this host, a core per rank; "
        "run it without --launcher slurm, where the host may run MPI)");
  }
  if (!o.prediction.empty()) {
    // The error of one platform says nothing of another's: read now, and refused now, before any work.
    if (o.platform.empty()) {
      throw InputError("--prediction: only with --platform (allowed: the platform whose prediction.csv it is)");
    }
    // The trace's bytes identify it, as a replay's runs.csv records them (Trace::fnv1a64); a study names none here.
    const std::string trace =
        is_study_file(o.input) ? std::string() : fnv1a64_hex(launch::read_file(o.input, "trace file"));
    advice::Prediction p =
        advice::prediction_error(launch::read_file(o.prediction, "prediction file"), o.prediction,
                                 fnv1a64_hex(launch::read_file(o.platform, "platform")), trace, o.check_busy_share);
    o.prediction_error = std::move(p.source);
    o.prediction_not_used = std::move(p.not_used);
  }

  if (!o.plan_from.empty()) {
    if (is_study_file(o.input)) {
      throw InputError("--plan-from: only with a trace file (allowed: a study file's own workload.plan_file)");
    }
    // The plan's walkers and items against the trace's, checked as the study key is, and said as the flag.
    mcmclb::WorkloadSpec spec;
    spec.model = "trace";
    spec.file = o.input;
    spec.plan_file = o.plan_from;
    try {
      mcmclb::workload_entry("trace").check(spec);
    } catch (const InputError& e) {
      const std::string_view key = "key workload.plan_file: ";
      const std::string what = e.what();
      throw InputError("--plan-from: " + (what.starts_with(key) ? what.substr(key.size()) : what));
    }
  }
  if (o.jobs == 0) o.jobs = o.launcher == "slurm" ? 16 : mcmclb::usable_cores();
  // A group size or chains per group asks for groups the recorded walkers do not have: copies fill them.
  if (o.group_size > 0 || o.chains_per_group > 0) o.copies = true;
  if (o.check_reps > 0 && is_study_file(o.input)) {
    throw InputError("--check: only for a trace file (it replays the trace for real; allowed: a trace)");
  }
  if (o.balancers.empty()) {
    for (const auto& b : balancer_entries()) o.balancers.emplace_back(b.info.name);
  }
  if (std::find(o.balancers.begin(), o.balancers.end(), "none") == o.balancers.end()) {
    o.balancers.insert(o.balancers.begin(), "none");  // every score is a time over none's
  }
  return asked;
}

/// The advice at one rank count: its table and verdict printed, its rows added to advice.csv's text, its notes,
/// and its winner's median time for the question how many ranks are worth it. Returns the advised set-up's flags.
std::string print_at(const Plan& plan, const advice::AtRankCount& at, const advice::Ranking& ranked,
                     const std::vector<Dropped>& dropped_here, const advice::NoneSettles* settled, double tolerance_pct,
                     const std::string& measured_words, const advice::ToleranceSource& source,
                     const std::string& ranks_answer, std::string& csv_text, std::set<std::string>& notes) {
  const int nprocs = at.nprocs;
  const auto& setups = at.setups;
  for (const auto& note : ranked.notes) notes.insert(note);
  // Where none settled the rank count, the verdict says so: the rule saw none alone.
  const std::string advised_balancer =
      settled != nullptr ? "none" : at.specs[ranked.rows[ranked.verdict.winner].members.front()]->balancer;
  // An answer whose groups reach past the measured sizes rests on the scenarios' guesses there: never robust.
  advice::Ranking ranking = ranked;
  if (advice::extrapolated(plan, nprocs, advised_balancer)) {
    advice::not_robust(ranking.verdict,
                       "its groups work past twice the sizes the trace measured, where every "
                       "scenario is an assumption");
  }
  const std::string verdict =
      advice::verdict_words(plan, nprocs, advised_balancer,
                            settled != nullptr ? advice::settled_verdict(*settled, tolerance_pct / 100, measured_words)
                                               : ranking.verdict.text);
  const std::string question = advice::walkers_words(plan, nprocs);
  const std::size_t m = ranking.scenarios.size();
  std::printf("\n%s", wrapped("advice at P = " + std::to_string(nprocs) + ": " + question + "; simulated, " +
                                  std::to_string(m) + (m == 1 ? " scenario" : " scenarios"),
                              100, "")
                          .c_str());
  std::printf("%-4s  %-36s  %-24s  %-14s  %s\n", "rank", "set-up", "whole / none [min, max]", "regret max/med",
              "break-even");
  advice::AdviceWords words{question, verdict, tolerance_pct, measured_words, ranks_answer, first_scenario_words(plan),
                            source};
  for (const csv::Row& row : advice::advice_rows(at, ranking, dropped_here, words)) csv_text += csv::line(row);
  for (std::size_t k = 0; k < ranking.rows.size(); ++k) {
    const advice::Row& r = ranking.rows[k];
    std::vector<std::string> same_as;
    for (std::size_t i = 1; i < r.members.size(); ++i) same_as.push_back(setups[r.members[i]].label);
    std::printf("%-4zu  %-36s  %-24s  %-14s  %s\n", k + 1, setups[r.members.front()].label.c_str(),
                (fixed(r.vs_none_median) + " [" + fixed(r.vs_none_min) + ", " + fixed(r.vs_none_max) + "]").c_str(),
                (fixed(r.regret_max * 100, 1) + "/" + fixed(r.regret_median * 100, 1) + " %").c_str(),
                r.break_even_s        ? (fixed_significant(*r.break_even_s) + " s").c_str()
                : r.never_breaks_even ? "never"
                                      : "");
    if (!same_as.empty()) std::printf("%s", wrapped("same times: " + join(same_as), 100, "      ").c_str());
  }
  // What the race dropped here: one scenario each, ranked after every set-up that ran them all.
  std::vector<std::string> shown;
  for (const Dropped& d : dropped_here) {
    const std::string same = d.same_as.empty() ? std::string() : " = " + join(d.same_as, " = ");
    shown.push_back(d.label + same + " (" + fixed(d.regret * 100, 1) + " %)");
  }
  if (!shown.empty()) {
    std::printf("%s", wrapped("dropped by the race after the first scenario (" + words.first_scenario +
                                  "), regret there: " + join(shown),
                              100, "      ")
                          .c_str());
  }
  // Its first line says where the tolerance came from: a verdict on an assumed one is read differently.
  std::printf("verdict at P = %d (tolerance %s, %s):\n%s", nprocs,
              advice::tolerance_percent(tolerance_pct / 100).c_str(), measured_words.c_str(),
              wrapped(verdict, 100, "  ").c_str());
  // The line to run: the advised set-up as a walkers program's options, and as a study's keys.
  const RunSpec& advised = *at.specs[ranking.rows[ranking.verdict.winner].members.front()];
  const std::string flags = advice::run_flags(advised);
  std::printf("run it at P = %d: mpiexec -n %d YOUR_PROGRAM %s\n  (in a study: %s)\n", nprocs, nprocs, flags.c_str(),
              advice::run_keys(advised).c_str());
  return flags;
}

}  // namespace

int advise_main(const std::vector<std::string>& args) {
  std::vector<std::string> words = {"mcmclb", "advise"};
  words.insert(words.end(), args.begin(), args.end());
  std::string command_line;
  for (const auto& w : words) command_line += (command_line.empty() ? "" : " ") + shell_quote(w);
  const Asked asked = parse_flags(args, command_line);
  Options o = asked.options;
  std::optional<StdoutKeptAside> stdout_aside;
  if (asked.print_run_flags) stdout_aside.emplace();
  if (o.out.empty()) o.out = default_out(o);
  const Plan plan = make_plan(o);
  // How busy the host is now, over 1 s (a steady figure), for --check alone: the load average would lag by a minute
  // behind a host just made idle.
  // --check on a busy host is refused before anything runs: its real runs would time the other programs too, and
  // their error would set the tolerance. A dry run only says so.
  if (o.check_reps > 0) {
    if (const auto busy = host_busy_share(std::chrono::milliseconds(1000)); busy && *busy > o.check_busy_share) {
      const std::string line =
          "--check: " + advice::busy_refusal(*busy, o.check_busy_share, "the host is",
                                             "(its CPU time over 1 s, /proc/stat)",
                                             "its real runs would time the other programs too", false);
      if (!o.dry_run) throw InputError(line);
      std::printf("advise: warning: %s\n", line.c_str());
    }
  }
  const ProgramRuns& program = plan.program;

  SweepOptions sweep = simulation_sweep(o, plan);
  // The estimates' CPU, measured where the simulations will run: here, not a batch job's node. 0.2 s on an idle
  // host; 0.6 s on a busy one, where a short probe reads a burst above the share the simulations will get.
  constexpr std::chrono::milliseconds kCpuProbe{100};
  if (o.launcher != "slurm") sweep.cpu = measure_cpu_capacity(o.jobs, kCpuProbe);
  // The whole study, checked before anything is written: the workload, every key, the platform and the build.
  Study study = launch::load(sweep, plan.study);
  launch::check_smpi(sweep, study);
  std::size_t skipped = 0;
  const SimulationEstimate whole = launch::estimate_to_run(sweep, study, &skipped);
  if (o.launcher == "local") launch::check_memory(whole, "fewer --jobs, fewer --ranks, or --launcher slurm");
  std::vector<std::string> ranks;
  for (const long r : o.ranks) ranks.push_back(std::to_string(r));
  std::printf("advise: %s at P = %s, simulated on %s\n", plan.workload.c_str(), join(ranks).c_str(),
              platform_identity(sweep.platform).c_str());
  for (const long r : o.ranks) {
    std::printf("  asks at P = %ld: %s\n", r, advice::walkers_words(plan, static_cast<int>(r)).c_str());
  }
  for (const auto& w : plan.warnings) std::printf("advise: warning: %s\n", w.c_str());
  if (!plan.cut_short.empty()) std::printf("advise: warning: %s\n", plan.cut_short.c_str());
  for (const auto& a : plan.assumptions) std::printf("  varies %s\n", a.c_str());
  for (const auto& s : plan.skipped) std::printf("  skips %s\n", s.c_str());
  if (program.spread) {
    std::printf("%s", wrapped("advise: your program's own runs at P = " + std::to_string(program.spread->nprocs) +
                                  ", n = " + std::to_string(program.spread->n) + ": " + program.spread->detail +
                                  "; the tolerance is at least that",
                              100, "")
                          .c_str());
  }
  for (const std::string& line : program.advice) std::printf("advise: %s\n", line.c_str());
  if (!o.prediction_not_used.empty()) std::printf("advise: %s\n", o.prediction_not_used.c_str());
  print_estimate(o, plan, sweep, study, whole, skipped);
  if (o.dry_run) {
    std::printf("advise: dry run, nothing run or written\n");
    return 0;
  }
  Outcome found = run_advice(o, plan, sweep, study);
  // On a cut-short trace the rank counts compare walkers that may lack their last items, and with copies they
  // compare more walkers at more ranks: each said with the answer.
  std::string ranks_answer;
  if (const auto& answer = found.answer) {
    ranks_answer = (plan.cut_short.empty() ? "" : "on the cut-short trace: ") +
                   (plan.copies ? "copies (P / G x W walkers, more at more ranks): " : std::string()) + answer->text;
  }
  const std::vector<advice::AtRankCount>& inputs = found.tables.at;
  {
    // The answer first, in a few lines: the set-up at the rank count answered (or the one count asked), its gain
    // per assumption, the line that runs it and what to measure next. The detail follows.
    std::optional<advice::AtRanks> answer;
    if (found.answer) {
      answer = found.answer->answer;
    } else if (inputs.size() == 1) {
      answer = advice::at_ranks_of(inputs[0].nprocs, found.rankings[0], inputs[0].setups, inputs[0].scenarios,
                                   inputs[0].scenarios);
    }
    const RunSpec* spec = nullptr;  // the advised set-up as a run at the count answered (its flags name its groups)
    for (const advice::AtRankCount& at : inputs) {
      for (const RunSpec* s : at.specs) {
        if (answer && spec == nullptr && s->nprocs == answer->nprocs && advice::setup_label(*s) == answer->winner)
          spec = s;
      }
    }
    if (answer && spec != nullptr) {
      const std::string next = advice::measure_next(plan, answer->nprocs, spec->balancer);
      std::printf("\nanswer:\n%s", wrapped(advice::first_words(*answer, inputs[0].scenarios, found.tolerance.fraction,
                                                               advice::run_flags(*spec), next),
                                           100, "  ")
                                       .c_str());
    }
  }
  std::string csv_text = csv::line(advice::advice_header());
  std::set<std::string> notes;  // printed once per advice, whatever the rank counts
  std::string run_flags;        // the last rank count's, the only one with --print-run-flags
  for (std::size_t k_at = 0; k_at < inputs.size(); ++k_at) {
    const auto settles = found.settled.find(inputs[k_at].nprocs);
    run_flags = print_at(plan, inputs[k_at], found.rankings[k_at], found.dropped[inputs[k_at].nprocs],
                         settles == found.settled.end() ? nullptr : &settles->second, found.tolerance.fraction * 100,
                         found.tolerance.words, found.tolerance.source, ranks_answer, csv_text, notes);
  }
  if (found.answer) {
    std::printf("\n%s", wrapped("ranks: " + ranks_answer, 100, "").c_str());
  }
  for (const auto& note : notes) std::printf("%s", wrapped("note: " + note, 100, "").c_str());
  std::printf("\n%s",
              wrapped("limits: simulated with SimGrid on " + platform_identity(sweep.platform) +
                          ", a model of a machine, not a measurement; each set-up with its default creation method; " +
                          (plan.assumptions.empty() ? "nothing assumed" : "assumed: " + join(plan.assumptions, "; ")) +
                          set_aside_words(o, plan) +
                          ". A replay is only as good as its trace: validate it against your program "
                          "(docs/guide/your-workload.md).",
                      100, "")
                  .c_str());
  const std::size_t missing = found.tables.missing;
  if (missing > 0)
    std::printf("advise: %zu of %zu simulations have no valid result: see failures.csv\n", missing,
                study.points.size());
  auto store = launch::open_output(sweep, study);
  store.rewrite_file("advice.csv", [&](const fs::path&) { return csv_text; });
  std::printf("advise: wrote %s\n", (fs::path(sweep.out) / "advice.csv").c_str());
  const fs::path script = fs::path(MCMCLB_SOURCE_DIR) / "plots" / "advice.py";
  std::error_code error;
  if (fs::exists(script, error)) {
    const auto [status, lines] =
        launch::run_capturing("python3 " + shell_quote(script.string()) + " " + shell_quote(sweep.out));
    for (const auto& line : lines) std::printf("  | %s\n", line.c_str());
    if (status != 0) std::printf("advise: the figure failed (exit %d); the table above and advice.csv stand\n", status);
  } else {
    std::printf("advise: no figure: %s is not here (an installed mcmclb without its source tree)\n", script.c_str());
  }
  const bool complete = !found.failed && missing == 0;
  // Only a complete advice's flags: a run line from part of the set-ups could name one that lost where they failed.
  if (stdout_aside && complete && !run_flags.empty()) stdout_aside->print(run_flags);
  return complete ? 0 : 3;
}

}  // namespace mcmclb
