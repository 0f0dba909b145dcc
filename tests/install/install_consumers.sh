#!/usr/bin/env bash
# Installs the communicator library from an already built tree into a fresh temporary prefix, then builds and
# runs two consumers against the INSTALLED copy only, as a new user would:
#   (a) the plain C test tests/c_api_test.c with mpicc + pkg-config, run under mpiexec -n 3;
#   (b) the CMake project tests/install/consumer (find_package(mcmclb COMPONENTS comm)), run under mpiexec -n 2.
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

echo "== (b) CMake consumer: find_package(mcmclb COMPONENTS comm) with CMAKE_PREFIX_PATH=$prefix"
cp -r "$src/tests/install/consumer" "$work/consumer"
cmake -S "$work/consumer" -B "$work/consumer-build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF >"$work/consumer.log" 2>&1 || { cat "$work/consumer.log"; fail "configure"; }
grep "mcmclb package used" "$work/consumer.log"
grep -q "mcmclb package used: $prefix/" "$work/consumer.log" || fail "find_package did not take the package from $prefix"
cmake --build "$work/consumer-build" -j2 >"$work/consumer-build.log" 2>&1 ||
  { cat "$work/consumer-build.log"; fail "build"; }
if grep -rIl -e "$build" -e "$src" "$work/consumer-build" --include='*.make' --include='*.txt' --include='*.cmake' \
     --include='*.json' --include='*.rsp'; then
  fail "the consumer's build files above mention the build or source tree"
fi
check_loads_from_prefix "$work/consumer-build/consumer"
"$mpiexec" -n 2 "$work/consumer-build/consumer"
echo "install_consumers: OK"
