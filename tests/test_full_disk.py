# SPDX-License-Identifier: BSD-3-Clause
"""A disk that fills under an application's chains (mcmclb::walkers::run, docs/guide/your-chains.md, "When a
write fails"): the trace file, the checkpoint folder, each on a real full file system (a 16 KiB tmpfs), at 2 ranks
under the real mpiexec. No rank waits for ever (every launch has a time limit; one that reaches it fails the test),
what the run computed is kept (every chain's answer, the same bits as on a roomy disk), the failure is said in one
line on rank 0 and in the exit status of every rank (4), and a trace that could not be written whole keeps its first
line `# incomplete:`. A disk full before the run starts is refused in one line, exit 2, before any work. Runs
examples/minimal as its users build it (where one rank once waited for ever) and tests/checkpoint_chains. Needs
root to mount the tmpfs: under CI=true a test that cannot mount fails. About 5 s. Needs MINIMAL, CHECKPOINT_CHAINS,
MPIEXEC, MCMCLB_BIN and MCMCLB_COMMBENCH (ctest sets them)."""
import os
import shutil
import subprocess
import unittest

from test_inputs import InputCase

MINIMAL = os.environ["MINIMAL"]
CHAINS = os.environ["CHECKPOINT_CHAINS"]
MPIEXEC = os.environ.get("MPIEXEC", "mpiexec")
HANG_S = 20  # each launch takes under a second; one still running after this waits for ever
PAGE = 4096  # tmpfs counts its size in pages
OUTPUT_LOST = 4  # mcmclb::kOutputErrorExit


def stderr_lines(r):
    return [l for l in r.stderr.decode().split("\n") if l.strip()]


class FullDisk(InputCase):
    def setUp(self):
        super().setUp()
        self.disk = self.path("disk")
        os.mkdir(self.disk)
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", self.disk], capture_output=True)
        if mounted.returncode != 0:
            if os.environ.get("CI") == "true":
                self.fail(f"CI=true: cannot mount a small tmpfs (needs root): {mounted.stderr.decode()}")
            self.skipTest("cannot mount a small tmpfs here (needs root)")

    def tearDown(self):
        subprocess.run(["umount", "-l", self.disk], capture_output=True)
        super().tearDown()

    def fill(self, pages_left):
        """The tmpfs full but for pages_left pages of 4 KiB."""
        with open(os.path.join(self.disk, "filler"), "wb") as f:
            f.write(b"\0" * (16 * 1024 - pages_left * PAGE))

    def run_at_2(self, program, *args):
        return self.launch([MPIEXEC, "-n", "2", program, *args], timeout=HANG_S)

    def chain_lines(self, r):
        return [l for l in r.stdout.decode().split("\n") if l.startswith("chain ")]

    def test_the_trace_fills_the_disk_mid_run(self):
        """Room for the trace's head and a page of rows: the streamed rows, then the whole file at the end, fail.
        examples/minimal's rank 0 once threw out of run() there while rank 1 waited in a broadcast for ever."""
        self.fill(1)
        trace = os.path.join(self.disk, "t.csv")
        roomy = self.run_at_2(MINIMAL)
        self.assertEqual(roomy.returncode, 0, roomy.stderr)
        for program, args in ((MINIMAL, []), (CHAINS, ["--chains", "40", "--out", self.path("a.txt")])):
            name = os.path.basename(program)
            with self.subTest(name):
                try:
                    r = self.run_at_2(program, *args, "--mcmclb-record", trace)
                finally:
                    text = open(trace).read() if os.path.exists(trace) else ""
                    if os.path.exists(trace):
                        os.remove(trace)
                self.assertEqual(r.returncode, OUTPUT_LOST, f"{name}: every rank ends, and says output was lost\n"
                                 f"{r.stderr.decode()[-2000:]}")
                said = [l for l in stderr_lines(r) if l.startswith("mcmclb: the trace ")]
                self.assertEqual(len(said), 1, r.stderr)
                self.assertIn("No space left on device", said[0])
                self.assertIn("the results returned are whole", said[0])
                self.assertTrue(text.startswith("# incomplete:"), text[:200])
                rows = sum(1 for l in text.split("\n") if l[:1].isdigit())
                self.assertIn(f" {rows} of ", said[0], "the line says how many rows reached the file")
                if program == MINIMAL:
                    self.assertEqual(self.chain_lines(r), self.chain_lines(roomy), "every chain's answer, whole")
                    self.assertEqual(len(self.chain_lines(r)), 8)
                else:
                    with open(self.path("a.txt")) as f:
                        self.assertEqual(len(f.read().split("\n")), 41, "every chain's answer written")

    def test_a_disk_full_before_the_run_is_refused_in_one_line(self):
        """Not a byte free: the trace's head and the checkpoint folder's meta file cannot be written. Rank 0 threw
        out of run() alone there, and the other rank waited for ever."""
        self.fill(0)
        cases = [(["--mcmclb-record", os.path.join(self.disk, "t.csv")], "Options::record"),
                 (["--mcmclb-checkpoint", os.path.join(self.disk, "ck")], "Options::checkpoint")]
        for args, key in cases:
            with self.subTest(key):
                r = self.run_at_2(MINIMAL, *args)
                self.assert_one_line_error(r, key, "No space left on device", program="minimal")

    def test_checkpoints_on_a_full_disk(self):
        """Room for the folder's meta file alone: every chain's checkpoint fails, also a spread state's, whose
        members each write their own piece. The run goes on, its answers are whole, rank 0's last line
        names the chains the folder lacks, and every rank exits 4 (examples/minimal exited 0)."""
        self.fill(1)
        roomy = self.run_at_2(MINIMAL)
        # Spread states in a group of 2: each member's write of its own piece fails, and member 0 writes no record.
        spread = ["--spread", "1", "--mcmclb-group-size", "2", "--out", self.path("s.txt")]
        for program, args in ((MINIMAL, []), (CHAINS, ["--out", self.path("a.txt")]), (CHAINS, spread)):
            name = os.path.basename(program) + (" --spread" if "--spread" in args else "")
            folder = os.path.join(self.disk, "ck-" + name.replace(" ", ""))
            with self.subTest(name):
                try:
                    r = self.run_at_2(program, *args, "--mcmclb-checkpoint", folder,
                                      "--mcmclb-checkpoint-every-items", "1")
                finally:
                    shutil.rmtree(folder, ignore_errors=True)  # the next program's folder gets the page back
                self.assertEqual(r.returncode, OUTPUT_LOST, f"{name}\n{r.stderr.decode()[-2000:]}")
                self.assertIn("mcmclb: checkpoints lost: ", stderr_lines(r)[-1])
                self.assertIn("No space left on device", stderr_lines(r)[-1])
                if program == MINIMAL:
                    self.assertEqual(self.chain_lines(r), self.chain_lines(roomy), "every chain's answer, whole")
                else:
                    with open(args[args.index("--out") + 1]) as f:
                        self.assertEqual(len(f.read().split("\n")), 10, "every chain's answer written")


if __name__ == "__main__":
    unittest.main()
