// mcmclb: the walker-group kernel from the command line.
//   mpiexec -n P build/mcmclb run CONFIG.yaml [--set key=value]... [--out DIR]
// Rank 0 reads the experiment file and broadcasts its text, so every rank parses the same bytes and reaches the
// same verdict on bad input (one line on rank 0, exit code 2 everywhere, no hang). Exit code 3: a run violated an
// invariant (its row says valid=false).
#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "driver.hpp"
#include "mcmclb/balancer.hpp"
#include "mcmclb/config.hpp"
#include "mcmclb/mpi.hpp"

namespace {

namespace mpi = mcmclb::mpi;
using mpi::InputError;

const char* const kUsage =
    "usage: mpiexec -n P mcmclb run CONFIG.yaml [--set key=value]... [--out DIR]";

struct Cli {
  std::string command;
  std::string config;
  std::vector<std::string> overrides;
  std::string out;
};

Cli parse_cli(int argc, char** argv) {
  Cli cli;
  if (argc < 2) throw InputError("missing command (known: run; see --help)");
  cli.command = argv[1];
  if (cli.command == "--help" || cli.command == "-h") return cli;
  if (cli.command != "run") throw InputError("unknown command '" + cli.command + "' (known: run; see --help)");
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--set" || a == "--out") {
      if (i + 1 >= argc) throw InputError(a + ": missing value (see --help)");
      if (a == "--set") {
        cli.overrides.emplace_back(argv[++i]);
      } else {
        cli.out = argv[++i];
      }
    } else if (a.rfind("--set=", 0) == 0) {
      cli.overrides.push_back(a.substr(6));
    } else if (a.rfind("--out=", 0) == 0) {
      cli.out = a.substr(6);
    } else if (a.rfind("--", 0) == 0) {
      throw InputError("unknown flag " + a + " (allowed: --set key=value, --out DIR)");
    } else if (cli.config.empty()) {
      cli.config = a;
    } else {
      throw InputError("unexpected argument '" + a + "' (one CONFIG.yaml per run)");
    }
  }
  if (cli.config.empty()) throw InputError("missing CONFIG.yaml (see --help)");
  return cli;
}

/// Rank 0 reads path; every rank gets the text, or the same InputError.
std::string read_on_root(const std::string& path, const mpi::Comm& world) {
  std::string text;
  int ok = 1;
  if (world.rank() == 0) {
    std::ifstream in(path);
    if (!in) {
      ok = 0;
      text = path + ": cannot read the experiment file";
    } else {
      std::ostringstream s;
      s << in.rdbuf();
      text = s.str();
    }
  }
  long long length = static_cast<long long>(text.size());
  mpi::check(MPI_Bcast(&ok, 1, MPI_INT, 0, world.get()), "MPI_Bcast");
  mpi::check(MPI_Bcast(&length, 1, MPI_LONG_LONG, 0, world.get()), "MPI_Bcast");
  text.resize(static_cast<std::size_t>(length));
  mpi::check(MPI_Bcast(text.data(), static_cast<int>(length), MPI_CHAR, 0, world.get()), "MPI_Bcast");
  if (!ok) throw InputError(text);
  return text;
}

/// Every rank must hold the same resolved experiment (a hash compared by MIN and MAX reductions).
void check_identical(const std::string& resolved, const mpi::Comm& world) {
  const auto h = static_cast<unsigned long long>(std::hash<std::string>{}(resolved));
  unsigned long long lo = 0, hi = 0;
  mpi::check(MPI_Allreduce(&h, &lo, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, world.get()), "MPI_Allreduce");
  mpi::check(MPI_Allreduce(&h, &hi, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, world.get()), "MPI_Allreduce");
  if (lo != hi) throw InputError("the resolved experiment differs between ranks (different argv?)");
}

int mcmclb_main(int argc, char** argv) {
  const mpi::Comm world = mpi::Comm::world();
  const int rank = world.rank();
  const Cli cli = parse_cli(argc, argv);
  if (cli.command != "run") {
    if (rank == 0) std::printf("%s\n", kUsage);
    return 0;
  }
  const std::string text = read_on_root(cli.config, world);
  const mcmclb::Experiment e = mcmclb::parse_experiment(text, cli.overrides, cli.config);
  mcmclb::check_against_nprocs(e, world.size());
  const std::vector<mcmclb::RunSpec> runs = mcmclb::expand_runs(e, world.size());
  check_identical(mcmclb::to_yaml(e), world);
  const std::filesystem::path out =
      cli.out.empty() ? std::filesystem::path("results") / e.name : std::filesystem::path(cli.out);

  int invalid = 0;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const mcmclb::RunResult r = mcmclb::run_once(runs[i]);
    if (!r.valid) ++invalid;
    if (rank == 0) {
      mcmclb::append_result(out, r);
      std::printf("run %zu/%zu  %-28s rep %d  time %7.3f s  ideal %.3f  baseline %.3f  regroups avg %.2f  %s%s\n",
                  i + 1, runs.size(), mcmclb::run_label(r.spec).c_str(), r.spec.rep, r.time_s, r.ideal_s,
                  r.baseline_s, r.regroups_avg, r.valid ? "valid" : "INVALID: ", r.violations.c_str());
      std::fflush(stdout);
    }
  }
  if (rank == 0) {
    std::printf("wrote %s/{runs,ranks,events}.csv (%zu runs, P=%d)\n", out.string().c_str(), runs.size(),
                world.size());
    if (invalid > 0) std::fprintf(stderr, "mcmclb: %d run(s) violated an invariant (valid=false)\n", invalid);
  }
  return invalid > 0 ? 3 : 0;
}

}  // namespace

int main(int argc, char** argv) { return mcmclb::mpi::run_main(argc, argv, mcmclb_main); }
