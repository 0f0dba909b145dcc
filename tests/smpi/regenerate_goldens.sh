#!/usr/bin/env bash
# Regenerates the simulated goldens on purpose, after a change that is meant to change simulated times or regroup
# statistics: sweeps tests/golden/sim-study.yaml in simulation into a fresh folder and replaces
# tests/golden/sim/{runs,provenance}.csv with its results (review the diff, and say why in the commit).
#   tests/smpi/regenerate_goldens.sh [BUILD]   BUILD: the normal build folder (default build), whose sim/ or the
#                                               checkout's build-sim/ holds mcmclb-sim
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build}
sim=$build/sim/mcmclb-sim
[ -x "$sim" ] || sim=$src/build-sim/mcmclb-sim
if [ ! -x "$build/mcmclb" ] || [ ! -x "$sim" ]; then
  echo "regenerate_goldens.sh: needs $build/mcmclb and a simulation build (build-sim/mcmclb-sim or $build/sim/)" >&2
  exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$build/mcmclb" sweep "$src/tests/golden/sim-study.yaml" --launcher smpi --sim-binary "$sim" --out "$work/out"
mkdir -p "$src/tests/golden/sim"
cp "$work/out/runs.csv" "$work/out/provenance.csv" "$src/tests/golden/sim/"
echo "regenerated $src/tests/golden/sim/{runs,provenance}.csv ($(($(wc -l <"$work/out/runs.csv") - 1)) runs)"
