# SPDX-License-Identifier: BSD-3-Clause
"""The sentences of docs/explanation/steal-vs-regroup.md and steal-vs-regroup-8192.md that state figures: each
computed from the folders its block names, so that no figure there is typed by hand (the tables beside them are
steal_regroup.py's)."""
import math

import steal_vs_regroup as svr
from mcmclb_csv import InputError
from mcmclb_stats import Summary, median

from .common import TIMES as TIMES_, Inputs, ratio_interval, wrapped
from .steal_regroup import cell, compute_layout, svr_data

LOOKAHEAD, MOSTWORK = "lookahead(1) range", "mostwork(1) range"
REGROUPINGS = (LOOKAHEAD, MOSTWORK)
RANDOM = ("random", "lognormal")


def extent(values, digits=2):
    return f"{min(values):.{digits}f}-{max(values):.{digits}f}"


def bound(value):
    """An upper bound of a non-negative difference, to three decimals (0.0082 is within 0.009, not 0.008)."""
    return f"{math.ceil(round(value * 1000, 6)) / 1000:.3f}"


def ws(data, panel):
    return sorted({w for cells in data[panel].values() for w in cells})


def better_per_seed(get, label, panel, w):
    """{seed: label's median / the better regrouping's} of one case (get(panel, label, w) is a Cell)."""
    t, r = get(panel, label, w), [get(panel, name, w) for name in REGROUPINGS]
    return {seed: s.median / min(c.seeds[seed].median for c in r) for seed, s in t.seeds.items()}


def why_regrouping_wins(inputs):
    """Why regrouping wins on emulated items: list items over two seeds folders, the smaller rank count first (the
    256- and 1024-rank folders), each figure a median over seeds unless per seed is said."""
    (small, sd, _), (large, ld, _) = (svr_data(f) for f in inputs.folders)
    sf, lf = inputs.folders

    def s(panel, label, w):
        return cell(sf, sd, panel, label, w)

    def big(panel, label, w):
        return cell(lf, ld, panel, label, w)
    panels = list(sd)
    if panels[0] != "cyclic" or sorted(panels[1:]) != sorted(RANDOM):
        raise InputError(f"{sf}/runs.csv: workloads {', '.join(panels)} (allowed: cyclic, random and lognormal)")
    w_all = ws(sd, "cyclic")
    more = [w for w in w_all if w > 1]
    top = w_all[-1]

    def at_w1(get, label):
        return ", ".join(f"{get(p, label, 1).ratio:.2f}" for p in panels)

    def mostwork_range(get, wset):
        return extent([get(p, MOSTWORK, w).ratio for p in panels for w in wset])

    def regroups(get, panel_set, wset):
        return [get(p, MOSTWORK, w).regroups for p in panel_set for w in wset]
    items = [
        f"- **W = 1: migration cannot act.** Every chain starts at once, so `steal` is `none`: {at_w1(s, 'steal')} × "
        f"ideal on cyclic, random and lognormal at {small} ({large}: {at_w1(big, 'steal')} ×). `mostwork` reaches "
        f"{mostwork_range(s, [1])} × ({large}: {mostwork_range(big, [1])} ×): only regrouping shortens a chain, by "
        f"splitting its items over more ranks."]
    steps = [f"{s('cyclic', 'steal', w).ratio:.2f}" for w in more]
    same = all(f"{big('cyclic', 'steal', w).ratio:.2f}" == v for w, v in zip(more, steps))
    migrated = max(get(p, "steal", w).migrated for get in (s, big) for p in panels for w in w_all)
    items.append(
        f"- **Migration closes the gap as W grows**, while there are unstarted chains to move. On cyclic `steal` goes "
        f"from {' to '.join(steps)} × at W = {', '.join(map(str, more))}"
        f"{', at both sizes' if same else ''}. It moves at most {migrated:.0f} chains per process, against "
        f"{extent(regroups(s, panels, w_all), 1)} regroupings per process for `mostwork` at {small} "
        f"({extent(regroups(big, panels, w_all), 0)} at {large}).")
    closest = sorted((min(get(p, t, w).ratio for t in ("steal", "stealrandom")) /
                      min(get(p, r, w).ratio for r in REGROUPINGS), p, w)
                     for get in (s, big) for p in panels for w in w_all)
    within = math.ceil(100 * (closest[0][0] - 1))
    near = sorted({(p, w) for ratio, p, w in closest if ratio < 1 + within / 100})
    items.append(
        f"- Still `mostwork` stays at {mostwork_range(s, more)} × once W ≥ {more[0]} ({large}: "
        f"{mostwork_range(big, more)} ×); migration comes within {within} % only on "
        f"{' and '.join(f'{p} with W = {w}' for p, w in near)}.")
    tail = []
    for n, get in ((small, s), (large, big)):
        c = get("lognormal", "steal", top)
        rnd = get("lognormal", "stealrandom", top).ratio
        tail.append((n, f"{c.ratio:.2f} × (seeds {extent(c.per_seed)}; random victim {rnd:.2f} ×)"))
    items.append(
        f"- **A started tail chain is shortened only by regrouping.** On lognormal `steal` stays at {tail[0][1]} at "
        f"W = {top} and {tail[0][0]} ranks; at {tail[1][0]} it is {tail[1][1]}.")

    def lookahead_side(get, data, panel_set):
        return all(get(p, LOOKAHEAD, w).ratio < get(p, MOSTWORK, w).ratio for p in panel_set for w in ws(data, p))
    gain = {w: s("cyclic", MOSTWORK, w).ratio - s("cyclic", LOOKAHEAD, w).ratio for w in w_all}
    if not (all(lookahead_side(g, d, ["cyclic"]) for g, d in ((s, sd), (big, ld)))
            and not any(g(p, LOOKAHEAD, w).ratio < g(p, MOSTWORK, w).ratio for g, d in ((s, sd), (big, ld))
                        for p in RANDOM for w in ws(d, p))):
        raise InputError(f"{sf}/runs.csv, {lf}/runs.csv: lookahead(1) does not beat mostwork(1) on every cyclic case "
                         f"and lose on every random one (allowed: folders where the page's sentence holds)")
    items.append(
        f"- Merging right (`lookahead`) beats `mostwork` on cyclic at every W, most at W = {max(gain, key=gain.get)}, "
        f"and loses on random and lognormal at every W (medians over seeds; tables below): there the partner with "
        f"the most work left matters.")
    behind = [d for get in (s, big) for p in panels for w in more
              for d in (get(p, "stealmerge(1) range", w).seeds[k].median - get(p, "steal", w).seeds[k].median
                        for k in get(p, "steal", w).seeds) if d > 0]
    beats = all(g(p, "stealmerge(1) range", w).ratio < g(p, "steal", w).ratio for g in (s, big) for p in panels
                for w in more)
    if not beats:
        raise InputError(f"{sf}/runs.csv, {lf}/runs.csv: stealmerge(1) not ahead of steal at every W > 1 (allowed: "
                         f"folders where the page's sentence holds)")
    items.append(
        f"- **`stealmerge` beats `steal` at every W > 1 but not `mostwork`** (in {len(behind)} draws it is behind "
        f"`steal` by at most {max(behind, default=0):.3f}). Its switch to regrouping waits for two barriers over the "
        f"group leaders, which advance one item per level of a binary tree of groups, so finished groups sit idle for "
        f"several items.")
    levels = round(math.log2(large / small))
    late = [big(p, "stealmerge(1) range", w).seeds[k].median - big(p, "steal", w).seeds[k].median
            for p in RANDOM for w in more for k in big(p, "steal", w).seeds]
    merge = s("cyclic", "stealmerge(1) range", top).ratio
    items.append(
        f"- At {small} `stealmerge` still gains much (cyclic W = {top}: {merge:.3f} "
        f"×; W = 1: {s('cyclic', 'stealmerge(1) range', 1).ratio:.2f} × against `mostwork`'s "
        f"{s('cyclic', MOSTWORK, 1).ratio:.2f} ×). At {large} ({levels} more tree levels) it regroups later still: "
        f"`stealmerge` − `steal` is {min(late):.2f} to {max(late):+.3f} on random and lognormal at W ≥ {more[0]} (per "
        f"seed). A cheaper switch is left open.")
    shared = [label for label in sd["cyclic"] if label in ld["cyclic"]]
    apart = {label: max(abs(big("cyclic", label, w).ratio - s("cyclic", label, w).ratio) for w in w_all)
             for label in shared}
    loose = sorted(label for label, d in apart.items() if d >= 0.005)
    names = " and ".join("`" + label.removesuffix(" range") + "`" for label in loose)
    worst = max(more, key=lambda w: abs(big("cyclic", "stealrandom", w).ratio - s("cyclic", "stealrandom", w).ratio))
    items.append(
        f"- **The cyclic pattern repeats every 32 ranks**, so on cyclic every balancer but "
        f"{names} gives the same time / ideal at "
        f"{large} as at {small}, to within {max(d for label, d in apart.items() if label not in loose):.3f}. "
        f"(`stealrandom` at W = {worst}: {big('cyclic', 'stealrandom', worst).ratio:.3f} at {large} ranks against "
        f"{s('cyclic', 'stealrandom', worst).ratio:.3f} at {small}.)")
    counts = [", ".join(f"{get('cyclic', MOSTWORK, w).regroups:.0f}" for w in w_all) for get in (big, s)]
    items.append(
        f"- `mostwork` regroups far more often on cyclic at {large} than at {small}: {counts[0]} regroupings per "
        f"process at W = {', '.join(map(str, w_all))} against {counts[1]}, at no visible cost (below).")

    def over(get, panel):
        ratios = sorted(better_per_seed(get, "steal", panel, top).values())
        middle = median(ratios)
        return f"{middle:.2f}" + (f" (seeds {extent(ratios)})" if len(ratios) > 1 else "")
    cyc = {f"{g('cyclic', 'steal', top).ratio / min(g('cyclic', r, top).ratio for r in REGROUPINGS):.2f}"
           for g in (s, big)}
    items.append(
        f"- On random and lognormal at W = {top}, `steal`'s time over the better regrouping's is {over(big, 'random')} "
        f"and {over(big, 'lognormal')} at {large}, against {over(s, 'random')} and {over(s, 'lognormal')} at "
        f"{small}; on cyclic {' and '.join(sorted(cyc))}{' at both' if len(cyc) == 1 else ''}.")
    return "\n".join(items)


def seeds_notes(inputs):
    """The notes under a seeds folder's table, as list items: Algorithm 1 against range (where the folder holds
    both), stealrandom over steal per case (medians over seeds), mostwork(1)'s regroupings and steal's migrated
    chains per process."""
    folder = inputs.folders[0]
    _, data, _ = svr_data(folder)
    panels = list(data)

    def c(panel, label, w):
        return cell(folder, data, panel, label, w)
    items = []
    if all("mostwork(1) intercomm" in data[p] for p in panels):
        most = max(abs(c(p, "mostwork(1) intercomm", w).ratio - c(p, MOSTWORK, w).ratio)
                   for p in panels for w in ws(data, p))
        text = (f"- Algorithm 1 instead of `range`: `mostwork(1) intercomm` is within {bound(most)}"
                f" of `range` in every case (median over seeds)")
        if all("lookahead(1) intercomm" in data[p] for p in panels):
            look = max(abs(a.median - c(p, LOOKAHEAD, w).seeds[k].median)
                       for p in panels for w in ws(data, p)
                       for k, a in c(p, "lookahead(1) intercomm", w).seeds.items())
            text += f", `lookahead(1) intercomm` within {bound(look)} in every seed"
        items.append(text + ".")
    ratio = {(p, w): c(p, "stealrandom", w).ratio / c(p, "steal", w).ratio for p in panels for w in ws(data, p)}
    first = ws(data, "cyclic")[1]
    items.append(
        f"- `stealrandom` / `steal` is {extent(ratio.values())} (median over seeds per case): "
        f"{extent([v for (p, w), v in ratio.items() if p == 'cyclic' and w >= first])} on cyclic at W ≥ {first}, "
        f"{extent([v for (p, w), v in ratio.items() if p != 'cyclic'])} on random and lognormal.")
    migrated = max((c(p, "steal", w).migrated, p, w) for p in panels for w in ws(data, p))
    items.append(
        f"- `mostwork(1)` regroups "
        f"{extent([c(p, MOSTWORK, w).regroups for p in panels if p != 'cyclic' for w in ws(data, p)], 1)} times per "
        f"process on random and lognormal, {extent([c('cyclic', MOSTWORK, w).regroups for w in ws(data, 'cyclic')], 1)}"
        f" on cyclic. `steal` migrates at most {migrated[0]:.2f} chains per process.")
    return "\n".join(items)


PAPER_REGROUPING = ("collective(16) create", "lookahead(1) range", "lookahead(1) intercomm", "mostwork(1) range",
                    "mostwork(1) intercomm")
PAYS_REGROUPING = tuple(label + " pays" for label in PAPER_REGROUPING)
STEALMERGE = ("stealmerge(1) range", "stealmerge(1) intercomm")


def compute_cases(folder):
    """(nprocs, {(move, W): {set-up: Cell}}, simulated) of a compute-mode folder, move 'single' or 'all'."""
    nprocs, data, simulated = svr_data(folder)
    columns, lines = compute_layout(data)
    cases = {}
    for i, (head, _, w) in enumerate(columns):
        cases[(head.split("-")[0], w)] = {label: cells[i] for label, cells in lines if cells[i] is not None}
    for key, cells in cases.items():
        missing = [label for label in ("none", "steal", "stealrandom") + PAPER_REGROUPING + PAYS_REGROUPING + STEALMERGE
                   if label not in cells]
        if missing:
            raise InputError(f"{folder}/runs.csv: no {missing[0]} run of {key[0]}-atom W = {key[1]} (allowed: a "
                             f"folder of configs/steal-vs-regroup-compute.yaml)")
    return nprocs, cases, simulated


def compute_findings(inputs):
    """Compute mode, simulated: list items over the folders (one rank count each, ascending), every figure a
    set-up's time over none's at the same rank count, or a difference of time / ideal (Algorithm 1 against range)."""
    parts = [compute_cases(folder) for folder in inputs.folders]
    for folder, (_, _, simulated) in zip(inputs.folders, parts):
        if not simulated:
            raise InputError(f"{folder}/runs.csv: real MPI runs (allowed: simulated runs)")

    def over(cases, move, w, label):
        return cases[(move, w)][label].ratio / cases[(move, w)]["none"].ratio

    def per_size(text_of, unit=""):
        """text_of(nprocs, cases) at each rank count, unit after the first: 'a × none at 16 ranks and b × at 64'."""
        texts = [f"{text_of(n, cases)}{unit if i == 0 else ''} at {n} ranks" for i, (n, cases, _) in enumerate(parts)]
        return ", ".join(texts[:-1]) + (" and " if len(texts) > 1 else "") + texts[-1]
    items = []
    items.append(
        "- **Single-atom moves: no merge pays, and migration wins where there are unstarted chains.** A merged group "
        "waits for a reduction per trial that costs more than the work it splits. Under the paper's rules the "
        "regrouping balancers take "
        + per_size(lambda n, cases: extent([over(cases, "single", w, label) for w in (1, 4)
                                             for label in PAPER_REGROUPING]) + " ×", " `none`'s time") + ".")
    for folder, (n, cases, _) in zip(inputs.folders, parts):
        for w in (1, 4):
            for label in PAYS_REGROUPING:
                c = cases[("single", w)][label]
                if c.regroups != 1 or abs(c.ratio - cases[("single", w)]["none"].ratio) > 5e-4:
                    raise InputError(f"{folder}/runs.csv: {label} merges or differs from none on single-atom W = "
                                     f"{w} (allowed: folders where the page's sentence holds)")

    def fastest(cases, move, w):
        found = cases[(move, w)]
        return min(found, key=lambda label: found[label].ratio)
    thieves = []
    for n, cases, _ in parts:
        best = fastest(cases, "single", 4)
        if best not in ("steal", "stealrandom"):
            raise InputError(f"{inputs.folders[0]}: {best} is the fastest on single-atom W = 4 (allowed: a thief)")
        thieves.append(f"`{best}` at {n} ranks ({over(cases, 'single', 4, best):.3f} × `none`, "
                       f"{cases[('single', 4)][best].ratio:.3f} × ideal)")
    items.append("- Under `pays` no merge is taken there, and every regrouping equals `none`. At W = 4 a thief is the "
                 "fastest: " + ", ".join(thieves) + ".")
    steal_gap = max(abs(over(cases, "all", 1, "steal") - 1) for _, cases, _ in parts)
    winners = {fastest(cases, "all", 1) for _, cases, _ in parts}
    if winners != {"mostwork(1) range pays"}:
        raise InputError(f"{', '.join(inputs.folders)}: {', '.join(sorted(winners))} fastest on all-atom W = 1 "
                         f"(allowed: folders where mostwork(1) range under pays is)")
    paper_mostwork = [(n, over(cases, "all", 1, "mostwork(1) range")) for n, cases, _ in parts]
    gains = [f"{n} ranks ({v:.3f} × with `range`)" for n, v in paper_mostwork if v < 1]
    regroups_all = PAPER_REGROUPING + STEALMERGE
    none_gain = [(n, [over(cases, "all", 1, label) for label in regroups_all]) for n, cases, _ in parts
                 if min(over(cases, "all", 1, label) for label in regroups_all) >= 1]
    items.append(
        f"- **All-atom moves, W = 1:** nothing can migrate (`steal` within {math.ceil(steal_gap * 1000) / 10:.1f} % "
        f"of `none`), and `mostwork(1) range` under `pays` is the fastest: "
        + per_size(lambda n, cases: f"{over(cases, 'all', 1, 'mostwork(1) range pays'):.3f} ×", " `none`") + ". "
        + (f"Under the paper's rules `mostwork(1)` gains at {' and '.join(gains)}" if gains else
           "Under the paper's rules `mostwork(1)` gains nowhere")
        + "".join(f", but no set-up that regroups does at {n} ranks ({extent(values)} ×)" for n, values in none_gain)
        + ".")
    for n, cases, _ in parts:
        found = cases[("all", 4)]
        movers = sorted(("steal", "stealrandom", "stealmerge(1) range"), key=lambda label: found[label].ratio)
        pays = [over(cases, "all", 4, label) for label in PAYS_REGROUPING]
        paper = [over(cases, "all", 4, label) for label in PAPER_REGROUPING]
        best = min(PAPER_REGROUPING + PAYS_REGROUPING, key=lambda label: found[label].ratio)
        lead = "**All-atom moves, W = 4: migration beats regrouping.** " if n == parts[0][0] else ""
        items.append(
            f"- {lead}At {n} ranks " + ", ".join(f"`{label}` {over(cases, 'all', 4, label):.3f} ×" for label in movers)
            + f" `none`'s time; the regrouping balancers {extent(pays, 3)} × under `pays` (the best: "
            f"`{best.removesuffix(' pays')}`), {extent(paper)} × under the paper's rules.")

    def dearer(cases, balancer, rule):
        suffix = " pays" if rule else ""
        return [(cases[key][f"{balancer} intercomm{suffix}"].ratio - cases[key][f"{balancer} range{suffix}"].ratio,
                 key) for key in cases]
    lookahead_pays = max(abs(d) for _, cases, _ in parts for d, _ in dearer(cases, "lookahead(1)", True))
    mostwork_pays = [(n, max(dearer(cases, "mostwork(1)", True))) for n, cases, _ in parts]
    paper = [(d, key, balancer, n) for n, cases, _ in parts for balancer in ("lookahead(1)", "mostwork(1)",
                                                                             "stealmerge(1)")
             for d, key in dearer(cases, balancer, False)]
    low, high = min(paper), max(paper)

    def where(found):
        d, (move, w), balancer, n = found
        return f"`{balancer.split('(')[0]}`, {move}-atom W = {w}, {n} ranks"
    items.append(
        f"- Algorithm 1 against `range`, in points of time / ideal: within {bound(lookahead_pays)} under `pays` for "
        f"`lookahead`, dearer for `mostwork` (at most "
        + ", ".join(f"{d:.2f} at {n} ranks" for n, (d, _) in mostwork_pays)
        + (f", on {mostwork_pays[0][1][1][0]}-atom W = {mostwork_pays[0][1][1][1]}"
           if len({key for _, (_, key) in mostwork_pays}) == 1 else
           ", on " + ", ".join(f"{move}-atom W = {w}" for _, (_, (move, w)) in mostwork_pays))
        + f"). Under the paper's rules it goes both ways, from {-low[0]:.2f} cheaper ({where(low)}) to "
        f"{high[0]:.2f} dearer ({where(high)}).")
    return "\n".join(items)


def compute_real_findings(inputs):
    """Compute mode on real MPI (one folder): list items of what its table shows, every ratio a set-up's median
    time over none's with the interval mcmclb compare forms."""
    folder = inputs.folders[0]
    nprocs, cases, simulated = compute_cases(folder)
    if simulated:
        raise InputError(f"{folder}/runs.csv: simulated runs (allowed: real MPI runs, which have intervals)")

    def times(c):
        return Summary([r["time_s"] for runs in c.runs.values() for r in runs])

    def ratio(key, label):
        return times(cases[key][label]).median / times(cases[key]["none"]).median

    def interval(key, label):
        return ratio_interval(times(cases[key]["none"]), times(cases[key][label]))
    nones = [times(c["none"]).median * 1000 for c in cases.values()]
    regrouping = PAPER_REGROUPING + PAYS_REGROUPING
    a4 = ("all", 4)
    thieves = [f"{ratio(a4, label):.3f}" for label in ("steal", "stealrandom")]
    items = [
        f"The runs are short ({min(nones):.1f} to {max(nones):.0f} ms for `none`), so the single-atom intervals are "
        f"wide. What they show:",
        f"- **All-atom, W = 4: migration wins, measured too.** `steal` and `stealrandom` take "
        f"{' and '.join(sorted(set(thieves)))} × `none`'s time (intervals up to "
        f"{max(interval(a4, label)[1] for label in ('steal', 'stealrandom')):.3f}), `stealmerge(1) range` "
        f"{ratio(a4, 'stealmerge(1) range'):.3f} ×. No regrouping set-up's median is below `none`'s "
        f"({extent([ratio(a4, label) for label in regrouping], 3)} ×)."]
    single = [key for key in cases if key[0] == "single"]
    paper = [ratio(key, label) for key in single for label in PAPER_REGROUPING if not label.startswith("collective")]
    holds = all(interval(key, label)[0] <= 1 <= interval(key, label)[1] for key in single for label in PAYS_REGROUPING)
    merged = any(cases[key][label].regroups != 1 for key in single for label in PAYS_REGROUPING)
    items.append(
        f"- **Single-atom: merging by the paper's rules loses, measured too.** `lookahead(1)` and `mostwork(1)` take "
        f"{extent(paper)} × `none`'s time. Under `pays` {'a merge is taken' if merged else 'no merge is taken'}, and "
        f"{'every' if holds else 'not every'} regrouping's ratio interval holds 1.")
    s4 = ("single", 4)
    sm = interval(s4, "stealmerge(1) range")
    items.append(
        f"- Single-atom, W = 4: the thieves' medians are "
        f"{extent([ratio(s4, label) for label in ('steal', 'stealrandom')], 3)} × `none`, but their intervals reach "
        f"{extent([interval(s4, label)[1] for label in ('steal', 'stealrandom')], 3)}. Only `stealmerge(1) range` is "
        f"clearly faster ({ratio(s4, 'stealmerge(1) range'):.3f} [{sm[0]:.3f}, {sm[1]:.3f}] ×).")
    a1 = ("all", 1)
    took = {f"{cases[a1][label].regroups:.1f}" for label in PAYS_REGROUPING if not label.startswith("collective")}
    items.append(
        f"- **All-atom, W = 1: the gain of `pays` is not reproduced at P = {nprocs}.** `pays` takes no merge there "
        f"({', '.join(sorted(took))} `rg`), and the paper's rules lose "
        f"({extent([ratio(a1, label) for label in PAPER_REGROUPING if not label.startswith('collective')])} × for "
        f"`lookahead` and `mostwork`).")
    if took != {"1.0"}:
        raise InputError(f"{folder}/runs.csv: pays merges on all-atom W = 1 (allowed: a folder where it does not)")
    return "\n".join(items)


# The columns that say what a run ran, less its repetition: runs equal in all of them are one point.
POINT_KEYS = ("experiment", "nprocs", "G", "T_ms", "workload", "workload_scale", "workload_period", "workload_items",
              "workload_min", "workload_max", "workload_median", "workload_sigma", "workload_seed", "work_mode",
              "jitter_pct", "work_seed", "atoms", "temperature", "move", "max_step", "moves_per_item", "balancer",
              "interval", "method", "backend", "platform", "finished", "chains_per_group", "wait", "model_compute",
              "model_reduce", "workload_file")


def runs_made(inputs):
    """How many points and runs the folders hold and how many runs are valid, as one sentence: '308 points, every
    run valid.'; the runs named where a point ran more than once; 'per rank count' where several folders, one rank
    count each, hold the same counts."""
    counts = []
    for folder in inputs.folders:
        runs = Inputs.read(folder, need=["run_id", "nprocs", "balancer", "valid"])
        points = {tuple(r.get(k) for k in POINT_KEYS) for r in runs}
        valid = sum(1 for r in runs if r["valid"] is True)
        counts.append((sorted({r["nprocs"] for r in runs}), len(points), len(runs), valid))

    def text(points, runs, valid):
        return (f"{points} points" + (f", {runs} runs" if runs != points else "")
                + (", every run valid" if valid == runs else f", {valid} of {runs} runs valid"))

    if len(counts) > 1 and all(len(p) == 1 for p, *_ in counts) and len({tuple(c[1:]) for c in counts}) == 1:
        return text(*counts[0][1:]).replace(" points", " points per rank count", 1) + "."
    if len(counts) == 1:
        return text(*counts[0][1:]) + "."
    return "; ".join(f"P = {', '.join(map(str, p))}: {text(*c)}" for p, *c in counts) + "."


def draws(folder, w):
    """{(workload, seed): {balancer: time / ideal}} of a seeds folder at W (one run per draw and balancer; the
    methods the page compares: range, and create for collective)."""
    out = {}
    for r in Inputs.read(folder, need=["run_id", "nprocs", "workload", "workload_seed", "balancer", "time_s",
                                       "ideal_s", "chains_per_group", "valid"]):
        if r["valid"] is True and r["chains_per_group"] == w and r.get("method") in (None, "", "range", "create"):
            out.setdefault((r["workload"], r["workload_seed"]), {})[r["balancer"]] = r["time_s"] / r["ideal_s"]
    return out


def large_findings(inputs):
    """The list under the steal-vs-regroup-sizes table of a large seeds folder beside a smaller one (W = 8 at both):
    cyclic at both sizes, each random workload's ranges over seeds, steal's and stealmerge's time over the better
    regrouping's per seed, and where the random workloads' large medians leave the smaller size's range of seeds
    (cyclic, one run per size, has its widest gap named in its own item)."""
    (large, ld, _), (small, sd, _) = (svr_data(f) for f in inputs.folders)
    lf, sf = inputs.folders
    w = max(ws(ld, "cyclic"))

    def big(panel, label):
        return cell(lf, ld, panel, label, w)

    def s(panel, label):
        return cell(sf, sd, panel, label, w)
    shared = [label for label in ld["cyclic"] if label in sd["cyclic"] and w in sd["cyclic"][label]]
    apart = max(abs(big("cyclic", label).ratio - s("cyclic", label).ratio) for label in shared)
    near = max(big("cyclic", label).ratio for label in REGROUPINGS) - 1
    names = {"none": "none", "steal": "steal", "collective(16) create": "collective(16)",
             "stealmerge(1) range": "stealmerge", LOOKAHEAD: "lookahead", MOSTWORK: "mostwork"}
    widest = max(shared, key=lambda label: abs(big("cyclic", label).ratio - s("cyclic", label).ratio))
    rest = sorted((label for label in ("stealmerge(1) range", "steal", "collective(16) create", "none")
                   if label != widest), key=lambda label: big("cyclic", label).ratio)
    items = [
        f"- **Cyclic: the {large}-rank times equal the {small}-rank ones** to within {bound(apart)} (the pattern "
        f"repeats every 32 ranks). The widest gap is `{names[widest]}`'s: {big('cyclic', widest).ratio:.3f}{TIMES_} "
        f"against {s('cyclic', widest).ratio:.3f}{TIMES_}. `lookahead` and `mostwork` are within {100 * near:.2f} % "
        f"of the ideal, " + ", ".join(f"`{names[label]}` {big('cyclic', label).ratio:.3f}{TIMES_}" for label in rest)
        + "."]

    def seeds(panel, label, get=big):
        return extent(get(panel, label).per_seed, 3)
    lognormal_most = big("lognormal", MOSTWORK).per_seed
    items.append(
        f"- **Heavy-tailed chains: `mostwork` stays within {math.ceil(100 * (max(lognormal_most) - 1))} % of the "
        f"ideal on every lognormal seed** ({seeds('lognormal', MOSTWORK)}{TIMES_}). Against that, `steal` "
        f"takes {seeds('lognormal', 'steal')}{TIMES_} and `stealmerge` {seeds('lognormal', 'stealmerge(1) range')}"
        f"{TIMES_}. The draw matters to `lookahead`: {seeds('lognormal', LOOKAHEAD).replace('-', ' to ')}{TIMES_}, "
        f"and at {small} ranks its five seeds spread from {seeds('lognormal', LOOKAHEAD, s).replace('-', ' to ')}{TIMES_}.")
    items.append(
        f"- **Uniform random chains: `mostwork` {seeds('random', MOSTWORK)}{TIMES_}, `lookahead` "
        f"{seeds('random', LOOKAHEAD)}{TIMES_}**, against {seeds('random', 'steal')}{TIMES_} for `steal` and "
        f"{seeds('random', 'none')}{TIMES_} for `none`.")
    found = draws(lf, w)
    per = {}
    for (panel, seed), d in found.items():
        better = min(d["mostwork"], d["lookahead"])
        per.setdefault(panel, []).append((d["steal"] / better, d["stealmerge"] / better,
                                          d["mostwork"] <= d["lookahead"], seed, d))
    if any(min(d[b] for b in ("mostwork", "lookahead")) >= min(d[b] for b in ("steal", "stealmerge"))
           for d in found.values()):
        raise InputError(f"{lf}/runs.csv: a thief ahead of regrouping in some draw (allowed: a folder where the "
                         f"page's sentence holds)")

    def over(panel, i, digits=2):
        values = [v[i] for v in per[panel]]
        return extent(values, digits) if f"{min(values):.2f}" != f"{max(values):.2f}" else f"{values[0]:.2f}"
    always = all(v[2] for v in per["random"])
    if not all(v[2] for v in per["lognormal"]):
        raise InputError(f"{lf}/runs.csv: lookahead ahead of mostwork on a lognormal seed (allowed: a folder where "
                         f"the page's sentence holds)")
    items.append(
        f"- **So at {large} ranks as at {small}, regrouping is ahead of the thief on every workload and every seed** "
        f"with W = {w}. Per seed, `steal` takes {over('lognormal', 0)}{TIMES_} the better regrouping's time on "
        f"lognormal, {over('random', 0)}{TIMES_} on random and {over('cyclic', 0)}{TIMES_} on cyclic. The better is "
        f"always `mostwork` on lognormal{' and random' if always else ''}.")
    behind = [(v[4]["stealmerge"] - v[4]["steal"], panel, v[3], v[4]) for panel, values in per.items()
              for v in values if v[4]["stealmerge"] > v[4]["steal"]]
    text = (f"- `stealmerge`, which migrates and regroups, takes {over('cyclic', 1)}{TIMES_} the better regrouping's "
            f"time on cyclic, {over('random', 1)}{TIMES_} on random and {over('lognormal', 1)}{TIMES_} on lognormal "
            f"(per seed). ")
    if len(behind) == 1:
        d, panel, seed, values = behind[0]
        text += (f"It is ahead of `steal` in every draw but {panel} seed {seed}. There it is behind by "
                 f"{d:.4f} ({values['stealmerge']:.4f}{TIMES_} against {values['steal']:.4f}{TIMES_} ideal).")
    else:
        text += f"It is behind `steal` in {len(behind)} draws."
    items.append(text + " The random-victim thief is missing at this size (below).")
    outside = []
    for panel in RANDOM:
        for label in ld[panel]:
            if label in sd[panel] and w in sd[panel][label]:
                v, lo, hi = big(panel, label).ratio, min(s(panel, label).per_seed), max(s(panel, label).per_seed)
                if v > hi or v < lo:
                    outside.append((max(v - hi, lo - v), panel, label, v, hi if v > hi else lo, v > hi))
    if any(d >= 0.02 for d, *_ in outside) or any(not up for *_, up in outside):
        raise InputError(f"{lf}/runs.csv: a median outside the smaller size's seeds by 0.02 or more, or below them "
                         f"(allowed: a folder where the page's sentence holds)")
    ordered = sorted(outside, key=lambda o: (RANDOM.index(o[1]) * -1, o[2] != MOSTWORK))
    parts = [f"`{names[label]}`" + (f" on {panel}" if i == 0 or panel != ordered[i - 1][1] else "")
             + f" ({v:.3f}{TIMES_} against {'at most ' if i == 0 else ''}{edge:.3f}{TIMES_})"
             for i, (_, panel, label, v, edge, _) in enumerate(ordered)]
    items.append(
        f"- On {' and '.join(RANDOM)}, every {large}-rank median lies inside the {small}-rank seeds' range or within "
        f"0.02 of it. Above it: "
        + ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1] + ".")
    return "\n".join(wrapped(item).replace("\n", "\n  ") for item in items)



def host_cost_note(inputs):
    """A simulated folder's host cost, as a list item: host CPU per point (range, median), in all, and the peak
    memory, from its provenance.csv (host_cpu_s, host_peak_rss_kib), linked as from a page of docs/explanation/."""
    folder = inputs.folders[0]
    rows = Inputs.read(folder, "provenance.csv", need=["run_id", "host_cpu_s", "host_peak_rss_kib"])
    cpu = [r["host_cpu_s"] for r in rows]
    rss = [r["host_peak_rss_kib"] / 2 ** 20 for r in rows]
    if not rows or None in cpu or None in rss:
        raise InputError(f"{folder}/provenance.csv: a run without host_cpu_s or host_peak_rss_kib (allowed: runs "
                         f"that recorded their host cost)")
    return wrapped(
        f"- Their host cost, **measured**, is in [provenance.csv](../{folder.removeprefix('docs/')}/provenance.csv): "
        f"{min(cpu):.0f}-{max(cpu):.0f} s of host CPU per point (median {median(cpu):.0f} s), "
        f"{sum(cpu) / 60:.0f} min for the {len(rows)}, and a peak RSS of {extent(rss, 1)} GiB.").replace("\n", "\n  ")


def cyclic_w2_note(inputs):
    """A large cyclic folder at one W (first argument) against seeds folders of smaller rank counts (the others):
    none and steal as at the smaller sizes, stealmerge's time / ideal there with each run's commit, and when the
    large stealmerge run merges (events.csv: how many merges, how late, whether every one found no items left).
    With rerun=FOLDER (that run simulated again with a later commit's code, runs.csv only), the rerun's time and
    regroupings beside the committed run's, so the page says which of its numbers today's code no longer gives."""
    large, *smaller = inputs.folders
    runs = Inputs.read(large, need=svr.COLUMNS + ["workload_period", "git_commit"])
    w = {r["chains_per_group"] for r in runs}
    if len(w) != 1 or {r["workload"] for r in runs} != {"cyclic"}:
        raise InputError(f"{large}/runs.csv: several W or a workload other than cyclic (allowed: one cyclic W)")
    w = w.pop()
    at = {r["balancer"]: r for r in runs}

    def ratio(r):
        return r["time_s"] / r["ideal_s"]
    small = {}
    for folder in smaller:
        for r in Inputs.read(folder, need=svr.COLUMNS + ["git_commit"]):
            if r["workload"] == "cyclic" and r["chains_per_group"] == w and r.get("method") in (None, "", "range"):
                small.setdefault(r["balancer"], []).append(r)
    same = all(f"{ratio(r):.3f}" == f"{ratio(at[b]):.3f}" for b in ("none", "steal") for r in small.get(b, [None])
               if r)
    if not same or not all(small.get(b) for b in ("none", "steal", "stealmerge")):
        raise InputError(f"{large}/runs.csv: none or steal differ from the smaller folders (allowed: folders where the "
                         f"page's sentence holds)")
    merge = at["stealmerge"]
    merges = [e for e in Inputs.read(large, "events.csv", need=["run_id", "t_s", "kind", "items_left"])
              if e["run_id"] == merge["run_id"] and e["kind"] == "merge"]
    if not merges or any(e["items_left"] != 0 for e in merges):
        raise InputError(f"{large}/events.csv: a merge of {merge['run_id']} with items left (allowed: a run whose "
                         f"merges all come when every chain is done)")
    late = merge["time_s"] - min(e["t_s"] for e in merges)
    sizes = sorted(small["stealmerge"], key=lambda r: r["nprocs"])
    there = [f"{ratio(r):.3f}{TIMES_} at {r['nprocs']}{' ranks' if i == 0 else ''} ({r['git_commit'][:7]})"
             for i, r in enumerate(sizes)]
    text = (
        f"`none` and `steal` equal their values at {' and '.join(str(r['nprocs']) for r in sizes)} ranks, as the "
        f"cyclic pattern repeats every {merge['workload_period']} ranks. `stealmerge` does not: "
        + " and ".join(there) + f". At {merge['nprocs']} it takes {ratio(merge):.3f}{TIMES_}, near `steal`'s "
        f"{ratio(at['steal']):.3f}{TIMES_}. At {merge['git_commit'][:7]} all "
        f"its {len(merges)} merges came in the last {math.ceil(late * 1000)} ms of the {merge['time_s']:.2f} s run, "
        f"when every chain was done ([events.csv](../{large.removeprefix('docs/')}/events.csv)).")
    rerun_folder = inputs.option("rerun")
    if rerun_folder:
        again = [r for r in Inputs.read(rerun_folder, need=svr.COLUMNS + ["git_commit"])
                 if r["balancer"] == "stealmerge" and r["nprocs"] == merge["nprocs"]
                 and r["chains_per_group"] == w and r["workload"] == "cyclic"]
        if len(again) != 1:
            raise InputError(f"{rerun_folder}/runs.csv: not one stealmerge run at {merge['nprocs']} ranks, cyclic, "
                             f"W = {w} (allowed: the rerun of the large folder's stealmerge point)")
        again = again[0]
        text += (f" Simulated again at the later commit {again['git_commit'][:7]}, `stealmerge` takes "
                 f"{again['time_s']:.4f} s with {again['regroups_avg']:.1f} regroupings per rank, against "
                 f"{merge['time_s']:.4f} s and {merge['regroups_avg']:.1f} in this folder "
                 f"([reproductions](../reference/reproductions.md)). The rerun kept no events.")
    return wrapped(text)


SUPERSCRIPTS = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def hint_host_cost(inputs):
    """stealrandom's host CPU before and after a change (two folders, before first; provenance.csv host_cpu_s per
    run): after over before at each rank count, the growth from the second largest rank count to the largest (and
    steal's beside it), and what that growth, kept per doubling, gives at nprocs=P."""
    before_folder, after_folder = inputs.folders
    target = int(inputs.option("nprocs", "0"))

    def host(folder):
        cpu = {r["run_id"]: r["host_cpu_s"] for r in Inputs.read(folder, "provenance.csv",
                                                                  need=["run_id", "host_cpu_s"])}
        return {(r["nprocs"], r["balancer"]): cpu[r["run_id"]]
                for r in Inputs.read(folder, need=["run_id", "nprocs", "balancer"])}
    before, after = host(before_folder), host(after_folder)
    sizes = sorted(p for p, b in after if b == "stealrandom" and (p, b) in before)
    if len(sizes) < 2 or target <= sizes[-1] or ((sizes[-1], "steal") not in after):
        raise InputError(f"{after_folder}/runs.csv: stealrandom at fewer than two rank counts of both folders, steal "
                         f"missing or nprocs= not above them (allowed: before and after folders, nprocs=P)")
    saved = [after[(p, "stealrandom")] / before[(p, "stealrandom")] for p in sizes]
    a, b = sizes[-2], sizes[-1]
    growth = after[(b, "stealrandom")] / after[(a, "stealrandom")]
    steal = after[(b, "steal")] / after[(a, "steal")]
    steps = round(math.log2(target / b))
    need = after[(b, "stealrandom")] * growth ** steps
    article = "an" if str(target).startswith(("8", "11", "18")) else "a"
    return wrapped(
        f"Measured on the host at {sizes[0]} to {sizes[-1]} simulated ranks "
        f"([stealrandom-hint/](../{after_folder.removeprefix('docs/').split('/')[0]}/), provenance.csv `host_cpu_s`), "
        f"the change cut the host CPU to {extent(saved, 3)}{TIMES_} the host CPU of before. It still grows "
        f"{growth:.2f}{TIMES_} from {a} to {b} ranks (`steal` {steal:.2f}{TIMES_}): a random thief's knowledge of "
        f"empty groups is scattered. At that rate {article} {target}-rank point would need about {need / 60:.1f} min "
        f"of host CPU ({after[(b, 'stealrandom')]:.1f} s × {growth:.2f}{str(steps).translate(SUPERSCRIPTS)}); it was "
        f"not run again.")
