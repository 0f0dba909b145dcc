#!/usr/bin/env bash
# AddressSanitizer + UndefinedBehaviorSanitizer pass: configures a second build folder <build>/asan with
# -DMCMCLB_SANITIZE=ON, builds only the comm and kernel suites, and runs them through that folder's own ctest
# registrations (the same tests as the main build, same timeouts): the comm suites at 1, 2 and 3 ranks (3: the
# creation trees at a size that is not a power of two), the kernel suite at 1 and 2 (every balancer, method and
# finished rule runs at both; at 3 ranks it took 16 s of the test command, and its odd sizes stay covered by the
# main build at 3 ranks).
#   ASAN_OPTIONS=detect_leaks=0: MPICH keeps its internal allocations until exit by design (and ch4:ucx more so),
#   so LeakSanitizer would report MPICH's memory, not ours. Every other ASan check stays on.
#   UBSAN_OPTIONS=halt_on_error=1: UBSan only prints by default; this makes a finding fail the run.
# Optional 4th argument: a --gtest_filter for test_kernel, should its full suite ever be too slow under ASan.
# Usage: run_sanitizers.sh <source dir> <build dir> <werror ON|OFF> [kernel gtest filter]
set -euo pipefail
src=$1; asan=$2/asan; werror=${3:-ON}; kernel_filter=${4:-}
start=$SECONDS
# -O1 -g1: the optimisation ASan's authors recommend, and line tables only (stack traces keep file:line). Measured
# on this 2-core VM: 234 s of CPU for the three suites against 519 s at RelWithDebInfo's -O2 -g.
flags="-O1 -g1 -DNDEBUG"
# CMAKE_UNITY_BUILD: each target's sources compiled as one translation unit, so the instrumented headers (gtest,
# the standard library, MPI) are parsed once per target instead of once per file. Measured on the loaded VM:
# 112 s of CPU to configure and build against 192 s without.
source "$src/tests/build_generator.sh" "$asan"
cmake "${generator[@]}" -S "$src" -B "$asan" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$flags" -DCMAKE_C_FLAGS_RELWITHDEBINFO="$flags" -DMCMCLB_SANITIZE=ON \
  -DBUILD_TESTING=ON -DCMAKE_UNITY_BUILD=ON -DMCMCLB_WERROR="$werror" >"$asan.configure.log" 2>&1 || { cat "$asan.configure.log"; exit 1; }
cmake --build "$asan" -j2 --target test_comm_create test_mpi_handles test_kernel >"$asan.build.log" 2>&1 ||
  { tail -50 "$asan.build.log"; exit 1; }
echo "sanitizers: configure + build $((SECONDS - start)) s"
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=0:halt_on_error=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
run_start=$SECONDS
ctest --test-dir "$asan" --output-on-failure -R '^(mpi_handles|comm_create)\.[123]ranks$'
GTEST_FILTER=${kernel_filter:-*} ctest --test-dir "$asan" --output-on-failure -R '^kernel\.[12]ranks$'
echo "sanitizers: tests $((SECONDS - run_start)) s, total $((SECONDS - start)) s"
