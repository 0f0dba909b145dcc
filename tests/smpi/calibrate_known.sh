#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# mcmclb calibrate on a simulated machine of known piecewise constants, 2 ranks on each of 2 nodes: per-call
# overheads smpi/os, smpi/ois and smpi/or of two pieces each, an eager limit (send-is-detached-thresh) of 16 KiB, and
# latency and bandwidth factors of three pieces. The platform it writes must carry every one back within 5 %, each
# breakpoint exactly: they are found from the times, not assumed. MPI_Wtime costs no simulated time here
# (smpi/wtime 0), so that the timings hold the constants alone.
#   calibrate_known.sh MCMCLB_SIM
set -euo pipefail
binary=$1
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
    <prop id="smpi/lat-factor" value="0:1;8191:1.8;262143:6"/>
    <prop id="smpi/bw-factor" value="0:0.5;8191:0.8;262143:1"/>
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
python3 - "$work/cal/calibrated.xml" <<'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
c = root.find(".//cluster")
props = {p.get("id"): p.get("value") for p in root.iter("prop")}
def pieces(value):
    return [[float(x) for x in chunk.split(":")] for chunk in value.split(";")]
want = {
    "smpi/os": "0:0.3e-6:0.2e-9;1023:0.9e-6:0.05e-9",
    "smpi/ois": "0:0.2e-6:0.1e-9;4095:1.0e-6:0.02e-9",
    "smpi/or": "0:0.25e-6:0.3e-9;2047:1.5e-6:0.1e-9",
    "smpi/lat-factor": "0:1;8191:1.8;262143:6",
    "smpi/bw-factor": "0:0.5;8191:0.8;262143:1",
    "smpi/send-is-detached-thresh": "16384",
}
bad = []
for key, value in want.items():
    if key not in props:
        bad.append(f"{key}: absent (want {value})")
        continue
    got, exp = pieces(props[key]), pieces(value)
    if len(got) != len(exp) or any(g[0] != e[0] for g, e in zip(got, exp)):
        bad.append(f"{key}: {props.get(key)} (want the breakpoints of {value})")
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
