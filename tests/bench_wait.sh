#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# How each wait policy does on idle cores and on cores that other programs use (docs/guide/your-chains.md, "How
# ranks wait"); not a test. examples/ising at 2 ranks (its default chains, numbered longest last) under none and
# under mostwork with every wait (auto, spin, polite, yield), REPS rounds in random order per round, first with the
# machine otherwise idle, then with BUSY programs (`yes`) running beside it. One row per run into OUT.
# Usage: bench_wait.sh ISING OUT [REPS] [BUSY]; ISING is the example built against an installed mcmclb
# (examples/ising/README.md, step 1), run from a clean commit of this checkout with nothing else running.
set -euo pipefail
ising=${1:?usage: bench_wait.sh ISING OUT [REPS] [BUSY]}
out=${2:?usage: bench_wait.sh ISING OUT [REPS] [BUSY]}
reps=${3:-10}
busy=${4:-2}
here=$(cd "$(dirname "$0")/.." && pwd)
commit=$(git -C "$here" rev-parse --short=12 HEAD)
[ -z "$(git -C "$here" status --porcelain)" ] || commit="$commit-dirty"
cases=("none auto" "mostwork auto" "mostwork spin" "mostwork polite" "mostwork yield")
echo "round,load,balancer,wait,seconds,commit,mpi_library,host,cores,utc_start,command" >"$out"
library="MPICH (Hydra $(mpiexec --version 2>/dev/null | sed -nE "s/^ *Version: *//p" | head -1))"
for load in idle busy; do
  pids=()
  if [ "$load" = busy ]; then
    for ((i = 0; i < busy; ++i)); do (exec yes >/dev/null) & pids+=($!); done
    sleep 1
  fi
  for ((r = 0; r < reps; ++r)); do
    for k in $(shuf -e "${!cases[@]}"); do
      read -r balancer wait <<<"${cases[$k]}"
      command="mpiexec -n 2 $ising --balancer $balancer --wait $wait"
      start=$(date -u +%Y-%m-%dT%H:%M:%SZ)
      seconds=$(timeout 120 $command | sed -nE 's/^run: [^,]*, ([0-9.]+) s,.*/\1/p')
      [ -n "$seconds" ] || { echo "bench_wait: no run line from: $command" >&2; exit 1; }
      echo "$r,$load,$balancer,$wait,$seconds,$commit,$library,$(hostname),$(nproc),$start,$command" >>"$out"
    done
  done
  for p in "${pids[@]}"; do kill "$p"; done
done
echo "bench_wait: wrote $out"
