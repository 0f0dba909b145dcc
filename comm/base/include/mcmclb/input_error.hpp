// SPDX-License-Identifier: BSD-3-Clause
// Bad user input, as one exception type shared by code with and without MPI (config parsing, sweeps, mains).
// Header-only and free of MPI so the study library (no MPI) and the MPI mains report input errors alike.
#pragma once

#include <charconv>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "mcmclb/text.hpp"

namespace mcmclb {

/// Bad user input (flags, config files) detected identically on every rank before any communication depends
/// on it. mpi::run_main prints it once, on rank 0, as "<program>: <message>", and every rank exits with code 2;
/// the MPI-free commands print it the same way.
/// The message is made one printable line here, where every input error is made, so no value quoted from a file or
/// flag (a line break, a NUL, terminal escapes, a 10 MB name) reaches the terminal raw, whichever main prints it.
class InputError : public std::runtime_error {
 public:
  explicit InputError(std::string_view message) : std::runtime_error(one_line(message)) {}
  explicit InputError(const char* message) : InputError(std::string_view(message)) {}
  explicit InputError(const std::string& message) : InputError(std::string_view(message)) {}
};

/// value, the path given to flag, unless it is empty: `--out ''` or `--out=` would otherwise read as the flag left
/// out (its default folder) or as the working folder, and results would go where the user did not ask. The one
/// message for every path flag of every command.
inline std::string require_path(std::string_view flag, std::string value) {
  if (value.empty()) {
    throw InputError(std::string(flag) + ": empty (allowed: a non-empty path; leave " + std::string(flag) +
                     " out for its default)");
  }
  return value;
}

/// text, the value of an integer flag, as a number in [lo, hi]: decimal digits with an optional leading '-' and
/// nothing else (no blanks, '+', junk after it such as "3x", or a value past a long), else one InputError naming
/// the flag, what the value should be and the range allowed. The one reader of every integer flag.
inline long parse_integer_flag(std::string_view flag, const std::string& text, long lo, long hi,
                               std::string_view what) {
  long value = 0;
  const char* end = text.data() + text.size();
  const auto [at, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || at != end || value < lo || value > hi) {
    throw InputError(std::string(flag) + ": '" + text + "' is not " + std::string(what) + " (allowed: an integer in [" +
                     std::to_string(lo) + ", " + std::to_string(hi) + "])");
  }
  return value;
}

/// text, a comma-separated list of integers (--ranks 64,1024), each read by parse_integer_flag: the one reader of
/// every integer-list flag. An empty text or field is not an integer.
inline std::vector<long> parse_integer_list(std::string_view flag, const std::string& text, long lo, long hi,
                                            std::string_view what) {
  std::vector<long> values;
  for (std::size_t start = 0;;) {
    const std::size_t comma = text.find(',', start);
    values.push_back(parse_integer_flag(flag, text.substr(start, comma - start), lo, hi, what));
    if (comma == std::string::npos) return values;
    start = comma + 1;
  }
}

/// Results that could not be written once work had begun (a full disk, a folder made read-only meanwhile), thrown
/// on every rank alike (rank 0 shares the verdict first): mpi::run_main prints it once, on rank 0, as
/// "<program>: <message>", and every rank exits with kOutputErrorExit, without MPI_Abort's extra lines.
class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
inline constexpr int kOutputErrorExit = 4;

/// Throws "key <key>: unknown <kind> '<name>' (allowed: <known>)": the one message for every name looked up in a
/// registry (balancers, creation methods).
[[noreturn]] inline void throw_unknown_name(std::string_view key, std::string_view kind, std::string_view name,
                                            const std::vector<std::string_view>& known) {
  throw InputError("key " + std::string(key) + ": unknown " + std::string(kind) + " '" + std::string(name) +
                   "' (allowed: " + join(known) + ")");
}

}  // namespace mcmclb
