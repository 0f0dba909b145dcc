#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# mcmclb calibrate end to end on this machine: bad flags are one line on rank 0 and exit 2 with nothing written;
# `mpiexec -n 2 mcmclb calibrate` writes a platform, its hostfile, its flags, the times and their provenance; the
# platform's constants are the fit of the times it lists, and a simulated ping-pong on it gives them back;
# `mcmclb advise --dry-run` accepts the platform, and a small study simulated on it by `mcmclb sweep --launcher
# smpi` gives valid rows labelled with it.
#   calibrate.sh MCMCLB MPIEXEC SIM_BINARY SOURCE_DIR
set -euo pipefail
mcmclb=$1 mpiexec=$2 sim=$3 src=$4
if ! command -v smpirun >/dev/null; then  # as tests/smpi/run_sim_suite.sh: a skip, but a failure under CI
  case "${CI:-}" in true | TRUE | True | 1 | yes) echo "FAILED: smpirun not found; CI=true: a missing dependency fails"; exit 1 ;; esac
  echo "SKIPPED: smpirun not found (Debian libsimgrid-dev, installed by bootstrap.sh)"; exit 77
fi
if [ ! -x "$sim" ]; then
  echo "calibrate: $sim is not built (the test smpi_build builds it)"; exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Bad flags: one line, from rank 0 only, exit 2, and no folder made.
for bad in "--ranks 0" "--reps x" "--cores 0" "--out" "--fast" "--out $work/a --out $work/b"; do
  # shellcheck disable=SC2086  # the flags are meant to split
  set +e; "$mpiexec" -n 2 "$mcmclb" calibrate $bad >"$work/bad.out" 2>"$work/bad.err"; status=$?; set -e
  lines=$(grep -c . "$work/bad.err" || true)
  if [ "$status" -ne 2 ] || [ "$lines" -ne 1 ] || [ -e "$work/a" ] || [ -e "$work/b" ]; then
    echo "calibrate $bad: exit $status (want 2), $lines stderr lines (want 1):"; cat "$work/bad.out" "$work/bad.err"
    exit 1
  fi
done
echo "bad flags: one line, exit 2, nothing written"
touch "$work/file"
set +e; "$mpiexec" -n 2 "$mcmclb" calibrate --out "$work/file" >/dev/null 2>"$work/bad.err"; status=$?; set -e
[ "$status" -eq 2 ] && grep -q "not a folder" "$work/bad.err" || { echo "--out FILE: exit $status"; cat "$work/bad.err"; exit 1; }

out=$work/cal
"$mpiexec" -n 2 "$mcmclb" calibrate --out "$out" --ranks 8 --reps 3 | tee "$work/cal.log"
for f in calibrated.xml calibrated.hosts smpi.cfg pingpong.csv provenance.csv; do
  [ -s "$out/$f" ] || { echo "calibrate: $out/$f missing or empty"; exit 1; }
done
# The platform is XML whose link constants are the fit of the times in pingpong.csv, its hostfile places 8 ranks,
# and its provenance names the commit and the MPI library.
python3 - "$out" <<'PY'
import csv, sys, xml.etree.ElementTree as ET
out = sys.argv[1]
root = ET.parse(f"{out}/calibrated.xml").getroot()
cluster = root.find(".//cluster")
head = open(f"{out}/calibrated.xml").read().split("-->")[0]
rows = [r for r in csv.DictReader(open(f"{out}/pingpong.csv")) if r["pair"] == "intra"]
def fit(points):  # least squares on relative errors, as calibrate fits: latency (s) and bandwidth (B/s)
    w = [1 / y ** 2 for _, y in points]; n = sum(w)
    mx = sum(wi * x for wi, (x, _) in zip(w, points)) / n; my = sum(wi * y for wi, (_, y) in zip(w, points)) / n
    slope = (sum(wi * (x - mx) * (y - my) for wi, (x, y) in zip(w, points)) /
             sum(wi * (x - mx) ** 2 for wi, (x, _) in zip(w, points)))
    return my - slope * mx, 1 / slope
pts = [(int(r["bytes"]), float(r["one_way_us"]) * 1e-6) for r in rows]
lat, _ = fit([p for p in pts if p[0] < 65536])
_, bw = fit([p for p in pts if p[0] >= 65536])
got_lat = float(cluster.get("loopback_lat").rstrip("s"))
got_bw = float(cluster.get("loopback_bw").rstrip("Bps"))
problems = []
if len(rows) != 10 or any(float(r["one_way_us"]) <= 0 for r in rows):
    problems.append(f"{len(rows)} intra-node sizes with times (want 10, all positive)")
if abs(got_lat - lat) > 0.01 * abs(lat) + 1e-9 or abs(got_bw - bw) > 0.01 * bw:
    problems.append(f"loopback {got_lat} s, {got_bw} B/s; the times fit {lat} s, {bw} B/s")
hosts = [l for l in open(f"{out}/calibrated.hosts").read().splitlines() if l]
if len(hosts) != 8 or not set(hosts) <= {f"node-{i}" for i in range(int(cluster.get("radical").split("-")[1]) + 1)}:
    problems.append(f"hostfile: {hosts}")
prov = list(csv.DictReader(open(f"{out}/provenance.csv")))
if len(prov) != 1 or not prov[0]["git_commit"] or not prov[0]["mpi_library"] or prov[0]["nprocs"] != "2":
    problems.append(f"provenance: {prov}")
for fact in ("MPI library: ", "Date (UTC): ", "Command: ", "mcmclb commit: ", "NOT MEASURED"):
    if fact not in head:
        problems.append(f"the platform's comment lacks '{fact}'")
if problems:
    sys.exit("calibrate: " + "; ".join(problems))
print(f"calibrated.xml: loopback {got_lat * 1e6:.3f} us, {got_bw / 1e6:.0f} MB/s, the fit of pingpong.csv")
PY
# Simulated on the platform, the ping-pong between two nodes (whose links copy the node's times here) takes at every
# size the time the platform's model gives (SMPI: latency x lat-factor + size / (bandwidth x bw-factor)), within 10 %
# or 0.05 us (SMPI charges each MPI_Wtime 10 ns of simulated time, smpi/wtime).
printf 'node-0\nnode-1\n' >"$work/pair.hosts"
(cd "$work" && smpirun -np 2 -platform "$out/calibrated.xml" -hostfile "$work/pair.hosts" -no-privatize \
  --log=root.thresh:warning "$(dirname "$sim")/tests/smpi/smpi_pingpong") >"$work/simulated.csv"
python3 - "$out/calibrated.xml" "$work/simulated.csv" <<'PY'
import csv, sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
c = root.find(".//cluster")
props = {p.get("id"): p.get("value") for p in root.iter("prop")}
def factor(name, size):
    return [float(v) for k, v in (x.split(":") for x in props[name].split(";")) if int(k) <= size][-1]
lat, bw = 2 * float(c.get("lat").rstrip("s")), float(c.get("bw").rstrip("Bps"))  # a route: two links
bad = []
for r in csv.DictReader(open(sys.argv[2])):
    size, got = int(r["bytes"]), float(r["one_way_us"])
    want = (lat * factor("smpi/lat-factor", size) + size / (bw * factor("smpi/bw-factor", size))) * 1e6
    if abs(got - want) > max(0.10 * want, 0.05):
        bad.append(f"{size} B: {got} us, the model {want:.4f} us")
if bad:
    sys.exit("the simulated ping-pong on calibrated.xml: " + "; ".join(bad))
print("simulated ping-pong on calibrated.xml: every size within 10 % or 0.05 us of the platform's model")
PY

# Two nodes of one rank, emulated by Hydra's fork bootstrap (MPICH): the network's pair is timed, the node's is not,
# and the platform says which; --cores 3 makes nodes of 3 cores (8 ranks: 3, 3 and 2 on three nodes).
version=$("$mpiexec" --version 2>/dev/null || true)  # read whole: grep -q could end it early (pipefail)
if grep -qi hydra <<<"$version"; then
  "$mpiexec" -bootstrap fork -hosts a:1,b:1 -n 2 "$mcmclb" calibrate --out "$work/two" --ranks 8 --reps 2 \
    --cores 3 >/dev/null
  head=$(sed -n '/^-->/q;p' "$work/two/calibrated.xml")
  if [ "$(grep -c '^inter,' "$work/two/pingpong.csv")" -ne 10 ] || grep -q "intra," "$work/two/pingpong.csv" ||
    ! grep -q "2 node(s)" <<<"$head" || ! grep -q "Inside a node: NOT MEASURED" <<<"$head" ||
    grep -q "Between nodes: NOT MEASURED" <<<"$head" || ! grep -q ' core="3"' "$work/two/calibrated.xml" ||
    [ "$(sort "$work/two/calibrated.hosts" | uniq -c | awk '{print $1}' | paste -sd,)" != "3,3,2" ]; then
    cat "$work/two/pingpong.csv" "$work/two/calibrated.xml"; echo "calibrate on two emulated nodes: wrong pairs"; exit 1
  fi
  echo "two emulated nodes: the pair between nodes timed, the platform says the node's was not"
fi

# advise accepts the platform (its checks, without simulating), then a small study simulated on it.
python3 -c "
print('chain,item,ranks,seconds,speedup')
for c in range(8):
    print(f'{c},0,1,{0.001 * (c + 1)},')" >"$work/t8.csv"
"$mcmclb" advise "$work/t8.csv" --ranks 4 --platform "$out/calibrated.xml" --smpi-flags "$out/smpi.cfg" \
  --sim-binary "$sim" --out "$work/advice" --dry-run >"$work/advise.log" 2>&1 ||
  { cat "$work/advise.log"; echo "advise --dry-run refused the calibrated platform"; exit 1; }
grep -q "simulated on .*calibrated.xml" "$work/advise.log" || { cat "$work/advise.log"; exit 1; }
"$mcmclb" sweep "$src/configs/validate-smpi.yaml" --launcher smpi --platform "$out/calibrated.xml" \
  --smpi-flags "$out/smpi.cfg" --sim-binary "$sim" --out "$work/sweep" --set nprocs=4 --set reps=1 \
  >"$work/sweep.log" 2>&1 || { cat "$work/sweep.log"; exit 1; }
python3 - "$work/sweep/runs.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
bad = [r["run_id"] for r in rows if r["valid"] != "true" or r["backend"] != "smpi" or
       not r["platform"].endswith("calibrated.xml") or r["nprocs"] != "4" or float(r["time_s"]) <= 0]
if not rows or bad:
    sys.exit(f"sweep on the calibrated platform: {len(rows)} rows, invalid or mislabelled: {bad}")
print(f"sweep --launcher smpi on calibrated.xml: {len(rows)} valid simulated rows at P = 4")
PY
