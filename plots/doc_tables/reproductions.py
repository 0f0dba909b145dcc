# SPDX-License-Identifier: BSD-3-Clause
"""Tables of docs/notes/reproductions.md: each simulated folder kept without provenance against its
reproductions at a clean commit, which must give every simulated column to the last written digit."""
import os

from mcmclb_csv import DEFAULT_FINISHED, InputError, run_label

from . import common
from .common import Inputs, table_text


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


# The platform of a run that does not name one: the simulation's default (docs/guide/simulation.md).
DEFAULT_PLATFORM = "configs/platforms/bgp.xml"


def nodes_spanned(platform, nprocs):
    """How many nodes of platform (a path relative to the root) a simulation of nprocs ranks occupies: its hostfile
    (the .xml's name with .hosts) read as smpirun places ranks, rank i on the host of line i, a line "host:N" placing
    N ranks (configs/platforms/smpi-flags.bash); InputError where the hostfile is missing or places too few ranks."""
    hosts = os.path.splitext(platform or DEFAULT_PLATFORM)[0] + ".hosts"
    try:
        with open(os.path.join(common.ROOT, hosts), encoding="utf-8") as f:
            lines = [line.strip() for line in f]
    except OSError:
        raise InputError(f"{hosts}: no such hostfile (allowed: the hostfile beside a platform of configs/platforms/)")
    used, placed = set(), 0
    for line in lines:
        if placed >= nprocs:
            break
        if not line:
            continue
        name, _, count = line.rpartition(":")
        host, slots = (name, int(count)) if name and count.isdigit() else (line, 1)
        used.add(host)
        placed += slots
    if placed < nprocs:
        raise InputError(f"{hosts}: places {placed} ranks, not {nprocs} (allowed: a run that fits its platform)")
    return len(used)


def reproductions_of(folder):
    """[(where, the reproduction folder, compare_runs of the two)] for each reproduction of a committed simulated
    folder (REPRODUCED_TODAY/<folder below docs/>, then REPRODUCED_AT_OWN_COMMIT/<...> where it exists); InputError
    where it has none, or a run at its own commit was made at another commit than the committed run."""
    if not folder.startswith("docs/"):
        raise InputError(f"block reproductions: {folder} (allowed: a results folder under docs/)")
    found = []
    for where, base in (("today", REPRODUCED_TODAY), ("own commit", REPRODUCED_AT_OWN_COMMIT)):
        copy = os.path.join(base, folder.removeprefix("docs/"))
        if where == "own commit" and not os.path.isdir(os.path.join(common.ROOT, copy)):
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
    compared, the point (rank count, and the nodes of its platform it spans), how many runs were compared of the
    folder's, one run's time_s on each side (the first that differs, else the first), whether every simulated column
    (SIMULATED_COLUMNS) of every compared run is identical (else how many runs differ, in which columns), and the
    reproduction's commit."""
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
                         "P = " + ", ".join(f"{p} ({nodes} node{'s' if nodes > 1 else ''})" for p, nodes in
                                            sorted({(o["nprocs"], nodes_spanned(o.get("platform"), o["nprocs"]))
                                                    for o, _, _ in compared})),
                         f"{len(compared)} of {len(Inputs.read(folder, need=['run_id']))}", run_label(old),
                         f"{old['time_s']:.9g}", f"{new['time_s']:.9g}", verdict,
                         ", ".join(sorted({n["git_commit"][:7] for _, n, _ in compared})) + f" ({where})"])
    return table_text(["folder", "committed at", "point", "runs", "run shown", "committed time_s",
                       "reproduced time_s", "identical", "reproduced at"], rows)
