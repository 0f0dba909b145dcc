# SPDX-License-Identifier: BSD-3-Clause
"""The table of docs/notes/simulation-repeat: one simulated point run several times, alone and inside launches of
several points, every simulated column of each run against the first's."""
import os

from mcmclb_csv import InputError, run_label

from .common import Inputs, table_text
from .reproductions import POINT_COLUMNS, SIMULATED_COLUMNS


def _same_point(a, b):
    return all(a.get(c) == b.get(c) for c in POINT_COLUMNS if c != "rep")


def _delta(a, b):
    """|a - b| of two cells of one column: a number for numbers, 0 or None (not equal) for anything else; two
    empty cells are equal."""
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return abs(a - b)
    return 0 if a == b else None


def simulation_repeat(inputs):
    """Per folder (one simulation each): how many points its simulation ran and where this point came, the commit
    and build, the point's time_s, and its Δ, the absolute difference from the first folder's run, in time_s and in
    every other simulated column (reproductions.SIMULATED_COLUMNS; a text column differs or not). The first folder
    holds the point alone; every folder must hold it once, at one clean commit and build."""
    first = inputs.folders[0]
    alone = Inputs.read(first, need=["run_id", "git_commit"] + POINT_COLUMNS + SIMULATED_COLUMNS)
    if len(alone) != 1:
        raise InputError(f"{first}/runs.csv: {len(alone)} runs (allowed: the point alone, one run)")
    point = alone[0]
    compared = [c for c in SIMULATED_COLUMNS if c != "time_s"]
    out, commits, builds = [], set(), set()
    for folder in inputs.folders:
        runs = Inputs.read(folder, need=["run_id", "git_commit"] + POINT_COLUMNS + SIMULATED_COLUMNS)
        mine = [i for i, r in enumerate(runs) if _same_point(r, point)]
        if len(mine) != 1:
            raise InputError(f"{folder}/runs.csv: the point {run_label(point)} at P = {point['nprocs']} appears "
                             f"{len(mine)} times (allowed: once)")
        place, r = mine[0], runs[mine[0]]
        prov = {p["run_id"]: p for p in Inputs.read(folder, "provenance.csv",
                                                   need=("run_id", "build_type", "cxx_flags", "host_cpu_s"))}
        if r["run_id"] not in prov:
            raise InputError(f"{folder}/provenance.csv: no row for run {r['run_id']} (allowed: every run's "
                             f"provenance)")
        p = prov[r["run_id"]]
        if r["git_commit"].endswith("-dirty"):
            raise InputError(f"{folder}/runs.csv: run {r['run_id']} at {r['git_commit']} (allowed: a clean commit)")
        level = next((f for f in p["cxx_flags"].split() if f.startswith("-O")), "no -O flag")
        commits.add(r["git_commit"])
        builds.add((p["build_type"], level))
        deltas = {c: _delta(r[c], point[c]) for c in SIMULATED_COLUMNS}
        if any(d is None for d in deltas.values()):
            others = "differ: " + ", ".join(c for c in SIMULATED_COLUMNS if deltas[c] is None)
        else:
            others = f"{max(deltas[c] for c in compared):g}"
        how = "alone" if len(runs) == 1 else f"point {place + 1} of {len(runs)}"
        label = os.path.basename(folder.rstrip("/"))
        time_delta = "–" if deltas["time_s"] is None else f"{deltas['time_s']:g}"
        out.append([f"[{label}]({label}/runs.csv)", how, f"{r['time_s']!r}", time_delta, others,
                    f"{p['host_cpu_s']:.0f}"])
    if len(commits) != 1 or len(builds) != 1:
        raise InputError(f"block {inputs.name}: runs at {len(commits)} commits and {len(builds)} builds (allowed: "
                         f"one commit, one build)")
    (build, level), = builds
    return table_text([f"simulation (at {commits.pop()}, {build} {level})", "the point in it", "time_s (simulated)",
                       "Δ time_s", f"largest Δ of the other {len(compared)} columns",
                       "host CPU to the point's end, s (measured)"], out)
