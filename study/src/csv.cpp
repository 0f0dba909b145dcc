// SPDX-License-Identifier: BSD-3-Clause
// Atomic CSV writing (mcmclb/csv.hpp).
#include "mcmclb/csv.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "mcmclb/text.hpp"

namespace mcmclb::csv {

std::string escape(std::string_view field) {
  if (field.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(field);
  std::string quoted = "\"";
  for (char c : field) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

std::string line(const Row& fields) {
  std::string out;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) out += ',';
    out += escape(fields[i]);
  }
  return out + "\n";
}

Row split_line(std::string_view text) {
  Row fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

Row leading_fields(std::string_view record, std::size_t count) {
  Row fields;
  std::size_t i = 0;
  while (fields.size() < count && i <= record.size()) {
    std::string field;
    if (i < record.size() && record[i] == '"') {
      ++i;
      while (i < record.size()) {
        if (record[i] == '"' && i + 1 < record.size() && record[i + 1] == '"') {
          field += '"';
          i += 2;
        } else if (record[i] == '"') {
          ++i;
          break;
        } else {
          field += record[i++];
        }
      }
    }
    const std::size_t comma = record.find(',', i);
    field.append(record.substr(i, comma == std::string_view::npos ? std::string_view::npos : comma - i));
    fields.push_back(std::move(field));
    if (comma == std::string_view::npos) break;
    i = comma + 1;
  }
  return fields;
}

void write_atomically(const std::filesystem::path& path, std::string_view content) {
  // The rename below would replace whatever is at path: as root, a device such as /dev/null would become a
  // regular file for the whole machine. Only a regular file (or nothing) is replaced.
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    throw std::runtime_error(printable(path.native(), 200) + ": is " + std::string(file_kind(st.st_mode)) +
                             ", not a regular file; not replaced");
  }
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  std::string temp = path.string() + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw std::runtime_error("cannot write " + temp + ": " + std::strerror(errno));
  std::size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      ::unlink(temp.c_str());
      throw std::runtime_error("cannot write " + temp + ": " + std::strerror(err));
    }
    written += static_cast<std::size_t>(n);
  }
  const bool synced = ::fsync(fd) == 0;
  const bool closed = ::close(fd) == 0;
  if (!synced || !closed || std::rename(temp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    throw std::runtime_error("cannot replace " + path.string() + ": " + std::strerror(err));
  }
}

void append_rows(const std::filesystem::path& path, const Row& header, const std::vector<Row>& rows) {
  std::string lines;
  for (const Row& r : rows) lines += line(r);
  append_text(path, header, lines);
}

void append_text(const std::filesystem::path& path, const Row& header, std::string_view lines) {
  std::string content = read_text_file(path).value_or("");
  const std::string header_line = line(header);
  if (content.empty()) {
    content = header_line;
  } else {
    const std::string first = content.substr(0, content.find('\n') + 1);
    if (first != header_line) {
      throw std::runtime_error(path.string() + ": existing header differs from this version's header; " +
                               "write to a new output folder");
    }
    if (content.back() != '\n') content += '\n';
  }
  content += lines;
  write_atomically(path, content);
}

std::string number(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.9g", value);
  return text;
}

}  // namespace mcmclb::csv
