#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The preset library (MCMCLB_LIBRARY_ONLY) configured into a scratch folder: its build holds the libraries an
# application links, with their install rules, and none of the programs, the benchmark library or the tests.
# Configure only: its build takes minutes (docs/guide/your-chains.md), and install_consumers builds consumers
# against an install of the same libraries.
# Usage: library_only.sh <source dir>
set -euo pipefail
src=$(cd "$1" && pwd)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
fail() { echo "library_only: FAIL: $*" >&2; exit 1; }

cmake -S "$src" --preset library -B "$work/build" >"$work/configure.log" 2>&1 ||
  { cat "$work/configure.log"; fail "cmake --preset library did not configure"; }
targets=$(cmake --build "$work/build" --target help | sed -n 's/^\([A-Za-z0-9_.-]*\): .*/\1/p')
for wanted in mcmclb_comm mcmclb_walkers install; do
  grep -qx "$wanted" <<<"$targets" || fail "no target $wanted"
done
for unwanted in mcmclb mcmclb-commbench mcmclb_sweep benchmark test_walkers checkpoint_chains; do
  if grep -qx "$unwanted" <<<"$targets"; then fail "target $unwanted is built, where only the libraries should be"; fi
done
if grep -qi "google benchmark\|googletest" "$work/configure.log"; then fail "the configure looked for test or benchmark libraries"; fi
echo "library_only: the preset library builds $(grep -c '^mcmclb_' <<<"$targets") library targets and no program"
