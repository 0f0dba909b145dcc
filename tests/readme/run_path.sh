#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The README's first block, the path of a user with walkers to balance, run as written from a fresh copy of the
# checkout (tests/copy_checkout.sh): set-up, install, the reader's program (examples/minimal) built and recorded,
# the simulation build, advise, the advised run and its resume from a checkpoint. The block is the ```sh block after
# the line starting "<!-- path:" in README.md, so the README and this test cannot drift; it runs as one bash script
# with -e, so every line must succeed.
# Then what it printed must show each step done: the recording (trace.csv written by mcmclb::walkers::run), advise's
# verdict and its run line at P = 2, the advised run under the balancer that line names, and the resumed run saying
# it went on from ckpt/, with the chains' results of the same bits as the recording's and the advised run's.
# The copy is left in WORK/src: the tutorial's test (tests/readme/run_tutorial.py) goes on there, sharing the
# builds the block made with the commands the tutorial prints too.
# Usage: run_path.sh <source dir> <work dir>
set -euo pipefail
src=$(cd "$1" && pwd)
work=$2
fail() { echo "readme_path: FAIL: $*" >&2; exit 1; }

block=$(awk '/^<!-- path:/ {found = 1; next} found && /^```/ {inside = !inside; if (!inside) exit; next}
             found && inside {print}' "$src/README.md")
[ -n "$block" ] || fail "README.md has no path block (a code block after a line starting <!-- path:)"
rm -rf "$work"
"$src/tests/copy_checkout.sh" "$src" "$work/src"
echo "readme_path: in $work/src, as written:"
printf '%s\n' "$block" | sed 's/^/  | /'
start=$SECONDS
(cd "$work/src" && bash -e -o pipefail -c "$block") >"$work/path.log" 2>&1 ||
  { tail -40 "$work/path.log"; fail "the README's first block failed (the whole output: $work/path.log)"; }
echo "readme_path: the block ran in $((SECONDS - start)) s"

# What it printed, step by step.
python3 - "$work/path.log" "$work/src" <<'PY' || { tail -60 "$work/path.log"; exit 1; }
import os
import re
import sys

log, root = sys.argv[1:]
lines = open(log, encoding="utf-8", errors="replace").read().splitlines()


def fail(why):
    sys.exit(f"readme_path: FAIL: {why}")


trace = os.path.join(root, "trace.csv")
if not os.path.isfile(trace) or "# recorded by mcmclb::walkers::run" not in open(trace).read():
    fail("no trace.csv recorded by mcmclb::walkers::run")
verdicts = [l for l in lines if l.startswith("verdict at P = 2 ")]
run_lines = [l for l in lines if l.startswith("run it at P = 2: mpiexec -n 2 YOUR_PROGRAM --mcmclb-balancer ")]
if len(verdicts) != 1 or len(run_lines) != 1:
    fail(f"advise printed {len(verdicts)} verdicts and {len(run_lines)} run lines at P = 2 (one each expected)")
advised = run_lines[0].split("--mcmclb-balancer ")[1].split()[0]
# examples/minimal's runs: "BALANCER...: T s, valid", then its 8 chains' results.
runs, i = [], 0
while i < len(lines):
    m = re.match(r"^(\w+)[^:]*: [0-9.]+ s, (valid|INVALID)$", lines[i])
    if m:
        runs.append((m[1], m[2], [l for l in lines[i + 1:i + 9] if l.startswith("chain ")]))
    i += 1
if len(runs) != 3:
    fail(f"{len(runs)} runs of the program printed (expected 3: the recording, the advised run, its resume)")
(recorded, _, first), (ran, valid, second), (resumed, valid_again, third) = runs
if recorded != "mostwork":
    fail(f"the recording ran under {recorded}, not the block's mostwork")
if ran != advised or resumed != advised:
    fail(f"advise's run line names {advised}; the runs after it ran under {ran} and {resumed}")
if valid != "valid" or valid_again != "valid" or len(first) != 8:
    fail("the advised run or its resume is not valid, or not 8 chains' results")
if not (first == second == third):
    fail("the chains' results differ between the recording, the advised run and its resume")
resuming = [l for l in lines if l.startswith("mcmclb: resuming from ckpt: 8 of 8 chains finished before")]
if len(resuming) != 1:
    fail("the second advised run did not say that it went on from ckpt/")
print(f"readme_path: recorded under mostwork; advise: {run_lines[0]}")
print(f"readme_path: the advised run under {ran} and its resume from ckpt/ gave the recording's results, bit for bit")
PY
