# SPDX-License-Identifier: BSD-3-Clause
"""Tables of docs/reference/reproductions.md: each simulated folder kept without provenance against its
reproductions at a clean commit, which must give every simulated column to the last written digit."""
import functools
import os
import re

from mcmclb_csv import DEFAULT_FINISHED, InputError, run_label

from . import common
from .common import Inputs, table_text, wrapped
from .pages import LINK, blocks, default_files


# A simulated run's point: every column that says what was run (the platform and the finished rule included), with
# the defaults of older folders filled in, and a replayed trace named by its file's name (docs/trace-lj/ became
# docs/data/trace-lj/); and the columns the simulation computes, which a deterministic rerun of the point must give
# to the last written digit. Host columns (host, utc_start, git_commit, run_id) are neither.
POINT_COLUMNS = ["experiment", "nprocs", "G", "groups", "T_ms", "workload", "workload_scale", "workload_period",
                 "workload_items", "workload_min", "workload_max", "workload_median", "workload_sigma",
                 "workload_seed", "work_mode", "jitter_pct", "work_seed", "atoms", "temperature", "move", "max_step",
                 "moves_per_item", "balancer", "interval", "method", "rep", "backend", "platform", "finished",
                 "chains_per_group", "wait", "model_compute", "model_reduce", "workload_file", "workload_map",
                 "workload_scaling"]


SIMULATED_COLUMNS = ["time_s", "ideal_s", "baseline_s", "regroups_avg", "regroups_std", "regroups_min",
                     "regroups_max", "valid", "violations", "migrated_avg", "calibration_s"]


ABSENT = {"finished": None, "chains_per_group": 1, "migrated_avg": 0.0, "model_compute": 1.0, "model_reduce": 1.0,
          "placement": "block", "workload_extrapolate": "flat", "workload_speedups": "median"}


# Where a committed folder's reproductions are: made from a clean commit of today's code, and (where today's code
# no longer gives the folder's numbers) made from the folder's own commit, which shows what made it.
REPRODUCED_TODAY, REPRODUCED_AT_OWN_COMMIT = "docs/data/reproductions", "docs/data/reproductions/at-own-commit"


# The platform of a run that does not name one: the simulation's default (docs/guide/simulation.md).
DEFAULT_PLATFORM = "configs/platforms/bgp.xml"


def hosts_used(platform, nprocs):
    """_hosts_used under the root of now (a test may move it), read once per root, platform and rank count."""
    return list(_hosts_used(common.ROOT, platform, nprocs))


@functools.lru_cache(maxsize=None)
def _hosts_used(root, platform, nprocs):
    """The hosts of platform (a path relative to the root) a simulation of nprocs ranks occupies, in the order of its
    hostfile (the .xml's name with .hosts) read as smpirun places ranks, rank i on the host of line i, a line "host:N"
    placing N ranks (configs/platforms/smpi-flags.bash); InputError where the hostfile is missing or places too few
    ranks."""
    hosts = os.path.splitext(platform or DEFAULT_PLATFORM)[0] + ".hosts"
    try:
        with open(os.path.join(root, hosts), encoding="utf-8") as f:
            lines = [line.strip() for line in f]
    except OSError:
        raise InputError(f"{hosts}: no such hostfile (allowed: the hostfile beside a platform of configs/platforms/)")
    used, placed = {}, 0
    for line in lines:
        if placed >= nprocs:
            break
        if not line:
            continue
        name, _, count = line.rpartition(":")
        host, slots = (name, int(count)) if name and count.isdigit() else (line, 1)
        used.setdefault(host, None)
        placed += slots
    if placed < nprocs:
        raise InputError(f"{hosts}: places {placed} ranks, not {nprocs} (allowed: a run that fits its platform)")
    return tuple(used)


def nodes_spanned(platform, nprocs):
    """How many nodes of platform a simulation of nprocs ranks occupies (hosts_used)."""
    return len(hosts_used(platform, nprocs))


def radical_numbers(radical):
    """The numbers of a SimGrid cluster's radical ("0-511", or "0-3,8,10-11"), in order."""
    numbers = []
    for part in radical.split(","):
        first, _, last = part.strip().partition("-")
        numbers += list(range(int(first), int(last or first) + 1))
    return numbers


def cluster_switches(platform):
    """_cluster_switches under the root of now, each platform's XML parsed once per root."""
    return _cluster_switches(common.ROOT, platform)


@functools.lru_cache(maxsize=None)
def _cluster_switches(root, platform):
    """{host name: (cluster id, switch)} of the clusters of platform's XML, the switch being the router a host's
    links start at: a TORUS cluster gives every node its own router; a DRAGONFLY cluster ("a,b;c,d;e,f;g") puts g
    nodes on each router, in host order (SimGrid's DragonflyZone::rankId_to_coords: the node's place in the
    cluster, divided by the nodes per blade). InputError, one line, for a platform this cannot read: unreadable XML,
    or a cluster of another topology."""
    import xml.etree.ElementTree as ET
    path = platform or DEFAULT_PLATFORM
    try:
        tree = ET.parse(os.path.join(root, path))
    except (OSError, ET.ParseError) as e:
        why = e.strerror if isinstance(e, OSError) else " ".join(str(e).split())
        raise InputError(f"{path}: not readable as a platform ({why}) (allowed: a SimGrid platform XML of "
                         f"configs/platforms/)") from None
    switches = {}
    for cluster in tree.iter("cluster"):
        topology, ident = cluster.get("topology", "FLAT").upper(), cluster.get("id", "?")
        try:
            numbers = radical_numbers(cluster.get("radical", ""))
            if topology == "TORUS":
                per_switch = 1
            elif topology == "DRAGONFLY":
                per_switch = int(cluster.get("topo_parameters", "").split(";")[3])
            elif topology == "FAT_TREE":
                # "levels;down links per level;...": a leaf switch holds the first level's count of nodes.
                per_switch = int(cluster.get("topo_parameters", "").split(";")[1].split(",")[0])
            else:
                raise InputError(f"{path}: cluster {ident} has topology {topology} (allowed: TORUS, DRAGONFLY or "
                                 f"FAT_TREE, whose switches this counts)")
        except (ValueError, IndexError):
            raise InputError(f"{path}: cluster {ident}: radical {cluster.get('radical')!r} or topo_parameters "
                             f"{cluster.get('topo_parameters')!r} not readable (allowed: SimGrid's forms)") from None
        for place, number in enumerate(numbers):
            host = f"{cluster.get('prefix', '')}{number}{cluster.get('suffix', '')}"
            switches[host] = (ident, place // per_switch)
    return switches


def switches_spanned(platform, nprocs):
    """How many network switches (routers) the hosts of a simulation of nprocs ranks on platform sit on
    (hosts_used, cluster_switches): a message between two ranks behind one switch crosses no link between switches.
    On a torus every node is its own router, so this is the nodes; on slingshot.xml's dragonfly 16 nodes share one.
    InputError where a host is in no cluster of the platform."""
    switches = cluster_switches(platform)
    used = set()
    for host in hosts_used(platform, nprocs):
        if host not in switches:
            raise InputError(f"{platform or DEFAULT_PLATFORM}: host {host} of its hostfile is in none of its "
                             f"clusters (allowed: hosts of a TORUS, DRAGONFLY or FAT_TREE cluster)")
        used.add(switches[host])
    return len(used)


def spanned_text(platform, nprocs):
    """'4096 (32 nodes, 2 switches)' of a run."""
    nodes, switches = nodes_spanned(platform, nprocs), switches_spanned(platform, nprocs)
    return (f"{nprocs} ({nodes} node{'s' if nodes > 1 else ''}, {switches} switch{'es' if switches > 1 else ''})")


# Folders kept without provenance (tests/test_evidence.py, WITHOUT_PROVENANCE) whose reproductions do not yet cover
# what the rule asks (coverage below), with what was not done. A folder listed here stands as it was, and the
# not-yet-reproduced block of docs/reference/reproductions.md and docs/explanation/paper-reproduction.md says what is
# missing, until a reproduction or a regeneration with provenance takes it off; the list only shrinks
# (tests/test_evidence.py fails for a listed folder that has either). Empty since fig2-sim-slingshot's reproduction
# at its own commit on two switches of the dragonfly (its runs of another commit were withdrawn).
NOT_YET_REPRODUCED = {}


def regroups(run):
    """Whether a run regroups at all: a run whose every regroupings column is 0 (none, or a balancer that never
    merged) is arithmetic of its work items, which a change in the simulator's network or timing leaves alone."""
    return any(float(run.get(c) or 0) > 0 for c in ("regroups_avg", "regroups_max"))


def coverage(folder):
    """{commit of folder's runs: (its runs, identical reproduced runs that cover it, identical reproduced runs on
    two switches or more that never regroup)}, the runs as committed rows, and [problems of reproductions in which a
    run differs]. A run covers its commit where its reproduction is identical in every simulated column, its hosts
    sit on two network switches of its platform or more (switches_spanned: behind one switch no message crosses a
    link between switches, so the network's model between them goes untested) and it regroups (regroups): a
    reproduction whose runs never regroup cannot detect a change in the simulator."""
    runs = Inputs.read(folder, need=["run_id", "git_commit", "nprocs", "balancer"])
    found = {c: ([r for r in runs if r["git_commit"] == c], [], []) for c in {r["git_commit"] for r in runs}}
    problems = []
    for where, _, compared in reproductions_of(folder):
        differ = [f"{run_label(old)} at P = {old['nprocs']}: {', '.join(d)} differ" for old, _, d in compared if d]
        if differ:
            problems += [f"{where}: {text}" for text in differ]
            continue
        for old, _, _ in compared:
            if switches_spanned(old.get("platform"), old["nprocs"]) >= 2 and old["git_commit"] in found:
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
            problems.append(f"commit {commit[:7]}: no identical reproduction at a rank count spanning two network "
                            f"switches or more")
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
                points = sorted({(r["nprocs"], r.get("platform")) for r in covering})
                text.append(f"Its runs of {commit[:7]} are reproduced: identical at "
                            + ", ".join(f"P = {spanned_text(pf, p)}" for p, pf in points) + ".")
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


def compare_runs(folder, copy, every_commit=False):
    """[(committed run, reproduced run, [simulated columns that differ])] for each run of copy/runs.csv, with the
    run of folder/runs.csv at the same point (every_commit: with the first such run of each commit); InputError
    where copy holds a point folder lacks or either side holds a run that is not simulated."""
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
            r["workload_file"] = os.path.basename(r["workload_file"]) if r.get("workload_file") else None
            # The placement of the hosts too, and how a trace is extrapolated and which of its speed-ups it takes (an
            # advise folder varies both), which folders before them lack (ABSENT: what was run then).
            key = POINT_COLUMNS + ["placement", "workload_extrapolate", "workload_speedups"]
            out.setdefault(tuple(r.get(c) for c in key), {}).setdefault(r["git_commit"], r)
        return out

    committed, reproduced = points(folder), points(copy)
    compared = []
    for key, made in reproduced.items():
        new = next(iter(made.values()))
        # A trace counts by its file's name, but where both sides name its bytes they must be the same: a trace
        # recorded again under the same name is another workload.
        olds = [o for o in committed.get(key, {}).values()
                if not (o.get("workload_file_fnv1a64") and new.get("workload_file_fnv1a64"))
                or o["workload_file_fnv1a64"] == new["workload_file_fnv1a64"]]
        if not olds:
            raise InputError(f"{copy}/runs.csv: run {new['run_id']} ({run_label(new)}, P = {new['nprocs']}) is no "
                             f"point of {folder}/runs.csv (allowed: points the committed folder holds)")
        for old in olds if every_commit else olds[:1]:
            differ = [c for c in SIMULATED_COLUMNS if c in old and c in new and old[c] != new[c]]
            compared.append((old, new, differ))
    compared.sort(key=lambda t: (t[0]["nprocs"], t[0]["git_commit"], run_label(t[0])))
    return compared


def reproductions(inputs):
    """Simulated folders kept without provenance.csv, each against its reproductions (reproductions_of): one row per
    reproduction (a link to the folder's runs.csv, relative to docs/notes/): the commits of the committed runs
    compared, the point (rank count, and the nodes and switches of its platform it spans), how many runs were
    compared of the folder's, one run's time_s on each side (the first that differs, else the first), whether every
    simulated column (SIMULATED_COLUMNS) of every compared run is identical (else how many runs differ, in which
    columns), and the reproduction's commit."""
    rows = []
    for folder in inputs.folders:
        for where, _, compared in reproductions_of(folder):
            old, new, _ = next(((o, n, d) for o, n, d in compared if d), compared[0])
            bad = [d for _, _, d in compared if d]
            verdict = "yes" if not bad else (f"no: {len(bad)} of {len(compared)} runs differ ("
                                            f"{', '.join(sorted({c for d in bad for c in d}))})")
            name = folder.removeprefix("docs/data/")
            rows.append([f"[{name}](docs/data/{name}/runs.csv)",
                         ", ".join(sorted({o["git_commit"][:7] for o, _, _ in compared})),
                         "P = " + ", ".join(spanned_text(pf, p) for p, pf in
                                            sorted({(o["nprocs"], o.get("platform")) for o, _, _ in compared})),
                         f"{len(compared)} of {len(Inputs.read(folder, need=['run_id']))}", run_label(old),
                         f"{old['time_s']:.9g}", f"{new['time_s']:.9g}", verdict,
                         ", ".join(sorted({n["git_commit"][:7] for _, n, _ in compared})) + f" ({where})"])
    return table_text(["folder", "committed at", "point", "runs", "run shown", "committed time_s",
                       "reproduced time_s", "identical", "reproduced at"], rows)


# Where one point of each simulated folder at the paper's scale was simulated again from a later clean commit, to be
# compared to 4 decimals (rerun_4dp): RERUN_PAPER_SCALE/<the folder below docs/data/>, else the folder's reproduction
# of today (REPRODUCED_TODAY), where one holds such a point already.
RERUN_PAPER_SCALE = "docs/data/reproductions/paper-scale"


def rerun_pairs(folder):
    """(where, [(committed run, rerun, [simulated columns that differ])]) of folder's rerun at the paper's scale: the
    runs of RERUN_PAPER_SCALE/<folder below docs/data/> (else REPRODUCED_TODAY/<...>) made at the commit of its
    latest run, at the largest rank count among them; InputError where the folder has neither."""
    name = folder.removeprefix("docs/data/")
    for base in (RERUN_PAPER_SCALE, REPRODUCED_TODAY):
        where = os.path.join(base, name)
        if os.path.isfile(os.path.join(common.ROOT, where, "runs.csv")):
            break
    else:
        raise InputError(f"block rerun-4dp: {folder} has no rerun (allowed: a folder with {RERUN_PAPER_SCALE}/{name} "
                         f"or {REPRODUCED_TODAY}/{name})")
    compared = compare_runs(folder, where)
    latest = max(compared, key=lambda t: t[1]["utc_start"] or "")[1]["git_commit"]
    compared = [t for t in compared if t[1]["git_commit"] == latest]
    top = max(t[0]["nprocs"] for t in compared)
    return where, [t for t in compared if t[0]["nprocs"] == top]


def point_details(folder, run):
    """'jitter_pct 2, work_seed 4' of a committed run: the point columns (POINT_COLUMNS, a trace by its file's name)
    by which folder's runs of the same set-up (run_label) at its P differ, with the run's values; a workload's
    parameters left out where the workload itself differs, and columns the run leaves empty."""
    same = [r for r in Inputs.read(folder, need=["run_id", "nprocs", "balancer"])
            if r["nprocs"] == run["nprocs"] and run_label(r) == run_label(run)]

    def value(r, c):
        v = r.get(c)
        if c == "workload_file" and v:
            return os.path.basename(v)
        return int(v) if isinstance(v, float) and v.is_integer() else v
    shown = [c for c in POINT_COLUMNS if c not in ("experiment", "nprocs", "rep") and value(run, c) is not None
             and len({value(r, c) for r in same}) > 1]
    if "workload" in shown:
        shown = [c for c in shown if not c.startswith("workload_") or c in ("workload_seed", "workload_file")]
    return ", ".join(f"{c} {value(run, c)}" for c in shown)


def rerun_4dp(inputs):
    """One point of each simulated folder at the paper's scale the block names, simulated again (rerun_pairs), to 4
    decimals: per folder, the set-up and P, with the columns that tell it from the folder's other runs at that P (of
    several set-ups rerun, the one whose time_s moved most, which the cell says), the committed run's commit and
    time_s, the rerun's, the difference in ns, whether both print the same to 4 decimals (0.1 ms), and any other
    simulated column that differs. Then a sentence from the rows: how many agree to 4 decimals, how many to the last
    written digit, and the largest difference."""
    rows, agree, exact, largest, commits = [], 0, 0, None, set()
    for folder in inputs.folders:
        where, pairs = rerun_pairs(folder)
        old, new, differ = max(pairs, key=lambda t: abs(t[1]["time_s"] - t[0]["time_s"]))
        ns = (new["time_s"] - old["time_s"]) * 1e9
        same = all(f"{o['time_s']:.4f}" == f"{n['time_s']:.4f}" for o, n, _ in pairs)
        agree += same
        exact += all(not d for _, _, d in pairs)
        commits.add(new["git_commit"][:7])
        if largest is None or abs(ns) > abs(largest[0]):
            largest = (ns, folder.removeprefix("docs/data/"), run_label(old), old["nprocs"])
        details = point_details(folder, old)
        point = f"{run_label(old)}{' (' + details + ')' if details else ''}, P = {old['nprocs']}"
        if len(pairs) > 1:
            point += f", the most moved of {len(pairs)} set-ups"
        other = sorted({c for _, _, d in pairs for c in d} - {"time_s"})
        name = folder.removeprefix("docs/data/")
        rows.append([f"[{name}](docs/data/{name}/runs.csv)", point, old["git_commit"][:7], f"{old['time_s']:.4f}",
                     f"[{new['git_commit'][:7]}]({where}/runs.csv)",
                     f"{new['time_s']:.4f}", f"{ns:+,.0f}" if round(ns) else "0", "yes" if same else "**no**",
                     ", ".join(other) or "none"])
    text = table_text(["folder", "point", "committed at", "committed time_s", "rerun at", "rerun time_s",
                       "difference (ns)", "same to 4 decimals", "other simulated columns that differ"], rows)
    n = len(rows)
    sentence = (f"{agree} of {n} folders give the same simulated time_s to 4 decimals at {', '.join(sorted(commits))}"
                f"; {exact or 'none'} of them to the last written digit.")
    if largest and round(largest[0]):
        sentence += (f" The largest difference is {abs(largest[0]):,.0f} ns ({abs(largest[0]) / 1e6:.3g} ms) of "
                     f"simulated time: {largest[1]}, {largest[2]} at {largest[3]} ranks.")
    return text + "\n\n" + wrapped(sentence)


# ---- Every cited folder at one commit ----


# Where the evidence commit's reproductions are: one folder per commit, RELEASE_BASE/<short commit>/<the folder below
# docs/data/>, each holding the runs.csv and provenance.csv of that commit's simulation of the folder's chosen points
# (release_point), made from a clean worktree of it with the build a user makes (README: RelWithDebInfo, -O2).
RELEASE_BASE = "docs/data/reproductions"


def results_folders():
    """The results folders under docs/data/ (a runs.csv in them), relative to the root, reproductions aside."""
    found = []
    for where, dirs, files in os.walk(os.path.join(common.ROOT, "docs", "data")):
        rel = os.path.relpath(where, common.ROOT)
        if rel.startswith(REPRODUCED_TODAY):
            dirs.clear()
        elif "runs.csv" in files:
            found.append(rel)
    return sorted(found)


def citing_pages():
    """(page relative to the root, its text) of README.md and every page under docs/ but the reproductions' own
    (under REPRODUCED_TODAY), whose links name the folders they reproduce."""
    for page in default_files():
        rel = os.path.relpath(page, common.ROOT)
        if not rel.startswith(REPRODUCED_TODAY + os.sep):
            with open(page, encoding="utf-8") as f:
                yield rel, f.read()


def cited_folders():
    """{results folder: [pages citing it]}: a page cites a folder where one of its links leads into it, or one of
    its generated blocks is made from it. The pages: README.md and every page under docs/, the reproductions' own
    (under REPRODUCED_TODAY) aside, whose links name the folders they reproduce."""
    folders = results_folders()
    cited = {}
    for rel, text in citing_pages():
        targets = {os.path.normpath(os.path.join(os.path.dirname(rel), m["path"])) for m in LINK.finditer(text)}
        targets |= {a for *_, args in blocks(text.split("\n"), rel) for a in args if "=" not in a}
        for folder in folders:
            if any(t == folder or t.startswith(folder + os.sep) for t in targets):
                cited.setdefault(folder, []).append(rel)
    return cited


def release_point(runs):
    """The run of a (folder, commit) pair's runs that stands for them: at the fewest ranks whose hosts span two
    network switches (switches_spanned), else at the largest rank count; there the regrouping run (regroups) of
    least simulated time, the cheapest to simulate again that can show a change in the simulator (else the run of
    least time); the first repetition. Deterministic, so the page and the command that makes it agree."""
    wide = [r["nprocs"] for r in runs if switches_spanned(r.get("platform"), r["nprocs"]) >= 2]
    p = min(wide) if wide else max(r["nprocs"] for r in runs)
    at = [r for r in runs if r["nprocs"] == p]
    pool = [r for r in at if regroups(r)] or at
    return min(pool, key=lambda r: (r["time_s"], r.get("rep") or 0, r["run_id"]))


def release_pairs(copy, cited):
    """[(folder, commit, its runs, [(committed run, reproduced run, [columns that differ])])] for each (folder,
    commit) pair of cited folders, the runs of copy/<folder below docs/data/> matched with the pair's runs of the
    same point (compare_runs); a pair with no reproduction gets []."""
    pairs = []
    for folder in sorted(cited):
        runs = Inputs.read(folder, need=["run_id", "git_commit", "nprocs", "balancer", "time_s"])
        here = os.path.join(copy, folder.removeprefix("docs/data/"))
        compared = (compare_runs(folder, here, every_commit=True)
                    if os.path.isfile(os.path.join(common.ROOT, here, "runs.csv")) else [])
        for commit in sorted({r["git_commit"] for r in runs}):
            own = [r for r in runs if r["git_commit"] == commit]
            pairs.append((folder, commit, own, [t for t in compared if t[0]["git_commit"] == commit]))
    return pairs


# The bounds of the evidence commit's reproductions (release_reproductions, release_bounds): [(folders below
# docs/data/, None for every pair; {simulated column: the largest |Δ| allowed, in the column's unit}; why it differs,
# as far as the folders' files and the repository's history show)]. A differing column of a pair takes the first
# rule that names the column and the pair's folder; a column no rule names must be identical, as a deterministic
# simulation gives it. Each bound is a round number above what the reproductions at 8e22592 give: a later
# reproduction that differs more is said (**over the bound**), never absorbed.
RELEASE_BOUNDS = [
    (("stealrandom-hint/after", "stealrandom-hint/before"), {"time_s": 0.5, "migrated_avg": 0.01},
     "cause not found: the committed run was the second of six points in one launch (`command_line`), the "
     "reproduction alone; a4ac805 made a point's times independent of its launch, untested here"),
    (("steal-vs-regroup-seeds-1024", "steal-vs-regroup-8192-w8"),
     {"regroups_avg": 0.5, "regroups_std": 0.1, "regroups_max": 1},
     "`mostwork` regroups another number of times; cause not found (not bisected), as the folders' pages say"),
    (("trace-lj/sim-p4", "trace-lj/sim-p4-measured", "trace-lj/scale-8192"), {"ideal_s": 0.05},
     "3fdbf9f made a replayed trace's ideal the steady-share bound ([trace-lj-at-scale.md]"
     "(docs/explanation/trace-lj-at-scale.md)); no page divides by these ideals"),
    (None, {"calibration_s": 1e-4},
     "a4ac805 changed how the calibration is timed ([reproductions.md](docs/reference/reproductions.md)); not "
     "bisected"),
    (None, {"time_s": 1e-4}, "not bisected; the pairs' provenance (below) points at a4ac805"),
]


def bound_of(folder, column):
    """(the largest |Δ| allowed in column of a reproduction of folder (a path under docs/data/), the index of its
    rule in RELEASE_BOUNDS), or (0, None) where no rule names them: identical."""
    name = folder.removeprefix("docs/data/")
    for i, (folders, bounds, _) in enumerate(RELEASE_BOUNDS):
        if column in bounds and (folders is None or name in folders):
            return bounds[column], i
    return 0, None


def delta(old, new, column):
    """|Δ| of a compared column of two runs; a column that is no number (valid) counts 1 where it differs."""
    try:
        return abs(float(new[column]) - float(old[column]))
    except (TypeError, ValueError):
        return 1.0


def amount(column, value):
    """A bound or |Δ| in its column's unit: seconds as 100 µs, 0.5 s; other columns as numbers."""
    if not column.endswith("_s"):
        return f"{value:.3g}"
    for unit, scale in (("s", 1), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if value >= scale or unit == "ns":
            return f"{value / scale:.3g} {unit}"


def over_bound(folder, compared):
    """[(column, largest |Δ|, its bound)] of the compared runs of folder whose difference exceeds the bound
    (bound_of)."""
    over = {}
    for old, new, differ in compared:
        for c in differ:
            d, (bound, _) = delta(old, new, c), bound_of(folder, c)
            if d > bound:
                over[c] = (max(d, over.get(c, (0, 0))[0]), bound)
    return [(c, d, b) for c, (d, b) in sorted(over.items())]


def bounds_text(folder, compared):
    """'time_s ≤ 100 µs' of the columns in which folder's compared runs differ, each with its bound; '–' where none
    differs."""
    columns = sorted({c for _, _, d in compared for c in d})
    return ", ".join(f"{c} ≤ {amount(c, bound_of(folder, c)[0])}" for c in columns) or "–"


def largest_change(compared):
    """(|Δ time_s| in ns, [(column, |Δ|) of the other compared columns that differ, each its largest]) over
    compared runs; a column that is no number (valid) counts 1 where it differs."""
    ns, other = 0.0, {}
    for old, new, differ in compared:
        for c in differ:
            d = delta(old, new, c)
            if c == "time_s":
                ns = max(ns, d * 1e9)
            else:
                other[c] = max(other.get(c, 0.0), d)
    return ns, sorted(other.items())


def builds_of(folder):
    """{'RelWithDebInfo, -O2'} of the builds folder/provenance.csv records: the build type and the last -O flag."""
    return {", ".join([p.get("build_type") or "build not recorded"]
                      + re.findall(r"(?<!\S)-O\S*", p.get("cxx_flags") or "")[-1:])
            for p in Inputs.read(folder, "provenance.csv", need=["run_id"])}


def release_reproductions(inputs):
    """Every (folder, commit) pair a page cites (cited_folders), one row each: the folder and its commit, whether
    its runs are simulated (else measured, which no simulation reproduces), the point reproduced, where
    (the reproduction's commit and build, from its provenance.csv), the largest |Δ time_s| in ns of simulated time
    and the largest |Δ| of each other compared column (SIMULATED_COLUMNS), the bound of each column that differs
    (bound_of) and the verdict: identical, within the bound, or over it (over_bound). A cited simulated pair without
    a reproduction says so. Then a sentence of counts."""
    copy, = inputs.folders
    rows, worst = [], (0.0, "")
    counts = {"identical": 0, "differs": 0, "over": 0, "made there": 0, "not reproduced": 0, "measured": 0}
    for folder, commit, runs, compared in release_pairs(copy, cited_folders()):
        name = folder.removeprefix("docs/data/")
        simulated = all(r.get("backend") == "smpi" for r in runs)
        cells = [f"[{name}]({folder}/runs.csv)", commit[:7], "simulated" if simulated else "measured"]
        if not simulated:
            counts["measured"] += 1
            rows.append(cells + ["–", "–", "–", "–", "–", "measured: not reproducible by simulation"])
            continue
        if commit.startswith(os.path.basename(copy)):  # made at the evidence commit: its own runs are its point
            counts["made there"] += 1
            rows.append(cells + ["every run", f"made at {commit[:7]} ({', '.join(sorted(builds_of(folder)))})", "0",
                                 "0", "–", "identical (made there)"])
            continue
        if not compared:
            counts["not reproduced"] += 1
            point = release_point(runs)
            rows.append(cells + [f"{run_label(point)}, P = {point['nprocs']}", "–", "–", "–", "–",
                                 f"**not reproduced at {os.path.basename(copy)}**"])
            continue
        here = os.path.join(copy, name)
        builds = builds_of(here)
        ns, other = largest_change(compared)
        same = all(not d for _, _, d in compared)
        over = over_bound(folder, compared)
        counts["identical" if same else "over" if over else "differs"] += 1
        if ns > worst[0]:
            worst = (ns, f"{name} at {commit[:7]}")
        points = "; ".join(f"{run_label(o)}, P = {o['nprocs']}" for o, _, _ in compared)
        at = ", ".join(sorted({n["git_commit"][:7] for _, n, _ in compared}))
        rows.append(cells + [points, f"[{at}]({here}/runs.csv) ({', '.join(sorted(builds))})",
                             f"{ns:,.0f}", ", ".join(f"{c} {d:.3g}" for c, d in other) or "0",
                             bounds_text(folder, compared),
                             "identical" if same else "**over the bound**" if over else "differs, within the bound"])
    text = table_text(["folder", "committed at", "runs", "point", "reproduced at (build)", "largest |Δ time_s| (ns)",
                       "other columns' largest |Δ|", "bound", "verdict"], rows)
    if inputs.choice("only", ["counts"]) == "counts":
        text = ""
    done = counts["identical"] + counts["differs"] + counts["over"]
    sentence = (f"{len(rows)} cited (folder, commit) pairs: {counts['measured']} measured, {done} simulated and "
                f"reproduced ({counts['identical']} identical, {counts['differs']} differ within the stated bound, "
                f"{counts['over']} over it), "
                f"{counts['made there']} made at {os.path.basename(copy)}, "
                f"{counts['not reproduced']} simulated and not reproduced there.")
    if worst[0]:
        sentence += f" The largest |Δ time_s| is {worst[0]:,.0f} ns of simulated time ({worst[1]})."
    return (text + "\n\n" if text else "") + wrapped(sentence)


def with_precision(folder, runs):
    """Whether folder's provenance.csv records SimGrid's surf/precision flag (a4ac805 set it) in the simgrid_cfg of
    every one of runs; None where it has no provenance.csv or no row of a run."""
    if not os.path.isfile(os.path.join(common.ROOT, folder, "provenance.csv")):
        return None
    cfg = {p["run_id"]: p.get("simgrid_cfg") or "" for p in Inputs.read(folder, "provenance.csv", need=["run_id"])}
    if any(r["run_id"] not in cfg for r in runs):
        return None
    return all("surf/precision" in cfg[r["run_id"]] for r in runs)


def release_bounds(inputs):
    """The bounds (RELEASE_BOUNDS) the evidence commit's reproductions are held to, one row per rule: whose pairs,
    each column's bound, how many reproduced pairs differ under it, the largest |Δ| of each column (which pair) and
    why they differ. Then sentences: every other column must be identical; how many pairs lie within their bounds;
    and what the committed runs' provenance says of the pairs that differ (SimGrid's surf/precision flag in
    simgrid_cfg, with_precision)."""
    copy, = inputs.folders
    seen = {}  # rule -> {column: (largest |Δ|, where)}, and the pairs that differ under it
    pairs_of = {}
    within, over, compared_pairs = 0, [], 0
    flag = {"differ": {True: 0, False: 0, None: 0}, "identical": {True: 0, False: 0, None: 0}}
    for folder, commit, runs, compared in release_pairs(copy, cited_folders()):
        if not compared:
            continue
        compared_pairs += 1
        name = folder.removeprefix("docs/data/")
        olds = [o for o, _, _ in compared]
        news = [n for _, n, _ in compared]
        both = with_precision(folder, olds)
        if both is not None:
            both = both and bool(with_precision(os.path.join(copy, name), news))
        flag["differ" if any(d for _, _, d in compared) else "identical"][both] += 1
        for c in sorted({c for _, _, d in compared for c in d}):
            d = max(delta(o, n, c) for o, n, differ in compared if c in differ)
            _, rule = bound_of(folder, c)
            pairs_of.setdefault(rule, set()).add((name, commit))
            if d > seen.setdefault(rule, {}).get(c, (0.0, ""))[0]:
                seen[rule][c] = (d, f"{name} at {commit[:7]}")
        bad = over_bound(folder, compared)
        if bad:
            over.append(f"{name} at {commit[:7]} ("
                        + ", ".join(f"{c} by {amount(c, d)}, bound {amount(c, b)}" for c, d, b in bad) + ")")
        else:
            within += 1
    rows = []
    for i, (folders, bounds, why) in enumerate(RELEASE_BOUNDS):
        largest = seen.get(i, {})
        rows.append([", ".join(folders) if folders else "every other pair",
                     ", ".join(f"`{c}` ≤ {amount(c, b)}" for c, b in bounds.items()),
                     str(len(pairs_of.get(i, ()))),
                     ", ".join(f"`{c}` {amount(c, largest[c][0])} ({largest[c][1]})" for c in bounds if c in largest)
                     or "–", why])
    text = table_text(["pairs", "bound (largest |Δ| allowed)", "pairs that differ under it", "largest |Δ| seen",
                       "why"], rows)
    sentences = [f"Every other compared column must be identical, as a deterministic simulation gives it. {within} of "
                 f"{compared_pairs} reproduced pairs lie within their bounds"
                 + (f"; {len(over)} lie over them: {'; '.join(over)}." if over else ".")]
    if None in pairs_of:
        sentences.append("Columns that differ with no bound: "
                         + ", ".join(sorted(c for c in seen[None])) + ".")
    differ, same = flag["differ"], flag["identical"]
    sentences.append(
        f"What the provenance shows: of the {sum(differ.values())} pairs that differ, {differ[False]} were simulated "
        f"at their commit without SimGrid's `surf/precision` flag (`simgrid_cfg` in provenance.csv). "
        f"{differ[None]} {'has' if differ[None] == 1 else 'have'} no provenance.csv to tell, and {differ[True]} had "
        f"the flag on both sides. Of the {sum(same.values())} identical pairs, {same[True]} had it on both sides and "
        f"{same[False]} lacked it at their commit. Commit a4ac805 set the flag and changed how a run's clock starts; "
        f"which of the two moves the times was not bisected.")
    return text + "\n\n" + wrapped(" ".join(sentences))
