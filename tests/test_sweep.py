# SPDX-License-Identifier: BSD-3-Clause
"""mcmclb plan / sweep: study expansion (Cartesian product, zip, exclude) and its errors, resuming an interrupted
sweep, and the Slurm scripts (golden files, valid bash, a missing sbatch)."""
import csv
import os
import re
import shutil
import subprocess
import tempfile
import time
import unittest

MCMCLB = os.path.realpath(os.environ["MCMCLB_BIN"])
ROOT = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
STUDY = "tests/fixtures/study-small.yaml"
# job.launcher: mpiexec as a batch job runs it: the build's own mpiexec (cmake/Mpi.cmake), with its flags for root
# when the script is written as root.
MPIEXEC_IN_JOB = " ".join([os.environ["MCMCLB_TEST_MPIEXEC"]] +
                          (os.environ["MCMCLB_TEST_MPI_ROOT_FLAGS"].split() if os.geteuid() == 0 else []))


def fake_sim_program(folder, name="mcmclb-sim"):
    """A stand-in for a simulation build's program where smpirun is a stub: the sweep checks that the file is
    linked against SimGrid (names libsimgrid.so) but never runs it."""
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        f.write("#!/bin/sh\n# NEEDED libsimgrid.so.3\n")
    os.chmod(path, 0o755)
    return path


def read_csv(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def mcmclb(*args, env=None):
    return subprocess.run([MCMCLB, *args], capture_output=True, text=True, timeout=300, cwd=ROOT, env=env)


class Expansion(unittest.TestCase):
    def test_plan_counts_and_launches(self):
        r = mcmclb("plan", STUDY, "--verbose")
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertIn("study small (tests/fixtures/study-small.yaml): 7 points in 2 launch(es)", lines[0])
        self.assertIn("launch nprocs=2, 4 points: " + MPIEXEC_IN_JOB + " -n 2 ", lines[1])
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
        self.assertIn("--launcher: required (allowed: local, slurm, smpi)", r.stderr)
        r = mcmclb("sweep", STUDY, "--launcher", "pbs")
        self.assertIn("--launcher: 'pbs' is not allowed (allowed: local, slurm, smpi)", r.stderr)


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
            # Every progress line carries the host memory of the launch that ran the point.
            lines = [l for l in r.stdout.splitlines() if l.startswith("[point ")]
            self.assertEqual(len(lines), 5, r.stdout)
            for line in lines:
                m = re.search(r"; host RSS ([0-9.]+) (KiB|MiB|GiB), peak ([0-9.]+) (KiB|MiB|GiB)\] point ", line)
                self.assertIsNotNone(m, line)
                scale = {"KiB": 1, "MiB": 1024, "GiB": 1024 * 1024}
                now, peak = float(m[1]) * scale[m[2]], float(m[3]) * scale[m[4]]
                self.assertGreater(now, 1024, line)  # two or three MPI ranks and mpiexec hold more than 1 MiB
                self.assertGreaterEqual(peak, now, line)
            with open(os.path.join(out, "runs.csv")) as f:
                runs = list(csv.DictReader(f))
            self.assertEqual(len(runs), 7)
            keys = {(r["nprocs"], r["T_ms"], r["balancer"]) for r in runs}
            self.assertEqual(len(keys), 7, "no point ran twice")
            self.assertTrue(all(r["valid"] == "true" for r in runs))
            if (os.cpu_count() or 1) < 3:  # the 3-rank launch ran oversubscribed: the note says how this MPI waits
                self.assertIn("oversubscribed: P = 3 ran 3 ranks on", r.stdout)
                library = runs[0]["mpi_library"]
                self.assertIn("Open MPI yields the core" if library.startswith("Open MPI") else "MPICH busy-polls",
                              r.stdout)
            again = mcmclb("sweep", STUDY, "--launcher", "local", "--out", out)
            self.assertIn("7 already done", again.stdout)
            self.assertIn("0 to run", again.stdout)


    def test_two_concurrent_sweeps_of_one_folder_record_each_point_once(self):
        # Two sweeps of one study into one folder at the same time (a resubmitted job while the first still runs):
        # both plan every point, but a point one of them records is neither rerun nor recorded again by the other.
        with tempfile.TemporaryDirectory() as out:
            args = [MCMCLB, "sweep", STUDY, "--launcher", "local", "--out", out]
            procs = [subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
                     for _ in range(2)]
            outputs = [p.communicate(timeout=300) for p in procs]
            for p, (o, e) in zip(procs, outputs):
                self.assertEqual(p.returncode, 0, o + e)
            with open(os.path.join(out, "runs.csv")) as f:
                runs = list(csv.DictReader(f))
            keys = [(r["nprocs"], r["T_ms"], r["balancer"]) for r in runs]
            self.assertEqual(len(set(keys)), 7)
            self.assertEqual(len(keys), 7, "a point was recorded twice: " + "".join(o for o, _ in outputs))
            with open(os.path.join(out, "ranks.csv")) as f:
                self.assertEqual(len(list(csv.DictReader(f))), 4 * 2 + 3 * 3, "ranks.csv rows of unrecorded runs")


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


ROUNDS = "tests/fixtures/study-rounds.yaml"  # none (points 0, 1) and async (2, 3) at P = 2, two repetitions each


def run_sequence(folder):
    """runs.csv's rows as (balancer, rep), in the order they were recorded."""
    return [(r["balancer"], int(r["rep"])) for r in read_csv(os.path.join(folder, "runs.csv"))]


class Order(unittest.TestCase):
    """A launch on real MPI runs its repetitions in rounds (key order): drift of the machine over a block of one
    set-up's repetitions would otherwise become a difference between set-ups. By default each round runs in a random
    order of its own from a seed drawn per sweep, which provenance.csv records and which, given, runs that order
    again. Resume, failures, --until-ci and the exclude rules keep the rounds and one row per run; the simulation
    runs blocked; provenance.csv says which."""

    IN_ROUNDS = [("none", 0), ("async", 0), ("none", 1), ("async", 1)]

    def sweep(self, out, *args, env=None):
        return mcmclb("sweep", ROUNDS, "--launcher", "local", "--out", out, *args, env=env)

    def test_repetitions_run_in_rounds_and_provenance_says_how(self):
        with tempfile.TemporaryDirectory() as d:
            rounds, blocked, shuffled = (os.path.join(d, name) for name in ("rounds", "blocked", "shuffled"))
            r = self.sweep(rounds, "--set", "order=interleaved")
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertIn("--points 0,2,1,3 ", r.stdout)
            self.assertEqual(run_sequence(rounds), self.IN_ROUNDS, "interleaved runs repetitions in rounds")
            provenance = read_csv(os.path.join(rounds, "provenance.csv"))
            self.assertEqual([(p["order"], p["order_seed"]) for p in provenance], [("interleaved", "")] * 4)
            r = self.sweep(blocked, "--set", "order=blocked")
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertEqual(run_sequence(blocked), [("none", 0), ("none", 1), ("async", 0), ("async", 1)])
            self.assertEqual({p["order"] for p in read_csv(os.path.join(blocked, "provenance.csv"))}, {"blocked"})
            r = self.sweep(shuffled, "--set", "order=shuffled", "--set", "order_seed=5")
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            sequence = run_sequence(shuffled)
            self.assertEqual([rep for _, rep in sequence], [0, 0, 1, 1], "shuffled keeps the rounds")
            self.assertEqual({b for b, _ in sequence[:2]}, {"none", "async"})
            self.assertEqual({b for b, _ in sequence[2:]}, {"none", "async"})
            self.assertEqual({(p["order"], p["order_seed"]) for p in read_csv(os.path.join(shuffled, "provenance.csv"))},
                             {("shuffled", "5")})
            # The plan, a batch job's script and mcmclb run without --points run the launch in the same order.
            r = mcmclb("plan", ROUNDS, "--set", "order=interleaved")
            self.assertIn("--points 0,2,1,3 ", r.stdout)
            r = mcmclb("sweep", ROUNDS, "--launcher", "slurm", "--dry-run", "--jobs-dir", os.path.join(d, "jobs"),
                       "--out", os.path.join(d, "slurm"), "--set", "order=interleaved")
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            with open(os.path.join(d, "jobs", "rounds-n2.sbatch")) as f:
                self.assertIn("--points 0,2,1,3 ", f.read())
            whole = os.path.join(d, "whole")
            r = subprocess.run(["mpiexec", "-n", "2", MCMCLB, "run", ROUNDS, "--out", whole, "--set",
                                "order=interleaved"], capture_output=True, text=True, timeout=300, cwd=ROOT)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertEqual(run_sequence(whole), self.IN_ROUNDS)

    def test_by_default_each_round_runs_in_a_random_order_whose_seed_is_recorded(self):
        def launched_points(stdout):
            return re.search(r"--points ([0-9,]+) ", stdout).group(1)

        with tempfile.TemporaryDirectory() as d:
            drawn, given = os.path.join(d, "drawn"), os.path.join(d, "given")
            r = self.sweep(drawn)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            provenance = read_csv(os.path.join(drawn, "provenance.csv"))
            self.assertEqual({p["order"] for p in provenance}, {"shuffled"})
            seeds = {p["order_seed"] for p in provenance}
            self.assertEqual(len(seeds), 1, "one seed per sweep")
            seed = seeds.pop()
            self.assertRegex(seed, r"^[0-9]+$")
            self.assertIn(" --set order_seed=" + seed, r.stdout, "the launch runs the drawn seed's order")
            self.assertEqual([rep for _, rep in run_sequence(drawn)], [0, 0, 1, 1], "still in rounds")
            # The recorded seed, given, plans the same order.
            again = mcmclb("plan", ROUNDS, "--set", "order_seed=" + seed)
            self.assertEqual(launched_points(again.stdout), launched_points(r.stdout))
            # Two rounds of one sweep differ in order: the first seed whose plan says so (none is points 0 and 1,
            # async 2 and 3), swept.
            for s in range(32):
                points = [int(p) for p in launched_points(mcmclb("plan", ROUNDS, "--set", f"order_seed={s}")
                                                          .stdout).split(",")]
                if (points[0] < 2) != (points[2] < 2):
                    break
            else:
                self.fail("no seed of 32 orders the two rounds differently")
            r = self.sweep(given, "--set", f"order_seed={s}")
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            sequence = run_sequence(given)
            self.assertEqual(sorted(sequence[:2]), [("async", 0), ("none", 0)])
            self.assertNotEqual([b for b, _ in sequence[:2]], [b for b, _ in sequence[2:]], "the rounds differ")
            self.assertEqual({p["order_seed"] for p in read_csv(os.path.join(given, "provenance.csv"))}, {str(s)})

    def test_provenance_records_the_build_and_an_older_file_reads_as_unknown(self):
        # The build type and C++ flags as this build's CMake cache holds them (MCMCLB_BIN is in the build folder).
        with open(os.path.join(os.path.dirname(MCMCLB), "CMakeCache.txt")) as f:
            cache = dict(re.match(r"([^:#/]+):[A-Z]+=(.*)", line).groups() for line in f
                         if re.match(r"[^:#/]+:[A-Z]+=", line))
        build_type = cache["CMAKE_BUILD_TYPE"]
        with tempfile.TemporaryDirectory() as out:
            def run(points):
                r = subprocess.run(["mpiexec", "-n", "2", MCMCLB, "run", ROUNDS, "--points", points, "--out", out,
                                    "--resume"], capture_output=True, text=True, timeout=300, cwd=ROOT)
                self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
                return r

            run("0")
            path = os.path.join(out, "provenance.csv")
            [p] = read_csv(path)
            self.assertEqual(p["build_type"], build_type)
            self.assertRegex(p["compiler"], r"^\S+ [0-9.]+$")
            flags = p["cxx_flags"].split()
            wanted = cache["CMAKE_CXX_FLAGS_" + build_type.upper()].split() + ["-Wall"]
            self.assertEqual([f for f in flags if f in wanted], wanted, "the build type's flags, then the warnings")
            # The host's CPU as /proc/cpuinfo names it; its load only in simulation (tests/smpi/run_kernel.sh), where
            # the run's own ranks do not spin while it is measured.
            with open("/proc/cpuinfo") as f:
                models = [line.split(":", 1)[1].strip() for line in f if line.startswith("model name")]
            self.assertEqual(p["host_cpu_model"], models[0] if models else "")
            self.assertEqual((p["host_busy_before_pct"], p["host_busy_after_pct"]), ("", ""))
            # The part of a core each rank had at the launch's start: measured wherever no node is oversubscribed.
            if p["oversubscribed"] == "false":
                self.assertTrue(0 < float(p["core_share"]) <= 1, p["core_share"])
            else:
                self.assertEqual(p["core_share"], "")
            # A provenance.csv from before these columns (and SimGrid's version, the platform, the placement and the
            # host's CPU, its load and the core share after them): read as an older version, its rows' build and host
            # unknown.
            with open(path, newline="") as f:
                table = list(csv.reader(f))
            with open(path, "w", newline="") as f:
                csv.writer(f, lineterminator="\n").writerows(row[:-10] for row in table)
            self.assertIn("1 of 2 points already done", run("0,1").stdout)
            rows = read_csv(path)
            self.assertEqual([(r["build_type"], r["cxx_flags"] == "", r["host_cpu_model"] == p["host_cpu_model"])
                              for r in rows], [("", True, not models), (build_type, False, True)])

    def test_resume_failure_and_until_ci_keep_the_rounds_and_one_row_per_run(self):
        with tempfile.TemporaryDirectory() as out:
            env = dict(os.environ, MCMCLB_FAIL_POINT="2")  # async's first repetition, second in the launch
            r = self.sweep(out, "--set", "order=interleaved", env=env)
            self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
            self.assertIn("--points 1,3 ", r.stdout, "the rest of the crashed launch, still in rounds")
            self.assertEqual(run_sequence(out), [("none", 0), ("none", 1), ("async", 1)])
            self.assertEqual([x["point"] for x in read_csv(os.path.join(out, "failures.csv"))], ["2"])
            r = self.sweep(out, "--set", "order=interleaved")  # resume: only the failed point
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertIn("3 already done", r.stdout)
            self.assertIn("--points 2 ", r.stdout)
            self.assertEqual(sorted(run_sequence(out)), sorted(self.IN_ROUNDS), "one row per run")
            self.assertEqual(read_csv(os.path.join(out, "failures.csv")), [])
        with tempfile.TemporaryDirectory() as out:
            # --until-ci from one repetition each: its first round brings both set-ups to six, in rounds.
            r = self.sweep(out, "--set", "reps=1", "--set", "order=interleaved", "--until-ci", "0.0001", "--max-reps",
                           "6")
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertIn("until-ci round 1: 10 more run(s)", r.stdout)
            self.assertEqual(run_sequence(out), [(b, rep) for rep in range(6) for b in ("none", "async")])
            self.assertEqual(len({r["run_id"] for r in read_csv(os.path.join(out, "runs.csv"))}), 12)

    def test_two_concurrent_interleaved_sweeps_record_each_run_once(self):
        with tempfile.TemporaryDirectory() as out:
            args = [MCMCLB, "sweep", ROUNDS, "--launcher", "local", "--out", out, "--set", "order=shuffled"]
            procs = [subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
                     for _ in range(2)]
            outputs = [p.communicate(timeout=300) for p in procs]
            for p, (o, e) in zip(procs, outputs):
                self.assertEqual(p.returncode, 0, o + e)
            self.assertEqual(sorted(run_sequence(out)), sorted(self.IN_ROUNDS), "".join(o for o, _ in outputs))
            self.assertEqual(len(read_csv(os.path.join(out, "ranks.csv"))), 4 * 2, "ranks.csv rows of unrecorded runs")
            self.assertEqual(len(read_csv(os.path.join(out, "provenance.csv"))), 4)

    def test_bad_order_values_are_one_line_before_anything_is_written(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "out")
            for value, fragment in (("order=sideways", "key order: 'sideways' is not allowed (allowed: interleaved, "
                                                       "shuffled, blocked)"),
                                    ("order=[blocked, shuffled]", "key order: one order and one order_seed per study"),
                                    ("order_seed=-3", "key order_seed: "),
                                    ("order_seed=seven", "key order_seed: ")):
                r = self.sweep(out, "--set", value)
                self.assertEqual(r.returncode, 2, value + r.stdout + r.stderr)
                self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
                self.assertIn(fragment, r.stderr)
                self.assertFalse(os.path.exists(out), "nothing written for " + value)

    def test_a_simulation_runs_blocked(self):
        with tempfile.TemporaryDirectory() as d:
            r = mcmclb("sweep", ROUNDS, "--launcher", "smpi", "--dry-run", "--sim-binary", fake_sim_program(d),
                       "--out", os.path.join(d, "out"))
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertIn("--points 0,1,2,3 ", r.stdout)


BGP = os.path.join(ROOT, "configs", "platforms", "bgp.xml")
FATTREE = os.path.join(ROOT, "configs", "platforms", "fattree.xml")
# How results name the platform: its path in the git work tree that holds it (a fresh clone in CI, this checkout
# here), so that no result carries a path of the machine that made it.
BGP_IN_RESULTS = "configs/platforms/bgp.xml"


def relabel(folder, backend, platform):
    """Rewrites folder/runs.csv's rows as run on backend/platform (what a sweep of that launcher writes there)."""
    path = os.path.join(folder, "runs.csv")
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
        fields = list(rows[0].keys())
    for row in rows:
        row["backend"], row["platform"] = backend, platform
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


class Backends(unittest.TestCase):
    """Resume is keyed on the backend and platform too. A point done on the real MPI is not done in
    simulation (and the reverse), and two platforms are two points. smpirun is a stub here that only says how it
    was called: what is under test is which points the sweep launches."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        stub = os.path.join(self.tmp, "bin", "smpirun")
        os.mkdir(os.path.dirname(stub))
        with open(stub, "w") as f:
            f.write('#!/bin/sh\necho "smpirun stub: $*"\n')
        os.chmod(stub, 0o755)
        self.env = dict(os.environ, PATH=os.path.dirname(stub) + ":" + os.environ["PATH"])
        self.out = os.path.join(self.tmp, "out")
        # Points 0 and 1 done on the real MPI.
        first = subprocess.run(["mpiexec", "-n", "2", MCMCLB, "run", STUDY, "--points", "0,1", "--out", self.out],
                               capture_output=True, text=True, timeout=300, cwd=ROOT)
        self.assertEqual(first.returncode, 0, first.stderr)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def sweep(self, *args):
        return mcmclb("sweep", STUDY, "--out", self.out, *args, env=self.env)

    def smpi(self, *args):
        return self.sweep("--launcher", "smpi", "--sim-binary", fake_sim_program(self.tmp), *args)

    def test_real_rows_do_not_make_a_simulated_point_done(self):
        r = self.smpi()
        self.assertEqual(r.returncode, 3, r.stdout + r.stderr)  # the stub records nothing: every point fails
        self.assertIn("7 points, 0 already done", r.stdout)
        self.assertIn("smpirun stub: -np 2 -platform " + BGP, r.stdout)
        self.assertIn(" run tests/fixtures/study-small.yaml --points 0,1,2,3 ", r.stdout)
        with open(os.path.join(self.out, "failures.csv")) as f:
            self.assertEqual(len(list(csv.DictReader(f))), 7)
        # The real MPI's points are still done for a local sweep (a dry run prints what it would launch).
        r = self.sweep("--launcher", "local", "--dry-run")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("7 points, 2 already done", r.stdout)
        # The launcher is the build's MPI's own (cmake/Mpi.cmake), by its full path, e.g. /usr/bin/mpiexec.mpich.
        self.assertRegex(r.stdout, r"would launch: /\S*/mpiexec\.\w+ (\S+ )*-n 2 " + re.escape(MCMCLB) +
                         r" run tests/fixtures/study-small\.yaml --points 2,3 ")
        r = mcmclb("status", STUDY, "--out", self.out, env=self.env)
        self.assertIn("study small in " + self.out + ": 2 done, 0 failed, 5 missing", r.stdout)
        r = mcmclb("status", STUDY, "--out", self.out, "--launcher", "smpi", env=self.env)
        self.assertIn("study small in " + self.out + ": 0 done, 7 failed, 0 missing", r.stdout)

    def test_simulated_rows_count_for_their_platform_only(self):
        relabel(self.out, "smpi", BGP_IN_RESULTS)
        r = self.sweep("--launcher", "local", "--dry-run")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("7 points, 0 already done", r.stdout)
        self.assertIn("--points 0,1,2,3 ", r.stdout)
        # The same platform file, however --platform names it: those two points are done.
        for platform in (BGP, os.path.join("configs", "..", "configs", "platforms", "bgp.xml")):
            r = self.smpi("--platform", platform, "--dry-run")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("7 points, 2 already done", r.stdout)
            self.assertIn(f"MCMCLB_PLATFORM={BGP} ", r.stdout)
            self.assertIn(" --points 2,3 ", r.stdout)
        r = self.smpi("--platform", FATTREE, "--dry-run")
        self.assertIn("7 points, 0 already done", r.stdout)
        r = mcmclb("status", STUDY, "--out", self.out, "--launcher", "smpi", env=self.env)
        self.assertIn(": 2 done, 0 failed, 5 missing", r.stdout)
        r = mcmclb("status", STUDY, "--out", self.out, "--launcher", "smpi", "--platform", FATTREE, env=self.env)
        self.assertIn(": 0 done, 0 failed, 7 missing", r.stdout)


    def test_simulated_repetitions_must_agree(self):
        """reps > 1 in simulation is a determinism check: repetitions of a point with different simulated times fail
        that point."""
        with tempfile.NamedTemporaryFile("w", suffix=".yaml", dir=ROOT) as study:
            study.write("experiment: reps\nnprocs: 2\nT_ms: 1\nreps: 2\n")
            study.flush()
            out = os.path.join(self.tmp, "reps")
            first = subprocess.run(["mpiexec", "-n", "2", MCMCLB, "run", study.name, "--out", out],
                                   capture_output=True, text=True, timeout=300, cwd=ROOT)
            self.assertEqual(first.returncode, 0, first.stderr)
            relabel(out, "smpi", BGP_IN_RESULTS)
            path = os.path.join(out, "runs.csv")
            with open(path, newline="") as f:
                rows = list(csv.DictReader(f))
            rows[1]["time_s"] = rows[0]["time_s"]
            for times, status in (([rows[0]["time_s"]] * 2, 0), ([rows[0]["time_s"], "9.5"], 3)):
                with open(path, "w", newline="") as f:
                    writer = csv.DictWriter(f, fieldnames=list(rows[0].keys()), lineterminator="\n")
                    writer.writeheader()
                    for row, time in zip(rows, times):
                        writer.writerow(dict(row, time_s=time))
                r = mcmclb("sweep", study.name, "--out", out, "--launcher", "smpi", "--sim-binary",
                           fake_sim_program(self.tmp), env=self.env)
                self.assertEqual(r.returncode, status, r.stdout + r.stderr)
                self.assertIn("2 points, 2 already done", r.stdout)
                self.assertIn("note: 2 repetitions per point in simulation give identical simulated times", r.stdout)
                if status:
                    self.assertIn("failed: point 1 (nprocs=2, G=1, T_ms=1, cyclic, none, rep 1): the simulated "
                                  f"repetitions of this point differ (time_s {rows[0]['time_s']}, 9.5)", r.stderr)


def snapshot(folder):
    """Every file of folder (hidden ones too) with its bytes: equal before and after means nothing was written,
    created, removed or rewritten (an upgrade rewrites a file through a new name, so its bytes change)."""
    files = {}
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name), "rb") as f:
            files[name] = f.read()
    return files


class PointsPerLaunch(unittest.TestCase):
    """A simulation runs at most 16 kernel points per smpirun by default (SimGrid 3.32 slows down with every point
    one simulation has run), --points-per-launch N sets the cap, real MPI keeps one launch per rank count; every
    point is launched once, in order."""

    @staticmethod
    def launched_points(stdout):
        launches = [l for l in stdout.splitlines() if l.startswith("would launch: ")]
        return [[int(i) for i in l.split(" --points ")[1].split()[0].split(",")] for l in launches]

    def test_launches_are_cut_into_pieces_of_the_cap(self):
        with tempfile.TemporaryDirectory() as d:
            sim = fake_sim_program(d)
            common = ("sweep", "configs/paper-fig2.yaml", "--dry-run", "--set", "nprocs=[32]")
            for extra, sizes in (((), [16, 14]), (("--points-per-launch", "7"), [7, 7, 7, 7, 2]),
                                 (("--points-per-launch", "100"), [30])):
                r = mcmclb(*common, "--launcher", "smpi", "--sim-binary", sim, "--out", os.path.join(d, "o"), *extra)
                self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
                points = self.launched_points(r.stdout)
                self.assertEqual([len(p) for p in points], sizes, r.stdout)
                self.assertEqual([i for p in points for i in p], list(range(30)))
                self.assertIn(f"30 to run in {len(sizes)} launch(es)", r.stdout)
            r = mcmclb(*common, "--launcher", "local", "--out", os.path.join(d, "o"))
            self.assertEqual([len(p) for p in self.launched_points(r.stdout)], [30], r.stdout)
            r = mcmclb(*common, "--launcher", "local", "--points-per-launch", "8", "--out", os.path.join(d, "o"))
            self.assertEqual([len(p) for p in self.launched_points(r.stdout)], [8, 8, 8, 6], r.stdout)

    def test_bad_caps_are_refused_in_one_line(self):
        with tempfile.TemporaryDirectory() as d:
            for args, message in ((("--launcher", "smpi", "--points-per-launch", "0"), "--points-per-launch"),
                                  (("--launcher", "local", "--points-per-launch", "x"), "--points-per-launch"),
                                  (("--launcher", "slurm", "--points-per-launch", "4"),
                                   "--points-per-launch: only with --launcher local or smpi"),
                                  (("--launcher", "smpi", "--jobs", "0"), "--jobs: '0'"),
                                  (("--launcher", "local", "--jobs", "2"), "--jobs: only with --launcher smpi")):
                r = mcmclb("sweep", STUDY, "--out", os.path.join(d, "o"), *args)
                self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
                self.assertIn(message, r.stderr)
                self.assertFalse(os.path.exists(os.path.join(d, "o")))


class DryRunWritesNothing(unittest.TestCase):
    """A dry run leaves the results folder byte for byte as it was, with any launcher: one written by mcmclb 0.1
    (whose files a real sweep upgrades in place) is read through the upgrade in memory, not rewritten, and no lock
    file is made. The user dry-runs to see what would happen, e.g. before choosing which mcmclb to use on it."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.out = os.path.join(self.tmp, "out")
        shutil.copytree(os.path.join(ROOT, "tests", "fixtures", "results-v0.1"), self.out)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def dry_runs(self, expected):
        """Each launcher's dry run on self.out: exit 0, the folder unchanged, and the lines expected[launcher]."""
        before = snapshot(self.out)
        for launcher, extra in (("local", ()), ("smpi", ("--sim-binary", fake_sim_program(self.tmp))),
                                ("slurm", ("--jobs-dir", os.path.join(self.tmp, "jobs")))):
            r = mcmclb("sweep", STUDY, "--launcher", launcher, "--out", self.out, "--dry-run", *extra)
            self.assertEqual(r.returncode, 0, launcher + ": " + r.stdout + r.stderr)
            self.assertEqual(snapshot(self.out), before, f"--launcher {launcher} --dry-run changed {self.out}")
            for line in expected[launcher]:
                self.assertIn(line, r.stdout, launcher)

    def test_older_version_folder_is_read_not_upgraded(self):
        # The fixture holds every point of the study, each valid with all its rank rows, run on the real MPI (0.1
        # had no simulation): done for local and slurm, not for smpi.
        self.dry_runs({"local": ["sweep small: 7 points, 7 already done", "dry run: 0 launch command(s) printed"],
                       "smpi": ["sweep small: 7 points, 0 already done", "dry run: 2 launch command(s) printed"],
                       "slurm": ["sweep small: nothing to submit: all 7 points are done in " + self.out]})
        # mcmclb status reads the folder the same way (it refused 0.1's runs.csv before), and writes nothing either.
        before = snapshot(self.out)
        r = mcmclb("status", STUDY, "--out", self.out)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("study small in " + self.out + ": 7 done, 0 failed, 0 missing (complete)", r.stdout)
        self.assertEqual(snapshot(self.out), before, "mcmclb status changed " + self.out)
        # A run that lost a rank row is not done (0.1's ranks.csv read by column name, through its upgrade).
        path = os.path.join(self.out, "ranks.csv")
        with open(path) as f:
            lines = f.read().splitlines(keepends=True)
        self.assertTrue(lines[-1].startswith("small-2026-11-21T06:30:13Z-db349c,2,"), "point 6's last rank row")
        with open(path, "w") as f:
            f.writelines(lines[:-1])
        self.dry_runs({"local": ["7 points, 6 already done", " run tests/fixtures/study-small.yaml --points 6 "],
                       "smpi": ["7 points, 0 already done"],
                       "slurm": ["skip nprocs=2: all 4 points already done", "(nprocs=3, 1 of 3 points to run; "]})
        # status counts it as the sweep does: not done (a resubmit would run it), and missing, since it is valid.
        r = mcmclb("status", STUDY, "--out", self.out)
        self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
        self.assertIn("study small in " + self.out + ": 6 done, 0 failed, 1 missing", r.stdout)
        # At the end of a Slurm job, status records why that point is not done.
        r = mcmclb("status", STUDY, "--out", self.out, "--launch", "3", "--record-failures", "0")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        with open(os.path.join(self.out, "failures.csv")) as f:
            self.assertIn("recorded valid in runs.csv, but ranks.csv lacks some of its ranks' rows", f.read())

    def test_current_folder_with_its_lock_file(self):
        # Today's files and the lock file a writer of this version leaves: the read lock changes nothing either.
        shutil.rmtree(self.out)
        shutil.copytree(os.path.join(ROOT, "tests", "fixtures", "results-small"), self.out)
        open(os.path.join(self.out, ".mcmclb.lock"), "w").close()
        self.dry_runs({"local": ["sweep small: 7 points, 7 already done"], "smpi": ["7 points, 0 already done"],
                       "slurm": ["nothing to submit: all 7 points are done in "]})


class Simulation(unittest.TestCase):
    """--launcher smpi with the paper's studies: their job: sections do not stop a simulated launch, a dry run
    prints the smpirun lines (flags from configs/platforms/smpi.cfg), and a missing simulation program is one line."""

    def test_paper_studies_dry_run(self):
        with open(os.path.join(ROOT, "configs", "platforms", "smpi.cfg")) as f:
            flags = " ".join(line.strip() for line in f if line.strip() and not line.startswith("#"))
        self.assertIn("--cfg=smpi/simulate-computation:no", flags)
        with tempfile.TemporaryDirectory() as d:
            sim = fake_sim_program(d)
            fake_sim_program(d, "mcmclb-commbench-sim")
            missing = os.path.join(d, "missing", "mcmclb-sim")
            # Each argument of the program percent-encoded behind a marker, since smpirun splits them again.
            for study, program in (("paper-fig2", "mcmclb-sim --args-percent-encoded run"),
                                   ("paper-table1", "mcmclb-sim --args-percent-encoded run"),
                                   ("paper-fig1", "mcmclb-commbench-sim --args-percent-encoded --reps 5")):
                r = mcmclb("sweep", f"configs/{study}.yaml", "--launcher", "smpi", "--dry-run", "--set", "nprocs=[32]",
                           "--sim-binary", sim, "--out", os.path.join(d, study))
                self.assertEqual(r.returncode, 0, study + r.stdout + r.stderr)
                launches = [l for l in r.stdout.splitlines() if l.startswith("would launch: ")]
                # 30 kernel points: two simulations of at most 16 points each (a long simulation slows down)
                self.assertEqual(len(launches), 1 if study == "paper-fig1" else 2, r.stdout)
                self.assertIn(f"smpirun -np 32 -platform {BGP} -hostfile {BGP[:-4]}.hosts {flags} {d}/{program}",
                              launches[0])
                self.assertIn(f"MCMCLB_SMPI_CFG='{flags}'", launches[0])
                self.assertFalse(os.path.exists(os.path.join(d, study)), "a dry run creates no output folder")
                for dry in ((), ("--dry-run",)):  # a dry run refuses what the sweep would refuse
                    r = mcmclb("sweep", f"configs/{study}.yaml", "--launcher", "smpi", "--set", "nprocs=[32]",
                               "--sim-binary", missing, "--out", os.path.join(d, study), *dry)
                    self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                    self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
                    self.assertIn(f"{d}/missing/{program.split()[0]} does not exist (build it: cmake -S . -B "
                                  "build-sim -DMCMCLB_SMPI=ON && cmake --build build-sim --target", r.stderr)
            self.assertIn("commbench-n32-smpi-bgp.csv", launches[0], "a simulated Fig. 1 file says so in its name")
            r = mcmclb("sweep", STUDY, "--launcher", "smpi", "--sim-binary", MCMCLB, "--out", os.path.join(d, "x"),
                       env=dict(os.environ, PATH=os.path.join(d, "empty")))
            self.assertEqual((r.returncode, r.stderr.strip()), (2, "mcmclb: --launcher smpi: smpirun is not on PATH "
                                                                   "(install SimGrid: Debian libsimgrid-dev, bootstrap.sh)"))


    def test_preloads_listed_by_the_simulation_build(self):
        """A simulated launch preloads the libraries listed in smpi-preload.txt beside the launched program (the
        simulation build writes it), ahead of the user's LD_PRELOAD; none without the list; a listed library that
        does not exist is refused in one line before any launch."""
        with tempfile.TemporaryDirectory() as d:
            kernel_dir, bench_dir = os.path.join(d, "sim"), os.path.join(d, "bench")
            os.makedirs(kernel_dir)
            os.makedirs(bench_dir)
            sim = fake_sim_program(kernel_dir)
            bench = fake_sim_program(bench_dir, "mcmclb-commbench-sim")
            libraries = []
            for name in ("libmcmclb_smpi_clock.so", "libtcmalloc_minimal.so.4"):
                libraries.append(os.path.join(kernel_dir, name))
                open(libraries[-1], "w").close()

            def sweep(study, dry=True):
                sizes = () if study == STUDY else ("--set", "nprocs=[32]")  # its sizes are zipped with other keys
                return mcmclb("sweep", study, "--launcher", "smpi", *(("--dry-run",) if dry else ()), "--sim-binary",
                              sim, "--sim-commbench", bench, *sizes, "--out", os.path.join(d, "out"))

            def launch(study):
                r = sweep(study)
                self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
                return [l for l in r.stdout.splitlines() if l.startswith("would launch: ")][0]

            self.assertNotIn("LD_PRELOAD", launch(STUDY), "a build without the list preloads nothing")
            with open(os.path.join(kernel_dir, "smpi-preload.txt"), "w") as f:
                f.write("\n".join(libraries) + "\n")
            self.assertIn(f"would launch: LD_PRELOAD='{' '.join(libraries)}'\"${{LD_PRELOAD:+ $LD_PRELOAD}}\" "
                          "MCMCLB_PLATFORM=", launch(STUDY))
            # Each program's own build: commbench points read the list beside mcmclb-commbench-sim.
            self.assertNotIn("LD_PRELOAD", launch("configs/paper-fig1.yaml"))
            with open(os.path.join(bench_dir, "smpi-preload.txt"), "w") as f:
                f.write(libraries[0] + "\n")
            self.assertIn(f"LD_PRELOAD={libraries[0]}\"", launch("configs/paper-fig1.yaml"))
            os.remove(libraries[1])
            for dry in (True, False):
                r = sweep(STUDY, dry)
                self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                self.assertEqual(r.stderr.strip(), f"mcmclb: {kernel_dir}/smpi-preload.txt: '{libraries[1]}' is not an "
                                 "existing library (allowed: absolute paths without spaces or colons, as the "
                                 "simulation build writes them; rebuild it: cmake --build BUILD-SIM)")
                self.assertFalse(os.path.exists(os.path.join(d, "out")), "refused before anything is written")

    def test_flags_file(self):
        """--smpi-flags replaces configs/platforms/smpi.cfg; every flag is checked before any launch."""
        with tempfile.TemporaryDirectory() as d:
            flags = os.path.join(d, "flags.cfg")
            args = ("sweep", STUDY, "--launcher", "smpi", "--dry-run", "--sim-binary", fake_sim_program(d),
                    "--smpi-flags", flags, "--out",
                    os.path.join(d, "out"))
            with open(flags, "w") as f:
                f.write("# mine\n\n  -no-privatize  \n--cfg=smpi/test:0\n")
            r = mcmclb(*args)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("MCMCLB_SMPI_CFG='-no-privatize --cfg=smpi/test:0' smpirun -np 2", r.stdout)
            self.assertIn(".hosts -no-privatize --cfg=smpi/test:0 ", r.stdout)
            for text, fragment in (("-no-privatize\n--cfg=a b\n", ": line 2: '--cfg=a b' is not an smpirun flag"),
                                   ("--log='x'\n", ": line 1: '--log='x'' is not an smpirun flag"),
                                   ("cfg=smpi/test:0\n", ": line 1: 'cfg=smpi/test:0' is not an smpirun flag"),
                                   ("# nothing\n", ": no flags (allowed: one smpirun flag per line)")):
                with open(flags, "w") as f:
                    f.write(text)
                r = mcmclb(*args)
                self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                self.assertEqual(r.stderr.strip().splitlines(), [r.stderr.strip()], r.stderr)
                self.assertIn(flags + fragment, r.stderr)
            r = mcmclb("sweep", STUDY, "--launcher", "local", "--smpi-flags", flags)
            self.assertEqual(r.returncode, 2)
            self.assertIn("only with --launcher smpi", r.stderr)


class KilledPoint(unittest.TestCase):
    """A point killed on the way (out of memory, a time limit) records in failures.csv how far it got, from the
    last progress line its launch printed: simulated seconds, items done, host seconds, each a column. The stub
    smpirun here stands for a simulation that prints two progress lines, in the kernel's words, and is killed; only
    its first launch progresses, so the relaunched points have no progress of their own to keep. (A real simulation
    killed at a CPU-time limit: tests/smpi/run_sim_suite.sh.)"""

    def test_failures_keep_the_last_progress(self):
        with tempfile.TemporaryDirectory() as d:
            os.mkdir(os.path.join(d, "bin"))
            stub = os.path.join(d, "bin", "smpirun")
            with open(stub, "w") as f:
                # The sweep's first call only asks for --help (its check of the flags): answered.
                f.write(f'#!/bin/sh\nfor a; do [ "$a" = --help ] && exit 0; done\n'
                        f'if [ ! -e {d}/progressed ]; then\n  touch {d}/progressed\n'
                        '  echo "  progress: simulated 0.50 s of ~2.00 s (ideal; none 3.00 s), 7 items done, host 30 s '
                        'elapsed, peak RSS 10 MiB"\n'
                        '  echo "  progress: simulated 1.25 s of ~2.00 s (ideal; none 3.00 s), 19 items done, host 60 s '
                        'elapsed, peak RSS 12 MiB"\nfi\necho Killed\nexit 137\n')
            os.chmod(stub, 0o755)
            out = os.path.join(d, "out")
            env = dict(os.environ, PATH=os.path.dirname(stub) + ":" + os.environ["PATH"])
            r = mcmclb("sweep", ROUNDS, "--launcher", "smpi", "--sim-binary", fake_sim_program(d), "--out", out,
                       env=env)
            self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
            rows = read_csv(os.path.join(out, "failures.csv"))
            self.assertEqual(len(rows), 4, rows)  # the killed point, then each relaunch of the rest
            columns = ("reason", "progress_simulated_s", "progress_items", "progress_host_s")
            self.assertEqual([rows[0][c] for c in columns],
                             ["the launch exited with status 137 while running it (it printed: Killed)", "1.25", "19",
                              "60"])
            for row in rows[1:]:
                self.assertEqual([row[c] for c in columns],
                                 ["the launch exited with status 137 while running it (it printed: Killed)", "", "",
                                  ""])


class Placement(unittest.TestCase):
    """Key placement: groups deals a dragonfly's nodes over its groups in the hostfile the sweep writes, so that
    consecutive nodes sit in different groups; scatter deals single ranks over the nodes. A platform without a
    dragonfly (groups), a real-MPI launcher or an unknown placement is refused in one line before anything is
    written. The stub smpirun records the hostfile and the placement it was given."""

    DRAGONFLY = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<!-- three groups of 2 chassis x 1 router x 2 nodes: nodes 0-3, 4-7, 8-11; <cluster topology="TORUS"> in a comment -->
<platform version="4.1">
  <zone id="z" routing="Full">
    <cluster id="df" topology="DRAGONFLY" topo_parameters="3,1;2,1;1,1;2" prefix="n" radical="0-11" suffix=".x"
             speed="1Gf" core="2" bw="1GBps" lat="1us"/>
  </zone>
</platform>
"""

    def test_groups_deal_the_hosts_over_the_dragonflys_groups(self):
        with tempfile.TemporaryDirectory() as d:
            hosts = "".join(f"n{i}.x:2\n" for i in range(12))
            self.assertEqual(self.launch_with_stub(d, self.DRAGONFLY, hosts, "groups"),
                             [f"n{i}.x:2" for i in (0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11)])

    def launch_with_stub(self, d, platform_xml, hosts, placement):
        """Sweeps ROUNDS with placement on platform_xml (hostfile hosts) through a stub smpirun that records the
        placement and hostfile it was given; returns the dealt hostfile's lines."""
        platform = os.path.join(d, "df.xml")
        with open(platform, "w") as f:
            f.write(platform_xml)
        with open(os.path.join(d, "df.hosts"), "w") as f:
            f.write(hosts)
        os.makedirs(os.path.join(d, "bin"), exist_ok=True)
        stub = os.path.join(d, "bin", "smpirun")
        with open(stub, "w") as f:
            f.write('#!/bin/sh\nfor a; do [ "$a" = --help ] && exit 0; done\n'
                    'while [ "$1" != -hostfile ]; do shift; done\n'
                    f'echo "$MCMCLB_PLACEMENT $2" >>{d}/launched\nexit 1\n')
        os.chmod(stub, 0o755)
        out = os.path.join(d, "out")
        env = dict(os.environ, PATH=os.path.dirname(stub) + ":" + os.environ["PATH"])
        r = mcmclb("sweep", ROUNDS, "--launcher", "smpi", "--platform", platform, "--sim-binary",
                   fake_sim_program(d), "--out", out, "--set", f"placement={placement}", "--points-per-launch", "4",
                   env=env)
        self.assertEqual(r.returncode, 3, r.stdout + r.stderr)  # the stub runs nothing
        dealt = os.path.join(out, f"df.{placement}.hosts")
        with open(os.path.join(d, "launched")) as f:
            self.assertEqual(f.readline().split(), [placement, dealt])
        with open(dealt) as f:
            return f.read().split()

    def test_scatter_deals_single_ranks_over_the_nodes_and_groups(self):
        # Every merge of neighbouring ranks then spans nodes and, on a dragonfly, groups: consecutive ranks sit on
        # nodes of different groups, each node's ranks one round apart.
        nodes = ["n0.x", "n4.x", "n8.x", "n1.x", "n5.x", "n9.x", "n2.x", "n6.x", "n10.x", "n3.x", "n7.x", "n11.x"]
        with tempfile.TemporaryDirectory() as d:
            hosts = "".join(f"n{i}.x:2\n" for i in range(12))
            self.assertEqual(self.launch_with_stub(d, self.DRAGONFLY, hosts, "scatter"), nodes + nodes)
        flat = self.DRAGONFLY.replace('topology="DRAGONFLY" topo_parameters="3,1;2,1;1,1;2"', 'topology="FAT_TREE" '
                                      'topo_parameters="2;2,2;1,2;1,1"').replace('radical="0-11"', 'radical="0-3"')
        with tempfile.TemporaryDirectory() as d:  # no dragonfly: the nodes in the hostfile's order
            self.assertEqual(self.launch_with_stub(d, flat, "n0.x:2\nn1.x:3\n\nn2.x\n", "scatter"),
                             ["n0.x", "n1.x", "n2.x", "n0.x", "n1.x", "n1.x"])
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "out")
            r = mcmclb("sweep", ROUNDS, "--launcher", "smpi", "--sim-binary", fake_sim_program(d), "--out", out,
                       "--set", "placement=round-robin", "--dry-run")
            self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
            self.assertEqual(r.stderr.strip().splitlines(), [r.stderr.strip()], r.stderr)
            self.assertIn("placement", r.stderr)
            self.assertIn("scatter", r.stderr)
            r = mcmclb("sweep", ROUNDS, "--launcher", "local", "--out", out, "--set", "placement=scatter", "--dry-run")
            self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
            self.assertIn("key placement: groups and scatter only with --launcher smpi", r.stderr)
            self.assertFalse(os.path.exists(out))

    def test_refused_without_a_dragonfly(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "out")
            for launcher in (["--launcher", "smpi", "--sim-binary", fake_sim_program(d)], ["--launcher", "local"]):
                r = mcmclb("sweep", ROUNDS, *launcher, "--out", out, "--set", "placement=groups", "--dry-run")
                self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                self.assertEqual(r.stderr.strip().splitlines(), [r.stderr.strip()], r.stderr)
                self.assertIn("key placement: groups", r.stderr)
                self.assertFalse(os.path.exists(out))
            self.assertIn("bgp.xml has 0 dragonfly clusters", mcmclb(
                "sweep", ROUNDS, "--launcher", "smpi", "--sim-binary", fake_sim_program(d), "--out", out, "--set",
                "placement=groups").stderr)


class SmpirunArguments(unittest.TestCase):
    """smpirun splits the program's arguments again (an unquoted shell expansion: blanks split, * ? [ expanded,
    --cfg=... taken for itself), so `--set 'T_ms=[1, 2]'` or an --out path with a space reached mcmclb-sim as two
    arguments and every point failed. The stub smpirun here handles the arguments exactly as smpirun does, then
    runs the program under mpiexec (the real build's mcmclb, behind a stand-in that names libsimgrid.so) instead of
    simulating it: what is under test is that each argument arrives whole."""

    def test_arguments_with_spaces_and_brackets_arrive_whole(self):
        with tempfile.TemporaryDirectory() as d:
            os.mkdir(os.path.join(d, "bin"))
            with open(os.path.join(d, "bin", "smpirun"), "w") as f:
                f.write('#!/bin/sh\nnp=1\nwhile [ $# -gt 0 ]; do\n  case "$1" in\n'
                        '    -np) np=$2; shift 2 ;;\n    -platform | -hostfile) shift 2 ;;\n'
                        '    -*) shift ;;\n    *) break ;;\n  esac\ndone\nprogram=$1; shift\n'
                        '# smpirun\'s own loop over the program\'s arguments, and its unquoted expansion\n'
                        'args=""\nfor a in "$@"; do\n  case "$a" in --cfg=* | --log=*) ;; *) args="${args:+$args }$a" ;;'
                        ' esac\ndone\nexec mpiexec -n "$np" "$program" $args\n')
            sim = os.path.join(d, "mcmclb-sim")
            with open(sim, "w") as f:
                f.write(f'#!/bin/sh\n# NEEDED libsimgrid.so.3\nexec {MCMCLB} "$@"\n')
            for path in (sim, os.path.join(d, "bin", "smpirun")):
                os.chmod(path, 0o755)
            study = os.path.join(d, "my study [1].yaml")
            with open(study, "w") as f:
                f.write("experiment: spaced\nnprocs: 1\nT_ms: 1\nworkload: {model: uniform, items: 2}\n")
            out = os.path.join(d, "out dir")
            env = dict(os.environ, PATH=os.path.join(d, "bin") + ":" + os.environ["PATH"])
            r = subprocess.run([MCMCLB, "sweep", study, "--launcher", "smpi", "--sim-binary", sim, "--out", out,
                                "--set", "T_ms=[1, 2]", "--set", "job.launcher_args=--cfg=x --y"], capture_output=True, text=True,
                               timeout=120, cwd=d, env=env)
            output = r.stdout + r.stderr
            self.assertNotIn("unexpected argument", output)
            # The real build records its rows as real MPI, so the simulated sweep finds none of its own (exit 3);
            # the rows themselves show what the program received.
            runs = read_csv(os.path.join(out, "runs.csv"))
            self.assertEqual(sorted((row["T_ms"], row["valid"]) for row in runs), [("1", "true"), ("2", "true")],
                             output)
            commands = {row["command_line"] for row in read_csv(os.path.join(out, "provenance.csv"))}
            self.assertEqual(len(commands), 1, commands)
            self.assertIn("--set 'T_ms=[1, 2]' --set 'job.launcher_args=--cfg=x --y'", commands.pop())
            # The same rows record the occupancy: one rank on this node, the CPUs this process may use at least.
            for row in read_csv(os.path.join(out, "provenance.csv")):
                self.assertEqual((row["ranks_per_node"], row["oversubscribed"]), ("1", "false"), row)
                self.assertGreaterEqual(int(row["cores_available"]), len(os.sched_getaffinity(0)), row)


class SlurmUnreachable(unittest.TestCase):
    """squeue and sinfo with no controller to answer retry for about 9 s before failing: `mcmclb status` waited
    that long before its lines (exit 3, nothing said about the missing points), and so did a Slurm dry run for the
    partition's MaxTime. Stubs that never answer stand for them here. Now status and a dry run wait at most
    MCMCLB_SLURM_WAIT_S (1 s here) and say what they waited for; status --launcher local asks no queue at all; and
    missing points with no failure recorded are named as such."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        os.mkdir(os.path.join(self.tmp, "bin"))
        for name in ("squeue", "sinfo"):
            path = os.path.join(self.tmp, "bin", name)
            with open(path, "w") as f:
                f.write("#!/bin/sh\nexec sleep 30\n")
            os.chmod(path, 0o755)
        self.env = dict(os.environ, PATH=os.path.join(self.tmp, "bin") + ":" + os.environ["PATH"],
                        MCMCLB_SLURM_WAIT_S="1")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def timed(self, *args):
        start = time.monotonic()
        r = subprocess.run([MCMCLB, *args], capture_output=True, text=True, timeout=60, cwd=ROOT, env=self.env)
        return r, time.monotonic() - start

    def test_status_says_what_it_waited_for(self):
        out = os.path.join(self.tmp, "out")
        r, seconds = self.timed("status", STUDY, "--out", out)
        self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
        self.assertLess(seconds, 4, r.stdout)
        self.assertIn("queue unknown: squeue did not answer within 1 s (is a Slurm controller reachable?", r.stdout)
        self.assertIn("  no valid row in runs.csv and no failure recorded: not run yet, or the rows were lost",
                      r.stdout)
        r, seconds = self.timed("status", STUDY, "--out", out, "--launcher", "local")
        self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
        self.assertLess(seconds, 1, r.stdout)
        self.assertIn("launch nprocs=2: 4 points, 0 done, 0 failed, 4 missing; no queue (--launcher local)", r.stdout)

    def test_dry_run_says_what_it_waited_for(self):
        jobs = os.path.join(self.tmp, "jobs")
        study = os.path.join(self.tmp, "s.yaml")  # no job.time_limit: the estimate asks for the partition's cap
        with open(study, "w") as f:
            f.write("experiment: s\nnprocs: [2, 3]\nT_ms: 1\n")
        r, seconds = self.timed("sweep", study, "--launcher", "slurm", "--dry-run", "--out",
                                os.path.join(self.tmp, "out"), "--jobs-dir", jobs)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertLess(seconds, 4, r.stdout)
        self.assertEqual(r.stdout.count("note: sinfo did not answer within 1 s (is a Slurm controller reachable?"), 1,
                         r.stdout)
        with open(os.path.join(jobs, "s-n3.sbatch")) as f:
            self.assertIn("the documented maximum; sinfo did not answer within 1 s", f.read())


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
                    text = (f.read().replace(MCMCLB, "@EXE@").replace(ROOT, "@CWD@").replace(jobs, "@JOBS@")
                            .replace(MPIEXEC_IN_JOB, "@MPIEXEC@"))
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


class SlurmPlan(unittest.TestCase):
    """The Slurm launcher's plan-level checks: job settings per launch, the #SBATCH trap, launcher options, time limits."""

    def study(self, text, *args, command="plan"):
        with tempfile.NamedTemporaryFile("w", suffix=".yaml", dir=ROOT) as f:
            f.write(text)
            f.flush()
            return mcmclb(command, os.path.relpath(f.name, ROOT), *args)

    def dry_run(self, text, *args):
        jobs = tempfile.mkdtemp()
        out = tempfile.mkdtemp()
        try:
            r = self.study(text, "--launcher", "slurm", "--dry-run", "--jobs-dir", jobs, "--out", out, *args,
                           command="sweep")
            scripts = {}
            for name in sorted(os.listdir(jobs)):
                with open(os.path.join(jobs, name)) as f:
                    scripts[name] = f.read()
            return r, scripts
        finally:
            shutil.rmtree(jobs)
            shutil.rmtree(out)

    def test_job_setting_varying_within_a_launch_is_an_error(self):
        r = self.study("nprocs: 2\nzip: {T_ms: [1, 2], job.time_limit: ['00:05:00', '00:10:00']}\n")
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertEqual(r.stderr.strip(), "mcmclb: key job.time_limit: one batch job runs every point of nprocs=2, "
                         "but point 0 has '00:05:00' and point 1 has '00:10:00' (vary job settings only together "
                         "with nprocs)")
        r = self.study("nprocs: 2\njob: {partition: [compute, debug]}\n")
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("mcmclb: key job.partition: one batch job runs every point of nprocs=2", r.stderr)
        r = self.study("nprocs: 2\njob: {partition: [compute, debug]}\n", "--launcher", "slurm", "--dry-run",
                       command="sweep")
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)

    def test_non_sbatch_extra_line_is_refused_and_setup_follows_the_directives(self):
        r = self.study("nprocs: 2\njob: {extra: ['module load mpich', '#SBATCH --qos=x']}\n")
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertEqual(r.stderr.strip(), "mcmclb: key job.extra: 'module load mpich' is not one '#SBATCH ...' "
                         "line (shell lines such as 'module load x' go in job.setup)")
        r, scripts = self.dry_run("nprocs: 2\njob: {setup: ['module load mpich', 'export A=1'], "
                                  "extra: ['#SBATCH --qos=x']}\n")
        self.assertEqual(r.returncode, 0, r.stderr)
        script = scripts[next(n for n in scripts if n.endswith(".sbatch"))].splitlines()
        last_directive = max(i for i, l in enumerate(script) if l.startswith("#SBATCH"))
        first_command = min(i for i, l in enumerate(script) if l and not l.startswith("#"))
        self.assertLess(last_directive, first_command, "every #SBATCH line before the first command")
        # Each setup line as written, in order, and its exit status checked before the next.
        at = [script.index("module load mpich"), script.index("export A=1")]
        self.assertLess(first_command, at[0])
        self.assertLess(at[0], at[1])
        for i in at:
            self.assertEqual(script[i + 1], 'mcmclb_status=$?; [ "$mcmclb_status" -eq 0 ] || exit "$mcmclb_status"')
        self.assertIn("#SBATCH --qos=x", script)

    def test_plan_and_scripts_use_the_study_launcher(self):  # defects 1 and 11
        r = mcmclb("plan", STUDY, "--set", "job.launcher=srun")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("launch nprocs=2, 4 points: srun --mpi=pmi2 -n 2 ", r.stdout)
        r = mcmclb("plan", STUDY, "--set", "job.launcher=srun", "--set", "job.launcher_args=--mpi=pmi2 --cpu-bind=cores")
        self.assertIn("launch nprocs=2, 4 points: srun --mpi=pmi2 --cpu-bind=cores -n 2 ", r.stdout)
        for config in ("paper-fig1.yaml", "paper-fig2.yaml"):
            r = mcmclb("plan", os.path.join("configs", config))
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn(": srun --mpi=pmi2 -n ", r.stdout, config)

    def test_mpiexec_is_the_builds_own(self):
        """job.launcher: mpiexec ran whichever mpiexec came first on the node's PATH (with MPICH and Open MPI
        installed, Debian's alternatives point it at Open MPI), whatever library mcmclb was linked against."""
        text = "nprocs: 2\nT_ms: 1\nworkload: {model: uniform, items: 1}\nbalancer: none\njob: {launcher: mpiexec}\n"
        r = self.study(text)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("launch nprocs=2, 1 points: " + MPIEXEC_IN_JOB + " -n 2 " + MCMCLB + " run ", r.stdout)
        r, scripts = self.dry_run(text)
        self.assertEqual(r.returncode, 0, r.stderr)
        script = scripts[next(n for n in scripts if n.endswith(".sbatch"))]
        self.assertIn("\nexport MCMCLB_LAUNCHER=" + (f"'{MPIEXEC_IN_JOB}'" if " " in MPIEXEC_IN_JOB else MPIEXEC_IN_JOB) +
                      "\n", script)
        self.assertIn("\n" + MPIEXEC_IN_JOB + " -n 2 " + MCMCLB + " run ", script)

    def test_time_limit_estimated_from_the_workload(self):
        # cyclic scale 2 period 4, G = 1, 2 ranks: chains of 0 and 2 items, so 2 x T_ms per point (no balancing).
        text = "nprocs: 2\nworkload: {model: cyclic, scale: 2, period: 4}\nbalancer: [none, async]\nT_ms: %s\n"
        r, scripts = self.dry_run(text % "60000")  # 2 points x 120 s: 2 x 240 s + 2 x 10 s = 500 s -> 9 min
        self.assertEqual(r.returncode, 0, r.stderr)
        script = scripts[next(n for n in scripts if n.endswith(".sbatch"))]
        self.assertIn("#SBATCH --time=00:09:00\n", script)
        self.assertIn("# time limit: estimated (2 x 4 min 00 s expected + 10 s per point, at least 5 min, at most ",
                      script)
        r, scripts = self.dry_run(text % "1")  # tiny: the floor
        self.assertIn("#SBATCH --time=00:05:00\n", scripts[next(n for n in scripts if n.endswith(".sbatch"))])
        r, scripts = self.dry_run(text % "1" + "job: {time_limit: '00:42:00'}\n")
        self.assertIn("#SBATCH --time=00:42:00\n", scripts[next(n for n in scripts if n.endswith(".sbatch"))])

    def test_status_without_slurm(self):  # mcmclb status reads the results folder
        with tempfile.TemporaryDirectory() as out:
            env = dict(os.environ, PATH="/usr/bin:/bin")
            env["PATH"] = ":".join(d for d in env["PATH"].split(":") if not os.path.exists(os.path.join(d, "squeue")))
            r = mcmclb("status", STUDY, "--out", out, env=env)
            self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
            self.assertIn("launch nprocs=3: 3 points, 0 done, 0 failed, 3 missing; squeue not on PATH", r.stdout)
            self.assertIn("study small in " + out + ": 0 done, 0 failed, 7 missing (not complete)", r.stdout)
        r = mcmclb("status", STUDY, "--launch", "x")
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stderr.strip(),
                         "mcmclb: --launch: 'x' is not a rank count (allowed: an integer in [1, 2147483647])")

    def test_scripts_read_a_snapshot_taken_at_submit_time(self):
        r, scripts = self.dry_run("nprocs: 2\nT_ms: [1, 2]\n")
        self.assertEqual(r.returncode, 0, r.stderr)
        snapshots = [n for n in scripts if n.endswith(".yaml")]
        self.assertEqual(len(snapshots), 1, scripts.keys())
        self.assertIn("T_ms: [1, 2]\n", scripts[snapshots[0]])
        script = scripts[next(n for n in scripts if n.endswith(".sbatch"))]
        self.assertRegex(script, re.escape(f"/{snapshots[0]}") + " --points (0,1|1,0) ")  # in the drawn order


class SlurmHostile(unittest.TestCase):
    """Everything a study or a flag puts into a batch script is checked and quoted for where it lands: a shell
    word, an #SBATCH value, a file-name pattern; nothing from a study runs as a command."""

    study = SlurmPlan.study
    dry_run = SlurmPlan.dry_run

    def refused(self, r, fragment):
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn(fragment, r.stderr)

    def test_launcher_args_cannot_run_commands(self):
        for args in ("--mpi=pmi2 $(touch /tmp/x)", "--mpi=pmi2 `id`", "--mpi=pmi2; id", "--mpi=pmi2 > /tmp/x",
                     "--mpi=pmi2 'unbalanced", "--export=\"A B\"", "a|b", "a&b", "x\\y"):
            text = "nprocs: 2\njob: {launcher: srun, launcher_args: %s}\n" % json_string(args)
            self.refused(self.study(text), "key job.launcher_args: ")
            r, scripts = self.dry_run(text)
            self.refused(r, "key job.launcher_args: ")
            self.assertEqual(scripts, {}, "nothing written")
        r, scripts = self.dry_run("nprocs: 2\njob: {launcher: srun, launcher_args: '--mpi=pmi2 --cpu-bind=cores'}\n")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("\nsrun --mpi=pmi2 --cpu-bind=cores -n 2 ", scripts[sbatch(scripts)])

    def test_srun_plugin_per_study(self):
        """job.srun_mpi names the site's plugin, `site` leaves it to the site's MpiDefault (no --mpi), and the dry
        run's script shows which; a plugin given twice, or not a plain name, is one line and exit 2. Two nodes of
        two tasks: --nodes=2 in the header, one srun over both."""
        base = "nprocs: 4\njob: {launcher: srun, tasks_per_node: 2%s}\n"
        for setting, line in (("", "\nsrun --mpi=pmi2 -n 4 "), (", srun_mpi: cray_shasta", "\nsrun --mpi=cray_shasta -n 4 "),
                              (", srun_mpi: site", "\nsrun -n 4 "),
                              (", srun_mpi: pmix, launcher_args: '--cpu-bind=cores'", "\nsrun --mpi=pmix --cpu-bind=cores -n 4 ")):
            with self.subTest(setting=setting):
                r, scripts = self.dry_run(base % setting)
                self.assertEqual(r.returncode, 0, r.stderr)
                script = scripts[sbatch(scripts)]
                self.assertIn(line, script)
                self.assertIn("\n#SBATCH --nodes=2\n", script)
                self.assertIn("\n#SBATCH --ntasks-per-node=2\n", script)
                self.assertIn(line.strip(), r.stdout, "the dry run prints what will run")
        for setting, fragment in ((", srun_mpi: pmix, launcher_args: '--mpi=pmi2'", "key job.srun_mpi: 'pmix' while "),
                                  (", srun_mpi: 'pmi2 --x'", "key job.srun_mpi: 'pmi2 --x' is not allowed"),
                                  (", srun_mpi: ''", "key job.srun_mpi: '' is not allowed")):
            with self.subTest(setting=setting):
                r, scripts = self.dry_run(base % setting)
                self.refused(r, fragment)
                self.assertEqual(scripts, {}, "nothing written")

    def test_setup_lines_are_whole_lines_without_directives(self):
        for line, fragment in (("module load x\n#SBATCH --partition=evil", "key job.setup: "),
                               ("#SBATCH --partition=evil", "key job.setup: "),
                               ("export A='unbalanced", "is not a complete shell command")):
            r, scripts = self.dry_run("nprocs: 2\njob: {setup: [%s]}\n" % json_string(line))
            self.refused(r, fragment)
            self.assertEqual(scripts, {})

    def test_out_with_a_line_break_percent_or_leading_dash(self):
        r, scripts = self.dry_run("nprocs: 2\njob: {time_limit: '00:05:00'}\n", "--out", "x\n#SBATCH --partition=evil")
        self.refused(r, "--out: ")
        self.assertEqual(scripts, {})
        with tempfile.TemporaryDirectory() as work:
            for out, mkdir, output in (("r%j", "mkdir -p -- 'r%j'", "#SBATCH --output=r%%j/slurm-%x-%j.out"),
                                       ("-rf", "mkdir -p -- ./-rf", "#SBATCH --output=./-rf/slurm-%x-%j.out"),
                                       ("a b", "mkdir -p -- 'a b'", "#SBATCH --output=\"a b/slurm-%x-%j.out\"")):
                r = mcmclb("sweep", os.path.join(ROOT, STUDY), "--launcher", "slurm", "--dry-run", "--jobs-dir", work,
                           "--out", out)
                self.assertEqual(r.returncode, 0, r.stderr)
                path = os.path.join(work, "small-n2.sbatch")
                with open(path) as f:
                    lines = f.read().splitlines()
                self.assertIn(mkdir, lines)
                self.assertIn(output, lines)
                self.assertEqual(subprocess.run(["bash", "-n", path]).returncode, 0)
        r = mcmclb("sweep", STUDY, "--launcher", "slurm", "--dry-run", "--out", 'a"b')
        self.refused(r, "--out: ")

    def test_hostile_job_values_and_jobs_dir(self):
        for key, value in (("job.partition", "a b"), ("job.account", "x;id"),
                           ("job.tasks_per_node", "-1"), ("job.tasks_per_node", "99999999999"),
                           ("job.time_limit", "1:2:3:4"), ("job.time_limit", "$(id)"),
                           ("job.extra", "['#SBATCH --qos=x', 'id']"), ("job.extra", "['#SBATCH --wrap=id']"),
                           ("job.time_limit", "99999999999999999999-00"), ("job.time_limit", "9" * 400),
                           ("job.time_limit", "366-00:00:00")):
            r, scripts = self.dry_run("nprocs: 2\n", "--set", f"{key}={value}")
            self.refused(r, "key " + key)
            self.assertEqual(scripts, {})
        with tempfile.NamedTemporaryFile() as f:
            r = mcmclb("sweep", STUDY, "--launcher", "slurm", "--dry-run", "--jobs-dir", f.name)
            self.refused(r, "--jobs-dir: ")
        r = mcmclb("sweep", STUDY, "--launcher", "slurm", "--dry-run", "--jobs-dir", "")
        self.refused(r, "--jobs-dir: empty")

    def test_huge_nprocs_and_time_limit_overflow(self):
        # 2^31 - 1 ranks: the estimate neither stores a chain per rank nor overflows; it is capped.
        text = ("nprocs: 2147483647\nworkload: {model: cyclic, scale: 1099511627776, period: 2147483647}\n"
                "T_ms: 3600000\n")
        r, scripts = self.dry_run(text)
        self.assertEqual(r.returncode, 0, r.stderr)
        script = scripts[sbatch(scripts)]
        self.assertRegex(script, r"#SBATCH --time=\d+-\d\d:\d\d:00\n")
        self.assertIn(": capped, the job resumes where it stopped when resubmitted", script)
        self.assertNotIn("-9223372036854775808", script)

    def test_queue_tag_names_the_study_and_the_canonical_folder(self):
        with tempfile.TemporaryDirectory() as work:
            os.mkdir(os.path.join(work, "res"))
            os.symlink(os.path.join(work, "res"), os.path.join(work, "link"))
            tags = {}
            for t_ms, out in ((1, "res"), (2, "res"), (1, "res/"), (1, "link"), (1, os.path.join(work, "res"))):
                study = os.path.join(work, "s.yaml")
                with open(study, "w") as f:
                    f.write("experiment: s\nnprocs: 2\nT_ms: %d\n" % t_ms)
                r = subprocess.run([MCMCLB, "sweep", study, "--launcher", "slurm", "--dry-run", "--jobs-dir", work,
                                    "--out", out], capture_output=True, text=True, timeout=60, cwd=work)
                self.assertEqual(r.returncode, 0, r.stderr)
                with open(os.path.join(work, "s-n2.sbatch")) as f:
                    tags[(t_ms, out)] = [l for l in f.read().splitlines() if l.startswith("#SBATCH --comment=")][0]
            self.assertNotEqual(tags[(1, "res")], tags[(2, "res")], "another study into the same folder")
            self.assertEqual(len({tags[k] for k in tags if k[0] == 1}), 1, tags)
            self.assertIn(os.path.realpath(os.path.join(work, "res")) + ":n2:", tags[(1, "link")])

    def test_no_job_submitted_says_so(self):
        # sbatch accepts the scripts (--test-only) and then refuses every submission: nothing is queued, so the
        # sweep must not tell the user to follow jobs with mcmclb status.
        with tempfile.TemporaryDirectory() as d:
            os.mkdir(os.path.join(d, "bin"))
            for name, body in (("sbatch", 'case "$1" in --test-only) exit 0;; esac\n'
                                          'echo "sbatch: error: Batch job submission failed: no" >&2; exit 1\n'),
                               ("squeue", "exit 0\n"), ("sinfo", "exit 1\n")):
                with open(os.path.join(d, "bin", name), "w") as f:
                    f.write("#!/bin/sh\n" + body)
                os.chmod(os.path.join(d, "bin", name), 0o755)
            env = dict(os.environ, PATH=os.path.join(d, "bin") + ":" + os.environ["PATH"])
            r = mcmclb("sweep", STUDY, "--launcher", "slurm", "--out", os.path.join(d, "out"), "--jobs-dir",
                       os.path.join(d, "jobs"), env=env)
            self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
            self.assertNotIn("follow them", r.stdout)
            self.assertIn("sweep small: no job submitted (2 failed, see above)", r.stdout)

    def test_simulation_inputs_checked_before_any_launch(self):
        with tempfile.TemporaryDirectory() as d:
            for flag, value in (("--platform", ""), ("--sim-binary", ""), ("--smpi-flags", "")):
                r = mcmclb("sweep", STUDY, "--launcher", "smpi", "--dry-run", flag, value, "--out", d)
                self.refused(r, flag + ": empty")
            r = mcmclb("sweep", STUDY, "--launcher", "smpi", "--dry-run", "--sim-binary", os.path.join(d, "none"),
                       "--out", os.path.join(d, "x"))
            self.refused(r, "--sim-binary: " + os.path.join(d, "none") + " does not exist")
            env = dict(os.environ, PATH=os.path.dirname(fake_sim_program(d, "smpirun")) + ":" + os.environ["PATH"])
            for binary in ("/bin/true", MCMCLB):  # not simulation programs: refused before any launch
                for dry in ((), ("--dry-run",)):
                    r = mcmclb("sweep", STUDY, "--launcher", "smpi", *dry, "--sim-binary", binary, "--out",
                               os.path.join(d, "x"), env=env)
                    self.refused(r, "--sim-binary: " + binary + " is not a simulation build's program")
            self.assertFalse(os.path.exists(os.path.join(d, "x")), "refused before the output folder is made")
            platform = os.path.join(d, "p.xml")
            shutil.copy(os.path.join(ROOT, "configs", "platforms", "bgp.xml"), platform)
            r = mcmclb("status", STUDY, "--launcher", "smpi", "--platform", platform, "--out", d)
            self.refused(r, "--platform: " + platform + " and its hostfile ")
            # More simulated ranks than the hostfile places: SimGrid would wrap around and put several ranks on one
            # core without a word. The study runs 2 and 3 ranks; "node-1:1" places one, a blank line none.
            with open(os.path.join(d, "p.hosts"), "w") as f:
                f.write("node-0\n\nnode-1:1\n")
            for dry in ((), ("--dry-run",)):
                r = mcmclb("sweep", STUDY, "--launcher", "smpi", *dry, "--platform", platform, "--out",
                           os.path.join(d, "x"), env=env)
                self.refused(r, "nprocs: 3 simulated ranks, but " + os.path.join(d, "p.hosts") + " places 2 "
                             "(allowed: at most 2 on this platform")
            self.assertFalse(os.path.exists(os.path.join(d, "x")), "refused before the output folder is made")
            # The script that calls smpirun itself counts the same way (configs/platforms/smpi-flags.bash).
            r = subprocess.run([os.path.join(ROOT, "plots", "fig1-sim.sh"), "3", os.path.join(d, "f1")],
                               capture_output=True, text=True, timeout=60, env=dict(os.environ, PLATFORM=platform))
            self.refused(r, "P = 3 simulated ranks, but " + os.path.join(d, "p.hosts") + " places 2 (allowed: at most 2")
            self.assertFalse(os.path.exists(os.path.join(d, "f1")), "refused before the output folder is made")

    def test_a_platform_or_hostfile_that_does_not_match_is_refused(self):
        # Before this check, a platform that is not XML failed inside SimGrid's parser in the first simulation, and a
        # hostfile placing 8 ranks on each 2-core node was simulated without a word. Each is one line now, exit 2,
        # before the output folder is made, with and without --dry-run. The study runs 2 and 3 ranks.
        with tempfile.TemporaryDirectory() as d:
            env = dict(os.environ, PATH=os.path.dirname(fake_sim_program(d, "smpirun")) + ":" + os.environ["PATH"])
            sim = fake_sim_program(d)
            with open(os.path.join(ROOT, "configs", "platforms", "bgp.xml")) as f:
                bgp = f.read()
            cases = (("text.xml", "not a platform, only text\n", "node-0\nnode-1\nnode-2\n",
                      "is not a SimGrid platform"),
                     ("other.xml", bgp, "node-0\nnowhere-1\nnode-2\n", "names nowhere-1, which "),
                     ("small.xml", bgp.replace('core="4"', 'core="2"'), "node-0:8\nnode-1:8\n",
                      "places 3 ranks on node-0, which has 2 core(s)"))
            for name, xml, hosts, fragment in cases:
                platform = os.path.join(d, name)
                with open(platform, "w") as f:
                    f.write(xml)
                with open(platform[:-4] + ".hosts", "w") as f:
                    f.write(hosts)
                for dry in ((), ("--dry-run",)):
                    with self.subTest(platform=name, dry=dry):
                        r = mcmclb("sweep", STUDY, "--launcher", "smpi", *dry, "--platform", platform, "--sim-binary",
                                   sim, "--out", os.path.join(d, "x"), env=env)
                        self.refused(r, fragment)
                        self.assertFalse(os.path.exists(os.path.join(d, "x")), "refused before the folder is made")
            # The stock platforms and their hostfiles pass.
            for stock in ("bgp", "fattree", "slingshot"):
                r = mcmclb("sweep", STUDY, "--launcher", "smpi", "--dry-run", "--platform",
                           os.path.join(ROOT, "configs", "platforms", stock + ".xml"), "--sim-binary", sim, "--out",
                           os.path.join(d, stock), env=env)
                self.assertEqual(r.returncode, 0, stock + ": " + r.stdout + r.stderr)

    def test_simulations_beyond_the_hosts_mapping_limit_are_refused(self):
        # SimGrid 3.32 gives each simulated rank's stack a guard page, two memory mappings per rank; past the host's
        # vm.max_map_count it dies at simulated time 0 with a backtrace. 65,536 ranks (slingshot.xml holds them) need
        # 2 x 65,536 + 512; the expectation comes from this host's own limit, so both outcomes are real ones (the
        # Linux default, 65,530, refuses).
        with open("/proc/sys/vm/max_map_count") as f:
            limit = int(f.read())
        slingshot = os.path.join(ROOT, "configs", "platforms", "slingshot.xml")
        with tempfile.TemporaryDirectory() as d:
            sim = fake_sim_program(d)
            guardless = os.path.join(d, "guardless.cfg")
            with open(os.path.join(ROOT, "configs", "platforms", "smpi.cfg")) as f, open(guardless, "w") as g:
                g.write(f.read() + "--cfg=contexts/guard-size:0\n")
            for flags in ((), ("--smpi-flags", guardless)):
                r = mcmclb("sweep", "configs/paper-fig2.yaml", "--launcher", "smpi", "--dry-run", "--platform",
                           slingshot, "--sim-binary", sim, *flags, "--set", "nprocs=[65536]", "--set",
                           "balancer=[none]", "--set", "method=[intercomm]", "--set", "reps=1", "--out",
                           os.path.join(d, "x"))
                if flags or 2 * 65536 + 512 <= limit:
                    self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
                    continue
                allowed = f"(allowed: at most {(limit - 512) // 2} ranks here; raise it: sysctl -w vm.max_map_count="
                self.refused(r, f"nprocs: 65536 simulated ranks need about 131584 memory mappings (SimGrid gives "
                             f"each rank's stack a guard page: two mappings per rank), but /proc/sys/vm/max_map_count "
                             f"allows {limit} {allowed}")
                # The script that calls smpirun itself words it the same way (configs/platforms/smpi-flags.bash).
                r = subprocess.run([os.path.join(ROOT, "plots", "fig1-sim.sh"), "65536", os.path.join(d, "f1")],
                                   capture_output=True, text=True, timeout=60, env=dict(os.environ, PLATFORM=slingshot))
                self.refused(r, "P = 65536 simulated ranks need about 131584 memory mappings")
                self.assertIn(allowed, r.stderr)
            self.assertFalse(os.path.exists(os.path.join(d, "x")), "refused before the output folder is made")
            self.assertFalse(os.path.exists(os.path.join(d, "f1")), "refused before the output folder is made")

    def test_simulations_that_would_not_fit_in_memory_together_are_refused(self):
        # Each simulated rank holds a stack and state (mcmclb/simulation_cost.hpp: 64 MiB and 200 KiB a rank):
        # 40 simulations of 16,384 ranks at once need about 128 GiB. The sweep refuses before any starts, as advise
        # does, instead of leaving the kernel to kill one of them. A dry run starts nothing and is not refused.
        slingshot = os.path.join(ROOT, "configs", "platforms", "slingshot.xml")
        each = 64 * 2 ** 20 + 200 * 1024 * 16384
        with tempfile.TemporaryDirectory() as d:
            sim = fake_sim_program(d)
            args = ("sweep", "configs/paper-fig2.yaml", "--launcher", "smpi", "--platform", slingshot, "--sim-binary",
                    sim, "--set", "nprocs=[16384]", "--set", "balancer=[none]", "--set", "method=[intercomm]",
                    "--set", "reps=40", "--jobs", "40", "--out", os.path.join(d, "x"))
            r = mcmclb(*args)
            self.refused(r, "--jobs: 40 simulations at once need about %.3g GiB (%.3g GiB each at the largest), and "
                         "this host has " % (40 * each / 2 ** 30, each / 2 ** 30))
            self.assertIn("(allowed: fewer --jobs, or fewer ranks in the study)", r.stderr)
            self.assertFalse(os.path.exists(os.path.join(d, "x")), "refused before the output folder is made")
            r = mcmclb(*args, "--dry-run")
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)


def json_string(text):
    import json
    return json.dumps(text)


def sbatch(scripts):
    return next(n for n in scripts if n.endswith(".sbatch"))


if __name__ == "__main__":
    unittest.main()
