# SPDX-License-Identifier: BSD-3-Clause
"""The raced advice (advice-raced.csv) against the unraced one (advice.csv) in each folder of docs/notes/race-check
(its README), as CSV, one row per folder and rank count: both winners, the winner's gain over none at its worst,
median and best scenario in each, whether the two agree within the tolerance, both rank answers (ranks_answer's
count), how many set-ups each ranked, and how many rows of the unraced advice share every time with another row (set-ups of identical times
share one). Run from the repository's root."""
import csv
import os
import re
import sys

FOLDERS = (("long", "configs/trace-lj-long.csv"), ("six", "docs/notes/advise-estimate/six-walkers.csv"),
           ("w192", "docs/notes/advise-estimate/walkers-192.csv"), ("giant", "docs/notes/race-check/giant.csv"))
GAINS = ("gain_worst", "gain_median", "gain_best")


def ranks(answer):
    """The rank count a ranks_answer advises: its first "N ranks" (after a "copies (...): " head)."""
    found = re.match(r"(?:copies \(.*?\): )?(\d+) ranks", answer)
    return found.group(1) if found else ""


def gains(rows, p):
    """The winner's gains at P = p: its own row's worst and best, and gain_median (every row carries it)."""
    first = next(r for r in rows if r["nprocs"] == p and r["rank"] == "1")
    won = next(r for r in rows if r["nprocs"] == p and r["setup"] == first["winner"])
    return first, {g: float(won[g] if g != "gain_median" else first[g]) for g in GAINS}


out = csv.writer(sys.stdout, lineterminator="\n")
out.writerow(["folder", "trace", "nprocs", "raced_winner", "every_winner", "same", "raced_gain_worst",
              "every_gain_worst", "raced_gain_median", "every_gain_median", "raced_gain_best", "every_gain_best",
              "gain_largest_difference", "tolerance_pct", "gains_within_tolerance", "raced_ranks", "every_ranks",
              "same_ranks", "setups", "raced_setups", "dropped_by_race", "rows_with_same_times"])
for folder, trace in FOLDERS:
    here = f"docs/notes/race-check/{folder}"
    if not os.path.isdir(here):  # a folder not made at this commit (the README says which)
        continue
    with open(f"{here}/advice-raced.csv", newline="") as f:
        raced = list(csv.DictReader(f))
    with open(f"{here}/advice.csv", newline="") as f:
        every = list(csv.DictReader(f))
    for p in sorted({r["nprocs"] for r in every}, key=int):
        a, gain_a = gains(raced, p)
        b, gain_b = gains(every, p)
        tolerance = float(b["tolerance_pct"])
        largest = max(abs(gain_a[g] - gain_b[g]) for g in GAINS)
        times = [(r["scenarios"], r["vs_none_min"], r["vs_none_median"], r["vs_none_max"], r["regret_max"],
                  r["regret_median"]) for r in every if r["nprocs"] == p]
        out.writerow([folder, trace, p, a["winner"], b["winner"], "yes" if a["winner"] == b["winner"] else "no"] +
                     [f"{x[g]:.6g}" for g in GAINS for x in (gain_a, gain_b)] +
                     [f"{largest:.3g}", f"{tolerance:.6g}", "yes" if 100 * largest <= tolerance else "no",
                      ranks(a["ranks_answer"]), ranks(b["ranks_answer"]),
                      "yes" if ranks(a["ranks_answer"]) == ranks(b["ranks_answer"]) else "no", len(times),
                      sum(1 for r in raced if r["nprocs"] == p), sum(1 for r in raced if r["nprocs"] == p and r["dropped"]),
                      sum(1 for t in times if times.count(t) > 1)])
