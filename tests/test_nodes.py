# SPDX-License-Identifier: BSD-3-Clause
"""Runs across two nodes, emulated on this machine by MPICH's Hydra (its fork bootstrap starts one job as several
nodes: -hosts a:2,b:2 gives two shared-memory nodes of two ranks, as MPI_Comm_split_type sees them). The nodes share
this machine's cores, which the occupancy counts per host. Checked: what provenance.csv records per node, groups by
node and a group that spans the boundary, Algorithm 1 and range merging across it, a sweep over two nodes and what
report.py says of them.

Needs the build's mpiexec to be Hydra (MPICH and its derivatives): tests/CMakeLists.txt registers it for an MPICH
build only. MCMCLB_BIN: the mcmclb to run; MCMCLB_TEST_MPIEXEC: its launcher."""
import csv
import os
import subprocess
import sys
import tempfile
import unittest

MCMCLB = os.path.realpath(os.environ["MCMCLB_BIN"])
MPIEXEC = os.environ["MCMCLB_TEST_MPIEXEC"]
ROOT = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
CPUS = len(os.sched_getaffinity(0))
HOST = os.uname().nodename


def read_csv(path):
    with open(path) as f:
        return list(csv.DictReader(f))


STUDY = """experiment: nodes
T_ms: 4
workload: {model: cyclic, scale: 2, period: 4}
work: {mode: sleep}
reps: 1
"""


class TwoNodes(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.dir = self.tmp.name

    def study(self, extra, name="study.yaml"):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(STUDY + extra)
        return path

    def run_on_nodes(self, hosts, nprocs, study, out):
        r = subprocess.run([MPIEXEC, "-bootstrap", "fork", "-hosts", hosts, "-n", str(nprocs), MCMCLB, "run", study,
                            "--out", out], capture_output=True, text=True, timeout=120, cwd=self.dir)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        return read_csv(os.path.join(out, "runs.csv")), read_csv(os.path.join(out, "provenance.csv"))

    def test_provenance_per_node_and_merges_across_the_boundary(self):
        """async by Algorithm 1 (intercomm) and by range, from groups of 3 + 1 ranks (the first spans both nodes):
        valid, merged across the node boundary, and each run's provenance names both nodes with their ranks."""
        study = self.study("balancer: [async]\nmethod: [intercomm, range]\ngroups: {sizes: [3, 1]}\n")
        out = os.path.join(self.dir, "out")
        runs, prov = self.run_on_nodes("a:2,b:2", 4, study, out)
        self.assertEqual(sorted(r["method"] for r in runs), ["intercomm", "range"])
        for r in runs:
            self.assertEqual(r["valid"], "true", r)
            self.assertGreater(float(r["regroups_avg"]), 0, r)
        for p in prov:
            self.assertEqual(p["nodes"], "2")
            self.assertEqual(p["node_layout"], f"{HOST}[0-1]/{CPUS} {HOST}[2-3]/{CPUS}")
            # Both nodes are this machine: four ranks share its cores.
            self.assertEqual(p["ranks_per_node"], "4")
            self.assertEqual(p["cores_available"], str(CPUS))
            self.assertEqual(p["oversubscribed"], "true" if 4 > CPUS else "false")
            self.assertEqual(p["wait_policy"], "polite" if 4 > CPUS else "spin")
        events = read_csv(os.path.join(out, "events.csv"))
        for method in ("intercomm", "range"):
            run_id = next(r["run_id"] for r in runs if r["method"] == method)
            mine = [e for e in events if e["run_id"] == run_id]
            self.assertIn(("initial", "0", "2"), {(e["kind"], e["group_first"], e["group_last"]) for e in mine})
            merges = [(e["group_first"], e["group_last"]) for e in mine if e["kind"] == "merge"]
            self.assertIn(("0", "3"), merges, f"{method}: no merge over both nodes")

    def test_groups_by_node_follow_the_emulated_nodes(self):
        """groups.by: node makes one initial group per node: [0-2] and [3] with -hosts a:3,b:1."""
        study = self.study("balancer: [none]\nmethod: [intercomm]\ngroups: {by: node}\n")
        out = os.path.join(self.dir, "out")
        runs, prov = self.run_on_nodes("a:3,b:1", 4, study, out)
        self.assertEqual(runs[0]["valid"], "true")
        self.assertEqual(prov[0]["node_layout"], f"{HOST}[0-2]/{CPUS} {HOST}[3]/{CPUS}")
        first = {(e["group_first"], e["group_last"]) for e in read_csv(os.path.join(out, "events.csv"))
                 if float(e["t_s"]) == 0}
        self.assertEqual(first, {("0", "2"), ("3", "3")})

    def test_sweep_over_two_nodes_and_the_report(self):
        """A local sweep whose launches Hydra spreads over two nodes (HYDRA_BOOTSTRAP, HYDRA_HOST_FILE), and the
        report: the nodes of each rank count, and the host that held more ranks than cores marked."""
        hosts = os.path.join(self.dir, "hosts")
        with open(hosts, "w") as f:
            f.write("a:1\nb:1\n")
        study = self.study("G: 1\nnprocs: [2, 4]\nbalancer: [none, async]\nmethod: [intercomm]\n")
        out = os.path.join(self.dir, "sweep")
        env = dict(os.environ, HYDRA_BOOTSTRAP="fork", HYDRA_HOST_FILE=hosts)
        r = subprocess.run([MCMCLB, "sweep", study, "--launcher", "local", "--out", out], capture_output=True,
                           text=True, timeout=300, cwd=self.dir, env=env)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        prov = read_csv(os.path.join(out, "provenance.csv"))
        runs = {row["run_id"]: row for row in read_csv(os.path.join(out, "runs.csv"))}
        self.assertEqual(len(prov), 4)
        for p in prov:
            self.assertEqual(p["nodes"], "2")
            expected = {"2": f"{HOST}[0]/{CPUS} {HOST}[1]/{CPUS}", "4": f"{HOST}[0,2]/{CPUS} {HOST}[1,3]/{CPUS}"}
            self.assertEqual(p["node_layout"], expected[runs[p["run_id"]]["nprocs"]])
        report = subprocess.run([sys.executable, os.path.join(ROOT, "plots", "report.py"), out], capture_output=True,
                                text=True, timeout=300)
        self.assertEqual(report.returncode, 0, report.stderr)
        text = " ".join(report.stdout.split())
        self.assertIn(f"Nodes: P = 2 ran on 2 nodes, HOST[RANKS]/CPUS: {HOST}[0]/{CPUS} {HOST}[1]/{CPUS}", text)
        crowded = f"(more ranks than cores on nodes 1, 2 of 2 ({HOST}, ranks 0,2,1,3): 4 ranks on {CPUS} CPUs)"
        if 4 > CPUS:
            self.assertIn(f"Nodes: P = 4 ran on 2 nodes, HOST[RANKS]/CPUS: {HOST}[0,2]/{CPUS} {HOST}[1,3]/{CPUS} "
                          + crowded, text)
        if 2 <= CPUS:
            self.assertIn(f"{HOST}[1]/{CPUS} (a core per rank on every node)", text)


if __name__ == "__main__":
    unittest.main()
