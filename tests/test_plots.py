"""Plot scripts: fixture CSVs give non-empty PNGs; missing, empty or malformed input gives one line and exit 2."""
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PLOTS = os.path.join(HERE, "..", "plots")
FIXTURES = os.path.join(HERE, "fixtures")


def run(script, *args):
    return subprocess.run([sys.executable, os.path.join(PLOTS, script), *args], capture_output=True, text=True,
                          timeout=120)


class Fig1(unittest.TestCase):
    def test_fixture_gives_png(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "fig1.png")
            r = run("fig1.py", os.path.join(FIXTURES, "commbench_small.csv"), "-o", out, "--pdf")
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
            self.assertGreater(os.path.getsize(out), 10000)
            self.assertTrue(os.path.exists(os.path.join(d, "fig1.pdf")))

    def assert_one_line_error(self, r, fragment):
        self.assertEqual(r.returncode, 2)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn(fragment, r.stderr)

    def test_missing_file(self):
        self.assert_one_line_error(run("fig1.py", "/nonexistent/commbench.csv"), "no such file")

    def test_empty_file(self):
        with tempfile.NamedTemporaryFile("w", suffix=".csv") as f:
            self.assert_one_line_error(run("fig1.py", f.name), "empty file")

    def assert_error_for_content(self, content, fragment):
        with tempfile.NamedTemporaryFile("w", suffix=".csv") as f:
            f.write(content)
            f.flush()
            self.assert_one_line_error(run("fig1.py", f.name), fragment)

    def test_missing_columns(self):
        self.assert_error_for_content("method,op\nintercomm,create\n",
                                      "missing column(s) nprocs, group_size, rep, time_us")

    def test_non_numeric_value(self):
        self.assert_error_for_content("method,op,nprocs,group_size,rep,time_us\nintercomm,create,4,2,0,fast\n",
                                      "column time_us is not a number")

    def test_header_only(self):
        self.assert_error_for_content("method,op,nprocs,group_size,rep,time_us\n", "no data rows")


RESULTS = os.path.join(FIXTURES, "results-small")


def assert_png(test, path):
    with open(path, "rb") as f:
        test.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
    test.assertGreater(os.path.getsize(path), 10000)


class KernelPlots(unittest.TestCase):
    def test_fig2_timeline_and_report(self):
        with tempfile.TemporaryDirectory() as d:
            for script, args in (("fig2.py", [RESULTS, "--reference", "-o", os.path.join(d, "fig2.png")]),
                                 ("timeline.py", [RESULTS, "-o", os.path.join(d, "timeline.png")])):
                r = run(script, *args)
                self.assertEqual(r.returncode, 0, r.stderr)
            assert_png(self, os.path.join(d, "fig2.png"))
            assert_png(self, os.path.join(d, "timeline.png"))
            copy = os.path.join(d, "results")
            os.mkdir(copy)
            for name in ("runs.csv", "ranks.csv", "events.csv"):
                with open(os.path.join(RESULTS, name)) as src, open(os.path.join(copy, name), "w") as dst:
                    dst.write(src.read())
            r = run("report.py", copy)
            self.assertEqual(r.returncode, 0, r.stderr)
            assert_png(self, os.path.join(copy, "fig2.png"))
            assert_png(self, os.path.join(copy, "timeline.png"))
            self.assertIn("Regroupings per process, P = 3", r.stdout)
            self.assertIn("| 3 | async create_group | 1 |", r.stdout)

    def test_table1_exact_numbers(self):
        r = run("table1.py", os.path.join(FIXTURES, "table1-runs.csv"), "--paper")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.splitlines(), [
            "Regroupings per process, P = 8192",
            "| balancer | runs | avg | stdev | min | max | paper avg | paper stdev | paper min | paper max |",
            "|---|---|---|---|---|---|---|---|---|---|",
            "| none | 1 | 0.00 | 0.00 | 0 | 0 | 0.00 | 0.00 | 0 | 0 |",
            "| async intercomm | 2 | 14.38 | 3.54 | 5 | 26 | 14.38 | 3.54 | 5 | 26 |",
            "| collective(1) create | 1 | 5.38 | 2.12 | 2 | 8 | 5.38 | 2.12 | 2 | 8 |",
            "| collective(128) create | 1 | 2.62 | 0.48 | 2 | 3 | 2.62 | 0.48 | 2 | 3 |"])
        r = run("table1.py", os.path.join(FIXTURES, "table1-runs.csv"), "--nprocs", "32", "--format", "csv")
        self.assertEqual(r.stdout.splitlines(), ["balancer,runs,avg,stdev,min,max", "collective(1) create,1,9.00,1.00,3,12"])
        r = run("table1.py", os.path.join(FIXTURES, "table1-runs.csv"), "--format", "latex")
        self.assertIn("collective(128) create & 1 & 2.62 & 0.48 & 2 & 3 \\\\", r.stdout)

    def test_malformed_inputs_give_one_line(self):
        with tempfile.TemporaryDirectory() as d:
            bad = os.path.join(d, "runs.csv")
            with open(bad, "w") as f:
                f.write("run_id,nprocs\nx,4\n")
            for script in ("fig2.py", "table1.py", "timeline.py", "report.py", "summary.py"):
                r = run(script, d)
                self.assertEqual(r.returncode, 2, script + r.stderr)
                self.assertEqual(len(r.stderr.strip().splitlines()), 1, script + ": " + r.stderr)
                self.assertIn("malformed, missing column(s)", r.stderr)
            r = run("table1.py", os.path.join(FIXTURES, "table1-runs.csv"), "--nprocs", "5")
            self.assertEqual(r.returncode, 2)
            self.assertIn("no runs with nprocs=5 (has 32, 8192)", r.stderr)


if __name__ == "__main__":
    unittest.main()
