# SPDX-License-Identifier: BSD-3-Clause
"""plots/calibration_check.py's refusals, which come before anything is run: bad flags, a folder mcmclb calibrate did
not write (a file missing, a platform that is not XML, a provenance.csv that is not calibrate's), an output folder
that exists, builds without the programs, a busy host and a single CPU are each one line on stderr and exit 2, with
nothing written. Then the table the docs print from a check's errors.csv, and its refusal of a malformed one. Pure
Python, in this process: well under a second."""
import contextlib
import io
import os
import shutil
import sys
import tempfile
import unittest
from unittest import mock

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "plots"))
import calibration_check  # noqa: E402
import doc_tables  # noqa: E402
from mcmclb_csv import InputError  # noqa: E402

PROVENANCE = ("git_commit,mpi_library,nprocs,host,utc_start,run_id_unused\n"
              "0123456789ab,MPICH Version:      4.0.2,2,vm,2026-11-29T16:00:00Z,\n")
ERRORS = ("what,method,size,unit,n,measured_median_us,measured_low_us,measured_high_us,simulated_us,error_pct,"
          "error_low_pct,error_high_pct\n"
          "pingpong,,8,B,8,0.5,0.45,0.6,0.55,10,-8.33333,22.2222\n"
          "create,split,2,ranks,8,20,18,25,10,-50,-60,-44.4444\n")
CHECK_PROVENANCE = ("calibration,calibration_utc,calibration_commit,calibration_host,platform_fnv1a64,mpi_library,"
                    "simgrid_version,host,cpus,nprocs,rounds,order_seed,busy_before_pct,busy_after_pct,git_commit,"
                    "utc_start,utc_end,command_line\n"
                    "cal,2026-11-29T16:00:00Z,0123456789ab,vm,00112233aabbccdd,MPICH 4.0.2,3.32.0,vm,2,2,8,7,1.5,2,"
                    "0123456789ab,2026-11-29T16:10:00Z,2026-11-29T16:15:00Z,plots/calibration_check.py cal\n")


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


class Refusals(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp)
        self.cal = os.path.join(self.tmp, "cal")
        os.mkdir(self.cal)
        write(os.path.join(self.cal, "calibrated.xml"), "<?xml version='1.0'?>\n<platform version=\"4.1\"/>\n")
        write(os.path.join(self.cal, "calibrated.hosts"), "node-0\nnode-0\n")
        write(os.path.join(self.cal, "smpi.cfg"), "-no-privatize\n")
        write(os.path.join(self.cal, "provenance.csv"), PROVENANCE)
        self.build = os.path.join(self.tmp, "build")  # no programs in it
        os.mkdir(self.build)

    def files(self):
        return sorted(os.path.relpath(os.path.join(d, f), self.tmp) for d, _, fs in os.walk(self.tmp) for f in fs)

    def refused(self, *args, contains):
        """Runs the script's main with args (in this process: the refusals come before it starts anything); it must
        exit 2 with one line on stderr naming contains, print nothing else and write nothing."""
        before = self.files()
        out, err = io.StringIO(), io.StringIO()
        with mock.patch.object(sys, "argv", ["calibration_check.py", *args]), contextlib.redirect_stdout(out), \
                contextlib.redirect_stderr(err), self.assertRaises(SystemExit) as exit_:
            calibration_check.main()
        self.assertEqual(exit_.exception.code, 2, err.getvalue())
        self.assertEqual(len(err.getvalue().splitlines()), 1, err.getvalue())
        self.assertIn(contains, err.getvalue())
        self.assertEqual(out.getvalue(), "")
        self.assertEqual(self.files(), before)

    def test_bad_flags(self):
        self.refused(self.cal, "--reps", "5", contains="at least 6")
        self.refused(self.cal, "--reps", "x", contains="not an integer")
        self.refused(self.cal, "--busy", "150", contains="--busy 150")
        self.refused(self.cal, "--fast", contains="unrecognized arguments: --fast")
        self.refused(contains="calibration")

    def test_a_folder_calibrate_did_not_write(self):
        self.refused(os.path.join(self.tmp, "nowhere"), contains="no such folder")
        os.remove(os.path.join(self.cal, "smpi.cfg"))
        self.refused(self.cal, contains="smpi.cfg: no such file")
        write(os.path.join(self.cal, "smpi.cfg"), "-no-privatize\n")
        write(os.path.join(self.cal, "calibrated.xml"), "not xml\n")
        self.refused(self.cal, contains="calibrated.xml: not an XML platform")

    def test_a_provenance_that_is_not_calibrates(self):
        path = os.path.join(self.cal, "provenance.csv")
        for text, contains in ((PROVENANCE.replace("utc_start", "utc"), "missing column(s) utc_start"),
                               (PROVENANCE.replace(",2,vm", ",two,vm"), "column nprocs is not an integer"),
                               (PROVENANCE.replace(",2,vm", ",1,vm"), "column nprocs is below 2"),
                               (PROVENANCE.replace("\n", "\r\n"), "CRLF"),
                               (PROVENANCE.replace("2026-11-29T16:00:00Z", ""), "column utc_start is empty"),
                               (PROVENANCE + PROVENANCE.split("\n")[1] + "\n", "2 rows"),
                               ("", "empty file")):
            with self.subTest(contains=contains):
                with open(path, "w", newline="") as f:
                    f.write(text)
                self.refused(self.cal, contains=contains)

    def test_a_busy_host_or_too_few_cpus(self):
        for name in ("mcmclb", "mcmclb-pingpong", "mcmclb-commbench", "mcmclb-sim", "mcmclb-pingpong-sim",
                     "mcmclb-commbench-sim"):
            write(os.path.join(self.build, name), "")
        flags = (self.cal, "--out", os.path.join(self.tmp, "out"), "--build", self.build, "--sim-build", self.build)
        with mock.patch.object(calibration_check, "host_busy_pct", return_value=95.0), \
                mock.patch.object(calibration_check.os, "sched_getaffinity", return_value={0, 1}):
            self.refused(*flags, contains="the host is 95 % busy")
        with mock.patch.object(calibration_check.os, "sched_getaffinity", return_value={0}):
            self.refused(*flags, contains="1 CPU(s) for this process")

    def test_an_output_that_exists_and_builds_without_programs(self):
        out = os.path.join(self.tmp, "out")
        os.mkdir(out)
        self.refused(self.cal, "--out", out, contains="out: exists")
        os.rmdir(out)
        self.refused(self.cal, "--out", out, "--build", self.build, "--sim-build", self.build,
                     contains="mcmclb-pingpong: no such file")


class Table(unittest.TestCase):
    def setUp(self):
        self.addCleanup(doc_tables.Inputs.cache.clear)
        self.tmp = tempfile.mkdtemp(dir=ROOT)
        self.addCleanup(shutil.rmtree, self.tmp)
        write(os.path.join(self.tmp, "errors.csv"), ERRORS)
        write(os.path.join(self.tmp, "provenance.csv"), CHECK_PROVENANCE)
        self.rel = os.path.relpath(self.tmp, ROOT)

    def test_each_row_and_the_conditions(self):
        text = doc_tables.generate("calibration-errors", [self.rel])
        self.assertIn("| ping-pong, one way | 8 B | 0.5 [0.45, 0.6] | 0.55 | +10 % [-8, +22] |", text)
        self.assertIn("| creation (split) | 2 ranks | 20 [18, 25] | 10 | -50 % [-60, -44] |", text)
        self.assertIn("n = 8", text)
        self.assertIn("P = 2 on 2 CPUs, MPICH 4.0.2, 8 interleaved rounds", text)
        self.assertIn("calibrated at 2026-11-29T16:00:00Z", text)

    def test_a_malformed_errors_csv_is_refused(self):
        write(os.path.join(self.tmp, "errors.csv"), ERRORS.replace(",10,-8.33333", ",ten,-8.33333"))
        with self.assertRaisesRegex(InputError, "errors.csv: line 2: column error_pct is not a number"):
            doc_tables.generate("calibration-errors", [self.rel])
        write(os.path.join(self.tmp, "errors.csv"), ERRORS.replace("pingpong,,8,B,8", "pingpong,,8,B,5"))
        with self.assertRaisesRegex(InputError, "column n is below 6"):
            doc_tables.generate("calibration-errors", [self.rel])


if __name__ == "__main__":
    unittest.main()
