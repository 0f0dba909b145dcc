#!/usr/bin/python3
"""The partner-rule table (the paper, Sect. 2): per workload model, rank count and balancer set-up, the median
time / ideal over the workload seeds with its [min-max], from a results folder such as the one
configs/partner.yaml writes (most-work `mostwork` against merge-right `lookahead`). Prints Markdown.

    plots/partner.py results/partner [results/partner-smpi ...]

Rows whose ideal time is 0 (no items) have no ratio and are left out; the `seeds` column counts the rest.
"""
import argparse
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcmclb_csv import (ArgumentParser, InputError, check_inputs_exist, fail, find_csv, median,  # noqa: E402
                        read_csv, run_label)

COLUMNS = ["run_id", "nprocs", "G", "workload", "workload_seed", "balancer", "interval", "method", "time_s",
           "ideal_s", "valid"]


def table(rows):
    """Markdown lines: one row per (workload, nprocs, G, set-up), in first-seen order."""
    groups = defaultdict(list)
    for r in rows:
        if r["valid"] is not True or r["ideal_s"] <= 0:
            continue
        key = (r["workload"], r["nprocs"], r["G"], run_label(r))
        groups[key].append(r["time_s"] / r["ideal_s"])
    lines = ["| workload | P | G | balancer | seeds | time / ideal, median [min-max] |",
             "|---|---|---|---|---|---|"]
    for (workload, nprocs, g, label), ratios in groups.items():
        lines.append(f"| {workload} | {nprocs} | {g} | {label} | {len(ratios)} | "
                     f"{median(ratios):.3f} [{min(ratios):.3f}-{max(ratios):.3f}] |")
    return lines


def main(argv=None):
    parser = ArgumentParser(prog="partner.py", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folders", nargs="+", help="results folders holding runs.csv")
    args = parser.parse_args(argv)
    try:
        check_inputs_exist(args.folders, "runs.csv")
        rows = []
        for folder in args.folders:
            rows += read_csv(find_csv(folder, "runs.csv"), "runs.csv", COLUMNS)
    except InputError as e:
        fail(__file__, str(e))
    print("\n".join(table(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
