#!/usr/bin/python3
"""Times vs. ideal per configuration from a results folder (runs.csv + ranks.csv), and where the gap to the ideal
goes. Prints Markdown.

Gap decomposition: every rank's elapsed time is work + polling + waiting + regroup + other, and a run ends at
time_s = max elapsed. Since the work over all ranks is P * ideal_s when items cost exactly T/|group|,
time_s - ideal_s = mean over ranks of (polling + waiting + regroup + other + (time_s - elapsed)) + (mean work -
ideal_s). For async, `waiting` is the polling delay (a finished group waiting for its merge request to be taken
at the receiver's next polling point), `regroup` the communicator creation, `idle` time after a rank finished.

The `/ ideal` column is `-` when the ideal time is 0 (a workload without items, e.g. cyclic at P = 1, where
S = scale * (0 mod period) = 0): there is no ratio to give, and the gap columns still show the absolute times.
"""
import argparse
import os
import statistics
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcmclb_csv import (ArgumentParser, InputError, backend_label, check_inputs_exist, fail, find_csv,  # noqa: E402
                        median, read_csv, read_runs, run_label)

RANK_COLUMNS = ["run_id", "elapsed_s", "work_s", "polling_s", "waiting_s", "regroup_s", "other_s"]


def main(argv=None):
    parser = ArgumentParser(prog="summary.py", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", help="results folder holding runs.csv and ranks.csv")
    args = parser.parse_args(argv)
    try:
        check_inputs_exist([args.folder], "runs.csv")
        runs = read_runs([args.folder])
        ranks = read_csv(find_csv(args.folder, "ranks.csv"), "ranks.csv", RANK_COLUMNS)
    except InputError as e:
        fail(__file__, str(e))

    by_run = defaultdict(list)
    for r in ranks:
        by_run[r["run_id"]].append(r)
    groups = defaultdict(list)
    for r in runs:
        # Simulated rows are their own configurations, named as such (never pooled with measurements).
        name = run_label(r) if r["backend"] == "mpi" else f"{run_label(r)}, {backend_label(r)}"
        groups[(r["nprocs"], name)].append(r)

    print("| P | balancer | runs | time_s median [min-max] | / ideal | regroups avg (std) [min-max] | valid |")
    print("|---|---|---|---|---|---|---|")
    for (p, name), rs in groups.items():
        t = [r["time_s"] for r in rs]
        ideal = rs[0]["ideal_s"]
        ratio = f"{median(t) / ideal:.3f}" if ideal > 0 else "-"
        print(f"| {p} | {name} | {len(rs)} | {median(t):.3f} [{min(t):.3f}-{max(t):.3f}] | {ratio} | "
              f"{median([r['regroups_avg'] for r in rs]):.2f} ({median([r['regroups_std'] for r in rs]):.2f}) "
              f"[{min(r['regroups_min'] for r in rs):.0f}-{max(r['regroups_max'] for r in rs):.0f}] | "
              f"{sum(r['valid'] for r in rs)}/{len(rs)} |")

    print("\nGap to the ideal, mean over ranks per run, median over runs (seconds):\n")
    print("| P | balancer | gap | waiting (polling delay) | regroup (creation) | polling | other | idle after finish "
          "| work overshoot |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (p, name), rs in groups.items():
        parts = defaultdict(list)
        for r in rs:
            rows = by_run.get(r["run_id"], [])
            if not rows:
                continue
            n = len(rows)
            parts["gap"].append(r["time_s"] - r["ideal_s"])
            for k in ("waiting_s", "regroup_s", "polling_s", "other_s"):
                parts[k].append(sum(x[k] for x in rows) / n)
            parts["idle"].append(sum(r["time_s"] - x["elapsed_s"] for x in rows) / n)
            parts["work"].append(sum(x["work_s"] for x in rows) / n - r["ideal_s"])
        if parts:
            cells = [statistics.median(parts[k]) for k in ("gap", "waiting_s", "regroup_s", "polling_s", "other_s",
                                                           "idle", "work")]
            print(f"| {p} | {name} | " + " | ".join(f"{c:.3f}" for c in cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
