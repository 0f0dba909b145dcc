#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The simulation build's program asked for a command of the normal build's mcmclb (advise here):
#  - started by hand, as `mcmclb-sim advise ...`: one line naming the program to run instead, exit status 2 (it
#    crashed with 139 before it had an entry of its own);
#  - under smpirun (given PLATFORM.xml and HOSTFILE): one line naming build/mcmclb, exit status 2 (before, it ran
#    advise inside the simulation; the simulation build no longer compiles the commands).
# Usage: by_hand.sh <mcmclb-sim> [PLATFORM.xml HOSTFILE]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
refused() {  # refused WHAT OUTPUT STATUS WORDS: exit 2 and one line holding WORDS
  local what=$1 out=$2 status=$3 words=$4
  [ "$status" -eq 2 ] || { echo "by_hand: $what: exit status $status (wanted 2): $out"; exit 1; }
  [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] || { echo "by_hand: $what: more than one line: $out"; exit 1; }
  case "$out" in
    *$words*"build/mcmclb"*) echo "by_hand: $what: refused in one line" ;;
    *) echo "by_hand: $what: not the line naming mcmclb: $out"; exit 1 ;;
  esac
}
if [ $# -lt 3 ]; then
  out=$("$1" advise trace.csv 2>&1)
  refused "by hand" "$out" $? "runs only under smpirun"
  exit 0
fi
source "$here/../../configs/platforms/smpi-flags.bash"
smpi_preload "$(dirname "$1")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out=$(cd "$work" && smpirun -np 2 -platform "$2" -hostfile "$3" "${smpi_flags[@]}" --log=root.thresh:critical \
        "$1" advise trace.csv 2>&1 >/dev/null)
refused "under smpirun" "$out" $? "is a command of mcmclb of the normal build"
