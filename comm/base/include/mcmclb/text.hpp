// SPDX-License-Identifier: BSD-3-Clause
// Small text helpers shared by messages, input and output.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

namespace mcmclb {

/// The items of a range, converted to strings and separated by sep: join({"a", "b"}, ", ") == "a, b".
template <typename Range>
std::string join(const Range& items, std::string_view sep = ", ") {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out.append(sep);
    out.append(std::string_view(item));
  }
  return out;
}

/// Appends byte c as the four characters \xNN (lower-case hex): how the message helpers below write a byte that
/// must not reach a terminal as it is.
inline void append_hex_escape(std::string& out, unsigned char c) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += "\\x";
  out += kHex[c >> 4];
  out += kHex[c & 15];
}

/// text safe to print on one line of a terminal: printable ASCII kept, every other byte as \xNN, at most
/// max_bytes of it (then "...").
inline std::string printable(std::string_view text, std::size_t max_bytes = 80) {
  std::string out;
  for (std::size_t i = 0; i < text.size() && i < max_bytes; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      append_hex_escape(out, c);
    }
  }
  if (text.size() > max_bytes) out += "...";
  return out;
}

/// A message as one line of a terminal: printable ASCII kept as it is (backslashes too, so escaping twice changes
/// nothing), every other byte (line breaks, terminal escapes, NUL, bytes of non-ASCII or invalid UTF-8) as \xNN,
/// and at most max_bytes of it (then "..."), so that a value quoted from a hostile file cannot break the line,
/// drive the terminal or flood it.
inline std::string one_line(std::string_view text, std::size_t max_bytes = 2000) {
  std::string out;
  std::size_t i = 0;
  for (; i < text.size() && out.size() < max_bytes; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      append_hex_escape(out, c);
    }
  }
  if (i < text.size()) out += "...";
  return out;
}

/// s as one word for a POSIX shell: unchanged when it holds only safe characters, else single-quoted.
inline std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=,:@+") ==
                        std::string::npos) {
    return s;
  }
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

/// The command line argv[0..argc) as a shell would need it to run it again.
inline std::string command_line(int argc, char** argv) {
  std::string line;
  for (int i = 0; i < argc; ++i) {
    if (i > 0) line += ' ';
    line += shell_quote(argv[i]);
  }
  return line;
}

/// FNV-1a 64 of bytes, as 16 lower-case hex digits (stable across builds and hosts, unlike std::hash).
inline std::string fnv1a64_hex(std::string_view bytes) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (const char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string text(16, '0');
  for (int i = 15; i >= 0; --i, h >>= 4) text[static_cast<std::size_t>(i)] = kHex[h & 15];
  return text;
}

/// The 1-based line of text's first line ending "\r\n" (a file saved by a Windows editor), if it has one. Every
/// CSV mcmclb reads ends its lines in "\n" alone, as mcmclb writes them and the plot scripts require: such a file
/// is refused naming this line, never read with a stray '\r' in its last field.
inline std::optional<std::size_t> crlf_line(std::string_view text) {
  const std::size_t at = text.find("\r\n");
  if (at == std::string_view::npos) return std::nullopt;
  return static_cast<std::size_t>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n')) + 1;
}

/// What a file of this mode is, for messages: "a FIFO", "a folder", ...; "" for a regular file.
inline std::string_view file_kind(mode_t mode) {
  if (S_ISREG(mode)) return "";
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISSOCK(mode)) return "a socket";
  return "a special file";
}

/// open(2) of path (flags: O_RDONLY, O_WRONLY or O_RDWR, O_CREAT allowed) only if it is a regular file: the one
/// way every file is opened for reading, since a FIFO blocks open() and read() forever and a device (/dev/zero)
/// never ends. O_NONBLOCK makes the open itself return at once whatever the path is; it is cleared again for
/// the regular file returned. Returns the descriptor (O_CLOEXEC), or -1 with errno set and *why (if given) saying
/// what is wrong in words, e.g. "is a FIFO, not a regular file".
inline int open_regular_file(const std::filesystem::path& path, int flags, std::string* why = nullptr) {
  int fd;
  do {
    fd = ::open(path.c_str(), flags | O_NONBLOCK | O_CLOEXEC, 0644);
  } while (fd < 0 && errno == EINTR);
  struct stat st {};
  if (fd < 0 && (errno == ENXIO || errno == EISDIR) && ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    // A FIFO without a reader (write-only open), or a folder opened for writing.
    if (why != nullptr) *why = "is " + std::string(file_kind(st.st_mode)) + ", not a regular file";
    errno = EINVAL;
    return -1;
  }
  if (fd < 0) {
    if (why != nullptr) *why = std::strerror(errno);
    return -1;
  }
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    if (why != nullptr) *why = std::strerror(err);
    errno = err;
    return -1;
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    if (why != nullptr) *why = "is " + std::string(file_kind(st.st_mode)) + ", not a regular file";
    errno = EINVAL;
    return -1;
  }
  const int status = ::fcntl(fd, F_GETFL);
  if (status >= 0) ::fcntl(fd, F_SETFL, status & ~O_NONBLOCK);
  return fd;
}

/// The whole content of a regular file, or nothing (with *why, if given, saying why in words: "is a FIFO, not a
/// regular file", "No such file or directory") if it is not one or cannot be read. A file of more than max_bytes
/// is refused from its size (fstat) before a byte of it is read, *why saying "is N bytes (allowed: at most M MiB)";
/// the read stops there too, for a file that grows meanwhile.
inline std::optional<std::string> read_text_file(const std::filesystem::path& path, std::string* why = nullptr,
                                                 std::size_t max_bytes = std::size_t(-1)) {
  const int fd = open_regular_file(path, O_RDONLY, why);
  if (fd < 0) return std::nullopt;
  const auto too_large = [&](unsigned long long size) {
    if (why != nullptr) {
      *why = "is " + std::to_string(size) + " bytes (allowed: at most " +
             (max_bytes % (1 << 20) == 0 ? std::to_string(max_bytes >> 20) + " MiB"
                                         : std::to_string(max_bytes) + " bytes") +
             ")";
    }
    ::close(fd);
    return std::nullopt;
  };
  struct stat st {};
  if (::fstat(fd, &st) == 0 && static_cast<unsigned long long>(st.st_size) > max_bytes) return too_large(st.st_size);
  std::string content;
  char block[65536];
  for (;;) {
    const ssize_t n = ::read(fd, block, sizeof block);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      if (why != nullptr) *why = std::strerror(errno);
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    content.append(block, static_cast<std::size_t>(n));
    if (content.size() > max_bytes) return too_large(content.size());
  }
  ::close(fd);
  return content;
}

}  // namespace mcmclb
