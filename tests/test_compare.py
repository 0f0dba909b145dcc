# SPDX-License-Identifier: BSD-3-Clause
"""mcmclb compare and sweep --until-ci: a real folder made 10 % slower is `slower` (exit 1), two sweeps of one
sleep-dominated study are `no significant change` (exit 0), simulated points compare exactly, bad input is one line
and exit 2 before any work (a run_id recorded twice too, which status reports and the plots refuse); --until-ci
repeats a point until its interval is narrow enough or the cap, records why, and a resumed sweep goes on counting the
repetitions already there; mcmclb-commbench's rows carry their benchmark's median and its interval. Needs MCMCLB_BIN
and MCMCLB_COMMBENCH (ctest sets them)."""
import csv
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

MCMCLB = os.path.realpath(os.environ["MCMCLB_BIN"])
COMMBENCH = os.path.realpath(os.environ["MCMCLB_COMMBENCH"])
ROOT = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
STUDY = "tests/fixtures/study-repeat.yaml"


def mcmclb(*args):
    return subprocess.run([MCMCLB, *args], capture_output=True, text=True, timeout=300, cwd=ROOT)


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def rewrite_runs(folder, change):
    """Applies change(row) to every row of folder/runs.csv, keeping its header and column order."""
    path = os.path.join(folder, "runs.csv")
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        header, data = reader.fieldnames, list(reader)
    for row in data:
        change(row)
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=header, lineterminator="\n")
        writer.writeheader()
        writer.writerows(data)


def sweep(out, *extra):
    r = mcmclb("sweep", STUDY, "--launcher", "local", "--out", out, *extra)
    if r.returncode != 0:
        raise AssertionError(f"sweep failed ({r.returncode}): {r.stdout}\n{r.stderr}")
    return r


class Compare(unittest.TestCase):
    """Two sweeps of the study (6 repetitions of 2 points each, about 10 s in all) shared by the tests."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp()
        cls.a = os.path.join(cls.tmp, "a")
        cls.b = os.path.join(cls.tmp, "b")
        # Interleaved halves (a's repetitions 0-2, b's, then 3-5 of each by resume): a load that comes or goes
        # meanwhile on a shared machine falls on both folders, not on one of them, which the test would call a
        # real difference.
        for reps in ("3", "6"):
            sweep(cls.a, "--set", "reps=" + reps)
            sweep(cls.b, "--set", "reps=" + reps)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def copy(self, name):
        dest = os.path.join(self.tmp, name)
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(self.a, dest)
        return dest

    def compare(self, a, b, *extra):
        csv_path = os.path.join(self.tmp, "compare.csv")
        r = mcmclb("compare", a, b, "--csv", csv_path, *extra)
        self.assertIn(r.returncode, (0, 1), r.stdout + r.stderr)
        return r, rows(csv_path)

    def test_ten_percent_slower_is_slower(self):
        slow = self.copy("slow")  # every run 10 % slower, as a T_ms raised by 10 % would make it
        rewrite_runs(slow, lambda row: row.update(time_s=repr(float(row["time_s"]) * 1.1)))
        r, table = self.compare(self.a, slow)
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertEqual([t["verdict"] for t in table], ["slower", "slower"], r.stdout)
        for t in table:
            self.assertEqual(t["n_a"], "6")
            self.assertAlmostEqual(float(t["ratio"]), 1.1, places=6)
            self.assertLess(float(t["p_value"]), 0.05)
            self.assertLessEqual(float(t["ci_low_a_s"]), float(t["median_a_s"]))
            self.assertLessEqual(float(t["median_a_s"]), float(t["ci_high_a_s"]))
            self.assertLessEqual(float(t["ratio_low"]), float(t["ratio"]))
        self.assertIn("2 slower", r.stdout)
        # The other way round it is faster, which is no failure.
        r, table = self.compare(slow, self.a)
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertEqual([t["verdict"] for t in table], ["faster", "faster"], r.stdout)

    def test_two_sweeps_of_one_study_are_no_significant_change(self):
        r, table = self.compare(self.a, self.b)
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertEqual([t["verdict"] for t in table], ["no significant change"] * 2, r.stdout)

    def test_too_few_repetitions_still_shows_the_ratio(self):
        few = self.copy("few")
        rewrite_runs(few, lambda row: row.update(valid="true" if int(row["rep"]) < 3 else "false"))
        r, table = self.compare(few, few)
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertEqual([t["verdict"] for t in table], ["too few repetitions"] * 2)
        self.assertEqual([t["ratio"] for t in table], ["1", "1"])
        self.assertEqual([t["ci_low_a_s"] for t in table], ["", ""])  # 3 repetitions: no interval
        self.assertIn("(no CI)", r.stdout)

    def test_ignore_matches_configurations_that_differ_in_those_columns(self):
        # The same points relabelled as another balancer and 10 % slower: unmatched without --ignore, matched (and
        # slower) with it; a folder holding two configurations that differ only in an ignored column is refused.
        other = self.copy("other")
        rewrite_runs(other, lambda row: row.update(balancer="async", method="intercomm", finished="pays",
                                                   time_s=repr(float(row["time_s"]) * 1.1)))
        r, table = self.compare(self.a, other)
        self.assertEqual(sorted(t["verdict"] for t in table), ["only in A"] * 2 + ["only in B"] * 2, r.stdout)
        r, table = self.compare(self.a, other, "--ignore", "balancer,method,finished")
        self.assertEqual([t["verdict"] for t in table], ["slower", "slower"], r.stdout)
        r = mcmclb("compare", self.a, other, "--ignore", "T_ms")
        self.assertEqual(r.returncode, 2)
        self.assertIn("differ only in those columns", r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        r = mcmclb("compare", self.a, other, "--ignore", "time_s")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--ignore: 'time_s' is not a runs.csv key column", r.stderr)

    def test_points_in_one_folder_only(self):
        half = self.copy("half")
        with open(os.path.join(half, "runs.csv")) as f:
            lines = f.readlines()
        with open(os.path.join(half, "runs.csv"), "w") as f:
            f.writelines(line for line in lines if ",40," not in line)  # drop the T_ms = 40 point
        r, table = self.compare(self.a, half)
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertEqual(sorted(t["verdict"] for t in table), ["no significant change", "only in A"])
        self.assertIn("T_ms=40", [t["point"] for t in table if t["verdict"] == "only in A"][0])

    def test_simulated_points_compare_exactly(self):
        sim = self.copy("sim")
        rewrite_runs(sim, lambda row: row.update(backend="smpi", platform="configs/platforms/bgp.xml"))
        same = self.copy("sim-same")
        rewrite_runs(same, lambda row: row.update(backend="smpi", platform="configs/platforms/bgp.xml"))
        r, table = self.compare(sim, same)
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertEqual([t["verdict"] for t in table], ["identical"] * 2)
        self.assertEqual([t["p_value"] for t in table], ["", ""])
        # One run's time a nanosecond off, or one regroup statistic changed: changed, exit 1.
        first = {"done": False}

        def nudge(row, column, value):
            if not first["done"]:
                row[column] = value(row[column])
                first["done"] = True

        rewrite_runs(same, lambda row: nudge(row, "time_s", lambda t: repr(float(t) + 1e-9)))
        r, table = self.compare(sim, same)
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertEqual(sorted(t["verdict"] for t in table), ["changed (simulated)", "identical"])
        regroups = self.copy("sim-regroups")
        rewrite_runs(regroups, lambda row: row.update(backend="smpi", platform="configs/platforms/bgp.xml"))
        first["done"] = False
        rewrite_runs(regroups, lambda row: nudge(row, "regroups_max", lambda v: str(int(v) + 1)))
        r, table = self.compare(sim, regroups)
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("changed (simulated)", [t["verdict"] for t in table])

    def test_csv_header_is_the_documented_one(self):
        listed = mcmclb("columns").stdout
        header = [line.split(": ", 1)[1] for line in listed.splitlines() if line.startswith("compare.csv: ")]
        _, table = self.compare(self.a, self.b)
        with open(os.path.join(self.tmp, "compare.csv")) as f:
            self.assertEqual(f.readline().rstrip("\n"), header[0])

    def refused(self, args, fragment):
        r = mcmclb("compare", *args)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertEqual(r.stdout, "", "work began before the input was refused")
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn(fragment, r.stderr)

    def test_bad_input(self):
        empty = os.path.join(self.tmp, "empty")
        os.makedirs(empty, exist_ok=True)
        foreign = os.path.join(self.tmp, "foreign")
        os.makedirs(foreign, exist_ok=True)
        with open(os.path.join(foreign, "runs.csv"), "w") as f:
            f.write("name,value\nx,1\n")
        torn = self.copy("torn")
        with open(os.path.join(torn, "runs.csv"), "a") as f:
            f.write("cut-off,row\n")
        bad_time = self.copy("bad-time")
        rewrite_runs(bad_time, lambda row: row.update(time_s="fast"))
        a = self.a
        self.refused([a], "1 folder(s) given, two needed, or one with --baseline KEY=VALUE")
        self.refused([a, os.path.join(self.tmp, "missing")], "missing: no such folder")
        self.refused([os.path.join(a, "runs.csv"), a], "runs.csv: not a folder")
        self.refused([a, empty], "empty/runs.csv: cannot be read")
        self.refused([foreign, a], "foreign/runs.csv: not the runs.csv of this or an older mcmclb")
        self.refused([a, torn], "torn/runs.csv: line 14 has 2 fields")
        self.refused([a, bad_time], "bad-time/runs.csv: line 2: time_s 'fast' is not a time")
        self.refused([a, a, "--threshold", "-1"], "--threshold: '-1' is not a percentage")
        self.refused([a, a, "--alpha", "2"], "--alpha: '2' is not a significance level")
        self.refused([a, a, "--threshold"], "--threshold: missing value")
        self.refused([a, a, "--fast"], "unknown flag --fast")
        self.refused([a, a, "--csv", os.path.join(self.tmp, "no", "such", "x.csv")], "its folder does not exist")
        self.refused([a, a, "--csv", self.tmp], "is a folder")

    def test_a_duplicated_run_id_is_reported_by_status_and_refused_by_compare_and_the_plots(self):
        dup = self.copy("dup")
        seen = []

        def second_as_first(row):
            seen.append(row["run_id"])
            if len(seen) == 2:
                row["run_id"] = seen[0]
        rewrite_runs(dup, second_as_first)
        self.refused([self.a, dup], f"dup/runs.csv: line 3: run_id {seen[0]} is also on line 2 (allowed: each run_id "
                                    f"once")
        status = mcmclb("status", STUDY, "--out", dup)
        said = [line for line in status.stdout.splitlines() if "recorded more than once" in line]
        self.assertEqual(len(said), 1, status.stdout + status.stderr)
        self.assertIn(f"dup/runs.csv: 1 run_id(s) recorded more than once, first {seen[0]}", said[0])
        self.assertNotIn("recorded more than once", mcmclb("status", STUDY, "--out", self.a).stdout)
        plot = subprocess.run([sys.executable, os.path.join(ROOT, "plots", "summary.py"), dup], capture_output=True,
                              text=True, timeout=60)
        self.assertEqual(plot.returncode, 2, plot.stdout + plot.stderr)
        self.assertEqual(len(plot.stderr.strip().splitlines()), 1, plot.stderr)
        self.assertIn(f"dup/runs.csv: line 3: run_id {seen[0]} is also on line 2", plot.stderr)

    def one_folder(self, name, relabelled, backend=None):
        """A folder holding a's runs and, for each (columns, factor) of relabelled, a copy of them with those key
        columns changed and every time multiplied by factor: set-ups of one folder whose ratios are known."""
        dest = self.copy(name)
        path = os.path.join(dest, "runs.csv")
        original = rows(path)
        out = []
        for k, (columns, factor) in enumerate([({}, 1)] + relabelled):
            for row in original:
                row = dict(row, **columns)
                row.update(run_id=f"{row['run_id']}-{k}", time_s=repr(float(row["time_s"]) * factor))
                if backend:
                    row.update(backend=backend, platform="configs/platforms/bgp.xml")
                out.append(row)
        with open(path, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(original[0]), lineterminator="\n")
            writer.writeheader()
            writer.writerows(out)
        return dest

    def within(self, folder, *extra):
        csv_path = os.path.join(self.tmp, "within.csv")
        r = mcmclb("compare", folder, "--csv", csv_path, *extra)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        return r, rows(csv_path)

    def test_within_one_folder_every_set_up_is_ranked_against_its_baseline(self):
        # none (a's runs), async 10 % slower and steal 10 % faster, at T_ms 40 and 60: each T_ms its own baseline.
        one = self.one_folder("one", [({"balancer": "async", "method": "intercomm", "finished": "pays"}, 1.1),
                                      ({"balancer": "steal"}, 0.9)])
        r, table = self.within(one, "--baseline", "balancer=none")
        ranked = [(t["point"].split()[1], t["point"].split()[2], t["verdict"]) for t in table]
        self.assertEqual(ranked, [(T, b, v) for T in ("T_ms=40", "T_ms=60")
                                  for b, v in (("steal", "faster"), ("none", "baseline"), ("async", "slower"))],
                         r.stdout)
        for t in table:
            self.assertEqual((t["n_a"], t["n_b"]), ("6", "6"))
            want = {"steal": 0.9, "none": 1, "async": 1.1}[t["point"].split()[2]]
            self.assertAlmostEqual(float(t["ratio"]), want, places=6)
            if t["verdict"] != "baseline":  # the interval compare A B gives, its baseline as A
                self.assertLessEqual(float(t["ratio_low"]), float(t["ratio"]))
                self.assertLessEqual(float(t["ratio"]), float(t["ratio_high"]))
                self.assertLess(float(t["p_value"]), 0.05)
        self.assertEqual(r.stdout.count("baseline: P=2 T_ms="), 2, r.stdout)
        self.assertIn("compare: 6 set-up(s) against 2 baseline(s): 2 baseline, 2 faster, 2 slower", r.stdout)
        self.assertNotIn("simulated", r.stdout)
        # Any key column names the baseline: here T_ms = 40, against which each balancer's T_ms = 60 is slower.
        r, table = self.within(one, "--baseline", "T_ms=40")
        self.assertEqual(sorted(t["verdict"] for t in table), ["baseline"] * 3 + ["slower"] * 3, r.stdout)
        # A set-up with no baseline in the folder is listed as such, not ranked.
        r, table = self.within(one, "--baseline", "balancer=async")
        self.assertEqual(sorted(t["verdict"] for t in table), ["baseline"] * 2 + ["faster"] * 4, r.stdout)
        r, table = self.within(one, "--baseline", "method=intercomm")  # only async has it
        self.assertEqual(sorted(t["verdict"] for t in table), ["baseline"] * 2 + ["no baseline"] * 4, r.stdout)

    def test_within_a_simulated_folder_the_ratio_is_exact(self):
        sim = self.one_folder("one-sim", [({"balancer": "steal"}, 0.9)], backend="smpi")
        r, table = self.within(sim, "--baseline", "balancer=none")
        self.assertEqual([t["verdict"] for t in table], ["faster (simulated)", "baseline"] * 2, r.stdout)
        self.assertEqual({t["p_value"] for t in table}, {""}, "no test for deterministic runs")
        self.assertIn("simulated set-ups: their runs are deterministic", r.stdout)

    def test_within_bad_baselines_are_one_line(self):
        one = self.one_folder("one-bad", [({"balancer": "async", "method": "intercomm", "finished": "pays"}, 1.1),
                                          ({"balancer": "async", "method": "create_group", "finished": "pays"}, 1.2)])
        self.refused([one, "--baseline", "balancer=nonee"],
                     "--baseline: no set-up of " + one + " has balancer=nonee (allowed: its values there: async, none)")
        self.refused([one, "--baseline", "balancer=async"], "--baseline balancer=async: 2 set-ups of " + one +
                     " match it beside P=2 T_ms=40 async")
        self.refused([one, "--baseline", "balancer=async"], "(allowed: pairs that pick one, e.g. --baseline "
                     "balancer=async,method=create_group)")
        self.refused([one, "--baseline", "rank=1"], "--baseline: 'rank' is not a runs.csv key column")
        self.refused([one, "--baseline", "balancer"], "--baseline: 'balancer' is not KEY=VALUE")
        self.refused([one, "--baseline", "balancer=none,balancer=async"], "--baseline: balancer given twice")
        self.refused([one, "--baseline", "balancer=none", "--baseline", "T_ms=40"], "--baseline: given twice")
        self.refused([one, self.a, "--baseline", "balancer=none"], "--baseline: 2 folder(s) given, one needed")
        self.refused([one, "--baseline", "balancer=none", "--ignore", "T_ms"], "--ignore: only with two folders")
        self.refused([one, "--baseline", "balancer=none", "--alpha", "2"], "--alpha: '2' is not a significance level")

    def test_older_folder_is_read_through_its_upgrade(self):
        older = os.path.join(ROOT, "tests", "fixtures", "results-v0.1")
        r = mcmclb("compare", older, older)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("point(s)", r.stdout)


class UntilCi(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.out = os.path.join(self.tmp, "out")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def test_repeats_until_the_interval_or_the_cap_and_resumes(self):
        # Two repetitions to begin with: below 6 there is no interval, so the first round brings each point to 6,
        # whose interval (sleep-dominated) is well within 50 % of the median.
        r = sweep(self.out, "--set", "reps=2", "--until-ci", "50", "--max-reps", "8")
        self.assertIn("until-ci round 1: 8 more run(s)", r.stdout)
        self.assertNotIn("until-ci round 2", r.stdout)
        self.assertIn("sweep repeat: 4 run (+8 repeated for --until-ci), 0 skipped, 0 failed", r.stdout)
        stop = rows(os.path.join(self.out, "stopping.csv"))
        self.assertEqual([s["reason"] for s in stop], ["ci_reached"] * 2, stop)
        self.assertEqual([s["reps"] for s in stop], ["6", "6"])
        self.assertEqual(len(rows(os.path.join(self.out, "runs.csv"))), 12)
        # Resumed with the same target: nothing to run, the same rows, none twice.
        r = sweep(self.out, "--set", "reps=2", "--until-ci", "50", "--max-reps", "8")
        self.assertIn("0 to run", r.stdout)
        self.assertNotIn("until-ci round", r.stdout)
        self.assertEqual(len(rows(os.path.join(self.out, "runs.csv"))), 12)
        self.assertEqual(len(rows(os.path.join(self.out, "stopping.csv"))), 2)
        # A target no sleep can meet: one more repetition per round up to the cap, counted from the 6 already there.
        r = sweep(self.out, "--set", "reps=2", "--until-ci", "0.0001", "--max-reps", "7")
        self.assertIn("until-ci round 1: 2 more run(s)", r.stdout)
        stop = rows(os.path.join(self.out, "stopping.csv"))
        self.assertEqual([s["reason"] for s in stop], ["cap"] * 2, stop)
        self.assertEqual([s["reps"] for s in stop], ["7", "7"])
        reps = sorted(int(row["rep"]) for row in rows(os.path.join(self.out, "runs.csv")))
        self.assertEqual(reps, sorted(list(range(7)) * 2))  # each repetition once: none lost, none twice

    def test_bad_flags(self):
        for args, fragment in [
                (["--until-ci", "0"], "--until-ci: '0' is not a percentage in (0, 100]"),
                (["--until-ci", "5", "--max-reps", "5"], "--max-reps: '5' is not a repetition count from 6"),
                (["--max-reps", "10"], "--max-reps: only with --until-ci PCT"),
                (["--until-ci", "5", "--launcher", "slurm"], "--until-ci: only with --launcher local or smpi")]:
            launcher = [] if "--launcher" in args else ["--launcher", "local"]
            r = mcmclb("sweep", STUDY, *launcher, "--out", self.out, *args)
            self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
            self.assertIn(fragment, r.stderr)

    def test_foreign_stopping_file_is_refused_before_any_run(self):
        os.makedirs(self.out)
        with open(os.path.join(self.out, "stopping.csv"), "w") as f:
            f.write("something,else\n")
        r = mcmclb("sweep", STUDY, "--launcher", "local", "--out", self.out, "--until-ci", "5")
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("stopping.csv: not a stopping.csv of this mcmclb", r.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.out, "runs.csv")))


class CommbenchSummary(unittest.TestCase):
    def summary(self, reps):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "commbench.csv")
            r = subprocess.run(["mpiexec", "-n", "2", COMMBENCH, "--methods", "split", "--sizes", "1,2", "--reps",
                                str(reps), "--warmup", "0", "--rep-time", "0.001", "--out", out],
                               capture_output=True, text=True, timeout=120)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            return rows(out)

    def test_each_row_carries_its_benchmarks_median_and_interval(self):
        table = self.summary(6)
        benchmarks = {}
        for row in table:
            benchmarks.setdefault((row["op"], row["group_size"]), []).append(row)
        self.assertEqual(len(benchmarks), 4)  # create and free, sizes 1 and 2
        for key, group in benchmarks.items():
            times = sorted(float(row["time_us"]) for row in group)
            self.assertEqual(len(times), 6)
            for row in group:
                self.assertEqual(row["reps"], "6")
                self.assertAlmostEqual(float(row["median_us"]), (times[2] + times[3]) / 2, delta=1e-6 * times[3])
                # 6 repetitions: the interval is ranks 1..6, the whole range.
                self.assertAlmostEqual(float(row["median_ci_low_us"]), times[0], delta=1e-6 * times[0])
                self.assertAlmostEqual(float(row["median_ci_high_us"]), times[5], delta=1e-6 * times[5])

    def test_no_interval_below_six_repetitions(self):
        for row in self.summary(5):
            self.assertEqual(row["reps"], "5")
            self.assertNotEqual(row["median_us"], "")
            self.assertEqual((row["median_ci_low_us"], row["median_ci_high_us"]), ("", ""))


if __name__ == "__main__":
    unittest.main()
