#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Installs the communicator library from an already built tree into a fresh temporary prefix, then builds and
# runs three consumers against the INSTALLED copy only, as a new user would:
#   (a) the plain C test tests/c_api_test.c with mpicc + pkg-config, run under mpiexec -n 3;
#   (b) the CMake project tests/install/consumer (find_package(mcmclb COMPONENTS comm)), run under mpiexec -n 2;
#   (c) the C-only CMake project tests/install/consumer_c (project(... LANGUAGES C), the same find_package) built
#       from tests/c_api_test.c, run under mpiexec -n 3: the package must not require C++ of a C project.
# LD_LIBRARY_PATH is unset throughout: the programs must find libmcmclb_comm through their RUNPATH. Fails if
# anything resolves into the build or source tree instead of the prefix.
# Usage: install_consumers.sh <source dir> <build dir> [mpiexec]
set -euo pipefail
src=$(cd "$1" && pwd); build=$(cd "$2" && pwd); mpiexec=${3:-mpiexec}
unset LD_LIBRARY_PATH
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

fail() { echo "install_consumers: FAIL: $*" >&2; exit 1; }
# The library a program loads must be the installed one.
check_loads_from_prefix() {
  local exe=$1 line
  line=$(ldd "$exe" | grep libmcmclb_comm) || fail "$exe does not link libmcmclb_comm"
  echo "  ldd: $line"
  case "$line" in
    *"=> $prefix/"*) ;;
    *) fail "$exe resolves libmcmclb_comm outside the prefix $prefix" ;;
  esac
}

echo "== cmake --install $build --prefix $prefix"
cmake --install "$build" --prefix "$prefix" >"$work/install.log" || { cat "$work/install.log"; fail "install"; }
pc=$(find "$prefix" -name mcmclb-comm.pc)
[ -n "$pc" ] || fail "no mcmclb-comm.pc under $prefix"
export PKG_CONFIG_PATH=$(dirname "$pc")
flags=$(pkg-config --cflags --libs mcmclb-comm)
echo "  pkg-config --cflags --libs mcmclb-comm: $flags"
case "$flags" in *"$build"* | *"$src"*) fail "pkg-config flags point into the build or source tree" ;; esac

echo "== (a) C consumer: mpicc c_api_test.c \$(pkg-config --cflags --libs mcmclb-comm)"
# Only the prefix's header folder is on the include path: the test's own copy is compiled from a scratch folder.
cp "$src/tests/c_api_test.c" "$work/prog.c"
# shellcheck disable=SC2086  # flags are words
mpicc -std=c99 -Wall -Wextra -Werror "$work/prog.c" $flags -o "$work/c_consumer"
check_loads_from_prefix "$work/c_consumer"
"$mpiexec" -n 3 "$work/c_consumer"

# A CMake consumer: configure, build and check that nothing points into the build or source tree.
# Usage: build_cmake_consumer <name>; the project is in $work/<name>, its build in $work/<name>-build.
build_cmake_consumer() {
  local name=$1
  cmake -S "$work/$name" -B "$work/$name-build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF >"$work/$name.log" 2>&1 || { cat "$work/$name.log"; fail "$name: configure"; }
  grep "mcmclb package used" "$work/$name.log"
  grep -q "mcmclb package used: $prefix/" "$work/$name.log" || fail "$name: find_package did not take the package from $prefix"
  cmake --build "$work/$name-build" -j2 >"$work/$name-build.log" 2>&1 ||
    { cat "$work/$name-build.log"; fail "$name: build"; }
  if grep -rIl -e "$build" -e "$src" "$work/$name-build" --include='*.make' --include='*.txt' --include='*.cmake' \
       --include='*.json' --include='*.rsp'; then
    fail "$name: the consumer's build files above mention the build or source tree"
  fi
}

echo "== (b) CMake consumer: find_package(mcmclb COMPONENTS comm) with CMAKE_PREFIX_PATH=$prefix"
cp -r "$src/tests/install/consumer" "$work/consumer"
build_cmake_consumer consumer
check_loads_from_prefix "$work/consumer-build/consumer"
"$mpiexec" -n 2 "$work/consumer-build/consumer"

echo "== (c) C-only CMake consumer: project(LANGUAGES C) + find_package(mcmclb COMPONENTS comm)"
cp -r "$src/tests/install/consumer_c" "$work/consumer_c"
cp "$src/tests/c_api_test.c" "$work/consumer_c/main.c"
build_cmake_consumer consumer_c
# No C++ compiler was looked for: the project enabled C only and the package must not have asked for more.
if grep -q "^CMAKE_CXX_COMPILER:" "$work/consumer_c-build/CMakeCache.txt"; then
  fail "consumer_c: configuring the C-only project enabled C++"
fi
check_loads_from_prefix "$work/consumer_c-build/c_consumer"
"$mpiexec" -n 3 "$work/consumer_c-build/c_consumer"
echo "install_consumers: OK"
