// SPDX-License-Identifier: BSD-3-Clause
// The initial groups a walkers program runs, under the real mpiexec: the line mcmclb advise prints for each set-up it
// simulates, read by options_from_args and run, starts the groups of the sizes the simulation started (the kernel's
// initial_group_sizes of the advice study's point); groups asked by count or by sizes run with those sizes; and bad
// values are refused in one line before anything is written. Run at 3 and 4 ranks, where the recorded walkers' groups
// at P differ from one rank each.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <numeric>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "mcmclb/advice_table.hpp"
#include "mcmclb/advise_plan.hpp"
#include "mcmclb/balancer.hpp"
#include "mcmclb/input_error.hpp"
#include "mcmclb/kernel.hpp"
#include "mcmclb/study.hpp"
#include "mcmclb/walkers.hpp"

namespace {

namespace fs = std::filesystem;
using mcmclb::GroupComm;

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int world_size() {
  int n = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

/// Chains of a few items, each a sum over the group; every rank notes the size of the group in which it first
/// starts a chain (0: it started none), which is its initial group's: every initial group starts a chain at once.
class SizeChains final : public mcmclb::walkers::Chains {
 public:
  explicit SizeChains(int chains) : chains_(chains) {}
  [[nodiscard]] int count() const override { return chains_; }
  [[nodiscard]] int64_t items(int chain) const override { return 2 + chain % 3; }
  void start(int chain, GroupComm& group) override {
    if (first_size_ == 0) first_size_ = group.size();
    held_[chain] = chain;
  }
  void work(int chain, int64_t, GroupComm& group) override {
    std::vector<int64_t> sum = {1};
    group.allreduce_sum(sum);
    held_[chain] += sum[0];
  }
  [[nodiscard]] std::vector<std::byte> save(int chain) const override {
    return mcmclb::walkers::bytes_of(held_.at(chain));
  }
  void restore(int chain, std::span<const std::byte> state) override {
    held_[chain] = mcmclb::walkers::result_as<int64_t>(state);
  }
  /// On every rank: the size each rank first started a chain in, by rank.
  [[nodiscard]] std::vector<int> first_sizes() const {
    std::vector<int> all(static_cast<std::size_t>(world_size()));
    MPI_Allgather(&first_size_, 1, MPI_INT, all.data(), 1, MPI_INT, MPI_COMM_WORLD);
    return all;
  }

 private:
  int chains_;
  int first_size_ = 0;
  std::map<int, int64_t> held_;
};

/// The groups' sizes rank by rank: {2, 1} is {2, 2, 1}.
std::vector<int> by_rank(const std::vector<int>& sizes) {
  std::vector<int> out;
  for (const int s : sizes) out.insert(out.end(), static_cast<std::size_t>(s), s);
  return out;
}

/// Options as a walkers program reads them from its command line: the words of flags after the program's name.
mcmclb::walkers::Options from_flags(const std::string& flags) {
  std::vector<std::string> words = {"program"};
  std::size_t at = 0;
  while (at < flags.size()) {
    const std::size_t space = std::min(flags.find(' ', at), flags.size());
    if (space > at) words.push_back(flags.substr(at, space - at));
    at = space + 1;
  }
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(words.size());
  mcmclb::walkers::Options o = mcmclb::walkers::options_from_args(argc, argv.data());
  EXPECT_EQ(argc, 1) << flags;
  return o;
}

/// Runs chains under o, short items on ranks that may share cores, and gives each rank's first group size.
std::vector<int> run_sizes(mcmclb::walkers::Options o, int chains) {
  o.item_s = 1e-4;
  o.wait = "polite";
  SizeChains c(chains);
  const mcmclb::walkers::Report r = mcmclb::walkers::run(MPI_COMM_WORLD, c, o);
  EXPECT_TRUE(r.valid) << r.violations;
  return c.first_sizes();
}

/// A folder every rank shares, made by rank 0, removed at the end.
class Folder {
 public:
  Folder() {
    std::string path;
    if (world_rank() == 0) {
      std::string name = (fs::temp_directory_path() / "mcmclb-groups-XXXXXX").string();
      if (::mkdtemp(name.data()) == nullptr) throw std::runtime_error("mkdtemp");
      path = name;
    }
    int length = static_cast<int>(path.size());
    MPI_Bcast(&length, 1, MPI_INT, 0, MPI_COMM_WORLD);
    path.resize(static_cast<std::size_t>(length));
    MPI_Bcast(path.data(), length, MPI_CHAR, 0, MPI_COMM_WORLD);
    path_ = path;
  }
  ~Folder() {
    MPI_Barrier(MPI_COMM_WORLD);
    if (world_rank() == 0) fs::remove_all(path_);
  }
  Folder(const Folder&) = delete;
  Folder& operator=(const Folder&) = delete;
  [[nodiscard]] const fs::path& path() const noexcept { return path_; }

 private:
  fs::path path_;
};

/// The lines advise prints for the workload in `input` (a trace or a study file) at P = the world's size, run as
/// printed with two chains: each rank's first group has the size the simulation's initial groups gave it. Every
/// set-up's line, or (every_setup false) one line per layout simulated.
void lines_run_their_groups(const Folder& folder, const std::string& input, bool every_setup) {
  mcmclb::advising::Options asked;
  asked.input = input;
  asked.ranks = {world_size()};
  for (const std::string& b : mcmclb::walkers::balancer_names()) asked.balancers.push_back(b);
  asked.out = (folder.path() / "advice").string();
  asked.command_line = "mcmclb advise " + input;
  const mcmclb::advising::Plan plan = mcmclb::advising::make_plan(asked);
  const mcmclb::Study study = mcmclb::build_study(plan.study, {}, "advise", std::nullopt, mcmclb::catalog());
  std::set<std::string> lines;
  for (const mcmclb::Point& point : study.points) {
    const std::string flags = mcmclb::advice::run_flags(point.spec);
    const std::vector<int> simulated = *mcmclb::initial_group_sizes(point.spec, world_size());
    if (!lines.insert(every_setup ? flags : point.spec.groups.text() + std::to_string(point.spec.G)).second) continue;
    SCOPED_TRACE(flags);
    EXPECT_EQ(run_sizes(from_flags(flags), 2), by_rank(simulated));
  }
  if (every_setup) {
    EXPECT_GE(lines.size(), mcmclb::walkers::balancer_names().size()) << "a set-up's line not run";
  }
}

// Two walkers recorded on one rank, advised at P: advise simulates them in two groups over the P ranks (2 and 1 at
// 3 ranks, 2 and 2 at 4), not P groups of one. Every set-up's printed line, run as printed, starts those groups.
TEST(AdvisedGroups, ThePrintedLineRunsTheGroupsSimulated) {
  const Folder folder;
  const std::string trace = (folder.path() / "two.csv").string();
  if (world_rank() == 0) {
    mcmclb::walkers::Options o;
    o.record = trace;
    o.item_s = 1e-4;
    SizeChains two(2);
    (void)mcmclb::walkers::run(MPI_COMM_SELF, two, o);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  lines_run_their_groups(folder, trace, true);
}

// A study file's own uneven groups (groups.sizes), advised: the line runs them.
TEST(AdvisedGroups, AStudyFilesGroupsRunAsAdvised) {
  const Folder folder;
  const fs::path study = folder.path() / "uneven.yaml";
  if (world_rank() == 0) {
    std::ofstream(study) << "experiment: uneven\nnprocs: " << world_size() << "\ngroups: {sizes: [1, "
                         << world_size() - 1 << "]}\n";
  }
  MPI_Barrier(MPI_COMM_WORLD);
  lines_run_their_groups(folder, study.string(), false);
}

// Uneven groups asked for by count (nearly equal sizes, the larger first) or by their sizes run with those sizes,
// a chain each.
TEST(AdvisedGroups, UnevenGroupsAskedForRunWithThoseSizes) {
  const int p = world_size();
  EXPECT_EQ(run_sizes(from_flags("--mcmclb-groups " + std::to_string(p - 1)), p - 1),
            by_rank(mcmclb::count_sizes(p, p - 1)));
  // Recorded, the trace's head says them.
  const Folder folder;
  const fs::path trace = folder.path() / "uneven.csv";
  EXPECT_EQ(
      run_sizes(from_flags("--mcmclb-group-sizes 1," + std::to_string(p - 1) + " --mcmclb-record " + trace.string()),
                2),
      by_rank({1, p - 1}));
  std::ifstream in(trace);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find(" at " + std::to_string(p) + " ranks, 2 initial groups of 1 and " + std::to_string(p - 1) +
                      " ranks and 1 chain each\n"),
            std::string::npos)
      << text.substr(0, 400);
  // The line's layout replaces the program's own, whichever key the program set.
  mcmclb::walkers::Options own;
  own.group_sizes = {p};
  std::vector<std::string> words = {"program", "--mcmclb-balancer", "async", "--mcmclb-groups", "2"};
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  int argc = static_cast<int>(words.size());
  EXPECT_EQ(run_sizes(mcmclb::walkers::options_from_args(argc, argv.data(), own), 2),
            by_rank(mcmclb::count_sizes(p, 2)));
}

// Bad layouts: one line naming the flag or key and what is allowed, on every rank, before the trace is written.
TEST(AdvisedGroups, BadGroupsAreRefusedInOneLineBeforeAnythingIsWritten) {
  const auto refused = [](const std::string& flags, const std::string& line) {
    try {
      (void)from_flags(flags);
      ADD_FAILURE() << flags << ": accepted";
    } catch (const mcmclb::InputError& e) {
      EXPECT_EQ(std::string(e.what()), line);
    }
  };
  refused("--mcmclb-groups 0",
          "--mcmclb-groups: '0' is not a number of groups (allowed: an integer in [1, 1073741824])");
  for (const std::string sizes : {"2,,1", "2,1,", "2,x", "0,3", "-1,4"}) {
    refused("--mcmclb-group-sizes " + sizes,
            "--mcmclb-group-sizes: '" + sizes + "' is not allowed (allowed: sizes >= 1 in rank order, e.g. 3,2,2)");
  }
  refused("--mcmclb-group-size 2 --mcmclb-groups 2",
          "--mcmclb-groups: given with --mcmclb-group-size (allowed: one of group-size, groups, group-sizes)");
  const Folder folder;
  // A study file's groups by node: no line could ask a program for them, so advise refuses to advise on them.
  const fs::path nodes = folder.path() / "nodes.yaml";
  if (world_rank() == 0) std::ofstream(nodes) << "experiment: nodes\nnprocs: 4\ngroups: {by: node}\n";
  MPI_Barrier(MPI_COMM_WORLD);
  mcmclb::advising::Options asked;
  asked.input = nodes.string();
  asked.ranks = {4};
  asked.balancers = {"none"};
  try {
    (void)mcmclb::advising::make_plan(asked);
    ADD_FAILURE() << "advised on groups by node";
  } catch (const mcmclb::InputError& e) {
    EXPECT_EQ(std::string(e.what()), "key groups.by: node in " + nodes.string() +
                                         " is not advised on: the line advise prints could not ask a program for "
                                         "it (allowed: G, groups.count or groups.sizes)");
  }
  const fs::path trace = folder.path() / "trace.csv";
  const int p = world_size();
  const std::map<std::string, std::string> lines = {
      {"--mcmclb-groups " + std::to_string(p + 1), "key groups.count: " + std::to_string(p + 1) +
                                                       " groups but nprocs=" + std::to_string(p) +
                                                       " (allowed: 1 to nprocs groups)"},
      {"--mcmclb-group-sizes 1,1", "key groups.sizes: the sizes add up to 2 but nprocs=" + std::to_string(p) +
                                       " (they must cover every rank once, in order)"},
      {"--mcmclb-group-size 2", "key G: G=2 does not divide nprocs=" + std::to_string(p) +
                                    " (walker groups must all have G ranks; or groups.count or groups.sizes)"}};
  for (const auto& [flags, line] : lines) {
    if (flags == "--mcmclb-group-size 2" && p % 2 == 0) continue;  // it divides
    SCOPED_TRACE(flags);
    mcmclb::walkers::Options o = from_flags(flags + " --mcmclb-record " + trace.string());
    SizeChains c(2);
    try {
      (void)mcmclb::walkers::run(MPI_COMM_WORLD, c, o);
      ADD_FAILURE() << "ran";
    } catch (const mcmclb::InputError& e) {
      EXPECT_EQ(std::string(e.what()), line);
    }
    EXPECT_FALSE(fs::exists(trace));
  }
}

}  // namespace
