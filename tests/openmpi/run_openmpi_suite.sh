#!/usr/bin/env bash
# The Open MPI pass: configures a second build folder <build>/openmpi with -DMCMCLB_MPI=OpenMPI (found by
# mpicc.openmpi, launched by mpiexec.openmpi with cmake/Mpi.cmake's flags), builds only what it runs, and runs
# through that folder's own ctest registrations (same tests, same timeouts): the comm suites and the C API test at
# 1-4 ranks, the kernel suite at 1-4, methods_per_mpi (from_group, which Open MPI 4.1 lacks, listed with the reason
# and refused in one line), then one small sweep with --launcher local, which must launch with
# mpiexec.openmpi by itself (no OMPI_* variable set here) and record every point valid.
# Open MPI missing: a failure under CI=true (bootstrap.sh installs it), else a skip (exit 77).
# Usage: run_openmpi_suite.sh <source dir> <build dir> <werror ON|OFF>
set -euo pipefail
src=$1; build=$2/openmpi; werror=${3:-ON}
start=$SECONDS
if ! command -v mpicc.openmpi >/dev/null || ! command -v mpiexec.openmpi >/dev/null; then
  [ "${CI:-}" = true ] && { echo "openmpi: mpicc.openmpi or mpiexec.openmpi missing (run ./bootstrap.sh)" >&2; exit 1; }
  echo "openmpi: Open MPI is not installed: skipped"; exit 77
fi
# The ci preset's flags: -O2 -g1 and a unity build (a third less CPU on 2 cores).
flags="-O2 -g1 -DNDEBUG"
source "$src/tests/build_generator.sh" "$build"
cmake "${generator[@]}" -S "$src" -B "$build" -DMCMCLB_MPI=OpenMPI -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$flags" -DCMAKE_C_FLAGS_RELWITHDEBINFO="$flags" -DBUILD_TESTING=ON \
  -DCMAKE_UNITY_BUILD=ON -DMCMCLB_WERROR="$werror" >"$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
grep -q "mcmclb: MPI library OpenMPI" "$build.configure.log" || { echo "openmpi: configure did not choose Open MPI" >&2; exit 1; }
cmake --build "$build" -j2 --target test_comm_create test_range_comm test_group_comm c_api_test test_kernel mcmclb \
  mcmclb-commbench \
  >"$build.build.log" 2>&1 || { tail -50 "$build.build.log"; exit 1; }
echo "openmpi: configure + build $((SECONDS - start)) s"
run_start=$SECONDS
ctest --test-dir "$build" --output-on-failure -R '^((comm_create|range_comm|group_comm|c_api|kernel)\.[1234]ranks|methods_per_mpi)$'
# One small sweep (7 points at 2 and 3 ranks; 3 outnumber 2 cores, so the oversubscription flags too), launched
# as the local launcher starts it: the build's mpiexec.openmpi with its flags, nothing from the environment.
out="$build/sweep-out"
rm -rf "$out"
env -u OMPI_ALLOW_RUN_AS_ROOT -u OMPI_ALLOW_RUN_AS_ROOT_CONFIRM \
  "$build/mcmclb" sweep "$src/tests/fixtures/study-small.yaml" --launcher local --out "$out" >"$build.sweep.log" 2>&1 ||
  { cat "$build.sweep.log"; echo "openmpi: the sweep failed" >&2; exit 1; }
grep -q "launch: /usr/bin/mpiexec.openmpi " "$build.sweep.log" || { cat "$build.sweep.log"; echo "openmpi: not launched with mpiexec.openmpi" >&2; exit 1; }
grep -q " 0 failed" "$build.sweep.log" || { cat "$build.sweep.log"; exit 1; }
# 3 ranks on 2 cores: the note on oversubscribed points says how Open MPI waits, not how MPICH does.
if [ "$(nproc)" -lt 3 ]; then
  grep -q "Open MPI yields the core" "$build.sweep.log" || { cat "$build.sweep.log"; echo "openmpi: the oversubscription note names another MPI" >&2; exit 1; }
fi
echo "openmpi: tests $((SECONDS - run_start)) s, total $((SECONDS - start)) s"
