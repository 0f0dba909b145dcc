# SPDX-License-Identifier: BSD-3-Clause
"""The one "which balancer to start with" table (docs/guide/running.md): per kind of work the set-up to start
with, why, and the cases that back it, each verdict counted from the steal-vs-regroup folders it is given. Its links
are written from the repository's root, and documents.relink makes them relative to the page that holds the block."""
from collections import defaultdict

import steal_vs_regroup as svr
from mcmclb_csv import InputError

import os
import re

from mcmclb_stats import Summary, median

from .common import (ROOT, TIMES, Inputs, by_setup, compare_ratio_text, milliseconds, none_runs, ratio_interval,
                     setup_name, table_text, tolerance_text)
from .readme import listed, machine
from .steal_regroup import svr_data
from .your_workload import gain_span

REGROUPERS = ("lookahead(1) range", "mostwork(1) range")
THIEVES = ("steal", "stealrandom")
EVEN, UNEVEN = ("cyclic",), ("random", "lognormal")


def sizes_text(where):
    """'P = 64, 256 (W = 1, 2) and 8192 (W = 8)' of {P: {W}}, rank counts with the same W merged."""
    by_ws = defaultdict(list)
    for p in sorted(where):
        by_ws[tuple(sorted(where[p]))].append(p)
    parts = [f"{', '.join(map(str, ps))} (W = {', '.join(map(str, ws))})" for ws, ps in by_ws.items()]
    return "P = " + (parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1])


def page_link(path):
    """A link to the page at path (from the repository's root), named by its file name."""
    return f"[{path.rsplit('/', 1)[-1]}]({path})"


# The pages the table cites, from the repository's root.
STEAL_VS_REGROUP = "docs/explanation/steal-vs-regroup.md"
MERGE_PAYS = "docs/explanation/merge-pays.md"
PAPER = "docs/explanation/paper-reproduction.md"
YOUR_WORKLOAD = "docs/guide/your-workload.md"
YOUR_CHAINS = "docs/guide/your-chains.md"


def whole(r):
    """A run's whole time, what its user waits for: the run plus the calibration the rule pays makes before it."""
    return r["time_s"] + (r.get("calibration_s") or 0.0)


def evidence_text(found, page, measured_words):
    """'simulated at P = ...; measured at P = ... (how the measured ranks sat on the cores) ([page](page))' of
    {simulated: {P: {W}}}; measured_words says whether a measured rank count had a core per rank, as
    machine-shared counts are not for comparison."""
    parts = [f"simulated at {sizes_text(found[True])}"] if found[True] else []
    parts += [f"measured at {sizes_text(found[False])}, {measured_words}"] if found[False] else []
    return "; ".join(parts) + f" ({page_link(page)})"


def cores_words(cores_by_p):
    """'a core per rank' or 'P ranks on C cores: not for comparison' of {P: cores} of the measured folders."""
    shared = [f"{p} ranks on {c} cores" for p, c in sorted(cores_by_p.items()) if p > c]
    return "a core per rank" if not shared else f"{', '.join(shared)}: not for comparison"


def emulated_cases(folders):
    """Every (folder, workload, W) of emulated steal-vs-regroup folders: (workload, W, P, simulated, {set-up:
    [whole time / ideal, per seed, the median of its repetitions]}, the cores a measured folder's runs had, None
    where simulated) for the regrouping balancers and the thieves the folder ran. Seeds are listed in one order,
    so two set-ups' lists pair by seed."""
    cases = []
    for folder in folders:
        nprocs, data, simulated = svr_data(folder)
        for workload, labels in data.items():
            for w in sorted({w for cells in labels.values() for w in cells}):
                per_seed = {}
                for label in REGROUPERS + THIEVES:
                    cell = labels.get(label, {}).get(w)
                    if cell:
                        per_seed[label] = [median([whole(r) / r["ideal_s"] for r in cell.runs[seed]])
                                           for seed in sorted(cell.runs, key=str)]
                if all(label in per_seed for label in REGROUPERS):
                    cores = None if simulated else int(machine(folder, nprocs)[0])
                    cases.append((workload, w, nprocs, simulated, per_seed, cores))
    return cases


def faster_everywhere(a, b):
    """Whether a is faster than b under every seed (lists paired by seed): only then is a case a win, since the
    seeds are the interval of a simulated case."""
    return len(a) == len(b) and all(x < y for x, y in zip(a, b))


def emulated_row(cases, workloads, what):
    """The row for emulated work of the given workloads: the regrouping balancer faster under every seed in more
    simulated cases, how often each wins and how often the seeds disagree, and how often the better beats every
    thief the case ran under every seed. Measured cases are named as evidence; where their ranks shared cores they
    are not counted (a waiting rank spins on another's core)."""
    mine = [c for c in cases if c[0] in workloads]
    counted = [c for c in mine if c[3] or c[5] >= c[2]]
    if not counted:
        raise InputError(f"block start-with: no case of {', '.join(workloads)} (allowed: steal-vs-regroup folders "
                         f"that ran them with {' and '.join(REGROUPERS)}, simulated or with a core per rank)")
    wins = defaultdict(int)
    beaten, found = 0, {True: defaultdict(set), False: defaultdict(set)}
    for _, w, p, simulated, seeds, _ in mine:
        found[simulated][p].add(w)
    for _, w, p, simulated, seeds, _ in counted:
        first, second = REGROUPERS
        winner = (first if faster_everywhere(seeds[first], seeds[second])
                  else second if faster_everywhere(seeds[second], seeds[first]) else None)
        wins[winner] += 1
        if winner and all(faster_everywhere(seeds[winner], seeds[t]) for t in THIEVES if t in seeds):
            beaten += any(t in seeds for t in THIEVES)
    best = max(REGROUPERS, key=lambda label: wins[label])
    other = next(label for label in REGROUPERS if label != best)
    name, method = best.split()
    cores = {c[2]: c[5] for c in mine if not c[3]}
    return [f"an item's work divides over its group's ranks with no messages, {what} ({', '.join(workloads)})",
            f"`{name}` with `{method}`",
            f"faster than `{other.split()[0]}` under every seed in {wins[best]} of {len(counted)} cases, slower in "
            f"{wins[other]}, the seeds disagree in {wins[None]}; it beats the work stealers under every seed in "
            f"{beaten}",
            evidence_text(found, STEAL_VS_REGROUP, cores_words(cores))]


def named(labels):
    """'`steal` or `stealrandom`' of set-up labels."""
    return " or ".join(f"`{label}`" for label in labels)


def compute_cases(folders):
    """{(move, W): {simulated: {P: {set-up: Summary of its whole times}}}} of steal-vs-regroup compute folders, none
    among the set-ups, and {P: cores} of the measured ones."""
    cases = defaultdict(lambda: defaultdict(dict))
    cores = {}
    for folder in folders:
        rows = Inputs.read(folder, need=svr.COLUMNS + ["finished", "backend", "move", "chains_per_group",
                                                        "work_mode", "calibration_s"])
        if any(r["work_mode"] != "compute" for r in rows):
            raise InputError(f"{folder}/runs.csv: runs not in compute mode (allowed: steal-vs-regroup compute "
                             f"folders)")

        def key(r):
            return (r["move"], int(r["chains_per_group"]), setup_name(r))
        groups, setups = by_setup(rows, f"{folder}/runs.csv", key)
        simulated = all(r["backend"] == "smpi" for r in rows)
        for p, (move, w, name) in list(groups):
            if name != "none":
                continue
            if not simulated:
                cores[p] = int(machine(folder, p)[0])
            none_runs(groups, p, folder, (move, w, "none"))
            cases[(move, w)][simulated][p] = {s[2]: Summary([whole(r) for r in groups[(p, s)]], simulated)
                                              for s in setups if s[:2] == (move, w) and (p, s) in groups}
    return cases, cores


# The compute-mode rows: (move, several chains per group) and the words an application knows its work by.
COMPUTE_KINDS = [
    ("all", False, "an item's work splits over its group, each step waits for a reduction, one walker per group, "
                   "much work a step (a trial moves every atom)"),
    ("single", False, "the same, little work a step (a trial moves one atom)"),
    (None, True, "the same, several walkers per group (`chains_per_group` ≥ 2)"),
]


def compute_rows(folders):
    """One row per kind of compute-mode work (COMPUTE_KINDS): the set-up whose largest whole time / none's over
    the simulated cases is smallest (minimax, as mcmclb advise ranks), the set-ups within 1 % of it named beside
    it; and the measured cases with a core per rank, where the ratio's interval says whether it is a win."""
    cases, cores = compute_cases(folders)
    if not cases:
        raise InputError("block start-with: no compute-mode case (allowed: steal-vs-regroup compute folders)")
    rows = []
    for move, several, words in COMPUTE_KINDS:
        keys = [k for k in cases if (move is None or k[0] == move) and (k[1] > 1) == several]
        simulated = [(p, ratios) for k in keys for p, ratios in cases[k][True].items()]
        if not simulated:
            raise InputError(f"block start-with: no simulated compute-mode case for '{words}' (allowed: "
                             f"steal-vs-regroup compute folders with move {move or 'any'} and "
                             f"{'several chains' if several else 'one chain'} per group)")
        labels = set.intersection(*(set(times) for _, times in simulated))
        worst = {label: max(times[label].median / times["none"].median for _, times in simulated) for label in labels}
        best = min(sorted(labels), key=lambda label: worst[label])
        close = [label for label in sorted(labels) if label != best and worst[label] <= worst[best] * 1.01]
        spans = [times[best].median / times["none"].median for _, times in simulated]
        found = {True: defaultdict(set), False: defaultdict(set)}
        for k in keys:
            for sim in (True, False):
                for p in cases[k][sim]:
                    found[sim][p].add(k[1])
        why = (f"{min(spans):.2f}-{max(spans):.2f}{TIMES} `none` with its calibration (simulated)" if best != "none"
               else "every other set-up is slower in some simulated case, by its calibration or a merge")
        if close:
            why += f"; {named(close)} within 1 %"
        # Measured where each rank had a core: the ratio with the interval mcmclb compare forms, a win only where
        # the interval lies below 1, and none's run length, against which a calibration is paid.
        measured = [(p, cases[k][False][p]) for k in keys for p in cases[k][False]
                    if best in cases[k][False][p] and p <= cores[p]]
        if measured and best != "none":
            texts = [f"{compare_ratio_text(times['none'], times[best], 2)}{TIMES} on runs of "
                     f"{' '.join(milliseconds(times['none'].median))}" for _, times in measured]
            wins = sum((ratio_interval(times["none"], times[best]) or (1, 1))[1] < 1 for _, times in measured)
            why += (f"; measured at P = {listed(sorted({p for p, _ in measured}))}: {', '.join(texts)} "
                    f"(a win beyond the interval in {wins} of {len(measured)})")
        pages = (f", {page_link(MERGE_PAYS)}" if best.endswith(" pays") else "")
        start = f"`{best.split()[0]}` under `finished: pays`" if best.endswith(" pays") else f"`{best}`"
        rows.append([words, start, why, evidence_text(found, STEAL_VS_REGROUP, cores_words(cores)) + pages])
    return rows


def ranks_words(answer):
    """advice.csv's ranks_answer in a clause: by minimax regret, "16 ranks, the fewest within the tolerance in every
    scenario"; from an older advice.csv, "64 ranks buy nothing over 16", or where the most ranks are the fastest,
    what the fewer cost ("16 ranks take 3.6 % longer than 64, with 0.259 of the core-hours")."""
    fastest = re.match(r"the fastest is (\d+) ranks \(.*?\); (\d+) ranks take [\d.e+]+ s \(([\d.]+ %) longer, "
                       r"beyond the [\d.e+-]+ % tolerance\) with ([\d.e+-]+) of the core-hours", answer)
    if fastest:
        return (f"{fastest.group(2)} ranks take {fastest.group(3)} longer than {fastest.group(1)}, with "
                f"{fastest.group(4)} of the core-hours")
    # The minimax answer: "64 ranks: the fewest whose time is within ...", or "...: no rank count is within ...".
    minimax = re.match(r"(?:copies \(.*?\): )?(\d+) ranks: (the fewest|no rank count)", answer)
    if minimax:
        return (f"{minimax.group(1)} ranks, the fewest within the tolerance in every scenario"
                if minimax.group(2) == "the fewest" else f"{minimax.group(1)} ranks, the smallest largest regret")
    return answer.split(":")[0].split(" (")[0]


def advice_row(folder):
    """The row for a user's own walkers: what mcmclb advise says for their trace, with the shipped trace's answer
    (an advise folder) as the example: each rank count's advice, how many ranks are worth it and where the
    tolerance came from, generated where the answer is."""
    rows = Inputs.read(folder, "advice.csv", ["nprocs", "rank", "walkers", "winner", "vs_none_median",
                                              "vs_none_min", "vs_none_max", "robust", "tolerance_pct", "tolerance"])
    first = {r["nprocs"]: r for r in rows if r["rank"] == 1}
    # One clause per advised set-up, with its rank counts and gains (a table cell holds 30 words at most).
    by_winner = defaultdict(list)
    for p in sorted(first):
        by_winner[(first[p]["winner"], first[p]["robust"])].append(p)
    answers = []
    for (winner, robust), ps in by_winner.items():
        at = "P = " + " and ".join(map(str, ps))
        sure = "robust" if robust == "yes" else "not robust"
        if winner == "none":
            answers.append(f"keep `none` at {at}, {sure}")
        else:
            # Each rank count's gain as its range over the scenarios, worst first (a midpoint would hide the
            # scenario it rests on).
            gains = " and ".join(gain_span(first[p]) for p in ps)
            answers.append(f"`{winner}` at {at}, {gains} faster than `none` by scenario, {sure}")
    ranks = ranks_words(first[max(first)].get("ranks_answer", ""))
    tolerance = first[max(first)]
    words = tolerance["tolerance"]
    within = re.search(r"the simulation within ([\d.]+ %) of the real replay", words)
    source = ("measured on this trace" if words.startswith(("measured", "the simulation"))
              else f"assumed; the simulation is {within.group(1)} from a real replay (measured)" if within
              else "assumed, not measured")
    return ["your own walkers, recorded as a trace (the library records it as they run)",
            f"`mcmclb advise`; the shipped trace's (simulated): {'; '.join(answers)}",
            f"prices every set-up whole, calibration included, over the measured speed-ups; tolerance "
            f"{tolerance_text(tolerance['tolerance_pct'])}, {source}" + (f"; {ranks}" if ranks else ""),
            f"{page_link(YOUR_CHAINS)}, {page_link(YOUR_WORKLOAD)}, [advice.csv]({folder}/advice.csv)"]


# Rows that rest on a page's argument rather than on a count, the same wherever the table appears.
FIXED_ROWS = [
    ["ranks that share cores (oversubscribed)", "`none`",
     "a merged group waits for each reduction; under `pays` a balancer runs as `none` plus its calibration",
     page_link(MERGE_PAYS)],
    ["the paper's figures", "`collective` and `async` under their default rules", "the paper's balancers as published",
     page_link(PAPER)],
]


def start_with(inputs):
    """Which balancer to start with, one row per kind of work. Emulated work (steal-vs-regroup folders in sleep or
    spin mode): even chains (cyclic) and uneven ones (random, lognormal), each with the regrouping balancer that wins
    most of their cases, every W and rank count of every folder. Compute mode (steal-vs-regroup compute folders):
    one chain per group and several. A user's own walkers, first: the advice of an advise folder (one holding
    advice.csv). Then the rows that rest on a page's argument (FIXED_ROWS)."""
    emulated, compute, advised = [], [], []
    for folder in inputs.folders:
        if os.path.isfile(os.path.join(ROOT, folder, "advice.csv")):
            advised.append(folder)
            continue
        modes = {r["work_mode"] for r in Inputs.read(folder, need=("work_mode",))}
        (compute if modes == {"compute"} else emulated).append(folder)
    if len(advised) != 1:
        raise InputError(f"block start-with: {len(advised)} folders with advice.csv (allowed: exactly one, the "
                         f"advice for the row on a user's own walkers)")
    cases = emulated_cases(emulated)
    # A user's own walkers first: the row a reader with a code of their own can act on.
    rows = [advice_row(advised[0]), emulated_row(cases, EVEN, "chain lengths rising steadily along the ranks"),
            emulated_row(cases, UNEVEN, "chain lengths at random")]
    rows += compute_rows(compute) + FIXED_ROWS
    return table_text(["your walkers", "start with", "why (each time whole: the run and its calibration)", "evidence"],
                      rows)
