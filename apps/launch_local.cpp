// --launcher local and smpi (apps/launchers.hpp): the points still to run, one mpiexec (or smpirun) per rank count,
// with a progress line per point, failures recorded and the rest of a crashed launch relaunched.
#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "launchers.hpp"
#include "mcmclb/runs_csv.hpp"

namespace mcmclb::launch {

namespace {

std::string run_command(const SweepOptions& o, const Study& study, const fs::path& out,
                        const std::vector<std::size_t>& points, int nprocs) {
  const std::string prefix = o.launcher == "smpi" ? smpirun_prefix(o, nprocs) : launch_prefix("mpiexec", nprocs);
  return prefix + program_command(o, study, out, points, !o.force);
}

/// Counts finished points and prints one progress line per point, with the time elapsed and an estimate left.
class Progress {
 public:
  explicit Progress(std::size_t total) : total_(total), start_(std::chrono::steady_clock::now()) {}
  void point_done(const Point& p, const std::string& verdict) {
    ++finished_;
    const double elapsed = elapsed_s();
    const double left = elapsed / static_cast<double>(finished_) * static_cast<double>(total_ - finished_);
    std::printf("[point %zu of %zu, %s elapsed, ~%s left] %s %s\n", finished_, total_, format_seconds(elapsed).c_str(),
                format_seconds(left).c_str(), describe(p).c_str(), verdict.c_str());
    std::fflush(stdout);
  }
  [[nodiscard]] double elapsed_s() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::size_t total_, finished_ = 0;
  std::chrono::steady_clock::time_point start_;
};

/// Runs one commbench point (one mpiexec); its CSV is its record.
void run_commbench_point(const SweepOptions& o, const Study& study, const fs::path& out, const Point& p,
                         Progress& progress, std::vector<Failure>& failures) {
  const std::string command = run_command(o, study, out, {p.index}, p.spec.nprocs);
  std::printf("launch: %s\n", command.c_str());
  const int status = run_streaming(command, [](const std::string& line) { std::printf("  | %s\n", line.c_str()); });
  if (status != 0) failures.push_back({p.index, "mcmclb-commbench exited with status " + std::to_string(status)});
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
  std::printf("launch: %s\n", command.c_str());
  const int status = run_streaming(command, [&](const std::string& line) {
    std::printf("  | %s\n", line.c_str());
    report_new_rows();
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
    failures.push_back({i, "the launch exited with status " + std::to_string(status) + " while running it"});
    progress.point_done(study.points[i], "FAILED");
    return {remaining.begin() + static_cast<std::ptrdiff_t>(k) + 1, remaining.end()};  // relaunch the rest
  }
  return {};
}

/// --dry-run with --launcher local or smpi: the command of each launch the sweep would start, nothing run. A
/// kernel launch is one command for its points; a commbench point is one command each.
int print_launches(const SweepOptions& o, const Study& study, const fs::path& out,
                   const std::map<int, std::vector<std::size_t>>& todo) {
  std::size_t commands = 0;
  for (const auto& [nprocs, indices] : todo) {
    std::vector<std::size_t> kernel;
    for (const std::size_t i : indices) {
      if (study.points[i].program == Program::commbench) {
        std::printf("would launch: %s\n", run_command(o, study, out, {i}, nprocs).c_str());
        ++commands;
      } else {
        kernel.push_back(i);
      }
    }
    if (!kernel.empty()) {
      std::printf("would launch: %s\n", run_command(o, study, out, kernel, nprocs).c_str());
      ++commands;
    }
  }
  std::printf("dry run: %zu launch command(s) printed, none run\n", commands);
  return 0;
}

}  // namespace

int sweep_local(const SweepOptions& o, const Study& study) {
  if (o.launcher == "smpi") {
    check_smpi(o, study);
  } else if (!o.dry_run && !on_path("mpiexec")) {
    throw InputError("--launcher local: mpiexec is not on PATH (install MPICH or add its bin folder to PATH)");
  }
  std::optional<results::ResultStore> store;             // none for a dry run: it opens nothing for writing
  if (!o.dry_run) store.emplace(open_output(o, study));  // before the first launch
  const fs::path out = output_of(o, study);
  std::size_t skipped = 0;
  const auto todo = points_to_run(o, study, out, recorded_in_output(o, study, store), skipped);
  std::size_t total = 0;
  for (const auto& [n, indices] : todo) total += indices.size();
  std::printf(
      "sweep %s: %zu points, %zu already done in %s (skipped; --force reruns them), %zu to run in %zu "
      "launch(es)\n",
      study.name.c_str(), study.points.size(), skipped, out.string().c_str(), total, todo.size());
  if (o.dry_run) return print_launches(o, study, out, todo);
  note_simulated_reps(o, study);

  std::vector<Failure> failures;
  Progress progress(total);
  for (const auto& [nprocs, indices] : todo) {
    std::vector<std::size_t> remaining = indices;
    while (!remaining.empty()) {
      const Point& first = study.points[remaining.front()];
      if (first.program == Program::commbench) {
        run_commbench_point(o, study, out, first, progress, failures);
        remaining.erase(remaining.begin());
      } else {
        remaining = run_kernel_launch(o, study, out, remaining, progress, failures);
      }
    }
  }
  const std::size_t failed_launching = failures.size();
  check_simulated_reps(o, study, out, failures);
  std::printf("sweep %s: %zu run, %zu skipped, %zu failed, %s; results in %s\n", study.name.c_str(),
              total - failed_launching, skipped, failures.size(), format_seconds(progress.elapsed_s()).c_str(),
              out.string().c_str());
  if (!failures.empty()) record_failures(study, sweep_backend(o), *store, failures);
  store->prune_failures();  // failures.csv lists what is failed now: points fixed by this or a later run leave it
  return failures.empty() ? 0 : 3;
}

}  // namespace mcmclb::launch
