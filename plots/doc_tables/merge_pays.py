# SPDX-License-Identifier: BSD-3-Clause
"""Tables of docs/explanation/merge-pays.md (and their summaries in docs/results.md): when a merge pays,
simulated and measured, with the merge calibration's cost and the model's predictions."""
import os
from collections import defaultdict

import steal_vs_regroup as svr
from mcmclb_csv import DEFAULT_FINISHED, RUN_COLUMNS, InputError
from mcmclb_stats import Summary, median

from .common import (Inputs, METHODS, by_setup, calibrations, compare_ratio_text, keyed, median_of, none_runs,
                     refuse_mixed, setup_name, table_text, time_with_interval)


def ratio_text(value, bold):
    """time / none to three decimals, in bold where bold (faster or slower) says it differs from none that way."""
    text = f"{value:.3f}"
    if (bold == "faster" and float(text) < 1) or (bold == "slower" and float(text) > 1):
        return f"**{text}**"
    return text


def merge_pays_ratios(inputs):
    """One row per P: none's time (and / ideal), then each set-up's median time / none's, set-ups in the order the
    CSV first names them (balancer, interval and finished rule); bold=faster or bold=slower marks those cells."""
    bold = inputs.choice("bold", ["faster", "slower"])
    groups, setups = by_setup(Inputs.read(inputs.folders[0], need=svr.COLUMNS), f"{inputs.folders[0]}/runs.csv")
    setups = [s for s in setups if s != "none"]
    rows = []
    for p in sorted({p for p, _ in groups}):
        none = none_runs(groups, p, inputs.folders[0])
        t = median_of(none)
        cells = [str(p), f"{t:.4g} s ({t / median_of(none, 'ideal_s'):.2f} × ideal)"]
        cells += [ratio_text(median_of(groups[(p, s)]) / t, bold) if (p, s) in groups else "" for s in setups]
        rows.append(cells)
    return table_text(["P", "none"] + setups, rows)


def merge_pays_sensitivity(inputs):
    """One row per P and balancer, one column per model factor pair of factors=C:R,... (work.model_compute and
    work.model_reduce; 1 is as measured): time / none (none's run as measured), with the regroupings per rank where
    the row merges at all (more than the initial formation somewhere)."""
    bold = inputs.choice("bold", ["faster", "slower"])
    try:
        factors = [tuple(float(v) for v in pair.split(":")) for pair in inputs.option("factors", "1:1").split(",")]
    except ValueError:
        raise InputError(f"block {inputs.name}: factors={inputs.option('factors')} (allowed: pairs C:R of numbers "
                         f"separated by commas)") from None

    def key(r):
        return (setup_name(r, finished=False), r.get("model_compute") or 1.0, r.get("model_reduce") or 1.0)

    groups, setups = by_setup(Inputs.read(inputs.folders[0], need=svr.COLUMNS), f"{inputs.folders[0]}/runs.csv", key)
    names = list(dict.fromkeys(name for name, _, _ in setups if name != "none"))
    rows = []
    for p in sorted({p for p, _ in groups}):
        none = median_of(none_runs(groups, p, inputs.folders[0], ("none", 1.0, 1.0)))
        for name in names:
            found = [groups.get((p, (name, c, r)), []) for c, r in factors]
            merges = any(r["regroups_avg"] != 1.0 for runs in found for r in runs)
            rows.append([str(p), name] + [
                "" if not runs else ratio_text(median_of(runs) / none, bold) +
                (f" ({median_of(runs, 'regroups_avg'):.2f})" if merges else "") for runs in found])
    heads = [f"c {c:g}, r {r:g}" + (" (as measured)" if (c, r) == (1.0, 1.0) else "") for c, r in factors]
    return table_text(["P", "balancer"] + heads, rows)


def real_versus_none(inputs):
    """Real runs: one row per P, none's median time with its 95 % interval, then each set-up's (rule=R: only those
    under finished rule R), ': N ×' none."""
    rule = inputs.choice("rule", ["retire", "coalesce", "pays"])
    groups, setups = by_setup(Inputs.read(inputs.folders[0], need=svr.COLUMNS), f"{inputs.folders[0]}/runs.csv")
    setups = [s for s in setups if s != "none" and (rule is None or s.endswith(f" {rule}"))]
    rows = []
    for p in sorted({p for p, _ in groups}):
        none = Summary([r["time_s"] for r in none_runs(groups, p, inputs.folders[0])])
        rows.append([str(p), time_with_interval(none)] + [
            f"{time_with_interval(s)}: {s.median / none.median:.0f} ×" if s else ""
            for s in (Summary([r["time_s"] for r in groups[(p, name)]]) if (p, name) in groups else None
                      for name in setups)])
    return table_text(["P", "none"] + setups, rows)


def real_pays(inputs):
    """Real runs under pays: per P four rows, each set-up's median time with its interval, time / none with the
    interval mcmclb compare forms ([low_B / high_A, high_B / low_A], to three decimals, so that an interval that
    reaches 1 shows it), the calibration's median (range), and (time + calibration) / none."""
    folder = inputs.folders[0]
    groups, setups = by_setup(Inputs.read(folder, need=svr.COLUMNS + ["calibration_s"]), f"{folder}/runs.csv")
    rows = []
    for p in sorted({p for p, _ in groups}):
        none = Summary([r["time_s"] for r in none_runs(groups, p, inputs.folders[0])])
        lines = {"time": [], "/ none": [], "calibration": [], "(time + calibration) / none": []}
        for name in setups:
            runs = groups.get((p, name), [])
            if not runs:
                for line in lines.values():
                    line.append("")
                continue
            s = Summary([r["time_s"] for r in runs])
            lines["time"].append(time_with_interval(s))
            if name == "none":
                for key, text in (("/ none", "1"), ("calibration", "-"), ("(time + calibration) / none", "1")):
                    lines[key].append(text)
                continue
            lines["/ none"].append(compare_ratio_text(none, s))
            calibration = calibrations(runs, f"{folder}/runs.csv: a {name} run at P = {p}")
            lines["calibration"].append(calibration_text(calibration))
            lines["(time + calibration) / none"].append(f"{(s.median + median(calibration)) / none.median:.1f}")
        rows += [[str(p), what] + cells for what, cells in lines.items()]
    return table_text(["P", ""] + setups, rows)


def calibration_cost(inputs):
    """The merge calibration's cost of one real study at several commits, one folder each, named by its commit (the
    first is the reference): one row per P and set-up under pays, each folder's median calibration_s with its 95 %
    interval, and each later folder's median over the first's with the interval mcmclb compare forms."""
    data = []
    for folder in inputs.folders:
        groups, setups = by_setup(Inputs.read(folder, need=RUN_COLUMNS + ["calibration_s", "finished"]),
                                  f"{folder}/runs.csv")
        data.append((folder, groups, setups))
    _, first, setups = data[0]
    rows = []
    for p in sorted({p for p, _ in first}):
        for name in setups:
            if name == "none" or (p, name) not in first:
                continue
            found = []
            for folder, groups, _ in data:
                if not groups.get((p, name)):
                    raise InputError(f"{folder}/runs.csv: no valid {name} run at P = {p} (allowed: folders of one "
                                     f"study, each holding the first one's set-ups)")
                found.append(Summary(calibrations(groups[(p, name)], f"{folder}/runs.csv: a {name} run at P = {p}")))
            rows.append([str(p), name] + [time_with_interval(s) for s in found] +
                        [compare_ratio_text(found[0], s, 2) for s in found[1:]])
    names = [os.path.basename(folder) for folder in inputs.folders]
    return table_text(["P", "set-up"] + [f"{n}: median [95 % CI]" for n in names] +
                      [f"{n} / {names[0]} [interval]" for n in names[1:]], rows)


def calibration_text(values):
    """Calibrations in seconds as 'median ms (min-max)'."""
    ms = [1000 * v for v in values]
    digits = 1 if median(ms) < 100 else 0
    digits += 1 if median(ms) < 10 else 0
    return f"{median(ms):.{digits}f} ms ({min(ms):.{digits}f}-{max(ms):.{digits}f})"


def pays_pair(folder, name):
    """The real pays pair of one folder, a sweep that interleaved none's runs and one balancer's under pays, and
    perhaps the same balancer under another rule as a control arm: ({move: none runs}, {move: the balancer's runs
    under pays}, the balancer's set-up name, {move: the control arm's runs} and its name (None without one));
    InputError naming the block otherwise."""
    need = RUN_COLUMNS + ["move", "calibration_s", "finished"]
    rows = [r for r in Inputs.read(folder, need=need) if r["valid"] is True]
    arms = ([r for r in rows if r["balancer"] == "none"], [r for r in rows if r["finished"] == "pays"],
            [r for r in rows if r["balancer"] != "none" and r["finished"] != "pays"])
    by_move = []
    for runs in arms:
        groups = defaultdict(list)
        for r in runs:
            groups[r["move"]].append(r)
        refuse_mixed(groups, f"{folder}/runs.csv")
        by_move.append(groups)
    setup = {setup_name(r) for runs in by_move[1].values() for r in runs}
    control = {setup_name(r) for runs in by_move[2].values() for r in runs}
    if len(setup) != 1 or not by_move[0] or len(control) > 1:
        raise InputError(f"block {name}: {folder} must hold none's runs, one balancer's under pays and at most one "
                         f"control arm (allowed: the folder of one pays study)")
    return by_move[0], by_move[1], setup.pop(), by_move[2], (control.pop() if control else None)


def pays_against_none(inputs):
    """The real pays pair of one folder (pays_pair), none's and one balancer's under pays: one row per move kind,
    each set-up's median time with its 95 % interval, the ratio with the interval mcmclb compare forms ([low_B /
    high_A, high_B / low_A]), the balancer's regroupings per rank and its calibration's median (range); where the
    folder holds a control arm (the balancer under another rule), its median and ratio to none too."""
    (folder,) = inputs.folders
    none_by_move, other_by_move, name, control_by_move, control = pays_pair(folder, inputs.name)
    rows = []
    for move in none_by_move:
        none, runs = none_by_move[move], other_by_move.get(move)
        if not runs or (control and not control_by_move.get(move)):
            raise InputError(f"{folder}/runs.csv: no valid {name} run of {move} moves, or no control run (allowed: "
                             f"the moves of none's runs)")
        a, b = Summary([r["time_s"] for r in none]), Summary([r["time_s"] for r in runs])
        calibration = calibrations(runs, f"{folder}/runs.csv: a run of {move} moves")
        row = [f"{move}-atom", time_with_interval(a), time_with_interval(b), compare_ratio_text(a, b),
               f"{median_of(runs, 'regroups_avg'):g}", calibration_text(calibration)]
        if control:
            c = Summary([r["time_s"] for r in control_by_move[move]])
            row += [time_with_interval(c), compare_ratio_text(a, c)]
        rows.append(row)
    header = ["moves", "none: median [95 % CI]", f"{name}: median [95 % CI]", f"{name} / none [interval]",
              "regroupings per rank", "calibration: median (range)"]
    if control:
        header += [f"{control}: median [95 % CI]", f"{control} / none [interval]"]
    return table_text(header, rows)


def pays_guarantee(inputs):
    """Does pays ever cost more than none? Simulated folders of pays studies: one row per study, variant (move kind,
    the model's factors where not 1, W chains per group where set) and P: each balancer's time / none under pays
    (one figure where all agree), the largest calibration / none, and whether every pays run took at most none's
    time plus its own calibration (where not, which and by how much). A later folder's runs replace an earlier
    one's of the same point (a run made again, e.g. to time its calibration anew)."""
    def variant(r, model=True):
        text = f"{r['move']}-atom" + (f", W = {r['chains_per_group']}" if r.get("chains_per_group") else "")
        if model and ((r.get("model_compute") or 1) != 1 or (r.get("model_reduce") or 1) != 1):
            text += f", model c {r.get('model_compute') or 1:g}, r {r.get('model_reduce') or 1:g}"
        return text

    runs, studies, bases = {}, {}, {}
    for folder in inputs.folders:
        # One run per point within a folder (a second would be silently dropped); across folders a later one
        # replaces an earlier one's on purpose.
        chosen = [r for r in Inputs.read(folder, need=svr.COLUMNS + ["experiment", "move", "calibration_s", "finished"])
                  if r["valid"] is True and (r["balancer"] == "none" or r["finished"] == "pays")]
        found = keyed((((r["experiment"], variant(r), r["nprocs"], setup_name(r, finished=False)), r) for r in chosen),
                      f"{folder}/runs.csv")
        for key, r in found.items():
            studies.setdefault(r["experiment"], len(studies))
            runs[key] = r
            bases[variant(r)] = variant(r, model=False)
    rows = []
    # none has no model: the model's factors change only what pays predicts, so every variant is set against the
    # none run of its move kind and W.
    for study, kind, p in sorted({k[:3] for k in runs if k[3] != "none"}, key=lambda k: (studies[k[0]], k[1], k[2])):
        none = runs.get((study, bases[kind], p, "none"))
        if none is None:
            raise InputError(f"block {inputs.name}: no valid none run of {study}, {kind} at P = {p} (allowed: "
                             f"folders holding none beside each pays run)")
        paid = {name: r for (e, v, q, name), r in runs.items() if (e, v, q) == (study, kind, p) and name != "none"}
        calibrations(paid.values(), f"block {inputs.name}: a pays run of {study} at P = {p}")
        ratios = {name: f"{r['time_s'] / none['time_s']:.3f}" for name, r in paid.items()}
        if len(set(ratios.values())) == 1:
            text = f"{next(iter(ratios.values()))} for all {len(ratios)}"
        else:
            text = ", ".join(f"{name} {ratio}" for name, ratio in ratios.items())
        beyond = [f"{name} by {(r['time_s'] - none['time_s'] - r['calibration_s']) / none['time_s']:.2%} of none"
                  for name, r in paid.items() if r["time_s"] > none["time_s"] + r["calibration_s"]]
        rows.append([study, kind, str(p), text,
                     f"{max(r['calibration_s'] for r in paid.values()) / none['time_s']:.3f}",
                     "yes" if not beyond else "**no**: " + ", ".join(beyond)])
    return table_text(["study", "variant", "P", "time / none under `pays`", "largest calibration / none",
                       "pays ≤ none + calibration"], rows)


def pays_against_rule(inputs):
    """Where pays should take every merge the paper's rule takes: one row per balancer (its intervals and methods
    named), how many points ran under both pays and the balancer's paper rule (DEFAULT_FINISHED), whether the
    regroupings per process (avg, stdev, min, max) are equal in every pair, and the largest time difference with
    the time it is a part of."""
    chosen = []
    for r in Inputs.read(inputs.folders[0], need=svr.COLUMNS + ["finished"]):
        finished = r["finished"] or DEFAULT_FINISHED.get(r["balancer"])
        if r["valid"] is True and finished in ("pays", DEFAULT_FINISHED.get(r["balancer"])):
            chosen.append(((r["balancer"], r["interval"], r["method"], r["nprocs"],
                            "pays" if finished == "pays" else "rule"), r))
    pairs = defaultdict(dict)
    for (*point, rule), r in keyed(chosen, f"{inputs.folders[0]}/runs.csv").items():
        pairs[tuple(point)][rule] = r
    by_balancer = defaultdict(list)
    for key, pair in pairs.items():
        if len(pair) == 2:
            by_balancer[key[0]].append((key, pair))
    if not by_balancer:
        raise InputError(f"{inputs.folders[0]}/runs.csv: no point run under both pays and the paper's finished rule "
                         f"(allowed: a study of configs/merge-pays-sim-paper.yaml)")
    counts = ("regroups_avg", "regroups_std", "regroups_min", "regroups_max")
    rows = []
    for balancer, found in by_balancer.items():
        intervals = sorted({key[1] for key, _ in found if key[1]})
        methods = [m for m in METHODS if m in {key[2] for key, _ in found}]
        name = balancer + (f"({', '.join(map(str, intervals))})" if intervals else "") + f" ({', '.join(methods)})"
        equal = all(pair["pays"][c] == pair["rule"][c] for _, pair in found for c in counts)
        worst = max((pair for _, pair in found), key=lambda pair: abs(pair["pays"]["time_s"] - pair["rule"]["time_s"]))
        difference = abs(worst["pays"]["time_s"] - worst["rule"]["time_s"])
        rows.append([name, str(len(found)), "equal in every pair" if equal else "**differ**",
                     f"{difference:.0e} s of {worst['rule']['time_s']:.2f} s" if difference else
                     f"0 (of {worst['rule']['time_s']:.2f} s)"])
    return table_text(["balancer (intervals) (methods)", "points under pays and the paper's rule",
                       "regroupings per process", "largest time difference"], rows)


def model_items(inputs):
    """What the finished rule pays predicts, from a CSV that mcmclb predict wrote (one block argument, the file): one
    row per atom count, one column per group size g, the predicted time of one item and, beyond g = 1, the speed-up
    over one rank in brackets (item_s at 1 over item_s at g). The arithmetic of the model is the program's, not
    repeated here."""
    path = inputs.folders[0]
    rows = Inputs.read_file(path, ("run_id", "atoms", "size", "item_s"), "predict.csv")
    item = keyed((((r["atoms"], r["size"]), r) for r in rows), path)
    atoms, sizes = sorted({a for a, _ in item}), sorted({m for _, m in item})
    if 1 not in sizes or len(item) != len(atoms) * len(sizes) or len({r["run_id"] for r in rows}) != 1:
        raise InputError(f"{path}: not one run's prediction at every atom count and size, size 1 included "
                         f"(allowed: the output of one mcmclb predict)")
    out = []
    for a in atoms:
        one = item[(a, 1)]["item_s"]
        out.append([str(a)] + [f"{1000 * item[(a, m)]['item_s']:.2f} ms" +
                               ("" if m == 1 else f" ({one / item[(a, m)]['item_s']:.2f})") for m in sizes])
    return table_text(["atoms"] + [f"g = {m}" for m in sizes], out)
