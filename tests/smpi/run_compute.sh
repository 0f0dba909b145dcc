#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Compute mode in simulation: the Lennard-Jones energy evaluations take simulated time, the modelled
# cost of each slice (lj::trial_flops through pace::compute), and the science is the real build's. Runs, each
# twice at RANKS ranks on the platform:
#   none, G = 1, 13 and 38 atoms: every chain matches its single-rank reference (valid, matches_ref), the run
#     takes nonzero simulated time, baseline_s plus at most 10 us (the longest chain's reference, the same model: no MPI
#     inside a chain of one rank), and 38 atoms take longer than 13 (more pair terms per trial);
#   async, G = 2, magic sizes: groups of 2 sum each energy by allreduce and merges broadcast the walker state:
#     valid, every chain matches, the state's bytes in ranks.csv add up to chains.csv's and are > 0;
# and the two runs of each give identical simulated times (no host time enters the simulation).
#   run_compute.sh MCMCLB_SIM_BINARY PLATFORM.xml HOSTFILE RANKS
set -euo pipefail
if [ $# -ne 4 ]; then
  echo "usage: $0 MCMCLB_SIM_BINARY PLATFORM.xml HOSTFILE RANKS" >&2
  exit 2
fi
binary=$1 platform=$2 hosts=$3 ranks=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/lj.yaml" <<'YAML'
experiment: lj-sim
G: 1
workload: {model: cyclic, scale: 2, period: 8}
work: {mode: compute, atoms: 13, temperature: 0.25, move: single, max_step: 0.1, moves_per_item: 50, seed: 3}
balancer: none
reps: 1
YAML
# smpirun's flags from their one source, configs/platforms/smpi.cfg (docs/guide/simulation.md says why each).
source "$(dirname "$0")/../../configs/platforms/smpi-flags.bash"
export MCMCLB_PLATFORM=$platform
smpi_preload "$(dirname "$binary")"
extra=()  # more smpirun flags for the runs that follow
run() {  # run NAME --set ...
  local name=$1
  shift
  for attempt in 1 2; do
    (cd "$work" && smpirun -np "$ranks" -platform "$platform" -hostfile "$hosts" "${smpi_flags[@]}" \
       ${extra[@]+"${extra[@]}"} "$binary" run "$work/lj.yaml" "$@" --out "$work/$name-$attempt")
  done
}
run atoms13 --set work.atoms=13
run atoms38 --set work.atoms=38
# The range check below compares with SimGrid's default cost per MPI_Test (100 us), where a test per trial would
# show as a large factor; at the platform's own 1 us it would hide in the noise of the trees' extra latency.
extra=(--cfg=smpi/test:1e-4)
run async --set balancer=async --set G=2 --set work.atoms=magic
run asyncrange --set balancer=async --set G=2 --set work.atoms=magic --set method=range
python3 - "$work" <<'PY'
import csv, sys
work = sys.argv[1]
failed = []
def rows(name, attempt, table):
    with open(f"{work}/{name}-{attempt}/{table}") as f:
        return list(csv.DictReader(f))
times = {}
for name in ("atoms13", "atoms38", "async", "asyncrange"):
    seen = []
    for attempt in (1, 2):
        runs, chains, ranks = (rows(name, attempt, t) for t in ("runs.csv", "chains.csv", "ranks.csv"))
        run = runs[0]
        if len(runs) != 1 or run["valid"] != "true" or run["backend"] != "smpi" or run["work_mode"] != "compute":
            failed.append(f"{name} run {attempt}: {runs}")
            continue
        if not chains or not all(c["matches_ref"] == "true" for c in chains):
            failed.append(f"{name} run {attempt}: a chain differs from its single-rank reference: {chains}")
        t, baseline, ideal = float(run["time_s"]), float(run["baseline_s"]), float(run["ideal_s"])
        if not (t > 0 and ideal > 0):
            failed.append(f"{name} run {attempt}: simulated time_s {t}, ideal_s {ideal}: compute took no time")
        # The same modelled cost as the reference's plus a small fixed overhead of the run itself (0.84 us
        # simulated at 8 ranks when this was written), and nothing else: no host time.
        if not name.startswith("async") and not 0 <= t - baseline <= 1e-5 + 1e-3 * baseline:
            failed.append(f"{name} run {attempt}: time_s {t} is not baseline_s {baseline} (the longest chain on one "
                          "rank) plus at most 10 us")
        state = sum(int(c["state_bytes"]) for c in chains)
        if sum(int(x["state_bytes"]) for x in ranks) != state:
            failed.append(f"{name} run {attempt}: ranks.csv state_bytes do not add up to chains.csv's {state}")
        if name.startswith("async") and not (state > 0 and any(float(x["state_s"]) > 0 for x in ranks)):
            failed.append(f"{name} run {attempt}: no walker state moved (state_bytes {state})")
        seen.append(run["time_s"])
        print(f"{name} run {attempt}: simulated time_s {t:.6f}, ideal_s {ideal:.6f}, baseline_s {baseline:.6f}, "
              f"state_bytes {state}")
    if len(set(seen)) != 1:
        failed.append(f"{name}: two runs of the same simulation gave different times {seen}")
    times[name] = float(seen[0]) if seen else 0.0
# range's per-trial allreduce is a blocking sum in simulation: tested while pending, each test would cost smpi/test
# (100 us here) of simulated time, once per trial (60x intercomm's time at P = 8 before that was fixed).
if not times["asyncrange"] < 2 * times["async"]:
    failed.append(f"async with range took {times['asyncrange']} s, not near the default method's {times['async']} s")
if not times["atoms38"] > 1.5 * times["atoms13"]:
    failed.append(f"38 atoms took {times['atoms38']} s, not clearly more than 13 atoms' {times['atoms13']} s")
for f in failed:
    print("FAIL", f)
sys.exit(1 if failed else 0)
PY
