# SPDX-License-Identifier: BSD-3-Clause
"""Methods per MPI library, against the MPI this build uses: a creation method the library lacks (from_group needs
MPI-4's MPI_Comm_create_from_group; Open MPI 4.1 is MPI 3.1) is listed as not supported, with the reason, by
`mcmclb-commbench --help`, commbench's table and `mcmclb plan`, and refused in one line (exit 2, rank 0 only, before
any work, nothing written) when a study, `--set` or `--methods` asks for it; where the library has it, it is listed
and accepted. What to expect comes from the MPI version CMake found for the build (MCMCLB_TEST_MPI_VERSION), not
from what the programs say, and every launch uses the build's own mpiexec (MCMCLB_TEST_LAUNCH; not MCMCLB_MPIEXEC,
which a sweep would obey), so under Open MPI the test runs Open MPI's binaries under Open MPI's launcher."""
import os
import re
import unittest

from test_inputs import COMMBENCH, FAST_S, MCMCLB, InputCase, fixture, snapshot

MPIEXEC = os.environ["MCMCLB_TEST_LAUNCH"].split()  # the launcher and the flags this library needs on this machine
MPI_VERSION = tuple(int(v) for v in os.environ["MCMCLB_TEST_MPI_VERSION"].split(".")[:2])
FROM_GROUP_SUPPORTED = MPI_VERSION >= (4, 0)
REASON = "needs MPI_Comm_create_from_group (MPI-4), which "
RANKS = ("1", "2")

PLAIN_STUDY = "experiment: fg\nnprocs: 2\nT_ms: 1\nworkload: {model: uniform, items: 1}\nbalancer: async\n"
KERNEL_STUDY = PLAIN_STUDY + "method: from_group\n"
COMMBENCH_STUDY = "experiment: cb\nprogram: commbench\nnprocs: 2\ncommbench: {methods: [from_group]}\n"


class FromGroup(InputCase):
    def launch_mpi(self, program, *args, ranks="1"):
        env = dict(os.environ)
        # Open MPI's mpiexec adds a banner of its own when a rank exits non-zero (MPICH ignores the variable): the
        # one line under test is the program's.
        env["OMPI_MCA_orte_execute_quiet"] = "1"
        return self.launch([*MPIEXEC, "-n", ranks, program, *args], env=env)

    def write(self, name, text):
        path = self.path(name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def assert_listed(self, text, methods_prefix):
        """text lists from_group among the methods of the line starting with methods_prefix when the library has
        it, else not there but with its reason."""
        methods = [l for l in text.splitlines() if l.startswith(methods_prefix)]
        self.assertEqual(len(methods), 1, text)
        self.assertEqual("from_group" in re.split(r"[ ,]+", methods[0]), FROM_GROUP_SUPPORTED, text)
        reason = [l for l in text.splitlines() if "from_group: " + REASON in l]
        self.assertEqual(len(reason), 0 if FROM_GROUP_SUPPORTED else 1, text)
        if reason:
            self.assertIn(f"(MPI {MPI_VERSION[0]}.{MPI_VERSION[1]}) lacks", reason[0])

    def test_listed_by_commbench_help_and_plan(self):
        r = self.launch_mpi(COMMBENCH, "--help")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assert_listed(r.stdout.decode(), "methods: ")
        r = self.mcmclb("plan", self.write("plain.yaml", PLAIN_STUDY))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assert_listed(r.stdout.decode(), "creation methods: ")

    def test_listed_in_commbench_table(self):
        out = self.path("cb", "fig1.csv")
        r = self.launch_mpi(COMMBENCH, "--methods", "floor", "--sizes", "1", "--reps", "1", "--rep-time", "0.001",
                            "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        text = r.stdout.decode()
        self.assertEqual("from_group: " + REASON in text, not FROM_GROUP_SUPPORTED, text)

    def test_asked_for_it_is_refused_or_accepted(self):
        kernel, commbench = self.write("fg.yaml", KERNEL_STUDY), self.write("cb.yaml", COMMBENCH_STUDY)
        if FROM_GROUP_SUPPORTED:
            for study in (kernel, commbench):
                r = self.mcmclb("plan", study)
                self.assertEqual(r.returncode, 0, r.stderr)
            return
        fragments = ("from_group is not supported by this build: " + REASON,)
        for study, key in ((kernel, "key method: "), (commbench, "key commbench.methods: ")):
            with self.subTest(study=os.path.basename(study), command="plan"):
                self.assert_one_line_error(self.mcmclb("plan", study), key, *fragments, within_s=FAST_S)
            with self.subTest(study=os.path.basename(study), command="sweep"):
                out = self.fresh("sweep")
                r = self.mcmclb("sweep", study, "--launcher", "local", "--out", out)
                self.assert_one_line_error(r, key, *fragments, within_s=FAST_S)
                self.assertFalse(os.path.exists(out), "nothing written")
        for ranks in RANKS:
            for args in ((kernel,), (fixture("tiny.yaml"), "--set", "balancer=async", "--set", "method=from_group")):
                with self.subTest(args=args, command="run", ranks=ranks):
                    out = self.fresh("run")
                    r = self.launch_mpi(MCMCLB, "run", *args, "--out", out, ranks=ranks)
                    self.assert_one_line_error(r, "key method: ", *fragments, within_s=FAST_S)
                    self.assertFalse(os.path.exists(out), "nothing written")
            with self.subTest(command="commbench --methods", ranks=ranks):
                out = self.path(self.fresh("cb"), "fig1.csv")
                r = self.launch_mpi(COMMBENCH, "--methods", "create,from_group", "--out", out, ranks=ranks)
                self.assert_one_line_error(r, "--methods: ", *fragments, program="mcmclb-commbench", within_s=FAST_S)
                self.assertFalse(os.path.exists(os.path.dirname(out)), "nothing written, not even its folder")
        self.assertEqual(snapshot(self.path("results")), {}, "no default output folder")


if __name__ == "__main__":
    unittest.main()
