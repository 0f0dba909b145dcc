// `mcmclb plan` and `mcmclb sweep` (apps/sweep.hpp).
#include "sweep.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
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

Study load(const SweepOptions& o, const std::string& text) {
  return build_study(text, o.overrides, o.study, std::nullopt, catalog());
}

fs::path output_of(const SweepOptions& o, const Study& s) { return o.out.empty() ? s.out : fs::path(o.out); }

std::string overrides_args(const SweepOptions& o) {
  std::string args;
  for (const auto& set : o.overrides) args += " --set " + shell_quote(set);
  return args;
}

/// The smpi launcher's programs: the simulation build's mcmclb-sim (--sim-binary) and mcmclb-commbench-sim
/// (--sim-commbench, default: beside --sim-binary).
fs::path sim_commbench(const SweepOptions& o) {
  return o.sim_commbench.empty() ? fs::path(o.sim_binary).parent_path() / "mcmclb-commbench-sim"
                                 : fs::path(o.sim_commbench);
}

/// The backend a sweep's runs record (runs.csv's backend and platform columns): the resume key includes it. The
/// platform as every run records it (platform_identity()).
Backend sweep_backend(const SweepOptions& o) {
  if (o.launcher != "smpi") return {};
  return {"smpi", platform_identity(o.platform)};
}

/// A commbench launch's output file: commbench-n<P>.csv on the real MPI; simulated, commbench-n<P>-smpi-<platform
/// name>.csv beside it, so a real file never makes the simulated point look done (nor one of another platform).
std::string commbench_output(int nprocs, const Backend& backend) {
  if (backend.name == "mpi") return commbench_file(nprocs);
  return "commbench-n" + std::to_string(nprocs) + "-" + backend.name + "-" +
         fs::path(backend.platform).stem().string() + ".csv";
}

/// What one launch runs after "mpiexec -n P" / "srun -n P" / smpirun's options: mcmclb run over the points, or the
/// commbench benchmark for a commbench point (the simulation build's programs with --launcher smpi). resume:
/// `mcmclb run --resume`, so that a point another writer of the folder records meanwhile (a concurrent sweep, a
/// resubmitted job) is neither rerun in the job nor recorded twice; every launch but a --force one.
std::string program_command(const SweepOptions& o, const Study& study, const fs::path& out,
                            const std::vector<std::size_t>& points, bool resume) {
  const Point& first = study.points[points.front()];
  const bool simulated = o.launcher == "smpi";
  if (first.program == Program::commbench) {
    const fs::path program =
        simulated ? fs::absolute(sim_commbench(o)) : fs::path(this_executable()).parent_path() / "mcmclb-commbench";
    std::string command = shell_quote(program.string()) + " --reps " + std::to_string(first.commbench.reps) +
                          " --rep-time " + csv::number(first.commbench.rep_time_s);
    // The names were checked against the registry at plan time; quoted anyway, as every argument here is.
    if (!first.commbench.methods.empty()) command += " --methods " + shell_quote(join(first.commbench.methods, ","));
    return command + " --out " + shell_quote((out / commbench_output(first.spec.nprocs, sweep_backend(o))).string());
  }
  const std::string program = simulated ? fs::absolute(o.sim_binary).string() : this_executable();
  return shell_quote(program) + " run " + shell_quote(o.study) + " --points " + point_list(points) + " --out " +
         shell_quote(out.string()) + (resume ? " --resume" : "") + overrides_args(o);
}

/// "mpiexec -n P " or "srun -n P ".
std::string launch_prefix(const std::string& launcher, int nprocs) {
  return launcher + " -n " + std::to_string(nprocs) + " ";
}

/// The file of smpirun's flags for every simulated run (one source for the sweep, tests/smpi/ and docs/smpi.md),
/// or the one --smpi-flags names.
fs::path smpi_flags_file(const SweepOptions& o) {
  return o.smpi_flags.empty() ? fs::path(MCMCLB_SOURCE_DIR) / "configs" / "platforms" / "smpi.cfg"
                              : fs::path(o.smpi_flags);
}

/// The flags of smpi_flags_file(), in order: one per line, blank lines and # comments skipped. A line that is not
/// a plain -name or --name=value flag is refused, so nothing in the file needs quoting on a command line.
std::vector<std::string> smpi_flags(const SweepOptions& o) {
  const fs::path file = smpi_flags_file(o);
  const std::string text = read_file(file.string(), "smpirun flags file (the simulation flags, docs/smpi.md)");
  std::vector<std::string> flags;
  std::stringstream lines(text);
  int line_no = 0;
  for (std::string line; std::getline(lines, line);) {
    ++line_no;
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    const std::string flag = line.substr(first, line.find_last_not_of(" \t\r") - first + 1);
    const bool plain = std::all_of(flag.begin(), flag.end(), [](unsigned char c) {
      return std::isalnum(c) != 0 || std::string_view("-_./:=,").find(static_cast<char>(c)) != std::string_view::npos;
    });
    if (flag[0] != '-' || !plain) {
      throw InputError(file.string() + ": line " + std::to_string(line_no) + ": '" + printable(flag, 80) +
                       "' is not an smpirun flag (allowed: one -name or --name=value per line, # comments)");
    }
    flags.push_back(flag);
  }
  if (flags.empty()) throw InputError(file.string() + ": no flags (allowed: one smpirun flag per line)");
  return flags;
}

/// --launcher smpi: smpirun with the platform file and its hostfile (PLATFORM.hosts) and the flags of
/// smpi_flags_file(), with the environment the run records in runs.csv (platform) and provenance.csv (the platform's
/// hash, the flags).
std::string smpirun_prefix(const SweepOptions& o, int nprocs) {
  std::error_code ec;
  const fs::path canonical = fs::weakly_canonical(fs::absolute(o.platform), ec);
  const std::string platform = ec ? o.platform : canonical.string();  // the file itself, from any folder
  const std::string hosts = fs::path(platform).replace_extension(".hosts").string();
  const std::string flags = join(smpi_flags(o), " ");
  return "MCMCLB_PLATFORM=" + shell_quote(platform) + " MCMCLB_SMPI_CFG=" + shell_quote(flags) + " smpirun -np " +
         std::to_string(nprocs) + " -platform " + shell_quote(platform) + " -hostfile " + shell_quote(hosts) + " " +
         flags + " ";
}

std::string run_command(const SweepOptions& o, const Study& study, const fs::path& out,
                        const std::vector<std::size_t>& points, int nprocs) {
  const std::string prefix = o.launcher == "smpi" ? smpirun_prefix(o, nprocs) : launch_prefix("mpiexec", nprocs);
  return prefix + program_command(o, study, out, points, !o.force);
}

bool has_program(const Study& study, Program program) {
  return std::any_of(study.points.begin(), study.points.end(), [&](const Point& p) { return p.program == program; });
}

bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (!dir.empty() && ::access((fs::path(dir) / program).c_str(), X_OK) == 0) return true;
  }
  return false;
}

/// --launcher smpi: the platform and its hostfile exist, the flags file reads, and the simulation build's programs
/// the study needs are built (mcmclb-sim for kernel points, mcmclb-commbench-sim for commbench points); checked
/// before any launch. A dry run only prints the commands, so it notes a missing program instead.
void check_smpi(const SweepOptions& o, const Study& study) {
  const fs::path hosts = fs::path(o.platform).replace_extension(".hosts");
  if (!fs::exists(o.platform) || !fs::exists(hosts)) {
    throw InputError("--platform: " + o.platform + " and its hostfile " + hosts.string() +
                     " must both exist (allowed: a file of configs/platforms/)");
  }
  (void)smpi_flags(o);
  if (!o.dry_run && !on_path("smpirun")) {
    throw InputError("--launcher smpi: smpirun is not on PATH (install SimGrid: Debian libsimgrid-dev, bootstrap.sh)");
  }
  const auto check = [&](const std::string& flag, const fs::path& program, const std::string& target) {
    if (fs::exists(program)) return;
    const std::string message = flag + ": " + program.string() + " does not exist (build it: cmake -S . -B build-sim " +
                                "-DMCMCLB_SMPI=ON && cmake --build build-sim --target " + target + ")";
    if (!o.dry_run) throw InputError(message);
    std::printf("note: %s\n", message.c_str());
  };
  if (has_program(study, Program::kernel)) check("--sim-binary", o.sim_binary, "mcmclb");
  if (has_program(study, Program::commbench)) check("--sim-commbench", sim_commbench(o), "mcmclb-commbench");
}

bool done_already(const Point& p, const Backend& backend, const fs::path& out,
                  const std::map<std::string, results::RecordedPoint>& recorded) {
  // commbench writes one file per rank count and backend: it is its record.
  if (p.program == Program::commbench) return fs::exists(out / commbench_output(p.spec.nprocs, backend));
  const auto at = recorded.find(store_key(p.spec, backend));
  return at != recorded.end() && at->second.done();  // valid and complete: a run that lost rank rows is rerun
}

/// A refused output folder, saying where the folder came from: --out, or the study's out (results/<experiment>).
InputError output_error(const SweepOptions& o, const results::StoreError& e) {
  return InputError((o.out.empty() ? "key out (default results/<experiment>): " : "--out: ") + std::string(e.what()));
}

/// Opens the results store of the sweep (creates or checks the folder and every file's header) before the first
/// launch: a folder that cannot hold results, or holds foreign or older files, is one line and exit 2.
results::ResultStore open_output(const SweepOptions& o, const Study& study) {
  try {
    return open_results(output_of(o, study));
  } catch (const results::StoreError& e) {
    throw output_error(o, e);
  }
}

/// The points recorded in the sweep's output folder: through the opened store, or, for a dry run (store empty),
/// read only. A dry run writes nothing there (no lock file, no folder, no upgrade of an older version's files: a
/// user may dry-run before deciding which mcmclb to use on the folder); it refuses what open_output() refuses.
std::map<std::string, results::RecordedPoint> recorded_in_output(const SweepOptions& o, const Study& study,
                                                                 const std::optional<results::ResultStore>& store) {
  if (store) return store->recorded_points();
  try {
    return read_results(output_of(o, study));
  } catch (const results::StoreError& e) {
    throw output_error(o, e);
  }
}

std::string describe(const Point& p) {
  const std::string head = "point " + std::to_string(p.index);
  if (p.program == Program::commbench) return head + " (commbench, nprocs=" + std::to_string(p.spec.nprocs) + ")";
  return head + " (nprocs=" + std::to_string(p.spec.nprocs) + ", G=" + std::to_string(p.spec.G) +
         ", T_ms=" + csv::number(p.spec.T_ms) + ", " + p.spec.workload.model + ", " + run_label(p.spec) + ", rep " +
         std::to_string(p.spec.rep) + ")";
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
      std::fflush(stdout);  // a progress line means nothing minutes late (stdout to a file or a pipe is buffered)
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
std::map<int, std::vector<std::size_t>> points_to_run(const SweepOptions& o, const Study& study, const fs::path& out,
                                                      const std::map<std::string, results::RecordedPoint>& valid,
                                                      std::size_t& skipped) {
  std::map<int, std::vector<std::size_t>> todo;
  skipped = 0;
  for (const Point& p : study.points) {
    if (!o.force && done_already(p, sweep_backend(o), out, valid)) {
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

/// Prints the failures and appends them to failures.csv, each with its point's store key (empty for a commbench
/// point, whose CSV file is its record), so a later valid run of the point removes it (prune_failures).
void record_failures(const Study& study, const Backend& backend, results::ResultStore& store,
                     const std::vector<Failure>& failures) {
  std::vector<csv::Row> rows;
  for (const auto& f : failures) {
    const Point& p = study.points[f.index];
    std::fprintf(stderr, "failed: %s: %s\n", describe(p).c_str(), f.reason.c_str());
    rows.push_back({std::to_string(p.index), std::to_string(p.spec.nprocs), run_label(p.spec),
                    std::to_string(p.spec.rep), f.reason, utc_now(),
                    p.program == Program::commbench ? std::string() : store_key(p.spec, backend)});
  }
  store.record_failures(rows);
  std::fprintf(stderr, "mcmclb: %zu point(s) failed (recorded in %s)\n", failures.size(),
               (store.dir() / "failures.csv").string().c_str());
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

/// Simulated runs take no host time, so the repetitions of a point are the same simulation: said once, before the
/// launches (they still run: equal times across repetitions are the determinism check docs/smpi.md describes).
void note_simulated_reps(const SweepOptions& o, const Study& study) {
  if (o.launcher != "smpi") return;
  int reps = 0;
  for (const Point& p : study.points) reps = std::max(reps, p.spec.rep + 1);
  if (reps > 1) {
    std::printf(
        "note: %d repetitions per point in simulation give identical simulated times (nothing random, no host time "
        "enters); they run as a determinism check, and the sweep fails a point whose repetitions differ "
        "(--set reps=1 runs each point once)\n",
        reps);
  }
}

/// The simulated determinism check: the valid rows of this backend whose points differ only in rep must give the
/// same time_s. Each point of the study in such a set is a failure naming the times.
void check_simulated_reps(const SweepOptions& o, const Study& study, const fs::path& out,
                          std::vector<Failure>& failures) {
  if (o.launcher != "smpi") return;
  const auto text = read_text_file(out / "runs.csv");
  if (!text) return;
  std::stringstream lines(*text);
  std::string line;
  if (!std::getline(lines, line)) return;
  const csv::Row header = csv::split_line(line);
  const auto column = [&](const std::string& name) {
    return static_cast<std::size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  std::vector<std::size_t> key_columns;
  for (const auto& c : runs_columns()) {
    if (c.is_key()) key_columns.push_back(column(c.name));
  }
  const std::size_t rep = column("rep"), time = column("time_s"), valid = column("valid");
  if (std::any_of(key_columns.begin(), key_columns.end(), [&](std::size_t i) { return i >= header.size(); }) ||
      time >= header.size() || valid >= header.size()) {
    return;  // the store checked the header when the sweep opened it
  }
  std::map<std::string, std::set<std::string>> times;  // point key with rep 0 -> the times of its valid rows
  while (std::getline(lines, line)) {
    csv::Row fields = csv::split_line(line);
    if (fields.size() != header.size() || fields[valid] != "true") continue;
    fields[rep] = "0";
    std::vector<std::string> key;
    for (const std::size_t i : key_columns) key.push_back(fields[i]);
    times[key_of_fields(key)].insert(fields[time]);
  }
  const Backend backend = sweep_backend(o);
  for (const Point& p : study.points) {
    if (p.program != Program::kernel) continue;
    RunSpec first = p.spec;
    first.rep = 0;
    const auto it = times.find(point_key(first, backend));
    if (it != times.end() && it->second.size() > 1) {
      failures.push_back({p.index, "the simulated repetitions of this point differ (time_s " +
                                       join(std::vector<std::string>(it->second.begin(), it->second.end()), ", ") +
                                       "): the simulation is not deterministic"});
    }
  }
}

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

/// The batch-script template with its placeholders filled. Placeholders left empty leave no blank line behind.
std::string fill_template(std::string text, const std::vector<std::pair<std::string, std::string>>& values) {
  for (const auto& [key, value] : values) {
    for (std::size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + value.size())) {
      text.replace(at, key.size(), value);
    }
  }
  for (std::size_t at = text.find("\n\n"); at != std::string::npos; at = text.find("\n\n")) text.erase(at, 1);
  return text;
}

/// The tag a study's batch job carries in --comment: squeue tells by it which launches of this output are queued
/// (job names alone clash when one study is swept into two output folders).
std::string job_comment(const fs::path& out, int nprocs) {
  return "mcmclb:" + fs::absolute(out).lexically_normal().string() + ":n" + std::to_string(nprocs);
}

/// Slurm's HH:MM:SS (or D-HH:MM:SS) for a whole number of minutes.
std::string slurm_time(long minutes) {
  char text[48];
  if (minutes >= 24 * 60) {
    std::snprintf(text, sizeof text, "%ld-%02ld:%02ld:00", minutes / (24 * 60), minutes / 60 % 24, minutes % 60);
  } else {
    std::snprintf(text, sizeof text, "%02ld:%02ld:00", minutes / 60, minutes % 60);
  }
  return text;
}

// The estimate of a launch's time limit: the points' expected time (no balancing) times a safety factor, plus a
// start-up allowance per point, rounded up to whole minutes, never below a floor. Backfill schedules short
// honest limits sooner; a job that runs out of time is resubmitted and resumes where it stopped.
constexpr double kTimeSafetyFactor = 2.0;
constexpr double kStartupPerPointS = 10.0;
constexpr long kTimeFloorMin = 5;

/// The launch's time limit (job.time_limit, else the estimate) and a comment line saying which.
std::pair<std::string, std::string> time_limit(const Study& study, const std::vector<std::size_t>& indices) {
  const JobSpec& job = study.points[indices.front()].job;
  if (!job.time_limit.empty()) return {job.time_limit, "# time limit: job.time_limit"};
  double expected_s = 0;
  for (std::size_t i : indices) expected_s += expected_point_s(study.points[i]);
  const double limit_s = kTimeSafetyFactor * expected_s + kStartupPerPointS * static_cast<double>(indices.size());
  const long minutes = std::max(kTimeFloorMin, static_cast<long>(std::ceil(limit_s / 60.0)));
  char note[200];
  std::snprintf(note, sizeof note,
                "# time limit: estimated (%g x %s expected + %g s per point, at least %ld min; set job.time_limit "
                "to choose)",
                kTimeSafetyFactor, format_seconds(expected_s).c_str(), kStartupPerPointS, kTimeFloorMin);
  return {slurm_time(minutes), note};
}

/// Where the jobs' copy of the study lives: named by a hash of its text, so a queued job keeps reading the study
/// it was submitted with even after the file is edited and another launch is submitted.
fs::path snapshot_path(const fs::path& dir, const Study& study, const std::string& text) {
  std::uint64_t hash = 14695981039346656037ULL;  // FNV-1a: stable across builds, unlike std::hash
  for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ULL;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  return dir / (study.name + "-" + std::string(hex, 8) + ".yaml");
}

/// The options that make `mcmclb status` see the same study and output as the job.
std::string status_args(const SweepOptions& o, const fs::path& snapshot, const fs::path& out) {
  return shell_quote(snapshot.string()) + " --out " + shell_quote(out.string()) + overrides_args(o);
}

std::vector<std::pair<std::string, std::string>> script_values(const SweepOptions& o, const Study& study,
                                                               const fs::path& snapshot, int nprocs,
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
  const std::string launcher = launcher_with_args(job);
  const std::string launch = launch_prefix(launcher, nprocs);
  const fs::path out = output_of(o, study);
  SweepOptions in_job = o;
  in_job.study = snapshot.string();  // the jobs read the snapshot, never the study file as it is when they start
  const std::string exe = shell_quote(this_executable());
  std::string command;
  const Point& first = study.points[indices.front()];
  if (first.program == Program::commbench) {
    // commbench writes one file per rank count: a resubmitted job must not overwrite a finished one.
    const std::string file = shell_quote((out / commbench_file(nprocs)).string());
    command = "status=0\nif [ -e " + file + " ]; then\n  echo \"" + commbench_file(nprocs) +
              " already done: nothing to run\"\nelse\n  " + launch +
              program_command(in_job, study, out, indices, true) + " || status=$?\nfi";
  } else {
    command = std::string(o.force ? ""
                                  : "# --resume skips the points the output already holds as valid, so a "
                                    "resubmitted job continues.\n") +
              "status=0\n" + launch + program_command(in_job, study, out, indices, !o.force) + " || status=$?";
  }
  command += "\n# Points of this launch still without a valid result go to failures.csv, with this job's id.\n" + exe +
             " status " + status_args(o, snapshot, out) + " --launch " + std::to_string(nprocs) +
             " --record-failures \"$status\" || true\nexit \"$status\"";
  const auto [limit, limit_note] = time_limit(study, indices);
  return {{"@STUDY_PATH@", shell_quote(o.study)},
          {"@STUDY@", study.name},
          {"@SNAPSHOT@", snapshot.string()},
          {"@NPOINTS@", std::to_string(indices.size())},
          {"@NPROCS@", std::to_string(nprocs)},
          {"@JOB_NAME@", study.name + "-n" + std::to_string(nprocs)},
          {"@TIME_NOTE@", limit_note},
          {"@TIME_LIMIT@", limit},
          {"@COMMENT@", job_comment(out, nprocs)},
          {"@OUT@", shell_quote(out.string())},
          {"@SBATCH_LINES@", join(lines, "\n")},
          {"@SETUP@", join(job.setup, "\n")},
          {"@LAUNCHER@", shell_quote(launcher)},
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

/// Runs command and returns its exit status and output lines (stdout and stderr together).
std::pair<int, std::vector<std::string>> run_capturing(const std::string& command) {
  std::vector<std::string> lines;
  const int status = run_streaming(command, [&](const std::string& line) { lines.push_back(line); });
  return {status, lines};
}

struct QueuedJob {
  std::string id, state;
};

/// This study's jobs that squeue lists (pending, running, completing ...), by launch tag (job_comment).
std::map<std::string, QueuedJob> queued_jobs(const Study& study) {
  std::vector<std::string> names;
  for (const auto& [nprocs, indices] : study.launches()) names.push_back(study.name + "-n" + std::to_string(nprocs));
  const auto [status, lines] =
      run_capturing("squeue -h --name=" + shell_quote(join(names, ",")) + " --format=" + shell_quote("%i|%T|%k"));
  if (status != 0) {
    throw std::runtime_error("squeue failed (status " + std::to_string(status) +
                             "), so the jobs already queued are unknown: " + join(lines, " / "));
  }
  std::map<std::string, QueuedJob> jobs;
  for (const auto& line : lines) {
    const auto a = line.find('|');
    const auto b = a == std::string::npos ? a : line.find('|', a + 1);
    if (b == std::string::npos) continue;
    jobs[line.substr(b + 1)] = {line.substr(0, a), line.substr(a + 1, b - a - 1)};
  }
  return jobs;
}

/// sbatch's error lines without their "sbatch: error: " prefix, joined by " / " (each stays recognisable).
std::string sbatch_errors(const std::vector<std::string>& lines) {
  std::vector<std::string> errors;
  for (std::string line : lines) {
    for (const char* prefix : {"sbatch: error: ", "sbatch: "}) {
      if (line.rfind(prefix, 0) == 0) {
        line.erase(0, std::string(prefix).size());
        break;
      }
    }
    if (!line.empty()) errors.push_back(line);
  }
  return errors.empty() ? "no message" : join(errors, " / ");
}

int sweep_slurm(const SweepOptions& o, const Study& study, const std::string& study_text) {
  if (!o.dry_run && !on_path("sbatch")) {
    throw InputError(
        "--launcher slurm: sbatch is not on PATH (run on a Slurm login node, or add --dry-run to only "
        "write the scripts)");
  }
  const fs::path dir = o.jobs_dir.empty() ? fs::path("jobs") / study.name : fs::path(o.jobs_dir);
  const fs::path out = output_of(o, study);
  const std::string template_path = std::string(MCMCLB_SOURCE_DIR) + "/jobs/slurm.sbatch.in";
  const std::string text = read_file(template_path, "batch script template");
  check_jobs_dir(dir, o.jobs_dir.empty() ? "key experiment (jobs/<experiment>)" : "--jobs-dir");
  // Slurm opens --output in the output folder before the script runs; the store also checks its files now, so a
  // job never starts on a folder it would refuse. A dry run checks them the same way but writes nothing there.
  std::optional<results::ResultStore> store;
  if (!o.dry_run) store.emplace(open_output(o, study));
  std::size_t skipped = 0;
  const auto todo = points_to_run(o, study, out, recorded_in_output(o, study, store), skipped);
  const auto queued = o.dry_run ? std::map<std::string, QueuedJob>{} : queued_jobs(study);

  struct Launch {
    int nprocs;
    fs::path script;
  };
  std::vector<Launch> launches;
  const fs::path snapshot = snapshot_path(dir, study, study_text);
  for (const auto& [nprocs, all] : study.launches()) {
    const auto it = todo.find(nprocs);
    if (it == todo.end()) {
      std::printf("skip nprocs=%d: all %zu points already done in %s\n", nprocs, all.size(), out.string().c_str());
      continue;
    }
    if (const auto job = queued.find(job_comment(out, nprocs)); job != queued.end()) {
      std::printf("skip nprocs=%d: job %s is already %s for it (squeue); it resumes the missing points\n", nprocs,
                  job->second.id.c_str(), job->second.state.c_str());
      continue;
    }
    if (launches.empty()) {
      csv::write_atomically(snapshot, "# " + study.name + " as submitted from " + o.study + " at " + utc_now() +
                                          "; the batch jobs beside it read this copy.\n" + study_text);
    }
    const fs::path script = dir / (study.name + "-n" + std::to_string(nprocs) + ".sbatch");
    csv::write_atomically(script, fill_template(text, script_values(o, study, snapshot, nprocs, it->second)));
    fs::permissions(script, fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec,
                    fs::perm_options::add);
    launches.push_back({nprocs, script});
    std::printf("wrote %s (nprocs=%d, %zu of %zu points to run)\n", script.string().c_str(), nprocs, it->second.size(),
                all.size());
  }
  if (launches.empty()) {
    std::printf("sweep %s: nothing to submit (%zu points done in %s)\n", study.name.c_str(), skipped,
                out.string().c_str());
    return 0;
  }
  if (o.dry_run) {
    std::printf("dry run: %zu script(s) written, none submitted (submit each with: sbatch SCRIPT)\n", launches.size());
    if (!fs::exists(out)) {
      std::printf(
          "note: %s does not exist (a dry run creates nothing there); create it before submitting by hand: "
          "Slurm opens each job's --output file in it before the script starts\n",
          out.string().c_str());
    }
    return 0;
  }
  // Ask Slurm first whether every job could ever start, so an impossible study submits nothing at all rather
  // than leaving jobs pending forever (Reason=PartitionConfig).
  for (const auto& launch : launches) {
    const auto [status, lines] = run_capturing("sbatch --test-only " + shell_quote(launch.script.string()));
    if (status != 0) {
      throw InputError("launch nprocs=" + std::to_string(launch.nprocs) + " (" + launch.script.string() +
                       ") cannot run on this cluster: " + sbatch_errors(lines) +
                       " (sbatch --test-only; nothing was submitted)");
    }
  }
  int failed = 0;
  for (const auto& launch : launches) {
    const auto [status, lines] = run_capturing("sbatch --parsable " + shell_quote(launch.script.string()));
    if (status == 0 && !lines.empty()) {
      std::printf("submitted %s as job %s\n", launch.script.string().c_str(), lines.back().c_str());
    } else {
      ++failed;
      std::fprintf(stderr, "mcmclb: sbatch %s failed (status %d):\n", launch.script.string().c_str(), status);
      for (const auto& line : lines) std::fprintf(stderr, "  %s\n", line.c_str());
    }
  }
  std::printf("sweep %s: %zu job(s) submitted, %d failed; follow them with: mcmclb status %s%s%s\n", study.name.c_str(),
              launches.size() - static_cast<std::size_t>(failed), failed, o.study.c_str(),
              o.out.empty() ? "" : (" --out " + shell_quote(o.out)).c_str(), overrides_args(o).c_str());
  return failed > 0 ? 3 : 0;
}

/// What failures.csv lists (any reason, any time): the store keys of kernel points (a key names the backend too),
/// and the indices of points listed without a key (commbench points, rows written before the key column).
struct ListedFailures {
  std::set<std::string> keys;
  std::set<std::size_t> keyless_points;
  [[nodiscard]] bool lists(const Point& p, const Backend& backend) const {
    if (p.program == Program::kernel && keys.count(store_key(p.spec, backend)) > 0) return true;
    return keyless_points.count(p.index) > 0;
  }
};

ListedFailures failed_points(const fs::path& out) {
  ListedFailures listed;
  const auto text = read_text_file(out / "failures.csv");
  if (!text) return listed;
  std::stringstream in(*text);
  std::string line;
  if (!std::getline(in, line)) return listed;
  const csv::Row header = csv::split_line(line);
  const auto column = std::find(header.begin(), header.end(), "point");
  if (column == header.end()) throw InputError((out / "failures.csv").string() + ": no 'point' column");
  const auto at = static_cast<std::size_t>(column - header.begin());
  const auto key_at = static_cast<std::size_t>(std::find(header.begin(), header.end(), "key") - header.begin());
  while (std::getline(in, line)) {
    const csv::Row row = csv::split_line(line);
    if (key_at < row.size() && !row[key_at].empty()) {
      listed.keys.insert(row[key_at]);
    } else if (at < row.size() && !row[at].empty() && row[at].find_first_not_of("0123456789") == std::string::npos) {
      listed.keyless_points.insert(std::stoul(row[at]));
    }
  }
  return listed;
}

}  // namespace

int status_main(const SweepOptions& o) {
  const Study study = load(o, read_file(o.study, "study file"));
  const fs::path out = output_of(o, study);
  // Read only, as a dry run reads: status writes nothing in the folder, and reads an older version's files as
  // upgraded (by the store's one mapping) instead of refusing them.
  const auto recorded = recorded_in_output(o, study, std::nullopt);
  const Backend backend = sweep_backend(o);  // --launcher smpi [--platform]: the simulated results of that platform
  const auto listed_failed = failed_points(out);
  const bool recording = !o.record_failures.empty();
  std::map<std::string, QueuedJob> queued;
  std::string no_job = "no job queued";
  if (recording || !on_path("squeue")) {
    no_job = recording ? no_job : "squeue not on PATH";
  } else {
    try {  // the results are worth printing without the queue (e.g. a login node whose slurmctld is down)
      queued = queued_jobs(study);
    } catch (const std::runtime_error& e) {
      no_job = "queue unknown: " + std::string(e.what());
    }
  }
  // Done as a sweep or a resubmit sees it (valid and complete), so that status never calls done a point they
  // would run again; a valid run that lost rank rows is missing.
  const auto done = [&](const Point& p) { return done_already(p, backend, out, recorded); };
  const auto recorded_point = [&](const Point& p) -> const results::RecordedPoint* {
    const auto it = recorded.find(store_key(p.spec, backend));
    return p.program == Program::kernel && it != recorded.end() ? &it->second : nullptr;
  };
  bool found = o.launch == 0;
  std::size_t n_done = 0, n_failed = 0, n_missing = 0;
  std::vector<Failure> failures;
  for (const auto& [nprocs, indices] : study.launches()) {
    if (o.launch != 0 && nprocs != o.launch) continue;
    found = true;
    std::size_t d = 0, f = 0, m = 0;
    for (std::size_t i : indices) {
      const Point& p = study.points[i];
      if (done(p)) {
        ++d;
        continue;
      }
      const results::RecordedPoint* point = recorded_point(p);
      const bool invalid = point != nullptr && !point->any_valid();
      const bool incomplete = point != nullptr && point->any_valid();  // valid, but rank rows are missing
      if (invalid || listed_failed.lists(p, backend)) {
        ++f;
      } else {
        ++m;
      }
      if (recording) {
        const char* job = std::getenv("SLURM_JOB_ID");
        const std::string who = "slurm job " + std::string(job != nullptr ? job : "?") + ": ";
        const std::string why = invalid      ? "a run invariant failed (valid=false in runs.csv)"
                                : incomplete ? "recorded valid in runs.csv, but ranks.csv lacks some of its ranks' rows"
                                : o.record_failures == "0"
                                    ? "the launch ended without recording it"
                                    : "the launch exited with status " + o.record_failures + " before recording it";
        failures.push_back({i, who + why});
      }
    }
    n_done += d, n_failed += f, n_missing += m;
    std::string job = no_job;
    if (const auto it = queued.find(job_comment(out, nprocs)); it != queued.end()) {
      job = "job " + it->second.id + " " + it->second.state;
    }
    if (!recording) {
      std::printf("launch nprocs=%d: %zu points, %zu done, %zu failed, %zu missing; %s\n", nprocs, indices.size(), d, f,
                  m, job.c_str());
    }
  }
  if (!found) throw InputError("--launch: no point of " + o.study + " has nprocs=" + std::to_string(o.launch));
  if (recording) {
    if (!failures.empty()) {
      results::ResultStore store = open_output(o, study);
      record_failures(study, sweep_backend(o), store, failures);
    }
    return 0;
  }
  const bool complete = n_failed == 0 && n_missing == 0;
  std::printf("study %s in %s: %zu done, %zu failed, %zu missing (%s)\n", study.name.c_str(), out.string().c_str(),
              n_done, n_failed, n_missing, complete ? "complete" : "not complete");
  return complete ? 0 : 3;
}

SweepOptions parse_sweep_options(const std::vector<std::string>& args, bool sweep) {
  return parse_sweep_options(args, sweep ? Command::sweep : Command::plan);
}

SweepOptions parse_sweep_options(const std::vector<std::string>& args, Command command) {
  const bool sweep = command == Command::sweep;
  const bool status = command == Command::status;
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
    } else if (a == "--launcher" && (sweep || status)) {
      o.launcher = value(a);
      if (o.launcher != "local" && o.launcher != "slurm" && o.launcher != "smpi") {
        throw InputError("--launcher: '" + o.launcher + "' is not allowed (allowed: local, slurm, smpi)");
      }
    } else if (a == "--launch" && status) {
      const std::string v = value(a);
      try {
        std::size_t used = 0;
        o.launch = std::stoi(v, &used);
        if (used != v.size() || o.launch < 1) throw std::invalid_argument(v);
      } catch (const std::exception&) {
        throw InputError("--launch: '" + v + "' is not a rank count (a positive integer)");
      }
    } else if (a == "--record-failures" && status) {
      o.record_failures = value(a);
      if (o.record_failures.empty() || o.record_failures.find_first_not_of("0123456789") != std::string::npos) {
        throw InputError("--record-failures: '" + o.record_failures + "' is not an exit status");
      }
    } else if (a == "--platform" && (sweep || status)) {
      o.platform = value(a);
    } else if (a == "--sim-binary" && sweep) {
      o.sim_binary = value(a);
    } else if (a == "--sim-commbench" && sweep) {
      o.sim_commbench = value(a);
    } else if (a == "--smpi-flags" && sweep) {
      o.smpi_flags = value(a);
    } else if (a == "--out" && (sweep || status)) {
      o.out = value(a);
    } else if (a == "--jobs-dir" && sweep) {
      o.jobs_dir = value(a);
    } else if (a == "--force" && sweep) {
      o.force = true;
    } else if (a == "--dry-run" && sweep) {
      o.dry_run = true;
    } else if (a.rfind("--", 0) == 0) {
      throw InputError(
          "unknown flag " + a +
          (sweep    ? " (allowed: --launcher local|slurm|smpi, --out DIR, --force, --dry-run, --jobs-dir DIR, "
                      "--set key=value, --platform FILE, --sim-binary FILE, --sim-commbench FILE, --smpi-flags FILE)"
           : status ? " (allowed: --out DIR, --set key=value, --launch P, --record-failures STATUS, "
                      "--launcher local|slurm|smpi, --platform FILE)"
                    : " (allowed: --set key=value, --verbose)"));
    } else if (o.study.empty()) {
      o.study = a;
    } else {
      throw InputError("unexpected argument '" + a + "' (one STUDY.yaml)");
    }
  }
  if (o.study.empty()) throw InputError("missing STUDY.yaml (see --help)");
  if (sweep && o.launcher.empty()) throw InputError("--launcher: required (allowed: local, slurm, smpi)");
  if ((!o.platform.empty() || !o.sim_binary.empty() || !o.sim_commbench.empty() || !o.smpi_flags.empty()) &&
      o.launcher != "smpi") {
    throw InputError("--platform, --sim-binary, --sim-commbench and --smpi-flags: only with --launcher smpi");
  }
  if (o.launcher == "smpi") {  // defaults: the BG/P-like platform and build-sim/ of this checkout
    if (o.platform.empty()) o.platform = std::string(MCMCLB_SOURCE_DIR) + "/configs/platforms/bgp.xml";
    if (o.sim_binary.empty()) o.sim_binary = std::string(MCMCLB_SOURCE_DIR) + "/build-sim/mcmclb-sim";
  }
  if (!o.record_failures.empty() && o.launch == 0) throw InputError("--record-failures: needs --launch P");
  return o;
}

int plan_main(const SweepOptions& o) {
  const Study study = load(o, read_file(o.study, "study file"));
  check_launch_jobs(study);
  const auto launches = study.launches();
  std::printf("study %s (%s): %zu points in %zu launch(es), output %s\n", study.name.c_str(), o.study.c_str(),
              study.points.size(), launches.size(), study.out.string().c_str());
  for (const auto& [nprocs, indices] : launches) {
    // The command as the batch job runs it (job.launcher with its options; sweep --launcher local uses mpiexec).
    std::printf("launch nprocs=%d, %zu points: %s\n", nprocs, indices.size(),
                (launch_prefix(launcher_with_args(study.points[indices.front()].job), nprocs) +
                 program_command(o, study, study.out, indices, false))
                    .c_str());
    if (o.verbose) {
      for (std::size_t i : indices) std::printf("  %s\n", describe(study.points[i]).c_str());
    }
  }
  return 0;
}

int sweep_main(const SweepOptions& o) {
  const std::string text = read_file(o.study, "study file");
  const Study study = load(o, text);
  if (o.launcher == "slurm") {
    check_launch_jobs(study);
    return sweep_slurm(o, study, text);
  }
  // provenance.csv's launcher column (collect_provenance)
  ::setenv("MCMCLB_LAUNCHER", o.launcher == "smpi" ? "smpirun" : "mpiexec", 1);
  return sweep_local(o, study);
}

}  // namespace mcmclb
