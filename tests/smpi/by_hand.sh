#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The simulation build's program started by hand, as `mcmclb-sim advise ...`: one line naming the program to run
# instead, exit status 2 (it crashed with 139 before it had an entry of its own).
# Usage: by_hand.sh <mcmclb-sim>
set -uo pipefail
out=$("$1" advise trace.csv 2>&1)
status=$?
[ "$status" -eq 2 ] || { echo "by_hand: exit status $status (wanted 2): $out"; exit 1; }
[ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] || { echo "by_hand: more than one line: $out"; exit 1; }
case "$out" in
  *"runs only under smpirun"*"build/mcmclb"*) echo "by_hand: refused in one line" ;;
  *) echo "by_hand: not the line naming mcmclb: $out"; exit 1 ;;
esac
