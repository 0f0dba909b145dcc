// SPDX-License-Identifier: BSD-3-Clause
// Provenance collection (mcmclb/provenance.hpp).
#include "mcmclb/provenance.hpp"

#include <dlfcn.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <thread>
#include <utility>

#include "mcmclb/input_error.hpp"

namespace mcmclb {

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm parts{};
  gmtime_r(&now, &parts);
  std::array<char, 32> text{};
  std::strftime(text.data(), text.size(), "%Y-%m-%dT%H:%M:%SZ", &parts);
  return text.data();
}

namespace {

/// The first "model name" of /proc/cpuinfo ("Intel(R) Xeon(R) ..."); "" where there is none (several ARM kernels
/// name no model) or the file cannot be read.
std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) != 0) continue;
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) return "";
    const std::size_t first = line.find_first_not_of(" \t", colon + 1);
    return first == std::string::npos ? "" : line.substr(first);
  }
  return "";
}

}  // namespace

Provenance collect_provenance(const std::string& mpi_library, int nprocs) {
  Provenance p;
  static const std::string model = cpu_model();  // once per process: it does not change between runs
  p.host_cpu_model = model;
  p.git_commit = git_commit();
  p.build_type = build_type();
  p.compiler = cxx_compiler();
  // One space between flags: CMake joins empty parts (no CMAKE_CXX_FLAGS) with spaces of their own.
  std::istringstream flags(cxx_flags());
  for (std::string flag; flags >> flag;) p.cxx_flags += (p.cxx_flags.empty() ? "" : " ") + flag;
  p.mpi_library = mpi_library;
  p.nprocs = nprocs;
  std::array<char, 256> host{};
  if (gethostname(host.data(), host.size() - 1) == 0) p.host = host.data();
  p.utc_start = utc_now();
  std::error_code error;
  p.working_dir = std::filesystem::current_path(error).string();
  const auto env = [](const char* name) {
    const char* value = std::getenv(name);
    return std::string(value != nullptr ? value : "");
  };
  // The launcher cannot be told from the environment reliably (MPICH's mpiexec starts its proxies with srun inside
  // an allocation), so whoever launches says: mcmclb sweep and the generated batch scripts set MCMCLB_LAUNCHER.
  p.launcher = env("MCMCLB_LAUNCHER");
  p.slurm_job_id = env("SLURM_JOB_ID");
  p.slurm_nodelist = env("SLURM_JOB_NODELIST");
  return p;
}

void add_backend_provenance(Provenance& p, std::string_view backend) {
  p.backend = std::string(backend);
  if (backend != "smpi") return;
  const char* platform = std::getenv("MCMCLB_PLATFORM");
  if (platform == nullptr || *platform == '\0') {
    throw InputError(
        "MCMCLB_PLATFORM is not set: the simulation build records the platform file smpirun runs on "
        "(export MCMCLB_PLATFORM=configs/platforms/bgp.xml, the file given to smpirun -platform, and "
        "MCMCLB_SMPI_CFG, its --cfg flags)");
  }
  std::string why;
  const auto content = read_text_file(platform, &why);
  if (!content) throw InputError(std::string("MCMCLB_PLATFORM: cannot read ") + platform + ": " + why);
  p.platform = platform_identity(platform);
  p.platform_fnv1a64 = fnv1a64_hex(*content);
  // The sweep deals the hosts (placement groups or scatter) in the hostfile it writes, and says so here; smpirun
  // started any other way reads the platform's own hostfile, which fills the hosts in order.
  const char* placement = std::getenv("MCMCLB_PLACEMENT");
  p.placement = placement != nullptr && *placement != '\0' ? placement : "block";
  const char* cfg = std::getenv("MCMCLB_SMPI_CFG");
  p.simgrid_cfg = cfg != nullptr ? cfg : "";
  // What the preloads (apps/CMakeLists.txt) did, asked of the libraries themselves: the environment alone would not
  // say what was loaded, nor whether the clock library found the simulation of computation off.
  const auto zeroed = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "mcmclb_smpi_cpu_clock_zeroed"));
  p.smpi_clock_preload = zeroed != nullptr && zeroed() != 0 ? "true" : "false";
  const auto tcmalloc = reinterpret_cast<const char* (*)(int*, int*, const char**)>(dlsym(RTLD_DEFAULT, "tc_version"));
  p.smpi_allocator = tcmalloc != nullptr ? std::string(tcmalloc(nullptr, nullptr, nullptr)) + " tcmalloc" : "glibc";
  // The library that simulated, not the headers this was compiled against: asked at run time, as the preloads are.
  const auto version = reinterpret_cast<void (*)(int*, int*, int*)>(dlsym(RTLD_DEFAULT, "sg_version_get"));
  if (version != nullptr) {
    int major = 0, minor = 0, patch = 0;
    version(&major, &minor, &patch);
    p.simgrid_version = std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
  }
}

std::string platform_identity(const std::string& path) {
  namespace fs = std::filesystem;
  // The platform is part of a point's resume key (runs_csv.hpp), which must not depend on how the file was named
  // (configs/platforms/bgp.xml, ./configs/..., an absolute path): the canonical path first.
  std::error_code error;
  const fs::path canonical = fs::weakly_canonical(fs::absolute(path, error), error);
  if (error) return path;
  for (fs::path dir = canonical.parent_path(); !dir.empty(); dir = dir.parent_path()) {
    if (fs::exists(dir / ".git", error)) return canonical.lexically_relative(dir).generic_string();
    if (dir == dir.root_path()) break;
  }
  return canonical.string();
}

void add_host_usage(Provenance& p) {
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return;
  const auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec);
  };
  p.host_cpu_s = csv::number(seconds(usage.ru_utime) + seconds(usage.ru_stime));
  p.host_peak_rss_kib = std::to_string(usage.ru_maxrss);  // Linux: KiB
}

std::optional<double> host_busy_share(std::chrono::milliseconds window) {
  const auto sample = []() -> std::optional<std::pair<double, double>> {  // (busy, total) jiffies
    std::ifstream in("/proc/stat");
    std::string cpu;
    double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
    if (!(in >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal) || cpu != "cpu")
      return std::nullopt;
    const double busy = user + nice + system + irq + softirq + steal;
    return std::make_pair(busy, busy + idle + iowait);
  };
  const auto a = sample();
  // The C library's nanosleep, named in parentheses: the simulation build's compiler makes nanosleep(x, y) a macro
  // for SMPI's simulated sleep, which would add simulated time to the run and wait no host time at all.
  const auto whole_s = std::chrono::duration_cast<std::chrono::seconds>(window);
  timespec left{static_cast<time_t>(whole_s.count()),
                static_cast<long>(std::chrono::duration_cast<std::chrono::nanoseconds>(window - whole_s).count())};
  while ((::nanosleep)(&left, &left) != 0 && errno == EINTR) {
  }
  const auto b = sample();
  if (!a || !b || !(b->second > a->second)) return std::nullopt;
  return (b->first - a->first) / (b->second - a->second);
}

int usable_cores() {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (::sched_getaffinity(0, sizeof mask, &mask) == 0 && CPU_COUNT(&mask) > 0) return CPU_COUNT(&mask);
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

std::string host_busy_pct(std::chrono::milliseconds window) {
  const auto share = host_busy_share(window);
  // One decimal: a jiffy is 1/100 s of one core, so a short window on a few cores resolves no finer.
  return share ? csv::number(std::round(1000 * *share) / 10) : std::string();
}

// New columns go at the end, so the header of an older folder is a prefix of this one.
namespace {
csv::Row extended(const csv::Row& older, std::initializer_list<const char*> added) {
  csv::Row header = older;
  header.insert(header.end(), added.begin(), added.end());
  return header;
}
}  // namespace

const csv::Row& provenance_header_v1() {
  static const csv::Row header = {"run_id",      "command_line", "working_dir",  "platform_fnv1a64",
                                  "simgrid_cfg", "launcher",     "slurm_job_id", "slurm_nodelist"};
  return header;
}

const csv::Row& provenance_header_v2() {
  static const csv::Row header = extended(
      provenance_header_v1(),
      {"ranks_per_node", "cores_available", "oversubscribed", "wait_policy", "host_cpu_s", "host_peak_rss_kib"});
  return header;
}

const csv::Row& provenance_header_v3() {
  static const csv::Row header = extended(provenance_header_v2(), {"smpi_clock_preload"});
  return header;
}

const csv::Row& provenance_header_v4() {
  static const csv::Row header = extended(provenance_header_v3(), {"smpi_allocator"});
  return header;
}

const csv::Row& provenance_header_v5() {
  static const csv::Row header = extended(provenance_header_v4(), {"nodes", "node_layout"});
  return header;
}

const csv::Row& provenance_header_v6() {
  static const csv::Row header = extended(provenance_header_v5(), {"order", "order_seed"});
  return header;
}

const csv::Row& provenance_header_v7() {
  static const csv::Row header = extended(provenance_header_v6(), {"build_type", "compiler", "cxx_flags"});
  return header;
}

// The platform repeats runs.csv's column, so that provenance.csv alone says what was simulated, on what.
const csv::Row& provenance_header_v8() {
  static const csv::Row header = extended(provenance_header_v7(), {"simgrid_version", "platform"});
  return header;
}

// Where a simulation placed its ranks (block, or dealt over a dragonfly's groups), as runs.csv says it.
const csv::Row& provenance_header_v9() {
  static const csv::Row header = extended(provenance_header_v8(), {"placement"});
  return header;
}

const csv::Row& provenance_header_v10() {
  static const csv::Row header =
      extended(provenance_header_v9(), {"host_cpu_model", "host_busy_before_pct", "host_busy_after_pct"});
  return header;
}

// A real run's load from other programs, as its ranks found it: the part of a core each had.
const csv::Row& provenance_header() {
  static const csv::Row header = extended(provenance_header_v10(), {"core_share"});
  return header;
}

csv::Row provenance_row(const std::string& run_id, const Provenance& p) {
  const auto count = [](int n) { return n > 0 ? std::to_string(n) : std::string(); };
  return {run_id,
          p.command_line,
          p.working_dir,
          p.platform_fnv1a64,
          p.simgrid_cfg,
          p.launcher,
          p.slurm_job_id,
          p.slurm_nodelist,
          count(p.ranks_per_node),
          count(p.cores_available),
          p.oversubscribed,
          p.wait_policy,
          p.host_cpu_s,
          p.host_peak_rss_kib,
          p.smpi_clock_preload,
          p.smpi_allocator,
          count(p.nodes),
          p.node_layout,
          p.order,
          p.order_seed,
          p.build_type,
          p.compiler,
          p.cxx_flags,
          p.simgrid_version,
          p.platform,
          p.placement,
          p.host_cpu_model,
          p.host_busy_before_pct,
          p.host_busy_after_pct,
          p.core_share};
}

}  // namespace mcmclb
