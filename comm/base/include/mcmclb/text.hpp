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

/// The whole content of a file, or nothing if it cannot be opened.
inline std::optional<std::string> read_text_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

}  // namespace mcmclb
