#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# mcmclb-commbench-sim (Fig. 1 in simulation) at a small rank count, twice: fails unless the CSV has every
# method's creation rows at every default group size, all labelled backend=smpi with the platform, its hash,
# the --cfg flags and SimGrid's version; iter_median_us equal to time_us (one iteration per repetition); range
# creation costs under 1 us of simulated time at every size (it sends no message); and the two runs give identical
# simulated times (no host time enters the simulation). Also: without MCMCLB_PLATFORM the program refuses to run
# (exit 2, one line), since its rows could not name their platform.
#   run_commbench.sh COMMBENCH_SIM_BINARY PLATFORM.xml HOSTFILE RANKS
set -euo pipefail
if [ $# -ne 4 ]; then
  echo "usage: $0 COMMBENCH_SIM_BINARY PLATFORM.xml HOSTFILE RANKS" >&2
  exit 2
fi
binary=$1 platform=$2 hosts=$3 ranks=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# smpirun's flags from their one source, configs/platforms/smpi.cfg (docs/guide/simulation.md says why each).
source "$(dirname "$0")/../../configs/platforms/smpi-flags.bash"
run() {
  smpirun -np "$ranks" -platform "$platform" -hostfile "$hosts" "${smpi_flags[@]}" \
    "$binary" --reps 2 "$@"
}
status=0
(unset MCMCLB_PLATFORM; cd "$work" && run --out "$work/none.csv" >"$work/none.out" 2>"$work/none.err") || status=$?
# (SimGrid adds a warning per rank that returned non-zero, and smpirun echoes its command on stdout.)
if [ "$status" -ne 2 ] || [ "$(grep -c '^mcmclb-commbench-sim: .*MCMCLB_PLATFORM' "$work/none.err")" -ne 1 ] ||
   grep -q "^wrote" "$work/none.out" || [ -e "$work/none.csv" ]; then
  echo "FAIL: without MCMCLB_PLATFORM: exit $status, stderr:"; cat "$work/none.err"; exit 1
fi
export MCMCLB_PLATFORM=$platform
smpi_preload "$(dirname "$binary")"
for attempt in 1 2; do
  (cd "$work" && run --out "$work/commbench-$attempt.csv" >"$work/run-$attempt.log")
done
python3 - "$work" "$platform" "$ranks" "$(dirname "$0")/../.." <<'PY'
import csv, os, sys
work, platform, ranks = sys.argv[1], sys.argv[2], int(sys.argv[3])
# Results name a platform of the repository by its path in the repository, never a path of this machine.
top = os.path.realpath(sys.argv[4])
if os.path.exists(os.path.join(top, ".git")):
    platform = os.path.relpath(os.path.realpath(platform), top)
methods = ("intercomm", "create_group", "from_group", "create", "split", "range", "floor")
sizes = sorted({1 << k for k in range(ranks.bit_length()) if 1 << k <= ranks} | {ranks} |
               ({ranks - 1} if ranks >= 4 and ranks & (ranks - 1) == 0 else set()))
runs = [list(csv.DictReader(open(f"{work}/commbench-{a}.csv"))) for a in (1, 2)]
failed = []
for rows in runs:
    bad = [r for r in rows if r["backend"] != "smpi" or r["platform"] != platform or len(r["platform_fnv1a64"]) != 16
           or "smpi/allreduce:redbcast" not in r["simgrid_cfg"] or not r["mpi_library"].startswith("SMPI")
           or int(r["nprocs"]) != ranks
           or not r.get("simgrid_version", "").startswith(r["mpi_library"].split()[2].rstrip(".") + ".")]
    if bad:
        failed.append(f"mislabelled rows: {bad[:2]}")
    have = {(r["method"], r["op"], int(r["group_size"])) for r in rows}
    missing = [(m, s) for m in methods for s in sizes if (m, "create", s) not in have]
    if missing:
        failed.append(f"missing creation rows (method, size): {missing}")
    slow_range = [(r["group_size"], r["time_us"]) for r in rows
                  if r["method"] == "range" and r["op"] == "create" and not float(r["time_us"]) < 1.0]
    if slow_range:
        failed.append(f"range creation not below 1 us simulated: {slow_range}")
    # One iteration per repetition: its median is that iteration, the mean (time_us) too.
    median_off = [(r["method"], r["op"], r["group_size"], r["time_us"], r.get("iter_median_us")) for r in rows
                  if r.get("iter_median_us") != r["time_us"]]
    if median_off:
        failed.append(f"iter_median_us differs from time_us with one iteration: {median_off[:3]}")
key = lambda r: (r["method"], r["op"], r["group_size"], r["rep"])
times = [{key(r): r["time_us"] for r in rows} for rows in runs]
if times[0] != times[1]:
    diff = [(k, times[0].get(k), times[1].get(k)) for k in times[0] if times[0].get(k) != times[1].get(k)]
    failed.append(f"two runs of the same simulation differ: {diff[:5]}")
for rows in runs[:1]:
    top = {r["method"]: r["time_us"] for r in rows if r["op"] == "create" and int(r["group_size"]) == ranks}
    print(f"simulated creation time at group size {ranks} (us): {top}")
for f in failed:
    print("FAIL", f)
sys.exit(1 if failed else 0)
PY
