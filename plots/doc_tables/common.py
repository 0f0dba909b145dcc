# SPDX-License-Identifier: BSD-3-Clause
"""What the tables of every document share: the folders and options a block names, checked, with each CSV
read once (Inputs), and the cells' texts and checks that tables of several documents use."""
import math
import os
from collections import defaultdict

from mcmclb_csv import DEFAULT_FINISHED, InputError, markdown_table, read_csv
from mcmclb_stats import median


# The repository's root, which a block's folders are relative to. Read at each call as common.ROOT, never copied
# into another module, so that a test may point every table at a copy of the repository.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# ---- Prose that blocks write, and the paper's values ----


def wrapped(text):
    """Markdown prose wrapped at 116 columns, as the documents are written (a long generated line would hide a long
    paragraph from the README's measures)."""
    import textwrap
    return "\n".join(textwrap.wrap(text, 116, break_on_hyphens=False, break_long_words=False))


# " ×" with a no-break space, so that wrapping never puts the sign at the start of a line.
TIMES = "\u00a0×"


def paper_fig2_times():
    """{'none'|'ideal'|'async'|'collective(i)': fig2.PaperTime} of the paper's Fig. 2 in dinan2011.csv: the value its
    text gives, where it gives one (time_s, approximate), and the range of times the text allows (low_s to high_s),
    as plots/fig2.py --reference draws them. The text states these times in words, so both are approximate."""
    import fig2
    return fig2.paper_times()


# ---- Reading the CSVs a block names ----


def of_runs(provenance):
    """Whether a provenance.csv at path (relative to the root) is a results folder's, one row per run: mcmclb calibrate
    writes one of its own beside its platform, and plots/calibration_check.py one of its check, neither naming a run
    (no run_id column)."""
    import csv
    with open(os.path.join(ROOT, provenance), newline="", encoding="utf-8-sig") as f:
        return "run_id" in next(csv.reader(f), [])


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


def shared_core_runs(folder):
    """{run_id: cores} of a real folder's runs that had more ranks than cores (provenance.csv's oversubscribed).
    MPI's waiting calls then spin and take the cores from the working ranks: such a run measures the machine, not
    the balancers, so no finding rests on it (the README's findings refuse it, results.md leaves it out)."""
    prov = Inputs.read(folder, "provenance.csv", need=("run_id", "cores_available", "oversubscribed"))
    return {r["run_id"]: r["cores_available"] for r in prov if r["oversubscribed"]}


def refuse_shared_cores(folder):
    """InputError naming folder where any of its runs had more ranks than cores (shared_core_runs)."""
    shared = shared_core_runs(folder)
    if shared:
        run = min(shared)
        raise InputError(f"{folder}/provenance.csv: run {run} had more ranks than its {shared[run]} cores (allowed: "
                         f"a core per rank; oversubscribed runs are no finding)")


# ---- Cells ----


def merged_order(orders):
    """The labels of several lists in one order: the first list's, each label the first lacks placed right after
    the label it follows where it appears (stealrandom after steal)."""
    out = []
    for order in orders:
        for i, label in enumerate(order):
            if label not in out:
                out.insert(out.index(order[i - 1]) + 1 if i and order[i - 1] in out else len(out), label)
    return out


def table_text(header, rows):
    """The Markdown table of header and rows of cells, as one text."""
    return "\n".join(markdown_table(header, rows))


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


def tolerance_text(percent):
    """A tolerance in percent as mcmclb advise prints it (advice::tolerance_percent): 5.0 % from 1 % up, two
    significant digits below (0.018 %), so a measured tolerance never reads as 0.0 %."""
    return f"{percent:.1f} %" if percent >= 1 else f"{percent:.2g} %"


def at_most_percent(percent):
    """A percentage rounded up to a tenth, without a trailing ".0", for "at most N %": 3.2 stays 3.2, 1.49 reads 1.5,
    0.2 reads 0.2 (never "0"), as advise's own words do. The nudge keeps a figure that prints as 3.2 at 3.2."""
    text = f"{math.ceil(percent * 10 - 1e-6) / 10:.1f}"
    return text[:-2] if text.endswith(".0") else text


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


def ratio_interval(a, b):
    """The interval mcmclb compare forms for b's median over a's (Summaries), [low_b / high_a, high_b / low_a], or
    None where either has no interval."""
    if not (a.has_interval and b.has_interval):
        return None
    return b.lo / a.hi, b.hi / a.lo


def compare_ratio_text(a, b, digits=3):
    """b's median over a's (Summaries), with ratio_interval where both have one."""
    text = f"{b.median / a.median:.{digits}f}"
    interval = ratio_interval(a, b)
    if interval:
        text += f" [{interval[0]:.{digits}f}, {interval[1]:.{digits}f}]"
    return text


def calibrations(runs, where):
    """The calibration_s of runs under pays; InputError naming where when one has none."""
    values = [r["calibration_s"] for r in runs]
    if None in values:
        raise InputError(f"{where} has no calibration_s (allowed: runs under pays, which calibrate)")
    return values


# The creation methods in the order the tables list them ("" for a balancer that creates none).
METHODS = ["", "create", "range", "intercomm"]


def grouped(value, decimals=0):
    """A number with its thousands apart as the guides print them: 49 624, 100 000."""
    return f"{value:,.{decimals}f}".replace(",", " ")
