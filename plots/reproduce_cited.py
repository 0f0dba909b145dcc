#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Simulates again, from a clean worktree of one commit, the point of each cited (folder, commit) pair that
docs/data/reproductions/<commit>/README.md tables (plots/doc_tables/reproductions.py: cited_folders, release_point),
one pair at a time, and copies each result's runs.csv and provenance.csv, after plots/scrub_paths.py, to
docs/data/reproductions/<the worktree's short commit>/<the folder below docs/data/>/ of this checkout.

    plots/reproduce_cited.py TREE [--max-ranks P] [--dry-run] [FOLDER...]

TREE is the worktree, with build/ (the driver, mcmclb sweep) and build-sim/ (the simulation build, mcmclb-sim) built
in it. Each point is one `mcmclb sweep --launcher smpi` in TREE: the committed run's own command (its provenance.csv
row: the study file and its --set options; a folder without provenance: configs/<experiment>.yaml; a study the folder
keeps, as an advise folder keeps each it ran, copied from this checkout's folder into TREE), narrowed by
--set to the one point (checked with `mcmclb plan`), on the run's platform, with TREE's smpirun flags and those of the
run's flags that TREE's configs/platforms/smpi.cfg does not set (a model constant the folder varied). Pairs already
reproduced are skipped, and a sweep resumes a point its folder holds already; FOLDER... limits the pairs to those
folders, --max-ranks to points of at most P ranks. Each sweep runs at nice 10 on the cores the script may use: run it
under `taskset -c N` to keep its simulations on core N."""
import csv
import os
import re
import shlex
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcmclb_csv import ArgumentParser, InputError, fail, fnv1a64_hex  # noqa: E402
from doc_tables import reproductions as repro  # noqa: E402
from doc_tables.common import ROOT, Inputs  # noqa: E402

# The runs.csv columns that narrow a study to one point, after its rank count and set-up, with their study keys
# (docs/reference/keys.md); each is added only while `mcmclb plan` still gives more than one point.
NARROW = [("chains_per_group", "chains_per_group"), ("workload", "workload.model"), ("workload_seed", "workload.seed"),
          ("work_seed", "work.seed"), ("jitter_pct", "work.jitter_pct"), ("T_ms", "T_ms"),
          ("workload_scale", "workload.scale"), ("work_mode", "work.mode"), ("atoms", "work.atoms"),
          ("move", "work.move"), ("model_compute", "work.model_compute"), ("model_reduce", "work.model_reduce"),
          ("G", "G"), ("workload_file", "workload.file"), ("workload_map", "workload.map"),
          ("workload_scaling", "workload.scaling"), ("workload_extrapolate", "workload.extrapolate"),
          ("workload_speedups", "workload.speedups")]


# The study keys a study may vary together under zip, with their runs.csv columns: a zipped key cannot be --set, so
# the study is copied with each zip list cut to the run's element.
ZIP_COLUMN = {"nprocs": "nprocs", "T_ms": "T_ms", "workload.scale": "workload_scale", "work.move": "move",
              "work.max_step": "max_step", "work.moves_per_item": "moves_per_item", "work.jitter_pct": "jitter_pct",
              "chains_per_group": "chains_per_group", "interval": "interval"}


def study_copy(tree, config, run, out, own):
    """(the study to run, the zipped keys): config itself where it is TREE's own file and has no zip, else a copy
    written to tree/out.yaml. own: config is a study the cited folder keeps (mcmclb advise writes each study it runs
    into its folder), read from this checkout's folder, the file the run was made from. A zip's lists are cut to the
    run's element; InputError where no element is the run's."""
    import yaml
    source = os.path.join(ROOT if own else tree, config)
    if not os.path.isfile(source):  # e.g. a study named relative to the folder an older run was started in
        raise InputError(f"{config}: no such study file in {'this checkout' if own else tree} (allowed: the study "
                         f"the run's provenance names, as a path from the checkout)")
    with open(source, encoding="utf-8") as f:
        study = yaml.safe_load(f)
    zipped = study.get("zip") or {}
    if not zipped and not own:
        return config, set()
    os.makedirs(os.path.dirname(os.path.join(tree, out)), exist_ok=True)
    if not zipped:
        shutil.copy(source, os.path.join(tree, out + ".yaml"))
        return out + ".yaml", set()
    unknown = [k for k in zipped if k not in ZIP_COLUMN]
    if unknown:
        raise InputError(f"{config}: zip key {unknown[0]} has no column here (allowed: {', '.join(ZIP_COLUMN)})")
    length = len(next(iter(zipped.values())))
    at = [i for i in range(length) if all(value(zipped[k][i]) == value(run.get(ZIP_COLUMN[k])) for k in zipped)]
    if len(at) != 1:
        raise InputError(f"{config}: no single zip element is run {run['run_id']}'s")
    study["zip"] = {k: [v[at[0]]] for k, v in zipped.items()}
    with open(os.path.join(tree, out + ".yaml"), "w", encoding="utf-8") as f:
        yaml.safe_dump(study, f, sort_keys=False)
    return out + ".yaml", set(zipped)


def in_tree(tree, path):
    """path as TREE holds it: results folders moved from docs/<x> to docs/data/<x>."""
    if os.path.exists(os.path.join(tree, path)) or not path.startswith("docs/"):
        return path
    moved = "docs/data/" + path.removeprefix("docs/")
    return moved if os.path.exists(os.path.join(tree, moved)) else path


def at_commit(run, name, tree):
    """(the bytes of name as run's own commit holds it, whether git holds it as a symbolic link: then the bytes are
    its target); InputError naming tree where the commit has no such file."""
    commit = run["git_commit"][:12]
    done = subprocess.run(["git", "-C", ROOT, "show", f"{commit}:{name}"], capture_output=True)
    if done.returncode:
        raise InputError(f"{name}: neither {tree} nor commit {commit[:7]} holds it")
    mode = subprocess.run(["git", "-C", ROOT, "ls-tree", commit, "--", name], capture_output=True,
                          text=True).stdout.split()
    return done.stdout, bool(mode) and mode[0] == "120000"


def trace_as_run(tree, run, out, write):
    """The trace file run replayed, as TREE names it: TREE's own where its bytes are the run's (workload_file_fnv1a64),
    else the file as the run's own commit held it, written under its own name to out.inputs/. A trace recorded again
    under the same name after the run is another workload: replaying today's file would compare two workloads. With
    write False (a dry run) nothing is written.
    InputError where neither holds the run's bytes."""
    path = in_tree(tree, run["workload_file"])
    want = run.get("workload_file_fnv1a64") or ""
    try:
        with open(os.path.join(tree, path), "rb") as f:
            if not want or fnv1a64_hex(f.read()) == want:
                return path
    except OSError:
        pass
    data, _ = at_commit(run, run["workload_file"], tree)
    if fnv1a64_hex(data) != want:
        raise InputError(f"{run['workload_file']}: neither {tree} nor commit {run['git_commit'][:7]} holds the bytes "
                         f"run {run['run_id']} replayed (fnv1a64 {want})")
    kept = os.path.join(out + ".inputs", os.path.basename(run["workload_file"]))
    if not write:
        return kept
    os.makedirs(os.path.join(tree, os.path.dirname(kept)), exist_ok=True)
    with open(os.path.join(tree, kept), "wb") as f:
        f.write(data)
    return kept


def platform_as_run(tree, run, write):
    """The platform run was simulated on, as TREE names it. A platform added after TREE's commit is written where the
    run had it, with its hostfile, from the run's own commit (untracked in TREE, so its commit is still the code
    simulated; not with write False, a dry run); its bytes must be the run's (platform_fnv1a64). InputError where TREE
    holds other bytes there."""
    path = run.get("platform") or repro.DEFAULT_PLATFORM
    want = run.get("platform_fnv1a64") or ""
    full = os.path.join(tree, path)
    if os.path.isfile(full):
        with open(full, "rb") as f:
            if want and fnv1a64_hex(f.read()) != want:
                raise InputError(f"{path}: {tree} holds other bytes than run {run['run_id']} was simulated on "
                                 f"(platform_fnv1a64 {want})")
        return path
    hosts = path.removesuffix(".xml") + ".hosts"
    files = {name: at_commit(run, name, tree) for name in (path, hosts)}  # a hostfile may be a link to another's
    if want and fnv1a64_hex(files[path][0]) != want:
        raise InputError(f"{path}: commit {run['git_commit'][:7]} holds other bytes than run {run['run_id']} was "
                         f"simulated on (platform_fnv1a64 {want})")
    if write:
        for name, (data, link) in files.items():
            os.makedirs(os.path.dirname(os.path.join(tree, name)), exist_ok=True)
            if link:
                os.symlink(data.decode(), os.path.join(tree, name))
                continue
            with open(os.path.join(tree, name), "wb") as f:
                f.write(data)
    print(f"{path}: not in {tree}; {'written' if write else 'to be written'} there with its hostfile from commit "
          f"{run['git_commit'][:7]} (untracked)", flush=True)
    return path


def value(v):
    return str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)


def planned(tree, config, sets):
    """How many points `mcmclb plan` gives for config with sets, in tree; InputError with its message if it fails."""
    done = subprocess.run(["build/mcmclb", "plan", config] + sets, cwd=tree, capture_output=True, text=True)
    if done.returncode:
        raise InputError(f"plan {config}: {done.stderr.strip()}")
    return int(re.search(r": (\d+) points", done.stdout).group(1))


def command(tree, folder, run, out, write=True):
    """(the sweep's argv in tree, the flags file's text or None) for run of folder; write False (a dry run) writes
    no input it would restore."""
    provenance = [p for p in Inputs.read(folder, "provenance.csv", need=["run_id", "command_line", "simgrid_cfg"])
                  if p["run_id"] == run["run_id"]] if os.path.isfile(
        os.path.join(ROOT, folder, "provenance.csv")) else []
    sets, flags, own = [], None, False
    if provenance:
        argv = shlex.split(provenance[0]["command_line"])
        own = argv[2].startswith(folder + "/")  # a study the folder keeps: an advise folder's round or check
        config = argv[2] if own else in_tree(tree, argv[2])
        for i, a in enumerate(argv):
            if a == "--set":
                key, _, v = argv[i + 1].partition("=")
                sets += ["--set", f"{key}=" + re.sub(r"docs/[^],\s]+", lambda m: in_tree(tree, m[0]), v)]
        with open(os.path.join(tree, "configs/platforms/smpi.cfg"), encoding="utf-8") as f:
            base = [ln.strip() for ln in f if ln.strip() and not ln.startswith("#")]
        keys = {b.split(":")[0] for b in base}
        extra = [t for t in (provenance[0]["simgrid_cfg"] or "").split() if t.startswith("--cfg=")
                 and t.split(":")[0] not in keys]
        if extra:
            flags = "\n".join(base + extra) + "\n"
    else:
        config = f"configs/{run['experiment']}.yaml"
    config, zipped = study_copy(tree, config, run, out, own)
    sets += ["--set", "reps=1", "--set", f"balancer=[{run['balancer']}]"]
    if "nprocs" not in zipped:
        sets += ["--set", f"nprocs=[{run['nprocs']}]"]
    for column in ("interval", "method", "finished"):
        if run.get(column) and column not in zipped:
            sets += ["--set", f"{column}=[{value(run[column])}]"]
    if run.get("workload_file"):
        trace = trace_as_run(tree, run, out, write)
        if trace != in_tree(tree, run["workload_file"]):
            sets += ["--set", f"workload.file=[{trace}]"]
    for column, key in NARROW:
        if key == "workload.file" and any(a.startswith("workload.file=") for a in sets):
            continue
        if planned(tree, config, sets) <= 1:
            break
        if run.get(column) in (None, ""):
            continue
        given = in_tree(tree, run[column]) if column == "workload_file" else value(run[column])
        try:
            planned(tree, config, sets + ["--set", f"{key}=[{given}]"])
        except InputError:
            continue  # a key the study varies in a zip: narrowed by the others
        sets += ["--set", f"{key}=[{given}]"]
    if planned(tree, config, sets) != 1:
        raise InputError(f"{folder}: run {run['run_id']}: no --set narrows {config} to one point")
    argv = ["build/mcmclb", "sweep", config, "--launcher", "smpi", "--sim-binary", "build-sim/mcmclb-sim",
            "--platform", platform_as_run(tree, run, write), "--points-per-launch", "1", "--out", out]
    if flags:
        argv += ["--smpi-flags", os.path.join(out + ".cfg")]
    return argv + sets, flags


def merge(sources, target):
    """Writes the rows of the CSV files sources (one header) to target, each file's rows in order."""
    header, rows = None, []
    for s in sources:
        with open(s, newline="", encoding="utf-8") as f:
            reader = csv.reader(f)
            head = next(reader)
            if header and head != header:
                raise InputError(f"{s}: its columns differ from {sources[0]}'s (allowed: one header)")
            header = head
            rows += list(reader)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)


def main():
    parser = ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tree")
    parser.add_argument("folders", nargs="*")
    parser.add_argument("--max-ranks", type=int, default=None)
    parser.add_argument("--dry-run", action="store_true")
    args = parser.parse_args()
    tree = os.path.abspath(args.tree)
    for program in ("build/mcmclb", "build-sim/mcmclb-sim"):
        if not os.access(os.path.join(tree, program), os.X_OK):
            raise InputError(f"{args.tree}: no {program} in it (allowed: a worktree with the driver and the "
                             f"simulation build built)")
    done = subprocess.run(["git", "-C", tree, "rev-parse", "--short=7", "HEAD"], capture_output=True, text=True)
    if done.returncode:
        raise InputError(f"{args.tree}: not a git worktree (allowed: a worktree of the commit to reproduce at)")
    commit = done.stdout.strip()
    copy = os.path.join(repro.RELEASE_BASE, commit)
    cited = repro.cited_folders()
    wanted = [f"docs/data/{f.removeprefix('docs/data/').strip('/')}" for f in args.folders]
    for folder, pair_commit, runs, compared in repro.release_pairs(copy, cited):
        if compared or pair_commit.startswith(commit) or any(r.get("backend") != "smpi" for r in runs) or (
                wanted and folder not in wanted):
            continue
        run = repro.release_point(runs)
        if args.max_ranks and run["nprocs"] > args.max_ranks:
            continue
        name = folder.removeprefix("docs/data/")
        out = f"results/reproduce-{commit}/{name}/{pair_commit[:7]}"
        try:
            argv, flags = command(tree, folder, run, out, write=not args.dry_run)
        except InputError as e:
            print(f"SKIP {folder} {pair_commit[:7]}: {e}", flush=True)
            continue
        print(f"{folder} {pair_commit[:7]}: {shlex.join(argv)}", flush=True)
        if args.dry_run:
            continue
        os.makedirs(os.path.dirname(os.path.join(tree, out)), exist_ok=True)
        if flags:
            with open(os.path.join(tree, out + ".cfg"), "w", encoding="utf-8") as f:
                f.write(flags)
        done = subprocess.run(["nice", "-n", "10"] + argv, cwd=tree)  # on the cores this script runs on
        if done.returncode or not os.path.isfile(os.path.join(tree, out, "runs.csv")):
            print(f"FAILED {folder} {pair_commit[:7]}: exit {done.returncode}", flush=True)
            continue
        subprocess.run([sys.executable, os.path.join(ROOT, "plots", "scrub_paths.py"), os.path.join(tree, out)],
                       check=True)
        made = sorted(os.path.join(tree, f"results/reproduce-{commit}/{name}", c) for c in
                      os.listdir(os.path.join(tree, f"results/reproduce-{commit}/{name}"))
                      if os.path.isfile(os.path.join(tree, f"results/reproduce-{commit}/{name}", c, "runs.csv")))
        for table in ("runs.csv", "provenance.csv"):
            merge([os.path.join(m, table) for m in made], os.path.join(ROOT, copy, name, table))
        for kind in (".yaml", ".cfg"):  # the narrowed study and the flags, which the provenance names
            if os.path.isfile(os.path.join(tree, out + kind)):
                shutil.copy(os.path.join(tree, out + kind), os.path.join(ROOT, copy, name, pair_commit[:7] + kind))
        Inputs.cache.clear()


if __name__ == "__main__":
    try:
        main()
    except InputError as e:
        fail(__file__, str(e))
