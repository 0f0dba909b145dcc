#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Regenerates the simulated goldens on purpose, after a change that is meant to change simulated times or regroup
# statistics: sweeps tests/golden/sim-study.yaml and sim-beyond.yaml in simulation into fresh folders and replaces
# tests/golden/sim/runs.csv and sim-beyond/runs.csv with their results (review the diff, and say why in the
# commit).
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
# runs.csv only: compare reads nothing else, and provenance.csv would carry this machine's paths.
for golden in sim sim-beyond; do
  study=$src/tests/golden/$golden.yaml
  [ "$golden" = sim ] && study=$src/tests/golden/sim-study.yaml
  "$build/mcmclb" sweep "$study" --launcher smpi --sim-binary "$sim" --out "$work/$golden"
  mkdir -p "$src/tests/golden/$golden"
  cp "$work/$golden/runs.csv" "$src/tests/golden/$golden/"
  echo "regenerated $src/tests/golden/$golden/runs.csv ($(($(wc -l <"$work/$golden/runs.csv") - 1)) runs)"
done
