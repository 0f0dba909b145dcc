# SPDX-License-Identifier: BSD-3-Clause
# A cluster login, as closely as one machine allows, for the tests that run what a user runs (sourced, not run):
# an MPI under a prefix of its own with plain-named wrappers (mpicc, mpicxx, mpiexec), loaded as an Lmod module;
# Debian's MPI names (mpicc.mpich, mpicc.openmpi, the alternatives mpicc and mpiexec), apt and sudo masked in a
# private mount namespace; an ordinary user, not root.
# The prefix is a copy of Debian's MPICH with its wrappers pointed at the prefix's include and lib folders; the
# libraries stay Debian's (the prefix links to them), which is what a build finds through the wrappers.
# Needs root (unshare, the user) and Lmod (bootstrap.sh); without them login_check skips (exit 77), except under
# CI=true, where that fails.
#   login_check:          exits (77, or 1 under CI=true) when the emulation cannot run here
#   login_prepare WORK:   the prefix, its module file and the user, under WORK (made empty first)
#   login_give PATH...:   hands PATH (recursively) to the user, as a checkout the user made would be
#   as_user WORK SCRIPT:  SCRIPT run by bash as the user in a fresh environment, in the masked namespace
#   login_module WORK:    the shell lines that load the module (for SCRIPT; also usable by root outside it)
login_user=mcmclb-login
login_lmod_init=${MCMCLB_LMOD_INIT:-/usr/share/lmod/lmod/init/bash}

login_prefix() { echo "$1/opt/mpich/4.0.2"; }

login_check() {
  local why=""
  if [ "$(id -u)" -ne 0 ]; then
    why="needs root to emulate a login (a mount namespace, a user)"
  elif [ ! -r "$login_lmod_init" ]; then
    why="Lmod is not installed ($login_lmod_init; bootstrap.sh installs Debian's lmod)"
  elif [ ! -x /usr/bin/mpicc.mpich ] || [ ! -x /usr/bin/mpiexec.hydra ]; then
    why="Debian's MPICH, the prefix's source, is not installed"
  fi
  [ -z "$why" ] && return 0
  if [ "${CI:-}" = true ]; then
    echo "cluster login: $why (CI=true: a missing dependency fails)" >&2
    exit 1
  fi
  echo "cluster login: $why: skipped"
  exit 77
}

login_prepare() {
  local work=$1 prefix tool lib
  prefix=$(login_prefix "$work")
  rm -rf "$work"
  mkdir -p "$prefix/bin" "$prefix/lib" "$work/modulefiles/mpich" "$work/home"
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
whatis("MPICH 4.0.2 under a prefix of its own (mcmclb's cluster-login emulation)")
prepend_path("PATH", "$prefix/bin")
prepend_path("LD_LIBRARY_PATH", "$prefix/lib")
EOF
  : >"$work/masked"
  chmod 644 "$work/masked"
  id "$login_user" >/dev/null 2>&1 || useradd --system --user-group --no-create-home --shell /bin/bash "$login_user"
  chown -R "$login_user:$login_user" "$work/home"
  chown "$login_user:$login_user" "$work"  # its logs and results; the prefix stays root's, as a site's install
}

login_give() { chown -R "$login_user:$login_user" "$@"; }

login_module() {
  printf '. %q && module use %q && module load mpich\n' "$login_lmod_init" "$1/modulefiles"
}

as_user() {
  local work=$1 script=$2
  local masks=(/usr/bin/mpi* /usr/bin/apt /usr/bin/apt-get /usr/bin/apt-cache /usr/bin/sudo)
  unshare --mount --propagation private -- bash -c '
    set -e
    masked=$1; user=$2; home=$3; script=$4; shift 4
    for f in "$@"; do [ -e "$f" ] && mount --bind "$masked" "$f"; done
    exec setpriv --reuid="$user" --regid="$user" --clear-groups -- env -i HOME="$home" USER="$user" \
      PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 bash --noprofile --norc -c "$script"
  ' as_user "$work/masked" "$login_user" "$work/home" "$script" "${masks[@]}"
}
