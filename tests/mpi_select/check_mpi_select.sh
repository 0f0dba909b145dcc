#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# cmake/Mpi.cmake chooses the MPI library by name, never by where the alternatives point: with mpicc, mpicxx and
# mpiexec on PATH pointing at the other library, MCMCLB_MPI=X still finds X's wrappers and launcher; a wrapper of
# the other library given explicitly, or an unknown name, is refused in one line. Configure only (a few seconds).
# Usage: check_mpi_select.sh <source dir> <work dir> <library present: MPICH|OpenMPI>...
set -euo pipefail
src=$1; work=$2; shift 2
declare -A suffix=([MPICH]=mpich [OpenMPI]=openmpi)
# A library not installed: a failure under CI=true (bootstrap.sh installs both), else a skip (exit 77).
for lib in "$@"; do
  if ! command -v "mpicc.${suffix[$lib]}" >/dev/null; then
    [ "${CI:-}" = true ] && { echo "check_mpi_select: $lib is not installed (mpicc.${suffix[$lib]}; run ./bootstrap.sh)" >&2; exit 1; }
    echo "check_mpi_select: $lib is not installed (mpicc.${suffix[$lib]}): skipped"; exit 77
  fi
done
rm -rf "$work"; mkdir -p "$work"
fail() { echo "check_mpi_select: $*" >&2; exit 1; }
said() { tr -s '\n ' '  ' <"$1" | grep -q "$2"; }  # <log> <pattern>: CMake wraps a message over several lines
configure() {  # <folder> <PATH prefix> <cmake args>...
  local dir=$1 path=$2; shift 2
  PATH="$path:$PATH" cmake -S "$src/tests/mpi_select" -B "$dir" "$@" >"$dir.log" 2>&1
}
for lib in "$@"; do
  for other in "$@"; do
    [ "$other" != "$lib" ] || continue
    fake="$work/path-$other"  # the plain names pointing at the other library, as the alternatives would
    mkdir -p "$fake"
    for tool in mpicc mpicxx mpiexec mpirun; do ln -sf "/usr/bin/$tool.${suffix[$other]}" "$fake/$tool"; done
    configure "$work/$lib-under-$other" "$fake" -DMCMCLB_MPI="$lib" || { cat "$work/$lib-under-$other.log"; fail "$lib did not configure"; }
    cache="$work/$lib-under-$other/CMakeCache.txt"
    for var in MPI_C_COMPILER MPI_CXX_COMPILER MPIEXEC_EXECUTABLE; do
      grep -q "^$var:FILEPATH=.*\.${suffix[$lib]}\$" "$cache" ||
        fail "MCMCLB_MPI=$lib with $other's names on PATH: $(grep "^$var:" "$cache")"
    done
    grep -q "mcmclb: MPI $lib (.*; family $lib), named by MCMCLB_MPI" "$work/$lib-under-$other.log" || fail "configure did not name $lib"
    grep -q "kMpiexec = \"/usr/bin/mpiexec.${suffix[$lib]}\"" \
      "$work/$lib-under-$other/generated/mcmclb/mpi_build.hpp" || fail "$lib: the baked launcher is not mpiexec.${suffix[$lib]}"
    # The other library's wrapper given by hand: refused, naming the variable.
    if configure "$work/$lib-mixed" "" -DMCMCLB_MPI="$lib" -DMPI_C_COMPILER="/usr/bin/mpicc.${suffix[$other]}"; then
      fail "MCMCLB_MPI=$lib with MPI_C_COMPILER=mpicc.${suffix[$other]} was accepted"
    fi
    grep -q "MCMCLB_MPI=$lib but MPI_C_COMPILER=/usr/bin/mpicc.${suffix[$other]} is not its mpicc" "$work/$lib-mixed.log" ||
      { cat "$work/$lib-mixed.log"; fail "the mismatch message is missing"; }
    echo "check_mpi_select: MCMCLB_MPI=$lib finds $lib with $other's mpicc/mpiexec first on PATH; $other's wrapper refused"
  done
done
# A module's MPI (plain-named wrappers of its own first on PATH, not Debian's alternatives), then a reconfigure of
# the same folder without it: the folder keeps the module's wrappers and says so, rather than refusing.
if [ -x /usr/bin/mpicc.mpich ]; then
  module="$work/module-bin"
  mkdir -p "$module"
  for tool in mpicc mpicxx; do cp "/usr/bin/$tool.mpich" "$module/$tool"; done
  cp /usr/bin/mpiexec.hydra "$module/mpiexec"
  configure "$work/module" "$module" || { cat "$work/module.log"; fail "the module's MPI did not configure"; }
  grep -q "mcmclb: MPI MPICH (.*), the mpicc on PATH: wrappers $module/mpicc" "$work/module.log" ||
    { cat "$work/module.log"; fail "configure did not take the module's mpicc"; }
  configure "$work/module" "" || { cat "$work/module.log"; fail "a reconfigure without the module was refused"; }
  said "$work/module.log" "the mpicc on PATH is now .*; this folder keeps $module/mpicc" ||
    { cat "$work/module.log"; fail "the reconfigure did not say which mpicc it keeps"; }
  grep -q "^MPI_C_COMPILER:FILEPATH=$module/mpicc$" "$work/module/CMakeCache.txt" || fail "the reconfigure switched wrappers"
  configure "$work/module" "$module" || { cat "$work/module.log"; fail "a third configure, the module back, was refused"; }
  echo "check_mpi_select: a module's MPI is kept by a reconfigure without the module"
fi
if configure "$work/unknown" "" -DMCMCLB_MPI=LAM; then fail "MCMCLB_MPI=LAM was accepted"; fi
grep -q "MCMCLB_MPI=LAM: unknown MPI library (allowed: MPICH, OpenMPI, or empty" "$work/unknown.log" || fail "no one-line refusal of LAM"
echo "check_mpi_select: MCMCLB_MPI=LAM refused"

# No MCMCLB_MPI: where the plain names are Debian's alternatives, Debian's MPICH whatever they point at (a second
# MPI never switches a build silently); wrappers given by hand are taken as given, with the launcher beside them.
if [ "$#" -gt 1 ]; then
  fake="$work/path-OpenMPI"
  configure "$work/default-under-OpenMPI" "$fake" || { cat "$work/default-under-OpenMPI.log"; fail "the default did not configure"; }
  grep -q "^MPI_C_COMPILER:FILEPATH=.*mpicc.mpich$" "$work/default-under-OpenMPI/CMakeCache.txt" ||
    fail "the default build took Open MPI's alternatives: $(grep '^MPI_C_COMPILER:' "$work/default-under-OpenMPI/CMakeCache.txt")"
  grep -q "mcmclb: MPI MPICH (.*; family MPICH), Debian's" "$work/default-under-OpenMPI.log" || fail "configure did not say MPICH, Debian's"
  configure "$work/given-openmpi" "" -DMPI_C_COMPILER=/usr/bin/mpicc.openmpi -DMPI_CXX_COMPILER=/usr/bin/mpicxx.openmpi ||
    { cat "$work/given-openmpi.log"; fail "wrappers given by hand did not configure"; }
  grep -q "mcmclb: MPI OpenMPI (.*; family OpenMPI), as given by MPI_C_COMPILER, MPI_CXX_COMPILER: .*launcher /usr/bin/mpiexec.openmpi" \
    "$work/given-openmpi.log" || { cat "$work/given-openmpi.log"; fail "Open MPI's wrappers given: not Open MPI with its own launcher"; }
  # A launcher of the other family beside the headers: refused in one line.
  if configure "$work/mixed-launcher" "" -DMPI_C_COMPILER=/usr/bin/mpicc.openmpi -DMPI_CXX_COMPILER=/usr/bin/mpicxx.openmpi \
       -DMPIEXEC_EXECUTABLE=/usr/bin/mpiexec.mpich; then
    fail "Open MPI's wrappers with MPICH's mpiexec were accepted"
  fi
  said "$work/mixed-launcher.log" "MPIEXEC_EXECUTABLE=/usr/bin/mpiexec.mpich is MPICH's launcher but .*mpi.h is OpenMPI's" ||
    { cat "$work/mixed-launcher.log"; fail "no one-line refusal of a launcher of the other family"; }
  echo "check_mpi_select: no MCMCLB_MPI builds Debian's MPICH under Open MPI's names, takes given wrappers with their launcher, refuses a mixed launcher"
fi
