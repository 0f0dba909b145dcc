// `mcmclb plan` and `mcmclb sweep` (apps/sweep.hpp).
#include "sweep.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <sstream>

#include "driver.hpp"
#include "mcmclb/balancer.hpp"
#include "mcmclb/mpi.hpp"
#include "mcmclb/result_store.hpp"
#include "mcmclb/run_files.hpp"
#include "mcmclb/study.hpp"
#include "mcmclb/text.hpp"

#ifndef MCMCLB_SOURCE_DIR
#define MCMCLB_SOURCE_DIR "."
#endif

namespace mcmclb {

namespace {

namespace fs = std::filesystem;
using mpi::InputError;

std::string read_file(const std::string& path, const std::string& what) {
  auto content = read_text_file(path);
  if (!content) throw InputError(path + ": cannot read the " + what);
  return std::move(*content);
}

std::string this_executable() { return fs::canonical("/proc/self/exe").string(); }

Study load(const SweepOptions& o) {
  return build_study(read_file(o.study, "study file"), o.overrides, o.study, std::nullopt, catalog());
}

fs::path output_of(const SweepOptions& o, const Study& s) { return o.out.empty() ? s.out : fs::path(o.out); }

std::string overrides_args(const SweepOptions& o) {
  std::string args;
  for (const auto& set : o.overrides) args += " --set " + shell_quote(set);
  return args;
}

/// What one launch runs after "mpiexec -n P" / "srun -n P": mcmclb run over the points, or the commbench
/// benchmark for a commbench point. in_script: the batch-script form (resumes inside the job).
std::string program_command(const SweepOptions& o, const Study& study, const fs::path& out,
                            const std::vector<std::size_t>& points, bool in_script) {
  const Point& first = study.points[points.front()];
  if (first.program == Program::commbench) {
    std::string command = shell_quote((fs::path(this_executable()).parent_path() / "mcmclb-commbench").string()) +
                          " --reps " + std::to_string(first.commbench.reps) + " --rep-time " +
                          csv::number(first.commbench.rep_time_s);
    // The names were checked against the registry at plan time; quoted anyway, as every argument here is.
    if (!first.commbench.methods.empty()) command += " --methods " + shell_quote(join(first.commbench.methods, ","));
    return command + " --out " + shell_quote((out / commbench_file(first.spec.nprocs)).string());
  }
  return shell_quote(this_executable()) + " run " + shell_quote(o.study) + " --points " + point_list(points) +
         " --out " + shell_quote(out.string()) + (in_script ? " --resume" : "") + overrides_args(o);
}

/// "mpiexec -n P " or "srun -n P ".
std::string launch_prefix(const std::string& launcher, int nprocs) {
  return launcher + " -n " + std::to_string(nprocs) + " ";
}

std::string run_command(const SweepOptions& o, const Study& study, const fs::path& out,
                        const std::vector<std::size_t>& points, int nprocs) {
  return launch_prefix("mpiexec", nprocs) + program_command(o, study, out, points, false);
}

bool done_already(const Point& p, const fs::path& out, const std::map<std::string, results::RecordedPoint>& recorded) {
  if (p.program == Program::commbench) return fs::exists(out / commbench_file(p.spec.nprocs));
  const auto at = recorded.find(store_key(p.spec));
  return at != recorded.end() && at->second.done();  // valid and complete: a run that lost rank rows is rerun
}

/// Opens the results store of the sweep (creates or checks the folder and every file's header) before the first
/// launch: a folder that cannot hold results, or holds foreign or older files, is one line and exit 2.
results::ResultStore open_output(const SweepOptions& o, const Study& study) {
  try {
    return open_results(output_of(o, study));
  } catch (const results::StoreError& e) {
    throw InputError((o.out.empty() ? "key out (default results/<experiment>): " : "--out: ") + std::string(e.what()));
  }
}

std::string describe(const Point& p) {
  const std::string head = "point " + std::to_string(p.index);
  if (p.program == Program::commbench) return head + " (commbench, nprocs=" + std::to_string(p.spec.nprocs) + ")";
  return head + " (nprocs=" + std::to_string(p.spec.nprocs) + ", G=" + std::to_string(p.spec.G) +
         ", T_ms=" + csv::number(p.spec.T_ms) + ", " + p.spec.workload.model + ", " + run_label(p.spec) + ", rep " +
         std::to_string(p.spec.rep) + ")";
}

bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (!dir.empty() && ::access((fs::path(dir) / program).c_str(), X_OK) == 0) return true;
  }
  return false;
}

/// Runs command, passing each output line to on_line; returns the exit status.
int run_streaming(const std::string& command, const std::function<void(const std::string&)>& on_line) {
  std::fflush(stdout);
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("cannot start: " + command);
  char buffer[4096];
  std::string line;
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) {
    line += buffer;
    if (!line.empty() && line.back() == '\n') {
      line.pop_back();
      on_line(line);
      line.clear();
    }
  }
  if (!line.empty()) on_line(line);
  const int status = ::pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

std::string format_seconds(double s) {
  const long whole = std::lround(s);  // round once, so 179.6 s reads "3 min 00 s", not "2 min 60 s"
  char text[32];
  if (whole < 120) {
    std::snprintf(text, sizeof text, "%ld s", whole);
  } else {
    std::snprintf(text, sizeof text, "%ld min %02ld s", whole / 60, whole % 60);
  }
  return text;
}

struct Failure {
  std::size_t index;
  std::string reason;
};

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

/// The points of the study still to run, per rank count (all of them with --force); counts the skipped ones.
std::map<int, std::vector<std::size_t>> points_to_run(const SweepOptions& o, const Study& study,
                                                      const results::ResultStore& store, std::size_t& skipped) {
  const fs::path& out = store.dir();
  const auto valid = store.recorded_points();
  std::map<int, std::vector<std::size_t>> todo;
  skipped = 0;
  for (const Point& p : study.points) {
    if (!o.force && done_already(p, out, valid)) {
      ++skipped;
    } else {
      todo[p.spec.nprocs].push_back(p.index);
    }
  }
  return todo;
}

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
    const std::string key = point_key(study.points[i].spec);
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

/// Prints the failures and appends them to failures.csv, each with its point's store key (empty for a commbench
/// point, whose CSV file is its record), so a later valid run of the point removes it (prune_failures).
void record_failures(const Study& study, results::ResultStore& store, const std::vector<Failure>& failures) {
  std::vector<csv::Row> rows;
  for (const auto& f : failures) {
    const Point& p = study.points[f.index];
    std::fprintf(stderr, "failed: %s: %s\n", describe(p).c_str(), f.reason.c_str());
    rows.push_back({std::to_string(p.index), std::to_string(p.spec.nprocs), run_label(p.spec),
                    std::to_string(p.spec.rep), f.reason, utc_now(),
                    p.program == Program::commbench ? std::string() : store_key(p.spec)});
  }
  store.record_failures(rows);
  std::fprintf(stderr, "mcmclb: %zu point(s) failed (recorded in %s)\n", failures.size(),
               (store.dir() / "failures.csv").string().c_str());
}

int sweep_local(const SweepOptions& o, const Study& study) {
  if (!on_path("mpiexec")) {
    throw InputError("--launcher local: mpiexec is not on PATH (install MPICH or add its bin folder to PATH)");
  }
  results::ResultStore store = open_output(o, study);  // before the first launch
  const fs::path out = store.dir();
  std::size_t skipped = 0;
  const auto todo = points_to_run(o, study, store, skipped);
  std::size_t total = 0;
  for (const auto& [n, indices] : todo) total += indices.size();
  std::printf(
      "sweep %s: %zu points, %zu already done in %s (skipped; --force reruns them), %zu to run in %zu "
      "launch(es)\n",
      study.name.c_str(), study.points.size(), skipped, out.string().c_str(), total, todo.size());

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
  std::printf("sweep %s: %zu run, %zu skipped, %zu failed, %s; results in %s\n", study.name.c_str(),
              total - failures.size(), skipped, failures.size(), format_seconds(progress.elapsed_s()).c_str(),
              out.string().c_str());
  if (!failures.empty()) record_failures(study, store, failures);
  store.prune_failures();  // failures.csv lists what is failed now: points fixed by this or a later run leave it
  return failures.empty() ? 0 : 3;
}

/// The batch-script template with its placeholders filled.
std::string fill_template(std::string text, const std::vector<std::pair<std::string, std::string>>& values) {
  for (const auto& [key, value] : values) {
    for (std::size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + value.size())) {
      text.replace(at, key.size(), value);
    }
  }
  // An empty placeholder line (no extra #SBATCH lines) leaves no blank line behind.
  for (std::size_t at = text.find("\n\n#"); at != std::string::npos; at = text.find("\n\n#")) text.erase(at, 1);
  return text;
}

std::vector<std::pair<std::string, std::string>> script_values(const SweepOptions& o, const Study& study, int nprocs,
                                                               const std::vector<std::size_t>& indices) {
  const JobSpec& job = study.points[indices.front()].job;
  std::vector<std::string> lines;
  if (!job.partition.empty()) lines.push_back("#SBATCH --partition=" + job.partition);
  if (!job.account.empty()) lines.push_back("#SBATCH --account=" + job.account);
  if (job.tasks_per_node > 0) lines.push_back("#SBATCH --ntasks-per-node=" + std::to_string(job.tasks_per_node));
  // groups.by: node forms groups from the ranks each node holds, which must be one contiguous range per node:
  // block placement, and whole nodes of tasks_per_node ranks where it is given (issue 12).
  const bool by_node = std::any_of(indices.begin(), indices.end(), [&](std::size_t i) {
    return study.points[i].spec.groups.by == GroupsSpec::By::node;
  });
  if (by_node) {
    lines.emplace_back("#SBATCH --distribution=block");
    if (job.tasks_per_node > 0) {
      lines.push_back("#SBATCH --nodes=" + std::to_string((nprocs + job.tasks_per_node - 1) / job.tasks_per_node));
    }
  }
  for (const auto& extra : job.extra) lines.push_back(extra);
  const std::string launch = launch_prefix(job.launcher, nprocs);
  const fs::path out = output_of(o, study);
  std::string command;
  if (study.points[indices.front()].program == Program::commbench) {
    std::vector<std::string> lines;
    for (std::size_t i : indices) lines.push_back(launch + program_command(o, study, out, {i}, true));
    command = join(lines, "\n");
  } else {
    command = "# --resume skips the points the output already holds as valid, so a resubmitted job continues.\n" +
              launch + program_command(o, study, out, indices, true);
  }
  return {{"@STUDY_PATH@", shell_quote(o.study)},
          {"@STUDY@", study.name},
          {"@NPOINTS@", std::to_string(indices.size())},
          {"@NPROCS@", std::to_string(nprocs)},
          {"@JOB_NAME@", study.name + "-n" + std::to_string(nprocs)},
          {"@TIME_LIMIT@", job.time_limit},
          {"@OUT@", shell_quote(out.string())},
          {"@SBATCH_LINES@", join(lines, "\n")},
          {"@WORKDIR@", shell_quote(fs::current_path().string())},
          {"@COMMAND@", command}};
}

/// The folder for the batch scripts: created, or checked to be a writable folder, before anything is written.
void check_jobs_dir(const fs::path& dir, const std::string& what) {
  std::error_code ec;
  const fs::file_status st = fs::status(dir, ec);
  const std::string shown = printable(dir.native(), 200);
  if (fs::exists(st) && !fs::is_directory(st)) {
    throw InputError(what + ": " + shown + " exists and is not a folder; the batch scripts need a folder");
  }
  if (!fs::exists(st)) {
    fs::create_directories(dir, ec);
    if (ec) throw InputError(what + ": " + shown + ": cannot create this folder (" + ec.message() + ")");
  }
  if (::access(dir.c_str(), W_OK) != 0) throw InputError(what + ": " + shown + ": cannot write in this folder");
}

int sweep_slurm(const SweepOptions& o, const Study& study) {
  if (!o.dry_run && !on_path("sbatch")) {
    throw InputError(
        "--launcher slurm: sbatch is not on PATH (run on a Slurm login node, or add --dry-run to only "
        "write the scripts)");
  }
  const fs::path dir = o.jobs_dir.empty() ? fs::path("jobs") / study.name : fs::path(o.jobs_dir);
  const std::string template_path = std::string(MCMCLB_SOURCE_DIR) + "/jobs/slurm.sbatch.in";
  const std::string text = read_file(template_path, "batch script template");
  check_jobs_dir(dir, o.jobs_dir.empty() ? "key experiment (jobs/<experiment>)" : "--jobs-dir");
  // Slurm opens --output in the output folder before the script runs; the store also checks its files now, so a
  // job never starts on a folder it would refuse.
  (void)open_output(o, study);
  std::vector<fs::path> scripts;
  for (const auto& [nprocs, indices] : study.launches()) {
    const fs::path script = dir / (study.name + "-n" + std::to_string(nprocs) + ".sbatch");
    csv::write_atomically(script, fill_template(text, script_values(o, study, nprocs, indices)));
    fs::permissions(script, fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec,
                    fs::perm_options::add);
    scripts.push_back(script);
    std::printf("wrote %s (nprocs=%d, %zu points)\n", script.string().c_str(), nprocs, indices.size());
  }
  if (o.dry_run) {
    std::printf("dry run: %zu script(s) written, none submitted (submit each with: sbatch SCRIPT)\n", scripts.size());
    return 0;
  }
  int failed = 0;
  for (const auto& script : scripts) {
    std::string id;
    const int status = run_streaming("sbatch --parsable " + shell_quote(script.string()),
                                     [&](const std::string& line) { id += line; });
    if (status == 0) {
      std::printf("submitted %s as job %s\n", script.string().c_str(), id.c_str());
    } else {
      ++failed;
      std::fprintf(stderr, "mcmclb: sbatch %s failed (status %d): %s\n", script.string().c_str(), status, id.c_str());
    }
  }
  return failed > 0 ? 3 : 0;
}

}  // namespace

SweepOptions parse_sweep_options(const std::vector<std::string>& args, bool sweep) {
  SweepOptions o;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const auto value = [&](const std::string& flag) {
      if (i + 1 >= args.size()) throw InputError(flag + ": missing value (see --help)");
      return args[++i];
    };
    if (a == "--set") {
      o.overrides.push_back(value(a));
    } else if (a == "--verbose" && !sweep) {
      o.verbose = true;
    } else if (a == "--launcher" && sweep) {
      o.launcher = value(a);
      if (o.launcher != "local" && o.launcher != "slurm") {
        throw InputError("--launcher: '" + o.launcher + "' is not allowed (allowed: local, slurm)");
      }
    } else if (a == "--out" && sweep) {
      o.out = value(a);
    } else if (a == "--jobs-dir" && sweep) {
      o.jobs_dir = value(a);
    } else if (a == "--force" && sweep) {
      o.force = true;
    } else if (a == "--dry-run" && sweep) {
      o.dry_run = true;
    } else if (a.rfind("--", 0) == 0) {
      throw InputError("unknown flag " + a +
                       (sweep ? " (allowed: --launcher local|slurm, --out DIR, --force, "
                                "--dry-run, --jobs-dir DIR, --set key=value)"
                              : " (allowed: --set key=value, --verbose)"));
    } else if (o.study.empty()) {
      o.study = a;
    } else {
      throw InputError("unexpected argument '" + a + "' (one STUDY.yaml)");
    }
  }
  if (o.study.empty()) throw InputError("missing STUDY.yaml (see --help)");
  if (sweep && o.launcher.empty()) throw InputError("--launcher: required (allowed: local, slurm)");
  if (o.dry_run && o.launcher != "slurm") throw InputError("--dry-run: only with --launcher slurm");
  return o;
}

int plan_main(const SweepOptions& o) {
  const Study study = load(o);
  const auto launches = study.launches();
  std::printf("study %s (%s): %zu points in %zu launch(es), output %s\n", study.name.c_str(), o.study.c_str(),
              study.points.size(), launches.size(), study.out.string().c_str());
  for (const auto& [nprocs, indices] : launches) {
    std::printf("launch nprocs=%d, %zu points: %s\n", nprocs, indices.size(),
                run_command(o, study, study.out, indices, nprocs).c_str());
    if (o.verbose) {
      for (std::size_t i : indices) std::printf("  %s\n", describe(study.points[i]).c_str());
    }
  }
  return 0;
}

int sweep_main(const SweepOptions& o) {
  const Study study = load(o);
  return o.launcher == "slurm" ? sweep_slurm(o, study) : sweep_local(o, study);
}

}  // namespace mcmclb
