// SPDX-License-Identifier: BSD-3-Clause
// `mcmclb plan` and `mcmclb sweep` (apps/sweep.hpp): the options, the plan, and the launcher the run is handed
// to (mcmclb/launch.hpp: the launchers and what they share).
#include "sweep.hpp"

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
#include "mcmclb/driver.hpp"
#include "mcmclb/launch.hpp"
#include "mcmclb/mpi.hpp"
#include "mcmclb/mpi_build.hpp"
#include "mcmclb/result_store.hpp"
#include "mcmclb/run_files.hpp"
#include "mcmclb/study.hpp"
#include "mcmclb/text.hpp"

namespace mcmclb {

using namespace launch;  // the launchers and what they share (mcmclb/launch.hpp)

SweepOptions parse_sweep_options(const std::vector<std::string>& args, bool sweep) {
  return parse_sweep_options(args, sweep ? Command::sweep : Command::plan);
}

SweepOptions parse_sweep_options(const std::vector<std::string>& args, Command command) {
  const bool sweep = command == Command::sweep;
  const bool status = command == Command::status;
  SweepOptions o;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const auto value = [&](const std::string& flag) {
      if (i + 1 >= args.size()) throw InputError(flag + ": missing value (see --help)");
      // One value per flag (--set adds one each time): given twice, one of the two would be dropped silently.
      if (flag != "--set" && !seen.insert(flag).second) throw InputError(flag + ": given twice (allowed: once)");
      return args[++i];
    };
    if (a == "--set") {
      o.overrides.push_back(value(a));
    } else if (a == "--verbose" && !sweep) {
      o.verbose = true;
    } else if (a == "--launcher" && (sweep || status)) {
      o.launcher = value(a);
      (void)launcher_named(o.launcher);  // the one line naming the launchers there are
    } else if (a == "--launch" && status) {
      o.launch = static_cast<int>(parse_integer_flag(a, value(a), 1, INT_MAX, "a rank count"));
    } else if (a == "--record-failures" && status) {
      o.record_failures = std::to_string(parse_integer_flag(a, value(a), 0, 255, "an exit status"));
    } else if (a == "--failed-setup" && status) {
      o.failed_setup = value(a);
      if (o.failed_setup.empty()) throw InputError("--failed-setup: empty (allowed: the job.setup line that failed)");
    } else if (a == "--platform" && (sweep || status)) {
      o.platform = require_path(a, value(a));
    } else if (a == "--sim-binary" && sweep) {
      o.sim_binary = require_path(a, value(a));
    } else if (a == "--sim-commbench" && sweep) {
      o.sim_commbench = require_path(a, value(a));
    } else if (a == "--smpi-flags" && sweep) {
      o.smpi_flags = require_path(a, value(a));
    } else if (a == "--out" && (sweep || status)) {
      o.out = require_path(a, value(a));
    } else if (a == "--jobs-dir" && sweep) {
      o.jobs_dir = require_path(a, value(a));
    } else if (a == "--force" && sweep) {
      o.force = true;
    } else if (a == "--dry-run" && sweep) {
      o.dry_run = true;
    } else if (a == "--until-ci" && sweep) {
      const std::string v = value(a);
      char* end = nullptr;
      o.until_ci_pct = std::strtod(v.c_str(), &end);
      if (v.empty() || end != v.c_str() + v.size() || !(o.until_ci_pct > 0 && o.until_ci_pct <= 100)) {
        throw InputError("--until-ci: '" + printable(v) + "' is not a percentage in (0, 100]");
      }
    } else if (a == "--max-reps" && sweep) {
      const std::string v = value(a);
      try {
        std::size_t used = 0;
        o.max_reps = std::stoi(v, &used);
        if (used != v.size() || o.max_reps < 6 || o.max_reps > 100000) throw std::invalid_argument(v);
      } catch (const std::exception&) {
        throw InputError("--max-reps: '" + printable(v) +
                         "' is not a repetition count from 6 (the fewest with a 95 % interval) to 100000");
      }
    } else if (a == "--points-per-launch" && sweep) {
      o.points_per_launch = static_cast<int>(parse_integer_flag(a, value(a), 1, 100000, "a number of points"));
    } else if (a == "--jobs" && sweep) {
      o.jobs = static_cast<int>(parse_integer_flag(a, value(a), 1, 1024, "a number of launches at once"));
    } else if (a == "--job-steps" && sweep) {
      o.job_steps = true;
    } else if (a.rfind("--", 0) == 0) {
      throw InputError(
          "unknown flag " + a +
          (sweep    ? " (allowed: --launcher local|slurm|smpi, --out DIR, --force, --dry-run, --jobs-dir DIR, "
                      "--set key=value, --platform FILE, --sim-binary FILE, --sim-commbench FILE, --smpi-flags FILE, "
                      "--until-ci PCT, --max-reps N, --points-per-launch N, --jobs N, --job-steps)"
           : status ? " (allowed: --out DIR, --set key=value, --launch P, --record-failures STATUS, "
                      "--failed-setup LINE, --launcher local|slurm|smpi, --platform FILE)"
                    : " (allowed: --set key=value, --verbose)"));
    } else if (o.study.empty()) {
      o.study = require_path("STUDY.yaml", a);
    } else {
      throw InputError("unexpected argument '" + a + "' (one STUDY.yaml)");
    }
  }
  if (o.study.empty()) throw InputError("missing STUDY.yaml (see --help)");
  if (sweep && o.launcher.empty()) throw InputError("--launcher: required (allowed: " + launcher_names() + ")");
  if ((!o.platform.empty() || !o.sim_binary.empty() || !o.sim_commbench.empty() || !o.smpi_flags.empty()) &&
      !simulated(o)) {
    throw InputError("--platform, --sim-binary, --sim-commbench and --smpi-flags: only with --launcher smpi");
  }
  if (simulated(o)) {  // defaults: the BG/P-like platform and build-sim/ of this checkout
    if (o.platform.empty()) o.platform = std::string(MCMCLB_SOURCE_DIR) + "/configs/platforms/bgp.xml";
    if (o.sim_binary.empty()) o.sim_binary = std::string(MCMCLB_SOURCE_DIR) + "/build-sim/mcmclb-sim";
  }
  // A path that begins with '-' would reach mkdir, mcmclb run or smpirun as an option.
  for (std::string* path :
       {&o.study, &o.out, &o.jobs_dir, &o.platform, &o.sim_binary, &o.sim_commbench, &o.smpi_flags}) {
    *path = not_an_option(*path);
  }
  if (!o.record_failures.empty() && o.launch == 0) throw InputError("--record-failures: needs --launch P");
  if (!o.failed_setup.empty() && o.record_failures.empty()) {
    throw InputError("--failed-setup: needs --launch P --record-failures STATUS");
  }
  if (std::find(args.begin(), args.end(), "--max-reps") != args.end() && o.until_ci_pct == 0) {
    throw InputError("--max-reps: only with --until-ci PCT");
  }
  if (o.points_per_launch > 0 && o.launcher == "slurm") {
    throw InputError(
        "--points-per-launch: only with --launcher local or smpi (a batch job runs its rank count's "
        "points in one launch)");
  }
  if (o.jobs > 1 && !simulated(o)) {
    throw InputError(
        "--jobs: only with --launcher smpi (real MPI launches at once would share the cores and the times they "
        "measure; a simulated time does not depend on the host's load)");
  }
  if (o.job_steps && !simulated(o)) {
    throw InputError("--job-steps: only with --launcher smpi (it runs each simulation as a Slurm job step)");
  }
  if (o.job_steps && !o.dry_run && std::getenv("SLURM_JOB_ID") == nullptr) {
    throw InputError(
        "--job-steps: not inside a Slurm allocation (SLURM_JOB_ID is unset; allowed: in a batch job or salloc, as "
        "mcmclb advise --launcher slurm runs it)");
  }
  if (o.until_ci_pct > 0 && o.launcher == "slurm") {
    throw InputError(
        "--until-ci: only with --launcher local or smpi (a batch job is written before its results "
        "exist, so it cannot decide how often to repeat)");
  }
  return o;
}

int plan_main(const SweepOptions& given) {
  SweepOptions o = given;
  const Study study = load_keeping_seed(o, read_file(o.study, "study file"));
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
  // What this build can create with, and why not the others: a study naming one of those is refused above.
  const Catalog methods = catalog();
  std::printf("creation methods: %s\n", join(methods.supported_methods()).c_str());
  for (const auto& [method, why] : methods.unsupported) {
    std::printf("not supported by this build: %s: %s\n", method.c_str(), why.c_str());
  }
  return 0;
}

int sweep_main(const SweepOptions& options) { return sweep_file(options); }

}  // namespace mcmclb
