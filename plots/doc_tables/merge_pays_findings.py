# SPDX-License-Identifier: BSD-3-Clause
"""The sentences of docs/explanation/merge-pays.md that state figures, computed from the folders their blocks name
(the tables beside them are merge_pays.py's): what the simulated single-atom and all-atom studies show, what a
wrong model does, the merges that carry no work (also docs/explanation/trace-lj-at-scale.md), and what the real
pays pair at P = 2 shows."""
import math
import re

import steal_vs_regroup as svr
from collective_floor import chain_items
from mcmclb_csv import InputError
from mcmclb_stats import median

from .common import TIMES, Inputs, by_setup, calibrations, median_of, none_runs, setup_name, wrapped
from .merge_pays import pays_pair
from .steal_regroup_findings import bound


def ratios(folder):
    """({(P, set-up): time / none}, {(P, set-up): regroupings per rank}, [P]) of a merge-pays folder, by median."""
    groups, setups = by_setup(Inputs.read(folder, need=svr.COLUMNS), f"{folder}/runs.csv")
    sizes = sorted({p for p, _ in groups})
    none = {p: median_of(none_runs(groups, p, folder)) for p in sizes}
    ratio = {(p, s): median_of(runs) / none[p] for (p, s), runs in groups.items() if s != "none"}
    regroups = {(p, s): median_of(runs, "regroups_avg") for (p, s), runs in groups.items() if s != "none"}
    return ratio, regroups, sizes


def short(setup):
    """A set-up's balancer as the prose names it: async, lookahead, mostwork(i), collective(i)."""
    name = setup.split()[0]
    return name if name.startswith(("mostwork", "collective")) else name.split("(")[0]


def extent(values, digits=2):
    return f"{min(values):.{digits}f}-{max(values):.{digits}f}"


def pays_whole(inputs):
    """The whole time a user waits under pays, its calibration counted (it runs before the clock): every pays
    set-up's median time plus calibration over none's at the smallest P, then from the next P on, how many are
    faster than none and the slowest (simulated)."""
    folder = inputs.folders[0]
    groups, _ = by_setup(Inputs.read(folder, need=svr.COLUMNS + ["calibration_s"]), f"{folder}/runs.csv")
    sizes = sorted({p for p, _ in groups})
    whole = {}
    for (p, s), runs in groups.items():
        if s.endswith(" pays"):
            added = calibrations(runs, f"{folder}/runs.csv")
            whole[(p, s)] = median([r["time_s"] + c for r, c in zip(runs, added)]) / median_of(
                none_runs(groups, p, folder))
    later = [v for (p, _), v in whole.items() if p != sizes[0]]
    if len(sizes) < 2 or not later:
        raise InputError(f"{folder}/runs.csv: no pays runs at two P (allowed: a merge-pays study)")
    first = [v for (p, _), v in whole.items() if p == sizes[0]]
    faster = sum(1 for v in later if round(v, 3) < 1)
    return wrapped(
        f"With its calibration, `pays` takes {extent(first, 3)}{TIMES} `none`'s time at P = {sizes[0]}; from "
        f"P = {sizes[1]} on, {faster} of {len(later)} points beat `none`, the slowest at {max(later):.3f}{TIMES} "
        f"(simulated, [CSV](../{folder.removeprefix('docs/')}/runs.csv)).")


def pays_single_atom(inputs):
    """Single-atom walkers: whether every set-up under pays takes none's time to the last digit, and the paper's
    rules' time / none over every P."""
    folder = inputs.folders[0]
    ratio, _, _ = ratios(folder)
    pays = [v for (_, s), v in ratio.items() if s.endswith(" pays")]
    rule = [v for (_, s), v in ratio.items() if not s.endswith(" pays")]
    if not pays or not rule:
        raise InputError(f"{folder}/runs.csv: no runs under pays and under a paper rule (allowed: a merge-pays study)")
    equal = all(v == 1 for v in pays)
    return wrapped(f"So every group works alone, as under `none`, {'to the last digit' if equal else 'within '}"
            f"{'' if equal else extent(pays, 3)}. The paper's rule makes the same study {extent(rule, 1)}{TIMES} "
            f"slower.")


def pays_all_atom(inputs):
    """All-atom walkers: how much faster than none each balancer but collective is under pays from the second P
    on, whether any pays run is slower than none, the balancer that gains most, the smallest P where pays runs as
    none and what the paper's rules lose there, and their regroupings and the set-ups slower than none at the
    largest P they ran."""
    folder = inputs.folders[0]
    ratio, regroups, sizes = ratios(folder)
    pays = {key: v for key, v in ratio.items() if key[1].endswith(" pays")}
    rule = {key: v for key, v in ratio.items() if not key[1].endswith(" pays")}
    first, later = sizes[0], sizes[1:]
    gaining = [v for (p, s), v in pays.items() if p in later and not s.startswith("collective")]
    if not gaining or not rule:
        raise InputError(f"{folder}/runs.csv: no pays and paper-rule runs at two P (allowed: a merge-pays study)")
    slower = [key for key, v in pays.items() if round(v, 3) > 1]
    best = {}
    for (p, s), v in pays.items():
        if p in later and not s.startswith("collective"):
            name = s.split("(")[0].split()[0]
            best[name] = min(best.get(name, v), v)
    most = min(best, key=best.get)
    mostly = [v for (p, s), v in pays.items() if p in later and s.startswith(most)]
    at_first = [v for (p, s), v in pays.items() if p == first]
    if any(round(v, 3) != 1 for v in at_first):
        raise InputError(f"{folder}/runs.csv: pays differs from none at P = {first} (allowed: a folder where it "
                         f"runs as none there)")
    flat = sorted(s for (p, s), v in rule.items() if p == first and round(v, 3) == 1)
    losing = [100 * (v - 1) for (p, s), v in rule.items() if p == first and s not in flat]
    if any(round(v, 3) != 1 for (p, s), v in pays.items() if s.startswith("collective")):
        raise InputError(f"{folder}/runs.csv: collective under pays differs from none (allowed: a folder where it "
                         f"runs as none)")
    text = [
        f"Under `pays`, its calibration aside, every balancer but `collective` is {round(100 * (1 - max(gaining)))}-"
        f"{round(100 * (1 - min(gaining)))} % faster than `none` from P = {later[0]} on, and "
        + ("none is slower than `none` anywhere" if not slower else
           f"{len(slower)} set-ups are slower than `none` somewhere")
        + f"; `{most}` gains most ({extent(mostly)}{TIMES}). At P = {first} no chain with items is large enough to "
        f"gain. There `pays` runs as `none`, where the paper's rule loses {extent(losing, 0)} % (every balancer but "
        + ", ".join(s.split()[0] for s in flat) + ", at 1.000). "
        + "`collective` under `pays` equals `none`: its schedule prediction finds that waiting for the slowest group "
        "at every item costs more than its merges save."]
    heavy = [s for s in {s for _, s in rule} if s.startswith("collective(16)")]
    counted = [v for (p, s), v in regroups.items() if (p, s) in rule and s not in heavy]
    heavy_counts = [v for (p, s), v in regroups.items() if (p, s) in rule and s in heavy]
    top = max(p for p, _ in rule)
    losers = [(s, v) for (p, s), v in rule.items() if p == top and round(v, 3) > 1]
    text.append(
        f"The paper's rule regroups {extent(counted, 1)} times per rank"
        + (f" ({heavy[0].split()[0]}: {extent(heavy_counts, 1)})" if heavy else "")
        + f". At P = {top} it is slower than `none` for "
        + (", ".join(f"{short(s)} ({v:.3f})" for s, v in losers[:-1]) + (" and " if len(losers) > 1 else "")
           + f"{short(losers[-1][0])} ({losers[-1][1]:.3f})" if losers else "no set-up") + ".")
    return "\n\n".join(wrapped(paragraph) for paragraph in text)


# The columns in which a run and the none run it is compared with must agree: the same point but for the balancer.
SAME_POINT = ("nprocs", "G", "T_ms", "workload", "workload_seed", "workload_file", "workload_map", "workload_scaling",
              "work_mode", "atoms", "move", "moves_per_item", "jitter_pct", "work_seed", "chains_per_group",
              "platform", "backend")


def workless_merges(inputs):
    """For each run of the folder with merges in its events.csv: its time against the none run of the same point
    (SAME_POINT), and how many of its merges join groups with no work left (events.csv items_left 0), one sentence
    each. InputError where such a run has no none run to compare with."""
    folder = inputs.folders[0]
    runs = Inputs.read(folder, need=["run_id", "balancer", "time_s"])
    events = Inputs.read(folder, "events.csv", need=["run_id", "kind", "items_left"])
    merges = {}
    for e in events:
        if e["kind"] == "merge":
            merges.setdefault(e["run_id"], []).append(e)
    sentences = []
    for r in runs:
        if r["run_id"] not in merges:
            continue
        none = [n for n in runs if n["balancer"] == "none" and all(n.get(c) == r.get(c) for c in SAME_POINT)]
        if not none:
            raise InputError(f"{folder}/runs.csv: run {r['run_id']} has no none run at its point (allowed: a folder "
                             f"holding none beside each run that merges)")
        t, base = r["time_s"], none[0]["time_s"]
        idle = sum(1 for e in merges[r["run_id"]] if e["items_left"] == 0)
        sentences.append(f"`none` takes {base:.6g} s and `{setup_name(r)}` {t:.6g} s ({t / base:.4f}{TIMES}). Of its "
                         f"{len(merges[r['run_id']])} merges, {idle} join groups that have no work left (events.csv "
                         f"`items_left` 0).")
    return wrapped(" ".join(sentences))


def sensitivity_ratios(folder):
    """{(P, set-up, c, r): time / none} of a sensitivity folder (c, r: work.model_compute and work.model_reduce, 1
    where empty), and {same key: regroupings per rank}; none's run is the one as measured."""
    def key(r):
        return setup_name(r, finished=False), r.get("model_compute") or 1.0, r.get("model_reduce") or 1.0
    groups, _ = by_setup(Inputs.read(folder, need=svr.COLUMNS), f"{folder}/runs.csv", key)
    ratio, regroups = {}, {}
    for (p, (name, c, r)), runs in groups.items():
        if name != "none":
            ratio[(p, name, c, r)] = median_of(runs) / median_of(none_runs(groups, p, folder, ("none", 1.0, 1.0)))
            regroups[(p, name, c, r)] = median_of(runs, "regroups_avg")
    if not any(c != r for _, _, c, r in ratio) or not any(c == r == 1 for _, _, c, r in ratio):
        raise InputError(f"{folder}/runs.csv: no runs with the model as measured and with a wrong factor (allowed: "
                         f"a folder of configs/merge-pays-sensitivity.yaml)")
    return ratio, regroups


def optimistic(c, r):
    """Whether factors c (compute) and r (reduction) make splitting a trial look worth more than measured."""
    return c >= 1 >= r and (c, r) != (1, 1)


def one_error(c, r):
    return (c == 1) != (r == 1)


def losses(ratio, keep):
    """[(P, set-up, time / none)] of the points keep(c, r) selects that are slower than none at three decimals."""
    return [(p, name, v) for (p, name, c, r), v in ratio.items() if keep(c, r) and round(v, 3) > 1]


def sensitivity_answer(inputs):
    """The opening answer's list item on a wrong model: whether any pays run is slower than none with one factor
    wrong, and what the points with both factors wrong in the optimistic direction lose."""
    ratio, _ = sensitivity_ratios(inputs.folders[0])
    single = sorted({max(c, r, 1 / c, 1 / r) for _, _, c, r in ratio if one_error(c, r)})
    both = sorted({max(c, 1 / r) for _, _, c, r in ratio if optimistic(c, r) and not one_error(c, r)})
    if len(single) != 1 or len(both) != 1:
        raise InputError(f"{inputs.folders[0]}/runs.csv: wrong factors of several sizes (allowed: one factor, e.g. "
                         f"0.5 and 2)")
    lost = losses(ratio, one_error)
    worst = losses(ratio, lambda c, r: optimistic(c, r) and not one_error(c, r))
    text = (f"- *Simulated*, a model wrong by a factor of {single[0]:g} in one cost: "
            + ("no balancer under `pays` is slower than `none`" if not lost else
               f"{len(lost)} points under `pays` are slower than `none`")
            + f". Wrong by {both[0] ** 2:g} in the optimistic direction, "
            + ("no point loses." if not worst else
               ("one point loses" if len(worst) == 1 else f"{len(worst)} points lose up to")
               + f" {100 * (max(v for *_, v in worst) - 1):.1f} %."))
    return wrapped(text).replace("\n", "\n  ")


def sensitivity_findings(inputs):
    """What the sensitivity table shows: how far apart the runs with both factors equal are (the model's scale
    alone), the ratio of compute to reduction not deciding alone, and one list item per direction of error: one
    factor wrong pessimistic, one wrong optimistic, both wrong optimistic."""
    folder = inputs.folders[0]
    ratio, regroups = sensitivity_ratios(folder)
    names = sorted({name for _, name, _, _ in ratio}, key=lambda n: [k[1] for k in ratio].index(n))
    sizes = sorted({p for p, *_ in ratio})
    equal = sorted({c for _, _, c, r in ratio if c == r})
    spread = {(p, name): [ratio[(p, name, c, c)] for c in equal if (p, name, c, c) in ratio]
              for p in sizes for name in names}
    apart = [(max(v) - min(v), p, name, v) for (p, name), v in spread.items() if round(max(v) - min(v), 3)]
    others = [f"{c:g} and {c:g}" for c in equal if c != 1]
    text = (f"The runs with both factors equal (1 and 1, and, not in the table, {' and '.join(others)}) are within "
            f"{bound(max(d for d, *_ in apart) if apart else 0)} of one another.")
    if apart:
        text += (" They are equal for every balancer but "
                 + " and ".join(f"{name.split()[0]} at P = {p}, {extent(v, 3)}" for _, p, name, v in apart) + ".")
    pairs = sorted({(c, r) for _, _, c, r in ratio if one_error(c, r) and optimistic(c, r)})
    mostwork = next(n for n in names if n.startswith("mostwork"))
    if len(pairs) == 2 and pairs[0][0] / pairs[0][1] == pairs[1][0] / pairs[1][1]:
        (c1, r1), (c2, r2) = sorted(pairs, reverse=True)
        p = sizes[0]
        text += (f" The ratio of compute to reduction alone does not decide: c {c1:g}, r {r1:g} and c {c2:g}, r {r2:g} "
                 f"predict the same ratio, yet {mostwork.split()[0]} at P = {p} is {ratio[(p, mostwork, c1, r1)]:.3f}"
                 f"{TIMES} and {ratio[(p, mostwork, c2, r2)]:.3f}{TIMES}.")
    pessimistic = [v for (p, name, c, r), v in ratio.items() if one_error(c, r) and not optimistic(c, r)]
    measured = [v for (p, name, c, r), v in ratio.items() if c == r == 1 and not name.startswith("collective")]
    if any(round(v, 3) != 1 for v in pessimistic):
        raise InputError(f"{folder}/runs.csv: a pessimistic model merges (allowed: a folder where it declines every "
                         f"merge)")
    first = [(name, v) for (p, name, c, r), v in ratio.items() if one_error(c, r) and optimistic(c, r)
             and not name.startswith("collective")]
    pair = [v for name, v in first if not name.startswith("mostwork")]
    most = [v for name, v in first if name.startswith("mostwork")]
    both = [(p, name, v) for (p, name, c, r), v in ratio.items() if optimistic(c, r) and not one_error(c, r)
            and not name.startswith("collective")]
    both_pair = [v for p, name, v in both if not name.startswith("mostwork")]
    both_most = {p: v for p, name, v in both if name.startswith("mostwork")}
    key = next((p, name, c, r) for (p, name, c, r) in ratio if name == mostwork and p == sizes[-1]
               and optimistic(c, r) and not one_error(c, r))
    if {max(c, r, 1 / c, 1 / r) for _, _, c, r in ratio} != {1, 2}:
        raise InputError(f"{folder}/runs.csv: factors other than 0.5, 1 and 2 (allowed: those the sentences name: "
                         f"half, as measured, twice)")
    last = both_most[sizes[-1]]
    items = [
        f"- **A model that thinks splitting a trial is worth less than it is** (trials at half their cost, or "
        f"reductions at twice theirs) declines every merge: `pays` runs as `none` and forgoes the "
        f"{round(100 * (1 - max(measured)))}-{round(100 * (1 - min(measured)))} % gain, but loses nothing.",
        f"- **A model that thinks splitting is worth more** (trials at twice their cost, or reductions at half) takes "
        f"merges that do not pay. With one of the two errors, async and lookahead still gain ({extent(pair)}{TIMES}), "
        f"since the extra merges are into the largest chains, and mostwork gains less ({extent(most)}{TIMES}).",
        f"- With both errors at once (splitting predicted {key[2] / key[3]:g} times as valuable) async and lookahead "
        f"are at {extent(both_pair)}{TIMES} and mostwork at {both_most[sizes[0]]:.3f}{TIMES} at P = {sizes[0]}. At P = "
        f"{sizes[-1]} mostwork " + (f"loses {100 * (last - 1):.1f} % ({last:.3f}{TIMES}, {regroups[key]:.2f} "
                                    f"regroupings per rank)." if round(last, 3) > 1 else
                                    f"is at {last:.3f}{TIMES}.")]
    return wrapped(text) + "\n\n" + "\n".join(wrapped(item).replace("\n", "\n  ") for item in items)


def closing_tail(folder, done=True):
    """(the run that merges, its none run, its merges sorted by time, the time from which every chain is done) of a
    folder with one merging run: a chain is done at the first merge that finds it with no items left (events.csv
    items_left 0), every chain at the latest of those; without done, no such time (None) and no chain column read."""
    runs = Inputs.read(folder, need=["run_id", "balancer", "time_s"] + (["calibration_s"] if done else []))
    events = Inputs.read(folder, "events.csv",
                         need=["run_id", "t_s", "kind", "items_left"] + (["chain"] if done else []))
    merging = [r for r in runs if any(e["run_id"] == r["run_id"] and e["kind"] == "merge" for e in events)]
    if len(merging) != 1:
        raise InputError(f"{folder}/events.csv: {len(merging)} runs merge (allowed: one)")
    run = merging[0]
    none = [n for n in runs if n["balancer"] == "none" and all(n.get(c) == run.get(c) for c in SAME_POINT)]
    if not none:
        raise InputError(f"{folder}/runs.csv: run {run['run_id']} has no none run at its point (allowed: a folder "
                         f"holding none beside the run that merges)")
    merges = sorted((e for e in events if e["run_id"] == run["run_id"] and e["kind"] == "merge"),
                    key=lambda e: e["t_s"])
    finished = {}
    for e in merges:
        if done and e["items_left"] == 0:
            finished.setdefault(e["chain"], e["t_s"])
    return run, none[0], merges, max(finished.values(), default=None)


def closing_merges(inputs):
    """The merges of the folder's one merging run that come after every chain is done (closing_tail): how many,
    what they add to the run and what the run stood at before them against none, and whether that is within the
    run's calibration. With a second folder (a trace study), the opening answer's list item instead: what the first
    folder's closing merges add, and the second folder's mostwork under pays against none, linked as from a page of
    docs/explanation/ (where trace-lj-at-scale.md shows that folder)."""
    run, none, merges, done = closing_tail(inputs.folders[0])
    base, end = none["time_s"], run["time_s"]
    tail = [e for e in merges if e["t_s"] >= done]
    added = end - tail[0]["t_s"]
    if len(inputs.folders) == 2:
        folder = inputs.folders[1]
        trace, trace_none, _, _ = closing_tail(folder, done=False)
        if trace["balancer"] != "mostwork" or trace.get("finished") != "pays":
            raise InputError(f"{folder}/runs.csv: the run that merges is {setup_name(trace)} (allowed: mostwork under "
                             f"pays)")
        slower = trace["time_s"] / trace_none["time_s"] - 1
        return wrapped(
            f"- They add {100 * added / base:.2f} % of `none`'s time in the compute-mode study below. In the "
            f"recorded-trace study at {trace['nprocs']} simulated ranks they make `mostwork` {100 * slower:.0f} % "
            f"slower than `none` ([trace-lj-at-scale.md](trace-lj-at-scale.md), "
            f"[CSV](../{folder.removeprefix('docs/')}/runs.csv)).").replace("\n", "\n  ")
    before = tail[0]["t_s"] / base
    within = before - 1 <= run["calibration_s"] / base
    return wrapped(
        f"The last {len(tail)} of them, from {tail[0]['t_s']:.6g} s to the end, come after every chain is done and add "
        f"{1000 * added:.1f} ms ({100 * added / base:.2f} % of `none`'s time). Before them the run stood at "
        f"{before:.4f}{TIMES} `none`, {'within' if within else 'beyond'} its calibration.")


def single_atom_calibration(inputs):
    """Why pays never merges in a single-atom folder: what a reduction over 2 ranks costs there (calibration.csv
    reduce_s, its range over the runs), and that every run under pays formed its groups once (regroups_avg 1)."""
    folder = inputs.folders[0]
    runs = Inputs.read(folder, need=svr.COLUMNS)
    pays = [r for r in runs if r.get("finished") == "pays"]
    if not pays or any(r["regroups_avg"] != 1 for r in pays):
        raise InputError(f"{folder}/runs.csv: a run under pays merges, or none ran (allowed: a folder where pays "
                         f"never merges)")
    ids = {r["run_id"] for r in pays}
    reduce = [c["reduce_s"] * 1e6 for c in Inputs.read(folder, "calibration.csv", need=["run_id", "size", "reduce_s"])
              if c["run_id"] in ids and c["size"] == 2]
    if not reduce:
        raise InputError(f"{folder}/calibration.csv: no size 2 of a run under pays (allowed: a merge-pays folder)")
    cost = f"{min(reduce):.1f}" + (f"-{max(reduce):.1f}" if f"{min(reduce):.1f}" != f"{max(reduce):.1f}" else "")
    return wrapped(f"(Balancer columns: time / none.) Under `pays` the calibration finds that no chain's item is "
                   f"worked sooner by a larger group: a single-atom trial costs less than a reduction over 2 ranks, "
                   f"{cost} µs simulated (calibration.csv `reduce_s`). No run under `pays` merges.")


def model_against_chains(inputs):
    """The model's seconds per item (a predict.csv, the second argument) against what the simulation charged each
    chain (the folder's chains.csv s_per_item, 'g:seconds' per group size): how close at g = 1, how far apart in
    groups, and the largest atom count's range at each predicted size; then the regroupings per rank of async and
    lookahead under pays (from the second P on) and of the paper's rule (runs.csv)."""
    folder, path = inputs.folders
    predicted = {(r["atoms"], r["size"]): r["item_s"] for r in
                 Inputs.read_file(path, ("run_id", "atoms", "size", "item_s"), "predict.csv")}
    seen = {}
    for c in Inputs.read(folder, "chains.csv", need=["run_id", "atoms", "s_per_item"]):
        for part in (c["s_per_item"] or "").split():
            g, value = part.split(":")
            seen.setdefault((c["atoms"], int(g)), []).append(float(value))
    ones = [abs(v - predicted[key]) for key, values in seen.items() if key[1] == 1 and key in predicted
            for v in values]
    apart = [v / predicted[key] - 1 for key, values in seen.items() if key[1] > 1 and key in predicted for v in values]
    if not ones or not apart:
        raise InputError(f"{folder}/chains.csv: no chain at a size {path} predicts (allowed: the folder of the "
                         f"prediction's run)")
    sizes = sorted({m for _, m in predicted})
    top = max(a for a, _ in predicted)
    shown = [m for m in sizes if m > 1 and (top, m) in seen]
    measured = sorted({c["size"] for c in Inputs.read(folder, "calibration.csv", need=["run_id", "size"])})

    def at(m):
        values = [1000 * v for v in seen[(top, m)]]
        model = f"{1000 * predicted[(top, m)]:.2f} ms"
        if m not in measured:
            low, high = max(s for s in measured if s < m), min(s for s in measured if s > m)
            model += f", interpolated between {low} and {high}"
        return f"{extent(values)} ms at g = {m} ({'model ' if m == shown[0] else ''}{model})"
    parts = [at(m) for m in shown]
    text = [f"The simulation charges exactly this only at g = 1: there every chain's seconds per item (chains.csv "
            f"`s_per_item`, all runs) equal the model's to {math.ceil(max(ones) * 1e9)} ns. In groups they differ, "
            f"from {round(-100 * min(apart))} % below the model to {round(100 * max(apart))} % above it. At {top} atoms "
            f"they are " + " and ".join(parts[:2]) + "."
            + (" Beyond: " + " and ".join(parts[2:]) + "." if parts[2:] else "")]
    groups, _ = by_setup(Inputs.read(folder, need=svr.COLUMNS), f"{folder}/runs.csv")
    ps = sorted({p for p, _ in groups})
    pays = [median_of(runs, "regroups_avg") for (p, s), runs in groups.items() if p > ps[0] and s.endswith(" pays")
            and s.startswith(("async", "lookahead"))]
    first = {median_of(runs, "regroups_avg") for (p, s), runs in groups.items() if p == ps[0] and s.endswith(" pays")}
    rule = {(p, s): median_of(runs, "regroups_avg") for (p, s), runs in groups.items()
            if s.startswith(("async", "lookahead")) and not s.endswith(" pays")}
    rule_ps = [p for p, _ in rule]
    if first != {1.0}:
        raise InputError(f"{folder}/runs.csv: pays merges at P = {ps[0]} (allowed: a folder where it does not)")
    text.append(f"The rule follows: from P = {ps[1]} on, under `pays` async and lookahead regroup {extent(pays)} times "
                f"per rank (at P = {ps[0]}, 1.00: no merge). The paper's rule regroups {extent(list(rule.values()))} "
                f"times (P = {min(rule_ps)} to {max(rule_ps)}).")
    return "\n\n".join(wrapped(paragraph) for paragraph in text)


def model_calibration(inputs):
    """Whose calibration a prediction (a predict.csv, the one argument) is made from: the run its run_id names in
    the same folder's runs.csv (its set-up and P), that run's seconds per flop and its reductions at 2 ranks and at
    the largest size it measured (calibration.csv)."""
    path = inputs.folders[0]
    ids = {r["run_id"] for r in Inputs.read_file(path, ("run_id",), "predict.csv")}
    folder = path.rsplit("/", 1)[0]
    runs = [r for r in Inputs.read(folder, need=["run_id", "nprocs", "balancer"]) if r["run_id"] in ids]
    sizes = {c["size"]: c for c in Inputs.read(folder, "calibration.csv", need=["run_id", "size", "reduce_s",
                                                                                "s_per_flop"]) if c["run_id"] in ids}
    if len(ids) != 1 or len(runs) != 1 or 2 not in sizes:
        raise InputError(f"{path}: not one run's prediction, or its run without runs.csv and calibration.csv rows "
                         f"beside it (allowed: the output of mcmclb predict in the run's folder)")
    run, top = runs[0], max(sizes)
    flop = {c["s_per_flop"] for c in sizes.values()}
    if len(flop) != 1:
        raise InputError(f"{folder}/calibration.csv: one run with several seconds per flop (allowed: one)")
    return wrapped(f"It is from the calibration of the `{setup_name(run)}` run at P = {run['nprocs']} (simulated): "
                   f"{1e9 * flop.pop():.3f} ns per flop, reductions of {1e6 * sizes[2]['reduce_s']:.1f} µs at 2 ranks "
                   f"to {1e6 * sizes[top]['reduce_s']:.1f} µs at {top}.")


def real_pays_moves(folder, name):
    """What a real pays pair (merge_pays.pays_pair: none, one balancer under pays, perhaps a control arm) shows per
    move kind, by medians: a trial's cost (none's time over the trials of its one chain with items), a reduction
    over 2 ranks (calibration.csv reduce_s of the pays runs), whether pays merged (regroups above 1), the share by
    which pays plus its calibration ends sooner than none, pays / none, control / none, calibration / none; with the
    balancer's short name, P and the MPI library."""
    none_by_move, pays_by_move, setup, control_by_move, _ = pays_pair(folder, name)
    extra = Inputs.read(folder, need=["run_id", "nprocs", "G", "workload", "workload_scale", "workload_period",
                                      "moves_per_item", "mpi_library"])
    info = {r["run_id"]: r for r in extra}
    reduce = {}
    for c in Inputs.read(folder, "calibration.csv", need=["run_id", "size", "reduce_s"]):
        if c["size"] == 2:
            reduce[c["run_id"]] = c["reduce_s"]
    out = {}
    for move, nones in none_by_move.items():
        pays, control = pays_by_move.get(move, []), control_by_move.get(move, [])
        runs = [info[r["run_id"]] for r in nones]
        chains = {tuple(n for n in chain_items(r) if n) for r in runs if r["workload"] == "cyclic"}
        if not pays or len(chains) != 1 or len(runs) != len(nones) or len(next(iter(chains))) != 1:
            raise InputError(f"{folder}/runs.csv: {move} moves without runs under pays, or not one cyclic chain with "
                             f"items (allowed: a pays study of one working chain)")
        trials = next(iter(chains))[0] * median([r["moves_per_item"] for r in runs])
        reductions = [reduce[r["run_id"]] for r in pays if r["run_id"] in reduce]
        if len(reductions) != len(pays):
            raise InputError(f"{folder}/calibration.csv: a {move}-move run under pays without size 2 (allowed: "
                             f"calibrations of every pays run)")
        base = median_of(nones)
        out[move] = {"trial_us": 1e6 * base / trials, "trials": trials, "reduce_us": 1e6 * median(reductions),
                     "merged": median_of(pays, "regroups_avg") > 1,
                     "sooner": 1 - (median_of(pays) + median(calibrations(pays, folder))) / base,
                     "ratio": median_of(pays) / base, "control": median_of(control) / base if control else None,
                     "calibration": median(calibrations(pays, folder)) / base}
    libraries = {re.sub(r"\s*Version:\s*", " ", r["mpi_library"]) for r in extra}
    ps = {r["nprocs"] for r in extra}
    if len(libraries) != 1 or len(ps) != 1:
        raise InputError(f"{folder}/runs.csv: several MPI libraries or P (allowed: one of each)")
    return out, short(setup), ps.pop(), libraries.pop()


def pays_real_answer(inputs):
    """The answer's line on a real pays pair: P and MPI, then per move kind either how much sooner than none the
    balancer under pays ends, its calibration added (where it merged and gained), or that it runs as none."""
    folder = inputs.folders[0]
    moves, balancer, p, library = real_pays_moves(folder, inputs.name)
    parts = []
    for move, m in moves.items():
        if m["merged"] and m["sooner"] > 0:
            parts.append(f"{move}-atom, `{balancer}` under `pays` ends {round(100 * m['sooner'])} % sooner than "
                         f"`none` even with its calibration added.")
        elif not m["merged"]:
            parts.append(f"{move.capitalize()}-atom, it runs as `none`." if parts else
                         f"{move}-atom, `{balancer}` under `pays` runs as `none`.")
        else:
            raise InputError(f"{folder}/runs.csv: {move} moves merge under pays and end no sooner than none "
                             f"(allowed: a pair where pays either gains or does not merge)")
    return wrapped(f"- *Measured* on real MPI with a core per rank (P = {p}, {library}): " + " ".join(parts)
                   ).replace("\n", "\n  ")


def pays_real_findings(inputs):
    """Per move kind of a real pays pair, measured: a trial's cost against a reduction over 2 ranks (their sources
    named once); where pays merged, how much sooner it ends than none with its calibration added; where it
    declined, its ratio to none, the control arm's (what pays saves) and the calibration's share of none's time."""
    folder = inputs.folders[0]
    moves, balancer, _, _ = real_pays_moves(folder, inputs.name)
    text = []
    for move, m in moves.items():
        sources = not text
        cost = (f"Measured with {move}-atom moves, a trial costs {m['trial_us']:.2g} µs"
                + (f" (`none`'s median time over its {m['trials']:g} trials)" if sources else "")
                + f" and a reduction{' over 2 ranks' if sources else ''} {m['reduce_us']:.2f} µs"
                + (" (calibration.csv `reduce_s`)" if sources else ""))
        if m["merged"] and m["sooner"] > 0:
            text.append(f"{cost}, so the idle rank joining pays. {balancer.capitalize()} under `pays` merges and ends "
                        f"{round(100 * m['sooner'])} % sooner than `none`, its calibration's median added.")
        elif not m["merged"] and m["trial_us"] < m["reduce_us"]:
            text.append(f"{cost}, so the merge cannot pay. {balancer.capitalize()} under `pays` declines it: the "
                        f"ratio's median is {m['ratio']:.2f}."
                        + (f" The control arm merges anyway and takes {m['control']:.2f}{TIMES} `none`'s time, which "
                           f"is what `pays` saves here." if m["control"] else "")
                        + f" The calibration's median is {round(100 * m['calibration'])} % of `none`'s time.")
        else:
            raise InputError(f"{folder}/runs.csv: {move} moves where pays merges without gaining, or declines a "
                             f"trial dearer than its reduction (allowed: a pair the model explains)")
    return "\n\n".join(wrapped(t) for t in text)
