// SPDX-License-Identifier: BSD-3-Clause
// The launcher registry (mcmclb/launch.hpp): the launchers listed in launchers.def.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "mcmclb/input_error.hpp"
#include "mcmclb/launch.hpp"
#include "mcmclb/text.hpp"

namespace mcmclb::launch {

#define MCMCLB_LAUNCHER(name) std::unique_ptr<Launcher> name##_launcher();
#include "launchers.def"
#undef MCMCLB_LAUNCHER

const std::vector<std::unique_ptr<Launcher>>& launchers() {
  // Built once, on first use, and never changed.
  static const std::vector<std::unique_ptr<Launcher>> all = [] {
    std::vector<std::unique_ptr<Launcher>> made;
#define MCMCLB_LAUNCHER(name) made.push_back(name##_launcher());
#include "launchers.def"
#undef MCMCLB_LAUNCHER
    return made;
  }();
  return all;
}

std::string launcher_names() {
  std::string names;
  for (const auto& l : launchers()) names += (names.empty() ? "" : ", ") + std::string(l->name());
  return names;
}

const Launcher& launcher_named(std::string_view name) {
  for (const auto& l : launchers()) {
    if (l->name() == name) return *l;
  }
  throw InputError("--launcher: '" + printable(std::string(name), 80) +
                   "' is not allowed (allowed: " + launcher_names() + ")");
}

bool simulated(const SweepOptions& o) { return !o.launcher.empty() && launcher_named(o.launcher).simulated(); }

}  // namespace mcmclb::launch
