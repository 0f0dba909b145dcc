#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Compiles tests/c_api_test.c with nothing but the plain mpicc wrapper, the installed-style header folder and
# -lmcmclb_comm (no CMake, no C++ flags), then runs it under mpiexec. Proves the C entry point links from C.
set -euo pipefail
src_dir=$1; lib_dir=$2; ranks=${3:-3}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
mpicc -std=c99 -Wall -Wextra -Werror -I"$src_dir/comm/include" "$src_dir/tests/c_api_test.c" \
  -L"$lib_dir" -lmcmclb_comm -Wl,-rpath,"$lib_dir" -o "$work/c_api_test"
mpiexec -n "$ranks" "$work/c_api_test"
