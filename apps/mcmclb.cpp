// SPDX-License-Identifier: BSD-3-Clause
// mcmclb: the walker-group kernel from the command line.
//   mpiexec -n P build/mcmclb run CONFIG.yaml [--set key=value]... [--out DIR] [--points i,j,...] [--resume]
//   build/mcmclb plan STUDY.yaml [--set key=value]... [--verbose]
//   build/mcmclb sweep STUDY.yaml --launcher local|slurm|smpi [--out DIR] [--force] [--dry-run] [--jobs-dir DIR]
//   build/mcmclb status STUDY.yaml [--set key=value]... [--out DIR]
//   build/mcmclb compare A B [--threshold PCT] [--alpha P] [--csv FILE] [--ignore COLUMNS]   (apps/compare.hpp)
//   build/mcmclb compare DIR --baseline KEY=VALUE[,...] [...]   (one folder's set-ups against one of them)
//   build/mcmclb advise TRACE.csv|STUDY.yaml --ranks P[,P...] [...]   (apps/advise.hpp: simulates, then ranks)
//   mpiexec -n P build/mcmclb calibrate [--out DIR] [--ranks MAX] [--reps N] [--cores K] [--busy PCT]
//                                     (apps/calibrate.hpp: a platform of the machine, for the simulations)
//   build/mcmclb --version   (the release, from CMake's project(), and the commit the build was made from)
//   build/mcmclb keys | columns   (not in --help: the key table as Markdown, each results file's header; what
//                                  docs/reference/ documents and tests/test_reference.py compares against)
// plan and sweep do not initialise MPI (sweep launches MPI jobs). For run, rank 0 reads the experiment file and
// broadcasts its text, so every rank parses the same bytes and reaches the same verdict on bad input (one line on
// rank 0, exit code 2 everywhere, no hang). Exit code 3: a run violated an invariant (its row says valid=false).
#include <array>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "advise_flags.hpp"
#include "calibrate.hpp"
#include "mcmclb/balancer.hpp"
#include "mcmclb/config.hpp"
#include "mcmclb/driver.hpp"
#include "mcmclb/mpi.hpp"
#include "mcmclb/provenance.hpp"
#include "mcmclb/run_files.hpp"
#include "mcmclb/run_points.hpp"
#include "mcmclb/smpirun_args.hpp"
#include "mcmclb/study.hpp"
#include "mcmclb/text.hpp"
#include "mcmclb/trace.hpp"
#if !MCMCLB_SMPI
#include "advise.hpp"
#include "compare.hpp"
#include "mcmclb/advice_table.hpp"
#include "mcmclb/advise.hpp"
#include "mcmclb/advise_plan.hpp"
#include "predict.hpp"
#include "sweep.hpp"
#endif

#if MCMCLB_SMPI && defined(__linux__) && defined(__x86_64__)
#include <unistd.h>
// The simulation build's program is a shared object that smpirun's loader (smpimain) opens. Started by hand
// (`mcmclb-sim advise ...`), it had no program interpreter and no entry: it crashed (exit 139) before any line of
// its own. These two give it both (apps/CMakeLists.txt links the entry with -e): one line naming the program to
// run instead, and exit status 2. smpimain opens the object and calls its main, so neither is used there.
extern "C" {
[[gnu::used, gnu::section(".interp")]] const char mcmclb_sim_interp[] = "/lib64/ld-linux-x86-64.so.2";
[[noreturn, gnu::force_align_arg_pointer]] void mcmclb_sim_started_by_hand() {
  static const char line[] =
      "mcmclb-sim: the simulation build's program runs only under smpirun, which `mcmclb sweep --launcher smpi` "
      "and `mcmclb advise` start; run mcmclb of the normal build (build/mcmclb) for plan, sweep, status, compare, "
      "predict and advise\n";
  (void)!write(2, line, sizeof line - 1);
  _exit(2);
}
}
#endif

namespace {

namespace mpi = mcmclb::mpi;
using mpi::InputError;

/// Each command's usage, as `mcmclb --help` lists them and `mcmclb COMMAND --help` prints its own: every flag its
/// parser takes (tests/test_cli.py compares them with the parsers' sources). advise's line comes from the table its
/// parser reads.
std::vector<std::pair<std::string, std::string>> usage_lines() {
  return {
      {"run", "mpiexec -n P mcmclb run CONFIG.yaml [--set key=value]... [--out DIR] [--points i,j,...] [--resume]"},
      {"plan", "mcmclb plan STUDY.yaml [--set key=value]... [--verbose]"},
      {"sweep",
       "mcmclb sweep STUDY.yaml --launcher local|slurm|smpi [--out DIR] [--force] [--dry-run] [--set key=value]... "
       "[--jobs-dir DIR] [--platform FILE] [--sim-binary FILE] [--sim-commbench FILE] [--smpi-flags FILE] "
       "[--until-ci PCT [--max-reps N]] [--points-per-launch N] [--jobs N] [--job-steps]"},
      {"status",
       "mcmclb status STUDY.yaml [--set key=value]... [--out DIR] [--launcher local|slurm|smpi [--platform FILE]] "
       "[--launch P --record-failures STATUS [--failed-setup LINE]]"},
      {"compare", "mcmclb compare A B [--threshold PCT] [--alpha P] [--csv FILE] [--ignore COLUMN[,COLUMN...]]"},
      {"compare", "mcmclb compare DIR --baseline KEY=VALUE[,KEY=VALUE...] [--threshold PCT] [--alpha P] [--csv FILE]"},
      {"predict",
       "mcmclb predict CALIBRATION.csv --run RUN_ID --move single|all --moves N --atoms A[,A...] --sizes M[,M...]"},
      {"advise", mcmclb::advise_usage()},
      {"calibrate", mcmclb::calibrate_usage()},
      {"--version", "mcmclb --version"},
  };
}

/// The usage of one command (its lines), or of every command (command empty), each line wrapped at 120 columns.
std::string usage_of(const std::string& command) {
  std::string text;
  for (const auto& [name, line] : usage_lines()) {
    if (!command.empty() && name != command) continue;
    const std::string lead = text.empty() ? "usage: " : "       ";
    // Pieces that end before each optional flag (a "[" outside brackets), so a wrap never splits a flag.
    std::vector<std::string> pieces(1);
    int depth = 0;
    for (std::size_t k = 0; k < line.size(); ++k) {
      if (line[k] == '[' && depth == 0 && k > 0 && line[k - 1] == ' ') {
        pieces.back().pop_back();  // the space before it
        pieces.emplace_back();
      }
      depth += line[k] == '[' ? 1 : line[k] == ']' ? -1 : 0;
      pieces.back() += line[k];
    }
    const std::string indent(lead.size() + 4, ' ');
    std::string row = lead + pieces.front();
    for (std::size_t k = 1; k < pieces.size(); ++k) {
      if (row.size() + 1 + pieces[k].size() > 120) {
        text += row + "\n";
        row = indent + pieces[k];
      } else {
        row += " " + pieces[k];
      }
    }
    text += row + "\n";
  }
  return text;
}

/// `mcmclb COMMAND --help` (or -h anywhere after the command): that command's usage, and advise's flags one a
/// line. Nothing else is read or checked.
bool asks_help(int argc, char** argv) {
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") return true;
  }
  return false;
}

#if !MCMCLB_SMPI
int print_help(const std::string& command) {
  std::string text = usage_of(command);
  if (command == "advise") {
    text += "flags:\n" + mcmclb::flags_help(mcmclb::kAdviseFlags) + "the rule:\n" +
            mcmclb::advising::wrapped(std::string(mcmclb::advice::kDecisionRule), 100, "  ") + "the tolerance:\n" +
            mcmclb::advising::wrapped(std::string(mcmclb::advice::kToleranceRule), 100, "  ");
  }
  std::fputs(text.c_str(), stdout);
  return 0;
}
#endif

struct Cli {
  std::string command;
  std::string config;
  std::vector<std::string> overrides;
  std::string out;
  std::string points;         // --points: indices into the study's points
  bool points_given = false;  // --points "" is an error, not "every point"
  bool resume = false;
  bool help = false;  // run --help: run's usage alone
};

/// The commands that start or read studies, with no MPI of their own: the normal build's (the simulation build's
/// program does not compile them).
bool is_host_command(const std::string& command) {
  return command == "plan" || command == "sweep" || command == "status" || command == "compare" ||
         command == "predict" || command == "advise" || command == "keys" || command == "columns";
}

Cli parse_cli(int argc, char** argv) {
  Cli cli;
  if (argc < 2)
    throw InputError(
        "missing command (known: run, plan, sweep, status, compare, predict, advise, calibrate; see --help)");
  cli.command = argv[1];
  if (cli.command == "--help" || cli.command == "-h") return cli;
  if (mpi::kSimulated && is_host_command(cli.command)) {  // one line on rank 0, exit 2 on every simulated rank
    throw InputError("'" + cli.command +
                     "' is a command of mcmclb of the normal build (build/mcmclb), not of the simulation build's "
                     "program, which runs points under smpirun only");
  }
  if (cli.command != "run") {
    throw InputError("unknown command '" + cli.command +
                     "' (known: run, plan, sweep, status, compare, predict, advise, calibrate; see --help)");
  }
  if (asks_help(argc, argv)) {
    cli.help = true;
    return cli;
  }
  std::set<std::string> seen;  // --out and --points: one value each, so a second one is an error, not a winner
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    const std::string flag = a.substr(0, a.find('='));
    if ((flag == "--out" || flag == "--points") && !seen.insert(flag).second) {
      throw InputError(flag + ": given twice (allowed: once)");
    }
    if (a == "--resume") {
      cli.resume = true;
    } else if (a == "--set" || a == "--out" || a == "--points") {
      if (i + 1 >= argc) throw InputError(a + ": missing value (see --help)");
      if (a == "--set") {
        cli.overrides.emplace_back(argv[++i]);
      } else if (a == "--out") {
        cli.out = mcmclb::require_path(a, argv[++i]);
      } else {
        cli.points = argv[++i];
        cli.points_given = true;
      }
    } else if (a.rfind("--set=", 0) == 0) {
      cli.overrides.push_back(a.substr(6));
    } else if (a.rfind("--out=", 0) == 0) {
      cli.out = mcmclb::require_path("--out", a.substr(6));
    } else if (a.rfind("--points=", 0) == 0) {
      cli.points = a.substr(9);
      cli.points_given = true;
    } else if (a.rfind("--", 0) == 0) {
      throw InputError("unknown flag " + a + " (allowed: --set key=value, --out DIR, --points i,j,..., --resume)");
    } else if (cli.config.empty()) {
      cli.config = mcmclb::require_path("CONFIG.yaml", a);
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
    std::string why;
    // More would be too long for the broadcast's int count, and is far beyond any study (build_study refuses it
    // too): refused from its size, before a byte is read.
    const auto content = mcmclb::read_text_file(path, &why, mcmclb::kMaxStudyBytes);
    ok = content ? 1 : 0;
    text = ok ? *content : path + ": cannot read the experiment file: " + why;
  }
  long long length = static_cast<long long>(text.size());
  // Polite broadcasts here and below: the ranks wait while rank 0 reads and checks files, and on more ranks than
  // cores a busy wait would take rank 0's core.
  mpi::bcast_politely(world, &ok, 1, MPI_INT, 0);
  mpi::bcast_politely(world, &length, 1, MPI_LONG_LONG, 0);
  text.resize(static_cast<std::size_t>(length));
  mpi::bcast_politely(world, text.data(), static_cast<int>(length), MPI_CHAR, 0);
  if (!ok) throw InputError(text);
  return text;
}

/// Every rank must hold the same resolved experiment (a hash compared by MIN and MAX reductions).
void check_identical(const std::string& resolved, const mpi::Comm& world) {
  const auto h = static_cast<unsigned long long>(std::hash<std::string>{}(resolved));
  // One reduction gives both: the MIN of ~h is ~(the MAX of h).
  const std::array<unsigned long long, 2> mine = {h, ~h};
  std::array<unsigned long long, 2> least{};
  mpi::allreduce_politely(world, mine.data(), least.data(), 2, MPI_UNSIGNED_LONG_LONG, MPI_MIN);
  if (least[0] != ~least[1]) throw InputError("the resolved experiment differs between ranks (different argv?)");
}

/// The study's points this launch runs: --points (each must fit the launched size), else every point of that size.
std::vector<std::size_t> select_points(const Cli& cli, const mcmclb::Study& study, int nprocs) {
  std::vector<std::size_t> selected;
  if (cli.points_given) {
    for (std::size_t i : mcmclb::parse_point_list(cli.points)) {
      if (i >= study.points.size()) {
        throw InputError("--points: " + std::to_string(i) + " is not a point of " + cli.config + " (it has " +
                         std::to_string(study.points.size()) + ")");
      }
      if (study.points[i].spec.nprocs != nprocs) {
        throw InputError("--points: point " + std::to_string(i) +
                         " needs nprocs=" + std::to_string(study.points[i].spec.nprocs) + " but " +
                         std::to_string(nprocs) + " ranks were launched");
      }
      selected.push_back(i);
    }
    return selected;
  }
  const auto launches = study.launches();  // each in the order its launch runs them (key order)
  if (const auto it = launches.find(nprocs); it != launches.end()) selected = it->second;
  if (selected.empty()) {
    std::vector<std::string> sizes;
    for (const auto& [n, indices] : launches) sizes.push_back(std::to_string(n));
    throw InputError("key nprocs: no point of " + cli.config + " has nprocs=" + std::to_string(nprocs) + " (it has " +
                     mcmclb::join(sizes) + "; launch with mpiexec -n N)");
  }
  return selected;
}

int mcmclb_main(int argc, char** argv) {
  const mpi::Comm world = mpi::Comm::world();
  const int rank = world.rank();
  const Cli cli = parse_cli(argc, argv);
  if (cli.command != "run" || cli.help) {  // mcmclb --help, mcmclb run --help
    if (rank == 0) std::fputs(usage_of(cli.command == "run" ? "run" : "").c_str(), stdout);
    return 0;
  }
  const std::string text = read_on_root(cli.config, world);
  const int nprocs = world.size();
  mcmclb::Study study = mcmclb::build_study(text, cli.overrides, cli.config, nprocs, mcmclb::catalog());
  // A simulation's runs are deterministic, so it runs its points in the study's order (Study::order).
  if constexpr (mpi::kSimulated) study.order = mcmclb::RunOrder::blocked;
  if (study.order_seed_drawn) {  // each rank drew its own (no --set order_seed): rank 0's orders them all
    std::int64_t seed = study.order_seed;
    mpi::bcast_politely(world, &seed, 1, MPI_INT64_T, 0);
    study.order_seed = seed;
  }
  const std::vector<std::size_t> selected = select_points(cli, study, nprocs);
  if (rank == 0) {
    // A trace's speed-ups above their ranks, set aside when it was read (every rank read it): said once, one line
    // each, so that a replay never rests on them unsaid.
    std::set<std::string> said;
    for (const std::size_t i : selected) {
      const mcmclb::WorkloadSpec& w = study.points[i].spec.workload;
      if (w.model != "trace" || !said.insert(w.file).second) continue;
      for (const mcmclb::SetAside& a : mcmclb::load_trace(w.file, w.extrapolate, w.speedups)->set_aside())
        std::fprintf(stderr, "mcmclb: warning: %s\n", mcmclb::set_aside_line(w.file, a).c_str());
    }
  }
  check_identical(text + mcmclb::join(cli.overrides, "\n") + mcmclb::point_list(selected), world);
  // The simulation build's platform must be known before any work (same environment on every rank).
  mcmclb::Provenance probe;
  mcmclb::add_backend_provenance(probe, mpi::backend_name());
  const mcmclb::Backend backend{probe.backend, probe.platform};
  const std::filesystem::path out = cli.out.empty() ? study.out : std::filesystem::path(cli.out);
  // Groups by node are known only where the ranks run: every selected point's layout is checked before the first
  // run and before the output folder is made or touched, so a bad one is one line and exit 2 with nothing written
  // (every rank sees the same node map, so no rank hangs). Points a resume then skips are checked too.
  for (const std::size_t i : selected) (void)mcmclb::initial_group_sizes(study.points[i].spec, world);
  // The line of a refused folder says where it came from: --out, or the experiment's out / name.
  std::optional<mcmclb::results::ResultStore> store =
      mcmclb::open_store(out, cli.out.empty() ? "key out (default results/<experiment>)" : "--out", world);
  const std::vector<std::size_t> points =
      cli.resume ? mcmclb::drop_done_points(study, selected, store, backend, world) : selected;
  const int invalid = mcmclb::run_points(study, points, store, mcmclb::command_line(argc, argv), world, cli.resume);
  if (rank == 0) {
    std::printf("wrote %s/{runs,ranks,events}.csv (%zu runs, P=%d)\n", out.string().c_str(), points.size(), nprocs);
    if (invalid > 0) std::fprintf(stderr, "mcmclb: %d run(s) violated an invariant (valid=false)\n", invalid);
  }
  return invalid > 0 ? 3 : 0;
}

#if !MCMCLB_SMPI
/// plan, sweep, status, compare, predict and advise: no MPI; bad input is one line on stderr and exit code 2.
int without_mpi(int argc, char** argv) {
  const std::string command = argv[1];
  const std::vector<std::string> args(argv + 2, argv + argc);
  try {
    if (command == "compare") return mcmclb::compare_main(args);
    if (command == "predict") return mcmclb::predict_main(args);
    if (command == "advise") return mcmclb::advise_main(args);
    const auto kind = command == "sweep"    ? mcmclb::Command::sweep
                      : command == "status" ? mcmclb::Command::status
                                            : mcmclb::Command::plan;
    const auto options = mcmclb::parse_sweep_options(args, kind);
    if (kind == mcmclb::Command::status) return mcmclb::status_main(options);
    return kind == mcmclb::Command::sweep ? mcmclb::sweep_main(options) : mcmclb::plan_main(options);
  } catch (const InputError& e) {
    std::fprintf(stderr, "mcmclb: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mcmclb: error: %s\n", e.what());
    return 1;
  }
}

/// keys: the key table as Markdown (docs/reference/keys.md); columns: "FILE: col,col,..." for each file of a
/// results folder (docs/reference/columns.md). No MPI, no input.
int print_reference(const std::string& command) {
  if (command == "keys") {
    std::fputs(mcmclb::config_keys_markdown(mcmclb::catalog()).c_str(), stdout);
    return 0;
  }
  const auto schema = mcmclb::results_schema();
  std::vector<mcmclb::results::Table> tables = {schema.runs, schema.ranks, schema.events, schema.failures};
  tables.insert(tables.end(), schema.per_run.begin(), schema.per_run.end());
  for (const auto& t : tables) std::printf("%s: %s\n", t.file.c_str(), mcmclb::join(t.header, ",").c_str());
  std::printf("stopping.csv: %s\n", mcmclb::join(mcmclb::stopping_header(), ",").c_str());      // sweep --until-ci
  std::printf("compare.csv: %s\n", mcmclb::join(mcmclb::compare_header(), ",").c_str());        // mcmclb compare --csv
  std::printf("predict.csv: %s\n", mcmclb::join(mcmclb::predict_header(), ",").c_str());        // mcmclb predict
  std::printf("advice.csv: %s\n", mcmclb::join(mcmclb::advice::advice_header(), ",").c_str());  // mcmclb advise
  std::printf("check.csv: %s\n", mcmclb::join(mcmclb::advising::check_header(), ",").c_str());  // mcmclb advise --check
  return 0;
}
#endif

/// --version: the release a user cites (CMake's project(), CITATION.cff) and the commit the build was stamped with,
/// as provenance records it. No MPI.
int print_version() {
  std::printf("mcmclb %s (commit %s)\n", mcmclb::version(), mcmclb::git_commit());
  return 0;
}

}  // namespace

int main(int raw_argc, char** raw_argv) {
  mcmclb::MainArgs args(raw_argc, raw_argv);  // decoded when a simulated launch passed them through smpirun
  int argc = args.argc();
  char** argv = args.argv();
  if (argc >= 2) {
    const std::string command = argv[1];
    if (command == "--version") return print_version();
#if !MCMCLB_SMPI
    if (command == "keys" || command == "columns") return print_reference(command);
    if (is_host_command(command) && asks_help(argc, argv)) return print_help(command);
    if (is_host_command(command)) return without_mpi(argc, argv);
#endif
    if (command == "calibrate" && asks_help(argc, argv)) {
      std::fputs(usage_of(command).c_str(), stdout);
      return 0;
    }
    if (command == "calibrate") return mcmclb::mpi::run_main(argc, argv, mcmclb::calibrate_main);
  }
  return mcmclb::mpi::run_main(argc, argv, mcmclb_main);
}
