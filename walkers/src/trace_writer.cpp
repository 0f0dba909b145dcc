// SPDX-License-Identifier: BSD-3-Clause
// The trace file of a run of an application's chains (walkers/src/trace_writer.hpp).
#include "trace_writer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "checkpoint.hpp"
#include "mcmclb/csv.hpp"
#include "mcmclb/mpi.hpp"
#include "mcmclb/provenance.hpp"
#include "mcmclb/trace.hpp"

namespace mcmclb::walkers::detail {

std::string initial_groups(const InitialGroups& initial) {
  const std::vector<int>& chains = initial.chains;
  const auto groups = static_cast<int>(chains.size());
  std::ostringstream out;
  out << groups << " initial group" << (groups == 1 ? "" : "s") << " of ";
  const auto [smallest, largest] = std::minmax_element(initial.sizes.begin(), initial.sizes.end());
  if (initial.sizes.empty() || *smallest == *largest) {
    const int size = initial.sizes.empty() ? 0 : *smallest;
    out << size << " rank" << (size == 1 ? "" : "s");
  } else if (groups <= 8) {  // uneven groups (Options::groups, group_sizes): each one's ranks
    for (int g = 0; g < groups; ++g)
      out << (g == 0 ? "" : g + 1 == groups ? " and " : ", ") << initial.sizes[static_cast<std::size_t>(g)];
    out << " ranks";
  } else {
    out << *smallest << " to " << *largest << " ranks";
  }
  const auto [least, most] = std::minmax_element(chains.begin(), chains.end());
  if (chains.empty() || *least == *most) {
    const int each = chains.empty() ? 0 : *least;
    out << " and " << each << " chain" << (each == 1 ? "" : "s") << (groups == 1 ? "" : " each");
  } else if (groups <= 8) {
    out << ", with ";
    for (int g = 0; g < groups; ++g)
      out << (g == 0 ? "" : g + 1 == groups ? " and " : ", ") << chains[static_cast<std::size_t>(g)];
    out << " chains";
  } else {
    const auto more = std::count(chains.begin(), chains.end(), *most);
    out << ", " << more << " with " << *most << " chains and " << groups - more << " with " << *least;
  }
  return out.str();
}

std::string trace_head(const Report& r, const Options& o, const InitialGroups& initial) {
  std::string name;
  for (const char c : o.name) name += static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
  std::ostringstream out;
  out << "# recorded by mcmclb::walkers::run (mcmclb " << git_commit() << "): " << name << " under balancer "
      << r.balancer << (r.method.empty() ? "" : " " + r.method) << (r.finished.empty() ? "" : " " + r.finished)
      << " at " << r.nprocs << " ranks, " << initial_groups(initial) << "\n";
  out << "# wait " << r.wait << " (" << r.wait_why << "); placement "
      << (r.placement == Placement::by_items ? "by-items" : "as-numbered")
      << "; each chain's initial group is its rows' group column\n";
  out << "# with " << mpi::library_version() << " on " << collect_provenance("", r.nprocs).host << ", " << utc_now()
      << "\n";
  return out.str();
}

void append_row(std::string& out, const ItemCost& c, const std::vector<int>& groups) {
  out += std::to_string(c.chain) + ',' + std::to_string(c.item) + ',' + std::to_string(c.ranks) + ',' +
         csv::number(c.seconds) + ",," + std::to_string(groups.at(static_cast<std::size_t>(c.chain))) + "\n";
}

TraceStream::TraceStream(const std::string& path, int rank) : path_(path), rank_(rank) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd_ < 0) warn(std::strerror(errno));
}

TraceStream::~TraceStream() {
  if (fd_ >= 0) ::close(fd_);
}

void TraceStream::append(std::span<const ItemCost> costs, const std::vector<int>& groups) {
  if (fd_ < 0 || costs.empty()) return;
  std::string text;
  for (const ItemCost& c : costs) append_row(text, c, groups);
  for (std::size_t at = 0; at < text.size();) {
    const ssize_t n = ::write(fd_, text.data() + at, text.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      warn(std::strerror(errno));
      ::close(fd_);
      fd_ = -1;
      return;
    }
    at += static_cast<std::size_t>(n);
  }
}

void TraceStream::warn(const char* why) const {
  std::fprintf(
      stderr, "mcmclb: rank %d: cannot append to %s (%s): its rows wait for the whole file the run writes as it ends\n",
      rank_, path_.c_str(), why);
}

std::vector<RecordedRun> earlier_runs_of(const std::string& path, const std::string& walkers) {
  std::vector<RecordedRun> runs;
  std::ifstream in(path);
  // Only the comment lines above the header: a trace's rows may run to hundreds of megabytes.
  for (std::string line; runs.size() < kMaxEarlierRuns && std::getline(in, line) && line.rfind('#', 0) == 0;) {
    const auto run = parse_run_line(line);
    if (run && !run->walkers.empty() && run->walkers == walkers) runs.push_back(*run);
  }
  return runs;
}

std::string earlier_lines(const std::vector<RecordedRun>& earlier) {
  std::string text;
  for (const RecordedRun& run : earlier) text += run_line(kTraceEarlierRunLine, run) + "\n";
  return text;
}

std::string trace_text(const std::vector<ItemCost>& costs, const std::vector<PairedSpeedup>& measured,
                       const std::vector<int>& groups, const Report& r, const Options& o, const InitialGroups& initial,
                       const std::string& resumed, int64_t& speedups, double share, const std::string& walkers,
                       const std::vector<RecordedRun>& earlier) {
  std::ostringstream out;
  out << trace_head(r, o, initial);
  if (resumed.empty()) {
    RecordedRun own;
    own.ranks = r.nprocs;
    own.groups = r.groups;
    own.balancer = r.balancer;
    own.seconds = r.time_s;
    own.share = share;
    own.walkers = walkers;
    out << run_line(kTraceRunLine, own) << "\n";
  } else {
    out << "# resumed: " << resumed << "\n";
  }
  out << earlier_lines(earlier);
  out << "# speed-ups: measured where a chain's group changed size, by the mean times of its last items before and "
         "its first after (at most "
      << kPairItems << " items and " << csv::number(kPairSeconds) << " s in all), chained from 1 rank"
      << (resumed.empty() ? "" : ", from this job's items only")
      << "; a chain's rows at one size are its pairs there; chain * repeats each of them at m, whose median a replay "
         "takes for the chains not measured there; without any, every chain scales perfectly\n";
  out << kTraceHeaderWithGroup << "\n";
  std::string rows;
  for (const ItemCost& c : costs) append_row(rows, c, groups);
  out << rows;
  speedups = 0;
  std::map<int, std::vector<double>> pooled;  // m -> every chain's pairs there
  for (const PairedSpeedup& p : measured) {
    out << p.chain << ",," << p.ranks << ",," << csv::number(p.speedup) << ",\n";
    pooled[p.ranks].push_back(p.speedup);
    ++speedups;
  }
  for (const auto& [m, ups] : pooled) {
    for (const double up : ups) {
      out << "*,," << m << ",," << csv::number(up) << ",\n";
      ++speedups;
    }
  }
  return out.str();
}

int64_t item_rows_in(const std::string& path) {
  std::ifstream in(path);
  int64_t rows = 0;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] >= '0' && line[0] <= '9') ++rows;
  }
  return rows;
}

void write_text_whole(const std::string& path, const std::string& text) {
  write_file_whole(path, std::span(reinterpret_cast<const std::byte*>(text.data()), text.size()));
}

}  // namespace mcmclb::walkers::detail
