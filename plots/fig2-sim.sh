#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Fig. 2 in simulation: configs/paper-fig2.yaml under SimGrid SMPI (docs/guide/simulation.md), one deterministic run
# per point, the paper's series (none, async with Algorithm 1, collective(1), (16) and (128) with MPI_Comm_create)
# and ours (lookahead(1) and mostwork(1) with range), then plots/fig2.py. Simulated times, never hardware measurements.
#   plots/fig2-sim.sh [OUT_DIR] [P ...]        (default: results/fig2-sim, 32 64 ... 8192)
# Environment: SIM_BUILD (default build-sim, built with -DMCMCLB_SMPI=ON), MCMCLB (the driver, default build/mcmclb),
# PLATFORM (default configs/platforms/bgp.xml), SERIES (default all; `scale`: the four series run beyond 8192 ranks,
# none, async, collective(16) and lookahead(1), whose host cost grows slowest), POINTS_PER_LAUNCH (default: the sweep's;
# 1 runs each point in its own smpirun, so a stopped launch loses no other point), PLACEMENT (default: the study's, block;
# groups deals a dragonfly's nodes over its groups, key placement). The series are three sweeps into one
# folder, since a study file crosses every balancer with every method; each rank count runs all of them before the next,
# smallest first, so a stopped run leaves whole columns and a second call resumes (the store skips the points it holds).
# Host CPU and peak RSS of every launch are in OUT_DIR/provenance.csv.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=results/fig2-sim
if [ $# -gt 0 ] && ! [[ $1 =~ ^[0-9]+$ ]]; then out=$1; shift; fi
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(32 64 128 256 512 1024 2048 4096 8192)
for p in "${sizes[@]}"; do
  [[ $p =~ ^[1-9][0-9]*$ ]] || { echo "usage: $0 [OUT_DIR] [P ...]: '$p' is not a rank count" >&2; exit 2; }
done
driver=${MCMCLB:-$here/build/mcmclb}
binary=${SIM_BUILD:-$here/build-sim}/mcmclb-sim
platform=${PLATFORM:-$here/configs/platforms/bgp.xml}
for f in "$driver" "$binary" "$platform"; do
  [ -e "$f" ] || { echo "$0: $f: no such file (build: cmake -S . -B build-sim -DMCMCLB_SMPI=ON && cmake --build build-sim)" >&2; exit 2; }
done
case ${SERIES:-all} in
  all)
    series=(
      "balancer=[none,async] method=[intercomm]"
      "balancer=[collective] method=[create] interval=[1,16,128]"
      "balancer=[lookahead,mostwork] method=[range] interval=[1]"
    ) ;;
  scale)
    series=(
      "balancer=[none,async] method=[intercomm]"
      "balancer=[collective] method=[create] interval=[16]"
      "balancer=[lookahead] method=[range] interval=[1]"
    ) ;;
  *) echo "$0: SERIES=${SERIES}: allowed are all, scale" >&2; exit 2 ;;
esac
for p in "${sizes[@]}"; do
  for s in "${series[@]}"; do
    sets=(--set reps=1 --set "nprocs=[$p]")
    [ -z "${POINTS_PER_LAUNCH:-}" ] || sets+=(--points-per-launch "$POINTS_PER_LAUNCH")
    [ -z "${PLACEMENT:-}" ] || sets+=(--set "placement=$PLACEMENT")
    for kv in $s; do sets+=(--set "$kv"); done
    "$driver" sweep "$here/configs/paper-fig2.yaml" --launcher smpi --platform "$platform" --sim-binary "$binary" \
      --out "$out" "${sets[@]}"
  done
done
"$here/plots/fig2.py" "$out" --reference
