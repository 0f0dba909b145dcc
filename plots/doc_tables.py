#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Tables that cannot drift: each table of numbers in the Markdown documents is generated from committed CSVs, in a
marked block that this script rewrites.

    plots/doc_tables.py [--check] [FILE.md ...]

A block is the lines between

    <!-- BEGIN generated: NAME ARG... -->
    <!-- END generated -->

where NAME is one of the tables registered below (TABLES) and each ARG is a results folder relative to the
repository root (docs/steal-vs-regroup-seeds-1024) or an option KEY=VALUE of that table. Without --check every
block is rewritten in place with what its CSVs give now (each changed file replaced at once: written beside it,
then renamed); with --check nothing is written, one line is printed per block that differs, and the exit code is
1 if any does. Default files: README.md and docs/**/*.md of the repository.

Only the functions in TABLES run: a document names a table and its folders, never a command. An unknown name, a
folder outside the repository, a missing or malformed CSV, a bad option or a block without its END marker is one
line `doc_tables.py: FILE:LINE: problem (allowed ...)` and exit 2, before any file is written."""
import argparse
import glob
import os
import re
import sys
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import steal_vs_regroup as svr  # noqa: E402
from mcmclb_csv import (DEFAULT_FINISHED, RUN_COLUMNS, ArgumentParser, InputError, fail,  # noqa: E402
                        library_name, markdown_table, open_regular, read_csv, read_runs, run_label,
                        write_text_atomically)
from mcmclb_stats import Summary, median  # noqa: E402

BEGIN = re.compile(r"^(?P<indent>[ \t]*)<!-- BEGIN generated: (?P<spec>.*?) -->[ \t]*$")
END = re.compile(r"^[ \t]*<!-- END generated -->[ \t]*$")
MARKER = re.compile(r"^[ \t]*<!-- (BEGIN|END) generated")
FENCE = re.compile(r"^[ \t]*(```|~~~)")


# ---- Reading the CSVs a block names ----


class Inputs:
    """The folders and options of one block, checked, with each runs.csv read once per invocation (several blocks
    name the same folder)."""

    cache = {}

    def __init__(self, name, args, folders, options):
        self.name = name
        paths = [a for a in args if "=" not in a]
        given = dict(a.split("=", 1) for a in args if "=" in a)
        if not folders[0] <= len(paths) <= folders[1]:
            count = str(folders[0]) if folders[0] == folders[1] else f"{folders[0]} to {folders[1]}"
            raise InputError(f"block {name} names {len(paths)} folder(s) (allowed: {count})")
        for key in given:
            if key not in options:
                raise InputError(f"block {name}: unknown option {key} (allowed: "
                                 f"{', '.join(f'{k}=' + v for k, v in options.items()) or 'none'})")
        root = os.path.realpath(ROOT)
        for path in paths:
            # Resolved, so that neither '..' nor a link leads a document's block to files outside the repository.
            inside = os.path.realpath(os.path.join(root, path))
            if os.path.isabs(path) or not inside.startswith(root + os.sep):
                raise InputError(f"block {name}: {path}: not inside the repository (allowed: a results folder "
                                 f"relative to the repository root)")
        self.folders, self.options = paths, given

    def option(self, key, default=None):
        return self.options.get(key, default)

    def numbers(self, key, default=None):
        """A comma-separated option as integers (W=1,8)."""
        text = self.options.get(key)
        if text is None:
            return default
        try:
            return [int(v) for v in text.split(",")]
        except ValueError:
            raise InputError(f"block {self.name}: {key}={text} (allowed: integers separated by commas)") from None

    def choice(self, key, allowed):
        value = self.options.get(key)
        if value is not None and value not in allowed:
            raise InputError(f"block {self.name}: {key}={value} (allowed: {' or '.join(allowed)})")
        return value

    @classmethod
    def read(cls, folder, table="runs.csv", need=("run_id",), schema=None):
        """Copies of the rows of folder/table (callers add keys to them), read as schema (by default the table's
        own name)."""
        key = (folder, table, tuple(need))
        if key not in cls.cache:
            path = os.path.join(ROOT, folder, table)
            try:
                cls.cache[key] = read_csv(path, schema or table, list(need))
            except InputError as e:
                raise InputError(str(e).replace(ROOT + os.sep, "")) from None
        return [dict(r) for r in cls.cache[key]]

    @classmethod
    def read_file(cls, path, need, schema):
        """read() for a CSV file a block names itself (relative to the root), not a folder's runs.csv."""
        return cls.read(os.path.dirname(path), os.path.basename(path), need, schema)


def svr_data(folder):
    """(nprocs, {panel: {set-up: {W: Cell}}}, simulated) of a steal-vs-regroup results folder, as
    plots/steal_vs_regroup.py groups it: its largest rank count, medians over repetitions and then over seeds."""
    rows, nprocs = svr.chosen_rows(Inputs.read(folder, need=svr.COLUMNS), None)
    data = {panel: {label: {c.w: c for c in line} for label, line in labels.items()}
            for panel, labels in svr.series(rows).items()}
    refuse_mixed({(panel, label, w, seed): runs for panel, labels in data.items() for label, cells in labels.items()
                  for w, c in cells.items() for seed, runs in c.runs.items()}, f"{folder}/runs.csv")
    return nprocs, data, rows[0]["backend"] == "smpi"


def merged_order(orders):
    """The labels of several lists in one order: the first list's, each label the first lacks placed right after
    the label it follows where it appears (stealrandom after steal)."""
    out = []
    for order in orders:
        for i, label in enumerate(order):
            if label not in out:
                out.insert(out.index(order[i - 1]) + 1 if i and order[i - 1] in out else len(out), label)
    return out


# ---- Cells ----


def table_text(header, rows):
    """The Markdown table of header and rows of cells, as one text."""
    return "\n".join(markdown_table(header, rows))


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


def setup_name(r, finished=True):
    """A merge-pays column: balancer(interval), its creation method and its finished rule, the rule named even where
    it is the default. The method is part of the name: a folder may hold one balancer under two methods (a name
    without it once let intercomm runs stand in for range runs)."""
    name = r["balancer"] + (f"({r['interval']})" if r.get("interval") else "")
    name += f" {r['method']}" if r.get("method") else ""
    rule = r.get("finished") or DEFAULT_FINISHED.get(r["balancer"])
    return name + (f" {rule}" if finished and rule and r["balancer"] != "none" else "")


# Every column by which two runs of one folder can differ as set-ups (not as repetitions or as results). A table
# cell that pools runs (repetitions, seeds) pools only runs equal in all of these but what it pools on purpose.
SETUP_COLUMNS = ("nprocs", "balancer", "interval", "method", "finished", "move", "chains_per_group", "model_compute",
                 "model_reduce", "workload", "workload_seed", "T_ms", "G", "jitter_pct", "work_seed", "work_mode",
                 "atoms", "moves_per_item", "wait", "platform")


def setup_value(r, column):
    """A set-up column of a run as the tables compare it: a missing finished rule is the balancer's default, and an
    empty or absent field is None."""
    if column == "finished":
        return r.get("finished") or DEFAULT_FINISHED.get(r["balancer"])
    value = r.get(column)
    return None if value == "" else value


def refuse_mixed(groups, where, pooled=()):
    """InputError (one line naming where) when a group of runs that one table cell pools holds runs that differ in a
    set-up column other than those in pooled (what the cell pools on purpose, e.g. workload seeds)."""
    for key, runs in groups.items():
        for column in SETUP_COLUMNS:
            if column in pooled:
                continue
            values = {}
            for r in runs:
                values.setdefault(setup_value(r, column), r)
            if len(values) > 1:
                (a, ra), (b, rb) = list(values.items())[:2]
                raise InputError(f"{where}: runs {ra.get('run_id', '?')} and {rb.get('run_id', '?')} fall in one "
                                 f"cell ({key}) but differ in {column} ({a} and {b}) (allowed: runs of one set-up, "
                                 f"differing only in repetition)")


def keyed(pairs, where):
    """{key: run} of (key, run) pairs; InputError (one line naming where) when two runs share a key, which a dict
    would silently overwrite."""
    out = {}
    for key, r in pairs:
        if key in out:
            raise InputError(f"{where}: runs {out[key].get('run_id', '?')} and {r.get('run_id', '?')} share the key "
                             f"{key} (allowed: one run per key: set-ups differing in a column the table does not "
                             f"show belong in separate folders)")
        out[key] = r
    return out


def ratio_text(value, bold):
    """time / none to three decimals, in bold where bold (faster or slower) says it differs from none that way."""
    text = f"{value:.3f}"
    if (bold == "faster" and float(text) < 1) or (bold == "slower" and float(text) > 1):
        return f"**{text}**"
    return text


def by_setup(rows, where, key=setup_name):
    """{(P, set-up): [rows]} and the set-ups in the order the CSV first names them; InputError naming where when a
    group pools runs of different set-ups (refuse_mixed)."""
    groups, order = defaultdict(list), {}
    for r in rows:
        if r["valid"] is True:
            groups[(r["nprocs"], key(r))].append(r)
            order.setdefault(key(r), None)
    refuse_mixed(groups, where)
    return groups, list(order)


def median_of(rows, column="time_s"):
    return median([r[column] for r in rows])


def none_runs(groups, p, folder, key="none"):
    """The valid none runs at P of by_setup's groups, which every time / none needs; InputError where there are
    none."""
    if not groups.get((p, key)):
        raise InputError(f"{folder}/runs.csv: no valid none run at P = {p} (allowed: a none run at every P, the "
                         f"reference of time / none)")
    return groups[(p, key)]


def milliseconds(seconds):
    """A time to three significant digits, in ms below a second: 6.58 ms, 25.6 ms, 1.57 s."""
    if seconds >= 1:
        return f"{seconds:.2f}", "s"
    ms = seconds * 1000
    return f"{ms:.{max(0, 2 - int(f'{ms:e}'.split('e')[1]))}f}", "ms"


def time_with_interval(s):
    """A Summary of times as 'median unit [lo, hi]', the interval to the median's precision."""
    text, unit = milliseconds(s.median)
    decimals = len(text.partition(".")[2])
    scale = 1 if unit == "s" else 1000
    interval = f" [{s.lo * scale:.{decimals}f}, {s.hi * scale:.{decimals}f}]" if s.has_interval else f" ({s.note})"
    return f"{text} {unit}{interval}"


def compare_ratio_text(a, b, digits=3):
    """b's median over a's (Summaries), with the interval mcmclb compare forms, [low_b / high_a, high_b / low_a],
    where both have one."""
    text = f"{b.median / a.median:.{digits}f}"
    if a.has_interval and b.has_interval:
        text += f" [{b.lo / a.hi:.{digits}f}, {b.hi / a.lo:.{digits}f}]"
    return text


def calibrations(runs, where):
    """The calibration_s of runs under pays; InputError naming where when one has none."""
    values = [r["calibration_s"] for r in runs]
    if None in values:
        raise InputError(f"{where} has no calibration_s (allowed: runs under pays, which calibrate)")
    return values


# ---- Prose of the README: numbers from the CSVs, in sentences ----


def wrapped(text):
    """Markdown prose wrapped at 116 columns, as the documents are written (a long generated line would hide a long
    paragraph from the README's measures)."""
    import textwrap
    return "\n".join(textwrap.wrap(text, 116, break_on_hyphens=False, break_long_words=False))


# " ×" with a no-break space, so that wrapping never puts the sign at the start of a line.
TIMES = "\u00a0×"


def machine(folder, nprocs):
    """(cores available, oversubscribed) of a real folder's runs at nprocs, from its provenance.csv; InputError
    where the runs disagree or the file lacks the columns."""
    prov = Inputs.read(folder, "provenance.csv", need=("run_id", "cores_available", "oversubscribed"))
    runs = {r["run_id"] for r in Inputs.read(folder) if r["nprocs"] == nprocs}
    seen = {(r["cores_available"], r["oversubscribed"]) for r in prov if r["run_id"] in runs}
    if len(seen) != 1:
        raise InputError(f"{folder}/provenance.csv: the runs at P = {nprocs} ran on {len(seen)} kinds of machine "
                         f"(allowed: one, with cores_available and oversubscribed recorded)")
    return seen.pop()


def occupancy(folder, nprocs):
    """'P ranks sharing C cores', or 'P = 2 with a core per rank', for a real folder's runs at nprocs."""
    cores, over = machine(folder, nprocs)
    return f"{nprocs} ranks sharing {cores} cores" if over else f"P = {nprocs} with a core per rank"


def listed(items):
    """'a', 'a and b', 'a, b and c'."""
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def quick_start(inputs):
    """What the demo runs and how long it took: the study as the committed demo folder ran it (its rank counts,
    set-ups and repetitions, from runs.csv) and the measured duration of the demo's two parts on a fresh copy of the
    checkout (demo-timing.csv, written by tests/readme/run_demo.sh time), medians over the repetitions."""
    folder = inputs.folders[0]
    runs = [r for r in Inputs.read(folder, need=RUN_COLUMNS + ["backend"])]
    timing = Inputs.read_file(os.path.join(folder, "demo-timing.csv"), ("part", "seconds", "cores", "commit"),
                              "demo-timing.csv")
    parts = defaultdict(list)
    for t in timing:
        parts[t["part"]].append(t["seconds"])
    tests = parts.pop("tests", [])
    if set(parts) != {"build", "run"} or len({len(v) for v in parts.values()}) != 1:
        raise InputError(f"{folder}/demo-timing.csv: parts {sorted(parts)} (allowed: build and run, as often each, "
                         f"and tests)")
    setups = list(dict.fromkeys(run_label(r) for r in runs))
    reps = sorted({r["rep"] for r in runs})
    nprocs = sorted({r["nprocs"] for r in runs})
    cores = sorted({t["cores"] for t in timing})
    commits = sorted({t["commit"] for t in timing if t["part"] != "tests"})
    test_commits = sorted({t["commit"] for t in timing if t["part"] == "tests"})
    n = len(parts["build"])
    return wrapped(
        f"The quick study runs {listed(f'`{s}`' for s in setups)} at {listed(str(p) for p in nprocs)} ranks, "
        f"{len(reps)} repetitions each ({len(runs)} runs). Measured from a fresh copy of the checkout on a "
        f"{listed(str(c) for c in cores)}-core VM (commit{'s' if len(commits) > 1 else ''} {listed(commits)}, "
        f"median of {n}): the build steps took "
        f"{median(parts['build']):.0f} s and the sweep with its report {median(parts['run']):.0f} s "
        f"([demo-timing.csv]({folder}/demo-timing.csv))." +
        (f" The test command below took {median(tests) / 60:.1f} min there "
         f"(commit{'s' if len(test_commits) > 1 else ''} {listed(test_commits)}, "
         f"{'one run' if len(tests) == 1 else f'median of {len(tests)}'})." if tests else ""))


def findings(inputs):
    """The README's key findings, one bullet each, every number from the folders named in this order: Fig. 2's
    simulation, Table 1's collective rows, Fig. 1's simulated commbench CSV, the steal-vs-regroup seeds simulated
    and real, the real pays pair (one folder: none and the balancer under pays, pays_pair) and a real pays study
    where ranks share the cores."""
    import table1
    (fig2, table1_folder, fig1_csv, svr_sim, svr_real, pays_folder, pays_shared) = inputs.folders
    bullets = []

    runs = [r for r in Inputs.read(fig2, need=RUN_COLUMNS + ["finished", "backend"]) if r["valid"] is True]
    top = max(r["nprocs"] for r in runs)
    at = {run_label(r): r for r in runs if r["nprocs"] == top}
    for label in ("none", "async intercomm", "lookahead(1) range", "collective(1) create"):
        if label not in at:
            raise InputError(f"{fig2}/runs.csv: no valid {label} run at P = {top} (allowed: Fig. 2's set-ups)")
    ideal = at["none"]["ideal_s"]
    both = read_runs([os.path.join(ROOT, f) for f in (fig2, table1_folder)])
    _, header, lines = table1.build(both, table1_folder, top, paper=True)
    rows = [dict(zip(header, cells)) for cells in lines if cells[0].startswith("collective(")]
    equal = sum(all(r[k] == r[f"paper {k}"] for k in ("avg", "stdev", "min", "max")) for r in rows)
    bullets.append(
        f"*Simulated*, the paper's workload at {top} ranks on a Blue Gene/P-like torus: `none` takes "
        f"{at['none']['time_s']:.2f} s, {at['none']['time_s'] / ideal:.2f}{TIMES} the ideal of {ideal:.2f} s. "
        f"The paper's `async` ends at "
        f"{at['async intercomm']['time_s'] / ideal:.3f}{TIMES} the ideal and `collective(1)` at "
        f"{at['collective(1) create']['time_s'] / ideal:.2f}{TIMES}. " +
        (f"All {equal}" if equal == len(rows) else f"{equal} of the {len(rows)}") +
        f" of Table 1's collective rows equal the paper's. [Guide](docs/guide/simulation.md), [CSV]({fig2}/runs.csv).")

    bench = [r for r in Inputs.read_file(fig1_csv, ("method", "op", "group_size", "nprocs", "time_us"),
                                         "commbench.csv") if r["op"] == "create"]
    largest = max(r["nprocs"] for r in bench)
    by_method = defaultdict(list)
    for r in bench:
        if r["nprocs"] == largest:
            by_method[r["method"]].append(r["time_us"])
    for method in ("create", "range"):
        if method not in by_method:
            raise InputError(f"{fig1_csv}: no {method} rows at P = {largest} (allowed: Fig. 1's methods)")
    create = [median([r["time_us"] for r in bench if r["nprocs"] == largest and r["method"] == "create" and
                      r["group_size"] == g]) for g in sorted({r["group_size"] for r in bench
                                                               if r["method"] == "create"})]
    bullets.append(
        f"*Simulated* Fig. 1 at {largest} ranks: `MPI_Comm_create` over all ranks costs {min(create):.0f}-"
        f"{max(create):.0f} µs whatever the group, while `range` creates a communicator in "
        f"{median(by_method['range']):.2f} µs without communication. [Guide](docs/guide/commbench.md), "
        f"[CSV]({fig1_csv}).")

    def best_against_thief(folder):
        """(the folder's rank count, the better thief's time / the better regrouping's per workload and W)."""
        nprocs, data, _ = svr_data(folder)
        ratios = []
        for panel, labels in data.items():
            for w in sorted({w for cells in labels.values() for w in cells}):
                r = min(cell(folder, data, panel, label, w).ratio for label in ("lookahead(1) range",
                                                                                  "mostwork(1) range"))
                t = min(cell(folder, data, panel, label, w).ratio for label in ("steal", "stealrandom"))
                ratios.append(t / r)
        return nprocs, ratios
    (p_sim, sim), (p_real, real) = best_against_thief(svr_sim), best_against_thief(svr_real)
    bullets.append(
        f"With emulated work that scales perfectly, regrouping beats moving chains. The work-stealing balancers "
        f"take {min(sim):.2f}-{max(sim):.2f}{TIMES} the best regrouping's time (*simulated*, {p_sim} ranks) and "
        f"{min(real):.2f}-{max(real):.2f}{TIMES} (*measured*, {occupancy(svr_real, p_real)}, sleeping items), over "
        f"every workload, medians over seeds. [Guide](docs/guide/steal-vs-regroup.md), [CSV]({svr_real}/runs.csv).")

    none_by_move, other_by_move, _ = pays_pair(pays_folder, inputs.name)
    pairs = []
    for move in ("all", "single"):
        a, b = none_by_move.get(move), other_by_move.get(move)
        if not a or not b:
            raise InputError(f"{pays_folder}: no valid runs of {move}-atom moves (allowed: the real pays pair of "
                             f"merge-pays.md)")
        pairs.append((Summary([r["time_s"] for r in a]), Summary([r["time_s"] for r in b]), b[0]["balancer"],
                      b[0]["nprocs"]))
    (a_all, b_all, name, p), (a_one, b_one, _, _) = pairs
    bullets.append(
        f"Merge only when it pays: with Lennard-Jones walkers, `{name}` under the rule `pays` first measures what a "
        f"merge costs. *Measured* at {occupancy(pays_folder, p)}, it takes {compare_ratio_text(a_all, b_all)}{TIMES} "
        f"`none`'s time with all-atom moves. With single-atom moves, where no merge pays, it takes "
        f"{compare_ratio_text(a_one, b_one)}{TIMES} "
        f"(n ≥ {min(s.n for s in (a_all, b_all, a_one, b_one))}; each ratio's interval is formed from the two "
        f"medians' 95 % intervals, as `mcmclb compare` does). "
        f"[Guide](docs/guide/merge-pays.md), [CSV]({pays_folder}/runs.csv).")
    groups, setups = by_setup(Inputs.read(pays_shared, need=RUN_COLUMNS + ["calibration_s", "finished"]),
                              f"{pays_shared}/runs.csv")
    totals, shared = [], sorted({p for p, _ in groups})
    for p in shared:
        none = median_of(none_runs(groups, p, pays_shared))
        for name in setups:
            if name != "none" and groups.get((p, name)):
                runs = groups[(p, name)]
                totals.append((median_of(runs) + median(calibrations(runs, f"{pays_shared}/runs.csv"))) / none)
    if not all(machine(pays_shared, p)[1] for p in shared):
        raise InputError(f"{pays_shared}/provenance.csv: not every rank count ran oversubscribed (allowed: a study "
                         f"whose ranks share the cores)")
    cores = sorted({machine(pays_shared, p)[0] for p in shared})
    bullets[-1] += (f" Where ranks share the cores ({listed(str(p) for p in shared)} ranks, "
                    f"{listed(str(c) for c in cores)} cores), the calibration makes a run "
                    f"{min(totals):.1f}-{max(totals):.1f}{TIMES} `none`'s time ([CSV]({pays_shared}/runs.csv)).")
    return "\n".join("- " + wrapped(b).replace("\n", "\n  ") for b in bullets)


# ---- The tables ----


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
METHODS = ["", "create", "range", "intercomm"]


def steal_vs_regroup_compute(inputs):
    """Compute mode: one row per set-up (the paper's rules first, then pays), one column per move kind and W: time /
    ideal with the regroupings or migrated chains per process."""
    _, data, _ = svr_data(inputs.folders[0])
    columns = []  # (header, panel, W)
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

    rows = []
    for label in sorted(runs, key=order):
        cells = [data[panel].get(label, {}).get(w) for _, panel, w in columns]
        rows.append([label] + ["" if c is None else seeds_text(c) + counts_text(c) for c in cells])
    return table_text(["set-up"] + [head for head, _, _ in columns], rows)


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
    interval mcmclb compare forms ([low_B / high_A, high_B / low_A]), the calibration's median (range), and (time +
    calibration) / none."""
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
            lines["/ none"].append(compare_ratio_text(none, s, 2))
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


def spread(values, digits):
    """The median of values with their range in brackets ('15.03 [14.96-15.10]'), or the one value all share."""
    lo, mid, hi = min(values), median(values), max(values)
    if lo == hi:
        return f"{mid:.{digits}f}"
    return f"{mid:.{digits}f} [{lo:.{digits}f}-{hi:.{digits}f}]"


def table1_seeds(inputs):
    """Table 1's async row over the finished rule and the item noise (work.jitter_pct), each over its noise seeds
    (work.seed): the seeds run, then avg, stdev, min and max of the regroupings per process and the run time, each as
    the median over seeds with the range in brackets; the paper's row first. Without noise the seed draws nothing,
    so the seeds run there agree (one value, no range). Options: seeds=1,2 keeps the runs of those noise seeds,
    rule=retire|coalesce those of one finished rule."""
    import table1
    folder = " and ".join(inputs.folders)
    need = ["finished", "jitter_pct", "work_seed", "time_s", "regroups_avg", "regroups_std", "regroups_min",
            "regroups_max", "valid", "balancer"]
    seeds, rule = inputs.numbers("seeds"), inputs.choice("rule", ("retire", "coalesce"))
    cells = defaultdict(list)
    for one in inputs.folders:
        for r in Inputs.read(one, need=need):
            if r["balancer"] == "async" and r["valid"] and (seeds is None or r["work_seed"] in seeds) and \
                    (rule is None or r["finished"] == rule):
                cells[(r["finished"], r["jitter_pct"])].append(r)
    if not cells:
        raise InputError(f"{folder}/runs.csv: no valid async run (allowed: a Table 1 study's runs)")
    refuse_mixed(cells, f"{folder}/runs.csv", pooled=("work_seed",))

    paper = table1.paper_values()[("async", "")]
    rows = [["**paper (BG/P, 8192 cores)**", "?", "-"] + [f"**{v}**" for v in paper] + ["**≤ 4.2**"]]
    for (rule, noise) in sorted(cells, key=lambda k: (k[0] != "retire", k[1])):
        runs = cells[(rule, noise)]
        seeds = len({r["work_seed"] for r in runs})
        rows.append([rule, f"{noise:g} %", str(seeds) if noise else f"{seeds} (no noise: the seed draws nothing)"] +
                    [spread([r[c] for r in runs], d) for c, d in (("regroups_avg", 2), ("regroups_std", 2),
                                                                    ("regroups_min", 0), ("regroups_max", 0))] +
                    [spread([r["time_s"] for r in runs], 4)])
    return table_text(["finished rule", "item noise", "seeds", "avg", "stdev", "min", "max", "time_s"], rows)


def platform_changes(base, other):
    """The attributes by which platform file other differs from base (both relative to the root), as
    'attribute="value"' texts; elements are matched by tag and id. InputError where the two differ in shape."""
    import xml.etree.ElementTree as ElementTree

    def elements(path):
        try:
            root = ElementTree.parse(os.path.join(ROOT, path)).getroot()
        except (OSError, ElementTree.ParseError) as e:
            raise InputError(f"{path}: cannot be read as a platform file ({e})") from None
        return [(e.tag, e.get("id"), e.attrib) for e in root.iter()]

    a, b = elements(base), elements(other)
    if [(tag, id_) for tag, id_, _ in a] != [(tag, id_) for tag, id_, _ in b]:
        raise InputError(f"{other}: not {base} with changed values (allowed: a copy of it with some attributes "
                         f"changed)")
    return [f'{key}="{value}"' for (_, _, x), (_, _, y) in zip(a, b) for key, value in y.items() if x.get(key) != value]


def setting_of(folder, base_platform=None):
    """What a sensitivity folder's runs changed against the shipped simulation: the flags not in
    configs/platforms/smpi.cfg (from provenance.csv's simgrid_cfg) and, given base_platform, the attributes by which
    the runs' platform (runs.csv) differs from it; 'platform as is' where nothing did."""
    with open(os.path.join(ROOT, "configs", "platforms", "smpi.cfg")) as f:
        shipped = {line.strip() for line in f if line.strip() and not line.startswith("#")}
    settings = {tuple(flag for flag in r["simgrid_cfg"].split() if flag not in shipped)
                for r in Inputs.read(folder, "provenance.csv", need=("run_id", "simgrid_cfg"))}
    if len(settings) != 1:
        raise InputError(f"{folder}/provenance.csv: its runs differ in their flags or record none (allowed: one "
                         f"setting per folder)")
    changed = [f"`{flag.removeprefix('--cfg=')}`" for flag in settings.pop()]
    if base_platform is not None:
        platforms = {r["platform"] for r in Inputs.read(folder, need=("run_id", "platform"))}
        if len(platforms) != 1:
            raise InputError(f"{folder}/runs.csv: its runs name {len(platforms)} platforms (allowed: one per folder)")
        platform = platforms.pop()
        if platform != base_platform:
            changed += [f"`{os.path.basename(platform)}`: `{change}`"
                        for change in platform_changes(base_platform, platform)]
    return " ".join(changed) or "platform as is"


def async_gap(inputs):
    """The async gap's sensitivity: one row per folder (its setting from its provenance), item time T/G and noise;
    none's time, then async with Algorithm 1 (intercomm) and with range under retire, and with intercomm under
    coalesce: time_s with the gap to the ideal in brackets, and Table 1's row (regroupings per process, avg / stdev /
    min / max)."""
    rows = []
    for folder in inputs.folders:
        setting = setting_of(folder)
        need = ["balancer", "method", "finished", "T_ms", "G", "jitter_pct", "time_s", "ideal_s", "regroups_avg",
                "regroups_std", "regroups_min", "regroups_max"]
        cells = keyed((((r["T_ms"] / r["G"], r["jitter_pct"], r["balancer"], r["method"] or "", r["finished"] or ""),
                        r) for r in Inputs.read(folder, need=need)), f"{folder}/runs.csv")
        for item, noise in sorted({k[:2] for k in cells}):
            def one(balancer, method="", finished=""):
                found = cells.get((item, noise, balancer, method, finished))
                if not found:
                    raise InputError(f"{folder}/runs.csv: no {balancer} {method} {finished} run at T/G = {item:g} ms "
                                     f"and {noise:g} % noise (allowed: a study of configs/async-gap*.yaml)")
                return found

            def gap(r):
                return f"{r['time_s']:.4f} ({r['time_s'] - r['ideal_s']:.3f})"

            def row1(r):
                return (f"{r['regroups_avg']:.2f} / {r['regroups_std']:.2f} / {r['regroups_min']:g} / "
                        f"{r['regroups_max']:g}")
            retire, coalesce = one("async", "intercomm", "retire"), one("async", "intercomm", "coalesce")
            rows.append([setting, f"{item:g} ms", f"{noise:g} %", f"{one('none')['time_s']:.3f}", gap(retire),
                         f"{one('async', 'range', 'retire')['time_s']:.4f}", row1(retire), gap(coalesce),
                         row1(coalesce)])
    return table_text(["setting", "item T/G", "noise", "none", "retire: intercomm (gap)", "retire: range",
                       "retire: Table 1 row (intercomm)", "coalesce: intercomm (gap)",
                       "coalesce: Table 1 row (intercomm)"], rows)


def constants_sensitivity(inputs):
    """Each unsourced constant varied alone: one row per folder (its setting from its provenance, and the attributes
    by which its runs' platform differs from the first folder's), Fig. 2's async (Algorithm 1) time with its gap to
    the ideal and its Table 1 row (regroupings per process, avg / stdev / min / max), and collective(1)'s time (or
    collective(N)'s with interval=N) with its change against the first folder's (the platform as shipped)."""
    interval = inputs.numbers("interval", [1])[0]
    need = ["balancer", "method", "interval", "time_s", "ideal_s", "regroups_avg", "regroups_std", "regroups_min",
            "regroups_max", "nprocs", "platform"]
    rows, base = [], None
    for folder in inputs.folders:
        runs = Inputs.read(folder, need=need)
        found = keyed((((r["balancer"], r["method"] or "", r["interval"]), r) for r in runs), f"{folder}/runs.csv")
        asy, col = found.get(("async", "intercomm", None)), found.get(("collective", "create", interval))
        if asy is None or col is None:
            raise InputError(f"{folder}/runs.csv: needs an async intercomm and a collective({interval}) create run "
                             f"(allowed: the sensitivity study of the notebook)")
        if base is None:
            base = (asy, col)
        rows.append([setting_of(folder, base[0]["platform"]), str(asy["nprocs"]),
                     f"{asy['time_s']:.4f} ({asy['time_s'] - asy['ideal_s']:.4f})",
                     f"{asy['time_s'] / base[0]['time_s']:.4f}",
                     f"{asy['regroups_avg']:.2f} / {asy['regroups_std']:.2f} / {asy['regroups_min']:g} / "
                     f"{asy['regroups_max']:g}", f"{col['time_s']:.4f}", f"{col['time_s'] / base[1]['time_s']:.4f}"])
    return table_text(["setting", "P", "async: time_s (gap)", "async / as shipped", "async: Table 1 row",
                       f"collective({interval}): time_s", f"collective({interval}) / as shipped"], rows)


def host_cost(inputs):
    """The host's cost of simulated runs: per platform folder (FOLDER/<platform>/ with runs.csv and provenance.csv,
    one run per launch) the runs, each one's simulated time, and the medians [min-max] over the runs of the whole
    process's CPU (user + sys), wall time and peak RSS, as /usr/bin/time measured each launch (FOLDER/host-time.csv:
    platform, launch, wall_s, user_s, sys_s, peak_rss_kib; launch i is the platform's i-th run by its start), and
    of provenance.csv's host_cpu_s (the process from its start to the end of the run: no teardown)."""
    folder = inputs.folders[0]
    timed = defaultdict(dict)
    for r in Inputs.read(folder, "host-time.csv", need=("platform", "launch", "wall_s", "user_s", "sys_s",
                                                       "peak_rss_kib")):
        timed[r["platform"]][int(r["launch"])] = r

    rows = []
    for platform in sorted(timed):
        sub = os.path.join(folder, platform)
        runs = sorted(Inputs.read(sub, need=("run_id", "utc_start", "time_s", "nprocs", "balancer", "method")),
                      key=lambda r: r["utc_start"])
        prov = {r["run_id"]: r for r in Inputs.read(sub, "provenance.csv", need=("run_id", "host_cpu_s"))}
        if sorted(timed[platform]) != list(range(1, len(runs) + 1)):
            raise InputError(f"{folder}/host-time.csv: {platform} has launches {sorted(timed[platform])} for "
                             f"{len(runs)} runs in {sub}/runs.csv (allowed: launches 1 to the number of runs)")
        whole = [timed[platform][i + 1] for i in range(len(runs))]
        rows.append([f"`{platform}.xml`", f"{runs[0]['balancer']} {runs[0]['method']}, P = {runs[0]['nprocs']}",
                     str(len(runs)), spread([r["time_s"] for r in runs], 6),
                     spread([w["user_s"] + w["sys_s"] for w in whole], 1), spread([w["wall_s"] for w in whole], 1),
                     spread([w["peak_rss_kib"] / 1024 for w in whole], 0),
                     spread([prov[r["run_id"]]["host_cpu_s"] for r in runs], 1)])
    return table_text(["platform", "run", "runs", "simulated time_s", "whole process: CPU s", "wall s",
                       "peak RSS MiB", "host_cpu_s (to the run's end)"], rows)


def interval_text(s, digits):
    """A Summary as 'median [lo, hi]' to digits decimals, or the median with the reason it has no interval."""
    if not s.has_interval:
        return f"{s.median:.{digits}f} ({s.note})"
    return f"{s.median:.{digits}f} [{s.lo:.{digits}f}, {s.hi:.{digits}f}]"


def one_library(runs, where):
    """The MPI library (as a figure names it) that every run of a folder used; InputError where they differ."""
    names = {library_name(r["mpi_library"]) for r in runs}
    if len(names) != 1:
        raise InputError(f"{where}: its runs name {len(names)} MPI libraries ({', '.join(sorted(names))}) (allowed: "
                         f"one library per folder)")
    return names.pop()


def two_mpis(inputs):
    """One study under several MPI libraries, one real results folder each: one row per P and set-up, one column per
    folder's library: time / ideal, the median over repetitions with its 95 % interval (digits=N decimals).
    ratio=yes adds, for two folders, the second's median over the first's with the interval mcmclb compare forms
    ([low_B / high_A, high_B / low_A])."""
    digits = inputs.numbers("digits", [2])[0]
    ratio = inputs.choice("ratio", ["yes", "no"]) == "yes"
    if ratio and len(inputs.folders) != 2:
        raise InputError(f"block {inputs.name}: ratio=yes names {len(inputs.folders)} folders (allowed: two)")
    columns, order = [], {}
    for folder in inputs.folders:
        runs = [r for r in Inputs.read(folder, need=RUN_COLUMNS + ["mpi_library"]) if r["valid"] is True]
        if not runs:
            raise InputError(f"{folder}/runs.csv: no valid run (allowed: a folder of real runs)")
        groups = defaultdict(list)
        for r in runs:
            groups[(r["nprocs"], run_label(r))].append(r)
            order.setdefault((r["nprocs"], run_label(r)), None)
        refuse_mixed(groups, f"{folder}/runs.csv")
        columns.append((one_library(runs, f"{folder}/runs.csv"),
                        {k: Summary([r["time_s"] / r["ideal_s"] for r in v]) for k, v in groups.items()}))
    rows = []
    for key in sorted(order, key=lambda k: k[0]):
        cells = [columns_cells.get(key) for _, columns_cells in columns]
        line = [str(key[0]), key[1]] + [interval_text(c, digits) if c else "-" for c in cells]
        if ratio:
            a, b = cells
            line.append(compare_ratio_text(a, b) if a and b else "-")
        rows.append(line)
    header = ["P", "set-up"] + [name for name, _ in columns]
    return table_text(header + ([f"{columns[1][0]} / {columns[0][0]} [interval]"] if ratio else []), rows)


# commbench's methods in the order the guides list them, with the MPI call each stands for.
COMMBENCH_METHODS = [("create", "`MPI_Comm_create` (create)"), ("split", "`MPI_Comm_split` (split)"),
                     ("create_group", "`MPI_Comm_create_group` (create_group)"),
                     ("from_group", "`MPI_Comm_create_from_group` (from_group)"),
                     ("intercomm", "Algorithm 1 (intercomm)"), ("range", "RBC `range`")]


def grouped(value, decimals=0):
    """A number with its thousands apart as the guides print them: 49 624, 100 000."""
    return f"{value:,.{decimals}f}".replace(",", " ")


def microseconds(value, like=None):
    """A creation time in µs as the guides print it (49 624, 512, 25.0, 0.09), to the decimals that like (by default
    the value itself) is printed with, so that an interval has its median's precision."""
    like = value if like is None else like
    return grouped(value, 0 if like >= 100 else 1 if like >= 1 else 2)


def commbench_methods(inputs):
    """Creation time in µs per method from commbench CSVs (each block argument one file; a file may hold several
    libraries' rows): one column per P, group size and library, at each P's largest group size (g = P for Fig. 1;
    the one size of --groups-of). Each cell is the median over repetitions with its 95 % interval (commbench's
    median_us, median_ci_low_us, median_ci_high_us); - where a library lacks the method. ratio=yes adds, at each P
    and group size measured under two libraries, the first library's median over the second's."""
    ratio = inputs.choice("ratio", ["yes", "no"]) == "yes"
    need = ["method", "op", "nprocs", "group_size", "groups", "mpi_library", "median_us", "median_ci_low_us",
            "median_ci_high_us"]
    cells, columns = {}, {}  # (P, g, library) -> {method: row}; (P, g) -> [libraries]
    for path in inputs.folders:
        rows = [r for r in Inputs.read_file(path, need, "commbench.csv")
                if r["op"] == "create"]
        if not rows:
            raise InputError(f"{path}: no creation rows (allowed: a commbench CSV of op create)")
        for p in sorted({r["nprocs"] for r in rows}):
            g = max(r["group_size"] for r in rows if r["nprocs"] == p)
            for r in rows:
                if (r["nprocs"], r["group_size"]) != (p, g):
                    continue
                if r["median_us"] is None:
                    raise InputError(f"{path}: {r['method']} at P = {p}, g = {g} has no median_us (allowed: a file "
                                     f"of commbench --reps 6 or more)")
                where = (p, g, library_name(r["mpi_library"]), bool(r["groups"]))
                cells.setdefault(where, {})[r["method"]] = r
                columns.setdefault((p, g, bool(r["groups"])), [])
                if where[2] not in columns[(p, g, bool(r["groups"]))]:
                    columns[(p, g, bool(r["groups"]))].append(where[2])
    header, keys = ["method"], []
    for (p, g, many), libraries in columns.items():
        size = f"groups of {g}" if many else f"g = {g}"
        header += [f"P = {p}, {size}: {lib}" for lib in libraries]
        keys += [("cell", (p, g, lib, many)) for lib in libraries]
        if ratio and len(libraries) == 2:
            header.append(f"{libraries[0]} / {libraries[1]}")
            keys.append(("ratio", [(p, g, lib, many) for lib in libraries]))
    rows = []
    for method, label in COMMBENCH_METHODS:
        if not any(method in found for found in cells.values()):
            continue
        line = [label]
        for kind, key in keys:
            if kind == "ratio":
                a, b = (cells[k].get(method) for k in key)
                value = a["median_us"] / b["median_us"] if a and b else None
                line.append("" if value is None else f"{value:.0f} ×" if value >= 10 else f"{value:.2f} ×")
                continue
            r = cells[key].get(method)
            if r is None:
                line.append("-")
                continue
            m = r["median_us"]
            line.append(f"{microseconds(m)} [{microseconds(r['median_ci_low_us'], m)}, "
                        f"{microseconds(r['median_ci_high_us'], m)}]" if r["median_ci_low_us"] is not None else
                        f"{microseconds(m)} (n < 6)")
        rows.append(line)
    return table_text(header, rows)


def calibration_text(values):
    """Calibrations in seconds as 'median ms (min-max)'."""
    ms = [1000 * v for v in values]
    digits = 1 if median(ms) < 100 else 0
    digits += 1 if median(ms) < 10 else 0
    return f"{median(ms):.{digits}f} ms ({min(ms):.{digits}f}-{max(ms):.{digits}f})"


def pays_pair(folder, name):
    """The real pays pair of one folder, a sweep that interleaved none's runs and one balancer's under pays: ({move:
    none runs}, {move: the balancer's runs}, the balancer's set-up name); InputError naming the block otherwise."""
    need = RUN_COLUMNS + ["move", "calibration_s", "finished"]
    rows = [r for r in Inputs.read(folder, need=need) if r["valid"] is True]
    by_move = []
    for runs in ([r for r in rows if r["balancer"] == "none"], [r for r in rows if r["balancer"] != "none"]):
        groups = defaultdict(list)
        for r in runs:
            groups[r["move"]].append(r)
        refuse_mixed(groups, f"{folder}/runs.csv")
        by_move.append(groups)
    setup = {setup_name(r) for runs in by_move[1].values() for r in runs}
    if len(setup) != 1 or not by_move[0]:
        raise InputError(f"block {name}: {folder} must hold none's runs and one balancer's (allowed: the folder of one "
                         f"pays study)")
    return by_move[0], by_move[1], setup.pop()


def pays_against_none(inputs):
    """The real pays pair of one folder (pays_pair), none's and one balancer's under pays: one row per move kind,
    each set-up's median time with its 95 % interval, the ratio with the interval mcmclb compare forms ([low_B /
    high_A, high_B / low_A]), the balancer's regroupings per rank and its calibration's median (range)."""
    (folder,) = inputs.folders
    none_by_move, other_by_move, name = pays_pair(folder, inputs.name)
    rows = []
    for move in none_by_move:
        none, runs = none_by_move[move], other_by_move.get(move)
        if not runs:
            raise InputError(f"{folder}/runs.csv: no valid {name} run of {move} moves (allowed: the moves of none's "
                             f"runs)")
        a, b = Summary([r["time_s"] for r in none]), Summary([r["time_s"] for r in runs])
        calibration = calibrations(runs, f"{folder}/runs.csv: a run of {move} moves")
        rows.append([f"{move}-atom", time_with_interval(a), time_with_interval(b), compare_ratio_text(a, b),
                     f"{median_of(runs, 'regroups_avg'):g}", calibration_text(calibration)])
    return table_text(["moves", "none: median [95 % CI]", f"{name}: median [95 % CI]", f"{name} / none [interval]",
                       "regroupings per rank", "calibration: median (range)"], rows)


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


LOCATION = re.compile(r"^[A-Za-z_]+\(\d+\): ")  # MPICH's "function(line): " before its message


def live_communicators(inputs):
    """How many communicators can live at once, from mcmclb-commbench --live-communicators CSVs (each block
    argument one file, one library): one row per method, per library the count and how it ended, the library's
    refusal in its own words (its source location left out) with the call that gave it, "the same" where a
    refusal repeats the row above, "the cap" where none came, - where the file has no row for the method."""
    columns = []
    for path in inputs.folders:
        rows = Inputs.read_file(path, ("method", "cap", "live", "refused", "error", "mpi_library"),
                                "live-communicators.csv")
        columns.append((one_library(rows, path), {r["method"]: r for r in rows}))
    header = ["method"] + [text for name, _ in columns for text in (f"{name}: live", "how it ended")]
    found = {m for _, rows in columns for m in rows}
    rows, previous = [], {}
    for method in [m for m, _ in COMMBENCH_METHODS if m in found] + sorted(found - {m for m, _ in COMMBENCH_METHODS}):
        line = [method]
        for name, by_method in columns:
            r = by_method.get(method)
            if r is None:
                line += ["-", "not recorded"]
                continue
            if not r["refused"]:
                line += [f"{grouped(r['live'])} (the cap)", "not refused"]
                continue
            call, sep, message = r["error"].partition(": ")
            if not call.startswith("MPI_") or not sep:
                call, message = "", r["error"]
            message = LOCATION.sub("", message)
            where = f" (in `{call}`)" if call else ""
            line += [grouped(r["live"]),
                     f"the same{where}" if previous.get(name) == message else f"`{message}`{where}"]
            previous[name] = message
        rows.append(line)
    return table_text(header, rows)


# The rows of the compute model's calibration table: (label, benchmark, move, time column, counter of the unit,
# unit's name).
LJ_COST_ROWS = [
    ("`BM_Split` g = 1, single move (pair sum only)", "BM_Split", "0", "real_time", "pair_terms", "ns/term"),
    ("`BM_Split` g = 1, all-atom move", "BM_Split", "1", "real_time", "pair_terms", "ns/term"),
    ("`BM_Trial`, single move (draws, verdict, update)", "BM_Trial", "0", "cpu_time", "moved_atoms", "ns/trial"),
    ("`BM_Trial`, all-atom move", "BM_Trial", "1", "cpu_time", "moved_atoms", "ns/moved atom"),
]
BENCH_NAME = re.compile(r"^(?P<bench>BM_\w+)/atoms:(?P<atoms>\d+)/move:(?P<move>\d)(/g:(?P<g>\d+))?(/|$)")


def lj_cost(inputs):
    """The compute model's calibration from bench_lj CSVs (each repetition's row; g = 1 for BM_Split; Google
    Benchmark writes one file per set of counters, so BM_Split and BM_Trial come in two): one row per
    benchmark and move kind, per atom count the median time in ns with its 95 % interval and the terms or moved
    atoms it covers, and per unit (pair term, trial or moved atom) the range over atom counts of median / unit."""
    rows = []
    for path in inputs.folders:
        rows += [dict(r, path=path) for r in Inputs.read_file(path, ("name", "real_time", "cpu_time", "time_unit"),
                                                              "bench_lj.csv")]
    files = " and ".join(inputs.folders)
    times, units = defaultdict(list), {}
    for r in rows:
        found = BENCH_NAME.match(r["name"])
        if not found or r["name"].endswith(("_mean", "_median", "_stddev", "_cv")) or found["g"] not in (None, "1"):
            continue
        if r["time_unit"] != "ns":
            raise InputError(f"{r['path']}: {r['name']} in {r['time_unit']} (allowed: ns, bench_lj's unit)")
        for _, bench, move, column, counter, _ in LJ_COST_ROWS:
            if (found["bench"], found["move"]) == (bench, move):
                key = (bench, move, int(found["atoms"]))
                times[key].append(r[column])
                try:
                    units[key] = float(r.get(counter) or "nan")
                except ValueError:
                    units[key] = float("nan")
    if not times:
        raise InputError(f"{files}: no repetition of BM_Split at g = 1 or BM_Trial (allowed: bench_lj's CSV output)")
    atoms = sorted({a for _, _, a in times})
    out = []
    for label, bench, move, _, counter, unit in LJ_COST_ROWS:
        cells, per_unit = [label], []
        for a in atoms:
            values = times.get((bench, move, a))
            if not values:
                cells.append("–")
                continue
            s, count = Summary(values), units[(bench, move, a)]
            if not count > 0:
                raise InputError(f"{files}: {bench} at {a} atoms has no {counter} counter (allowed: a bench_lj that "
                                 f"sets it)")
            word = unit.split("/")[1] + ("s" if count != 1 else "")
            interval = f" [{s.lo:.0f}, {s.hi:.0f}]" if s.has_interval else f" ({s.note})"
            cells.append(f"{s.median:.0f} ns{interval}, {count:g} {word}")
            per_unit.append(s.median / count)
        cells.append(f"{min(per_unit):.1f}-{max(per_unit):.1f} {unit}")
        out.append(cells)
    return table_text(["benchmark"] + [f"{a} atoms" for a in atoms] + ["per unit"], out)


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


def simulated_times(inputs):
    """Simulated time_s per P and set-up of one folder (one deterministic run per point): one row per P, the ideal,
    then one column per set-up (run_label, in the order the CSV first names them; only=LABEL,... keeps those whose
    label starts with one of them), to digits=N decimals (3 by default)."""
    folder = inputs.folders[0]
    digits = inputs.numbers("digits", [3])[0]
    only = inputs.option("only")
    runs = [r for r in Inputs.read(folder, need=RUN_COLUMNS) if r["valid"] is True]
    if only:
        runs = [r for r in runs if any(run_label(r).startswith(prefix) for prefix in only.split(","))]
    if not runs:
        raise InputError(f"{folder}/runs.csv: no valid run{' of ' + only if only else ''} (allowed: a folder of "
                         f"simulated runs)")
    found = keyed((((r["nprocs"], run_label(r)), r) for r in runs), f"{folder}/runs.csv")
    labels = list(dict.fromkeys(label for _, label in found))
    rows = []
    for p in sorted({p for p, _ in found}):
        ideal = {f"{r['ideal_s']:.{digits}f}" for (q, _), r in found.items() if q == p}
        cells = [f"{found[(p, label)]['time_s']:.{digits}f}" if (p, label) in found else "–" for label in labels]
        rows.append([str(p), "/".join(sorted(ideal))] + cells)
    return table_text(["P", "ideal"] + labels, rows)


def times_by_folder(inputs):
    """One row per set-up (run_label), one column per folder at one P (nprocs=P,P,... one per folder, in order):
    the simulated time_s as the CSV holds it (nine significant digits), with time / ideal where it is not 2 (none)
    or a series' own; – where a folder lacks the set-up."""
    ps = inputs.numbers("nprocs")
    if not ps or len(ps) != len(inputs.folders):
        raise InputError(f"block {inputs.name}: nprocs= names {len(ps or [])} P for {len(inputs.folders)} folders "
                         f"(allowed: one P per folder, in order)")
    columns = []
    for folder, p in zip(inputs.folders, ps):
        runs = [r for r in Inputs.read(folder, need=RUN_COLUMNS + ["platform"]) if r["valid"] is True
                and r["nprocs"] == p]
        if not runs:
            raise InputError(f"{folder}/runs.csv: no valid run at P = {p} (allowed: a P the folder holds)")
        platforms = {os.path.basename(r.get("platform") or "") for r in runs}
        columns.append((f"`{', '.join(sorted(platforms))}`, {grouped(p).replace(' ', ',')}",
                        keyed(((run_label(r), r) for r in runs), f"{folder}/runs.csv")))
    labels = merged_order([list(found) for _, found in columns])
    rows = [[label] + [f"{found[label]['time_s']:.9g} ({found[label]['time_s'] / found[label]['ideal_s']:.4f} ×)"
                       if label in found else "–" for _, found in columns] for label in labels]
    return table_text(["series"] + [head for head, _ in columns], rows)


def commbench_by_size(inputs):
    """Simulated creation time in µs per method and group size from one commbench CSV (one repetition per point:
    its time_us, MAX over ranks), at P (nprocs=, default the largest) and the sizes asked (sizes=g,g,...; default
    every size but 1)."""
    path = inputs.folders[0]
    rows = [r for r in Inputs.read_file(path, ("method", "op", "nprocs", "group_size", "time_us"), "commbench.csv")
            if r["op"] == "create"]
    if not rows:
        raise InputError(f"{path}: no creation rows (allowed: a commbench CSV of op create)")
    p = inputs.numbers("nprocs", [max(r["nprocs"] for r in rows)])[0]
    found = keyed((((r["method"], r["group_size"]), r) for r in rows if r["nprocs"] == p), path)
    sizes = inputs.numbers("sizes", sorted({g for _, g in found if g > 1}))
    out = []
    for method, label in COMMBENCH_METHODS:
        if not any(m == method for m, _ in found):
            continue
        out.append([label] + [(lambda us: f"{us:.1f}" if us >= 1 else f"{us:.2f}")(found[(method, g)]["time_us"])
                              if (method, g) in found else "–" for g in sizes])
    return table_text(["method"] + [f"g = {g}" for g in sizes], out)


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


# A simulated run's point: every column that says what was run (the platform and the finished rule included), with
# the defaults of older folders filled in; and the columns the simulation computes, which a deterministic rerun of
# the point must give to the last written digit. Host columns (host, utc_start, git_commit, run_id) are neither.
POINT_COLUMNS = ["experiment", "nprocs", "G", "groups", "T_ms", "workload", "workload_scale", "workload_period",
                 "workload_items", "workload_min", "workload_max", "workload_median", "workload_sigma",
                 "workload_seed", "work_mode", "jitter_pct", "work_seed", "atoms", "temperature", "move", "max_step",
                 "moves_per_item", "balancer", "interval", "method", "rep", "backend", "platform", "finished",
                 "chains_per_group", "wait", "model_compute", "model_reduce"]
SIMULATED_COLUMNS = ["time_s", "ideal_s", "baseline_s", "regroups_avg", "regroups_std", "regroups_min",
                     "regroups_max", "valid", "violations", "migrated_avg", "calibration_s"]
ABSENT = {"finished": None, "chains_per_group": 1, "migrated_avg": 0.0, "model_compute": 1.0, "model_reduce": 1.0}


# Where a committed folder's reproductions are: made from a clean commit of today's code, and (where today's code
# no longer gives the folder's numbers) made from the folder's own commit, which shows what made it.
REPRODUCED_TODAY, REPRODUCED_AT_OWN_COMMIT = "docs/reproductions", "docs/reproductions/at-own-commit"


def reproductions_of(folder):
    """[(where, the reproduction folder, compare_runs of the two)] for each reproduction of a committed simulated
    folder (REPRODUCED_TODAY/<folder below docs/>, then REPRODUCED_AT_OWN_COMMIT/<...> where it exists); InputError
    where it has none, or a run at its own commit was made at another commit than the committed run."""
    if not folder.startswith("docs/"):
        raise InputError(f"block reproductions: {folder} (allowed: a results folder under docs/)")
    found = []
    for where, base in (("today", REPRODUCED_TODAY), ("own commit", REPRODUCED_AT_OWN_COMMIT)):
        copy = os.path.join(base, folder.removeprefix("docs/"))
        if where == "own commit" and not os.path.isdir(os.path.join(ROOT, copy)):
            continue
        compared = compare_runs(folder, copy)
        if where == "own commit":
            for old, new, _ in compared:
                if new["git_commit"] != old["git_commit"]:
                    raise InputError(f"{copy}/runs.csv: run {new['run_id']} made at {new['git_commit']}, the committed "
                                     f"run at {old['git_commit']} (allowed: runs of the committed run's commit)")
        found.append((where, copy, compared))
    return found


def compare_runs(folder, copy):
    """[(committed run, reproduced run, [simulated columns that differ])] for each run of copy/runs.csv, with the
    run of folder/runs.csv at the same point; InputError where copy holds a point folder lacks or either side holds
    a run that is not simulated."""
    def points(where):
        rows = Inputs.read(where, need=["run_id", "git_commit", "backend"] + SIMULATED_COLUMNS[:8])
        out = {}
        for r in rows:
            if r["backend"] != "smpi":
                raise InputError(f"{where}/runs.csv: run {r['run_id']} is not simulated (allowed: smpi runs only)")
            for column, value in ABSENT.items():
                if r.get(column) is None:
                    r[column] = value
            if r["finished"] is None:
                r["finished"] = DEFAULT_FINISHED.get(r["balancer"])
            out.setdefault(tuple(r.get(c) for c in POINT_COLUMNS), r)
        return out

    committed, reproduced = points(folder), points(copy)
    compared = []
    for key, new in reproduced.items():
        old = committed.get(key)
        if old is None:
            raise InputError(f"{copy}/runs.csv: run {new['run_id']} ({run_label(new)}, P = {new['nprocs']}) is no "
                             f"point of {folder}/runs.csv (allowed: points the committed folder holds)")
        differ = [c for c in SIMULATED_COLUMNS if c in old and c in new and old[c] != new[c]]
        compared.append((old, new, differ))
    compared.sort(key=lambda t: (t[0]["nprocs"], t[0]["git_commit"], run_label(t[0])))
    return compared


def reproductions(inputs):
    """Simulated folders kept without provenance.csv, each against its reproductions (reproductions_of): one row per
    reproduction (a link to the folder's runs.csv, relative to docs/notes/): the commits of the committed runs
    compared, the point (rank count), how many runs were compared of the folder's, one run's time_s on each side
    (the first that differs, else the first), whether every simulated column (SIMULATED_COLUMNS) of every compared
    run is identical (else how many runs differ, in which columns), and the reproduction's commit."""
    rows = []
    for folder in inputs.folders:
        for where, _, compared in reproductions_of(folder):
            old, new, _ = next(((o, n, d) for o, n, d in compared if d), compared[0])
            bad = [d for _, _, d in compared if d]
            verdict = "yes" if not bad else (f"no: {len(bad)} of {len(compared)} runs differ ("
                                            f"{', '.join(sorted({c for d in bad for c in d}))})")
            name = folder.removeprefix("docs/")
            rows.append([f"[{name}](../{name}/runs.csv)",
                         ", ".join(sorted({o["git_commit"][:7] for o, _, _ in compared})),
                         "P = " + ", ".join(str(p) for p in sorted({o["nprocs"] for o, _, _ in compared})),
                         f"{len(compared)} of {len(Inputs.read(folder, need=['run_id']))}", run_label(old),
                         f"{old['time_s']:.9g}", f"{new['time_s']:.9g}", verdict,
                         ", ".join(sorted({n["git_commit"][:7] for _, n, _ in compared})) + f" ({where})"])
    return table_text(["folder", "committed at", "point", "runs", "run shown", "committed time_s",
                       "reproduced time_s", "identical", "reproduced at"], rows)


def table1_rows(inputs):
    """Table 1 as plots/table1.py --paper prints it (the paper's values beside each row, "not run" for a row of the
    paper no folder has), from the runs of every folder named together, at nprocs=N (default: the largest)."""
    import table1
    nprocs = inputs.numbers("nprocs", [None])[0]
    try:
        runs = read_runs([os.path.join(ROOT, folder) for folder in inputs.folders])
        _, header, lines = table1.build(runs, inputs.folders[0], nprocs, paper=True)
    except InputError as e:
        raise InputError(str(e).replace(ROOT + os.sep, "")) from None
    return table_text(header, lines)


def trace_replay(inputs):
    """Replays of a recorded trace against the compute-mode runs it was recorded from: one row per set-up, the
    compute-mode median time with its 95 % interval (measured), then per replay its median (with its interval where
    measured; simulated: the one deterministic value) and replay / compute with the interval mcmclb compare forms
    (against a simulated replay, [replay / high, replay / low] of the compute-mode interval). The compute-mode runs
    are the first folder's; a replay is each trace file replayed in any folder, the first one included, so that a
    sweep which interleaved compute mode and replays is read from its one folder. Each column says measured or
    simulated."""
    need = RUN_COLUMNS + ["finished", "backend", "workload_file"]
    first = inputs.folders[0]
    compute = [r for r in Inputs.read(first, need=need) if r["work_mode"] == "compute"]
    if not compute:
        raise InputError(f"{first}/runs.csv: no compute-mode run (allowed: a folder whose runs include work.mode "
                         f"compute, the runs a trace was recorded from)")
    base, order = by_setup(compute, f"{first}/runs.csv")
    replays = []  # (label, {(P, set-up): runs}, simulated)
    for folder in inputs.folders:
        runs = [r for r in Inputs.read(folder, need=need) if r["workload"] == "trace"]
        if not runs and folder != first:
            raise InputError(f"{folder}/runs.csv: no replay of a trace (allowed: folders of workload.model trace runs)")
        for file in dict.fromkeys(r["workload_file"] for r in runs):
            of_file = [r for r in runs if r["workload_file"] == file]
            label = folder if folder != first and len({r["workload_file"] for r in runs}) == 1 else \
                f"{folder} {os.path.basename(file)}"
            replays.append((label, by_setup(of_file, f"{folder}/runs.csv")[0],
                            any(r["backend"] == "smpi" for r in of_file)))
    if not replays:
        raise InputError(f"block {inputs.name}: no replay of a trace in {', '.join(inputs.folders)} (allowed: "
                         f"folders whose runs include workload.model trace)")
    header = ["set-up", f"compute mode, {first} (measured): median [95 % CI]"]
    for label, _, simulated in replays:
        header += [f"replay, {label} ({'simulated' if simulated else 'measured'})", "replay / compute"]
    rows = []
    for (p, setup) in sorted(base, key=lambda k: (k[0], order.index(k[1]))):
        a = Summary([r["time_s"] for r in base[(p, setup)]])
        row = [f"P = {p} {setup}", time_with_interval(a)]
        for label, g, simulated in replays:
            runs = g.get((p, setup))
            if not runs:
                raise InputError(f"{label}: no valid {setup} run at P = {p} (allowed: the set-ups of {first}'s "
                                 f"compute-mode runs)")
            b = Summary([r["time_s"] for r in runs], simulated=simulated)
            text, unit = milliseconds(b.median)
            # A simulated time is exact: its ratio's interval is the compute-mode median's alone.
            ratio = compare_ratio_text(a, b) if not simulated or not a.has_interval else (
                f"{b.median / a.median:.3f} [{b.median / a.hi:.3f}, {b.median / a.lo:.3f}]")
            row += [f"{text} {unit}" if simulated else time_with_interval(b), ratio]
        rows.append(row)
    return table_text(header, rows)


def trace_at_scale(inputs):
    """Simulated replays at scale: one row per set-up, one column per rank count, trace file, chain map and (where
    not the trace's) planning scaling of the folders (the trace's name without .csv): time / none, the best of each
    column in bold; a last row gives none's simulated time. Every number is simulated."""
    need = RUN_COLUMNS + ["finished", "backend", "workload_file", "workload_map", "workload_scaling"]
    runs = [r for folder in inputs.folders for r in Inputs.read(folder, need=need) if r["valid"] is True]
    if any(r["backend"] != "smpi" for r in runs):
        raise InputError(f"block {inputs.name}: a run that is not simulated (allowed: folders of simulated runs)")
    # The planning model's scaling is named where it is not the trace's own.
    column = lambda r: (r["nprocs"], os.path.basename(r["workload_file"] or "").removesuffix(".csv"),
                        r["workload_map"] or "", "" if r["workload_scaling"] == "trace" else
                        f"planned {r['workload_scaling']}")
    columns = sorted({column(r) for r in runs})
    order = list(dict.fromkeys(setup_name(r) for r in runs))
    times = defaultdict(list)
    for r in runs:
        times[(setup_name(r), column(r))].append(r["time_s"])
    ratios = {}
    for c in columns:
        if not times.get(("none", c)):
            raise InputError(f"block {inputs.name}: no valid none run at {c} (allowed: a none run in every column)")
        for setup in order:
            if times.get((setup, c)):
                ratios[(setup, c)] = median(times[(setup, c)]) / median(times[("none", c)])
    best = {c: min(v for (s, cc), v in ratios.items() if cc == c) for c in columns}
    rows = [[setup] + [("—" if (setup, c) not in ratios else f"**{ratios[(setup, c)]:.3f}**"
                        if ratios[(setup, c)] == best[c] else f"{ratios[(setup, c)]:.3f}") for c in columns]
            for setup in order]
    rows.append(["none: time (simulated)"] + [" ".join(milliseconds(median(times[("none", c)]))) for c in columns])
    header = ["set-up: time / none"] + [" ".join(f"P = {p} {name} {map_} {scaling}".split())
                                        for p, name, map_, scaling in columns]
    return table_text(header, rows)


# Every table a block may name: NAME -> (function, (fewest, most) folders, {option: what is allowed}).
TABLES = {
    "quick-start": (quick_start, (1, 1), {}),
    "findings": (findings, (7, 7), {}),
    "steal-vs-regroup-seeds": (steal_vs_regroup_seeds, (1, 1), {"counts": "yes|no"}),
    "steal-vs-regroup-summary": (steal_vs_regroup_summary, (1, 4), {"W": "integers separated by commas"}),
    "steal-vs-regroup-sizes": (steal_vs_regroup_sizes, (1, 4), {"W": "an integer"}),
    "steal-vs-regroup-compute": (steal_vs_regroup_compute, (1, 1), {}),
    "merge-pays-ratios": (merge_pays_ratios, (1, 1), {"bold": "faster|slower"}),
    "merge-pays-sensitivity": (merge_pays_sensitivity, (1, 1), {"bold": "faster|slower",
                                                               "factors": "pairs C:R separated by commas"}),
    "real-versus-none": (real_versus_none, (1, 1), {"rule": "retire|coalesce|pays"}),
    "real-pays": (real_pays, (1, 1), {}),
    "calibration-cost": (calibration_cost, (2, 4), {}),
    "table1-seeds": (table1_seeds, (1, 4), {"seeds": "integers separated by commas", "rule": "retire|coalesce"}),
    "async-gap": (async_gap, (1, 8), {}),
    "host-cost": (host_cost, (1, 1), {}),
    "constants-sensitivity": (constants_sensitivity, (1, 20), {"interval": "an integer"}),
    "two-mpis": (two_mpis, (1, 4), {"digits": "an integer", "ratio": "yes|no"}),
    "commbench-methods": (commbench_methods, (1, 4), {"ratio": "yes|no"}),
    "pays-against-none": (pays_against_none, (1, 1), {}),
    "pays-guarantee": (pays_guarantee, (1, 8), {}),
    "pays-against-rule": (pays_against_rule, (1, 1), {}),
    "live-communicators": (live_communicators, (1, 4), {}),
    "lj-cost": (lj_cost, (1, 2), {}),
    "regrouping-against-thieves": (regrouping_against_thieves, (1, 1), {}),
    "before-after": (before_after, (2, 2), {"balancer": "a balancer's name", "reference": "a balancer's name"}),
    "table1": (table1_rows, (1, 4), {"nprocs": "an integer"}),
    "model-items": (model_items, (1, 1), {}),
    "simulated-times": (simulated_times, (1, 1), {"digits": "an integer", "only": "set-up labels' beginnings, "
                                                                                   "separated by commas"}),
    "times-by-folder": (times_by_folder, (1, 4), {"nprocs": "one P per folder, separated by commas"}),
    "commbench-by-size": (commbench_by_size, (1, 1), {"nprocs": "an integer", "sizes": "integers separated by "
                                                                                          "commas"}),
    "reproductions": (reproductions, (1, 32), {}),
    "trace-replay": (trace_replay, (1, 5), {}),
    "trace-at-scale": (trace_at_scale, (1, 4), {}),
}


def generate(name, args):
    """The Markdown text of table name from args (folders and options); InputError for an unknown name or bad
    arguments."""
    if name not in TABLES:
        raise InputError(f"unknown table {name} (allowed: {', '.join(sorted(TABLES))})")
    function, folders, options = TABLES[name]
    return function(Inputs(name, args, folders, options))


# ---- Documents ----


def blocks(lines, file):
    """(BEGIN index, END index, indent, name, args) of each generated block of a document's lines, outside fenced
    code (where a document may show a block as an example). InputError for a block without END, a BEGIN inside a
    block, an END outside one or a BEGIN without a name."""
    found, open_at, fenced = [], None, False
    for i, line in enumerate(lines):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if fenced or not MARKER.match(line):
            continue
        begin = BEGIN.match(line)
        if begin:
            if open_at is not None:
                raise InputError(f"{file}:{i + 1}: BEGIN inside the block of line {open_at[0] + 1} (allowed: each "
                                 f"block closed by <!-- END generated --> before the next)")
            spec = begin["spec"].split()
            if not spec:
                raise InputError(f"{file}:{i + 1}: a block without a table name (allowed: <!-- BEGIN generated: "
                                 f"NAME ARG... -->)")
            open_at = (i, begin["indent"], spec[0], spec[1:])
        elif END.match(line):
            if open_at is None:
                raise InputError(f"{file}:{i + 1}: END without a BEGIN (allowed: <!-- END generated --> closing a "
                                 f"block)")
            found.append((open_at[0], i) + open_at[1:])
            open_at = None
        else:
            raise InputError(f"{file}:{i + 1}: malformed marker (allowed: <!-- BEGIN generated: NAME ARG... --> "
                             f"and <!-- END generated --> alone on their lines)")
    if open_at is not None:
        raise InputError(f"{file}:{open_at[0] + 1}: block {open_at[2]} has no END (allowed: a line "
                         f"<!-- END generated --> after its table)")
    return found


LINK = re.compile(r"\]\((?![a-z]+:|#|/)(?P<path>[^)#\s]+)(?P<anchor>#[^)]*)?\)")


def relink(text, folder):
    """text with each link a generator wrote relative to the repository root (docs/x.csv) made relative to folder,
    the document's own (relative to the root), as a reader's viewer resolves it."""
    if not folder or folder == ".":
        return text

    def rewrite(m):
        path = m["path"]
        # Only a path from the root (its first folder is one of the root's); one already relative to the document
        # (../x, or a folder beside it) is kept.
        if path.startswith(".") or not os.path.exists(os.path.join(ROOT, path.split("/")[0])):
            return m[0]
        return f"]({os.path.relpath(path, folder)}{m['anchor'] or ''})"
    return LINK.sub(rewrite, text)


def regenerate(text, file, folder=None):
    """(the document with every block rewritten, [(line, name) of each block that changed]); folder: the
    document's folder relative to the root, to which the links in generated text are made relative."""
    lines = text.split("\n")
    out, stale, done = [], [], 0
    for begin, end, indent, name, args in blocks(lines, file):
        try:
            table = [indent + line for line in relink(generate(name, args), folder).split("\n")]
        except InputError as e:
            raise InputError(f"{file}:{begin + 1}: {e}") from None
        out += lines[done:begin + 1] + table
        if lines[begin + 1:end] != table:
            stale.append((begin + 1, name))
        done = end
    return "\n".join(out + lines[done:]), stale


def default_files():
    return [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "**", "*.md"),
                                                                recursive=True))


def replace(path, text):
    """Writes text to path at once, keeping its mode (mcmclb_csv.write_text_atomically)."""
    write_text_atomically(path, text)


def main(argv=None):
    parser = ArgumentParser(prog="doc_tables.py", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="*", help="Markdown files (default: README.md and docs/**/*.md)")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; print each block that differs from its CSVs, exit 1 if any")
    args = parser.parse_args(argv)
    files = args.files or default_files()
    Inputs.cache.clear()
    results = []  # (path, shown name, old text, new text, stale blocks)
    try:
        for path in files:
            shown = os.path.relpath(path, ROOT) if not args.files else path
            with open_regular(path, "a Markdown file", encoding="utf-8", newline="") as f:
                try:
                    text = f.read()
                except UnicodeDecodeError:
                    raise InputError(f"{shown}: not UTF-8 text (allowed: a Markdown file)") from None
            folder = os.path.relpath(os.path.dirname(os.path.realpath(path)), os.path.realpath(ROOT))
            results.append((path, shown, text) + regenerate(text, shown, folder))
    except InputError as e:
        fail(__file__, str(e))
    if args.check:
        stale = [f"{shown}:{line}: block {name} differs from its CSVs; run plots/doc_tables.py"
                 for _, shown, _, _, blocks_ in results for line, name in blocks_]
        for line in stale:
            print(line)
        return 1 if stale else 0
    for path, shown, old, new, blocks_ in results:
        if new != old:
            try:
                replace(path, new)
            except OSError as e:
                fail(__file__, f"{shown}: cannot be rewritten ({e.strerror}; allowed: a writable file in a writable "
                               f"folder)")
            print(f"rewrote {len(blocks_)} block(s) in {shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
