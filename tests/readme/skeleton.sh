#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The README's skeleton as a reader copies it: the ```cpp block after the <!-- skeleton: --> marker ("The class")
# and the ```cmake block after it, each written as is, into the output folder:
#   main.cpp, CMakeLists.txt: the two blocks, line for line; install_consumers builds them against the installed
#                             package and runs the program;
#   chains.hpp:               the block's lines up to `int main` (its includes and its class), for the reproducible
#                             suite, which runs the class under every balancer.
# Usage: skeleton.sh <README.md> <output folder>
set -euo pipefail
readme=$1; out=$2
fail() { echo "skeleton.sh: $readme: $*" >&2; exit 1; }
# The n-th fenced block of the given language after the marker.
fenced() {
  awk -v lang="$1" '/^<!-- skeleton:/ {on = 1; next}
    on && !inside && $0 == "```" lang {inside = 1; next}
    on && inside && /^```$/ {exit}
    on && inside {print}' "$readme"
}
program=$(fenced cpp)
cmake=$(fenced cmake)
grep -q '^struct MyChains : mcmclb::walkers::Chains' <<<"$program" ||
  fail "no skeleton block with 'struct MyChains : mcmclb::walkers::Chains' after its marker"
grep -q '^int main(int argc, char\*\* argv) {$' <<<"$program" ||
  fail "the skeleton block has no 'int main(int argc, char** argv) {'"
grep -q '^add_executable(app main.cpp)$' <<<"$cmake" ||
  fail "no CMakeLists block with 'add_executable(app main.cpp)' after the skeleton"
mkdir -p "$out"
printf '%s\n' "$program" >"$out/main.cpp"
printf '%s\n' "$cmake" >"$out/CMakeLists.txt"
{
  printf '#pragma once\n'
  sed -n '/^int main(/q;p' <<<"$program"
} >"$out/chains.hpp"
