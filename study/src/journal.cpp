// SPDX-License-Identifier: BSD-3-Clause
// The folder lock and the commit journal (journal.hpp).
#include "journal.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <thread>

#include "mcmclb/provenance.hpp"
#include "mcmclb/text.hpp"

namespace mcmclb::results::detail {

namespace fs = std::filesystem;

namespace {

constexpr std::chrono::seconds kReadLockPatience{2};  // see FolderLock

/// How long a writer waits for the folder's lock before saying who holds it: MCMCLB_LOCK_WARN_S seconds
/// (docs/reference/columns.md), 10 by default.
std::chrono::milliseconds lock_warn_after() {
  const char* text = std::getenv(kLockWarnVariable);
  double seconds = 10.0;
  if (text != nullptr && *text != '\0') {
    char* end = nullptr;
    const double value = std::strtod(text, &end);
    if (*end == '\0' && value >= 0 && value < 1e6) seconds = value;
  }
  return std::chrono::milliseconds(static_cast<long long>(seconds * 1000));
}

std::string host_name() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) return "?";
  return printable(host, 100);
}

/// Writes "pid PID host HOST since UTC" into the lock file, for a writer waiting behind this one to name it (the
/// fcntl lock itself tells only a local pid). Best effort: a full disk must not stop a commit that can still go.
void note_holder(const Fd& fd) {
  const std::string text = "pid " + std::to_string(::getpid()) + " host " + host_name() + " since " + utc_now() + "\n";
  if (::pwrite(fd.get(), text.data(), text.size(), 0) == static_cast<ssize_t>(text.size())) {
    if (::ftruncate(fd.get(), static_cast<off_t>(text.size())) != 0) return;
  }
}

/// One line on stderr naming who holds path's lock (what the holder wrote, and the pid fcntl reports).
void say_who_holds(const fs::path& path, const Fd& fd, std::chrono::milliseconds waited) {
  struct flock probe {};
  probe.l_type = F_WRLCK;
  probe.l_whence = SEEK_SET;
  std::string holder;
  if (::fcntl(fd.get(), F_GETLK, &probe) == 0 && probe.l_type != F_UNLCK && probe.l_pid > 0) {
    holder = "pid " + std::to_string(probe.l_pid);
  }
  std::string noted = read_at(fd, path, 0, 512);
  noted = noted.substr(0, noted.find('\n'));
  // The note is the holder's if it names the same pid (fcntl gives 0 or a server's pid for a remote holder).
  if (noted.rfind("pid ", 0) == 0 && (holder.empty() || noted.rfind(holder + " ", 0) == 0)) holder = noted;
  if (holder.empty()) holder = "another process";
  std::fprintf(stderr,
               "mcmclb: %s: waited %.0f s for the results lock, held by %s (a stopped or hung writer? it is "
               "released when that process ends or continues); still waiting\n",
               shown(path).c_str(), std::chrono::duration<double>(waited).count(), printable(holder, 300).c_str());
  std::fflush(stderr);
}

void write_journal(const fs::path& dir, const Sizes& sizes) {
  std::string text = "mcmclb journal 1\n";
  for (const auto& [file, size] : sizes) text += file + " " + std::to_string(size) + "\n";
  const fs::path temp = dir / kJournalTemp;
  Fd fd = open_file(temp, O_WRONLY | O_CREAT | O_TRUNC);
  write_all(fd, temp, text, 0);
  sync(fd, temp);
  fd.close_checked(temp);
  if (::rename(temp.c_str(), (dir / kJournalFile).c_str()) != 0) fail_errno(dir / kJournalFile, "cannot write", errno);
  sync_folder(dir);
}

void remove_journal(const fs::path& dir) {
  if (::unlink((dir / kJournalFile).c_str()) != 0 && errno != ENOENT) {
    fail_errno(dir / kJournalFile, "cannot remove", errno);
  }
  sync_folder(dir);
}

}  // namespace

std::vector<const Table*> all_tables(const Schema& s) {
  std::vector<const Table*> tables = {&s.runs, &s.ranks, &s.events, &s.failures};
  for (const Table& t : s.per_run) tables.push_back(&t);
  return tables;
}

FolderLock::FolderLock(const fs::path& dir, Mode mode) : guard_(process_mutex()) {
  const fs::path path = dir / kLockFile;
  if (mode == Mode::read) {
    std::string why;
    const int raw = open_regular_file(path, O_RDONLY, &why);
    if (raw < 0 && errno == EINVAL) fail(path, why + " (allowed: a regular file, the lock mcmclb makes; remove it)");
    if (raw < 0) return;  // no writer of this version has written here yet, or the file is not ours to read
    fd_ = Fd(raw);
  } else {
    fd_ = std::move(*open_regular(path, O_RDWR | O_CREAT));
  }
  struct flock lock {};
  lock.l_type = mode == Mode::read ? F_RDLCK : F_WRLCK;
  lock.l_whence = SEEK_SET;  // l_start = l_len = 0: the whole file
  if (mode == Mode::read) {
    const auto give_up = std::chrono::steady_clock::now() + kReadLockPatience;
    while (::fcntl(fd_.get(), F_SETLK, &lock) != 0) {
      const bool held = errno == EAGAIN || errno == EACCES || errno == EINTR;
      if (!held || std::chrono::steady_clock::now() >= give_up) {
        fd_.reset();  // read without the lock
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return;
  }
  // Tries without blocking for warn_after (a commit lasts milliseconds), then names the holder in one line and
  // waits in the kernel's queue as long as it takes: a stopped (SIGSTOP, a suspended job) or hung writer keeps
  // the lock, and waiting loses nothing, while giving up would throw away the run just measured.
  const auto warn_at = std::chrono::steady_clock::now() + lock_warn_after();
  auto pause = std::chrono::milliseconds(1);
  bool blocking = false;
  while (::fcntl(fd_.get(), blocking ? F_SETLKW : F_SETLK, &lock) != 0) {
    if (errno == EINTR) continue;
    if (errno == ENOLCK || errno == EOPNOTSUPP || errno == ENOSYS) {
      fail_errno(path,
                 "this filesystem does not support POSIX record locks, which concurrent writers need (NFS: run "
                 "lockd; Lustre: mount with -o flock)",
                 errno);
    }
    if (errno != EAGAIN && errno != EACCES) fail_errno(path, "cannot lock", errno);
    if (std::chrono::steady_clock::now() >= warn_at) {
      say_who_holds(path, fd_, lock_warn_after());
      blocking = true;
      continue;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
  note_holder(fd_);
}

std::mutex& FolderLock::process_mutex() {
  static std::mutex m;
  return m;
}

std::optional<Sizes> read_journal(const fs::path& dir, const Schema& schema) {
  const fs::path journal = dir / kJournalFile;
  const auto fd = open_regular(journal, O_RDONLY);
  if (!fd) return std::nullopt;
  std::istringstream in(read_at(*fd, journal, 0, kMaxHeaderBytes));
  std::string line;
  std::getline(in, line);
  Sizes sizes;
  bool damaged = line != "mcmclb journal 1";
  const std::vector<const Table*> tables = all_tables(schema);
  while (!damaged && std::getline(in, line)) {
    const auto space = line.rfind(' ');
    const std::string file = line.substr(0, space == std::string::npos ? 0 : space);
    const long size = space == std::string::npos ? -1 : parse_long(line.substr(space + 1)).value_or(-1);
    const bool known = std::any_of(tables.begin(), tables.end(), [&](const Table* t) { return t->file == file; });
    damaged = !known || size < 0;
    if (!damaged) sizes.emplace_back(file, static_cast<off_t>(size));
  }
  if (damaged) {
    fail(journal, "damaged journal of an unfinished commit; check the CSV files' last rows, then remove it");
  }
  return sizes;
}

void roll_back(const fs::path& dir, const Schema& schema) {
  ::unlink((dir / kJournalTemp).c_str());  // a journal that was never complete: nothing was appended yet
  const auto sizes = read_journal(dir, schema);
  if (!sizes) return;
  for (const auto& [file, size] : *sizes) truncate_to(dir / file, size);
  remove_journal(dir);
}

void commit(const fs::path& dir, const std::vector<std::pair<const Table*, std::string_view>>& appends) {
  struct Target {
    fs::path path;
    Fd fd;
    off_t size = 0;
    std::string prefix;  // the header for a new file, or a newline a foreign writer left out
  };
  std::vector<Target> targets;
  for (const auto& [table, text] : appends) {
    Target t;
    t.path = dir / table->file;
    t.fd = std::move(*open_regular(t.path, O_RDWR | O_CREAT));
    t.size = size_of(t.fd, t.path);
    if (t.size == 0) {
      t.prefix = csv::line(table->header);
    } else {
      if (first_line(t.fd, t.path) != csv::line(table->header)) {
        fail(t.path,
             "its header changed after this store was opened (is another mcmclb version writing here?); "
             "write to a new output folder");
      }
      if (read_at(t.fd, t.path, t.size - 1, 1) != "\n") t.prefix = "\n";
    }
    targets.push_back(std::move(t));
  }
  Sizes sizes;
  for (std::size_t i = 0; i < appends.size(); ++i) sizes.emplace_back(appends[i].first->file, targets[i].size);
  write_journal(dir, sizes);
  const std::string crash_after = std::getenv(kCrashAfterVariable) ? std::getenv(kCrashAfterVariable) : "";
  try {
    for (std::size_t i = 0; i < appends.size(); ++i) {
      Target& t = targets[i];
      const std::string_view text = appends[i].second;
      const std::string& file = appends[i].first->file;
      write_all(t.fd, t.path, t.prefix, t.size);
      if (crash_after == file + ":half") {  // test hook: a torn last line
        write_all(t.fd, t.path, text.substr(0, text.size() / 2), t.size + static_cast<off_t>(t.prefix.size()));
        sync(t.fd, t.path);
        ::raise(SIGKILL);
      }
      write_all(t.fd, t.path, text, t.size + static_cast<off_t>(t.prefix.size()));
      sync(t.fd, t.path);
      t.fd.close_checked(t.path);
      if (crash_after == file) ::raise(SIGKILL);            // test hook
      if (crash_after == file + ":stop") ::raise(SIGSTOP);  // test hook: a writer stopped holding the lock
    }
  } catch (...) {
    for (const Target& t : targets) truncate_to(t.path, t.size);
    remove_journal(dir);
    throw;
  }
  remove_journal(dir);
}

}  // namespace mcmclb::results::detail
