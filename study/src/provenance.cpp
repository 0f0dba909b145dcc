// Provenance collection (mcmclb/provenance.hpp).
#include "mcmclb/provenance.hpp"

#include <unistd.h>

#include <array>
#include <cstdlib>
#include <ctime>
#include <filesystem>

namespace mcmclb {

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm parts{};
  gmtime_r(&now, &parts);
  std::array<char, 32> text{};
  std::strftime(text.data(), text.size(), "%Y-%m-%dT%H:%M:%SZ", &parts);
  return text.data();
}

Provenance collect_provenance(const std::string& mpi_library, int nprocs) {
  Provenance p;
  p.git_commit = git_commit();
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

const csv::Row& provenance_header() {
  static const csv::Row header = {"run_id",   "command_line", "working_dir",
                                  "launcher", "slurm_job_id", "slurm_nodelist"};
  return header;
}

csv::Row provenance_row(const std::string& run_id, const Provenance& p) {
  return {run_id, p.command_line, p.working_dir, p.launcher, p.slurm_job_id, p.slurm_nodelist};
}

}  // namespace mcmclb
