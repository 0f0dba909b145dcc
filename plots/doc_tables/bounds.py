# SPDX-License-Identifier: BSD-3-Clause
"""The bounds a reproduction is held to, stated before it runs, by one rule: a reproduced value agrees when it prints
as the cited pages print it. A column's bound in a cited folder is half a unit in the last place of the finest figure
of that column any generated block naming the folder prints (in s, ms or µs for a time); a column no block prints
must be identical, as a deterministic simulation gives it. BOUNDS_FILE holds them, written by
`plots/doc_tables.py --bounds` before a rerun and committed; over_bounds() holds a rerun to the file, never to what
the rerun gives.

    derive_bounds()     the rows of BOUNDS_FILE from the pages and folders now
    read_bounds()       the committed rows
    over_bounds(...)    the pairs of a rerun whose difference exceeds its bound, and runs made before the bounds
    commbench_over_bounds(...)  the same for a rerun of a simulated commbench CSV (Fig. 1)
    stated_bounds(...)  the block: every rerun made after the bounds, held to them"""
import csv
import os
import re

from mcmclb_csv import InputError

from . import common
from .common import Inputs
from .common import table_text, wrapped
from .pages import blocks
from .reproductions import (REPRODUCED_TODAY, SIMULATED_COLUMNS, amount, cited_folders, citing_pages, compare_runs,
                            delta)

BOUNDS_FILE = os.path.join(REPRODUCED_TODAY, "bounds.csv")
BOUNDS_HEADER = ["folder", "column", "bound", "printed", "stated_utc"]
# Numeric columns a page may print; valid and violations are words, and must always be identical.
NUMERIC = [c for c in SIMULATED_COLUMNS if c not in ("valid", "violations")]
# The units a time column is printed in, with the factor from seconds.
TIME_UNITS = (("s", 1.0), ("ms", 1e3), ("µs", 1e6))
MAX_DECIMALS = 9
# Blocks that print a value to set a reproduction beside it, not to state a finding: they claim no precision.
COMPARISONS = {"reproductions", "release-reproductions", "release-bounds", "rerun-4dp", "not-yet-reproduced",
               "stated-bounds"}


def simulated_folders(cited):
    """The cited folders holding simulated runs (backend smpi), in path order."""
    out = []
    for folder in sorted(cited):
        runs = Inputs.read(folder, need=("run_id", "backend"))
        if any(r["backend"] == "smpi" for r in runs):
            out.append(folder)
    return out


def block_texts():
    """{folder or file: the generated text of every block naming it (a folder, a file, or a file in the folder)},
    over every page."""
    texts = {}
    for rel, text in citing_pages():
        for _, _, _, name, args in blocks(text.split("\n"), rel):
            if name in COMPARISONS:
                continue
            generated = None
            for arg in (a for a in args if "=" not in a):
                keys = [arg] if os.path.isdir(os.path.join(common.ROOT, arg)) else [arg, os.path.dirname(arg)]
                if generated is None:
                    try:
                        generated = generate(name, args)
                    except InputError:
                        generated = ""
                for key in keys:
                    texts[key] = texts.get(key, "") + "\n" + generated
    return texts


def finest(values, text, units):
    """(bound, how it is printed) of the finest figure of values that text prints in one of units ((name, factor
    from the column's own unit)), or (0, 'not printed')."""
    best = (0.0, "not printed")
    numbers = set(re.findall(r"(?<![\d.])-?\d+(?:\.\d+)?(?![\d])", text))
    for unit, scale in units:
        for decimals in range(MAX_DECIMALS, -1, -1):
            if {f"{v * scale:.{decimals}f}" for v in values} & numbers:
                bound = 0.5 * 10 ** -decimals / scale
                if best[1] == "not printed" or bound < best[0]:
                    best = (bound, f"{decimals} decimals" + (f" of {unit}" if unit else ""))
                break
    return best


def derive_bounds(stated_utc):
    """The rows of BOUNDS_FILE by the rule, from every cited simulated folder and the blocks that print it now."""
    texts = block_texts()
    rows = []

    def add(folder, column, values, text, units):
        bound, printed = finest(values, text, units) if values else (0.0, "not printed")
        rows.append({"folder": folder, "column": column, "bound": f"{bound:.3g}", "printed": printed,
                     "stated_utc": stated_utc})
    for folder in simulated_folders(cited_folders()):
        runs = [r for r in Inputs.read(folder, need=("run_id", "backend")) if r["backend"] == "smpi"]
        for column in NUMERIC:
            add(folder, column, [r[column] for r in runs if isinstance(r.get(column), (int, float))],
                texts.get(folder, ""), TIME_UNITS if column.endswith("_s") else (("", 1.0),))
    # Fig. 1's simulated commbench CSVs: their creation times, in µs, as the blocks naming each file print them.
    for path in simulated_commbench(named_files()):
        rows_of = Inputs.read_file(path, ("method", "op", "nprocs", "group_size", "time_us", "backend"),
                                   "commbench.csv")
        add(path, "time_us", [r["time_us"] for r in rows_of], texts.get(path, ""), (("µs", 1.0),))
    return rows


def named_files():
    """Every file (not a folder) a generated block of the citing pages names, relative to the root."""
    return {a for rel, text in citing_pages() for *_, args in blocks(text.split("\n"), rel) for a in args
            if "=" not in a and os.path.isfile(os.path.join(common.ROOT, a))}


def simulated_commbench(paths):
    """The simulated commbench CSVs (backend smpi) among paths, relative to the root, in path order."""
    found = []
    for path in sorted(p for p in paths if p.endswith(".csv") and os.path.basename(p).startswith("commbench")):
        rows = Inputs.read_file(path, ("method", "op", "backend"), "commbench.csv")
        if any(r["backend"] == "smpi" for r in rows):
            found.append(path)
    return found


def write_bounds(rows):
    """Writes rows to BOUNDS_FILE (relative to the root)."""
    path = os.path.join(common.ROOT, BOUNDS_FILE)
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=BOUNDS_HEADER, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def read_bounds(path=BOUNDS_FILE):
    """{(folder, column): bound} and the UTC time they were stated at, from the committed file; InputError naming
    it where it is missing, malformed or states two times."""
    full = os.path.join(common.ROOT, path)
    try:
        with open(full, newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        raise InputError(f"{path}: cannot be read ({e.strerror}; allowed: the bounds file, "
                         f"plots/doc_tables.py --bounds)") from None
    if not rows or list(rows[0]) != BOUNDS_HEADER:
        raise InputError(f"{path}: not a bounds file (allowed: the header {','.join(BOUNDS_HEADER)})")
    stated = {r["stated_utc"] for r in rows}
    if len(stated) != 1:
        raise InputError(f"{path}: {len(stated)} stating times (allowed: one, all bounds stated at once)")
    try:
        return {(r["folder"], r["column"]): float(r["bound"]) for r in rows}, stated.pop()
    except ValueError:
        raise InputError(f"{path}: a bound that is no number (allowed: numbers)") from None


def over_bounds(folder, copy, bounds, stated_utc):
    """[(the problem, in words)] of a rerun (copy) of a cited folder against the committed bounds: each run made
    before the bounds were stated, each numeric column past its bound (a column without a bound: identical), and
    each word column (valid, violations) that differs."""
    problems = []
    for old, new, differ in compare_runs(folder, copy, every_commit=True):
        if (new.get("utc_start") or "") <= stated_utc:
            problems.append(f"{copy}: run {new['run_id']} started at {new.get('utc_start')}, not after the bounds "
                            f"({stated_utc})")
        for column in differ:
            if column not in NUMERIC:
                problems.append(f"{copy}: run {new['run_id']}: {column} differs ({old[column]} and {new[column]})")
                continue
            bound = bounds.get((folder, column), 0.0)
            gap = abs(float(new[column]) - float(old[column]))
            if gap > bound:
                problems.append(f"{copy}: run {new['run_id']}: {column} differs by {gap:.3g}, over its bound "
                                f"{bound:.3g}")
    return problems


# The columns that name one row of a commbench CSV: a rerun's row is compared with the committed row of the same.
COMMBENCH_POINT = ("method", "op", "nprocs", "group_size", "rep")


def commbench_over_bounds(path, copy, bounds, stated_utc):
    """([problems, in words], rows compared, the largest |Δ time_us|, [platform files that differ]) of a rerun (copy, a
    commbench CSV) of the cited simulated commbench CSV path against the committed bounds. The problems: each row
    made before the bounds were stated, each row of a point path lacks or lacks a rerun of, and each time_us past
    its bound (none stated: identical). A platform file whose bytes differ (platform_fnv1a64; a comment changes them
    too) is said beside, a cause to look at where a time differs, not itself a failure: the times judge."""
    need = COMMBENCH_POINT + ("time_us", "utc_start", "backend", "platform_fnv1a64")
    old = {tuple(r[c] for c in COMMBENCH_POINT): r for r in Inputs.read_file(path, need, "commbench.csv")}
    new = Inputs.read_file(copy, need, "commbench.csv")
    bound = bounds.get((path, "time_us"), 0.0)
    problems, largest, platforms = [], 0.0, set()
    for r in new:
        key = tuple(r[c] for c in COMMBENCH_POINT)
        where = f"{copy}: {r['method']} {r['op']} at group size {r['group_size']}, P = {r['nprocs']}"
        if (r.get("utc_start") or "") <= stated_utc:
            problems.append(f"{where}: made at {r.get('utc_start')}, not after the bounds ({stated_utc})")
        if key not in old:
            problems.append(f"{where}: no such row in {path}")
            continue
        made_on, cited_on = r.get("platform_fnv1a64"), old[key].get("platform_fnv1a64")
        if made_on and cited_on and made_on != cited_on:
            platforms.add(f"platform {cited_on} cited, {made_on} rerun")
        gap = abs(float(r["time_us"]) - float(old[key]["time_us"]))
        largest = max(largest, gap)
        if gap > bound:
            problems.append(f"{where}: time_us differs by {gap:.3g}, over its bound {bound:.3g}")
    missing = len(set(old) - {tuple(r[c] for c in COMMBENCH_POINT) for r in new})
    if missing:
        problems.append(f"{copy}: {missing} of {path}'s rows have no rerun")
    return problems, len(new), largest, sorted(platforms)


def stated_bounds(inputs):
    """Every rerun in the copy folder (a docs/data/reproductions/<commit>/) made after the bounds were stated, held to
    them (BOUNDS_FILE): a row per cited folder or Fig. 1 CSV, with the runs or rows compared, the largest |Δ| of each
    column that differs against its bound, and the verdict. Reruns made before the bounds are left to the tables of
    their own bounds. Then a sentence of counts, naming any rerun over its bound."""
    copy, = inputs.folders
    bounds, stated_utc = read_bounds()
    rows, over = [], []

    def utc_of(rows_of):
        return min((r.get("utc_start") or "") for r in rows_of) if rows_of else ""
    for folder in simulated_folders(cited_folders()):
        name = folder.removeprefix("docs/data/")
        here = os.path.join(copy, name)
        if not os.path.isfile(os.path.join(common.ROOT, here, "runs.csv")):
            continue
        made = Inputs.read(here, need=("run_id", "backend"))
        if utc_of(made) <= stated_utc:
            continue  # reproduced before the bounds: not theirs to judge
        compared = compare_runs(folder, here, every_commit=True)
        largest = {}
        for old, new, differ in compared:
            for column in differ:
                largest[column] = max(largest.get(column, 0.0), delta(old, new, column))
        problems = over_bounds(folder, here, bounds, stated_utc)
        cells = ", ".join(f"`{c}` {amount(c, d)} (bound {amount(c, bounds.get((folder, c), 0.0))})"
                          for c, d in sorted(largest.items())) or "none"
        rows.append([f"[{name}]({folder}/runs.csv)",
                     f"[{len(compared)} run" + ("" if len(compared) == 1 else "s") + f"]({here}/runs.csv)",
                     utc_of(made), cells,
                     "**over the bound**" if problems else "within the bounds"])
        if problems:
            over.append(name)
    for path in simulated_commbench(named_files()):
        name = path.removeprefix("docs/data/")
        here = os.path.join(copy, name)
        if not os.path.isfile(os.path.join(common.ROOT, here)):
            continue
        made = Inputs.read_file(here, ("method", "utc_start"), "commbench.csv")
        if utc_of(made) <= stated_utc:
            continue
        problems, n, largest, platforms = commbench_over_bounds(path, here, bounds, stated_utc)
        bound = bounds.get((path, "time_us"), 0.0)
        rows.append([f"[{name}]({path})", f"[{n} rows]({here})", utc_of(made),
                     (f"`time_us` {largest:.3g} µs (bound {bound:.3g} µs)" if largest else "none")
                     + "".join(f"; {p}" for p in platforms),
                     "**over the bound**" if problems else "within the bounds"])
        if problems:
            over.append(name)
    text = table_text(["cited", "rerun compared", "rerun made (UTC)", "largest |Δ| of a column that differs (its bound)",
                       "verdict"], rows)
    sentence = (f"{len(rows)} cited folders and Fig. 1 CSVs rerun at {os.path.basename(copy)} after the bounds were "
                f"stated ({stated_utc}): {len(rows) - len(over)} within them, {len(over)} over"
                + (f" ({', '.join(over)})." if over else "."))
    return (text + "\n\n" if rows else "") + wrapped(sentence)
