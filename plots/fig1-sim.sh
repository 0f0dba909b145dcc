#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Fig. 1 in simulation: one smpirun of mcmclb-commbench-sim (SimGrid SMPI, docs/guide/simulation.md) at P simulated ranks on
# a platform of configs/platforms/ (default: the Blue Gene/P-like torus), creation times only, then plots/fig1.py
# (figure and the fitted shape of every method). Simulated times, never hardware measurements.
#   plots/fig1-sim.sh P [OUT_DIR] [-- extra mcmclb-commbench-sim flags, e.g. --reps 1 --warmup 0]
# Environment: SIM_BUILD (default build-sim, built with -DMCMCLB_SMPI=ON), PLATFORM (default
# configs/platforms/bgp.xml; its hostfile is PLATFORM with .hosts). Writes OUT_DIR/commbench-n<P>.csv,
# OUT_DIR/fig1.png, and OUT_DIR/commbench-n<P>.time (GNU time -v: host CPU time and peak RSS of the simulation).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -lt 1 ] || ! [[ $1 =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: $0 P [OUT_DIR] [-- extra mcmclb-commbench-sim flags]" >&2
  exit 2
fi
ranks=$1; shift
out=results/fig1-sim
if [ $# -gt 0 ] && [ "$1" != "--" ]; then out=$1; shift; fi
[ $# -gt 0 ] && [ "$1" = "--" ] && shift
binary=${SIM_BUILD:-$here/build-sim}/mcmclb-commbench-sim
platform=${PLATFORM:-$here/configs/platforms/bgp.xml}
hosts=${platform%.xml}.hosts
for f in "$platform" "$hosts"; do
  [ -f "$f" ] || { echo "$0: $f: no such file (allowed: a platform of configs/platforms/ and its .hosts)" >&2; exit 2; }
done
# smpirun's flags from their one source, configs/platforms/smpi.cfg (docs/guide/simulation.md says why each).
source "$here/configs/platforms/smpi-flags.bash"
slots=$(smpi_hostfile_slots "$hosts")
if [ "$ranks" -gt "$slots" ]; then
  echo "$0: P = $ranks simulated ranks, but $hosts places $slots (allowed: at most $slots on this platform, one rank per host line)" >&2
  exit 2
fi
refusal=$(smpi_mapping_refusal "$ranks")
[ -z "$refusal" ] || { echo "$0: $refusal" >&2; exit 2; }
[ -e "$binary" ] || { echo "$0: $binary: no such file (build: cmake -S . -B build-sim -DMCMCLB_SMPI=ON && cmake --build build-sim --target mcmclb-commbench)" >&2; exit 2; }
mkdir -p "$out"
export MCMCLB_PLATFORM=$platform
smpi_preload "$(dirname "$binary")"
csv="$out/commbench-n$ranks.csv"
timing=(); [ -x /usr/bin/time ] && timing=(/usr/bin/time -v -o "$out/commbench-n$ranks.time")
"${timing[@]}" smpirun -np "$ranks" -platform "$platform" -hostfile "$hosts" "${smpi_flags[@]}" \
  "$binary" --filter /create/ --out "$csv" "$@"
"$here/plots/fig1.py" "$csv" -o "$out/fig1.png"
