// Provenance collection (mcmclb/provenance.hpp).
#include "mcmclb/provenance.hpp"

#include <unistd.h>

#include <array>
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
  return p;
}

const csv::Row& provenance_header() {
  static const csv::Row header = {"run_id", "command_line", "working_dir"};
  return header;
}

csv::Row provenance_row(const std::string& run_id, const Provenance& p) {
  return {run_id, p.command_line, p.working_dir};
}

}  // namespace mcmclb
