#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Installs the Debian packages mcmclb needs; does nothing when all are present (idempotent).
set -euo pipefail
# Each package, and why: the toolchain and MPI; yaml-cpp, Google Benchmark and GoogleTest; Random123 (counter-based
# RNG of the compute workload); Python with matplotlib for the plots, and python3-venv for the README demo's test
# (tests/readme/run_demo.sh runs the demo with a bare virtual environment's python3, which lacks matplotlib, first); pkg-config and clang-format for the install
# and format tests; ninja-build for the test builds (CMakePresets.json; it compiles independent targets in
# parallel, where CMake's Makefiles finish one target before the next); slurm-wlm, slurm-client and munge for
# tests/slurm/cluster.sh, a local Slurm for ctest slurm; libsimgrid-dev (smpicc, smpicxx, smpirun) for the
# simulation build (-DMCMCLB_SMPI=ON) and ctest smpi, with libtcmalloc-minimal4, the allocator every simulation
# preloads (apps/CMakeLists.txt: it halves the host time of a large simulation against glibc's malloc); openmpi-bin and libopenmpi-dev, the second MPI library, for
# the Open MPI build (-DMCMCLB_MPI=OpenMPI, preset ci-openmpi) and its tests; lmod, the module system of the
# cluster-login emulation (tests/cluster/login.sh loads an MPI as a module, as a cluster user would; the README's
# demo is tested there).
packages=(build-essential cmake ninja-build git pkg-config clang-format mpich libmpich-dev openmpi-bin libopenmpi-dev
          libyaml-cpp-dev
          libbenchmark-dev librandom123-dev libgtest-dev googletest python3 python3-matplotlib python3-yaml python3-venv
          slurm-wlm slurm-client munge libsimgrid-dev libtcmalloc-minimal4 lmod)
# Optional, not for CI: --browser adds chromium for tests/browser/check_report.sh, which opens report.py's HTML page
# in a headless browser (docs/guide/sweeps.md).
case "${1:-}" in
  "") ;;
  --browser) packages+=(chromium) ;;
  *) echo "bootstrap: unknown option $1 (allowed: --browser)" >&2; exit 2 ;;
esac
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "bootstrap: all ${#packages[@]} packages present"
  exit 0
fi
echo "bootstrap: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
# Installing Open MPI switches Debian's mpicc, mpiexec and mpirun to it (alternatives priority 50 against MPICH's
# 40). MPICH stays the system default: it is the build's default library (MCMCLB_MPI=MPICH), and programs and
# scripts that call the plain mpicc/mpiexec (the tests, users' own programs against libmcmclb_comm) must find the
# library the default build links. Only right after this script installed packages, so a choice made by hand
# later is kept.
if [ -x /usr/bin/mpicc.mpich ]; then
  $sudo update-alternatives --set mpi /usr/bin/mpicc.mpich
  $sudo update-alternatives --set mpirun /usr/bin/mpirun.mpich
fi
