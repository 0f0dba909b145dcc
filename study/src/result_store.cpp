// SPDX-License-Identifier: BSD-3-Clause
// The results store (mcmclb/result_store.hpp): header checks and upgrades, the folder checks, reading what is
// recorded, and recording. The file helpers are in posix_file.cpp, the lock and the journal in journal.cpp.
//
// Design, and why:
// - One lock per folder: a POSIX record lock (fcntl F_SETLKW) on DIR/.mcmclb.lock, held around every commit and
//   every read. fcntl locks are the ones NFS (through lockd/NLM or NFSv4 state), Lustre (mounted with -o flock)
//   and GPFS honour across hosts; flock() is node-local on some of them, and O_APPEND is not atomic across NFS
//   clients, so neither is relied on. If the filesystem has no record locks at all, open() says so (ENOLCK).
//   The alternative, per-writer part files merged by a collect step, was rejected: users and the plot scripts
//   read runs.csv, ranks.csv and events.csv directly, and would see nothing (or stale data) until a collect ran.
// - fcntl locks belong to the process, not to the descriptor or thread: two threads both "get" the lock, and
//   closing any descriptor of the lock file drops it. So a process-wide mutex is taken first, and the lock file
//   is opened and closed only inside it.
// - Data files are opened after the lock is taken and closed before it is released: NFS's close-to-open
//   consistency then gives each writer the current size and makes its rows visible to the next.
// - Appends write at the end of the file (pwrite at the size read under the lock): O(rows added), never a
//   rewrite of the whole file.
// - A run is recorded all or nothing through a journal: under the lock, DIR/.mcmclb.journal gets the sizes of
//   the files about to grow (written to a temporary name, fsynced, renamed), then ranks.csv, events.csv and
//   runs.csv are appended and fsynced, then the journal is removed: the commit point. Whoever next takes the lock
//   and finds a journal (a writer killed mid-commit, or a node that crashed) truncates the files back to those
//   sizes first. runs.csv is appended last, so a lock-free reader that sees a runs.csv row also sees its ranks.
// - A writer killed while holding the lock loses it with its process; a node that dies holding it keeps it until
//   the filesystem's lock recovery (NFS statd/NSM, Lustre eviction) frees it, so other writers wait, not corrupt.
// - A read-only reader (read_recorded_points: dry runs) creates, writes and rewrites nothing, so a dry run leaves
//   the folder byte for byte as it was: it takes the read lock only where the lock file exists, reads an older
//   version's files through the same upgrade open() rewrites them with (in memory), and reads the files of an
//   unfinished commit up to the sizes in its journal, which is what roll_back would leave.
// - No two runs of a folder share a run_id: a record refuses one whose id runs.csv already holds (DuplicateRunId),
//   checked under the lock so that two writers cannot both pass the check. Each ResultStore keeps the ids it has
//   read and where it stopped, and reads only what was appended since: committed rows are never changed in place (a
//   rollback cuts only an unfinished commit, an upgrade or a rewrite by hand makes a new file), so the check keeps
//   a record's cost to the rows added, by this writer and the others.
// - Writers of older mcmclb versions (read, rewrite, rename) take no lock: sharing a folder with them can still
//   lose rows. Readers (plots, users' tools) need no lock.
#include "mcmclb/result_store.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "journal.hpp"
#include "mcmclb/provenance.hpp"
#include "mcmclb/text.hpp"
#include "posix_file.hpp"

namespace mcmclb::results {

namespace fs = std::filesystem;
using namespace detail;  // the file helpers (posix_file.hpp), the lock and the journal (journal.hpp)

/// The run ids of a runs.csv read so far, and the file and offset where reading stopped (the end of a record).
struct detail::RecordedIds {
  dev_t dev = 0;
  ino_t ino = 0;
  off_t read_to = 0;
  std::unordered_set<std::string> ids;
};

namespace {

std::string header_text(const csv::Row& header) { return csv::line(header); }

/// One CSV line without its newline.
std::string join_header(const csv::Row& fields) {
  std::string text = csv::line(fields);
  text.pop_back();
  return text;
}

std::size_t column(const Table& table, const std::string& name) {
  const auto at = std::find(table.header.begin(), table.header.end(), name);
  if (at == table.header.end()) {
    throw std::logic_error("result store schema: " + table.file + " has no column '" + name + "'");
  }
  return static_cast<std::size_t>(at - table.header.begin());
}

/// What open() found in one table file.
enum class Found { absent, current, upgrade };

/// lock_free: a check before the folder's lock file exists, so that a refused folder is left exactly as it was. A
/// first line without its newline may be a header another writer is writing right now: undecided (absent) then,
/// and the check under the lock decides.
Found check_header(const fs::path& dir, const Table& table, const OlderHeader** older, bool lock_free = false) {
  const fs::path path = dir / table.file;
  const auto fd = open_regular(path, O_RDONLY);
  if (!fd) return Found::absent;
  if (size_of(*fd, path) == 0) return Found::absent;
  const std::string head = first_line(*fd, path);
  if (lock_free && (head.empty() || head.back() != '\n')) return Found::absent;
  if (head.size() >= 2 && head.compare(head.size() - 2, 2, "\r\n") == 0) fail_crlf(path, 1);
  if (head == header_text(table.header)) return Found::current;
  for (const OlderHeader& o : table.older) {
    if (head == header_text(o.header)) {
      if (!o.upgrade) {
        fail(path, "written by " + o.version + ", whose header this version cannot upgrade (expected \"" +
                       printable(join_header(table.header), 4096) + "\"); write to a new output folder");
      }
      *older = &o;
      return Found::upgrade;
    }
  }
  std::string_view seen = head;
  if (!seen.empty() && seen.back() == '\n') seen.remove_suffix(1);
  fail(path, "written by another version of mcmclb, or not an mcmclb " + table.file + ": its header is \"" +
                 printable(seen) + "\", expected \"" + printable(join_header(table.header), 4096) +
                 "\"; write to a new output folder");
}

}  // namespace

namespace {

/// Rewrites a table file of an older version with the current header, once, atomically. Lock held.
void upgrade_file(const fs::path& dir, const Table& table, const OlderHeader& older) {
  const fs::path path = dir / table.file;
  std::string text = header_text(table.header);
  std::size_t row = 1;
  for_each_row(path, [&](std::string_view record) {
    ++row;
    const csv::Row fields = csv::split_line(record);
    if (fields.size() != older.header.size()) {
      fail(path, "row " + std::to_string(row) + " has " + std::to_string(fields.size()) + " fields, not " +
                     std::to_string(older.header.size()) + "; cannot upgrade it from " + older.version);
    }
    const csv::Row upgraded = older.upgrade(fields);
    if (upgraded.size() != table.header.size()) {
      throw std::logic_error("result store: the upgrade of " + table.file + " from " + older.version +
                             " gives rows of the wrong width");
    }
    text += csv::line(upgraded);
  });
  replace_file(dir, path, "upgrade", text);
}

/// The end of the file's last whole record (after its newline outside quotes), or 0 when it has none.
off_t end_of_last_record(const Fd& fd, const fs::path& path, off_t size) {
  constexpr std::size_t kBlock = 1 << 20;
  off_t end = 0;
  bool quoted = false;
  for (off_t at = 0; at < size; at += static_cast<off_t>(kBlock)) {
    const std::string block = read_at(fd, path, at, kBlock);
    for (std::size_t i = 0; i < block.size(); ++i) {
      if (block[i] == '"') quoted = !quoted;
      if (block[i] == '\n' && !quoted) end = at + static_cast<off_t>(i) + 1;
    }
    if (block.size() < kBlock) break;
  }
  return end;
}

/// A table file whose last row lacks its newline with no journal to undo it (a crash of an older version, a full
/// disk outside the store, a copy cut short): the next commit would append its row to the torn one, and every
/// reader would then refuse the folder. So the torn bytes move to FILE.torn-UTC (kept: the user decides) and the
/// file is cut back to its last whole row, said in one line on stderr. Lock held, journal rolled back, header
/// checked (a file of another version is refused, never cut).
void repair_torn_tail(const fs::path& dir, const Table& table) {
  const fs::path path = dir / table.file;
  const auto fd = open_regular(path, O_RDWR);
  if (!fd) return;
  const off_t size = size_of(*fd, path);
  if (size == 0 || read_at(*fd, path, size - 1, 1) == "\n") return;
  const off_t keep = end_of_last_record(*fd, path, size);
  if (keep == 0) return;  // a header without its newline: check_header refused it already
  const std::string torn = read_at(*fd, path, keep, static_cast<std::size_t>(size - keep));
  std::string stamp = utc_now();
  stamp.erase(std::remove_if(stamp.begin(), stamp.end(), [](char c) { return c == ':' || c == '-'; }), stamp.end());
  fs::path kept;
  for (int n = 0;; ++n) {
    kept = dir / (table.file + ".torn-" + stamp + (n > 0 ? "-" + std::to_string(n) : ""));
    const int raw = ::open(kept.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (raw < 0 && errno == EEXIST && n < 100) continue;
    if (raw < 0) fail_errno(kept, "cannot keep the torn last row of " + table.file, errno);
    Fd out(raw);
    write_all(out, kept, torn, 0);
    sync(out, kept);
    out.close_checked(kept);
    break;
  }
  sync_folder(dir);
  if (::ftruncate(fd->get(), keep) != 0) fail_errno(path, "cannot cut its torn last row", errno);
  sync(*fd, path);
  std::fprintf(stderr,
               "mcmclb: %s: its last row was cut off (%lld bytes without a newline and no journal: a crash or a "
               "full disk outside mcmclb's store); moved them to %s and recording goes on after the last whole "
               "row\n",
               shown(path).c_str(), static_cast<long long>(size - keep), shown(kept).c_str());
  std::fflush(stderr);
}

/// Checks the folder's path (one StoreError naming what is wrong) without touching it: true if the folder exists.
bool check_folder_path(const fs::path& dir) {
  if (dir.empty()) throw StoreError("output folder: the path is empty");
  for (const auto& part : dir) {
    if (part.native().size() > NAME_MAX) {
      fail(dir, "the name \"" + printable(part.native(), 40) + "\" is " + std::to_string(part.native().size()) +
                    " bytes long; names may have at most " + std::to_string(NAME_MAX));
    }
  }
  if (dir.native().size() >= PATH_MAX) fail(dir, "the path is longer than " + std::to_string(PATH_MAX) + " bytes");
  std::error_code ec;
  const fs::file_status st = fs::status(dir, ec);
  if (fs::exists(st) && !fs::is_directory(st)) fail(dir, "exists and is not a folder; the output must be a folder");
  return fs::exists(st);
}

/// Creates the folder or checks it, before any work: one StoreError naming what is wrong.
void prepare_folder(const fs::path& dir) {
  if (!check_folder_path(dir)) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) fail(dir, "cannot create this output folder (" + ec.message() + ")");
  }
  struct statfs info {};
  if (::statfs(dir.c_str(), &info) != 0) fail_errno(dir, "cannot inspect this output folder", errno);
  if (info.f_type == PROC_SUPER_MAGIC || info.f_type == SYSFS_MAGIC) {
    fail(dir, "is on /proc or /sys, which cannot hold results; choose another output folder");
  }
  // Permission bits do not tell (root, ACLs, read-only mounts, quotas): write a probe file. Its name is unique
  // per call (mkostemp: O_EXCL), since threads and processes on other hosts open the same folder at once.
  std::string probe = (dir / ".mcmclb.probe.XXXXXX").native();
  const int raw = ::mkostemp(probe.data(), O_CLOEXEC);
  if (raw < 0) fail_errno(dir, "cannot write in this output folder", errno);
  Fd fd(raw);
  const ssize_t wrote = ::write(fd.get(), "x", 1);
  const int err = wrote == 1 ? 0 : errno;
  fd.reset();
  ::unlink(probe.c_str());
  if (wrote != 1) fail_errno(dir, "cannot write in this output folder", err);
}

/// One runs.csv row while its ranks.csv rows are being counted.
struct Tracker {
  long nprocs = 0;
  std::vector<char> seen;
  long count = 0;
};

/// How read_points reads one table file. By default: written with the current header, read whole. A read-only
/// reader (ResultStore::read_recorded_points) reads an older version's file through that version's upgrade, in
/// memory (the same mapping open() rewrites the file with), and a file an unfinished commit grew only up to its
/// size before that commit (as roll_back would truncate it).
struct ReadAs {
  const OlderHeader* older = nullptr;
  off_t limit = -1;
};

/// One record of a file read as `as`, split and in the current header (all its fields); nothing when it is not a
/// row of that version (another width).
std::optional<csv::Row> current_row(std::string_view record, const ReadAs& as, std::size_t width) {
  csv::Row fields = csv::split_line(record);
  if (as.older != nullptr) {
    if (fields.size() != as.older->header.size()) return std::nullopt;
    fields = as.older->upgrade(fields);
  }
  if (fields.size() != width) return std::nullopt;
  return fields;
}

std::map<std::string, RecordedPoint> read_points(const fs::path& dir, const Schema& s, const ReadAs& runs = {},
                                                 const ReadAs& ranks = {}) {
  const std::size_t id_col = column(s.runs, s.run_id_column), nprocs_col = column(s.runs, s.nprocs_column),
                    valid_col = column(s.runs, s.valid_column), started_col = column(s.runs, s.started_column);
  std::vector<std::size_t> key_cols;
  for (const auto& name : s.key_columns) key_cols.push_back(column(s.runs, name));

  struct Row {
    std::string key;
    RecordedRun run;
    std::size_t tracker;
  };
  std::vector<Row> rows;
  std::vector<Tracker> trackers;
  std::unordered_map<std::string, std::size_t> by_id;
  for_each_row(
      dir / s.runs.file,
      [&](std::string_view record) {
        const auto row_fields = current_row(record, runs, s.runs.header.size());
        if (!row_fields) return;  // not a row this version wrote: never counts as recorded
        const csv::Row& fields = *row_fields;
        csv::Row key_fields;
        for (auto c : key_cols) key_fields.push_back(fields[c]);
        Row row{
            ResultStore::key(key_fields), {fields[id_col], fields[valid_col] == "true", false, fields[started_col]}, 0};
        const auto [at, added] = by_id.try_emplace(fields[id_col], trackers.size());
        if (added) {
          const long nprocs = std::max(0L, parse_long(fields[nprocs_col]).value_or(0));
          trackers.push_back({nprocs, std::vector<char>(static_cast<std::size_t>(nprocs), 0), 0});
        }
        row.tracker = at->second;
        rows.push_back(std::move(row));
      },
      runs.limit);

  const std::size_t rid_col = column(s.ranks, s.run_id_column), rank_col = column(s.ranks, s.rank_column);
  const std::size_t needed = std::max(rid_col, rank_col) + 1;
  if (!rows.empty()) {
    for_each_row(
        dir / s.ranks.file,
        [&](std::string_view record) {
          // An older file's row is split whole, for its upgrade; a current one only up to the columns read.
          csv::Row fields;
          if (ranks.older != nullptr) {
            auto upgraded = current_row(record, ranks, s.ranks.header.size());
            if (!upgraded) return;
            fields = std::move(*upgraded);
          } else {
            fields = csv::leading_fields(record, needed);
          }
          if (fields.size() < needed) return;
          const auto at = by_id.find(fields[rid_col]);
          if (at == by_id.end()) return;
          Tracker& t = trackers[at->second];
          const auto rank = parse_long(fields[rank_col]);
          if (!rank || *rank < 0 || *rank >= t.nprocs || t.seen[static_cast<std::size_t>(*rank)]) return;
          t.seen[static_cast<std::size_t>(*rank)] = 1;
          ++t.count;
        },
        ranks.limit);
  }
  std::map<std::string, RecordedPoint> points;
  for (Row& row : rows) {
    const Tracker& t = trackers[row.tracker];
    row.run.complete = t.nprocs > 0 && t.count == t.nprocs;
    points[row.key].runs.push_back(std::move(row.run));
  }
  return points;
}

/// The tables read_points does not read (events.csv, failures.csv, the per-run tables), each record checked as
/// for_each_row checks it: so a row damaged in the middle of any file of the folder (not a torn tail, which the
/// next writer repairs) is refused by status, a dry run and a resume, naming the file and line, as the plot scripts
/// refuse it, and none of them calls complete a folder the plots cannot read. limits: the sizes of an unfinished
/// commit's journal (its files read up to them).
void check_other_tables(const fs::path& dir, const Schema& s, const Sizes& limits = {}) {
  for (const Table* t : all_tables(s)) {
    if (t == &s.runs || t == &s.ranks) continue;
    off_t limit = -1;
    for (const auto& [file, size] : limits) {
      if (file == t->file) limit = size;
    }
    for_each_row(
        dir / t->file, [](std::string_view) {}, limit);
  }
}

/// Brings seen up to runs.csv as it is now: the rows appended since it was last read, or the whole file when the
/// file is another one (replaced, or gone and made again) or no longer continues what was read. Lock held,
/// journal rolled back, so every byte read is committed and stays.
void read_new_ids(const fs::path& path, std::size_t id_col, RecordedIds& seen) {
  const auto fd = open_regular(path, O_RDONLY);
  if (!fd) {
    seen = {};
    return;
  }
  struct stat st {};
  if (::fstat(fd->get(), &st) != 0) fail_errno(path, "cannot inspect", errno);
  const off_t size = st.st_size;
  if (st.st_dev != seen.dev || st.st_ino != seen.ino || size < seen.read_to ||
      (seen.read_to > 0 && read_at(*fd, path, seen.read_to - 1, 1) != "\n")) {
    seen = {};
    seen.dev = st.st_dev;
    seen.ino = st.st_ino;
  }
  constexpr std::size_t kBlock = 1 << 20;
  std::string buffer;  // from offset base of the file: an unfinished record, then what was read after it
  off_t base = seen.read_to;
  std::size_t scanned = 0;
  bool quoted = false;
  while (base + static_cast<off_t>(buffer.size()) < size) {
    const off_t at = base + static_cast<off_t>(buffer.size());
    const std::string block = read_at(*fd, path, at, std::min(kBlock, static_cast<std::size_t>(size - at)));
    if (block.empty()) break;
    buffer += block;
    std::size_t start = 0;
    for (; scanned < buffer.size(); ++scanned) {
      if (buffer[scanned] == '"') quoted = !quoted;
      if (buffer[scanned] != '\n' || quoted) continue;
      const std::string_view record(buffer.data() + start, scanned - start);
      if (base + static_cast<off_t>(start) > 0 && !record.empty()) {  // not the header, not a blank line
        csv::Row fields = csv::leading_fields(record, id_col + 1);
        if (fields.size() > id_col) seen.ids.insert(std::move(fields[id_col]));
      }
      start = scanned + 1;
      seen.read_to = base + static_cast<off_t>(start);
    }
    buffer.erase(0, start);
    base += static_cast<off_t>(start);
    scanned -= start;
  }
}

void check_schema(const Schema& s) {
  const std::vector<const Table*> tables = all_tables(s);
  for (const Table* t : tables) {
    if (t->file.empty() || t->file.find('/') != std::string::npos || t->file[0] == '.' || t->header.empty()) {
      throw std::logic_error("result store schema: bad table file name or empty header: '" + t->file + "'");
    }
    for (const Table* u : tables) {
      if (t != u && t->file == u->file) throw std::logic_error("result store schema: two tables in " + t->file);
    }
  }
  for (const auto& name : s.key_columns) column(s.runs, name);
  for (const auto* name : {&s.run_id_column, &s.nprocs_column, &s.valid_column, &s.started_column}) {
    column(s.runs, *name);
  }
  column(s.ranks, s.run_id_column);
  column(s.ranks, s.rank_column);
  column(s.failures, s.failure_key_column);
  column(s.failures, s.failure_time_column);
}

}  // namespace

bool RecordedPoint::done() const {
  return std::any_of(runs.begin(), runs.end(), [](const RecordedRun& r) { return r.valid && r.complete; });
}

bool RecordedPoint::any_valid() const {
  return std::any_of(runs.begin(), runs.end(), [](const RecordedRun& r) { return r.valid; });
}

std::string ResultStore::key(const csv::Row& key_fields) { return join_header(key_fields); }

ResultStore::ResultStore(fs::path dir, Schema schema)
    : dir_(std::move(dir)), schema_(std::move(schema)), ids_(std::make_shared<RecordedIds>()) {}

ResultStore ResultStore::open(const fs::path& dir, Schema schema) {
  check_schema(schema);
  prepare_folder(dir);
  // A foreign or older header is refused before the lock file is made: the folder is left byte for byte as it
  // was (headers never change under this version's writers, so the lock-free verdict stands).
  for (const Table* t : all_tables(schema)) {
    const OlderHeader* ignored = nullptr;
    (void)check_header(dir, *t, &ignored, true);
  }
  // A damaged journal likewise, before the lock file is made or rewritten: a journal appears only whole (written
  // aside, then renamed), so a lock-free read is never of one half-written.
  (void)read_journal(dir, schema);
  const FolderLock lock(dir);
  roll_back(dir, schema);
  std::vector<std::pair<const Table*, const OlderHeader*>> upgrades;
  for (const Table* t : all_tables(schema)) {
    const OlderHeader* older = nullptr;
    if (check_header(dir, *t, &older) == Found::upgrade) upgrades.emplace_back(t, older);
  }
  // Every file was checked before the first is rewritten: a refused folder is left as it was.
  for (const Table* t : all_tables(schema)) repair_torn_tail(dir, *t);
  for (const auto& [table, older] : upgrades) upgrade_file(dir, *table, *older);
  return ResultStore(dir, std::move(schema));
}

namespace {

/// What prepare_folder() would refuse for lack of rights, found without creating or writing anything (a dry run):
/// the folder, or the nearest existing path above it, must be a folder this process may write in (access(2):
/// permissions and read-only mounts).
void check_could_prepare(const fs::path& dir, bool exists) {
  std::error_code ec;
  fs::path at = fs::absolute(dir, ec);
  if (ec) fail(dir, "cannot resolve this output folder (" + ec.message() + ")");
  while (!exists && !fs::exists(at, ec) && at.has_relative_path()) at = at.parent_path();
  const char* what = exists ? "cannot write in this output folder" : "cannot create this output folder";
  if (!fs::is_directory(at, ec)) fail(dir, std::string(what) + " (" + printable(at.native(), 80) + " is not a folder)");
  if (::access(at.c_str(), W_OK) != 0) fail_errno(dir, what, errno);
}

}  // namespace

std::map<std::string, RecordedPoint> ResultStore::read_recorded_points(const fs::path& dir, const Schema& schema) {
  check_schema(schema);
  const bool exists = check_folder_path(dir);
  check_could_prepare(dir, exists);
  if (!exists) return {};
  // Refused exactly as open() refuses, from the same checks; an older header is noted, not rewritten.
  for (const Table* t : all_tables(schema)) {
    const OlderHeader* ignored = nullptr;
    (void)check_header(dir, *t, &ignored, true);
  }
  (void)read_journal(dir, schema);  // refused before the lock file is made, as in open()
  const FolderLock lock(dir, FolderLock::Mode::read);
  ReadAs runs, ranks;
  for (auto [table, as] : {std::pair{&schema.runs, &runs}, std::pair{&schema.ranks, &ranks}}) {
    // lock_free: without the lock file, a header still being written reads as no file yet, as in open().
    if (check_header(dir, *table, &as->older, true) != Found::upgrade) as->older = nullptr;
  }
  // A commit a killed writer left unfinished: its files read up to their sizes before it (a journal holds sizes
  // of files in the current header, written after any upgrade).
  const Sizes sizes = read_journal(dir, schema).value_or(Sizes{});
  for (const auto& [file, size] : sizes) {
    if (file == schema.runs.file) runs.limit = size;
    if (file == schema.ranks.file) ranks.limit = size;
  }
  check_other_tables(dir, schema, sizes);
  return read_points(dir, schema, runs, ranks);
}

bool ResultStore::record(const RunRecord& run, IfDone if_done) {
  if (run.run.size() != schema_.runs.header.size()) {
    throw std::logic_error("result store: a runs row has " + std::to_string(run.run.size()) + " fields, not " +
                           std::to_string(schema_.runs.header.size()));
  }
  for (const std::string* lines : {&run.rank_lines, &run.event_lines}) {
    if (!lines->empty() && lines->back() != '\n') throw std::logic_error("result store: lines must end in '\\n'");
  }
  if (run.per_run_lines.size() != schema_.per_run.size()) {
    throw std::logic_error("result store: " + std::to_string(run.per_run_lines.size()) + " per-run texts for " +
                           std::to_string(schema_.per_run.size()) + " per-run tables");
  }
  for (const std::string& lines : run.per_run_lines) {
    if (!lines.empty() && lines.back() != '\n') throw std::logic_error("result store: lines must end in '\\n'");
  }
  const std::string run_line = csv::line(run.run);
  // runs.csv last: a lock-free reader that sees the run's row also sees every other file's rows of it.
  std::vector<std::pair<const Table*, std::string_view>> appends = {{&schema_.ranks, run.rank_lines},
                                                                    {&schema_.events, run.event_lines}};
  for (std::size_t i = 0; i < schema_.per_run.size(); ++i) {
    // A per-run table with nothing for this run (e.g. chains.csv outside compute mode) is not touched or created.
    if (!run.per_run_lines[i].empty()) appends.emplace_back(&schema_.per_run[i], run.per_run_lines[i]);
  }
  appends.emplace_back(&schema_.runs, run_line);
  const FolderLock lock(dir_);
  roll_back(dir_, schema_);
  if (if_done == IfDone::skip) {
    csv::Row key_fields;
    for (const std::string& name : schema_.key_columns) key_fields.push_back(run.run[column(schema_.runs, name)]);
    const auto points = read_points(dir_, schema_);
    const auto point = points.find(key(key_fields));
    if (point != points.end() && point->second.done()) return false;
  }
  const std::size_t id_col = column(schema_.runs, schema_.run_id_column);
  const fs::path runs_path = dir_ / schema_.runs.file;
  read_new_ids(runs_path, id_col, *ids_);
  if (ids_->ids.count(run.run[id_col]) > 0) {
    throw DuplicateRunId(shown(runs_path) + ": run_id " + printable(run.run[id_col], 200) +
                         " is already recorded (allowed: each run_id once); nothing was written");
  }
  commit(dir_, appends);
  return true;
}

void ResultStore::record_failures(const std::vector<csv::Row>& rows) {
  std::string text;
  for (const csv::Row& row : rows) {
    if (row.size() != schema_.failures.header.size()) {
      throw std::logic_error("result store: a failures row has " + std::to_string(row.size()) + " fields, not " +
                             std::to_string(schema_.failures.header.size()));
    }
    text += csv::line(row);
  }
  const FolderLock lock(dir_);
  roll_back(dir_, schema_);
  commit(dir_, {{&schema_.failures, text}});
}

std::map<std::string, RecordedPoint> ResultStore::recorded_points() const {
  const FolderLock lock(dir_);
  roll_back(dir_, schema_);
  check_other_tables(dir_, schema_);
  return read_points(dir_, schema_);
}

std::vector<csv::Row> ResultStore::current_failures() const {
  const FolderLock lock(dir_);
  roll_back(dir_, schema_);
  return current_failures_locked();
}

void ResultStore::prune_failures() {
  const FolderLock lock(dir_);
  roll_back(dir_, schema_);
  const fs::path path = dir_ / schema_.failures.file;
  if (!fs::exists(path)) return;
  std::string text = header_text(schema_.failures.header);
  for (const csv::Row& row : current_failures_locked()) text += csv::line(row);
  replace_file(dir_, path, "prune", text);
}

void ResultStore::rewrite_file(const std::string& name,
                               const std::function<std::string(const std::filesystem::path&)>& rewrite) {
  const FolderLock lock(dir_);
  const fs::path path = dir_ / name;
  replace_file(dir_, path, "rewrite", rewrite(path));
}

std::vector<csv::Row> ResultStore::current_failures_locked() const {
  const auto points = read_points(dir_, schema_);
  const std::size_t key_col = column(schema_.failures, schema_.failure_key_column);
  const std::size_t time_col = column(schema_.failures, schema_.failure_time_column);
  std::vector<csv::Row> current;
  for_each_row(dir_ / schema_.failures.file, [&](std::string_view record) {
    csv::Row fields = csv::split_line(record);
    if (fields.size() != schema_.failures.header.size()) return;
    const auto point = fields[key_col].empty() ? points.end() : points.find(fields[key_col]);
    const bool fixed = point != points.end() &&
                       std::any_of(point->second.runs.begin(), point->second.runs.end(), [&](const RecordedRun& r) {
                         return r.valid && r.complete && !r.started.empty() && r.started >= fields[time_col];
                       });
    if (!fixed) current.push_back(std::move(fields));
  });
  return current;
}

}  // namespace mcmclb::results
