"""A real single-node Slurm (tests/slurm/cluster.sh): jobs submitted with sbatch run, srun --mpi=pmi2 starts one
MPI world with Debian's MPICH, and the cluster is a stock one (MpiDefault=none, an oversized job refused by
sbatch --test-only). This is the base the Slurm tests of mcmclb sweep build on (issue 11).

Needs root and slurm-wlm + munge (bootstrap.sh); skipped only when the Slurm daemons are not installed. The cluster
is brought up once for the class and always brought down in tearDownClass, also when a test fails."""
import csv
import os
import shutil
import subprocess
import tempfile
import time
import unittest

ROOT = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
CLUSTER = os.path.join(ROOT, "tests", "slurm", "cluster.sh")
SLURM_DIR = os.environ.get("MCMCLB_SLURM_DIR", "/tmp/mcmclb-slurm")
ENV = dict(os.environ, MCMCLB_SLURM_DIR=SLURM_DIR, SLURM_CONF=os.path.join(SLURM_DIR, "slurm.conf"))
JOB_TIMEOUT_S = 120
DONE_STATES = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED",
               "BOOT_FAIL", "DEADLINE"}


def sh(*args, timeout=120, check=True):
    r = subprocess.run(list(args), capture_output=True, text=True, timeout=timeout, env=ENV)
    if check and r.returncode != 0:
        raise AssertionError(f"{' '.join(args)} exited {r.returncode}:\n{r.stdout}{r.stderr}")
    return r


def job_fields(job_id):
    """scontrol's one-line record of a job as a dict; without accounting this is the only record of a finished job,
    and only for MinJobAge (300 s) after it ends."""
    out = sh("scontrol", "show", "job", "--oneliner", job_id).stdout
    return dict(f.split("=", 1) for f in out.split() if "=" in f)


def wait_for(job_id):
    deadline = time.monotonic() + JOB_TIMEOUT_S
    while time.monotonic() < deadline:
        fields = job_fields(job_id)
        if fields["JobState"] in DONE_STATES:
            return fields
        time.sleep(0.5)
    sh("scancel", job_id, check=False)
    raise AssertionError(f"job {job_id} did not finish within {JOB_TIMEOUT_S} s: {job_fields(job_id)}")


class Slurm(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        missing = [b for b in ("/usr/sbin/slurmctld", "/usr/sbin/slurmd") if not os.access(b, os.X_OK)]
        if missing:
            raise unittest.SkipTest(f"{', '.join(missing)} not installed (./bootstrap.sh installs slurm-wlm)")
        cls.tmp = tempfile.mkdtemp(prefix="mcmclb-slurm-test-")
        try:
            sh(CLUSTER, "up", timeout=180)
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        try:
            sh(CLUSTER, "down", timeout=120)
        finally:
            shutil.rmtree(cls.tmp, ignore_errors=True)

    def submit(self, *sbatch_args, script):
        path = os.path.join(self.tmp, f"job-{self.id().rsplit('.', 1)[-1]}.sh")
        with open(path, "w") as f:
            f.write("#!/bin/bash\nset -euo pipefail\n" + script + "\n")
        out = os.path.join(self.tmp, "slurm-%j.out")
        job_id = sh("sbatch", "--parsable", f"--chdir={self.tmp}", f"--output={out}", "--time=5",
                    *sbatch_args, path).stdout.strip().split(";")[0]
        self.assertRegex(job_id, r"^[0-9]+$")
        fields = wait_for(job_id)
        with open(os.path.join(self.tmp, f"slurm-{job_id}.out")) as f:
            output = f.read()
        return job_id, fields, output

    def test_srun_pmi2_runs_two_tasks_in_a_batch_job(self):
        job_id, fields, output = self.submit("--ntasks=2", "--job-name=mcmclb-test-hostname",
                                             script='echo "job $SLURM_JOB_ID on $SLURM_JOB_NODELIST, '
                                                    '$SLURM_NTASKS tasks"\nsrun --mpi=pmi2 -n 2 hostname')
        self.assertEqual(fields["JobState"], "COMPLETED", output)
        self.assertEqual(fields["ExitCode"], "0:0", output)
        lines = output.splitlines()
        self.assertEqual(lines[0], f"job {job_id} on {fields['NodeList']}, 2 tasks", output)
        self.assertEqual(lines[1:], [fields["NodeList"]] * 2, output)

    def test_srun_pmi2_starts_one_mpi_world(self):
        # Debian's MPICH gets its rank and size from Slurm's PMI-2: two ranks form one world of size 2, so point 0
        # (nprocs=2) runs. Under plain srun each rank would be a world of 1 and mcmclb would refuse the point.
        mcmclb = os.environ.get("MCMCLB_BIN")
        if not mcmclb:
            self.skipTest("MCMCLB_BIN is not set (ctest sets it to the built mcmclb)")
        out_dir = os.path.join(self.tmp, "pmi2")
        _, fields, output = self.submit(
            "--ntasks=2", script=f"srun --mpi=pmi2 -n 2 {os.path.realpath(mcmclb)} run "
                                 f"{ROOT}/tests/fixtures/study-small.yaml --points 0 --out {out_dir}")
        self.assertEqual(fields["JobState"], "COMPLETED", output)
        with open(os.path.join(out_dir, "runs.csv")) as f:
            runs = list(csv.DictReader(f))
        self.assertEqual([(r["nprocs"], r["valid"]) for r in runs], [("2", "true")], output)

    def test_cluster_is_stock_and_refuses_oversized_jobs(self):
        config = sh("scontrol", "show", "config").stdout
        self.assertRegex(config, r"(?m)^MpiDefault\s+= none$")
        self.assertRegex(config, r"(?m)^AccountingStorageType\s+= accounting_storage/none$")
        ok = sh("sbatch", "--test-only", "--ntasks=8", "--wrap=true", check=False)
        self.assertEqual(ok.returncode, 0, ok.stderr)
        self.assertIn("to start at", ok.stderr)
        too_big = sh("sbatch", "--test-only", "--ntasks=64", "--wrap=true", check=False)
        self.assertNotEqual(too_big.returncode, 0)
        self.assertIn("Requested node configuration is not available", too_big.stderr)


if __name__ == "__main__":
    unittest.main()
