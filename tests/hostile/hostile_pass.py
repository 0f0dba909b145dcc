#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A hostile user's pass over every input surface of mcmclb, mcmclb-commbench and the plot scripts: study files,
command-line flags, output paths and results folders, each as a careless or hostile user gives them. Every case
runs under a time limit (a launch still running at it is a HANG, killed with all its processes) and is judged:

- bad input (kind "bad") must be refused with exit code 2 and ONE printable line on stderr, printed once (at 2
  ranks too, where the command is an MPI run), and nothing else on stderr;
- any case must not hang, crash (exit >= 128, or MPICH's abort lines), print raw control bytes or several lines
  of error, and no file named pwned may appear (nothing from a study or flag runs as a command).

Usage: tests/hostile/hostile_pass.py [--mcmclb build/mcmclb] [--commbench build/mcmclb-commbench] [--only CLASS]
Prints one line per case that fails, then a count per class; exit code 1 if any case failed. Takes a few minutes
on 2 cores (about 200 launches, most of them refused in milliseconds); ctest runs the regression tests of the
defects it found (tests/test_inputs.py), not this pass.
"""
import argparse
import os
import shutil
import stat
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.realpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests"))
import proc_tree  # noqa: E402

TIMEOUT_S = 20
POINT = "experiment: h\nT_ms: 1\nworkload: {model: uniform, items: 1}\nbalancer: none\n"  # at any rank count
POINT1 = POINT + "nprocs: 1\n"
POINT2 = POINT + "nprocs: 2\n"


class Pass:
    def __init__(self, mcmclb, commbench, only):
        self.mcmclb, self.commbench, self.only = mcmclb, commbench, only
        self.dir = tempfile.mkdtemp(prefix="mcmclb-hostile-")
        self.failures, self.counts, self.n = [], {}, 0
        # A null device of our own: an output that replaced a device (as root, --out /dev/null once made the
        # machine's /dev/null a regular file) then breaks only this copy.
        self.device = self.path("null-device")
        os.mknod(self.device, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        self.fifo = self.path("fifo.csv")
        os.mkfifo(self.fifo)

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def file(self, name, content):
        path = self.path(name)
        with open(path, "wb") as f:
            f.write(content if isinstance(content, bytes) else content.encode())
        return path

    def case(self, klass, label, command, kind="bad", ranks=None, fragments=()):
        """Runs command (a list; ranks: under mpiexec -n ranks) and judges it; kind "bad": must be refused with
        exit 2 and one line containing each fragment; "any": must only not hang, crash or print badly."""
        if self.only and self.only != klass:
            return
        self.n += 1
        self.counts.setdefault(klass, [0, 0])[0] += 1
        prefix = ["mpiexec", "-n", str(ranks)] if ranks else []
        work = tempfile.mkdtemp(dir=self.dir, prefix="cwd-")
        r = proc_tree.run(prefix + command, TIMEOUT_S, cwd=work)
        problems = []
        lines = [l for l in r.stderr.split(b"\n") if l.strip()]
        if r.timed_out:
            problems.append(f"HANG (killed after {TIMEOUT_S} s)")
        elif r.returncode >= 128 or r.returncode < 0 or b"BAD TERMINATION" in r.stderr or b"MPI_Abort" in r.stderr:
            problems.append(f"CRASH (exit {r.returncode})")
        elif kind == "bad" and r.returncode != 2:
            problems.append(f"exit {r.returncode}, not 2")
        if not r.timed_out and (kind == "bad" or r.returncode not in (0, 3)) and len(lines) > 1:
            problems.append(f"{len(lines)} lines on stderr")
        for line in lines:
            try:
                text = line.decode("utf-8")
            except UnicodeDecodeError:
                problems.append("stderr not UTF-8")
                break
            if not text.isprintable():
                problems.append("raw control bytes on stderr")
                break
        if kind == "bad" and lines and not r.timed_out:
            for fragment in fragments:
                if fragment not in lines[0].decode("utf-8", "replace"):
                    problems.append(f"the line does not name {fragment!r}")
        pwned = [os.path.join(b, "pwned") for b, _, names in os.walk(self.dir) if "pwned" in names]
        if pwned:
            problems.append("INJECTION: " + ", ".join(pwned))
            for p in pwned:
                os.remove(p)
        if problems:
            self.counts[klass][1] += 1
            shown = r.stderr[-400:].decode("utf-8", "backslashreplace").replace("\n", "\\n")
            self.failures.append(f"[{klass}] {label}: {'; '.join(problems)}; stderr: {shown}")
        shutil.rmtree(work, ignore_errors=True)

    # ---- the surfaces

    def yaml_files(self):
        cases = [
            ("string for an integer", POINT + "G: abc\n", ["key G"]),
            ("bool for a number", POINT.replace("T_ms: 1", "T_ms: true"), ["key T_ms"]),
            ("map for a string", POINT + "balancer: {a: 1}\n", ["key balancer"]),
            ("huge reps", POINT + "reps: 1e30\n", ["key reps"]),
            ("2^31 nprocs", POINT + "nprocs: 2147483648\n", ["key nprocs"]),
            ("2^63 seed", POINT + "work: {seed: 9223372036854775808}\n", ["work.seed"]),
            ("2^64 seed", POINT + "work: {seed: 18446744073709551616}\n", ["work.seed"]),
            ("negative T_ms", POINT.replace("T_ms: 1", "T_ms: -1"), ["key T_ms"]),
            ("negative nprocs", POINT + "nprocs: -4\n", ["key nprocs"]),
            ("negative reps", POINT + "reps: -1\n", ["key reps"]),
            ("zero reps", POINT + "reps: 0\n", ["key reps"]),
            ("negative interval", POINT.replace("none", "collective") + "interval: -1\n", ["key interval"]),
            ("negative seed", POINT + "work: {seed: -1}\n", ["work.seed"]),
            ("negative jitter", POINT + "work: {jitter_pct: -5}\n", ["jitter_pct"]),
            ("string nan", POINT.replace("T_ms: 1", "T_ms: 'nan'"), ["key T_ms"]),
            ("string inf", POINT.replace("T_ms: 1", "T_ms: inf"), ["key T_ms"]),
            ("string 1e999", POINT.replace("T_ms: 1", "T_ms: 1e999"), ["key T_ms"]),
            ("jitter .inf", POINT + "work: {jitter_pct: .inf}\n", ["jitter_pct"]),
            ("hex integer", POINT + "G: 0x1\n", []),
            ("integer with junk", POINT + "nprocs: 4abc\n", ["key nprocs"]),
            ("float for an integer", POINT + "nprocs: 1.5\n", ["key nprocs"]),
            ("unicode experiment", POINT.replace("experiment: h", "experiment: héllo"), ["key experiment"]),
            ("unicode key", POINT + "T_mś: 1\n", ["unknown key"]),
            ("right-to-left override", POINT.replace("experiment: h", "experiment: \"a\\u202eb\""),
             ["key experiment"]),
            ("duplicate top key", POINT + "T_ms: 2\n", ["T_ms"]),
            ("duplicate nested key", POINT.replace("{model: uniform, items: 1}", "{model: uniform, model: cyclic}"),
             ["model"]),
            ("merge key", "base: &b {T_ms: 1}\n" + POINT, ["base"]),
            ("<< merge", POINT.replace("workload: {model: uniform, items: 1}",
                                       "workload:\n  <<: {model: uniform}\n  items: 1"), []),
            ("anchor reused", POINT.replace("T_ms: 1", "T_ms: &t 1\nG: *t"), []),
            ("python tag", POINT + "x: !!python/object/apply:os.system ['touch pwned']\n", []),
            ("binary tag", POINT.replace("experiment: h", "experiment: !!binary aGVsbG8="), []),
            ("empty file", "", ["holds no keys"]),
            ("only ---", "---\n", ["holds no keys"]),
            ("only ...", "...\n", []),
            ("a list at the top", "- 1\n- 2\n", []),
            ("a scalar at the top", "hello\n", []),
            ("tab indentation", POINT + "workload:\n\tmodel: uniform\n", []),
            ("shell in experiment", POINT.replace("experiment: h", "experiment: '$(touch pwned)'"),
             ["key experiment"]),
            ("shell in out", POINT + "out: '$(touch pwned)/x'\n", []),
            ("shell in method", POINT.replace("none", "collective") + "method: '`touch pwned`'\n", ["key method"]),
            ("CRLF study file", POINT.replace("\n", "\r\n"), []),
            ("latin-1 bytes", POINT.encode() + b"# caf\xe9\n", []),
            ("out to a device", POINT + "out: DEVICE\n", ["DEVICE"]),
            ("nprocs list with a string", POINT + "nprocs: [1, two]\n", ["key nprocs"]),
            ("empty axis", POINT.replace("T_ms: 1", "T_ms: []"), ["key T_ms"]),
            ("null value", POINT.replace("T_ms: 1", "T_ms: ~"), ["key T_ms"]),
            ("zip of unequal lengths", POINT + "zip: {T_ms: [1, 2], G: [1]}\n", ["zip"]),
        ]
        for label, content, fragments in cases:
            if isinstance(content, str):
                content = content.replace("DEVICE", self.device)
            fragments = [f.replace("DEVICE", self.device) for f in fragments]
            study = self.file(f"y-{self.n}.yaml", content)
            kind = "any" if not fragments else "bad"
            # plan needs nprocs; it writes nothing, so an output folder that cannot be one is no error for it
            raw = content if isinstance(content, bytes) else content.encode()
            planned = study if b"nprocs" in raw or raw.strip(b"-\n") == b"" else \
                self.file(f"y-{self.n}-plan.yaml", content + ("nprocs: 1\n" if isinstance(content, str) else
                                                               b"\nnprocs: 1\n"))
            self.case("yaml", label + " (plan)", [self.mcmclb, "plan", planned],
                      "any" if "out:" in str(content) else kind, fragments=fragments)
            out = [] if "out:" in str(content) else ["--out", self.path(f"o-{self.n}")]
            self.case("yaml", label + " (run, 2 ranks)", [self.mcmclb, "run", study, *out], kind, ranks=2,
                      fragments=fragments)
        big = self.path("big.yaml")
        with open(big, "wb") as f:
            f.write(POINT.encode() + b"#" + b"x" * (2 << 20) + b"\n")
        for cmd in (["plan", big], ["sweep", big, "--launcher", "local", "--dry-run"], ["status", big]):
            self.case("size", f"2 MiB study ({cmd[0]})", [self.mcmclb, *cmd], fragments=["at most 1 MiB"])
        self.case("size", "2 MiB study (run)", [self.mcmclb, "run", big], ranks=2, fragments=["at most 1 MiB"])
        self.case("size", "2 MiB groups file (commbench)", [self.commbench, "--groups", big], ranks=2,
                  fragments=["--groups", "at most 1 MiB"])

    def flags(self):
        study = self.file("flags.yaml", POINT1)
        study2 = self.file("flags2.yaml", POINT2)
        m, c = self.mcmclb, self.commbench
        cases = [
            # (label, command, ranks, fragments)
            ("no command", [m], None, ["missing command"]),
            ("empty command", [m, ""], None, []),
            ("unknown command", [m, "frobnicate"], None, ["frobnicate"]),
            ("command with escapes", [m, "\x1b[2Jx"], None, []),
            ("plan no study", [m, "plan"], None, ["STUDY.yaml"]),
            ("plan empty study", [m, "plan", ""], None, ["STUDY.yaml"]),
            ("plan two studies", [m, "plan", study, study], None, []),
            ("plan --set missing value", [m, "plan", study, "--set"], None, ["--set"]),
            ("plan --set no =", [m, "plan", study, "--set", "T_ms"], None, ["--set"]),
            ("plan --set empty", [m, "plan", study, "--set", ""], None, ["--set"]),
            ("plan --set =1", [m, "plan", study, "--set", "=1"], None, ["--set"]),
            ("plan --set unknown key", [m, "plan", study, "--set", "nosuch=1"], None, ["nosuch"]),
            ("plan --set nested alias bomb", [m, "plan", study, "--set",
                                              "T_ms=[&a [1,1,1,1,1,1,1,1,1,1], [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]]"],
             None, []),
            ("plan --verbose=1", [m, "plan", study, "--verbose=1"], None, ["--verbose=1"]),
            ("sweep no launcher", [m, "sweep", study], None, ["--launcher"]),
            ("sweep launcher empty", [m, "sweep", study, "--launcher", ""], None, ["--launcher"]),
            ("sweep launcher junk", [m, "sweep", study, "--launcher", "local\nx"], None, ["--launcher"]),
            ("sweep launcher missing", [m, "sweep", study, "--launcher"], None, ["--launcher"]),
            ("sweep --out=", [m, "sweep", study, "--launcher", "local", "--out="], None, ["--out"]),
            ("sweep --out ''", [m, "sweep", study, "--launcher", "local", "--dry-run", "--out", ""], None,
             ["--out", "empty"]),
            ("sweep --jobs-dir ''", [m, "sweep", study, "--launcher", "slurm", "--dry-run", "--jobs-dir", ""],
             None, ["--jobs-dir", "empty"]),
            ("sweep --out twice", [m, "sweep", study, "--launcher", "local", "--dry-run", "--out", "a", "--out",
                                   "b"], None, ["--out"]),
            ("sweep --launcher twice", [m, "sweep", study, "--launcher", "local", "--launcher", "slurm",
                                        "--dry-run"], None, ["--launcher"]),
            ("sweep --platform without smpi", [m, "sweep", study, "--launcher", "local", "--platform", "x"], None,
             ["--platform"]),
            ("sweep --platform ''", [m, "sweep", study, "--launcher", "smpi", "--dry-run", "--platform", ""], None,
             ["--platform", "empty"]),
            ("sweep --platform missing file", [m, "sweep", study, "--launcher", "smpi", "--dry-run", "--platform",
                                               self.path("nope.xml")], None, ["nope.xml"]),
            ("sweep --platform a folder", [m, "sweep", study, "--launcher", "smpi", "--dry-run", "--platform",
                                           self.dir], None, []),
            ("status --out ''", [m, "status", study, "--out", ""], None, ["--out", "empty"]),
            ("status --launch 0", [m, "status", study, "--launch", "0"], None, ["--launch"]),
            ("status --launch 3x", [m, "status", study, "--launch", "3x"], None, ["--launch"]),
            ("status --launch overflow", [m, "status", study, "--launch", "99999999999999999999"], None,
             ["--launch"]),
            ("status --launch absent size", [m, "status", study, "--launch", "7"], None, ["--launch"]),
            ("status --record-failures -1", [m, "status", study, "--launch", "1", "--record-failures", "-1"],
             None, ["--record-failures"]),
            ("status --record-failures overflow", [m, "status", study, "--launch", "1", "--record-failures",
                                                   "99999999999999999999999"], None, ["--record-failures"]),
            ("status --record-failures no launch", [m, "status", study, "--record-failures", "1"], None,
             ["--record-failures"]),
            ("status --launcher junk", [m, "status", study, "--launcher", "\x07"], None, ["--launcher"]),
            ("run no config", [m, "run"], 2, ["CONFIG.yaml"]),
            ("run empty config", [m, "run", ""], 2, ["CONFIG.yaml"]),
            ("run --out missing", [m, "run", study, "--out"], 2, ["--out"]),
            ("run --out=", [m, "run", study, "--out="], 2, ["--out"]),
            ("run --points junk", [m, "run", study2, "--points", "1x", "--out", self.path("p1")], 2, ["--points"]),
            ("run --points overflow", [m, "run", study2, "--points", "18446744073709551617",
                                       "--out", self.path("p2")], 2, ["--points"]),
            ("run --points negative", [m, "run", study2, "--points", "-1", "--out", self.path("p3")], 2,
             ["--points"]),
            ("run --points range", [m, "run", study2, "--points", "0-3", "--out", self.path("p4")], 2, ["--points"]),
            ("run --points empty item", [m, "run", study2, "--points", "0,,0", "--out", self.path("p5")], 2,
             ["--points"]),
            ("run wrong nprocs", [m, "run", study, "--out", self.path("p6")], 2, ["nprocs"]),
            ("run --resume=1", [m, "run", study2, "--resume=1"], 2, ["--resume=1"]),
            ("run unknown flag", [m, "run", study2, "--frobnicate"], 2, ["--frobnicate"]),
            ("run flag with escapes", [m, "run", study2, "--\x1b[31m"], 2, []),
            ("run --set non-UTF-8", [m, "run", study2, "--set", "experiment=\udcff", "--out", self.path("p7")], 2,
             ["experiment"]),
            ("commbench unknown flag", [c, "--frobnicate", "1"], 2, ["--frobnicate"]),
            ("commbench flag missing value", [c, "--reps"], 2, ["--reps"]),
            ("commbench --reps junk", [c, "--reps", "3x"], 2, ["--reps"]),
            ("commbench --reps overflow", [c, "--reps", "99999999999999999999"], 2, ["--reps"]),
            ("commbench --reps 0", [c, "--reps", "0"], 2, ["--reps"]),
            ("commbench --reps escapes", [c, "--reps", "\x1b[2J"], 2, ["--reps"]),
            ("commbench --rep-time nan", [c, "--rep-time", "nan"], 2, ["--rep-time"]),
            ("commbench --rep-time inf", [c, "--rep-time", "inf"], 2, ["--rep-time"]),
            ("commbench --rep-time escapes", [c, "--rep-time", "1\x1b[2J"], 2, ["--rep-time"]),
            ("commbench --sizes 0", [c, "--sizes", "0"], 2, ["--sizes"]),
            ("commbench --sizes too big", [c, "--sizes", "3"], 2, ["--sizes"]),
            ("commbench --sizes overflow", [c, "--sizes", "99999999999999999999"], 2, ["--sizes"]),
            ("commbench --sizes empty", [c, "--sizes", ""], 2, ["--sizes"]),
            ("commbench --methods unknown", [c, "--methods", "nope"], 2, ["--methods"]),
            ("commbench --methods escapes", [c, "--methods", "\x1b[2J"], 2, ["--methods"]),
            ("commbench --filter bad regex", [c, "--filter", "("], 2, ["--filter"]),
            ("commbench --filter escapes", [c, "--filter", "(\x1b"], 2, ["--filter"]),
            ("commbench --filter catastrophic", [c, "--filter", "(a+)+$", "--methods", "range", "--reps", "1",
                                                 "--out", self.path("cb2.csv")], 2, ["--filter"]),
            ("commbench --out ''", [c, "--out", ""], 2, ["--out", "empty"]),
            ("commbench --groups ''", [c, "--groups", ""], 2, ["--groups", "empty"]),
            ("commbench --groups missing file", [c, "--groups", self.path("nope.yaml")], 2, ["--groups"]),
            ("commbench --groups a folder", [c, "--groups", self.dir], 2, ["--groups"]),
            ("commbench --groups not groups", [c, "--groups", study], 2, ["--groups"]),
            ("commbench --warmup -1", [c, "--warmup", "-1"], 2, ["--warmup"]),
            ("commbench --reps twice", [c, "--reps", "1", "--reps", "2", "--methods", "nope"], 2, []),
            ("commbench --out=x", [c, "--out=x"], 2, []),
        ]
        for label, command, ranks, fragments in cases:
            self.case("flags", label, command, ranks=ranks, fragments=fragments)

    def outputs(self):
        study = self.file("out.yaml", POINT1)
        ro = self.path("readonly")
        os.mkdir(ro)
        subprocess.run(["mount", "--bind", ro, ro], capture_output=True)
        ro_mounted = subprocess.run(["mount", "-o", "remount,bind,ro", ro], capture_output=True).returncode == 0
        afile = self.file("a-file", "x")
        loop = self.path("loop")
        os.symlink(loop, loop)
        long_name = self.path("n" * 300)
        deep = self.path(*(["d" * 200] * 25))
        non_utf8 = os.fsencode(self.dir) + b"/caf\xe9"
        targets = [("a file where a folder is expected", afile), ("a folder under a file", os.path.join(afile, "x")),
                   ("a symlink loop", loop), ("under a symlink loop", os.path.join(loop, "x")),
                   ("a 300-byte name", long_name), ("a 5000-byte path", deep), ("/proc", "/proc/self/x"),
                   ("a device", self.device), ("a FIFO", self.fifo)]
        if ro_mounted:
            targets.append(("a read-only mount", os.path.join(ro, "x")))
        for label, out in targets:
            self.case("outputs", f"run --out {label}", [self.mcmclb, "run", study, "--out", out], ranks=2)
            self.case("outputs", f"sweep --out {label}", [self.mcmclb, "sweep", study, "--launcher", "local",
                                                          "--out", out])
            self.case("outputs", f"status --out {label}", [self.mcmclb, "status", study, "--out", out],
                      kind="any")
            # commbench's --out is a file: a symlink (loop or not) at that path is replaced by the file, as any
            # rename replaces it, and a file there is overwritten; neither is an error.
            csv_out = out if label in ("a device", "a FIFO", "a symlink loop") else out + ".csv"
            self.case("outputs", f"commbench --out {label}",
                      [self.commbench, "--out", csv_out, "--reps", "1", "--methods", "range"], ranks=2,
                      kind="any" if label in ("a symlink loop", "a file where a folder is expected") else "bad")
            png = out if label != "a 5000-byte path" else out + ".png"
            self.case("outputs", f"fig2.py -o {label}",
                      [sys.executable, os.path.join(ROOT, "plots", "fig2.py"), os.path.join(ROOT, "tests",
                                                                                       "fixtures", "results-small"),
                       "-o", png])
        fifo_png = self.path("fifo.png")
        os.mkfifo(fifo_png)
        self.case("outputs", "fig2.py -o a FIFO .png", [sys.executable, os.path.join(ROOT, "plots", "fig2.py"),
                                                         os.path.join(ROOT, "tests", "fixtures", "results-small"),
                                                         "-o", fifo_png], fragments=["FIFO"])
        self.case("outputs", "sweep --out a leading dash", [self.mcmclb, "sweep", study, "--launcher", "local",
                                                           "--dry-run", "--out", "-rf"], kind="any")
        if not os.path.exists(self.device) or not stat.S_ISCHR(os.stat(self.device).st_mode):
            self.failures.append("[outputs] the null device given as an output was replaced")
        self.case("outputs", "run --out non-UTF-8 path", [self.mcmclb, "run", study, "--out",
                                                          os.fsdecode(non_utf8)], kind="any", ranks=2)
        for label, out in (("commbench --out a folder", self.dir),):
            self.case("outputs", label, [self.commbench, "--out", out], ranks=2)
        if ro_mounted:
            subprocess.run(["umount", ro], capture_output=True)

    def results_folders(self):
        study = self.file("res.yaml", POINT1)
        header = subprocess.run([self.mcmclb, "columns"], capture_output=True, text=True).stdout
        runs_header = [l.split(": ", 1)[1] for l in header.splitlines() if l.startswith("runs.csv: ")][0]

        def folder(name, files):
            d = self.path("res-" + name)
            os.makedirs(d, exist_ok=True)
            for fname, content in files.items():
                if content is None:
                    os.mkdir(os.path.join(d, fname))
                else:
                    with open(os.path.join(d, fname), "wb") as f:
                        f.write(content if isinstance(content, bytes) else content.encode())
            return d

        good = self.path("res-good")
        r = subprocess.run([self.mcmclb, "run", study, "--out", good], capture_output=True, timeout=60)
        if r.returncode != 0:
            self.failures.append(f"[results] could not make a results folder: {r.stderr!r}")
            return
        with open(os.path.join(good, "runs.csv"), "rb") as f:
            good_runs = f.read()
        row = good_runs.split(b"\n")[1]
        cases = {
            "empty runs.csv": {"runs.csv": ""},  # status: nothing done (exit 3); the plots: nothing to draw
            "header only": {"runs.csv": runs_header + "\n"},
            "binary junk": {"runs.csv": bytes(range(256)) * 8},
            "a folder named runs.csv": {"runs.csv": None},
            "CRLF runs.csv": {"runs.csv": good_runs.replace(b"\n", b"\r\n")},
            "CRLF row in the middle": {"runs.csv": good_runs + row + b"\r\n" + row + b"\n"},
            "damaged row in the middle": {"runs.csv": good_runs + row[:40] + b"\n" + row + b"\n"},
            "NUL in a row": {"runs.csv": good_runs + row[:40] + b"\0" + row[40:] + b"\n"},
            "unterminated quote": {"runs.csv": good_runs + b'"' + row + b"\n" + row + b"\n"},
        }
        for label, files in cases.items():
            d = folder(label.replace(" ", "-"), files)
            for name in ("ranks.csv", "events.csv"):
                if not os.path.exists(os.path.join(d, name)):
                    shutil.copy(os.path.join(good, name), d)
            no_rows = label in ("header only", "empty runs.csv")
            self.case("results", f"status: {label}", [self.mcmclb, "status", study, "--out", d],
                      fragments=["runs.csv"] if not no_rows else (), kind="bad" if not no_rows else "any")
            self.case("results", f"summary.py: {label}", [sys.executable, os.path.join(ROOT, "plots", "summary.py"),
                                                          d], fragments=["runs.csv"])
        perm = folder("perm000", {})
        for name in ("runs.csv", "ranks.csv", "events.csv"):
            shutil.copy(os.path.join(good, name), perm)
        os.chmod(os.path.join(perm, "runs.csv"), 0)
        self.case("results", "status: runs.csv mode 000 (as root: readable)", [self.mcmclb, "status", study,
                                                                                "--out", perm], kind="any")

    def run(self):
        for surface in (self.yaml_files, self.flags, self.outputs, self.results_folders):
            surface()
        for failure in self.failures:
            print(failure)
        print(f"{self.n} cases in {len(self.counts)} classes, {len(self.failures)} failed:",
              ", ".join(f"{k} {v[0] - v[1]}/{v[0]}" for k, v in self.counts.items()))
        shutil.rmtree(self.dir, ignore_errors=True)
        return 1 if self.failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mcmclb", default=os.path.join(ROOT, "build", "mcmclb"))
    parser.add_argument("--commbench", default=os.path.join(ROOT, "build", "mcmclb-commbench"))
    parser.add_argument("--only", choices=("yaml", "size", "flags", "outputs", "results"))
    args = parser.parse_args()
    return Pass(os.path.realpath(args.mcmclb), os.path.realpath(args.commbench), args.only).run()


if __name__ == "__main__":
    sys.exit(main())
