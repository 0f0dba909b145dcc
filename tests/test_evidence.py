# SPDX-License-Identifier: BSD-3-Clause
"""The evidence rule for every CSV committed under docs/ and tests/golden/: made from a clean commit (no git_commit
ending in -dirty), each run recorded once (no run_id twice in a runs.csv or a provenance.csv, no run's rank twice in
a ranks.csv) and nothing of the machine that made it (no absolute path in any field). Every simulated results folder
and every simulated commbench CSV under docs/ keeps its provenance beside it. Files made before the rule are listed
in LEGACY with what they lack; each is to leave the list when it is regenerated, and a listed file that already meets
the rule is an error too, so the list only shrinks."""
import csv
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from collections import Counter

ROOT = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(ROOT, "plots"))
import doc_tables  # noqa: E402
from mcmclb_csv import MACHINE_PATH as ABSOLUTE  # noqa: E402  (one definition, shared with scrub_paths.py)

# Made from a dirty work tree before the rule; regenerate from a clean commit with the command their guide gives.
LEGACY = set()


# Simulated results folders under docs/ made before their provenance.csv was kept beside runs.csv (the run's machine,
# wait policy, occupancy, host cost and simulator flags). A listed folder is accepted only because its reproductions
# stand in for the missing provenance: points of it re-simulated from a clean commit, with provenance, under
# docs/data/reproductions/<the folder below docs/>, every simulated column of every run identical to the committed run of
# the same point, and shown so in the generated table of docs/reference/reproductions.md. They must cover every commit
# the folder's runs were made at, each at a rank count whose hosts sit on two network switches (routers) of the run's
# platform or more: behind one switch a simulated message crosses no link between switches, so such a run leaves the
# network's model between them untested (on slingshot.xml's dragonfly 16 nodes share a switch; on a torus every
# node is its own router).
# A folder that is regenerated whole with its provenance (plots/scrub_paths.py makes it fit to commit) leaves the
# list; a listed folder that has one is an error, so the list only shrinks.
WITHOUT_PROVENANCE = {"docs/data/fig2-sim-slingshot"}


# Folders of WITHOUT_PROVENANCE whose reproductions do not yet cover what the rule above asks, with the reason. A
# folder listed here stands as it was, and docs/reference/reproductions.md names it (a generated block, which
# docs/explanation/paper-reproduction.md shows too), until a reproduction or a regeneration with provenance takes it
# off; the list only shrinks (a listed folder that has either is an error). It lives with the tables that print it.
NOT_YET_REPRODUCED = doc_tables.NOT_YET_REPRODUCED

REPRODUCTIONS = "docs/reference/reproductions.md"
PENDING = "\n## Not yet reproduced as the rule asks\n"  # the section of REPRODUCTIONS naming NOT_YET_REPRODUCED


def shown_reproduced():
    """The folders the reproductions tables of REPRODUCTIONS name (their rows are what doc_tables.py prints from the
    CSVs: the drift test checks that)."""
    with open(os.path.join(ROOT, REPRODUCTIONS), encoding="utf-8") as f:
        lines = f.read().split("\n")
    return {arg for _, _, _, name, args in doc_tables.blocks(lines, REPRODUCTIONS) if name == "reproductions"
            for arg in args}


# Why folder's reproductions do not stand in for its provenance, in words; [] where they do: every commit of its
# runs has a run compared at a rank count spanning two switches of its platform or more, in a reproduction whose every
# compared run is identical in every simulated column, and that run regroups. A reproduction whose runs never
# regroup (every regroupings column 0, as `none` always) is arithmetic of the work items: it gives the same numbers
# whatever the simulator's network and timing do, so it covers no commit (plots/doc_tables/reproductions.py).
reproduction_problems = doc_tables.reproduction_problems


def commbench_problems(path):
    """What a commbench CSV at path (relative to the root) lacks of its provenance, in words. Its rows name the
    commit, the MPI library or SimGrid, the host, the UTC time and, simulated, the platform and the simulator's flags.
    A simulated one keeps beside it, as <name>.time, the GNU time record plots/fig1-sim.sh writes: the command line
    that made it (mcmclb-commbench-sim under smpirun at the CSV's rank count), its exit status 0, and the host's CPU
    time and peak RSS. A real one needs nothing more here."""
    with open(os.path.join(ROOT, path), newline="") as f:
        rows = list(csv.DictReader(f))
    if not any(r.get("backend") == "smpi" for r in rows):
        return []
    nprocs = sorted({r.get("nprocs") for r in rows})
    if len(nprocs) != 1:
        return [f"simulated rows at {len(nprocs)} rank counts (allowed: one simulation per file)"]
    record = os.path.splitext(path)[0] + ".time"
    try:
        with open(os.path.join(ROOT, record), encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return [f"no {os.path.basename(record)} beside it (plots/fig1-sim.sh writes it: the command, exit status and "
                f"host cost)"]
    command = next((line for line in text.splitlines() if "Command being timed:" in line), "")
    found = []
    if not all(word in command for word in ("smpirun", f"-np {nprocs[0]} ", "mcmclb-commbench-sim")):
        found.append(f"{os.path.basename(record)}: its command is not mcmclb-commbench-sim under smpirun -np "
                     f"{nprocs[0]}: {command.strip()[:120]}")
    if "Exit status: 0" not in text:
        found.append(f"{os.path.basename(record)}: the simulation did not exit with status 0")
    if ABSOLUTE.search(text):
        found.append(f"{os.path.basename(record)}: an absolute path: {ABSOLUTE.search(text).group(2)[:80]}")
    return found


def tracked_csvs():
    out = subprocess.run(["git", "ls-files", "docs/*.csv", "tests/golden/*.csv"], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    return [line for line in out.splitlines() if line]


def problems(path):
    """What breaks the rule in the CSV at path (relative to the root), in words."""
    found = []
    with open(os.path.join(ROOT, path), newline="") as f:
        rows = list(csv.DictReader(f))
    dirty = {r["git_commit"] for r in rows if (r.get("git_commit") or "").endswith("-dirty")}
    if dirty:
        found.append(f"made from a dirty work tree ({', '.join(sorted(dirty))})")
    if (path.endswith("runs.csv") or path.endswith("provenance.csv")) and rows:  # one row per run
        twice = sorted(i for i, n in Counter(r["run_id"] for r in rows if r.get("run_id")).items() if n > 1)
        if twice:
            found.append(f"run_id recorded twice: {', '.join(twice[:3])}")
    if path.endswith("ranks.csv") and rows and "rank" in rows[0]:  # one row per run and rank
        twice = sorted(k for k, n in Counter((r["run_id"], r["rank"]) for r in rows).items() if n > 1)
        if twice:
            found.append(f"a rank of a run recorded twice: run_id {twice[0][0]}, rank {twice[0][1]}")
    if path.endswith("runs.csv") and rows:
        # The same point and repetition twice under two run ids: rows joined by hand from two sweeps.
        header = list(rows[0])
        keys = header[header.index("experiment"):header.index("rep") + 1] if "rep" in header else []
        later = ("backend", "platform", "finished", "chains_per_group", "wait", "model_compute", "model_reduce",
                 "workload_file", "workload_map", "workload_scaling", "workload_extrapolate", "workload_file_fnv1a64",
                 "workload_speedups", "placement")
        keys += [k for k in later if k in header]
        points = [tuple(r[k] for k in keys) for r in rows] if keys else []
        if len(set(points)) != len(points):
            found.append("a point and repetition recorded twice")
    for r in rows:
        paths = [v for v in r.values() if isinstance(v, str) and ABSOLUTE.search(v)]
        if paths:
            found.append(f"an absolute path: {paths[0][:80]}")
            break
    return found


class Evidence(unittest.TestCase):
    def test_every_committed_csv_is_clean_once_and_free_of_this_machine(self):
        files = tracked_csvs()
        self.assertTrue(files, "no CSV found under docs/ or tests/golden/")
        for path in files:
            with self.subTest(path=path):
                found = problems(path)
                if path in LEGACY:
                    self.assertTrue(found, f"{path} meets the rule now: remove it from LEGACY")
                else:
                    self.assertEqual(found, [], path)
        self.assertEqual(sorted(LEGACY - set(files)), [], "LEGACY names files that are not committed")

    def test_every_simulated_commbench_csv_keeps_its_provenance(self):
        files = [p for p in tracked_csvs() if p.startswith("docs/") and os.path.basename(p).startswith("commbench")]
        self.assertTrue(files, "no commbench CSV found under docs/")
        for path in files:
            with self.subTest(path=path):
                self.assertEqual(commbench_problems(path), [], path)

    def test_every_results_folder_keeps_its_provenance(self):
        folders = sorted({os.path.dirname(p) for p in tracked_csvs() if p.startswith("docs/") and
                          p.endswith("/runs.csv")})
        shown = shown_reproduced()
        with open(os.path.join(ROOT, REPRODUCTIONS), encoding="utf-8") as f:
            text = f.read()
        pending = text.split(PENDING, 1)[1].split("\n## ", 1)[0] if PENDING in text else ""
        for folder in folders:
            with self.subTest(folder=folder):
                has = os.path.isfile(os.path.join(ROOT, folder, "provenance.csv"))
                if folder in NOT_YET_REPRODUCED:
                    self.assertFalse(has, f"{folder} has its provenance.csv now: remove it from WITHOUT_PROVENANCE "
                                          f"and NOT_YET_REPRODUCED")
                    self.assertFalse(folder in shown and reproduction_problems(folder) == [],
                                     f"{folder} is reproduced as the rule asks now: remove it from NOT_YET_REPRODUCED")
                    self.assertIn(f"`{folder.removeprefix('docs/data/')}`", pending, f"{folder}: not yet reproduced, and "
                                  f"{REPRODUCTIONS} does not say so")
                elif folder in WITHOUT_PROVENANCE:
                    self.assertFalse(has, f"{folder} has its provenance.csv now: remove it from WITHOUT_PROVENANCE")
                    self.assertIn(folder, shown, f"{folder}: without provenance.csv and not in the reproductions "
                                                 f"table of {REPRODUCTIONS}")
                    self.assertEqual(reproduction_problems(folder), [], f"{folder}: without provenance.csv and its "
                                     f"reproductions do not stand in for it ({REPRODUCTIONS})")
                else:
                    self.assertTrue(has, f"{folder}: runs.csv without provenance.csv (regenerate it, then "
                                         f"plots/scrub_paths.py; docs/guide/sweeps.md)")
        self.assertEqual(sorted(WITHOUT_PROVENANCE - set(folders)), [], "WITHOUT_PROVENANCE names folders without "
                                                                        "a committed runs.csv")
        self.assertLessEqual(set(NOT_YET_REPRODUCED), WITHOUT_PROVENANCE)

    def test_the_check_catches_each_kind_of_problem(self):
        with tempfile.TemporaryDirectory(dir=ROOT) as d:
            rel = os.path.relpath(d, ROOT)
            cases = {
                "dirty/runs.csv": "run_id,git_commit\na,0123456789ab-dirty\n",
                "twice/runs.csv": "run_id,git_commit\na,0123456789ab\na,0123456789ab\n",
                "twice/provenance.csv": "run_id,command_line\na,mcmclb run x.yaml\na,mcmclb run x.yaml\n",
                "twice/ranks.csv": "run_id,rank\na,0\na,1\nb,0\na,1\n",
                "joined/runs.csv": "run_id,experiment,nprocs,rep,git_commit\na,x,4,0,0123456789ab\nb,x,4,0,0123456789ab\n",
                "path/runs.csv": "run_id,command_line\na,/work/main/build/mcmclb run x.yaml\n",
                "clean/runs.csv": "run_id,git_commit,platform\na,0123456789ab,configs/platforms/bgp.xml\n",
            }
            for name, text in cases.items():
                os.makedirs(os.path.join(d, os.path.dirname(name)), exist_ok=True)
                with open(os.path.join(d, name), "w") as f:
                    f.write(text)
            self.assertIn("dirty", problems(os.path.join(rel, "dirty/runs.csv"))[0])
            self.assertIn("twice", problems(os.path.join(rel, "twice/runs.csv"))[0])
            self.assertIn("run_id recorded twice: a", problems(os.path.join(rel, "twice/provenance.csv"))[0])
            self.assertIn("run_id a, rank 1", problems(os.path.join(rel, "twice/ranks.csv"))[0])
            self.assertIn("recorded twice", problems(os.path.join(rel, "joined/runs.csv"))[0])
            self.assertIn("absolute path", problems(os.path.join(rel, "path/runs.csv"))[0])
            self.assertEqual(problems(os.path.join(rel, "clean/runs.csv")), [])


def beats_the_bound(path):
    """The valid runs of a runs.csv that end before the time the docs call a bound: ideal_s for emulated work
    (work_mode sleep or spin, any workload but a trace), the total work over the ranks, which no balancer can beat.
    A replayed trace's ideal and compute mode's are references, not bounds (docs/reference/columns.md), and are
    not held to it. A part in 10^9 allows for the last digit written."""
    out = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if r.get("valid") != "true" or r.get("work_mode") not in ("sleep", "spin") or r.get("workload") == "trace":
                continue
            if r.get("time_s") and r.get("ideal_s") and float(r["time_s"]) < float(r["ideal_s"]) * (1 - 1e-9):
                out.append(f"{os.path.relpath(path, ROOT)}: run {r['run_id']} ({r['balancer']}) took "
                           f"{r['time_s']} s, below its ideal_s {r['ideal_s']} s")
    return out


MEASUREMENTS = "docs/reference/measurements.md"  # its provenance-gaps block lists real-MPI folders without a build


def real_runs_without_build():
    """{folder: [run ids]} of each tracked provenance.csv under docs/ whose real-MPI runs (launcher other than
    smpirun) lack build_type: the column absent, as in folders made before it, or empty."""
    out = subprocess.run(["git", "ls-files", "docs/*provenance.csv"], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    found = {}
    for path in out.split():
        if not doc_tables.common.of_runs(path):  # calibrate's own, a calibration check's: no run in it
            continue
        with open(os.path.join(ROOT, path), newline="") as f:
            ids = [r["run_id"] for r in csv.DictReader(f) if not (r.get("launcher") or "").startswith("smpirun")
                   and not r.get("build_type")]
        if ids:
            found[os.path.dirname(path)] = ids
    return found


class BuildOnRecord(unittest.TestCase):
    """A measured time depends on the build, which provenance.csv records only since its build_type, compiler and
    cxx_flags columns. Every real-MPI folder whose provenance lacks it is named on MEASUREMENTS, in the
    provenance-gaps block. That block is generated from the same provenance.csv files (plots/doc_tables/commbench.py)
    and held to them by plots/doc_tables.py --check (tests/test_doc_tables.py): so here the block must scan all of
    docs/, and its generator is tested on folders made for the test."""

    def test_every_real_folder_without_its_build_is_listed(self):
        with open(os.path.join(ROOT, MEASUREMENTS), encoding="utf-8") as f:
            lines = f.read().split("\n")
        gaps = [(begin, end, args) for begin, end, _, name, args in doc_tables.blocks(lines, MEASUREMENTS)
                if name == "provenance-gaps"]
        self.assertEqual([args for _, _, args in gaps], [["docs"]], f"{MEASUREMENTS}: one provenance-gaps block, "
                                                                     f"over all of docs/")
        block = "\n".join(lines[gaps[0][0]:gaps[0][1]])
        for folder in real_runs_without_build():
            with self.subTest(folder=folder):
                self.assertIn(f"(../{folder.removeprefix('docs/')}/provenance.csv)", block,
                              f"{folder}: real runs without build_type, not listed on {MEASUREMENTS}")

    def test_the_block_lists_real_folders_without_a_build_and_no_other(self):
        self.addCleanup(doc_tables.Inputs.cache.clear)
        folders = {  # name: (provenance.csv, runs.csv)
            "old": ("run_id,launcher\na,mpiexec\nb,mpiexec\n", "run_id,git_commit,backend\na,0123456,mpi\n"
                                                                "b,89abcde,mpi\n"),
            "new": ("run_id,launcher,build_type\na,mpiexec,Release\n", "run_id,git_commit,backend\na,0123456,mpi\n"),
            "half": ("run_id,launcher,build_type\na,srun,Release\nb,srun,\n",
                     "run_id,git_commit,backend\na,0123456,mpi\nb,fedcba9,mpi\n"),
            "sim": ("run_id,launcher\na,smpirun\n", "run_id,git_commit,backend\na,0123456,smpi\n"),
            "sim/unnamed": ("run_id,launcher\na,\n", "run_id,git_commit,backend\na,0123456,smpi\n"),
        }
        with tempfile.TemporaryDirectory(dir=ROOT) as d:
            for name, (provenance, runs) in folders.items():
                os.makedirs(os.path.join(d, name), exist_ok=True)
                for file, text in (("provenance.csv", provenance), ("runs.csv", runs)):
                    with open(os.path.join(d, name, file), "w") as f:
                        f.write(text)
            rel = os.path.relpath(d, ROOT)
            text = doc_tables.generate("provenance-gaps", [rel])
            rows = [[c.strip() for c in line.strip("|").split("|")] for line in text.split("\n") if
                    line.startswith("| [")]
            self.assertEqual([row[0].split("]")[0].lstrip("[") for row in rows], [f"{rel}/half", f"{rel}/old"])
            self.assertEqual([row[1:] for row in rows], [["1 of 2", "srun", "fedcba9"],
                                                         ["2 of 2", "mpiexec", "0123456, 89abcde"]])
            self.assertIn("In 2 real-MPI results folders, provenance.csv records no build for 3 runs", text)
            self.assertIn("Every real-MPI results folder here records the build",
                          doc_tables.generate("provenance-gaps", [os.path.join(rel, "new")]))


class Bound(unittest.TestCase):
    def test_no_shipped_run_beats_the_time_called_a_bound(self):
        """The ideal the docs call unbeatable is one: no committed run of emulated work ends before it."""
        files = [os.path.join(d, "runs.csv") for top in ("docs", os.path.join("tests", "golden"))
                 for d, _, names in os.walk(os.path.join(ROOT, top)) if "runs.csv" in names]
        self.assertGreater(len(files), 10)
        problems = [p for f in files for p in beats_the_bound(f)]
        self.assertEqual(problems, [])

    def test_the_bound_check_catches_a_run_below_its_ideal(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "runs.csv")
            with open(path, "w") as f:
                f.write("run_id,workload,work_mode,balancer,valid,time_s,ideal_s\n"
                        "a,cyclic,sleep,async,true,0.99,1.0\nb,trace,sleep,async,true,0.5,1.0\n"
                        "c,cyclic,compute,async,true,0.5,1.0\nd,cyclic,spin,none,true,1.0,1.0\n")
            self.assertEqual(len(beats_the_bound(path)), 1)
            self.assertIn("run a (async)", beats_the_bound(path)[0])


def async_header(extra=""):
    """The header of a simulated runs.csv of async runs made for a test, with extra columns at its end."""
    return ("run_id,experiment,nprocs,G,T_ms,workload,work_mode,jitter_pct,work_seed,balancer,interval,method,rep,"
            "time_s,ideal_s,baseline_s,regroups_avg,regroups_std,regroups_min,regroups_max,valid,violations,"
            f"git_commit,backend,platform,finished{extra}\n")


def async_run(run, time_s, regroups_max, commit, nprocs=8192, seed=1, extra=""):
    """One row under async_header(): an async run of the paper's workload on bgp.xml."""
    return (f"{run},x,{nprocs},4,100,cyclic,sleep,0,{seed},async,,intercomm,0,{time_s},3.5,7,5.375,2.1,2,"
            f"{regroups_max},true,,{commit},smpi,configs/platforms/bgp.xml,retire{extra}\n")


class Reproduction(unittest.TestCase):
    def test_a_reproduction_must_be_identical_and_of_committed_points(self):
        """doc_tables.compare_runs: a run equal in every simulated column passes, one digit of time_s or a
        regroup count off is named, and a reproduced point the committed folder lacks is an error."""
        header = async_header()

        def row(run, nprocs, time_s, regroups_max, commit):
            return async_run(run, time_s, regroups_max, commit, nprocs=nprocs)
        with tempfile.TemporaryDirectory(dir=ROOT) as d:
            rel = os.path.relpath(d, ROOT)
            files = {
                "old/runs.csv": header + row("a", 32, "3.52699558", 8, "0123456789ab") +
                row("b", 64, "3.5270", 8, "0123456789ab"),
                "same/runs.csv": header + row("c", 32, "3.52699558", 8, "ba9876543210"),
                "time/runs.csv": header + row("d", 32, "3.52699559", 8, "ba9876543210"),
                "count/runs.csv": header + row("e", 32, "3.52699558", 9, "ba9876543210"),
                "other/runs.csv": header + row("f", 128, "3.52699558", 8, "ba9876543210"),
            }
            for name, text in files.items():
                os.makedirs(os.path.join(d, os.path.dirname(name)), exist_ok=True)
                with open(os.path.join(d, name), "w") as f:
                    f.write(text)
            doc_tables.Inputs.cache.clear()

            def differ(copy):
                return [c for _, _, c in doc_tables.compare_runs(f"{rel}/old", f"{rel}/{copy}")]
            self.assertEqual(differ("same"), [[]])
            self.assertEqual(differ("time"), [["time_s"]])
            self.assertEqual(differ("count"), [["regroups_max"]])
            with self.assertRaisesRegex(doc_tables.InputError, "no point of"):
                differ("other")
        doc_tables.Inputs.cache.clear()


    def test_the_rerun_table_compares_to_4_decimals(self):
        """doc_tables rerun-4dp: one row per committed folder, its rerun found under RERUN_PAPER_SCALE and matched by
        point; a run 4.41 us off prints the same to 4 decimals, one 18.9 ms off with another regroup count does not;
        the sentence counts both and names the largest difference."""
        header = async_header(",utc_start")

        def row(run, seed, time_s, regroups_max, commit):
            return async_run(run, time_s, regroups_max, commit, seed=seed, extra=f",2026-11-27T00:00:0{seed}Z")
        files = {"near": (row("a", 1, "3.52699558", 8, "aaaaaaaaaaaa") + row("b", 2, "3.53", 8, "aaaaaaaaaaaa"),
                          row("r", 1, "3.52699999", 8, "cccccccccccc")),
                 "far": (row("c", 1, "10.5200113", 8, "bbbbbbbbbbbb"), row("s", 1, "10.5388812", 9, "cccccccccccc"))}
        base = os.path.join(ROOT, doc_tables.reproductions.RERUN_PAPER_SCALE)
        with tempfile.TemporaryDirectory(dir=os.path.join(ROOT, "docs", "data")) as d:
            rel = os.path.relpath(d, ROOT)
            reruns = os.path.join(base, os.path.basename(d))
            try:
                for name, (committed, rerun) in files.items():
                    for top, text in ((d, committed), (reruns, rerun)):
                        os.makedirs(os.path.join(top, name))
                        with open(os.path.join(top, name, "runs.csv"), "w") as f:
                            f.write(header + text)
                doc_tables.Inputs.cache.clear()
                text = doc_tables.generate("rerun-4dp", [f"{rel}/near", f"{rel}/far"])
            finally:
                shutil.rmtree(reruns, ignore_errors=True)
        doc_tables.Inputs.cache.clear()
        rows = [[c.strip() for c in line.strip("|").split("|")] for line in text.split("\n") if line.startswith("| [")]
        self.assertEqual([r[1:4] + r[5:] for r in rows],
                         [["async intercomm (work_seed 1), P = 8192", "aaaaaaa", "3.5270", "3.5270", "+4,410", "yes",
                           "none"],
                          ["async intercomm, P = 8192", "bbbbbbb", "10.5200", "10.5389", "+18,869,900", "**no**",
                           "regroups_max"]])
        sentence = " ".join(text.split("\n\n")[-1].split())
        self.assertIn("1 of 2 folders give the same simulated time_s to 4 decimals at ccccccc; none of them", sentence)
        self.assertIn("The largest difference is 18,869,900 ns (18.9 ms)", sentence)


class StatedBounds(unittest.TestCase):
    """The reproductions' bounds, stated before a rerun by one rule (half a unit in the last place the cited pages
    print; identical where none prints the column): the committed file covers every cited simulated folder, each bound
    is what its printed precision gives, and a rerun past a bound, or made before the bounds, fails."""

    def test_the_committed_bounds_cover_every_cited_folder_by_their_rule(self):
        from doc_tables import bounds
        stated, _ = bounds.read_bounds()
        doc_tables.Inputs.cache.clear()
        for folder in bounds.simulated_folders(doc_tables.reproductions.cited_folders()):
            for column in bounds.NUMERIC:
                with self.subTest(folder=folder, column=column):
                    self.assertIn((folder, column), stated, "state the bounds again before any rerun: "
                                                            "plots/doc_tables.py --bounds")
        for path in bounds.simulated_commbench(bounds.named_files()):
            with self.subTest(commbench=path):
                self.assertIn((path, "time_us"), stated, "state the bounds again before any rerun")
        # Each column's unit per printed unit: seconds for the runs' times, µs for commbench's time_us.
        scales = {column: dict(bounds.TIME_UNITS) for column in bounds.NUMERIC}
        scales["time_us"] = {"µs": 1.0}
        with open(os.path.join(ROOT, bounds.BOUNDS_FILE), newline="", encoding="utf-8") as f:
            for r in csv.DictReader(f):
                with self.subTest(folder=r["folder"], column=r["column"]):
                    if r["printed"] == "not printed":
                        self.assertEqual(float(r["bound"]), 0.0)
                    else:
                        decimals, _, unit = r["printed"].partition(" decimals")
                        scale = scales[r["column"]][unit.removeprefix(" of ")] if unit else 1.0
                        self.assertEqual(r["bound"], f"{0.5 * 10 ** -int(decimals) / scale:.3g}")

    def test_a_rerun_past_a_bound_or_before_the_bounds_fails(self):
        from doc_tables import bounds
        header = async_header(",utc_start")

        def row(run, time_s, regroups_max, utc):
            return async_run(run, time_s, regroups_max, "ba9876543210", extra=f",{utc}")
        with tempfile.TemporaryDirectory(dir=ROOT) as d:
            rel = os.path.relpath(d, ROOT)
            files = {"old/runs.csv": header + async_run("a", "3.52699558", 8, "0123456789ab",
                                                        extra=",2026-11-01T00:00:00Z"),
                     "near/runs.csv": header + row("b", "3.52700558", 8, "2026-12-02T00:00:00Z"),
                     "far/runs.csv": header + row("c", "3.52719558", 8, "2026-12-02T00:00:00Z"),
                     "early/runs.csv": header + row("d", "3.52699558", 8, "2026-11-30T00:00:00Z"),
                     "count/runs.csv": header + row("e", "3.52699558", 9, "2026-12-02T00:00:00Z")}
            for name, text in files.items():
                os.makedirs(os.path.join(d, os.path.dirname(name)), exist_ok=True)
                with open(os.path.join(d, name), "w") as f:
                    f.write(text)
            doc_tables.Inputs.cache.clear()
            stated = {(f"{rel}/old", "time_s"): 5e-5, (f"{rel}/old", "regroups_avg"): 0.005}

            def problems(copy):
                return bounds.over_bounds(f"{rel}/old", f"{rel}/{copy}", stated, "2026-12-01T00:00:00Z")
            self.assertEqual(problems("near"), [])
            self.assertRegex(" ".join(problems("far")), r"time_s differs by 0\.0002, over its bound 5e-05")
            self.assertRegex(" ".join(problems("early")), r"not after the bounds")
            self.assertRegex(" ".join(problems("count")), r"regroups_max differs by 1, over its bound 0")
        doc_tables.Inputs.cache.clear()

    def test_a_fig1_rerun_past_its_bound_or_before_the_bounds_fails(self):
        """Fig. 1's commbench CSVs are held like folders: each row to the committed row of the same method, size and
        repetition; a seeded difference over the bound, a row made before the bounds, or a row lost fails."""
        from doc_tables import bounds
        head = "method,op,nprocs,group_size,rep,iterations,time_us,backend,utc_start,platform_fnv1a64\n"

        def rows(times, utc, platform="0971cdc42d6a34b2"):
            return head + "".join(f"split,create,8192,{g},0,1,{t},smpi,{utc},{platform}\n" for g, t in times)
        with tempfile.TemporaryDirectory(dir=ROOT) as d:
            rel = os.path.relpath(d, ROOT)
            later = "2026-12-02T00:00:00Z"
            files = {"old.csv": rows([(2, "17.50368"), (4, "30.1")], "2026-11-01T00:00:00Z"),
                     "near.csv": rows([(2, "17.504"), (4, "30.1")], later),
                     "far.csv": rows([(2, "17.52"), (4, "30.1")], later),
                     "early.csv": rows([(2, "17.50368"), (4, "30.1")], "2026-11-30T00:00:00Z"),
                     "lost.csv": rows([(2, "17.50368")], later),
                     "other.csv": rows([(2, "17.50368"), (4, "30.1")], later, "1111111111111111")}
            for name, text in files.items():
                with open(os.path.join(d, name), "w") as f:
                    f.write(text)
            doc_tables.Inputs.cache.clear()
            stated = {(f"{rel}/old.csv", "time_us"): 0.005}

            def problems(copy):
                return bounds.commbench_over_bounds(f"{rel}/old.csv", f"{rel}/{copy}.csv", stated,
                                                    "2026-12-01T00:00:00Z")
            self.assertEqual(problems("near")[0], [])
            self.assertRegex(" ".join(problems("far")[0]), r"split create at group size 2, P = 8192: time_us differs "
                                                           r"by 0\.0163, over its bound 0\.005")
            self.assertRegex(" ".join(problems("early")[0]), r"not after the bounds")
            self.assertRegex(" ".join(problems("lost")[0]), r"1 of .*old\.csv's rows have no rerun")
            # Another platform file is said beside, a cause to look at; the times judge.
            other = problems("other")
            self.assertEqual(other[0], [])
            self.assertEqual(other[3], ["platform 0971cdc42d6a34b2 cited, 1111111111111111 rerun"])
        doc_tables.Inputs.cache.clear()


class Coverage(unittest.TestCase):
    def check_reproductions(self, header, committed, cases):
        """A committed folder (committed: its runs.csv) and its reproduction in docs/data/reproductions/, both made for
        the test under docs/; for each case (the reproduction's rows, the texts reproduction_problems must report,
        none for a covered commit), what it reports."""
        with tempfile.TemporaryDirectory(dir=os.path.join(ROOT, "docs", "data")) as d, \
                tempfile.TemporaryDirectory(dir=os.path.join(ROOT, "docs", "data", "reproductions")) as r:
            folder = "docs/data/" + os.path.basename(r)
            os.rename(d, os.path.join(ROOT, folder))
            try:
                with open(os.path.join(ROOT, folder, "runs.csv"), "w") as f:
                    f.write(committed)
                for reproduced, expected in cases:
                    with self.subTest(expected=expected):
                        with open(os.path.join(r, "runs.csv"), "w") as f:
                            f.write(header + reproduced)
                        doc_tables.Inputs.cache.clear()
                        found = " | ".join(reproduction_problems(folder))
                        for text in expected:
                            self.assertIn(text, found)
                        if not expected:
                            self.assertEqual(found, "")
            finally:
                os.rename(os.path.join(ROOT, folder), d)
        doc_tables.Inputs.cache.clear()

    def test_reproductions_must_cover_every_commit_beyond_one_switch(self):
        """reproduction_problems: a folder of two commits is accepted only when identical reproductions hold a run of
        each commit at a rank count spanning two switches of bgp.xml or more (a torus: every node of 4 ranks is its
        own router, so 8 ranks span two)."""
        header = ("run_id,experiment,nprocs,G,T_ms,workload,work_mode,jitter_pct,work_seed,balancer,interval,method,"
                  "rep,time_s,ideal_s,baseline_s,regroups_avg,regroups_std,regroups_min,regroups_max,valid,"
                  "violations,git_commit,backend,platform,finished\n")

        def row(run, nprocs, time_s, commit, rep=0):
            return (f"{run},x,{nprocs},4,100,cyclic,sleep,0,1,async,,intercomm,{rep},{time_s},3.5,7,5.375,2.1,2,8,"
                    f"true,,{commit},smpi,configs/platforms/bgp.xml,retire\n")
        committed = header + row("a", 4, "3.51", "aaaaaaaaaaaa") + row("b", 8, "3.52", "aaaaaaaaaaaa") + \
            row("c", 8, "3.53", "bbbbbbbbbbbb", rep=1)
        cases = [
            (row("r", 4, "3.51", "cccccccccccc"), ["aaaaaaa", "bbbbbbb"]),   # one node, one switch: covers nothing
            (row("r", 8, "3.52", "cccccccccccc"), ["bbbbbbb"]),              # commit a at two switches
            (row("r", 8, "3.52", "cccccccccccc") + row("s", 8, "3.54", "cccccccccccc", rep=1),
             ["aaaaaaa", "bbbbbbb", "time_s differ"]),                      # a differing run voids the reproduction
            (row("r", 8, "3.52", "cccccccccccc") + row("s", 8, "3.53", "cccccccccccc", rep=1), []),
        ]
        self.check_reproductions(header, committed, cases)

    def test_a_run_behind_one_switch_of_the_dragonfly_covers_nothing(self):
        """reproduction_problems on slingshot.xml (128 ranks per node, 16 nodes per switch): a reproduction at 256
        ranks spans two nodes but one switch, so it covers nothing; one at 4096 ranks (32 nodes) spans two switches
        and covers its commit."""
        header = ("run_id,experiment,nprocs,G,T_ms,workload,work_mode,jitter_pct,work_seed,balancer,interval,method,"
                  "rep,time_s,ideal_s,baseline_s,regroups_avg,regroups_std,regroups_min,regroups_max,valid,"
                  "violations,git_commit,backend,platform,finished\n")

        def row(run, nprocs, commit):
            return (f"{run},x,{nprocs},4,100,cyclic,sleep,0,1,async,,intercomm,0,3.52,3.5,7,5.375,2.1,2,8,true,,"
                    f"{commit},smpi,configs/platforms/slingshot.xml,retire\n")
        committed = header + row("a", 256, "aaaaaaaaaaaa") + row("b", 4096, "aaaaaaaaaaaa")
        cases = [
            (row("r", 256, "cccccccccccc"), ["commit aaaaaaa: no identical reproduction at a rank count spanning two "
                                             "network switches"]),
            (row("r", 4096, "cccccccccccc"), []),
        ]
        self.check_reproductions(header, committed, cases)

    def test_switches_are_read_from_the_platform(self):
        """switches_spanned: the routers a run's hosts sit on, from the platform's cluster: a DRAGONFLY's last
        topo_parameter is its nodes per router, a TORUS gives every node its own; a platform of another topology or
        none readable is refused in one line."""
        spanned = doc_tables.switches_spanned
        sling = "configs/platforms/slingshot.xml"
        self.assertEqual([spanned(sling, p) for p in (128, 256, 2048, 2049, 4096, 32768)], [1, 1, 1, 2, 2, 16])
        self.assertEqual([doc_tables.nodes_spanned(sling, p) for p in (256, 4096)], [2, 32])
        self.assertEqual([spanned("configs/platforms/bgp.xml", p) for p in (4, 8, 8192)], [1, 2, 2048])
        self.assertEqual(spanned(None, 8), 2)  # a run that names no platform ran on bgp.xml
        self.assertEqual(spanned("configs/platforms/bgp-16racks.xml", 16384), 4096)
        # A FAT_TREE's leaf switch holds its first level's count of nodes: 16 nodes of 32 ranks on fattree.xml.
        self.assertEqual([spanned("configs/platforms/fattree.xml", p) for p in (512, 513, 1024)], [1, 2, 2])
        with tempfile.TemporaryDirectory(dir=ROOT) as d:
            flat = os.path.join(os.path.relpath(d, ROOT), "flat.xml")
            with open(os.path.join(ROOT, flat), "w") as f:
                f.write('<platform version="4.1"><cluster id="c" prefix="n" radical="0-3" suffix="" speed="1f" '
                        'bw="1Bps" lat="0s"/></platform>\n')
            with open(os.path.join(ROOT, flat.replace(".xml", ".hosts")), "w") as f:
                f.write("n0\nn1\n")
            for platform, text in ((flat, "topology FLAT"),
                                   ("configs/platforms/absent.xml", "not readable as a platform")):
                with self.subTest(platform=platform):
                    with self.assertRaisesRegex(doc_tables.InputError, text) as caught:
                        spanned(platform, 2)
                    self.assertEqual(len(str(caught.exception).splitlines()), 1)

    def test_a_reproduction_whose_runs_never_regroup_covers_nothing(self):
        """reproduction_problems: a commit whose only identical reproduction on two switches or more is runs that never
        regroup (every regroupings column 0, as `none`) is not covered: such a run is arithmetic and gives the same
        numbers whatever the simulator does. One run that regroups, beside it, covers the commit."""
        header = ("run_id,experiment,nprocs,G,T_ms,workload,work_mode,jitter_pct,work_seed,balancer,interval,method,"
                  "rep,time_s,ideal_s,baseline_s,regroups_avg,regroups_std,regroups_min,regroups_max,valid,"
                  "violations,git_commit,backend,platform,finished\n")

        def none(run, commit):
            return (f"{run},x,8,4,100,cyclic,sleep,0,1,none,,,0,7,3.5,7,0,0,0,0,true,,{commit},smpi,"
                    f"configs/platforms/bgp.xml,\n")

        def regrouping(run, commit):
            return (f"{run},x,8,4,100,cyclic,sleep,0,1,async,,intercomm,0,3.52,3.5,7,5.375,2.1,2,8,true,,{commit},"
                    f"smpi,configs/platforms/bgp.xml,retire\n")
        committed = header + none("a", "aaaaaaaaaaaa") + regrouping("b", "aaaaaaaaaaaa")
        cases = [
            (none("r", "cccccccccccc"), ["commit aaaaaaa: its reproduced runs never regroup"]),
            (none("r", "cccccccccccc") + regrouping("s", "cccccccccccc"), []),
        ]
        self.check_reproductions(header, committed, cases)

    def test_fig2_on_the_dragonfly_is_covered_beyond_one_switch(self):
        """The case that made the switch rule: fig2-sim-slingshot's reproduction today at 256 ranks spans two nodes of
        the dragonfly but one switch, so it covers nothing; the folder stands on its reproduction at its own commit,
        8b0445f, at 4096 ranks (two switches), which regroups."""
        doc_tables.Inputs.cache.clear()
        folder = "docs/data/fig2-sim-slingshot"
        self.assertEqual(reproduction_problems(folder), [])
        found, _ = doc_tables.coverage(folder)
        self.assertEqual(sorted(c[:7] for c in found), ["8b0445f"])
        covering = found[next(iter(found))][1]
        self.assertTrue(covering)
        for run in covering:
            self.assertGreaterEqual(doc_tables.switches_spanned(run["platform"], run["nprocs"]), 2)
        self.assertEqual(doc_tables.switches_spanned(covering[0]["platform"], 256), 1)
        self.assertNotIn(folder, NOT_YET_REPRODUCED)

    def test_a_simulated_commbench_csv_needs_its_time_record(self):
        """commbench_problems: a simulated commbench CSV without the .time record beside it, or with one of another
        command, a failed run or a machine path, is named; a complete one and a real-MPI one pass."""
        header = "method,op,nprocs,group_size,rep,time_us,git_commit,backend,platform\n"
        good = ("\tCommand being timed: \"smpirun -np 8 -platform configs/platforms/bgp.xml -hostfile "
                "configs/platforms/bgp.hosts build-sim/mcmclb-commbench-sim --filter /create/ --out x.csv\"\n"
                "\tExit status: 0\n")
        with tempfile.TemporaryDirectory(dir=ROOT) as d:
            rel = os.path.relpath(d, ROOT)

            def check(rows, record):
                with open(os.path.join(d, "commbench.csv"), "w") as f:
                    f.write(header + rows)
                path = os.path.join(d, "commbench.time")
                if os.path.exists(path):
                    os.remove(path)
                if record is not None:
                    with open(path, "w") as f:
                        f.write(record)
                return " | ".join(commbench_problems(os.path.join(rel, "commbench.csv")))
            sim = "create,create,8,2,0,5.1,0123456789ab,smpi,configs/platforms/bgp.xml\n"
            self.assertEqual(check("create,create,8,2,0,5.1,0123456789ab,mpi,\n", None), "")
            self.assertIn("no commbench.time", check(sim, None))
            self.assertEqual(check(sim, good), "")
            self.assertIn("not mcmclb-commbench-sim", check(sim, good.replace("-np 8 ", "-np 16 ")))
            self.assertIn("exit with status 0", check(sim, good.replace("status: 0", "status: 137")))
            self.assertIn("absolute path", check(sim, good.replace("build-sim/", "/work/x/build-sim/")))
            self.assertIn("2 rank counts", check(sim + sim.replace(",8,", ",16,"), good))


class Scrub(unittest.TestCase):
    def test_scrub_paths_leaves_no_machine_path(self):
        """plots/scrub_paths.py: paths under the run's working folder become relative, working_dir '.', other
        absolute paths their last part; values that are not paths unchanged; then the evidence rule holds."""
        with tempfile.TemporaryDirectory(dir=ROOT) as d:
            with open(os.path.join(d, "provenance.csv"), "w") as f:
                f.write("run_id,command_line,working_dir,launcher\n"
                        "a,\"/home/u/m/build/mcmclb run /tmp/s/study.yaml --out res --set 'x=[1, 2]'\",/home/u/m,"
                        "/usr/bin/mpiexec.mpich -n 2\n")
            with open(os.path.join(d, "runs.csv"), "w") as f:
                f.write("run_id,git_commit,platform,time_s\na,0123456789ab,configs/platforms/bgp.xml,1.5\n")
            script = os.path.join(ROOT, "plots", "scrub_paths.py")
            r = subprocess.run([sys.executable, script, d], capture_output=True, text=True, timeout=60)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(os.path.join(d, "provenance.csv"), newline="") as f:
                row = next(csv.DictReader(f))
            self.assertEqual(row["command_line"], "build/mcmclb run study.yaml --out res --set 'x=[1, 2]'")
            self.assertEqual(row["working_dir"], ".")
            self.assertEqual(row["launcher"], "mpiexec.mpich -n 2")
            rel = os.path.relpath(d, ROOT)
            for name in ("provenance.csv", "runs.csv"):
                self.assertEqual(problems(os.path.join(rel, name)), [], name)
            self.assertIn("runs.csv", os.listdir(d))
            r = subprocess.run([sys.executable, script, os.path.join(d, "absent")], capture_output=True, text=True,
                               timeout=60)
            self.assertEqual(r.returncode, 2)
            self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)


if __name__ == "__main__":
    unittest.main()
