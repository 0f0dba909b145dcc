# SPDX-License-Identifier: BSD-3-Clause
"""mcmclb run under mpiexec: bad input gives one line on rank 0 only and exit 2 on every rank, without a hang;
a valid run writes runs.csv, ranks.csv and events.csv with their stable headers, appending on a second run."""
import csv
import os
import re
import shlex
import subprocess
import tempfile
import unittest

MCMCLB = os.environ["MCMCLB_BIN"]
COMMBENCH = os.path.join(os.path.dirname(MCMCLB), "mcmclb-commbench")  # built beside mcmclb
RANKS = "3"

RUNS_HEADER = ("run_id,experiment,nprocs,G,groups,T_ms,workload,workload_scale,workload_period,workload_items,"
               "workload_min,workload_max,workload_median,workload_sigma,workload_seed,work_mode,jitter_pct,work_seed,"
               "atoms,temperature,move,max_step,moves_per_item,balancer,"
               "interval,method,rep,time_s,ideal_s,baseline_s,regroups_avg,regroups_std,regroups_min,regroups_max,"
               "valid,violations,mpi_library,git_commit,host,utc_start,backend,platform,finished,chains_per_group,"
               "migrated_avg,wait,calibration_s,model_compute,model_reduce,workload_file,workload_map,workload_scaling,"
               "workload_extrapolate,workload_file_fnv1a64,workload_speedups,placement,workload_plan_file,"
               "workload_plan_fnv1a64")
RANKS_HEADER = ("run_id,rank,elapsed_s,work_s,polling_s,waiting_s,regroup_s,other_s,regroups,items_worked,"
                "final_group_first,final_group_last,state_bytes,state_s,chains_migrated,migrated_bytes")
EVENTS_HEADER = "run_id,t_s,kind,groups_before,group_first,group_last,group_size,chain,items_left,method,create_s"


def mcmclb(*args, ranks=RANKS):
    return subprocess.run(["mpiexec", "-n", ranks, MCMCLB, *args], capture_output=True, text=True, timeout=120)


class BadInput(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.good = os.path.join(self.dir.name, "good.yaml")
        with open(self.good, "w") as f:
            f.write("experiment: t\nT_ms: 1\nworkload: {model: uniform, items: 2}\n")

    def tearDown(self):
        self.dir.cleanup()

    def write(self, text):
        path = os.path.join(self.dir.name, "bad.yaml")
        with open(path, "w") as f:
            f.write(text)
        return path

    def assert_input_error(self, r, fragment):
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        lines = [l for l in r.stderr.splitlines() if l.strip()]
        self.assertEqual(len(lines), 1, "printed once, on one line:\n" + r.stderr)
        self.assertIn(fragment, lines[0])
        self.assertTrue(lines[0].startswith("mcmclb: "), lines[0])
        self.assertEqual(r.stdout, "")

    def test_missing_file(self):
        self.assert_input_error(mcmclb("run", "/nonexistent.yaml"), "/nonexistent.yaml: cannot read the experiment file")

    def test_not_yaml(self):
        self.assert_input_error(mcmclb("run", self.write("a: [1\n")), "not valid YAML")

    def test_unknown_key(self):
        self.assert_input_error(mcmclb("run", self.write("Tms: 3\n")), "unknown key 'Tms' (allowed: experiment, ")

    def test_wrong_type(self):
        self.assert_input_error(mcmclb("run", self.write("G: two\n")), "key G: expected an integer in [1, ")

    def test_out_of_range(self):
        self.assert_input_error(mcmclb("run", self.write("work: {jitter_pct: 120}\n")),
                                "key work.jitter_pct: expected a number in [0, 99], got 120")

    def test_group_size_does_not_divide(self):
        self.assert_input_error(mcmclb("run", self.good, "--set", "G=2"), "key G: G=2 does not divide nprocs=3")

    def test_walker_groups_that_do_not_fit(self):
        self.assert_input_error(mcmclb("run", self.write("groups: {sizes: [1, 1]}\n")),
                                "key groups.sizes: the sizes add up to 2 but nprocs=3")
        # By node is resolved where the ranks run (one node here: 3 ranks), before any run starts.
        r = mcmclb("run", self.write("groups: {by: node, size: 2}\n"), "--out", os.path.join(self.dir.name, "o"))
        self.assert_input_error(r, "key groups.size: 2 does not divide the 3 ranks of the node holding ranks 0-2")
        self.assertFalse(os.path.exists(os.path.join(self.dir.name, "o", "runs.csv")))

    def test_results_of_another_version_are_refused_before_any_run(self):
        out = os.path.join(self.dir.name, "old")
        os.makedirs(out)
        old = RUNS_HEADER.replace("groups,", "").replace("atoms,temperature,move,max_step,moves_per_item,", "")
        with open(os.path.join(out, "runs.csv"), "w") as f:
            f.write(old + "\n")
        for extra in ([], ["--resume"]):
            self.assert_input_error(mcmclb("run", self.good, "--out", out, *extra),
                                    "runs.csv: written by another version of mcmclb")
        with open(os.path.join(out, "runs.csv")) as f:
            self.assertEqual(f.read(), old + "\n")

    def test_set_validated_like_the_file(self):
        self.assert_input_error(mcmclb("run", self.good, "--set", "balancer=[async, magic]"),
                                "key balancer: unknown balancer 'magic' (allowed: none, collective, async, lookahead, mostwork, steal, stealrandom, stealmerge)")
        self.assert_input_error(mcmclb("run", self.good, "--set", "nope=1"), "--set: unknown key 'nope'")

    def test_help(self):
        r = mcmclb("--help")
        self.assertEqual(r.returncode, 0)
        self.assertEqual(r.stdout.count("usage: "), 1, r.stdout)

    def test_bad_command_line(self):
        self.assert_input_error(mcmclb("walk", self.good), "unknown command 'walk' (known: run, plan, sweep, status, compare, predict, advise, "
                                "calibrate; "
                                "see --help)")
        self.assert_input_error(mcmclb("run", self.good, "--fast"), "unknown flag --fast")


class Help(unittest.TestCase):
    """`mcmclb --help` and `mcmclb COMMAND --help` list every flag the parsers take: each flag named in a parser's
    source (a string literal "--name") must be in its command's help and in `mcmclb --help`, so a flag added to a
    parser cannot be left out of the help. No MPI but for run's (about 0.5 s in all)."""

    SOURCES = {"run": ["mcmclb.cpp"], "plan sweep status": ["sweep.cpp", "status.cpp"], "compare": ["compare.cpp"],
               "predict": ["predict.cpp"], "advise": ["advise.cpp", "advise_flags.hpp"],
               "calibrate": ["calibrate.cpp"]}
    APPS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "apps")

    def flags_in(self, files):
        found = set()
        for name in files:
            with open(os.path.join(self.APPS, name)) as f:
                found |= set(re.findall(r'"(--[a-z][a-z-]*)[="]', f.read()))
        return found - {"--help", "--version"}

    @staticmethod
    def named(text, flag):
        return re.search(r"(?<![\w-])" + re.escape(flag) + r"(?![\w-])", text) is not None

    def test_every_parsed_flag_is_in_the_help(self):
        whole = subprocess.run([MCMCLB, "--help"], capture_output=True, text=True, timeout=60)
        self.assertEqual(whole.returncode, 0, whole.stderr)
        for commands, files in self.SOURCES.items():
            flags = self.flags_in(files)
            self.assertTrue(flags, files)
            helps = ""
            for command in commands.split():
                run = ["mpiexec", "-n", "1", MCMCLB] if command == "run" else [MCMCLB]
                r = subprocess.run([*run, command, "--help"], capture_output=True, text=True, timeout=60)
                self.assertEqual((r.returncode, r.stderr), (0, ""), command)
                self.assertRegex(r.stdout, r"^usage: (mpiexec -n P )?mcmclb " + command + " ", command)
                helps += r.stdout
            for flag in sorted(flags):
                with self.subTest(commands=commands, flag=flag):
                    self.assertTrue(self.named(helps, flag), f"{flag} not in `mcmclb {commands} --help`")
                    self.assertTrue(self.named(whole.stdout, flag), f"{flag} not in `mcmclb --help`")

    def test_advise_help_says_what_each_flag_does(self):
        r = subprocess.run([MCMCLB, "advise", "--help"], capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        flags, rules = r.stdout.split("flags:\n", 1)[1].split("the rule:\n", 1)
        described = [line.split()[0] for line in flags.splitlines()]
        self.assertEqual(sorted(described), sorted(self.flags_in(["advise.cpp", "advise_flags.hpp"])))
        # The decision rule and the tolerance's, each written once (mcmclb/advice.hpp): the guide quotes the words
        # --help prints.
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        with open(os.path.join(root, "docs", "guide", "your-workload.md")) as f:
            guide = " ".join(f.read().replace("> ", " ").split())
        for rule in rules.split("the tolerance:\n", 1):
            rule = " ".join(rule.split())
            self.assertLessEqual(rule.count(". "), 2, "at most three sentences: " + rule)
            self.assertIn(rule, guide)


class GoodRun(unittest.TestCase):
    def test_outputs_and_append(self):
        with tempfile.TemporaryDirectory() as d:
            cfg = os.path.join(d, "c.yaml")
            with open(cfg, "w") as f:
                f.write("experiment: t\nT_ms: 2\nworkload: {model: cyclic, scale: 2}\n"
                        "balancer: [none, async, collective]\ninterval: [1]\nreps: 1\n")
            out = os.path.join(d, "out")
            for expected_runs in (3, 6):
                r = mcmclb("run", cfg, "--out", out)
                self.assertEqual(r.returncode, 0, r.stderr)
                with open(os.path.join(out, "runs.csv")) as f:
                    self.assertEqual(f.readline().strip(), RUNS_HEADER)
                with open(os.path.join(out, "ranks.csv")) as f:
                    self.assertEqual(f.readline().strip(), RANKS_HEADER)
                with open(os.path.join(out, "events.csv")) as f:
                    self.assertEqual(f.readline().strip(), EVENTS_HEADER)
                with open(os.path.join(out, "runs.csv")) as f:
                    runs = list(csv.DictReader(f))
                with open(os.path.join(out, "ranks.csv")) as f:
                    ranks = list(csv.DictReader(f))
                self.assertEqual(len(runs), expected_runs)
                self.assertEqual(len(ranks), expected_runs * int(RANKS))
                for row in runs:
                    self.assertEqual(row["valid"], "true", row)
                    self.assertEqual(row["nprocs"], RANKS)
                    self.assertTrue(row["mpi_library"].startswith("MPICH"), row["mpi_library"])
                    self.assertGreaterEqual(float(row["time_s"]), float(row["ideal_s"]) * 0.9)
                self.assertEqual({r["run_id"] for r in ranks}, {r["run_id"] for r in runs})


class Version(unittest.TestCase):
    ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

    def test_version_is_the_release_citation_and_cmake_name(self):
        """mcmclb --version prints the release CMake's project() holds (tests/test_release.py holds the changelog
        and CITATION.cff to it), with the commit the build was made from: the one a run's provenance records
        (runs.csv git_commit), read from a run of the same binary."""
        with open(os.path.join(self.ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
            project = re.search(r"^project\(mcmclb VERSION (\S+) ", f.read(), re.M)
        self.assertIsNotNone(project, "no project(mcmclb VERSION ...) in CMakeLists.txt")
        r = subprocess.run([MCMCLB, "--version"], capture_output=True, text=True, timeout=60)
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        printed = re.fullmatch(r"mcmclb (\S+) \(commit (\S+)\)\n", r.stdout)
        self.assertIsNotNone(printed, r.stdout)
        self.assertEqual(printed[1], project[1])
        with tempfile.TemporaryDirectory() as d:
            cfg = os.path.join(d, "c.yaml")
            with open(cfg, "w") as f:
                f.write("experiment: t\nT_ms: 1\nworkload: {model: uniform, items: 2}\n")
            r = mcmclb("run", cfg, "--out", os.path.join(d, "out"), ranks="2")
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(os.path.join(d, "out", "runs.csv")) as f:
                self.assertEqual({row["git_commit"] for row in csv.DictReader(f)}, {printed[2]})


class ComputeRun(unittest.TestCase):
    def test_chains_and_traces_agree_across_balancers(self):
        with tempfile.TemporaryDirectory() as d:
            cfg = os.path.join(d, "c.yaml")
            with open(cfg, "w") as f:
                f.write("experiment: lj\ngroups: {sizes: [1, 2]}\nworkload: {model: cyclic, scale: 3}\n"
                        "work: {mode: compute, moves_per_item: 5, trace: true}\n"
                        "balancer: [none, async, collective]\ninterval: [1]\n")
            out = os.path.join(d, "out")
            r = mcmclb("run", cfg, "--out", out)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(os.path.join(out, "chains.csv")) as f:
                chains = list(csv.DictReader(f))
            with open(os.path.join(out, "traces.csv")) as f:
                traces = list(csv.DictReader(f))
            self.assertEqual(len(chains), 3 * 2)  # three runs, two groups
            self.assertTrue(all(c["matches_ref"] == "true" for c in chains), chains)
            by_run = {}
            for c in chains:
                by_run.setdefault(c["run_id"], []).append((c["chain"], c["energy_q32"], c["accepted"]))
            self.assertEqual(len(set(map(tuple, by_run.values()))), 1, by_run)
            per_run = {}
            for t in traces:
                per_run.setdefault(t["run_id"], []).append((t["chain"], t["item"], t["energy_q32"], t["accepted"]))
            self.assertEqual(len(per_run), 3)
            self.assertEqual(len({tuple(v) for v in per_run.values()}), 1)
            with open(os.path.join(out, "runs.csv")) as f:
                runs = list(csv.DictReader(f))
            self.assertTrue(all(row["groups"] == "sizes:1,2" and row["work_mode"] == "compute" for row in runs))
            # Regrouping traffic (compute mode): the walker-state bytes the ranks received add up to chains.csv's.
            with open(os.path.join(out, "ranks.csv")) as f:
                ranks = list(csv.DictReader(f))
            for run in runs:
                run_chains = [c for c in chains if c["run_id"] == run["run_id"]]
                run_ranks = [x for x in ranks if x["run_id"] == run["run_id"]]
                sent = sum(int(c["state_bytes"]) for c in run_chains)
                self.assertEqual(sum(int(x["state_bytes"]) for x in run_ranks), sent, run["balancer"])
                self.assertEqual(sent > 0, any(int(c["merges"]) > 0 for c in run_chains), run["balancer"])
                self.assertTrue(all(float(x["state_s"]) <= float(x["regroup_s"]) for x in run_ranks), run_ranks)
            self.assertTrue(any(int(x["state_bytes"]) > 0 for x in ranks), "no run moved a walker")


COMMBENCH_HEADER = ("method,op,nprocs,group_size,rep,iterations,time_us,iter_min_us,iter_max_us,timer,mpi_library,"
                    "host,git_commit,utc_start,groups,backend,platform,platform_fnv1a64,simgrid_cfg,iter_median_us,"
                    "slurm_job_id,slurm_nodelist,"
                    "reps,median_us,median_ci_low_us,median_ci_high_us,simgrid_version")


def assert_iteration_stats(test, rows):
    """Every commbench row: iter_median_us (robust against a rare preemption) lies in
    [iter_min_us, iter_max_us] of the same repetition, as does the mean time_us."""
    test.assertTrue(rows)
    for row in rows:
        lo, hi = float(row["iter_min_us"]), float(row["iter_max_us"])
        test.assertLessEqual(lo, float(row["iter_median_us"]), row)
        test.assertLessEqual(float(row["iter_median_us"]), hi, row)
        test.assertLessEqual(lo, float(row["time_us"]) * (1 + 1e-6), row)
        test.assertLessEqual(float(row["time_us"]), hi * (1 + 1e-6), row)


class CommbenchCsv(unittest.TestCase):
    def test_header_and_iteration_median(self):
        """The CSV's header (iter_median_us appended last, so positional readers of older files keep working) and,
        on every row, the median iteration within the repetition's min and max."""
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "cb.csv")
            r = subprocess.run(["mpiexec", "-n", RANKS, COMMBENCH, "--methods", "range,split,floor", "--sizes", "1,3",
                                "--reps", "2", "--rep-time", "0.01", "--out", out],
                               capture_output=True, text=True, timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out) as f:
                self.assertEqual(f.readline().strip(), COMMBENCH_HEADER)
                f.seek(0)
                rows = list(csv.DictReader(f))
            self.assertEqual(len(rows), 3 * 2 * 2 * 2, "methods x ops x sizes x reps")
            self.assertEqual({(row["slurm_job_id"], row["slurm_nodelist"]) for row in rows}, {("", "")},
                             "outside Slurm the job columns are empty")
            # The timing floor (an empty timed window) is measured like a method, at every op and size, and shown
            # beside the methods in the summary.
            self.assertEqual({(row["op"], row["group_size"]) for row in rows if row["method"] == "floor"},
                             {(op, size) for op in ("create", "free") for size in ("1", "3")})
            self.assertIn("floor", next(line for line in r.stdout.splitlines() if line.strip().startswith("size")))
            assert_iteration_stats(self, rows)
            self.assertTrue(all(int(row["iterations"]) >= 3 for row in rows), rows)
            # The summary has the median-iteration block after the mean one, for each op.
            blocks = [line for line in r.stdout.splitlines() if "cost per method" in line]
            self.assertEqual(len(blocks), 4, r.stdout)
            self.assertIn("mean iteration", blocks[0])
            self.assertIn("median iteration", blocks[1])


class CommbenchResume(unittest.TestCase):
    def test_resume_keeps_whole_benchmarks_of_an_older_file_and_drops_partial_ones(self):
        """--resume yes over a file of the previous version (20 columns): the benchmark it holds complete is kept
        (upgraded, the Slurm columns empty), one with a repetition missing and a torn last line are dropped and
        measured again, so every repetition appears once; a file that is no commbench CSV is one line, exit 2."""
        old_header = ",".join(COMMBENCH_HEADER.split(",")[:20])

        def row(op, rep):
            return (f"split,{op},{RANKS},1,{rep},3,9.5,9,10,MPI_Wtime max over ranks,MPICH,old-host,abc,"
                    f"2026-01-01T00:00:00Z,,mpi,,,,9.5")
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "cb.csv")
            with open(out, "w") as f:  # create complete, free only rep 0, then a torn line
                f.write("\n".join([old_header, row("create", 0), row("create", 1), row("free", 0)]) + "\n" +
                        row("free", 1)[:30])
            r = subprocess.run(["mpiexec", "-n", RANKS, COMMBENCH, "--methods", "split", "--sizes", "1", "--reps", "2",
                                "--rep-time", "0.01", "--resume", "yes", "--out", out],
                               capture_output=True, text=True, timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("1 of 2 benchmarks already done, 1 to run", r.stdout)
            with open(out) as f:
                self.assertEqual(f.readline().strip(), COMMBENCH_HEADER)
                f.seek(0)
                rows = list(csv.DictReader(f))
            self.assertEqual(sorted((x["op"], x["rep"]) for x in rows),
                             [("create", "0"), ("create", "1"), ("free", "0"), ("free", "1")])
            self.assertEqual([x["host"] for x in rows if x["op"] == "create"], ["old-host"] * 2, "kept as it was")
            self.assertTrue(all(x["host"] != "old-host" for x in rows if x["op"] == "free"), "measured again")
            self.assertEqual({x["slurm_job_id"] for x in rows}, {""})
            # The summary of the repetitions: on the measured benchmark's rows; the kept rows of the older file
            # have none.
            self.assertEqual({x["reps"] for x in rows if x["op"] == "free"}, {"2"})
            self.assertEqual({x["reps"] for x in rows if x["op"] == "create"}, {""})
            # Everything done: nothing runs and the file is left as it is.
            with open(out, "rb") as f:
                before = f.read()
            r = subprocess.run(["mpiexec", "-n", RANKS, COMMBENCH, "--methods", "split", "--sizes", "1", "--reps", "2",
                                "--resume", "yes", "--out", out], capture_output=True, text=True, timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn(f"{out} already done: nothing to run", r.stdout)
            with open(out, "rb") as f:
                self.assertEqual(f.read(), before)
            with open(out, "w") as f:
                f.write("a,b,c\n1,2,3\n")
            r = subprocess.run(["mpiexec", "-n", RANKS, COMMBENCH, "--methods", "split", "--sizes", "1", "--reps", "2",
                                "--resume", "yes", "--out", out], capture_output=True, text=True, timeout=120)
            self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
            self.assertIn(f"{out}: its header is not one of a commbench CSV's", r.stderr)


class CommbenchGroups(unittest.TestCase):
    def test_layout_from_a_file(self):
        with tempfile.TemporaryDirectory() as d:
            layout = os.path.join(d, "g.yaml")
            with open(layout, "w") as f:
                f.write("groups: {sizes: [1, 2]}\n")
            out = os.path.join(d, "cb.csv")
            r = subprocess.run(["mpiexec", "-n", RANKS, COMMBENCH, "--groups", layout, "--methods",
                                "create_group,split", "--reps", "1", "--rep-time", "0.01", "--out", out],
                               capture_output=True, text=True, timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out) as f:
                rows = list(csv.DictReader(f))
            self.assertEqual({(row["method"], row["op"]) for row in rows},
                             {(m, op) for m in ("create_group", "split") for op in ("create", "free")})
            self.assertTrue(all(row["groups"] == "sizes:1,2" and row["group_size"] == "2" for row in rows), rows)
            assert_iteration_stats(self, rows)
            with open(layout, "w") as f:
                f.write("groups: {sizes: [1, 1]}\n")
            r = subprocess.run(["mpiexec", "-n", RANKS, COMMBENCH, "--groups", layout], capture_output=True, text=True,
                               timeout=120)
            self.assertEqual(r.returncode, 2, r.stderr)
            lines = [line for line in r.stderr.splitlines() if line.strip()]
            self.assertEqual(len(lines), 1, r.stderr)
            self.assertIn("key groups.sizes: the sizes add up to 2 but nprocs=3", lines[0])

    def test_groups_of_k_creates_every_small_group_at_once(self):
        """--groups-of 3 at 4 ranks: groups 0-2 and 3, each rank in MPI_Comm_create over WORLD with its own
        group (the many-small-groups pattern), recorded as that layout; with --groups too it is refused."""
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "cb.csv")
            r = subprocess.run(["mpiexec", "-n", "4", COMMBENCH, "--groups-of", "3", "--methods", "create", "--reps",
                                "1",
                                "--warmup", "0", "--rep-time", "0.01", "--out", out],
                               capture_output=True, text=True, timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out) as f:
                rows = list(csv.DictReader(f))
            self.assertEqual({(row["method"], row["op"], row["groups"], row["group_size"]) for row in rows},
                             {("create", op, "sizes:3,1", "3") for op in ("create", "free")})
            layout = os.path.join(d, "g.yaml")
            with open(layout, "w") as f:
                f.write("groups: {sizes: [2, 2]}\n")
            r = subprocess.run(["mpiexec", "-n", "2", COMMBENCH, "--groups-of", "2", "--groups", layout],
                               capture_output=True, text=True, timeout=120)
            self.assertEqual((r.returncode, r.stderr.strip()),
                             (2, "mcmclb-commbench: --groups-of: cannot be combined with --groups "
                                 "(allowed: one layout)"))


class CommbenchLiveCommunicators(unittest.TestCase):
    """--live-communicators CAP: per method, communicators over every rank kept alive until the library refuses
    one (its own words recorded) or CAP are live; never a crash or a hang."""

    def live(self, ranks, cap, *more):
        d = tempfile.TemporaryDirectory()
        self.addCleanup(d.cleanup)
        out = os.path.join(d.name, "live.csv")
        r = subprocess.run(["mpiexec", "-n", ranks, COMMBENCH, "--live-communicators", str(cap), "--out", out, *more],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        with open(out) as f:
            return r, list(csv.DictReader(f))

    def test_each_method_ends_refused_in_the_library_s_words_or_at_the_cap(self):
        # 3000 is above MPICH's 2048 context ids, so there every method that takes one must be refused.
        r, rows = self.live("2", 3000)
        # Every method this build supports (its --help line), the timing floor aside, which creates nothing.
        helped = subprocess.run([COMMBENCH, "--help"], capture_output=True, text=True, timeout=60).stdout
        supported = next(line for line in helped.splitlines() if line.startswith("methods: "))[9:].split(", ")
        self.assertEqual([row["method"] for row in rows], [m for m in supported if m != "floor"])
        for row in rows:
            live, cap = int(row["live"]), int(row["cap"])
            self.assertEqual((row["nprocs"], row["group_size"], cap), ("2", "2", 3000), row)
            if row["refused"] == "true":
                self.assertLess(live, cap, row)
                self.assertTrue(row["error"], row)
            else:
                self.assertEqual((row["refused"], live, row["error"]), ("false", cap, ""), row)
        by_method = {row["method"]: row for row in rows}
        self.assertEqual((by_method["range"]["refused"], by_method["range"]["live"]), ("false", "3000"))
        if rows[0]["mpi_library"].startswith("MPICH"):
            for method in ("create", "split", "create_group", "intercomm"):
                row = by_method[method]
                self.assertEqual(row["refused"], "true", row)
                self.assertIn("Too many communicators", row["error"], row)
                self.assertTrue(1000 < int(row["live"]) <= 2048, row)
            # MPICH 4.0.2's MPI_Comm_create_from_group answers MPI_SUCCESS with MPI_COMM_NULL once the context
            # ids have run out: a refusal all the same, not a live communicator.
            if "from_group" in by_method:
                row = by_method["from_group"]
                self.assertEqual(row["refused"], "true", row)
                self.assertIn("MPI_COMM_NULL without an error", row["error"], row)
                self.assertTrue(1000 < int(row["live"]) <= 2048, row)
        self.assertIn("Live communicators over all 2 ranks per method", r.stdout)

    def test_three_ranks_reach_a_small_cap_together(self):
        _, rows = self.live("3", 8, "--methods", "intercomm,create")
        self.assertEqual([(row["method"], row["live"], row["refused"]) for row in rows],
                         [("intercomm", "8", "false"), ("create", "8", "false")])

    def test_a_flag_that_shapes_a_timing_is_refused(self):
        r = subprocess.run(["mpiexec", "-n", "2", COMMBENCH, "--live-communicators", "10", "--reps", "3"],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual((r.returncode, r.stdout, r.stderr.strip()),
                         (2, "", "mcmclb-commbench: --reps: not with --live-communicators "
                                 "(allowed with it: --methods, --out)"))


if __name__ == "__main__":
    unittest.main()


FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")


def copy_tables(src, out, names):
    for name in names:
        with open(os.path.join(src, name)) as f, open(os.path.join(out, name), "w") as g:
            g.write(f.read())


class OlderVersionFolder(unittest.TestCase):
    """runs.csv gained columns (walker groups, compute mode, simulation back end) and ranks.csv those of
    compute mode's regrouping traffic; a folder written by mcmclb 0.1 is upgraded in place (rows kept,
    new columns as today's runs write them, or empty where they were not recorded) and resumes as before."""

    def resumes_with_nothing_to_run(self, out):
        r = mcmclb("run", os.path.join(FIXTURES, "study-small.yaml"), "--resume", "--out", out, ranks="2")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("4 of 4 points already done", r.stdout)

    def test_v01_folder_is_upgraded_and_resumes(self):
        src = FIXTURES
        with tempfile.TemporaryDirectory() as out:
            copy_tables(os.path.join(src, "results-v0.1"), out, ("runs.csv", "ranks.csv", "events.csv"))
            self.resumes_with_nothing_to_run(out)
            with open(os.path.join(out, "runs.csv")) as f:
                lines = f.read().splitlines()
            self.assertEqual(lines[0], RUNS_HEADER)
            self.assertEqual(len(lines), 8, "every 0.1 row kept, none added")
            with open(os.path.join(src, "results-small", "runs.csv")) as f:
                today = f.read().splitlines()
            self.assertEqual(lines[1], today[1], "a 0.1 row upgrades to what today's binary writes for that run")
            for row in csv.DictReader(lines):
                self.assertEqual(row["backend"], "mpi")
                self.assertEqual(row["finished"], "retire" if row["balancer"] == "async" else "")
            # ranks.csv too (compute mode added state_bytes, state_s): upgraded by column name, the new columns empty
            # (not recorded then), every other field as it was; without the upgrade the folder is refused.
            with open(os.path.join(src, "results-v0.1", "ranks.csv")) as f:
                old_ranks = list(csv.DictReader(f))
            with open(os.path.join(out, "ranks.csv")) as f:
                self.assertEqual(f.readline().strip(), RANKS_HEADER)
                f.seek(0)
                new_ranks = list(csv.DictReader(f))
            self.assertEqual(len(new_ranks), len(old_ranks), "every 0.1 rank row kept, none added")
            for old, new in zip(old_ranks, new_ranks):
                self.assertEqual((new["state_bytes"], new["state_s"]), ("", ""))
                self.assertEqual((new["chains_migrated"], new["migrated_bytes"]), ("0", "0"))  # nothing migrated then
                added = ("state_bytes", "state_s", "chains_migrated", "migrated_bytes")
                self.assertEqual({k: v for k, v in new.items() if k not in added}, old)

    def resumes_without_the_last_columns(self, dropped):
        """results-small's runs.csv with its last len(dropped) columns cut off (never quoted) is read as an older
        folder: upgraded, nothing rerun, and afterwards exactly today's runs.csv."""
        with tempfile.TemporaryDirectory() as out:
            with open(os.path.join(FIXTURES, "results-small", "runs.csv")) as f:
                today = f.read().splitlines()
            older = [line.rsplit(",", len(dropped))[0] for line in today]
            self.assertEqual(",".join([older[0]] + dropped), RUNS_HEADER)
            with open(os.path.join(out, "runs.csv"), "w") as g:
                g.write("\n".join(older) + "\n")
            copy_tables(os.path.join(FIXTURES, "results-small"), out, ("ranks.csv", "events.csv"))
            self.resumes_with_nothing_to_run(out)
            with open(os.path.join(out, "runs.csv")) as f:
                self.assertEqual(f.read().splitlines(), today)

    def test_folder_without_the_finished_rule_is_upgraded_and_resumes(self):
        # The finished rule became a runs.csv column: a folder written before it resumes as it was, its async runs
        # being those of the rule async always had (retire), and nothing is rerun.
        self.resumes_without_the_last_columns(["finished", "chains_per_group", "migrated_avg", "wait", "calibration_s",
                                               "model_compute", "model_reduce", "workload_file",
                                               "workload_map", "workload_scaling", "workload_extrapolate",
                                               "workload_file_fnv1a64", "workload_speedups", "placement", "workload_plan_file",
                                               "workload_plan_fnv1a64"])

    def test_folder_without_chains_per_group_is_upgraded_and_resumes(self):
        # chains_per_group and migrated_avg became runs.csv columns: a folder written before them resumes as it was
        # (one chain per group, nothing migrated), and nothing is rerun.
        self.resumes_without_the_last_columns(["chains_per_group", "migrated_avg", "wait", "calibration_s",
                                               "model_compute", "model_reduce", "workload_file",
                                               "workload_map", "workload_scaling", "workload_extrapolate",
                                               "workload_file_fnv1a64", "workload_speedups", "placement", "workload_plan_file",
                                               "workload_plan_fnv1a64"])

    def test_folder_without_the_wait_policy_is_upgraded_and_resumes(self):
        # wait and calibration_s became runs.csv columns: a folder written before them resumes as it was (its runs
        # are those of the default, auto; no calibration recorded), and nothing is rerun.
        self.resumes_without_the_last_columns(["wait", "calibration_s", "model_compute", "model_reduce", "workload_file",
                                               "workload_map", "workload_scaling", "workload_extrapolate",
                                               "workload_file_fnv1a64", "workload_speedups", "placement", "workload_plan_file",
                                               "workload_plan_fnv1a64"])

    def test_folder_without_model_errors_is_upgraded_and_resumes(self):
        # model_compute and model_reduce became runs.csv columns: a folder written before them resumes as it was (its
        # models predicted as they measured), and nothing is rerun.
        self.resumes_without_the_last_columns(["model_compute", "model_reduce", "workload_file",
                                               "workload_map", "workload_scaling", "workload_extrapolate",
                                               "workload_file_fnv1a64", "workload_speedups", "placement", "workload_plan_file",
                                               "workload_plan_fnv1a64"])

    def test_folder_without_the_trace_content_is_upgraded_and_resumes(self):
        # workload_extrapolate and workload_file_fnv1a64 became runs.csv columns: a folder written before them
        # resumes as it was (its rows replayed no trace), and nothing is rerun.
        self.resumes_without_the_last_columns(["workload_extrapolate", "workload_file_fnv1a64", "workload_speedups", "placement", "workload_plan_file",
                                               "workload_plan_fnv1a64"])

    def test_folder_without_the_repetitions_end_is_upgraded_and_resumes(self):
        # workload_speedups became a runs.csv column: a folder written before it resumes as it was (a replay took the
        # median of a size's repetitions; other rows leave it empty), and nothing is rerun.
        self.resumes_without_the_last_columns(["workload_speedups", "placement", "workload_plan_file",
                                               "workload_plan_fnv1a64"])

    def test_folder_without_placement_is_upgraded_and_resumes(self):
        # placement became a runs.csv column: a folder written before it resumes as it was (its hosts filled in
        # order, the default, which the column leaves empty), and nothing is rerun.
        self.resumes_without_the_last_columns(["placement", "workload_plan_file", "workload_plan_fnv1a64"])

    def test_folder_without_the_plan_file_is_upgraded_and_resumes(self):
        # workload_plan_file and its hash became runs.csv columns: a folder written before them resumes as it was
        # (its replays planned from the trace they replayed, which the empty column means), and nothing is rerun.
        self.resumes_without_the_last_columns(["workload_plan_file", "workload_plan_fnv1a64"])


class Predict(unittest.TestCase):
    """mcmclb predict: the model's table in docs/explanation/merge-pays.md is generated from predict.csv, which must be
    what the command the guide shows prints now from the committed calibration.csv (so a change to the model that
    moves a prediction fails here, not in a review)."""

    ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

    def test_the_guide_s_command_prints_the_committed_predict_csv(self):
        with open(os.path.join(self.ROOT, "docs", "explanation", "merge-pays.md"), encoding="utf-8") as f:
            text = f.read().replace("\\\n", " ")
        command = next(line for line in text.splitlines() if line.startswith("build/mcmclb predict "))
        args, _, target = command.partition(" > ")
        r = subprocess.run([MCMCLB] + shlex.split(args)[1:], capture_output=True, text=True, timeout=60,
                           cwd=self.ROOT)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(self.ROOT, target.strip()), encoding="utf-8") as f:
            self.assertEqual(r.stdout, f.read(), f"{target.strip()} is not what the guide's command prints now")

    def test_bad_input_is_one_line_and_exit_2(self):
        calibration = os.path.join(self.ROOT, "docs", "data", "merge-pays", "sim-all-atom", "calibration.csv")
        good = ["--run", "x", "--move", "all", "--moves", "5", "--atoms", "13", "--sizes", "1"]
        for args, words in (([calibration] + good, "no rows of run 'x'"),
                            ([calibration] + good[:3] + ["some"] + good[4:], "--move: 'some'"),
                            ([calibration] + good[:9] + ["0"], "--sizes: '0'"),
                            (["no-such.csv"] + good, "no-such.csv: cannot be read")):
            with self.subTest(args=args):
                r = subprocess.run([MCMCLB, "predict", *args], capture_output=True, text=True, timeout=60)
                self.assertEqual(r.returncode, 2)
                self.assertEqual(r.stdout, "")
                self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
                self.assertIn(words, r.stderr)
