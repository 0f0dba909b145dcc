// SPDX-License-Identifier: BSD-3-Clause
// mpiexec -n P mcmclb calibrate [--out DIR] [--ranks MAX] [--reps N] [--cores K]: measures the machine the ranks run on
// and writes a SimGrid platform of it, so that `mcmclb advise` and `mcmclb sweep --launcher smpi` simulate the user's
// machine rather than a stock one. What is measured and how it becomes a platform: mcmclb/calibrate.hpp.
//
// Every rank parses the same argv, so bad flags are one verdict: one line on rank 0, exit 2 everywhere
// (mpi::run_main), before anything is measured or written. Rank 0 checks --out and the flags file it copies before
// the measurement; it writes the files only at the end, each atomically.
#include "calibrate.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>
#include <stdexcept>
#include <string>
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

struct Options {
  std::string out = "results/calibrate";
  int ranks = 1024;  // the simulated ranks the platform must hold
  int reps = 5;
  // --cores: the simulated nodes' cores. 0: as measured, the CPUs the job's ranks may use on a node (the union of
  // their masks), which a launch of fewer ranks than cores that binds each to one core counts short.
  int cores = 0;
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
    } else if (flag == "--out" || flag == "--ranks" || flag == "--reps" || flag == "--cores") {
      if (i + 1 >= argc) throw InputError(flag + ": missing value (see mcmclb calibrate --help)");
      value = argv[++i];
    }
    if (flag != "--out" && flag != "--ranks" && flag != "--reps" && flag != "--cores") {
      throw InputError(
          "unknown argument '" + printable(flag) +
          "' of calibrate (allowed: --out DIR, --ranks MAX, --reps N, --cores K; see mcmclb calibrate --help)");
    }
    if (!seen.insert(flag).second) throw InputError(flag + ": given twice (allowed: once)");
    if (flag == "--out") {
      o.out = require_path(flag, value);
    } else if (flag == "--ranks") {
      o.ranks = static_cast<int>(parse_integer_flag(flag, value, 1, 1 << 20, "a count of simulated ranks"));
    } else if (flag == "--reps") {
      o.reps = static_cast<int>(parse_integer_flag(flag, value, 1, 1000, "a count of repetitions"));
    } else {
      o.cores = static_cast<int>(parse_integer_flag(flag, value, 1, 1 << 16, "a count of cores per node"));
    }
  }
  return o;
}

fs::path flags_source() { return fs::path(MCMCLB_SOURCE_DIR) / "configs" / "platforms" / "smpi.cfg"; }

/// Rank 0's verdict on --out and the flags file, before any measuring: an error string, empty when both will do.
/// Makes the folder (as every command that writes results does); writes nothing in it.
std::string check_outputs(const Options& o, std::string& flags) {
  std::string why;
  const auto text = read_text_file(flags_source(), &why);
  if (!text) return flags_source().string() + ": cannot read the flags file to copy: " + why;
  flags = *text;
  std::error_code ec;
  if (fs::exists(o.out, ec) && !fs::is_directory(o.out, ec)) {
    return "--out: " + printable(o.out, 200) + " exists and is not a folder (allowed: a folder, made if missing)";
  }
  fs::create_directories(o.out, ec);
  if (ec) return "--out: cannot make " + printable(o.out, 200) + ": " + ec.message();
  return "";
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

std::string csv_of(const std::vector<std::pair<std::string, std::vector<cal::Point>>>& pairs) {
  std::string text = "pair,bytes,one_way_us,bandwidth_MBps\n";
  for (const auto& [pair, points] : pairs) {
    for (const auto& p : points) {
      char line[160];
      std::snprintf(line, sizeof line, "%s,%lld,%.4f,%.2f\n", pair.c_str(), static_cast<long long>(p.bytes),
                    p.seconds * 1e6, p.seconds > 0 ? static_cast<double>(p.bytes) / p.seconds / 1e6 : 0.0);
      text += line;
    }
  }
  return text;
}

}  // namespace

std::string calibrate_usage() {
  return "mpiexec -n P mcmclb calibrate [--out DIR] [--ranks MAX] [--reps N] [--cores K]";
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
  std::string flags, error;
  if (rank == 0) error = check_outputs(o, flags);
  share_root_error<InputError>(error, world);

  const mpi::NodeOccupancy occupancy = mpi::node_occupancy(world);
  const std::vector<int> node = node_of_ranks(world);
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
  if (rank == 0) {
    std::printf("calibrate: %d ranks on %d node(s) of %d core(s)%s; timing messages of %zu sizes, %d repetitions%s\n",
                nprocs, m.nodes, m.cores_per_node, cores_given ? " (--cores)" : "", cal::message_sizes().size(), o.reps,
                occupancy.oversubscribed() ? " (WARNING: more ranks than cores on a node: the times include waiting "
                                             "for a core)"
                                           : "");
    std::fflush(stdout);
  }
  std::vector<std::pair<std::string, std::vector<cal::Point>>> measured;
  // Rank 0 against a partner (none where it is 0): the ping-pong, then on rank 0 its fit, kept under its name.
  const auto time_pair = [&](int partner, const char* name, auto& model, bool& has) {
    if (partner <= 0) return;
    auto points = cal::pingpong(world, 0, partner, cal::message_sizes(), o.reps);
    if (rank != 0) return;
    model = cal::fit_model(points, cal::kLargeFrom);
    has = true;
    measured.emplace_back(name, std::move(points));
  };
  time_pair(intra, "intra", m.intra, m.has_intra);
  time_pair(inter, "inter", m.inter, m.has_inter);
  m.allreduce_s = cal::allreduce_time(world, 50);
  if (rank == 0) {
    const cal::PollCosts poll = cal::poll_costs(100000);
    m.test_s = poll.test_s;
    m.iprobe_s = poll.iprobe_s;
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
    for (const auto& [pair, points] : measured) {
      if (cal::fit_model(points, cal::kLargeFrom).bandwidth_Bps() <= 0) {
        error = "calibrate: the " + pair + " pair's times of messages from " + std::to_string(cal::kLargeFrom) +
                " bytes on did not grow with their size, so they give no bandwidth; nothing written (rerun on an idle "
                "allocation)";
      }
    }
    try {
      if (!error.empty()) throw std::runtime_error(error);
      csv::write_atomically(out / "pingpong.csv", csv_of(measured));
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
      for (const auto& [pair, points] : measured) {
        const cal::Model fit = cal::fit_model(points, cal::kLargeFrom);
        std::printf("calibrate: %s one-way latency %.3f us, bandwidth %.1f MB/s (measured)\n",
                    pair == "intra" ? "inside a node:" : "between nodes:", fit.latency_s() * 1e6,
                    fit.bandwidth_Bps() / 1e6);
      }
      if (!m.has_inter)
        std::printf("calibrate: between nodes: not measured (one node); the links copy the node's times\n");
      std::printf("calibrate: MPI_Allreduce of 8 bytes over %d ranks %.3f us, MPI_Test %.3f us, MPI_Iprobe %.3f us\n",
                  nprocs, m.allreduce_s * 1e6, m.test_s * 1e6, m.iprobe_s * 1e6);
      std::printf(
          "wrote %s/{calibrated.xml,calibrated.hosts,smpi.cfg,pingpong.csv,provenance.csv} (a platform of "
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
