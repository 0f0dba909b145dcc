# SPDX-License-Identifier: BSD-3-Clause
"""Plot scripts: fixture CSVs give non-empty PNGs; missing, empty or malformed input gives one line and exit 2."""
import base64
import contextlib
import csv
import io
import os
import re
import runpy
import shutil
import subprocess
import sys
import tempfile
import traceback
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
PLOTS = os.environ.get("MCMCLB_PLOTS", os.path.join(HERE, "..", "plots"))  # another checkout's, to compare
FIXTURES = os.path.join(HERE, "fixtures")


def run_cli(script, *args):
    """The script as a real command: its own interpreter, its exit status and both streams."""
    return subprocess.run([sys.executable, os.path.join(PLOTS, script), *args], capture_output=True, text=True,
                          timeout=120)


def run(script, *args):
    """The script run inside this interpreter as its command line would run it (as __main__, with that argv), giving
    what run_cli gives: exit status, stdout, stderr. Starting Python and importing matplotlib afresh for each of
    some sixty runs was most of this suite's CPU time; CommandLine keeps every script's real command covered, and
    the FIFO and device checks stay real commands for their hang timeouts."""
    path = os.path.join(PLOTS, script)
    out, err = io.StringIO(), io.StringIO()
    saved_argv, sys.argv = sys.argv, [path, *args]
    code = 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                runpy.run_path(path, run_name="__main__")
            except SystemExit as e:  # what the interpreter does with sys.exit's argument
                if e.code is not None and not isinstance(e.code, int):
                    print(e.code, file=sys.stderr)
                code = 1 if e.code is not None and not isinstance(e.code, int) else e.code or 0
            except Exception:  # an uncaught exception: a traceback and status 1, as from the command
                traceback.print_exc()
                code = 1
    finally:
        sys.argv = saved_argv
        if "matplotlib.pyplot" in sys.modules:  # a process per run would drop its figures at exit
            sys.modules["matplotlib.pyplot"].close("all")
    return subprocess.CompletedProcess([sys.executable, path, *args], code, out.getvalue(), err.getvalue())


class CommandLine(unittest.TestCase):
    def test_every_script_runs_with_the_python_on_path(self):
        """Each script a user runs starts with `#!/usr/bin/env python3` (a virtual environment's or conda's python3,
        where matplotlib is on a cluster) and is executable."""
        for name in sorted(os.listdir(PLOTS)):
            path = os.path.join(PLOTS, name)
            if name.endswith(".py"):
                with open(path) as f:
                    text = f.read()
                if 'if __name__ == "__main__":' in text:
                    with self.subTest(script=name):
                        self.assertTrue(text.startswith("#!/usr/bin/env python3\n"), text.splitlines()[0])
                        self.assertTrue(os.access(path, os.X_OK))

    def test_without_matplotlib_another_python_draws(self):
        """A python3 without matplotlib first (here: site-packages left out, -S) still draws: the script starts
        itself again under a python3 that has it and says so in one line."""
        folder = os.path.join(HERE, "..", "docs", "data", "async-vs-lookahead")
        with tempfile.TemporaryDirectory() as d:
            for script, args, output in (("fig2.py", [folder, "-o", os.path.join(d, "f.png")], "f.png"),
                                         ("fig1.py", [os.path.join(HERE, "..", "docs", "data", "fig1-sim-bgp"), "-o",
                                                      os.path.join(d, "c.png")], "c.png")):
                with self.subTest(script=script):
                    r = subprocess.run([sys.executable, "-S", os.path.join(PLOTS, script), *args], capture_output=True,
                                       text=True, timeout=120, env={k: v for k, v in os.environ.items()
                                                                    if k != "MCMCLB_PYTHON_FALLBACK"})
                    self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
                    notes = [line for line in r.stderr.splitlines() if "matplotlib is not installed" in line]
                    self.assertEqual(len(notes), 1, r.stderr)
                    self.assertIn("running with", notes[0])
                    self.assertTrue(os.path.getsize(os.path.join(d, output)) > 0)
                    self.assertEqual(r.stdout.count("wrote "), 1, r.stdout)  # printed once, by the second Python

    def test_without_matplotlib_one_line_and_nothing_written(self):
        """Where no python3 has matplotlib (here: -S, and the fallback already taken, as its environment marks), one
        line naming what to install, with pip's and Debian's names, and exit 2, before anything is written."""
        folder = os.path.join(HERE, "..", "docs", "data", "async-vs-lookahead")
        with tempfile.TemporaryDirectory() as d:
            for script, args in (("fig2.py", [folder, "-o", os.path.join(d, "f.png")]),
                                 ("timeline.py", [folder, "-o", os.path.join(d, "t.png")]),
                                 ("report.py", [folder, "--html", os.path.join(d, "r.html")])):
                with self.subTest(script=script):
                    r = subprocess.run([sys.executable, "-S", os.path.join(PLOTS, script), *args], capture_output=True,
                                       text=True, timeout=120, env=dict(os.environ, MCMCLB_PYTHON_FALLBACK="1"))
                    self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                    self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
                    for word in ("matplotlib is not installed", "pip install matplotlib", "python3-matplotlib"):
                        self.assertIn(word, r.stderr)
                    self.assertEqual(os.listdir(d), [])

    def test_every_script_as_a_command(self):
        """Each plot script as a real command: --help exits 0, a missing input is one line on stderr and exit 2."""
        scripts = []
        for name in sorted(os.listdir(PLOTS)):
            if name.endswith(".py"):
                with open(os.path.join(PLOTS, name)) as f:
                    if 'if __name__ == "__main__":' in f.read():
                        scripts.append(name)
        self.assertGreaterEqual(len(scripts), 10)
        with tempfile.TemporaryDirectory() as d:
            missing = os.path.join(d, "absent")
            for script in scripts:
                with self.subTest(script=script):
                    r = run_cli(script, "--help")
                    self.assertEqual(r.returncode, 0, r.stderr)
                    self.assertIn("usage", r.stdout.lower())
                    dest = (os.path.join(d, "dest"),) if script == "figure_data.py" else ()  # its second argument
                    r = run_cli(script, missing, *dest)
                    self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                    self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
                    self.assertIn(missing, r.stderr)


class Fig1(unittest.TestCase):
    def test_fixture_gives_png(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "fig1.png")
            r = run_cli("fig1.py", os.path.join(FIXTURES, "commbench_small.csv"), "-o", out, "--pdf")  # a real command
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
            self.assertGreater(os.path.getsize(out), 10000)
            self.assertTrue(os.path.exists(os.path.join(d, "fig1.pdf")))

    def test_reads_every_commbench_version_together(self):
        """commbench_small.csv (14 columns, the first version), commbench_crossover.csv (a later one) and
        commbench_slurm.csv (22 columns: measured in a Slurm job of the local test cluster, slurm_job_id and
        slurm_nodelist last; the repetitions' summary columns came after them) in one figure: a reader keyed by
        column name takes each version."""
        sys.path.insert(0, PLOTS)
        import mcmclb_csv
        self.assertEqual(list(mcmclb_csv.SCHEMAS["commbench.csv"])[-7:],
                         ["slurm_job_id", "slurm_nodelist", "reps", "median_us", "median_ci_low_us",
                          "median_ci_high_us", "simgrid_version"])
        newest = os.path.join(FIXTURES, "commbench_slurm.csv")
        rows = mcmclb_csv.read_csv(newest, "commbench.csv", ("method", "slurm_job_id", "slurm_nodelist"))
        self.assertTrue(all(r["slurm_job_id"] and r["slurm_nodelist"] for r in rows), rows)
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "fig1.png")
            r = run("fig1.py", os.path.join(FIXTURES, "commbench_small.csv"),
                    os.path.join(FIXTURES, "commbench_crossover.csv"), newest, "-o", out)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")

    def test_two_mpi_libraries_are_two_series(self):
        """The same benchmark under MPICH and Open MPI in one figure: each measured series is keyed and labelled by
        its library (provenance's mpi_library), so the two are drawn, tabled and crossed over side by side instead
        of pooled into one set of repetitions."""
        sys.path.insert(0, PLOTS)
        import mcmclb_csv
        self.assertEqual(mcmclb_csv.library_name("MPICH Version: 4.0.2"), "MPICH 4.0.2")
        self.assertEqual(mcmclb_csv.library_name("Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev: "
                                                 "v4.1.4, May 26, 2022"), "Open MPI 4.1.4")
        self.assertEqual(mcmclb_csv.library_name("Some MPI 7, built today"), "Some MPI 7")
        self.assertEqual(mcmclb_csv.library_name(""), "")
        with open(os.path.join(FIXTURES, "commbench_small.csv")) as f:
            text = f.read()
        self.assertIn("MPICH Version: 4.0.2", text)
        with tempfile.TemporaryDirectory() as d:
            other = os.path.join(d, "openmpi.csv")
            with open(other, "w") as f:
                f.write(text.replace("MPICH Version: 4.0.2", "\"Open MPI v4.1.4, package: Debian OpenMPI\""))
            out = os.path.join(d, "fig1.png")
            r = run("fig1.py", os.path.join(FIXTURES, "commbench_small.csv"), other, "-o", out)
            self.assertEqual(r.returncode, 0, r.stderr)
            assert_png(self, out)
        table = [line for line in r.stdout.splitlines() if line.startswith("| ")]
        for library in ("MPICH 4.0.2", "Open MPI 4.1.4"):
            rows = [line for line in table if f"mpi ({library})" in line]
            self.assertTrue(rows, r.stdout)
            # Each library's series keeps its own repetitions (the fixture's count), not the two pooled.
            runs = {line.split("|")[5].strip() for line in rows}
            self.assertNotIn(str(2 * max(int(n) for n in runs)), runs, r.stdout)

    def test_fit_names_each_shape(self):
        """fig1.py fits t = a + b*log2(g) and t = a + c*log2(g)^2 over g >= 2 and names the better model: series
        built from known shapes (plus a small deterministic wobble) must come back with their coefficients."""
        header = "method,op,nprocs,group_size,rep,time_us,backend,platform\n"
        shapes = {"intercomm": lambda x: 3.0 + 2.0 * x * x, "create_group": lambda x: 5.0 + 4.0 * x,
                  "range": lambda x: 0.01}
        lines = []
        for method, t in shapes.items():
            for k in range(0, 11):
                for rep in range(3):
                    wobble = 0.0 if method == "range" else 0.01 * ((k * 7 + rep) % 3 - 1)
                    time_us = f"{t(k) + wobble:.4f}"
                    lines.append(f"{method},create,1024,{2 ** k},{rep},{time_us},smpi,configs/platforms/bgp.xml")
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "commbench.csv")
            with open(path, "w") as f:
                f.write(header + "\n".join(lines) + "\n")
            r = run("fig1.py", path)
            self.assertEqual(r.returncode, 0, r.stderr)
            assert_png(self, os.path.join(d, "fig1.png"))
        rows = {line.split()[0]: line.split() for line in r.stdout.splitlines()
                if line.split() and line.split()[0] in shapes}
        self.assertEqual(rows["intercomm"][-1], "log2(g)^2", r.stdout)
        self.assertAlmostEqual(float(rows["intercomm"][9]), 2.0, places=2)  # c
        self.assertEqual(rows["create_group"][-1], "log2(g)", r.stdout)
        self.assertAlmostEqual(float(rows["create_group"][5]), 4.0, places=2)  # b
        self.assertEqual(rows["range"][-1], "constant", r.stdout)
        self.assertEqual(rows["intercomm"][3], "10", "points: the sizes 2 .. 1024")
        self.assertIn("simulated times, BG/P-like platform", r.stdout)

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

    def test_stat_median_plots_the_median_iteration(self):
        """--stat median reads iter_median_us, --stat mean (the default) time_us: a series whose mean grows with g
        (a preemption now and then) while its median iteration stays flat is fitted as each statistic says."""
        header = "method,op,nprocs,group_size,rep,iterations,time_us,iter_min_us,iter_max_us,iter_median_us\n"
        lines = []
        for k in range(0, 4):
            for rep in range(3):
                mean = 0.5 + 0.4 * k + 0.01 * ((k + rep) % 3 - 1)
                median_us = 0.02 + 0.0001 * rep
                lines.append(f"range,create,8,{2 ** k},{rep},1000,{mean:.4f},0.01,3000,{median_us:.4f}")
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "commbench.csv")
            with open(path, "w") as f:
                f.write(header + "\n".join(lines) + "\n")
            fits = {}
            for stat in ("mean", "median"):
                out = os.path.join(d, f"fig1-{stat}.png")
                r = run("fig1.py", path, "--stat", stat, "-o", out)
                self.assertEqual(r.returncode, 0, r.stderr)
                assert_png(self, out)
                self.assertIn("mean of the iterations" if stat == "mean" else "median iteration", r.stdout)
                fits[stat] = next(line.split() for line in r.stdout.splitlines() if line.startswith("range "))
            r = run("fig1.py", path, "-o", os.path.join(d, "default.png"))
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("mean of the iterations", r.stdout, "mean is the default")
        self.assertEqual(fits["mean"][-1], "log2(g)", fits)
        self.assertAlmostEqual(float(fits["mean"][5]), 0.4, places=1)  # b
        self.assertEqual(fits["median"][-1], "constant", fits)
        self.assertAlmostEqual(float(fits["median"][4]), 0.02, places=3)  # a

    def test_stat_median_needs_the_column(self):
        """A file older than iter_median_us (the fixture), or one whose column is empty, is one line naming it."""
        older = os.path.join(FIXTURES, "commbench_small.csv")
        r = run("fig1.py", older, "--stat", "median", "-o", os.path.join(tempfile.gettempdir(), "x.png"))
        self.assert_one_line_error(r, f"{older}: no iter_median_us column")
        self.assertIn("--stat mean", r.stderr)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "commbench.csv")
            with open(path, "w") as f:
                f.write("method,op,nprocs,group_size,rep,time_us,iter_median_us\n"
                        "range,create,4,1,0,0.5,0.02\nrange,create,4,2,0,0.6,\n")
            r = run("fig1.py", path, "--stat", "median")
            self.assert_one_line_error(r, f"{path}: line 3: column iter_median_us is empty")
            self.assertFalse(os.path.exists(os.path.join(d, "fig1.png")))
            # Several inputs: the one without the column is named, even after a good one.
            r = run("fig1.py", path.replace("commbench.csv", "none.csv"), "--stat", "median")
            self.assert_one_line_error(r, "no such file")
            good = os.path.join(d, "good.csv")
            with open(good, "w") as f:
                f.write("method,op,nprocs,group_size,rep,time_us,iter_median_us\nrange,create,4,1,0,0.5,0.02\n")
            r = run("fig1.py", good, older, "--stat", "median", "-o", os.path.join(d, "y.png"))
            self.assert_one_line_error(r, f"{older}: no iter_median_us column")

    def test_crossover_of_intercomm_and_create(self):
        """The fixture at P = 64: medians intercomm 60 and create 80 µs at g = 8, 100 and 84 µs at g = 16, so
        intercomm - create goes from -20 to +16 and the crossover is 2^(3 + 20/36) = 11.758 (interpolated in
        log2 g). At P = 128 intercomm is dearer at every size it shares with create (2-8): none in range."""
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "fig1.svg")
            r = run("fig1.py", os.path.join(FIXTURES, "commbench_crossover.csv"), "-o", out)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out) as f:
                svg = f.read()
        lines = [line for line in r.stdout.splitlines() if line.startswith("crossover")]
        self.assertEqual(lines, [
            "crossover: intercomm dearer than create from group size 11.8 (P = 64; between the measured sizes 8 "
            "and 16)",
            "crossover: intercomm dearer than create: none in range (P = 128; intercomm dearer at every measured "
            "size 2-8)"])
        printed = float(lines[0].split("group size ")[1].split()[0])
        self.assertAlmostEqual(printed, 2 ** (3 + 20 / 36), delta=0.05)
        # The line's legend entry and every method, split included, are drawn (matplotlib writes each text as a
        # comment in the SVG).
        self.assertIn("<!-- intercomm dearer than create from g = 11.8 (P = 64) -->", svg)
        for label in ("split (P=64)", "create (P=64)", "create_group (P=64)", "intercomm (P=128)"):
            self.assertIn(f"<!-- {label} -->", svg)

    def test_crossover_cases(self):
        """Only rows of one P with both methods give a crossover; one that crosses back says so; a P with only
        one of the two is named; without create no crossover line at all."""
        header = "method,op,nprocs,group_size,rep,time_us\n"
        cases = (
            # intercomm - create: -1 at 2, +3 at 4 (crossover 2^(1 + 1/4) = 2.38), -2 at 8: cheaper again from 8
            ({"intercomm": {2: 9, 4: 13, 8: 10}, "create": {2: 10, 4: 10, 8: 12}},
             ["crossover: intercomm dearer than create from group size 2.4 (P = 16; between the measured sizes 2 "
              "and 4; no dearer again from 8)"]),
            # dearer at 2, cheaper from 4 on: never turns positive
            ({"intercomm": {2: 15, 4: 9, 8: 10}, "create": {2: 10, 4: 10, 8: 12}},
             ["crossover: intercomm dearer than create: none in range (P = 16; intercomm dearer only at the "
              "smallest measured sizes, up to 2)"]),
            # equal at 4 (d = 0), dearer at 8: the crossover is 4 itself
            ({"intercomm": {2: 5, 4: 10, 8: 20}, "create": {2: 10, 4: 10, 8: 12}},
             ["crossover: intercomm dearer than create from group size 4.0 (P = 16; between the measured sizes 4 "
              "and 8)"]),
            ({"intercomm": {2: 5, 4: 10}, "create_group": {2: 1, 4: 2}}, []),
        )
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "commbench.csv")
            for methods, expected in cases:
                with open(path, "w") as f:
                    f.write(header + "".join(f"{m},create,16,{s},0,{t}\n" for m, ts in methods.items()
                                             for s, t in ts.items()))
                r = run("fig1.py", path)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertEqual([line for line in r.stdout.splitlines() if line.startswith("crossover")], expected)
            with open(path, "a") as f:
                f.write("intercomm,create,32,2,0,5\n")
            r = run("fig1.py", path)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual([line for line in r.stdout.splitlines() if line.startswith("crossover")], [])
            with open(path, "w") as f:
                f.write(header + "intercomm,create,16,2,0,5\ncreate,create,16,2,0,9\nintercomm,create,32,2,0,5\n")
            r = run("fig1.py", path)
            self.assertEqual([line for line in r.stdout.splitlines() if line.startswith("crossover")], [
                "crossover: intercomm dearer than create: none in range (P = 16; intercomm no dearer at any measured "
                "size 2)",
                "crossover: intercomm dearer than create: not measured (P = 32; only intercomm was run)"])


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

    def test_timeline_of_thousands_of_ranks_and_a_rank_range(self):
        """A simulated run of thousands of ranks: the figure stops growing (its height once exceeded what a PNG
        can hold, 69000 pixels at 2048 ranks, and the script died with a traceback); --ranks draws a slice."""
        with tempfile.TemporaryDirectory() as d:
            copy = widened_results(d, 3000)
            out = os.path.join(d, "t.png")
            r = run("timeline.py", copy, "-o", out)
            self.assertEqual(r.returncode, 0, r.stderr)
            assert_png(self, out)
            with open(out, "rb") as f:
                height = int.from_bytes(f.read(24)[20:24], "big")  # the PNG header's image height
            self.assertLessEqual(height, 12 * 120)
            for ranks in ("100-163", "2999-2999"):
                r = run("timeline.py", copy, "--ranks", ranks, "-o", out)
                self.assertEqual(r.returncode, 0, r.stderr)
                assert_png(self, out)
            for bad, fragment in (("5-2", "is not FIRST-LAST"), ("0-3000", "has ranks 0-2999")):
                r = run("timeline.py", copy, "--ranks", bad, "-o", out)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
                self.assertIn(fragment, r.stderr)

    def test_table1_exact_numbers(self):
        r = run("table1.py", os.path.join(FIXTURES, "table1-runs.csv"), "--paper")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.splitlines(), [
            "Regroupings per process, P = 8192, real MPI; paper: Dinan et al. 2011, Blue Gene/P, 8192 cores",
            "| balancer | runs | avg | stdev | min | max | paper avg | paper stdev | paper min | paper max |",
            "|---|---|---|---|---|---|---|---|---|---|",
            "| none | 1 | 0.00 | 0.00 | 0 | 0 | 0.00 | 0.00 | 0 | 0 |",
            "| async intercomm | 2 | 14.38 | 3.54 | 5 | 26 | 14.38 | 3.54 | 5 | 26 |",
            "| collective(1) create | 1 | 5.38 | 2.12 | 2 | 8 | 5.38 | 2.12 | 2 | 8 |",
            # every other row of the paper's table, in its place, said to be missing here
            *[f"| collective({i}) | not run |  |  |  |  | 5.38 | 2.12 | 2 | 8 |" for i in (2, 4, 8, 16, 32)],
            "| collective(64) | not run |  |  |  |  | 3.75 | 1.20 | 2 | 5 |",
            "| collective(128) create | 1 | 2.62 | 0.48 | 2 | 3 | 2.62 | 0.48 | 2 | 3 |"])
        r = run("table1.py", os.path.join(FIXTURES, "table1-runs.csv"), "--paper", "--format", "csv")
        self.assertIn("collective(64),0,,,,,3.75,1.20,2,5,mpi,", r.stdout.splitlines())
        r = run("table1.py", os.path.join(FIXTURES, "table1-runs.csv"), "--nprocs", "32", "--format", "csv")
        self.assertEqual(r.stdout.splitlines(), ["balancer,runs,avg,stdev,min,max,backend,platform",
                                                 "collective(1) create,1,9.00,1.00,3,12,mpi,"])
        r = run("table1.py", os.path.join(FIXTURES, "table1-runs.csv"), "--format", "latex")
        self.assertIn("collective(128) create & 1 & 2.62 & 0.48 & 2 & 3 \\\\", r.stdout)

    def test_table1_keeps_noise_levels_and_finished_rules_apart(self):
        # Runs that differ in item noise or in the finished rule are different experiments: one row each, never
        # averaged together; both async rows are set beside the paper's async row.
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(FIXTURES, "table1-runs.csv")) as f:
                rows = list(csv.DictReader(f))
            header = list(rows[0]) + ["finished"]
            async_row = next(r for r in rows if r["balancer"] == "async")
            variants = []
            for jitter, finished, avg, mx in (("0", "retire", "5.38", "8"), ("2", "retire", "8.84", "17"),
                                              ("2", "coalesce", "13.10", "21")):
                v = dict(async_row, jitter_pct=jitter, finished=finished, regroups_avg=avg, regroups_max=mx,
                         run_id=f"r{jitter}{finished}")
                variants.append(v)
            with open(os.path.join(d, "runs.csv"), "w", newline="") as f:
                w = csv.DictWriter(f, header, lineterminator="\n")
                w.writeheader()
                w.writerows(variants)
            r = run("table1.py", d, "--paper", "--format", "csv")
            self.assertEqual(r.returncode, 0, r.stderr)
            lines = [row for row in csv.reader(r.stdout.splitlines()) if row[0].startswith("async")]
            self.assertEqual([row[:6] for row in lines], [
                ["async intercomm", "1", "5.38", "3.50", "5", "8"],
                ["async intercomm, jitter 2 %", "1", "8.84", "3.50", "5", "17"],
                ["async intercomm coalesce, jitter 2 %", "1", "13.10", "3.50", "5", "21"]])
            for row in lines:
                self.assertEqual(row[6:10], ["14.38", "3.54", "5", "26"])

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


SCRIPTS = ("fig2.py", "table1.py", "timeline.py", "summary.py", "report.py")  # those reading a results folder
BGP = "/opt/mcmclb/configs/platforms/bgp.xml"


def simulated(data, platform=BGP):
    """runs.csv bytes with every row relabelled as simulated on platform (backend smpi), as an smpi sweep writes
    them, and times 10 % lower, so a test can tell the two series apart."""
    lines = data.split(b"\n")
    header = lines[0].split(b",")
    out = [lines[0]]
    for line in lines[1:]:
        if not line:
            out.append(line)
            continue
        fields = line.split(b",")
        fields[header.index(b"backend")] = b"smpi"
        fields[header.index(b"platform")] = platform.encode()
        fields[header.index(b"run_id")] += b"-sim"
        time = header.index(b"time_s")
        fields[time] = repr(float(fields[time]) * 0.9).encode()
        out.append(b",".join(fields))
    return b"\n".join(out)


class Backends(unittest.TestCase):
    """Real-MPI and simulated rows in one figure (simulated series dashed and labelled), and tables that
    say their backend and never mix two."""

    def folders(self, d):
        real = copy_results(d)
        sim = os.path.join(d, "sim")
        shutil.copytree(RESULTS, sim)
        edit_csv(sim, "runs.csv", simulated)
        return real, sim

    def test_fig2_real_and_simulated_in_one_figure(self):
        with tempfile.TemporaryDirectory() as d:
            real, sim = self.folders(d)
            out = os.path.join(d, "both.png")
            r = run("fig2.py", real, sim, "-o", out)
            self.assertEqual(r.returncode, 0, r.stderr)
            assert_png(self, out)
            series = [line for line in r.stdout.splitlines() if line.startswith("series: ")][0][8:].split("; ")
            self.assertIn("none, real MPI", series)
            self.assertIn("none, simulated (bgp) [dashed]", series)
            self.assertIn("async create_group, simulated (bgp) [dashed]", series)
            self.assertEqual(len(series), 4, series)
            # One folder holding both (a local and an smpi sweep into the same output) draws the same series.
            with open(os.path.join(sim, "runs.csv")) as src:
                simulated_rows = src.read().split("\n", 1)[1]
            with open(os.path.join(real, "runs.csv"), "a") as dst:
                dst.write(simulated_rows)
            r = run("fig2.py", real, "-o", out)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(sorted(r.stdout.splitlines()[-1][8:].split("; ")), sorted(series))
            # A real folder alone keeps its plain labels.
            r = run("fig2.py", RESULTS, "-o", out)
            self.assertEqual(r.stdout.splitlines()[-1], "series: none; async create_group")

    def test_table1_names_its_backend_and_refuses_to_mix(self):
        with tempfile.TemporaryDirectory() as d:
            real, sim = self.folders(d)
            r = run("table1.py", sim, "--paper")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout.splitlines()[0],
                             "Regroupings per process, P = 3, simulated (bgp) (simulated with SimGrid, not measured); "
                             "paper: Dinan et al. 2011, Blue Gene/P, 8192 cores")
            r = run("table1.py", real, sim)
            self.assertEqual(r.returncode, 2, r.stdout)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
            self.assertIn(f"the runs with nprocs=3 come from real MPI; {BGP}, which one table must not mix "
                          "(allowed: choose one with --backend mpi|smpi and --platform NAME)", r.stderr)
            r = run("table1.py", real, sim, "--backend", "smpi", "--format", "csv")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertTrue(all(line.endswith(",smpi," + BGP) for line in r.stdout.splitlines()[1:]), r.stdout)
            r = run("table1.py", real, sim, "--backend", "mpi")
            self.assertEqual(r.stdout.splitlines()[0], "Regroupings per process, P = 3, real MPI")
            # Two platforms are two sources too.
            other = os.path.join(d, "fattree")
            shutil.copytree(RESULTS, other)
            edit_csv(other, "runs.csv", lambda b: simulated(b, "/opt/mcmclb/configs/platforms/fattree.xml"))
            r = run("table1.py", sim, other, "--backend", "smpi")
            self.assertEqual(r.returncode, 2)
            self.assertIn("which one table must not mix", r.stderr)
            r = run("table1.py", sim, other, "--platform", "fattree")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("simulated (fattree)", r.stdout.splitlines()[0])

    def test_report_prints_one_table_per_backend(self):
        with tempfile.TemporaryDirectory() as d:
            real, sim = self.folders(d)
            with open(os.path.join(sim, "runs.csv")) as src:
                rows = src.read().split("\n", 1)[1]
            with open(os.path.join(real, "runs.csv"), "a") as dst:
                dst.write(rows)
            r = run("report.py", real)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("Regroupings per process, P = 3, real MPI", r.stdout)
            self.assertIn("Regroupings per process, P = 3, simulated (bgp)", r.stdout)
            self.assertIn("| 3 | async create_group, simulated (bgp) | 1 |", r.stdout)

    def test_bad_backend_fields_are_one_line(self):
        with tempfile.TemporaryDirectory() as d:
            for edit, fragment in ((lambda b: set_field(b, "backend", "gpu"),
                                    "column backend is not one of the allowed values: 'gpu' (allowed: mpi or smpi)"),
                                   (lambda b: set_field(b, "backend", "smpi"),
                                    "backend smpi with platform '' (allowed: smpi rows name their platform file"),
                                   (lambda b: set_field(b, "platform", "x.xml", line=2),
                                    "data row 2 (")):
                folder = copy_results(os.path.join(d, str(len(os.listdir(d)))))
                edit_csv(folder, "runs.csv", edit)
                for script in ("fig2.py", "table1.py", "summary.py", "report.py"):
                    r = run(script, folder)
                    self.assertEqual(r.returncode, 2, script + r.stdout + r.stderr)
                    self.assertEqual(len(r.stderr.strip().splitlines()), 1, script + r.stderr)
                    self.assertNotIn("Traceback", r.stderr)
                    self.assertIn(fragment, r.stderr, script)


def copy_results(d, source=RESULTS):
    """A writable copy of a results folder under d (the scripts write their figures into it)."""
    copy = os.path.join(d, "results")
    shutil.copytree(source, copy)
    return copy


def widened_results(d, nprocs):
    """A results folder under d holding the fixture's async run at P = 2 widened to nprocs ranks (each new rank
    its own group and chain from the start, ending with the fixture's last rank)."""
    copy = copy_results(d)
    rid = "small-2026-11-21T06:30:12Z-273b48"
    with open(os.path.join(copy, "runs.csv")) as f:
        rows = list(csv.DictReader(f))
    header = list(rows[0])
    rows = [dict(r, nprocs=str(nprocs)) for r in rows if r["run_id"] == rid]
    with open(os.path.join(copy, "runs.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, header, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    with open(os.path.join(copy, "ranks.csv"), newline="") as f:
        ranks = [r for r in csv.DictReader(f) if r["run_id"] == rid]
    with open(os.path.join(copy, "ranks.csv"), "a", newline="") as f:
        w = csv.DictWriter(f, list(ranks[0]), lineterminator="\n")
        w.writerows(dict(ranks[-1], rank=str(k), final_group_first=str(k), final_group_last=str(k))
                    for k in range(2, nprocs))
    with open(os.path.join(copy, "events.csv"), newline="") as f:
        events = [e for e in csv.DictReader(f) if e["run_id"] == rid and e["kind"] == "initial"]
    with open(os.path.join(copy, "events.csv"), "a", newline="") as f:
        w = csv.DictWriter(f, list(events[0]), lineterminator="\n")
        w.writerows(dict(events[-1], group_first=str(k), group_last=str(k), chain=str(k)) for k in range(2, nprocs))
    return copy


def edit_csv(folder, name, edit):
    """Replaces folder/name's bytes b with edit(b)."""
    path = os.path.join(folder, name)
    with open(path, "rb") as f:
        data = f.read()
    with open(path, "wb") as f:
        f.write(edit(data))


def set_field(data, column, value, line=1):
    """data (CSV bytes) with column of data line `line` (1 = the first row after the header) set to value."""
    lines = data.split(b"\n")
    header = lines[0].split(b",")
    fields = lines[line].split(b",")
    fields[header.index(column.encode())] = value.encode()
    lines[line] = b",".join(fields)
    return b"\n".join(lines)


class Oversubscription(unittest.TestCase):
    """provenance.csv says whether each run had a core per rank; every table, figure and report marks the P whose
    runs did not, in words, and a folder written before those columns (or without provenance.csv) plots unmarked."""

    def provenance(self, folder, occupancy):
        """A provenance.csv for the folder's runs: occupancy(nprocs) -> (ranks_per_node, cores, oversubscribed) or
        None for the older header without the three columns."""
        with open(os.path.join(folder, "runs.csv")) as f:
            runs = list(csv.DictReader(f))
        old = ["run_id", "command_line", "working_dir", "platform_fnv1a64", "simgrid_cfg", "launcher", "slurm_job_id",
               "slurm_nodelist"]
        with open(os.path.join(folder, "provenance.csv"), "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            new = occupancy(2) is not None
            w.writerow(old + (["ranks_per_node", "cores_available", "oversubscribed"] if new else []))
            for r in runs:
                extra = list(occupancy(int(r["nprocs"]))) if new else []
                w.writerow([r["run_id"], "mcmclb run x", "/w", "", "", "mpiexec", "", ""] + extra)

    def test_oversubscribed_points_marked_everywhere(self):
        with tempfile.TemporaryDirectory() as d:
            folder = copy_results(d)  # runs at P = 2 and 3, given 2 cores
            self.provenance(folder, lambda p: (str(p), "2", "true" if p > 2 else "false"))
            r = run("summary.py", folder)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("| 3 (oversubscribed) |", r.stdout)
            self.assertIn("| 2 |", r.stdout)
            self.assertIn("Oversubscribed: P = 3 ran 3 ranks on 2 cores.", r.stdout)
            self.assertIn("compare balancers at P <= 2", r.stdout)
            r = run("table1.py", folder)
            self.assertIn("P = 3, real MPI (oversubscribed: 3 ranks on 2 cores)", r.stdout)
            r = run("report.py", folder)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertTrue(r.stdout.rstrip().endswith("or on a machine with a core per rank."), r.stdout[-500:])
            page = os.path.join(d, "r.html")
            r = run("report.py", folder, "--html", page)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(page) as f:
                html = f.read()
            self.assertIn('<p class="warning">Oversubscribed: P = 3 ran 3 ranks on 2 cores.', html)
            self.assertIn("<td>3 (oversubscribed)</td>", html)

    def test_unknown_occupancy_is_unmarked(self):
        with tempfile.TemporaryDirectory() as d:
            for label, occupancy in (("no provenance.csv", None), ("older header", lambda p: None),
                                     ("simulated or unknown", lambda p: ("", "", ""))):
                with self.subTest(label):
                    folder = os.path.join(d, label.replace(" ", "-"))
                    shutil.copytree(RESULTS, folder)
                    if occupancy:
                        self.provenance(folder, occupancy)
                    r = run("report.py", folder)
                    self.assertEqual(r.returncode, 0, r.stderr)
                    self.assertNotIn("oversubscribed", r.stdout.lower())


class ChainTraces(unittest.TestCase):
    """plots/chains.py on a compute-mode folder (configs/mcmc-lj.yaml at P = 4, none and async, work.trace)."""

    def test_identical_traces_and_a_changed_one(self):
        with tempfile.TemporaryDirectory() as d:
            folder = copy_results(d, os.path.join(FIXTURES, "results-lj"))
            out = os.path.join(d, "chains.png")
            r = run("chains.py", folder, "-o", out, "--require-identical")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("traces of 2 runs: identical", r.stdout)
            assert_png(self, out)
            # One energy of the second run's trace off by one quantum: the traces differ.
            lines = open(os.path.join(folder, "traces.csv")).read().splitlines()
            second = max(i for i, line in enumerate(lines) if i > 0)
            edit_csv(folder, "traces.csv", lambda b: set_field(b, "energy_q32", "1", line=second))
            r = run("chains.py", folder, "-o", out, "--require-identical")
            self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
            self.assertIn("DIFFERENT", r.stdout)

    def test_folder_without_traces(self):
        with tempfile.TemporaryDirectory() as d:
            r = run("chains.py", copy_results(d), "-o", os.path.join(d, "c.png"))
            self.assertEqual(r.returncode, 2)
            self.assertIn("traces.csv: no such file", r.stderr)


class BadInputs(unittest.TestCase):
    """Every bad input to every plot script is one line `SCRIPT: FILE: problem`, exit 2, no traceback."""

    def assert_one_line(self, r, script, *fragments):
        self.assertEqual(r.returncode, 2, f"{script}: {r.stdout}{r.stderr}")
        lines = r.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, f"{script}: {r.stderr}")
        self.assertNotIn("Traceback", r.stderr)
        for fragment in fragments:
            self.assertIn(fragment, lines[0], script)

    def assert_every_script_refuses(self, name, edit, *fragments):
        """Each script reading `name` refuses the folder whose `name` went through edit, and writes no figure."""
        with tempfile.TemporaryDirectory() as d:
            folder = copy_results(d)
            edit_csv(folder, name, edit)
            readers = {"runs.csv": SCRIPTS, "ranks.csv": ("timeline.py", "summary.py", "report.py"),
                       "events.csv": ("timeline.py", "report.py")}[name]
            for script in readers:
                r = run(script, folder)
                self.assert_one_line(r, script, os.path.join(folder, name), *fragments)
            self.assertEqual(sorted(os.listdir(folder)), ["events.csv", "ranks.csv", "runs.csv"])

    def test_truncated_last_row(self):
        cut = lambda b: b[:-40]  # noqa: E731  (the last row loses its last fields and its line end)
        for name in ("runs.csv", "ranks.csv", "events.csv"):
            self.assert_every_script_refuses(name, cut, "fields, the header has")

    def test_nan_and_inf(self):
        self.assert_every_script_refuses("runs.csv", lambda b: set_field(b, "time_s", "nan"),
                                         "column time_s is not a finite number: 'nan'")
        self.assert_every_script_refuses("ranks.csv", lambda b: set_field(b, "elapsed_s", "inf", line=3),
                                         "column elapsed_s is not a finite number: 'inf'")
        self.assert_every_script_refuses("events.csv", lambda b: set_field(b, "t_s", "-inf", line=2),
                                         "column t_s is not a finite number")

    def test_nul_bytes(self):
        self.assert_every_script_refuses("runs.csv", lambda b: b.replace(b"small,", b"sm\0all,", 1),
                                         "line 2 contains NUL bytes")
        self.assert_every_script_refuses("events.csv", lambda b: b + b"\0\0\0\0\n", "NUL bytes")

    def test_non_integer_in_integer_column(self):
        self.assert_every_script_refuses("runs.csv", lambda b: set_field(b, "nprocs", "4.5", line=2),
                                         "line 3: column nprocs is not an integer: '4.5' (allowed: an integer >= 1)")
        self.assert_every_script_refuses("events.csv", lambda b: set_field(b, "group_first", "1.5"),
                                         "column group_first is not an integer")

    def test_negative_times(self):
        self.assert_every_script_refuses("runs.csv", lambda b: set_field(b, "time_s", "-0.5"),
                                         "column time_s is negative: '-0.5' (allowed: a finite number >= 0)")
        self.assert_every_script_refuses("ranks.csv", lambda b: set_field(b, "waiting_s", "-1e-3"),
                                         "column waiting_s is negative")

    def test_fig1_bad_values(self):
        header = "method,op,nprocs,group_size,rep,time_us\n"
        for row, fragment in (("intercomm,create,4,2,0,nan", "column time_us is not a finite number"),
                              ("intercomm,create,4,2,0,-3", "column time_us is negative"),
                              ("intercomm,create,4.5,2,0,3", "column nprocs is not an integer"),
                              ("intercomm,create,4,2,0", "has 5 fields, the header has 6"),
                              ("intercomm,cre\0ate,4,2,0,3", "NUL bytes")):
            with tempfile.NamedTemporaryFile("w", suffix=".csv") as f:
                f.write(header + "intercomm,create,4,1,0,2.5\n" + row + "\n")
                f.flush()
                self.assert_one_line(run("fig1.py", f.name, "-o", f.name + ".png"), row, f.name, fragment)

    def test_utf8_bom_is_accepted(self):
        with tempfile.TemporaryDirectory() as d:
            folder = copy_results(d)
            for name in ("runs.csv", "ranks.csv", "events.csv"):
                edit_csv(folder, name, lambda b: b"\xef\xbb\xbf" + b)
            r = run("report.py", folder)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("| 3 | async create_group | 1 |", r.stdout)
            assert_png(self, os.path.join(folder, "timeline.png"))
            bench = os.path.join(d, "commbench.csv")
            with open(os.path.join(FIXTURES, "commbench_small.csv"), "rb") as src, open(bench, "wb") as dst:
                dst.write(b"\xef\xbb\xbf" + src.read())
            r = run("fig1.py", bench)
            self.assertEqual(r.returncode, 0, r.stderr)
            assert_png(self, os.path.join(d, "fig1.png"))

    def test_argument_errors_are_one_line(self):
        for script, args in (("fig1.py", []), ("fig1.py", ["x.csv", "--op", "merge"]), ("fig2.py", ["--bogus"]),
                             ("table1.py", [RESULTS, "--nprocs", "four"]), ("table1.py", [RESULTS, "--nprocs", "0"]),
                             ("table1.py", [RESULTS, "--format", "html"]), ("timeline.py", []),
                             ("summary.py", [RESULTS, "extra"]), ("report.py", [])):
            r = run(script, *args)
            self.assert_one_line(r, f"{script} {args}", script + ": ", "usage: " + script)

    def test_output_path_checked_before_reading(self):
        with tempfile.TemporaryDirectory() as d:
            folder = copy_results(d)
            edit_csv(folder, "runs.csv", lambda b: set_field(b, "time_s", "nan"))  # bad input, never reached
            bench = os.path.join(FIXTURES, "commbench_small.csv")
            for script, inputs in (("fig1.py", [bench]), ("fig2.py", [folder]), ("timeline.py", [folder])):
                for out, fragment in ((os.path.join(d, "no", "such", "dir", "x.png"), "does not exist"),
                                      (os.path.join(bench, "x.png"), "is not a folder"),
                                      ("/proc/x.png", "cannot write in output folder /proc"),
                                      (d, "output must be a file name ending in .png"),
                                      (os.path.join(d, "x.csv"), "output must be a file name ending in .png")):
                    self.assert_one_line(run(script, *inputs, "-o", out), f"{script} -o {out}", out, fragment)
            self.assertEqual(sorted(os.listdir(d)), ["results"])
            # report.py writes two figures into the folder: both are checked before the first is drawn.
            folder = copy_results(os.path.join(d, "report"))
            os.mkdir(os.path.join(folder, "timeline.png"))
            self.assert_one_line(run("report.py", folder), "report.py", "timeline.png: output is a folder")
            self.assertFalse(os.path.exists(os.path.join(folder, "fig2.png")))

    def test_zero_ideal_time(self):
        """Cyclic at P = 1 has S = 0 items, so ideal_s = 0 in every row (a real mcmclb run wrote the fixture)."""
        with tempfile.TemporaryDirectory() as d:
            folder = copy_results(d, os.path.join(FIXTURES, "results-n1"))
            r = run("summary.py", folder)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertRegex(r.stdout,
                             r"\| 1 \| none \| 1 \| [0-9.]+ \[[0-9.-]+\] \| too few repetitions \(n=1\) \| - \|")
            r = run("report.py", folder)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("Regroupings per process, P = 1", r.stdout)
            assert_png(self, os.path.join(folder, "fig2.png"))


# The simulated Fig. 2 table before the calibration (docs/notes/archive/2026-11-21.md)
PAPER_SCALE = os.path.join(FIXTURES, "fig2-paper-scale", "runs.csv")


def ratio_panel(stdout):
    """(low, high, the rest) of fig2.py's line 'time / ideal panel: LOW to HIGH[; above it: ...]'."""
    line = next(line for line in stdout.splitlines() if line.startswith("time / ideal panel: "))
    limits, _, rest = line[len("time / ideal panel: "):].partition("; ")
    low, high = limits.split(" to ")
    return float(low), float(high), rest


class Fig2Panels(unittest.TestCase):
    """fig2.py draws a time / ideal panel below the time panel, scaled so that series a few per cent apart near
    the ideal are separable, and puts the paper's values in the legend rather than over the series."""

    def test_lookahead_one_percent_above_ideal(self):
        with open(PAPER_SCALE) as f:
            header = f.readline().strip()
        rows = []
        for p in (32, 64, 128):
            rows.append(f"none-{p},{p},none,,,0,7.0,3.5,7.0,0,0,0,0,true,mpi,")
            for rep, ratio in enumerate((1.009, 1.010, 1.012)):
                rows.append(f"la-{p}-{rep},{p},lookahead,1,range,{rep},{3.5 * ratio:.6f},3.5,7.0,0,0,0,0,true,mpi,")
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "runs.csv")
            with open(path, "w") as f:
                f.write(header + "\n" + "\n".join(rows) + "\n")
            out = os.path.join(d, "fig2.svg")
            r = run("fig2.py", path, "-o", out)  # a runs.csv file, not a folder
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out) as f:
                svg = f.read()
        self.assertIn('id="axes_1"', svg)
        self.assertIn('id="axes_2"', svg, "the time / ideal panel")
        self.assertNotIn('id="axes_3"', svg)
        low, high, rest = ratio_panel(r.stdout)
        # The range holds 1 and the lookahead bars (1.009-1.012) and is a few per cent wide, not 1.0-2.0.
        self.assertLess(low, 1.0)
        self.assertGreater(high, 1.012)
        self.assertLess(high - low, 0.05, r.stdout)
        self.assertEqual(rest, "above it: none 2.00", r.stdout)
        self.assertEqual(r.stdout.splitlines()[-1], "series: none; lookahead(1) range")

    def scale_series(self, d, missing=None):
        """A runs.csv in folder d: none and lookahead(1) range at every P from 32 to 65536 (12 sizes, as Fig. 2 on
        slingshot.xml), lookahead without its point at missing."""
        with open(PAPER_SCALE) as f:
            header = f.readline().strip()
        rows = []
        for k in range(5, 17):
            p = 2 ** k
            rows.append(f"none-{p},{p},none,,,0,7.0,3.5,7.0,0,0,0,0,true,smpi,configs/platforms/bgp.xml")
            if p != missing:
                rows.append(f"la-{p},{p},lookahead,1,range,0,3.52,3.5,7.0,0,0,0,0,true,smpi,configs/platforms/bgp.xml")
        with open(os.path.join(d, "runs.csv"), "w") as f:
            f.write(header + "\n" + "\n".join(rows) + "\n")

    def test_the_cores_labels_do_not_touch(self):
        """Fig. 2 on slingshot.xml, one label per size of its runs.csv (eleven, up to 32768) beside a wide legend:
        the labels of the cores axis keep apart (upright, twelve sizes up to 65536 ran together, "3276865536"):
        upright, a gap of a quarter of the font size between neighbours; turned by an angle, neighbours' baselines at
        least a font size apart across the text."""
        import math
        sys.path.insert(0, PLOTS)
        try:
            import fig2
        finally:
            sys.path.remove(PLOTS)
        figures = []
        _, args, _ = DOCS_FIGURES["fig2-sim-slingshot"]
        with tempfile.TemporaryDirectory() as d:
            with mock.patch.object(fig2, "save", lambda fig, *rest, **kwargs: figures.append(fig)), \
                    contextlib.redirect_stdout(io.StringIO()):
                self.assertEqual(fig2.main([os.path.join(DOCS, "fig2-sim-slingshot"), *args, "-o",
                                            os.path.join(d, "f.png")]), 0)
        fig = figures[0]
        fig.tight_layout()
        fig.canvas.draw()
        labels = [label for label in fig.axes[1].get_xticklabels() if label.get_text()]
        with open(os.path.join(DOCS, "fig2-sim-slingshot", "runs.csv"), newline="") as f:
            self.assertEqual(len(labels), len({r["nprocs"] for r in csv.DictReader(f)}))
        font_px = labels[0].get_fontsize() * fig.dpi / 72
        angle = math.radians(labels[0].get_rotation())
        for a, b in zip(labels, labels[1:]):
            with self.subTest(labels=(a.get_text(), b.get_text())):
                ea, eb = a.get_window_extent(), b.get_window_extent()
                if angle == 0:
                    self.assertGreaterEqual(eb.x0 - ea.x1, font_px / 4)
                else:
                    self.assertGreaterEqual((eb.x1 - ea.x1) * math.sin(angle), font_px)

    def test_an_unfinished_point_is_marked_and_named(self):
        with tempfile.TemporaryDirectory() as d:
            self.scale_series(d, missing=65536)
            out = os.path.join(d, "f.png")
            r = run("fig2.py", d, "--unfinished", "lookahead(1) range@65536", "-o", out)
            self.assertEqual(r.returncode, 0, r.stderr)
            assert_png(self, out)
            self.assertIn("| lookahead(1) range, simulated (bgp) (unfinished at P = 65536) | 65536 | 0 | unfinished |",
                          r.stdout)
            self.assertIn("lookahead(1) range, simulated (bgp) (unfinished at P = 65536) [dashed]",
                          r.stdout.splitlines()[-1])
            # The same from a failures.csv as a sweep writes it.
            with open(os.path.join(d, "failures.csv"), "w") as f:
                f.write("point,nprocs,balancer,rep,reason,utc,key\n"
                        "0,65536,lookahead(1) range,0,stopped,2026-11-25T00:00:00Z,k\n")
            r = run("fig2.py", d, "-o", out)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("(unfinished at P = 65536) | 65536 | 0 | unfinished |", r.stdout)
            for bad, words in (("lookahead(1) range", "not SET-UP@P"), ("steal@8", "no run of steal")):
                with self.subTest(value=bad):
                    r = run("fig2.py", d, "--unfinished", bad, "-o", out)
                    self.assertEqual(r.returncode, 2)
                    self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
                    self.assertIn(words, r.stderr)

    def test_paper_scale_with_reference(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "fig2.svg")
            r = run("fig2.py", PAPER_SCALE, "--reference", "-o", out)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out) as f:
                svg = f.read()
            r_png = run("fig2.py", os.path.dirname(PAPER_SCALE), "--reference", "-o", os.path.join(d, "f.png"))
            self.assertEqual(r_png.returncode, 0, r_png.stderr)
            assert_png(self, os.path.join(d, "f.png"))
        low, high, rest = ratio_panel(r.stdout)
        # async intercomm 1.010-1.034, lookahead 1.005-1.018: all inside, and the panel no wider than they need.
        self.assertTrue(0.99 < low < 1.0 and 1.0343 < high < 1.045, (low, high))
        self.assertEqual(rest, "above it: none, simulated (bgp) 2.00; collective(1) create, simulated (bgp) "
                               "1.75-3.22; collective(16) create, simulated (bgp) 1.75-1.85; collective(128) create, "
                               "simulated (bgp) 1.85-1.87")
        # Matplotlib writes each text as a comment before its glyphs: every paper label is in the legend.
        legend, second = svg.index('id="legend_1"'), svg.index('id="axes_2"')
        labels = [i for i in range(len(svg)) if svg.startswith("<!-- paper ", i)]
        self.assertEqual(len(labels), 4, "ideal, async, collective, none")
        self.assertTrue(all(legend < i < second for i in labels))
        # The times the paper's text gives only in words are bands over the range the words allow, never a bound.
        texts = [svg[i + 5:svg.index(" -->", i)] for i in labels]
        self.assertEqual(texts, ["paper ideal: 3.5 s",
                                 "paper async: over 40 % below none (under about 4.2 s), from the text",
                                 "paper collective(1,16,128): roughly 15 % below none (5.6-6.3 s), from the text",
                                 "paper none: 7 s"])
        # The async band reaches past the ratio panel's range, so the panel names it.
        self.assertIn("shaded: paper async 1.00-1.20 (from the text), reaching past this panel", svg)

    def test_spread_gives_bars_in_both_panels(self):
        """Three repetitions with spread: the ratio panel is scaled to their min and max, not just the median."""
        with open(PAPER_SCALE) as f:
            header = f.readline().strip()
        rows = [f"a-{rep},32,async,,range,{rep},{t},3.5,7.0,0,0,0,0,true,mpi,"
                for rep, t in enumerate((3.5, 3.57, 3.64))]
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "runs.csv")
            with open(path, "w") as f:
                f.write(header + "\n" + "\n".join(rows) + "\n")
            r = run("fig2.py", path)
            self.assertEqual(r.returncode, 0, r.stderr)
            assert_png(self, os.path.join(d, "fig2.png"))
        low, high, rest = ratio_panel(r.stdout)
        self.assertTrue(low < 1.0 and 1.04 < high < 1.05, (low, high))
        self.assertEqual(rest, "")


class OtherInputs(unittest.TestCase):
    """The file form of every script that draws a docs figure, and timeline.py's panels."""

    def test_file_form(self):
        """timeline.py and chains.py take a table's file as well as its folder (the other tables beside it), as
        fig1.py and fig2.py do; a file of the wrong table is one line naming it."""
        with tempfile.TemporaryDirectory() as d:
            for script, path in (("timeline.py", os.path.join(RESULTS, "events.csv")),
                                 ("chains.py", os.path.join(FIXTURES, "results-lj", "traces.csv")),
                                 ("fig2.py", os.path.join(RESULTS, "runs.csv")),
                                 ("fig1.py", os.path.join(FIXTURES, "commbench_crossover.csv"))):
                out = os.path.join(d, script + ".png")
                r = run(script, path, "-o", out)
                self.assertEqual(r.returncode, 0, script + r.stderr)
                assert_png(self, out)
            wrong = os.path.join(RESULTS, "runs.csv")
            r = run("chains.py", wrong, "-o", os.path.join(d, "c.png"))
            self.assertEqual((r.returncode, len(r.stderr.strip().splitlines())), (2, 1), r.stderr)
            self.assertIn(f"{wrong}: malformed, missing column(s) chain", r.stderr)
            r = run("timeline.py", os.path.join(d, "none.csv"))
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("none.csv: no such file or folder", r.stderr)

    def test_timeline_one_panel_per_run(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "t.svg")
            with open(os.path.join(RESULTS, "runs.csv")) as f:
                ids = [row["run_id"] for row in csv.DictReader(f)]
            for args, panels in ((["--all-runs"], len(ids)), (["--run-id", ids[1], "--run-id", ids[0]], 2), ([], 1)):
                r = run("timeline.py", RESULTS, "-o", out, *args)
                self.assertEqual(r.returncode, 0, r.stderr)
                with open(out) as f:
                    svg = f.read()
                self.assertIn(f'id="axes_{panels}"', svg, args)
                self.assertNotIn(f'id="axes_{panels + 1}"', svg, args)
            r = run("timeline.py", RESULTS, "--all-runs", "--run-id", ids[0])
            self.assertEqual(r.returncode, 2)
            self.assertIn("--run-id and --all-runs exclude each other", r.stderr)


# Every figure committed under docs/ can be redrawn from the repository. The convention: docs/data/NAME.png is drawn
# from the folder docs/data/NAME/, which holds the CSV tables its script reads under the names mcmclb writes them
# (commbench.csv, runs.csv, ranks.csv, events.csv, traces.csv), with only the runs the figure shows; DOCS_FIGURES
# says which script draws it and how (the folder is its first argument). A folder rather than one docs/data/NAME.csv,
# because a timeline needs three tables of a run and the chain traces two. No CSV there may hold a path of the
# machine it was made on (a field starting with /work, /home, /tmp, /root, /usr, /opt, /var or a drive letter):
# such files are redrawn on other machines, and the path says nothing there.
DOCS = os.path.join(HERE, "..", "docs", "data")
RUN_TABLES = ("runs.csv", "ranks.csv", "events.csv")
DOCS_FIGURES = {  # figure stem -> (script, arguments after the folder, the tables it reads)
    "async-vs-lookahead": ("timeline.py", ["--all-runs"], RUN_TABLES),  # the two runs, async first
    "fig1-sim-bgp": ("fig1.py", [], ("commbench.csv",)),
    "fig1-two-mpis-p2": ("fig1.py", [], ("commbench.csv",)),  # MPICH and Open MPI rows, one file
    "fig1-two-mpis-p8": ("fig1.py", [], ("commbench.csv",)),
    "fig2-sim-bgp": ("fig2.py", ["--reference"], ("runs.csv",)),
    "fig2-sim-slingshot": ("fig2.py", ["--reference"], ("runs.csv",)),
    "lj-traces": ("chains.py", ["--require-identical"], ("runs.csv", "traces.csv")),
    "steal-vs-regroup-seeds-64": ("steal_vs_regroup.py", [], ("runs.csv",)),
    "steal-vs-regroup-seeds-256": ("steal_vs_regroup.py", [], ("runs.csv",)),
    "steal-vs-regroup-seeds-1024": ("steal_vs_regroup.py", [], ("runs.csv",)),
    "steal-vs-regroup-seeds-real8": ("steal_vs_regroup.py", [], ("runs.csv",)),
    "timeline-lookahead-sim1024": ("timeline.py", ["--ranks", "0-95"], RUN_TABLES),
    "timeline-quick": ("timeline.py", [], RUN_TABLES),
}
MACHINE_PATH = re.compile(r"(/(work|home|tmp|root|usr|opt|var)(/|$)|[A-Za-z]:[\\/])")


def table_columns(name):
    """The columns a drawing script requires in table name (from the scripts themselves)."""
    sys.path.insert(0, PLOTS)
    try:
        import chains
        import fig1
        import mcmclb_csv
        import timeline
    finally:
        sys.path.remove(PLOTS)
    return {"commbench.csv": fig1.REQUIRED, "runs.csv": mcmclb_csv.RUN_COLUMNS, "ranks.csv": timeline.RANK_COLUMNS,
            "events.csv": timeline.EVENT_COLUMNS, "traces.csv": chains.TRACE_COLUMNS}[name]


def missing_tables(docs):
    """'docs/data/NAME/TABLE (columns: ...)' for each table a figure's entry needs and docs lacks."""
    return [f"docs/data/{stem}/{table} (columns: {', '.join(table_columns(table))})"
            for stem, (_, _, tables) in sorted(DOCS_FIGURES.items()) for table in tables
            if not os.path.isfile(os.path.join(docs, stem, table))]


def machine_paths(docs):
    """'FILE:LINE: column COLUMN: FIELD' for each field of a figure's CSV that is a path of a machine."""
    found = []
    for stem in sorted(DOCS_FIGURES):
        folder = os.path.join(docs, stem)
        for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
            if not name.endswith(".csv"):
                continue
            with open(os.path.join(folder, name), newline="", encoding="utf-8-sig") as f:
                reader = csv.reader(f)
                header = next(reader, [])
                for fields in reader:
                    found += [f"docs/data/{stem}/{name}:{reader.line_num}: column {column}: {field}"
                              for column, field in zip(header, fields) if MACHINE_PATH.match(field)]
    return found


def redraw(test, docs, stem, out_dir):
    """Runs stem's entry on docs/stem into out_dir: exit 0 and a PNG."""
    script, args, _ = DOCS_FIGURES[stem]
    out = os.path.join(out_dir, stem + ".png")
    r = run(script, os.path.join(docs, stem), *args, "-o", out)
    test.assertEqual(r.returncode, 0, f"{script} docs/data/{stem} {' '.join(args)}: {r.stdout}{r.stderr}")
    assert_png(test, out)


class FigureData(unittest.TestCase):
    """plots/figure_data.py cuts a figure's tables out of a results folder: the chosen runs only, ranks.csv and
    events.csv restricted to --ranks, provenance.csv with the machine's paths made relative, and never a path of
    the machine."""

    def test_keeps_the_chosen_runs_and_ranks(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(RESULTS, "runs.csv")) as f:
                runs = list(csv.DictReader(f))
            chosen = next(r for r in runs if r["balancer"] == "async" and int(r["nprocs"]) >= 3)
            r = run("figure_data.py", RESULTS, d, "--balancer", "async", "--nprocs", chosen["nprocs"], "--first",
                    "--ranks", "1-2")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertFalse(os.path.exists(os.path.join(d, "provenance.csv")))  # the fixture has none
            with open(os.path.join(d, "runs.csv")) as f:
                self.assertEqual([x["run_id"] for x in csv.DictReader(f)], [chosen["run_id"]])
            with open(os.path.join(d, "ranks.csv")) as f:
                ranks = list(csv.DictReader(f))
            self.assertEqual(sorted(int(x["rank"]) for x in ranks), [1, 2])
            self.assertEqual({x["run_id"] for x in ranks}, {chosen["run_id"]})
            with open(os.path.join(RESULTS, "events.csv")) as f:
                expected = [x for x in csv.DictReader(f) if x["run_id"] == chosen["run_id"] and
                            int(x["group_first"]) <= 2 and int(x["group_last"]) >= 1]
            with open(os.path.join(d, "events.csv")) as f:
                self.assertEqual(list(csv.DictReader(f)), expected)
            self.assertGreater(len(expected), 0)

    def test_keeps_the_chosen_runs_provenance_without_the_machines_paths(self):
        with tempfile.TemporaryDirectory() as d:
            source = os.path.join(d, "results")
            shutil.copytree(RESULTS, source)
            with open(os.path.join(RESULTS, "runs.csv")) as f:
                ids = [r["run_id"] for r in csv.DictReader(f)]
            with open(os.path.join(source, "provenance.csv"), "w", newline="") as f:
                out = csv.writer(f, lineterminator="\n")
                out.writerow(["run_id", "command_line", "working_dir", "wait_policy"])
                for i in ids:
                    out.writerow([i, "/home/u/mcmclb/build/mcmclb run /tmp/x/study.yaml", "/home/u/mcmclb", "polite"])
            r = run("figure_data.py", source, os.path.join(d, "out"), "--run-id", ids[0])
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(os.path.join(d, "out", "provenance.csv")) as f:
                kept = list(csv.DictReader(f))
            self.assertEqual(kept, [{"run_id": ids[0], "command_line": "build/mcmclb run study.yaml",
                                     "working_dir": ".", "wait_policy": "polite"}])

    def test_refuses_a_machine_path_and_bad_choices(self):
        with tempfile.TemporaryDirectory() as d:
            bench = os.path.join(d, "commbench.csv")
            with open(bench, "w") as f:
                f.write("method,op,nprocs,group_size,rep,time_us,platform\nrange,create,4,2,0,0.01,/work/x/bgp.xml\n")
            r = run("figure_data.py", bench, os.path.join(d, "out"))
            self.assertEqual(r.returncode, 2)
            self.assertIn("column platform holds a path of this machine (/work/x/bgp.xml)", r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1)
            self.assertFalse(os.path.exists(os.path.join(d, "out")))
            r = run("figure_data.py", RESULTS, os.path.join(d, "out"), "--balancer", "greedy")
            self.assertEqual(r.returncode, 2)
            self.assertIn("no run matches the choice", r.stderr)
            r = run("figure_data.py", RESULTS, os.path.join(d, "out"), "--ranks", "5-2")
            self.assertEqual(r.returncode, 2)
            self.assertIn("--ranks '5-2': expected FIRST-LAST", r.stderr)


class DocsFigures(unittest.TestCase):
    """Every docs/data/*.png has an entry in DOCS_FIGURES and its CSVs in docs/data/NAME/, free of machine paths, from
    which the entry's command redraws it (the convention above DOCS_FIGURES)."""

    def test_every_figure_has_an_entry(self):
        stems = {name[:-4] for name in os.listdir(DOCS) if name.endswith(".png")}
        self.assertEqual(sorted(stems - set(DOCS_FIGURES)), [], "docs figures without a DOCS_FIGURES entry")
        self.assertEqual(sorted(set(DOCS_FIGURES) - stems), [], "DOCS_FIGURES entries without a docs figure")

    def test_every_figure_has_its_csvs(self):
        missing = missing_tables(DOCS)
        if missing:
            self.fail("\n".join(["CSV tables the docs figures are drawn from, missing:"] + missing))

    def test_no_machine_paths_in_the_csvs(self):
        found = machine_paths(DOCS)
        if found:
            self.fail("\n".join(["paths of a machine in the docs figures' CSVs:"] + found))

    def test_each_figure_redraws(self):
        """Each figure whose tables are all there (the others are listed by test_every_figure_has_its_csvs)."""
        with tempfile.TemporaryDirectory() as d:
            for stem, (_, _, tables) in sorted(DOCS_FIGURES.items()):
                if all(os.path.isfile(os.path.join(DOCS, stem, t)) for t in tables):
                    with self.subTest(stem):
                        redraw(self, DOCS, stem, d)

    def test_the_entries_draw_from_fixtures(self):
        """The same checks and commands on a docs tree laid out by the convention from the test fixtures, so
        that the table is known to work before every figure's data is there."""
        small, lj = os.path.join(FIXTURES, "results-small"), os.path.join(FIXTURES, "results-lj")
        sources = {"async-vs-lookahead": small, "fig1-sim-bgp": os.path.join(FIXTURES, "commbench_crossover.csv"),
                   "fig1-two-mpis-p2": os.path.join(FIXTURES, "commbench_small.csv"),
                   "fig1-two-mpis-p8": os.path.join(FIXTURES, "commbench_small.csv"),
                   "fig2-sim-bgp": os.path.dirname(PAPER_SCALE),
                   "fig2-sim-slingshot": os.path.dirname(PAPER_SCALE), "lj-traces": lj, "timeline-quick": small,
                   "steal-vs-regroup-seeds-1024": small, "steal-vs-regroup-seeds-64": small,
                   "steal-vs-regroup-seeds-256": small, "steal-vs-regroup-seeds-real8": small}
        with tempfile.TemporaryDirectory() as d:
            docs = os.path.join(d, "docs")
            os.mkdir(docs)
            for stem, source in sources.items():
                os.mkdir(os.path.join(docs, stem))
                for table in DOCS_FIGURES[stem][2]:
                    shutil.copy(os.path.join(source, table) if os.path.isdir(source) else source,
                                os.path.join(docs, stem, table))
            # --ranks 0-95 needs a run of at least 96 ranks
            shutil.copytree(widened_results(os.path.join(d, "wide"), 100), os.path.join(docs,
                                                                                         "timeline-lookahead-sim1024"))
            self.assertEqual(missing_tables(docs), [])
            self.assertEqual(machine_paths(docs), [])
            for stem in sorted(DOCS_FIGURES):
                with self.subTest(stem):
                    redraw(self, docs, stem, d)
            # What the two checks report: each missing table with its columns, each machine path with its place.
            os.remove(os.path.join(docs, "lj-traces", "traces.csv"))
            self.assertEqual(missing_tables(docs), ["docs/data/lj-traces/traces.csv (columns: run_id, chain, item, "
                                                    "energy, energy_q32, accepted)"])
            bench = os.path.join(docs, "fig1-sim-bgp", "commbench.csv")
            with open(bench) as f:
                text = f.read()
            with open(bench, "w") as f:
                f.write(text.replace(",mpi,\n", ",smpi,/work/wt-fig1/configs/platforms/bgp.xml\n", 1)
                        .replace(",mpi,\n", ",smpi,C:\\mcmclb\\bgp.xml\n", 1))
            self.assertEqual(machine_paths(docs), [
                "docs/data/fig1-sim-bgp/commbench.csv:2: column platform: /work/wt-fig1/configs/platforms/bgp.xml",
                "docs/data/fig1-sim-bgp/commbench.csv:3: column platform: C:\\mcmclb\\bgp.xml"])


class Partner(unittest.TestCase):
    def test_median_and_spread_over_seeds(self):
        """plots/partner.py: per (workload, P, G, set-up), time / ideal over the seeds; invalid rows and rows
        without items are left out. Rows are a fixture row with the keys changed."""
        with open(os.path.join(RESULTS, "runs.csv")) as f:
            header, row = f.readline().rstrip("\n").split(","), f.readline().rstrip("\n").split(",")
        cases = [("random", "mostwork", 1, "1.1", "1.0", "true"), ("random", "mostwork", 2, "1.3", "1.0", "true"),
                 ("random", "mostwork", 3, "1.2", "1.0", "true"), ("random", "mostwork", 4, "9", "1.0", "false"),
                 ("random", "lookahead", 1, "3.0", "2.0", "true"), ("lognormal", "mostwork", 1, "1", "0", "true")]
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "runs.csv"), "w") as f:
                f.write(",".join(header) + "\n")
                for i, (model, balancer, seed, time_s, ideal_s, valid) in enumerate(cases):
                    r = dict(zip(header, row))
                    r.update(run_id=f"r{i}", workload=model, workload_seed=str(seed), balancer=balancer,
                             interval="1", method="range", time_s=time_s, ideal_s=ideal_s, valid=valid)
                    f.write(",".join(r[h] for h in header) + "\n")
            r = run("partner.py", d)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertEqual(lines[2:4], ["| random | 2 | 1 | mostwork(1) range | 3 | 1.200 [1.100-1.300] | "
                                      "too few repetitions (n=3) |",
                                      "| random | 2 | 1 | lookahead(1) range | 1 | 1.500 [1.500-1.500] | "
                                      "too few repetitions (n=1) |"])
        self.assertEqual(run("partner.py", os.path.join(d, "absent")).returncode, 2)


class StealVsRegroup(unittest.TestCase):
    def test_ratio_against_w_with_regroups_and_migrations(self):
        """plots/steal_vs_regroup.py: time / ideal per (workload, W, set-up) at the largest P, with regroups and
        migrated chains per process; invalid rows and other rank counts are left out; a folder older than
        chains_per_group reads as W = 1 (docs figures from the fixtures). Rows are a fixture row with the keys
        changed."""
        with open(os.path.join(RESULTS, "runs.csv")) as f:
            header, row = f.readline().rstrip("\n").split(","), f.readline().rstrip("\n").split(",")
        self.assertTrue({"chains_per_group", "migrated_avg"} <= set(header), header)
        cases = [("steal", 2, "1.2", "1.0", "0", "0.5", "true", "8"), ("mostwork", 2, "1.1", "1.0", "3", "0", "true", "8"),
                 ("steal", 1, "2.0", "1.0", "0", "0", "true", "8"), ("steal", 4, "9", "1.0", "0", "0", "false", "8"),
                 ("steal", 4, "1.0", "1.0", "0", "0", "true", "4")]
        # stealrandom at W = 2 over three workload seeds: the median over seeds, with their count and range.
        cases += [("stealrandom", 2, t, "1.0", "0", "0.5", "true", "8") for t in ("1.3", "1.5", "1.4")]
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "runs.csv"), "w") as f:
                f.write(",".join(header) + "\n")
                for i, (balancer, w, time_s, ideal_s, regroups, migrated, valid, nprocs) in enumerate(cases):
                    r = dict(zip(header, row))
                    r.update(run_id=f"r{i}", workload="random", balancer=balancer, interval="1" if balancer == "mostwork"
                             else "", method="range" if balancer == "mostwork" else "", time_s=time_s, ideal_s=ideal_s,
                             regroups_avg=regroups, migrated_avg=migrated, valid=valid, nprocs=nprocs,
                             chains_per_group=str(w), workload_seed=str(i))
                    f.write(",".join(r[h] for h in header) + "\n")
            r = run("steal_vs_regroup.py", d, "-o", os.path.join(d, "f.png"))
            self.assertEqual(r.returncode, 0, r.stderr)
            assert_png(self, os.path.join(d, "f.png"))
        lines = [line for line in r.stdout.splitlines() if line.startswith("| random")]
        self.assertEqual(lines, ["| random | 1 | steal | 2.000 (n=1: no interval) | 0.00 | 0.00 |",
                                 "| random | 2 | steal | 1.200 (n=1: no interval) | 0.00 | 0.50 |",
                                 "| random | 2 | mostwork(1) range | 1.100 (n=1: no interval) | 3.00 | 0.00 |",
                                 "| random | 2 | stealrandom | 1.400 (seeds: 3, 1.300-1.500; n=1 per seed: no interval)"
                                 " | 0.00 | 0.50 |"])
        self.assertEqual(run("steal_vs_regroup.py", os.path.join(d, "absent")).returncode, 2)


    def test_the_figure_shows_the_spread_over_seeds_and_repetitions(self):
        """A cell of several workload seeds gets a bar from its lowest to its highest seed; a cell of one seed gets
        its repetitions' interval where it has one (real runs, n >= 6), and none when simulated."""
        svr = plots_module("steal_vs_regroup")
        plt = plots_module("mcmclb_csv").pyplot()
        run_of = lambda t: {"time_s": t, "ideal_s": 1.0, "regroups_avg": 0.0, "migrated_avg": 0.0}
        seeds = svr.Cell(2, {"1": [run_of(1.3)], "2": [run_of(1.5)], "3": [run_of(1.4)]}, True)
        simulated = svr.Cell(4, {"1": [run_of(1.2)]}, True)
        real = svr.Cell(8, {"1": [run_of(t) for t in TEN]}, False)
        fig, ax = plt.subplots()
        svr.spread_bars(ax, [seeds, simulated, real], "C0")
        segments = sorted([[round(v, 9) for v in (seg[0][0], seg[0][1], seg[1][1])]
                           for bars in ax.containers for seg in bars.lines[2][0].get_segments()])
        self.assertEqual(segments, [[2, 1.3, 1.5], [8, 1.1, 1.8]])
        plt.close(fig)

    def test_real_runs_of_several_seeds_keep_each_seeds_interval(self):
        """Real runs over several workload seeds: the row gives the median over seeds, their range and how far the
        widest seed's 95 % interval reaches, so seed spread and repetition noise can be told apart; --per-seed gives
        each seed's own median and interval, what a claim "in every seed" must be checked against."""
        svr = plots_module("steal_vs_regroup")
        run_of = lambda t: {"time_s": t, "ideal_s": 1.0, "regroups_avg": 2.0, "migrated_avg": 0.0}
        cell = svr.Cell(4, {1: [run_of(t) for t in TEN], 2: [run_of(t + 0.1) for t in TEN]}, False)
        self.assertEqual(cell.text(), "1.500 (seeds: 2, 1.450-1.550; each seed's 95 % CI within +-24.1 %)")
        rows = svr.table({"random": {"steal": [cell]}}, per_seed=True)
        self.assertEqual(rows[0], "| workload | W | seed | balancer | time / ideal | regroups per process "
                                  "| chains migrated per process |")
        self.assertEqual(rows[2:], ["| random | 4 | 1 | steal | 1.450 [1.100-1.800] | 2.00 | 0.00 |",
                                    "| random | 4 | 2 | steal | 1.550 [1.200-1.900] | 2.00 | 0.00 |"])
        simulated = svr.Cell(4, {1: [run_of(1.2)], 2: [run_of(1.4)]}, True)
        self.assertEqual(simulated.text(), "1.300 (seeds: 2, 1.200-1.400)")

    def test_a_parameter_the_study_varies_makes_panels_not_seeds(self):
        """Rows that differ in a parameter besides the workload model (here compute mode's move kind, an axis of
        configs/steal-vs-regroup-compute.yaml) are different experiments: each value gets its own panel and rows,
        never pooled as if they were seeds or repetitions of one."""
        with open(os.path.join(RESULTS, "runs.csv")) as f:
            header, row = f.readline().rstrip("\n").split(","), f.readline().rstrip("\n").split(",")
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "runs.csv"), "w") as f:
                f.write(",".join(header) + "\n")
                for i, (move, time_s) in enumerate((("single", "3.0"), ("all", "1.5"))):
                    r = dict(zip(header, row))
                    r.update(run_id=f"r{i}", workload="cyclic", balancer="steal", interval="", method="",
                             time_s=time_s, ideal_s="1.0", valid="true", nprocs="8", chains_per_group="2",
                             work_mode="compute", move=move, atoms="0", moves_per_item="10", max_step="0.1",
                             temperature="0.25")
                    f.write(",".join(r[h] for h in header) + "\n")
            r = run("steal_vs_regroup.py", d, "-o", os.path.join(d, "f.png"))
            self.assertEqual(r.returncode, 0, r.stderr)
        lines = sorted(line for line in r.stdout.splitlines() if line.startswith("| cyclic"))
        self.assertEqual(lines, ["| cyclic, move all | 2 | steal | 1.500 (n=1: no interval) | 0.00 | 0.00 |",
                                 "| cyclic, move single | 2 | steal | 3.000 (n=1: no interval) | 0.00 | 0.00 |"])


class Regroups(unittest.TestCase):
    """regroups.py recomputes Table 1's per-process counts from ranks.csv: they must equal runs.csv's columns."""

    def test_counts_match_runs_csv(self):
        import csv
        r = run("regroups.py", RESULTS)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(RESULTS, "runs.csv")) as f:
            runs = [row for row in csv.DictReader(f) if row["balancer"] in ("async", "lookahead")]
        self.assertTrue(runs)
        for row in runs:
            block = r.stdout.split(f"run {row['run_id']}:")[1].split("\n\n")[0]
            self.assertIn(f"avg {float(row['regroups_avg']):.2f}, stdev {float(row['regroups_std']):.2f}, "
                          f"min {row['regroups_min']}, max {row['regroups_max']}", block)
            self.assertIn("merges: ", block)

    def test_bad_inputs(self):
        r = run("regroups.py", RESULTS, "--run-id", "nope")
        self.assertEqual((r.returncode, len(r.stderr.strip().splitlines())), (2, 1), r.stderr)
        self.assertIn("no run with run_id nope", r.stderr)
        with tempfile.TemporaryDirectory() as d:
            copy = copy_results(d)
            with open(os.path.join(copy, "events.csv"), "w") as f:
                f.write("run_id,t_s\n")
            r = run("regroups.py", copy)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("events.csv", r.stderr)


ADVICE_HEADER = ("nprocs,walkers,rank,setup,same_as,balancer,interval,method,finished,scenarios,vs_none_median,"
                 "vs_none_min,vs_none_max,regret_max,regret_median,worst_scenario,once_s,break_even_s,dropped,winner,"
                 "runner_up,gain_median,robust,depends_on,tolerance_pct,tolerance,verdict")
# About 60 words, as a verdict that depends on something reads.
LONG_VERDICT = ("Use collective(16) create pays with a very long descriptive label: 3.2 % faster than none (median "
                "of 12 scenarios, -1.5 to 9.8 %); not robust: its regret reaches 14 % when the speed-up past the "
                "measured sizes is flat and the chain map draws two chains per group, where none wins by a wide "
                "margin. The choice depends on the speed-up past the measured sizes (flat: none; amdahl: "
                "collective(16) create pays; perfect: mostwork(1) range pays), so measure it before choosing.")


def advice_folder(d):
    """An advise folder under d: advice.csv (the columns above) with two rank counts, a verdict of about 60 words
    and long set-up names, and the fixture's runs.csv beside it."""
    folder = os.path.join(d, "advise")
    os.mkdir(folder)
    shutil.copy(os.path.join(RESULTS, "runs.csv"), folder)
    long_name = "collective(16) create pays with a very long descriptive label"
    same = "; ".join(f"{long_name} variant {i}" for i in range(3))
    rows = []
    for p, walkers in ((64, "8 walkers on 64 ranks (groups of 8)"),
                       (8192, "64 walkers on 8192 ranks (groups of 128), the chains drawn at random")):
        setups = [(long_name, same, "collective", "16", "create", "pays", 0.968, 0.902, 1.015, 0.14, "0.0111", "55.2"),
                  ("mostwork(1) range pays", "", "mostwork", "1", "range", "pays", 0.99, 0.8, 1.2, 0.21, "0.0111",
                   "never"),
                  ("none", "", "none", "", "", "", 1.0, 1.0, 1.0, 0.25, "", "")]
        for rank, (setup, same_as, balancer, interval, method, finished, med, lo, hi, regret, once, even) in \
                enumerate(setups, 1):
            rows.append([p, walkers, rank, setup, same_as, balancer, interval, method, finished, 12, med, lo, hi,
                         regret, regret / 3, "extrapolate flat, map draw 2", once, even, "", long_name, "none", 0.032,
                         "no", "the speed-up past the measured sizes", 5, "assumed, not measured",
                         LONG_VERDICT if rank == 1 else ""])
    with open(os.path.join(folder, "advice.csv"), "w", newline="") as f:
        f.write(ADVICE_HEADER + "\n")
        csv.writer(f, lineterminator="\n").writerows(rows)
    return folder


class Advice(unittest.TestCase):
    """plots/advice.py, the figure of mcmclb advise."""

    def test_every_text_inside_the_figure(self):
        """Two rank counts, a verdict of about 60 words and long set-up names: the figure is written, and every
        text (titles, tick labels, axis labels) lies inside the figure, the verdict whole in its panel's title."""
        import matplotlib
        matplotlib.use("Agg")
        mcmclb_csv, advice = plots_module("mcmclb_csv"), plots_module("advice")
        with tempfile.TemporaryDirectory() as d:
            folder = advice_folder(d)
            out = os.path.join(d, "advice.png")
            r = run("advice.py", folder, "-o", out)
            self.assertEqual(r.returncode, 0, r.stderr)
            assert_png(self, out)
            by_p = advice.panels(mcmclb_csv.read_csv(os.path.join(folder, "advice.csv"), "advice.csv",
                                                     advice.COLUMNS))
        fig = advice.figure(by_p)
        try:
            fig.canvas.draw()
            renderer = fig.canvas.get_renderer()
            box = fig.bbox
            # Every text drawn: the tick labels of ticks inside the view limits only (those beyond are not drawn).
            ticks, drawn = set(), []
            for ax in fig.axes:
                for axis, (lo, hi) in ((ax.xaxis, sorted(ax.get_xlim())), (ax.yaxis, sorted(ax.get_ylim()))):
                    for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                        ticks.update((tick.label1, tick.label2))
                        if lo <= tick.get_loc() <= hi:
                            drawn += [tick.label1, tick.label2]
            texts = [t for t in fig.findobj(matplotlib.text.Text) if t not in ticks or t in drawn]
            texts = [t for t in texts if t.get_visible() and t.get_text().strip()]
            self.assertGreater(len(texts), 12)  # 2 titles, 6 tick labels, 2 x labels, the x ticks
            for t in texts:
                e = t.get_window_extent(renderer)
                with self.subTest(text=t.get_text()[:40]):
                    self.assertTrue(e.x0 >= box.x0 - 1 and e.y0 >= box.y0 - 1 and e.x1 <= box.x1 + 1 and
                                    e.y1 <= box.y1 + 1, f"{t.get_text()!r} at {e} outside the figure {box}")
            titles = " ".join(" ".join(t.get_text().replace("\u00a0", " ").split()) for t in texts)
            for p in (64, 8192):
                self.assertIn(f"P = {p}: ", titles)
            self.assertEqual(titles.count(" ".join(LONG_VERDICT.split())), 2, "the verdict cut in a title")
            self.assertIn("(regret <= 14 %)", titles)
        finally:
            sys.modules["matplotlib.pyplot"].close(fig)

    def test_ranks_not_one_to_n(self):
        """A rank count whose ranks are not 1..n (a row cut off or edited) is one line and exit 2, nothing drawn."""
        with tempfile.TemporaryDirectory() as d:
            folder = advice_folder(d)
            path = os.path.join(folder, "advice.csv")
            with open(path) as f:
                lines = f.read().splitlines(keepends=True)
            with open(path, "w") as f:
                f.writelines(lines[:2] + lines[3:])  # P = 64's rank 2 gone
            r = run("advice.py", folder)
            self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
            self.assertEqual(r.stderr.strip().splitlines(),
                             ["advice.py: advice.csv: the ranks at nprocs=64 are not 1, 2, ... (a row cut off or "
                              "edited?)"])
            self.assertFalse(os.path.exists(os.path.join(folder, "advice.png")))

    def test_old_columns_refused(self):
        """An advice.csv of the old schema (without walkers, regret_max, ...) is one line naming a missing column."""
        with tempfile.TemporaryDirectory() as d:
            folder = advice_folder(d)
            path = os.path.join(folder, "advice.csv")
            with open(path) as f:
                text = f.read()
            with open(path, "w") as f:
                f.write(text.replace("regret_max,", "best_in,", 1))
            r = run("advice.py", folder)
            self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
            self.assertIn("regret_max", r.stderr)
            self.assertFalse(os.path.exists(os.path.join(folder, "advice.png")))


class NotRegularFiles(unittest.TestCase):
    """A FIFO where a CSV file is expected blocked every script forever (open waits for a writer); a device such as
    /dev/zero never ends; a folder named runs.csv. Each is one line naming the file and what it is, exit 2."""

    assert_one_line = BadInputs.assert_one_line

    def assert_every_script_refuses_special(self, make, what):
        with tempfile.TemporaryDirectory() as d:
            for name, readers in (("runs.csv", SCRIPTS), ("ranks.csv", ("timeline.py", "summary.py", "report.py"))):
                folder = copy_results(os.path.join(d, name))
                path = os.path.join(folder, name)
                os.remove(path)
                make(path)
                for script in readers:
                    # The file itself too, where the script takes one and it is not a folder (then it is one).
                    direct = name == "runs.csv" and script == "summary.py" and what != "a folder"
                    for target in (folder, path) if direct else (folder,):
                        try:
                            r = subprocess.run([sys.executable, os.path.join(PLOTS, script), target],
                                               capture_output=True, text=True, timeout=20)
                        except subprocess.TimeoutExpired:
                            self.fail(f"HANG: {script} {target} ({name} is {what})")
                        self.assert_one_line(r, script, path, f"is {what}, not a regular file")

    def test_fifo(self):
        self.assert_every_script_refuses_special(os.mkfifo, "a FIFO")

    def test_device(self):
        self.assert_every_script_refuses_special(lambda p: os.symlink("/dev/zero", p), "a device")

    def test_folder(self):
        self.assert_every_script_refuses_special(os.mkdir, "a folder")


def plots_module(name):
    """A module of plots/ (imported from PLOTS), for tests of its functions."""
    sys.path.insert(0, PLOTS)
    try:
        return __import__(name)
    finally:
        sys.path.remove(PLOTS)


def repeated_results(d, times, backend="mpi", experiment=None):
    """A results folder under d holding the fixture's async run at P = 2 repeated once per entry of times (that
    entry its time_s; each repetition with its own run_id, rep and copies of the run's ranks and events rows),
    simulated on bgp.xml with backend smpi; experiment renames the experiment."""
    folder = os.path.join(d, "repeated")
    os.mkdir(folder)
    rid = "small-2026-11-21T06:30:12Z-273b48"
    for name in ("runs.csv", "ranks.csv", "events.csv"):
        with open(os.path.join(RESULTS, name), newline="") as f:
            reader = csv.DictReader(f)
            header, rows = reader.fieldnames, [r for r in reader if r["run_id"] == rid]
        out = []
        for k, t in enumerate(times):
            for r in rows:
                r = dict(r, run_id=f"{rid}-{k}")
                if name == "runs.csv":
                    r.update(rep=str(k), time_s=repr(t), backend=backend,
                             platform="configs/platforms/bgp.xml" if backend == "smpi" else "")
                    if experiment is not None:
                        r["experiment"] = experiment
                out.append(r)
        with open(os.path.join(folder, name), "w", newline="") as f:
            w = csv.DictWriter(f, header, lineterminator="\n")
            w.writeheader()
            w.writerows(out)
    return folder


# Ten repetitions in scrambled order: sorted 1.0, 1.1, ..., 1.9. Their median is 1.45; the 95 % interval of the
# median is [x(2), x(9)] = [1.1, 1.8] (worked out in Stats.test_interval_by_hand); min-max 1.0-1.9.
TEN = [1.5, 1.1, 1.9, 1.0, 1.3, 1.7, 1.2, 1.8, 1.4, 1.6]


class Stats(unittest.TestCase):
    """plots/mcmclb_stats.py: the median and its 95 % confidence interval by order statistics, and how every
    script that summarises a timing shows it (median, interval or why there is none, n, min-max)."""

    def test_interval_by_hand(self):
        """l is the largest integer >= 1 with sum_{i<l} C(n,i) / 2^n <= 0.025; the interval is [x(l), x(n+1-l)].
        n = 10, 2^10 = 1024: C(10,0) = 1 gives 1/1024 = 0.001 (l = 1 allowed); + C(10,1) = 10 gives 11/1024 =
        0.0107 (l = 2 allowed); + C(10,2) = 45 gives 56/1024 = 0.0547 > 0.025 (l = 3 not): l = 2, [x(2), x(9)].
        n = 6: 1/64 = 0.0156 allowed, 7/64 = 0.109 not: l = 1, [x(1), x(6)].
        n = 5: already 1/32 = 0.03125 > 0.025: no interval.
        n = 17 (next to the boundary): 1 + 17 + 136 + 680 + 2380 = 3214, 3214/131072 = 0.02452 allowed (l = 5);
        + C(17,5) = 6188 gives 9402/131072 = 0.0717 not: l = 5, [x(5), x(13)]."""
        stats = plots_module("mcmclb_stats")
        self.assertEqual(stats.median_ci(TEN), (1.1, 1.8))
        self.assertEqual(stats.ci_rank(10), 2)
        self.assertEqual(stats.median_ci([6, 1, 5, 2, 4, 3]), (1, 6))
        self.assertIsNone(stats.median_ci([1, 2, 3, 4, 5]))
        self.assertEqual(stats.ci_rank(17), 5)
        self.assertEqual(stats.median_ci(list(range(17, 0, -1))), (5, 13))
        for n in range(1, 6):
            self.assertIsNone(stats.ci_rank(n), n)

        s = stats.Summary(TEN)
        self.assertEqual((s.n, s.median, s.min, s.max), (10, 1.45, 1.0, 1.9))
        self.assertEqual(s.ci_text("{:.2f}"), "[1.10-1.80]")
        self.assertEqual(s.range_text("{:.1f}"), "[1.0-1.9]")
        self.assertEqual(stats.Summary(TEN[:5]).ci_text(), "too few repetitions (n=5)")
        simulated = stats.Summary(TEN, simulated=True)
        self.assertEqual((simulated.ci_text(), simulated.has_interval), ("simulated (deterministic)", False))

    def test_error_bars_only_where_there_is_an_interval(self):
        """Figures draw the interval as an error bar around the median; a simulated or too-small set-up gets
        none (its min-max is still drawn)."""
        stats = plots_module("mcmclb_stats")
        plt = plots_module("mcmclb_csv").pyplot()
        fig, ax = plt.subplots()
        summaries = [stats.Summary(TEN), stats.Summary(TEN[:5]), stats.Summary(TEN, simulated=True),
                     stats.Summary([v + 1 for v in TEN])]
        stats.error_bars(ax, [1, 2, 3, 4], summaries, color="C0")
        self.assertEqual(len(ax.containers), 1)
        bars = ax.containers[0]
        segments = [seg.tolist() for seg in bars.lines[2][0].get_segments()]
        self.assertEqual(len(segments), 2, segments)
        self.assertEqual([[round(y, 9) for _, y in seg] for seg in segments], [[1.1, 1.8], [2.1, 2.8]])
        self.assertEqual([seg[0][0] for seg in segments], [1, 4])
        plt.close(fig)

    def test_summary_shows_the_interval(self):
        with tempfile.TemporaryDirectory() as d:
            r = run("summary.py", repeated_results(d, TEN))
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("| 2 | async create_group | 10 | 1.450 [1.000-1.900] | [1.100-1.800] |", r.stdout)
        with tempfile.TemporaryDirectory() as d:
            r = run("summary.py", repeated_results(d, TEN[:5]))
            # the first five: 1.0, 1.1, 1.3, 1.5, 1.9
            self.assertIn("| 2 | async create_group | 5 | 1.300 [1.000-1.900] | too few repetitions (n=5) |",
                          r.stdout)
        with tempfile.TemporaryDirectory() as d:
            r = run("summary.py", repeated_results(d, TEN, backend="smpi"))
            self.assertIn("| 2 | async create_group, simulated (bgp) | 10 | 1.450 [1.000-1.900] | "
                          "simulated (deterministic) |", r.stdout)

    def test_fig2_prints_and_draws_the_interval(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "fig2.png")
            r = run("fig2.py", repeated_results(d, TEN), "-o", out)
            self.assertEqual(r.returncode, 0, r.stderr)
            assert_png(self, out)
            self.assertIn("| async create_group | 2 | 10 | 1.450 | [1.100-1.800] | [1.000-1.900] |", r.stdout)
            self.assertEqual(r.stdout.splitlines()[-1], "series: async create_group")
        with tempfile.TemporaryDirectory() as d:
            r = run("fig2.py", repeated_results(d, TEN, backend="smpi"), "-o", os.path.join(d, "f.png"))
            self.assertIn("| async create_group, simulated (bgp) | 2 | 10 | 1.450 | simulated (deterministic) |",
                          r.stdout)

    def test_fig1_prints_the_interval(self):
        """Six repetitions at one size give the interval [x(1), x(6)]; the same rows simulated give none."""
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "commbench.csv")
            times = [5.0, 3.0, 4.0, 9.0, 2.0, 6.0]
            with open(path, "w") as f:
                f.write("method,op,nprocs,group_size,rep,time_us,backend,platform\n")
                for backend, platform in (("mpi", ""), ("smpi", "configs/platforms/bgp.xml")):
                    f.writelines(f"range,create,4,{g},{k},{t * g},{backend},{platform}\n"
                                 for g in (1, 2) for k, t in enumerate(times))
            r = run("fig1.py", path)
            self.assertEqual(r.returncode, 0, r.stderr)
            assert_png(self, os.path.join(d, "fig1.png"))
        self.assertIn("| range | 4 | mpi | 2 | 6 | 9.000 | [4.000-18.000] | [4.000-18.000] |", r.stdout)
        self.assertIn("| range | 4 | smpi | 2 | 6 | 9.000 | simulated (deterministic) | [4.000-18.000] |", r.stdout)

    def test_partner_interval_over_seeds(self):
        with open(os.path.join(RESULTS, "runs.csv")) as f:
            header, row = f.readline().rstrip("\n").split(","), f.readline().rstrip("\n").split(",")
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "runs.csv"), "w") as f:
                f.write(",".join(header) + "\n")
                for backend in ("mpi", "smpi"):
                    for seed, ratio in enumerate(TEN):
                        r = dict(zip(header, row))
                        r.update(run_id=f"{backend}{seed}", workload="random", workload_seed=str(seed),
                                 balancer="mostwork", interval="1", method="range", time_s=str(ratio), ideal_s="1",
                                 valid="true", backend=backend,
                                 platform="configs/platforms/bgp.xml" if backend == "smpi" else "")
                        f.write(",".join(r[h] for h in header) + "\n")
            r = run("partner.py", d)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.splitlines()[2:4], [
            "| random | 2 | 1 | mostwork(1) range | 10 | 1.450 [1.000-1.900] | [1.100-1.800] |",
            "| random | 2 | 1 | mostwork(1) range, simulated (bgp) | 10 | 1.450 [1.000-1.900] | simulated "
            "(deterministic) |"])


class PageParser(__import__("html.parser").parser.HTMLParser):
    """The tags, attributes and text of an HTML page, as a browser's parser sees them."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.text = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def parse_page(path):
    with open(path, encoding="utf-8") as f:
        page = f.read()
    parser = PageParser()
    parser.feed(page)
    parser.close()
    return page, parser


EVIL = "<script>alert(1)</script>"


class HtmlReport(unittest.TestCase):
    """report.py DIR --html FILE: one self-contained page (figures embedded, nothing fetched, no script) holding
    the study, Fig. 2, the times with their intervals, Table 1, the gap split, a timeline, the provenance and a
    compare CSV; everything from the data escaped."""

    def assert_self_contained(self, path):
        """Every figure is an embedded PNG, and nothing refers outside the page: no script, no link, no frame, no
        attribute or style pointing at a URL."""
        page, parsed = parse_page(path)
        tags = [tag for tag, _ in parsed.tags]
        for tag in ("script", "link", "iframe", "object", "embed", "base", "audio", "video", "source", "frame"):
            self.assertNotIn(tag, tags)
        for tag, attrs in parsed.tags:
            for name, value in attrs.items():
                self.assertFalse(name.startswith("on"), f"<{tag} {name}>: an event handler")
                if name in ("src", "href", "action", "data", "poster", "srcset", "background"):
                    self.assertEqual(tag, "img", f"<{tag} {name}={value[:40]}>")
                    self.assertTrue(value.startswith("data:image/png;base64,"), f"<img {name}={value[:40]}>")
        self.assertNotIn("url(", page)
        self.assertNotIn("@import", page)
        images = [attrs for tag, attrs in parsed.tags if tag == "img"]
        for attrs in images:
            png = base64.b64decode(attrs["src"].split(",", 1)[1], validate=True)
            self.assertEqual(png[:8], b"\x89PNG\r\n\x1a\n")
            width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
            self.assertGreater(min(width, height), 100, attrs.get("alt"))
        return page, parsed, images

    def test_one_page_with_everything_escaped(self):
        with tempfile.TemporaryDirectory() as d:
            folder = repeated_results(d, TEN, experiment=EVIL)
            with open(os.path.join(folder, "provenance.csv"), "w") as f:
                f.write("run_id,command_line,working_dir,platform_fnv1a64,simgrid_cfg,launcher,slurm_job_id,"
                        "slurm_nodelist\n")
                f.write("small-2026-11-21T06:30:12Z-273b48-0,\"mcmclb run '<img src=http://x.invalid/a.png>'\","
                        "/home/u/\"q\",,,mpiexec,,\n")
            compare = os.path.join(d, "compare.csv")
            with open(compare, "w") as f:
                f.write("setup,median_a_s,median_b_s,verdict\nasync <b>x</b>,1.45,1.30,faster\nnone,7.0,7.0,same\n")
            out = os.path.join(d, "report.html")
            r = run("report.py", folder, "--html", out, "--compare", compare)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout.strip(), f"wrote {out}")
            self.assertEqual(sorted(os.listdir(folder)), ["events.csv", "provenance.csv", "ranks.csv", "runs.csv"])
            page, parsed, images = self.assert_self_contained(out)
        self.assertEqual(len(images), 2, "Fig. 2 and the timeline")
        text = "".join(parsed.text)
        # The names came through as text, never as markup.
        self.assertNotIn("<script", page)
        self.assertNotIn("<b>", page)
        self.assertIn(f"mcmclb report: {EVIL}", text)
        self.assertIn("mcmclb run '<img src=http://x.invalid/a.png>'", text)
        self.assertIn('/home/u/"q"', text)
        self.assertIn("async <b>x</b>", text)
        headings = [data for data in parsed.text if data.strip()]
        for heading in ("The study", "Fig. 2: run time against cores", "Times against the ideal",
                        "Table 1: regroupings per process", "The gap to the ideal, split", "Timeline",
                        "Comparison: compare.csv", "Provenance"):
            self.assertIn(heading, headings)
        # The interval of the ten repetitions, and the compare table's verdict column marked.
        self.assertIn("[1.100-1.800]", text)
        verdicts = [attrs for tag, attrs in parsed.tags if tag in ("td", "th") and attrs.get("class") == "verdict"]
        self.assertEqual(len(verdicts), 3, "the verdict heading and its two cells")

    def test_simulated_folder(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "r.htm")
            r = run("report.py", repeated_results(d, TEN, backend="smpi"), "--html", out)
            self.assertEqual(r.returncode, 0, r.stderr)
            _, parsed, images = self.assert_self_contained(out)
        text = "".join(parsed.text)
        self.assertEqual(len(images), 2)
        self.assertIn("simulated (deterministic)", text)
        self.assertIn("simulated, not measured", text)
        self.assertNotIn("[1.100-1.800]", text)

    def test_bad_arguments_and_inputs_are_one_line(self):
        with tempfile.TemporaryDirectory() as d:
            folder = copy_results(d)
            out = os.path.join(d, "report.html")
            bad = os.path.join(d, "bad.csv")
            with open(bad, "w") as f:
                f.write("a,verdict\n1,ok\n2\n")
            empty = os.path.join(d, "empty.csv")
            open(empty, "w").close()
            prov = copy_results(os.path.join(d, "prov"))
            with open(os.path.join(prov, "provenance.csv"), "w") as f:
                f.write("run_id,command_line\n")
            for args, fragment in (([folder, "--compare", bad], "--compare needs --html"),
                                   ([folder, "--html", os.path.join(d, "r.txt")], "ending in .html, .htm"),
                                   ([folder, "--html", os.path.join(d, "no", "r.html")], "does not exist"),
                                   ([folder, "--html", out, "--compare", bad], f"{bad}: row 3 has 1 fields"),
                                   ([folder, "--html", out, "--compare", empty], f"{empty}: empty file"),
                                   ([folder, "--html", out, "--compare", d], "is a folder"),
                                   ([prov, "--html", out], "provenance.csv: no data rows")):
                r = run("report.py", *args)
                BadInputs.assert_one_line(self, r, f"report.py {args}", fragment)
            self.assertFalse(os.path.exists(out))
            self.assertEqual(sorted(os.listdir(folder)), ["events.csv", "ranks.csv", "runs.csv"])


if __name__ == "__main__":
    unittest.main()
