#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The README's skeleton (the ```cpp block after the <!-- skeleton: --> marker in "Your walkers") as a reader pastes
# it, in two files of the output folder:
#   chains.hpp: the includes it needs and its class, at file scope (the block up to `MyChains chains;`);
#   main.cpp:   chains.hpp, then the block's statements in main, which prints the Report's balancer and validity.
# One extraction for every test of the block: install_consumers builds main.cpp against the installed package and
# runs it; the reproducible suite includes chains.hpp and runs the class under every balancer.
# Usage: skeleton.sh <README.md> <output folder>
set -euo pipefail
readme=$1; out=$2
block=$(awk '/^<!-- skeleton:/ {on = 1; next} on && /^```cpp/ {next} on && /^```/ {exit} on {print}' "$readme")
if ! grep -q 'MyChains : mcmclb::walkers::Chains' <<<"$block" || ! grep -q '^MyChains chains;' <<<"$block"; then
  echo "skeleton.sh: $readme: no skeleton block with MyChains and 'MyChains chains;' after its marker" >&2
  exit 1
fi
mkdir -p "$out"
{
  printf '// The README skeleton'"'"'s class, extracted by tests/readme/skeleton.sh from %s.\n' "$readme"
  printf '#pragma once\n#include <mpi.h>\n\n#include <cmath>\n#include <cstdio>\n#include <map>\n\n'
  printf '#include <mcmclb/walkers.hpp>\n\n'
  sed -n '/^MyChains chains;/q;p' <<<"$block"
} >"$out/chains.hpp"
{
  printf '// The README skeleton'"'"'s statements in main, extracted by tests/readme/skeleton.sh.\n'
  printf '#include "chains.hpp"\n\nint main(int argc, char** argv) {\n  MPI_Init(&argc, &argv);\n  {\n'
  sed -n '/^MyChains chains;/,$p' <<<"$block"
  printf '    std::printf("skeleton: %%s, valid %%d\\n", report.balancer.c_str(), report.valid ? 1 : 0);\n'
  printf '    if (!report.valid) return 1;\n  }\n  MPI_Finalize();\n}\n'
} >"$out/main.cpp"
