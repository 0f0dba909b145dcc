# SPDX-License-Identifier: BSD-3-Clause
"""The evidence rule for every CSV committed under docs/ and tests/golden/: made from a clean commit (no git_commit
ending in -dirty), each run recorded once (no run_id twice in a runs.csv) and nothing of the machine that made it
(no absolute path in any field). Files made before the rule are listed in LEGACY with what they lack; each is to
leave the list when it is regenerated, and a listed file that already meets the rule is an error too, so the list
only shrinks."""
import csv
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(ROOT, "plots"))
import doc_tables  # noqa: E402
from mcmclb_csv import MACHINE_PATH as ABSOLUTE  # noqa: E402  (one definition, shared with scrub_paths.py)

# Made from a dirty work tree before the rule; regenerate from a clean commit with the command their guide gives.
LEGACY = set()


# Simulated results folders under docs/ made before their provenance.csv was kept beside runs.csv (the run's machine,
# wait policy, occupancy, host cost and simulator flags). A listed folder is accepted only because its reproduction
# stands in for the missing provenance: its smallest point re-simulated from a clean commit, with provenance, under
# docs/reproductions/<the folder below docs/>, every simulated column of every run identical to the committed run of
# the same point, and shown so in the generated table of docs/notes/reproductions.md. A folder that is regenerated
# whole with its provenance (plots/scrub_paths.py makes it fit to commit) leaves the list; a listed folder that has
# one is an error, so the list only shrinks.
WITHOUT_PROVENANCE = {
    "docs/fig2-sim-bgp", "docs/fig2-sim-slingshot", "docs/merge-pays/sim-all-atom",
    "docs/merge-pays/sim-calibration-async/all-atom", "docs/merge-pays/sim-calibration-async/single-atom",
    "docs/merge-pays/sim-sensitivity", "docs/merge-pays/sim-single-atom",
    "docs/steal-vs-regroup-8192-w8",
    "docs/steal-vs-regroup-compute", "docs/steal-vs-regroup-seeds-1024",
    "docs/steal-vs-regroup-seeds-64", "docs/timeline-lookahead-sim1024",
}


# Folders of WITHOUT_PROVENANCE whose reproduction is still to be made (none at present). A folder listed here
# stands as it was until a reproduction or a regeneration with provenance takes it off; the list only shrinks (a
# listed folder that has either is an error).
NOT_YET_REPRODUCED = set()

REPRODUCTIONS = "docs/notes/reproductions.md"


def shown_reproduced():
    """The folders the reproductions tables of REPRODUCTIONS name (their rows are what doc_tables.py prints from the
    CSVs: the drift test checks that)."""
    with open(os.path.join(ROOT, REPRODUCTIONS), encoding="utf-8") as f:
        lines = f.read().split("\n")
    return {arg for _, _, _, name, args in doc_tables.blocks(lines, REPRODUCTIONS) if name == "reproductions"
            for arg in args}


def reproduction_problems(folder):
    """Why none of folder's reproductions stands in for its provenance, in words; [] where one does (every run of
    it identical in every simulated column)."""
    try:
        found = doc_tables.reproductions_of(folder)
    except doc_tables.InputError as e:
        return [str(e)]
    problems = []
    for where, _, compared in found:
        differ = [f"{doc_tables.run_label(old)} at P = {old['nprocs']}: {', '.join(d)} differ"
                  for old, _, d in compared if d]
        if not differ:
            return []
        problems += [f"{where}: {text}" for text in differ]
    return problems


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
    if path.endswith("runs.csv") and rows:
        ids = [r["run_id"] for r in rows if r.get("run_id")]
        twice = sorted({i for i in ids if ids.count(i) > 1})
        if twice:
            found.append(f"run_id recorded twice: {', '.join(twice[:3])}")
        # The same point and repetition twice under two run ids: rows joined by hand from two sweeps.
        header = list(rows[0])
        keys = header[header.index("experiment"):header.index("rep") + 1] if "rep" in header else []
        later = ("backend", "platform", "finished", "chains_per_group", "wait", "model_compute", "model_reduce",
                 "workload_file", "workload_map", "workload_scaling")
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

    def test_every_results_folder_keeps_its_provenance(self):
        folders = sorted({os.path.dirname(p) for p in tracked_csvs() if p.startswith("docs/") and
                          p.endswith("/runs.csv")})
        shown = shown_reproduced()
        for folder in folders:
            with self.subTest(folder=folder):
                has = os.path.isfile(os.path.join(ROOT, folder, "provenance.csv"))
                if folder in NOT_YET_REPRODUCED:
                    self.assertFalse(has, f"{folder} has its provenance.csv now: remove it from WITHOUT_PROVENANCE "
                                          f"and NOT_YET_REPRODUCED")
                    self.assertFalse(folder in shown and reproduction_problems(folder) == [],
                                     f"{folder} is reproduced identically now: remove it from NOT_YET_REPRODUCED")
                elif folder in WITHOUT_PROVENANCE:
                    self.assertFalse(has, f"{folder} has its provenance.csv now: remove it from WITHOUT_PROVENANCE")
                    self.assertIn(folder, shown, f"{folder}: without provenance.csv and not in the reproductions "
                                                 f"table of {REPRODUCTIONS}")
                    self.assertEqual(reproduction_problems(folder), [], f"{folder}: without provenance.csv and its "
                                     f"reproduction is not identical ({REPRODUCTIONS})")
                else:
                    self.assertTrue(has, f"{folder}: runs.csv without provenance.csv (regenerate it, then "
                                         f"plots/scrub_paths.py; docs/guide/sweeps.md)")
        self.assertEqual(sorted(WITHOUT_PROVENANCE - set(folders)), [], "WITHOUT_PROVENANCE names folders without "
                                                                        "a committed runs.csv")
        self.assertLessEqual(NOT_YET_REPRODUCED, WITHOUT_PROVENANCE)

    def test_the_check_catches_each_kind_of_problem(self):
        with tempfile.TemporaryDirectory(dir=ROOT) as d:
            rel = os.path.relpath(d, ROOT)
            cases = {
                "dirty/runs.csv": "run_id,git_commit\na,0123456789ab-dirty\n",
                "twice/runs.csv": "run_id,git_commit\na,0123456789ab\na,0123456789ab\n",
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
            self.assertIn("recorded twice", problems(os.path.join(rel, "joined/runs.csv"))[0])
            self.assertIn("absolute path", problems(os.path.join(rel, "path/runs.csv"))[0])
            self.assertEqual(problems(os.path.join(rel, "clean/runs.csv")), [])


class Reproduction(unittest.TestCase):
    def test_a_reproduction_must_be_identical_and_of_committed_points(self):
        """doc_tables.compare_runs: a run equal in every simulated column passes, one digit of time_s or a
        regroup count off is named, and a reproduced point the committed folder lacks is an error."""
        header = ("run_id,experiment,nprocs,G,T_ms,workload,work_mode,jitter_pct,work_seed,balancer,interval,method,"
                  "rep,time_s,ideal_s,baseline_s,regroups_avg,regroups_std,regroups_min,regroups_max,valid,"
                  "violations,git_commit,backend,platform,finished\n")

        def row(run, nprocs, time_s, regroups_max, commit):
            return (f"{run},x,{nprocs},4,100,cyclic,sleep,0,1,async,,intercomm,0,{time_s},3.5,7,5.375,2.1,2,"
                    f"{regroups_max},true,,{commit},smpi,configs/platforms/bgp.xml,retire\n")
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
