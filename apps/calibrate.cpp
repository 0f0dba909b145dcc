// SPDX-License-Identifier: BSD-3-Clause
// mpiexec -n P mcmclb calibrate [--out DIR] [--ranks MAX] [--reps N] [--cores K] [--busy PCT]: measures the machine
// the ranks run on and writes a SimGrid platform of it, so that `mcmclb advise` and `mcmclb sweep --launcher smpi`
// simulate the user's machine rather than a stock one. What is measured and how it becomes a platform:
// mcmclb/calibrate.hpp.
//
// Every rank parses the same argv, so bad flags are one verdict: one line on rank 0, exit 2 everywhere
// (mpi::run_main), before anything is measured or written. Rank 0 checks --out and the flags file it copies before
// the measurement; it writes the files only at the end, each atomically.
#include "calibrate.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <random>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "mcmclb/calibrate.hpp"
#include "mcmclb/csv.hpp"
#include "mcmclb/mpi.hpp"
#include "mcmclb/provenance.hpp"
#include "mcmclb/run_points.hpp"  // share_root_error
#include "mcmclb/text.hpp"

namespace mcmclb {

namespace {

namespace fs = std::filesystem;
namespace mpi = mcmclb::mpi;
namespace cal = mcmclb::calibrate;

// Under smpirun the times are the simulated platform's, not a machine's: the log says which.
#if MCMCLB_SMPI
constexpr const char* kTimesAre = "simulated";
#else
constexpr const char* kTimesAre = "measured";
#endif

struct Options {
  std::string out = "results/calibrate";
  int ranks = 1024;  // the simulated ranks the platform must hold
  int reps = 5;
  // --cores: the simulated nodes' cores. 0: as measured, the CPUs the job's ranks may use on a node (the union of
  // their masks), which a launch of fewer ranks than cores that binds each to one core counts short.
  int cores = 0;
  // --busy: the busiest host (a share of its CPU time, over 1 s before the timings) calibrate times. Beside other
  // programs the timings are theirs too: one-way times of 100 us where the idle host gives 0.3 us.
  double busy_share = 0.10;
};

Options parse(int argc, char** argv) {
  Options o;
  std::set<std::string> seen;
  for (int i = 2; i < argc; ++i) {
    std::string flag = argv[i], value;
    const auto eq = flag.find('=');
    if (flag.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
    } else if (flag == "--out" || flag == "--ranks" || flag == "--reps" || flag == "--cores" || flag == "--busy") {
      if (i + 1 >= argc) throw InputError(flag + ": missing value (see mcmclb calibrate --help)");
      value = argv[++i];
    }
    if (flag != "--out" && flag != "--ranks" && flag != "--reps" && flag != "--cores" && flag != "--busy") {
      throw InputError("unknown argument '" + printable(flag) +
                       "' of calibrate (allowed: --out DIR, --ranks MAX, --reps N, --cores K, --busy PCT; see mcmclb "
                       "calibrate --help)");
    }
    if (!seen.insert(flag).second) throw InputError(flag + ": given twice (allowed: once)");
    if (flag == "--out") {
      o.out = require_path(flag, value);
    } else if (flag == "--ranks") {
      o.ranks = static_cast<int>(parse_integer_flag(flag, value, 1, 1 << 20, "a count of simulated ranks"));
    } else if (flag == "--reps") {
      o.reps = static_cast<int>(parse_integer_flag(flag, value, 1, 1000, "a count of repetitions"));
    } else if (flag == "--cores") {
      o.cores = static_cast<int>(parse_integer_flag(flag, value, 1, 1 << 16, "a count of cores per node"));
    } else {
      o.busy_share =
          static_cast<double>(parse_integer_flag(flag, value, 0, 100, "a percentage of the host's CPU")) / 100;
    }
  }
  return o;
}

fs::path flags_source() { return fs::path(MCMCLB_SOURCE_DIR) / "configs" / "platforms" / "smpi.cfg"; }

/// Rank 0's verdict on --out and the flags file, before any measuring: an error string, empty when both will do.
/// Writes nothing; make_out_folder() makes the folder once the host is found quiet enough.
std::string check_outputs(const Options& o, std::string& flags) {
  std::string why;
  const auto text = read_text_file(flags_source(), &why);
  if (!text) return flags_source().string() + ": cannot read the flags file to copy: " + why;
  flags = *text;
  std::error_code ec;
  if (fs::exists(o.out, ec) && !fs::is_directory(o.out, ec)) {
    return "--out: " + printable(o.out, 200) + " exists and is not a folder (allowed: a folder, made if missing)";
  }
  return "";
}

/// Makes --out (as every command that writes results does), before the timings: a folder that cannot be made is
/// said before they run. An error string, empty when made.
std::string make_out_folder(const Options& o) {
  std::error_code ec;
  fs::create_directories(o.out, ec);
  return ec ? "--out: cannot make " + printable(o.out, 200) + ": " + ec.message() : "";
}

/// Every rank's node, named by its lowest rank (MPI_Comm_split_type SHARED), on every rank.
std::vector<int> node_of_ranks(const mpi::Comm& world) {
  MPI_Comm raw = MPI_COMM_NULL;
  mpi::check(MPI_Comm_split_type(world.get(), MPI_COMM_TYPE_SHARED, world.rank(), MPI_INFO_NULL, &raw),
             "MPI_Comm_split_type");
  mpi::Comm node = mpi::Comm::adopt(raw);
  int mine = world.rank();
  mpi::allreduce_politely(node, MPI_IN_PLACE, &mine, 1, MPI_INT, MPI_MIN);
  node.free();
  std::vector<int> all(static_cast<std::size_t>(world.size()));
  mpi::check(MPI_Allgather(&mine, 1, MPI_INT, all.data(), 1, MPI_INT, world.get()), "MPI_Allgather");
  return all;
}

/// times.csv: each pair's and call's sizes, their median with its 95 % interval and count, the fitted model's time
/// and its residual against the median (per cent).
std::string csv_of(const std::vector<std::pair<std::string, cal::PairTimes>>& pairs,
                   const std::vector<std::pair<std::string, cal::PairModel>>& models) {
  std::string text = "pair,call,bytes,n,median_us,low_us,high_us,model_us,residual_pct,eager_limit\n";
  for (std::size_t k = 0; k < pairs.size(); ++k) {
    const auto& [pair, t] = pairs[k];
    const cal::PairModel& m = models[k].second;
    for (const char* call : cal::kCalls) {
      for (const auto& s : cal::spreads_of(t, call)) {
        char line[256];
        std::snprintf(line, sizeof line, "%s,%s,%lld,%zu,%.4f,%.4f,%.4f,", pair.c_str(), call,
                      static_cast<long long>(s.bytes), s.n, s.median_s * 1e6, s.low_s * 1e6, s.high_s * 1e6);
        text += line;
        if (const auto model = m.call_s(call, s.bytes)) {
          std::snprintf(line, sizeof line, "%.4f,%.2f", *model * 1e6, 100 * (*model - s.median_s) / s.median_s);
          text += line;
        } else {
          text += ",";  // send and recv from the eager limit on wait for the transfer: no overhead modelled
        }
        text += "," + std::to_string(t.eager_limit) + "\n";
      }
    }
  }
  return text;
}

/// The host's busy share over 1 s, the busiest node's: each node's lowest rank reads its /proc/stat while every
/// other rank waits asleep, so that the ranks themselves count for nothing. Nothing where no node could read it.
/// The simulation build times simulated calls, which no load of the host changes: nothing there.
std::optional<double> busiest_node(const mpi::Comm& world, const std::vector<int>& node) {
#if MCMCLB_SMPI
  (void)world;
  (void)node;
  return std::nullopt;
#else
  double share = -1;
  if (node[static_cast<std::size_t>(world.rank())] == world.rank()) {
    share = host_busy_share(std::chrono::milliseconds(1000)).value_or(-1.0);
  }
  share = mpi::max_politely(world, share);
  return share >= 0 ? std::optional<double>(share) : std::nullopt;
#endif
}

/// The widest 95 % interval among a pair's ping-pong sizes, as a fraction of its median: a noisy host's mark.
std::pair<double, std::int64_t> widest_interval(const cal::PairTimes& t) {
  std::pair<double, std::int64_t> widest{0.0, 0};
  for (const auto& s : t.pingpong) {
    const double w = s.median_s > 0 ? (s.high_s - s.low_s) / 2 / s.median_s : 0.0;
    if (w > widest.first) widest = {w, s.bytes};
  }
  return widest;
}

/// An interval wider than this (half its width over the median) at some size marks the host as noisy.
constexpr double kNoisyHalfWidth = 0.25;

}  // namespace

std::string calibrate_usage() {
  return "mpiexec -n P mcmclb calibrate [--out DIR] [--ranks MAX] [--reps N] [--cores K] [--busy PCT]";
}

int calibrate_main(int argc, char** argv) {
  const mpi::Comm world = mpi::Comm::world();
  const int rank = world.rank(), nprocs = world.size();
  const Options o = parse(argc, argv);
  if (nprocs < 2) {
    throw InputError(
        "calibrate: times messages between two ranks, but 1 was launched (allowed: mpiexec -n 2 or "
        "more; ranks on two nodes or more also time the network)");
  }
  const std::vector<int> node = node_of_ranks(world);
  std::string flags, error;
  if (rank == 0) error = check_outputs(o, flags);
  share_root_error<InputError>(error, world);
  // A busy host is refused before anything is timed or written: its timings would be the other programs' too.
  const std::optional<double> busy_before = busiest_node(world, node);
  if (busy_before && *busy_before > o.busy_share) {
    char line[400];
    std::snprintf(line, sizeof line,
                  "calibrate: the host is %.0f %% busy (its CPU time over 1 s, /proc/stat), more than the %.0f %% "
                  "--busy allows: its timings would be the other programs' too; nothing measured or written "
                  "(allowed: calibrate when the host is quieter, or --busy %d to accept this load)",
                  100 * *busy_before, 100 * o.busy_share, std::min(100, static_cast<int>(100 * *busy_before) + 1));
    throw InputError(line);
  }
  if (rank == 0) error = make_out_folder(o);
  share_root_error<InputError>(error, world);

  const mpi::NodeOccupancy occupancy = mpi::node_occupancy(world);
  int intra = -1, inter = -1;  // rank 0's partner on its own node, and on another node
  for (int r = 1; r < nprocs; ++r) {
    if (node[static_cast<std::size_t>(r)] == node[0] && intra < 0) intra = r;
    if (node[static_cast<std::size_t>(r)] != node[0] && inter < 0) inter = r;
  }
  cal::Machine m;
  m.ranks = nprocs;
  m.nodes = static_cast<int>(std::set<int>(node.begin(), node.end()).size());
  m.cores_per_node = occupancy.cores_available > 0 ? occupancy.cores_available : occupancy.ranks_on_node;
  if (m.cores_per_node <= 0) m.cores_per_node = static_cast<int>(std::count(node.begin(), node.end(), node[0]));
  const bool cores_given = o.cores > 0;
  if (cores_given) m.cores_per_node = o.cores;
  const std::vector<std::int64_t> sizes = cal::message_sizes();
  // The order of the timings, drawn on rank 0 and the same on every rank; recorded in the platform's head.
  std::int64_t seed = 0;
  if (rank == 0) seed = static_cast<std::int64_t>(std::random_device{}() >> 1);
  mpi::bcast_politely(world, std::span<std::int64_t>(&seed, 1), 0);
  if (rank == 0) {
    std::printf(
        "calibrate: %d ranks on %d node(s) of %d core(s)%s; host %s busy; timing MPI_Send, MPI_Isend, MPI_Recv and a "
        "ping-pong at %zu sizes, %d repetitions in random order (seed %lld)%s\n",
        nprocs, m.nodes, m.cores_per_node, cores_given ? " (--cores)" : "",
        busy_before ? (std::to_string(static_cast<int>(std::lround(100 * *busy_before))) + " %").c_str() : "(not read)",
        sizes.size(), o.reps, static_cast<long long>(seed),
        occupancy.oversubscribed() ? " (WARNING: more ranks than cores on a node: the times include waiting "
                                     "for a core)"
                                   : "");
    std::fflush(stdout);
  }
  std::vector<std::pair<std::string, cal::PairTimes>> measured;
  std::vector<std::pair<std::string, cal::PairModel>> fitted;
  std::vector<std::string> warnings;  // one line each, printed and kept in the platform's head
  // Rank 0 against a partner (none where it is 0): the timings, then on rank 0 their fit and its check.
  const auto time_pair = [&](int partner, const char* name, cal::PairModel& model, bool& has) {
    if (partner <= 0) return;
    cal::PairTimes times = cal::time_pair(world, partner, sizes, o.reps, static_cast<std::uint64_t>(seed));
    if (rank != 0) return;
    model = cal::fit_pair(times);
    has = true;
    const std::string where = std::string(name) == "intra" ? "inside a node" : "between nodes";
    if (const auto missed = cal::misses(model, times); !missed.empty()) {
      warnings.push_back(where + ": " + cal::misses_words(missed));
    }
    if (model.overhead_scale < 1) {
      char line[300];
      std::snprintf(line, sizeof line,
                    "%s: MPI_Send's and MPI_Recv's overheads, timed apart, exceed %.0f %% of a ping-pong's one-way "
                    "time; smpi/os and smpi/or are them x %.3g, so that the model meets the ping-pong",
                    where.c_str(), 100 * cal::kOverheadShare, model.overhead_scale);
      warnings.push_back(line);
    }
    if (const auto [wide, bytes] = widest_interval(times); wide > kNoisyHalfWidth) {
      char line[300];
      std::snprintf(line, sizeof line,
                    "%s: the ping-pong's 95 %% interval at %lld B is +-%.0f %% of its median (more than %.0f %%): a "
                    "noisy host; its spread is in times.csv",
                    where.c_str(), static_cast<long long>(bytes), 100 * wide, 100 * kNoisyHalfWidth);
      warnings.push_back(line);
    }
    measured.emplace_back(name, std::move(times));
    fitted.emplace_back(name, model);
  };
  time_pair(intra, "intra", m.intra, m.has_intra);
  time_pair(inter, "inter", m.inter, m.has_inter);
  m.allreduce_s = cal::allreduce_time(world, 50);
  if (rank == 0) {
    const cal::PollCosts poll = cal::poll_costs(100000);
    m.test_s = poll.test_s;
    m.iprobe_s = poll.iprobe_s;
  }
  // The load again, now that the timings are done: a program that started meanwhile is said, not hidden.
  const std::optional<double> busy_after = busiest_node(world, node);
  if (rank == 0 && busy_after && *busy_after > o.busy_share) {
    char line[200];
    std::snprintf(line, sizeof line,
                  "the host was %.0f %% busy in the 1 s after the timings (more than the %.0f %% --busy allows): "
                  "some timings may be the other programs' too",
                  100 * *busy_after, 100 * o.busy_share);
    warnings.push_back(line);
  }
  if (rank == 0) {
    char line[200];
    std::snprintf(line, sizeof line,
                  "Host load (/proc/stat, 1 s): %s before the timings, %s after; timing order seed %lld",
                  busy_before ? (std::to_string(std::lround(100 * *busy_before)) + " %").c_str() : "unknown",
                  busy_after ? (std::to_string(std::lround(100 * *busy_after)) + " %").c_str() : "unknown",
                  static_cast<long long>(seed));
    m.notes.push_back(line);
    for (const auto& w : warnings) m.notes.push_back("WARNING: " + w);
  }

  error.clear();
  if (rank == 0) {
    Provenance p = collect_provenance(mpi::library_version(), nprocs);
    p.command_line = command_line(argc, argv);
    p.nodes = occupancy.nodes;
    p.node_layout = occupancy.layout;
    p.ranks_per_node = occupancy.ranks_on_node;
    p.cores_available = occupancy.cores_available;
    p.oversubscribed = occupancy.known() ? (occupancy.oversubscribed() ? "true" : "false") : "";
    const std::vector<std::string> comments = {
        "MPI library: " + p.mpi_library,
        "Nodes: " + p.node_layout + " (host[ranks]/cpus)" + (cores_given ? "; cores per node from --cores" : ""),
        "Date (UTC): " + p.utc_start, "Command: " + p.command_line + " (in " + p.working_dir + ")",
        "mcmclb commit: " + p.git_commit + ", launcher: " + (p.launcher.empty() ? "unknown" : p.launcher)};
    const cal::Shape shape = cal::shape_for(o.ranks, m.cores_per_node);
    const fs::path out(o.out);
    for (const auto& [pair, model] : fitted) {
      if (model.bandwidth_Bps() <= 0) {
        error = "calibrate: the " + pair +
                " pair's one-way times did not grow with the size in any piece of the fit, so they give no bandwidth; "
                "nothing written (rerun on an idle allocation)";
      }
    }
    try {
      if (!error.empty()) throw std::runtime_error(error);
      csv::write_atomically(out / "times.csv", csv_of(measured, fitted));
      // provenance.csv's columns, with the facts that a study's runs.csv holds instead in front.
      csv::Row header = {"git_commit", "mpi_library", "nprocs", "host", "utc_start"};
      csv::Row row = {p.git_commit, p.mpi_library, std::to_string(p.nprocs), p.host, p.utc_start};
      header.insert(header.end(), provenance_header().begin() + 1, provenance_header().end());
      const csv::Row rest = provenance_row("", p);
      row.insert(row.end(), rest.begin() + 1, rest.end());
      const std::string prov = csv::line(header) + csv::line(row);
      csv::write_atomically(out / "provenance.csv", prov);
      csv::write_atomically(out / "smpi.cfg", "# smpirun's flags for " + (out / "calibrated.xml").string() +
                                                  ", copied by mcmclb calibrate from configs/platforms/smpi.cfg\n" +
                                                  flags);
      csv::write_atomically(out / "calibrated.hosts", cal::hostfile(shape, m.cores_per_node, o.ranks));
      csv::write_atomically(out / "calibrated.xml", cal::platform_xml(m, shape, comments));
    } catch (const std::exception& e) {
      if (error.empty()) error = std::string("cannot write the calibration: ") + e.what();
    }
    if (error.empty()) {
      for (std::size_t k = 0; k < fitted.size(); ++k) {
        const auto& [pair, fit] = fitted[k];
        const cal::PairTimes& t = measured[k].second;
        double worst = 0;  // the fit's largest residual against a ping-pong median, per cent
        std::int64_t worst_at = 0;
        for (const auto& s : t.pingpong) {
          const double r = 100 * (fit.one_way_s(s.bytes) - s.median_s) / s.median_s;
          if (std::fabs(r) > std::fabs(worst)) std::tie(worst, worst_at) = std::make_tuple(r, s.bytes);
        }
        std::string breaks;
        for (std::size_t i = 1; i < fit.network.pieces.size(); ++i) {
          // The first message size of each piece, not its payload: the sizes the user's times.csv lists.
          breaks +=
              (breaks.empty() ? "" : ", ") + std::to_string(fit.network.pieces[i].from - cal::kSmpiEnvelope) + " B";
        }
        std::printf(
            "calibrate: %s network latency %.3f us, bandwidth %.1f MB/s, breakpoints %s; at 8 B os %.3f us, ois "
            "%.3f us, or %.3f us; eager limit %lld B; the fit's largest residual %+.1f %% (at %lld B; every size's "
            "in times.csv) (%s)\n",
            pair == "intra" ? "inside a node:" : "between nodes:", fit.latency_s() * 1e6, fit.bandwidth_Bps() / 1e6,
            breaks.empty() ? "none" : breaks.c_str(), std::max(0.0, fit.os.at(8)) * 1e6,
            std::max(0.0, fit.ois.at(8)) * 1e6, std::max(0.0, fit.orecv.at(8)) * 1e6,
            static_cast<long long>(fit.eager_limit), worst, static_cast<long long>(worst_at), kTimesAre);
      }
      for (const auto& w : warnings) std::printf("calibrate: WARNING: %s\n", w.c_str());
      if (!m.has_inter)
        std::printf("calibrate: between nodes: not measured (one node); the links copy the node's times\n");
      std::printf("calibrate: MPI_Allreduce of 8 bytes over %d ranks %.3f us, MPI_Test %.3f us, MPI_Iprobe %.3f us\n",
                  nprocs, m.allreduce_s * 1e6, m.test_s * 1e6, m.iprobe_s * 1e6);
      std::printf(
          "wrote %s/{calibrated.xml,calibrated.hosts,smpi.cfg,times.csv,provenance.csv} (a platform of "
          "%d nodes, up to %d simulated ranks)\n  use: mcmclb advise ... --platform %s/calibrated.xml "
          "--smpi-flags %s/smpi.cfg\n",
          o.out.c_str(), shape.nodes, o.ranks, o.out.c_str(), o.out.c_str());
      std::fflush(stdout);
    }
  }
  share_root_error<OutputError>(error, world);
  return 0;
}

}  // namespace mcmclb
