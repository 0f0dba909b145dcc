# SPDX-License-Identifier: BSD-3-Clause
"""Each rank count's winner of the raced and the unraced advice in each of the four folders of
docs/notes/race-check (its README), as CSV, and how many rows of the unraced advice share every time with another
row (set-ups of identical times share one)."""
import csv, sys
out = csv.writer(sys.stdout, lineterminator="\n")
out.writerow(["folder", "trace", "nprocs", "raced_winner", "every_winner", "same", "setups", "dropped_by_race",
              "rows_with_same_times"])
for folder, trace in (("six", "docs/notes/advise-estimate/six-walkers.csv"), ("long", "configs/trace-lj-long.csv"),
                      ("w192", "docs/notes/advise-estimate/walkers-192.csv"), ("readme", "configs/trace-lj-long.csv")):
    raced = list(csv.DictReader(open(f"docs/notes/race-check/{folder}/advice-raced.csv")))
    every = list(csv.DictReader(open(f"docs/notes/race-check/{folder}/advice.csv")))
    for p in sorted({r["nprocs"] for r in every}, key=int):
        a = [r for r in raced if r["nprocs"] == p]
        b = [r for r in every if r["nprocs"] == p]
        times = [(r["scenarios"], r["vs_none_min"], r["vs_none_median"], r["vs_none_max"], r["regret_max"],
                  r["regret_median"]) for r in b]
        out.writerow([folder, trace, p, a[0]["winner"], b[0]["winner"],
                      "yes" if a[0]["winner"] == b[0]["winner"] else "no", len(b),
                      sum(1 for r in a if r["dropped"]), sum(1 for t in times if times.count(t) > 1)])
