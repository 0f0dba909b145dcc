# SPDX-License-Identifier: BSD-3-Clause
"""Tables of docs/reference/reproductions.md: each simulated folder kept without provenance against its
reproductions at a clean commit, which must give every simulated column to the last written digit."""
import os

from mcmclb_csv import DEFAULT_FINISHED, InputError, run_label

from . import common
from .common import Inputs, table_text, wrapped


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
REPRODUCED_TODAY, REPRODUCED_AT_OWN_COMMIT = "docs/data/reproductions", "docs/data/reproductions/at-own-commit"


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


# Folders kept without provenance (tests/test_evidence.py, WITHOUT_PROVENANCE) whose reproductions do not yet cover
# what the rule asks (coverage below), with what was not done. A folder listed here stands as it was, and the
# not-yet-reproduced block of docs/reference/reproductions.md and docs/explanation/paper-reproduction.md says what is
# missing, until a reproduction or a regeneration with provenance takes it off; the list only shrinks
# (tests/test_evidence.py fails for a listed folder that has either).
NOT_YET_REPRODUCED = {
    "docs/data/fig2-sim-slingshot": "lookahead(1) or collective(16) at 32,768 ranks, which regroup, simulated again",
}


def regroups(run):
    """Whether a run regroups at all: a run whose every regroupings column is 0 (none, or a balancer that never
    merged) is arithmetic of its work items, which a change in the simulator's network or timing leaves alone."""
    return any(float(run.get(c) or 0) > 0 for c in ("regroups_avg", "regroups_max"))


def coverage(folder):
    """{commit of folder's runs: (its runs, identical reproduced runs that cover it, identical reproduced runs at
    two nodes or more that never regroup)}, the runs as committed rows, and [problems of reproductions in which a
    run differs]. A run covers its commit where its reproduction is identical in every simulated column, it spans
    two nodes of its platform or more (inside one node no message crosses a link) and it regroups (regroups):
    a reproduction whose runs never regroup cannot detect a change in the simulator."""
    runs = Inputs.read(folder, need=["run_id", "git_commit", "nprocs", "balancer"])
    found = {c: ([r for r in runs if r["git_commit"] == c], [], []) for c in {r["git_commit"] for r in runs}}
    problems = []
    for where, _, compared in reproductions_of(folder):
        differ = [f"{run_label(old)} at P = {old['nprocs']}: {', '.join(d)} differ" for old, _, d in compared if d]
        if differ:
            problems += [f"{where}: {text}" for text in differ]
            continue
        for old, _, _ in compared:
            if nodes_spanned(old.get("platform"), old["nprocs"]) >= 2 and old["git_commit"] in found:
                found[old["git_commit"]][1 if regroups(old) else 2].append(old)
    return found, problems


def reproduction_problems(folder):
    """Why folder's reproductions do not stand in for its provenance, in words; [] where they do: every commit of
    its runs is covered (coverage), whatever other reproductions of it differ (a reproduction today where one at
    the folder's own commit is identical)."""
    try:
        found, problems = coverage(folder)
    except InputError as e:
        return [str(e)]
    if all(covering for _, covering, _ in found.values()):
        return []
    for commit, (_, covering, arithmetic) in sorted(found.items()):
        if covering:
            continue
        if arithmetic:
            problems.append(f"commit {commit[:7]}: its reproduced runs never regroup (every regroupings column 0), "
                            f"which cannot detect a change in the simulator")
        else:
            problems.append(f"commit {commit[:7]}: no identical reproduction at a rank count spanning two nodes or "
                            f"more")
    return problems


def runs_text(runs):
    """'none and lookahead(1) range at P = 32768' of committed rows, grouped by rank count."""
    by_p = {}
    for r in sorted(runs, key=lambda r: (r["nprocs"], run_label(r))):
        by_p.setdefault(r["nprocs"], []).append(run_label(r))
    parts = []
    for p, labels in by_p.items():
        labels = sorted(set(labels))
        parts.append((", ".join(labels[:-1]) + " and " if len(labels) > 1 else "") + f"{labels[-1]} at P = {p}")
    return "; ".join(parts)


def not_yet_reproduced(inputs):
    """For each folder of NOT_YET_REPRODUCED the block names, one paragraph from its CSVs and its reproductions: the
    commits whose runs are covered (coverage) and where, each commit that is not and why, and what was not done."""
    paragraphs = []
    for folder in inputs.folders:
        if folder not in NOT_YET_REPRODUCED:
            raise InputError(f"block {inputs.name}: {folder} is not in NOT_YET_REPRODUCED (allowed: "
                             f"{', '.join(sorted(NOT_YET_REPRODUCED))})")
        found, problems = coverage(folder)
        name = folder.removeprefix("docs/data/")
        text = [f"`{name}` ([what it holds]({folder}/README.md)) has no provenance.csv."]
        for commit, (runs, covering, arithmetic) in sorted(found.items(), key=lambda t: (bool(t[1][1]), t[0]),
                                                           reverse=True):
            if covering:
                nodes = sorted({(r["nprocs"], nodes_spanned(r.get("platform"), r["nprocs"])) for r in covering})
                text.append(f"Its runs of {commit[:7]} are reproduced: identical at "
                            + ", ".join(f"P = {p} ({n} nodes)" for p, n in nodes) + ".")
            elif arithmetic:
                text.append(f"Its runs of {commit[:7]} ({runs_text(runs)}) are not reproduced. Their only identical "
                            f"reproduction, {runs_text(arithmetic)}, never regroups. Such a run is arithmetic: it "
                            f"cannot detect a change in the simulator.")
            else:
                text.append(f"Its runs of {commit[:7]} ({runs_text(runs)}) were not simulated again.")
        text += [f"Where a reproduction differs: {p}." for p in problems]
        text.append(f"Not done: {NOT_YET_REPRODUCED[folder]}. Until then those runs stand with neither provenance nor "
                    f"a reproduction.")
        paragraphs.append(wrapped(" ".join(text)))
    return "\n\n".join(paragraphs)


def reproductions_of(folder):
    """[(where, the reproduction folder, compare_runs of the two)] for each reproduction of a committed simulated
    folder (REPRODUCED_TODAY/<folder below docs/>, then REPRODUCED_AT_OWN_COMMIT/<...> where it exists); InputError
    where it has none, or a run at its own commit was made at another commit than the committed run."""
    if not folder.startswith("docs/data/"):
        raise InputError(f"block reproductions: {folder} (allowed: a results folder under docs/)")
    found = []
    for where, base in (("today", REPRODUCED_TODAY), ("own commit", REPRODUCED_AT_OWN_COMMIT)):
        copy = os.path.join(base, folder.removeprefix("docs/data/"))
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
            name = folder.removeprefix("docs/data/")
            rows.append([f"[{name}](../data/{name}/runs.csv)",
                         ", ".join(sorted({o["git_commit"][:7] for o, _, _ in compared})),
                         "P = " + ", ".join(f"{p} ({nodes} node{'s' if nodes > 1 else ''})" for p, nodes in
                                            sorted({(o["nprocs"], nodes_spanned(o.get("platform"), o["nprocs"]))
                                                    for o, _, _ in compared})),
                         f"{len(compared)} of {len(Inputs.read(folder, need=['run_id']))}", run_label(old),
                         f"{old['time_s']:.9g}", f"{new['time_s']:.9g}", verdict,
                         ", ".join(sorted({n["git_commit"][:7] for _, n, _ in compared})) + f" ({where})"])
    return table_text(["folder", "committed at", "point", "runs", "run shown", "committed time_s",
                       "reproduced time_s", "identical", "reproduced at"], rows)
