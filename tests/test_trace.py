# SPDX-License-Identifier: BSD-3-Clause
"""Trace files (docs/reference/columns.md, Trace files; docs/guide/your-workload.md): every bad trace is refused as
every bad input is, with one line naming the file, the row and the column, exit 2, rank 0 only, before any work
and with nothing written (tests/test_inputs.py's assertions, at 2 ranks); a compute-mode recording replays; pays
plans with the scaling asked; and the shipped example replays at real P = 2 under the balancers of its study. The
bad files are refused by `mcmclb plan` (the same parse, no MPI), three of them also by `mcmclb run` at 2 ranks; a
launch takes well under a second, the example's about 1 s. Needs MCMCLB_BIN and MCMCLB_COMMBENCH (ctest sets
them)."""
import csv
import math
import os
import re
import shutil
import subprocess
import sys
import unittest

from test_inputs import FAST_S, ROOT, InputCase, snapshot

EXAMPLE_STUDY = os.path.join(ROOT, "configs", "trace-lj-replay.yaml")
EXAMPLE_TRACE = os.path.join(ROOT, "configs", "trace-lj.csv")
GOOD = "chain,item,ranks,seconds,speedup\n0,0,1,0.001,\n0,1,1,0.002,\n1,0,2,0.001,\n*,,2,,1.5\n"


def read_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


class TraceCase(InputCase):
    def study(self, trace_text=None, extra=""):
        """A replay study of the trace text given (written to t.csv) at 2 ranks; returns its path."""
        if trace_text is not None:
            with open(self.path("t.csv"), "w") as f:
                f.write(trace_text)
        path = self.path("s.yaml")
        with open(path, "w") as f:
            f.write("experiment: s\nnprocs: 2\nworkload: {model: trace, file: t.csv}\nwork: {mode: sleep}\n"
                    "balancer: [none, async]\n" + extra)
        return path

    def fake_sim(self):
        """A file the simulation build's check takes for mcmclb-sim (it names SimGrid); a dry run never starts it."""
        sim = self.path("mcmclb-sim")
        with open(sim, "w") as f:
            f.write("#!/bin/sh\n# NEEDED libsimgrid.so.3\n")
        os.chmod(sim, 0o755)
        return sim

    def refused(self, trace_text, *fragments, extra="", launched=False):
        """The study refused with one line holding each fragment: by `mcmclb plan` (the same parse, no MPI: fast),
        or, launched, by `mcmclb run` at 2 ranks, where it must also end on every rank and write nothing."""
        study = self.study(trace_text, extra)
        r = self.mcmclb("run", study, ranks="2") if launched else self.mcmclb("plan", study)
        self.assert_one_line_error(r, *fragments, within_s=FAST_S)
        self.assertEqual(snapshot(self.path("results")), {}, "nothing written")


class BadTrace(TraceCase):
    """One test per kind of bad trace file: the line names what is wrong and where."""

    def test_missing_file(self):
        r = self.mcmclb("run", self.study(None), ranks="2")
        self.assert_one_line_error(r, "workload.file", "t.csv does not exist", within_s=FAST_S)

    def test_not_a_regular_file(self):
        os.mkdir(self.path("t.csv"))
        r = self.mcmclb("run", self.study(None), ranks="2")
        self.assert_one_line_error(r, "workload.file", "t.csv is a folder, not a regular file", within_s=FAST_S)

    def test_fifo_and_device_refused_by_every_command(self):
        """A FIFO opened for reading blocks until a writer comes: every command that reads the study (run on every
        rank, sweep, sweep --dry-run, plan) refuses it, and a device, from what they are, within seconds."""
        study = self.study(None)
        os.mkfifo(self.path("t.csv"))
        commands = {"run": (["run", study], "2"), "sweep": (["sweep", study, "--launcher", "local"], None),
                    "sweep --dry-run": (["sweep", study, "--launcher", "local", "--dry-run"], None),
                    "plan": (["plan", study], None),
                    "advise": (["advise", "t.csv", "--ranks", "64", "--out", self.path("advice")], None),
                    "advise STUDY": (["advise", study, "--ranks", "64", "--out", self.path("advice")], None)}
        for name, (args, ranks) in commands.items():
            with self.subTest(command=name):
                r = self.mcmclb(*args, ranks=ranks)
                self.assert_one_line_error(r, "workload.file", "t.csv is a FIFO, not a regular file", within_s=FAST_S)
        with open(study) as f:
            text = f.read().replace("file: t.csv", "file: /dev/null")
        with open(study, "w") as f:
            f.write(text)
        self.assert_one_line_error(self.mcmclb("plan", study), "/dev/null is a device, not a regular file",
                                   within_s=FAST_S)

    def test_advise_refuses_bad_input_before_anything(self):
        """mcmclb advise: each bad flag or trace is one line and exit 2, with no output folder made."""
        with open(self.path("t.csv"), "w") as f:
            f.write(GOOD)
        out = self.path("advice")
        # --prediction: the simulation's error measured on the platform (plots/prediction_check.py), read before any
        # work; a file of another platform, or not of that form, is refused.
        platform = os.path.join(ROOT, "configs", "platforms", "fattree.xml")
        with open(self.path("bad.csv"), "w") as f:
            f.write("setup,ratio\nnone,1\n")
        with open(self.path("plan.csv"), "w") as f:  # the first walker's first item alone
            f.write(GOOD.splitlines()[0] + "\n" + GOOD.splitlines()[1] + "\n")
        with open(self.path("other.csv"), "w") as f:
            f.write("check,setup,nprocs,n,real_median_s,real_low_s,real_high_s,sim_s,ratio,ratio_low,ratio_high,"
                    "busy_pct,platform_fnv1a64,git_commit\n"
                    "model,none,2,6,0.1,0.1,0.1,0.1,1,1,1,,0123456789abcdef,x\n")

        def fnv1a64(path):  # as mcmclb names a file's bytes (fnv1a64_hex)
            h = 0xcbf29ce484222325
            with open(path, "rb") as f:
                for byte in f.read():
                    h = ((h ^ byte) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
            return f"{h:016x}"
        # This very trace's check, from a host 40 % busy: refused, as --check refuses such a host.
        with open(self.path("busy.csv"), "w") as f:
            f.write("check,setup,nprocs,n,real_median_s,real_low_s,real_high_s,sim_s,ratio,ratio_low,ratio_high,"
                    f"busy_pct,platform_fnv1a64,git_commit,trace_fnv1a64\nreplay,none,2,6,0.1,0.1,0.1,0.1,1,1,1,40,"
                    f"{fnv1a64(platform)},x,{fnv1a64(self.path('t.csv'))}\n")
        for args, fragment in [((), "--ranks: required"), (("--ranks", "1"), "--ranks: '1' is not a rank count"),
                               (("--ranks", "64", "--prediction", self.path("other.csv")),
                                "--prediction: only with --platform"),
                               (("--ranks", "64", "--platform", platform, "--prediction", self.path("none")),
                                "cannot read the prediction file"),
                               (("--ranks", "64", "--platform", platform, "--prediction", self.path("bad.csv")),
                                "bad.csv: not a prediction.csv"),
                               (("--ranks", "64", "--platform", platform, "--prediction", self.path("other.csv")),
                                "other.csv: row 2: measured on the platform whose fnv1a64 is 0123456789abcdef"),
                               (("--ranks", "64", "--platform", platform, "--prediction", self.path("busy.csv")),
                                "busy.csv: row 2: measured on a host 40 % busy, more than the 10 % --check-busy"),
                               (("--ranks", "64", "--jobs", "0"), "--jobs: '0'"),
                               (("--ranks", "64", "--balancers", "none,foo"), "unknown balancer 'foo'"),
                               (("--ranks", "64", "--bogus"), "unknown flag --bogus"),
                               (("--ranks", "0"), "--ranks: '0' is not a rank count"),
                               (("--ranks", "64", "--sim-binary", self.path("none")), "--sim-binary"),
                               (("--ranks", "64", "--launcher", "pbs"), "--launcher: 'pbs' is not allowed"),
                               (("--ranks", "64", "--partition", "a;b"), "--partition: 'a;b' is not a Slurm name"),
                               (("--ranks", "64", "--partition", "p"), "only with --launcher slurm"),
                               (("--ranks", "64", "--launcher", "slurm", "--check"), "--check: not with --launcher"),
                               (("--ranks", "16,64", "--print-run-flags"),
                                "--print-run-flags: only with one rank count (allowed: --ranks P)"),
                               (("--ranks", "64", "--print-run-flags", "--dry-run"),
                                "--print-run-flags: not with --dry-run"),
                               (("--ranks", "64", "--sim-binary", os.environ["MCMCLB_BIN"], "--smpi-flags", self.path("none")),
                                "cannot read the smpirun flags file"),
                               # --plan-from: a trace of the same walkers and items, checked as workload.plan_file.
                               (("--ranks", "64", "--plan-from", self.path("none")), "--plan-from: trace file"),
                               (("--ranks", "64", "--plan-from", self.path("plan.csv")),
                                "--plan-from: " + self.path("plan.csv") + " holds walkers 0 to 0, workload.file 0 to 1"),
                               (("--ranks", "64", "--plan-from", self.path("other.csv")),
                                "--plan-from: trace file " + self.path("other.csv"))]:
            with self.subTest(args=args):
                r = self.mcmclb("advise", "t.csv", *args, "--out", out)
                self.assert_one_line_error(r, fragment, within_s=FAST_S)
                self.assertFalse(os.path.exists(out), "nothing written")

    def test_advise_refuses_a_trace_without_work(self):
        """A trace whose items all cost 0 s has nothing to balance: refused in one line, not ranked as zeros."""
        with open(self.path("t.csv"), "w") as f:
            f.write("chain,item,ranks,seconds,speedup\n0,0,1,0,\n1,0,1,0,\n1,1,1,0,\n")
        out = self.path("advice")
        r = self.mcmclb("advise", "t.csv", "--ranks", "64", "--out", out)
        self.assert_one_line_error(r, "t.csv: no work to balance", within_s=FAST_S)
        self.assertFalse(os.path.exists(out), "nothing written")

    def test_advise_on_a_cut_short_trace_assumes_no_unmeasured_speedup(self):
        """A trace whose recording did not end has no speed-ups: with --incomplete, advise asks only what needs
        none (one rank per walker, set-ups that never merge), refuses the rest in one line, and says the trace was
        cut short (a dry run: the plan is made and printed, nothing simulated)."""
        with open(self.path("t.csv"), "w") as f:
            f.write("# incomplete: the run recording this trace has not ended\nchain,item,ranks,seconds,speedup\n" +
                    "".join(f"{c},{i},1,0.01,\n" for c, n in enumerate((30, 12, 6)) for i in range(n)))
        sim = self.path("mcmclb-sim")  # the check reads that the file names SimGrid; a dry run never starts it
        with open(sim, "w") as f:
            f.write("#!/bin/sh\n# NEEDED libsimgrid.so.3\n")
        os.chmod(sim, 0o755)
        out = self.path("advice")
        common = ("--incomplete", "--dry-run", "--sim-binary", sim, "--out", out)
        r = self.mcmclb("advise", "t.csv", "--ranks", "3,8", *common)
        self.assert_one_line_error(r, "--ranks: 8 ranks give the 3 walkers of t.csv groups of up to 3 ranks, but it "
                                   "was cut short", "(allowed with --incomplete: --ranks up to 3, or --copies)",
                                   within_s=FAST_S)
        r = self.mcmclb("advise", "t.csv", "--ranks", "3", *common)
        self.assertEqual(r.returncode, 0, r.stderr)
        said = r.stdout.decode()
        self.assertIn("advise: warning: The trace was cut short: its recording did not end", said)
        self.assertIn("it measured no speed-up above 1 rank, so no set-up here works a group past 1 rank", said)
        self.assertIn("varies no speed-up past what the trace measured", said)
        self.assertIn("they merge groups, here up to 3 ranks, past the 1 rank the cut-short trace", said)
        self.assertNotIn("perfect scaling", said)
        self.assertFalse(os.path.exists(out), "a dry run writes nothing")
        # Copies in groups of one rank need no speed-up either, at any rank count.
        r = self.mcmclb("advise", "t.csv", "--ranks", "64", "--copies", *common)
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_a_speedup_above_its_ranks_is_set_aside_in_one_line(self):
        """2.5 at 2 ranks is more than two ranks can give: advise (a dry run) and a replay at 2 ranks each set it
        aside in one line naming the file, the row, the walker, the size and the value (a run on rank 0 alone), and
        advise says how many; a trace that declares superlinear speed-ups keeps it."""
        with open(self.path("t.csv"), "w") as f:
            f.write(GOOD + "*,,2,,2.5\n")
        said = "trace file t.csv row 6: walker *'s speed-up 2.5 at 2 ranks is above 2"
        common = ("--dry-run", "--sim-binary", self.fake_sim(), "--out", self.path("advice"))
        r = self.mcmclb("advise", "t.csv", "--ranks", "64", *common)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = [l for l in r.stdout.decode().split("\n") if said in l]
        self.assertEqual(len(lines), 1, r.stdout.decode())
        self.assertTrue(lines[0].startswith("advise: warning: " + said), lines[0])
        self.assertIn("skips 1 of the 2 speed-ups the trace gives: above their ranks", r.stdout.decode())
        r = self.mcmclb("run", self.study(), "--out", self.path("results"), ranks="2")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual([l for l in r.stderr.decode().split("\n") if said in l],
                         ["mcmclb: warning: " + said + ", more than 2 ranks can give: set aside as a measurement "
                          "error (allowed: at most the ranks, or any speed-up after a line '# superlinear: WHY' above "
                          "the header)"], r.stderr.decode())
        with open(self.path("t.csv"), "w") as f:
            f.write("# superlinear: the walkers' data fit the caches of two ranks\n" + GOOD + "*,,2,,2.5\n")
        r = self.mcmclb("advise", "t.csv", "--ranks", "64", *common)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("above 2", r.stdout.decode())
        self.assertNotIn("above their ranks", r.stdout.decode())

    def test_advise_repeats_the_recordings_drift_line(self):
        """A recording that measured its host drifting says so in a `# drift:` line; advise repeats it in one
        warning, so a user who never opens the trace learns it. A trace without one gets no such line."""
        drift = ("drift: the 1-rank cost of the same walkers changed -14 % from repetitions 0-2 to repetitions 3-5, "
                 "more than the pairs' own spread (±6.4 %, their median absolute deviation)")
        for head, said in (("# " + drift + "\n", True), ("", False)):
            with open(self.path("t.csv"), "w") as f:
                f.write(head + GOOD)
            r = self.mcmclb("advise", "t.csv", "--ranks", "64", "--dry-run", "--sim-binary", self.fake_sim(),
                            "--out", self.path("advice"))
            self.assertEqual(r.returncode, 0, r.stderr)
            lines = [l for l in r.stdout.decode().split("\n") if "the recording says" in l]
            self.assertEqual(lines, ["advise: warning: t.csv: the recording says: " + drift[len("drift: "):]]
                             if said else [],
                             r.stdout.decode())

    def test_advise_admits_perfect_scaling_within_the_verdicts_tolerance(self):
        """Perfect scaling past the measured sizes is a scenario where the best efficiency measured is within the
        tolerance the verdict is judged by: the program's own runs, 10 and 12 s, spread 20 %, so 1.8 at 2 ranks
        (90 %) admits it, though the 5 % assumed alone would not."""
        with open(self.path("t.csv"), "w") as f:
            f.write("# run: ranks=2 groups=2 balancer=none seconds=10\n"
                    "# earlier run: ranks=2 groups=2 balancer=none seconds=12\n" +
                    GOOD.replace("*,,2,,1.5", "*,,2,,1.8"))
        r = self.mcmclb("advise", "t.csv", "--ranks", "64", "--dry-run", "--sim-binary", self.fake_sim(), "--out",
                        self.path("advice"))
        self.assertEqual(r.returncode, 0, r.stderr)
        said = r.stdout.decode()
        self.assertIn("the slowest 20.0 % over the fastest", said)
        self.assertIn("in proportion to the ranks (perfect)", said)
        self.assertNotIn("perfect scaling past the measured sizes", said)

    def test_advise_takes_a_trace_whose_name_has_a_space(self):
        """A file name with a space is a legal file: advise names its study after it without refusing the name
        (the error that follows is the missing simulation build this test gives, not the name)."""
        with open(self.path("with space.csv"), "w") as f:
            f.write(GOOD)
        r = self.mcmclb("advise", "with space.csv", "--ranks", "64", "--out", self.path("advice"), "--sim-binary",
                        self.path("no-sim"))
        self.assert_one_line_error(r, "--sim-binary", within_s=FAST_S)
        self.assertNotIn(b"experiment", r.stderr)

    def test_advise_check_refused_on_a_busy_host(self):
        """advise --check on a host busier than 10 % is refused in one line before anything runs or is written:
        its real runs would time the other programs too. The line says what the user may do: check when the host is
        quieter, accept the load with a --check-busy above it (at a cost it names), or go without --check. The busy
        host is a CPU hog on every core, for the 1 s the check measures."""
        with open(self.path("t.csv"), "w") as f:
            f.write(GOOD)
        hogs = [subprocess.Popen(["yes"], stdout=subprocess.DEVNULL,
                                 preexec_fn=lambda c=cpu: os.sched_setaffinity(0, {c}))
                for cpu in sorted(os.sched_getaffinity(0))]
        try:
            r = self.mcmclb("advise", "t.csv", "--ranks", "4", "--check", "--sim-binary", self.fake_sim(), "--out",
                            self.path("advice"))
        finally:
            for hog in hogs:
                hog.kill()
                hog.wait()
        self.assert_one_line_error(r, "--check: the host is", "% busy", "more than the 10 % a check allows",
                                   "advise --check when the host is at most 10 % busy",
                                   "to accept this load, whose cost is that the errors then count the other programs' "
                                   "load as the simulation's", "or advise without --check, the tolerance assumed",
                                   within_s=FAST_S)
        # The way forward a user can take as it is: a --check-busy above the load measured, or 100, which takes any.
        said = re.search(r"the host is (\d+) % busy .* --check-busy (\d+) to accept", r.stderr.decode())
        self.assertTrue(said, r.stderr)
        self.assertTrue(int(said.group(1)) < int(said.group(2)) <= 100 or said.group(2) == "100", r.stderr)
        self.assertFalse(os.path.exists(self.path("advice")), "nothing written")
        # --check-busy is checked as a percentage; at 100 no load refuses the check (a dry run: nothing written).
        r = self.mcmclb("advise", "t.csv", "--ranks", "4", "--check", "--check-busy", "101", "--out", self.path("a"))
        self.assert_one_line_error(r, "--check-busy: '101' is not a percentage in [0, 100]", within_s=FAST_S)
        r = self.mcmclb("advise", "t.csv", "--ranks", "4", "--check", "--check-busy", "100", "--dry-run",
                        "--sim-binary", self.fake_sim(), "--out", self.path("advice"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn(b"warning: --check: the host is", r.stdout)

    def test_advise_estimate_counts_the_search_between_the_rank_counts(self):
        """Asked at two rank counts, advise may search the counts between them after the race, up to 3 counts with
        none and each set-up in every scenario it was asked in: the estimate at the start counts them, each set-up at
        its own points moved to the counts searched; asked at one count, there is no search to count. Without racing
        the figure is the one the scenarios' ideals foresee: with the search where an ideal at the smaller count lies
        above the larger's, else without it (a dry run: nothing run or written)."""
        items = "chain,item,ranks,seconds,speedup\n" + "".join(f"{c},{i},1,0.01,\n" for c in range(4) for i in range(5))
        def said(ranks, *flags, speedup="1.8"):
            with open(self.path("t.csv"), "w") as f:
                f.write(items + f"*,,2,,{speedup}\n")
            r = self.mcmclb("advise", "t.csv", "--ranks", ranks, *flags, "--balancers", "none,steal", "--dry-run",
                            "--sim-binary", self.fake_sim(), "--out", self.path("advice"))
            self.assertEqual(r.returncode, 0, r.stderr)
            return " ".join(r.stdout.decode().split())
        two = said("4,16")
        found = re.search(r"the search between 4 and 16 ranks \(up to (\d+) simulations", two)
        self.assertTrue(found, two)
        # 3 counts (10, 13, 14: toward 16) x (none + steal) x each of none's scenarios at 16 ranks.
        nones = int(re.search(r"none in every scenario first \((\d+) simulation", two).group(1)) // 2  # each count
        self.assertEqual(int(found.group(1)), 3 * 2 * nones, two)
        self.assertNotIn("the search between", said("16"))
        # Without racing every set-up runs. With a speed-up of 1.8 at 2 ranks, 16 ranks' ideal lies far below 4's:
        # the fewest ranks within the tolerance may lie above 4, so the search may run, and the figure counts it.
        searched = said("4,16", "--no-race")
        self.assertRegex(searched, r"in all about [0-9 mins]+ here if it searches between the rank counts, as it may "
                                   r"\(under .*, 4 ranks' ideal lies [0-9.]+ % above 16 ranks'\), [0-9 mins]+ if not, up "
                                   r"to [0-9 mins]+ if it bisects toward 16")
        # With no speed-up, more ranks lower no ideal: the figure leaves the search out, and bounds it beside.
        self.assertRegex(said("4,16", "--no-race", speedup="1"),
                         r"in all about [0-9 mins]+ here, up to [0-9 mins]+ if it searches between the rank counts "
                         r"\(no scenario's ideal is lower at more ranks\)")
        self.assertFalse(os.path.exists(self.path("advice")), "a dry run writes nothing")

    def test_advise_estimate_counts_the_checks_real_runs(self):
        """advise's estimate, printed before it starts, counts --check's real runs: each takes what the trace's run
        line recorded where it ran in the check's layout, for each set-up checked, --check-reps times; and with one
        run line, advise prints the command that measures the program's own spread. Two run lines of one layout
        give that spread (a dry run: nothing run or written)."""
        cores = len(os.sched_getaffinity(0))
        run = f"# run: ranks={cores} groups={min(4, cores)} balancer=none seconds=30\n"
        items = "chain,item,ranks,seconds,speedup\n" + "".join(f"{c},{i},1,0.01,\n" for c in range(4) for i in range(5))
        with open(self.path("t.csv"), "w") as f:
            f.write(run + items)
        args = ("advise", "t.csv", "--ranks", "4", "--balancers", "none,steal", "--check-reps", "6", "--dry-run",
                "--sim-binary", self.fake_sim(), "--out", self.path("advice"))
        r = self.mcmclb(*args)
        self.assertEqual(r.returncode, 0, r.stderr)
        said = " ".join(r.stdout.decode().split())
        found = re.search(r"--check's (\d+) real runs \((\d+) set-ups at most x 6 repetitions x about 30 s each", said)
        self.assertTrue(found, said)
        runs, setups = int(found.group(1)), int(found.group(2))
        self.assertGreaterEqual(setups, 2, "none and steal at least")
        self.assertEqual(runs, 6 * setups)
        total = re.search(r"in all about (?:(\d+) min )?(\d+) s", said)
        self.assertTrue(total, said)
        self.assertGreaterEqual(60 * int(total.group(1) or 0) + int(total.group(2)), runs * 30)
        self.assertIn("your program's own run-to-run spread is not measured", said)
        self.assertIn("MCMCLB_RECORD=t.csv mpiexec -n " + str(cores), said)
        with open(self.path("t.csv"), "w") as f:
            f.write(run + run.replace("# run:", "# earlier run:").replace("=30", "=31.2") + items)
        said = " ".join(self.mcmclb(*args).stdout.decode().split())
        self.assertIn(f"your program's own runs at P = {cores}, n = 2: 30 to 31.2 s, the slowest 4.0 % over the "
                      "fastest", said)
        self.assertNotIn("spread is not measured", said)
        # The check takes the two leading balancers of each rank count, known only after the race's first round:
        # the bound counts two a rank count, so asking at two counts bounds three balancers where one count bounds two.
        def bound(ranks):
            r = self.mcmclb("advise", "t.csv", "--ranks", ranks, "--balancers", "mostwork,lookahead,async",
                            "--check-reps", "6", "--dry-run", "--sim-binary", self.fake_sim(), "--out",
                            self.path("advice"))
            self.assertEqual(r.returncode, 0, r.stderr)
            return int(re.search(r"\((\d+) set-ups at most", " ".join(r.stdout.decode().split())).group(1))
        self.assertGreater(bound("4,8"), bound("4"))
        self.assertFalse(os.path.exists(self.path("advice")), "a dry run writes nothing")

    def test_too_large(self):
        with open(self.path("t.csv"), "w") as f:
            f.truncate((256 << 20) + 1)  # sparse: no disk written
        self.assert_one_line_error(self.mcmclb("plan", self.study(None)), "t.csv is too large (268435457 bytes)",
                                   "at most 256 MiB", within_s=FAST_S)

    def test_crlf_line_endings(self):
        """One policy for every CSV mcmclb reads: lines end in \\n alone; a file saved with \\r\\n is refused,
        naming its first such line, as results files and the plot scripts refuse it."""
        self.refused(GOOD.replace("\n", "\r\n"), "t.csv row 1", "Windows line endings")

    def test_byte_order_mark(self):
        """A UTF-8 byte-order mark (as spreadsheets save CSV) is refused with the command that removes it."""
        self.refused("\ufeff" + GOOD, "t.csv row 1", "byte-order mark", "sed -i")

    def test_empty_file(self):
        """The message names both headers a trace may have, with the group column and without."""
        self.refused("", "t.csv row 1", "empty", "the header chain,item,ranks,seconds,speedup,group or "
                     "chain,item,ranks,seconds,speedup, then rows")

    def test_run_lines_of_other_walkers(self):
        """Run lines are runs of one program's walkers, whose spread advise takes as the program's: a line whose
        walkers= differs from an earlier line's is refused by the replay and by advise, naming both rows and both
        fingerprints, before any work. Lines without the key name no walkers and are read."""
        run = "# run: ranks=2 groups=1 balancer=none seconds=2 walkers=abc\n"
        same = "# earlier run: ranks=2 groups=1 balancer=none seconds=2.5 walkers=abc\n"
        other = "# earlier run: ranks=2 groups=1 balancer=none seconds=9 walkers=def\n"
        unnamed = "# earlier run: ranks=2 groups=1 balancer=none seconds=3\n"
        self.refused(run + same + other + GOOD, "t.csv row 3",
                     "the earlier run line's walkers=def differ from walkers=abc on row 1")
        self.refused(other + run + GOOD, "t.csv row 2", "the run line's walkers=abc differ from walkers=def on row 1",
                     launched=True)
        r = self.mcmclb("plan", self.study(run + unnamed + same + GOOD))
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(self.path("t.csv"), "w") as f:
            f.write(run + same + other + GOOD)
        out = self.path("advice")
        r = self.mcmclb("advise", "t.csv", "--ranks", "4", "--out", out)
        self.assert_one_line_error(r, "t.csv row 3", "walkers=def differ from walkers=abc on row 1", within_s=FAST_S)
        self.assertFalse(os.path.exists(out), "nothing written")

    def test_wrong_header(self):
        self.refused("chain,item,seconds\n0,0,1\n", "t.csv row 1", "chain,item,ranks,seconds,speedup", launched=True)

    def test_comment_lines_before_the_header(self):
        """Lines that start with # before the header say where a trace came from and are read past (rows keep
        their line numbers); after the header such a line is a row like any other, and refused."""
        r = self.mcmclb("plan", self.study("# recorded at P = 2\n# by hand\n" + GOOD))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.refused("# one\n" + GOOD + "1,1,1,0.5\n", "t.csv row 7", "4 fields")
        self.refused(GOOD + "# late\n", "t.csv row 6", "1 field (allowed: 5")

    def test_wrong_field_count(self):
        self.refused(GOOD + "1,1,1,0.5\n", "t.csv row 6", "4 fields")

    def test_chain_not_an_integer(self):
        self.refused(GOOD + "x,0,1,0.5,\n", "t.csv row 6 column chain", "'x'")

    def test_star_chain_on_an_item_row(self):
        self.refused(GOOD + "*,0,1,0.5,\n", "t.csv row 6 column chain", "'*'")

    def test_negative_item(self):
        self.refused(GOOD + "1,-1,1,0.5,\n", "t.csv row 6 column item", "'-1'")

    def test_ranks_zero(self):
        self.refused(GOOD + "1,1,0,0.5,\n", "t.csv row 6 column ranks", "'0'")

    def test_seconds_negative(self):
        self.refused(GOOD + "1,1,1,-0.5,\n", "t.csv row 6 column seconds", "'-0.5'")

    def test_seconds_not_a_number(self):
        self.refused(GOOD + "1,1,1,nan,\n", "t.csv row 6 column seconds", "'nan'")

    def test_item_row_with_a_speedup(self):
        self.refused(GOOD + "1,1,1,0.5,2\n", "t.csv row 6 column speedup", "item row")

    def test_speedup_row_with_seconds(self):
        self.refused(GOOD + "1,,2,0.5,2\n", "t.csv row 6 column seconds", "speed-up row")

    def test_speedup_not_positive(self):
        self.refused(GOOD + "1,,4,,0\n", "t.csv row 6 column speedup", "'0'")

    def test_speedup_at_one_rank_not_one(self):
        self.refused(GOOD + "1,,1,,2\n", "t.csv row 6 column speedup", "1 at ranks 1")

    def test_speedup_given_twice(self):
        """A size given twice is two repetitions of one measurement, read (the replay takes their median); a bad
        repetition is refused as any speed-up row is."""
        r = self.mcmclb("plan", self.study(GOOD + "*,,2,,1.7\n"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.refused(GOOD + "*,,2,,0\n", "t.csv row 6 column speedup", "'0'")

    def test_speedup_for_a_chain_past_the_last(self):
        self.refused(GOOD + "5,,2,,1.7\n", "t.csv row 6 column chain", "'5'")

    def test_item_given_twice(self):
        self.refused(GOOD + "0,1,1,0.5,\n", "t.csv row 6 column item", "also on row 3", launched=True)

    def test_gap_in_items(self):
        self.refused(GOOD + "1,2,1,0.5,\n", "t.csv row 6 column item", "no item 1")

    def test_file_with_another_model(self):
        path = self.path("s.yaml")
        with open(path, "w") as f:
            f.write("experiment: s\nworkload: {model: uniform, file: t.csv}\n")
        r = self.mcmclb("run", path, ranks="2")
        self.assert_one_line_error(r, "workload.file", "workload.model: trace", within_s=FAST_S)

    def test_compute_mode_cannot_replay(self):
        path = self.path("s.yaml")
        with open(self.path("t.csv"), "w") as f:
            f.write(GOOD)
        with open(path, "w") as f:
            f.write("experiment: s\nworkload: {model: trace, file: t.csv}\nwork: {mode: compute}\n")
        r = self.mcmclb("run", path, ranks="2")
        self.assert_one_line_error(r, "work.mode", "sleep, spin", within_s=FAST_S)


class RecordAndReplay(TraceCase):
    def test_recording_replays(self):
        """A compute-mode run with work.record writes costs.csv: one item row per item (its group size and
        seconds) and speed-up rows from its calibration; less its run_id column it is a trace file that replays,
        and a replay under none takes at least the recorded costs of the slower rank (about 1 s in all)."""
        path = self.path("rec.yaml")
        with open(path, "w") as f:
            f.write("experiment: rec\nnprocs: 2\nchains_per_group: 2\nworkload: {model: uniform, items: 3}\n"
                    "work: {mode: compute, moves_per_item: 200, record: true}\nbalancer: none\n")
        r = self.mcmclb("run", path, ranks="2")
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = read_rows(self.path("results", "rec", "costs.csv"))
        items = [x for x in rows if x["item"]]
        self.assertEqual(sorted((int(x["chain"]), int(x["item"])) for x in items),
                         [(c, i) for c in range(4) for i in range(3)])
        self.assertEqual({x["ranks"] for x in items}, {"1"})
        self.assertEqual(sorted(int(x["chain"]) for x in rows if not x["item"]), [0, 1, 2, 3],
                         "one speed-up row per chain at the one calibrated size above 1")
        # The documented route from a recording to a trace: plots/trace_of_run.py, whose comment lines say where
        # the trace came from and are read past.
        run_id = read_rows(self.path("results", "rec", "runs.csv"))[0]["run_id"]
        made = subprocess.run([sys.executable, os.path.join(ROOT, "plots", "trace_of_run.py"),
                               self.path("results", "rec"), "--run-id", run_id, "-o", self.path("t.csv")],
                              capture_output=True, text=True, timeout=60)
        self.assertEqual(made.returncode, 0, made.stderr)
        with open(self.path("t.csv")) as f:
            lines = f.read().splitlines()
        self.assertTrue(lines[0].startswith(f"# trace of run {run_id}"), lines[0])
        self.assertIn("chain,item,ranks,seconds,speedup", lines)
        # Its run line says what the recorded run took, in its layout (2 ranks, 2 groups of 1): what advise --check
        # measures a real replay against. The replay below parses it.
        recorded = read_rows(self.path("results", "rec", "runs.csv"))[0]
        run_lines = [x for x in lines if x.startswith("# run:")]
        self.assertEqual(len(run_lines), 1, lines[:6])
        fields = dict(kv.split("=") for kv in run_lines[0][len("# run:"):].split())
        self.assertEqual((fields["ranks"], fields["groups"], fields["balancer"]), ("2", "2", "none"))
        self.assertEqual(float(fields["seconds"]), float(recorded["time_s"]))
        r = self.mcmclb("run", self.study(None, "chains_per_group: 2\n"), ranks="2")
        self.assertEqual(r.returncode, 0, r.stderr)
        runs = read_rows(self.path("results", "s", "runs.csv"))
        self.assertEqual([x["valid"] for x in runs], ["true", "true"])
        self.assertEqual({(x["workload_file"], x["workload_map"], x["workload_scaling"]) for x in runs},
                         {("t.csv", "tile", "trace")})
        # Rank r works chains 2r and 2r + 1 under none: the slower rank's recorded seconds are a lower bound.
        per_rank = [sum(float(x["seconds"]) for x in items if int(x["chain"]) // 2 == rank) for rank in (0, 1)]
        none = next(x for x in runs if x["balancer"] == "none")
        self.assertAlmostEqual(float(none["baseline_s"]), max(per_rank), places=6)
        self.assertGreaterEqual(float(none["time_s"]), max(per_rank))


class Scaling(TraceCase):
    def test_pays_plans_with_the_scaling_asked(self):
        """workload.scaling decides what pays believes a merge gains; the replay always charges the trace. Chain 1
        (rank 1) holds 20 items of 5 ms that 2 ranks work at half speed, rank 0 finishes at once: with the trace's
        scaling async under pays declines the merge, with perfect scaling it merges (about 1 s at 2 ranks)."""
        trace = "chain,item,ranks,seconds,speedup\n0,0,1,0.001,\n"
        trace += "".join(f"1,{i},1,0.005,\n" for i in range(20)) + "1,,2,,0.5\n"
        study = self.study(trace, "finished: pays\n")
        with open(study) as f:
            text = f.read().replace("workload: {model: trace, file: t.csv}",
                                    "workload: {model: trace, file: t.csv, scaling: [trace, perfect]}")
        with open(study, "w") as f:
            f.write(text.replace("balancer: [none, async]", "balancer: [async]"))
        r = self.mcmclb("run", study, ranks="2")
        self.assertEqual(r.returncode, 0, r.stderr)
        runs = {x["workload_scaling"]: x for x in read_rows(self.path("results", "s", "runs.csv"))}
        self.assertEqual(sorted(runs), ["perfect", "trace"])
        self.assertTrue(all(x["valid"] == "true" for x in runs.values()))
        merges = [x["run_id"] for x in read_rows(self.path("results", "s", "events.csv")) if x["kind"] == "merge"]
        self.assertEqual(merges.count(runs["trace"]["run_id"]), 0, "the trace's scaling: merging loses")
        self.assertGreater(merges.count(runs["perfect"]["run_id"]), 0, "perfect scaling: merging pays")
        # The merge believed to pay costs what the trace says: 2 ranks work the chain at half speed.
        self.assertGreater(float(runs["perfect"]["time_s"]), float(runs["trace"]["time_s"]))

    def test_pays_plans_from_the_plan_file_and_pays_the_trace(self):
        """workload.plan_file: what pays believes comes from another trace of the same walkers and items, what the
        run pays from workload.file. The trace halves chain 1's speed at 2 ranks; the plan file doubles it. Planned
        from the trace, async under pays declines the merge; planned from the plan file it merges, and is charged
        the trace's half speed. runs.csv names the plan file and its hash; other walkers or items are refused in one
        line before anything is written. Chain 1's 0.8 s dwarf what a regrouping costs even on a loaded host, which
        pays measures before the run."""
        trace = "chain,item,ranks,seconds,speedup\n0,0,1,0.001,\n"
        trace += "".join(f"1,{i},1,0.02,\n" for i in range(40)) + "1,,2,,0.5\n"
        with open(self.path("plan.csv"), "w") as f:
            f.write(trace.replace("1,,2,,0.5", "1,,2,,2.0"))
        study = self.study(trace, "finished: pays\n")
        with open(study) as f:
            text = f.read().replace("balancer: [none, async]", "balancer: [async]")
        with open(study, "w") as f:
            f.write(text.replace("workload: {model: trace, file: t.csv}",
                                 "workload: {model: trace, file: t.csv, plan_file: [t.csv, plan.csv]}"))
        r = self.mcmclb("run", study, ranks="2")
        self.assertEqual(r.returncode, 0, r.stderr)
        runs = {x["workload_plan_file"]: x for x in read_rows(self.path("results", "s", "runs.csv"))}
        self.assertEqual(sorted(runs), ["plan.csv", "t.csv"])
        self.assertTrue(all(x["valid"] == "true" and x["workload_file"] == "t.csv" for x in runs.values()))
        self.assertNotEqual(runs["plan.csv"]["workload_plan_fnv1a64"], runs["t.csv"]["workload_plan_fnv1a64"])
        merges = [x["run_id"] for x in read_rows(self.path("results", "s", "events.csv")) if x["kind"] == "merge"]
        self.assertEqual(merges.count(runs["t.csv"]["run_id"]), 0, "planned from the trace: merging loses")
        self.assertGreater(merges.count(runs["plan.csv"]["run_id"]), 0, "planned from the plan file: merging pays")
        self.assertGreater(float(runs["plan.csv"]["time_s"]), float(runs["t.csv"]["time_s"]))
        # A plan of other items: one line, exit 2, no folder.
        with open(self.path("plan.csv"), "w") as f:
            f.write(trace.replace("1,39,1,0.02,\n", ""))
        shutil.rmtree(self.path("results"))
        r = self.mcmclb("run", study, ranks="2")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertIn("key workload.plan_file: plan.csv gives walker 1 39 items, workload.file 40", r.stderr.decode())
        self.assertFalse(os.path.exists(self.path("results")))


class ChainsAndReferences(TraceCase):
    """Which recorded chains a run replays, and the reference times runs.csv gives beside its time (each test one
    launch of a second or less, but the sweeps)."""

    def replay(self, trace, ranks, keys="", balancer="none"):
        """A study of the trace at `ranks` ranks (keys: more YAML lines; workload: its mapping's further keys),
        run under mpiexec; returns the launch and runs.csv's rows."""
        with open(self.path("t.csv"), "w") as f:
            f.write(trace)
        path = self.path("s.yaml")
        with open(path, "w") as f:
            f.write(f"experiment: s\nnprocs: {ranks}\nwork: {{mode: sleep}}\nbalancer: {balancer}\n{keys}")
            if "workload:" not in keys:
                f.write("workload: {model: trace, file: t.csv}\n")
        r = self.mcmclb("run", path, ranks=str(ranks))
        self.assertEqual(r.returncode, 0, r.stderr)
        return r, read_rows(self.path("results", "s", "runs.csv"))

    def test_groups_replay_every_chain(self):
        """Groups of G deal the trace's chains in order: at P = 4, G = 2 chains 0 and 1 (by the leader's rank,
        chain 0 twice). Chain 1 is four times chain 0, so none's baseline is chain 1's time on 2 ranks."""
        trace = "chain,item,ranks,seconds,speedup\n0,0,1,0.01,\n" + "".join(f"1,{i},1,0.01,\n" for i in range(4))
        r, runs = self.replay(trace + "*,,2,,1.6\n", 4, "G: 2\n")
        self.assertNotIn(b"note:", r.stdout, "every recorded chain with items is replayed")
        self.assertAlmostEqual(float(runs[0]["baseline_s"]), 0.04 / 1.6, places=9)

    def test_fewer_chains_than_recorded_said(self):
        trace = "chain,item,ranks,seconds,speedup\n" + "".join(f"{c},0,1,0.001,\n" for c in range(4))
        r, _ = self.replay(trace, 2)
        self.assertIn(b"note: the 2 chains of this run (P=2, 2 groups, 1 each) replay 2 of the 4 chains with items",
                      r.stdout)

    def test_the_walkers_once_in_their_recorded_groups(self):
        """workload.map once replays the walkers themselves: 7 recorded at 2 ranks in groups of 4 (chains 0, 2, 4,
        6) and 3 run as those groups, each once, the eighth slot empty, not as 8 copies (tile would replay chain 0
        twice and deal 0-3 and 4-6). Chain c's 3 items take 0.01 (c + 1) s: none's baseline is group 0's 0.48 s, its
        ideal the 0.84 s of work over 2 ranks. chains_per_group 3 would leave a walker out: refused."""
        trace = ("# run: ranks=2 groups=2 balancer=none seconds=0.5\nchain,item,ranks,seconds,speedup,group\n" +
                 "".join(f"{c},{i},1,{0.01 * (c + 1)},,{c % 2}\n" for c in range(7) for i in range(3)))
        workload = "workload: {model: trace, file: t.csv, map: once}\ngroups: {count: 2}\n"
        r, runs = self.replay(trace, 2, workload + "chains_per_group: 4\n")
        self.assertNotIn(b"note:", r.stdout, "every walker replayed")
        self.assertEqual(runs[0]["workload_map"], "once")
        self.assertAlmostEqual(float(runs[0]["baseline_s"]), 0.48, places=9)
        self.assertAlmostEqual(float(runs[0]["ideal_s"]), 0.42, places=9)
        with open(self.path("s.yaml"), "w") as f:
            f.write("experiment: s\nnprocs: 2\nwork: {mode: sleep}\nbalancer: none\nchains_per_group: 3\n" + workload)
        self.assert_one_line_error(self.mcmclb("plan", self.path("s.yaml")),
                                   "key chains_per_group: 3, but workload.map once deals up to 4 walkers of t.csv",
                                   within_s=FAST_S)

    def test_advise_asks_about_the_walkers_as_they_ran(self):
        """192 walkers recorded at 64 ranks in groups of 3: the plain command advises them at 64 and 256 ranks, as
        64 groups of 3 and as 192 groups, no copies (a dry run: the plan printed, nothing simulated)."""
        with open(self.path("t.csv"), "w") as f:
            f.write("# run: ranks=64 groups=64 balancer=none seconds=1\nchain,item,ranks,seconds,speedup,group\n" +
                    "".join(f"{c},0,1,0.01,,{c // 3}\n" for c in range(192)) + "*,,2,,1.8,\n")
        sim = self.path("mcmclb-sim")  # the check reads that the file names SimGrid; a dry run never starts it
        with open(sim, "w") as f:
            f.write("#!/bin/sh\n# NEEDED libsimgrid.so.3\n")
        os.chmod(sim, 0o755)
        r = self.mcmclb("advise", "t.csv", "--ranks", "64,256", "--dry-run", "--sim-binary", sim, "--out",
                        self.path("advice"))
        self.assertEqual(r.returncode, 0, r.stderr)
        said = r.stdout.decode()
        self.assertIn("asks at P = 64: 192 walkers on 64 ranks (64 groups of one rank, 3 walkers each), as recorded",
                      said)
        self.assertIn("asks at P = 256: 192 walkers on 256 ranks (groups of 1-2), the recorded walkers", said)
        self.assertNotIn("copies", said)

    def test_references_use_the_speedups(self):
        """Two chains of 0.2 s on one rank, sped up 1.5 times by 2 ranks and no more past 2 (flat), on two groups of
        2: the baseline is 0.2 / 1.5 s, and so is the ideal, since no chain gains from more ranks; an ideal of
        perfect scaling would say 0.1 s, which no balancer can reach."""
        trace = "chain,item,ranks,seconds,speedup\n0,0,1,0.1,\n0,1,1,0.1,\n1,0,1,0.1,\n1,1,1,0.1,\n*,,2,,1.5\n"
        _, runs = self.replay(trace, 4, "G: 2\n")
        self.assertAlmostEqual(float(runs[0]["baseline_s"]), 0.2 / 1.5, places=9)
        self.assertAlmostEqual(float(runs[0]["ideal_s"]), 0.2 / 1.5, places=6)
        self.assertGreaterEqual(float(runs[0]["time_s"]), float(runs[0]["baseline_s"]))

    def test_extrapolation_past_the_measured_size(self):
        """One chain of 0.8 s on one rank, measured at 2 ranks only (speed-up 1.6), on one group of 4: its
        baseline is 0.8 / s(4) with s(4) = 1.6 held (flat), 1.6 * 4 / 2 = 3.2 (perfect), and Amdahl's law through
        (2, 1.6): p = 2 (1 - 1 / 1.6) = 0.75, s(4) = 1.6 * A(4) / A(2) with A(m) = 1 / (0.25 + 0.75 / m)."""
        trace = "chain,item,ranks,seconds,speedup\n" + "".join(f"0,{i},1,0.1,\n" for i in range(8)) + "*,,2,,1.6\n"
        _, rows = self.replay(trace, 4, "G: 4\nworkload: {model: trace, file: t.csv, "
                                        "extrapolate: [flat, amdahl, perfect]}\n")
        runs = {x["workload_extrapolate"]: x for x in rows}
        amdahl = lambda m: 1 / (0.25 + 0.75 / m)  # noqa: E731
        expected = {"flat": 1.6, "perfect": 3.2, "amdahl": 1.6 * amdahl(4) / amdahl(2)}
        for rule, speedup in expected.items():
            self.assertAlmostEqual(float(runs[rule]["baseline_s"]), 0.8 / speedup, places=9, msg=rule)

    def test_a_warning_every_launch_prints_is_shown_once(self):
        """Each launch of a sweep (here P = 1 and P = 2) reads the trace and warns of the speed-up it sets aside; an
        advice runs hundreds of simulations of one trace. The sweep shows the warning once, as it shows a note."""
        study = self.none_study(GOOD + "*,,2,,2.5\n", "[1, 2]")
        r = self.mcmclb("sweep", study, "--launcher", "local")
        self.assertEqual(r.returncode, 0, r.stderr)
        said = [l for l in r.stdout.decode().split("\n") if "speed-up 2.5 at 2 ranks is above 2" in l]
        self.assertEqual(len(said), 1, r.stdout.decode())
        self.assertEqual(len(read_rows(self.path("results", "s", "runs.csv"))), 2, "both launches ran")

    def none_study(self, trace_text, nprocs):
        """A study replaying trace_text (written to t.csv) under none at nprocs (YAML text); returns its path."""
        with open(self.path("t.csv"), "w") as f:
            f.write(trace_text)
        study = self.path("s.yaml")
        with open(study, "w") as f:
            f.write(f"experiment: s\nnprocs: {nprocs}\nworkload: {{model: trace, file: t.csv}}\n"
                    "work: {mode: sleep}\nbalancer: none\n")
        return study

    def test_content_in_the_key(self):
        """An edited trace is a new point: a resumed sweep runs it again, and runs.csv names each file's content."""
        study = self.none_study("chain,item,ranks,seconds,speedup\n0,0,1,0.001,\n1,0,1,0.002,\n", "2")
        r = self.mcmclb("sweep", study, "--launcher", "local")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(self.path("t.csv"), "a") as f:
            f.write("1,1,1,0.002,\n")
        r = self.mcmclb("sweep", study, "--launcher", "local")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(b"0 already done", r.stdout, "the edited trace is not taken for the one run before")
        hashes = [x["workload_file_fnv1a64"] for x in read_rows(self.path("results", "s", "runs.csv"))]
        self.assertEqual(len(hashes), 2)
        self.assertNotEqual(hashes[0], hashes[1])
        self.assertTrue(all(len(h) == 16 for h in hashes), hashes)


class TraceOfRun(TraceCase):
    """plots/trace_of_run.py on a hand-made results folder of 2-rank runs of two walkers: r3 (chosen) and r1 at
    1 rank per walker, r2 and r4 both walkers on 2 ranks, r1 and r2 repetition 0, the others 1; r5 is not valid, r6
    has other walkers, r7 another experiment. Its item costs are round numbers, so the speed-ups below are computed
    by hand."""

    RUNS = [  # run_id, experiment, G, chains_per_group, workload_seed, time_s, valid, utc_start
        ("r1", "e", 1, 1, 5, 3.0, "true", "2026-01-01T10:00:00Z"),
        ("r2", "e", 2, 2, 5, 2.5, "true", "2026-01-01T10:01:00Z"),
        ("r3", "e", 1, 1, 5, 3.5, "true", "2026-01-01T10:02:00Z"),
        ("r4", "e", 2, 2, 5, 2.0, "true", "2026-01-01T10:03:00Z"),
        ("r5", "e", 2, 2, 5, 9.0, "false", "2026-01-01T10:04:00Z"),
        ("r6", "e", 1, 1, 6, 9.0, "true", "2026-01-01T10:05:00Z"),
        ("r7", "f", 1, 1, 5, 9.0, "true", "2026-01-01T10:06:00Z")]
    COSTS = {"r1": "0,0,1,1.0,\n0,1,1,1.2,\n1,0,1,2.0,\n0,,2,,1.5\n1,,2,,1.5\n",
             "r2": "0,0,2,0.6,\n0,1,2,0.7,\n1,0,2,1.25,\n",
             "r3": "0,0,1,1.1,\n0,1,1,0.9,\n1,0,1,2.2,\n0,,2,,1.8\n0,,4,,3.5\n1,,2,,1.8\n",
             "r4": "0,0,2,0.5,\n0,1,2,0.55,\n1,0,2,1.1,\n",
             "r5": "0,0,2,5.0,\n0,1,2,5.0,\n1,0,2,5.0,\n",
             "r6": "0,0,1,10.0,\n0,1,1,10.0,\n1,0,1,10.0,\n",
             "r7": "0,0,1,10.0,\n0,1,1,10.0,\n1,0,1,10.0,\n"}

    def folder(self, shares=None):
        """The folder; shares: run_id -> provenance.csv's core_share text (None: a folder without the column)."""
        folder = self.path("rec")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "runs.csv"), "w") as f:
            f.write("run_id,experiment,nprocs,G,groups,workload,workload_seed,work_mode,balancer,rep,time_s,valid,"
                    "utc_start,chains_per_group\n")
            for rid, exp, g, w, seed, t, valid, utc in self.RUNS:
                rep = 0 if rid in ("r1", "r2") else 1
                f.write(f"{rid},{exp},2,{g},,lognormal,{seed},compute,none,{rep},{t},{valid},{utc},{w}\n")
        with open(os.path.join(folder, "costs.csv"), "w") as f:
            f.write("run_id,chain,item,ranks,seconds,speedup\n")
            f.write("".join(f"{rid},{row}\n" for rid, rows in self.COSTS.items() for row in rows.splitlines()))
        with open(os.path.join(folder, "provenance.csv"), "w") as f:
            if shares is None:
                f.write("run_id,launcher\n" + "".join(f"{x[0]},mpiexec\n" for x in self.RUNS))
            else:
                f.write("run_id,launcher,core_share\n" +
                        "".join(f"{x[0]},mpiexec,{shares.get(x[0], '')}\n" for x in self.RUNS))
        return folder

    def made(self, folder, *flags):
        r = subprocess.run([sys.executable, os.path.join(ROOT, "plots", "trace_of_run.py"), folder, "--run-id", "r3",
                            "-o", self.path("t.csv"), *flags], capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(self.path("t.csv")) as f:
            return f.read().splitlines()

    def test_every_run_of_the_walkers_and_its_core_share(self):
        """The chosen run's line, then every other valid run of the same walkers newest first, each with its own
        layout and time, and share= only where provenance.csv measured it; a folder without core_share has none."""
        lines = self.made(self.folder({"r1": "0.9", "r3": "0.75"}))
        said = [x for x in lines if x.startswith("# run:") or x.startswith("# earlier run:")]
        self.assertEqual(said, ["# run: ranks=2 groups=2 balancer=none seconds=3.5 share=0.75",
                                "# earlier run: ranks=2 groups=1 balancer=none seconds=2.0",
                                "# earlier run: ranks=2 groups=1 balancer=none seconds=2.5",
                                "# earlier run: ranks=2 groups=2 balancer=none seconds=3.0 share=0.9"])
        self.assertEqual(lines.index("chain,item,ranks,seconds,speedup"), 3 + len(said), "all above the header")
        older = self.made(self.folder())
        self.assertEqual([x for x in older if x.startswith("#") and "share=" in x], [])
        self.assertEqual(len([x for x in older if x.startswith("# earlier run:")]), 3)
        os.remove(self.path("t.csv"))
        r = subprocess.run([sys.executable, os.path.join(ROOT, "plots", "trace_of_run.py"), self.folder({"r1": "1.5"}),
                            "--run-id", "r3", "-o", self.path("t.csv")], capture_output=True, text=True, timeout=60)
        self.assertEqual((r.returncode, r.stderr.count("\n")), (2, 1), r.stderr)
        self.assertIn("provenance.csv: run r1: core_share is '1.5' (allowed: 0 to 1, or empty)", r.stderr)
        self.assertFalse(os.path.exists(self.path("t.csv")), "nothing written")

    def test_one_speedup_row_per_repetition_read_by_advise(self):
        """--measured-speedups: a speed-up row per pair of runs of one repetition, oldest first: the chain's mean
        seconds per item at 1 rank in r1 (r3) over its mean at 2 ranks in r2 (r4); chain 0's size 4, which no run
        worked, keeps r3's own row. mcmclb advise (a dry run) reads the repetitions and the runs' spread."""
        lines = self.made(self.folder({"r1": "0.9", "r3": "0.75"}), "--measured-speedups")
        rows = [x.split(",") for x in lines[lines.index("chain,item,ranks,seconds,speedup") + 1:]]
        ups = [x for x in rows if x[1] == ""]
        want = [("0", "2", ((1.0 + 1.2) / 2) / ((0.6 + 0.7) / 2)), ("0", "2", ((1.1 + 0.9) / 2) / ((0.5 + 0.55) / 2)),
                ("0", "4", 3.5), ("1", "2", 2.0 / 1.25), ("1", "2", 2.2 / 1.1)]
        self.assertEqual([(c, m) for c, _, m, _, _ in ups], [(c, m) for c, m, _ in want])
        for (_, _, _, _, got), (_, _, value) in zip(ups, want):
            self.assertAlmostEqual(float(got), value, places=12)
        r = self.mcmclb("advise", "t.csv", "--ranks", "2", "--dry-run", "--sim-binary", self.fake_sim(), "--out",
                        self.path("advice"))
        self.assertEqual(r.returncode, 0, r.stderr)
        said = r.stdout.decode()
        self.assertIn("a size measured several times", said)
        # Two layouts of two runs each: the tie goes to the run line's own layout (groups=2: 3 and 3.5 s), whatever
        # the order of the earlier lines.
        self.assertIn("your program's own runs at P = 2, n = 2: 3 to 3.5 s", said)


class DriftingHost(TraceCase):
    """plots/trace_of_run.py --measured-speedups on folders made from the shipped scaling runs
    (docs/data/trace-lj/scaling-p2: six repetitions, each a 1-rank and a 2-rank run of the same walkers, run one
    after the other). Each repetition's item costs are first scaled so its 1-rank cost matches repetition 0's (a
    steady host, by construction), then by a slowdown growing to 47 % at the last repetition: a host drifting
    across the recording, which slows both runs of a repetition alike."""

    REAL = os.path.join(ROOT, "docs", "data", "trace-lj", "scaling-p2")
    SLOWDOWN = 0.094  # per repetition: 1.47 at repetition 5

    def folder(self, name, slowdown, faster=None, order=None):
        """A copy of REAL with each repetition k's item costs times 1 + slowdown * k (after the steadying);
        faster: (chain, rep, factor) divides that chain's 2-rank costs in that repetition by factor; order: every
        run's provenance.csv order, if given."""
        runs = read_rows(os.path.join(self.REAL, "runs.csv"))
        costs = read_rows(os.path.join(self.REAL, "costs.csv"))
        rep = {r["run_id"]: int(r["rep"]) for r in runs}
        one = {}  # rep -> chain -> [seconds, items] at 1 rank
        for c in costs:
            if c["item"] and c["ranks"] == "1":
                t = one.setdefault(rep[c["run_id"]], {}).setdefault(c["chain"], [0.0, 0])
                t[0] += float(c["seconds"])
                t[1] += 1
        steady = {}
        for k, chains in one.items():
            logs = [math.log((s / n) / (one[0][ch][0] / one[0][ch][1])) for ch, (s, n) in chains.items()]
            steady[k] = math.exp(-sum(logs) / len(logs))
        for c in costs:
            if c["item"]:
                k = rep[c["run_id"]]
                seconds = float(c["seconds"]) * steady[k] * (1 + slowdown * k)
                if faster and (c["chain"], k, c["ranks"]) == (faster[0], faster[1], "2"):
                    seconds /= faster[2]
                c["seconds"] = repr(seconds)
        folder = self.path(name)
        os.makedirs(folder)
        for file, rows in (("runs.csv", runs), ("costs.csv", costs)):
            with open(os.path.join(folder, file), "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
                w.writeheader()
                w.writerows(rows)
        provenance = read_rows(os.path.join(self.REAL, "provenance.csv"))
        for row in provenance:
            row["order"] = order or row["order"]
        with open(os.path.join(folder, "provenance.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(provenance[0]), lineterminator="\n")
            w.writeheader()
            w.writerows(provenance)
        first = next(r["run_id"] for r in runs if r["G"] == "1" and r["rep"] == "0")
        return folder, first

    def trace(self, name, slowdown, *flags, faster=None, order=None):
        """(the trace's head lines, chain -> its speed-up rows at 2 ranks, standard error's lines)."""
        folder, first = self.folder(name, slowdown, faster, order)
        out = self.path(name + ".csv")
        r = subprocess.run([sys.executable, os.path.join(ROOT, "plots", "trace_of_run.py"), folder, "--run-id", first,
                            "--measured-speedups", "-o", out, *flags], capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            lines = f.read().splitlines()
        ups = {}
        for x in lines[lines.index("chain,item,ranks,seconds,speedup") + 1:]:
            chain, item, ranks, _, up = x.split(",")
            if not item and ranks == "2":
                ups.setdefault(chain, []).append(float(up))
        return [x for x in lines if x.startswith("#")], ups, r.stderr.splitlines()

    def test_pairs_cancel_a_drifting_host_and_the_drift_is_reported(self):
        """The drifting host's speed-ups stay within the steady host's pairs' range, chain by chain, and a
        `# drift:` line (also on standard error) says the 1-rank cost rose 26 % from repetitions 0-2 to 3-5
        (median 1.094 to 1.376), more than the pairs' spread. The steady host's says it is within."""
        steady_head, steady, steady_said = self.trace("steady", 0.0)
        head, drifting, said = self.trace("drifting", self.SLOWDOWN)
        self.assertEqual(sorted(drifting), sorted(steady))
        for chain, ups in drifting.items():
            low, high = min(steady[chain]), max(steady[chain])
            for up in ups:
                self.assertTrue(low * (1 - 1e-9) <= up <= high * (1 + 1e-9),
                                f"walker {chain}: {up} outside the steady pairs' {low} to {high}")
        self.assertEqual([x for x in steady_said if "drift" in x], [])
        drift = [x for x in steady_head if x.startswith("# drift:")]
        self.assertEqual(len(drift), 1, steady_head)
        self.assertIn("changed +0.0 % from repetitions 0-2", drift[0])
        self.assertIn("within the pairs' own spread", drift[0])
        drift = [x for x in head if x.startswith("# drift:")]
        self.assertEqual(len(drift), 1, head)
        self.assertIn("changed +26 % from repetitions 0-2", drift[0])
        self.assertIn("to repetitions 3-5", drift[0])
        self.assertIn("more than the pairs' own spread", drift[0])
        self.assertEqual([x for x in said if "drift:" in x], ["trace_of_run.py: " + drift[0][2:]])

    def test_pairs_of_a_blocked_order_are_said_not_close_in_time(self):
        """Runs in order blocked ran every repetition of one set-up before the next's: one line, also in the head,
        says their pairs do not cancel a drift."""
        head, _, said = self.trace("blocked", 0.0, order="blocked")
        lines = [x for x in said if "order blocked" in x]
        self.assertEqual(len(lines), 1, said)
        self.assertIn("and 11 more ran in order blocked: a repetition's runs are not close in time", lines[0])
        self.assertIn("# " + lines[0][len("trace_of_run.py: "):], head)
        _, _, said = self.trace("shuffled", 0.0)
        self.assertEqual([x for x in said if "order" in x], [])

    def test_a_pair_above_its_ranks_is_set_aside_in_one_line(self):
        """Walker 3's 2-rank costs of repetition 2 made 6 times as fast: that pair is above 2, set aside in one line
        naming the walker, the size, the repetition and the value, its row left out; --superlinear keeps it and
        says so in the trace's head."""
        _, kept, _ = self.trace("steady", 0.0)
        head, ups, said = self.trace("fast", 0.0, faster=("3", 2, 6.0))
        lines = [x for x in said if "walker 3's" in x]
        self.assertEqual(len(lines), 1, said)
        self.assertRegex(lines[0], r"^trace_of_run\.py: walker 3's speed-up at 2 ranks is above 2 in "
                                   r"repetition 2 \(([0-9.]+)\): set aside as a measurement error \(1 of 6 pairs\), "
                                   r"with the lowest in repetition \d \(([0-9.]+)\), so the kept pairs stay centred$")
        self.assertGreater(float(re.search(r"repetition 2 \(([0-9.]+)\)", lines[0]).group(1)), 2)
        # Symmetric: the lowest pair goes with the one above 2, so 4 of the 6 stay, centred where the 6 were.
        self.assertEqual(len(ups["3"]), len(kept["3"]) - 2)
        lowest = float(re.search(r"with the lowest in repetition \d \(([0-9.]+)\)", lines[0]).group(1))
        self.assertLessEqual(lowest, min(float(u) for u in ups["3"]))
        self.assertIn("# set aside: " + lines[0][len("trace_of_run.py: "):], head)
        head, ups, said = self.trace("superlinear", 0.0, "--superlinear", "cache effects", faster=("3", 2, 6.0))
        self.assertEqual([x for x in said if "walker 3's" in x], [])
        self.assertEqual(len(ups["3"]), len(kept["3"]))
        self.assertIn("# superlinear: cache effects", head)

    def test_a_pair_below_one_over_its_ranks_is_kept_and_said(self):
        """Walker 3's 2-rank costs of repetition 2 made 6 times as slow: that pair is below 1/2, which the cost of
        ranks talking can give, so its row is kept and one line says it."""
        _, kept, _ = self.trace("steady", 0.0)
        head, ups, said = self.trace("slow", 0.0, faster=("3", 2, 1 / 6.0))
        lines = [x for x in said if "walker 3's" in x]
        self.assertEqual(len(lines), 1, said)
        self.assertRegex(lines[0], r"^trace_of_run\.py: walker 3's speed-up at 2 ranks is below 1/2 in repetition 2 "
                                   r"\(([0-9.]+)\): kept")
        self.assertEqual(len(ups["3"]), len(kept["3"]))
        self.assertIn("# slow: " + lines[0][len("trace_of_run.py: "):], head)


class ShippedExample(TraceCase):
    def test_example_replays_at_p2(self):
        """configs/trace-lj-replay.yaml at real P = 2: every balancer of the study replays the shipped Lennard-Jones
        trace, every run valid, none no faster than the trace's slower rank (a few seconds)."""
        r = self.mcmclb("run", EXAMPLE_STUDY, "--set", "workload.file=" + EXAMPLE_TRACE, "--out",
                        self.path("out"), ranks="2")
        self.assertEqual(r.returncode, 0, r.stderr)
        runs = read_rows(self.path("out", "runs.csv"))
        self.assertGreaterEqual(len(runs), 3)
        self.assertTrue(all(x["valid"] == "true" for x in runs), [x["violations"] for x in runs])
        none = next(x for x in runs if x["balancer"] == "none")
        self.assertGreaterEqual(float(none["time_s"]), float(none["baseline_s"]))


if __name__ == "__main__":
    unittest.main()
