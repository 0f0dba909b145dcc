// SPDX-License-Identifier: BSD-3-Clause
// A study as a value: its keys typed, in order, as a program builds it (mcmclb advise's studies, mcmclb::walkers'
// options). The study's checks take it as they take a study file (expand_study, parse_experiment, build_study), with
// no YAML text written and parsed again between; study_file_text() writes it where a user is to see or rerun it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace mcmclb {

/// One scalar a key holds: a name or text, an integer, a number or a switch; nullptr: unset (in a zip, the key left
/// at its default in that combination).
using StudyScalar = std::variant<std::nullptr_t, bool, int64_t, double, std::string>;
/// A list of scalars: an axis, or a key that is a list by nature.
using StudyList = std::vector<StudyScalar>;
/// zip: the lists varied together, element by element, by dotted key in order.
using StudyZip = std::vector<std::pair<std::string, StudyList>>;
/// One exclude rule: a run matching every key: value of it is dropped.
using StudyRule = std::vector<std::pair<std::string, StudyScalar>>;
using StudyExclude = std::vector<StudyRule>;
/// What a key holds: a scalar or a list; the key zip a StudyZip, the key exclude a StudyExclude.
using StudyEntry = std::variant<StudyScalar, StudyList, StudyZip, StudyExclude>;

/// A study: its keys by dotted name (workload.map is `workload: {map: ...}` in a file), in the order written.
/// Nothing is checked here: the study's checks take it whole (mcmclb/config.hpp, mcmclb/study.hpp).
struct StudyValue {
  std::vector<std::pair<std::string, StudyEntry>> keys;
  /// Written as # lines before the keys (study_file_text), e.g. which command wrote the file and why.
  std::string comment;

  /// Sets key: its value replaced where it is given, else the key added last.
  void set(const std::string& key, StudyEntry value);
  /// The key's value, or nullptr where it is not given.
  [[nodiscard]] const StudyEntry* find(const std::string& key) const;
  /// The key left out (nothing where it is not given).
  void erase(const std::string& key);
  bool operator==(const StudyValue&) const = default;
};

/// A study file's text as a value: every key under its dotted name, zip and exclude flattened too. The file's own
/// checks on its YAML come first (one document, bounded, each key once, each value a scalar or a list of scalars):
/// mpi::InputError naming source otherwise. Its values are not checked here, as a file's are not before expand_study.
StudyValue study_value(const std::string& yaml_text, const std::string& source);

/// The value as a study file: its comment as # lines, then its keys (each section's as one map), zip and exclude.
std::string study_file_text(const StudyValue& value);

/// A value as a message or a test shows it, in YAML's flow style: 16, [16, 64], {workload.map: [tile, draw]},
/// [{balancer: none, nprocs: 8}].
std::string flow_text(const StudyScalar& value);
std::string flow_text(const StudyEntry& value);
/// An exclude rule as flow_text shows it.
std::string flow_text(const StudyRule& rule);

/// A list of names as a StudyList.
StudyList study_list(const std::vector<std::string>& names);
/// A list of integers as a StudyList.
StudyList study_list(const std::vector<long>& values);

}  // namespace mcmclb
