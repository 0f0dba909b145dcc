// SPDX-License-Identifier: BSD-3-Clause
// What every launcher shares (mcmclb/launch.hpp): the study and its output folder, the commands a launch runs, the
// points still to run, failures, and running a command with its output.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "mcmclb/balancer.hpp"
#include "mcmclb/launch.hpp"
#include "mcmclb/mpi.hpp"
#include "mcmclb/mpi_build.hpp"
#include "mcmclb/result_store.hpp"
#include "mcmclb/run_files.hpp"
#include "mcmclb/smpirun_args.hpp"
#include "mcmclb/study.hpp"
#include "mcmclb/text.hpp"

namespace mcmclb {

const csv::Row& stopping_header() {
  static const csv::Row h = {"key",        "nprocs",   "run",       "reps",
                             "median_s",   "ci_low_s", "ci_high_s", "ci_half_width_pct",
                             "target_pct", "max_reps", "reason",    "utc"};
  return h;
}

namespace launch {

namespace {

/// A refused output folder, saying where the folder came from: --out, or the study's out (results/<experiment>).
InputError output_error(const SweepOptions& o, const results::StoreError& e) {
  return InputError((o.out.empty() ? "key out (default results/<experiment>): " : "--out: ") + std::string(e.what()));
}

}  // namespace

std::string read_file(const std::string& path, const std::string& what) {
  std::string why;
  // Every file a sweep reads (the study, smpirun's flags) is small: one of more than a study's limit is refused
  // from its size, before a byte of it is read.
  auto content = read_text_file(path, &why, kMaxStudyBytes);
  if (!content) throw InputError(path + ": cannot read the " + what + ": " + why);
  return std::move(*content);
}

std::string this_executable() { return fs::canonical("/proc/self/exe").string(); }

namespace {

/// A study as a sweep runs it: a simulation's points in their order (its runs are deterministic, so the order of
/// its points cannot change a number: Study::order).
Study as_swept(const SweepOptions& o, Study study) {
  if (simulated(o)) study.order = RunOrder::blocked;
  return study;
}

/// The drawn seed of a shuffled order kept in o's overrides (load_keeping_seed).
Study keeping_seed(SweepOptions& o, Study study) {
  if (study.order == RunOrder::shuffled && study.order_seed_drawn) {
    o.overrides.push_back("order_seed=" + std::to_string(study.order_seed));
    study.order_seed_drawn = false;
  }
  return study;
}

}  // namespace

Study load(const SweepOptions& o, const std::string& text) {
  return as_swept(o, build_study(text, o.overrides, o.study, std::nullopt, catalog()));
}

Study load(const SweepOptions& o, const StudyValue& value) {
  return as_swept(o, build_study(value, o.overrides, o.study, std::nullopt, catalog()));
}

Study load_keeping_seed(SweepOptions& o, const std::string& text) { return keeping_seed(o, load(o, text)); }

Study load_keeping_seed(SweepOptions& o, const StudyValue& value) { return keeping_seed(o, load(o, value)); }

int sweep_study(const SweepOptions& o, const Study& study, const std::string& text) {
  const Launcher& launcher = launcher_named(o.launcher);
  if (!simulated(o) && std::any_of(study.points.begin(), study.points.end(),
                                   [](const Point& p) { return p.spec.placement != Placement::block; })) {
    throw InputError(
        "key placement: groups only with --launcher smpi, on a dragonfly platform (allowed with "
        "--launcher " +
        o.launcher + ": block; the site places real ranks)");
  }
  // provenance.csv's launcher column (collect_provenance)
  if (!launcher.provenance_name().empty()) {
    ::setenv("MCMCLB_LAUNCHER", std::string(launcher.provenance_name()).c_str(), 1);
  }
  return launcher.sweep(o, study, text);
}

int sweep_file(SweepOptions o) {
  (void)launcher_named(o.launcher);  // an unknown launcher is named before the study is read
  const std::string text = read_file(o.study, "study file");
  const Study study = load_keeping_seed(o, text);
  return sweep_study(o, study, text);
}

std::string not_an_option(const std::string& path) { return path.rfind('-', 0) == 0 ? "./" + path : path; }

fs::path output_of(const SweepOptions& o, const Study& s) {
  return not_an_option(o.out.empty() ? s.out.string() : o.out);
}

std::string overrides_args(const SweepOptions& o) {
  std::string args;
  for (const auto& set : o.overrides) args += " --set " + shell_quote(set);
  return args;
}

/// The backend a sweep's runs record (runs.csv's backend and platform columns): the resume key includes it. The
/// platform as every run records it (platform_identity()).
Backend sweep_backend(const SweepOptions& o) {
  if (!simulated(o)) return {};
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
  const bool simulated = launch::simulated(o);
  // One shell word per argument. smpirun splits the program's arguments again (a space in a --set value or a
  // path made two), so through it each is percent-encoded behind a marker the program decodes (smpirun_args.hpp).
  const auto word = [&](const std::string& arg) { return shell_quote(simulated ? smpirun_word(arg) : arg); };
  const std::string marker = simulated ? " " + std::string(kEncodedArgsFlag) : "";
  if (first.program == Program::commbench) {
    const fs::path program =
        simulated ? fs::absolute(sim_commbench(o)) : fs::path(this_executable()).parent_path() / "mcmclb-commbench";
    std::string command = shell_quote(program.string()) + marker + " --reps " + std::to_string(first.commbench.reps) +
                          " --rep-time " + csv::number(first.commbench.rep_time_s);
    // The names were checked against the registry at plan time; quoted anyway, as every argument here is.
    if (!first.commbench.methods.empty()) command += " --methods " + word(join(first.commbench.methods, ","));
    // --resume: the benchmarks the file already holds complete are kept and not run again. Real MPI only: which
    // methods the simulation build supports is its own (SimGrid's MPI), so a simulated file is written once, at
    // the end, and its existence is its record.
    if (resume && !simulated) command += " --resume yes";
    return command + " --out " + word((out / commbench_output(first.spec.nprocs, sweep_backend(o))).string());
  }
  const std::string program = simulated ? fs::absolute(o.sim_binary).string() : this_executable();
  std::string command = shell_quote(program) + marker + " run " + word(o.study) + " --points " +
                        word(point_list(points)) + " --out " + word(out.string()) + (resume ? " --resume" : "");
  for (const auto& set : o.overrides) command += " --set " + word(set);
  return command;
}

/// "mpiexec -n P " or "srun -n P ".
std::string launch_prefix(const std::string& launcher, int nprocs) {
  return launcher + " -n " + std::to_string(nprocs) + " ";
}

std::string mpiexec_path() {
  const char* given = std::getenv("MCMCLB_MPIEXEC");
  return given != nullptr && *given != '\0' ? std::string(given) : std::string(mpi_build::kMpiexec);
}

std::string mpiexec_prefix(int nprocs) {
  std::string words = shell_quote(mpiexec_path());
  const auto add = [&](const auto& flags) {
    for (const std::string_view flag : flags) words += " " + std::string(flag);
  };
  if (::geteuid() == 0) add(mpi_build::kRootFlags);
  // Open MPI counts a slot per core and refuses more ranks than slots; hardware_concurrency counts the CPUs this
  // process may use, which is what the ranks share.
  const unsigned cpus = std::max(1U, std::thread::hardware_concurrency());
  if (static_cast<unsigned>(nprocs) > cpus) add(mpi_build::kOversubscribeFlags);
  return launch_prefix(words, nprocs);
}

void check_mpiexec_starts(int nprocs) {
  const std::string launcher = mpiexec_path();
  const std::string what = std::string(mpi_build::kLibrary) + "'s mpiexec, which this mcmclb was built with";
  if (::access(launcher.c_str(), X_OK) != 0) {
    throw InputError("--launcher local: " + launcher + " (" + what + ") is not an executable (install it, or set " +
                     "MCMCLB_MPIEXEC to its launcher)");
  }
  std::vector<std::string> lines;
  // Ranks that live a tenth of a second, not `true`: with ranks that end at once, MPICH's Hydra sometimes dies of
  // SIGPIPE (exit status 141, no message) writing to a proxy that has already gone, 6 times in 200 launches of
  // `true` over two nodes of its fork bootstrap here, never in 100 of `sleep 0.05`.
  const int status =
      run_streaming(mpiexec_prefix(nprocs) + "sleep 0.1", [&](const std::string& l) { lines.push_back(l); });
  if (status == 0) return;
  // The launcher's own explanation, often a framed page (Open MPI), reduced to its first sentence.
  std::string reason = "exit status " + std::to_string(status);
  for (const std::string& l : lines) {
    if (std::any_of(l.begin(), l.end(), [](unsigned char c) { return std::isalpha(c) != 0; })) {
      reason = printable(l, 160);
      break;
    }
  }
  throw InputError("--launcher local: " + launcher + " (" + what + ") cannot start " + std::to_string(nprocs) +
                   " ranks: " + reason);
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

std::vector<CommbenchBenchmark> commbench_left(const Point& p, const Backend& backend, const fs::path& out) {
  const auto benchmarks = commbench_benchmarks(commbench_methods(p.commbench.methods, catalog().supported_methods()),
                                               commbench_sizes(p.spec.nprocs));
  const fs::path file = out / commbench_output(p.spec.nprocs, backend);
  if (backend.name != "mpi") return fs::exists(file) ? std::vector<CommbenchBenchmark>{} : benchmarks;
  const auto rows = read_commbench_csv(file);
  if (!rows) return benchmarks;
  const auto complete = commbench_complete(*rows, p.spec.nprocs, p.commbench.reps);
  std::vector<CommbenchBenchmark> left;
  for (const auto& b : benchmarks) {
    if (complete.count(b.key()) == 0) left.push_back(b);
  }
  return left;
}

bool done_already(const Point& p, const Backend& backend, const fs::path& out,
                  const std::map<std::string, results::RecordedPoint>& recorded) {
  // commbench writes one file per rank count and backend: done when it holds every benchmark the point runs.
  if (p.program == Program::commbench) return commbench_left(p, backend, out).empty();
  const auto at = recorded.find(store_key(p.spec, backend));
  return at != recorded.end() && at->second.done();  // valid and complete: a run that lost rank rows is rerun
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
  // The groups as the study gives them, and T_ms only where an item's cost comes from it (not a trace's replay,
  // nor compute mode's physics).
  const std::string groups =
      p.spec.groups.by == GroupsSpec::By::G ? "G=" + std::to_string(p.spec.G) : "groups " + p.spec.groups.text();
  const bool emulated_cost = p.spec.workload.model != "trace" && p.spec.work.mode != WorkMode::compute;
  return head + " (nprocs=" + std::to_string(p.spec.nprocs) + ", " + groups +
         (emulated_cost ? ", T_ms=" + csv::number(p.spec.T_ms) : std::string()) + ", " + p.spec.workload.model + ", " +
         run_label(p.spec) + ", rep " + std::to_string(p.spec.rep) + ")";
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
  if (!(s < 1e12)) return csv::number(s) + " s";  // beyond what a long holds in minutes, and infinity or NaN
  const long whole = std::lround(s);              // round once, so 179.6 s reads "3 min 00 s", not "2 min 60 s"
  char text[32];
  if (whole < 120) {
    std::snprintf(text, sizeof text, "%ld s", whole);
  } else {
    std::snprintf(text, sizeof text, "%ld min %02ld s", whole / 60, whole % 60);
  }
  return text;
}

/// The points of the study still to run, per rank count (all of them with --force); counts the skipped ones.
std::map<int, std::vector<std::size_t>> points_to_run(const SweepOptions& o, const Study& study, const fs::path& out,
                                                      const std::map<std::string, results::RecordedPoint>& valid,
                                                      std::size_t& skipped) {
  std::map<int, std::vector<std::size_t>> todo;
  skipped = 0;
  for (const auto& [nprocs, indices] : study.launches()) {  // each in the order its launch runs them
    for (const std::size_t i : indices) {
      if (!o.force && done_already(study.points[i], sweep_backend(o), out, valid)) {
        ++skipped;
      } else {
        todo[nprocs].push_back(i);
      }
    }
  }
  return todo;
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
                    p.program == Program::commbench ? std::string() : store_key(p.spec, backend), f.reached.simulated_s,
                    f.reached.items, f.reached.host_s});
  }
  store.record_failures(rows);
  std::fprintf(stderr, "mcmclb: %zu point(s) failed (recorded in %s)\n", failures.size(),
               (store.dir() / "failures.csv").string().c_str());
}

/// Runs command and returns its exit status and output lines (stdout and stderr together).
std::pair<int, std::vector<std::string>> run_capturing(const std::string& command) {
  std::vector<std::string> lines;
  const int status = run_streaming(command, [&](const std::string& line) { lines.push_back(line); });
  return {status, lines};
}

}  // namespace launch

}  // namespace mcmclb
