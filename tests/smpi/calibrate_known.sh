#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# mcmclb calibrate on a simulated machine of known piecewise constants, 2 ranks on each of 2 nodes: per-call
# overheads smpi/os, smpi/ois and smpi/or of two pieces each, an eager limit (send-is-detached-thresh) of 16 KiB, and
# latency and bandwidth factors of four pieces. The platform it writes must carry every one back within 5 %, each
# breakpoint between the same two timed sizes: they are found from the times, not assumed. SMPI looks its factors up
# by payload (a message's bytes and a 16-byte envelope), its overheads by bytes; the factors' step at a payload of
# 40 B lies between the timed 16 and 24 B, where a boundary written at a message size would move 8 and 12 B. The
# ping-pong simulated on the written platform then gives the known machine's back at every size. MPI_Wtime costs no
# simulated time here (smpi/wtime 0), so that the timings hold the constants alone.
#   calibrate_known.sh MCMCLB_SIM PINGPONG_SIM
set -euo pipefail
binary=$1 pingpong=$2
source "$(dirname "$0")/../../configs/platforms/smpi-flags.bash"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The known machine. SMPI charges smpi/os and smpi/or only to a message below the eager limit (sent detached).
cat >"$work/known.xml" <<'XML'
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <config id="General">
    <prop id="smpi/os" value="0:0.3e-6:0.2e-9;1023:0.9e-6:0.05e-9"/>
    <prop id="smpi/ois" value="0:0.2e-6:0.1e-9;4095:1.0e-6:0.02e-9"/>
    <prop id="smpi/or" value="0:0.25e-6:0.3e-9;2047:1.5e-6:0.1e-9"/>
    <prop id="smpi/send-is-detached-thresh" value="16384"/>
    <prop id="smpi/async-small-thresh" value="16384"/>
    <prop id="smpi/lat-factor" value="0:1;39:1.5;8191:1.8;262143:6"/>
    <prop id="smpi/bw-factor" value="0:0.5;39:0.5;8191:0.8;262143:1"/>
    <prop id="network/TCP-gamma" value="0"/>
    <prop id="smpi/test" value="0.25e-6"/>
    <prop id="smpi/iprobe" value="0.25e-6"/>
  </config>
  <zone id="known" routing="Full">
    <cluster id="k" topology="FAT_TREE" topo_parameters="1;2;1;1" prefix="node-" radical="0-1" suffix=""
             speed="2.5Gf" core="2" bw="8GBps" lat="0.6us" loopback_bw="20GBps" loopback_lat="0.1us"/>
  </zone>
</platform>
XML
printf 'node-0\nnode-0\nnode-1\nnode-1\n' >"$work/hosts"
(cd "$work" && smpirun -np 4 -platform "$work/known.xml" -hostfile "$work/hosts" "${smpi_flags[@]}" \
   --cfg=smpi/wtime:0 "$binary" calibrate --out "$work/cal" --ranks 64 --reps 3) | tee "$work/log"
python3 - "$work/cal/calibrated.xml" "$work/cal/times.csv" <<'PY'
import csv, sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
sizes = sorted({int(r["bytes"]) for r in csv.DictReader(open(sys.argv[2]))})
ENVELOPE = 16  # SMPI's, added to a message's bytes where it looks up a latency or bandwidth factor
c = root.find(".//cluster")
props = {p.get("id"): p.get("value") for p in root.iter("prop")}
def pieces(value):
    return [[float(x) for x in chunk.split(":")] for chunk in value.split(";")]
want = {
    "smpi/os": "0:0.3e-6:0.2e-9;1023:0.9e-6:0.05e-9",
    "smpi/ois": "0:0.2e-6:0.1e-9;4095:1.0e-6:0.02e-9",
    "smpi/or": "0:0.25e-6:0.3e-9;2047:1.5e-6:0.1e-9",
    "smpi/lat-factor": "0:1;39:1.5;8191:1.8;262143:6",
    "smpi/bw-factor": "0:0.5;39:0.5;8191:0.8;262143:1",
    "smpi/send-is-detached-thresh": "16384",
}
bad = []
for key, value in want.items():
    if key not in props:
        bad.append(f"{key}: absent (want {value})")
        continue
    got, exp = pieces(props[key]), pieces(value)
    def piece(ps, size):  # SimGrid's lookup: the last piece whose boundary is below the size
        return max([i for i, p in enumerate(ps) if p[0] < size] or [0])
    shift = ENVELOPE if "factor" in key else 0
    if len(got) != len(exp) or any(piece(got, s + shift) != piece(exp, s + shift) for s in sizes):
        bad.append(f"{key}: {props.get(key)} (want the breakpoints of {value}, between the same timed sizes)")
        continue
    for g, e in zip(got, exp):
        for gv, ev in zip(g[1:], e[1:]):
            if abs(gv - ev) > 0.05 * abs(ev) + (1e-15 if ev == 0 else 0):
                bad.append(f"{key}: {props[key]} (want {value} within 5 %)")
                break
latency = 2 * float(c.get("lat").rstrip("s"))  # a route in a leaf: two links
bandwidth = float(c.get("bw").rstrip("Bps"))
if abs(latency - 1.2e-6) > 0.05 * 1.2e-6:
    bad.append(f"network latency between nodes {latency:.4g} s (want 1.2e-06 within 5 %)")
if abs(bandwidth - 8e9) > 0.05 * 8e9:
    bad.append(f"bandwidth between nodes {bandwidth:.4g} B/s (want 8e9 within 5 %)")
for key in ("smpi/test", "smpi/iprobe"):
    if abs(float(props[key]) - 0.25e-6) > 0.05 * 0.25e-6:
        bad.append(f"{key}: {props[key]} (want 0.25e-6 within 5 %)")
if c.get("core") != "2" or "Between nodes: NOT MEASURED" in open(sys.argv[1]).read():
    bad.append("the platform's nodes or the pair between them")
if bad:
    sys.exit("calibrate on the known machine: " + "; ".join(bad))
print("calibrate on the known machine: every overhead, factor, breakpoint, the eager limit, latency and bandwidth "
      "within 5 %")
PY

# The ping-pong on the written platform against the known machine's, node-0 to node-1 on both.
printf 'node-0\nnode-1\n' >"$work/pair"
for platform in known cal/calibrated; do
  (cd "$work" && smpirun -np 2 -platform "$work/$platform.xml" -hostfile "$work/pair" "${smpi_flags[@]}" \
     --cfg=smpi/wtime:0 "$pingpong") >"$work/$(basename "$platform").csv"
done
python3 - "$work/known.csv" "$work/calibrated.csv" <<'PY'
import csv, sys
known, written = ({r["bytes"]: float(r["one_way_us"]) for r in csv.DictReader(open(f))} for f in sys.argv[1:3])
bad = [f"{b} B: {written.get(b)} us, the known machine {t} us" for b, t in known.items()
       if b not in written or abs(written[b] - t) > 0.03 * t]
if not known or bad:
    sys.exit("the ping-pong on the calibrated platform: " + "; ".join(bad or ["no rows"]))
print(f"the ping-pong on the calibrated platform: all {len(known)} sizes within 3 % of the known machine's")
PY
