"""mcmclb plan / sweep: study expansion (Cartesian product, zip, exclude) and its errors, resuming an interrupted
sweep, and the Slurm scripts (golden files, valid bash, a missing sbatch)."""
import csv
import os
import shutil
import subprocess
import tempfile
import unittest

MCMCLB = os.path.realpath(os.environ["MCMCLB_BIN"])
ROOT = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
STUDY = "tests/fixtures/study-small.yaml"


def mcmclb(*args, env=None):
    return subprocess.run([MCMCLB, *args], capture_output=True, text=True, timeout=300, cwd=ROOT, env=env)


class Expansion(unittest.TestCase):
    def test_plan_counts_and_launches(self):
        r = mcmclb("plan", STUDY, "--verbose")
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertIn("study small (tests/fixtures/study-small.yaml): 7 points in 2 launch(es)", lines[0])
        self.assertIn("launch nprocs=2, 4 points: mpiexec -n 2 ", lines[1])
        self.assertIn("--points 0,1,2,3 ", lines[1])
        launch3 = [l for l in lines if l.startswith("launch nprocs=3")]
        self.assertEqual(len(launch3), 1)
        self.assertIn("--points 4,5,6 ", launch3[0])
        points = [l.strip() for l in lines if l.startswith("  point")]
        # zip outermost (nprocs with its time limit), then T_ms, then the balancers; one excluded at the end.
        self.assertEqual(points, [
            "point 0 (nprocs=2, G=1, T_ms=2, cyclic, none, rep 0)",
            "point 1 (nprocs=2, G=1, T_ms=2, cyclic, async create_group, rep 0)",
            "point 2 (nprocs=2, G=1, T_ms=3, cyclic, none, rep 0)",
            "point 3 (nprocs=2, G=1, T_ms=3, cyclic, async create_group, rep 0)",
            "point 4 (nprocs=3, G=1, T_ms=2, cyclic, none, rep 0)",
            "point 5 (nprocs=3, G=1, T_ms=2, cyclic, async create_group, rep 0)",
            "point 6 (nprocs=3, G=1, T_ms=3, cyclic, none, rep 0)"])

    def study_error(self, text, fragment):
        with tempfile.NamedTemporaryFile("w", suffix=".yaml", dir=ROOT) as f:
            f.write(text)
            f.flush()
            r = mcmclb("plan", f.name)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn(fragment, r.stderr)

    def test_zip_of_unequal_lists(self):
        self.study_error("zip: {nprocs: [2, 4, 8], T_ms: [1, 2]}\n",
                         "key zip: the lists differ in length (T_ms has 2, nprocs has 3)")

    def test_zip_key_also_outside(self):
        self.study_error("nprocs: 4\nzip: {nprocs: [2, 4], T_ms: [1, 2]}\n", "key zip: nprocs is also given outside zip")

    def test_unknown_key(self):
        self.study_error("nprocs: [2, 4]\nrepetitions: 3\n", "unknown key 'repetitions' (allowed: ")

    def test_exclude_unknown_key(self):
        self.study_error("nprocs: [2, 4]\nexclude: [{nodes: 2}]\n", "unknown key 'nodes'")

    def test_exclude_everything(self):
        self.study_error("nprocs: 2\nexclude: [{balancer: none}]\n", "the exclude rules leave no point to run")

    def test_nprocs_required(self):
        self.study_error("T_ms: [1, 2]\n", "key nprocs: a study needs nprocs")

    def test_bad_flags(self):
        r = mcmclb("sweep", STUDY)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--launcher: required (allowed: local, slurm)", r.stderr)
        r = mcmclb("sweep", STUDY, "--launcher", "pbs")
        self.assertIn("--launcher: 'pbs' is not allowed (allowed: local, slurm)", r.stderr)


class Resume(unittest.TestCase):
    def test_interrupted_sweep_runs_only_the_missing_points(self):
        with tempfile.TemporaryDirectory() as out:
            # An interrupted sweep: only the first two points of the nprocs=2 launch were recorded.
            first = subprocess.run(["mpiexec", "-n", "2", MCMCLB, "run", STUDY, "--points", "0,1", "--out", out],
                                   capture_output=True, text=True, timeout=300, cwd=ROOT)
            self.assertEqual(first.returncode, 0, first.stderr)
            r = mcmclb("sweep", STUDY, "--launcher", "local", "--out", out)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertIn("7 points, 2 already done", r.stdout)
            self.assertIn("5 to run in 2 launch(es)", r.stdout)
            self.assertIn("--points 2,3 ", r.stdout)
            self.assertIn("[point 5 of 5,", r.stdout)
            with open(os.path.join(out, "runs.csv")) as f:
                runs = list(csv.DictReader(f))
            self.assertEqual(len(runs), 7)
            keys = {(r["nprocs"], r["T_ms"], r["balancer"]) for r in runs}
            self.assertEqual(len(keys), 7, "no point ran twice")
            self.assertTrue(all(r["valid"] == "true" for r in runs))
            again = mcmclb("sweep", STUDY, "--launcher", "local", "--out", out)
            self.assertIn("7 already done", again.stdout)
            self.assertIn("0 to run", again.stdout)


class Failure(unittest.TestCase):
    def test_sweep_goes_on_past_a_crashing_point(self):
        with tempfile.TemporaryDirectory() as out:
            env = dict(os.environ, MCMCLB_FAIL_POINT="1")  # the job aborts when point 1 starts
            r = mcmclb("sweep", STUDY, "--launcher", "local", "--out", out, env=env)
            self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
            self.assertIn("--points 2,3 ", r.stdout, "the rest of the crashed launch is relaunched")
            self.assertIn("sweep small: 6 run, 0 skipped, 1 failed", r.stdout)
            self.assertIn("failed: point 1 (nprocs=2, G=1, T_ms=2, cyclic, async create_group, rep 0): the launch "
                          "exited with status", r.stderr)
            with open(os.path.join(out, "runs.csv")) as f:
                self.assertEqual(len(list(csv.DictReader(f))), 6)
            with open(os.path.join(out, "failures.csv")) as f:
                failures = list(csv.DictReader(f))
            self.assertEqual([(x["point"], x["nprocs"], x["balancer"]) for x in failures],
                             [("1", "2", "async create_group")])
            # Rerun without the fault: only the failed point runs.
            again = mcmclb("sweep", STUDY, "--launcher", "local", "--out", out)
            self.assertEqual(again.returncode, 0, again.stderr)
            self.assertIn("6 already done", again.stdout)
            self.assertIn("--points 1 ", again.stdout)


class Slurm(unittest.TestCase):
    def test_golden_scripts_and_valid_bash(self):
        jobs = tempfile.mkdtemp()
        try:
            r = mcmclb("sweep", STUDY, "--launcher", "slurm", "--dry-run", "--jobs-dir", jobs, "--out",
                       "results/small")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("dry run: 2 script(s) written, none submitted", r.stdout)
            for n in (2, 3):
                path = os.path.join(jobs, f"small-n{n}.sbatch")
                with open(path) as f:
                    text = f.read().replace(MCMCLB, "@EXE@").replace(ROOT, "@CWD@")
                with open(os.path.join(ROOT, "tests", "golden", f"small-n{n}.sbatch")) as f:
                    self.assertEqual(text, f.read(), f"{path} differs from tests/golden/small-n{n}.sbatch")
                self.assertTrue(os.access(path, os.X_OK))
                check = subprocess.run(["bash", "-n", path], capture_output=True, text=True)
                self.assertEqual(check.returncode, 0, check.stderr)
        finally:
            shutil.rmtree(jobs)

    def test_groups_by_node_ask_for_block_placement_and_whole_nodes(self):
        jobs = tempfile.mkdtemp()
        try:
            study = os.path.join(jobs, "node.yaml")
            with open(study, "w") as f:
                f.write("experiment: node\nnprocs: [8]\ngroups: {by: node, size: 2}\n"
                        "job: {tasks_per_node: 4}\n")
            r = mcmclb("sweep", study, "--launcher", "slurm", "--dry-run", "--jobs-dir", jobs)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(os.path.join(jobs, "node-n8.sbatch")) as f:
                lines = f.read().splitlines()
            for line in ("#SBATCH --ntasks-per-node=4", "#SBATCH --distribution=block", "#SBATCH --nodes=2"):
                self.assertIn(line, lines)
            with open(study, "w") as f:
                f.write("experiment: node\nnprocs: [8]\ngroups: {by: node, size: 3}\njob: {tasks_per_node: 4}\n")
            r = mcmclb("plan", study)
            self.assertEqual(r.returncode, 2)
            self.assertIn("key groups.size: 3 does not divide job.tasks_per_node=4", r.stderr)
        finally:
            shutil.rmtree(jobs)

    def test_missing_sbatch_is_a_clear_error(self):
        env = dict(os.environ, PATH="/nonexistent")
        r = mcmclb("sweep", STUDY, "--launcher", "slurm", "--jobs-dir", tempfile.gettempdir(), env=env)
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stderr.strip(), "mcmclb: --launcher slurm: sbatch is not on PATH (run on a Slurm login "
                                           "node, or add --dry-run to only write the scripts)")


if __name__ == "__main__":
    unittest.main()
