#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Checks that a simulated platform delivers the latency and bandwidth it is meant to: runs the ping-pong between
# two ranks on neighbouring nodes (node-0, node-1) and fails unless the 8-byte one-way time and the 4 MiB
# bandwidth are within 10 % of the intended values.
#   calibrate.sh PINGPONG_BINARY PLATFORM.xml LATENCY_US BANDWIDTH_MBPS
set -euo pipefail
if [ $# -ne 4 ]; then
  echo "usage: $0 PINGPONG_BINARY PLATFORM.xml LATENCY_US BANDWIDTH_MBPS" >&2
  exit 2
fi
binary=$1 platform=$2 want_lat=$3 want_bw=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf 'node-0\nnode-1\n' > "$work/hosts"
(cd "$work" && smpirun -np 2 -platform "$platform" -hostfile "$work/hosts" -no-privatize \
   --log=root.thresh:warning "$binary") > "$work/out.csv"
cat "$work/out.csv"
awk -F, -v want_lat="$want_lat" -v want_bw="$want_bw" -v platform="$(basename "$platform")" '
  function off(got, want) { d = (got - want) / want; return d < 0 ? -d : d }
  $1 == 8 { lat = $2 } $1 == 4194304 { bw = $3 }
  END {
    if (lat == "" || bw == "") { print platform ": ping-pong printed no 8-byte or 4 MiB row"; exit 1 }
    printf "%s: one-hop latency %.3f us (want %s), bandwidth %.1f MB/s (want %s)\n", platform, lat, want_lat, bw, want_bw
    if (off(lat, want_lat) > 0.10 || off(bw, want_bw) > 0.10) { print platform ": off by more than 10 %"; exit 1 }
  }' "$work/out.csv"
