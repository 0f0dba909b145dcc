#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Times vs. ideal per configuration from a results folder (runs.csv + ranks.csv), and where the gap to the ideal
goes. Prints Markdown.

Gap decomposition: every rank's elapsed time is work + polling + waiting + regroup + other, and a run ends at
time_s = max elapsed. Since the work over all ranks is P * ideal_s when items cost exactly T/|group|,
time_s - ideal_s = mean over ranks of (polling + waiting + regroup + other + (time_s - elapsed)) + (mean work -
ideal_s). For async, `waiting` is the polling delay (a finished group waiting for its merge request to be taken
at the receiver's next polling point), `regroup` the communicator creation, `idle` time after a rank finished.

The `/ ideal` column is `-` when the ideal time is 0 (a workload without items, e.g. cyclic at P = 1, where
S = scale * (0 mod period) = 0): there is no ratio to give, and the gap columns still show the absolute times.

Each time is summarised as the median over the runs of a configuration with its [min-max], their number, and the
95 % confidence interval of the median by order statistics (plots/mcmclb_stats.py); fewer than 6 runs have no such
interval ("too few repetitions (n=K)"), and simulated runs, being deterministic, none either.
"""
import argparse
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcmclb_csv import (ArgumentParser, InputError, backend_label, check_inputs_exist, fail, find_csv,  # noqa: E402
                        markdown_table, oversubscribed_mark, oversubscription_note, read_csv, read_runs, run_label)
from mcmclb_stats import CAPTION, CI_HEADING, Summary, median  # noqa: E402

RANK_COLUMNS = ["run_id", "elapsed_s", "work_s", "polling_s", "waiting_s", "regroup_s", "other_s"]
GAP_PARTS = ("waiting_s", "regroup_s", "polling_s", "other_s", "idle", "work")


def configurations(runs):
    """(P, set-up name, simulated) -> its runs, in first-seen order. Simulated rows are their own configurations,
    named as such (never pooled with measurements)."""
    groups = defaultdict(list)
    for r in runs:
        simulated = r["backend"] != "mpi"
        name = f"{run_label(r)}, {backend_label(r)}" if simulated else run_label(r)
        groups[(r["nprocs"], name, simulated)].append(r)
    return groups


def times_table(runs):
    """(header, rows of cells) of the times-vs-ideal table."""
    header = ["P", "balancer", "runs", "time_s median [min-max]", CI_HEADING, "/ ideal",
              "regroups avg (std) [min-max]", "valid"]
    rows = []
    for (p, name, simulated), rs in configurations(runs).items():
        t = Summary([r["time_s"] for r in rs], simulated)
        ideal = rs[0]["ideal_s"]
        rows.append([oversubscribed_mark(p, rs), name, str(t.n), f"{t.median:.3f} {t.range_text()}", t.ci_text(),
                     f"{t.median / ideal:.3f}" if ideal > 0 else "-",
                     f"{median([r['regroups_avg'] for r in rs]):.2f} ({median([r['regroups_std'] for r in rs]):.2f}) "
                     f"[{min(r['regroups_min'] for r in rs):.0f}-{max(r['regroups_max'] for r in rs):.0f}]",
                     f"{sum(r['valid'] for r in rs)}/{len(rs)}"])
    return header, rows


def gap_table(runs, ranks):
    """(header, rows of cells) of the gap to the ideal split into its parts, per configuration with ranks rows."""
    by_run = defaultdict(list)
    for r in ranks:
        by_run[r["run_id"]].append(r)
    header = ["P", "balancer", "runs", "gap median [min-max]", f"gap {CI_HEADING}", "waiting (polling delay)",
              "regroup (creation)", "polling", "other", "idle after finish", "work overshoot"]
    rows = []
    for (p, name, simulated), rs in configurations(runs).items():
        parts = defaultdict(list)
        for r in rs:
            rows_of_run = by_run.get(r["run_id"], [])
            if not rows_of_run:
                continue
            n = len(rows_of_run)
            parts["gap"].append(r["time_s"] - r["ideal_s"])
            for k in ("waiting_s", "regroup_s", "polling_s", "other_s"):
                parts[k].append(sum(x[k] for x in rows_of_run) / n)
            parts["idle"].append(sum(r["time_s"] - x["elapsed_s"] for x in rows_of_run) / n)
            parts["work"].append(sum(x["work_s"] for x in rows_of_run) / n - r["ideal_s"])
        if parts:
            gap = Summary(parts["gap"], simulated)
            rows.append([oversubscribed_mark(p, rs), name, str(gap.n), f"{gap.median:.3f} {gap.range_text()}",
                         gap.ci_text()] +
                        [f"{median(parts[k]):.3f}" for k in GAP_PARTS])
    return header, rows


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
    print("\n".join(markdown_table(*times_table(runs))))
    print(f"\n({CAPTION}.)")
    print("\nGap to the ideal, mean over ranks per run; the parts are medians over runs (seconds):\n")
    print("\n".join(markdown_table(*gap_table(runs, ranks))))
    note = oversubscription_note(runs)
    if note:
        print(f"\n{note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
