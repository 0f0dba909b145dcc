// Small text helpers shared by messages, input and output.
#pragma once

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

/// text safe to print on one line of a terminal: printable ASCII kept, every other byte as \xNN, at most
/// max_bytes of it (then "...").
inline std::string printable(std::string_view text, std::size_t max_bytes = 80) {
  std::string out;
  for (std::size_t i = 0; i < text.size() && i < max_bytes; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
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
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
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

/// The whole content of a file, or nothing if it cannot be opened or is not a regular file: an ifstream opens a
/// folder on Linux and reads it as empty, and reading /dev/zero or a FIFO would never end.
inline std::optional<std::string> read_text_file(const std::filesystem::path& path) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) return std::nullopt;
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

}  // namespace mcmclb
