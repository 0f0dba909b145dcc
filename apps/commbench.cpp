// SPDX-License-Identifier: BSD-3-Clause
// mcmclb-commbench: communicator creation (and free) cost per method and output group size, the paper's Fig. 1.
// Built twice: mcmclb-commbench (MPI) and mcmclb-commbench-sim (SimGrid SMPI, simulated time); the
// commbench library (mcmclb/commbench.hpp) says what the two share and how their timing loops differ.
//
// Methodology: every iteration synchronises MPI_COMM_WORLD, times the operation on every rank with MPI_Wtime,
// and MAX-reduces the elapsed time. In the MPI build that time is fed to Google Benchmark as manual time, with
// iteration counts fixed per benchmark from a MAX-reduced pilot, so every rank runs exactly the same iterations
// (Google Benchmark's own adaptive counts and warm-up use each rank's local clock and could diverge, deadlocking
// the collectives). Ranks outside a group-collective creation wait in a sleeping nonblocking reduction, not a
// spinning one, so an oversubscribed machine measures the members' work. Only rank 0 reports.
//
// --groups FILE measures, instead of one group of each size, the creation of a whole layout of walker groups at
// once (each rank creates its own group's communicator), described in the experiment files' YAML form:
// `groups: {sizes: [...]}` or `groups: {by: node}` / `{by: node, size: K}`. --groups-of K is the layout of
// consecutive groups of K: with `create`, every rank calls MPI_Comm_create over WORLD with its own small group, the
// pattern in which one library once cost about 100 times another (many 3-rank groups at 1K processes).
//
// --live-communicators CAP measures no time: per method it creates communicators over every rank and keeps them
// all, until the library refuses one or CAP are live, and reports the count and the library's own error. Context
// ids are a per-process resource (MPICH 4.0 has 2048 of them, some used by MPI itself), so a code that keeps one
// communicator per walker group and regroups often can run out of them where the count is small.
#include "mcmclb/commbench.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "mcmclb/config.hpp"
#include "mcmclb/csv.hpp"
#include "mcmclb/group_comm.hpp"
#include "mcmclb/kernel.hpp"
#include "mcmclb/mpi.hpp"
#include "mcmclb/provenance.hpp"
#include "mcmclb/smpirun_args.hpp"
#include "mcmclb/study.hpp"
#include "mcmclb/text.hpp"

namespace mcmclb::commbench {

namespace {

using mcmclb::mpi::InputError;
namespace mpi = mcmclb::mpi;
namespace csv = mcmclb::csv;

const char* const kUsage =
    mpi::kSimulated
        ? "usage: smpirun -np P ... mcmclb-commbench-sim [--methods m1,m2,...] [--sizes n1,n2,...] [--reps N]\n"
          "                   [--warmup N] [--filter REGEX] [--out FILE.csv] [--groups FILE.yaml | --groups-of K]\n"
          "                   [--resume yes]\n"
          "(simulated time, one iteration per repetition; --rep-time is accepted and ignored; MCMCLB_PLATFORM must\n"
          "name the platform file given to smpirun; see docs/guide/simulation.md)"
        : "usage: mpiexec -n P mcmclb-commbench [--methods m1,m2,...] [--sizes n1,n2,...] [--reps N] [--warmup N]\n"
          "                                    [--rep-time SECONDS] [--filter REGEX] [--out FILE.csv] [--groups "
          "FILE.yaml]\n"
          "                                    [--groups-of K] [--resume yes]\n"
          "       mpiexec -n P mcmclb-commbench --live-communicators CAP [--methods m1,m2,...] [--out FILE.csv]\n"
          "       mcmclb-commbench --version\n"
          "(--groups-of K: every rank in a group of K consecutive ranks, all created at once; --live-communicators:\n"
          "how many communicators over every rank each method keeps alive before the library refuses one, up to CAP;\n"
          "its --out defaults to results/commbench-live.csv)";

/// What --help, the refusal of --methods and the summary say about the methods: "" when this build supports every
/// one, else a line per method it lacks, "  from_group: needs ..., which ... lacks" (unsupported_reason()).
std::string unsupported_lines() {
  std::string lines;
  for (const auto& m : creation_methods()) {
    if (!m.supported) lines += "  " + std::string(m.name) + ": " + unsupported_reason(m) + "\n";
  }
  return lines;
}

std::vector<std::string_view> supported_names() {
  std::vector<std::string_view> names;
  for (const auto& m : measured_methods()) {
    if (m.supported) names.push_back(m.name);
  }
  return names;
}

/// --help: the usage, the methods this build measures (the default of --methods) and those it cannot, with why.
std::string usage() {
  std::string text = std::string(kUsage) + "\nmethods: " + mcmclb::join(supported_names()) + "\n";
  const std::string lacking = unsupported_lines();
  if (!lacking.empty()) text += "not supported by this build (refused by --methods, not measured):\n" + lacking;
  return text;
}

/// A comma-separated list with no empty item: "", ",," or "a,,b" is a mistake, not "use the defaults".
std::vector<std::string> split_list(const std::string& flag, const std::string& text, const std::string& what) {
  std::vector<std::string> items;
  std::stringstream in(text + ",");  // so a trailing comma shows up as an empty item
  for (std::string item; std::getline(in, item, ',');) {
    if (item.empty()) {
      throw InputError(flag + ": '" + mcmclb::printable(text) +
                       "' has an empty item; expected a comma-separated list of " + what +
                       " (leave the flag out for the defaults)");
    }
    items.push_back(item);
  }
  return items;
}

int parse_int(const std::string& flag, const std::string& text, int lo, int hi) {
  return static_cast<int>(mcmclb::parse_integer_flag(flag, text, lo, hi, "an integer"));
}

Options parse(int argc, char** argv, int nprocs) {
  Options o;
  std::set<std::string> seen;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) throw InputError(flag + ": unknown flag or missing value (see --help)");
    // Every flag takes one value: given twice, one of the two would be dropped without a word.
    if (!seen.insert(flag).second) throw InputError(flag + ": given twice (allowed: once)");
    const std::string value = argv[++i];
    if (flag == "--methods") {
      o.methods = split_list(flag, value, "method names");
      for (const auto& m : o.methods) {
        const auto all = measured_methods();
        const auto it = std::find_if(all.begin(), all.end(), [&](const MethodInfo& info) { return info.name == m; });
        if (it == all.end()) {
          throw InputError("--methods: unknown method '" + m + "' (known: " + mcmclb::join(method_names()) + ")");
        }
        if (!it->supported) {
          throw InputError("--methods: " + m + " is not supported by this build: " + unsupported_reason(*it) +
                           " (supported: " + mcmclb::join(supported_names()) + ")");
        }
      }
    } else if (flag == "--sizes") {
      for (const auto& s : split_list(flag, value, "group sizes"))
        o.sizes.push_back(parse_int("--sizes", s, 1, nprocs));
    } else if (flag == "--reps") {
      o.repetitions = parse_int(flag, value, 1, 1000);
    } else if (flag == "--warmup") {
      o.warmup_iterations = parse_int(flag, value, 0, 1000);
    } else if (flag == "--rep-time") {
      char* end = nullptr;
      o.repetition_s = std::strtod(value.c_str(), &end);
      if (end == value.c_str() || *end != '\0' || !(o.repetition_s > 0.0 && o.repetition_s <= 3600.0)) {
        throw InputError("--rep-time: '" + value + "' is not a number of seconds in (0, 3600]");
      }
    } else if (flag == "--filter") {
      try {
        std::regex check(value);
      } catch (const std::regex_error&) {
        throw InputError("--filter: '" + value + "' is not a valid regular expression");
      }
      o.filter = value;
    } else if (flag == "--out") {
      o.out = mcmclb::require_path(flag, value);
    } else if (flag == "--groups") {
      o.groups_file = mcmclb::require_path(flag, value);
    } else if (flag == "--groups-of") {
      o.groups_of = parse_int(flag, value, 1, nprocs);
    } else if (flag == "--live-communicators") {
      if constexpr (mpi::kSimulated) {
        throw InputError(flag +
                         ": not in the simulation build (it counts a real MPI library's communicators; "
                         "use mcmclb-commbench)");
      }
      o.live_cap = parse_int(flag, value, 1, 10000000);
    } else if (flag == "--resume") {
      if (value != "yes" && value != "no")
        throw InputError("--resume: '" + value + "' is not allowed (allowed: yes, no)");
      o.resume = value == "yes";
    } else {
      throw InputError("unknown flag " + flag + " (see --help)");
    }
  }
  if (seen.count("--groups") && seen.count("--groups-of")) {
    throw InputError("--groups-of: cannot be combined with --groups (allowed: one layout)");
  }
  if (o.live_cap > 0) {
    // It times nothing: a flag that shapes a timing would be dropped without a word.
    for (const char* timing :
         {"--sizes", "--reps", "--warmup", "--rep-time", "--filter", "--groups", "--groups-of", "--resume"}) {
      if (seen.count(timing)) {
        throw InputError(std::string(timing) + ": not with --live-communicators (allowed with it: --methods, --out)");
      }
    }
    if (!seen.count("--out")) o.out = "results/commbench-live.csv";
    if (std::find(o.methods.begin(), o.methods.end(), mcmclb::kCommbenchFloor) != o.methods.end()) {
      throw InputError("--methods: floor creates no communicator, so it has no place with --live-communicators");
    }
  }
  if (o.methods.empty()) {  // what the sweep's time estimate counts too (commbench_methods)
    std::vector<std::string> supported;
    for (const auto& m : creation_methods()) {
      if (m.supported) supported.emplace_back(m.name);
    }
    o.methods = mcmclb::commbench_methods({}, supported);
    if (o.live_cap > 0) std::erase(o.methods, std::string(mcmclb::kCommbenchFloor));
  }
  if (o.sizes.empty()) o.sizes = mcmclb::commbench_sizes(nprocs);
  return o;
}

/// --groups FILE: rank 0 reads it, every rank parses the same text (the experiment parser: only groups.* may be
/// set) and resolves the layout (by node: MPI_Comm_split_type), so every rank reaches the same verdict.
void resolve_groups(Options& o, const mpi::Comm& world) {
  std::string text, why;
  int length = -1;
  if (world.rank() == 0) {
    // read_text_file refuses a folder (an ifstream would read it as an empty file: "holds no keys"), and a file
    // larger than any experiment file from its size, before reading it.
    const auto content = mcmclb::read_text_file(o.groups_file, &why, mcmclb::kMaxStudyBytes);
    if (content) {
      text = *content;
      length = static_cast<int>(text.size());
    }
  }
  mpi::check(MPI_Bcast(&length, 1, MPI_INT, 0, world.get()), "MPI_Bcast");
  if (length < 0) {
    throw InputError("--groups: cannot read " + o.groups_file + (world.rank() == 0 ? ": " + why : std::string()) +
                     " (allowed: a YAML file with groups:)");
  }
  text.resize(static_cast<std::size_t>(length));
  mpi::check(MPI_Bcast(text.data(), length, MPI_CHAR, 0, world.get()), "MPI_Bcast");
  const mcmclb::Experiment e = mcmclb::parse_experiment(text, {}, o.groups_file);
  if (e.groups.by == mcmclb::GroupsSpec::By::G) {
    throw InputError("--groups: " + o.groups_file +
                     " describes no groups (allowed: groups: {sizes: [...]} or groups: {by: node[, size: K]})");
  }
  mcmclb::RunSpec run;
  run.groups = e.groups;
  o.group_layout = mcmclb::initial_group_sizes(run, world);  // InputError when they do not fit the ranks
  o.groups_text = e.groups.text();
}

/// A summary cell's number: one decimal, or three below 1 us, where range's costs (tens of ns) would read 0.0.
std::string cell_number(double us) {
  char text[32];
  std::snprintf(text, sizeof text, us < 1.0 ? "%.3f" : "%.1f", us);
  return text;
}

/// Per op, two tables of median [min-max] over the repetitions: first of each repetition's mean iteration (the
/// CSV's time_us, what MPI benchmarks report), then of its median iteration (iter_median_us), which a rare
/// preemption inside the timed window cannot move. Only the methods and ops --filter selected get a column/table.
void print_summary(const std::vector<Sample>& samples, const Options& o, int nprocs) {
  if (const std::string lacking = unsupported_lines(); !lacking.empty()) {
    std::printf("\nNot measured, not supported by this build:\n%s", lacking.c_str());
  }
  for (Op op : {Op::create, Op::free}) {
    std::vector<std::string> methods;
    for (const auto& m : o.methods) {
      if (std::any_of(samples.begin(), samples.end(),
                      [&](const Sample& s) { return s.spec.method == m && s.spec.op == op; })) {
        methods.push_back(m);
      }
    }
    if (methods.empty()) continue;
    for (const bool use_median : {false, true}) {
      std::printf("\n%s cost per method, P = %d, %s: median [min-max] over %d repetitions, microseconds\n",
                  op == Op::create ? "Creation" : "Free", nprocs,
                  use_median ? "median iteration (iter_median_us)" : "mean iteration (time_us)", o.repetitions);
      std::printf("%10s", "size");
      for (const auto& m : methods) std::printf(" %26s", m.c_str());
      std::printf("\n");
      for (int size : o.sizes) {
        if (size > 0) {
          std::printf("%10d", size);
        } else {
          std::printf("%10s", "groups");
        }
        for (const auto& m : methods) {
          std::vector<double> t;
          for (const auto& s : samples) {
            if (s.spec.method == m && s.spec.op == op && s.spec.group_size == size) {
              t.push_back(use_median ? s.median_us : s.time_us);
            }
          }
          if (t.empty()) {
            std::printf(" %26s", "-");
            continue;
          }
          const std::string cell = cell_number(median_in_place(t)) + " [" +
                                   cell_number(*std::min_element(t.begin(), t.end())) + "-" +
                                   cell_number(*std::max_element(t.begin(), t.end())) + "]";
          std::printf(" %26s", cell.c_str());
        }
        std::printf("\n");
      }
    }
  }
}

/// Why the output file cannot be written ("" if it can): checked on rank 0 before the benchmark, creating its
/// folder and writing a probe file there, since permission bits do not tell (root, read-only mounts, /proc).
std::string output_problem(const std::string& out) {
  namespace fs = std::filesystem;
  const fs::path path(out);
  const std::string shown = mcmclb::printable(out, 200);
  std::error_code ec;
  if (out.empty()) return "--out: the path is empty";
  // Only a regular file is replaced (by a rename): as root, --out /dev/null made /dev/null a regular file.
  struct stat st {};
  if (::stat(out.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    return "--out: " + shown + " is " + std::string(mcmclb::file_kind(st.st_mode)) +
           ", not a regular file (allowed: a FILE.csv path, new or a regular file)";
  }
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  if (!fs::exists(dir, ec)) {
    fs::create_directories(dir, ec);
    if (ec) return "--out: " + shown + ": cannot create its folder (" + ec.message() + ")";
  }
  if (!fs::is_directory(dir, ec)) return "--out: " + shown + ": its folder is not a folder";
  // The probe is the temporary file write_atomically() will write (this process's): so a name too long for it (a
  // 300-byte file name), like a folder it cannot write in, is found before the benchmark, not after.
  const std::string probe = out + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return "--out: " + shown + ": cannot write in its folder (" + std::strerror(errno) + ")";
  const bool wrote = ::write(fd, "x", 1) == 1;
  ::close(fd);
  ::unlink(probe.c_str());
  if (!wrote) return "--out: " + shown + ": cannot write in its folder";
  return "";
}

/// Rank 0 checks the output path; every rank gets the same verdict (exit 2 everywhere, one line on rank 0).
void check_output(const std::string& out, const mpi::Comm& world) {
  const std::string problem = mpi::bcast_text(world.rank() == 0 ? output_problem(out) : std::string(), 0, world);
  if (!problem.empty()) throw InputError(problem);
}

int live_main(const Options& o, const mpi::Comm& world, const mcmclb::Provenance& p) {
  std::vector<LiveCount> counts;
  for (const auto& method : o.methods) {
    if (world.rank() == 0) {
      std::printf("%s: counting ...\n", method.c_str());
      std::fflush(stdout);
    }
    counts.push_back(count_live(method, o.live_cap, world));
    if (world.rank() == 0) {
      const auto& c = counts.back();
      std::printf("%s: %d live%s\n", c.method.c_str(), c.live,
                  c.refused ? (", then refused: " + c.error).c_str() : " (the cap; none refused)");
      std::fflush(stdout);
      csv::write_atomically(o.out, live_csv(counts, o, p));
    }
  }
  if (world.rank() != 0) return 0;
  std::printf("\nLive communicators over all %d ranks per method, before the library refused one (cap %d)\n", p.nprocs,
              o.live_cap);
  std::printf("%-14s %10s  %s\n", "method", "live", "what ended it");
  for (const auto& c : counts) {
    std::printf("%-14s %10d  %s\n", c.method.c_str(), c.live, c.refused ? c.error.c_str() : "the cap");
  }
  std::printf("\nwrote %s (%zu rows)\n", o.out.c_str(), counts.size());
  return 0;
}

int commbench_main(int argc, char** argv) {
  const mpi::Comm world = mpi::Comm::world();
  const int rank = world.rank();
  const int nprocs = world.size();
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") {
      if (rank == 0) std::printf("%s", usage().c_str());
      return 0;
    }
  }
  Options o = parse(argc, argv, nprocs);
  if (o.live_cap > 0) {
    check_output(o.out, world);
    mcmclb::Provenance provenance = mcmclb::collect_provenance(mpi::library_version(), nprocs);
    return live_main(o, world, provenance);
  }
  if (!o.groups_file.empty()) {
    resolve_groups(o, world);
    o.sizes = {0};
  } else if (o.groups_of > 0) {
    mcmclb::GroupsSpec layout;
    layout.by = mcmclb::GroupsSpec::By::sizes;
    for (int left = nprocs; left > 0; left -= o.groups_of) layout.sizes.push_back(std::min(o.groups_of, left));
    o.group_layout = layout.sizes;
    o.groups_text = layout.text();
    o.sizes = {0};
  }
  // Every benchmark the filter selects, known before any runs: a filter that selects none is an input error, and
  // an existing CSV is never replaced by an empty one.
  std::vector<Spec> selected;
  const std::regex filter(o.filter);
  for (const auto& b : mcmclb::commbench_benchmarks(o.methods, o.sizes)) {
    const Spec spec{b.method, b.op == mcmclb::kCommbenchOps[0] ? Op::create : Op::free, b.group_size};
    if (std::regex_search(spec_name(spec), filter)) selected.push_back(spec);
  }
  if (selected.empty()) {
    throw InputError("--filter: '" + mcmclb::printable(o.filter) + "' matches no benchmark (names look like " +
                     spec_name(Spec{o.methods.front(), Op::create, o.sizes.front()}) + ")");
  }
  check_output(o.out, world);
  // --resume: the benchmarks --out already holds complete are not run again, and their rows are kept; a
  // benchmark's rows that are not complete (a file of another --reps) are dropped and it runs again, so no
  // repetition is ever recorded twice. Every rank learns the same list from rank 0.
  std::vector<csv::Row> kept;
  if (o.resume) {
    std::string done_keys, problem;
    if (rank == 0) {
      std::optional<std::vector<csv::Row>> rows;
      try {
        rows = mcmclb::read_commbench_csv(o.out);
      } catch (const InputError& e) {
        problem = e.what();
      }
      if (rows) {
        const auto complete = mcmclb::commbench_complete(*rows, nprocs, o.repetitions);
        for (const auto& row : *rows) {
          const int size = std::atoi(row[3].c_str());
          if (complete.count(mcmclb::CommbenchBenchmark{row[0], row[1], size, row[14]}.key()) > 0 &&
              row[2] == std::to_string(nprocs)) {
            kept.push_back(row);
          }
        }
        for (const auto& key : complete) done_keys += key + "\n";
      }
    }
    problem = mpi::bcast_text(problem, 0, world);  // a file that is no commbench CSV: exit 2 on every rank
    if (!problem.empty()) throw InputError(problem);
    std::set<std::string> done;
    std::stringstream keys(mpi::bcast_text(done_keys, 0, world));
    for (std::string key; std::getline(keys, key);) done.insert(key);
    const std::size_t all = selected.size();
    std::erase_if(selected, [&](const Spec& spec) { return done.count(recorded_as(spec, o).key()) > 0; });
    if (rank == 0) {
      std::printf("%s: %zu of %zu benchmarks already done, %zu to run\n", o.out.c_str(), all - selected.size(), all,
                  selected.size());
    }
    if (selected.empty()) {
      if (rank == 0) std::printf("%s already done: nothing to run\n", o.out.c_str());
      return 0;
    }
  }
  mcmclb::Provenance provenance = mcmclb::collect_provenance(mpi::library_version(), nprocs);
  provenance.command_line = mcmclb::command_line(argc, argv);
  // Simulation build: the platform file and --cfg flags, from the environment (InputError on every rank if unset).
  mcmclb::add_backend_provenance(provenance, mpi::backend_name());

  const Progress progress = [&](const std::vector<Sample>& so_far) {
    if (o.resume) csv::write_atomically(o.out, samples_csv(kept, so_far, o, provenance));
  };
  const std::vector<Sample> samples = measure(selected, o, world, provenance, progress);
  if (rank == 0) {
    print_summary(samples, o, nprocs);
    csv::write_atomically(o.out, samples_csv(kept, samples, o, provenance));
    std::printf("\nwrote %s (%zu rows%s)\n", o.out.c_str(), kept.size() + samples.size(),
                kept.empty() ? "" : (", " + std::to_string(kept.size()) + " of them kept from before").c_str());
  }
  return 0;
}

}  // namespace

}  // namespace mcmclb::commbench

int main(int raw_argc, char** raw_argv) {
  mcmclb::MainArgs args(raw_argc, raw_argv);  // decoded when a simulated launch passed them through smpirun
  // The release and commit, as mcmclb --version prints them; before MPI starts, so no launcher is needed.
  if (args.argc() >= 2 && std::string(args.argv()[1]) == "--version") {
    std::printf("mcmclb-commbench %s (commit %s)\n", mcmclb::version(), mcmclb::git_commit());
    return 0;
  }
  return mcmclb::mpi::run_main(args.argc(), args.argv(), mcmclb::commbench::commbench_main);
}
