#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# mcmclb calibrate beside two spinning processes (a busy 2-core host): refused before anything is timed, in one line
# from rank 0 that says how busy the host is, exit 2, and no folder made. Unrefused, such a host gave one-way times
# of 100 us where the idle one gives 0.3 us, and a platform that contradicted them without a word.
#   calibrate_busy.sh MCMCLB MPIEXEC
set -euo pipefail
mcmclb=$1 mpiexec=$2
work=$(mktemp -d)
spinners=()
cleanup() {
  for pid in "${spinners[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
for _ in 1 2; do
  sh -c 'while :; do :; done' &
  spinners+=("$!")
done
set +e
"$mpiexec" -n 2 "$mcmclb" calibrate --out "$work/cal" --reps 1 >"$work/out" 2>"$work/err"
status=$?
set -e
lines=$(grep -c . "$work/err" || true)
if [ "$status" -ne 2 ] || [ "$lines" -ne 1 ] || ! grep -q "busy" "$work/err" || [ -e "$work/cal" ]; then
  echo "calibrate beside two spinning processes: exit $status (want 2), $lines stderr lines (want 1 saying busy)," \
    "folder $([ -e "$work/cal" ] && echo made || echo absent) (want absent):"
  cat "$work/out" "$work/err"
  exit 1
fi
echo "calibrate beside two spinning processes: refused in one line, exit 2, nothing written: $(cat "$work/err")"
