#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# mcmclb calibrate end to end on this machine: bad flags are one line on rank 0 and exit 2 with nothing written;
# `mpiexec -n 2 mcmclb calibrate` writes a platform, its hostfile, its flags, the times and their provenance; the
# platform's constants give the model times it lists beside each median, and a simulated ping-pong on it gives them
# back; `mcmclb advise --dry-run` accepts the platform and refuses one that is not XML or a crowded hostfile, and a
# small study simulated on it by `mcmclb sweep --launcher smpi` gives valid rows labelled with it.
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
for bad in "--ranks 0" "--reps x" "--cores 0" "--busy 101" "--out" "--fast" "--out $work/a --out $work/b"; do
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
# A shared developer machine may set MCMCLB_CALIBRATE_BUSY (a percentage) to accept its load; CI runs this alone.
busy=()
[ -n "${MCMCLB_CALIBRATE_BUSY:-}" ] && busy=(--busy "$MCMCLB_CALIBRATE_BUSY")
"$mpiexec" -n 2 "$mcmclb" calibrate --out "$out" --ranks 8 --reps 3 "${busy[@]}" | tee "$work/cal.log"
for f in calibrated.xml calibrated.hosts smpi.cfg times.csv provenance.csv; do
  [ -s "$out/$f" ] || { echo "calibrate: $out/$f missing or empty"; exit 1; }
done
# The platform is XML whose constants give, by SMPI's own rules, the model times that times.csv lists beside each
# median; every size of every call has its median inside its interval; its hostfile places 8 ranks, and its
# provenance names the commit and the MPI library.
cat >"$work/smpi_model.py" <<'PY'
import xml.etree.ElementTree as ET
def load(path):
    root = ET.parse(path).getroot()
    c = root.find(".//cluster")
    props = {p.get("id"): p.get("value") for p in root.iter("prop")}
    return c, props
def pieces(value):  # SimGrid's FactorSet: "boundary:v1[:v2];...", a piece holding the sizes above its boundary
    return sorted((int(k), [float(x) for x in rest]) for k, *rest in (chunk.split(":") for chunk in value.split(";")))
def lookup(value, size, default):
    got = default
    for boundary, values in pieces(value):
        if size <= boundary:
            break
        got = values
    return got
def one_way(c, props, size, lat, bw):
    """What SMPI charges a message of size between two ranks whose route has latency lat and bandwidth bw."""
    thresh = int(props.get("smpi/send-is-detached-thresh", 65536))
    # SMPI charges os and or only to a message it sends detached (below the eager limit).
    os_ = lookup(props["smpi/os"], size, [0, 0]) if size < thresh else [0, 0]
    or_ = lookup(props["smpi/or"], size, [0, 0]) if size < thresh else [0, 0]
    over = max(0, os_[0] + os_[1] * size) + max(0, or_[0] + or_[1] * size)
    # SMPI looks its factors up by, and charges the bandwidth for, the payload: the bytes and its 16-byte envelope.
    payload = size + 16
    latf = lookup(props["smpi/lat-factor"], payload, [1])[0]
    bwf = lookup(props["smpi/bw-factor"], payload, [1])[0]
    return over + lat * latf + payload / (bw * bwf)
PY
python3 - "$out" "$work" <<'PY'
import csv, sys
sys.path.insert(0, sys.argv[2])
from smpi_model import load, one_way
out = sys.argv[1]
c, props = load(f"{out}/calibrated.xml")
head = open(f"{out}/calibrated.xml").read().split("-->")[0]
rows = [r for r in csv.DictReader(open(f"{out}/times.csv")) if r["pair"] == "intra"]
lat, bw = float(c.get("loopback_lat").rstrip("s")), float(c.get("loopback_bw").rstrip("Bps"))
problems = []
for call in ("pingpong", "send", "isend", "recv"):
    got = [r for r in rows if r["call"] == call]
    if len(got) != 44:
        problems.append(f"{len(got)} intra-node sizes of {call} (want 44)")
    bad = [r["bytes"] for r in got if not 0 < float(r["low_us"]) <= float(r["median_us"]) <= float(r["high_us"])]
    if bad:
        problems.append(f"{call}: medians outside their intervals at {bad}")
for r in rows:
    if r["call"] != "pingpong":
        continue
    want = one_way(c, props, int(r["bytes"]), lat, bw) * 1e6
    if abs(float(r["model_us"]) - want) > 0.01 * want + 1e-4:
        problems.append(f"{r['bytes']} B: times.csv's model {r['model_us']} us, the platform's {want:.4f} us")
hosts = [l for l in open(f"{out}/calibrated.hosts").read().splitlines() if l]
if len(hosts) != 8 or not set(hosts) <= {f"node-{i}" for i in range(int(c.get("radical").split("-")[1]) + 1)}:
    problems.append(f"hostfile: {hosts}")
prov = list(csv.DictReader(open(f"{out}/provenance.csv")))
if len(prov) != 1 or not prov[0]["git_commit"] or not prov[0]["mpi_library"] or prov[0]["nprocs"] != "2":
    problems.append(f"provenance: {prov}")
for fact in ("MPI library: ", "Date (UTC): ", "Command: ", "mcmclb commit: ", "NOT MEASURED", "Host load"):
    if fact not in head:
        problems.append(f"the platform's comment lacks '{fact}'")
if problems:
    sys.exit("calibrate: " + "; ".join(problems))
print(f"calibrated.xml: the model times of times.csv, by SMPI's rules; loopback {lat * 1e6:.3f} us, {bw / 1e6:.0f} MB/s")
PY
# Simulated on the platform, the ping-pong between two nodes (whose links copy the node's times here) takes at every
# size the time the platform's model gives (SMPI: os + or below the eager limit, latency x lat-factor + payload /
# (bandwidth x bw-factor), the payload being the size and a 16-byte envelope), within 10 % or 0.05 us (SMPI charges
# each MPI_Wtime 10 ns of simulated time, smpi/wtime).
printf 'node-0\nnode-1\n' >"$work/pair.hosts"
(cd "$work" && smpirun -np 2 -platform "$out/calibrated.xml" -hostfile "$work/pair.hosts" -no-privatize \
  --log=root.thresh:warning "$(dirname "$sim")/mcmclb-pingpong-sim") >"$work/simulated.csv"
python3 - "$out/calibrated.xml" "$work/simulated.csv" "$work" <<'PY'
import csv, sys
sys.path.insert(0, sys.argv[3])
from smpi_model import load, one_way
c, props = load(sys.argv[1])
lat, bw = 2 * float(c.get("lat").rstrip("s")), float(c.get("bw").rstrip("Bps"))  # a route: two links
bad = []
for r in csv.DictReader(open(sys.argv[2])):
    size, got = int(r["bytes"]), float(r["one_way_us"])
    want = one_way(c, props, size, lat, bw) * 1e6
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
    --cores 3 "${busy[@]}" >/dev/null
  head=$(sed -n '/^-->/q;p' "$work/two/calibrated.xml")
  if [ "$(grep -c '^inter,pingpong,' "$work/two/times.csv")" -ne 44 ] || grep -q "^intra," "$work/two/times.csv" ||
    ! grep -q "2 node(s)" <<<"$head" || ! grep -q "Inside a node: NOT MEASURED" <<<"$head" ||
    grep -q "Between nodes: NOT MEASURED" <<<"$head" || ! grep -q ' core="3"' "$work/two/calibrated.xml" ||
    [ "$(sort "$work/two/calibrated.hosts" | uniq -c | awk '{print $1}' | paste -sd,)" != "3,3,2" ]; then
    cat "$work/two/times.csv" "$work/two/calibrated.xml"; echo "calibrate on two emulated nodes: wrong pairs"; exit 1
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
# A platform that is not XML, and a hostfile of 8 ranks on each 2-core node: refused in one line before any
# simulation, exit 2, no folder made.
echo "not a platform" >"$work/text.xml"
cp "$out/calibrated.hosts" "$work/text.hosts"
cp "$out/calibrated.xml" "$work/crowded.xml"
printf 'node-0:8\nnode-1:8\n' >"$work/crowded.hosts"
for platform in text crowded; do
  set +e
  "$mcmclb" advise "$work/t8.csv" --ranks 4 --platform "$work/$platform.xml" --smpi-flags "$out/smpi.cfg" \
    --sim-binary "$sim" --out "$work/refused" >/dev/null 2>"$work/refused.err"
  status=$?
  set -e
  if [ "$status" -ne 2 ] || [ "$(grep -c . "$work/refused.err")" -ne 1 ] || [ -e "$work/refused" ]; then
    echo "advise on $platform.xml: exit $status (want 2, one line, no folder)"; cat "$work/refused.err"; exit 1
  fi
done
echo "advise: a platform that is not XML and a crowded hostfile refused in one line, nothing written"
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
