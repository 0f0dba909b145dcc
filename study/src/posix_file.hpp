// SPDX-License-Identifier: BSD-3-Clause
// The result store's file helpers (study/src/result_store.cpp): POSIX descriptors, positioned reads and writes,
// durable replacement, and a reader of CSV records. Every failure is a StoreError naming the file.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "mcmclb/result_store.hpp"

namespace mcmclb::results::detail {

/// The most bytes read as a file's header line (and as a journal).
inline constexpr std::size_t kMaxHeaderBytes = std::size_t{64} * 1024;

/// The path as a message shows it: printable, at most 200 bytes.
std::string shown(const std::filesystem::path& path);
[[noreturn]] void fail(const std::filesystem::path& path, const std::string& what);
[[noreturn]] void fail_errno(const std::filesystem::path& path, const std::string& what, int err);
/// A table file whose line ends in "\r\n" (saved by a Windows editor): refused in every reader alike, header and
/// rows, as the plot scripts refuse it.
[[noreturn]] void fail_crlf(const std::filesystem::path& path, std::size_t line);

/// An owned file descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept;
  Fd& operator=(Fd&& other) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  [[nodiscard]] int get() const { return fd_; }
  void reset() noexcept;
  /// Closes and reports the error close() may give (NFS reports deferred write errors there).
  void close_checked(const std::filesystem::path& path);

 private:
  int fd_ = -1;
};

/// open(2) with O_CLOEXEC (mode 0644 where it creates), retried on EINTR.
Fd open_file(const std::filesystem::path& path, int flags);
/// open_file() for a file of the folder that must be a regular file if it exists (every table, the lock, the
/// journal): through mcmclb::open_regular_file, so a FIFO or device planted there is refused (a StoreError saying
/// what it is) instead of blocking or never ending. Nothing when it does not exist and flags do not create it.
std::optional<Fd> open_regular(const std::filesystem::path& path, int flags);
off_t size_of(const Fd& fd, const std::filesystem::path& path);
/// Writes all of text at offset at (pwrite).
void write_all(const Fd& fd, const std::filesystem::path& path, std::string_view text, off_t at);
void sync(const Fd& fd, const std::filesystem::path& path);
/// Makes a rename or unlink in dir durable. Some filesystems cannot fsync a folder (EINVAL): they order such
/// metadata themselves.
void sync_folder(const std::filesystem::path& dir);
/// Replaces path (in dir) by text durably: a temporary file beside it (".<name>.<why>.tmp"), flushed, renamed over
/// it, the folder flushed. Readers see the old file or the new one, never a part.
void replace_file(const std::filesystem::path& dir, const std::filesystem::path& path, const std::string& why,
                  const std::string& text);
/// Up to max_bytes from offset at (pread), fewer at the end of the file.
std::string read_at(const Fd& fd, const std::filesystem::path& path, off_t at, std::size_t max_bytes);
/// The first line of a file, with its newline if it has one within kMaxHeaderBytes.
std::string first_line(const Fd& fd, const std::filesystem::path& path);
/// Shrinks path to size bytes (flushed) if it is longer; a missing file is left missing.
void truncate_to(const std::filesystem::path& path, off_t size);

/// Calls emit for every record of the file after the header: a record ends at a newline outside quotes, so a
/// quoted field may hold line breaks. Reads in blocks; a last record without its newline is not emitted. A limit of
/// 0 or more reads only the file's first `limit` bytes (the file as it was before an unfinished commit). A missing
/// file has no records, a blank line is none. A record that the plot scripts would refuse is a StoreError naming
/// the file and the line, as they name it: one with NUL bytes, one ending in '\r' (CRLF line endings: mcmclb
/// writes LF only, and a CRLF file gets LF rows appended), one whose field count differs from the header's (a row
/// cut off or edited in the middle of the file; the torn tail is for_each_row's to skip and the store's to repair).
/// A quote never closed in a file that ends in a newline makes the rest of the file one record, as for the plots.
void for_each_row(const std::filesystem::path& path, const std::function<void(std::string_view)>& emit,
                  off_t limit = -1);

/// A decimal integer field (journal sizes, rank numbers): nothing unless the whole text is one.
std::optional<long> parse_long(const std::string& text);

}  // namespace mcmclb::results::detail
