#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# One simulated kernel run of the paper's configuration (G = 4, T = 100 ms, cyclic S = 10 (R mod 32), async)
# with each method (async; create and split under collective(4)), twice: fails unless every run's row says
# valid=true and the two runs of each method give identical simulated times (the simulation is deterministic: no host
# time enters it), and every row names its back end (smpi), platform, SimGrid version (runs.csv's mpi_library,
# provenance.csv's simgrid_version), platform hash and the smpirun flags it ran with (configs/platforms/smpi.cfg),
# and the host's CPU model and load before and after the run.
# The first run of each method prints a progress line at every item boundary (MCMCLB_PROGRESS_S, a tiny interval):
# it must print them, and give the same simulated time as the silent second.
#   run_kernel.sh MCMCLB_SIM_BINARY PLATFORM.xml HOSTFILE RANKS
set -euo pipefail
if [ $# -ne 4 ]; then
  echo "usage: $0 MCMCLB_SIM_BINARY PLATFORM.xml HOSTFILE RANKS" >&2
  exit 2
fi
binary=$1 platform=$2 hosts=$3 ranks=$4
here=$(cd "$(dirname "$0")" && pwd)
config="$here/../../configs/paper-fig2.yaml"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# smpirun's flags from their one source, configs/platforms/smpi.cfg (docs/guide/simulation.md says why each).
source "$here/../../configs/platforms/smpi-flags.bash"
# What the run records in runs.csv (platform) and provenance.csv (its hash, the flags).
export MCMCLB_PLATFORM=$platform
smpi_preload "$(dirname "$binary")"
for method in intercomm create_group create split from_group; do
  # async regroups member-collectively; the parent-collective methods run under collective(4).
  case $method in create | split) balancer=(--set balancer=collective --set interval=4) ;; *) balancer=(--set balancer=async) ;; esac
  for attempt in 1 2; do
    every=0
    [ "$attempt" = 1 ] && every=0.000001
    (cd "$work" && MCMCLB_PROGRESS_S=$every smpirun -np "$ranks" -platform "$platform" -hostfile "$hosts" \
       "${smpi_flags[@]}" "$binary" run "$config" "${balancer[@]}" --set method="$method" --set reps=1 \
       --out "$work/$method-$attempt") > "$work/$method-$attempt.out"
  done
  grep -q "progress: simulated [0-9.]* s of ~3.50 s (ideal; none 7.00 s), [0-9]* items done, host [0-9]* s elapsed" "$work/$method-1.out" ||
    { echo "FAIL $method: no progress line with MCMCLB_PROGRESS_S set"; exit 1; }
  if grep -q "progress:" "$work/$method-2.out"; then echo "FAIL $method: progress lines with MCMCLB_PROGRESS_S=0"; exit 1; fi
done
python3 - "$work" "$platform" "$here/../../configs/platforms/smpi.cfg" <<'PY'
import csv, os, re, sys
work, platform = sys.argv[1], sys.argv[2]
# Results name a platform of the repository by its path in the repository, never a path of this machine.
top = os.path.realpath(os.path.join(os.path.dirname(sys.argv[3]), "..", ".."))
if os.path.exists(os.path.join(top, ".git")):
    platform = os.path.relpath(os.path.realpath(platform), top)
flags = [l.strip() for l in open(sys.argv[3]) if l.strip() and not l.strip().startswith("#")]
# smpi_preload preloads what the simulation build lists; under smpi.cfg's flags the clock library answers.
preloaded = "true" if "libmcmclb_smpi_clock.so" in os.environ.get("LD_PRELOAD", "") else "false"
# The host's CPU, and per cent of its CPU time busy with other programs just before and after the run.
cpu_model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "")
failed = False
for method in ("intercomm", "create_group", "create", "split", "from_group"):
    times = []
    for attempt in (1, 2):
        rows = list(csv.DictReader(open(f"{work}/{method}-{attempt}/runs.csv")))
        if (len(rows) != 1 or rows[0]["valid"] != "true" or rows[0]["method"] != method
                or rows[0]["backend"] != "smpi" or rows[0]["platform"] != platform
                or not rows[0]["mpi_library"].startswith("SMPI")):
            print(f"FAIL {method} run {attempt}: {rows}")
            failed = True
            continue
        times.append(rows[0]["time_s"])
        prov = list(csv.DictReader(open(f"{work}/{method}-{attempt}/provenance.csv")))
        # SimGrid's version as the library gives it, the one SMPI's own text names, and the platform of runs.csv.
        smpi = rows[0]["mpi_library"].split()[2].rstrip(".")
        if (len(prov) != 1 or len(prov[0]["platform_fnv1a64"]) != 16 or prov[0]["simgrid_cfg"] != " ".join(flags)
                or prov[0]["smpi_clock_preload"] != preloaded or prov[0]["platform"] != platform
                or not re.fullmatch(re.escape(smpi) + r"\.[0-9]+", prov[0]["simgrid_version"])
                or prov[0]["host_cpu_model"] != cpu_model
                or not all(re.fullmatch(r"[0-9.]+", prov[0][c]) and float(prov[0][c]) <= 100
                           for c in ("host_busy_before_pct", "host_busy_after_pct"))
                or prov[0]["core_share"] != ""):
            print(f"FAIL {method} run {attempt}: provenance {prov}")
            failed = True
    print(f"{method}: simulated time_s {times}")
    if len(set(times)) != 1:
        print(f"FAIL {method}: two runs of the same simulation gave different times")
        failed = True
sys.exit(1 if failed else 0)
PY
