#!/usr/bin/env bash
# The simulation checks inside the normal build's ctest (label smpi): configures a second build folder <build>/sim
# with -DMCMCLB_SMPI=ON (SimGrid's smpicc/smpicxx), builds only what tests/smpi runs (mcmclb-sim, the facts and
# ping-pong probes), and runs that folder's smpi tests: the SimGrid facts, both platforms' calibration, and a
# small simulated study (32 ranks, two methods, each twice: every row valid, identical simulated times).
# Exits 77 (ctest: skipped) with a message when smpicxx is missing; bootstrap.sh installs libsimgrid-dev.
# Usage: run_sim_suite.sh <source dir> <build dir> <werror ON|OFF>
set -euo pipefail
src=$1; sim=$2/sim; werror=${3:-ON}
if ! command -v smpicxx >/dev/null || ! command -v smpirun >/dev/null; then
  echo "SKIPPED: smpicxx/smpirun not found (Debian libsimgrid-dev, installed by bootstrap.sh); no simulation checks"
  exit 77
fi
start=$SECONDS
cmake -S "$src" -B "$sim" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMCMCLB_SMPI=ON -DMCMCLB_WERROR="$werror" \
  >"$sim.configure.log" 2>&1 || { cat "$sim.configure.log"; exit 1; }
cmake --build "$sim" -j2 --target mcmclb smpi_facts smpi_pingpong >"$sim.build.log" 2>&1 ||
  { tail -50 "$sim.build.log"; exit 1; }
echo "simulation: configure + build $((SECONDS - start)) s"
run_start=$SECONDS
ctest --test-dir "$sim" --output-on-failure -L smpi
echo "simulation: tests $((SECONDS - run_start)) s, total $((SECONDS - start)) s"
