#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The demo command (docs/guide/benchmark-the-balancers.md, "The quick study"), run as written from a fresh copy of
# the checkout, as a newcomer on a cluster login runs it: an ordinary user, the MPI a module puts on PATH, Debian's
# MPI names, apt and sudo hidden (tests/cluster/login.sh). bootstrap.sh finds every package present, so it needs
# neither root nor apt.
#   build: copies the checkout to WORK/src (tests/copy_checkout.sh), hands it to the login's user, and runs the
#          command's steps up to the first that runs a program of the build (bootstrap, configure, build) as that
#          user with the module loaded. Configure must find the module's MPI with no MPI option and name it, and the
#          -O3 build every user makes must compile without a warning. Then, with no module loaded, a configure with
#          that MPI's wrappers named (MPI_C_COMPILER, MPI_CXX_COMPILER) must find its launcher beside them.
#   run:   as that user, the remaining steps (the sweep and the report) with a bare virtual environment's python3
#          first on PATH, which has no matplotlib, as pyenv's, conda's or a venv's often is; then the whole command
#          again with Debian's python3 first. Each must exit 0 and leave the quick study's figures and tables; the
#          study's runs must be valid, record the module's MPI and be launched by the module's mpiexec. Last,
#          tests/test_nodes.py (two nodes emulated by Hydra) with this build's mcmclb, as the user.
#   time N OUT: the measurement behind the quick study's run times (not a test): N times, a fresh copy, the build steps
#          and then the run steps (a python3 without matplotlib first) each timed, into OUT/demo-timing.csv; the last
#          repetition's results folder, its machine paths scrubbed, and its figures are copied into OUT beside it.
#          Run it as root with Debian's MPI and the machine otherwise idle, from a clean commit.
#   time-tests N OUT: the README's test command (.ci/run's line) N times, each from a fresh copy, timed; the runs
#          replace OUT/demo-timing.csv's part "tests" only when all N passed (the same measurement conditions).
# The command is the line after the marker "<!-- demo:" in that page, so the page and this test cannot drift.
# The login emulation replaces a test of its own with a build of its own: one build serves both (113 s of CPU
# saved on the 2-core VM).
# Usage: run_demo.sh <source dir> <work dir> build|run|time|time-tests [N] [OUT]
set -euo pipefail
src=$(cd "$1" && pwd)
work=$2
part=$3
say() { echo "readme_demo: $*"; }
fail() { echo "readme_demo: $*" >&2; exit 1; }

page=docs/guide/benchmark-the-balancers.md
command=$(awk '/^<!-- demo:/ {found = 1; next} found && /^```/ {inside = !inside; if (!inside) exit; next}
               found && inside {print}' "$src/$page")
[ -n "$command" ] || fail "$page has no demo command (a code block after a line starting <!-- demo:)"
[ "$(printf '%s\n' "$command" | wc -l)" -eq 1 ] || fail "the demo in $page must be one command line: $command"
# The steps before the first program of the build make the build; the rest run it.
split='&& build/'
case "$command" in
*"$split"*) ;;
*) fail "the demo command runs no program of build/: $command" ;;
esac
build_steps=${command%%"$split"*}
run_steps=${command#"$build_steps&& "}

no_warnings() {  # the build every user makes (Release, -O3) compiles without a warning
  if grep -q 'warning:' "$work/build.log"; then grep -A3 'warning:' "$work/build.log" | head -20; fail "the build warns"; fi
}
build() {  # a fresh copy of the checkout in $work/src, then the build steps there, as root (the timing's conditions)
  rm -rf "$work"
  "$src/tests/copy_checkout.sh" "$src" "$work/src"
  say "build steps: $build_steps"
  (cd "$work/src" && bash -c "$build_steps") >"$work/build.log" 2>&1 || { tail -30 "$work/build.log"; fail "the build steps failed"; }
  no_warnings
}
login_build() {  # the same on the emulated cluster login, as its user with the module's MPI
  login_prepare "$work"
  "$src/tests/copy_checkout.sh" "$src" "$work/src"
  login_give "$work/src"
  say "build steps, as $login_user with the module loaded: $build_steps"
  as_user "$work" "set -euo pipefail
    [ \"\$(id -u)\" != 0 ] || { echo 'still root'; exit 1; }
    for name in mpicc.mpich mpicxx.mpich mpiexec.mpich mpicc.openmpi mpiexec.openmpi mpicc mpiexec apt-get sudo; do
      # bash names a file that cannot run too (to say why it cannot): usable means executable.
      if found=\$(command -v \$name) && [ -x \"\$found\" ]; then echo \"\$name is still usable\"; exit 1; fi
    done
    $(login_module "$work")
    [ \"\$(command -v mpicc)\" = $prefix/bin/mpicc ] || { echo 'the module did not put its mpicc first'; exit 1; }
    cd $work/src
    $build_steps" >"$work/build.log" 2>&1 || { tail -30 "$work/build.log"; fail "the build steps failed as $login_user"; }
  grep 'mcmclb: MPI' "$work/build.log"
  grep -q "mcmclb: MPI MPICH (MPICH Version: 4.0.2; family MPICH), the mpicc on PATH: wrappers $prefix/bin/mpicc and $prefix/bin/mpicxx, launcher $prefix/bin/mpiexec" \
    "$work/build.log" || fail "configure did not name the module's MPI"
  no_warnings
  # No module: the wrappers named by hand must bring their launcher (configure only; the build above is the same).
  as_user "$work" "cd $work/src && cmake -S . -B build-given -DBUILD_TESTING=OFF -DMPI_C_COMPILER=$prefix/bin/mpicc \
    -DMPI_CXX_COMPILER=$prefix/bin/mpicxx" >"$work/configure-given.log" 2>&1 ||
    { cat "$work/configure-given.log"; fail "configure with the wrappers named failed"; }
  grep -q "as given by MPI_C_COMPILER, MPI_CXX_COMPILER: wrappers $prefix/bin/mpicc and $prefix/bin/mpicxx, launcher $prefix/bin/mpiexec" \
    "$work/configure-given.log" || { cat "$work/configure-given.log"; fail "the given wrappers did not bring their launcher"; }
  say "built as $login_user with the module's MPI (no MPI option), and configured with its wrappers named"
}
bare_venv() {  # a virtual environment of the system's Python with nothing installed: no matplotlib
  rm -rf "$work/venv"
  /usr/bin/python3 -m venv --without-pip "$work/venv" ||
    fail "cannot make a virtual environment (bootstrap.sh installs Debian's python3-venv)"
  if "$work/venv/bin/python3" -c 'import matplotlib' 2>/dev/null; then
    fail "the bare virtual environment has matplotlib, so the test would test nothing"
  fi
}
now() { date +%s.%N; }
source_commit() {  # the checkout's commit as provenance writes it, -dirty when it holds changes not committed
  local commit
  commit=$(git -C "$src" rev-parse --short=12 HEAD)
  [ -z "$(git -C "$src" status --porcelain)" ] || commit="$commit-dirty"
  echo "$commit"
}

source "$src/tests/cluster/login.sh"
prefix=$(login_prefix "$work")
case "$part" in
build | run) login_check ;;
esac
case "$part" in
build) login_build ;;
time)
  reps=${4:?usage: run_demo.sh SRC WORK time N OUT}
  out=${5:?usage: run_demo.sh SRC WORK time N OUT}
  mkdir -p "$out"
  out=$(cd "$out" && pwd)
  commit=$(source_commit)
  rows="part,rep,seconds,commit,host,cores,utc_start,command"
  for ((rep = 0; rep < reps; ++rep)); do
    start=$(date -u +%Y-%m-%dT%H:%M:%SZ)
    t0=$(now); build; t1=$(now)
    bare_venv
    (cd "$work/src" && PATH="$work/venv/bin:$PATH" bash -c "$run_steps") >"$work/run.log" 2>&1 ||
      { tail -30 "$work/run.log"; fail "the run steps failed"; }
    t2=$(now)
    for row in "build,$(echo "$t1 - $t0" | bc)" "run,$(echo "$t2 - $t1" | bc)"; do
      rows+=$'\n'"${row%%,*},$rep,${row#*,},$commit,$(hostname),$(nproc),$start,\"${command//\"/\"\"}\""
    done
    say "repetition $rep: build $(echo "$t1 - $t0" | bc) s, run $(echo "$t2 - $t1" | bc) s"
  done
  cp "$work/src/results/quick/"*.csv "$work/src/results/quick/"*.png "$out/"
  /usr/bin/python3 "$src/plots/scrub_paths.py" "$out"
  printf '%s\n' "$rows" >"$out/demo-timing.csv"
  say "wrote $out/demo-timing.csv and the last repetition's results"
  ;;
time-tests)
  n=${4:?usage: run_demo.sh SRC WORK time-tests N OUT}
  out=${5:?usage: run_demo.sh SRC WORK time-tests N OUT}
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || fail "time-tests: N must be a positive whole number, not '$n'"
  [ -f "$out/demo-timing.csv" ] || fail "$out/demo-timing.csv: no such file (run the time part first)"
  tests=$(grep -v '^#' "$src/.ci/run" | grep -v '^set ' | grep -v '^cd ' | sed '/^\s*$/d')
  commit=$(source_commit)
  rows=""
  for rep in $(seq 0 $((n - 1))); do
    rm -rf "$work"
    "$src/tests/copy_checkout.sh" "$src" "$work/src"
    start=$(date -u +%Y-%m-%dT%H:%M:%SZ)
    t0=$(now)
    # .ci/run itself, as CI runs it; a run counts only when every test passed (a test step cut short by a signal is
    # not a timing of the test command).
    (cd "$work/src" && bash .ci/run) >"$work/tests.log" 2>&1 || { tail -40 "$work/tests.log"; fail "the test command failed"; }
    grep -q '^100% tests passed' "$work/tests.log" || { tail -40 "$work/tests.log"; fail "not every test passed"; }
    t1=$(now)
    rows+="tests,$rep,$(echo "$t1 - $t0" | bc),$commit,$(hostname),$(nproc),$start,\"${tests//\"/\"\"}\""$'\n'
    say "repetition $rep: the test command took $(echo "$t1 - $t0" | bc) s"
  done
  # The runs replace the earlier ones: one commit's test command, measured together.
  grep -v '^tests,' "$out/demo-timing.csv" >"$out/demo-timing.csv.new" || true
  printf '%s' "$rows" >>"$out/demo-timing.csv.new"
  mv "$out/demo-timing.csv.new" "$out/demo-timing.csv"
  ;;
run)
  [ -d "$work/src/build" ] || fail "no build in $work (run the build part first)"
  cd "$work/src"
  rm -rf results
  bare_venv
  check() {  # check LABEL LOG: the figures, the tables and the exit of one pass
    local label=$1 log=$2
    for figure in fig2 timeline; do
      [ "$(head -c 8 "results/quick/$figure.png" 2>/dev/null | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
        fail "$label: no results/quick/$figure.png"
    done
    grep -q '^Regroupings per process' "$log" || fail "$label: no Table 1 in the printout"
    grep -q '^| P | balancer | runs | time_s median' "$log" || fail "$label: no times-vs-ideal table in the printout"
  }
  module=$(login_module "$work")
  say "run steps, as $login_user, a python3 without matplotlib first on PATH: $run_steps"
  as_user "$work" "$module && cd $work/src && PATH=$work/venv/bin:\$PATH bash -c $(printf %q "$run_steps")" \
    >"$work/venv-first.log" 2>&1 ||
    { tail -30 "$work/venv-first.log"; fail "with a python3 without matplotlib first, the demo failed"; }
  check "python3 without matplotlib first" "$work/venv-first.log"
  grep -q "matplotlib is not installed for $work/venv/bin/python3; running with" "$work/venv-first.log" ||
    fail "the report did not say which Python drew it"
  rm results/quick/*.png
  say "the whole command, as $login_user, Debian's python3 first on PATH"
  as_user "$work" "$module && cd $work/src && PATH=/usr/bin:\$PATH bash -c $(printf %q "$command")" \
    >"$work/debian-first.log" 2>&1 || { tail -30 "$work/debian-first.log"; fail "with Debian's python3 first, the demo failed"; }
  check "Debian's python3 first" "$work/debian-first.log"
  if grep -q "matplotlib is not installed" "$work/debian-first.log"; then fail "Debian's python3 lacks matplotlib"; fi
  say "the demo wrote its figures and tables with either python3 first"
  # Every run valid, with the module's MPI, launched by the module's mpiexec (Debian's names are hidden).
  /usr/bin/python3 - results/quick "$prefix/bin/mpiexec" <<'PY' || fail "the quick study did not run with the module's MPI"
import csv, os, sys
folder, mpiexec = sys.argv[1:]
runs = list(csv.DictReader(open(os.path.join(folder, 'runs.csv'))))
prov = list(csv.DictReader(open(os.path.join(folder, 'provenance.csv'))))
assert len(runs) >= 6 and all(r['valid'] == 'true' for r in runs), 'not every run valid'
assert all(r['mpi_library'].startswith('MPICH Version: 4.0.2') for r in runs), {r['mpi_library'] for r in runs}
assert all(p['nodes'] == '1' and p['launcher'] == 'mpiexec' for p in prov), prov[0]
launches = open(os.path.join(folder, 'launches.log')).read()
assert f' {mpiexec} ' in launches, f'no launch by {mpiexec}: {launches[:300]}'
print(f'readme_demo: quick study: {len(runs)} valid runs with', runs[0]['mpi_library'], 'launched by', mpiexec)
PY
  # Two nodes emulated by Hydra (-bootstrap fork), as the user with the module's launcher.
  as_user "$work" "$module && cd $work/src/tests && MCMCLB_BIN=$work/src/build/mcmclb \
    MCMCLB_TEST_MPIEXEC=\$(command -v mpiexec) python3 -m unittest test_nodes" >"$work/nodes.log" 2>&1 ||
    { tail -30 "$work/nodes.log"; fail "the two-node test failed as $login_user"; }
  say "the two-node test passed as $login_user with the module's launcher"
  ;;
*) fail "unknown part $part (allowed: build, run, time, time-tests)" ;;
esac
