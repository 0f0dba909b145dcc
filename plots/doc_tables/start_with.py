# SPDX-License-Identifier: BSD-3-Clause
"""The one "which balancer to start with" table (docs/guide/running.md): per kind of work the set-up to start
with, why, and the cases that back it, each verdict counted from the steal-vs-regroup folders it is given. Its links
are written from the repository's root, and documents.relink makes them relative to the page that holds the block."""
from collections import defaultdict

import steal_vs_regroup as svr
from mcmclb_csv import InputError

import os
import re

from .common import ROOT, TIMES, Inputs, by_setup, median_of, none_runs, setup_name, table_text, tolerance_text
from .readme import machine
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


def evidence_text(found, page):
    """'simulated at P = ...; measured at P = ... ([page](page))' of {simulated: {P: {W}}}. Where measured ranks
    outnumbered the cores, the table's head says so (start_with)."""
    parts = [f"{'simulated' if sim else 'measured'} at {sizes_text(found[sim])}" for sim in (True, False) if found[sim]]
    return "; ".join(parts) + f" ({page_link(page)})"


def emulated_cases(folders):
    """Every (folder, workload, W) of emulated steal-vs-regroup folders: (workload, W, P, simulated, {set-up: time /
    ideal, median over seeds}, the cores a measured folder's runs had, None where simulated) for the regrouping
    balancers and the thieves the folder ran."""
    cases = []
    for folder in folders:
        nprocs, data, simulated = svr_data(folder)
        for workload, labels in data.items():
            for w in sorted({w for cells in labels.values() for w in cells}):
                ratios = {label: labels[label][w].ratio for label in REGROUPERS + THIEVES
                          if w in labels.get(label, {})}
                if all(label in ratios for label in REGROUPERS):
                    cores = None if simulated else int(machine(folder, nprocs)[0])
                    cases.append((workload, w, nprocs, simulated, ratios, cores))
    return cases


def emulated_row(cases, workloads, what):
    """The row for emulated work of the given workloads: the regrouping balancer that wins most of their cases, how
    often, and how often the better regrouping beats every thief the case ran."""
    mine = [c for c in cases if c[0] in workloads]
    if not mine:
        raise InputError(f"block start-with: no case of {', '.join(workloads)} (allowed: steal-vs-regroup folders "
                         f"that ran them with {' and '.join(REGROUPERS)})")
    wins = defaultdict(int)
    beaten, found = 0, {True: defaultdict(set), False: defaultdict(set)}
    for _, w, p, simulated, ratios, _ in mine:
        wins[min(REGROUPERS, key=lambda label: ratios[label])] += 1
        thieves = [ratios[t] for t in THIEVES if t in ratios]
        beaten += bool(thieves) and min(ratios[r] for r in REGROUPERS) < min(thieves)
        found[simulated][p].add(w)
    best = max(REGROUPERS, key=lambda label: wins[label])
    other = next(label for label in REGROUPERS if label != best)
    name, method = best.split()
    return [f"an item's time falls in proportion to its group's size (emulated: `sleep`, `spin`), {what} "
            f"({', '.join(workloads)}), any W",
            f"`{name}` with `{method}`",
            f"it beats `{other.split()[0]}` in {wins[best]} of {len(mine)} cases; the better of the two beats the "
            f"work stealers in {beaten} of {len(mine)}",
            evidence_text(found, STEAL_VS_REGROUP)]


def compute_rows(folders):
    """The two rows for compute mode: one chain per group (the set-up under pays whose guarantee holds, beside
    mostwork's larger but unpriced gain, both over the simulated cases) and several (the balancers that move chains),
    from steal-vs-regroup compute folders."""
    one, several = defaultdict(list), []
    found = {1: {True: defaultdict(set), False: defaultdict(set)}, 2: {True: defaultdict(set), False: defaultdict(set)}}
    for folder in folders:
        rows = Inputs.read(folder, need=svr.COLUMNS + ["finished", "backend", "move", "chains_per_group",
                                                        "work_mode"])
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
            none = median_of(none_runs(groups, p, folder, (move, w, "none")))
            ratios = {s[2]: median_of(groups[(p, s)]) / none for s in setups
                      if s[:2] == (move, w) and (p, s) in groups and s[2] != "none"}
            found[1 if w == 1 else 2][simulated][p].add(w)
            if w == 1:
                for label in ("lookahead(1) range pays", "mostwork(1) range pays"):
                    if label in ratios and simulated:
                        one[label].append(ratios[label])
            else:
                several.append(min(ratios, key=ratios.get).split()[0])
    if not one.get("lookahead(1) range pays") or not one.get("mostwork(1) range pays") or not several:
        raise InputError("block start-with: no compute-mode case with one and with several chains per group "
                         "(allowed: steal-vs-regroup compute folders with lookahead(1) and mostwork(1) under pays)")
    look, most = one["lookahead(1) range pays"], one["mostwork(1) range pays"]
    stealers = sum(name.startswith("steal") for name in several)
    return [
        ["an item's work splits over its group, but each step waits for a reduction (compute mode), one chain per "
         "group",
         "`lookahead(1)` under `finished: pays`",
         f"it merges only where the chain then ends sooner ({min(look):.2f}-{max(look):.2f}{TIMES} `none`, "
         f"simulated); `mostwork(1)` gained more ({min(most):.2f}-{max(most):.2f}{TIMES}), but its closing merges "
         f"are not priced",
         evidence_text(found[1], STEAL_VS_REGROUP) + ", " + page_link(MERGE_PAYS)],
        ["the same, several chains per group (`chains_per_group` ≥ 2)", "`steal`",
         f"moving an unstarted chain costs one message, not a reduction per step: a balancer that moves "
         f"chains is fastest in {stealers} of {len(several)} cases",
         evidence_text(found[2], STEAL_VS_REGROUP)]]


def ranks_words(answer):
    """advice.csv's ranks_answer in a clause: "64 ranks buy nothing over 16", or where the most ranks are the
    fastest, what the fewer cost ("16 ranks take 3.6 % longer than 64, with 0.259 of the core-hours")."""
    fastest = re.match(r"the fastest is (\d+) ranks \(.*?\); (\d+) ranks take [\d.e+]+ s \(([\d.]+ %) longer, "
                       r"beyond the [\d.e+-]+ % tolerance\) with ([\d.e+-]+) of the core-hours", answer)
    if fastest:
        return (f"{fastest.group(2)} ranks take {fastest.group(3)} longer than {fastest.group(1)}, with "
                f"{fastest.group(4)} of the core-hours")
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
    # Measured rank counts that outnumbered the machine's cores, said once, in the evidence column's head.
    shared = sorted({(c[2], c[5]) for c in cases if not c[3] and c[2] > c[5]})
    evidence = "evidence" + "".join(f" (measured at P = {p}: {p} ranks on {cores} cores)" for p, cores in shared)
    return table_text(["your work", "start with", "why", evidence], rows)
