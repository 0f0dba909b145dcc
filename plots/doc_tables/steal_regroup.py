# SPDX-License-Identifier: BSD-3-Clause
"""Tables of docs/explanation/steal-vs-regroup.md (and their summaries in docs/results.md): moving chains
against regrouping, as plots/steal_vs_regroup.py groups the runs."""
from collections import defaultdict

import steal_vs_regroup as svr
from mcmclb_csv import InputError
from mcmclb_stats import Summary

from .common import (Inputs, METHODS, compare_ratio_text, keyed, merged_order, refuse_mixed, table_text,
                     time_with_interval)


def svr_data(folder):
    """(nprocs, {panel: {set-up: {W: Cell}}}, simulated) of a steal-vs-regroup results folder, as
    plots/steal_vs_regroup.py groups it: its largest rank count, medians over repetitions and then over seeds."""
    rows, nprocs = svr.chosen_rows(Inputs.read(folder, need=svr.COLUMNS), None)
    data = {panel: {label: {c.w: c for c in line} for label, line in labels.items()}
            for panel, labels in svr.series(rows).items()}
    refuse_mixed({(panel, label, w, seed): runs for panel, labels in data.items() for label, cells in labels.items()
                  for w, c in cells.items() for seed, runs in c.runs.items()}, f"{folder}/runs.csv")
    return nprocs, data, rows[0]["backend"] == "smpi"


def seeds_text(c, brackets="()"):
    """time / ideal of a Cell: over several seeds the median of the seeds' medians with their range in brackets;
    one seed: its median, with its repetitions' interval on real MPI."""
    if len(c.per_seed) > 1:
        return f"{c.ratio:.3f} {brackets[0]}{c.per_seed[0]:.3f}-{c.per_seed[-1]:.3f}{brackets[1]}"
    return svr.summary_text(c.summary)


def counts_text(c):
    """The regroupings (rg) and migrated chains (mig) per process of a Cell, each where its balancer does that."""
    balancer = next(iter(c.runs.values()))[0]["balancer"]
    parts = ([] if balancer in ("none", "steal", "stealrandom") else [f"{c.regroups:.1f} rg"]) + \
        ([f"{c.migrated:.2f} mig"] if balancer.startswith("steal") else [])
    return f" ({', '.join(parts)})" if parts else ""


SEED_COLUMNS = [("none", "none"), ("collective(16)", "collective(16) create"), ("lookahead(1)", "lookahead(1) range"),
                ("mostwork(1)", "mostwork(1) range"), ("mostwork(1) intercomm", "mostwork(1) intercomm"),
                ("steal", "steal"), ("stealrandom", "stealrandom"), ("stealmerge(1)", "stealmerge(1) range")]


def steal_vs_regroup_seeds(inputs):
    """One row per workload and W, one column per set-up of SEED_COLUMNS the folder holds (lookahead, mostwork and
    stealmerge with range): time / ideal as steal_vs_regroup.py computes it. counts=yes adds the regroupings and
    migrated chains per process."""
    _, data, _ = svr_data(inputs.folders[0])
    counts = inputs.choice("counts", ["yes", "no"]) == "yes"
    columns = [(head, label) for head, label in SEED_COLUMNS if any(label in labels for labels in data.values())]
    rows = []
    for panel, labels in data.items():
        for w in sorted({w for cells in labels.values() for w in cells}):
            cells = [labels.get(label, {}).get(w) for _, label in columns]
            rows.append([panel, str(w)] + ["" if c is None else seeds_text(c) + (counts_text(c) if counts else "")
                                           for c in cells])
    return table_text(["workload", "W"] + [head for head, _ in columns], rows)


def cell(folder, data, panel, label, w):
    """The Cell of a set-up at W in a panel of svr_data; InputError naming the folder where it has none."""
    try:
        return data[panel][label][w]
    except KeyError:
        raise InputError(f"{folder}/runs.csv: no valid {label} run of {panel} at W = {w} (allowed: a folder "
                         f"holding every set-up the table shows)") from None


def steal_vs_regroup_summary(inputs):
    """README's summary: per workload and W (W=1,8 by default), for each folder (simulated, then real) none, the
    better of lookahead(1) and mostwork(1), steal and stealmerge(1), time / ideal to two decimals."""
    ws = inputs.numbers("W", [1, 8])
    parts = [svr_data(folder) for folder in inputs.folders]
    header = ["workload", "W"]
    for nprocs, _, simulated in parts:
        where = f"simulated, {nprocs} ranks" if simulated else f"real, P = {nprocs}"
        header += [f"{where}: none", "best regrouping", "steal", "stealmerge"]
    rows = []
    for panel in parts[0][1]:
        for w in ws:
            cells = [panel, str(w)]
            for folder, (_, data, _) in zip(inputs.folders, parts):
                none, lookahead, mostwork, steal, stealmerge = (
                    cell(folder, data, panel, label, w).ratio for label in
                    ("none", "lookahead(1) range", "mostwork(1) range", "steal", "stealmerge(1) range"))
                cells += [f"{v:.2f}" for v in (none, min(lookahead, mostwork), steal, stealmerge)]
            rows.append(cells)
    return table_text(header, rows)


def steal_vs_regroup_sizes(inputs):
    """One row per set-up, one column per workload and folder (its rank count): time / ideal at one W (W=8), the
    seeds' range in square brackets, with the regroupings and migrated chains per process; – where a folder lacks
    the set-up."""
    w = inputs.numbers("W", [8])[0]
    parts = [svr_data(folder) for folder in inputs.folders]
    labels = merged_order([list(labels) for _, data, _ in parts for labels in data.values()])
    panels = list(parts[0][1])
    header = ["set-up"] + [f"{panel}, {nprocs}" for panel in panels for nprocs, _, _ in parts]
    rows = []
    for label in labels:
        cells = [label]
        for panel in panels:
            for _, data, _ in parts:
                c = data.get(panel, {}).get(label, {}).get(w)
                cells.append("–" if c is None else seeds_text(c, "[]") + counts_text(c))
        rows.append(cells)
    return table_text(header, rows)


FAMILY = ["none", "steal", "stealrandom", "collective", "lookahead", "mostwork", "stealmerge"]


def compute_layout(data):
    """The layout of a compute-mode table: its columns [(header, panel, W)], one per move kind and W, and its rows
    [(set-up, [Cell or None per column])], the paper's rules first, then pays."""
    columns = []
    for panel, labels in data.items():
        cells = [c for line in labels.values() for c in line.values()]
        move = next(iter(cells[0].runs.values()))[0]["move"]
        columns += [(f"{move}-atom, W = {w}", panel, w) for w in sorted({c.w for c in cells})]
    runs = {label: next(iter(next(iter(line.values())).runs.values()))[0]
            for labels in data.values() for label, line in labels.items()}

    def order(label):
        r = runs[label]
        return (r.get("finished") == "pays", FAMILY.index(r["balancer"]) if r["balancer"] in FAMILY else len(FAMILY),
                METHODS.index(r["method"]) if r["method"] in METHODS else len(METHODS))
    return columns, [(label, [data[panel].get(label, {}).get(w) for _, panel, w in columns])
                     for label in sorted(runs, key=order)]


def steal_vs_regroup_compute(inputs):
    """Compute mode: one row per set-up (the paper's rules first, then pays), one column per move kind and W: time /
    ideal with the regroupings or migrated chains per process."""
    _, data, _ = svr_data(inputs.folders[0])
    columns, lines = compute_layout(data)
    rows = [[label] + ["" if c is None else seeds_text(c) + counts_text(c) for c in cells] for label, cells in lines]
    return table_text(["set-up"] + [head for head, _, _ in columns], rows)


def steal_vs_regroup_compute_real(inputs):
    """Compute mode on real MPI, laid out as steal_vs_regroup_compute: none's median time with its 95 % interval,
    every other set-up's median time / none's with the interval mcmclb compare forms, and its regroupings or migrated
    chains per process. Each set-up's repetitions are its samples (one workload, no seeds)."""
    folder = inputs.folders[0]
    _, data, simulated = svr_data(folder)
    if simulated:
        raise InputError(f"{folder}/runs.csv: simulated runs (allowed: real MPI runs, which have intervals)")
    columns, lines = compute_layout(data)

    def times(c):
        return Summary([r["time_s"] for runs in c.runs.values() for r in runs])
    none = dict(lines)["none"]
    rows = []
    for label, cells in lines:
        if label == "none":
            rows.append([label] + ["" if c is None else time_with_interval(times(c)) for c in cells])
            continue
        rows.append([label] + ["" if c is None or base is None else
                               compare_ratio_text(times(base), times(c)) + counts_text(c)
                               for c, base in zip(cells, none)])
    return table_text(["set-up"] + [head for head, _, _ in columns], rows)


def regrouping_against_thieves(inputs):
    """The verdicts of a steal-vs-regroup folder per draw (workload, W and workload seed; a cyclic workload is one
    draw per W): how often the better regrouping balancer (lookahead(1) or mostwork(1) with range, by median) is
    faster than the better thief (steal or stealrandom) and, on real runs, with the two medians' 95 % intervals
    apart; the thief's time over the regrouping's; stealmerge(1) over the better regrouping at W >= 4 and below; the
    fastest set-up of each draw; stealrandom over steal per case (medians over seeds); and how often collective(16)
    is slower than none."""
    folder = inputs.folders[0]
    _, data, simulated = svr_data(folder)
    regroupings, thieves = ("lookahead(1) range", "mostwork(1) range"), ("steal", "stealrandom")
    needed = regroupings + thieves + ("none", "collective(16) create", "stealmerge(1) range")
    draws, cases = [], []
    for panel, labels in data.items():
        for w in sorted({w for cells in labels.values() for w in cells}):
            cells = {label: cell(folder, data, panel, label, w) for label in needed}
            cases.append(cells["stealrandom"].ratio / cells["steal"].ratio)
            for seed in cells["none"].seeds:
                draws.append((w, {label: c.seeds[seed] for label, c in cells.items()}))

    def best(found, labels):
        return min((found[label] for label in labels), key=lambda s: s.median)

    faster, apart, ratios, merge_high, merge_low, fastest, collective = 0, 0, [], [], [], defaultdict(int), 0
    for w, found in draws:
        r, t = best(found, regroupings), best(found, thieves)
        faster += r.median < t.median
        apart += r.has_interval and t.has_interval and r.hi < t.lo
        ratios.append(t.median / r.median)
        (merge_high if w >= 4 else merge_low).append(found["stealmerge(1) range"].median / r.median)
        fastest[min(found, key=lambda label: found[label].median).removesuffix(" range")] += 1
        collective += found["collective(16) create"].median > found["none"].median
    n = len(draws)

    def extent(values):
        return f"{min(values):.2f}-{max(values):.2f}" if values else "-"
    rows = [["the better regrouping faster than the better thief", f"{faster} of {n}",
             f"the thief's time / the regrouping's: {extent(ratios)}"],
            ["... with the two medians' 95 % intervals apart", "-" if simulated else f"{apart} of {n}",
             "simulated: one deterministic run per point" if simulated else ""],
            ["`stealmerge(1)` / the better regrouping, W ≥ 4", f"{len(merge_high)}", extent(merge_high)],
            ["`stealmerge(1)` / the better regrouping, W < 4", f"{len(merge_low)}", extent(merge_low)],
            ["fastest set-up", f"{n}", ", ".join(f"`{label}` {count}" for label, count in
                                                  sorted(fastest.items(), key=lambda item: -item[1]))],
            ["`stealrandom` / `steal` (medians over seeds, per case)", f"{len(cases)} cases", extent(cases)],
            ["`collective(16)` slower than `none`", f"{collective} of {n}", ""]]
    return table_text(["verdict", "draws", "value"], rows)


def before_after(inputs):
    """One balancer (balancer=NAME) simulated at two commits, one folder each (before, then after): one row per P,
    each commit's time / ideal (time_s), host CPU and peak RSS (provenance.csv host_cpu_s and host_peak_rss_kib),
    and a reference balancer's (reference=NAME) time / ideal and host CPU at both, as the range over the two."""
    balancer, reference = inputs.option("balancer"), inputs.option("reference")
    if not balancer or not reference:
        raise InputError(f"block {inputs.name}: needs balancer=NAME and reference=NAME (allowed: two balancers of "
                         f"the folders)")
    sides = []
    for folder in inputs.folders:
        prov = {r["run_id"]: r for r in Inputs.read(folder, "provenance.csv",
                                                    need=("run_id", "host_cpu_s", "host_peak_rss_kib"))}
        chosen = []
        for r in Inputs.read(folder, need=("run_id", "nprocs", "balancer", "time_s", "ideal_s", "valid",
                                           "git_commit")):
            if r["valid"] is True and r["balancer"] in (balancer, reference):
                if r["run_id"] not in prov or prov[r["run_id"]]["host_cpu_s"] is None:
                    raise InputError(f"{folder}/provenance.csv: no host_cpu_s for run {r['run_id']} (allowed: "
                                     f"runs of a sweep that records host cost)")
                chosen.append(((r["nprocs"], r["balancer"]), dict(r, **prov[r["run_id"]])))
        runs = keyed(chosen, f"{folder}/runs.csv")
        commits = {r["git_commit"][:7] for r in runs.values()}
        if len(commits) != 1:
            raise InputError(f"{folder}/runs.csv: {len(commits)} commits (allowed: one commit per folder)")
        sides.append((commits.pop(), runs))
    rows = []
    for p in sorted({p for _, runs in sides for p, _ in runs}):
        line = [str(p)]
        for folder, (_, runs) in zip(inputs.folders, sides):
            r = runs.get((p, balancer))
            if r is None or (p, reference) not in runs:
                raise InputError(f"{folder}/runs.csv: no valid {balancer} and {reference} run at P = {p} (allowed: "
                                 f"both balancers at every P of either folder)")
            line.append(f"{r['time_s'] / r['ideal_s']:.3f} ({r['time_s']:.7f} s), {r['host_cpu_s']:.1f} s, "
                        f"{r['host_peak_rss_kib'] / 1024:.0f} MiB")
        refs = [runs[(p, reference)] for _, runs in sides]
        ratios = sorted({f"{r['time_s'] / r['ideal_s']:.3f}" for r in refs})
        cpu = sorted({f"{r['host_cpu_s']:.1f}" for r in refs}, key=float)
        line.append(f"{'-'.join(ratios)}, {'-'.join(cpu)} s")
        rows.append(line)
    (before, _), (after, _) = sides
    return table_text(["P", f"`{balancer}` before ({before}): time / ideal, host CPU, peak RSS",
                       f"after ({after})", f"`{reference}`, both"], rows)


def thieves_against_regrouping(inputs):
    """One list item per folder (1-5 folders, one rank count each, simulated or real): per draw (workload, W and
    workload seed), the better thief's time (steal or stealrandom, those the folder holds) over the better
    regrouping's (lookahead(1) or mostwork(1) with range), by median: its range, in how many draws regrouping is
    ahead (on real runs also with the two medians' 95 % intervals apart), and the draws of the least and the most."""
    regroupings, thieves = ("lookahead(1) range", "mostwork(1) range"), ("steal", "stealrandom")
    items = []
    for folder in inputs.folders:
        nprocs, data, simulated = svr_data(folder)
        found, apart = [], 0
        for panel, labels in data.items():
            held = [label for label in thieves if label in labels]
            if not held:
                raise InputError(f"{folder}/runs.csv: no steal or stealrandom run of {panel} (allowed: a folder "
                                 f"holding a thief and lookahead(1) and mostwork(1) with range)")
            for w in sorted({w for cells in labels.values() for w in cells}):
                cells = {label: cell(folder, data, panel, label, w) for label in regroupings + tuple(held)}
                for seed in cells[held[0]].seeds:
                    r = min((cells[label].seeds[seed] for label in regroupings), key=lambda x: x.median)
                    t = min((cells[label].seeds[seed] for label in held), key=lambda x: x.median)
                    apart += r.has_interval and t.has_interval and r.hi < t.lo
                    name = f"{panel} W = {w}" + (f" seed {seed}" if len(cells[held[0]].seeds) > 1 else "")
                    found.append((t.median / r.median, name))
        ahead = sum(1 for ratio, _ in found if ratio > 1)
        (low, low_at), (high, high_at) = min(found), max(found)
        which = "the better thief" if len(held) > 1 else f"`{held[0]}`"
        kind = "simulated" if simulated else "measured"
        intervals = "" if simulated else f", with the two medians' 95 % intervals apart in {apart}"
        items.append(f"- {nprocs} ranks, {kind}: {which} takes {low:.2f}-{high:.2f} × the better regrouping's time. "
                     f"Regrouping is ahead in {ahead} of {len(found)} draws{intervals}. The least is on {low_at}, "
                     f"the most on {high_at}.")
    return "\n".join(items)
