#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The partner-rule table (the paper, Sect. 2): per workload model, rank count and balancer set-up, the median time /
ideal over the workload seeds with its [min-max] and the 95 % confidence interval of that median (order statistics,
plots/mcmclb_stats.py; none below 6 seeds, none for simulated rows, which are labelled and never pooled with
measured ones), from a results folder such as the one configs/partner.yaml writes (most-work `mostwork` against
merge-right `lookahead`). Prints Markdown.

    plots/partner.py results/partner [results/partner-smpi ...]

Rows whose ideal time is 0 (no items) have no ratio and are left out; the `seeds` column counts the rest.
"""
import argparse
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcmclb_csv import (ArgumentParser, InputError, backend_label, check_inputs_exist, fail,  # noqa: E402
                        markdown_table, read_runs, run_label)
from mcmclb_stats import CAPTION, CI_HEADING, Summary  # noqa: E402

COLUMNS = ["run_id", "nprocs", "G", "workload", "workload_seed", "balancer", "interval", "method", "time_s",
           "ideal_s", "valid"]


def table(rows):
    """Markdown lines: one row per (workload, nprocs, G, set-up, backend), in first-seen order."""
    groups = defaultdict(list)
    for r in rows:
        if r["valid"] is not True or r["ideal_s"] <= 0:
            continue
        simulated = r["backend"] != "mpi"
        label = f"{run_label(r)}, {backend_label(r)}" if simulated else run_label(r)
        groups[(r["workload"], r["nprocs"], r["G"], label, simulated)].append(r["time_s"] / r["ideal_s"])
    cells = []
    for (workload, nprocs, g, label, simulated), ratios in groups.items():
        s = Summary(ratios, simulated)
        cells.append([workload, str(nprocs), str(g), label, str(s.n), f"{s.median:.3f} {s.range_text()}",
                      s.ci_text()])
    return markdown_table(["workload", "P", "G", "balancer", "seeds", "time / ideal, median [min-max]", CI_HEADING],
                          cells)


def main(argv=None):
    parser = ArgumentParser(prog="partner.py", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folders", nargs="+", help="results folders holding runs.csv")
    args = parser.parse_args(argv)
    try:
        check_inputs_exist(args.folders, "runs.csv")
        rows = read_runs(args.folders, COLUMNS)
    except InputError as e:
        fail(__file__, str(e))
    print("\n".join(table(rows)))
    print(f"\n({CAPTION}; here the samples are the workload seeds.)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
