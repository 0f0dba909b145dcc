// SPDX-License-Identifier: BSD-3-Clause
// The result store's file helpers (posix_file.hpp).
#include "posix_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <utility>

#include "mcmclb/text.hpp"

namespace mcmclb::results::detail {

namespace fs = std::filesystem;

std::string shown(const fs::path& path) { return printable(path.native(), 200); }

[[noreturn]] void fail(const fs::path& path, const std::string& what) { throw StoreError(shown(path) + ": " + what); }

[[noreturn]] void fail_errno(const fs::path& path, const std::string& what, int err) {
  fail(path, what + " (" + std::strerror(err) + ")");
}

Fd::Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

Fd& Fd::operator=(Fd&& other) noexcept {
  if (this != &other) {
    reset();
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

void Fd::reset() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void Fd::close_checked(const fs::path& path) {
  const int fd = std::exchange(fd_, -1);
  if (fd >= 0 && ::close(fd) != 0) fail_errno(path, "cannot write", errno);
}

Fd open_file(const fs::path& path, int flags) {
  int fd;
  do {
    fd = ::open(path.c_str(), flags | O_CLOEXEC, 0644);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) fail_errno(path, "cannot open", errno);
  return Fd(fd);
}

std::optional<Fd> open_regular(const fs::path& path, int flags) {
  std::string why;
  const int fd = open_regular_file(path, flags, &why);
  if (fd >= 0) return Fd(fd);
  if (errno == ENOENT && (flags & O_CREAT) == 0) return std::nullopt;
  if (errno == EINVAL) fail(path, why + " (allowed: a regular file; remove it or write to a new output folder)");
  fail_errno(path, "cannot open", errno);
}

off_t size_of(const Fd& fd, const fs::path& path) {
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) fail_errno(path, "cannot stat", errno);
  return st.st_size;
}

void write_all(const Fd& fd, const fs::path& path, std::string_view text, off_t at) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::pwrite(fd.get(), text.data() + done, text.size() - done, at + static_cast<off_t>(done));
    if (n < 0) {
      if (errno == EINTR) continue;
      fail_errno(path, "cannot write", errno);
    }
    done += static_cast<std::size_t>(n);
  }
}

void sync(const Fd& fd, const fs::path& path) {
  if (::fsync(fd.get()) != 0) fail_errno(path, "cannot flush to disk", errno);
}

void sync_folder(const fs::path& dir) {
  const Fd fd = open_file(dir, O_RDONLY | O_DIRECTORY);
  if (::fsync(fd.get()) != 0 && errno != EINVAL) fail_errno(dir, "cannot flush to disk", errno);
}

void replace_file(const fs::path& dir, const fs::path& path, const std::string& why, const std::string& text) {
  const fs::path temp = dir / ("." + path.filename().string() + "." + why + ".tmp");
  Fd fd = open_file(temp, O_WRONLY | O_CREAT | O_TRUNC);
  write_all(fd, temp, text, 0);
  sync(fd, temp);
  fd.close_checked(temp);
  if (::rename(temp.c_str(), path.c_str()) != 0) fail_errno(path, "cannot replace", errno);
  sync_folder(dir);
}

std::string read_at(const Fd& fd, const fs::path& path, off_t at, std::size_t max_bytes) {
  std::string out(max_bytes, '\0');
  std::size_t done = 0;
  while (done < max_bytes) {
    const ssize_t n = ::pread(fd.get(), out.data() + done, max_bytes - done, at + static_cast<off_t>(done));
    if (n < 0) {
      if (errno == EINTR) continue;
      fail_errno(path, "cannot read", errno);
    }
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  out.resize(done);
  return out;
}

std::string first_line(const Fd& fd, const fs::path& path) {
  std::string head = read_at(fd, path, 0, kMaxHeaderBytes);
  const auto end = head.find('\n');
  if (end != std::string::npos) head.resize(end + 1);
  return head;
}

void truncate_to(const fs::path& path, off_t size) {
  const auto opened = open_regular(path, O_WRONLY);
  if (!opened) return;
  const Fd& fd = *opened;
  if (size_of(fd, path) <= size) return;
  if (::ftruncate(fd.get(), size) != 0) fail_errno(path, "cannot roll back", errno);
  sync(fd, path);
}

void fail_crlf(const fs::path& path, std::size_t line) {
  fail(path, "line " + std::to_string(line) +
                 " ends in \\r (CRLF line endings; allowed: LF line endings, as mcmclb writes them)");
}

namespace {

/// One record for_each_row has found, checked as the plot scripts check it (plots/mcmclb_csv.py's read_csv), so
/// that a folder the store reads is one every plot reads, and one that a plot refuses the store refuses, naming
/// the same file and line: line is the file's line on which the record ends, fields its field count.
void check_record(const fs::path& path, std::size_t line, std::string_view record, std::size_t fields,
                  std::size_t header_fields, bool nul) {
  const std::string at = "line " + std::to_string(line);
  if (nul) fail(path, at + " contains NUL bytes (allowed: a text CSV file)");
  if (!record.empty() && record.back() == '\r') fail_crlf(path, line);
  if (header_fields > 0 && !record.empty() && fields != header_fields) {
    fail(path, at + " has " + std::to_string(fields) + " fields, the header has " + std::to_string(header_fields) +
                   " (a row cut off or edited?)");
  }
}

}  // namespace

void for_each_row(const fs::path& path, const std::function<void(std::string_view)>& emit, off_t limit) {
  const auto opened = open_regular(path, O_RDONLY);
  if (!opened) return;
  const Fd& fd = *opened;
  constexpr std::size_t kBlock = 1 << 20;
  std::string buffer;
  std::size_t scanned = 0, start = 0;
  bool quoted = false, header = true, nul = false;
  std::size_t line = 0, fields = 1, header_fields = 0;
  auto left = limit < 0 ? std::numeric_limits<std::size_t>::max() : static_cast<std::size_t>(limit);
  for (;;) {
    const std::size_t old = buffer.size(), want = std::min(kBlock, left);
    buffer.resize(old + want);
    ssize_t n = 0;  // 0 once the limit is reached: the end, as at the end of the file
    if (want > 0) {
      do {
        n = ::read(fd.get(), buffer.data() + old, want);
      } while (n < 0 && errno == EINTR);
    }
    if (n < 0) fail_errno(path, "cannot read", errno);
    buffer.resize(old + static_cast<std::size_t>(n));
    if (n == 0) {
      // A quote opened and never closed in a file that ends with its newline: not a torn tail (that ends without
      // one) but a damaged row, which would hide every row after it. Checked, and emitted if it passes, as the
      // plot scripts' CSV reader takes the rest of the file as that row's last field.
      if (quoted && !header && !buffer.empty() && buffer.back() == '\n') {
        const std::string_view record(buffer.data() + start, buffer.size() - 1 - start);
        check_record(path, line, record, fields, header_fields, nul);
        emit(record);
      }
      return;
    }
    left -= static_cast<std::size_t>(n);
    for (; scanned < buffer.size(); ++scanned) {
      const char c = buffer[scanned];
      if (c == '"') {
        quoted = !quoted;
      } else if (c == ',' && !quoted) {
        ++fields;
      } else if (c == '\0') {
        nul = true;
      } else if (c == '\n') {
        ++line;
        if (quoted) continue;
        const std::string_view record(buffer.data() + start, scanned - start);
        check_record(path, line, record, fields, header ? 0 : header_fields, nul);
        // A blank line is no row (the plot scripts skip it too).
        if (!header && !record.empty()) emit(record);
        if (header) header_fields = fields;
        header = false;
        fields = 1;
        start = scanned + 1;
      }
    }
    buffer.erase(0, start);
    scanned -= start;
    start = 0;
  }
}

std::optional<long> parse_long(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (errno != 0 || end != text.c_str() + text.size()) return std::nullopt;
  return value;
}

}  // namespace mcmclb::results::detail
