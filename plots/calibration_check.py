#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""How far a calibrated platform is from the machine it describes, call by call: the microbenchmarks timed for real
at P = 2 and simulated on the platform mcmclb calibrate wrote, each simulated time against the measured median at
every size. Writes errors.csv (what, method, size, the measured median with its 95 % interval, the simulated time and
the error in per cent) and provenance.csv.

One command, after `mpiexec -n 2 build/mcmclb calibrate --out DIR` on the same machine:

  plots/calibration_check.py DIR [--reps N] [--out OUT] [--busy PCT] [--build build] [--sim-build build-sim]

What it times, each a fresh measurement, none the calibration's own (so all out of sample):
  - pingpong: the one-way time of calibrate's ping-pong (mcmclb-pingpong) at every size calibrate times: the
    calibration was fitted to its own ping-pong, so the check measures a new one;
  - allreduce: an MPI_Allreduce of 8 B, 1 KiB, 64 KiB and 1 MiB (mcmclb-pingpong --allreduce), the slowest rank's;
  - create: communicator creation by each method at group sizes 1 and 2 (mcmclb-commbench, the median iteration);
  - merge and reduce: the kernel's own measure of a merge into a group of 2 (creating it and broadcasting a walker's
    state: create_s + bcast_s of calibration.csv) and of its group's reduction (reduce_s), from a compute-mode run
    under the finished rule pays (configs/merge-pays-p2.yaml's async pays all-atom point).
The real side runs N rounds (at least 6, default 8), each every benchmark once in a fresh random order, so a slow
spell of the host spreads over all of them; each benchmark's N values give a median and its 95 % interval. The
simulated side runs each once (a simulation is deterministic), on DIR/calibrated.xml with its hostfile and DIR/smpi.cfg.

P = 2 only, a core per rank: with more ranks than cores, MPICH's busy-polling ranks time the sharing of a core, not
the library. The host must have 2 CPUs for this process and be quiet (--busy, 10 % by default, /proc/stat over 1 s);
bad flags, a folder calibrate did not write, a busy host or an OUT that exists are one line and exit 2 before anything
is run or written."""
import os
import random
import shlex
import subprocess
import sys
from datetime import datetime, timezone

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcmclb_csv import (ArgumentParser, InputError, csv_text, fail, fnv1a64_hex, host_busy_pct,  # noqa: E402
                        library_name, positive_int, read_csv, refuse_busy, write_text_atomically)
from mcmclb_stats import Summary  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NPROCS = 2
ALLREDUCE_BYTES = (8, 1024, 65536, 1048576)
# commbench's creation methods (floor, its clock's floor, creates nothing); group sizes at P = 2.
METHODS = ("intercomm", "create_group", "from_group", "create", "split", "range")
GROUP_SIZES = (1, 2)
MERGE_STUDY = "configs/merge-pays-p2.yaml"
MERGE_SETS = ("balancer=async", "finished=pays", "work.move=all", "reps=1")
BENCHMARKS = ("pingpong", "allreduce", "commbench", "merge")
HEADER = ("what", "method", "size", "unit", "n", "measured_median_us", "measured_low_us", "measured_high_us",
          "simulated_us", "error_pct", "error_low_pct", "error_high_pct")
PROVENANCE = ("calibration", "calibration_utc", "calibration_commit", "calibration_host", "platform_fnv1a64",
              "mpi_library", "simgrid_version", "host", "cpus", "nprocs", "rounds", "order_seed", "busy_before_pct",
              "busy_after_pct", "git_commit", "utc_start", "utc_end", "command_line")
# What calibrate writes into its provenance.csv that this check records.
CALIBRATION_NEED = ("git_commit", "mpi_library", "nprocs", "host", "utc_start")


def rel(path):
    """path relative to the repository where it lies inside it: the commands and files then name no machine path."""
    path = os.path.abspath(path)
    return os.path.relpath(path, ROOT) if path.startswith(ROOT + os.sep) else path


def smpi_flags(path):
    """smpirun's flags of an smpi.cfg (one a line; blank lines and # comments skipped)."""
    with open(path, encoding="utf-8") as f:
        return [line.strip() for line in f if line.strip() and not line.strip().startswith("#")]


def check_calibration(folder):
    """The calibration folder's files and its provenance row; InputError where it is not one calibrate wrote."""
    if not os.path.isdir(folder):
        raise InputError(f"{folder}: " + ("is not a folder" if os.path.exists(folder) else "no such folder") +
                         " (allowed: a folder mcmclb calibrate --out wrote)")
    for name in ("calibrated.xml", "calibrated.hosts", "smpi.cfg", "provenance.csv"):
        if not os.path.isfile(os.path.join(folder, name)):
            raise InputError(f"{os.path.join(folder, name)}: no such file (allowed: a folder mcmclb calibrate --out "
                             f"wrote)")
    with open(os.path.join(folder, "calibrated.xml"), "rb") as f:
        head = f.read(200).lstrip()
    if not head.startswith(b"<?xml") and not head.startswith(b"<platform"):
        raise InputError(f"{os.path.join(folder, 'calibrated.xml')}: not an XML platform (allowed: the platform "
                         f"mcmclb calibrate wrote)")
    rows = read_csv(os.path.join(folder, "provenance.csv"), "calibrate-provenance.csv", CALIBRATION_NEED)
    if len(rows) != 1:
        raise InputError(f"{os.path.join(folder, 'provenance.csv')}: {len(rows)} rows (allowed: one, as calibrate "
                         f"writes it)")
    return rows[0]


def check_out(out):
    """OUT must be new, in an existing writable folder: a check never mixes its rounds with another's."""
    if os.path.lexists(out):
        raise InputError(f"{out}: exists (allowed: a new folder; each check writes its rounds afresh)")
    parent = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(parent) or not os.access(parent, os.W_OK):
        raise InputError(f"{out}: its folder {parent} is not an existing, writable folder (allowed: a new folder in "
                         f"one)")


def run(command, stdout=None, env=None, label=""):
    """Runs command from the repository's root; a failure ends the check with the command's exit code."""
    print("calibration_check:", label, " ".join(shlex.quote(c) for c in command), flush=True)
    with open(stdout, "w", encoding="utf-8") if stdout else open(os.devnull, "w") as out:
        code = subprocess.call(command, cwd=ROOT, stdout=out, env=env)
    if code != 0:
        print(f"calibration_check: {os.path.basename(command[0])} ... exited {code} ({label})", file=sys.stderr)
        sys.exit(code if code > 0 else 1)


class Commands:
    """The command of each benchmark, real (mpiexec, a core per rank) and simulated (smpirun on the platform)."""

    def __init__(self, calibration, build, sim_build):
        self.platform = rel(os.path.join(calibration, "calibrated.xml"))
        self.hosts = rel(os.path.join(calibration, "calibrated.hosts"))
        self.cfg = rel(os.path.join(calibration, "smpi.cfg"))
        self.flags = smpi_flags(os.path.join(ROOT, self.cfg))
        self.real = {"pingpong": rel(os.path.join(build, "mcmclb-pingpong")),
                     "commbench": rel(os.path.join(build, "mcmclb-commbench")),
                     "mcmclb": rel(os.path.join(build, "mcmclb"))}
        self.sim = {"pingpong": rel(os.path.join(sim_build, "mcmclb-pingpong-sim")),
                    "commbench": rel(os.path.join(sim_build, "mcmclb-commbench-sim")),
                    "mcmclb": rel(os.path.join(sim_build, "mcmclb-sim"))}
        for path in list(self.real.values()) + list(self.sim.values()):
            if not os.path.isfile(os.path.join(ROOT, path)):
                raise InputError(f"{path}: no such file (allowed: --build and --sim-build folders holding mcmclb, "
                                 f"mcmclb-pingpong and mcmclb-commbench, built)")

    def commbench_args(self, out):
        return ["--methods", ",".join(METHODS), "--sizes", ",".join(map(str, GROUP_SIZES)), "--reps", "1",
                "--filter", "/create/", "--out", out]

    def real_round(self, folder, order):
        """Every benchmark once, in order, into folder."""
        mpiexec = ["mpiexec", "-n", str(NPROCS)]
        for what in order:
            if what == "pingpong":
                run(mpiexec + [self.real["pingpong"]], os.path.join(folder, "pingpong.csv"), label="real")
            elif what == "allreduce":
                run(mpiexec + [self.real["pingpong"], "--allreduce", ",".join(map(str, ALLREDUCE_BYTES))],
                    os.path.join(folder, "allreduce.csv"), label="real")
            elif what == "commbench":
                run(mpiexec + [self.real["commbench"]] + self.commbench_args(rel(os.path.join(folder,
                                                                                              "commbench.csv"))),
                    label="real")
            else:
                sets = [a for s in MERGE_SETS for a in ("--set", s)]
                run([self.real["mcmclb"], "sweep", MERGE_STUDY, "--launcher", "local", "--out",
                     rel(os.path.join(folder, "merge"))] + sets, label="real")

    def simulated(self, folder):
        """Every benchmark once on the platform, into folder; the commbench simulation's host cost in commbench.time."""
        smpirun = ["smpirun", "-np", str(NPROCS), "-platform", self.platform, "-hostfile", self.hosts] + self.flags
        env = dict(os.environ, MCMCLB_PLATFORM=self.platform, MCMCLB_SMPI_CFG=" ".join(self.flags))
        run(smpirun + [self.sim["pingpong"]], os.path.join(folder, "pingpong.csv"), env=env, label="simulated")
        run(smpirun + [self.sim["pingpong"], "--allreduce", ",".join(map(str, ALLREDUCE_BYTES))],
            os.path.join(folder, "allreduce.csv"), env=env, label="simulated")
        run(["/usr/bin/time", "-v", "-o", rel(os.path.join(folder, "commbench.time"))] + smpirun +
            [self.sim["commbench"]] + self.commbench_args(rel(os.path.join(folder, "commbench.csv"))), env=env,
            label="simulated")
        sets = [a for s in MERGE_SETS for a in ("--set", s)]
        run([self.real["mcmclb"], "sweep", MERGE_STUDY, "--launcher", "smpi", "--platform", self.platform,
             "--smpi-flags", self.cfg, "--sim-binary", self.sim["mcmclb"], "--out", rel(os.path.join(folder, "merge"))]
            + sets, label="simulated")


def values(folder):
    """{(what, method, size, unit): microseconds} of one round's (or the simulation's) files in folder."""
    out = {}
    for r in read_csv(os.path.join(folder, "pingpong.csv"), "pingpong.csv", ("bytes", "one_way_us")):
        out[("pingpong", "", r["bytes"], "B")] = r["one_way_us"]
    for r in read_csv(os.path.join(folder, "allreduce.csv"), "allreduce.csv", ("bytes", "allreduce_us")):
        out[("allreduce", "", r["bytes"], "B")] = r["allreduce_us"]
    path = os.path.join(folder, "commbench.csv")
    for r in read_csv(path, "commbench.csv", ("method", "op", "nprocs", "group_size", "iter_median_us", "backend"),
                      filled=("iter_median_us",)):
        if r["op"] == "create" and r["method"] in METHODS:
            out[("create", r["method"], r["group_size"], "ranks")] = r["iter_median_us"]
    merge = os.path.join(folder, "merge")
    runs = read_csv(os.path.join(merge, "runs.csv"), "runs.csv", ("run_id", "method", "valid", "nprocs"))
    if len(runs) != 1 or runs[0]["valid"] is not True or runs[0]["nprocs"] != NPROCS:
        raise InputError(f"{merge}/runs.csv: not one valid run at P = {NPROCS} (allowed: the merge run this check "
                         f"made)")
    prov = read_csv(os.path.join(merge, "provenance.csv"), "provenance.csv", ("run_id", "oversubscribed"))
    if any(r["oversubscribed"] for r in prov):
        raise InputError(f"{merge}/provenance.csv: the run shared cores (oversubscribed; allowed: a core per rank)")
    method = runs[0]["method"] or ""
    sizes = {r["size"]: r for r in read_csv(os.path.join(merge, "calibration.csv"), "calibration.csv",
                                            ("size", "create_s", "reduce_s", "bcast_s"))}
    if NPROCS not in sizes:
        raise InputError(f"{merge}/calibration.csv: no row of size {NPROCS} (allowed: a calibrated run's)")
    row = sizes[NPROCS]
    out[("merge", method, NPROCS, "ranks")] = 1e6 * (row["create_s"] + row["bcast_s"])
    out[("reduce", "", NPROCS, "ranks")] = 1e6 * row["reduce_s"]
    return out


def comparisons(real_folders, sim_folder):
    """The rows of errors.csv (dicts of HEADER): each simulated time against the median of the real rounds."""
    sim = values(sim_folder)
    rounds = [values(f) for f in real_folders]
    rows = []
    for key, simulated in sim.items():
        measured = [r[key] for r in rounds if key in r]
        if len(measured) != len(rounds):
            raise InputError(f"{sim_folder}: {key[0]} {key[1]} at {key[2]} {key[3]} was simulated but not timed in "
                             f"every round (allowed: rounds of the same benchmarks)")
        s = Summary(measured)
        if not s.has_interval:
            raise InputError(f"{len(rounds)} rounds (allowed: at least 6, for the median's 95 % interval)")
        what, method, size, unit = key
        rows.append({"what": what, "method": method, "size": size, "unit": unit, "n": s.n,
                     "measured_median_us": s.median, "measured_low_us": s.lo, "measured_high_us": s.hi,
                     "simulated_us": simulated, "error_pct": 100 * (simulated / s.median - 1),
                     "error_low_pct": 100 * (simulated / s.hi - 1), "error_high_pct": 100 * (simulated / s.lo - 1)})
    return rows


def git_commit():
    """The repository's commit, -dirty where its tracked files differ from it (the evidence rule refuses those)."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""
    return head + ("-dirty" if dirty else "")


def utc_now():
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def main():
    p = ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("calibration", help="the folder mcmclb calibrate wrote (calibrated.xml, .hosts, smpi.cfg)")
    p.add_argument("--reps", type=positive_int, default=8, help="real rounds, at least 6 (default 8)")
    p.add_argument("--out", help="the new folder to write (default CALIBRATION/check)")
    p.add_argument("--busy", type=float, default=10.0, help="the busiest host allowed, per cent (default 10)")
    p.add_argument("--build", default=os.path.join(ROOT, "build"), help="the real build (default build/)")
    p.add_argument("--sim-build", default=os.path.join(ROOT, "build-sim"),
                   help="the simulation build (default build-sim/)")
    args = p.parse_args()
    started = utc_now()
    try:
        if args.reps < 6:
            raise InputError(f"--reps {args.reps}: too few (allowed: at least 6, for the median's 95 % interval)")
        if not 0 <= args.busy <= 100:
            raise InputError(f"--busy {args.busy:g}: not a share (allowed: a per cent from 0 to 100)")
        calibration = os.path.abspath(args.calibration)
        cal = check_calibration(calibration)
        with open(os.path.join(calibration, "calibrated.xml"), "rb") as f:
            platform_hash = fnv1a64_hex(f.read())
        out = os.path.abspath(args.out or os.path.join(calibration, "check"))
        check_out(out)
        commands = Commands(calibration, args.build, args.sim_build)
        cpus = len(os.sched_getaffinity(0))
        if cpus < NPROCS:
            raise InputError(f"{cpus} CPU(s) for this process (allowed: at least {NPROCS}, a core per rank; more "
                             f"ranks than cores time the sharing of a core)")
        busy_before = host_busy_pct()
        refuse_busy(busy_before, args.busy, "its timings")
    except InputError as e:
        fail(sys.argv[0], str(e))
    seed = random.SystemRandom().randrange(2 ** 31)
    order = random.Random(seed)
    os.makedirs(os.path.join(out, "real"))
    real = []
    for k in range(1, args.reps + 1):
        folder = os.path.join(out, "real", f"round-{k}")
        os.makedirs(folder)
        benchmarks = list(BENCHMARKS)
        order.shuffle(benchmarks)
        print(f"calibration_check: round {k} of {args.reps}: {', '.join(benchmarks)}", flush=True)
        commands.real_round(folder, benchmarks)
        real.append(folder)
    busy_after = host_busy_pct()
    sim = os.path.join(out, "sim")
    os.makedirs(sim)
    commands.simulated(sim)
    try:
        rows = comparisons(real, sim)
        sim_rows = read_csv(os.path.join(sim, "commbench.csv"), "commbench.csv", ("simgrid_version",))
    except InputError as e:
        fail(sys.argv[0], str(e))
    write_text_atomically(os.path.join(out, "errors.csv"), csv_text(HEADER, rows))
    prov = {"calibration": rel(calibration), "calibration_utc": cal["utc_start"],
            "calibration_commit": cal["git_commit"], "calibration_host": cal["host"],
            "platform_fnv1a64": platform_hash,
            "mpi_library": library_name(cal["mpi_library"]), "simgrid_version": sim_rows[0]["simgrid_version"],
            "host": os.uname().nodename, "cpus": cpus, "nprocs": NPROCS, "rounds": args.reps, "order_seed": seed,
            "busy_before_pct": busy_before, "busy_after_pct": busy_after, "git_commit": git_commit(),
            "utc_start": started, "utc_end": utc_now(),
            "command_line": " ".join(shlex.quote(rel(a) if os.path.exists(a) else a) for a in sys.argv)}
    write_text_atomically(os.path.join(out, "provenance.csv"), csv_text(PROVENANCE, [prov]))
    worst = max(rows, key=lambda r: abs(r["error_pct"]))
    print(f"calibration_check: wrote {out}/errors.csv ({len(rows)} rows; the largest error {worst['error_pct']:+.1f} % "
          f"at {worst['what']} {worst['method']} {worst['size']} {worst['unit']}) and provenance.csv")


if __name__ == "__main__":
    main()
