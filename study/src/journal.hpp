// SPDX-License-Identifier: BSD-3-Clause
// The result store's commit machinery (study/src/result_store.cpp explains the design): the folder lock, and the
// journal that makes a commit's appends all or nothing and lets the next writer roll back a killed one.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mcmclb/result_store.hpp"
#include "posix_file.hpp"

namespace mcmclb::results::detail {

inline constexpr const char* kLockFile = ".mcmclb.lock";
inline constexpr const char* kJournalFile = ".mcmclb.journal";
inline constexpr const char* kJournalTemp = ".mcmclb.journal.tmp";

/// Every table of the schema: the four fixed ones, then the per-run ones.
std::vector<const Table*> all_tables(const Schema& s);

/// The folder lock: a process-wide mutex, then the fcntl lock on DIR/.mcmclb.lock (see result_store.cpp's top).
/// Mode::write creates the lock file and takes the write lock, waiting for it. Mode::read writes and creates nothing:
/// it takes the read lock (shared with other readers) when the lock file exists and the lock comes within
/// kReadLockPatience (a commit lasts milliseconds), and otherwise holds only the mutex: a reader needs no lock
/// (runs.csv is appended last, a killed writer's commit is read through its journal), the read lock only spares it a
/// commit half-done at the moment it reads. So a status or dry run never hangs on a lock a dead node still holds (NFS,
/// Lustre).
class FolderLock {
 public:
  enum class Mode { write, read };
  explicit FolderLock(const std::filesystem::path& dir, Mode mode = Mode::write);
  // Closing the descriptor releases the fcntl lock, then the mutex is released (members in reverse order).

 private:
  static std::mutex& process_mutex();
  std::lock_guard<std::mutex> guard_;
  Fd fd_;
};

/// The files a commit is about to grow, and their sizes before it.
using Sizes = std::vector<std::pair<std::string, off_t>>;

/// The journal of a commit a killed writer left unfinished: the files it grew and their sizes before it; nothing
/// when there is none. Lock held (read or write).
std::optional<Sizes> read_journal(const std::filesystem::path& dir, const Schema& schema);
/// Undoes a commit a killed writer left unfinished. Lock held.
void roll_back(const std::filesystem::path& dir, const Schema& schema);
/// Appends text to each table file, all or nothing (see result_store.cpp's top). Lock held, journal rolled back
/// already.
void commit(const std::filesystem::path& dir, const std::vector<std::pair<const Table*, std::string_view>>& appends);

}  // namespace mcmclb::results::detail
