#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The README's demo command, run as written from a fresh copy of the checkout, as a newcomer runs it.
#   build: copies the checkout to WORK/src (tests/copy_checkout.sh) and runs the command's steps up to the first
#          that runs a program of the build (bootstrap, configure, build).
#   run:   the remaining steps (the sweep and the report) with a bare virtual environment's python3 first on PATH,
#          which has no matplotlib, as pyenv's, conda's or a venv's often is; then the whole command again with
#          Debian's python3 first. Each must exit 0 and leave the quick study's figures and tables.
#   time N OUT: the measurement behind the README's run times (not a test): N times, a fresh copy, the build steps
#          and then the run steps (a python3 without matplotlib first) each timed, into OUT/demo-timing.csv; the last
#          repetition's results folder, its machine paths scrubbed, and its figures are copied into OUT beside it.
#          Run it with the machine otherwise idle, from a clean commit.
#   time-tests OUT: the README's test command (.ci/run's line) once from a fresh copy, timed, appended to
#          OUT/demo-timing.csv as part "tests" (the same measurement conditions).
# The command is the line after the marker "<!-- demo:" in README.md, so the README and this test cannot drift.
# Usage: run_demo.sh <source dir> <work dir> build|run|time|time-tests [N] [OUT]
set -euo pipefail
src=$(cd "$1" && pwd)
work=$2
part=$3
say() { echo "readme_demo: $*"; }
fail() { echo "readme_demo: $*" >&2; exit 1; }

command=$(awk '/^<!-- demo:/ {found = 1; next} found && /^```/ {inside = !inside; if (!inside) exit; next}
               found && inside {print}' "$src/README.md")
[ -n "$command" ] || fail "README.md has no demo command (a code block after a line starting <!-- demo:)"
[ "$(printf '%s\n' "$command" | wc -l)" -eq 1 ] || fail "the README's demo must be one command line: $command"
# The steps before the first program of the build make the build; the rest run it.
split='&& build/'
case "$command" in
*"$split"*) ;;
*) fail "the README's demo command runs no program of build/: $command" ;;
esac
build_steps=${command%%"$split"*}
run_steps=${command#"$build_steps&& "}

build() {  # a fresh copy of the checkout in $work/src, then the build steps there
  rm -rf "$work"
  "$src/tests/copy_checkout.sh" "$src" "$work/src"
  say "build steps: $build_steps"
  (cd "$work/src" && bash -c "$build_steps") >"$work/build.log" 2>&1 || { tail -30 "$work/build.log"; fail "the build steps failed"; }
  # The build every user makes (Release, -O3) compiles without a warning.
  if grep -q 'warning:' "$work/build.log"; then grep -A3 'warning:' "$work/build.log" | head -20; fail "the build warns"; fi
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

case "$part" in
build) build ;;
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
  out=${4:?usage: run_demo.sh SRC WORK time-tests OUT}
  [ -f "$out/demo-timing.csv" ] || fail "$out/demo-timing.csv: no such file (run the time part first)"
  tests=$(grep -v '^#' "$src/.ci/run" | grep -v '^set ' | grep -v '^cd ' | sed '/^\s*$/d')
  commit=$(source_commit)
  rm -rf "$work"
  "$src/tests/copy_checkout.sh" "$src" "$work/src"
  start=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  t0=$(now)
  # .ci/run itself, as CI runs it; a run counts only when every test passed (a test step cut short by a signal is
  # not a timing of the test command).
  (cd "$work/src" && bash .ci/run) >"$work/tests.log" 2>&1 || { tail -40 "$work/tests.log"; fail "the test command failed"; }
  grep -q '^100% tests passed' "$work/tests.log" || { tail -40 "$work/tests.log"; fail "not every test passed"; }
  t1=$(now)
  printf '%s\n' "tests,0,$(echo "$t1 - $t0" | bc),$commit,$(hostname),$(nproc),$start,\"${tests//\"/\"\"}\"" >>"$out/demo-timing.csv"
  say "the test command took $(echo "$t1 - $t0" | bc) s"
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
  say "run steps, a python3 without matplotlib first on PATH: $run_steps"
  PATH="$work/venv/bin:$PATH" bash -c "$run_steps" >"$work/venv-first.log" 2>&1 ||
    { tail -30 "$work/venv-first.log"; fail "with a python3 without matplotlib first, the demo failed"; }
  check "python3 without matplotlib first" "$work/venv-first.log"
  grep -q "matplotlib is not installed for $work/venv/bin/python3; running with" "$work/venv-first.log" ||
    fail "the report did not say which Python drew it"
  rm results/quick/*.png
  say "the whole command, Debian's python3 first on PATH"
  PATH="/usr/bin:$PATH" bash -c "$command" >"$work/debian-first.log" 2>&1 ||
    { tail -30 "$work/debian-first.log"; fail "with Debian's python3 first, the demo failed"; }
  check "Debian's python3 first" "$work/debian-first.log"
  if grep -q "matplotlib is not installed" "$work/debian-first.log"; then fail "Debian's python3 lacks matplotlib"; fi
  say "the demo wrote its figures and tables with either python3 first"
  ;;
*) fail "unknown part $part (allowed: build, run)" ;;
esac
