#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Soak test of the walker-group kernel: N seeded random `mcmclb run` launches under `mpiexec -n P`, each with a
hard timeout, counting hangs, invalid runs and crashes. Standard library only.

Run k uses the seed S + k (S from --seed) and draws everything from it: the rank count P (from --ranks), G dividing
P, T_ms in 1-5 ms, a random, lognormal or cyclic workload of at most a few dozen items per chain, work.jitter_pct up
to 50, the balancer (async; lookahead, mostwork, stealmerge or collective with an interval; steal; or none) and one of
the methods that balancer accepts, and chains_per_group W from 1 to 4 (steal needs W > 1 to move anything). A run
takes well under 2 s on 2 cores, so a run still going after --timeout seconds is a hang.

    tests/soak.py --runs 50                      # MCMCLB_BIN or build/mcmclb
    tests/soak.py --seed 1234 --runs 1 -v        # replays the run that had seed 1234

Verdicts: hang (killed at the timeout, with every process of the launch), invalid (exit 3, valid=false in runs.csv,
or exit 0 without exactly one valid runs.csv row, P ranks.csv rows and P/G initial events.csv rows), crash (any
other non-zero exit). Prints `runs N, hangs H, invalid I, crashes C`, the wall time and, for each failing run, its
seed and how to replay it. Exit code 0 when all runs passed, 1 otherwise, 2 for bad arguments.
"""
import argparse
import csv
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # proc_tree, beside this file
import proc_tree  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_BIN = os.environ.get("MCMCLB_BIN", os.path.join(HERE, "..", "build", "mcmclb"))
METHODS = {"async": ["intercomm", "create_group", "from_group", "range"],
           "lookahead": ["range", "intercomm", "create_group", "from_group"],
           "mostwork": ["range", "intercomm", "create_group", "from_group"],
           "collective": ["create", "split", "range"], "none": [""], "steal": [""],
           "stealmerge": ["range", "intercomm", "create_group", "from_group"]}
# The finished rules each balancer offers (mcmclb/run_spec.hpp, FinishedRule).
FINISHED = {"async": ["retire", "coalesce"], "lookahead": ["retire", "coalesce"], "mostwork": ["coalesce"],
            "stealmerge": ["coalesce"]}
INTERVALS = [1, 2, 3, 4, 8, 16]


class ArgumentParser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2, like every other command of the project
        self.exit(2, f"soak.py: {message} ({' '.join(self.format_usage().split())})\n")


def rank_list(text):
    try:
        ranks = sorted({int(x) for x in text.split(",")})
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a list of integers (allowed: e.g. 1,2,3,4,8)") from None
    if not ranks or ranks[0] < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: rank counts must be >= 1")
    return ranks


def positive(kind):
    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a {kind.__name__}") from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"{text} must be > 0")
        return value

    return parse


def draw_run(seed, ranks, methods):
    """The parameters of the run with this seed: a pure function of (seed, ranks, methods), so it can be replayed."""
    rng = random.Random(seed)
    p = rng.choice(ranks)
    g = rng.choice([d for d in range(1, p + 1) if p % d == 0])
    model = rng.choice(["random", "lognormal", "cyclic"])
    if model == "random":
        low = rng.randint(0, 4)
        workload = {"model": model, "min": low, "max": low + rng.randint(0, 16), "seed": rng.randint(0, 2**31)}
    elif model == "lognormal":
        workload = {"model": model, "median": round(rng.uniform(1, 10), 2), "sigma": round(rng.uniform(0, 1.5), 2),
                    "max": rng.randint(1, 24), "seed": rng.randint(0, 2**31)}
    else:
        workload = {"model": model, "scale": rng.randint(1, 3), "period": rng.randint(1, 8)}
    balancer = rng.choices(["async", "lookahead", "mostwork", "collective", "none"], weights=[25, 25, 25, 25, 10])[0]
    run = {"nprocs": p, "G": g, "T_ms": rng.randint(1, 5), "workload": workload,
           "work": {"mode": "sleep", "jitter_pct": round(rng.uniform(0, 50), 1), "seed": rng.randint(0, 2**31)},
           "balancer": balancer, "method": rng.choice(methods[balancer])}
    if balancer in ("collective", "lookahead", "mostwork"):  # lookahead, mostwork: the window k, in items of T
        run["interval"] = rng.choice(INTERVALS)
    if balancer in FINISHED:  # drawn after the others, so that every other draw of a seed is what it was before it
        run["finished"] = rng.choice(FINISHED[balancer])
    # Several chains per group and the balancers that move them, drawn last for the same reason.
    run["chains_per_group"] = rng.choice([1, 1, 2, 3, 4])
    mover = rng.random()
    if mover < 0.2:
        run.pop("interval", None)
        run.pop("finished", None)
        run.update(balancer="steal", method="")
        if mover >= 0.1:  # steal, then mostwork's regrouping
            run.update(balancer="stealmerge", method=rng.choice(methods["stealmerge"]),
                       interval=rng.choice(INTERVALS), finished="coalesce")
    return run


def yaml_of(run):
    """The experiment file of run (flow-style YAML; every value is a number or a plain name)."""
    def flow(d):
        return "{" + ", ".join(f"{k}: {v}" for k, v in d.items()) + "}"

    lines = ["experiment: soak", f"nprocs: {run['nprocs']}", f"G: {run['G']}", f"T_ms: {run['T_ms']}",
             f"workload: {flow(run['workload'])}", f"work: {flow(run['work'])}", f"balancer: {run['balancer']}",
             f"chains_per_group: {run.get('chains_per_group', 1)}", "reps: 1"]
    if run["method"]:
        lines.append(f"method: {run['method']}")
    if "interval" in run:
        lines.append(f"interval: {run['interval']}")
    if "finished" in run:
        lines.append(f"finished: {run['finished']}")
    return "\n".join(lines) + "\n"


def describe(run):
    w = run["workload"]
    name = run["balancer"] + (f"({run['interval']})" if "interval" in run else "") + (
        f" {run['method']}" if run["method"] else "") + (f" {run['finished']}" if "finished" in run else "")
    params = ",".join(f"{k}={v}" for k, v in w.items() if k != "model")
    return (f"P={run['nprocs']} G={run['G']} W={run.get('chains_per_group', 1)} T_ms={run['T_ms']} "
            f"{w['model']}({params}) jitter={run['work']['jitter_pct']}% {name}")


# ---- Launching and killing: the process-tree killer shared with the other launching tests (tests/proc_tree.py).


def read_rows(path):
    try:
        with open(path, newline="") as f:
            return list(csv.DictReader(f))
    except OSError:
        return None


def check_output(out, run):
    """'' when out holds exactly one complete valid run of run's shape, else what is wrong."""
    runs = read_rows(os.path.join(out, "runs.csv"))
    if not runs or len(runs) != 1:
        return f"runs.csv holds {0 if runs is None else len(runs)} rows, expected 1"
    row = runs[0]
    if row.get("valid") != "true":
        return f"valid={row.get('valid')}: {row.get('violations', '')}"
    ranks = [r for r in read_rows(os.path.join(out, "ranks.csv")) or [] if r.get("run_id") == row["run_id"]]
    if len(ranks) != run["nprocs"]:
        return f"ranks.csv holds {len(ranks)} rows of the run, expected {run['nprocs']}"
    events = read_rows(os.path.join(out, "events.csv")) or []
    initial = [e for e in events if e.get("run_id") == row["run_id"] and e.get("kind") == "initial"]
    if len(initial) != run["nprocs"] // run["G"]:
        return f"events.csv holds {len(initial)} initial groups, expected {run['nprocs'] // run['G']}"
    return ""


def last_line(path):
    try:
        with open(path, errors="replace") as f:
            lines = [line.strip() for line in f if line.strip()]
    except OSError:
        return ""
    return lines[-1][:200] if lines else ""


def launch(command, timeout, stdout, stderr):
    """Exit code of command, or None when it ran past timeout seconds (then nothing of it is left running)."""
    proc = subprocess.Popen(command, stdout=stdout, stderr=stderr, stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc_tree.kill_tree(proc)
        return None
    except BaseException:  # Ctrl-C: leave nothing running behind
        proc_tree.kill_tree(proc)
        raise


def soak_one(seed, run, args, work_dir):
    """(verdict, reason, seconds): verdict is 'ok', 'hang', 'invalid' or 'crash'."""
    folder = os.path.join(work_dir, f"seed-{seed}")
    os.makedirs(folder)
    config = os.path.join(folder, "soak.yaml")
    with open(config, "w") as f:
        f.write(yaml_of(run))
    out = os.path.join(folder, "out")
    command = [args.mpiexec, "-n", str(run["nprocs"]), args.bin, "run", config, "--out", out]
    start = time.monotonic()
    with open(os.path.join(folder, "stdout"), "wb") as so, open(os.path.join(folder, "stderr"), "wb") as se:
        rc = launch(command, args.timeout, so, se)
    seconds = time.monotonic() - start
    if rc is None:
        return "hang", f"still running after {args.timeout:g} s, killed", seconds
    stderr = last_line(os.path.join(folder, "stderr"))
    if rc == 3:
        return "invalid", f"exit 3: {stderr}", seconds
    if rc != 0:
        return "crash", f"exit {rc}: {stderr}", seconds
    problem = check_output(out, run)
    return ("invalid", problem, seconds) if problem else ("ok", "", seconds)


def methods_supported(args, work_dir):
    """METHODS without from_group when this build says MPI_Comm_create_from_group is not supported (one launch)."""
    config = os.path.join(work_dir, "probe.yaml")
    with open(config, "w") as f:
        f.write("experiment: probe\nT_ms: 1\nworkload: {model: uniform, items: 0}\nbalancer: async\n"
                "method: from_group\n")
    log = os.path.join(work_dir, "probe.stderr")
    with open(log, "wb") as se:
        rc = launch([args.mpiexec, "-n", "1", args.bin, "run", config, "--out", os.path.join(work_dir, "probe")],
                    args.timeout, subprocess.DEVNULL, se)
    with open(log, errors="replace") as f:
        stderr = f.read()
    methods = {k: list(v) for k, v in METHODS.items()}
    if rc == 2 and "from_group is not supported" in stderr:
        for name in ("async", "lookahead", "mostwork"):
            methods[name].remove("from_group")
        print("soak.py: from_group is not supported by this MPI library; async, lookahead and mostwork leave it out")
    elif rc != 0:
        what = "hangs" if rc is None else f"exits with {rc}"
        raise SystemExit(f"soak.py: {args.bin} {what} on a one-rank run with no items: {stderr.strip()[:300]}")
    return methods


def main(argv=None):
    parser = ArgumentParser(prog="soak.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=positive(int), default=50, help="number of runs (default 50)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the first run; run k has seed + k (default 1)")
    parser.add_argument("--ranks", type=rank_list, default=[1, 2, 3, 4, 8], help="rank counts (default 1,2,3,4,8)")
    parser.add_argument("--timeout", type=positive(float), default=60.0,
                        help="seconds after which a run counts as a hang and is killed (default 60)")
    parser.add_argument("--bin", default=DEFAULT_BIN, help="the mcmclb binary (default: $MCMCLB_BIN or build/mcmclb)")
    parser.add_argument("--mpiexec", default="mpiexec", help="the MPI launcher (default mpiexec)")
    parser.add_argument("--keep", metavar="DIR", help="copy each failing run's config, output and logs into DIR")
    parser.add_argument("-v", "--verbose", action="store_true", help="one line per run")
    args = parser.parse_args(argv)
    if not (os.path.isfile(args.bin) and os.access(args.bin, os.X_OK)):
        parser.exit(2, f"soak.py: {args.bin}: no such executable (allowed: the mcmclb binary, via --bin or "
                       f"MCMCLB_BIN)\n")
    if shutil.which(args.mpiexec) is None:
        parser.exit(2, f"soak.py: {args.mpiexec}: not found on PATH (allowed: an MPI launcher, via --mpiexec)\n")

    replay = f"{sys.argv[0]} --runs 1 --seed {{}}" + (
        f" --ranks {','.join(map(str, args.ranks))}" if args.ranks != [1, 2, 3, 4, 8] else "")
    counts = {"ok": 0, "hang": 0, "invalid": 0, "crash": 0}
    failures, seconds = [], []
    wall_start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="mcmclb-soak-") as work_dir:
        methods = methods_supported(args, work_dir)
        for k in range(args.runs):
            seed = args.seed + k
            run = draw_run(seed, args.ranks, methods)
            verdict, reason, took = soak_one(seed, run, args, work_dir)
            counts[verdict] += 1
            seconds.append(took)
            if verdict != "ok":
                failures.append(seed)
                print(f"seed {seed}: {verdict.upper()} {describe(run)}: {reason} (replay: {replay.format(seed)})",
                      flush=True)
                if args.keep:
                    shutil.copytree(os.path.join(work_dir, f"seed-{seed}"), os.path.join(args.keep, f"seed-{seed}"),
                                    dirs_exist_ok=True)
            elif args.verbose:
                print(f"seed {seed}: ok {took:.2f} s  {describe(run)}", flush=True)
            shutil.rmtree(os.path.join(work_dir, f"seed-{seed}"), ignore_errors=True)
    wall = time.monotonic() - wall_start
    print(f"runs {args.runs}, hangs {counts['hang']}, invalid {counts['invalid']}, crashes {counts['crash']}")
    print(f"wall {wall:.1f} s; per run median {statistics.median(seconds):.2f} s, max {max(seconds):.2f} s")
    if failures:
        print("failing seeds: " + " ".join(map(str, failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
