#!/usr/bin/env bash
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
    grep -q "mcmclb: MPI library $lib " "$work/$lib-under-$other.log" || fail "configure did not name $lib"
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
if configure "$work/unknown" "" -DMCMCLB_MPI=LAM; then fail "MCMCLB_MPI=LAM was accepted"; fi
grep -q "MCMCLB_MPI=LAM: unknown MPI library (allowed: MPICH, OpenMPI)" "$work/unknown.log" || fail "no one-line refusal of LAM"
echo "check_mpi_select: MCMCLB_MPI=LAM refused"
