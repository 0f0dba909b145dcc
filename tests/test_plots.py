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

    def test_missing_columns(self):
        with tempfile.NamedTemporaryFile("w", suffix=".csv") as f:
            f.write("method,op\nintercomm,create\n")
            f.flush()
            self.assert_one_line_error(run("fig1.py", f.name), "missing column(s) nprocs, group_size, rep, time_us")

    def test_non_numeric_value(self):
        with tempfile.NamedTemporaryFile("w", suffix=".csv") as f:
            f.write("method,op,nprocs,group_size,rep,time_us\nintercomm,create,4,2,0,fast\n")
            f.flush()
            self.assert_one_line_error(run("fig1.py", f.name), "column time_us is not a number")

    def test_header_only(self):
        with tempfile.NamedTemporaryFile("w", suffix=".csv") as f:
            f.write("method,op,nprocs,group_size,rep,time_us\n")
            f.flush()
            self.assert_one_line_error(run("fig1.py", f.name), "no data rows")


if __name__ == "__main__":
    unittest.main()
