#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A cluster login, as closely as one machine allows: an MPI under a prefix of its own with plain-named wrappers
# (mpicc, mpicxx, mpiexec), loaded as an Lmod module; Debian's MPI names (mpicc.mpich, mpicc.openmpi, the
# alternatives mpicc and mpiexec), apt and sudo masked in a private mount namespace; an ordinary user, not root.
#   build: configure with no MPI option (the module's MPI must be found and named), build mcmclb; then configure
#          with that MPI's wrappers given by hand (MPI_C_COMPILER, MPI_CXX_COMPILER) and no module loaded, whose
#          launcher must be found beside them.
#   run:   the quick study at P = 2 (it must record the module's MPI) and tests/test_nodes.py (two emulated nodes).
# The prefix is a copy of Debian's MPICH with its wrappers pointed at the prefix's include and lib folders; the
# libraries stay Debian's (the prefix links to them), which is what the build finds through the wrappers.
# Usage: cluster_login.sh <source dir> <work dir> build|run. Needs root (unshare, the user) and Lmod (bootstrap.sh);
# without them it skips (exit 77), except under CI=true, where that fails.
set -euo pipefail
src=$(cd "$1" && pwd)
work=$2
part=$3
user=mcmclb-login
prefix=$work/opt/mpich/4.0.2
lmod_init=${MCMCLB_LMOD_INIT:-/usr/share/lmod/lmod/init/bash}

say() { echo "cluster_login: $*"; }
fail() { echo "cluster_login: $*" >&2; exit 1; }
missing() {
  [ "${CI:-}" = true ] && fail "$* (CI=true: a missing dependency fails)"
  say "$*: skipped"
  exit 77
}
[ "$(id -u)" -eq 0 ] || missing "needs root to emulate a login (a mount namespace, a user)"
[ -r "$lmod_init" ] || missing "Lmod is not installed ($lmod_init; bootstrap.sh installs Debian's lmod)"
[ -x /usr/bin/mpicc.mpich ] && [ -x /usr/bin/mpiexec.hydra ] || missing "Debian's MPICH, the prefix's source, is not installed"

# as_user SCRIPT: runs SCRIPT with bash as $user in a fresh environment, in a mount namespace where Debian's MPI
# names, apt and sudo are empty files that cannot run.
as_user() {
  local masks=(/usr/bin/mpi* /usr/bin/apt /usr/bin/apt-get /usr/bin/apt-cache /usr/bin/sudo)
  unshare --mount --propagation private -- bash -c '
    set -e
    masked=$1; user=$2; home=$3; script=$4; shift 4
    for f in "$@"; do [ -e "$f" ] && mount --bind "$masked" "$f"; done
    exec setpriv --reuid="$user" --regid="$user" --clear-groups -- env -i HOME="$home" USER="$user" \
      PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 bash --noprofile --norc -c "$script"
  ' as_user "$work/masked" "$user" "$work/home" "$1" "${masks[@]}"
}

case "$part" in
build)
  rm -rf "$work"
  mkdir -p "$prefix/bin" "$prefix/lib" "$work/modulefiles/mpich" "$work/home" "$work/src"
  # The prefix: the wrappers with their folders pointed at it, the launcher and its proxy, the headers, and the
  # libraries the wrappers link (as links to Debian's).
  for tool in mpicc mpicxx; do
    sed -e "s|^prefix=.*|prefix=$prefix|" -e "s|^exec_prefix=.*|exec_prefix=$prefix|" \
      -e "s|^includedir=.*|includedir=$prefix/include|" -e "s|^libdir=.*|libdir=$prefix/lib|" \
      "/usr/bin/$tool.mpich" >"$prefix/bin/$tool"
  done
  cp /usr/bin/mpiexec.hydra "$prefix/bin/mpiexec"
  cp /usr/bin/hydra_pmi_proxy "$prefix/bin/"
  chmod 755 "$prefix/bin/"*
  cp -r /usr/include/x86_64-linux-gnu/mpich "$prefix/include"
  for lib in /usr/lib/x86_64-linux-gnu/libmpich*.so*; do ln -s "$lib" "$prefix/lib/"; done
  cat >"$work/modulefiles/mpich/4.0.2.lua" <<EOF
whatis("MPICH 4.0.2 under a prefix of its own (mcmclb's cluster-login test)")
prepend_path("PATH", "$prefix/bin")
prepend_path("LD_LIBRARY_PATH", "$prefix/lib")
EOF
  : >"$work/masked"
  chmod 644 "$work/masked"
  # The checkout as it is (tracked and new files, and its git folder for the commit provenance records).
  "$src/tests/copy_checkout.sh" "$src" "$work/src"
  id "$user" >/dev/null 2>&1 || useradd --system --user-group --no-create-home --shell /bin/bash "$user"
  chown -R "$user:$user" "$work/home" "$work/src"
  chown "$user:$user" "$work"  # its logs and results; the prefix stays root's, as a site's install
  as_user "
    set -euo pipefail
    [ \"\$(id -u)\" != 0 ] || { echo 'still root'; exit 1; }
    for name in mpicc.mpich mpicxx.mpich mpiexec.mpich mpicc.openmpi mpiexec.openmpi mpicc mpiexec apt-get sudo; do
      # bash names a file that cannot run too (to say why it cannot): usable means executable.
      if found=\$(command -v \$name) && [ -x \"\$found\" ]; then echo \"\$name is still usable\"; exit 1; fi
    done
    . $lmod_init
    module use $work/modulefiles
    module load mpich
    [ \"\$(command -v mpicc)\" = $prefix/bin/mpicc ] || { echo 'the module did not put its mpicc first'; exit 1; }
    cd $work/src
    # No MPI option: the MPI is the module's, found as a user's build finds it. Compiled at -O0 (the Release
    # type's flags replaced), no tests (GoogleTest only with BUILD_TESTING) and a unity build, to spare CI's 2
    # cores: the warnings of the -O3 build every user makes are readme_demo_build's to check (none allowed).
    cmake -S . -B build -DBUILD_TESTING=OFF -DCMAKE_UNITY_BUILD=ON -DCMAKE_CXX_FLAGS_RELEASE=-O0 \
      -DCMAKE_C_FLAGS_RELEASE=-O0 \
      >$work/configure.log 2>&1 || { cat $work/configure.log; exit 1; }
    grep 'mcmclb: MPI' $work/configure.log
    grep -q 'mcmclb: MPI MPICH (MPICH Version: 4.0.2; family MPICH), the mpicc on PATH: wrappers $prefix/bin/mpicc and $prefix/bin/mpicxx, launcher $prefix/bin/mpiexec' \
      $work/configure.log || { echo 'configure did not name the module MPI'; exit 1; }
    cmake --build build -j2 --target mcmclb >$work/build.log 2>&1 || { tail -30 $work/build.log; exit 1; }
    if grep -q 'warning:' $work/build.log; then grep -A3 'warning:' $work/build.log | head -20; exit 1; fi
    module purge
    cmake -S . -B build-given -DBUILD_TESTING=OFF -DMPI_C_COMPILER=$prefix/bin/mpicc -DMPI_CXX_COMPILER=$prefix/bin/mpicxx \
      >$work/configure-given.log 2>&1 || { cat $work/configure-given.log; exit 1; }
    grep 'mcmclb: MPI' $work/configure-given.log
    grep -q 'as given by MPI_C_COMPILER, MPI_CXX_COMPILER: wrappers $prefix/bin/mpicc and $prefix/bin/mpicxx, launcher $prefix/bin/mpiexec' \
      $work/configure-given.log || { echo 'the given wrappers did not bring their launcher'; exit 1; }
  " || fail "the build as $user failed"
  say "built as $user with the module's MPI (no MPI option), and configured with its wrappers named"
  ;;
run)
  [ -x "$work/src/build/mcmclb" ] || fail "no build in $work (run the build part first)"
  as_user "
    set -euo pipefail
    . $lmod_init
    module use $work/modulefiles
    module load mpich
    cd $work/src
    rm -rf $work/quick
    build/mcmclb sweep configs/quick.yaml --launcher local --set 'nprocs=[2]' --out $work/quick >$work/quick.log 2>&1 ||
      { tail -20 $work/quick.log; exit 1; }
    python3 - $work/quick <<'PY'
import csv, os, sys
folder = sys.argv[1]
runs = list(csv.DictReader(open(os.path.join(folder, 'runs.csv'))))
prov = list(csv.DictReader(open(os.path.join(folder, 'provenance.csv'))))
assert len(runs) >= 6 and all(r['valid'] == 'true' and r['nprocs'] == '2' for r in runs), 'not every run valid at P = 2'
assert all(r['mpi_library'].startswith('MPICH Version: 4.0.2') for r in runs), {r['mpi_library'] for r in runs}
assert all(p['nodes'] == '1' and p['launcher'] == 'mpiexec' for p in prov), prov[0]
print(f'cluster_login: quick study at P = 2: {len(runs)} valid runs with', runs[0]['mpi_library'])
PY
    cd tests
    MCMCLB_BIN=$work/src/build/mcmclb MCMCLB_TEST_MPIEXEC=\$(command -v mpiexec) python3 -m unittest test_nodes
  " || fail "the run as $user failed"
  say "the quick study and the two-node test ran as $user with the module's MPI"
  ;;
*) fail "unknown part $part (allowed: build, run)" ;;
esac
