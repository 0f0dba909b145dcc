# SPDX-License-Identifier: BSD-3-Clause
"""tests/slurm/cluster.sh beside another Slurm: with Slurm's own ports (6817 for slurmctld, 6818 for slurmd) held
by someone else, as on a machine that runs its own Slurm, two test clusters started at once each come up on free
ports of their own, run a job step, and go down without stopping the other's daemons or munged. A few seconds.

Needs root and slurm-wlm + munge (bootstrap.sh), like test_slurm: skipped without the Slurm daemons, but under
CI=true a missing dependency fails instead."""
import os
import re
import shutil
import socket
import subprocess
import tempfile
import unittest

import test_slurm

SLURM_PORTS = (6817, 6818)
TIMEOUT_S = 60


def hold(port):
    """A listener on port, or None where something already listens there (the machine's own Slurm, say): either
    way the port is taken when the clusters start."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind(("0.0.0.0", port))
        s.listen()
        return s
    except OSError:
        s.close()
        return None


class BesideAnotherSlurm(unittest.TestCase):
    def setUp(self):
        missing = [b for b in test_slurm.SLURM_DAEMONS if not os.access(b, os.X_OK)]
        if missing:
            test_slurm.dependency_missing(f"{', '.join(missing)} not installed (./bootstrap.sh installs slurm-wlm)")
        self.tmp = tempfile.mkdtemp(prefix="mcmclb-slurm-ports-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        os.chmod(self.tmp, 0o755)  # each cluster's munged runs as user munge, in a folder below this one
        for s in filter(None, map(hold, SLURM_PORTS)):
            self.addCleanup(s.close)

    def cluster(self, folder, *args):
        env = dict(os.environ, MCMCLB_SLURM_DIR=folder, SLURM_CONF=os.path.join(folder, "slurm.conf"))
        return subprocess.Popen([test_slurm.CLUSTER, *args], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)

    def assert_step_runs(self, folder):
        env = dict(os.environ, SLURM_CONF=os.path.join(folder, "slurm.conf"))
        step = subprocess.run(["srun", "-n", "1", "hostname"], env=env, capture_output=True, text=True,
                              timeout=TIMEOUT_S)
        self.assertEqual((step.returncode, step.stdout), (0, socket.gethostname().split(".")[0] + "\n"), step.stderr)

    def test_two_clusters_at_once_on_free_ports(self):
        folders = [os.path.join(self.tmp, name) for name in ("a", "b")]
        starts = [self.cluster(f, "up") for f in folders]
        for f in folders:  # down whatever came up, also when a start or an assertion fails
            self.addCleanup(lambda f=f: self.cluster(f, "down").communicate(timeout=TIMEOUT_S))
        outputs = [p.communicate(timeout=TIMEOUT_S)[0] for p in starts]
        self.assertEqual([p.returncode for p in starts], [0, 0], outputs)
        ports = []
        for folder, output in zip(folders, outputs):
            with open(os.path.join(folder, "slurm.conf")) as f:
                conf = f.read()
            mine = [int(re.search(rf"(?m)^{key}=(\d+)$", conf).group(1)) for key in ("SlurmctldPort", "SlurmdPort")]
            self.assertFalse(set(mine) & set(SLURM_PORTS), output)
            ports += mine
            self.assert_step_runs(folder)
        self.assertEqual(len(set(ports)), 4, f"each daemon a port of its own: {ports}")
        # One cluster down leaves the other working: its munged and daemons are its own.
        down = self.cluster(folders[0], "down")
        output = down.communicate(timeout=TIMEOUT_S)[0]
        self.assertEqual(down.returncode, 0, output)
        self.assert_step_runs(folders[1])


if __name__ == "__main__":
    unittest.main()
