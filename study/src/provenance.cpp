// Provenance collection (mcmclb/provenance.hpp).
#include "mcmclb/provenance.hpp"

#include <unistd.h>

#include <array>
#include <ctime>

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
  return p;
}

}  // namespace mcmclb
