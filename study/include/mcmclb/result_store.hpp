// SPDX-License-Identifier: BSD-3-Clause
// The results store: one output folder holding runs.csv, ranks.csv, events.csv, failures.csv and the per-run
// tables a schema adds (mcmclb's: provenance.csv, chains.csv, traces.csv), safe for any number of concurrent
// writers (processes on one machine or on several hosts sharing a parallel filesystem). A run is recorded in all
// of its run files (runs, ranks, events and the per-run tables: six in mcmclb's schema) or in none; appends cost
// O(rows added); every file's header is checked when the store is opened, before any work. Uses no MPI: rank 0
// and the sweep process both use it.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "mcmclb/csv.hpp"
#include "mcmclb/input_error.hpp"

namespace mcmclb::results {

/// Bad output folder or foreign/older files in it: a one-line message naming the path. An InputError, so the
/// mains print it once and exit 2 like any other bad input.
class StoreError : public InputError {
 public:
  using InputError::InputError;
};

/// record() found the run's id in runs.csv already and wrote nothing: two runs under one id would be joined into
/// one by every reader of ranks.csv and events.csv. The caller records the run again under a new id; one that does
/// not is stopped like any StoreError, with one line and exit 2.
class DuplicateRunId : public StoreError {
 public:
  using StoreError::StoreError;
};

namespace detail {
struct RecordedIds;  // result_store.cpp
}

/// An earlier header of a table that this version still recognises.
struct OlderHeader {
  csv::Row header;
  std::string version;  // named in messages, e.g. "mcmclb 0.1"
  /// Maps one row of that version to the current header. Empty: a folder holding that version is refused.
  std::function<csv::Row(const csv::Row&)> upgrade;
};

/// One CSV file of the folder and its header (one schema per file).
struct Table {
  std::string file;  // e.g. "runs.csv"
  csv::Row header;
  std::vector<OlderHeader> older;
};

/// The four tables and the columns the store itself reads, found by name (never by position).
struct Schema {
  Table runs, ranks, events, failures;
  /// More tables with rows per run (e.g. provenance.csv), recorded in the same commit as ranks/events/runs.
  std::vector<Table> per_run;
  std::vector<std::string> key_columns;      // runs.csv columns that identify a point (the resume key)
  std::string run_id_column = "run_id";      // runs.csv and ranks.csv
  std::string nprocs_column = "nprocs";      // runs.csv: how many ranks.csv rows make the run complete
  std::string valid_column = "valid";        // runs.csv: "true" when the run's invariants held
  std::string started_column = "utc_start";  // runs.csv: ISO 8601 UTC ("2026-01-02T03:04:05Z")
  std::string rank_column = "rank";          // ranks.csv: 0 .. nprocs-1
  std::string failure_key_column = "key";    // failures.csv: ResultStore::key() of the failed point
  std::string failure_time_column = "utc";   // failures.csv: ISO 8601 UTC, when the failure was recorded
};

/// One run: its runs.csv row and its ranks.csv and events.csv lines (csv::line() text, each ending in '\n').
struct RunRecord {
  csv::Row run;
  std::string rank_lines;
  std::string event_lines;
  std::vector<std::string> per_run_lines;  // one entry per Schema::per_run table, in that order
};

/// A run as resume sees it.
struct RecordedRun {
  std::string run_id;
  bool valid = false;
  bool complete = false;  // ranks.csv holds a row for every rank 0 .. nprocs-1
  std::string started;    // the started column
};

/// Every runs.csv row of one point, in file order.
struct RecordedPoint {
  std::vector<RecordedRun> runs;
  /// Recorded valid and complete at least once: what a resumed sweep skips.
  [[nodiscard]] bool done() const;
  /// Recorded valid at least once, complete or not (a valid run that lost rank rows is not done).
  [[nodiscard]] bool any_valid() const;
};

class ResultStore {
 public:
  /// Creates DIR (and its parents) or checks that it is a writable folder, rolls back a run a killed writer left
  /// half-recorded, and checks the header of every table file present: the current header is fine, a known
  /// older one is upgraded (rewritten once) or refused, anything else is refused. Throws StoreError (one line,
  /// naming the file and the expected header) before anything is written. Throws std::logic_error if the
  /// schema names a column its table lacks.
  static ResultStore open(const std::filesystem::path& dir, Schema schema);

  /// The points recorded in DIR, as open(dir, schema).recorded_points() would give them, read without writing,
  /// creating or locking for writing anything (a dry run: every file byte for byte as it was, no lock file made).
  /// A folder that does not exist holds no points. Foreign or unupgradable headers are refused with the same
  /// StoreError as open(); a known older file is read through its upgrade in memory, not rewritten; a commit a
  /// killed writer left unfinished is read as rolled back. Takes the folder's lock for reading when its lock file
  /// exists and the lock comes within 2 s (else reads without it, which is safe: see result_store.cpp). A folder
  /// this process could not create or write in (access(2)) is refused as open() would refuse it.
  static std::map<std::string, RecordedPoint> read_recorded_points(const std::filesystem::path& dir,
                                                                   const Schema& schema);

  /// What record() does when the run's point is already done (recorded valid and complete).
  enum class IfDone {
    append,  // record it anyway: a repeated measurement (`mcmclb run` without --resume, `sweep --force`)
    skip,    // record nothing: another writer (a concurrent or resubmitted job of the same study) got there first
  };
  /// Appends one run to ranks.csv, events.csv, the per-run tables it has rows for and runs.csv, all or nothing,
  /// under the folder's lock. Returns false, having written nothing, when if_done is skip and the run's point is
  /// already done: the check and the append are under one lock, so two writers of one point never both record it.
  /// Throws DuplicateRunId, having written nothing, when runs.csv already holds the run's id (checked under the
  /// same lock, reading only the runs.csv rows added since this object's last record).
  bool record(const RunRecord& run, IfDone if_done = IfDone::append);
  /// Appends rows (failures.csv's header order) to failures.csv under the folder's lock.
  void record_failures(const std::vector<csv::Row>& rows);

  /// Every recorded point by key(), each with its runs and whether each run is complete. Every file of the folder
  /// is read through: a row the plot scripts would refuse (a field count not the header's, CRLF line endings, NUL
  /// bytes) anywhere in one is a StoreError naming the file and line (read_recorded_points() likewise).
  [[nodiscard]] std::map<std::string, RecordedPoint> recorded_points() const;
  /// failures.csv rows not superseded by a valid, complete run of the same point that started at or after the
  /// failure was recorded (a resume that fixed the point). Rows without a key stay current.
  [[nodiscard]] std::vector<csv::Row> current_failures() const;
  /// Rewrites failures.csv (atomically, under the folder's lock) to hold only current_failures(): a point a
  /// later run fixed is no longer listed. failures.csv is small (a row per failed point), so this is cheap.
  void prune_failures();
  /// Replaces the folder's file NAME (one that is not a table of the schema, e.g. stopping.csv) by what rewrite
  /// makes of its path, read and written under the folder's write lock: two writers that each merge their rows into
  /// the file never drop each other's. The new text is written to a temporary file and renamed over NAME.
  void rewrite_file(const std::string& name, const std::function<std::string(const std::filesystem::path&)>& rewrite);

  /// The key of a point: its key-column values as one CSV line without the newline (printable, unambiguous).
  static std::string key(const csv::Row& key_fields);

  [[nodiscard]] const std::filesystem::path& dir() const { return dir_; }
  [[nodiscard]] const Schema& schema() const { return schema_; }

 private:
  [[nodiscard]] std::vector<csv::Row> current_failures_locked() const;  // lock held
  ResultStore(std::filesystem::path dir, Schema schema);
  std::filesystem::path dir_;
  Schema schema_;
  std::shared_ptr<detail::RecordedIds> ids_;  // runs.csv's ids as far as record() has read them
};

/// Test hook: when the environment variable MCMCLB_STORE_CRASH_AFTER names a table file ("ranks.csv", ...),
/// a commit kills its own process with SIGKILL right after appending to that file, as `kill -9` would;
/// "ranks.csv:half" kills it after writing half of that file's new text (a torn line); "ranks.csv:stop" stops it
/// there with SIGSTOP, holding the folder's lock, until a SIGCONT.
inline constexpr const char* kCrashAfterVariable = "MCMCLB_STORE_CRASH_AFTER";

/// A writer that has waited this many seconds (default 10) for the folder's lock says on stderr, in one line, who
/// holds it (pid, host, since when), and goes on waiting.
inline constexpr const char* kLockWarnVariable = "MCMCLB_LOCK_WARN_S";

}  // namespace mcmclb::results
