#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# mcmclb calibrate over a real network of known bandwidth: two nodes on this machine, this one and a network
# namespace with a host name of its own, joined by a veth pair whose both ends a token bucket (tc tbf) holds to
# RATE Mbit/s. Open MPI runs one rank on each over TCP (btl tcp,self; its daemon started in the namespace by an rsh
# agent). The platform written must say 2 nodes; the 4 MiB messages must run at the bucket's rate less TCP/IP's
# headers (80 to 102 % of it) and the fitted bandwidth between nodes at 70 to 102 %. The kernel here has no netem, so
# no latency is imposed; the measured one is only checked to be positive.
#   calibrate_netns.sh MCMCLB_BUILT_AGAINST_OPEN_MPI [RATE_MBIT]
set -euo pipefail
mcmclb=$1 rate=${2:-200}
skip() {
  case "${CI:-}" in true | TRUE | True | 1 | yes) echo "FAILED: $1; CI=true: a missing dependency fails"; exit 1 ;; esac
  echo "SKIPPED: $1"; exit 77
}
[ "$EUID" = 0 ] || skip "needs root (network namespaces)"
for tool in ip tc unshare mpiexec.openmpi; do command -v "$tool" >/dev/null || skip "$tool not found"; done
[ -x "$mcmclb" ] || { echo "calibrate_netns: $mcmclb is not built (the test openmpi_programs builds it)"; exit 1; }
work=$(mktemp -d)
ns=mcmclbcal$$ a=mcal$$a b=mcal$$b net=10.$((100 + $$ % 100)).$(($$ / 100 % 250)) peer=calpeer$$
cleanup() {
  ip netns del "$ns" 2>/dev/null || true  # takes the veth pair with it
  ip link del "$a" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
ip netns add "$ns" || skip "cannot make a network namespace"
ip link add "$a" type veth peer name "$b" || skip "cannot make a veth pair"
ip link set "$b" netns "$ns"
ip addr add "$net.1/24" dev "$a" && ip link set "$a" up
ip -n "$ns" addr add "$net.2/24" dev "$b" && ip -n "$ns" link set "$b" up && ip -n "$ns" link set lo up
tc qdisc add dev "$a" root tbf rate "${rate}mbit" burst 64kbit latency 50ms || skip "no tbf queueing discipline"
ip netns exec "$ns" tc qdisc add dev "$b" root tbf rate "${rate}mbit" burst 64kbit latency 50ms
# Open MPI's rsh agent: the daemon of the second node runs in the namespace, under the host name it was given.
cat >"$work/agent" <<EOF
#!/bin/sh
host=\$1; shift
exec ip netns exec $ns unshare --uts sh -c "hostname \$host; \$*"
EOF
chmod +x "$work/agent"
timeout 240 mpiexec.openmpi --allow-run-as-root -n 2 --host "$(hostname)":1,"$peer":1 --mca plm_rsh_agent "$work/agent" \
  --mca oob_tcp_if_include "$net.0/24" --mca btl_tcp_if_include "$net.0/24" --mca btl tcp,self --mca pml ob1 \
  "$mcmclb" calibrate --out "$work/cal" --ranks 8 --reps 1 2>&1 | grep -v "setpgid" | tee "$work/log"
python3 - "$work/cal" "$rate" <<'PY'
import csv, sys, xml.etree.ElementTree as ET
out, rate = sys.argv[1], float(sys.argv[2])
text = open(f"{out}/calibrated.xml").read()
c = ET.parse(f"{out}/calibrated.xml").getroot().find(".//cluster")
bw = float(c.get("bw").rstrip("Bps"))
lat = 2 * float(c.get("lat").rstrip("s"))
want = rate * 1e6 / 8
rows = [r for r in csv.DictReader(open(f"{out}/pingpong.csv"))]
problems = []
if "Measured: 2 node(s)" not in text or "Between nodes: NOT MEASURED" in text or {r["pair"] for r in rows} != {"inter"}:
    problems.append("the platform does not say that 2 nodes were measured between nodes")
# The 4 MiB message's own rate, and the fitted line's (TCP restarts its window after each idle turn of a ping-pong,
# so the mid sizes run slower and pull the slope down: 84 to 98 % of the bucket here).
big = [float(r["bandwidth_MBps"]) * 1e6 for r in rows if r["bytes"] == "4194304"]
if not big or not 0.80 * want <= big[0] <= 1.02 * want:
    problems.append(f"4 MiB at {big} B/s, the bucket's {want / 1e6:.2f} MB/s")
if not 0.70 * want <= bw <= 1.02 * want:
    problems.append(f"bandwidth between nodes {bw / 1e6:.2f} MB/s, the bucket's {want / 1e6:.2f} MB/s")
if lat <= 0:
    problems.append(f"latency between nodes {lat} s")
if problems:
    sys.exit("calibrate over the veth pair: " + "; ".join(problems))
print(f"calibrate over a veth pair held to {rate:.0f} Mbit/s ({want / 1e6:.2f} MB/s): fitted {bw / 1e6:.2f} MB/s "
      f"({bw / want * 100:.0f} %), 4 MiB at {big[0] / 1e6:.2f} MB/s ({big[0] / want * 100:.0f} %), latency "
      f"{lat * 1e6:.1f} us (measured, none imposed)")
PY
