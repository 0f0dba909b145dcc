// SPDX-License-Identifier: BSD-3-Clause
// A command's flags as one table, from which its parser's checks, its usage line and its --help are written, so
// that a flag the parser takes cannot be left out of the help. Header-only: the simulation build's program prints
// the same usage without linking the commands.
#pragma once

#include <algorithm>
#include <span>
#include <string>
#include <string_view>

namespace mcmclb {

/// One flag: its name, its value as the usage shows it (empty for a switch), whether the command needs it, and
/// what it does, in a phrase.
struct CliFlag {
  std::string_view name, value;
  bool required;
  std::string_view words;
};

/// The flags as a usage line shows them: "--ranks P[,P...] [--copies] [--out DIR] ...", the required ones bare.
inline std::string flags_usage(std::span<const CliFlag> flags) {
  std::string line;
  for (const CliFlag& f : flags) {
    std::string one = std::string(f.name) + (f.value.empty() ? "" : " " + std::string(f.value));
    line += (line.empty() ? "" : " ") + (f.required ? one : "[" + one + "]");
  }
  return line;
}

/// One line per flag, its name and value, then what it does, the phrases aligned.
inline std::string flags_help(std::span<const CliFlag> flags) {
  std::size_t width = 0;
  for (const CliFlag& f : flags) width = std::max(width, f.name.size() + 1 + f.value.size());
  std::string text;
  for (const CliFlag& f : flags) {
    std::string left = std::string(f.name) + (f.value.empty() ? "" : " " + std::string(f.value));
    left.resize(width, ' ');
    text += "  " + left + "  " + std::string(f.words) + "\n";
  }
  return text;
}

/// The flag named `name`, or nullptr.
inline const CliFlag* find_flag(std::span<const CliFlag> flags, std::string_view name) {
  const auto it = std::find_if(flags.begin(), flags.end(), [name](const CliFlag& f) { return f.name == name; });
  return it == flags.end() ? nullptr : &*it;
}

}  // namespace mcmclb
