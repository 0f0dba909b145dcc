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
    """'a core per rank' or 'P ranks on C cores: not used' of {P: cores} of the measured folders: where ranks share
    cores a waiting rank spins on another's core, so no comparison rests on those runs."""
    shared = [f"{p} ranks on {c} cores" for p, c in sorted(cores_by_p.items()) if p > c]
    return "a core per rank" if not shared else f"{', '.join(shared)}: not used"


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
    counted cases, how often each wins and how often the seeds disagree, and in how many of the cases that ran a
    thief it beats every thief under every seed. Measured cases are named as evidence; where their ranks shared
    cores they are not counted (a waiting rank spins on another's core), and a row with no other measured case
    says it is simulated only."""
    mine = [c for c in cases if c[0] in workloads]
    counted = [c for c in mine if c[3] or c[5] >= c[2]]
    if not counted:
        raise InputError(f"block start-with: no case of {', '.join(workloads)} (allowed: steal-vs-regroup folders "
                         f"that ran them with {' and '.join(REGROUPERS)}, simulated or with a core per rank)")
    wins = defaultdict(int)
    found = {True: defaultdict(set), False: defaultdict(set)}
    for _, w, p, simulated, seeds, _ in mine:
        found[simulated][p].add(w)
    first, second = REGROUPERS
    for _, w, p, simulated, seeds, _ in counted:
        winner = (first if faster_everywhere(seeds[first], seeds[second])
                  else second if faster_everywhere(seeds[second], seeds[first]) else None)
        wins[winner] += 1
    best = max(REGROUPERS, key=lambda label: wins[label])
    other = next(label for label in REGROUPERS if label != best)
    with_thief = [seeds for *_, seeds, _ in counted if any(t in seeds for t in THIEVES)]
    beaten = sum(all(faster_everywhere(seeds[best], seeds[t]) for t in THIEVES if t in seeds) for seeds in with_thief)
    name, method = best.split()
    cores = {c[2]: c[5] for c in mine if not c[3]}
    only = "simulated only: " if all(c[3] for c in counted) else ""
    return [f"an item's work divides over its group's ranks with no messages, {what} ({', '.join(workloads)})",
            f"`{name}` with `{method}`",
            f"{only}faster than `{other.split()[0]}` under every seed in {wins[best]} of {len(counted)} cases, slower "
            f"in {wins[other]}, the seeds disagree in {wins[None]}; faster than every work stealer under every seed "
            f"in {beaten} of {len(with_thief)}",
            evidence_text(found, STEAL_VS_REGROUP, cores_words(cores))]


def named(labels):
    """'`steal` or `stealrandom`' of set-up labels."""
    return " or ".join(f"`{label}`" for label in labels)


def items_of(rows, where):
    """The items of every chain of a cyclic run (a runs.csv row), as kernel/src/workloads/cyclic.cpp gives them:
    scale * (chain mod period) for chains 0 .. groups * W - 1; InputError naming where for another workload."""
    r = rows[0]
    if r["workload"] != "cyclic" or not r["workload_scale"] or not r["workload_period"]:
        raise InputError(f"{where}: compute-mode runs of workload {r['workload']} (allowed: cyclic, whose items per "
                         f"chain the table counts to give an item's time)")
    chains = r["nprocs"] // r["G"] * int(r["chains_per_group"])
    return sum(r["workload_scale"] * (c % r["workload_period"]) for c in range(chains))


class Case:
    """One compute-mode case (move, W, P) of one folder: {set-up: Summary of whole times}, {set-up: median
    calibration_s} where the set-up calibrates, none's median run, an item's mean time on one rank (the ideal's
    work over the items) and the reductions a split over 2 ranks adds to an item (moves_per_item times the median
    calibration.csv reduce_s at size 2), both in seconds."""

    def __init__(self, times, calibration, run_s, item_s, reductions_s):
        self.times, self.calibration, self.run_s = times, calibration, run_s
        self.item_s, self.reductions_s = item_s, reductions_s


def compute_cases(folders):
    """{(move, W): {simulated: {P: Case}}} of steal-vs-regroup compute folders, none among the set-ups, and {P:
    cores} of the measured ones."""
    cases = defaultdict(lambda: defaultdict(dict))
    cores = {}
    for folder in folders:
        rows = Inputs.read(folder, need=svr.COLUMNS + ["finished", "backend", "move", "chains_per_group",
                                                        "work_mode", "calibration_s", "moves_per_item",
                                                        "workload_scale", "workload_period", "G"])
        if any(r["work_mode"] != "compute" for r in rows):
            raise InputError(f"{folder}/runs.csv: runs not in compute mode (allowed: steal-vs-regroup compute "
                             f"folders)")
        reduce = defaultdict(list)
        for c in Inputs.read(folder, "calibration.csv", need=["run_id", "size", "reduce_s"]):
            if c["size"] == 2 and c["reduce_s"]:
                reduce[c["run_id"]].append(c["reduce_s"])

        def key(r):
            return (r["move"], int(r["chains_per_group"]), setup_name(r))
        groups, setups = by_setup(rows, f"{folder}/runs.csv", key)
        simulated = all(r["backend"] == "smpi" for r in rows)
        for p, (move, w, name) in list(groups):
            if name != "none":
                continue
            if not simulated:
                cores[p] = int(machine(folder, p)[0])
            nones = none_runs(groups, p, folder, (move, w, "none"))
            mine = [s for s in setups if s[:2] == (move, w) and (p, s) in groups]
            reductions = [v for s in mine for r in groups[(p, s)] for v in reduce[r["run_id"]]]
            if not reductions:
                raise InputError(f"{folder}/calibration.csv: no reduction over 2 ranks for {move} moves, W = {w}, "
                                 f"P = {p} (allowed: the calibrations of the runs under pays)")
            item_s = median([r["ideal_s"] for r in nones]) * p / items_of(nones, f"{folder}/runs.csv")
            cases[(move, w)][simulated][p] = Case(
                {s[2]: Summary([whole(r) for r in groups[(p, s)]], simulated) for s in mine},
                {s[2]: median([r["calibration_s"] for r in groups[(p, s)]]) for s in mine
                 if all(r.get("calibration_s") is not None for r in groups[(p, s)])},
                median([r["time_s"] for r in nones]), item_s, median([r["moves_per_item"] for r in nones]) *
                median(reductions))
    return cases, cores


# The compute-mode rows: (move, several chains per group, the words before the item's time, if any). The two
# rows of one walker per group are told apart by what a reader can time: an item on one rank against the
# reductions that splitting it over 2 ranks adds.
COMPUTE_KINDS = [
    ("all", False, "an item's work splits over its group, each step waits for a reduction, one walker per group"),
    ("single", False, "the same"),
    (None, True, "the same, several walkers per group (`chains_per_group` ≥ 2)"),
]


def span_ms(values):
    """'1.83-1.95 ms' (or '1.16 ms' where they agree to three digits) of times in seconds."""
    low, high = (" ".join(milliseconds(v)) for v in (min(values), max(values)))
    return low if low == high else f"{low.split()[0]}-{high}"


def item_words(simulated):
    """'an item takes X ms on one rank, more than the Y ms of reductions a split over 2 ranks adds (simulated)' of
    the simulated Cases of a row: the quantities that decide whether splitting an item can pay."""
    items = [c.item_s for c in simulated]
    reductions = [c.reductions_s for c in simulated]
    more = "more" if min(items) > max(reductions) else "less" if max(items) < min(reductions) else "about"
    than = "as" if more == "about" else "than"
    return (f"an item takes {span_ms(items)} on one rank, {more} {than} the {span_ms(reductions)} of reductions "
            f"splitting it over 2 ranks adds (simulated)")


def close_words(close, best, simulated):
    """The set-ups within 1 % of the best at their worst, each with its range case by case against the best."""
    spans = []
    for label in close:
        ratios = [c.times[label].median / c.times[best].median for c in simulated]
        low, high = f"{min(ratios):.2f}", f"{max(ratios):.2f}"
        spans.append(f"`{label}` {low}{TIMES}" if low == high else f"`{label}` {low} to {high}{TIMES}")
    return f"; {named(close)} as good at the worst (within 1 %), case by case {', '.join(spans)} `{best}`"


def measured_words(best, measured, start, simulated):
    """The measured cases' part of a row's why, and the start it leaves: the best against none with the interval
    mcmclb compare forms (for none, every other set-up against it). A measurement agrees where it shows a win
    beyond its interval and no interval lies on the other side of 1; one that disagrees takes the recommendation
    back: the row then says both and sends the reader to mcmclb advise."""
    ps = f"P = {listed(sorted({p for p, _ in measured}))}"
    if best == "none":
        faster = [(label, c) for _, c in measured for label in sorted(c.times) if label != "none"
                  and (ratio_interval(c.times["none"], c.times[label]) or (1, 1))[1] < 1]
        if not faster:
            return f"; measured at {ps}: no set-up faster than `none` beyond its interval", start
        texts = [f"`{label}` {compare_ratio_text(c.times['none'], c.times[label], 2)}{TIMES}" for label, c in faster]
        return (f"; measured at {ps}: {', '.join(texts)} `none`; they disagree, so run `mcmclb advise` on your "
                f"trace", ADVISE)
    texts = [f"{compare_ratio_text(c.times['none'], c.times[best], 2)}{TIMES} on runs of "
             f"{' '.join(milliseconds(c.run_s))}" for _, c in measured]
    intervals = [ratio_interval(c.times["none"], c.times[best]) or (1, 1) for _, c in measured]
    wins = sum(hi < 1 for _, hi in intervals)
    if wins and not any(lo > 1 for lo, _ in intervals):
        return f"; measured at {ps}: {', '.join(texts)} (a win beyond the interval in {wins} of {len(measured)})", start
    calibrated = [c.calibration[best] for _, c in measured if best in c.calibration]
    texts = [text + (f", calibration {' '.join(milliseconds(c.calibration[best]))}" if best in c.calibration
                     else "") for text, (_, c) in zip(texts, measured)]
    simulated_runs = (f" on runs of {span_ms([c.run_s for c in simulated])}" +
                      (f", calibrations {span_ms([c.calibration[best] for c in simulated])}" if calibrated else ""))
    return (f"{simulated_runs}; measured at {ps}: {', '.join(texts)}; they disagree, so let `mcmclb advise` price "
            f"your own trace", ADVISE)


ADVISE = "`mcmclb advise` on your trace"


def compute_rows(folders):
    """One row per kind of compute-mode work (COMPUTE_KINDS): the set-up whose largest whole time / none's over
    the simulated cases is smallest (minimax, as mcmclb advise ranks), the set-ups within 1 % of it at their worst
    named beside it with their range case by case; and the measured cases with a core per rank, where the ratio's
    interval says whether it is a win. Where the measurement contradicts the simulated pick, the row recommends
    mcmclb advise instead and gives both."""
    cases, cores = compute_cases(folders)
    if not cases:
        raise InputError("block start-with: no compute-mode case (allowed: steal-vs-regroup compute folders)")
    rows = []
    for move, several, words in COMPUTE_KINDS:
        keys = [k for k in cases if (move is None or k[0] == move) and (k[1] > 1) == several]
        simulated = [case for k in keys for case in cases[k][True].values()]
        if not simulated:
            raise InputError(f"block start-with: no simulated compute-mode case for '{words}' (allowed: "
                             f"steal-vs-regroup compute folders with move {move or 'any'} and "
                             f"{'several chains' if several else 'one chain'} per group)")
        labels = set.intersection(*(set(c.times) for c in simulated))
        worst = {label: max(c.times[label].median / c.times["none"].median for c in simulated) for label in labels}
        best = min(sorted(labels), key=lambda label: worst[label])
        close = [label for label in sorted(labels) if label != best and worst[label] <= worst[best] * 1.01]
        spans = [c.times[best].median / c.times["none"].median for c in simulated]
        found = {True: defaultdict(set), False: defaultdict(set)}
        for k in keys:
            for sim in (True, False):
                for p in cases[k][sim]:
                    found[sim][p].add(k[1])
        start = f"`{best.split()[0]}` under `finished: pays`" if best.endswith(" pays") else f"`{best}`"
        why = (f"{min(spans):.2f}-{max(spans):.2f}{TIMES} `none` with its calibration (simulated)" if best != "none"
               else "every other set-up is slower in some simulated case, by its calibration or a merge")
        if close:
            why += close_words(close, best, simulated)
        # Measured where each rank had a core (a waiting rank spins on a shared core, so no other counts).
        measured = [(p, cases[k][False][p]) for k in keys for p in cases[k][False]
                    if best in cases[k][False][p].times and p <= cores[p]]
        if measured:
            more, start = measured_words(best, measured, start, simulated)
            if start == ADVISE and best != "none":
                why = f"simulated: `{best}` {min(spans):.2f}-{max(spans):.2f}{TIMES} `none`"
            why += more
        pages = (f", {page_link(MERGE_PAYS)}" if best.endswith(" pays") else "")
        key = words if several else f"{words}; {item_words(simulated)}"
        rows.append([key, start, why, evidence_text(found, STEAL_VS_REGROUP, cores_words(cores)) + pages])
    return rows


def ranks_words(answer):
    """advice.csv's ranks_answer in a clause: by minimax regret, "16 ranks, the fewest within the tolerance of the
    fastest count in every scenario"; from an older advice.csv, "64 ranks buy nothing over 16", or where the most
    ranks are the fastest, what the fewer cost ("16 ranks take 3.6 % longer than 64, with 0.259 of the core-hours")."""
    fastest = re.match(r"the fastest is (\d+) ranks \(.*?\); (\d+) ranks take [\d.e+]+ s \(([\d.]+ %) longer, "
                       r"beyond the [\d.e+-]+ % tolerance\) with ([\d.e+-]+) of the core-hours", answer)
    if fastest:
        return (f"{fastest.group(2)} ranks take {fastest.group(3)} longer than {fastest.group(1)}, with "
                f"{fastest.group(4)} of the core-hours")
    # The threshold answer: "64 ranks: the fewest core-hours ... among the counts whose time is within ..." (from an
    # older advice.csv "64 ranks: the fewest whose time is within ..."), or "...: no rank count is within ...".
    minimax = re.match(r"(?:copies \(.*?\): )?(\d+) ranks: (the fewest core-hours|the fewest|no rank count)", answer)
    if minimax:
        return {"the fewest core-hours": f"{minimax.group(1)} ranks, the cheapest within the tolerance of the fastest "
                                         f"count in every scenario",
                "the fewest": f"{minimax.group(1)} ranks, the fewest within the tolerance of the fastest count in "
                              f"every scenario"}.get(minimax.group(2), f"{minimax.group(1)} ranks, the smallest "
                                                                       f"largest regret")
    return answer.split(":")[0].split(" (")[0]


def advice_row(folder):
    """The row for a user's own walkers: what mcmclb advise says for their trace, with the shipped trace's answer
    (an advise folder) as the example: the set-up advised at each rank count, where the tolerance came from and how
    many ranks are worth it, generated where the answer is. Short (under 50 words): the gains are on the pages it
    links."""
    rows = Inputs.read(folder, "advice.csv", ["nprocs", "rank", "walkers", "winner", "vs_none_median",
                                              "vs_none_min", "vs_none_max", "robust", "tolerance_pct", "tolerance"])
    first = {r["nprocs"]: r for r in rows if r["rank"] == 1}
    by_winner = defaultdict(list)
    for p in sorted(first):
        by_winner[first[p]["winner"]].append(p)
    answers = [f"`{winner}` at P = {' and '.join(map(str, ps))}" for winner, ps in by_winner.items()]
    ranks = ranks_words(first[max(first)].get("ranks_answer", ""))
    tolerance = first[max(first)]
    words = tolerance["tolerance"]
    within = re.search(r"the simulation within ([\d.]+ %) of the real replay", words)
    source = ("measured" if words.startswith(("measured", "the simulation"))
              else f"assumed; simulation within {within.group(1)} of a real replay" if within else "assumed")
    return ["your own walkers, recorded as a trace",
            f"`mcmclb advise`; the shipped trace's (simulated): {', '.join(answers)}",
            f"prices set-ups with their calibration; tolerance "
            f"{tolerance_text(tolerance['tolerance_pct'])} ({source})" + (f"; {ranks}" if ranks else ""),
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
