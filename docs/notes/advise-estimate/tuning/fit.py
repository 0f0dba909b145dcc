#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The per-set-up costs of mcmclb advise's estimate (simulated_host_s in study/src/simulation_cost.cpp), fitted from the two tuning advices in
this folder: the same 8 walkers and speed-ups with 60 items (short/) and with 1034 (long/), each simulated at 64 and
1024 ranks under every set-up and scenario. A simulation's host CPU (provenance.csv, host_cpu_s) is taken as
start-up + a set-up's cost at P + its rank-items x a cost per rank-item, where the rank-items are the trace's items
times the ranks of the group that works each (8 walkers in groups of P/8: items x P/8). Per set-up, the mean over its
scenarios; the cost per rank-item from the long minus the short at 1024 ranks (where the difference is largest),
checked against the same difference at 64; the set-up's cost at 1024 is the short's less its rank-items and the
start-up. The start-up is the median over set-ups of the short trace at 64 ranks less its rank-items. Writes
fit.csv beside this file and prints it:

    docs/notes/advise-estimate/tuning/fit.py"""
import csv
import os
import statistics
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
ITEMS = {"short": 60, "long": 1034}
WALKERS = 8


def host_cpu(name):
    """{(nprocs, balancer, finished): mean host_cpu_s over its runs} of one tuning advice."""
    folder = os.path.join(HERE, name)
    with open(os.path.join(folder, "provenance.csv"), encoding="utf-8") as f:
        cpu = {r["run_id"]: float(r["host_cpu_s"]) for r in csv.DictReader(f)}
    runs = defaultdict(list)
    with open(os.path.join(folder, "runs.csv"), encoding="utf-8") as f:
        for r in csv.DictReader(f):
            runs[(int(r["nprocs"]), r["balancer"], r["finished"] or "")].append(cpu[r["run_id"]])
    return {k: statistics.mean(v) for k, v in runs.items()}


def main():
    short, long = host_cpu("short"), host_cpu("long")
    rank_items = {(name, p): ITEMS[name] * p / WALKERS for name in ITEMS for p in (64, 1024)}
    setups = sorted({(b, rule) for _, b, rule in short})
    per_item = {}
    for b, rule in setups:
        per_item[(b, rule)] = max(0.0, (long[(1024, b, rule)] - short[(1024, b, rule)]) /
                                  (rank_items[("long", 1024)] - rank_items[("short", 1024)]))
    start = statistics.median(short[(64, b, rule)] - per_item[(b, rule)] * rank_items[("short", 64)]
                              for b, rule in setups)
    rows = []
    for b, rule in setups:
        c = per_item[(b, rule)]
        at_64 = (long[(64, b, rule)] - short[(64, b, rule)]) / (rank_items[("long", 64)] - rank_items[("short", 64)])
        at_1024 = short[(1024, b, rule)] - c * rank_items[("short", 1024)] - start
        rows.append([b, rule, f"{short[(64, b, rule)]:.3f}", f"{long[(64, b, rule)]:.3f}",
                     f"{short[(1024, b, rule)]:.3f}", f"{long[(1024, b, rule)]:.3f}", f"{1e6 * c:.1f}",
                     f"{1e6 * at_64:.1f}", f"{at_1024:.2f}", f"{start:.2f}"])
    with open(os.path.join(HERE, "fit.csv"), "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["balancer", "finished", "short_64_s", "long_64_s", "short_1024_s", "long_1024_s",
                    "rank_item_us", "rank_item_us_at_64", "at_1024_s", "start_s"])
        w.writerows(rows)
    for r in rows:
        print(",".join(r))


if __name__ == "__main__":
    main()
