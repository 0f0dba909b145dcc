// SPDX-License-Identifier: BSD-3-Clause
// --launcher local and smpi (mcmclb/launch.hpp): the points still to run, one mpiexec (or smpirun) per rank count,
// with a progress line per point, failures recorded and the rest of a crashed launch relaunched.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "mcmclb/balancer.hpp"
#include "mcmclb/configurations.hpp"
#include "mcmclb/launch.hpp"
#include "mcmclb/mpi_build.hpp"
#include "mcmclb/runs_csv.hpp"
#include "mcmclb/stats.hpp"
#include "mcmclb/text.hpp"
#include "memory.hpp"

namespace mcmclb::launch {

namespace {

std::string run_command(const SweepOptions& o, const Study& study, const fs::path& out,
                        const std::vector<std::size_t>& points, int nprocs) {
  const fs::path dealt = deals_hostfile(study) ? placement_hostfile(o, study, out) : fs::path();
  const Point& first = study.points[points.front()];
  const std::string prefix = simulated(o)
                                 ? smpirun_prefix(o, nprocs, sim_program(o, first.program), dealt, first.spec.placement)
                                 : mpiexec_prefix(nprocs);
  return prefix + program_command(o, study, out, points, !o.force);
}

/// Counts finished points and prints one progress line per point, with the time elapsed, an estimate left and the
/// host memory of the launch running it (sampled at each line the launch prints).
class Progress {
 public:
  /// total points; weight: what a point is expected to cost against the others (empty: all alike), so that the
  /// time left follows the points still to run and not their count (cheap small points first made it read
  /// minutes where a large simulation's tens of minutes remained).
  explicit Progress(std::size_t total, std::function<double(const Point&)> weight = {}, double total_weight = 0)
      : total_(total),
        weight_(std::move(weight)),
        total_weight_(weight_ ? total_weight : static_cast<double>(total)),
        start_(std::chrono::steady_clock::now()) {}
  // Locked: with sweep --jobs several launches report at once (the memory is then that of them all).
  void launch_started() {
    const std::lock_guard lock(mutex_);
    memory_.start_launch();
  }
  void launch_printed() {
    const std::lock_guard lock(mutex_);
    memory_.sample();
  }
  void point_done(const Point& p, const std::string& verdict) {
    const std::lock_guard lock(mutex_);
    ++finished_;
    done_weight_ += weight_ ? weight_(p) : 1.0;
    const double elapsed = elapsed_s();
    const double left = done_weight_ > 0 ? elapsed / done_weight_ * std::max(0.0, total_weight_ - done_weight_) : 0.0;
    const std::string memory = memory_.text();
    std::printf("[point %zu of %zu, %s elapsed, ~%s left%s%s] %s %s\n", finished_, total_,
                format_seconds(elapsed).c_str(), format_seconds(left).c_str(), memory.empty() ? "" : "; ",
                memory.c_str(), describe(p).c_str(), verdict.c_str());
    std::fflush(stdout);
  }
  [[nodiscard]] double elapsed_s() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::size_t total_, finished_ = 0;
  std::function<double(const Point&)> weight_;
  double total_weight_, done_weight_ = 0;
  std::chrono::steady_clock::time_point start_;
  LaunchMemoryWatch memory_;
  std::mutex mutex_;
};

/// The first line a launch printed that says why it stopped (SimGrid's CRITICAL messages, MPI's fatal errors,
/// aborts and assertions), so that a failure names its cause and not only the exit status.
class StopCause {
 public:
  void see(std::string_view line) {
    if (!cause_.empty()) return;
    std::string lower(line);
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    for (const std::string_view word :
         {"critical", "fatal", "error", "abort", "assert", "terminate called", "segmentation fault", "killed"}) {
      if (lower.find(word) != std::string::npos) {
        cause_ = printable(line, 240);
        return;
      }
    }
  }
  void forget() { cause_.clear(); }
  /// reason, followed by the line when one was seen.
  std::string explain(const std::string& reason) const {
    return cause_.empty() ? reason : reason + " (it printed: " + cause_ + ")";
  }

 private:
  std::string cause_;
};

/// The last progress line a launch printed since its last recorded point: how far the running point got (the
/// simulated kernel prints "  progress: simulated X s of ~Y s (...), N items done, host H s elapsed, ..." every
/// MCMCLB_PROGRESS_S host seconds, Kernel::progress_tick), kept in failures.csv when the point is killed on the
/// way (out of memory, a time limit).
class LastProgress {
 public:
  void see(std::string_view line) {
    const auto at = line.find("progress: simulated ");
    if (at == std::string_view::npos) return;
    line = line.substr(at);
    reached_ = {number_after(line, "simulated ", " s of"), number_before(line, " items done"),
                number_after(line, "host ", " s elapsed")};
  }
  void forget() { reached_ = {}; }
  [[nodiscard]] const Reached& reached() const { return reached_; }

 private:
  /// The number between before and after in line, or "" when it is not a plain decimal number.
  static std::string number_after(std::string_view line, std::string_view before, std::string_view after) {
    const auto start = line.find(before);
    if (start == std::string_view::npos) return "";
    const auto from = start + before.size();
    const auto end = line.find(after, from);
    return end == std::string_view::npos ? "" : plain(line.substr(from, end - from));
  }
  /// The word right before after in line, when it is a plain decimal number.
  static std::string number_before(std::string_view line, std::string_view after) {
    const auto end = line.find(after);
    if (end == std::string_view::npos) return "";
    const auto space = line.rfind(' ', end == 0 ? 0 : end - 1);
    return space == std::string_view::npos ? "" : plain(line.substr(space + 1, end - space - 1));
  }
  static std::string plain(std::string_view text) {
    const bool ok = !text.empty() && text.size() <= 24 && std::all_of(text.begin(), text.end(), [](unsigned char c) {
      return std::isdigit(c) != 0 || c == '.';
    });
    return ok ? std::string(text) : "";
  }
  Reached reached_;
};

/// False for a note ("note: ...") or a warning ("mcmclb: warning: ...") this process has already printed: every
/// launch of a sweep or an advice says the same of the same workload (a trace replaying 3 of its 6 chains, a
/// speed-up it sets aside), and an advice makes hundreds; once is enough. Launches may run at once.
bool first_time(const std::string& line) {
  if (line.rfind("note: ", 0) != 0 && line.rfind("mcmclb: warning: ", 0) != 0) return true;
  static std::mutex mutex;
  static std::set<std::string> shown;
  const std::lock_guard lock(mutex);
  return shown.insert(line).second;
}

/// Says a launch is starting. Its whole command goes to OUT/launches.log with the time (appended in one write, so
/// launches at once never mix their lines). A simulated launch's command runs to a kilobyte or more (smpirun's
/// flags and preloads), and an advice makes dozens: the terminal then gets one short line, so that the progress and
/// the table stay in view. A real launch's command is short and shows which mpiexec ran: the terminal gets it whole.
void announce_launch(const SweepOptions& o, const fs::path& out, const std::string& command, int nprocs,
                     std::size_t points) {
  const fs::path log = out / "launches.log";
  const std::string line = utc_now() + " " + command + "\n";
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  const bool logged = fd >= 0 && ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  if (fd >= 0) ::close(fd);
  if (logged && simulated(o)) {
    std::printf("launch: P = %d, %zu point(s); its command: %s\n", nprocs, points, log.c_str());
  } else {
    std::printf("launch: %s\n", command.c_str());
  }
}

/// Runs one commbench point (one mpiexec); its CSV is its record.
void run_commbench_point(const SweepOptions& o, const Study& study, const fs::path& out, const Point& p,
                         Progress& progress, std::vector<Failure>& failures) {
  const std::string command = run_command(o, study, out, {p.index}, p.spec.nprocs);
  announce_launch(o, out, command, p.spec.nprocs, 1);
  progress.launch_started();
  StopCause cause;
  const int status = run_streaming(command, [&](const std::string& line) {
    std::printf("  | %s\n", line.c_str());
    progress.launch_printed();
    cause.see(line);
  });
  if (status != 0) {
    failures.push_back({p.index, cause.explain("mcmclb-commbench exited with status " + std::to_string(status))});
  }
  progress.point_done(p, status == 0 ? "done" : "FAILED");
}

/// Runs the kernel points `remaining` in one mpiexec. Progress and verdicts come from the rows that appear in
/// runs.csv (points run in order, each appends one row), not from the launch's output. Returns the points
/// still to run: those after the point a crashed launch was running.
std::vector<std::size_t> run_kernel_launch(const SweepOptions& o, const Study& study, const fs::path& out,
                                           const std::vector<std::size_t>& remaining, Progress& progress,
                                           std::vector<Failure>& failures) {
  const auto before = recorded_points(out);
  const auto new_row = [&](const std::map<std::string, Recorded>& now, std::size_t i) -> const Recorded* {
    const std::string key = point_key(study.points[i].spec, sweep_backend(o));
    const int rows_before = before.count(key) ? before.at(key).rows : 0;
    const auto it = now.find(key);
    return it != now.end() && it->second.rows > rows_before ? &it->second : nullptr;
  };
  std::size_t reported = 0;  // leading points of remaining whose row has been seen
  const auto report_new_rows = [&] {
    const auto now = recorded_points(out);
    for (; reported < remaining.size(); ++reported) {
      const Recorded* row = new_row(now, remaining[reported]);
      if (row == nullptr) break;
      progress.point_done(study.points[remaining[reported]], row->last_valid ? "valid" : "INVALID");
    }
  };
  const std::string command = run_command(o, study, out, remaining, study.points[remaining.front()].spec.nprocs);
  announce_launch(o, out, command, study.points[remaining.front()].spec.nprocs, remaining.size());
  progress.launch_started();
  StopCause cause;
  LastProgress last;
  const int status = run_streaming(command, [&](const std::string& line) {
    if (first_time(line)) std::printf("  | %s\n", line.c_str());
    progress.launch_printed();
    const std::size_t recorded_before = reported;
    report_new_rows();
    if (reported != recorded_before) {  // a point recorded since: what it printed was not fatal, nor its progress
      cause.forget();
      last.forget();
    }
    cause.see(line);
    last.see(line);
  });
  report_new_rows();
  const auto after = recorded_points(out);
  for (std::size_t k = 0; k < remaining.size(); ++k) {
    const std::size_t i = remaining[k];
    if (const Recorded* row = new_row(after, i)) {
      if (!row->last_valid) failures.push_back({i, "a run invariant failed (valid=false in runs.csv)"});
      continue;
    }
    if (status == 0 || status == 3) {
      failures.push_back({i, "the launch ended without recording it"});
      continue;
    }
    failures.push_back({i,
                        cause.explain("the launch exited with status " + std::to_string(status) + " while running it"),
                        last.reached()});
    progress.point_done(study.points[i], "FAILED");
    return {remaining.begin() + static_cast<std::ptrdiff_t>(k) + 1, remaining.end()};  // relaunch the rest
  }
  return {};
}

/// The kernel points among indices, in order; the others are commbench points, one launch each.
std::vector<std::size_t> kernel_points(const Study& study, const std::vector<std::size_t>& indices) {
  std::vector<std::size_t> kernel;
  for (const std::size_t i : indices) {
    if (study.points[i].program != Program::commbench) kernel.push_back(i);
  }
  return kernel;
}

/// How many kernel points one launch runs. Real MPI: all of a rank count's points, so that MPI starts once. A
/// simulation: at most kSimulatedPointsPerLaunch unless --points-per-launch says otherwise, because SimGrid 3.32
/// slows down with every point a simulation has run: an MPI_Test that completes a communication leaves it in the
/// testing actor's list of activities (ActivityImpl::test finishes it with no waiter to remove it), and every later
/// wait scans that list (std::list::remove). At 64 simulated ranks under mostwork the same point cost 2.8 times as
/// much host time after 200 points as at first (docs/explanation/simulator-host-cost.md); a fresh smpirun starts with
/// empty lists, for a start-up of seconds.
constexpr std::size_t kSimulatedPointsPerLaunch = 16;

std::size_t points_per_launch(const SweepOptions& o) {
  if (o.points_per_launch > 0) return static_cast<std::size_t>(o.points_per_launch);
  return simulated(o) ? kSimulatedPointsPerLaunch : std::numeric_limits<std::size_t>::max();
}

/// indices cut into the launches that run them, in order, each at most points_per_launch(o) points.
std::vector<std::vector<std::size_t>> launch_chunks(const SweepOptions& o, const std::vector<std::size_t>& indices) {
  std::vector<std::vector<std::size_t>> chunks;
  const std::size_t cap = points_per_launch(o);
  for (std::size_t k = 0; k < indices.size(); k += cap) {
    const auto first = indices.begin() + static_cast<std::ptrdiff_t>(k);
    chunks.emplace_back(first, first + static_cast<std::ptrdiff_t>(std::min(cap, indices.size() - k)));
  }
  return chunks;
}

/// Runs the kernel points indices, in launches of at most points_per_launch(o) points; a launch that crashes is
/// followed by one for the points after the one it was running.
void run_kernel_launches(const SweepOptions& o, const Study& study, const fs::path& out,
                         const std::vector<std::size_t>& indices, Progress& progress, std::vector<Failure>& failures) {
  for (const auto& chunk : launch_chunks(o, indices)) {
    std::vector<std::size_t> remaining = chunk;
    while (!remaining.empty()) remaining = run_kernel_launch(o, study, out, remaining, progress, failures);
  }
}

/// Runs the tasks, at most `jobs` at once, in their order (one at a time: exactly that order); the failures each
/// reports are appended to failures in the order the tasks end.
void run_at_once(const std::vector<std::function<void(std::vector<Failure>&)>>& tasks, int jobs,
                 std::vector<Failure>& failures) {
  std::mutex mutex;
  std::size_t next = 0;
  std::exception_ptr error;  // the first task that threw: no further task starts, and it is rethrown here
  const auto worker = [&] {
    for (;;) {
      std::size_t task = 0;
      {
        const std::lock_guard lock(mutex);
        if (next == tasks.size() || error) return;
        task = next++;
      }
      std::vector<Failure> own;
      try {
        tasks[task](own);
      } catch (...) {
        const std::lock_guard lock(mutex);
        if (!error) error = std::current_exception();
      }
      const std::lock_guard lock(mutex);
      failures.insert(failures.end(), own.begin(), own.end());
    }
  };
  std::vector<std::thread> threads;
  for (int j = 1; j < jobs && static_cast<std::size_t>(j) < tasks.size(); ++j) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
  if (error) std::rethrow_exception(error);
}

/// --dry-run with --launcher local or smpi: the command of each launch the sweep would start, nothing run. A
/// kernel launch is one command for its points; a commbench point is one command each.
int print_launches(const SweepOptions& o, const Study& study, const fs::path& out,
                   const std::map<int, std::vector<std::size_t>>& todo) {
  std::size_t commands = 0;
  for (const auto& [nprocs, indices] : todo) {
    for (const std::size_t i : indices) {
      if (study.points[i].program != Program::commbench) continue;
      std::printf("would launch: %s\n", run_command(o, study, out, {i}, nprocs).c_str());
      ++commands;
    }
    for (const auto& chunk : launch_chunks(o, kernel_points(study, indices))) {
      std::printf("would launch: %s\n", run_command(o, study, out, chunk, nprocs).c_str());
      ++commands;
    }
  }
  std::printf("dry run: %zu launch command(s) printed, none run\n", commands);
  return 0;
}

/// stopping.csv's rows already in the folder, by key; InputError naming the file when it is not a stopping.csv.
std::map<std::string, csv::Row> read_stopping(const fs::path& file) {
  std::map<std::string, csv::Row> rows;
  std::error_code ec;
  if (!fs::exists(file, ec)) return rows;
  std::string why;
  const auto text = read_text_file(file, &why);
  if (!text) throw InputError(file.string() + ": cannot be read (" + why + ")");
  std::stringstream lines(*text);
  std::string line;
  if (!std::getline(lines, line) || csv::split_line(line) != stopping_header()) {
    throw InputError(file.string() + ": not a stopping.csv of this mcmclb (header: " + printable(line, 120) +
                     "; expected: " + join(stopping_header(), ",") + ")");
  }
  while (std::getline(lines, line)) {
    csv::Row row = csv::split_line(line);
    if (row.size() == stopping_header().size()) rows[row.front()] = std::move(row);
  }
  return rows;
}

/// The key column of stopping.csv: the configuration's key fields as one CSV line (printable, unambiguous).
std::string stopping_key(const std::string& configuration) {
  csv::Row fields;
  std::string field;
  for (const char ch : configuration) {
    if (ch == '\x1f') {
      fields.push_back(field);
      field.clear();
    } else {
      field += ch;
    }
  }
  fields.push_back(field);
  return results::ResultStore::key(fields);
}

/// --until-ci: after the study's own repetitions, repeats each kernel point (in rounds: one launch per rank count
/// for every point still short) until the 95 % interval of its median time is at most until_ci_pct % of the median
/// either side, or max_reps valid repetitions are recorded; simulated points stop at once (deterministic). The
/// repetitions come from the study expanded with reps = max_reps, so rep r is the same point, with the same resume
/// key, in every round and every resumed sweep: a resume counts what is recorded and goes on from there. Writes
/// why each point stopped to stopping.csv. Returns how many runs it started and how many of them failed (recorded
/// in failures.csv).
std::pair<std::size_t, std::size_t> repeat_until_ci(const SweepOptions& o, const fs::path& out,
                                                    results::ResultStore& store) {
  std::vector<Failure> failures;  // indices into the study with reps = max_reps
  std::size_t started = 0;
  SweepOptions capped = o;
  capped.overrides.push_back("reps=" + std::to_string(o.max_reps));
  const Study study = load(capped, read_file(o.study, "study file"));
  const Backend backend = sweep_backend(o);
  std::vector<std::string> order;                             // configurations, in the study's order
  std::map<std::string, std::vector<std::size_t>> points_of;  // configuration -> its points, rep 0, 1, ...
  for (const Point& p : study.points) {
    if (p.program != Program::kernel) continue;
    const std::string key = configuration_key(p.spec, backend);
    if (points_of.count(key) == 0) order.push_back(key);
    points_of[key].push_back(p.index);
  }
  std::set<std::string> failed;  // a round's launch failed for them: not retried without end
  std::map<std::string, std::string> reason;
  std::map<std::string, ConfigurationSamples> samples;
  for (int round = 1;; ++round) {
    samples = read_configurations(out.string());
    const auto recorded = read_results(out);
    std::map<int, std::vector<std::size_t>> todo;
    std::size_t total = 0;
    for (const std::string& key : order) {
      const auto it = samples.find(key);
      const std::size_t n = it == samples.end() ? 0 : it->second.time_s.size();
      std::optional<double> half_width;
      if (n > 0) half_width = stats::median_ci(it->second.time_s).half_width_pct();
      if (failed.count(key) != 0) {
        reason[key] = "failed";
      } else if (n > 0 && it->second.simulated) {
        reason[key] = "deterministic";
      } else if (half_width && *half_width <= o.until_ci_pct) {
        reason[key] = "ci_reached";
      } else if (n >= static_cast<std::size_t>(o.max_reps)) {
        reason[key] = "cap";
      } else {
        // Straight to the fewest repetitions with an interval, then one more per round.
        std::size_t want =
            std::min<std::size_t>(std::max<std::size_t>(1, stats::kMinCiSamples - std::min(n, stats::kMinCiSamples)),
                                  static_cast<std::size_t>(o.max_reps) - n);
        std::size_t scheduled = 0;
        for (const std::size_t i : points_of[key]) {
          if (scheduled == want) break;
          if (done_already(study.points[i], backend, out, recorded)) continue;
          todo[study.points[i].spec.nprocs].push_back(i);
          ++scheduled;
        }
        total += scheduled;
        reason[key] = scheduled == 0 ? "cap" : "";  // every rep up to the cap recorded (some invalid): no more
      }
    }
    if (todo.empty()) break;
    std::printf(
        "until-ci round %d: %zu more run(s) for the points whose interval is wider than %g %% of the "
        "median\n",
        round, total, o.until_ci_pct);
    Progress progress(total);
    started += total;
    const std::size_t failures_before = failures.size();
    for (const auto& [nprocs, indices] : todo) {
      // In the study's order (Study::run_order): the first round brings every point to the fewest repetitions
      // with an interval, which scheduled point by point would run blocked.
      run_kernel_launches(capped, study, out, study.run_order(indices), progress, failures);
    }
    for (std::size_t k = failures_before; k < failures.size(); ++k) {
      failed.insert(configuration_key(study.points[failures[k].index].spec, backend));
    }
  }
  std::map<std::string, csv::Row> ours;
  std::map<std::string, int> counts;
  for (const std::string& key : order) {
    const RunSpec& spec = study.points[points_of[key].front()].spec;
    const auto it = samples.find(key);
    csv::Row row = {stopping_key(key), std::to_string(spec.nprocs), run_label(spec)};
    if (it != samples.end()) {
      const auto ci = stats::median_ci(it->second.time_s);
      const auto half_width = ci.half_width_pct();
      row.insert(row.end(), {std::to_string(ci.n), csv::number(ci.median), ci.low ? csv::number(*ci.low) : "",
                             ci.high ? csv::number(*ci.high) : "", half_width ? csv::number(*half_width) : ""});
    } else {
      row.insert(row.end(), {"0", "", "", "", ""});
    }
    row.insert(row.end(), {csv::number(o.until_ci_pct), std::to_string(o.max_reps), reason[key], utc_now()});
    ++counts[reason[key]];
    ours[row.front()] = std::move(row);
  }
  // Read, merged and written under the folder's lock: a second --until-ci sweep into this folder finishing at the
  // same moment merges its rows after ours, not over them.
  store.rewrite_file("stopping.csv", [&](const fs::path& file) {
    std::map<std::string, csv::Row> rows = read_stopping(file);
    for (const auto& [key, row] : ours) rows[key] = row;
    std::string content = csv::line(stopping_header());
    for (const auto& [key, row] : rows) content += csv::line(row);
    return content;
  });
  std::vector<std::string> summary;
  for (const auto& [why, count] : counts) summary.push_back(std::to_string(count) + " " + why);
  std::printf("until-ci: %zu point(s) stopped: %s (why per point: %s)\n", order.size(), join(summary).c_str(),
              (out / "stopping.csv").string().c_str());
  if (!failures.empty()) record_failures(study, backend, store, failures);
  return {started, failures.size()};
}

/// The closing lines on oversubscription, from the folder's provenance.csv joined with runs.csv by run_id: for
/// each rank count some run of which had more ranks on a node than CPUs for the job there, what that does to the
/// numbers and what to compare instead. Nothing when no run is known to be oversubscribed (older folders,
/// simulated runs).
void say_oversubscribed(const fs::path& out) {
  const auto table = [&](const char* name) {
    std::vector<csv::Row> rows;
    const auto text = read_text_file(out / name);
    if (!text) return rows;
    std::stringstream lines(*text);
    for (std::string line; std::getline(lines, line);) rows.push_back(csv::split_line(line));
    return rows;
  };
  const auto runs = table("runs.csv"), provenance = table("provenance.csv");
  if (runs.empty() || provenance.empty()) return;
  const auto column = [](const csv::Row& header, const std::string& name) {
    return static_cast<std::size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  const std::size_t run_id = column(runs[0], "run_id"), nprocs = column(runs[0], "nprocs");
  const std::size_t prov_id = column(provenance[0], "run_id"), over = column(provenance[0], "oversubscribed"),
                    ranks = column(provenance[0], "ranks_per_node"), cores = column(provenance[0], "cores_available");
  const std::size_t prov_width = provenance[0].size();
  if (over >= prov_width || ranks >= prov_width || cores >= prov_width || nprocs >= runs[0].size()) return;
  std::map<std::string, std::pair<std::string, std::string>> oversubscribed;  // run_id -> ranks, cores
  for (std::size_t i = 1; i < provenance.size(); ++i) {
    const csv::Row& row = provenance[i];
    if (row.size() == prov_width && row[over] == "true") oversubscribed[row[prov_id]] = {row[ranks], row[cores]};
  }
  std::map<int, std::pair<std::string, std::string>> points;  // nprocs -> ranks per node, cores
  for (std::size_t i = 1; i < runs.size(); ++i) {
    const csv::Row& row = runs[i];
    if (row.size() != runs[0].size()) continue;
    const auto it = oversubscribed.find(row[run_id]);
    if (it != oversubscribed.end()) points[std::atoi(row[nprocs].c_str())] = it->second;
  }
  if (points.empty()) return;
  std::vector<std::string> ran;
  long fewest_cores = 0;
  for (const auto& [p, rc] : points) {
    ran.push_back("P = " + std::to_string(p) + " ran " + rc.first + " ranks on " + rc.second + " cores");
    const long c = std::atol(rc.second.c_str());
    if (fewest_cores == 0 || (c > 0 && c < fewest_cores)) fewest_cores = c;
  }
  // How much the waiting costs depends on the library the binaries were built with (cmake/Mpi.cmake's table).
  std::printf(
      "oversubscribed: %s. With more ranks than cores the ranks wait for a core, and %s: read those points as the "
      "machine's limit, not the balancers'; compare balancers at P <= %ld (provenance.csv: oversubscribed)\n",
      join(ran, "; ").c_str(), std::string(mpi_build::kWaiting).c_str(), fewest_cores);
}

}  // namespace

int sweep_local(const SweepOptions& o, const Study& study) {
  if (simulated(o)) {
    check_smpi(o, study);
    // A job step's simulation runs on a node of the allocation, whose memory this host cannot see.
    if (!o.dry_run && !o.job_steps)
      check_memory(estimate_to_run(o, study), "fewer --jobs, or fewer ranks in the study");
  } else if (!o.dry_run) {
    // Every rank count the study launches, once, before anything is written.
    std::set<int> counts;
    for (const Point& p : study.points) counts.insert(p.spec.nprocs);
    for (const int n : counts) check_mpiexec_starts(n);
  }
  std::optional<results::ResultStore> store;             // none for a dry run: it opens nothing for writing
  if (!o.dry_run) store.emplace(open_output(o, study));  // before the first launch
  const fs::path out = output_of(o, study);
  if (store && simulated(o) && deals_hostfile(study)) {  // before the first launch reads it
    const std::string dealt = dealt_hostfile(o, study.points.front().spec.placement);
    store->rewrite_file(placement_hostfile(o, study, out).filename().string(), [&](const fs::path&) { return dealt; });
  }
  std::size_t skipped = 0;
  const auto todo = points_to_run(o, study, out, recorded_in_output(o, study, store), skipped);
  std::size_t total = 0;
  std::size_t launches = 0;
  for (const auto& [n, indices] : todo) {
    total += indices.size();
    const auto kernel = kernel_points(study, indices);
    launches += indices.size() - kernel.size() + launch_chunks(o, kernel).size();
  }
  std::printf(
      "sweep %s: %zu points, %zu already done in %s (skipped; --force reruns them), %zu to run in %zu "
      "launch(es)\n",
      study.name.c_str(), study.points.size(), skipped, out.string().c_str(), total, launches);
  if (o.until_ci_pct > 0) (void)read_stopping(out / "stopping.csv");  // a foreign one: refused before any work
  if (o.dry_run) {
    if (o.until_ci_pct > 0) std::printf("--until-ci: the rounds after these depend on their times: not printed\n");
    return print_launches(o, study, out, todo);
  }
  note_simulated_reps(o, study);

  std::vector<Failure> failures;
  // Each point weighs what it is expected to cost: a simulation its host seconds, a real run its expected time.
  const Catalog methods = catalog();
  const std::function<double(const Point&)> weight = [&](const Point& p) {
    if (simulated(o) && p.program == Program::kernel) return simulated_host_s(p.spec);
    return std::max(0.1, expected_point_s(p, methods));
  };
  double total_weight = 0;
  for (const auto& [nprocs, indices] : todo) {
    for (const std::size_t i : indices) total_weight += weight(study.points[i]);
  }
  Progress progress(total, weight, total_weight);
  // Each launch a task, in the order one at a time runs them: commbench points, then the kernel points' launches,
  // rank count by rank count. --jobs N runs N at once, each with failures of its own, merged at its end.
  std::vector<std::function<void(std::vector<Failure>&)>> tasks;
  for (const auto& [nprocs, indices] : todo) {
    for (const std::size_t i : indices) {
      if (study.points[i].program == Program::commbench) {
        tasks.emplace_back(
            [&, i](std::vector<Failure>& f) { run_commbench_point(o, study, out, study.points[i], progress, f); });
      }
    }
    for (const auto& chunk : launch_chunks(o, kernel_points(study, indices))) {
      tasks.emplace_back([&, chunk](std::vector<Failure>& f) {
        std::vector<std::size_t> remaining = chunk;
        while (!remaining.empty()) remaining = run_kernel_launch(o, study, out, remaining, progress, f);
      });
    }
  }
  run_at_once(tasks, o.jobs, failures);
  const std::size_t failed_launching = failures.size();
  check_simulated_reps(o, study, out, failures);
  const auto [repeated, failed_repeating] =
      o.until_ci_pct > 0 ? repeat_until_ci(o, out, *store) : std::pair<std::size_t, std::size_t>{0, 0};
  const std::string more = o.until_ci_pct > 0 ? " (+" + std::to_string(repeated) + " repeated for --until-ci)" : "";
  std::printf("sweep %s: %zu run%s, %zu skipped, %zu failed, %s; results in %s\n", study.name.c_str(),
              total - failed_launching, more.c_str(), skipped, failures.size() + failed_repeating,
              format_seconds(progress.elapsed_s()).c_str(), out.string().c_str());
  if (o.launcher == "local") say_oversubscribed(out);
  if (!failures.empty()) record_failures(study, sweep_backend(o), *store, failures);
  store->prune_failures();  // failures.csv lists what is failed now: points fixed by this or a later run leave it
  return failures.empty() && failed_repeating == 0 ? 0 : 3;
}

/// --launcher local: the real MPI library's mpiexec on this host.
class LocalLauncher final : public Launcher {
 public:
  [[nodiscard]] std::string_view name() const override { return "local"; }
  [[nodiscard]] std::string_view provenance_name() const override { return "mpiexec"; }
  int sweep(const SweepOptions& o, const Study& study, const std::string& /*study_text*/) const override {
    return sweep_local(o, study);
  }
};

std::unique_ptr<Launcher> local_launcher() { return std::make_unique<LocalLauncher>(); }

}  // namespace mcmclb::launch
