# SPDX-License-Identifier: BSD-3-Clause
"""Checkpoints of an application's chains (Options::checkpoint, docs/guide/your-chains.md): a run killed with
kill -9 of one rank at a random moment, then the same command again, gives every chain's answer bit for bit and a
trace of every item once, as an uninterrupted run; under every balancer, at 1 to 4 ranks, the second run at the
same or another rank count; no chain the checkpoint held as finished is worked again (tests/checkpoint_chains.cpp
checks that itself and exits 1). So does a state spread over the group's members (SpreadChains), at 1 to 4 ranks,
with the bits of 1 rank, killed or stopped by a signal. A signal stops a run with the resumable status and leaves no temporary file; a
folder of other chains, other parameters, a torn file or a missing one is refused in one line, before any work; a
checkpoint that cannot be written is reported at the run's end, noted in the folder and named again by the run
after, which says what it resumes. Each launch takes about half a second; about 20 s in all. The class
Generations (a test of its own) falls back from a torn record to the one before and starts a chain anew on request. Needs
CHECKPOINT_CHAINS, MPIEXEC, MCMCLB_BIN and MCMCLB_COMMBENCH (ctest sets them)."""
import os
import random
import re
import signal
import subprocess
import time
import unittest

from test_inputs import InputCase, snapshot

PROGRAM = os.environ["CHECKPOINT_CHAINS"]
MPIEXEC = os.environ.get("MPIEXEC", "mpiexec")
RESUMABLE = 75  # mcmclb::walkers::kExitResumable
ITEM_MS = "20"  # about 0.3 to 1 s a run: time for a kill to land mid-run


def item_rows(trace):
    """The (chain, item) of every item row of a trace file, sorted, duplicates kept."""
    with open(trace) as f:
        rows = [l.split(",") for l in f if l[:1].isdigit()]
    return sorted((int(r[0]), int(r[1])) for r in rows if r[1] != "")


def temporary_files(folder):
    """What interrupted writes and stops left: write_file_whole's name.tmp-PID files, and the folder .stopped-RUN
    where each rank marks that it stopped."""
    return [n for n in os.listdir(folder) if ".tmp-" in n or n.startswith(".stopped-")]


def answers(path):
    """Per chain: (its answer's bytes in hex, the items it worked)."""
    with open(path) as f:
        return [tuple(l.split()[:2]) for l in f]


class CheckpointCase(InputCase):
    """The launches and the reference every checkpoint test compares with."""

    @classmethod
    def setUpClass(cls):
        cls.balancers = subprocess.run([PROGRAM, "--balancers"], check=True, capture_output=True,
                                       text=True).stdout.split()
        assert len(cls.balancers) >= 8, cls.balancers

    def chains(self, ranks, *args, background=False):
        command = [MPIEXEC, "-n", str(ranks), PROGRAM, *args]
        if background:
            return subprocess.Popen(command, cwd=self.cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        return self.launch(command)

    def reference(self, *args):
        """Every chain worked on one rank without a checkpoint: the answers and the trace rows."""
        if not hasattr(self, "_references"):
            self._references = {}
        if args not in self._references:
            out, trace = self.path(f"ref{len(self._references)}.txt"), self.path(f"ref{len(self._references)}.csv")
            r = self.chains(1, *args, "--out", out, "--mcmclb-record", trace)
            self.assertEqual(r.returncode, 0, r.stderr)
            self._references[args] = (answers(out), item_rows(trace))
        return self._references[args]

    def assert_like_the_reference(self, out, trace, what, *args):
        expected_answers, expected_rows = self.reference(*args)
        self.assertEqual(answers(out), expected_answers, what)
        self.assertEqual(item_rows(trace), expected_rows, what + ": every item once in the trace")
        with open(trace) as f:
            self.assertNotIn("# incomplete", f.read(), what)

    def kill_9_then_again(self, name, first, again, rng, *args):
        """A run at `first` ranks, one rank killed with kill -9 at a random moment, then the same command at `again`
        ranks: the answers and trace of the reference. Whether the kill landed mid-run."""
        folder, pids = self.path(f"ck-{name}"), self.path(f"pids-{name}")
        os.mkdir(pids)
        flags = [*args, "--pids", pids, "--item-ms", ITEM_MS, "--mcmclb-checkpoint", folder, "--mcmclb-record",
                 self.path(f"t-{name}.csv"), "--out", self.path(f"a-{name}.txt")]
        run = self.chains(first, *flags, background=True)
        victim = rng.randrange(first)
        time.sleep(rng.uniform(0.2, 0.45))
        landed = False
        try:
            with open(os.path.join(pids, str(victim))) as f:
                os.kill(int(f.read()), signal.SIGKILL)
            landed = True
        except (FileNotFoundError, ProcessLookupError, ValueError):
            pass  # not started yet or ended already: the second run then resumes from what is there
        run.communicate(timeout=60)
        r = self.chains(again, *flags)
        what = f"{' '.join(args)}: killed at {first} ranks, again at {again}"
        self.assertEqual(r.returncode, 0, what + f"\n{r.stderr.decode()[-2000:]}")
        self.assertEqual(temporary_files(folder), [], what + ": what killed writes left is removed")
        spread = args[:2] if args[:1] == ("--spread",) else ()
        self.assert_like_the_reference(self.path(f"a-{name}.txt"), self.path(f"t-{name}.csv"), what, *spread)
        return landed


class Checkpoint(CheckpointCase):
    def test_kill_9_then_again_under_every_balancer(self):
        seed = int(os.environ.get("CHECKPOINT_SEED", time.time_ns() % 100000))
        rng = random.Random(seed)
        landed = 0
        for i, balancer in enumerate(self.balancers):
            first = 1 + i % 4
            again = first if i % 2 == 0 else 1 + (first + 1) % 4  # every other case resumes at another count
            with self.subTest(f"{balancer}: killed at {first} ranks, again at {again} (seed {seed})"):
                landed += self.kill_9_then_again(i, first, again, rng, "--mcmclb-balancer", balancer,
                                                 "--mcmclb-checkpoint-every-items", str(1 + i % 3))
        self.assertGreaterEqual(landed, len(self.balancers) // 2, f"most kills landed mid-run (seed {seed})")

    def test_a_spread_state_at_any_rank_count_and_killed(self):
        """Chains whose state stays split by rows over the group (--spread 1): under every balancer at 1 to 4 ranks,
        and in groups of 2, the bits of 1 rank, the merges moving the pieces to groups of other sizes; then, every
        other balancer (to keep the test near 12 s), killed with kill -9 and resumed at another rank count, the same
        bits again."""
        seed = int(os.environ.get("CHECKPOINT_SEED", time.time_ns() % 100000))
        rng = random.Random(seed)
        spread = ("--spread", "1")
        expected, _ = self.reference(*spread)
        self.assertNotEqual(expected, self.reference()[0], "the spread chains are chains of their own")
        restored = landed = 0
        for i, balancer in enumerate(self.balancers):
            ranks = 1 + (i + 1) % 4
            group = ["--mcmclb-group-size", "2"] if ranks in (2, 4) and i % 3 == 0 else []
            what = f"spread, {balancer} at {ranks} ranks {' '.join(group)}"
            with self.subTest(what):
                r = self.chains(ranks, *spread, "--mcmclb-balancer", balancer, *group, "--out", self.path(f"s-{i}.txt"))
                self.assertEqual(r.returncode, 0, what + f"\n{r.stderr.decode()[-2000:]}")
                self.assertEqual(answers(self.path(f"s-{i}.txt")), expected, what)
                restored += int(re.search(rb"pieces restored: (\d+)", r.stdout).group(1))
            if i % 2 == 0:
                continue
            first, again = 1 + i // 2 % 4, 1 + (i // 2 + 2) % 4
            with self.subTest(f"spread, {balancer}: killed at {first} ranks, again at {again} (seed {seed})"):
                landed += self.kill_9_then_again(f"s{i}", first, again, rng, *spread, "--mcmclb-balancer", balancer,
                                                 "--mcmclb-checkpoint-every-items", str(1 + i % 2))
        self.assertGreater(restored, 0, "merges moved spread states")
        self.assertGreaterEqual(landed, len(self.balancers) // 4, f"most kills landed mid-run (seed {seed})")

    def wait_until_started(self, run, pids, ranks):
        """Until every rank has written its pid (MPI started, its chains about to run), then ten items' time: a
        signal sent a fixed time after the launch found a busy host still starting, with nothing yet to resume."""
        deadline = time.monotonic() + 60
        while len(os.listdir(pids)) < ranks and time.monotonic() < deadline and run.poll() is None:
            time.sleep(0.05)
        time.sleep(10 * int(ITEM_MS) / 1000)

    def test_a_signal_stops_with_the_resumable_status_and_the_run_resumes(self):
        flags = ["--item-ms", ITEM_MS, "--mcmclb-balancer", "mostwork", "--mcmclb-checkpoint", self.path("ck"),
                 "--mcmclb-checkpoint-every-s", "100", "--mcmclb-record", self.path("t.csv"), "--out",
                 self.path("a.txt")]
        os.mkdir(self.path("pids"))
        run = self.chains(3, "--pids", self.path("pids"), *flags, background=True)
        self.wait_until_started(run, self.path("pids"), 3)
        for rank in range(3):  # as Slurm's --signal does: to every rank
            with open(self.path("pids", str(rank))) as f:
                os.kill(int(f.read()), signal.SIGUSR1)
        _, err = run.communicate(timeout=60)
        self.assertEqual(run.returncode, RESUMABLE, err)
        self.assertIn(b"run the same command again to resume", err)
        self.assertEqual(err.count(b"mcmclb: stopped by signal"), 1, err)
        self.assertFalse(os.path.exists(self.path("a.txt")), "no answers from a stopped run")
        self.assertEqual(temporary_files(self.path("ck")), [], "no temporary file survives the stop")
        r = self.chains(2, *flags)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr.count(b"mcmclb: resuming from "), 1, r.stderr)
        self.assert_like_the_reference(self.path("a.txt"), self.path("t.csv"), "stopped at 3 ranks, resumed at 2")
        resumed = [int(l.split()[2]) for l in open(self.path("a.txt"))]
        self.assertTrue(any(at != 0 for at in resumed), f"something was kept: {resumed}")
        # SIGTERM to mpiexec, which passes it on to the ranks.
        flags[flags.index(self.path("ck"))] = self.path("ck2")
        os.mkdir(self.path("pids2"))
        run = self.chains(2, "--pids", self.path("pids2"), *flags, background=True)
        self.wait_until_started(run, self.path("pids2"), 2)
        run.send_signal(signal.SIGTERM)
        _, err = run.communicate(timeout=60)
        self.assertEqual(run.returncode, RESUMABLE, err)
        self.assertEqual(err.count(b"mcmclb: stopped by signal 15"), 1, err)
        self.assertEqual(temporary_files(self.path("ck2")), [], "no temporary file survives the stop")
        r = self.chains(3, *flags)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assert_like_the_reference(self.path("a.txt"), self.path("t.csv"), "stopped at 2 ranks, resumed at 3")
        # Ctrl-C to mpiexec, which passes SIGINT on: a stop like the others.
        flags[flags.index(self.path("ck2"))] = self.path("ck3")
        run = self.chains(2, *flags, background=True)
        time.sleep(0.5)
        run.send_signal(signal.SIGINT)
        _, err = run.communicate(timeout=60)
        self.assertEqual(run.returncode, RESUMABLE, err)
        self.assertEqual(err.count(b"mcmclb: stopped by signal 2"), 1, err)
        self.assertEqual(temporary_files(self.path("ck3")), [], "no temporary file survives the stop")
        flags[flags.index(self.path("ck3"))] = self.path("ck2")
        # Run again once finished: nothing is worked, the answers come from the checkpoint, and the run says so.
        # What killed writers left (their temporary files) is gone after.
        for leftover in ("chain-3.tmp-99999", "checkpoint.meta.tmp-12345"):
            with open(os.path.join(self.path("ck2"), leftover), "w") as f:
                f.write("cut short")
        r = self.chains(2, *flags)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"9 of 9 chains finished before, not worked again; 0 go on".encode(), r.stderr)
        self.assertEqual(temporary_files(self.path("ck2")), [], "leftovers of killed writes removed")
        self.assertEqual([int(l.split()[2]) for l in open(self.path("a.txt"))], [-1] * len(resumed))
        self.assert_like_the_reference(self.path("a.txt"), self.path("t.csv"), "run again once finished")

    def test_a_spread_state_stops_on_a_signal_and_resumes(self):
        """SIGTERM to a run of spread states in groups of 2 ranks: each group's member 0 gathers its members' pieces
        into the chain's last checkpoint, at the item it names to them; resumed in groups of 1, the bits of 1 rank."""
        spread = ("--spread", "1")
        flags = [*spread, "--item-ms", ITEM_MS, "--mcmclb-balancer", "mostwork", "--mcmclb-checkpoint",
                 self.path("ck"), "--mcmclb-checkpoint-every-s", "100", "--mcmclb-record", self.path("t.csv"),
                 "--out", self.path("a.txt")]
        os.mkdir(self.path("pids"))
        run = self.chains(4, "--pids", self.path("pids"), *flags, "--mcmclb-group-size", "2", background=True)
        self.wait_until_started(run, self.path("pids"), 4)
        run.send_signal(signal.SIGTERM)
        _, err = run.communicate(timeout=60)
        self.assertEqual(run.returncode, RESUMABLE, err)
        self.assertEqual(temporary_files(self.path("ck")), [], "no temporary file survives the stop")
        r = self.chains(2, *flags)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assert_like_the_reference(self.path("a.txt"), self.path("t.csv"), "spread, stopped at 4, resumed at 2",
                                       *spread)
        with open(self.path("a.txt")) as f:
            resumed = [int(l.split()[2]) for l in f]
        self.assertTrue(any(at > 0 for at in resumed), f"some chain went on from its pieces: {resumed}")

    def test_a_folder_of_other_chains_or_a_torn_file_is_refused(self):
        folder = self.path("ck")
        r = self.chains(2, "--out", self.path("a.txt"), "--mcmclb-checkpoint", folder)
        self.assertEqual(r.returncode, 0, r.stderr)
        before = snapshot(folder)
        cases = [(["--chains", "8"], "a checkpoint of 9 chains, where this run has 8"),
                 (["--mcmclb-name", "other"], "the checkpoint of application 'app', not 'other'")]
        for args, fragment in cases:
            r = self.chains(2, "--out", self.path("b.txt"), "--mcmclb-checkpoint", folder, *args)
            self.assert_one_line_error(r, "Options::checkpoint", fragment, program="checkpoint_chains")
        with open(os.path.join(folder, "chain-4"), "r+b") as f:
            f.truncate(20)
        r = self.chains(2, "--out", self.path("b.txt"), "--mcmclb-checkpoint", folder)
        self.assert_one_line_error(r, "chain-4", "torn", program="checkpoint_chains")
        before.pop("chain-4")
        after = snapshot(folder)
        after.pop("chain-4")
        self.assertEqual(after, before, "nothing written")
        self.assertFalse(os.path.exists(self.path("b.txt")), "no work")
        with open(self.path("file"), "w") as f:
            f.write("x")
        r = self.chains(2, "--out", self.path("b.txt"), "--mcmclb-checkpoint", self.path("file"))
        self.assert_one_line_error(r, "Options::checkpoint", "is not a folder", program="checkpoint_chains")
        r = self.chains(2, "--out", self.path("b.txt"), "--mcmclb-checkpoint-every-items", "x")
        self.assert_one_line_error(r, "--mcmclb-checkpoint-every-items", "'x' is not", program="checkpoint_chains")

    def test_a_folder_of_other_parameters_or_missing_a_chain_is_refused(self):
        for ranks in (2, 3):
            folder = self.path(f"ck-{ranks}")
            r = self.chains(ranks, "--out", self.path("a.txt"), "--mcmclb-checkpoint", folder, "--seed", "1")
            self.assertEqual(r.returncode, 0, r.stderr)
            before = snapshot(folder)
            cases = [(["--seed", "2"], "other parameters (Options::parameters 'seed 1', where this run has 'seed 2')"),
                     ([], "Options::parameters 'seed 1', where this run has none")]
            for args, fragment in cases:
                r = self.chains(ranks, "--out", self.path("b.txt"), "--mcmclb-checkpoint", folder, *args)
                self.assert_one_line_error(r, "Options::checkpoint", fragment, program="checkpoint_chains")
            self.assertEqual(snapshot(folder), before, "nothing written")
            # A chain's file gone from a folder that held it: refused, not started afresh.
            os.remove(os.path.join(folder, "chain-4"))
            before.pop("chain-4")
            r = self.chains(ranks, "--out", self.path("b.txt"), "--mcmclb-checkpoint", folder, "--seed", "1")
            self.assert_one_line_error(r, "chain-4", "missing, and so is its previous record, though this folder held",
                                       program="checkpoint_chains")
            self.assertEqual(snapshot(folder), before, "nothing written")
            self.assertFalse(os.path.exists(self.path("b.txt")), "no work")

    def test_a_checkpoint_not_written_is_reported_and_the_run_after_says_so(self):
        expected, _ = self.reference()
        folder = self.path("ck")
        # A folder where chain 4's file cannot be replaced: a folder of that name (as a full disk fails the write).
        os.makedirs(os.path.join(folder, "chain-4", "in-the-way"))
        flags = ["--out", self.path("a.txt"), "--mcmclb-checkpoint", folder, "--mcmclb-checkpoint-every-items", "1",
                 "--mcmclb-balancer", "mostwork"]
        r = self.chains(3, *flags)
        err = r.stderr.decode()
        self.assertEqual(r.returncode, 4, "the program exits non-zero on Report::checkpoints_lost\n" + err)
        self.assertEqual(answers(self.path("a.txt")), expected, "the answers returned are whole")
        last = err.strip().splitlines()[-1]
        self.assertRegex(last, r"^mcmclb: checkpoints lost: .* lacks the latest state of 1 of 9 chains \(4\) "
                               r"after \d+ checkpoint writes? failed \(first: rank \d, chain 4: ", err)
        with open(os.path.join(folder, "lost")) as f:
            self.assertIn("could not save the latest state of 1 chain (4)", f.read())
        self.assertEqual(temporary_files(folder), [])
        # The run after works chain 4 again, saying so and why; the others finished and are not worked again.
        os.rename(os.path.join(folder, "chain-4"), self.path("moved"))
        r = self.chains(2, *flags)
        err = r.stderr.decode()
        self.assertEqual(r.returncode, 0, err)
        self.assertEqual(err.count("mcmclb: resuming from"), 1, err)
        self.assertIn("8 of 9 chains finished before, not worked again; 0 go on from their checkpoint; 1 starts "
                      "afresh, having none (chain 4); the run before noted: a run that ended at ", err)
        self.assertEqual(answers(self.path("a.txt")), expected)
        with open(self.path("a.txt")) as f:
            self.assertEqual([int(l.split()[2]) for l in f], [-1] * 4 + [0] + [-1] * 4)
        self.assertFalse(os.path.exists(os.path.join(folder, "lost")), "the note goes once nothing is lost")

    def test_a_folder_of_the_other_form_is_refused_before_any_work(self):
        """A folder of whole states read by spread chains, and the reverse: refused in one line, exit 2, the folder
        untouched. Chains of both forms share a name, count and bounds here, so nothing else tells them apart: the
        whole form read a spread folder's results as its own, and a spread run failed mid-run on a whole state."""
        cases = [((), ("--spread", "1"), "saved whole (Chains::save), where this run's is spread over each group"),
                 (("--spread", "1"), (), "spread over each group (SpreadChains, saved piece by piece), where this "
                                         "run's is saved whole")]
        for made, read, fragment in cases:
            with self.subTest(made=made, read=read):
                folder = self.fresh("ck")
                r = self.chains(2, *made, "--out", self.path("a.txt"), "--mcmclb-checkpoint", folder,
                                "--mcmclb-checkpoint-every-items", "1")
                self.assertEqual(r.returncode, 0, r.stderr)
                with open(os.path.join(folder, "checkpoint.meta")) as f:
                    self.assertIn("\nform " + ("spread" if made else "whole") + "\n", f.read())
                before = snapshot(folder)
                r = self.chains(2, *read, "--out", self.path("b.txt"), "--mcmclb-checkpoint", folder)
                self.assert_one_line_error(r, "Options::checkpoint", "checkpoint.meta", fragment,
                                           program="checkpoint_chains", within_s=10)
                self.assertEqual(snapshot(folder), before, "the folder as it was")
                self.assertFalse(os.path.exists(self.path("b.txt")), "no answers")

    def test_the_trace_head_says_each_initial_groups_chains(self):
        for ranks in (2, 4):
            trace = self.path(f"t-{ranks}.csv")
            r = self.chains(ranks, "--out", self.path("a.txt"), "--mcmclb-record", trace)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(trace) as f:
                text = f.read()
            head = re.search(r"at (\d+) ranks, (\d+) initial groups of 1 rank, with ([\d, and]+) chains\n", text)
            self.assertIsNotNone(head, text[:600])
            listed = [int(n) for n in re.findall(r"\d+", head.group(3))]
            chains_of = {}
            for line in text.splitlines():
                row = line.split(",")
                if line[:1].isdigit() and row[1] != "":
                    chains_of.setdefault(int(row[5]), set()).add(int(row[0]))
            self.assertEqual(listed, [len(chains_of[g]) for g in range(ranks)], head.group(0))



class Generations(CheckpointCase):
    """Each chain's record before its latest, what a run falls back to."""

    def test_a_bad_record_falls_back_one_generation_and_a_chain_starts_anew_on_request(self):
        """Each chain's record before its latest stays (chain-N.prev). A torn latest record: the chain goes on from
        the one before, said in a line, to the reference's bits (the run was refused, though that record was whole
        a moment before). Both torn: refused in one line. An empty file afresh-N starts chain N anew, once, said in
        a line; with both records gone and no such file, the refusal says how, also once the mark saved/N is gone."""
        folder = self.path("ck")
        flags = ["--out", self.path("a.txt"), "--mcmclb-checkpoint", folder, "--mcmclb-record", self.path("t.csv")]
        r = self.chains(2, *flags, "--mcmclb-checkpoint-every-items", "1")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(os.path.exists(os.path.join(folder, "chain-4.prev")), sorted(os.listdir(folder)))
        with open(os.path.join(folder, "checkpoint.meta")) as f:
            self.assertIn("\nheld 0 1 2 3 4 5 6 7 8\n", f.read(), "the chains held, a witness beside the marks")
        chain4 = os.path.join(folder, "chain-4")
        with open(chain4, "r+b") as f:
            f.truncate(30)
        r = self.chains(2, *flags)
        err = r.stderr.decode()
        self.assertEqual(r.returncode, 0, err)
        self.assertIn(f"{chain4}: torn or altered: its checksum differs; chain 4 goes on from its previous record "
                      f"(before item ", err)
        self.assertTrue(os.path.exists(chain4 + ".bad"), "the bad record kept for a look")
        self.assert_like_the_reference(self.path("a.txt"), self.path("t.csv"), "fell back one generation")
        with open(self.path("a.txt")) as f:
            self.assertGreater(int(f.read().split("\n")[4].split()[2]), 0, "chain 4 went on from its item")
        for name in ("chain-4", "chain-4.prev"):
            with open(os.path.join(folder, name), "r+b") as f:
                f.truncate(30)
        r = self.chains(2, *flags)
        self.assert_one_line_error(r, chain4, "torn", "its previous record .prev is no better",
                                   program="checkpoint_chains")
        with open(os.path.join(folder, "afresh-4"), "w"):
            pass
        r = self.chains(2, *flags)
        err = r.stderr.decode()
        self.assertEqual(r.returncode, 0, err)
        self.assertIn("mcmclb: chain 4 starts anew, as the file afresh-4 in ", err)
        self.assertIn("1 starts afresh, having none (chain 4)", err)
        self.assertFalse(os.path.exists(os.path.join(folder, "afresh-4")), "asked once, done once")
        self.assert_like_the_reference(self.path("a.txt"), self.path("t.csv"), "chain 4 anew")
        with open(self.path("a.txt")) as f:
            self.assertEqual([int(l.split()[2]) for l in f], [-1] * 4 + [0] + [-1] * 4)
        for name in ("chain-3", "chain-3.prev"):
            os.remove(os.path.join(folder, name))
        r = self.chains(2, *flags)
        self.assert_one_line_error(r, "chain-3", "make an empty file afresh-3 in the folder to start the chain anew",
                                   program="checkpoint_chains")
        os.remove(os.path.join(folder, "saved", "3"))  # its mark too: the meta file still lists it
        r = self.chains(2, *flags)
        self.assert_one_line_error(r, "chain-3", "make an empty file afresh-3", program="checkpoint_chains")


def heap_lines(stdout):
    """Per rank of a spread run of checkpoint_chains: its heap's peak over the run, its largest block, the largest
    piece it held and the whole state's bytes."""
    found = re.findall(rb"heap: rank (\d+) peak (\d+) largest (\d+) piece (\d+) state (\d+)", stdout)
    return [dict(zip(("rank", "peak", "largest", "piece", "state"), map(int, f))) for f in found]


class SpreadMemory(CheckpointCase):
    """A spread state of 2 MiB (262144 rows) that no rank holds whole, as the heap shows (tests/checkpoint_chains.cpp
    counts every block the program and the library take): in groups of 2 ranks or more, every rank's heap stays below
    the whole state, and at any group size within twice the largest piece it held, its largest block one piece. Each
    run's answers are one rank's bits. The quick test: a merging balancer at 4 ranks in groups of 2, failing mid-run
    (a chain throws), resumed from its checkpoints at 3 ranks and at 2, about 3 s. SPREAD_MEMORY_ALL=1 (the full
    tier's test): every balancer at 1 to 4 ranks in groups of 1 and more, each failed and resumed at another count.
    A piece cut short falls back one generation (about 1 s)."""

    ROWS = 262144
    SLACK = 256 * 1024  # the library's own blocks besides the state: a few KiB, here a quarter of a MiB at most
    SPREAD = ("--spread", "1", "--chains", "4", "--rows", str(ROWS))

    def assert_never_whole(self, r, what):
        ranks = heap_lines(r.stdout)
        self.assertTrue(ranks, what + ": every rank's heap\n" + r.stdout.decode()[-500:])
        for h in ranks:
            said = f"{what}, rank {h['rank']}: {h}"
            self.assertEqual(h["state"], 8 * self.ROWS, said)
            self.assertLessEqual(h["largest"], h["piece"] + self.SLACK, said + ": no block beyond one piece")
            self.assertLessEqual(h["peak"], 2 * h["piece"] + self.SLACK, said + ": the heap within two pieces")
            if h["piece"] < h["state"]:  # every group it was in had 2 members or more
                self.assertLess(h["peak"], h["state"], said + ": never the whole state")

    def run_spread(self, ranks, group, what, *args, status=0):
        r = self.chains(ranks, *self.SPREAD, "--mcmclb-group-size", str(group), *args)
        self.assertEqual(r.returncode, status, what + f"\n{r.stderr.decode()[-2000:]}")
        if status == 0:
            self.assert_never_whole(r, what)
        return r

    def fail_then_resume(self, name, balancer, again, group_again):
        """A run at 4 ranks in groups of 2 whose chain 1 throws at its item 5, checkpoints every 2 items; then the
        same command at `again` ranks in groups of group_again: one rank's answers and every item once."""
        expected, _ = self.reference(*self.SPREAD)
        flags = ["--mcmclb-balancer", balancer, "--mcmclb-checkpoint", self.path(f"ck-{name}"),
                 "--mcmclb-checkpoint-every-items", "2", "--mcmclb-record", self.path(f"t-{name}.csv"), "--out",
                 self.path(f"a-{name}.txt")]
        what = f"{balancer}: failed at 4 ranks in groups of 2, again at {again} in groups of {group_again}"
        r = self.run_spread(4, 2, what, *flags, "--fail-at", "5", status=3)
        self.assertIn(b"failing as --fail-at asked", r.stderr)
        r = self.run_spread(again, group_again, what, *flags)
        self.assertRegex(r.stderr, rb"chain 1 at item [2-5]\b", what + ": chain 1 went on from its pieces")
        self.assert_like_the_reference(self.path(f"a-{name}.txt"), self.path(f"t-{name}.csv"), what, *self.SPREAD)
        pieces = os.path.join(self.path(f"ck-{name}"), "pieces")
        self.assertTrue(os.path.isdir(pieces) and os.listdir(pieces), what + ": each member wrote its piece")

    def test_a_torn_piece_falls_back_one_generation(self):
        """A member's piece of chain 1's latest checkpoint cut short: the chain goes on from its previous record,
        whose pieces stay until a newer one stands, said in a line, to one rank's bits; the bad record set aside."""
        folder = self.path("ck")
        flags = ["--mcmclb-balancer", "none", "--mcmclb-checkpoint", folder, "--mcmclb-checkpoint-every-items", "1",
                 "--mcmclb-record", self.path("t.csv"), "--out", self.path("a.txt")]
        self.run_spread(2, 2, "failed", *flags, "--fail-at", "5", status=3)
        piece = os.path.join(folder, "pieces", "1", "5-1-of-2")
        with open(piece, "r+b") as f:
            f.truncate(1000)
        r = self.run_spread(4, 2, "resumed", *flags)
        self.assertIn(f"{folder}/chain-1: its piece {piece} is torn: 1000 bytes, where it had ".encode(), r.stderr)
        self.assertIn(b"chain 1 goes on from its previous record (before item 4)", r.stderr)
        self.assertTrue(os.path.exists(os.path.join(folder, "chain-1.bad")), "the bad record kept for a look")
        self.assert_like_the_reference(self.path("a.txt"), self.path("t.csv"), "fell back one generation",
                                       *self.SPREAD)

    def test_no_rank_holds_a_whole_state(self):
        expected, _ = self.reference(*self.SPREAD)
        if os.environ.get("SPREAD_MEMORY_ALL") != "1":
            self.fail_then_resume("q3", "mostwork", 3, 3)
            self.fail_then_resume("q2", "stealmerge", 2, 2)
            return
        restored = 0
        layouts = [(1, 1), (2, 1), (2, 2), (3, 1), (3, 3), (4, 1), (4, 2)]
        for i, balancer in enumerate(self.balancers):
            for ranks, group in layouts:
                what = f"{balancer} at {ranks} ranks in groups of {group}"
                with self.subTest(what):
                    r = self.run_spread(ranks, group, what, "--mcmclb-balancer", balancer, "--out",
                                        self.path(f"s-{i}-{ranks}-{group}.txt"))
                    self.assertEqual(answers(self.path(f"s-{i}-{ranks}-{group}.txt")), expected, what)
                    restored += int(re.search(rb"pieces restored: (\d+)", r.stdout).group(1))
            again, group_again = layouts[i % len(layouts)]
            with self.subTest(f"{balancer}: failed, again at {again} ranks in groups of {group_again}"):
                self.fail_then_resume(f"f{i}", balancer, again, group_again)
        self.assertGreater(restored, 0, "merges moved spread states")


if __name__ == "__main__":
    unittest.main()
