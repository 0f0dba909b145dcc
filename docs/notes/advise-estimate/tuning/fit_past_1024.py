#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The powers of P past 1024 ranks in mcmclb advise's estimate (simulated_host_s in study/src/simulation_cost.cpp).

Below 1024 ranks each set-up's host CPU grows as its power in fit.csv; those powers came from older advice, and at
8192 ranks they were off by up to 2x either way. This fits each set-up's own power past 1024 from the shipped
trace advised at 8192 ranks by the race of release 0.10.1 (docs/data/trace-lj/advise-p8192/before/: every set-up
simulated at least once, two at once on the idle 2-core VM). The model stays continuous at 1024: the set-up's cost
there (fit.csv's at_1024_s) times (P / 1024)^power, so

    power = log((host CPU at 8192 - start-up - rank-items x cost per rank-item) / at_1024_s) / log(8),

with the host CPU the mean of that set-up's simulations at 8192. It is in sample for that trace at that size only;
docs/notes/advise-estimate/README.md says how it did on traces that set no cost. Writes fit-past-1024.csv beside
this file and prints it:

    docs/notes/advise-estimate/tuning/fit_past_1024.py"""
import csv
import math
import os

from fit import HERE, host_cpu, rank_items

ROOT = os.path.normpath(os.path.join(HERE, "..", "..", "..", ".."))
ADVICE = os.path.join(ROOT, "docs", "data", "trace-lj", "advise-p8192", "before")
TRACE = os.path.join(ROOT, "configs", "trace-lj-long.csv")
P = 8192


def main():
    with open(os.path.join(HERE, "fit.csv"), encoding="utf-8") as f:
        fitted = {(r["balancer"], r["finished"]): r for r in csv.DictReader(f)}
    cpu = host_cpu(ADVICE)
    rows = []
    for (balancer, rule), r in sorted(fitted.items()):
        measured = cpu[(P, balancer, rule)]
        grown = measured - float(r["start_s"]) - 1e-6 * float(r["rank_item_us"]) * rank_items(TRACE, P, rule)
        power = math.log(grown / float(r["at_1024_s"])) / math.log(P / 1024)
        rows.append([balancer, rule, r["power"], f"{power:.2f}", f"{measured:.1f}"])
    with open(os.path.join(HERE, "fit-past-1024.csv"), "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["balancer", "finished", "power_to_1024", "power_past_1024", "host_cpu_at_8192_s"])
        w.writerows(rows)
    for r in rows:
        print(",".join(r))


if __name__ == "__main__":
    main()
