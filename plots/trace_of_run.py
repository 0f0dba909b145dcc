#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A trace file from one recorded run: the rows of costs.csv (work.record) of the run chosen, less the run_id
column, which is a trace file as docs/reference/columns.md describes it and workload.model trace replays. The run
is named by its id, or by balancer and rep (exactly one run must match).

With --measured-speedups, a chain's speed-up at a size is measured over every run of the folder at the same rank
count where the chain worked items at 1 and at that size (mean seconds per item at 1 over at that size, all such
runs pooled); the run's own speed-up rows (its calibration's, for the sizes it never worked) stand where none did.

With --perfect the speed-up rows are left out, so every chain scales perfectly (a speed-up of m at m ranks): the
same items at the same single-rank costs as emulated work scales them, the comparison that isolates the scaling.

  plots/trace_of_run.py results/trace-lj-record --balancer none --rep 0 -o my-trace.csv [--measured-speedups]"""
import csv
import io
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcmclb_csv import ArgumentParser, InputError, fail, read_csv, write_text_atomically  # noqa: E402

TRACE_COLUMNS = ("chain", "item", "ranks", "seconds", "speedup")


def provenance_lines(args, run_id):
    """The trace's comment lines: which run gave the costs, where the speed-ups came from, and the commit, MPI
    and host that recorded them (runs.csv)."""
    lines = [f"trace of run {run_id} of {os.path.basename(os.path.normpath(args.results))}"]
    if args.perfect:
        lines.append("speed-ups: none given, every chain scales perfectly")
    elif args.measured_speedups:
        lines.append("speed-ups: measured over the folder's runs at the same rank count (out of sample for any "
                     "run not in the folder)")
    else:
        lines.append("speed-ups: the run's own")
    with open(os.path.join(args.results, "runs.csv"), newline="") as f:
        for r in csv.DictReader(f):
            if r.get("run_id") == run_id:
                lines.append(f"recorded at commit {r.get('git_commit', '?')} with {r.get('mpi_library', '?')} "
                             f"on {r.get('host', '?')}, {r.get('utc_start', '?')}")
    return [line.replace("\n", " ") for line in lines]


def run_line(run):
    """The trace's `# run:` line from the chosen run's runs.csv row: its ranks, its initial groups (the groups
    column where a run gives it, else P / G), its balancer and its time (time_s, as mcmclb::walkers writes it)."""
    try:
        nprocs, size = int(run["nprocs"]), int(run["G"])
        groups = int(run["groups"]) if run.get("groups") not in (None, "") else nprocs // size
        seconds = float(run["time_s"])
    except (KeyError, TypeError, ValueError):
        raise InputError(f"runs.csv: run {run.get('run_id')}: nprocs, G and time_s must be numbers "
                         "(a run that ended)") from None
    if nprocs < 1 or size < 1 or groups < 1 or not seconds > 0 or not run.get("balancer"):
        raise InputError(f"runs.csv: run {run['run_id']}: no valid layout, balancer or time to say what it took")
    return f"run: ranks={nprocs} groups={groups} balancer={run['balancer']} seconds={seconds!r}"


def main():
    p = ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("results", help="a results folder of compute-mode runs with work.record")
    p.add_argument("--run-id", help="the run to take (else --balancer and --rep)")
    p.add_argument("--balancer", help="the balancer of the run to take")
    p.add_argument("--rep", type=int, help="its repetition")
    p.add_argument("-o", "--output", help="the trace file to write (default: standard output)")
    p.add_argument("--measured-speedups", action="store_true",
                   help="speed-ups measured over the folder's runs at the same rank count where they exist")
    p.add_argument("--perfect", action="store_true", help="no speed-up rows: every chain scales perfectly")
    args = p.parse_args()
    try:
        runs = read_csv(os.path.join(args.results, "runs.csv"), "runs.csv", ("run_id", "balancer", "rep"))
        chosen = [r["run_id"] for r in runs if r["run_id"] == args.run_id or (
            args.run_id is None and r["balancer"] == args.balancer and r["rep"] == args.rep)]
        if len(chosen) != 1:
            raise InputError(f"{args.results}: {len(chosen)} runs match (want exactly one; give --run-id, or "
                             f"--balancer and --rep)")
        costs = read_csv(os.path.join(args.results, "costs.csv"), "costs.csv", ("run_id",))
        rows = [r for r in costs if r["run_id"] == chosen[0]]
        if not rows:
            raise InputError(f"{args.results}/costs.csv: no rows of run {chosen[0]} (was work.record on?)")
        # The fields as written (read_csv parses numbers; the trace keeps the recorded text).
        with open(os.path.join(args.results, "costs.csv"), newline="") as f:
            every = list(csv.DictReader(f))
        raw = [r for r in every if r["run_id"] == chosen[0]]
        if args.measured_speedups:
            nprocs = {r["run_id"]: r["nprocs"] for r in runs}
            pool = {}  # (chain, ranks) -> [seconds, items]
            for r in every:
                if r["item"] and nprocs.get(r["run_id"]) == nprocs[chosen[0]]:
                    t = pool.setdefault((r["chain"], r["ranks"]), [0.0, 0])
                    t[0] += float(r["seconds"])
                    t[1] += 1
            for r in raw:
                one, at = pool.get((r["chain"], "1")), pool.get((r["chain"], r["ranks"]))
                if not r["item"] and one and at and at[0] > 0:
                    r["speedup"] = repr((one[0] / one[1]) / (at[0] / at[1]))
        if args.perfect:
            raw = [r for r in raw if r["item"]]
        out = io.StringIO()
        for line in provenance_lines(args, chosen[0]):
            out.write("# " + line + "\n")
        out.write("# " + run_line(next(r for r in runs if r["run_id"] == chosen[0])) + "\n")
        out.write(",".join(TRACE_COLUMNS) + "\n")
        for r in raw:
            out.write(",".join(r[k] for k in TRACE_COLUMNS) + "\n")
        if args.output is None:
            sys.stdout.write(out.getvalue())
            return
        write_text_atomically(args.output, out.getvalue())
        print(f"{args.output}: run {chosen[0]}, {sum(1 for r in raw if r['item'])} items, "
              f"{sum(1 for r in raw if not r['item'])} speed-up rows")
    except InputError as e:
        fail("trace_of_run.py", str(e))


if __name__ == "__main__":
    main()
