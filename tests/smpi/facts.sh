#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Asserts the SimGrid SMPI facts the simulation build is designed around, so that a SimGrid upgrade
# that changes one of them fails here instead of silently changing what the simulation means.
#   facts.sh FACTS_BINARY PLATFORM.xml HOSTFILE
set -uo pipefail
if [ $# -ne 3 ]; then
  echo "usage: $0 FACTS_BINARY PLATFORM.xml HOSTFILE" >&2
  exit 2
fi
binary=$1 platform=$2 hosts=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
# run CASE [smpirun flags...]: prints the case's output (stdout and stderr), returns its exit code.
run() {
  local which=$1
  shift
  (cd "$work" && smpirun -np 4 -platform "$platform" -hostfile "$hosts" --log=root.thresh:critical "$@" \
     "$binary" "$which" 2>&1)
}
# expect DESCRIPTION EXTENDED_REGEX CASE [smpirun flags...]
expect() {
  local what=$1 pattern=$2
  shift 2
  local out
  out=$(run "$@")
  if grep -Eq -- "$pattern" <<< "$out"; then
    echo "ok   $what"
  else
    echo "FAIL $what: wanted /$pattern/, got:"
    head -5 <<< "$out"
    failures=$((failures + 1))
  fi
}
expect "reports MPI 3.1 (no MPI_Comm_create_from_group)" "^version ok MPI 3\.1 " version
expect "MPI_Comm_create works" "^create ok" create
expect "MPI_Comm_split works" "^split ok" split
expect "MPI_Comm_create_group works" "^create_group ok" create_group
expect "MPI_Ibcast and MPI_Iallgather work" "^ibcast ok" ibcast
expect "MPI_Iprobe works" "^iprobe ok" iprobe
expect "MPI_Intercomm_create aborts" "Not yet implemented: PMPI_Intercomm_create" intercomm
expect "MPI_Intercomm_merge aborts" "Not yet implemented: PMPI_Intercomm_merge" merge
expect "MPI_Comm_idup aborts" "Not yet implemented: PMPI_Comm_idup" idup
# SimGrid's defaults (100 us) given explicitly: the platform files set their own cost per call.
expect "failed MPI_Test/MPI_Iprobe inject 100 us growing by 100 us (SimGrid's defaults)" \
  "10 failed MPI_Test: 5500\.0 us, 10 failed MPI_Iprobe: 5500\.0 us" injected --cfg=smpi/test:1e-4 --cfg=smpi/iprobe:1e-4
expect "grow-injected-times:no keeps 100 us per call" "10 failed MPI_Test: 1000\.0 us, 10 failed MPI_Iprobe: 1000\.0 us" \
  injected --cfg=smpi/test:1e-4 --cfg=smpi/iprobe:1e-4 --cfg=smpi/grow-injected-times:no
expect "the platform file's smpi/test and smpi/iprobe apply (bgp.xml: 1 us per call)" \
  "10 failed MPI_Test: 10\.0 us, 10 failed MPI_Iprobe: 10\.0 us" injected --cfg=smpi/grow-injected-times:no
# steady_clock's host time across the simulated 50 ms: below 40 ms however loaded the host is (a parallel build
# beside it made it 1.1 ms), far from the 50 it would read were it simulated.
expect "usleep, nanosleep and std::this_thread::sleep_for pass simulated time; clock_gettime reads it; \
std::chrono::steady_clock reads the host" \
  "usleep\(10ms\) 10\.000, nanosleep\(10ms\) 10\.000, sleep_for\(10ms\) 10\.000 .* clock_gettime across usleep\(50ms\) 50\.000 ms, steady_clock across usleep\(50ms\) [0-3]?[0-9]\.[0-9]+ ms" \
  clocks
expect "ranks have private globals by default" "rank 0 sees 1$" globals
expect "-no-privatize shares globals between ranks" "rank 0 sees 4$" globals -no-privatize
exit $((failures > 0))
