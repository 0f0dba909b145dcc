// SPDX-License-Identifier: BSD-3-Clause
// `mcmclb status` (apps/sweep.hpp): per launch, the points done, failed and missing in the output folder, the
// job squeue lists for it, and for a launch left unfinished how its newest job ended (Slurm and the job's own
// record); inside a batch job, the launch's points still without a valid result go to failures.csv.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "mcmclb/launch.hpp"
#include "mcmclb/text.hpp"

namespace mcmclb {

using namespace launch;  // the launchers and what they share (mcmclb/launch.hpp)

namespace {

/// What failures.csv lists (any reason, any time): the store keys of kernel points (a key names the backend too),
/// and the indices of points listed without a key (commbench points, rows written before the key column).
struct ListedFailures {
  std::set<std::string> keys;
  std::set<std::size_t> keyless_points;
  std::map<int, std::string> last_reason;  // nprocs -> the reason of its launch's newest row
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
  const auto nprocs_at = static_cast<std::size_t>(std::find(header.begin(), header.end(), "nprocs") - header.begin());
  const auto reason_at = static_cast<std::size_t>(std::find(header.begin(), header.end(), "reason") - header.begin());
  while (std::getline(in, line)) {
    const csv::Row row = csv::split_line(line);
    if (nprocs_at < row.size() && reason_at < row.size() && !row[nprocs_at].empty() && row[nprocs_at].size() < 10 &&
        row[nprocs_at].find_first_not_of("0123456789") == std::string::npos) {
      listed.last_reason[std::stoi(row[nprocs_at])] = row[reason_at];
    }
    if (key_at < row.size() && !row[key_at].empty()) {
      listed.keys.insert(row[key_at]);
    } else if (at < row.size() && !row[at].empty() && row[at].find_first_not_of("0123456789") == std::string::npos) {
      listed.keyless_points.insert(std::stoul(row[at]));
    }
  }
  return listed;
}

/// Why a launch with no job queued still lacks points: how its newest job ended (Slurm, and the job's own record
/// in failures.csv), or the newest failure recorded for it.
void explain_loss(const fs::path& out, const std::string& name, const std::string& last_reason) {
  const std::string id = last_job(out, name);
  if (id.empty()) {
    if (!last_reason.empty()) {
      std::printf("  last failure: %s\n", last_reason.c_str());
    } else {
      std::printf(
          "  no valid row in runs.csv and no failure recorded: not run yet, or the rows were lost; a sweep "
          "runs what is missing\n");
    }
    return;
  }
  const std::string mine = "slurm job " + id + ": ";
  const std::string recorded = last_reason.rfind(mine, 0) == 0 ? last_reason.substr(mine.size()) : std::string();
  std::printf("  %s\n", describe_job_end(id, job_end(id), recorded).c_str());
}

/// One line when runs.csv holds a run_id more than once (runs of an older version, or rows copied in by hand):
/// every reader joins ranks.csv and events.csv to runs.csv by it, so those runs' rows would mix. Empty otherwise.
std::string duplicated_ids(const fs::path& out, const std::map<std::string, results::RecordedPoint>& recorded) {
  std::map<std::string, int> count;
  for (const auto& [key, point] : recorded) {
    for (const results::RecordedRun& run : point.runs) ++count[run.run_id];
  }
  std::size_t ids = 0;
  std::string first;
  for (const auto& [id, n] : count) {
    if (n < 2) continue;
    if (ids++ == 0) first = id;
  }
  if (ids == 0) return {};
  return printable((out / "runs.csv").string(), 200) + ": " + std::to_string(ids) +
         " run_id(s) recorded more than once, first " + printable(first, 120) +
         ": their runs cannot be told apart in ranks.csv and events.csv, so the plots and compare refuse the folder";
}

}  // namespace

int status_main(const SweepOptions& o) {
  if (simulated(o)) check_platform(o);  // the platform names the results; a missing one is an input error
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
  if (o.launcher == "local" || simulated(o)) {
    no_job = "no queue (--launcher " + o.launcher + ")";  // nothing to ask Slurm
  } else if (recording || !on_path("squeue")) {
    no_job = recording ? no_job : "squeue not on PATH";
  } else {
    // The results are worth printing without the queue (e.g. a login node whose slurmctld is down), and soon:
    // squeue is given slurm_wait_s(), not the 9 s it retries for when no controller answers.
    try {
      queued = queued_jobs(study, true);
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
        const std::string why =
            !o.failed_setup.empty() ? "failed in setup: '" + printable(o.failed_setup, 200) + "' exited " +
                                          o.record_failures + "; the launch did not start"
            : invalid                  ? "a run invariant failed (valid=false in runs.csv)"
            : incomplete               ? "recorded valid in runs.csv, but ranks.csv lacks some of its ranks' rows"
            : o.record_failures == "0" ? "the launch ended without recording it"
                                       : "the launch exited with status " + o.record_failures + " before recording it";
        failures.push_back({i, who + why});
      }
    }
    n_done += d, n_failed += f, n_missing += m;
    std::string job = no_job;
    if (const auto it = queued.find(job_comment(study, out, nprocs)); it != queued.end()) {
      job = "job " + it->second.id + " " + it->second.state;
    }
    if (!recording) {
      std::printf("launch nprocs=%d: %zu points, %zu done, %zu failed, %zu missing; %s\n", nprocs, indices.size(), d, f,
                  m, job.c_str());
      const Point& first = study.points[indices.front()];
      if (first.program == Program::commbench && d == 0) {  // how far the benchmark got: it resumes from there
        const auto left = commbench_left(first, backend, out);
        if (!left.empty()) {
          std::printf("  %s lacks %zu benchmark(s), first %s\n", commbench_output(nprocs, backend).c_str(), left.size(),
                      left.front().key().c_str());
        }
      }
      if (f + m > 0 && job == no_job) {
        const auto reason = listed_failed.last_reason.find(nprocs);
        explain_loss(out, job_name(study, nprocs),
                     reason == listed_failed.last_reason.end() ? std::string() : reason->second);
      }
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
  if (const std::string line = duplicated_ids(out, recorded); !line.empty()) std::printf("%s\n", line.c_str());
  const bool complete = n_failed == 0 && n_missing == 0;
  std::printf("study %s in %s: %zu done, %zu failed, %zu missing (%s)\n", study.name.c_str(), out.string().c_str(),
              n_done, n_failed, n_missing, complete ? "complete" : "not complete");
  return complete ? 0 : 3;
}

}  // namespace mcmclb
