// The folder lock and the commit journal (journal.hpp).
#include "journal.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <sstream>
#include <thread>

namespace mcmclb::results::detail {

namespace fs = std::filesystem;

namespace {

constexpr std::chrono::seconds kReadLockPatience{2};  // see FolderLock

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
    const int raw = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (raw < 0) return;  // no writer of this version has written here yet, or the file is not ours to read
    fd_ = Fd(raw);
  } else {
    fd_ = open_file(path, O_RDWR | O_CREAT);
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
  while (::fcntl(fd_.get(), F_SETLKW, &lock) != 0) {
    if (errno == EINTR) continue;
    if (errno == ENOLCK || errno == EOPNOTSUPP || errno == ENOSYS) {
      fail_errno(path,
                 "this filesystem does not support POSIX record locks, which concurrent writers need (NFS: run "
                 "lockd; Lustre: mount with -o flock)",
                 errno);
    }
    fail_errno(path, "cannot lock", errno);
  }
}

std::mutex& FolderLock::process_mutex() {
  static std::mutex m;
  return m;
}

std::optional<Sizes> read_journal(const fs::path& dir, const Schema& schema) {
  const fs::path journal = dir / kJournalFile;
  const int raw = ::open(journal.c_str(), O_RDONLY | O_CLOEXEC);
  if (raw < 0) {
    if (errno == ENOENT) return std::nullopt;
    fail_errno(journal, "cannot read", errno);
  }
  const Fd fd(raw);
  std::istringstream in(read_at(fd, journal, 0, kMaxHeaderBytes));
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
    t.fd = open_file(t.path, O_RDWR | O_CREAT);
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
      if (crash_after == file) ::raise(SIGKILL);  // test hook
    }
  } catch (...) {
    for (const Target& t : targets) truncate_to(t.path, t.size);
    remove_journal(dir);
    throw;
  }
  remove_journal(dir);
}

}  // namespace mcmclb::results::detail
