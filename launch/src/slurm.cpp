// SPDX-License-Identifier: BSD-3-Clause
// --launcher slurm (mcmclb/launch.hpp): one batch script per rank count from jobs/slurm.sbatch.in (built in), the jobs
// squeue already lists, submission through sbatch (tested first with --test-only, and against the partition's
// nodes when some are out of service), and how a finished job ended (sacct, else scontrol).
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "mcmclb/balancer.hpp"
#include "mcmclb/config.hpp"
#include "mcmclb/launch.hpp"
#include "mcmclb/provenance.hpp"
#include "mcmclb/text.hpp"
#include "slurm_template.hpp"

namespace mcmclb::launch {

namespace {

/// The batch-script template with its placeholders filled, in one pass: a value is never searched for
/// placeholders again (a path holding "@COMMAND@" stays that text). Placeholders left empty leave no blank line.
std::string fill_template(const std::string& text, const std::vector<std::pair<std::string, std::string>>& values) {
  std::string filled;
  std::size_t at = 0;
  while (at < text.size()) {
    const auto key = std::find_if(values.begin(), values.end(),
                                  [&](const auto& kv) { return text.compare(at, kv.first.size(), kv.first) == 0; });
    if (text[at] == '@' && key != values.end()) {
      filled += key->second;
      at += key->first.size();
    } else {
      filled += text[at++];
    }
  }
  for (std::size_t i = filled.find("\n\n"); i != std::string::npos; i = filled.find("\n\n", i)) filled.erase(i, 1);
  return filled;
}

}  // namespace

std::string slurm_time(long minutes) {
  char text[48];
  if (minutes >= 24 * 60) {
    std::snprintf(text, sizeof text, "%ld-%02ld:%02ld:00", minutes / (24 * 60), minutes / 60 % 24, minutes % 60);
  } else {
    std::snprintf(text, sizeof text, "%02ld:%02ld:00", minutes / 60, minutes % 60);
  }
  return text;
}

namespace {

/// Minutes of a Slurm time as sinfo prints it (MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS, seconds rounded
/// up); nothing for "infinite", "n/a" or anything else.
std::optional<long> slurm_minutes(const std::string& text) {
  long days = 0;
  std::string rest = text;
  if (const auto dash = text.find('-'); dash != std::string::npos) {
    if (dash == 0 || dash > 4 || text.find_first_not_of("0123456789") != dash) return std::nullopt;
    days = std::stol(text.substr(0, dash));
    rest = text.substr(dash + 1);
  }
  std::vector<long> parts;
  std::size_t at = 0;
  while (true) {
    const auto colon = rest.find(':', at);
    const std::string part = rest.substr(at, colon == std::string::npos ? std::string::npos : colon - at);
    if (part.empty() || part.size() > 6 || part.find_first_not_of("0123456789") != std::string::npos) {
      return std::nullopt;
    }
    parts.push_back(std::stol(part));
    if (colon == std::string::npos) break;
    at = colon + 1;
  }
  if (parts.size() > 3) return std::nullopt;
  long minutes = 0;
  if (text.find('-') != std::string::npos) {  // D-HH[:MM[:SS]]
    minutes = parts[0] * 60 + (parts.size() > 1 ? parts[1] : 0) + (parts.size() > 2 && parts[2] > 0 ? 1 : 0);
  } else if (parts.size() == 3) {  // HH:MM:SS
    minutes = parts[0] * 60 + parts[1] + (parts[2] > 0 ? 1 : 0);
  } else {  // MM or MM:SS
    minutes = parts[0] + (parts.size() > 1 && parts[1] > 0 ? 1 : 0);
  }
  return days * 24 * 60 + minutes;
}

// The estimate of a launch's time limit: the points' expected time (no balancing) times a safety factor, plus a
// start-up allowance per point, rounded up to whole minutes, never below a floor and never above the partition's
// MaxTime (sinfo), or kTimeCapMin where that is unknown or infinite. Backfill schedules short honest limits
// sooner; a job that runs out of time is resubmitted and resumes where it stopped.
constexpr double kTimeSafetyFactor = 2.0;
constexpr double kStartupPerPointS = 10.0;
constexpr long kTimeFloorMin = 5;
constexpr long kTimeCapMin = 7L * 24 * 60;  // 7 days: docs/guide/slurm.md

}  // namespace

int slurm_wait_s() {
  const char* text = std::getenv("MCMCLB_SLURM_WAIT_S");
  if (text == nullptr || *text == '\0') return 3;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  return *end == '\0' && value >= 1 && value <= 3600 ? static_cast<int>(value) : 3;
}

std::pair<int, std::vector<std::string>> ask_slurm(const std::string& command, bool bounded) {
  if (!bounded || !on_path("timeout")) return run_capturing(command);
  const int wait_s = slurm_wait_s();
  auto answer = run_capturing("timeout -k 1 " + std::to_string(wait_s) + " " + command);
  if (answer.first == 124 || answer.first == 128 + SIGKILL) {
    const std::string program = command.substr(0, command.find(' '));
    answer.second = {program + " did not answer within " + std::to_string(wait_s) +
                     " s (is a Slurm controller reachable? MCMCLB_SLURM_WAIT_S sets the wait)"};
  }
  return answer;
}

namespace {

/// The partition's MaxTime in minutes (job.partition, else the cluster's default partition) and how it was
/// found; nothing when sinfo is missing, does not answer, or says infinite or something unreadable. bounded: a dry
/// run, which only shows scripts, waits at most slurm_wait_s() for the answer.
std::pair<std::optional<long>, std::string> partition_max_time(const std::string& partition, bool bounded) {
  if (!on_path("sinfo")) return {std::nullopt, "sinfo not on PATH"};
  static std::string no_answer;  // a Slurm that did not answer once is not asked again (once per sweep, not script)
  if (bounded && !no_answer.empty()) return {std::nullopt, no_answer};
  // partition names were checked to be letters, digits and _ - . , + @ : (study keys); quoted anyway.
  const auto [status, lines] =
      ask_slurm("sinfo -h -o '%P %l'" + (partition.empty() ? std::string() : " -p " + shell_quote(partition)), bounded);
  if (status != 0 && bounded && (status == 124 || status == 128 + SIGKILL)) {
    no_answer = lines.front();
    std::printf("note: %s; the scripts' time limits are not capped by the partition's MaxTime\n", no_answer.c_str());
    return {std::nullopt, no_answer};
  }
  if (status != 0) return {std::nullopt, "sinfo failed"};
  for (const auto& line : lines) {
    const auto space = line.find(' ');
    if (space == std::string::npos) continue;
    const std::string name = line.substr(0, space);
    if (partition.empty() ? name.empty() || name.back() != '*' : name != partition && name != partition + "*") {
      continue;
    }
    const std::string shown = name.back() == '*' ? name.substr(0, name.size() - 1) : name;
    const auto minutes = slurm_minutes(line.substr(space + 1));
    if (!minutes) return {std::nullopt, "partition " + shown + "'s MaxTime is " + line.substr(space + 1)};
    return {minutes, "partition " + shown + "'s MaxTime, sinfo"};
  }
  return {std::nullopt, "partition unknown to sinfo"};
}

/// The launch's time limit (job.time_limit, else the estimate) and a comment line saying which.
std::pair<std::string, std::string> time_limit(const Study& study, const std::vector<std::size_t>& indices,
                                               bool dry_run) {
  const JobSpec& job = study.points[indices.front()].job;
  if (!job.time_limit.empty()) return {job.time_limit, "# time limit: job.time_limit"};
  double expected_s = 0;
  const Catalog methods = catalog();  // commbench's default methods: those this build supports
  for (std::size_t i : indices) expected_s += expected_point_s(study.points[i], methods);
  const double limit_s = kTimeSafetyFactor * expected_s + kStartupPerPointS * static_cast<double>(indices.size());
  const auto [partition_max, source] = partition_max_time(job.partition, dry_run);
  const long cap = partition_max ? std::max(*partition_max, 1L) : kTimeCapMin;
  const std::string cap_note = partition_max ? slurm_time(cap) + " (" + source + ")"
                                             : slurm_time(cap) + " (the documented maximum; " + source + ")";
  // In doubles until capped: a workload of 2^31 ranks overflows any integer count of seconds.
  const double wanted_min = std::ceil(limit_s / 60.0);
  const bool capped = !(wanted_min <= static_cast<double>(cap));  // NaN is capped too
  const long minutes = capped ? cap : std::min(cap, std::max(kTimeFloorMin, static_cast<long>(wanted_min)));
  char note[400];
  std::snprintf(note, sizeof note,
                "# time limit: estimated (%g x %s expected + %g s per point, at least %ld min, at most %s)%s; set "
                "job.time_limit to choose",
                kTimeSafetyFactor, format_seconds(expected_s).c_str(), kStartupPerPointS, kTimeFloorMin,
                cap_note.c_str(), capped ? ": capped, the job resumes where it stopped when resubmitted" : "");
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

/// text as it reaches a batch script, where a line break or another control character would end a comment or
/// directive line and start a directive or command of its own: refused, naming what the text is.
const std::string& one_line(const std::string& what, const std::string& text) {
  if (std::any_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; })) {
    throw InputError(what + ": '" + printable(text, 200) +
                     "' holds a line break or control character, which cannot reach a batch script (allowed: one "
                     "line of printable text)");
  }
  return text;
}

/// A path as one shell word of the script: on one line, single-quoted where needed (output_of() and the options
/// already start a relative path that begins with '-' with ./, so no command takes it for an option).
std::string path_word(const std::string& what, const fs::path& path) {
  return shell_quote(one_line(what, path.string()));
}

/// A value of an #SBATCH line: sbatch reads the directive up to the first blank outside double quotes and has no
/// escape for a double quote, so one is refused and a value with blanks or other signs is double-quoted.
std::string sbatch_value(const std::string& what, const std::string& value) {
  one_line(what, value);
  if (value.find_first_of("\"\\") != std::string::npos) {
    throw InputError(what + ": '" + printable(value, 200) +
                     "' holds a double quote or a backslash, which an #SBATCH line cannot carry (allowed: any other "
                     "printable text)");
  }
  const bool plain =
      !value.empty() &&
      value.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=,:@+%") ==
          std::string::npos;
  return plain ? value : "\"" + value + "\"";
}

/// A file-name pattern of #SBATCH --output: Slurm expands %j, %x, ... in it, so a % of the folder's own name is
/// written %% (Slurm's literal percent sign).
std::string sbatch_pattern(const std::string& what, const std::string& folder, const std::string& file_pattern) {
  std::string escaped;
  for (char c : folder) escaped += c == '%' ? std::string("%%") : std::string(1, c);
  return sbatch_value(what, escaped + "/" + file_pattern);
}

/// The launcher and its options as shell words, each quoted (job.launcher_args was checked to be plain words).
std::string launcher_words(const JobSpec& job) {
  std::vector<std::string> words;
  std::stringstream in(launcher_with_args(job));
  for (std::string word; in >> word;) words.push_back(shell_quote(word));
  return join(words, " ");
}

/// The options that make `mcmclb status` see the same study and output as the job.
std::string status_args(const SweepOptions& o, const fs::path& snapshot, const fs::path& out) {
  return path_word("--jobs-dir", snapshot) + " --out " + path_word("--out", out) + overrides_args(o);
}

/// job.setup as the script runs it: before the strict mode (module scripts often read unset variables), each line
/// as written and then its exit status checked. The first line that fails, or ends the script itself (exit 3), ends
/// the job before the launch, and an EXIT trap records the launch's points in failures.csv naming that line and its
/// status (record: the `mcmclb status ... --record-failures` command), so the failure reaches `mcmclb status`
/// instead of the launch running without its environment.
std::string setup_block(const std::vector<std::string>& setup, const std::string& record) {
  if (setup.empty()) return "";
  std::string block =
      "# job.setup (modules, environment), before the strict mode: module scripts often read unset variables. The\n"
      "# first line that fails or exits ends the job before the launch, recorded in failures.csv with that line.\n"
      "mcmclb_setup_exit() {\n"
      "  local status=$?\n  " +
      record +
      " \"$status\" --failed-setup \"$mcmclb_setup\" || true\n"
      "  [ \"$status\" -ne 0 ] || status=1  # a setup line that ends the script (exit 0) leaves the launch not run\n"
      "  exit \"$status\"\n}\ntrap mcmclb_setup_exit EXIT\n";
  for (const auto& line : setup) {
    block += "mcmclb_setup=" + shell_quote(one_line("key job.setup", line)) + "\n" + line +
             "\nmcmclb_status=$?; [ \"$mcmclb_status\" -eq 0 ] || exit \"$mcmclb_status\"\n";
  }
  return block + "trap - EXIT";
}

std::vector<std::pair<std::string, std::string>> script_values(const SweepOptions& o, const Study& study,
                                                               const fs::path& snapshot, int nprocs,
                                                               const std::vector<std::size_t>& indices) {
  const JobSpec& job = study.points[indices.front()].job;
  std::vector<std::string> lines;
  if (!job.partition.empty())
    lines.push_back("#SBATCH --partition=" + sbatch_value("key job.partition", job.partition));
  if (!job.account.empty()) lines.push_back("#SBATCH --account=" + sbatch_value("key job.account", job.account));
  // tasks_per_node fixes the node count too: said outright, so the script shows the job's shape.
  if (job.tasks_per_node > 0) {
    lines.push_back("#SBATCH --nodes=" + std::to_string((nprocs + job.tasks_per_node - 1) / job.tasks_per_node));
    lines.push_back("#SBATCH --ntasks-per-node=" + std::to_string(job.tasks_per_node));
  }
  // groups.by: node forms groups from the ranks each node holds, which must be one contiguous range per node:
  // block placement (and whole nodes of tasks_per_node ranks where it is given), so no group straddles a node.
  const bool by_node = std::any_of(indices.begin(), indices.end(), [&](std::size_t i) {
    return study.points[i].spec.groups.by == GroupsSpec::By::node;
  });
  if (by_node) lines.emplace_back("#SBATCH --distribution=block");
  for (const auto& extra : job.extra) lines.push_back(one_line("key job.extra", extra));
  const std::string exe = path_word("this program's path", this_executable());
  const std::string record = exe + " status " + status_args(o, snapshot, output_of(o, study)) + " --launch " +
                             std::to_string(nprocs) + " --record-failures";
  const std::string setup = setup_block(job.setup, record);
  const std::string launcher = launcher_words(job);
  const std::string launch = launch_prefix(launcher, nprocs);
  const fs::path out = output_of(o, study);
  SweepOptions in_job = o;
  in_job.study = snapshot.string();  // the jobs read the snapshot, never the study file as it is when they start
  std::string command;
  const Point& first = study.points[indices.front()];
  if (first.program == Program::commbench) {
    // commbench writes one file per rank count; a resubmitted job keeps the benchmarks it holds and runs the rest.
    command = "# --resume yes keeps the benchmarks the file holds complete and runs only the others.\nstatus=0\n" +
              launch + program_command(in_job, study, out, indices, !o.force) + " || status=$?";
  } else {
    command = std::string(o.force ? ""
                                  : "# --resume skips the points the output already holds as valid, so a "
                                    "resubmitted job continues.\n") +
              "status=0\n" + launch + program_command(in_job, study, out, indices, !o.force) + " || status=$?";
  }
  command += "\n# Points of this launch still without a valid result go to failures.csv, with this job's id.\n" +
             record + " \"$status\" || true\nexit \"$status\"";
  const auto [limit, limit_note] = time_limit(study, indices, o.dry_run);
  const std::string workdir = fs::current_path().string();
  return {{"@STUDY_PATH@", path_word("STUDY.yaml", o.study)},
          {"@STUDY@", study.name},
          {"@SNAPSHOT@", path_word("--jobs-dir", snapshot)},
          {"@NPOINTS@", std::to_string(indices.size())},
          {"@NPROCS@", std::to_string(nprocs)},
          {"@JOB_NAME@", sbatch_value("key experiment", job_name(study, nprocs))},
          {"@TIME_NOTE@", limit_note},
          {"@TIME_LIMIT@", limit},
          {"@COMMENT@", sbatch_value("--out", job_comment(study, out, nprocs))},
          {"@OUT@", path_word("--out", out)},
          {"@OUTPUT_PATTERN@", sbatch_pattern("--out", out.string(), "slurm-%x-%j.out")},
          {"@SBATCH_LINES@", join(lines, "\n")},
          {"@SETUP@", setup},
          {"@LAUNCHER@", shell_quote(launcher_with_args(job))},
          {"@WORKDIR_SBATCH@", sbatch_value("the working folder", workdir)},
          {"@WORKDIR@", path_word("the working folder", workdir)},
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

/// A node of a partition as sinfo lists it.
struct PartitionNode {
  std::string name, state, reason;
  long cpus = 0;
};

/// The nodes of job.partition, else of the cluster's default partition, whatever their state; empty when sinfo
/// is missing or fails.
std::vector<PartitionNode> partition_nodes(const std::string& partition) {
  if (!on_path("sinfo")) return {};
  const auto [status, lines] = run_capturing("sinfo -h -N -o " + shell_quote("%P|%N|%c|%T|%E"));
  if (status != 0) return {};
  std::vector<PartitionNode> nodes;
  for (const auto& line : lines) {
    std::vector<std::string> fields;
    std::size_t at = 0;
    for (int i = 0; i < 4; ++i) {  // the reason, last, may hold '|' itself
      const auto bar = line.find('|', at);
      if (bar == std::string::npos) break;
      fields.push_back(line.substr(at, bar - at));
      at = bar + 1;
    }
    if (fields.size() != 4 || fields[2].empty() || fields[2].size() > 9 ||
        fields[2].find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    const std::string& name = fields[0];
    if (partition.empty() ? name.empty() || name.back() != '*' : name != partition && name != partition + "*") {
      continue;
    }
    nodes.push_back({fields[1], fields[3], line.substr(at), std::stol(fields[2])});
  }
  return nodes;
}

/// Whether Slurm schedules onto a node in this state now (sinfo %T); drained, draining, down, not responding (a
/// trailing *), in maintenance, reserved ... are out of service until an administrator or the node brings them back.
bool in_service(const std::string& state) {
  return state == "idle" || state == "mixed" || state == "allocated" || state == "completing" || state == "planned";
}

/// sbatch --test-only answers for the nodes in service now, so it refuses a job that would start once a drained
/// or down node returns. For a refused launch: why it only waits ("node vm is drained (test)"), when nodes of its
/// partition are out of service and the request fits the partition's nodes as configured (CPUs, nodes, MaxTime);
/// nothing when it never fits, with `never` naming the limit it exceeds where that is known.
std::optional<std::string> waits_for_nodes(const Study& study, const std::vector<std::size_t>& indices, int nprocs,
                                           std::string& never) {
  const JobSpec& job = study.points[indices.front()].job;
  const auto nodes = partition_nodes(job.partition);
  std::vector<std::string> out_of_service;
  long cpus = 0, widest = 0;
  for (const auto& node : nodes) {
    cpus += node.cpus;
    widest = std::max(widest, node.cpus);
    if (!in_service(node.state)) {
      out_of_service.push_back(node.name + " is " + node.state +
                               (node.reason.empty() || node.reason == "none" ? "" : " (" + node.reason + ")"));
    }
  }
  if (out_of_service.empty()) return std::nullopt;  // every node in service: --test-only's answer stands
  const std::string partition = job.partition.empty() ? "the default partition" : "partition " + job.partition;
  const std::string counted =
      std::to_string(nodes.size()) + " node(s), " + std::to_string(out_of_service.size()) + " out of service";
  if (nprocs > cpus) {
    never = "it needs " + std::to_string(nprocs) + " CPUs and " + partition + " has " + std::to_string(cpus) +
            " in all (" + counted + ")";
    return std::nullopt;
  }
  if (job.tasks_per_node > widest) {
    never = "job.tasks_per_node " + std::to_string(job.tasks_per_node) + " exceeds the " + std::to_string(widest) +
            " CPUs of the widest node of " + partition;
    return std::nullopt;
  }
  if (job.tasks_per_node > 0 &&
      static_cast<std::size_t>((nprocs + job.tasks_per_node - 1) / job.tasks_per_node) > nodes.size()) {
    never = "it needs " + std::to_string((nprocs + job.tasks_per_node - 1) / job.tasks_per_node) + " nodes of " +
            std::to_string(job.tasks_per_node) + " tasks and " + partition + " has " + std::to_string(nodes.size());
    return std::nullopt;
  }
  if (!job.time_limit.empty()) {
    const auto wanted = slurm_minutes(job.time_limit);
    const auto [max_min, source] = partition_max_time(job.partition, false);
    if (wanted && max_min && *wanted > *max_min) {
      never = "job.time_limit " + job.time_limit + " exceeds " + slurm_time(*max_min) + " (" + source + ")";
      return std::nullopt;
    }
  }
  return "node " + join(out_of_service, ", node ") + " in " + partition;
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

/// The folder as one name whatever way it is written (relative, a trailing slash, through a symbolic link): the
/// existing part resolved, the rest normalised.
fs::path canonical_folder(const fs::path& out) {
  std::error_code ec;
  fs::path folder = fs::weakly_canonical(fs::absolute(out), ec);
  if (ec) folder = fs::absolute(out).lexically_normal();
  if (!folder.has_filename() && folder.has_parent_path()) folder = folder.parent_path();
  return folder;
}

/// The tag a study's batch job carries in --comment: squeue tells by it which launches are queued. It names the
/// output folder (canonical) and a hash of what the launch runs (every point's store key, commbench's settings),
/// so another study into the same folder, or one study into two folders, never takes a queued job for its own.
std::string job_comment(const Study& study, const fs::path& out, int nprocs) {
  std::uint64_t hash = 14695981039346656037ULL;  // FNV-1a: stable across builds, unlike std::hash
  const auto add = [&](const std::string& text) {
    for (unsigned char c : text + "\n") hash = (hash ^ c) * 1099511628211ULL;
  };
  auto launches = study.launches();
  if (const auto it = launches.find(nprocs); it != launches.end()) {
    std::sort(it->second.begin(), it->second.end());  // what the launch runs, whatever the order (key order)
    for (std::size_t i : it->second) {
      const Point& p = study.points[i];
      add(p.program == Program::commbench
              ? "commbench " + p.spec.experiment + " " + std::to_string(p.commbench.reps) + " " +
                    csv::number(p.commbench.rep_time_s) + " " + join(p.commbench.methods, ",")
              : store_key(p.spec, Backend{}));
    }
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  return "mcmclb:" + canonical_folder(out).string() + ":n" + std::to_string(nprocs) + ":" + hex;
}

std::string job_name(const Study& study, int nprocs) { return study.name + "-n" + std::to_string(nprocs); }

std::string last_job(const fs::path& out, const std::string& name) {
  // The jobs' --output pattern is slurm-%x-%j.out in the output folder: the file exists once the job started.
  const std::string prefix = "slurm-" + name + "-";
  unsigned long long newest = 0;
  std::error_code ec;
  for (fs::directory_iterator it(out, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string file = it->path().filename().string();
    if (file.rfind(prefix, 0) != 0 || file.size() <= prefix.size() + 4 || !file.ends_with(".out")) continue;
    const std::string id = file.substr(prefix.size(), file.size() - prefix.size() - 4);
    if (id.size() > 18 || id.find_first_not_of("0123456789") != std::string::npos) continue;
    newest = std::max(newest, std::stoull(id));
  }
  return newest == 0 ? std::string() : std::to_string(newest);
}

JobEnd job_end(const std::string& id) {
  // Accounting keeps every job; without it (AccountingStorageType=accounting_storage/none) sacct fails, and
  // slurmctld still knows a finished job for MinJobAge (300 s by default) after it ends.
  if (on_path("sacct")) {
    const auto [status, lines] = run_capturing("sacct -n -X -P -o State,ExitCode -j " + shell_quote(id));
    if (status == 0 && !lines.empty() && lines.front().find('|') != std::string::npos) {
      const auto bar = lines.front().find('|');
      std::string state = lines.front().substr(0, bar);
      state = state.substr(0, state.find(' '));  // "CANCELLED by 0"
      return {state, lines.front().substr(bar + 1), "sacct"};
    }
  }
  if (on_path("scontrol")) {
    const auto [status, lines] = run_capturing("scontrol show job --oneliner " + shell_quote(id));
    if (status == 0 && !lines.empty()) {
      JobEnd end{"", "", "scontrol"};
      std::stringstream fields(lines.front());
      for (std::string field; fields >> field;) {
        if (field.rfind("JobState=", 0) == 0) end.state = field.substr(9);
        if (field.rfind("ExitCode=", 0) == 0) end.exit_code = field.substr(9);
      }
      if (!end.state.empty()) return end;
    }
  }
  return {};
}

std::string describe_job_end(const std::string& id, const JobEnd& end, const std::string& recorded) {
  // What the job recorded itself (failures.csv) says most; Slurm's end state says the rest.
  static const std::map<std::string, std::string> kPhrases = {
      {"TIMEOUT", "hit its time limit"}, {"FAILED", "failed"},
      {"CANCELLED", "was cancelled"},    {"COMPLETED", "completed"},
      {"NODE_FAIL", "lost a node"},      {"OUT_OF_MEMORY", "ran out of memory"},
      {"PREEMPTED", "was preempted"},    {"DEADLINE", "missed its deadline"}};
  static const std::set<std::string> kNotEnded = {"PENDING",   "CONFIGURING", "RUNNING",  "COMPLETING",
                                                  "SUSPENDED", "REQUEUED",    "RESIZING", "STOPPED"};
  std::string what;
  if (kNotEnded.count(end.state) > 0) {  // queued under another tag: another version of the study, or --out
    what = "is " + end.state + ", but not for this study and output (its --comment differs)";
  } else if (recorded.rfind("failed in setup", 0) == 0) {
    what = recorded;
  } else if (end.state.empty()) {
    what = "ended" + (recorded.empty() ? std::string() : ": " + recorded);
  } else {
    const auto phrase = kPhrases.find(end.state);
    what = (phrase != kPhrases.end() ? phrase->second : "ended " + end.state) +
           (recorded.empty() ? std::string() : ": " + recorded);
  }
  const std::string slurm =
      end.state.empty()
          ? "its end state is unknown: Slurm has no accounting here (sacct) and no longer lists the job (scontrol)"
          : end.state + (end.exit_code.empty() ? "" : ", exit code " + end.exit_code) + "; " + end.source;
  return "job " + id + " " + what + " (" + slurm + ")";
}

/// This user's jobs of the study that squeue lists (pending, running, completing ...), by launch tag
/// (job_comment): another user's job of the same name and comment is not one of them.
std::map<std::string, QueuedJob> queued_jobs(const Study& study, bool bounded) {
  std::vector<std::string> names;
  for (const auto& [nprocs, indices] : study.launches()) names.push_back(job_name(study, nprocs));
  const auto [status, lines] = ask_slurm(
      "squeue --me -h --name=" + shell_quote(join(names, ",")) + " --format=" + shell_quote("%i|%T|%k"), bounded);
  if (status != 0 && bounded && (status == 124 || status == 128 + SIGKILL)) {
    throw std::runtime_error(lines.front() + ", so the jobs already queued are unknown");
  }
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

namespace {

/// An exclusive lock on a file of the output folder, held while one sweep asks squeue and submits: two sweeps
/// started at once would otherwise both find no job queued and both submit.
class SubmitLock {
 public:
  explicit SubmitLock(const fs::path& file) : fd_(::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (fd_ < 0 || ::flock(fd_, LOCK_EX) != 0) {
      throw std::runtime_error("cannot lock " + file.string() + " to submit: " + std::strerror(errno));
    }
  }
  SubmitLock(const SubmitLock&) = delete;
  SubmitLock& operator=(const SubmitLock&) = delete;
  ~SubmitLock() {
    if (fd_ >= 0) ::close(fd_);
  }

 private:
  int fd_;
};

}  // namespace

int sweep_slurm(const SweepOptions& o, const Study& study, const std::string& study_text) {
  if (!o.dry_run && !on_path("sbatch")) {
    throw InputError(
        "--launcher slurm: sbatch is not on PATH (run on a Slurm login node, or add --dry-run to only "
        "write the scripts)");
  }
  const fs::path dir = o.jobs_dir.empty() ? fs::path("jobs") / study.name : fs::path(o.jobs_dir);
  const fs::path out = output_of(o, study);
  const std::string jobs_dir_what = o.jobs_dir.empty() ? "key experiment (jobs/<experiment>)" : "--jobs-dir";
  one_line(jobs_dir_what, dir.string());
  one_line("--out", out.string());
  one_line("STUDY.yaml", o.study);
  // Each setup line must be a whole shell command: an open quote would take the lines after it (the launch, the
  // failure records) into one string. Checked by bash itself, which parses without running (-n).
  for (const auto& [nprocs, indices] : study.launches()) {
    for (const auto& line : study.points[indices.front()].job.setup) {
      const auto [status, lines] = run_capturing("bash -n -c " + shell_quote(one_line("key job.setup", line)));
      if (status != 0) {
        throw InputError(
            "key job.setup: '" + printable(line) + "' is not a complete shell command (bash -n: " +
            printable(lines.empty() ? std::string("status ") + std::to_string(status) : lines.back(), 120) + ")");
      }
    }
  }
  check_jobs_dir(dir, jobs_dir_what);
  // Slurm opens --output in the output folder before the script runs; the store also checks its files now, so a
  // job never starts on a folder it would refuse. A dry run checks them the same way but writes nothing there.
  std::optional<results::ResultStore> store;
  if (!o.dry_run) store.emplace(open_output(o, study));
  std::size_t skipped = 0;
  const auto todo = points_to_run(o, study, out, recorded_in_output(o, study, store), skipped);
  // From the queue check to the last submission, one sweep of this folder at a time.
  std::optional<SubmitLock> lock;
  if (!o.dry_run) lock.emplace(out / ".slurm-submit.lock");
  const auto queued = o.dry_run ? std::map<std::string, QueuedJob>{} : queued_jobs(study, false);

  struct Launch {
    int nprocs;
    fs::path script;
    std::string text;
    std::size_t points, all;
    std::string launcher;  // what starts the ranks, as the script runs it
  };
  std::vector<Launch> launches;
  std::vector<std::string> already_queued;  // job ids
  const fs::path snapshot = snapshot_path(dir, study, study_text);
  // Every script is filled before anything is written, so a value refused in one launch leaves nothing behind.
  for (const auto& [nprocs, all] : study.launches()) {
    const auto it = todo.find(nprocs);
    if (it == todo.end()) {
      std::printf("skip nprocs=%d: all %zu points already done in %s\n", nprocs, all.size(),
                  printable(out.string(), 200).c_str());
      continue;
    }
    if (const auto job = queued.find(job_comment(study, out, nprocs)); job != queued.end()) {
      std::printf("skip nprocs=%d: job %s is already %s for it (squeue); it resumes the missing points\n", nprocs,
                  job->second.id.c_str(), job->second.state.c_str());
      already_queued.push_back(job->second.id);
      continue;
    }
    const fs::path script = dir / (job_name(study, nprocs) + ".sbatch");
    launches.push_back({nprocs, script,
                        fill_template(kSlurmTemplate, script_values(o, study, snapshot, nprocs, it->second)),
                        it->second.size(), all.size(),
                        launcher_with_args(study.points[it->second.front()].job) + " -n " + std::to_string(nprocs)});
  }
  if (!launches.empty()) {
    csv::write_atomically(snapshot, "# " + study.name + " as submitted from " + o.study + " at " + utc_now() +
                                        "; the batch jobs beside it read this copy.\n" + study_text);
  }
  for (const auto& launch : launches) {
    csv::write_atomically(launch.script, launch.text);
    fs::permissions(launch.script, fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec,
                    fs::perm_options::add);
    std::printf("wrote %s (nprocs=%d, %zu of %zu points to run; its ranks start with: %s)\n",
                launch.script.string().c_str(), launch.nprocs, launch.points, launch.all, launch.launcher.c_str());
  }
  const std::string follow = "mcmclb status " + shell_quote(o.study) +
                             (o.out.empty() ? "" : " --out " + shell_quote(o.out)) + overrides_args(o);
  if (launches.empty()) {
    if (already_queued.empty()) {
      std::printf("sweep %s: nothing to submit: all %zu points are done in %s\n", study.name.c_str(), skipped,
                  out.string().c_str());
    } else {
      std::printf(
          "sweep %s: nothing to submit: %zu points done, the others are in job(s) %s, already queued; "
          "follow them with: %s\n",
          study.name.c_str(), skipped, join(already_queued, ", ").c_str(), follow.c_str());
    }
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
  // than leaving jobs pending forever (Reason=PartitionConfig). A job refused only because nodes are out of
  // service (drained, down) is submitted: it waits for them, as sbatch itself would let it.
  std::map<int, std::string> waiting;
  for (const auto& launch : launches) {
    const auto [status, lines] = run_capturing("sbatch --test-only " + shell_quote(launch.script.string()));
    if (status == 0) continue;
    std::string never;
    if (const auto why = waits_for_nodes(study, todo.at(launch.nprocs), launch.nprocs, never)) {
      waiting[launch.nprocs] = *why;
      continue;
    }
    throw InputError("launch nprocs=" + std::to_string(launch.nprocs) + " (" + launch.script.string() +
                     ") cannot run on this cluster: " + (never.empty() ? "" : never + "; ") + sbatch_errors(lines) +
                     " (sbatch --test-only; nothing was submitted)");
  }
  std::size_t submitted = 0;
  for (const auto& launch : launches) {
    const auto [status, lines] = run_capturing("sbatch --parsable " + shell_quote(launch.script.string()));
    // --parsable prints "ID" or "ID;CLUSTER"; warnings may come with it (stderr is captured too).
    const auto id_line = std::find_if(lines.begin(), lines.end(), [](const std::string& line) {
      const std::string id = line.substr(0, line.find(';'));
      return !id.empty() && id.find_first_not_of("0123456789") == std::string::npos;
    });
    if (status == 0 && id_line != lines.end()) {
      ++submitted;
      const std::string id = id_line->substr(0, id_line->find(';'));
      std::printf("submitted %s as job %s\n", launch.script.string().c_str(), id.c_str());
      if (const auto it = waiting.find(launch.nprocs); it != waiting.end()) {
        std::printf(
            "note: job %s waits: %s, so it cannot start now (sbatch --test-only refuses it); it starts once the "
            "node is back in service (squeue shows its reason)\n",
            id.c_str(), it->second.c_str());
      }
    } else {
      std::fprintf(stderr, "mcmclb: sbatch %s failed (status %d):\n", launch.script.string().c_str(), status);
      for (const auto& line : lines) std::fprintf(stderr, "  %s\n", line.c_str());
    }
  }
  const std::size_t failed = launches.size() - submitted;
  const std::string again = "mcmclb sweep " + shell_quote(o.study) + " --launcher slurm" +
                            (o.out.empty() ? "" : " --out " + shell_quote(o.out)) + overrides_args(o);
  if (submitted == 0) {
    std::printf(
        "sweep %s: no job submitted (%zu failed, see above); nothing is queued for these launches: fix "
        "the cause and run %s again\n",
        study.name.c_str(), failed, again.c_str());
  } else {
    std::printf("sweep %s: %zu job(s) submitted, %zu failed; follow them with: %s\n", study.name.c_str(), submitted,
                failed, follow.c_str());
  }
  return failed > 0 ? 3 : 0;
}

/// --launcher slurm: one batch script per rank count, submitted with sbatch.
class SlurmLauncher final : public Launcher {
 public:
  [[nodiscard]] std::string_view name() const override { return "slurm"; }
  // The batch script exports its own (jobs/slurm.sbatch.in: job.launcher).
  [[nodiscard]] std::string_view provenance_name() const override { return ""; }
  int sweep(const SweepOptions& o, const Study& study, const std::string& study_text) const override {
    check_launch_jobs(study);
    return sweep_slurm(o, study, study_text);
  }
};

std::unique_ptr<Launcher> slurm_launcher() { return std::make_unique<SlurmLauncher>(); }

}  // namespace mcmclb::launch
