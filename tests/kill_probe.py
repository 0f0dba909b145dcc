#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Run ids under a fast stream of runs and kill -9: `mcmclb run --resume` of RUNS one-item runs (T_ms 0.001, one
point repeated RUNS times) into one folder, rank 0 (the rank that commits each run to the folder) killed with
SIGKILL KILLS times at random moments, then resumed to the end. The folder must then hold RUNS runs.csv rows, each
repetition once and valid, under RUNS distinct run_ids, and ranks.csv one row per rank and run, no other.

At hundreds of runs a second, ids that were a UTC second and 24 bits of salt repeated within one folder; a resume
after a kill starts a new process in the same second as the killed one. Exit 0 when the folder is as it must be,
1 with the problems found otherwise, 2 for bad arguments. Needs MCMCLB_BIN (ctest sets it); mpiexec is
MCMCLB_TEST_MPIEXEC (with MCMCLB_TEST_MPI_ROOT_FLAGS) or the one on PATH. The test command runs it small
(tests/CMakeLists.txt); by hand:
    MCMCLB_BIN=build-test/mcmclb tests/kill_probe.py --runs 3000 --kills 20
"""
import argparse
import csv
import os
import random
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # proc_tree, beside this file
import proc_tree  # noqa: E402

RANK_VARIABLES = (b"PMI_RANK=", b"OMPI_COMM_WORLD_RANK=")  # MPICH's Hydra and Open MPI name a rank so


def rank_of(pid):
    """The MPI rank of pid from its environment, or None."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            env = f.read().split(b"\0")
    except OSError:
        return None
    for entry in env:
        for name in RANK_VARIABLES:
            if entry.startswith(name):
                return int(entry[len(name):])
    return None


def rows(path):
    try:
        with open(path, newline="") as f:
            return list(csv.DictReader(f))
    except FileNotFoundError:
        return []


def data_lines(path):
    try:
        with open(path, "rb") as f:
            return max(0, f.read().count(b"\n") - 1)
    except FileNotFoundError:
        return 0


def launch(mpiexec, ranks, study, out, log):
    command = [*mpiexec, "-n", str(ranks), os.environ["MCMCLB_BIN"], "run", study, "--resume", "--out", out]
    return subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def kill_rank0(proc, out, rng, deadline):
    """Waits for the launch to record a run or two, then a random moment, and kills its rank 0 with SIGKILL.
    False if the launch ended first (every run done)."""
    before = data_lines(os.path.join(out, "runs.csv"))
    while data_lines(os.path.join(out, "runs.csv")) < before + 2:
        if proc.poll() is not None:
            return False
        if time.monotonic() > deadline:
            raise TimeoutError("no run recorded before the deadline")
        time.sleep(0.005)
    # A moment within the next few runs: one-item runs take milliseconds, so a wait of up to 0.25 s let a fast host
    # finish every run before the last kill, and the probe then failed for too few kills.
    time.sleep(rng.uniform(0, 0.02))
    for pid in proc_tree.process_tree(proc.pid):
        if rank_of(pid) == 0:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                return False  # it finished meanwhile
            return True
    if proc.poll() is None:
        raise RuntimeError("no process of the launch names itself rank 0 (PMI_RANK or OMPI_COMM_WORLD_RANK)")
    return False


def problems(out, runs, ranks):
    """What is wrong with the folder, in words (empty: nothing)."""
    found = []
    recorded = rows(os.path.join(out, "runs.csv"))
    if len(recorded) != runs:
        found.append(f"runs.csv holds {len(recorded)} rows, not {runs}")
    ids = Counter(r["run_id"] for r in recorded)
    twice = [i for i, n in ids.items() if n > 1]
    if twice:
        found.append(f"{len(twice)} run_id(s) on more than one runs.csv row, e.g. {twice[0]}")
    reps = Counter(r["rep"] for r in recorded)
    if sorted(reps) != sorted(str(i) for i in range(runs)) or any(n != 1 for n in reps.values()):
        found.append("the repetitions are not 0 .. RUNS-1, each once")
    invalid = [r["run_id"] for r in recorded if r["valid"] != "true"]
    if invalid:
        found.append(f"{len(invalid)} invalid run(s), e.g. {invalid[0]}")
    rank_rows = Counter((r["run_id"], r["rank"]) for r in rows(os.path.join(out, "ranks.csv")))
    expected = {(i, str(k)) for i in ids for k in range(ranks)}
    if set(rank_rows) != expected or any(n != 1 for n in rank_rows.values()):
        extra = sorted(set(rank_rows) - expected)[:1]
        missing = sorted(expected - set(rank_rows))[:1]
        repeated = sorted(k for k, n in rank_rows.items() if n > 1)[:1]
        found.append(f"ranks.csv is not one row per rank and run (extra {extra}, missing {missing}, repeated "
                     f"{repeated})")
    return found


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3000, help="one-item runs (repetitions of one point)")
    parser.add_argument("--kills", type=int, default=20, help="times rank 0 is killed with SIGKILL")
    parser.add_argument("--ranks", type=int, default=2, help="ranks of each launch")
    parser.add_argument("--seed", type=int, default=None, help="seed of the moments (default: drawn, and printed)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds for the whole probe")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.kills < 0 or args.ranks < 1 or args.kills * 2 >= args.runs:
        parser.error("--runs >= 1, --ranks >= 1, 0 <= --kills < --runs / 2 (each kill waits for two runs)")
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    rng = random.Random(seed)
    mpiexec = shlex.split(os.environ.get("MCMCLB_TEST_MPIEXEC") or "mpiexec") + shlex.split(
        os.environ.get("MCMCLB_TEST_MPI_ROOT_FLAGS", ""))
    deadline = time.monotonic() + args.timeout
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="mcmclb-kill-probe-") as tmp:
        study, out = os.path.join(tmp, "probe.yaml"), os.path.join(tmp, "out")
        with open(study, "w") as f:
            f.write(f"experiment: probe\nT_ms: 0.001\nreps: {args.runs}\nworkload: {{model: uniform, items: 1}}\n")
        kills = launches = 0
        with open(os.path.join(tmp, "launches.log"), "w") as log:
            while True:
                proc = launch(mpiexec, args.ranks, study, out, log)
                launches += 1
                try:
                    killed = kills < args.kills and kill_rank0(proc, out, rng, deadline)
                    kills += killed
                    proc.wait(timeout=max(1.0, deadline - time.monotonic()))
                except (subprocess.TimeoutExpired, TimeoutError, RuntimeError) as e:
                    proc_tree.kill_tree(proc)
                    print(f"kill_probe: {e or 'timed out'} after {time.monotonic() - start:.0f} s (seed {seed})")
                    return 1
                if not killed:
                    if proc.returncode != 0:
                        log.flush()
                        with open(log.name) as f:
                            print(f"kill_probe: a launch that was not killed exited {proc.returncode}:\n"
                                  + f.read()[-2000:])
                        return 1
                    break
        found = problems(out, args.runs, args.ranks)
        print(f"kill_probe: {args.runs} one-item runs at P = {args.ranks}, rank 0 killed {kills} times, "
              f"{launches} launches, {time.monotonic() - start:.1f} s, seed {seed}: "
              + ("; ".join(found) if found else f"{args.runs} rows, {args.runs} distinct run_ids, one ranks.csv row "
                                                f"per rank and run"))
        return 1 if found or kills < args.kills else 0


if __name__ == "__main__":
    sys.exit(main())
