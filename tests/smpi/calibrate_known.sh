#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# mcmclb calibrate on a network of known constants: the simulated fat tree (configs/platforms/fattree.xml: 1 us and
# 12.5 GB/s between nodes, 0.8 us and 20 GB/s inside one, 0.25 us per MPI_Test and MPI_Iprobe), 2 ranks on each of
# 2 nodes. The platform it writes must carry those constants back, within 2 %.
#   calibrate_known.sh MCMCLB_SIM FATTREE.xml
set -euo pipefail
binary=$1 platform=$2
source "$(dirname "$0")/../../configs/platforms/smpi-flags.bash"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf 'node-0\nnode-0\nnode-1\nnode-1\n' >"$work/hosts"
(cd "$work" && smpirun -np 4 -platform "$platform" -hostfile "$work/hosts" "${smpi_flags[@]}" \
   "$binary" calibrate --out "$work/cal" --ranks 64) | tee "$work/log"
python3 - "$work/cal/calibrated.xml" <<'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
c = root.find(".//cluster")
props = {p.get("id"): p.get("value") for p in root.iter("prop")}
got = {
    "latency between nodes (s)": 2 * float(c.get("lat").rstrip("s")),  # a route in a leaf: two links
    "bandwidth between nodes (B/s)": float(c.get("bw").rstrip("Bps")),
    "latency inside a node (s)": float(c.get("loopback_lat").rstrip("s")),
    "bandwidth inside a node (B/s)": float(c.get("loopback_bw").rstrip("Bps")),
    "MPI_Test (s)": float(props["smpi/test"]),
    "MPI_Iprobe (s)": float(props["smpi/iprobe"]),
    "cores per node": float(c.get("core")),
}
want = {"latency between nodes (s)": 1.0e-6, "bandwidth between nodes (B/s)": 12.5e9,
        "latency inside a node (s)": 0.8e-6, "bandwidth inside a node (B/s)": 20e9, "MPI_Test (s)": 0.25e-6,
        "MPI_Iprobe (s)": 0.25e-6, "cores per node": 2}
bad = [f"{k}: {got[k]:.4g} (want {want[k]:.4g})" for k in want if abs(got[k] - want[k]) > 0.02 * want[k]]
if bad or "Between nodes: NOT MEASURED" in open(sys.argv[1]).read():
    sys.exit("calibrate on fattree.xml: " + "; ".join(bad or ["the network was not measured"]))
print("calibrate on fattree.xml: every constant within 2 %: " + ", ".join(f"{k} {v:.4g}" for k, v in got.items()))
PY
