#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The per-set-up costs of mcmclb advise's estimate (simulated_host_s in study/src/simulation_cost.cpp), fitted from
the tuning advices in this folder. Three tuning traces: 8 walkers with 60 items (tune-short.csv) and with 1034
(tune-long.csv), the same speed-ups, and 64 walkers with 1577 items (tune-many.csv). Each advised at 64 and 1024
ranks without racing on advise's default platform (fattree.xml), every set-up and scenario, and the set-ups that won
or tied at the counts advise searched between: short/, long/, many/, and short-2/, long-2/ again (one simulation's
host CPU varies between runs), all at one commit, the host held idle (their provenance.csv says which).

A simulation's host CPU (provenance.csv, host_cpu_s) is taken as start-up + the set-up's cost at 1024 ranks x
(P / 1024)^power + its rank-items x a cost per rank-item. The rank-items are each chain's items times the ranks of
the group that works it (the walkers' groups as recorded: near-equal sizes, the larger first), as
study::expected_rank_items counts them; under coalesce at least 1.2 x the ranks x the longest chain's items
(study::simulated_rank_items). Per set-up, the power on a grid of 0.01 and, for each, the two costs by least squares
on the relative error over every folder and rank count (the mean of each folder's simulations of that set-up there),
both kept >= 0. The start-up is the median over set-ups of the short traces at 64 ranks less the set-up's other
terms. The powers past 1024 ranks are fit_past_1024.py's. Writes fit.csv beside this file and prints it.

The wall time around the host CPU, from the same advices (fit-wall.csv): the simulations at 64 and 1024 ranks ran
two at once, so twice their wall time (the last progress line's elapsed seconds) is taken as a x their host CPU plus
a launch's own cost per simulation (the launcher, the writes), by least squares over the five; the search between
the counts then adds a cost per step (advise's own work between its sweeps), the mean over the five of what their
search took beyond its simulations so priced, each step two at once at most:

    docs/notes/advise-estimate/tuning/fit.py"""
import csv
import os
import re
import statistics
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
FOLDERS = {"short": "tune-short.csv", "long": "tune-long.csv", "short-2": "tune-short.csv",
           "long-2": "tune-long.csv", "many": "tune-many.csv"}
POWERS = [p / 100 for p in range(80, 241)]  # the grid each set-up's power is fitted on


def chain_items(trace):
    """{chain: items} of a trace file's item rows."""
    items = defaultdict(int)
    with open(os.path.join(HERE, trace), encoding="utf-8") as f:
        for row in csv.DictReader(line for line in f if not line.startswith("#")):
            if row["chain"] != "*" and row["item"]:
                items[int(row["chain"])] += 1
    return items


# Where finished groups join those still working (the finished rule coalesce), every rank ends up stepping the
# longest chain's last items: at least this share of the ranks times its items (study::simulated_rank_items).
MERGED_SHARE = 1.2


def rank_items(trace, nprocs, rule=""):
    items = chain_items(trace)
    chains = max(items) + 1
    base, extra = divmod(nprocs, chains)
    initial = sum(items[c] * (base + 1 if c < extra else base) for c in range(chains))
    return max(initial, MERGED_SHARE * nprocs * max(items.values())) if rule == "coalesce" else initial


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


def fit(points, start):
    """(at_1024, per rank-item) minimising the squared relative error over points (x, rank-items, host CPU), >= 0."""
    def solve(columns):
        # Weighted normal equations, each row divided by its measured value.
        n = len(columns)
        a = [[0.0] * n for _ in range(n)]
        b = [0.0] * n
        for x, ri, y in points:
            row = [x, ri]
            row = [row[c] / y for c in columns]
            target = (y - start) / y
            for i in range(n):
                b[i] += row[i] * target
                for j in range(n):
                    a[i][j] += row[i] * row[j]
        if n == 1:
            return [b[0] / a[0][0]]
        det = a[0][0] * a[1][1] - a[0][1] * a[1][0]
        return [(b[0] * a[1][1] - b[1] * a[0][1]) / det, (a[0][0] * b[1] - a[1][0] * b[0]) / det]
    both = solve([0, 1])
    if both[0] >= 0 and both[1] >= 0:
        return both[0], both[1]
    if both[1] < 0:
        return max(0.0, solve([0])[0]), 0.0
    return 0.0, max(0.0, solve([1])[0])


def fit_power(samples, start):
    """(power, at_1024, per rank-item): the power on the grid whose least-squares costs leave the smallest squared
    relative error over samples (P, rank-items, host CPU)."""
    best = None
    for power in POWERS:
        points = [((p / 1024) ** power, ri, y) for p, ri, y in samples]
        at_1024, per = fit(points, start)
        error = sum(((start + at_1024 * x + per * ri - y) / y) ** 2 for x, ri, y in points)
        if best is None or error < best[0]:
            best = (error, power, at_1024, per)
    return best[1:]


def runs_and_lines(name):
    """(runs.csv rows with their host CPU, the printed lines, the wall seconds) of one tuning advice."""
    folder = os.path.join(HERE, name)
    with open(os.path.join(folder, "provenance.csv"), encoding="utf-8") as f:
        cpu = {r["run_id"]: float(r["host_cpu_s"]) for r in csv.DictReader(f)}
    with open(os.path.join(folder, "runs.csv"), encoding="utf-8") as f:
        runs = [(r, cpu[r["run_id"]]) for r in csv.DictReader(f)]
    with open(os.path.join(folder, "advise-lines.txt"), encoding="utf-8") as f:
        lines = f.read()
    with open(os.path.join(folder, "advise.time"), encoding="utf-8") as f:
        m = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)", f.read())
    return runs, lines, 3600 * int(m.group(1) or 0) + 60 * int(m.group(2)) + float(m.group(3))


def fit_wall():
    """fit-wall.csv: wall seconds per host CPU second, a launch's cost and a search step's, from the five advices."""
    rows = []
    for name in FOLDERS:
        runs, lines, wall = runs_and_lines(name)
        asked = [cpu for r, cpu in runs if r["nprocs"] in ("64", "1024")]
        main_s = int(re.findall(rf"\[point {len(asked)} of {len(asked)}, (\d+) s elapsed", lines)[-1])
        rows.append((name, len(asked), sum(asked), main_s, wall, runs, lines))
    # 2 x elapsed = a x CPU + launch x simulations, least squares over the advices.
    sxx = sum(c * c for _, _, c, _, _, _, _ in rows)
    sxn = sum(c * n for _, n, c, _, _, _, _ in rows)
    snn = sum(n * n for _, n, _, _, _, _, _ in rows)
    sxy = sum(c * 2 * e for _, _, c, e, _, _, _ in rows)
    sny = sum(n * 2 * e for _, n, _, e, _, _, _ in rows)
    det = sxx * snn - sxn * sxn
    per_cpu, launch = (sxy * snn - sny * sxn) / det, (sxx * sny - sxn * sxy) / det
    out = []
    for name, n, cpu, main_s, wall, runs, lines in rows:
        searched = [c for r, c in runs if r["nprocs"] not in ("64", "1024")]
        steps = [int(k) for k in re.findall(r"advise: searching \d+ ranks, .*?: (\d+) simulations", lines)]
        priced, i = 0.0, 0
        for k in steps:
            host = [per_cpu * c + launch for c in searched[i:i + k]]
            i += k
            if host:
                priced += max(max(host), sum(host) / min(2, k))
        out.append([name, n, f"{cpu:.1f}", main_s, f"{(per_cpu * cpu + launch * n) / 2:.1f}", len(steps),
                    f"{wall - main_s:.1f}", f"{priced:.1f}", f"{(wall - main_s - priced) / len(steps):.3f}"])
    step = statistics.mean(float(r[-1]) for r in out)
    with open(os.path.join(HERE, "fit-wall.csv"), "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["advice", "simulations", "host_cpu_s", "elapsed_s", "modelled_s", "search_steps", "search_s",
                    "search_simulations_s", "per_step_s", "wall_per_cpu", "launch_s", "step_s"])
        for r in out:
            w.writerow(r + [f"{per_cpu:.3f}", f"{launch:.3f}", f"{step:.3f}"])
    print(f"wall per host CPU second {per_cpu:.3f}, a launch {launch:.3f} s, a search step {step:.3f} s")


def main():
    cpu = {name: host_cpu(name) for name in FOLDERS}
    setups = sorted({(b, rule) for _, b, rule in cpu["short"]})
    samples = {s: [(p, rank_items(trace, p, s[1]), cpu[name][(p, *s)])
                   for name, trace in FOLDERS.items() for (p, *setup) in cpu[name] if tuple(setup) == s]
               for s in setups}
    start = statistics.median(cpu[name][(64, *s)] for s in setups for name in ("short", "short-2"))
    for _ in range(2):  # the start-up less the other terms of the smallest simulations, then the costs again
        costs = {s: fit_power(samples[s], start) for s in setups}
        start = statistics.median(
            cpu[name][(64, *s)] - costs[s][1] * (64 / 1024) ** costs[s][0] - costs[s][2] * rank_items(FOLDERS[name], 64, s[1])
            for s in setups for name in ("short", "short-2"))
    costs = {s: fit_power(samples[s], start) for s in setups}
    rows = []
    for s in setups:
        power, at_1024, per = costs[s]
        off = [100 * (start + at_1024 * (p / 1024) ** power + per * ri - y) / y for p, ri, y in samples[s]]
        rows.append([s[0], s[1], f"{power:.2f}", f"{at_1024:.2f}", f"{1e6 * per:.1f}", f"{start:.2f}",
                     len(samples[s]), f"{min(off):.0f}", f"{max(off):.0f}"])
    fit_wall()
    with open(os.path.join(HERE, "fit.csv"), "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["balancer", "finished", "power", "at_1024_s", "rank_item_us", "start_s", "samples",
                    "in_sample_low_pct", "in_sample_high_pct"])
        w.writerows(rows)
    for r in rows:
        print(",".join(map(str, r)))


if __name__ == "__main__":
    main()
