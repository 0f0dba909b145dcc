# SPDX-License-Identifier: BSD-3-Clause
"""tests/soak.py's verdicts, with a stand-in mcmclb under the real mpiexec: a rank that never ends is a hang and
nothing of the launch survives the kill (Hydra's proxy also ends its ranks when mpiexec dies, so this checks the
outcome, not which of the two did it), a non-zero exit is a crash, exit 3 or valid=false is an invalid run, and
the printed replay command draws the same run again."""
import os
import re
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SOAK = os.path.join(HERE, "soak.py")

# $2 is the experiment file; the soak's start-up probe (probe.yaml) must succeed.
FAKE = """#!/bin/sh
case "$2" in *probe.yaml) exit 0;; esac
case "$FAKE_MODE" in
  hang_rank1) if [ "$PMI_RANK" = 1 ]; then while :; do sleep 1; done; fi; exit 0;;
  crash) echo "first line" >&2; echo "rank $PMI_RANK failed" >&2; exit 1;;
  invalid_exit) exit 3;;
  invalid_row) mkdir -p "$4"; printf 'run_id,valid,violations\\nx,false,chain 0 lost an item\\n' > "$4/runs.csv";;
esac
"""


class SoakVerdicts(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.fake = os.path.join(self.dir.name, "mcmclb")
        with open(self.fake, "w") as f:
            f.write(FAKE)
        os.chmod(self.fake, 0o755)

    def tearDown(self):
        self.dir.cleanup()

    def soak(self, mode, *args):
        env = dict(os.environ, FAKE_MODE=mode)
        return subprocess.run([sys.executable, SOAK, "--bin", self.fake, "--ranks", "3", *args], capture_output=True,
                              text=True, timeout=120, env=env)

    def survivors(self):
        """Processes still running the stand-in (their command line names it)."""
        found = []
        for entry in os.listdir("/proc"):
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    if self.fake.encode() in f.read():
                        found.append(entry)
            except OSError:
                pass
        return found

    def test_hang_is_killed_with_every_rank(self):
        r = self.soak("hang_rank1", "--runs", "1", "--timeout", "2")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("runs 1, hangs 1, invalid 0, crashes 0", r.stdout)
        self.assertIn("still running after 2 s, killed", r.stdout)
        time.sleep(1.5)  # the rank's last `sleep 1` ends by itself
        self.assertEqual(self.survivors(), [])

    def test_crash_and_invalid(self):
        r = self.soak("crash", "--runs", "2")
        self.assertEqual(r.returncode, 1)
        self.assertIn("runs 2, hangs 0, invalid 0, crashes 2", r.stdout)
        self.assertRegex(r.stdout, r"CRASH .*: exit 1: rank \d failed")
        r = self.soak("invalid_exit", "--runs", "1")
        self.assertIn("runs 1, hangs 0, invalid 1, crashes 0", r.stdout)
        r = self.soak("invalid_row", "--runs", "1")
        self.assertEqual(r.returncode, 1)
        self.assertIn("runs 1, hangs 0, invalid 1, crashes 0", r.stdout)
        self.assertIn("valid=false: chain 0 lost an item", r.stdout)

    def test_replay_draws_the_same_run(self):
        r = self.soak("crash", "--runs", "3", "--seed", "40")
        lines = {int(m.group(1)): m.group(2) for m in re.finditer(r"seed (\d+): CRASH (.*): exit", r.stdout)}
        self.assertEqual(sorted(lines), [40, 41, 42])
        self.assertIn("failing seeds: 40 41 42", r.stdout)
        replay = re.search(r"seed 41: .*\(replay: (.*)\)", r.stdout).group(1).split()
        self.assertEqual(replay[1:], ["--runs", "1", "--seed", "41", "--ranks", "3"])
        again = self.soak("crash", *replay[1:])
        self.assertIn(f"seed 41: CRASH {lines[41]}: exit", again.stdout)

    def test_bad_arguments(self):
        for args in (["--runs", "0"], ["--ranks", "a,b"], ["--bin", "/nonexistent"]):
            r = subprocess.run([sys.executable, SOAK, *args], capture_output=True, text=True, timeout=60)
            self.assertEqual(r.returncode, 2, args)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
            self.assertTrue(r.stderr.startswith("soak.py: "), r.stderr)


if __name__ == "__main__":
    unittest.main()
