// SPDX-License-Identifier: BSD-3-Clause
// Tests of the results store (study/include/mcmclb/result_store.hpp): concurrent writer processes and threads,
// a writer killed mid-commit, resume's completeness check, header checks, bad output paths, current failures, the
// cost of one append to a 57 MB ranks.csv, and run ids: unique when made, refused when already recorded. Plain
// GoogleTest: writers are forked processes, no MPI.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>
#include <unordered_set>

#include "mcmclb/result_store.hpp"
#include "mcmclb/run_id.hpp"

namespace mcmclb::results {
namespace {

namespace fs = std::filesystem;
using namespace std::string_literals;

Schema test_schema() {
  Schema s;
  s.runs = {"runs.csv", {"run_id", "experiment", "nprocs", "rep", "time_s", "valid", "violations", "utc_start"}, {}};
  s.ranks = {"ranks.csv",
             {"run_id", "rank", "elapsed_s", "work_s", "polling_s", "waiting_s", "regroup_s", "other_s", "regroups",
              "items_worked", "final_group_first", "final_group_last"},
             {}};
  s.events = {"events.csv", {"run_id", "t_s", "kind"}, {}};
  s.failures = {"failures.csv", {"point", "reason", "utc", "key"}, {}};
  s.key_columns = {"experiment", "nprocs", "rep"};
  return s;
}

csv::Row key_fields(const std::string& experiment, int nprocs, int rep) {
  return {experiment, std::to_string(nprocs), std::to_string(rep)};
}

std::string rank_line(const std::string& run_id, int rank) {
  return csv::line({run_id, std::to_string(rank), "1.25", "1.0", "0.125", "0.0625", "0.03125", "0.03125", "3",
                    std::to_string(1000 + rank), "0", "7"});
}

/// A run with one ranks.csv row per rank and two events; its violations field needs quoting.
RunRecord make_run(const std::string& run_id, const std::string& experiment, int nprocs, int rep, bool valid = true,
                   const std::string& started = "2026-01-01T00:00:00Z") {
  RunRecord r;
  r.run = {run_id,
           experiment,
           std::to_string(nprocs),
           std::to_string(rep),
           "1.5",
           valid ? "true" : "false",
           valid ? "" : "a, \"b\"\nc",
           started};
  for (int i = 0; i < nprocs; ++i) r.rank_lines += rank_line(run_id, i);
  r.event_lines = csv::line({run_id, "0", "initial"}) + csv::line({run_id, "0.5", "merge"});
  return r;
}

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void spit(const fs::path& path, const std::string& text, bool append = false) {
  std::ofstream out(path, std::ios::binary | (append ? std::ios::app : std::ios::trunc));
  out << text;
}

/// The records of a CSV text (a newline inside quotes does not end one), split into fields; independent of the
/// store's own reader. A last record without its newline is returned too, so the caller sees a torn line.
std::vector<csv::Row> records(const std::string& text) {
  std::vector<csv::Row> out;
  std::size_t start = 0;
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '"') quoted = !quoted;
    if (text[i] == '\n' && !quoted) {
      out.push_back(csv::split_line(std::string_view(text).substr(start, i - start)));
      start = i + 1;
    }
  }
  if (start < text.size()) out.push_back({"<torn>", text.substr(start)});
  return out;
}

/// A path as the store's messages show it.
std::string shown_path(const fs::path& path) { return path.string(); }

bool one_printable_line(const std::string& text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
}

std::set<std::string> names_in(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.insert(entry.path().filename().string());
  return names;
}

/// Every file of dir (hidden ones too) with its bytes: a folder left exactly as it was compares equal.
std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::directory_iterator(dir)) files[entry.path().filename().string()] = slurp(entry.path());
  return files;
}

/// Recorded points as comparable values: key -> each run's id, valid, complete, started.
std::map<std::string, std::vector<std::string>> summary(const std::map<std::string, RecordedPoint>& points) {
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& [key, point] : points) {
    for (const RecordedRun& r : point.runs) {
      out[key].push_back(r.run_id + (r.valid ? " valid" : " invalid") + (r.complete ? " complete " : " torn ") +
                         r.started);
    }
  }
  return out;
}

class ResultStoreTest : public testing::Test {
 protected:
  void SetUp() override {
    const auto* info = testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string(info->test_suite_name()) + "-" + info->name();
    std::replace(name.begin(), name.end(), '/', '-');
    root_ = fs::temp_directory_path() / ("mcmclb-store-" + std::to_string(::getpid()) + "-" + name);
    fs::remove_all(root_);
    fs::create_directories(root_);
    dir_ = root_ / "out";
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  fs::path root_, dir_;
};

/// Waits for a forked child; its exit status, or 128 + signal.
int wait_child(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
  }
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

/// Checks the folder holds exactly the expected runs (id -> nprocs), each with every rank row and both events,
/// one header per file, no torn or extra rows, no journal left.
void expect_folder_holds(const fs::path& dir, const std::map<std::string, int>& expected) {
  const Schema s = test_schema();
  const auto runs = records(slurp(dir / "runs.csv"));
  const auto ranks = records(slurp(dir / "ranks.csv"));
  const auto events = records(slurp(dir / "events.csv"));
  ASSERT_FALSE(runs.empty());
  EXPECT_EQ(runs.front(), s.runs.header);
  EXPECT_EQ(ranks.front(), s.ranks.header);
  EXPECT_EQ(events.front(), s.events.header);
  std::map<std::string, int> seen_runs;
  for (std::size_t i = 1; i < runs.size(); ++i) {
    ASSERT_EQ(runs[i].size(), s.runs.header.size()) << "torn runs.csv row " << i;
    ++seen_runs[runs[i][0]];
  }
  std::map<std::string, std::set<std::string>> seen_ranks;
  for (std::size_t i = 1; i < ranks.size(); ++i) {
    ASSERT_EQ(ranks[i].size(), s.ranks.header.size()) << "torn ranks.csv row " << i;
    EXPECT_TRUE(seen_ranks[ranks[i][0]].insert(ranks[i][1]).second) << "duplicate rank row " << i;
  }
  std::map<std::string, int> seen_events;
  for (std::size_t i = 1; i < events.size(); ++i) {
    ASSERT_EQ(events[i].size(), s.events.header.size()) << "torn events.csv row " << i;
    ++seen_events[events[i][0]];
  }
  EXPECT_EQ(runs.size() - 1, expected.size());
  for (const auto& [id, nprocs] : expected) {
    EXPECT_EQ(seen_runs[id], 1) << id;
    EXPECT_EQ(seen_ranks[id].size(), static_cast<std::size_t>(nprocs)) << id;
    EXPECT_EQ(seen_events[id], 2) << id;
  }
  EXPECT_EQ(seen_ranks.size(), expected.size()) << "ranks.csv rows of unknown runs";
  EXPECT_EQ(seen_events.size(), expected.size()) << "events.csv rows of unknown runs";
  EXPECT_FALSE(fs::exists(dir / ".mcmclb.journal"));
}

int writer_nprocs(int writer, int m) { return 1 + (m * 7 + writer * 3) % 64; }

/// The run id writer k gives its m-th run, e.g. "w3-7".
std::string writer_run_id(char prefix, int k, int m) {
  std::string id(1, prefix);
  id += std::to_string(k);
  id += '-';
  id += std::to_string(m);
  return id;
}

/// Runs `writers` processes at once, each opening the store in dir (the opens race with the first appends) and
/// calling write(store, its number); expects every one to exit 0.
void run_writer_processes(const fs::path& dir, int writers, const std::function<void(ResultStore&, int)>& write) {
  std::vector<pid_t> children;
  for (int k = 0; k < writers; ++k) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      try {
        ResultStore store = ResultStore::open(dir, test_schema());
        write(store, k);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "writer %d: %s\n", k, e.what());
        ::_exit(1);
      }
      ::_exit(0);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) EXPECT_EQ(wait_child(pid), 0);
}

TEST_F(ResultStoreTest, ConcurrentWriterProcessesLoseNothing) {
  constexpr int K = 4, M = 50;
  run_writer_processes(dir_, K, [](ResultStore& store, int k) {
    for (int m = 0; m < M; ++m) {
      const std::string id = writer_run_id('w', k, m);
      store.record(make_run(id, "conc", writer_nprocs(k, m), k * M + m, m % 5 != 0));
    }
  });

  std::map<std::string, int> expected;
  for (int k = 0; k < K; ++k) {
    for (int m = 0; m < M; ++m) expected[writer_run_id('w', k, m)] = writer_nprocs(k, m);
  }
  expect_folder_holds(dir_, expected);
  const auto points = ResultStore::open(dir_, test_schema()).recorded_points();
  ASSERT_EQ(points.size(), static_cast<std::size_t>(K * M));
  for (int k = 0; k < K; ++k) {
    for (int m = 0; m < M; ++m) {
      const auto& p = points.at(ResultStore::key(key_fields("conc", writer_nprocs(k, m), k * M + m)));
      ASSERT_EQ(p.runs.size(), 1u);
      EXPECT_TRUE(p.runs[0].complete);
      EXPECT_EQ(p.done(), m % 5 != 0);
    }
  }
}

// Two jobs of one study that both work a point (a resubmitted Slurm job while the first still runs, two sweeps of
// one folder) must not both record it: with IfDone::skip the done-check and the append are one locked step.
TEST_F(ResultStoreTest, ConcurrentWritersOfTheSamePointsRecordEachOnce) {
  constexpr int K = 4, M = 40;
  run_writer_processes(dir_, K, [](ResultStore& store, int k) {
    for (int m = 0; m < M; ++m) {  // every writer records the same M points, valid except every 4th
      const std::string id = writer_run_id('w', k, m);
      store.record(make_run(id, "same", 1 + m % 3, m, m % 4 != 0), ResultStore::IfDone::skip);
    }
  });
  ResultStore store = ResultStore::open(dir_, test_schema());
  const auto points = store.recorded_points();
  ASSERT_EQ(points.size(), static_cast<std::size_t>(M));
  for (int m = 0; m < M; ++m) {
    const auto& p = points.at(ResultStore::key(key_fields("same", 1 + m % 3, m)));
    // A done point has exactly one run; an invalid run is no reason to skip, so every writer's invalid run stays.
    EXPECT_EQ(p.runs.size(), m % 4 != 0 ? 1u : static_cast<std::size_t>(K)) << "point " << m;
  }
  // IfDone::append (a deliberate repeat: run without --resume, sweep --force) still appends to a done point.
  EXPECT_FALSE(store.record(make_run("again-skip", "same", 2, 1), ResultStore::IfDone::skip));
  EXPECT_TRUE(store.record(make_run("again", "same", 2, 1), ResultStore::IfDone::append));
  EXPECT_EQ(store.recorded_points().at(ResultStore::key(key_fields("same", 2, 1))).runs.size(), 2u);
}

TEST_F(ResultStoreTest, ConcurrentWriterThreadsLoseNothing) {
  // fcntl locks do not exclude threads of one process (SMPI runs ranks as threads): the store's mutex must.
  constexpr int K = 4, M = 25;
  std::vector<std::thread> threads;
  threads.reserve(K);
  std::vector<std::string> errors(K);
  for (int k = 0; k < K; ++k) {
    threads.emplace_back([&, k] {
      try {
        ResultStore store = ResultStore::open(dir_, test_schema());
        for (int m = 0; m < M; ++m) {
          store.record(make_run(writer_run_id('t', k, m), "thr", writer_nprocs(k, m), m));
        }
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(k)] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& e : errors) EXPECT_EQ(e, "");
  std::map<std::string, int> expected;
  for (int k = 0; k < K; ++k) {
    for (int m = 0; m < M; ++m) expected[writer_run_id('t', k, m)] = writer_nprocs(k, m);
  }
  expect_folder_holds(dir_, expected);
}

class KilledWriter : public ResultStoreTest, public testing::WithParamInterface<const char*> {};

TEST_P(KilledWriter, NextWriterRollsBackTheHalfRecordedRun) {
  ResultStore store = ResultStore::open(dir_, test_schema());
  store.record(make_run("a", "kill", 3, 0));
  store.record(make_run("b", "kill", 5, 1));
  const std::map<std::string, std::string> before = {{"runs.csv", slurp(dir_ / "runs.csv")},
                                                     {"ranks.csv", slurp(dir_ / "ranks.csv")},
                                                     {"events.csv", slurp(dir_ / "events.csv")}};
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::setenv(kCrashAfterVariable, GetParam(), 1);
    try {
      ResultStore::open(dir_, test_schema()).record(make_run("crashed", "kill", 7, 2));
    } catch (...) {
    }
    ::_exit(0);  // not reached when the hook fires
  }
  ASSERT_EQ(wait_child(pid), 128 + SIGKILL);
  // The writer died mid-commit: its journal is there, and the file it had appended to holds its rows.
  ASSERT_TRUE(fs::exists(dir_ / ".mcmclb.journal"));
  const std::string file = std::string(GetParam()).substr(0, std::string(GetParam()).find(':'));
  EXPECT_NE(slurp(dir_ / file), before.at(file));

  // A read-only reader (a dry run) sees the folder as rolled back, and leaves it as it is: journal, torn rows.
  const auto crashed = snapshot(dir_);
  const auto read_only = ResultStore::read_recorded_points(dir_, test_schema());
  EXPECT_EQ(snapshot(dir_), crashed);
  EXPECT_EQ(read_only.count(ResultStore::key(key_fields("kill", 7, 2))), 0u);
  EXPECT_EQ(read_only.size(), 2u);
  EXPECT_TRUE(read_only.at(ResultStore::key(key_fields("kill", 5, 1))).done());

  // A writer that opened the store before the crash rolls back before appending its own run.
  const RunRecord next = make_run("c", "kill", 2, 3);
  store.record(next);
  EXPECT_EQ(slurp(dir_ / "ranks.csv"), before.at("ranks.csv") + next.rank_lines);
  EXPECT_EQ(slurp(dir_ / "events.csv"), before.at("events.csv") + next.event_lines);
  EXPECT_EQ(slurp(dir_ / "runs.csv"), before.at("runs.csv") + csv::line(next.run));
  expect_folder_holds(dir_, {{"a", 3}, {"b", 5}, {"c", 2}});
  EXPECT_EQ(store.recorded_points().count(ResultStore::key(key_fields("kill", 7, 2))), 0u);
}

INSTANTIATE_TEST_SUITE_P(AfterEachFile, KilledWriter,
                         testing::Values("ranks.csv:half", "ranks.csv", "events.csv", "runs.csv:half", "runs.csv"),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '.', '_');
                           std::replace(name.begin(), name.end(), ':', '_');
                           return name;
                         });

TEST_F(ResultStoreTest, OpenRollsBackAKilledWritersRun) {
  ResultStore::open(dir_, test_schema()).record(make_run("a", "kill", 4, 0));
  const std::string ranks_before = slurp(dir_ / "ranks.csv"), events_before = slurp(dir_ / "events.csv");
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::setenv(kCrashAfterVariable, "events.csv", 1);
    try {
      ResultStore::open(dir_, test_schema()).record(make_run("crashed", "kill", 6, 1));
    } catch (...) {
    }
    ::_exit(0);
  }
  ASSERT_EQ(wait_child(pid), 128 + SIGKILL);
  ASSERT_TRUE(fs::exists(dir_ / ".mcmclb.journal"));
  const auto points = ResultStore::open(dir_, test_schema()).recorded_points();
  EXPECT_EQ(slurp(dir_ / "ranks.csv"), ranks_before);
  EXPECT_EQ(slurp(dir_ / "events.csv"), events_before);
  EXPECT_EQ(points.size(), 1u);
  expect_folder_holds(dir_, {{"a", 4}});
}

TEST_F(ResultStoreTest, ResumeSeesRunsWithMissingRankRows) {
  ResultStore store = ResultStore::open(dir_, test_schema());
  const std::string odd_id = "A,\"x\"";  // quoted in every file
  store.record(make_run(odd_id, "res", 3, 0));
  store.record(make_run("D", "res", 2, 3, /*valid=*/false));
  // What a writer of an older version could leave: runs.csv rows whose ranks.csv rows were lost (B keeps 2 of 4,
  // C none), and a rank row outside 0..nprocs-1 and a duplicate that must not make B complete.
  spit(dir_ / "ranks.csv", rank_line("B", 0) + rank_line("B", 1) + rank_line("B", 1) + rank_line("B", 4), true);
  spit(dir_ / "runs.csv",
       csv::line({"B", "res", "4", "1", "1", "true", "", "2026-01-01T00:00:00Z"}) +
           csv::line({"C", "res", "2", "2", "1", "true", "", "2026-01-01T00:00:00Z"}),
       true);
  const auto points = store.recorded_points();
  ASSERT_EQ(points.size(), 4u);
  const auto& a = points.at(ResultStore::key(key_fields("res", 3, 0)));
  EXPECT_EQ(a.runs[0].run_id, odd_id);
  EXPECT_TRUE(a.runs[0].complete);
  EXPECT_TRUE(a.done());
  for (const auto& [nprocs, rep] : {std::pair{4, 1}, std::pair{2, 2}}) {
    const auto& p = points.at(ResultStore::key(key_fields("res", nprocs, rep)));
    EXPECT_FALSE(p.runs[0].complete) << rep;
    EXPECT_TRUE(p.runs[0].valid) << rep;
    EXPECT_FALSE(p.done()) << rep;
  }
  const auto& d = points.at(ResultStore::key(key_fields("res", 2, 3)));
  EXPECT_TRUE(d.runs[0].complete);
  EXPECT_FALSE(d.done());
}

// A row damaged in the middle of a file (not a torn tail), CRLF line endings and NUL bytes: every reader of the
// store refuses them naming the file and the line on which the record ends, as plots/mcmclb_csv.py does (a
// quoted field's line breaks count), instead of skipping the row and calling the folder complete.
TEST_F(ResultStoreTest, DamagedRowsAreRefusedNamingFileAndLine) {
  const std::string run_b = csv::line({"B", "dmg", "1", "1", "1", "true", "", "2026-01-01T00:00:00Z"});
  const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      // (file, text appended after one recorded run whose runs.csv row spans lines 2-3, expected message)
      {"runs.csv", run_b.substr(0, 9) + run_b, "runs.csv: line 4 has 11 fields, the header has 8"},
      {"runs.csv", run_b.substr(0, run_b.size() - 1) + "\r\n" + run_b, "runs.csv: line 4 ends in \\r (CRLF"},
      {"runs.csv", "B,dmg,1,1,1,tr\0ue,,x\n"s + run_b, "runs.csv: line 4 contains NUL bytes"},
      {"events.csv", "B,1\n", "events.csv: line 4 has 2 fields, the header has 3"},
      {"failures.csv", "1,x\n", "failures.csv: line 2 has 2 fields, the header has 4"},
  };
  for (const auto& [file, damage, expected] : cases) {
    fs::remove_all(dir_);
    ResultStore store = ResultStore::open(dir_, test_schema());
    store.record(make_run("A", "dmg", 1, 0, /*valid=*/false));  // its violations field holds a line break
    if (file == "failures.csv") spit(dir_ / file, "point,reason,utc,key\n");
    spit(dir_ / file, damage, true);
    for (const bool read_only : {false, true}) {
      try {
        if (read_only) {
          (void)ResultStore::read_recorded_points(dir_, test_schema());
        } else {
          (void)store.recorded_points();
        }
        ADD_FAILURE() << file << " " << expected << ": accepted";
      } catch (const StoreError& e) {
        EXPECT_NE(std::string(e.what()).find((dir_ / expected).string()), std::string::npos) << e.what();
      }
    }
  }
  // A blank line is no row (the plot scripts skip it too).
  fs::remove_all(dir_);
  ResultStore store = ResultStore::open(dir_, test_schema());
  store.record(make_run("A", "dmg", 1, 0));
  spit(dir_ / "runs.csv", "\n" + run_b, true);
  EXPECT_EQ(store.recorded_points().size(), 2u);
}

TEST_F(ResultStoreTest, ForeignHeaderIsRefusedBeforeAnythingIsWritten) {
  const Schema s = test_schema();
  for (const std::string file : {"runs.csv", "ranks.csv", "events.csv", "failures.csv"}) {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    spit(dir_ / file, "a,b,c\n1,2,3\n");
    try {
      ResultStore::open(dir_, s);
      ADD_FAILURE() << "a foreign " << file << " was accepted";
    } catch (const StoreError& e) {
      const std::string what = e.what();
      EXPECT_TRUE(one_printable_line(what)) << what;
      EXPECT_NE(what.find((dir_ / file).string()), std::string::npos) << what;
      EXPECT_NE(what.find("\"a,b,c\""), std::string::npos) << what;
      const Table& t = file == "runs.csv"     ? s.runs
                       : file == "ranks.csv"  ? s.ranks
                       : file == "events.csv" ? s.events
                                              : s.failures;
      std::string expected = csv::line(t.header);
      expected.pop_back();
      EXPECT_NE(what.find("expected \"" + expected + "\""), std::string::npos) << what;
    }
    EXPECT_EQ(slurp(dir_ / file), "a,b,c\n1,2,3\n");
    EXPECT_EQ(names_in(dir_), (std::set<std::string>{file})) << "a refused folder is left as it was (no lock file)";
  }
}

TEST_F(ResultStoreTest, GarbageHeaderIsShownAsPrintableExcerpt) {
  fs::create_directories(dir_);
  spit(dir_ / "runs.csv", "\xEF\xBB\xBFrun_id\0\x1b[31m,\xff\r\n"s + std::string(5000, 'z') + "\n");
  spit(dir_ / "ranks.csv", std::string(200000, '\x01'));  // no newline at all
  for (const std::string file : {"runs.csv", "ranks.csv"}) {
    try {
      ResultStore::open(dir_, test_schema());
      ADD_FAILURE() << "garbage accepted";
    } catch (const StoreError& e) {
      const std::string what = e.what();
      EXPECT_TRUE(one_printable_line(what)) << what;
      EXPECT_LT(what.size(), 800u) << what;
      EXPECT_NE(what.find(file), std::string::npos) << what;
    }
    fs::remove(dir_ / file);
  }
  spit(dir_ / "runs.csv", "\xEF\xBB\xBFrun_id\0\x1b"s + "\n");
  try {
    ResultStore::open(dir_, test_schema());
    ADD_FAILURE() << "garbage accepted";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("\"\\xef\\xbb\\xbfrun_id\\x00\\x1b\""), std::string::npos) << e.what();
  }
}

TEST_F(ResultStoreTest, HeaderChangedAfterOpenIsRefusedBeforeAppending) {
  ResultStore store = ResultStore::open(dir_, test_schema());
  store.record(make_run("a", "late", 2, 0));
  const std::string runs = slurp(dir_ / "runs.csv"), ranks = slurp(dir_ / "ranks.csv");
  spit(dir_ / "events.csv", "x,y\n");  // another program (or version) took the file over meanwhile
  EXPECT_THROW(store.record(make_run("b", "late", 2, 1)), StoreError);
  EXPECT_EQ(slurp(dir_ / "runs.csv"), runs);
  EXPECT_EQ(slurp(dir_ / "ranks.csv"), ranks);
  EXPECT_EQ(slurp(dir_ / "events.csv"), "x,y\n");
  EXPECT_FALSE(fs::exists(dir_ / ".mcmclb.journal"));
}

Schema schema_with_older_runs(bool upgradable) {
  Schema s = test_schema();
  OlderHeader v0{{"run_id", "experiment", "nprocs", "rep", "time_s", "valid", "utc_start"}, "mcmclb 0.0", nullptr};
  if (upgradable) {
    v0.upgrade = [](const csv::Row& old) {
      csv::Row row(old.begin(), old.begin() + 6);
      row.push_back("");  // no violations recorded then
      row.push_back(old[6]);
      return row;
    };
  }
  s.runs.older.push_back(v0);
  return s;
}

/// A runs.csv in the older (v0) header of schema_with_older_runs.
const std::string kOlderRunsCsv =
    "run_id,experiment,nprocs,rep,time_s,valid,utc_start\n"
    "r1,old,2,0,1.5,true,2025-01-01T00:00:00Z\n"
    "r2,old,2,1,1.5,false,2025-01-01T00:00:01Z\n";

TEST_F(ResultStoreTest, OlderHeaderIsUpgradedOrRefused) {
  fs::create_directories(dir_);
  const std::string old = kOlderRunsCsv;
  spit(dir_ / "runs.csv", old);
  try {
    ResultStore::open(dir_, schema_with_older_runs(false));
    ADD_FAILURE() << "an older header was accepted without upgrade";
  } catch (const StoreError& e) {
    const std::string what = e.what();
    EXPECT_TRUE(one_printable_line(what)) << what;
    EXPECT_NE(what.find("mcmclb 0.0"), std::string::npos) << what;
    EXPECT_NE(what.find("runs.csv"), std::string::npos) << what;
  }
  EXPECT_EQ(slurp(dir_ / "runs.csv"), old);

  ResultStore store = ResultStore::open(dir_, schema_with_older_runs(true));
  EXPECT_EQ(slurp(dir_ / "runs.csv"),
            "run_id,experiment,nprocs,rep,time_s,valid,violations,utc_start\n"
            "r1,old,2,0,1.5,true,,2025-01-01T00:00:00Z\n"
            "r2,old,2,1,1.5,false,,2025-01-01T00:00:01Z\n");
  store.record(make_run("r3", "old", 2, 2));
  const auto points = store.recorded_points();
  EXPECT_EQ(points.size(), 3u);
  EXPECT_FALSE(points.at(ResultStore::key(key_fields("old", 2, 0))).runs[0].complete);  // its rank rows never were
  EXPECT_TRUE(points.at(ResultStore::key(key_fields("old", 2, 2))).done());
}

TEST_F(ResultStoreTest, ReadOnlyReaderWritesNothingAndReadsOlderFilesAsUpgraded) {
  // No folder: no points, and none made (nor its parents).
  EXPECT_TRUE(ResultStore::read_recorded_points(dir_ / "a" / "b", test_schema()).empty());
  EXPECT_FALSE(fs::exists(dir_));

  fs::create_directories(dir_);
  const std::string old = kOlderRunsCsv;
  spit(dir_ / "runs.csv", old);
  spit(dir_ / "ranks.csv", csv::line(test_schema().ranks.header) + rank_line("r1", 0) + rank_line("r1", 1));
  const auto untouched = snapshot(dir_);
  // A folder that could not be created (its parent is a file) is refused as open() refuses it.
  EXPECT_THROW((void)ResultStore::read_recorded_points(dir_ / "runs.csv" / "sub", test_schema()), StoreError);
  EXPECT_THROW((void)ResultStore::open(dir_ / "runs.csv" / "sub", test_schema()), StoreError);
  // Refused as open() refuses, and nothing written.
  EXPECT_THROW((void)ResultStore::read_recorded_points(dir_, schema_with_older_runs(false)), StoreError);
  EXPECT_EQ(snapshot(dir_), untouched);

  const auto read_only = ResultStore::read_recorded_points(dir_, schema_with_older_runs(true));
  EXPECT_EQ(snapshot(dir_), untouched) << "no upgrade, no lock file";
  EXPECT_TRUE(read_only.at(ResultStore::key(key_fields("old", 2, 0))).done());
  EXPECT_FALSE(read_only.at(ResultStore::key(key_fields("old", 2, 1))).done());
  // What the store reads after upgrading the file in place: the same points.
  const auto opened = ResultStore::open(dir_, schema_with_older_runs(true)).recorded_points();
  EXPECT_NE(slurp(dir_ / "runs.csv"), old);
  EXPECT_EQ(summary(read_only), summary(opened));

  // With the lock file there (this version wrote here), the read lock leaves everything as it was too.
  const auto current = snapshot(dir_);
  ASSERT_EQ(current.count(".mcmclb.lock"), 1u);
  EXPECT_EQ(summary(ResultStore::read_recorded_points(dir_, schema_with_older_runs(true))), summary(opened));
  EXPECT_EQ(snapshot(dir_), current);
}

void expect_refused(const fs::path& dir, const std::string& why) {
  try {
    ResultStore::open(dir, test_schema());
    ADD_FAILURE() << dir << " accepted";
  } catch (const StoreError& e) {
    const std::string what = e.what();
    EXPECT_TRUE(one_printable_line(what)) << what;
    EXPECT_NE(what.find(why), std::string::npos) << what;
  }
}

TEST_F(ResultStoreTest, BadOutputPathsAreRefused) {
  spit(root_ / "file", "x");
  expect_refused(root_ / "file", "not a folder");
  expect_refused(root_ / "file" / "sub", "cannot create");
  expect_refused("/proc/nope", "cannot create");
  expect_refused("/proc/self", "/proc");
  expect_refused("/sys/kernel", "/proc or /sys");
  expect_refused(root_ / std::string(300, 'n'), "at most 255");
  expect_refused("", "empty");
  EXPECT_EQ(names_in(root_), std::set<std::string>{"file"});
  // Parents are created.
  ResultStore::open(root_ / "a" / "b" / "c", test_schema()).record(make_run("x", "e", 1, 0));
  EXPECT_TRUE(fs::is_regular_file(root_ / "a" / "b" / "c" / "runs.csv"));
}

TEST_F(ResultStoreTest, UnwritableFolderIsRefused) {
  fs::create_directories(dir_);
  bool immutable = false;
  if (::geteuid() == 0) {
    // Root ignores permission bits; an immutable folder refuses root too (needs CAP_LINUX_IMMUTABLE).
    const int fd = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY);
    int flags = 0;
    immutable = fd >= 0 && ::ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0 &&
                (flags |= FS_IMMUTABLE_FL, ::ioctl(fd, FS_IOC_SETFLAGS, &flags) == 0);
    if (fd >= 0) ::close(fd);
    if (!immutable) GTEST_SKIP() << "running as root without a way to make a folder unwritable";
  } else {
    fs::permissions(dir_, fs::perms::owner_read | fs::perms::owner_exec);
  }
  expect_refused(dir_, "cannot write in this output folder");
  if (immutable) {
    const int fd = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY);
    int flags = 0;
    ::ioctl(fd, FS_IOC_GETFLAGS, &flags);
    flags &= ~FS_IMMUTABLE_FL;
    ::ioctl(fd, FS_IOC_SETFLAGS, &flags);
    ::close(fd);
  } else {
    fs::permissions(dir_, fs::perms::owner_all);
  }
  EXPECT_TRUE(fs::is_empty(dir_));
}

TEST_F(ResultStoreTest, FailuresFixedByALaterValidRunAreNotCurrent) {
  ResultStore store = ResultStore::open(dir_, test_schema());
  const auto key = [](int rep) { return ResultStore::key(key_fields("f", 2, rep)); };
  const std::string t = "2026-01-01T00:00:10Z";
  store.record_failures({{"0", "fixed by a later resume", t, key(0)},
                         {"1", "only an earlier valid run", t, key(1)},
                         {"2", "later run invalid", t, key(2)},
                         {"3", "later run incomplete", t, key(3)},
                         {"4", "never rerun", t, key(4)},
                         {"5", "no key (older failures.csv)", t, ""}});
  store.record(make_run("r0", "f", 2, 0, true, "2026-01-01T00:00:10Z"));  // same second: after the failure
  store.record(make_run("r1", "f", 2, 1, true, "2026-01-01T00:00:09Z"));
  store.record(make_run("r2", "f", 2, 2, false, "2026-01-01T00:01:00Z"));
  RunRecord incomplete = make_run("r3", "f", 2, 3, true, "2026-01-01T00:01:00Z");
  incomplete.rank_lines = rank_line("r3", 0);
  store.record(incomplete);
  std::vector<std::string> reasons;
  for (const auto& row : store.current_failures()) reasons.push_back(row[1]);
  EXPECT_EQ(reasons, (std::vector<std::string>{"only an earlier valid run", "later run invalid", "later run incomplete",
                                               "never rerun", "no key (older failures.csv)"}));
  EXPECT_EQ(records(slurp(dir_ / "failures.csv")).size(), 7u);  // nothing is deleted: it is history
}

/// Bytes this process has read and written through system calls so far (Linux task I/O accounting).
std::optional<std::pair<long long, long long>> io_bytes() {
  std::ifstream in("/proc/self/io");
  std::string name;
  long long value = 0, read = -1, written = -1;
  while (in >> name >> value) {
    if (name == "rchar:") read = value;
    if (name == "wchar:") written = value;
  }
  if (read < 0 || written < 0) return std::nullopt;
  return std::pair{read, written};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

TEST_F(ResultStoreTest, AppendCostsTheRowsAddedNotTheFileSize) {
  ResultStore store = ResultStore::open(dir_, test_schema());
  store.record(make_run("seed", "cost", 1, 0));
  {  // ranks.csv of about 57 MB, as after a long study: rows of runs that are not in runs.csv (fine here)
    std::string block;
    for (int i = 0; i < 8192; ++i) block += rank_line("cost-2026-01-01T00:00:00Z-00000a", i);
    std::ofstream out(dir_ / "ranks.csv", std::ios::binary | std::ios::app);
    while (out.tellp() < 57'000'000) out << block;
  }
  const auto file_size = fs::file_size(dir_ / "ranks.csv");
  ASSERT_GE(file_size, 57'000'000u);

  constexpr int kRanks = 8192, kRepeats = 5;
  std::vector<double> store_s, rewrite_s;
  for (int i = 0; i < kRepeats; ++i) {
    const RunRecord run = make_run("big" + std::to_string(i), "cost", kRanks, i + 1);
    const auto io_before = io_bytes();
    const auto start = std::chrono::steady_clock::now();
    store.record(run);
    store_s.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    const auto io_after = io_bytes();
    if (io_before && io_after) {
      // O(rows added): what was read (headers, a last byte, no whole file) and written does not grow with the file.
      EXPECT_LT(io_after->first - io_before->first, 1'000'000);
      EXPECT_LT(io_after->second - io_before->second,
                static_cast<long long>(run.rank_lines.size() + run.event_lines.size()) + 100'000);
    }
  }
  // The previous way: csv::append_text reads the whole file and renames a rewritten copy over it.
  const fs::path copy = root_ / "rewrite-ranks.csv";
  fs::copy_file(dir_ / "ranks.csv", copy);
  for (int i = 0; i < kRepeats; ++i) {
    const RunRecord run = make_run("old" + std::to_string(i), "cost", kRanks, i + 1);
    const auto start = std::chrono::steady_clock::now();
    csv::append_text(copy, test_schema().ranks.header, run.rank_lines);
    rewrite_s.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  const auto [smin, smax] = std::minmax_element(store_s.begin(), store_s.end());
  const auto [rmin, rmax] = std::minmax_element(rewrite_s.begin(), rewrite_s.end());
  std::printf(
      "append of one %d-rank run to a %.1f MB ranks.csv, %d repeats: store median %.4f s (%.4f..%.4f), "
      "whole-file rewrite median %.4f s (%.4f..%.4f)\n",
      kRanks, static_cast<double>(file_size) / 1e6, kRepeats, median(store_s), *smin, *smax, median(rewrite_s), *rmin,
      *rmax);
  RecordProperty("store_append_median_s", std::to_string(median(store_s)));
  RecordProperty("rewrite_append_median_s", std::to_string(median(rewrite_s)));
  const auto read_start = std::chrono::steady_clock::now();
  const auto points = store.recorded_points();  // what resume and the sweep read before and after a launch
  std::printf("recorded_points() over that folder: %.3f s\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - read_start).count());
  for (int i = 0; i < kRepeats; ++i) EXPECT_TRUE(points.at(ResultStore::key(key_fields("cost", kRanks, i + 1))).done());
}

/// Runs body in a forked child with a time limit: its exit status, 128 + SIGALRM if it hung.
int in_child_within(unsigned seconds, const std::function<int()>& body) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::alarm(seconds);
    int status = 1;
    try {
      status = body();
    } catch (...) {
    }
    ::_exit(status);
  }
  return pid < 0 ? -1 : wait_child(pid);
}

/// What the store makes of dir: the StoreError's text, or "" when it opened and read the folder.
std::string store_verdict(const fs::path& dir, bool read_only) {
  try {
    if (read_only) {
      (void)ResultStore::read_recorded_points(dir, test_schema());
    } else {
      (void)ResultStore::open(dir, test_schema()).recorded_points();
    }
  } catch (const StoreError& e) {
    return e.what();
  }
  return "";
}

TEST_F(ResultStoreTest, FilesThatAreNotRegularAreRefusedNotWaitedOn) {
  // A FIFO blocks open() and read() until a writer comes (never); /dev/zero never ends; a folder reads as empty.
  const std::vector<std::pair<std::string, std::function<void(const fs::path&)>>> cases = {
      {"runs.csv", [](const fs::path& p) { ASSERT_EQ(::mkfifo(p.c_str(), 0644), 0); }},
      {"ranks.csv", [](const fs::path& p) { ASSERT_EQ(::mkfifo(p.c_str(), 0644), 0); }},
      {"failures.csv", [](const fs::path& p) { ASSERT_EQ(::mkfifo(p.c_str(), 0644), 0); }},
      {".mcmclb.lock", [](const fs::path& p) { ASSERT_EQ(::mkfifo(p.c_str(), 0644), 0); }},
      {".mcmclb.journal", [](const fs::path& p) { ASSERT_EQ(::mkfifo(p.c_str(), 0644), 0); }},
      {"runs.csv", [](const fs::path& p) { fs::create_symlink("/dev/zero", p); }},
      {"events.csv", [](const fs::path& p) { fs::create_directory(p); }},
  };
  int n = 0;
  for (const auto& [file, make] : cases) {
    for (const bool read_only : {false, true}) {
      const fs::path dir = root_ / ("case" + std::to_string(++n));
      ResultStore::open(dir, test_schema()).record(make_run("a", "fifo", 2, 0));
      fs::remove_all(dir / file);
      make(dir / file);
      const auto before = names_in(dir);
      const int status = in_child_within(10, [&] {
        const std::string what = store_verdict(dir, read_only);
        const bool named = what.find(shown_path(dir / file)) != std::string::npos &&
                           what.find("not a regular file") != std::string::npos && one_printable_line(what);
        if (!named) std::fprintf(stderr, "%s (read only: %d): \"%s\"\n", file.c_str(), read_only, what.c_str());
        return named ? 0 : 1;
      });
      EXPECT_EQ(status, 0) << file << (read_only ? " (read only)" : "") << (status == 128 + SIGALRM ? ": HANG" : "");
      EXPECT_EQ(names_in(dir), before) << file;
    }
  }
}

TEST_F(ResultStoreTest, AWriterWaitingForAStoppedHolderSaysWhoHoldsTheLock) {
  ResultStore::open(dir_, test_schema()).record(make_run("a", "stop", 2, 0));
  const pid_t holder = ::fork();
  ASSERT_GE(holder, 0);
  if (holder == 0) {
    ::setenv(kCrashAfterVariable, "ranks.csv:stop", 1);  // stops itself mid-commit, the lock held
    try {
      ResultStore::open(dir_, test_schema()).record(make_run("held", "stop", 2, 1));
    } catch (...) {
      ::_exit(1);
    }
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(holder, &status, WUNTRACED), holder);
  ASSERT_TRUE(WIFSTOPPED(status));
  const fs::path said = root_ / "waiter.stderr";
  const pid_t waiter = ::fork();
  ASSERT_GE(waiter, 0);
  if (waiter == 0) {
    const int fd = ::open(said.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, 2);
    ::setenv(kLockWarnVariable, "0.3", 1);
    try {
      ResultStore::open(dir_, test_schema()).record(make_run("waiter", "stop", 3, 2));
    } catch (...) {
      ::_exit(1);
    }
    ::_exit(0);
  }
  // The waiter names the holder within a few seconds and goes on waiting.
  std::string text;
  for (int i = 0; i < 100 && text.find('\n') == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    text = slurp(said);
  }
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  EXPECT_NE(text.find(".mcmclb.lock"), std::string::npos) << text;
  EXPECT_NE(text.find("pid " + std::to_string(holder) + " host " + host), std::string::npos) << text;
  EXPECT_NE(text.find("still waiting"), std::string::npos) << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
  EXPECT_EQ(::waitpid(waiter, &status, WNOHANG), 0) << "the waiter gave up instead of waiting";
  ::kill(holder, SIGCONT);
  EXPECT_EQ(wait_child(holder), 0);
  EXPECT_EQ(wait_child(waiter), 0);
  expect_folder_holds(dir_, {{"a", 2}, {"held", 2}, {"waiter", 3}});
}

/// A torn last row with no journal (an older binary's crash, a full disk outside the store): the next open cuts
/// it off into FILE.torn-UTC and says so, so the next row is not appended to it and every reader takes the folder.
class TornTail : public ResultStoreTest, public testing::WithParamInterface<std::pair<const char*, int>> {};

TEST_P(TornTail, IsCutOffKeptAndNamedWhenTheStoreOpens) {
  const auto [file, cut] = GetParam();
  ResultStore::open(dir_, test_schema()).record(make_run("a", "torn", 2, 0));
  ResultStore::open(dir_, test_schema()).record(make_run("b", "torn", 2, 1));
  const std::string whole = slurp(dir_ / file);
  fs::resize_file(dir_ / file, whole.size() - static_cast<std::size_t>(cut));
  testing::internal::CaptureStderr();
  ResultStore store = ResultStore::open(dir_, test_schema());
  const std::string said = testing::internal::GetCapturedStderr();
  EXPECT_EQ(std::count(said.begin(), said.end(), '\n'), 1) << said;
  EXPECT_NE(said.find(shown_path(dir_ / file) + ": its last row was cut off"), std::string::npos) << said;
  std::vector<fs::path> kept;
  for (const auto& entry : fs::directory_iterator(dir_)) {
    if (entry.path().filename().string().rfind(std::string(file) + ".torn-", 0) == 0) kept.push_back(entry.path());
  }
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_NE(said.find(kept[0].filename().string()), std::string::npos) << said;
  const std::string now = slurp(dir_ / file);
  EXPECT_EQ(now + slurp(kept[0]), whole.substr(0, whole.size() - static_cast<std::size_t>(cut)));
  EXPECT_EQ(now.back(), '\n');
  store.record(make_run("c", "torn", 2, 2));
  for (const char* table : {"runs.csv", "ranks.csv", "events.csv"}) {
    const std::size_t width = csv::split_line(slurp(dir_ / table).substr(0, slurp(dir_ / table).find('\n'))).size();
    for (const auto& row : records(slurp(dir_ / table))) EXPECT_EQ(row.size(), width) << table << ": a torn row";
  }
  // A run whose runs.csv or ranks.csv row was cut is not done; the others are, and reopening finds nothing more to
  // repair.
  testing::internal::CaptureStderr();
  const auto points = ResultStore::open(dir_, test_schema()).recorded_points();
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  EXPECT_TRUE(points.at(ResultStore::key(key_fields("torn", 2, 0))).done());
  EXPECT_TRUE(points.at(ResultStore::key(key_fields("torn", 2, 2))).done());
  const bool cut_rows_of_b = std::string(file) != "events.csv";  // events do not make a run complete
  EXPECT_EQ(points.count(ResultStore::key(key_fields("torn", 2, 1))) > 0 &&
                points.at(ResultStore::key(key_fields("torn", 2, 1))).done(),
            !cut_rows_of_b);
}

// Run ids are unique by construction within a process (a sequence number), whatever the rate: a million in what is
// mostly one UTC second, with no duplicate.
TEST(RunIds, AMillionFromOneProcessAreDistinct) {
  constexpr std::size_t kIds = 1'000'000;
  std::unordered_set<std::string> ids;
  ids.reserve(kIds);
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < kIds; ++i) ASSERT_TRUE(ids.insert(next_run_id("rate")).second) << i;
  const double took_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%zu run ids in %.2f s\n", kIds, took_s);
  const std::string id = *ids.begin();
  EXPECT_EQ(id.rfind("rate-", 0), 0u) << id;
}

/// The ids each of `processes` forked children makes (`each` apiece), all started at once; make runs in the child.
std::vector<std::string> ids_of_children(const fs::path& dir, int processes, int each,
                                         const std::function<std::string()>& make) {
  std::vector<pid_t> children;
  for (int k = 0; k < processes; ++k) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      std::ofstream out(dir / ("ids-" + std::to_string(k)));
      for (int i = 0; i < each; ++i) out << make() << '\n';
      out.close();
      ::_exit(out ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (const pid_t pid : children) EXPECT_EQ(wait_child(pid), 0);
  std::vector<std::string> ids;
  for (int k = 0; k < processes; ++k) {
    std::istringstream in(slurp(dir / ("ids-" + std::to_string(k))));
    for (std::string line; std::getline(in, line);) ids.push_back(line);
  }
  return ids;
}

std::size_t distinct(const std::vector<std::string>& ids) {
  return std::unordered_set<std::string>(ids.begin(), ids.end()).size();
}

// Processes started in the same second, each with its own salt; this one made an id before forking, and its
// children do not repeat its ids either.
TEST_F(ResultStoreTest, RunIdsOfProcessesStartedTogetherAreDistinct) {
  const std::string parents = next_run_id("fork");
  std::vector<std::string> ids = ids_of_children(root_, 8, 20'000, [] { return next_run_id("fork"); });
  ASSERT_EQ(ids.size(), 8u * 20'000);
  ids.push_back(parents);
  EXPECT_EQ(distinct(ids), ids.size());
}

// Simulated processes (SimGrid's SMPI) may share one pid and read one simulated clock: the salt still differs.
TEST_F(ResultStoreTest, RunIdsOfSimulatedProcessesWithOnePidAndClockAreDistinct) {
  const std::vector<std::string> ids = ids_of_children(root_, 8, 1'000, [] {
    static RunIds same_pid_and_clock(RunIds::draw_salt(4242, 0));
    return same_pid_and_clock.next("sim");
  });
  ASSERT_EQ(ids.size(), 8u * 1'000);
  EXPECT_EQ(distinct(ids), ids.size());
}

// A run whose id is already in runs.csv is refused under the lock, with nothing written: whether this store wrote
// the first one, another writer did (seen through the rows appended since this store last read), or the file was
// replaced meanwhile.
TEST_F(ResultStoreTest, ARunIdAlreadyRecordedIsRefusedAndNothingIsWritten) {
  ResultStore store = ResultStore::open(dir_, test_schema());
  store.record(make_run("a", "dup", 2, 0));
  const auto sizes = [&] {
    std::vector<std::uintmax_t> out;
    for (const char* f : {"runs.csv", "ranks.csv", "events.csv"}) out.push_back(fs::file_size(dir_ / f));
    return out;
  };
  const auto before = sizes();
  try {
    store.record(make_run("a", "dup", 2, 1));
    ADD_FAILURE() << "a second run under id a was recorded";
  } catch (const DuplicateRunId& e) {
    EXPECT_NE(std::string(e.what()).find("runs.csv: run_id a is already recorded"), std::string::npos) << e.what();
  }
  EXPECT_EQ(sizes(), before);

  ResultStore other = ResultStore::open(dir_, test_schema());
  other.record(make_run("b", "dup", 2, 2));
  EXPECT_THROW(store.record(make_run("b", "dup", 3, 3)), DuplicateRunId);
  EXPECT_THROW(other.record(make_run("a", "dup", 3, 3)), DuplicateRunId);
  store.record(make_run("c", "dup", 3, 3));
  EXPECT_THROW(other.record(make_run("c", "dup", 3, 4)), DuplicateRunId);

  // runs.csv replaced by one holding only run z (a rewrite by hand): both stores read it again.
  const std::string header = slurp(dir_ / "runs.csv").substr(0, slurp(dir_ / "runs.csv").find('\n') + 1);
  spit(dir_ / "runs.new", header + csv::line(make_run("z", "dup", 1, 9).run));
  fs::rename(dir_ / "runs.new", dir_ / "runs.csv");
  EXPECT_THROW(store.record(make_run("z", "dup", 1, 10)), DuplicateRunId);
  other.record(make_run("a", "dup", 2, 11));  // gone from the new file
  std::vector<std::string> ids;
  for (const csv::Row& row : records(slurp(dir_ / "runs.csv"))) ids.push_back(row[0]);
  EXPECT_EQ(ids, (std::vector<std::string>{"run_id", "z", "a"}));
}

INSTANTIATE_TEST_SUITE_P(CutOff, TornTail,
                         testing::Values(std::pair{"runs.csv", 40}, std::pair{"ranks.csv", 20},
                                         std::pair{"events.csv", 5}),
                         [](const auto& info) {
                           std::string name = std::string(info.param.first) + "_" + std::to_string(info.param.second);
                           std::replace(name.begin(), name.end(), '.', '_');
                           return name;
                         });

}  // namespace
}  // namespace mcmclb::results
