// SPDX-License-Identifier: BSD-3-Clause
// --launcher smpi (mcmclb/launch.hpp): smpirun's flags and platform, the simulation build's programs, and the
// check that simulated repetitions agree.
#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "mcmclb/launch.hpp"
#include "mcmclb/provenance.hpp"
#include "mcmclb/runs_csv.hpp"
#include "mcmclb/text.hpp"

namespace mcmclb::launch {

namespace {

/// The file of smpirun's flags for every simulated run (one source for the sweep, tests/smpi/ and
/// docs/guide/simulation.md), or the one --smpi-flags names.
fs::path smpi_flags_file(const SweepOptions& o) {
  return o.smpi_flags.empty() ? fs::path(MCMCLB_SOURCE_DIR) / "configs" / "platforms" / "smpi.cfg"
                              : fs::path(o.smpi_flags);
}

/// The flags of smpi_flags_file(), in order: one per line, blank lines and # comments skipped. A line that is not
/// a plain -name or --name=value flag is refused, so nothing in the file needs quoting on a command line.
std::vector<std::string> smpi_flags(const SweepOptions& o) {
  const fs::path file = smpi_flags_file(o);
  const std::string text =
      read_file(file.string(), "smpirun flags file (the simulation flags, docs/guide/simulation.md)");
  std::vector<std::string> flags;
  std::stringstream lines(text);
  int line_no = 0;
  for (std::string line; std::getline(lines, line);) {
    ++line_no;
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    const std::string flag = line.substr(first, line.find_last_not_of(" \t\r") - first + 1);
    const bool plain = std::all_of(flag.begin(), flag.end(), [](unsigned char c) {
      return std::isalnum(c) != 0 || std::string_view("-_./:=,").find(static_cast<char>(c)) != std::string_view::npos;
    });
    if (flag[0] != '-' || !plain) {
      throw InputError(file.string() + ": line " + std::to_string(line_no) + ": '" + printable(flag, 80) +
                       "' is not an smpirun flag (allowed: one -name or --name=value per line, # comments)");
    }
    flags.push_back(flag);
  }
  if (flags.empty()) throw InputError(file.string() + ": no flags (allowed: one smpirun flag per line)");
  return flags;
}

}  // namespace

/// The smpi launcher's programs: the simulation build's mcmclb-sim (--sim-binary) and mcmclb-commbench-sim
/// (--sim-commbench, default: beside --sim-binary).
fs::path sim_commbench(const SweepOptions& o) {
  return o.sim_commbench.empty() ? fs::path(o.sim_binary).parent_path() / "mcmclb-commbench-sim"
                                 : fs::path(o.sim_commbench);
}

namespace {

/// A platform's hostfile: the platform file's name with .hosts for .xml.
fs::path hostfile_of(const fs::path& platform) { return fs::path(platform).replace_extension(".hosts"); }

/// The attributes of each <cluster> element of a platform file, comments left out. A platform file is SimGrid's
/// own small XML: attributes in quotes, no entities in the ones read here, so a scan serves and no XML library is
/// needed.
std::vector<std::map<std::string, std::string>> clusters_of(std::string xml) {
  for (auto open = xml.find("<!--"); open != std::string::npos; open = xml.find("<!--", open)) {
    const auto close = xml.find("-->", open + 4);
    xml.erase(open, close == std::string::npos ? std::string::npos : close + 3 - open);
  }
  std::vector<std::map<std::string, std::string>> clusters;
  for (auto at = xml.find("<cluster"); at != std::string::npos; at = xml.find("<cluster", at + 1)) {
    const auto end = xml.find('>', at);
    const std::string tag = xml.substr(at + 8, end == std::string::npos ? std::string::npos : end - at - 8);
    if (!tag.empty() && std::isspace(static_cast<unsigned char>(tag.front())) == 0) continue;  // <clusterX
    std::map<std::string, std::string> attributes;
    for (std::size_t i = 0; i < tag.size();) {
      const auto eq = tag.find('=', i);
      if (eq == std::string::npos) break;
      const auto quote = tag.find_first_of("\"'", eq);
      if (quote == std::string::npos) break;
      const auto close = tag.find(tag[quote], quote + 1);
      if (close == std::string::npos) break;
      std::string name = tag.substr(i, eq - i);
      name.erase(0, name.find_first_not_of(" \t\r\n"));
      name.erase(name.find_last_not_of(" \t\r\n") + 1);
      attributes[name] = tag.substr(quote + 1, close - quote - 1);
      i = close + 1;
    }
    clusters.push_back(std::move(attributes));
  }
  return clusters;
}

/// The non-negative integers of text split at sep, or nothing when one is not such a number.
std::optional<std::vector<std::int64_t>> numbers(const std::string& text, char sep) {
  std::vector<std::int64_t> values;
  std::stringstream parts(text);
  for (std::string part; std::getline(parts, part, sep);) {
    part.erase(0, part.find_first_not_of(' '));
    part.erase(part.find_last_not_of(' ') + 1);
    if (part.empty() || part.size() > 9 ||
        !std::all_of(part.begin(), part.end(), [](unsigned char c) { return std::isdigit(c) != 0; })) {
      return std::nullopt;
    }
    values.push_back(std::stoll(part));
  }
  return values;
}

/// The hostfile's lines dealt round-robin over the groups of the platform's one dragonfly (hostfile_over_groups);
/// key names the placement in an error.
std::string deal_over_groups(const std::string& platform_xml, const std::string& hostfile, const std::string& platform,
                             const std::string& key) {
  std::vector<std::map<std::string, std::string>> dragonflies;
  for (auto& c : clusters_of(platform_xml)) {
    if (c["topology"] == "DRAGONFLY") dragonflies.push_back(std::move(c));
  }
  if (dragonflies.size() != 1) {
    throw InputError(key + printable(platform, 200) + " has " + std::to_string(dragonflies.size()) +
                     " dragonfly clusters (allowed: a platform with one <cluster topology=\"DRAGONFLY\">, such as "
                     "configs/platforms/slingshot.xml; elsewhere placement: block)");
  }
  auto& c = dragonflies.front();
  // SimGrid's "G,L;C,L;R,L;N": groups, chassis per group, routers per chassis, nodes per router (each with its
  // link count). Nodes are numbered in radical order and fill a group before the next (DragonflyZone).
  std::vector<std::int64_t> topo;
  std::stringstream levels(c["topo_parameters"]);
  for (std::string level; std::getline(levels, level, ';');) {
    const auto values = numbers(level, ',');
    if (values && !values->empty()) topo.push_back(values->front());
  }
  if (topo.size() != 4 || std::find(topo.begin(), topo.end(), 0) != topo.end()) {
    throw InputError(key + printable(platform, 200) + ": topo_parameters '" + printable(c["topo_parameters"], 80) +
                     "' is not SimGrid's G,L;C,L;R,L;N (allowed: positive counts)");
  }
  const std::int64_t groups = topo[0], per_group = topo[1] * topo[2] * topo[3];
  std::map<std::string, std::int64_t> position;  // host name -> its node number in the dragonfly
  std::stringstream items(c["radical"]);
  for (std::string item; std::getline(items, item, ',');) {
    const auto range = numbers(item, '-');
    if (!range || range->empty() || range->size() > 2 || range->back() < range->front()) {
      throw InputError(key + printable(platform, 200) + ": radical '" + printable(c["radical"], 80) +
                       "' is not a list of N or N-M (allowed: SimGrid's radicals)");
    }
    for (std::int64_t id = range->front(); id <= range->back(); ++id) {
      position.emplace(c["prefix"] + std::to_string(id) + c["suffix"], static_cast<std::int64_t>(position.size()));
    }
  }
  std::vector<std::vector<std::string>> by_group(static_cast<std::size_t>(groups));
  std::istringstream lines(hostfile);
  for (std::string line; std::getline(lines, line);) {
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos) continue;
    line = line.substr(first, line.find_last_not_of(" \t\r") - first + 1);
    const auto colon = line.rfind(':');
    const std::string host =
        colon != std::string::npos && numbers(line.substr(colon + 1), ',') ? line.substr(0, colon) : line;
    const auto it = position.find(host);
    const std::int64_t group = it == position.end() ? groups : it->second / per_group;
    if (group >= groups) {
      throw InputError(key + printable(platform, 200) + ": its hostfile names " + printable(host, 80) +
                       ", which is not a node of its dragonfly's " + std::to_string(groups) + " groups of " +
                       std::to_string(per_group) + " (allowed: hosts of that cluster)");
    }
    by_group[static_cast<std::size_t>(group)].push_back(line);
  }
  // Round-robin: the first host of every group, then the second of every group, and so on.
  std::string dealt;
  for (std::size_t k = 0;; ++k) {
    bool any = false;
    for (const auto& hosts : by_group) {
      if (k < hosts.size()) {
        dealt += hosts[k] + "\n";
        any = true;
      }
    }
    if (!any) break;
  }
  return dealt;
}

/// The host of a hostfile line and how many ranks it places ("host:N" places N, a plain host one).
std::pair<std::string, std::int64_t> host_slots(const std::string& line) {
  const auto colon = line.rfind(':');
  if (colon != std::string::npos) {
    const auto n = numbers(line.substr(colon + 1), ',');
    if (n && n->size() == 1) return {line.substr(0, colon), n->front()};
  }
  return {line, 1};
}

/// Whether text is XML with a <platform> element: its first character (after blanks) opens a tag, and a <platform
/// tag stands outside the comments. A scan, as clusters_of reads the file: SimGrid's own parser says the rest.
bool is_platform_xml(std::string text) {
  const auto first = text.find_first_not_of(" \t\r\n\xEF\xBB\xBF");
  if (first == std::string::npos || text[first] != '<') return false;
  for (auto open = text.find("<!--"); open != std::string::npos; open = text.find("<!--", open)) {
    const auto close = text.find("-->", open + 4);
    text.erase(open, close == std::string::npos ? std::string::npos : close + 3 - open);
  }
  for (auto at = text.find("<platform"); at != std::string::npos; at = text.find("<platform", at + 1)) {
    const char next = at + 9 < text.size() ? text[at + 9] : '\0';
    if (next == '>' || std::isspace(static_cast<unsigned char>(next)) != 0) return true;
  }
  return false;
}

/// Every host a platform's clusters name (prefix, each radical, suffix) with its cores (the cluster's core, 1 by
/// default), and its <host> elements'; nothing where a radical is not SimGrid's N or N-M list.
std::optional<std::map<std::string, std::int64_t>> platform_hosts(const std::string& xml) {
  std::map<std::string, std::int64_t> cores;
  for (auto& c : clusters_of(xml)) {
    const auto per_host = c.count("core") ? numbers(c["core"], ',') : std::vector<std::int64_t>{1};
    if (!per_host || per_host->size() != 1) return std::nullopt;
    std::stringstream items(c["radical"]);
    for (std::string item; std::getline(items, item, ',');) {
      const auto range = numbers(item, '-');
      if (!range || range->empty() || range->size() > 2 || range->back() < range->front()) return std::nullopt;
      for (std::int64_t id = range->front(); id <= range->back(); ++id) {
        cores[c["prefix"] + std::to_string(id) + c["suffix"]] = per_host->front();
      }
    }
  }
  // <host id="..." core="..."/>, read as clusters_of reads a cluster's attributes.
  std::string hosts_as_clusters = xml;
  for (auto at = hosts_as_clusters.find("<host"); at != std::string::npos;
       at = hosts_as_clusters.find("<host", at + 1)) {
    const char next = at + 5 < hosts_as_clusters.size() ? hosts_as_clusters[at + 5] : '\0';
    if (std::isspace(static_cast<unsigned char>(next)) != 0) hosts_as_clusters.replace(at, 5, "<cluster");
  }
  std::string only_hosts;
  for (auto& h : clusters_of(hosts_as_clusters)) {
    if (!h.count("id") || h.count("radical")) continue;  // a real cluster, read above
    const auto n = h.count("core") ? numbers(h["core"], ',') : std::vector<std::int64_t>{1};
    if (!n || n->size() != 1) return std::nullopt;
    cores[h["id"]] = n->front();
  }
  return cores;
}

}  // namespace

std::string hostfile_over_groups(const std::string& platform_xml, const std::string& hostfile,
                                 const std::string& platform) {
  return deal_over_groups(platform_xml, hostfile, platform, "key placement: groups: ");
}

std::string hostfile_scattered(const std::string& platform_xml, const std::string& hostfile,
                               const std::string& platform) {
  // Nodes in turn over a dragonfly's groups where the platform has one, else in the hostfile's order; then one
  // rank per node and round, so that consecutive ranks sit on different nodes (and groups).
  auto clusters = clusters_of(platform_xml);
  const bool dragonfly =
      std::any_of(clusters.begin(), clusters.end(), [](auto& c) { return c["topology"] == "DRAGONFLY"; });
  const std::string nodes =
      dragonfly ? deal_over_groups(platform_xml, hostfile, platform, "key placement: scatter: ") : hostfile;
  std::vector<std::pair<std::string, std::int64_t>> slots;
  std::istringstream lines(nodes);
  for (std::string line; std::getline(lines, line);) {
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos) continue;
    slots.push_back(host_slots(line.substr(first, line.find_last_not_of(" \t\r") - first + 1)));
  }
  std::string dealt;
  for (std::int64_t k = 0;; ++k) {
    bool any = false;
    for (const auto& [host, n] : slots) {
      if (k < n) {
        dealt += host + "\n";
        any = true;
      }
    }
    if (!any) break;
  }
  return dealt;
}

bool deals_hostfile(const Study& study) {
  // One placement per study (build_study), so the first point says it.
  return !study.points.empty() && study.points.front().spec.placement != Placement::block;
}

fs::path placement_hostfile(const SweepOptions& o, const Study& study, const fs::path& out) {
  return deals_hostfile(study) ? out / (fs::path(o.platform).stem().string() + "." +
                                        std::string(to_string(study.points.front().spec.placement)) + ".hosts")
                               : hostfile_of(o.platform);
}

std::string dealt_hostfile(const SweepOptions& o, Placement placement) {
  const std::string what = "platform file (--platform)";
  const std::string xml = read_file(o.platform, what), hosts = read_file(hostfile_of(o.platform).string(), what);
  return placement == Placement::scatter ? hostfile_scattered(xml, hosts, o.platform)
                                         : hostfile_over_groups(xml, hosts, o.platform);
}

fs::path sim_program(const SweepOptions& o, Program program) {
  return program == Program::commbench ? sim_commbench(o) : fs::path(o.sim_binary);
}

std::vector<fs::path> smpi_preloads(const fs::path& program) {
  const fs::path list = fs::absolute(program).parent_path() / "smpi-preload.txt";
  const auto text = read_text_file(list);
  if (!text) return {};  // a simulation build from before the list: nothing is preloaded
  std::vector<fs::path> preloads;
  std::stringstream lines(*text);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    const fs::path library(line);
    // Preloading a library that is gone would only make the loader warn on every process smpirun starts.
    if (!library.is_absolute() || !fs::is_regular_file(library) || line.find_first_of(" :") != std::string::npos) {
      throw InputError(printable(list.string(), 200) + ": '" + printable(line, 120) +
                       "' is not an existing library (allowed: absolute paths without spaces or colons, as the "
                       "simulation build writes them; rebuild it: cmake --build BUILD-SIM)");
    }
    preloads.push_back(library);
  }
  return preloads;
}

/// --launcher smpi: smpirun with the platform file and its hostfile (PLATFORM.hosts) and the flags of
/// smpi_flags_file(), with the environment the run records in runs.csv (platform) and provenance.csv (the platform's
/// hash, the flags), and the preloads of program's build (smpi_preloads).
std::string smpirun_prefix(const SweepOptions& o, int nprocs, const fs::path& program, const fs::path& dealt,
                           Placement placement) {
  std::error_code ec;
  const fs::path canonical = fs::weakly_canonical(fs::absolute(o.platform), ec);
  const std::string platform = ec ? o.platform : canonical.string();  // the file itself, from any folder
  const std::string hosts = dealt.empty() ? hostfile_of(platform).string() : fs::absolute(dealt).string();
  const std::string placed = dealt.empty() ? "" : "MCMCLB_PLACEMENT=" + std::string(to_string(placement)) + " ";
  const std::string flags = join(smpi_flags(o), " ");
  std::string preload;
  for (const fs::path& library : smpi_preloads(program)) preload += (preload.empty() ? "" : " ") + library.string();
  // Ahead of whatever the user preloads already.
  if (!preload.empty()) preload = "LD_PRELOAD=" + shell_quote(preload) + "\"${LD_PRELOAD:+ $LD_PRELOAD}\" ";
  // A job step runs one simulation (one host process) on one CPU of the allocation; srun passes the environment
  // on, and env sets the preloads for smpirun alone, not for srun.
  const std::string step = o.job_steps ? "srun --ntasks=1 --cpus-per-task=1 --exact --quiet env " : "";
  return step + preload + placed + "MCMCLB_PLATFORM=" + shell_quote(platform) +
         " MCMCLB_SMPI_CFG=" + shell_quote(flags) + " smpirun -np " + std::to_string(nprocs) + " -platform " +
         shell_quote(platform) + " -hostfile " + shell_quote(hosts) + " " + flags + " ";
}

std::optional<double> available_memory_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  double kib = 0;
  while (in >> key >> kib) {
    std::getline(in, unit);
    if (key == "MemAvailable:") return kib * 1024;
  }
  return std::nullopt;
}

SimulationEstimate estimate_to_run(const SweepOptions& o, const Study& study, std::size_t* skipped) {
  std::size_t ignored = 0;
  const auto todo = points_to_run(o, study, output_of(o, study), recorded_in_output(o, study, std::nullopt),
                                  skipped != nullptr ? *skipped : ignored);
  std::vector<const RunSpec*> specs;
  for (const auto& [nprocs, indices] : todo) {
    for (const std::size_t i : indices) specs.push_back(&study.points[i].spec);
  }
  return estimate_simulations(specs, o.jobs, o.cpu);
}

void check_memory(const SimulationEstimate& to_run, const std::string& allowed) {
  if (const auto refusal = memory_refusal(to_run, available_memory_bytes(), allowed)) {
    throw InputError(*refusal);
  }
}

/// --launcher smpi: the platform and its hostfile exist, the flags file reads, and the simulation build's programs
/// the study needs are built (mcmclb-sim for kernel points, mcmclb-commbench-sim for commbench points); checked
/// before any launch. A dry run only prints the commands, so it notes a missing program instead.
void check_platform(const SweepOptions& o) {
  const fs::path hosts = hostfile_of(o.platform);
  if (!fs::is_regular_file(o.platform) || !fs::is_regular_file(hosts)) {
    throw InputError("--platform: " + printable(o.platform, 200) + " and its hostfile " +
                     printable(hosts.string(), 200) + " must both exist (allowed: a file of configs/platforms/)");
  }
  // Not SimGrid's XML: said here, in one line, rather than by SimGrid's parser inside the first simulation.
  const auto xml = read_text_file(o.platform);
  if (!xml || !is_platform_xml(*xml)) {
    throw InputError("--platform: " + printable(o.platform, 200) +
                     " is not a SimGrid platform (no <platform> element in XML; allowed: a platform file such as "
                     "configs/platforms/fattree.xml or mcmclb calibrate's calibrated.xml)");
  }
}

namespace {

/// How many simulated ranks the hostfile places, one per line: a line "host:N" places N (smpirun unrolls it).
/// SimGrid gives rank i the host of line i modulo that count, so more ranks than lines would share cores without a
/// word (it says so only at its INFO level, below the flags' log threshold).
std::int64_t hostfile_slots(const fs::path& hosts) {
  const auto text = read_text_file(hosts);
  if (!text) throw InputError("--platform: " + printable(hosts.string(), 200) + " cannot be read");
  std::int64_t slots = 0;
  std::istringstream lines(*text);
  std::string line;
  while (std::getline(lines, line)) {
    const std::size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos) continue;  // a blank line places nothing
    line = line.substr(first, line.find_last_not_of(" \t\r") - first + 1);
    const std::size_t colon = line.rfind(':');
    const std::string count = colon == std::string::npos ? "" : line.substr(colon + 1);
    const bool counted = !count.empty() && count.size() <= 9 &&
                         std::all_of(count.begin(), count.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
    slots += counted ? std::stoll(count) : 1;
  }
  return slots;
}

/// How many memory mappings one simulation of nprocs ranks needs, or 0 when the flags make it a few hundred
/// whatever nprocs. SimGrid 3.32 gives every simulated rank a stack with a guard page (src/kernel/context/
/// ContextSwapped.cpp: posix_memalign, then mprotect of the first page), two mappings per rank that the kernel cannot
/// merge; the process itself needs about 200 (measured on this project's VM: 2 P + 173 at 2048 and at 8192 ranks, the
/// libraries and heap). With --cfg=contexts/guard-size:0 the stacks are plain allocations whose mappings the kernel
/// merges (174 in all at 8192 ranks).
std::int64_t mappings_needed(std::int64_t nprocs, const std::vector<std::string>& flags) {
  constexpr std::int64_t kProcess = 512;  // the 173 measured, with room for a larger build or libc
  if (std::find(flags.begin(), flags.end(), "--cfg=contexts/guard-size:0") != flags.end()) return 0;
  return 2 * nprocs + kProcess;
}

/// The host's limit on one process's memory mappings (Linux: vm.max_map_count), or nothing where it cannot be read.
/// Past it SimGrid dies at simulated time 0 with a backtrace ("Failed to protect stack"), which a sweep would
/// repeat in every launch: 65,530 by default, so about 32,500 simulated ranks.
std::optional<std::int64_t> mapping_limit() {
  const auto text = read_text_file("/proc/sys/vm/max_map_count");
  if (!text) return std::nullopt;
  try {
    return std::stoll(*text);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

/// Whether program is a simulation build's program, checked without running it (smpirun loads it as a library):
/// those are linked against SimGrid, so the file names its library (DT_NEEDED libsimgrid.so.N); the MPI build
/// and any other program do not. The name is put together at run time so that this program does not hold it.
bool is_simulation_build(const fs::path& program) {
  const auto bytes = read_text_file(program);
  return bytes && bytes->find(std::string("libsim") + "grid.so") != std::string::npos;
}

/// The platform's hostfile names only hosts of the platform, and places on none more of the study's ranks than the
/// host has cores: a hostfile from another platform (8 ranks on each 2-core node) would otherwise share cores
/// without a word. One line naming the first host at fault.
void check_hosts_match(const SweepOptions& o, const Study& study) {
  const auto xml = read_text_file(o.platform);
  const auto hosts = xml ? platform_hosts(*xml) : std::nullopt;
  if (!hosts || hosts->empty()) return;  // hosts declared some other way: SimGrid checks them
  const fs::path file = hostfile_of(o.platform);
  std::int64_t ranks = 0;  // the most ranks a point places
  for (const Point& p : study.points) ranks = std::max<std::int64_t>(ranks, p.spec.nprocs);
  const auto text = read_text_file(file);
  std::map<std::string, std::int64_t> placed;
  std::istringstream lines(text ? *text : std::string());
  for (std::string line; ranks > 0 && std::getline(lines, line);) {
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos) continue;
    auto [host, n] = host_slots(line.substr(first, line.find_last_not_of(" \t\r") - first + 1));
    const auto it = hosts->find(host);
    if (it == hosts->end()) {
      throw InputError("--platform: " + printable(file.string(), 200) + " names " + printable(host, 80) + ", which " +
                       printable(o.platform, 200) +
                       " does not hold (allowed: the platform's own hostfile, naming its hosts)");
    }
    n = std::min(n, ranks);
    ranks -= n;
    if ((placed[host] += n) > it->second) {
      throw InputError("--platform: " + printable(file.string(), 200) + " places " + std::to_string(placed[host]) +
                       " ranks on " + printable(host, 80) + ", which has " + std::to_string(it->second) +
                       " core(s) in " + printable(o.platform, 200) +
                       " (allowed: at most one rank per core; the platform's own hostfile, as mcmclb calibrate writes "
                       "it beside its platform)");
    }
  }
}

}  // namespace

void check_smpi(const SweepOptions& o, const Study& study) {
  check_platform(o);
  if (deals_hostfile(study)) {  // a platform without a dragonfly, before any writing
    (void)dealt_hostfile(o, study.points.front().spec.placement);
  }
  const fs::path hosts = hostfile_of(o.platform);
  const std::int64_t slots = hostfile_slots(hosts);
  for (const Point& p : study.points) {
    if (p.spec.nprocs > slots) {
      throw InputError("nprocs: " + std::to_string(p.spec.nprocs) + " simulated ranks, but " +
                       printable(hosts.string(), 200) + " places " + std::to_string(slots) + " (allowed: at most " +
                       std::to_string(slots) +
                       " on this platform, one rank per host line; a larger machine needs its own platform file)");
    }
  }
  check_hosts_match(o, study);
  const std::vector<std::string> flags = smpi_flags(o);
  if (const auto limit = mapping_limit()) {
    for (const Point& p : study.points) {
      const std::int64_t needed = mappings_needed(p.spec.nprocs, flags);
      if (needed > *limit) {
        throw InputError("nprocs: " + std::to_string(p.spec.nprocs) + " simulated ranks need about " +
                         std::to_string(needed) +
                         " memory mappings (SimGrid gives each rank's stack a guard page: two mappings per rank), "
                         "but /proc/sys/vm/max_map_count allows " +
                         std::to_string(*limit) + " (allowed: at most " +
                         std::to_string(std::max<std::int64_t>(0, (*limit - mappings_needed(0, flags)) / 2)) +
                         " ranks here; raise it: sysctl -w vm.max_map_count=" + std::to_string(needed + needed / 4) +
                         ", or add --cfg=contexts/guard-size:0 to the flags file)");
      }
    }
  }
  if (!o.dry_run && !on_path("smpirun")) {
    throw InputError("--launcher smpi: smpirun is not on PATH (install SimGrid: Debian libsimgrid-dev, bootstrap.sh)");
  }
  // A dry run shows the commands of a sweep that would run, so it refuses what the sweep would refuse.
  const auto check = [&](const std::string& flag, const fs::path& program, const std::string& target) {
    const std::string build =
        " (build it: cmake -S . -B build-sim -DMCMCLB_SMPI=ON && cmake --build build-sim --target " + target + ")";
    if (!fs::exists(program)) throw InputError(flag + ": " + program.string() + " does not exist" + build);
    if (!is_simulation_build(program)) {
      throw InputError(flag + ": " + printable(program.string(), 200) +
                       " is not a simulation build's program (it is not linked against SimGrid)" + build);
    }
  };
  if (has_program(study, Program::kernel)) check("--sim-binary", o.sim_binary, "mcmclb");
  if (has_program(study, Program::commbench)) check("--sim-commbench", sim_commbench(o), "mcmclb-commbench");
  for (const Program program : {Program::kernel, Program::commbench}) {
    if (has_program(study, program)) (void)smpi_preloads(sim_program(o, program));  // a bad list, before any launch
  }
  if (o.dry_run) return;
  // SimGrid reads the platform and every --cfg before the program starts, and only there knows its keys and
  // values: one simulation of one rank that only asks SimGrid's --help (well under a second) finds a bad key or
  // value before any launch, instead of in every launch's failure.
  const fs::path program = has_program(study, Program::kernel) ? fs::path(o.sim_binary) : sim_commbench(o);
  const auto [status, lines] =
      run_capturing(smpirun_prefix(o, 1, program) + shell_quote(fs::absolute(program).string()) + " --help");
  if (status == 0) return;
  std::string why = "status " + std::to_string(status);
  for (const auto& line : lines) {
    if (const auto at = line.find("Bad config key: "); at != std::string::npos) {
      throw InputError(smpi_flags_file(o).string() + ": --cfg=" + printable(line.substr(at + 16), 80) +
                       " is not a SimGrid configuration key (smpirun: Bad config key; the keys are listed by "
                       "smpirun ... PROGRAM --help)");
    }
    if (const auto at = line.find("CRITICAL] "); at != std::string::npos && why.rfind("status", 0) == 0) {
      why = line.substr(at + 10);
    }
  }
  throw InputError(smpi_flags_file(o).string() + " or --platform: smpirun refuses them before running anything (" +
                   printable(why, 160) + ")");
}

/// Simulated runs take no host time, so the repetitions of a point are the same simulation: said once, before the
/// launches (they still run: equal times across repetitions are the determinism check of
/// docs/guide/simulation.md).
void note_simulated_reps(const SweepOptions& o, const Study& study) {
  if (!simulated(o)) return;
  int reps = 0;
  for (const Point& p : study.points) reps = std::max(reps, p.spec.rep + 1);
  if (reps > 1) {
    std::printf(
        "note: %d repetitions per point in simulation give identical simulated times (nothing random, no host time "
        "enters); they run as a determinism check, and the sweep fails a point whose repetitions differ "
        "(--set reps=1 runs each point once)\n",
        reps);
  }
}

/// The simulated determinism check: the valid rows of this backend whose points differ only in rep must give the
/// same time_s. Each point of the study in such a set is a failure naming the times.
void check_simulated_reps(const SweepOptions& o, const Study& study, const fs::path& out,
                          std::vector<Failure>& failures) {
  if (!simulated(o)) return;
  const auto text = read_text_file(out / "runs.csv");
  if (!text) return;
  std::stringstream lines(*text);
  std::string line;
  if (!std::getline(lines, line)) return;
  const csv::Row header = csv::split_line(line);
  const auto column = [&](const std::string& name) {
    return static_cast<std::size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  std::vector<std::size_t> key_columns;
  for (const auto& c : runs_columns()) {
    if (c.is_key()) key_columns.push_back(column(c.name));
  }
  const std::size_t rep = column("rep"), time = column("time_s"), valid = column("valid");
  if (std::any_of(key_columns.begin(), key_columns.end(), [&](std::size_t i) { return i >= header.size(); }) ||
      time >= header.size() || valid >= header.size()) {
    return;  // the store checked the header when the sweep opened it
  }
  std::map<std::string, std::set<std::string>> times;  // point key with rep 0 -> the times of its valid rows
  while (std::getline(lines, line)) {
    csv::Row fields = csv::split_line(line);
    if (fields.size() != header.size() || fields[valid] != "true") continue;
    fields[rep] = "0";
    std::vector<std::string> key;
    for (const std::size_t i : key_columns) key.push_back(fields[i]);
    times[key_of_fields(key)].insert(fields[time]);
  }
  const Backend backend = sweep_backend(o);
  for (const Point& p : study.points) {
    if (p.program != Program::kernel) continue;
    RunSpec first = p.spec;
    first.rep = 0;
    const auto it = times.find(point_key(first, backend));
    if (it != times.end() && it->second.size() > 1) {
      failures.push_back({p.index, "the simulated repetitions of this point differ (time_s " +
                                       join(std::vector<std::string>(it->second.begin(), it->second.end()), ", ") +
                                       "): the simulation is not deterministic"});
    }
  }
}

/// --launcher smpi: SimGrid's smpirun, runs simulated on a platform file, several launches at once.
class SmpiLauncher final : public Launcher {
 public:
  [[nodiscard]] std::string_view name() const override { return "smpi"; }
  [[nodiscard]] bool simulated() const override { return true; }
  [[nodiscard]] std::string_view provenance_name() const override { return "smpirun"; }
  int sweep(const SweepOptions& o, const Study& study, const std::string& /*study_text*/) const override {
    return sweep_local(o, study);  // local.cpp's launch loop, with smpirun in place of mpiexec
  }
};

std::unique_ptr<Launcher> smpi_launcher() { return std::make_unique<SmpiLauncher>(); }

}  // namespace mcmclb::launch
