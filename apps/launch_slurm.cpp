// --launcher slurm (apps/launchers.hpp): one batch script per rank count from jobs/slurm.sbatch.in, the jobs
// squeue already lists, and submission through sbatch (tested first with --test-only).
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "launchers.hpp"
#include "mcmclb/config.hpp"
#include "mcmclb/provenance.hpp"
#include "mcmclb/text.hpp"

namespace mcmclb::launch {

namespace {

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
  // block placement, and whole nodes of tasks_per_node ranks where it is given, so no group straddles a node.
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

}  // namespace

/// The tag a study's batch job carries in --comment: squeue tells by it which launches of this output are queued
/// (job names alone clash when one study is swept into two output folders).
std::string job_comment(const fs::path& out, int nprocs) {
  return "mcmclb:" + fs::absolute(out).lexically_normal().string() + ":n" + std::to_string(nprocs);
}

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

}  // namespace mcmclb::launch
