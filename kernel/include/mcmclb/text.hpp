// Small text helpers shared by messages and output.
#pragma once

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

}  // namespace mcmclb
