# SPDX-License-Identifier: BSD-3-Clause
"""Under CI=true a test whose dependency is missing fails instead of skipping: CI runs bootstrap.sh, which
installs every dependency, so a skip there would be a broken setup passing as green. Checked on the two tests that
skip for a missing program (the simulation suite without SimGrid, the Open MPI pass without Open MPI, the Slurm tests
without Slurm's daemons), each made to miss it on purpose; nothing is built or launched."""
import os
import subprocess
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SIM_SUITE = os.path.join(HERE, "smpi", "run_sim_suite.sh")
OPENMPI_SUITE = os.path.join(HERE, "openmpi", "run_openmpi_suite.sh")
README_DEMO = os.path.join(HERE, "readme", "run_demo.sh")
CALIBRATE = (os.path.join(HERE, "calibrate.sh"), os.path.join(HERE, "calibrate_netns.sh"))
ADVISE_PREDICTION = os.path.join(HERE, "advise_prediction.sh")


# Each script is several CTest tests, one per part (a build, then the checks that need it): every part checks.
PARTS = {SIM_SUITE: ("build", "test", "advise", "all", "forty"), OPENMPI_SUITE: ("build", "sanitized", "programs", "cli")}


def run_without_programs(script, ci):
    """Each part of script, with a PATH without smpicxx, smpirun, mpicc.openmpi and mpiexec.openmpi (bash itself is
    called by its full path); yields the part and its result."""
    env = {"PATH": "/nonexistent", "CI": ci}
    for part in PARTS[script]:
        yield part, subprocess.run(["/bin/bash", script, "/nonexistent-src", "/nonexistent-build", "ON", part],
                                   env=env, capture_output=True, text=True, timeout=30)


class MissingDependency(unittest.TestCase):
    def test_simulation_suite_fails_under_ci_without_simgrid(self):
        for part, r in run_without_programs(SIM_SUITE, "true"):
            with self.subTest(part=part):
                self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
                self.assertIn("smpicxx/smpirun not found", r.stdout)
                self.assertIn("CI=true: a missing dependency fails the run", r.stdout)

    def test_simulation_suite_skips_outside_ci(self):
        for part, r in run_without_programs(SIM_SUITE, ""):
            with self.subTest(part=part):
                self.assertEqual(r.returncode, 77, r.stdout + r.stderr)
                self.assertIn("SKIPPED: smpicxx/smpirun not found", r.stdout)

    def test_openmpi_pass_fails_under_ci_without_open_mpi(self):
        for ci in ("true", "1"):
            for part, r in run_without_programs(OPENMPI_SUITE, ci):
                with self.subTest(ci=ci, part=part):
                    self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
                    self.assertIn("mpicc.openmpi or mpiexec.openmpi missing", r.stderr)

    def test_openmpi_pass_skips_outside_ci(self):
        for part, r in run_without_programs(OPENMPI_SUITE, ""):
            with self.subTest(part=part):
                self.assertEqual(r.returncode, 77, r.stdout + r.stderr)
                self.assertIn("Open MPI is not installed: skipped", r.stdout)

    def test_calibrate_tests_fail_under_ci_without_their_programs(self):
        """mcmclb calibrate's end-to-end test without smpirun, and its network test without root's tools."""
        for script in CALIBRATE:
            for ci, code, said in (("true", 1, "CI=true: a missing dependency fails"), ("", 77, "SKIPPED: ")):
                r = subprocess.run(["/bin/bash", script, "/nonexistent/mcmclb", "/nonexistent/mpiexec",
                                    "/nonexistent/mcmclb-sim", "/nonexistent-src"],
                                   env={"PATH": "/nonexistent", "CI": ci}, capture_output=True, text=True, timeout=30)
                with self.subTest(script=os.path.basename(script), ci=ci):
                    self.assertEqual(r.returncode, code, r.stdout + r.stderr)
                    self.assertIn(said, r.stdout)

    def test_advise_prediction_fails_under_ci_without_smpirun(self):
        for ci, code, said in (("true", 1, "CI=true: a missing dependency fails"), ("", 77, "SKIPPED: ")):
            r = subprocess.run(["/bin/bash", ADVISE_PREDICTION, "/nonexistent/mcmclb", "/nonexistent/mcmclb-sim",
                                "/nonexistent-src"], env={"PATH": "/nonexistent", "CI": ci}, capture_output=True,
                               text=True, timeout=30)
            with self.subTest(ci=ci):
                self.assertEqual(r.returncode, code, r.stdout + r.stderr)
                self.assertIn(said, r.stdout)

    def test_cluster_login_fails_under_ci_without_lmod(self):
        """The quick study's demo runs on the emulated cluster login: without Lmod (or, run by a user, without root) its
        parts fail under CI=true (1) and skip otherwise (77), before anything is copied or built."""
        for ci, code, said in (("true", 1, "CI=true: a missing dependency fails"), ("", 77, ": skipped")):
            for part in ("build", "run"):
                with self.subTest(ci=ci, part=part):
                    r = subprocess.run(["/bin/bash", README_DEMO, os.path.dirname(HERE), "/nonexistent-work", part],
                                       env={"PATH": os.environ["PATH"], "CI": ci, "MCMCLB_LMOD_INIT": "/nonexistent"},
                                       capture_output=True, text=True, timeout=30)
                    self.assertEqual(r.returncode, code, r.stdout + r.stderr)
                    self.assertIn(said, r.stdout + r.stderr)
                    self.assertFalse(os.path.exists("/nonexistent-work"))

    def slurm_module_setup(self, ci, ports=False):
        """test_slurm's set-up (or, with ports, test_slurm_ports's) as if Slurm's daemons were not installed."""
        import test_slurm
        import test_slurm_ports
        saved, saved_ci = test_slurm.SLURM_DAEMONS, os.environ.get("CI")
        test_slurm.SLURM_DAEMONS = ("/nonexistent/slurmctld",)
        os.environ["CI"] = ci
        try:
            if ports:
                test_slurm_ports.BesideAnotherSlurm("test_two_clusters_at_once_on_free_ports").setUp()
            else:
                test_slurm.setUpModule()
        finally:
            test_slurm.SLURM_DAEMONS = saved
            if saved_ci is None:
                del os.environ["CI"]
            else:
                os.environ["CI"] = saved_ci

    def test_slurm_module_fails_under_ci_without_slurm(self):
        with self.assertRaisesRegex(AssertionError, "/nonexistent/slurmctld not installed .*CI=true"):
            self.slurm_module_setup("true")

    def test_slurm_module_skips_outside_ci(self):
        with self.assertRaisesRegex(unittest.SkipTest, "/nonexistent/slurmctld not installed"):
            self.slurm_module_setup("")

    def test_slurm_ports_fails_under_ci_without_slurm(self):
        with self.assertRaisesRegex(AssertionError, "/nonexistent/slurmctld not installed .*CI=true"):
            self.slurm_module_setup("true", ports=True)
        with self.assertRaisesRegex(unittest.SkipTest, "/nonexistent/slurmctld not installed"):
            self.slurm_module_setup("", ports=True)


class EveryTestRuns(unittest.TestCase):
    def test_every_slurm_class_is_in_one_ctest_test(self):
        """CTest runs test_slurm as two tests that name their classes (slurm, slurm_advise): a class added to the
        module and named in neither would never run, and a class named in both would run twice."""
        import re
        import test_slurm
        with open(os.path.join(HERE, "CMakeLists.txt")) as f:
            named = re.findall(r"\btest_slurm\.(\w+)", f.read())
        with_tests = [name for name, obj in vars(test_slurm).items()
                      if isinstance(obj, type) and issubclass(obj, unittest.TestCase)
                      and unittest.TestLoader().getTestCaseNames(obj)]
        self.assertEqual(sorted(named), sorted(with_tests))


if __name__ == "__main__":
    unittest.main()
