# SPDX-License-Identifier: BSD-3-Clause
"""Bad input, as a demanding user sees it: every bad input, bad output path and foreign results folder is refused
with exit code 2 and ONE printable line on stderr (rank 0 only, at 1 and 3 ranks) that names the key, file or flag,
BEFORE any work starts and without touching existing results; nothing hangs (every launch has a time limit, and a
launch that reaches it is a failure, killed with all its ranks); no study text reaches a shell.

Each test names the defect it covers, as it was seen once (a section number in the docstring groups them: §1 hangs
and ranks left waiting, §2 concurrent writers, §3 output paths, and so on). Runs in a temporary working
directory, so a failing build cannot write results/ or `pwned` into the checkout."""
import csv
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest

import proc_tree
from test_cli import RUNS_HEADER

MCMCLB = os.path.realpath(os.environ["MCMCLB_BIN"])
COMMBENCH = os.path.realpath(os.environ["MCMCLB_COMMBENCH"])
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.realpath(os.path.join(HERE, ".."))
FIX = os.path.join(HERE, "fixtures", "inputs")
QUICK = os.path.join(ROOT, "configs", "quick.yaml")

TIMEOUT_S = 60  # no launch here needs more than a few seconds once its checks come first: past this it hangs
FAST_S = 5.0  # "fails before any work": the slow fixtures work for 12 s or more
RANK_COUNTS = ("1", "3")


def fixture(name):
    return os.path.join(FIX, name)


def snapshot(folder):
    """{relative path: bytes} of every file under folder (or {} when it does not exist)."""
    files = {}
    for base, _, names in os.walk(folder):
        for name in names:
            path = os.path.join(base, name)
            with open(path, "rb") as f:
                files[os.path.relpath(path, folder)] = f.read()
    return files


def take_pwned(cwd):
    """Every file named pwned under cwd or in the checkout's top folders, removed (so one subtest's injection
    is not blamed on the next)."""
    found = [os.path.join(base, "pwned") for base, _, names in os.walk(cwd) if "pwned" in names]
    found += [p for p in (os.path.join(ROOT, "pwned"), os.path.join(HERE, "pwned")) if os.path.exists(p)]
    for p in found:
        os.remove(p)
    return found


class InputCase(unittest.TestCase):
    """A temporary working directory per test, the launch helpers and the one-line-error assertion."""

    def setUp(self):
        self._dir = tempfile.TemporaryDirectory(prefix="mcmclb-inputs-")
        self.cwd = self._dir.name

    def tearDown(self):
        for base, dirs, _ in os.walk(self.cwd):  # undo chmods, so cleanup can remove everything
            for d in dirs:
                os.chmod(os.path.join(base, d), 0o755)
        self._dir.cleanup()

    def path(self, *parts):
        return os.path.join(self.cwd, *parts)

    def fresh(self, name):
        """A path under the working directory that no earlier subtest used (name-1, name-2, ...)."""
        self._fresh = getattr(self, "_fresh", 0) + 1
        return self.path(f"{name}-{self._fresh}")

    def launch(self, command, env=None, timeout=TIMEOUT_S, cwd=None):
        r = proc_tree.run(command, timeout, cwd=cwd or self.cwd, env=env)
        if r.timed_out:
            self.fail(f"HANG: {' '.join(command)} was still running after {timeout} s (killed with all its "
                      f"processes)\nstdout: {r.stdout[-2000:]!r}\nstderr: {r.stderr[-2000:]!r}")
        return r

    def mcmclb(self, *args, ranks=None, env=None, cwd=None):
        """mcmclb ARGS, under mpiexec -n ranks for run/--help, plain for plan and sweep; in cwd (default: the test's
        temporary working directory)."""
        prefix = ["mpiexec", "-n", ranks] if ranks else []
        return self.launch(prefix + [MCMCLB, *args], env=env, cwd=cwd)

    def commbench(self, *args, ranks="1"):
        return self.launch(["mpiexec", "-n", ranks, COMMBENCH, *args])

    def assert_one_line_error(self, r, *fragments, program="mcmclb", within_s=None):
        """Exit 2; stderr is exactly one printable line `program: ...` containing each fragment; nothing on stdout;
        and, when within_s is given, the command ended within that many seconds (the check came before the work)."""
        shown = f"\nexit {r.returncode}, {r.seconds:.1f} s\nstdout: {r.stdout[-1500:]!r}\nstderr: {r.stderr[-1500:]!r}"
        self.assertEqual(r.returncode, 2, "exit code" + shown)
        lines = [l for l in r.stderr.split(b"\n") if l.strip()]
        self.assertEqual(len(lines), 1, "stderr must be ONE line, printed once (rank 0 only)" + shown)
        try:
            line = lines[0].decode("utf-8")
        except UnicodeDecodeError:
            self.fail("stderr is not valid UTF-8 (raw bytes echoed?)" + shown)
        self.assertTrue(line.isprintable(), "stderr holds control characters" + shown)
        self.assertTrue(line.startswith(program + ": "), "stderr names the program first" + shown)
        for fragment in fragments:
            self.assertIn(fragment, line, shown)
        self.assertEqual(r.stdout, b"", "nothing on stdout before the error" + shown)
        if within_s is not None:
            self.assertLess(r.seconds, within_s, "the check must come before any work" + shown)


# ---- 1. A foreign runs.csv under --resume hangs every rank but 0.


class ForeignResults(InputCase):
    def test_foreign_runs_csv_under_resume(self):
        """§1: only rank 0 read the file and threw; the others waited in MPI_Bcast forever."""
        out = self.path("foreign")
        shutil.copytree(fixture("foreign"), out)
        before = snapshot(out)
        for ranks in RANK_COUNTS:
            with self.subTest(ranks=ranks):
                r = self.mcmclb("run", fixture("tiny.yaml"), "--resume", "--out", out, ranks=ranks)
                self.assert_one_line_error(r, os.path.join(out, "runs.csv"))
                self.assertEqual(snapshot(out), before, "the folder is left as it was")


# ---- 2. Two writers in one output folder: each append rewrote the whole file, so the last writer won.


class ConcurrentWriters(InputCase):
    def test_two_launches_into_one_folder_lose_nothing(self):
        """§2: two launches appending to one folder at once kept 58-59 of 60 runs.csv rows and lost rank rows.
        Here two 1-rank launches of 30 runs of 1 ms each (a commit every few ms from each) write one folder."""
        study, out = self.path("many.yaml"), self.path("shared")
        with open(study, "w") as f:
            f.write("experiment: many\nT_ms: 1\nworkload: {model: uniform, items: 1}\nbalancer: none\nreps: 30\n")
        command = ["mpiexec", "-n", "1", MCMCLB, "run", study, "--out", out]
        procs = [subprocess.Popen(command, cwd=self.cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                  start_new_session=True) for _ in range(2)]
        try:
            for p in procs:
                _, err = p.communicate(timeout=TIMEOUT_S)
                self.assertEqual(p.returncode, 0, err)
        except subprocess.TimeoutExpired:
            self.fail(f"HANG: two concurrent launches into one folder still running after {TIMEOUT_S} s")
        finally:
            for p in procs:
                if p.poll() is None:  # only a launch still running: a reaped pid may belong to someone else now
                    proc_tree.kill_tree(p)
        tables = {}
        for name in ("runs.csv", "ranks.csv", "events.csv", "provenance.csv"):
            with open(os.path.join(out, name), newline="") as f:
                tables[name] = list(csv.DictReader(f))
        ids = [r["run_id"] for r in tables["runs.csv"]]
        self.assertEqual(len(ids), 60, "runs.csv rows: 30 from each launch")
        self.assertEqual(len(set(ids)), 60)
        for name in ("ranks.csv", "events.csv", "provenance.csv"):
            self.assertEqual(sorted(r["run_id"] for r in tables[name]), sorted(ids), f"{name}: one row per run")


# ---- 3. Output problems found only after the work, with exit 1 and an MPICH abort.


class OutputChecked(InputCase):
    def bad_outs(self):
        """(label, --out value, fragment the error must name)."""
        unwritable = "/sys"  # root may write anywhere except in pseudo file systems like sysfs
        if os.geteuid() != 0:
            unwritable = self.path("readonly")
            os.mkdir(unwritable)
            os.chmod(unwritable, stat.S_IRUSR | stat.S_IXUSR)
        return [("not creatable", "/proc/nope", "/proc/nope"), ("a regular file", "/etc/hostname", "/etc/hostname"),
                ("unwritable folder", unwritable, unwritable)]

    def test_run_out_checked_before_the_work(self):
        """§3: run --out /proc/nope, a file, an unwritable folder: the run went to the end, then aborted (exit 1)."""
        for label, out, fragment in self.bad_outs():
            for ranks in RANK_COUNTS:
                with self.subTest(out=label, ranks=ranks):
                    r = self.mcmclb("run", fixture("slow.yaml"), "--out", out, ranks=ranks)
                    self.assert_one_line_error(r, "--out", fragment, within_s=FAST_S)

    def test_experiment_name_too_long_for_a_folder(self):
        """§3: an experiment name over 255 characters (the default output folder results/NAME) failed at the end."""
        config = self.path("long.yaml")
        with open(config, "w") as f:
            f.write("experiment: " + "n" * 300 + "\n")
            with open(fixture("slow.yaml")) as slow:
                f.write("".join(l for l in slow if not l.startswith("experiment:")))
        for ranks in RANK_COUNTS:
            with self.subTest(ranks=ranks):
                r = self.mcmclb("run", config, ranks=ranks)
                self.assert_one_line_error(r, "experiment", within_s=FAST_S)
                self.assertEqual(snapshot(self.path("results")), {}, "no results written")

    def test_sweep_out_checked_before_any_launch(self):
        """§3: sweep --out /proc/x ran all 30 points of configs/quick.yaml and threw every result away (exit 1).
        (nprocs set to 1 and 2: this 2-core test machine is shared; the check must not depend on the rank count.)"""
        target = self.path("a-file")
        with open(target, "w") as f:
            f.write("not a folder\n")
        for label, out in (("not creatable", "/proc/x"), ("a regular file", target)):
            with self.subTest(out=label):
                r = self.mcmclb("sweep", QUICK, "--set", "nprocs=[1, 2]", "--launcher", "local", "--out", out)
                self.assert_one_line_error(r, "--out", out, within_s=FAST_S)
                with open(target) as f:
                    self.assertEqual(f.read(), "not a folder\n")
                self.assertEqual(sorted(os.listdir(self.cwd)), ["a-file"], "no results anywhere")

    def test_commbench_out_checked_before_the_benchmark(self):
        """§3: mcmclb-commbench --out /proc/nope/x.csv ran the whole benchmark first."""
        # 30 repetitions of create and of free, each sized to last about 0.25 s: some 15 s of benchmark.
        slow = ["--methods", "split", "--sizes", "1", "--reps", "30", "--rep-time", "0.25"]
        for ranks in RANK_COUNTS:
            with self.subTest(ranks=ranks):
                r = self.commbench(*slow, "--out", "/proc/nope/x.csv", ranks=ranks)
                self.assert_one_line_error(r, "--out", "/proc/nope/x.csv", program="mcmclb-commbench",
                                           within_s=FAST_S)

    def test_slurm_jobs_dir_is_a_file(self):
        """§3: sweep --launcher slurm --dry-run --jobs-dir /etc/hostname exited 1."""
        for jobs in ("/etc/hostname", "/proc/x"):
            with self.subTest(jobs_dir=jobs):
                r = self.mcmclb("sweep", fixture("study-1rank.yaml"), "--launcher", "slurm", "--dry-run",
                                "--jobs-dir", jobs)
                self.assert_one_line_error(r, "--jobs-dir", jobs)
                self.assertEqual(os.listdir(self.cwd), [], "no output folder made for a refused sweep")


# ---- 4. A results folder of an older version: the header was checked after each point.


class OlderHeader(InputCase):
    def setUp(self):
        super().setUp()
        self.out = self.path("old")
        shutil.copytree(fixture("old-header"), self.out)
        self.before = snapshot(self.out)
        with open(os.path.join(self.out, "runs.csv")) as f:
            assert f.readline().strip() != RUNS_HEADER

    def test_run_refuses_an_older_folder_before_work(self):
        """§4: run computed every point and then threw it away; ranks.csv and events.csv got orphan rows."""
        for resume in ((), ("--resume",)):
            for ranks in RANK_COUNTS:
                with self.subTest(ranks=ranks, resume=bool(resume)):
                    r = self.mcmclb("run", fixture("slow.yaml"), "--out", self.out, *resume, ranks=ranks)
                    self.assert_one_line_error(r, os.path.join(self.out, "runs.csv"), within_s=FAST_S)
                    self.assertEqual(snapshot(self.out), self.before, "runs/ranks/events unchanged byte for byte")

    def test_sweep_refuses_an_older_folder_before_the_first_point(self):
        """§4: a sweep computed and threw away every point, appending 52 ranks.csv and 83 events.csv rows."""
        r = self.mcmclb("sweep", fixture("study-1rank.yaml"), "--launcher", "local", "--out", self.out)
        self.assert_one_line_error(r, os.path.join(self.out, "runs.csv"))
        self.assertEqual(snapshot(self.out), self.before, "runs/ranks/events unchanged byte for byte")


# ---- 5. Shell injection through study keys; plan accepted methods: [teleport].


class NoShellInjection(InputCase):
    def setUp(self):
        super().setUp()
        # A PATH whose mpiexec and srun do nothing, so a generated batch script can be run here as it is.
        stubs = self.path("stubs")
        os.mkdir(stubs)
        for name in ("mpiexec", "srun"):
            with open(os.path.join(stubs, name), "w") as f:
                f.write("#!/bin/sh\nexit 0\n")
            os.chmod(os.path.join(stubs, name), 0o755)
        self.stub_env = dict(os.environ, PATH=stubs + ":/usr/bin:/bin")

    def variants(self, study, commands):
        """(label, args, jobs folder) per command: plan, a local sweep, a Slurm dry run; new folders each."""
        for command in commands:
            out, jobs = self.fresh("out"), self.fresh("jobs")
            args = {"plan": ["plan", study],
                    "sweep local": ["sweep", study, "--launcher", "local", "--out", out],
                    "sweep slurm": ["sweep", study, "--launcher", "slurm", "--dry-run", "--jobs-dir", jobs, "--out",
                                    out]}[command]
            yield command, args, out, jobs

    def launch_and_run_scripts(self, args, jobs):
        """mcmclb ARGS, then every batch script it wrote, run with the stub launchers (what sbatch would run, minus
        the launches); returns mcmclb's result."""
        r = self.mcmclb(*args)
        for name in sorted(os.listdir(jobs)) if os.path.isdir(jobs) else []:
            self.launch(["bash", os.path.join(jobs, name)], env=self.stub_env)
        return r

    def assert_not_pwned(self):
        self.assertEqual(take_pwned(self.cwd), [], "a study value ran as a shell command")

    def test_commbench_methods_refused_at_plan_time(self):
        """§5: commbench.methods ["split;touch pwned;true"] ran `touch pwned` in sweep --launcher local, and the
        Slurm scripts got the same unquoted text."""
        for label, args, out, jobs in self.variants(fixture("commbench-inject.yaml"),
                                                    ["plan", "sweep local", "sweep slurm"]):
            with self.subTest(label):
                r = self.launch_and_run_scripts(args, jobs)
                self.assert_not_pwned()
                self.assert_one_line_error(r, "commbench.methods", "split;touch pwned;true", "create_group")
                self.assertFalse(os.path.exists(out), "nothing launched, no output folder")
                self.assertFalse(os.path.exists(jobs), "no batch script written")

    def test_plan_refuses_unknown_methods(self):
        """§5: plan accepted commbench methods: [teleport] (and must keep refusing it as a kernel method)."""
        for label, study, key in (("commbench", "commbench-teleport.yaml", "commbench.methods"),
                                  ("kernel", "kernel-teleport.yaml", "method")):
            with self.subTest(label):
                r = self.mcmclb("plan", fixture(study))
                self.assert_one_line_error(r, key, "teleport", "create_group")

    def test_job_key_with_a_newline_refused(self):
        """§5: a kernel study's job.partition reaches the batch script unquoted; a newline in it starts a command."""
        for label, args, out, jobs in self.variants(fixture("partition-inject.yaml"), ["plan", "sweep slurm"]):
            with self.subTest(label):
                r = self.launch_and_run_scripts(args, jobs)
                self.assert_not_pwned()
                self.assert_one_line_error(r, "job.partition")
                self.assertFalse(os.path.exists(jobs), "no batch script written")

    def test_experiment_name_never_reaches_a_shell(self):
        """§5: the experiment name becomes the default output folder on the launch command line and the job name
        in the scripts; whether it is refused (exit 2) or quoted (exit 0), it must never run."""
        for label, args, out, jobs in self.variants(fixture("name-inject.yaml"), ["sweep local", "sweep slurm"]):
            args = [a for a in args if a != "--out" and a != out]  # the default output folder, named after it
            with self.subTest(label):
                r = self.launch_and_run_scripts(args, jobs)
                self.assert_not_pwned()
                self.assertIn(r.returncode, (0, 2), r.stderr)


# ---- 6. Bad input accepted with exit 0 (the plot scripts are tested in test_plots.py).


class ConfigFile(InputCase):
    def test_config_with_no_experiment(self):
        """§6: a folder, an empty file, a BOM-only file or a comment-only file ran the default experiment."""
        folder = self.path("a-folder")
        os.mkdir(folder)
        cases = [("folder", folder), ("empty", fixture("empty.yaml")), ("BOM only", fixture("bom.yaml")),
                 ("comments only", fixture("comments.yaml"))]
        for label, config in cases:
            for ranks in RANK_COUNTS:
                with self.subTest(config=label, ranks=ranks):
                    out = self.fresh("out")
                    r = self.mcmclb("run", config, "--out", out, ranks=ranks)
                    self.assert_one_line_error(r, config)
                    self.assertFalse(os.path.exists(out), "nothing ran")
            with self.subTest(config=label, command="plan"):
                self.assert_one_line_error(self.mcmclb("plan", config), config)


class PointList(InputCase):
    def run_points(self, points, ranks, *extra):
        """mcmclb run tiny.yaml --points POINTS into a new folder (self.out)."""
        self.out = self.fresh("out")
        return self.mcmclb("run", fixture("tiny.yaml"), "--points", points, "--out", self.out, *extra, ranks=ranks)

    def test_empty_point_list(self):
        """§6: --points "" ran every point."""
        for ranks in RANK_COUNTS:
            with self.subTest(ranks=ranks):
                self.assert_one_line_error(self.run_points("", ranks), "--points")
                self.assertFalse(os.path.exists(self.out), "nothing ran")

    def test_repeated_point(self):
        """§6: --points 0,0 ran point 0 twice, even with --resume."""
        for extra in ((), ("--resume",)):
            for ranks in RANK_COUNTS:
                with self.subTest(ranks=ranks, resume=bool(extra)):
                    self.assert_one_line_error(self.run_points("0,0", ranks, *extra), "--points", "0")
                    self.assertFalse(os.path.exists(self.out), "nothing ran")

    def test_negative_point(self):
        """§6: --points -1 said `18446744073709551615 is not a point`."""
        for ranks in RANK_COUNTS:
            with self.subTest(ranks=ranks):
                r = self.run_points("-1", ranks)
                self.assert_one_line_error(r, "--points", "-1")
                self.assertNotIn(b"18446744073709551615", r.stderr)


class DuplicateKeys(InputCase):
    def test_duplicate_keys(self):
        """§6: a key given twice was accepted silently, the last one winning."""
        for label, config, key in (("top level", "dup-top.yaml", "T_ms"), ("in a section", "dup-nested.yaml",
                                                                           "workload.items")):
            for ranks in RANK_COUNTS:
                with self.subTest(where=label, ranks=ranks):
                    r = self.mcmclb("run", fixture(config), "--out", self.fresh("out"), ranks=ranks)
                    self.assert_one_line_error(r, key, "twice")
            with self.subTest(where=label, command="plan"):
                study = self.path("study.yaml")
                with open(fixture(config)) as f, open(study, "w") as g:
                    g.write("nprocs: 1\n" + f.read())
                self.assert_one_line_error(self.mcmclb("plan", study), key, "twice")


class CommbenchFlags(InputCase):
    QUICK = ["--reps", "1", "--rep-time", "0.01", "--warmup", "0"]

    def test_empty_lists(self):
        """§6: --sizes "", --sizes ,, and --methods "" fell back to the defaults."""
        for flag, value in (("--sizes", ""), ("--sizes", ",,"), ("--methods", "")):
            for ranks in RANK_COUNTS:
                with self.subTest(flag=flag, value=value, ranks=ranks):
                    out = self.fresh("cb") + ".csv"
                    r = self.commbench(*self.QUICK, flag, value, "--out", out, ranks=ranks)
                    self.assert_one_line_error(r, flag, program="mcmclb-commbench")
                    self.assertFalse(os.path.exists(out))

    def test_filter_matching_nothing(self):
        """§6: --filter zzz exited 0, replaced an existing CSV with a header-only file and printed Google
        Benchmark's complaint once per rank."""
        out = self.path("cb.csv")
        shutil.copy(os.path.join(HERE, "fixtures", "commbench_small.csv"), out)
        with open(out, "rb") as f:
            before = f.read()
        for ranks in RANK_COUNTS:
            with self.subTest(ranks=ranks):
                r = self.commbench(*self.QUICK, "--filter", "zzz", "--out", out, ranks=ranks)
                self.assert_one_line_error(r, "--filter", "zzz", program="mcmclb-commbench")
                with open(out, "rb") as f:
                    self.assertEqual(f.read(), before, "the existing CSV is left as it was")


# ---- 7. The build's mpiexec missing: one line before any launch (once 10 launches, 10 failures, 32 lines, exit 3).


class MissingMpiexec(InputCase):
    def test_local_sweep_without_mpiexec(self):
        env = dict(os.environ, MCMCLB_MPIEXEC=os.path.join(self.cwd, "empty-path", "mpiexec"))
        for label, study in (("kernel", fixture("study-1rank.yaml")), ("commbench", fixture("commbench-teleport.yaml"))):
            if label == "commbench":  # a valid commbench study: the teleport one with a real method
                study = self.path("cb.yaml")
                with open(fixture("commbench-teleport.yaml")) as f, open(study, "w") as g:
                    g.write(f.read().replace("teleport]", "split]"))
            with self.subTest(label):
                out = self.fresh("out")
                r = self.mcmclb("sweep", study, "--launcher", "local", "--out", out, env=env)
                self.assert_one_line_error(r, "mpiexec", "is not an executable", "MCMCLB_MPIEXEC")
                self.assertFalse(os.path.exists(out), "refused before anything is written")


# ---- 8. Minor.


class Minor(InputCase):
    def test_commbench_help(self):
        """§8: mcmclb-commbench --help exited 2."""
        for ranks in RANK_COUNTS:
            with self.subTest(ranks=ranks):
                r = self.commbench("--help", ranks=ranks)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertEqual(r.stdout.count(b"usage: "), 1, "usage printed once, on stdout: " + repr(r.stdout))
                self.assertIn(b"--methods", r.stdout)
                self.assertEqual(r.stderr, b"")

    def test_garbage_header_is_not_echoed_raw(self):
        """§8: a binary runs.csv header was echoed to the terminal as raw bytes (and hung at 3 ranks, as §1)."""
        out = self.path("garbage")
        os.mkdir(out)
        with open(os.path.join(out, "runs.csv"), "wb") as f:
            # Terminal escapes (clear screen, set title, bell), invalid UTF-8, then a NUL, which would cut a C
            # string short: what a corrupted or binary file may hold.
            f.write(b"\x1b[2J\x1b]0;title\x07\xff\xfe,\x01\x00\x02\r\n1,2\n")
        before = snapshot(out)
        variants = [(f"run --resume, {n} ranks", ["run", fixture("tiny.yaml"), "--resume", "--out", out], n)
                    for n in RANK_COUNTS] + [("sweep", ["sweep", fixture("study-1rank.yaml"), "--launcher", "local",
                                                        "--out", out], None)]
        for label, args, ranks in variants:
            with self.subTest(label):
                r = self.mcmclb(*args, ranks=ranks)
                self.assert_one_line_error(r, os.path.join(out, "runs.csv"))  # printable: checked there
                self.assertEqual(snapshot(out), before)

    def test_failures_csv_forgets_fixed_points(self):
        """§8: failures.csv kept a failure that a later sweep fixed. Observable contract chosen here: failures.csv
        lists the points failed NOW; after a sweep that records every point as valid, no row of failures.csv (if
        the file exists at all) names a point that runs.csv holds as valid."""
        study, out = fixture("study-1rank.yaml"), self.path("out")
        failing = self.mcmclb("sweep", study, "--launcher", "local", "--out", out,
                              env=dict(os.environ, MCMCLB_FAIL_POINT="1"))
        self.assertEqual(failing.returncode, 3, failing.stderr)
        with open(os.path.join(out, "failures.csv")) as f:
            recorded = list(csv.DictReader(f))
        self.assertEqual([row["point"] for row in recorded], ["1"], "the fault was recorded")
        # The launch's own words, not only its exit status: a simulation that SimGrid aborts after an hour says why.
        self.assertIn("MCMCLB_FAIL_POINT=1: aborting", recorded[0]["reason"], "failures.csv names the cause")
        fixed = self.mcmclb("sweep", study, "--launcher", "local", "--out", out)
        self.assertEqual(fixed.returncode, 0, fixed.stderr)
        self.assertIn(b"--points 1 ", fixed.stdout, "the failed point was rerun")
        with open(os.path.join(out, "runs.csv")) as f:
            runs = list(csv.DictReader(f))
        self.assertEqual(len(runs), 2)
        self.assertTrue(all(r["valid"] == "true" for r in runs))
        failures_csv = os.path.join(out, "failures.csv")
        if os.path.exists(failures_csv):
            with open(failures_csv) as f:
                still = [row for row in csv.DictReader(f) if row.get("point") == "1"]
            self.assertEqual(still, [], "failures.csv still lists point 1, which the second sweep fixed")


# ---- Hostile study files: recursive and exponential aliases, huge studies, names that are not names, a second
# document, values that silently fell back or matched nothing, raw bytes in messages.

POINT = "nprocs: 1\nT_ms: 1\nworkload: {model: uniform, items: 1}\nbalancer: none\n"  # one fast point
BIG = 1000 * 1000  # a 1 MB experiment name, inside the 1 MiB a study file may hold


def axis(values):
    return "[" + ", ".join(str(v) for v in values) + "]"


class HostileYaml(InputCase):
    """Each case is a study file (a fixture, or text written here) refused with one line by plan and by run (at 1
    rank; at 3 too where a rank's crash or hang was the defect), within seconds, with no output folder."""

    CASES = [
        # (label, fixture name or file content (str or bytes), extra args, fragments the line names, ranks for run)
        ("recursive alias", "alias-recursive.yaml", [], ["alias-recursive.yaml", "nested", "alias"], ("1", "3")),
        ("alias bomb", "alias-bomb.yaml", [], ["alias-bomb.yaml", "100000"], ("1", "3")),
        ("nesting past the parser's guard", "T_ms: " + "[" * 3000 + "]" * 3000 + "\n", [], ["not valid YAML"], ("1",)),
        ("10^9 combinations", "nprocs: 1\nbalancer: none\nT_ms: " + axis(range(1, 1001)) + "\nwork: {seed: " +
         axis(range(1000)) + "}\nworkload: {model: uniform, items: " + axis(range(1000)) + "}\n", [],
         ["combinations", "T_ms (1000)", "100000"], ("1",)),
        ("2 x 10^5 runs", POINT.replace("balancer: none", "balancer: [none, none]") + "reps: 100000\n", [],
         ["100000 runs", "reps"], ("1",)),
        ("experiment ..", POINT + "experiment: '..'\n", [], ["key experiment", "'..'", "letters, digits"], ("1",)),
        ("experiment .", POINT + "experiment: '.'\n", [], ["key experiment", "not starting with ."], ("1",)),
        ("experiment with a newline", POINT + 'experiment: "a\\nb"\n', [], ["key experiment", "a\\x0ab"], ("1",)),
        ("experiment with terminal escapes", POINT + 'experiment: "x\\e[2J\\a"\n', [], ["key experiment", "\\x1b"],
         ("1",)),
        ("experiment not UTF-8", POINT.encode() + b"experiment: ab\xff\xfe\n", [], ["key experiment"], ("1",)),
        ("experiment with a NUL", POINT.encode() + b"experiment: \"a\\0b\"\n", [], ["key experiment", "\\x00"], ("1",)),
        ("experiment of 65 bytes", POINT + "experiment: " + "n" * 65 + "\n", [], ["key experiment", "64"], ("1",)),
        ("experiment of 1 MB", POINT + "experiment: " + "n" * BIG + "\n", [], ["key experiment", "..."], ("1",)),
        ("experiment with a space", POINT + "experiment: a b\n", [], ["key experiment"], ("1",)),
        ("out empty", POINT + "out: ''\n", [], ["key out", "non-empty"], ("1",)),
        ("second document", POINT + "---\nT_ms: 7\n", [], ["2 YAML documents"], ("1",)),
        ("second document in --set", POINT, ["--set", "T_ms=5\n---\n7"], ["--set T_ms", "2 YAML documents"], ("1",)),
        ("method no balancer can use", POINT.replace("none", "async") + "method: create\n", [],
         ["key method", "async", "create", "intercomm, create_group, from_group, range"], ("1",)),
        ("method for one of two balancers", POINT.replace("none", "[async, collective]") + "method: [split]\n", [],
         ["key method", "async", "split"], ("1",)),
        ("exclude an empty rule", POINT + "exclude: [{}]\n", [], ["key exclude", "rule 1"], ("1",)),
        ("exclude no rules", POINT + "exclude: []\n", [], ["key exclude", "non-empty"], ("1",)),
        ("exclude a value of the wrong type", POINT + "exclude: [{T_ms: abc}]\n", [],
         ["key exclude", "rule 1", "T_ms", "abc"], ("1",)),
        ("exclude an unknown balancer", POINT + "exclude: [{balancer: nosuch}]\n", [],
         ["key exclude", "nosuch", "async"], ("1",)),
        ("exclude reps", POINT + "exclude: [{reps: 1}]\n", [], ["key exclude", "reps"], ("1",)),
        ("exclude an unmatchable key behind a differing one", POINT + "exclude: [{T_ms: 7, work: {trace: true}}]\n",
         [], ["key exclude", "work.trace"], ("1",)),
        ("groups empty", POINT + "groups: {}\n", [], ["key groups", "groups.sizes"], ("1",)),
        ("workload empty", POINT.replace("workload: {model: uniform, items: 1}", "workload: {}"), [],
         ["key workload", "workload.model"], ("1",)),
        ("zip empty", POINT + "zip: {}\n", [], ["key zip"], ("1",)),
        ("NUL byte in the file", POINT.encode() + b"T_ms: 5\x00\n", [], [], ("1",)),
        ("binary file", bytes(range(256)) * 4, [], [], ("1",)),
        ("a list for a scalar", POINT + "G: {a: [1]}\n", [], ["key G"], ("1",)),
        ("a map as a key", POINT + "? [T_ms]\n: 5\n", [], ["not a plain name"], ("1",)),
        ("a huge integer", POINT.replace("nprocs: 1", "nprocs: 99999999999999999999999999"), [], ["key nprocs"],
         ("1",)),
        ("NaN", POINT.replace("T_ms: 1", "T_ms: .nan"), [], ["key T_ms"], ("1",)),
        ("infinity", POINT.replace("T_ms: 1", "T_ms: -.inf"), [], ["key T_ms"], ("1",)),
        ("a long unknown key", POINT + "k" * 1000 + ": 1\n", [], ["unknown key", "allowed: experiment"], ("1",)),
        ("a 512 KiB key", POINT + "k" * (1 << 19) + ": 1\n", [], ["not valid YAML"], ("1",)),
        ("a 2 MiB file", POINT + "#" + "x" * (2 << 20) + "\n", [], ["at most 1 MiB"], ("1",)),
    ]

    def study(self, content):
        if isinstance(content, str) and content.endswith(".yaml") and "\n" not in content:
            return fixture(content)
        path = self.fresh("study") + ".yaml"
        with open(path, "wb") as f:
            f.write(content if isinstance(content, bytes) else content.encode())
        return path

    def assert_refused(self, r, fragments, program="mcmclb"):
        self.assert_one_line_error(r, *fragments, program=program, within_s=FAST_S)
        self.assertLess(len(r.stderr), 4000, "the line quotes values, not whole files")

    def test_hostile_study_files(self):
        for label, content, extra, fragments, ranks_list in self.CASES:
            study = self.study(content)
            with self.subTest(label, command="plan"):
                self.assert_refused(self.mcmclb("plan", study, *extra), fragments)
            for ranks in ranks_list:
                with self.subTest(label, command="run", ranks=ranks):
                    out = self.fresh("out")
                    self.assert_refused(self.mcmclb("run", study, *extra, "--out", out, ranks=ranks), fragments)
                    self.assertFalse(os.path.exists(out), "nothing ran")
            self.assertEqual(snapshot(self.path("results")), {}, "no default output folder")

    def test_study_file_not_a_regular_file(self):
        """plan and run read /dev/zero or a FIFO forever (memory growing, or blocked with no writer)."""
        fifo = self.path("fifo.yaml")
        os.mkfifo(fifo)
        for path in ("/dev/zero", fifo):
            with self.subTest(path, command="plan"):
                self.assert_refused(self.mcmclb("plan", path), [path])
            with self.subTest(path, command="run"):
                self.assert_refused(self.mcmclb("run", path, "--out", self.fresh("out"), ranks="1"), [path])

    def test_run_out_empty(self):
        """--out '' wrote every result file into the working folder."""
        for args in (["--out", ""], ["--out="]):
            with self.subTest(args=args):
                r = self.mcmclb("run", fixture("tiny.yaml"), *args, ranks="1")
                self.assert_refused(r, ["--out", "non-empty"])
                self.assertEqual(os.listdir(self.cwd), [], "nothing written into the working folder")

    def test_commbench_groups_file_recursive_alias(self):
        """mcmclb-commbench --groups with a recursive alias crashed every rank (65 lines of crash reports)."""
        for ranks in RANK_COUNTS:
            with self.subTest(ranks=ranks):
                r = self.commbench("--reps", "1", "--rep-time", "0.01", "--groups", fixture("groups-recursive.yaml"),
                                   ranks=ranks)
                self.assert_refused(r, ["groups-recursive.yaml", "nested"], program="mcmclb-commbench")

    def test_shipped_configs_still_plan(self):
        """The checks above must not refuse a study this repository ships. Planned from the checkout, where they are
        run: the files a study names (a replayed trace, workload.file) are paths from the working folder; plan
        writes nothing."""
        configs = os.path.join(ROOT, "configs")
        for name in sorted(n for n in os.listdir(configs) if n.endswith(".yaml")):
            with self.subTest(name):
                r = self.mcmclb("plan", os.path.join(configs, name), cwd=ROOT)
                self.assertEqual(r.returncode, 0, r.stderr)


# ---- The results store's files as a hostile user or a failing machine leaves them.


class StoreFiles(InputCase):
    def test_special_files_are_refused_not_waited_on(self):
        """A FIFO runs.csv blocked run, run --resume, status and a Slurm dry run forever; a FIFO or /dev/zero as the
        experiment file blocked run and plan. Each is now one line naming the file, exit 2, on every rank count."""
        out, study = self.path("fifo"), fixture("study-1rank.yaml")
        os.mkdir(out)
        os.mkfifo(os.path.join(out, "runs.csv"))
        runs_csv = os.path.join(out, "runs.csv")
        cases = [(f"run, {n} ranks", ["run", fixture("tiny.yaml"), "--out", out], n) for n in RANK_COUNTS]
        cases += [(f"run --resume, {n} ranks", ["run", fixture("tiny.yaml"), "--resume", "--out", out], n)
                  for n in RANK_COUNTS]
        cases += [("status", ["status", study, "--out", out], None),
                  ("slurm dry run", ["sweep", study, "--launcher", "slurm", "--dry-run", "--out", out], None)]
        for label, args, ranks in cases:
            with self.subTest(label):
                self.assert_one_line_error(self.mcmclb(*args, ranks=ranks), runs_csv, "is a FIFO, not a regular file")
        fifo = self.path("experiment.yaml")
        os.mkfifo(fifo)
        for config, what in ((fifo, "is a FIFO"), ("/dev/zero", "is a device")):
            for n in RANK_COUNTS:
                with self.subTest(config=config, ranks=n):
                    self.assert_one_line_error(self.mcmclb("run", config, ranks=n), config, what)
            with self.subTest(config=config, command="plan"):
                self.assert_one_line_error(self.mcmclb("plan", config), config)

    def test_torn_last_row_without_journal_is_cut_off_and_kept(self):
        """A torn last row with no journal (an older binary's crash, a full disk outside the store) was kept: the
        rerun point was appended after it and every plot refused the folder. Now the next writer moves the torn
        bytes to FILE.torn-UTC, says so in one line, and the folder stays readable by every tool."""
        for name, cut in (("runs.csv", 40), ("ranks.csv", 20)):
            with self.subTest(name):
                out = self.fresh("torn")
                r = self.mcmclb("run", fixture("tiny.yaml"), "--out", out, ranks="1")
                self.assertEqual(r.returncode, 0, r.stderr)
                path = os.path.join(out, name)
                os.truncate(path, os.path.getsize(path) - cut)
                r = self.mcmclb("run", fixture("tiny.yaml"), "--resume", "--out", out, ranks="1")
                self.assertEqual(r.returncode, 0, r.stderr)
                lines = r.stderr.decode().strip().splitlines()
                self.assertEqual(len(lines), 1, r.stderr)
                self.assertIn(f"{path}: its last row was cut off", lines[0])
                kept = [f for f in os.listdir(out) if f.startswith(name + ".torn-")]
                self.assertEqual(len(kept), 1, os.listdir(out))
                self.assertIn(b"1 runs", r.stdout, "the point whose row was cut is run again")
                summary = subprocess.run([sys.executable, os.path.join(ROOT, "plots", "summary.py"), out],
                                         capture_output=True, timeout=TIMEOUT_S)
                self.assertEqual(summary.returncode, 0, summary.stderr)
                with open(os.path.join(out, "runs.csv")) as f:
                    self.assertEqual(len(list(csv.DictReader(f))), 3 if name == "ranks.csv" else 2)

    def test_full_disk_is_one_line_and_a_documented_exit_code(self):
        """A full disk rolled the run back but exited 1 with two lines (the error, then MPICH's abort). Now: one
        line on rank 0, exit 4 on every rank (docs/guide/running.md), and a folder every tool still reads."""
        mount = self.path("tiny-disk")
        os.mkdir(mount)
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", mount],
                          capture_output=True).returncode != 0:
            self.skipTest("cannot mount a small tmpfs here (needs root)")
        try:
            self.check_full_disk(mount)
        finally:
            subprocess.run(["umount", "-l", mount])

    def check_full_disk(self, mount):
        study = self.path("many.yaml")
        with open(study, "w") as f:
            f.write("experiment: many\nT_ms: 1\nworkload: {model: uniform, items: 1}\nbalancer: none\nreps: 400\n")
        out = os.path.join(mount, "out")
        for n in ("1", "3"):
            with self.subTest(ranks=n):
                r = self.mcmclb("run", study, "--out", out, ranks=n)
                self.assertEqual(r.returncode, 4, r.stderr)
                lines = [l for l in r.stderr.split(b"\n") if l.strip()]
                self.assertEqual(len(lines), 1, r.stderr)
                self.assertIn(b"No space left on device", lines[0])
                self.assertTrue(lines[0].startswith(b"mcmclb: cannot record the run: "), lines[0])
                summary = subprocess.run([sys.executable, os.path.join(ROOT, "plots", "summary.py"), out],
                                         capture_output=True, timeout=TIMEOUT_S)
                self.assertEqual(summary.returncode, 0, summary.stderr)
                self.assertFalse(os.path.exists(os.path.join(out, ".mcmclb.journal")))


# ---- Empty and repeated flag values, integer flags: a value that silently became the default, or lost.


class FlagValues(InputCase):
    def test_empty_path_flags(self):
        """--out '' and every other path flag of every command: refused, naming the flag. commbench --groups ''
        was taken for no --groups and ran the whole benchmark (past any time limit); an empty STUDY.yaml before a
        real one was skipped."""
        study, tiny = fixture("study-1rank.yaml"), fixture("tiny.yaml")
        sweep = ["sweep", study, "--launcher"]
        cases = [
            (["plan", "", study], None, "STUDY.yaml"),
            (["status", study, "--out", ""], None, "--out"),
            (sweep + ["local", "--dry-run", "--out", ""], None, "--out"),
            (sweep + ["slurm", "--dry-run", "--jobs-dir", ""], None, "--jobs-dir"),
            (sweep + ["smpi", "--dry-run", "--platform", ""], None, "--platform"),
            (sweep + ["smpi", "--dry-run", "--sim-binary", ""], None, "--sim-binary"),
            (sweep + ["smpi", "--dry-run", "--sim-commbench", ""], None, "--sim-commbench"),
            (sweep + ["smpi", "--dry-run", "--smpi-flags", ""], None, "--smpi-flags"),
            (["run", "", tiny], "1", "CONFIG.yaml"),
            (["run", tiny, "--out", ""], "1", "--out"),
            (["run", tiny, "--out="], "1", "--out"),
        ]
        for args, ranks, flag in cases:
            with self.subTest(args=args):
                self.assert_one_line_error(self.mcmclb(*args, ranks=ranks), flag + ": empty", "non-empty",
                                           within_s=FAST_S)
        for flag in ("--out", "--groups"):
            with self.subTest(commbench=flag):
                self.assert_one_line_error(self.commbench(flag, "", "--reps", "1"), f"{flag}: empty",
                                           program="mcmclb-commbench", within_s=FAST_S)
        self.assertEqual(os.listdir(self.cwd), [], "nothing written")

    def test_repeated_and_out_of_range_flags(self):
        """A flag given twice kept the last value silently (`--out a --out b` swept into b); --record-failures took
        any string of digits as an exit status and recorded failures with it."""
        study = fixture("study-1rank.yaml")
        cases = [
            (["sweep", study, "--launcher", "local", "--dry-run", "--out", "a", "--out", "b"], "--out: given twice"),
            (["sweep", study, "--launcher", "local", "--launcher", "slurm", "--dry-run"], "--launcher: given twice"),
            (["status", study, "--launch", "1", "--launch", "1"], "--launch: given twice"),
            (["status", study, "--launch", "1", "--record-failures", "99999999999999999999999"],
             "--record-failures: '99999999999999999999999' is not an exit status (allowed: an integer in [0, 255])"),
            (["status", study, "--launch", "99999999999"], "--launch: '99999999999' is not a rank count"),
        ]
        for args, fragment in cases:
            with self.subTest(args=args):
                self.assert_one_line_error(self.mcmclb(*args), fragment, within_s=FAST_S)
        r = self.mcmclb("run", fixture("tiny.yaml"), "--out", "a", "--out=b", ranks="1")
        self.assert_one_line_error(r, "--out: given twice", within_s=FAST_S)
        r = self.commbench("--reps", "1", "--reps", "2")
        self.assert_one_line_error(r, "--reps: given twice", program="mcmclb-commbench", within_s=FAST_S)
        self.assertEqual(os.listdir(self.cwd), [], "nothing written")


class OutputFiles(InputCase):
    def test_commbench_never_replaces_a_device_or_fifo(self):
        """mcmclb-commbench --out /dev/null (as root) renamed its CSV over the device: the machine's /dev/null
        became a regular file. A FIFO was replaced likewise, a 300-byte file name failed only after the whole
        benchmark (exit 1 and MPICH's abort lines), and a plot's -o naming a FIFO blocked forever. Each is now one
        line before any work, and the device is left a device (a null device of the test's own, not the
        machine's)."""
        device, fifo = self.path("null-device"), self.path("fifo.csv")
        os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        os.mkfifo(fifo)
        slow = ["--methods", "split", "--sizes", "1", "--reps", "30", "--rep-time", "0.25"]  # some 15 s of work
        for out, fragment in ((device, "is a device, not a regular file"), (fifo, "is a FIFO, not a regular file"),
                              (self.path("n" * 300 + ".csv"), "File name too long")):
            with self.subTest(out=out[-20:]):
                r = self.commbench(*slow, "--out", out)
                self.assert_one_line_error(r, "--out", fragment, program="mcmclb-commbench", within_s=FAST_S)
        self.assertTrue(stat.S_ISCHR(os.stat(device).st_mode), "the device was replaced")
        self.assertTrue(stat.S_ISFIFO(os.stat(fifo).st_mode), "the FIFO was replaced")
        png = self.path("fifo.png")
        os.mkfifo(png)
        r = self.launch([sys.executable, os.path.join(ROOT, "plots", "fig2.py"),
                         os.path.join(HERE, "fixtures", "results-small"), "-o", png])
        self.assert_one_line_error(r, png, "is a FIFO, not a regular file", program="fig2.py", within_s=FAST_S)

# ---- Refusals leave the output folder as it was: not created, or byte for byte unchanged (the lock file too).


class RefusalsLeaveTheFolder(InputCase):
    def test_group_layout_refused_before_the_folder_is_made(self):
        """groups: {by: node, size: 2} at 3 ranks on one node was refused in one line, but only after the output
        folder and its lock file were made (and an existing folder's lock file rewritten)."""
        study = self.path("straddle.yaml")
        with open(study, "w") as f:
            f.write("experiment: straddle\nnprocs: 3\nT_ms: 1\ngroups: {by: node, size: 2}\n")
        out = self.fresh("out")
        r = self.mcmclb("run", study, "--out", out, ranks="3")
        self.assert_one_line_error(r, "key groups.size: 2 does not divide the 3 ranks", within_s=FAST_S)
        self.assertFalse(os.path.exists(out), "a refused run made its output folder")
        existing = self.fresh("existing")
        os.mkdir(existing)
        with open(os.path.join(existing, ".mcmclb.lock"), "w") as f:
            f.write("pid 1 host elsewhere since 2026-01-01T00:00:00Z\n")
        before = snapshot(existing)
        r = self.mcmclb("run", study, "--out", existing, "--resume", ranks="3")
        self.assert_one_line_error(r, "key groups.size", within_s=FAST_S)
        self.assertEqual(snapshot(existing), before, "a refused run changed its output folder")

    def test_damaged_journal_leaves_the_folder_as_it_was(self):
        """A damaged .mcmclb.journal was refused in one line, after the lock file had been made or rewritten. Now
        run, a resume, status, a dry run and a sweep all refuse it with the folder byte for byte as it was."""
        study = fixture("study-1rank.yaml")
        out = self.fresh("results")
        r = self.mcmclb("run", study, "--points", "0", "--out", out, ranks="1")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(out, ".mcmclb.journal"), "w") as f:
            f.write("mcmclb journal 1\nnot-a-table.csv 12\n")
        for lock in ("kept", "removed"):
            if lock == "removed":
                os.unlink(os.path.join(out, ".mcmclb.lock"))
            before = snapshot(out)
            for label, r in (("run", self.mcmclb("run", study, "--out", out, ranks="1")),
                             ("run --resume", self.mcmclb("run", study, "--resume", "--out", out, ranks="1")),
                             ("status", self.mcmclb("status", study, "--out", out)),
                             ("dry run", self.mcmclb("sweep", study, "--launcher", "local", "--dry-run", "--out", out)),
                             ("sweep", self.mcmclb("sweep", study, "--launcher", "local", "--out", out))):
                with self.subTest(label, lock=lock):
                    self.assert_one_line_error(r, ".mcmclb.journal: damaged journal", within_s=FAST_S)
                    self.assertEqual(snapshot(out), before, "a refused command changed the folder")


# ---- Size limits: a study or groups file is refused from its size, before it is read.


class SizeLimits(InputCase):
    def test_huge_sparse_study_refused_from_its_size(self):
        """plan, sweep and status read a study file whole before refusing it for its size (a 3 GiB file: 3 GiB and
        more of memory, or std::bad_alloc under a memory limit); run and commbench --groups likewise on rank 0."""
        big = self.path("huge.yaml")
        with open(big, "wb") as f:
            f.truncate(3 << 30)  # sparse: no disk used
        limit = ["prlimit", f"--as={1 << 30}"]  # 1 GiB of address space: reading it would fail
        for args in (["plan", big], ["sweep", big, "--launcher", "local", "--dry-run"], ["status", big]):
            with self.subTest(args[0]):
                r = self.launch(limit + [MCMCLB, *args])
                self.assert_one_line_error(r, big, "3221225472 bytes (allowed: at most 1 MiB)", within_s=FAST_S)
        r = self.mcmclb("run", big, ranks="1")
        self.assert_one_line_error(r, big, "3221225472 bytes (allowed: at most 1 MiB)", within_s=FAST_S)
        r = self.commbench("--groups", big)
        self.assert_one_line_error(r, "--groups", "3221225472 bytes (allowed: at most 1 MiB)",
                                   program="mcmclb-commbench", within_s=FAST_S)


# ---- Damaged results folders: every reader (the store, status, a resume, the plot scripts) refuses the same rows.


class DamagedResults(InputCase):
    def results(self):
        """A complete results folder of study-1rank.yaml (2 points, 1 rank): (folder, its runs.csv bytes)."""
        out = self.fresh("results")
        r = self.mcmclb("run", fixture("study-1rank.yaml"), "--out", out, ranks="1")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(out, "runs.csv"), "rb") as f:
            return out, f.read()

    def assert_every_reader_refuses(self, out, fragment, plot="summary.py", compare=True):
        """status, a dry run, a resume, compare (when it reads the damaged file) and the plot script all refuse
        out with one line naming fragment (the same file and line)."""
        study = fixture("study-1rank.yaml")
        before = {name: data for name, data in snapshot(out).items() if name.endswith(".csv")}
        readers = [("status", self.mcmclb("status", study, "--out", out)),
                   ("dry run", self.mcmclb("sweep", study, "--launcher", "local", "--dry-run", "--out", out)),
                   ("run --resume", self.mcmclb("run", study, "--resume", "--out", out, ranks="1"))]
        if compare:  # compare reads runs.csv only
            readers.append(("compare", self.mcmclb("compare", out, out)))
        for label, r in readers:
            with self.subTest(label):
                self.assert_one_line_error(r, fragment, within_s=FAST_S)
        with self.subTest(plot):
            r = self.launch([sys.executable, os.path.join(ROOT, "plots", plot), out])
            self.assert_one_line_error(r, fragment, program=plot)
        after = {name: data for name, data in snapshot(out).items() if name.endswith(".csv")}
        self.assertEqual(after, before, "a refused folder's files are left as they were")

    def test_crlf_line_endings_named_by_every_reader(self):
        """A runs.csv saved with CRLF line endings: the store refused its header without naming the cause (a
        header that differs by an invisible \\r) and the plot scripts read it; a CRLF row in the middle was read by
        both. Now every reader names `\\r` (CRLF), the file and the line."""
        out, runs = self.results()
        path = os.path.join(out, "runs.csv")
        with open(path, "wb") as f:
            f.write(runs.replace(b"\n", b"\r\n"))
        self.assert_every_reader_refuses(out, f"{path}: line 1 ends in \\r (CRLF line endings; allowed: LF")
        lines = runs.split(b"\n")
        with open(path, "wb") as f:
            f.write(lines[0] + b"\n" + lines[1] + b"\r\n" + lines[2] + b"\n")
        self.assert_every_reader_refuses(out, f"{path}: line 2 ends in \\r (CRLF line endings")

    def test_damaged_row_in_the_middle(self):
        """A row cut off in the middle of runs.csv (a torn row with a later run appended after it): the plot
        scripts refused the folder while `mcmclb status` called it complete (exit 0) and a resume skipped the row.
        Now status, a dry run and a resume refuse it with the plot scripts' words: file, line, field counts."""
        out, runs = self.results()
        lines = runs.split(b"\n")
        width = len(lines[0].split(b","))
        path = os.path.join(out, "runs.csv")
        cut = lines[1][:[i for i, c in enumerate(lines[1]) if c == ord(",")][3] + 2]  # 4 fields and a bit
        with open(path, "wb") as f:
            f.write(lines[0] + b"\n" + cut + lines[1] + b"\n" + lines[2] + b"\n")
        fields = len(next(csv.reader([(cut + lines[1]).decode()])))
        self.assert_every_reader_refuses(out, f"{path}: line 2 has {fields} fields, the header has {width} "
                                              f"(a row cut off or edited?)")
        # events.csv, which neither status nor a resume reads for itself: damaged there too, every tool refuses.
        out, _ = self.results()
        path = os.path.join(out, "events.csv")
        with open(path, "rb") as f:
            events = f.read().split(b"\n")
        events.insert(1, b"cut,1")
        with open(path, "wb") as f:
            f.write(b"\n".join(events))
        self.assert_every_reader_refuses(out, f"{path}: line 2 has 2 fields, the header has", plot="timeline.py",
                                         compare=False)

    def test_quote_never_closed(self):
        """A stray quote in the middle of runs.csv made the rest of the file one quoted field: the store saw no
        row after it and status called the folder complete (the damaged row's point was done elsewhere), while
        the plots refused it. Now both name the last line as the row with too few fields."""
        out, runs = self.results()
        lines = runs.split(b"\n")
        path = os.path.join(out, "runs.csv")
        with open(path, "wb") as f:
            f.write(runs + b'"' + lines[1] + b"\n" + lines[2] + b"\n")
        self.assert_every_reader_refuses(out, f"{path}: line 5 has ")


if __name__ == "__main__":
    unittest.main()
