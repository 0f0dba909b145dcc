# SPDX-License-Identifier: BSD-3-Clause
"""Tables of communicator creation and real MPI libraries: docs/guide/commbench.md,
docs/reference/measurements.md (with the real-MPI folders whose provenance lacks the build) and the simulated
commbench sizes of docs/explanation/paper-reproduction.md."""
import os
import re
from collections import defaultdict

from mcmclb_csv import RUN_COLUMNS, InputError, library_name, run_label
from mcmclb_stats import Summary

from . import common
from .common import Inputs, compare_ratio_text, grouped, keyed, refuse_mixed, shared_core_runs, table_text, wrapped


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
    ([low_B / high_A, high_B / low_A]). shared=omit leaves out the runs with more ranks than cores
    (shared_core_runs), for a page of findings."""
    digits = inputs.numbers("digits", [2])[0]
    ratio = inputs.choice("ratio", ["yes", "no"]) == "yes"
    omit = inputs.choice("shared", ["omit", "keep"]) == "omit"
    if ratio and len(inputs.folders) != 2:
        raise InputError(f"block {inputs.name}: ratio=yes names {len(inputs.folders)} folders (allowed: two)")
    columns, order = [], {}
    for folder in inputs.folders:
        runs = [r for r in Inputs.read(folder, need=RUN_COLUMNS + ["mpi_library"]) if r["valid"] is True]
        if omit:
            shared = shared_core_runs(folder)
            runs = [r for r in runs if r["run_id"] not in shared]
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


# The launcher provenance.csv names for a simulated run; every other launcher (mpiexec, srun) ran real MPI.
SIMULATED_LAUNCHER = "smpirun"


def provenance_gaps(inputs):
    """Every real-MPI results folder below the folders the block names (each provenance.csv found, read with the
    runs.csv beside it) whose provenance lacks the build of some run: build_type absent (a folder made before the
    columns build_type, compiler and cxx_flags) or empty. One row each: a link to its provenance.csv (relative to
    docs/reference/), how many of its runs lack the build, their launcher and the commits of those runs (runs.csv's
    git_commit). A simulated run (launcher smpirun, or backend smpi in runs.csv) is never listed: mcmclb reads no
    host time in a simulation, so its times do not depend on the build."""
    rows = []
    for top in inputs.folders:
        for folder, dirs, names in sorted(os.walk(os.path.join(common.ROOT, top))):
            dirs.sort()
            where = os.path.relpath(folder, common.ROOT)
            if "provenance.csv" not in names or not common.of_runs(os.path.join(where, "provenance.csv")):
                continue
            runs = Inputs.read(where, "provenance.csv", need=["run_id", "launcher"])
            made = ({r["run_id"]: r for r in Inputs.read(where, need=["run_id", "git_commit", "backend"])}
                    if "runs.csv" in names else {})
            lacking = [r for r in runs if not r.get("build_type")
                       and not (r["launcher"] or "").startswith(SIMULATED_LAUNCHER)
                       and made.get(r["run_id"], {}).get("backend") != "smpi"]
            if not lacking:
                continue
            commits = {made[r["run_id"]]["git_commit"][:7] for r in lacking if r["run_id"] in made}
            link = os.path.relpath(os.path.join(folder, "provenance.csv"),
                                   os.path.join(common.ROOT, "docs", "reference"))
            rows.append([f"[{where.removeprefix('docs/')}]({link})", f"{len(lacking)} of {len(runs)}",
                         ", ".join(sorted({r["launcher"] or "(empty)" for r in lacking})),
                         ", ".join(sorted(commits)) or "(not in runs.csv)"])
    if not rows:
        return wrapped("Every real-MPI results folder here records the build of each run (provenance.csv's "
                       "build_type, compiler and cxx_flags).")
    rows.sort()
    lead = wrapped(f"In {len(rows)} real-MPI results folder{'s' if len(rows) > 1 else ''}, provenance.csv records no "
                   f"build for {sum(int(r[1].split()[0]) for r in rows)} runs (no build_type, compiler or cxx_flags). "
                   f"Each is listed with the commits those runs were made at (runs.csv's git_commit):")
    return lead + "\n\n" + table_text(["folder", "runs without a build", "launcher", "made at"], rows)
