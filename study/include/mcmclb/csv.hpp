// SPDX-License-Identifier: BSD-3-Clause
// Tidy CSV output: escaping, and whole-file or appended writes that are atomic (a temporary file renamed over
// the target), so results already written are never lost or half-written.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace mcmclb::csv {

using Row = std::vector<std::string>;

/// Quotes a field when it holds a comma, quote or line break (RFC 4180).
std::string escape(std::string_view field);

/// One CSV line (with the trailing newline).
std::string line(const Row& fields);

/// Splits one CSV line (without its newline; RFC 4180 quoting) into fields: the inverse of line().
Row split_line(std::string_view text);

/// The first count fields of a record (RFC 4180 quoting), without splitting the rest of the line: a long row's
/// leading columns read cheaply (fewer when the record has fewer).
Row leading_fields(std::string_view record, std::size_t count);

/// Writes content to path atomically (temporary file in the same folder, flushed, renamed over path). Throws
/// std::runtime_error, replacing nothing, when path exists and is not a regular file (a device, a FIFO, a folder).
void write_atomically(const std::filesystem::path& path, std::string_view content);

/// Appends rows to path atomically, writing header first when the file is new or empty. Throws
/// std::runtime_error naming the file if an existing file's header differs (headers are stable).
void append_rows(const std::filesystem::path& path, const Row& header, const std::vector<Row>& rows);

/// Appends already formatted CSV lines (each ending in a newline) like append_rows.
void append_text(const std::filesystem::path& path, const Row& header, std::string_view lines);

/// Formats a double with enough digits to round-trip reasonably ("%.9g").
std::string number(double value);

}  // namespace mcmclb::csv
