# SPDX-License-Identifier: BSD-3-Clause
"""The sentences of docs/explanation/merge-pays.md that state figures, computed from the folders their blocks name
(the tables beside them are merge_pays.py's): what the simulated single-atom and all-atom studies show, and the
merges that carry no work (also docs/explanation/trace-lj-at-scale.md)."""
import steal_vs_regroup as svr
from mcmclb_csv import InputError

from .common import TIMES, Inputs, by_setup, median_of, none_runs, setup_name, wrapped


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
        f"Under `pays` every balancer but `collective` is {round(100 * (1 - max(gaining)))}-"
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
