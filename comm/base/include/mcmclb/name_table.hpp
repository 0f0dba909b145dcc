// SPDX-License-Identifier: BSD-3-Clause
// Name tables of enums: each enum the inputs name has one table of {name, value} pairs, which parsing reads one way
// and printing the other, so that a name is written in one place only.
#pragma once

#include <string_view>

namespace mcmclb {

/// The name of value in a {name, value} table (kWaitPolicies, kFinishedRules, ...); "" where the table lacks it.
template <typename Table, typename Value>
[[nodiscard]] constexpr std::string_view name_in(const Table& table, Value value) noexcept {
  for (const auto& [name, entry] : table) {
    if (entry == value) return name;
  }
  return "";
}

}  // namespace mcmclb
