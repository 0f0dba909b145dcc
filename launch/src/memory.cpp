// SPDX-License-Identifier: BSD-3-Clause
#include "memory.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace mcmclb::launch {

namespace {

namespace fs = std::filesystem;

/// The parent of every process in /proc. A process that exits during the scan is simply not in it.
std::multimap<long, long> children_by_parent() {
  std::multimap<long, long> children;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator("/proc", error)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; })) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so read after the last ')'.
    const std::size_t close = line.rfind(')');
    if (close == std::string::npos) continue;
    char state = 0;
    long parent = 0;
    if (std::sscanf(line.c_str() + close + 1, " %c %ld", &state, &parent) != 2) continue;
    children.emplace(parent, std::stol(name));
  }
  return children;
}

/// VmRSS and VmHWM of one process in KiB; false when it has exited (or is a zombie, which has neither).
bool process_memory(long pid, std::int64_t& rss, std::int64_t& hwm) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  bool found = false;
  while (std::getline(status, line)) {
    long long kib = 0;
    if (std::sscanf(line.c_str(), "VmRSS: %lld kB", &kib) == 1) {
      rss = kib;
      found = true;
    } else if (std::sscanf(line.c_str(), "VmHWM: %lld kB", &kib) == 1) {
      hwm = kib;
    }
  }
  return found;
}

}  // namespace

std::optional<LaunchMemory> launch_memory() {
  const std::multimap<long, long> children = children_by_parent();
  if (children.empty()) return std::nullopt;
  LaunchMemory total;
  bool any = false;
  std::vector<long> todo = {static_cast<long>(::getpid())};
  while (!todo.empty()) {
    const long parent = todo.back();
    todo.pop_back();
    const auto [first, last] = children.equal_range(parent);
    for (auto it = first; it != last; ++it) {
      std::int64_t rss = 0, hwm = 0;
      if (process_memory(it->second, rss, hwm)) {
        total.rss_kib += rss;
        total.peak_kib += std::max(hwm, rss);
        any = true;
      }
      todo.push_back(it->second);
    }
  }
  if (!any) return std::nullopt;
  return total;
}

void LaunchMemoryWatch::sample() {
  const std::optional<LaunchMemory> now = launch_memory();
  if (!now) return;
  const std::int64_t peak = seen_ ? std::max(seen_->peak_kib, now->peak_kib) : now->peak_kib;
  seen_ = LaunchMemory{now->rss_kib, peak};
}

std::string LaunchMemoryWatch::text() const {
  if (!seen_) return "";
  return "host RSS " + format_kib(seen_->rss_kib) + ", peak " + format_kib(seen_->peak_kib);
}

std::string format_kib(std::int64_t kib) {
  char text[32];
  if (kib < 1024) {
    std::snprintf(text, sizeof text, "%lld KiB", static_cast<long long>(kib));
  } else if (kib < 1024 * 1024) {
    std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(kib) / 1024.0);
  } else {
    std::snprintf(text, sizeof text, "%.2f GiB", static_cast<double>(kib) / (1024.0 * 1024.0));
  }
  return text;
}

}  // namespace mcmclb::launch
