# SPDX-License-Identifier: BSD-3-Clause
"""What the walkers library costs an application and how it places chains (docs/notes/walkers-overhead,
docs/notes/exact-sum-cost, docs/notes/chain-order, docs/notes/checkpoint-cost, docs/data/checkpoint-forms)."""
from mcmclb_csv import RUN_COLUMNS, InputError, run_label
from mcmclb_stats import Summary

from .common import Inputs, compare_ratio_text, keyed, ratio_interval, table_text

# Each mode of examples/ising the table lists, in its order, with what it runs.
MODES = (("plain", "its own loop, the calls to its chains compiled directly"),
         ("virtual", "the same loop, calling the chains through the library's interface"),
         ("none", "the library's run under `none`"))


def walkers_overhead(inputs):
    """One row per mode of the overhead CSV: runs, median time with its 95 % interval, and the ratio of medians to
    the plain loop's with the interval mcmclb compare forms."""
    path = inputs.folders[0]
    rows = Inputs.read_file(path, ("round", "mode", "seconds", "ranks", "commit"), "walkers-overhead.csv")
    for column in ("ranks", "commit"):
        if len({r[column] for r in rows}) != 1:
            raise InputError(f"{path}: more than one {column} (allowed: one measurement, at one commit and P)")
    summaries = {}
    for mode, _ in MODES:
        values = [r["seconds"] for r in rows if r["mode"] == mode]
        if not values:
            raise InputError(f"{path}: no run of mode {mode} (allowed: rows of {', '.join(m for m, _ in MODES)})")
        summaries[mode] = Summary(values)
    out = []
    for mode, what in MODES:
        s = summaries[mode]
        interval = f" [{s.lo:.3f}, {s.hi:.3f}]" if s.has_interval else f" ({s.note})"
        ratio = "1" if mode == "plain" else compare_ratio_text(summaries["plain"], s)
        out.append([f"`{mode}`: {what}", str(s.n), f"{s.median:.3f} s{interval}", ratio])
    p, commit = rows[0]["ranks"], rows[0]["commit"]
    lib, loop = summaries["none"], summaries["virtual"]
    interval, within = ratio_interval(loop, lib), ""
    if interval and interval[0] <= 1 <= interval[1]:
        within = f"; within {100 * max(1 - interval[0], interval[1] - 1):.1f} %"
    sentence = (f"\n\nThe library's run against the loop through the interface: "
                f"{compare_ratio_text(loop, lib)}{within}.")
    return table_text([f"examples/ising at P = {p}, commit {commit} (measured)", "runs", "median time [95 % interval]",
                       "÷ plain [interval]"], out) + sentence


# The modes of tests/bench_exact_sum.cpp, in the table's order: (plain, exact) pairs per vector length.
EXACT_SUM_SIZES = (1, 64)


def exact_sum_cost(inputs):
    """Per vector length: the plain sum's and the exact sum's median seconds per call with their 95 % intervals, and
    the ratio of medians with the interval mcmclb compare forms."""
    path = inputs.folders[0]
    rows = Inputs.read_file(path, ("round", "mode", "seconds", "ranks", "calls", "commit", "wait"), "exact-sum-cost.csv")
    for column in ("ranks", "commit", "calls", "wait"):
        if len({r[column] for r in rows}) != 1:
            raise InputError(f"{path}: more than one {column} (allowed: one measurement, at one commit and P)")
    out = []
    for n in EXACT_SUM_SIZES:
        summaries = {}
        for kind in ("plain", "exact"):
            values = [r["seconds"] * 1e6 for r in rows if r["mode"] == f"{kind}-{n}"]
            if not values:
                raise InputError(f"{path}: no run of mode {kind}-{n} (allowed: plain-1, exact-1, plain-64, exact-64)")
            summaries[kind] = Summary(values)
        cells = []
        for kind in ("plain", "exact"):
            s = summaries[kind]
            interval = f" [{s.lo:.2f}, {s.hi:.2f}]" if s.has_interval else f" ({s.note})"
            cells.append(f"{s.median:.2f} µs{interval}")
        what = "one double" if n == 1 else f"{n} doubles"
        out.append([what, str(summaries["plain"].n), *cells, compare_ratio_text(summaries["plain"], summaries["exact"])])
    r = rows[0]
    return table_text([f"allreduce of, at P = {r['ranks']}, commit {r['commit']}, wait {r['wait']} (measured)", "rounds",
                       "plain sum, µs per call [95 % interval]", "ops::exact_sum [interval]",
                       "exact ÷ plain [interval]"], out)


# The cases of tests/bench_chain_order.cpp, in the table's order.
CHAIN_ORDER_CASES = ("shortest-first as numbered", "longest-first as numbered", "longest-first placed by items")


def chain_order_measured(inputs):
    """Per balancer: each case's median time with its 95 % interval, and the placed longest-first chains' time
    over the shortest-first numbering's, with the interval mcmclb compare forms."""
    path = inputs.folders[0]
    rows = Inputs.read_file(path, ("round", "balancer", "case", "seconds", "valid", "ranks", "item_ms", "commit",
                                   "wait"), "chain-order-p2.csv")
    for column in ("ranks", "commit", "item_ms", "wait"):
        if len({r[column] for r in rows}) != 1:
            raise InputError(f"{path}: more than one {column} (allowed: one measurement, at one commit and P)")
    if any(r["valid"] != 1 for r in rows):
        raise InputError(f"{path}: a run that was not valid (allowed: valid runs only)")
    out = []
    for balancer in dict.fromkeys(r["balancer"] for r in rows):
        summaries = {}
        for case in CHAIN_ORDER_CASES:
            values = [r["seconds"] for r in rows if r["balancer"] == balancer and r["case"] == case]
            if not values:
                raise InputError(f"{path}: no run of {balancer} with {case} (allowed: every balancer in every case)")
            summaries[case] = Summary(values)
        cells = []
        for case in CHAIN_ORDER_CASES:
            s = summaries[case]
            cells.append(f"{s.median:.3f} s" + (f" [{s.lo:.3f}, {s.hi:.3f}]" if s.has_interval else f" ({s.note})"))
        shortest, placed = summaries[CHAIN_ORDER_CASES[0]], summaries[CHAIN_ORDER_CASES[2]]
        ratio = compare_ratio_text(shortest, placed)
        interval = ratio_interval(shortest, placed)
        if interval and interval[0] <= 1 <= interval[1]:
            ratio += f"; within {100 * max(1 - interval[0], interval[1] - 1):.1f} %"
        out.append([f"`{balancer}`", str(shortest.n), *cells, ratio])
    r = rows[0]
    return table_text([f"at P = {r['ranks']}, items of {r['item_ms']:g} ms, wait {r['wait']}, commit {r['commit']} "
                       f"(measured)", "rounds",
                       "shortest first, as numbered [95 % interval]", "longest first, as numbered [interval]",
                       "longest first, placed by items [interval]", "placed ÷ shortest first [interval]"], out)


def chain_order_simulated(inputs):
    """Simulated time_s per P and balancer (run_label) of three folders, the same chains numbered shortest first,
    numbered longest first, and numbered longest first but placed by walkers::place_chains; the placed ones' time
    over the shortest-first numbering's."""
    if len(inputs.folders) != 3:
        raise InputError(f"block {inputs.name}: {len(inputs.folders)} folders (allowed: shortest first, longest "
                         f"first, placed)")
    found = []
    for folder in inputs.folders:
        runs = [r for r in Inputs.read(folder, need=RUN_COLUMNS) if r["valid"] is True]
        if not runs:
            raise InputError(f"{folder}/runs.csv: no valid run (allowed: a folder of simulated runs)")
        found.append(keyed((((r["nprocs"], run_label(r)), r) for r in runs), f"{folder}/runs.csv"))
    out = []
    for key in found[0]:
        if not all(key in f for f in found):
            raise InputError(f"{inputs.folders[0]}: P = {key[0]}, {key[1]} is not in every folder (allowed: the same "
                             f"runs in each)")
        times = [f[key]["time_s"] for f in found]
        out.append([str(key[0]), f"`{key[1]}`", f"{found[0][key]['ideal_s']:.3f}", *(f"{t:.3f}" for t in times),
                    f"{times[2] / times[0]:.3f}"])
    return table_text(["P", "balancer", "ideal, s", "shortest first, as numbered, s", "longest first, as numbered, s",
                       "longest first, placed by items, s", "placed ÷ shortest first"], out)


# The modes of tests/bench_checkpoint.cpp, in the table's order, with what each does.
CHECKPOINT_MODES = (("none", "no checkpoint"), ("every-60s", "every 60 s (the default): each chain's end only, here"),
                    ("every-1s", "every second"), ("every-item", "after every item"))


def checkpoint_cost(inputs):
    """Per mode: the runs' median time with its 95 % interval, the checkpoints a run wrote and the seconds they took
    (medians over the runs, every rank's summed), and the time over no checkpoint's with the interval mcmclb compare
    forms."""
    path = inputs.folders[0]
    rows = Inputs.read_file(path, ("round", "mode", "seconds", "valid", "checkpoints", "checkpoint_s", "ranks",
                                   "item_ms", "state_kb", "commit", "wait"), "checkpoint-cost.csv")
    for column in ("ranks", "commit", "item_ms", "state_kb", "wait"):
        if len({r[column] for r in rows}) != 1:
            raise InputError(f"{path}: more than one {column} (allowed: one measurement, at one commit and P)")
    if any(r["valid"] != 1 for r in rows):
        raise InputError(f"{path}: a run that was not valid (allowed: valid runs only)")
    summaries, out = {}, []
    for mode, _ in CHECKPOINT_MODES:
        mine = [r for r in rows if r["mode"] == mode]
        if not mine:
            raise InputError(f"{path}: no run of mode {mode} (allowed: rows of "
                             f"{', '.join(m for m, _ in CHECKPOINT_MODES)})")
        summaries[mode] = (Summary([r["seconds"] for r in mine]), Summary([r["checkpoints"] for r in mine]),
                           Summary([r["checkpoint_s"] for r in mine]))
    for mode, what in CHECKPOINT_MODES:
        s, written, spent = summaries[mode]
        interval = f" [{s.lo:.3f}, {s.hi:.3f}]" if s.has_interval else f" ({s.note})"
        ratio = "1" if mode == "none" else compare_ratio_text(summaries["none"][0], s)
        band = ratio_interval(summaries["none"][0], s)
        if mode != "none" and band and band[0] <= 1 <= band[1]:
            ratio += f"; within {100 * max(1 - band[0], band[1] - 1):.1f} %"
        out.append([f"`{mode}`: {what}", str(s.n), f"{s.median:.3f} s{interval}", f"{written.median:.0f}",
                    f"{spent.median:.3f} s", ratio])
    r = rows[0]
    return table_text([f"at P = {r['ranks']}, items of {r['item_ms']:g} ms, states of {r['state_kb']} KB, wait "
                       f"{r['wait']}, commit {r['commit']} (measured)", "runs", "median time [95 % interval]",
                       "checkpoints a run", "seconds writing them", "÷ none [interval]"], out)


def checkpoint_forms(inputs):
    """Per state size and form: the slowest member's seconds per checkpoint of the state (its checkpoint files'
    seconds over the run's ITEMS - 1 checkpoints, the chain's 8-byte end included), the largest member's peak
    memory, both medians over the rounds, and spread over whole paired by round."""
    path = inputs.folders[0]
    rows = Inputs.read_file(path, ("round", "form", "state_mb", "rank", "checkpoint_s", "peak_mib", "valid", "items",
                                   "ranks", "commit", "cores"), "checkpoint-forms.csv")
    for column in ("ranks", "commit", "items"):
        if len({r[column] for r in rows}) != 1:
            raise InputError(f"{path}: more than one {column} (allowed: one measurement, at one commit and P)")
    if any(r["valid"] != 1 for r in rows):
        raise InputError(f"{path}: a run that was not valid (allowed: valid runs only)")
    if any(r["cores"] < r["ranks"] for r in rows):
        raise InputError(f"{path}: more ranks than cores (allowed: a core per rank)")
    runs = {}  # (size, form, round) -> [seconds per checkpoint, peak MiB], the largest over the ranks
    for r in rows:
        run = runs.setdefault((r["state_mb"], r["form"], r["round"]), [0.0, 0.0])
        run[0] = max(run[0], r["checkpoint_s"] / (r["items"] - 1))
        run[1] = max(run[1], r["peak_mib"])
    out = []
    for size in sorted({k[0] for k in runs}):
        by_form = {form: {k[2]: v for k, v in runs.items() if k[0] == size and k[1] == form}
                   for form in ("whole", "spread")}
        if not all(by_form.values()):
            raise InputError(f"{path}: {size} MB lacks a form (allowed: whole and spread at every size)")
        paired = sorted(set(by_form["whole"]) & set(by_form["spread"]))
        ratio = Summary([by_form["spread"][k][0] / by_form["whole"][k][0] for k in paired])
        for form in ("whole", "spread"):
            s = Summary([v[0] for v in by_form[form].values()])
            peak = Summary([v[1] for v in by_form[form].values()])
            interval = f" [{s.lo:.4f}, {s.hi:.4f}]" if s.has_interval else f" ({s.note})"
            ratio_text = "1" if form == "whole" else (f"{ratio.median:.2f} [{ratio.lo:.2f}, {ratio.hi:.2f}]"
                                                        if ratio.has_interval else f"{ratio.median:.2f} ({ratio.note})")
            out.append([f"{size:,} MB", form, str(s.n), f"{s.median:.4f} s{interval}", f"{peak.median:,.0f}",
                        ratio_text])
    r = rows[0]
    return table_text([f"state a group (P = {r['ranks']}, one group, commit {r['commit']}, measured)", "form", "runs",
                       "slowest member, seconds per checkpoint [95 % interval]", "largest member's peak (MiB)",
                       "spread ÷ whole, paired by round [interval]"], out)
