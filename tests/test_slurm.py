# SPDX-License-Identifier: BSD-3-Clause
"""A real single-node Slurm (tests/slurm/cluster.sh): jobs submitted with sbatch run, srun --mpi=pmi2 starts one
MPI world with Debian's MPICH, and the cluster is a stock one (MpiDefault=none, an oversized job refused by
sbatch --test-only). This is the base the Slurm tests of mcmclb sweep build on.

Then mcmclb sweep --launcher slurm end to end (class Sweep): 1, 2 and 4 ranks with srun and mpiexec, every point
valid with its job id in provenance.csv, resubmits that submit nothing, scancel then resume, failures recorded from
inside a job, and studies the cluster cannot hold refused before anything is submitted.

Needs root and slurm-wlm + munge (bootstrap.sh); skipped only when the Slurm daemons are not installed, and then
only outside CI: under CI=true a missing dependency fails the module (dependency_missing). The cluster
is brought up once for the module and always brought down in tearDownModule, also when a test fails."""
import csv
import os
import re
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


SLURM_DAEMONS = ("/usr/sbin/slurmctld", "/usr/sbin/slurmd")
# job.launcher: mpiexec as the batch job runs it: the build's own mpiexec, with its flags for root as root.
MPIEXEC_IN_JOB = " ".join([os.environ.get("MCMCLB_TEST_MPIEXEC", "mpiexec")] +
                          (os.environ.get("MCMCLB_TEST_MPI_ROOT_FLAGS", "").split() if os.geteuid() == 0 else []))


def in_ci():
    return os.environ.get("CI", "").lower() in ("true", "1", "yes")


def dependency_missing(why):
    """Skips, with why, on a developer's machine; fails under CI=true, where bootstrap.sh has installed every
    dependency, so that a test missing one cannot pass CI by skipping."""
    if in_ci():
        raise AssertionError(f"{why}; CI=true: a missing dependency fails the run instead of skipping it")
    raise unittest.SkipTest(why)


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


def setUpModule():
    missing = [b for b in SLURM_DAEMONS if not os.access(b, os.X_OK)]
    if missing:
        dependency_missing(f"{', '.join(missing)} not installed (./bootstrap.sh installs slurm-wlm)")
    try:
        sh(CLUSTER, "up", timeout=180)
    except BaseException:
        tearDownModule()
        raise


def tearDownModule():
    sh(CLUSTER, "down", timeout=120)


class Slurm(unittest.TestCase):
    """The cluster itself: what mcmclb's Slurm path relies on."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="mcmclb-slurm-test-")

    @classmethod
    def tearDownClass(cls):
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
            dependency_missing("MCMCLB_BIN is not set (ctest sets it to the built mcmclb)")
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


def read_csv(path):
    with open(path) as f:
        return list(csv.DictReader(f))


class MCMCLB(unittest.TestCase):
    """What the classes that run mcmclb share: the binary, a scratch folder, and a helper per command. No test of
    its own."""

    STUDY = os.path.join(ROOT, "tests", "fixtures", "study-slurm.yaml")

    @classmethod
    def setUpClass(cls):
        if not os.environ.get("MCMCLB_BIN"):
            dependency_missing("MCMCLB_BIN is not set (ctest sets it to the built mcmclb)")
        cls.mcmclb_bin = os.path.realpath(os.environ["MCMCLB_BIN"])
        cls.tmp = tempfile.mkdtemp(prefix="mcmclb-slurm-sweep-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def mcmclb(self, *args, env=None, timeout=120):
        return subprocess.run([self.mcmclb_bin, *args], capture_output=True, text=True, timeout=timeout,
                              cwd=self.tmp, env=dict(ENV, **(env or {})))

    def sweep(self, study, out, *more, env=None, expect_rc=0):
        r = self.mcmclb("sweep", study, "--launcher", "slurm", "--out", out,
                        "--jobs-dir", os.path.join(out + "-jobs"), *more, env=env)
        self.assertEqual(r.returncode, expect_rc, r.stdout + r.stderr)
        return r, re.findall(r"^submitted \S+ as job (\d+)$", r.stdout, re.M)

    def wait_all(self, job_ids):
        return {j: wait_for(j) for j in job_ids}


class Advise(MCMCLB):
    """mcmclb advise --launcher slurm. A test of its own in CTest (slurm_advise), after the simulation build, so
    that the other Slurm tests need not wait for that build."""

    def test_advise_runs_its_simulations_as_job_steps(self):
        """mcmclb advise --launcher slurm: each round of simulations is one batch job (sbatch --wait) of --jobs
        tasks whose sweep runs every simulation as a job step; every run carries that job's id, and the advice is
        made from them as on this host. A 2-walker trace at 4 simulated ranks, none against mostwork (a few
        seconds)."""
        sim = os.environ.get("MCMCLB_SIM_BINARY", "")
        if not os.path.isfile(sim):
            dependency_missing(f"MCMCLB_SIM_BINARY '{sim}' is not built (the test smpi_build builds it)")
        trace = os.path.join(self.tmp, "two.csv")
        with open(trace, "w") as f:
            f.write("chain,item,ranks,seconds,speedup\n" + "".join(f"0,{i},1,0.01,\n" for i in range(6)) +
                    "1,0,1,0.01,\n*,,2,,1.5\n")
        out = os.path.join(self.tmp, "advise")
        r = self.mcmclb("advise", trace, "--ranks", "4", "--launcher", "slurm", "--jobs", "2", "--balancers",
                        "mostwork", "--draws", "0", "--no-race", "--sim-binary", sim, "--out", out, timeout=300)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        jobs = re.findall(r"^advise: Submitted batch job (\d+)$", r.stdout, re.M)
        self.assertEqual(len(jobs), 1, r.stdout)
        with open(os.path.join(out, "advise-study.sbatch")) as f:
            script = f.read()
        self.assertIn("#SBATCH --ntasks=2", script)
        self.assertIn("--job-steps", script)
        with open(os.path.join(out, "provenance.csv"), newline="") as f:
            rows = list(csv.DictReader(f))
        self.assertGreaterEqual(len(rows), 2)
        self.assertEqual({row["slurm_job_id"] for row in rows}, set(jobs), "every simulation ran in the job")
        with open(os.path.join(out, "advice.csv"), newline="") as f:
            advice = list(csv.DictReader(f))
        self.assertEqual({row["winner"] for row in advice} - {""}, {advice[0]["setup"]}, advice)


class Sweep(MCMCLB):
    """mcmclb sweep --launcher slurm against the local cluster: the jobs run, carry their Slurm details
    into provenance.csv, are not submitted twice, resume after scancel, and a study the cluster cannot hold is
    refused before anything is submitted."""

    def test_sweep_1_2_4_ranks_srun_and_mpiexec_then_resubmit_nothing(self):
        study = os.path.join(self.tmp, "study.yaml")
        shutil.copy(self.STUDY, study)
        outs = {"srun --mpi=pmi2": os.path.join(self.tmp, "srun"), MPIEXEC_IN_JOB: os.path.join(self.tmp, "mpiexec")}
        submitted = {}
        for launcher, out in outs.items():
            more = () if launcher.startswith("srun") else ("--set", "job.launcher=mpiexec")
            r, ids = self.sweep(study, out, *more)
            self.assertEqual(len(ids), 3, r.stdout)
            submitted[launcher] = ids
        # The jobs read the snapshot taken at submit time; an edit now (an extra T_ms renumbers the
        # points) must not change what the queued jobs run.
        with open(self.STUDY) as f:
            original = f.read()
        with open(study, "w") as f:
            f.write(original.replace("T_ms: 2", "T_ms: [1, 2]"))
        for launcher, ids in submitted.items():
            for job_id, fields in self.wait_all(ids).items():
                self.assertEqual((fields["JobState"], fields["ExitCode"]), ("COMPLETED", "0:0"), fields)
        for launcher, out in outs.items():
            runs = read_csv(os.path.join(out, "runs.csv"))
            self.assertEqual(sorted(r["nprocs"] for r in runs), ["1", "1", "2", "2", "4", "4"], launcher)
            self.assertTrue(all(r["valid"] == "true" for r in runs), runs)
            provenance = {p["run_id"]: p for p in read_csv(os.path.join(out, "provenance.csv"))}
            for run in runs:
                p = provenance[run["run_id"]]
                self.assertIn(p["slurm_job_id"], submitted[launcher])
                self.assertEqual(p["launcher"], launcher)
                self.assertNotEqual(p["slurm_nodelist"], "")
            self.assertEqual(len({provenance[r["run_id"]]["slurm_job_id"] for r in runs}), 3)
            self.assertFalse(os.path.exists(os.path.join(out, "failures.csv")))
        with open(study, "w") as f:
            f.write(original)
        for launcher, out in outs.items():
            more = () if launcher.startswith("srun") else ("--set", "job.launcher=mpiexec")
            status = self.mcmclb("status", study, "--out", out, *more)
            self.assertEqual(status.returncode, 0, status.stdout + status.stderr)
            self.assertIn("launch nprocs=4: 2 points, 2 done, 0 failed, 0 missing; no job queued", status.stdout)
            self.assertIn("6 done, 0 failed, 0 missing (complete)", status.stdout)
            r, ids = self.sweep(study, out, *more)  # nothing left, nothing submitted
            self.assertEqual(ids, [], r.stdout)
            self.assertIn("skip nprocs=4: all 2 points already done", r.stdout)
            self.assertIn("nothing to submit: all 6 points are done in ", r.stdout)
            self.assertNotIn("follow them", r.stdout, "no job was submitted, none is queued")

    def test_scancel_midway_resubmit_runs_only_the_missing_points(self):
        out = os.path.join(self.tmp, "cancel")
        slow = ("--set", "nprocs=2", "--set", "T_ms=400", "--set", "reps=3")  # 6 points of ~0.8 s each
        r, ids = self.sweep(self.STUDY, out, *slow)
        self.assertEqual(len(ids), 1, r.stdout)
        # While it is queued or running, the same sweep submits nothing.
        again, twice = self.sweep(self.STUDY, out, *slow)
        self.assertEqual(twice, [], again.stdout)
        self.assertRegex(again.stdout, rf"skip nprocs=2: job {ids[0]} is already (PENDING|RUNNING|CONFIGURING)")
        self.assertRegex(again.stdout, rf"nothing to submit: \d points done, the others are in job\(s\) {ids[0]}, "
                                       "already queued; follow them with: mcmclb status ")
        status = self.mcmclb("status", self.STUDY, "--out", out, *slow)
        self.assertRegex(status.stdout, rf"launch nprocs=2: 6 points, \d done, 0 failed, \d missing; job {ids[0]} ")
        runs_csv = os.path.join(out, "runs.csv")
        deadline = time.monotonic() + JOB_TIMEOUT_S
        while time.monotonic() < deadline and not (os.path.exists(runs_csv) and len(read_csv(runs_csv)) >= 1):
            time.sleep(0.1)
        sh("scancel", ids[0])
        wait_for(ids[0])
        first = len(read_csv(runs_csv))
        self.assertGreaterEqual(first, 1)
        self.assertLess(first, 6, "scancel came too late to test resuming")
        status = self.mcmclb("status", self.STUDY, "--out", out, *slow)
        self.assertEqual(status.returncode, 3, status.stdout + status.stderr)
        self.assertIn(f"{first} done, 0 failed, {6 - first} missing (not complete)", status.stdout)
        r, ids2 = self.sweep(self.STUDY, out, *slow)
        self.assertEqual(len(ids2), 1, r.stdout)
        self.assertIn(f"{6 - first} of 6 points to run", r.stdout)
        self.assertEqual(wait_for(ids2[0])["JobState"], "COMPLETED")
        runs = read_csv(runs_csv)
        self.assertEqual(len(runs), 6, "each point ran exactly once")
        self.assertEqual(len({(r["balancer"], r["rep"]) for r in runs}), 6)
        self.assertTrue(all(r["valid"] == "true" for r in runs))
        with open(os.path.join(out, "provenance.csv")) as f:
            job_ids = [p["slurm_job_id"] for p in csv.DictReader(f)]
        self.assertEqual(sorted(set(job_ids)), sorted({ids[0], ids2[0]}))

    def test_failed_point_in_a_job_reaches_failures_csv(self):
        out = os.path.join(self.tmp, "fail")
        one = ("--set", "nprocs=1")
        # MCMCLB_FAIL_POINT reaches the ranks through sbatch's exported environment: point 0 aborts the step.
        r, ids = self.sweep(self.STUDY, out, *one, env={"MCMCLB_FAIL_POINT": "0"})
        fields = wait_for(ids[0])
        self.assertNotEqual(fields["ExitCode"], "0:0", fields)
        failures = read_csv(os.path.join(out, "failures.csv"))
        self.assertEqual([f["point"] for f in failures], ["0", "1"])
        self.assertRegex(failures[0]["reason"], rf"^slurm job {ids[0]}: the launch exited with status [1-9]")
        status = self.mcmclb("status", self.STUDY, "--out", out, *one)
        self.assertIn("launch nprocs=1: 2 points, 0 done, 2 failed, 0 missing", status.stdout)

    def test_commbench_resubmit_keeps_its_results(self):
        study = os.path.join(self.tmp, "commbench.yaml")
        with open(study, "w") as f:
            f.write("program: commbench\nexperiment: cb\nnprocs: 2\ncommbench: {reps: 1, rep_time_s: 0.01, "
                    "methods: [create_group]}\njob: {launcher: srun}\n")
        out = os.path.join(self.tmp, "cb")
        r, ids = self.sweep(study, out)
        self.assertEqual(wait_for(ids[0])["JobState"], "COMPLETED")
        with open(os.path.join(out, f"slurm-cb-n2-{ids[0]}.out")) as f:
            output = f.read()
        self.assertIn(f"slurm_job_id: {ids[0]}\n", output)  # the benchmark's context, beside its CSV
        self.assertIn("launcher: srun --mpi=pmi2\n", output)
        result = os.path.join(out, "commbench-n2.csv")
        with open(result) as f:
            before = f.read()
        r, again = self.sweep(study, out)
        self.assertEqual(again, [], r.stdout)
        # Inside the job too: the script itself skips a finished benchmark.
        job_id = sh("sbatch", "--parsable", os.path.join(out + "-jobs", "cb-n2.sbatch")).stdout.strip()
        self.assertEqual(wait_for(job_id)["JobState"], "COMPLETED")
        with open(result) as f:
            self.assertEqual(f.read(), before)
        with open(os.path.join(out, f"slurm-cb-n2-{job_id}.out")) as f:
            self.assertIn("commbench-n2.csv already done", f.read())

    def test_moved_binary_writes_batch_scripts(self):
        # The batch template is built into the binary: a copy away from the build and source folders still
        # writes the scripts.
        with tempfile.TemporaryDirectory() as moved:
            binary = os.path.join(moved, "mcmclb-copy")
            shutil.copy(self.mcmclb_bin, binary)
            jobs = os.path.join(moved, "jobs")
            r = subprocess.run([binary, "sweep", self.STUDY, "--launcher", "slurm", "--dry-run", "--jobs-dir", jobs,
                                "--set", "nprocs=2"], capture_output=True, text=True, timeout=60, cwd=moved, env=ENV)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            with open(os.path.join(jobs, "slurm-small-n2.sbatch")) as f:
                text = f.read()
            self.assertTrue(text.startswith("#!/bin/bash\n# Generated by `mcmclb sweep "), text[:200])
            self.assertIn("#SBATCH --ntasks=2\n", text)
            self.assertIn(f"\n{binary} status ", text)

    def test_oversized_or_invalid_study_is_refused_before_submitting(self):
        out = os.path.join(self.tmp, "big")
        r, _ = self.sweep(self.STUDY, out, "--set", "nprocs=[2,64]", expect_rc=2)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn("launch nprocs=64 ", r.stderr)
        self.assertRegex(r.stderr, r"cannot run on this cluster: .*Requested node configuration is not available "
                                   r"\(sbatch --test-only; nothing was submitted\)")
        self.assertNotIn("submitted", r.stdout)
        queued = sh("squeue", "-h", "--name=slurm-small-n2,slurm-small-n64").stdout
        self.assertEqual(queued.strip(), "", "nothing was submitted")
        # sbatch's two error lines stay apart.
        r, _ = self.sweep(self.STUDY, out, "--set", "nprocs=2", "--set", "job.partition=nosuch", expect_rc=2)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn("invalid partition specified: nosuch / allocation failure: Invalid partition name", r.stderr)


def node_name():
    return sh("sinfo", "-h", "-N", "-o", "%N").stdout.split()[0]


def wait_until_running(job_id):
    deadline = time.monotonic() + JOB_TIMEOUT_S
    while time.monotonic() < deadline:
        state = job_fields(job_id)["JobState"]
        if state == "RUNNING":
            return
        if state in DONE_STATES:
            raise AssertionError(f"job {job_id} ended {state} before it was seen running")
        time.sleep(0.2)
    raise AssertionError(f"job {job_id} did not start within {JOB_TIMEOUT_S} s")


def commbench_method_table(mcmclb_bin):
    """What mcmclb-commbench measures by default, as it says itself: every method it knows (the creation-method
    table and the timing floor), from the error an unknown name gets."""
    bench = os.path.join(os.path.dirname(mcmclb_bin), "mcmclb-commbench")
    r = subprocess.run(["mpiexec", "-n", "1", bench, "--methods", "nosuch"], capture_output=True, text=True,
                       timeout=60, env=ENV)
    known = re.search(r"known: ([a-z_, ]+)\)", r.stdout + r.stderr)
    assert known, r.stdout + r.stderr
    return known.group(1).split(", ")


def commbench_sizes(nprocs):
    sizes = []
    n = 1
    while n < nprocs:
        sizes.append(n)
        n *= 2
    sizes.append(nprocs)
    if nprocs >= 4 and nprocs & (nprocs - 1) == 0:
        sizes.append(nprocs - 1)
    return sizes


class Diagnosis(MCMCLB):
    """What a user is told about a launch that did not finish: a failing job.setup line stops the job and status
    names it; a job that ran out of time is reported as such (scontrol, as this cluster keeps no accounting); a
    commbench launch's time estimate counts what commbench runs, and a commbench job killed midway resumes by
    benchmark; a drained node makes jobs wait, not a refusal."""


    def test_failing_setup_line_stops_the_job_and_status_names_it(self):
        cases = {"exit": ("exit 3", "3"), "module": ("module load nonexistent", "127")}
        submitted = {}
        for name, (line, _) in cases.items():
            out = os.path.join(self.tmp, "setup-" + name)
            r, ids = self.sweep(self.STUDY, out, "--set", "nprocs=1", "--set", f"job.setup=['{line}', 'true']")
            self.assertEqual(len(ids), 1, r.stdout)
            submitted[name] = (out, ids[0])
        for name, (line, code) in cases.items():
            out, job_id = submitted[name]
            fields = wait_for(job_id)
            self.assertEqual((fields["JobState"], fields["ExitCode"]), ("FAILED", f"{code}:0"), fields)
            self.assertFalse(os.path.exists(os.path.join(out, "runs.csv")), "the launch must not run")
            failures = read_csv(os.path.join(out, "failures.csv"))
            self.assertEqual([f["point"] for f in failures], ["0", "1"])
            for f in failures:
                self.assertEqual(f["reason"], f"slurm job {job_id}: failed in setup: '{line}' exited {code}; "
                                              "the launch did not start")
            status = self.mcmclb("status", self.STUDY, "--out", out, "--set", "nprocs=1")
            self.assertEqual(status.returncode, 3, status.stdout + status.stderr)
            self.assertIn("launch nprocs=1: 2 points, 0 done, 2 failed, 0 missing; no job queued", status.stdout)
            self.assertIn(f"  job {job_id} failed in setup: '{line}' exited {code}; the launch did not start "
                          f"(FAILED, exit code {code}:0; scontrol)", status.stdout)

    def test_job_that_hits_its_time_limit_is_reported_as_timed_out(self):
        out = os.path.join(self.tmp, "timeout")
        long = ("--set", "nprocs=1", "--set", "T_ms=600000", "--set", "reps=1", "--set", "balancer=none", "--set",
                "workload.model=uniform", "--set", "workload.items=1")  # one item of 10 min
        r, ids = self.sweep(self.STUDY, out, *long)
        self.assertEqual(len(ids), 1, r.stdout)
        wait_until_running(ids[0])
        time.sleep(3)  # into the run (a job whose end is moved to its very start fails instead)
        # Slurm's limits are whole minutes; ending the running job's time now makes slurmctld time it out at its
        # next check (within 30 s), as a limit that ran out would.
        for _ in range(10):  # refused ("Invalid time specified") within the second the job started
            if sh("scontrol", "update", f"JobId={ids[0]}", "EndTime=now", check=False).returncode == 0:
                break
            time.sleep(1)
        fields = wait_for(ids[0])
        self.assertEqual(fields["JobState"], "TIMEOUT", fields)
        status = self.mcmclb("status", self.STUDY, "--out", out, *long)
        self.assertEqual(status.returncode, 3, status.stdout + status.stderr)
        # Slurm signals the job's processes at its time limit in an order of its own: when the batch shell outlives
        # the launch (srun ended by SIGTERM, status 143), the script's closing `mcmclb status --record-failures`
        # records the point as failed, and says why; when the shell goes first, nothing is recorded and the point
        # is missing. Either way the point is not done and the job is named as timed out.
        if "0 done, 1 failed, 0 missing" in status.stdout:
            self.assertIn("launch nprocs=1: 1 points, 0 done, 1 failed, 0 missing; no job queued", status.stdout)
            self.assertRegex(status.stdout, rf"\n  job {ids[0]} hit its time limit: the launch exited with status 143 "
                                            rf"before recording it \(TIMEOUT, exit code [0-9:]+; scontrol\)")
        else:
            self.assertIn("launch nprocs=1: 1 points, 0 done, 0 failed, 1 missing; no job queued", status.stdout)
            self.assertRegex(status.stdout,
                             rf"\n  job {ids[0]} hit its time limit \(TIMEOUT, exit code [0-9:]+; scontrol\)")

    def test_commbench_time_estimate_counts_what_commbench_runs(self):
        methods = commbench_method_table(self.mcmclb_bin)
        self.assertIn("floor", methods)
        reps, rep_time_s = 5, 1
        study = os.path.join(self.tmp, "cb-estimate.yaml")
        expected = {}
        for named in ([], ["split"], ["split", "create"]):
            with open(study, "w") as f:
                listed = f", methods: {named}" if named else ""
                f.write(f"program: commbench\nexperiment: cbe\nnprocs: [2, 8, 32]\n"
                        f"commbench: {{reps: {reps}, rep_time_s: {rep_time_s}{listed}}}\n")
            jobs = os.path.join(self.tmp, f"cb-estimate-jobs-{len(named)}")
            r = self.mcmclb("sweep", study, "--launcher", "slurm", "--dry-run", "--jobs-dir", jobs)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            for nprocs in (2, 8, 32):
                with open(os.path.join(jobs, f"cbe-n{nprocs}.sbatch")) as f:
                    seconds = re.search(r"estimated \(2 x (?:(\d+) min )?(\d+) s expected", f.read())
                estimate_s = int(seconds.group(1) or 0) * 60 + int(seconds.group(2))
                benchmarks = len(named or methods) * 2  # create and free
                self.assertEqual(estimate_s, benchmarks * len(commbench_sizes(nprocs)) * reps * rep_time_s,
                                 (named, nprocs))
                expected[len(named), nprocs] = estimate_s
        self.assertLess(expected[1, 2], expected[2, 2])
        self.assertLess(expected[2, 2], expected[0, 2])
        self.assertLess(expected[0, 2], expected[0, 8])
        self.assertLess(expected[0, 8], expected[0, 32])
        # What commbench really runs at 2 ranks: every default benchmark, which the estimate counted.
        out = os.path.join(self.tmp, "cb-count.csv")
        bench = os.path.join(os.path.dirname(self.mcmclb_bin), "mcmclb-commbench")
        subprocess.run(["mpiexec", "-n", "2", bench, "--reps", "1", "--warmup", "0", "--rep-time", "0.0001",
                        "--out", out], capture_output=True, text=True, timeout=120, check=True, env=ENV)
        ran = {(row["method"], row["op"], row["group_size"]) for row in read_csv(out)}
        self.assertEqual(len(ran) * reps * rep_time_s, expected[0, 2])

    def test_commbench_killed_midway_resumes_only_the_missing_benchmarks(self):
        study = os.path.join(self.tmp, "cb-resume.yaml")
        reps, methods = 2, ["split", "create", "create_group", "range"]
        with open(study, "w") as f:
            f.write(f"program: commbench\nexperiment: cbr\nnprocs: 2\ncommbench: {{reps: {reps}, rep_time_s: 0.1, "
                    f"methods: [{', '.join(methods)}]}}\njob: {{launcher: srun}}\n")
        out = os.path.join(self.tmp, "cb-resume")
        result = os.path.join(out, "commbench-n2.csv")
        r, ids = self.sweep(study, out)
        self.assertEqual(len(ids), 1, r.stdout)
        deadline = time.monotonic() + JOB_TIMEOUT_S
        while time.monotonic() < deadline and not (os.path.exists(result) and len(read_csv(result)) >= 3 * reps):
            time.sleep(0.1)
        sh("scancel", ids[0])
        wait_for(ids[0])
        first = read_csv(result)
        total = len(methods) * 2 * len(commbench_sizes(2))
        self.assertGreaterEqual(len(first), 3 * reps)
        self.assertLess(len(first), total * reps, "scancel came too late to test resuming")
        self.assertEqual(len(first) % reps, 0, "only whole benchmarks are written")
        status = self.mcmclb("status", study, "--out", out)
        self.assertEqual(status.returncode, 3, status.stdout + status.stderr)
        self.assertIn("launch nprocs=2: 1 points, 0 done, 0 failed, 1 missing; no job queued", status.stdout)
        self.assertIn(f"\n  commbench-n2.csv lacks {total - len(first) // reps} benchmark(s), first ", status.stdout)
        self.assertIn(f"  job {ids[0]} was cancelled (CANCELLED", status.stdout)
        r, ids2 = self.sweep(study, out)
        self.assertEqual(len(ids2), 1, r.stdout)
        self.assertEqual(wait_for(ids2[0])["JobState"], "COMPLETED")
        with open(os.path.join(out, f"slurm-cbr-n2-{ids2[0]}.out")) as f:
            self.assertIn(f"{len(first) // reps} of {total} benchmarks already done, {total - len(first) // reps} to run",
                          f.read())
        rows = read_csv(result)
        self.assertEqual(len(rows), total * reps)
        keys = [(r["method"], r["op"], r["group_size"], r["rep"]) for r in rows]
        self.assertEqual(len(set(keys)), len(keys), "no repetition recorded twice")
        self.assertEqual(rows[:len(first)], first, "the first job's benchmarks are kept as they were")
        with open(result) as f:
            self.assertIn(",slurm_job_id,slurm_nodelist,", f.readline())
        self.assertEqual({r["slurm_job_id"] for r in rows[:len(first)]}, {ids[0]})
        self.assertEqual({r["slurm_job_id"] for r in rows[len(first):]}, {ids2[0]})
        self.assertEqual({r["slurm_nodelist"] for r in rows}, {node_name()})
        status = self.mcmclb("status", study, "--out", out)
        self.assertEqual(status.returncode, 0, status.stdout + status.stderr)

    def test_drained_node_makes_the_job_wait_not_a_refusal(self):
        node = node_name()
        out = os.path.join(self.tmp, "drained")
        sh("scontrol", "update", f"NodeName={node}", "State=DRAIN", "Reason=mcmclb-test")
        try:
            r, ids = self.sweep(self.STUDY, out, "--set", "nprocs=1")
            self.assertEqual(len(ids), 1, r.stdout + r.stderr)
            self.assertIn(f"note: job {ids[0]} waits: node {node} is drained (mcmclb-test) in the default partition",
                          r.stdout)
            fields = job_fields(ids[0])
            self.assertEqual(fields["JobState"], "PENDING", fields)
            # A request beyond what the partition has even with every node back is still refused.
            r, _ = self.sweep(self.STUDY, out + "-big", "--set", "nprocs=64", expect_rc=2)
            self.assertIn("cannot run on this cluster: it needs 64 CPUs and the default partition has 8 in all "
                          "(1 node(s), 1 out of service)", r.stderr)
        finally:
            sh("scancel", "--name=slurm-small-n1", check=False)  # it would start at the next scheduling pass
            sh("scontrol", "update", f"NodeName={node}", "State=RESUME")
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and sh("sinfo", "-h", "-N", "-o", "%T").stdout.strip() != "idle":
                time.sleep(0.2)


class QueueGuard(MCMCLB):
    """The queue guard: a queued job counts for the study and folder it runs (canonical folder and a hash of its
    points in --comment), only this user's jobs count, and two sweeps started at once submit once. The jobs are
    held (#SBATCH --hold, a job setting: not part of the tag), so they stay PENDING and nothing runs."""

    HELD = ("--set", "job.extra=['#SBATCH --hold']")

    def tearDown(self):
        sh("scancel", "--name=slurm-small-n2", check=False)
        sh("scancel", "--user=nobody", check=False)

    def sweep(self, out, *more, jobs_dir=None):
        r = self.mcmclb("sweep", self.STUDY, "--launcher", "slurm", "--out", out, "--jobs-dir",
                        jobs_dir or out + "-jobs", "--set", "nprocs=2", *self.HELD, *more)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        return r, re.findall(r"^submitted \S+ as job (\d+)$", r.stdout, re.M)

    def test_other_study_same_folder_symlink_and_concurrent_sweeps(self):
        out = os.path.join(self.tmp, "guard")
        r, jobs = self.sweep(out, "--set", "T_ms=3")
        self.assertEqual(len(jobs), 1, r.stdout)
        # Another study (other T_ms) into the same folder is not run by that job: it gets its own.
        r, jobs = self.sweep(out, "--set", "T_ms=4")
        self.assertEqual(len(jobs), 1, r.stdout + r.stderr)
        # The same study into the same folder, written with a trailing slash or through a link: already queued.
        os.symlink(out, out + "-link")
        for same in (out + "/", out + "-link"):
            r, jobs = self.sweep(same, "--set", "T_ms=3", jobs_dir=out + "-jobs2")
            self.assertEqual(jobs, [], r.stdout)
            self.assertIn("is already PENDING for it", r.stdout)
        # Two sweeps of one study started at once: one lock around the queue check and the submission.
        fresh = os.path.join(self.tmp, "guard-race")
        procs = [subprocess.Popen([self.mcmclb_bin, "sweep", self.STUDY, "--launcher", "slurm", "--out", fresh,
                                   "--jobs-dir", fresh + f"-jobs{i}", "--set", "nprocs=2", *self.HELD],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=self.tmp, env=ENV)
                 for i in range(2)]
        outputs = [p.communicate(timeout=120) for p in procs]
        self.assertEqual([p.returncode for p in procs], [0, 0], outputs)
        self.assertEqual(sum(len(re.findall(r"^submitted ", o, re.M)) for o, _ in outputs), 1, outputs)

    def test_estimated_time_limit_capped_where_the_partition_allows(self):
        # 2^31 - 1 ranks of hour-long items: the estimate is capped, and the header says by what (this cluster's
        # only partition has MaxTime=INFINITE, so the documented 7 days).
        study = os.path.join(self.tmp, "huge.yaml")
        with open(study, "w") as f:
            f.write("experiment: huge\nnprocs: 2147483647\nT_ms: 3600000\n"
                    "workload: {model: cyclic, scale: 1099511627776, period: 2147483647}\n")
        jobs = os.path.join(self.tmp, "huge-jobs")
        r = self.mcmclb("sweep", study, "--launcher", "slurm", "--dry-run", "--jobs-dir", jobs, timeout=30)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        with open(os.path.join(jobs, "huge-n2147483647.sbatch")) as f:
            text = f.read()
        self.assertIn("#SBATCH --time=7-00:00:00\n", text)
        self.assertIn("at most 7-00:00:00 (the documented maximum; partition compute's MaxTime is infinite)): capped",
                      text)

    def test_another_users_job_does_not_block(self):
        out = os.path.join(self.tmp, "guard-user")
        r = self.mcmclb("sweep", self.STUDY, "--launcher", "slurm", "--dry-run", "--out", out, "--jobs-dir",
                        out + "-jobs", "--set", "nprocs=2")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        with open(os.path.join(out + "-jobs", "slurm-small-n2.sbatch")) as f:
            tag = re.search(r"^#SBATCH --comment=\"?([^\"\n]*)\"?$", f.read(), re.M).group(1)
        other = sh("sbatch", "--parsable", "--hold", "--uid=nobody", "--chdir=/tmp", "--output=/dev/null",
                   "--job-name=slurm-small-n2", "--comment=" + tag, "--wrap=true", check=False)
        if other.returncode != 0:
            self.skipTest("cannot submit as another user here: " + other.stderr.strip())
        r, jobs = self.sweep(out)
        self.assertEqual(len(jobs), 1, r.stdout + r.stderr)


if __name__ == "__main__":
    unittest.main()


class Requeue(unittest.TestCase):
    """An application's walkers that keep checkpoints, run by examples/slurm/requeue.sbatch with a time limit: Slurm
    signals the tasks before the limit (--signal), the run writes its last checkpoints and the file `stopped`, the
    script requeues the job, and the requeued job continues to the answers and the trace of an uninterrupted run.
    Slurm holds a requeued job for two minutes; the test starts it at once (scontrol update StartTime=now). A
    minute or two: the full tier's (slurm_requeue), beside the other Slurm tests' lock."""

    SCRIPT = os.path.join(ROOT, "examples", "slurm", "requeue.sbatch")

    def test_a_job_signalled_before_its_limit_requeues_and_finishes(self):
        program = os.environ.get("CHECKPOINT_CHAINS")
        if not program:
            dependency_missing("CHECKPOINT_CHAINS is not set (ctest sets it to tests/checkpoint_chains)")
        tmp = tempfile.mkdtemp(prefix="mcmclb-slurm-requeue-")
        self.addCleanup(shutil.rmtree, tmp, True)
        mpiexec = os.environ.get("MCMCLB_TEST_MPIEXEC", "mpiexec")
        subprocess.run([mpiexec, "-n", "1", program, "--out", os.path.join(tmp, "ref.txt"), "--mcmclb-record",
                        os.path.join(tmp, "ref.csv")], check=True, capture_output=True, cwd=tmp)
        # About 70 s of items at 2 ranks: Slurm's first check after the time left falls under 150 s comes 30 to 60 s
        # in, so the first job stops mid-run, whatever the check's phase.
        env = dict(ENV, MCMCLB_CHECKPOINT=os.path.join(tmp, "ck"))
        job_id = subprocess.run(
            ["sbatch", "--parsable", f"--chdir={tmp}", f"--output={tmp}/slurm-%j.out", "--ntasks=2", "--time=3",
             "--signal=USR1@150", self.SCRIPT, program, "--out", "a.txt", "--item-ms", "1400", "--mcmclb-record",
             "t.csv", "--mcmclb-checkpoint-every-s", "5"],
            check=True, capture_output=True, text=True, env=env).stdout.strip().split(";")[0]
        deadline = time.monotonic() + 480
        fields = job_fields(job_id)
        pending_since = {}  # restart -> when the requeued job was first seen pending
        while fields["JobState"] not in DONE_STATES or fields["JobState"] == "PREEMPTED":
            restarts = int(fields.get("Restarts", "0"))
            if fields["JobState"] == "PENDING" and restarts > 0:
                # A few seconds for the stopped step to be cleaned up: a start at once met its PMI state.
                if time.monotonic() - pending_since.setdefault(restarts, time.monotonic()) > 5:
                    sh("scontrol", "update", f"JobId={job_id}", "StartTime=now", check=False)
            if time.monotonic() > deadline:
                sh("scancel", job_id, check=False)
                self.fail(f"job {job_id} did not finish: {fields}")
            time.sleep(1)
            fields = job_fields(job_id)
        with open(os.path.join(tmp, f"slurm-{job_id}.out")) as f:
            output = f.read()
        self.assertEqual(fields["JobState"], "COMPLETED", output)
        self.assertGreaterEqual(int(fields["Restarts"]), 1, output)
        self.assertIn("requeue.sbatch: stopped before the limit with its checkpoints; requeued", output)
        self.assertIn("mcmclb: stopped by signal 10", output)

        def answers(name):
            with open(os.path.join(tmp, name)) as f:
                return [tuple(l.split()[:2]) for l in f]

        def rows(name):
            with open(os.path.join(tmp, name)) as f:
                return sorted(tuple(l.split(",")[:2]) for l in f if l[:1].isdigit() and l.split(",")[1])

        self.assertEqual(answers("a.txt"), answers("ref.txt"), output)
        self.assertEqual(rows("t.csv"), rows("ref.csv"), "every item once in the trace")
        self.assertFalse(os.path.exists(os.path.join(tmp, "ck", "stopped")))
