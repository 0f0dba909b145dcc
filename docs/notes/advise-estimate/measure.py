#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""How far mcmclb advise's wall-time estimate is off: runs `mcmclb advise TRACE --ranks R --no-race` for each trace
named, takes the estimate advise prints before it starts and the wall time the whole command took, and appends one
row per trace to the CSV (estimates.csv by default). Before each run it reads how busy the host was over 2 s
(/proc/stat), so a row says whether the machine was idle. Run from the repository's root:

    docs/notes/advise-estimate/measure.py --out-dir RESULTS --csv docs/notes/advise-estimate/estimates.csv \\
        TRACE:RANKS [TRACE:RANKS ...]

RANKS is advise's --ranks (e.g. 64,1024). MCMCLB and SIM_BINARY name the driver and the simulation build
(default build-test/mcmclb and build-test/sim/mcmclb-sim); JOBS is --jobs (default 2).

With --check N each advise runs with `--check --check-reps N` and its rows go to another schema (CHECK_HEADER):
the estimate printed at the start (a bound on the check's real runs, as advise says), the check's own estimate
printed once the balancers to check are known, and the wall time of those real runs, read from when the two lines
around them were printed. The output is read line by line as advise prints it (stdbuf -oL).

With --race advise races (no --no-race) and its rows go to a third schema (RACE_HEADER): the range it prints at
the start (none's round alone, up to every simulation), the simulations it ran, whether none settled every rank
count, and where balancers raced, the first round's estimate and its time as advise printed them.

With --whole the rows go to a fourth schema (WHOLE_HEADER): the figure advise's "in all" line gives first (with or
without the search between the rank counts, as the scenarios' ideals foresee) and the other end beside it, whether
it searched, the CPU advise measured free, and the estimate advise prints when the search starts against its time.
With --spin one process spins in a session of its own through every run (one core of the host kept busy, as
another user's program would), started 3 s before the first."""
import argparse
import csv
import datetime
import os
import re
import socket
import subprocess
import sys
import time

HEADER = ["trace", "walkers", "items", "ranks", "jobs", "simulations", "estimated_s", "measured_s", "error_pct",
          "busy_before_pct", "commit", "host", "cores", "utc_start", "command_line"]


CHECK_HEADER = ["trace", "walkers", "items", "ranks", "jobs", "check_reps", "simulations", "estimated_s",
                "check_runs_bound", "check_estimated_s", "check_runs", "check_measured_s", "measured_s",
                "busy_before_pct", "commit", "host", "cores", "utc_start", "command_line"]

WHOLE_HEADER = ["trace", "walkers", "items", "ranks", "jobs", "simulations", "estimated_s", "other_end_s", "searched",
                "cores_one", "cores_all", "search_steps", "search_estimated_s", "search_measured_s", "measured_s",
                "error_pct", "spinning", "busy_before_pct", "commit", "host", "cores", "utc_start", "command_line"]


def whole_row(lines):
    """(estimated s, other end s, searched, cores one, cores all, steps, steps' estimate s, steps' time s) from a
    --no-race advise's stamped lines: the first figure of its "in all" line is the one it foresees."""
    text = " ".join("".join(line for _, line in lines).split())
    span = re.search(r"in all about (.+?) here(?: if it searches between the rank counts, as it may \(.*?\), (.+?) "
                     r"if not|, up to (.+?) if it searches between)?[:,]", text)
    if not span:
        raise ValueError("advise printed no 'in all' line (see advise-lines.txt)")
    other = span.group(2) or span.group(3)
    cpu = re.search(r"this host gives \d+ busy processes of ours ([0-9.]+) cores and one alone ([0-9.]+)", text)
    steps = [at for at, line in lines if re.match(r"advise: searching \d+ ranks, ", line)]
    start = next((at for at, line in lines if line.startswith("advise: searching between ")), None)
    said = re.search(r"advise: searching between \d+ and \d+ ranks with \d+ set-ups?: about ((?:\d+ min )?\d+ s)", text)
    ended = next((at for at, line in lines if line.startswith("advise: ") and "searching" not in line
                  and steps and at > steps[-1]), None)
    return (seconds_of(span.group(1)), seconds_of(other) if other else "", "yes" if steps else "no",
            cpu.group(2) if cpu else "1", cpu.group(1) if cpu else "", len(steps),
            seconds_of(said.group(1)) if said else "", (ended - start) if start is not None and ended else "")


RACE_HEADER = ["trace", "walkers", "items", "ranks", "jobs", "simulations_at_most", "simulations_run", "settled",
               "estimated_low_s", "estimated_high_s", "measured_s", "first_round_estimated_s", "first_round_measured_s",
               "busy_before_pct", "commit", "host", "cores", "utc_start", "command_line"]


def race_row(text, folder):
    """(low s, high s, simulations run, settled, first round estimated s, its wall s) from a racing advise's output."""
    said = " ".join(text.split())
    span = re.search(r"in all about (.+?) here if none settles every rank count asked, up to (.+?) if racing drops",
                     said)
    if not span:
        raise ValueError("advise printed no range at the start (see advise-lines.txt)")
    first = re.search(r"\(the first round took (.+?), estimated (.+?)\)", said)
    with open(os.path.join(folder, "runs.csv"), encoding="utf-8") as f:
        run = sum(1 for _ in csv.DictReader(f))
    settled = "no" if "advise: racing dropped" in said else "yes"
    return (seconds_of(span.group(1)), seconds_of(span.group(2)), run, settled,
            f"{seconds_of(first.group(2)):g}" if first else "", f"{seconds_of(first.group(1)):g}" if first else "")


def busy_share(seconds=2.0):
    """The share of the host's CPU time spent busy over the next `seconds` (from /proc/stat's first line)."""
    def sample():
        with open("/proc/stat", encoding="ascii") as f:
            fields = [int(v) for v in f.readline().split()[1:]]
        idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
        return sum(fields), idle
    total0, idle0 = sample()
    time.sleep(seconds)
    total1, idle1 = sample()
    return 100.0 * (1 - (idle1 - idle0) / max(total1 - total0, 1))


def seconds_of(text):
    """advise's format_seconds: "42 s" or "3 min 05 s"."""
    m = re.fullmatch(r"(?:(\d+) min )?(\d+(?:\.\d+)?) s", text.strip())
    if not m:
        raise ValueError(f"not a duration: {text!r}")
    return 60 * int(m.group(1) or 0) + float(m.group(2))


def trace_shape(path):
    """(walkers, items) of a trace file: its distinct chains and its item rows."""
    chains, items = set(), 0
    with open(path, encoding="utf-8") as f:
        for row in csv.DictReader(line for line in f if not line.startswith("#")):  # comment lines above the header
            if row["chain"] != "*" and row["item"] not in ("", None):
                chains.add(row["chain"])
                items += 1
    return len(chains), items


def run_timed(command):
    """(exit status, [(seconds since the start, line)]): command's output, each line stamped as it arrives."""
    lines, start = [], time.monotonic()
    with subprocess.Popen(["stdbuf", "-oL", "-eL"] + command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True) as p:
        for line in p.stdout:
            lines.append((time.monotonic() - start, line))
    return p.returncode, lines


def check_row(lines):
    """(check runs bound, check estimated s, check runs, check measured s) from an advise --check's stamped lines."""
    text = "".join(line for _, line in lines)
    bound = re.search(r"--check's (\d+) real runs", text)
    announced = next(((at, re.search(r"check: (\d+) real runs to make: about (.+?) \(", line))
                      for at, line in lines if re.search(r"check: \d+ real runs to make", line)), None)
    after = next((at for at, line in lines if "busy in the 2 s after them" in line), None)
    if not (bound and announced and after is not None):
        raise ValueError("advise printed no check estimate and no end of its real runs (see advise-lines.txt)")
    at, m = announced
    return int(bound.group(1)), seconds_of(m.group(2)), int(m.group(1)), after - at


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", required=True, help="a folder for each advise run's output")
    parser.add_argument("--csv", required=True, help="the CSV the rows are appended to")
    parser.add_argument("--check", type=int, metavar="N", help="advise --check --check-reps N (another schema)")
    parser.add_argument("--race", action="store_true", help="advise races; the range it prints (a third schema)")
    parser.add_argument("--whole", action="store_true", help="the 'in all' figure, the search's steps (a fourth schema)")
    parser.add_argument("--spin", action="store_true", help="one core kept busy by a process of another session")
    parser.add_argument("runs", nargs="+", metavar="TRACE:RANKS")
    args = parser.parse_args()
    driver = os.environ.get("MCMCLB", "build-test/mcmclb")
    sim = os.environ.get("SIM_BINARY", "build-test/sim/mcmclb-sim")
    jobs = os.environ.get("JOBS", "2")
    runs = []
    for run in args.runs:
        trace, _, ranks = run.rpartition(":")
        if not trace or not os.path.isfile(trace) or not re.fullmatch(r"\d+(,\d+)*", ranks):
            sys.exit(f"measure.py: {run}: allowed: TRACE:RANKS, an existing trace file and advise's --ranks")
        runs.append((trace, ranks))
    if args.check is not None and args.check < 6:
        sys.exit("measure.py: --check: allowed: 6 repetitions or more, as advise's --check-reps")
    version = subprocess.run([driver, "--version"], capture_output=True, text=True, check=True).stdout
    commit = re.search(r"commit ([0-9a-f]+(?:-dirty)?)", version).group(1)
    if args.race and args.check is not None:
        sys.exit("measure.py: --race: allowed: --race or --check, not both")
    if args.whole and (args.race or args.check is not None):
        sys.exit("measure.py: --whole: allowed: --whole, --race or --check, one of them")
    header = WHOLE_HEADER if args.whole else RACE_HEADER if args.race else HEADER if args.check is None else CHECK_HEADER
    spinner = None
    if args.spin:
        spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
        time.sleep(3)
    try:
        measure(args, runs, header, driver, sim, jobs, commit)
    finally:
        if spinner:
            spinner.kill()
            spinner.wait()


def measure(args, runs, header, driver, sim, jobs, commit):
    """Runs advise on each trace and appends its row to args.csv."""
    new = not os.path.exists(args.csv)
    with open(args.csv, "a", newline="", encoding="utf-8") as out:
        writer = csv.writer(out, lineterminator="\n")
        if new:
            writer.writerow(header)
        for trace, ranks in runs:
            name = os.path.splitext(os.path.basename(trace))[0]
            folder = os.path.join(args.out_dir, f"{name}-p{ranks.replace(',', '-')}")
            command = [driver, "advise", trace, "--ranks", ranks] + ([] if args.race else ["--no-race"]) + [
                "--jobs", jobs, "--sim-binary", sim, "--out", folder]
            if args.check is not None:
                command += ["--check", "--check-reps", str(args.check)]
            busy = busy_share()
            start, utc = time.monotonic(), datetime.datetime.now(datetime.timezone.utc)
            status, lines = run_timed(command)
            wall = time.monotonic() - start
            os.makedirs(folder, exist_ok=True)
            with open(os.path.join(folder, "advise-lines.txt"), "w", encoding="utf-8") as f:
                f.write("".join(line for _, line in lines))
            if status != 0:
                sys.exit(f"measure.py: {' '.join(command)} exited with {status}; see {folder}/advise-lines.txt")
            stdout = "".join(line for _, line in lines)
            m = re.search(r"^advise: (\d+) simulations, \d+ already in .*?, (\d+) to run, \d+ at a time: about "
                          r"(.+?) of wall time", stdout, re.M)
            simulations = m.group(2)
            estimated = seconds_of(m.group(3))
            if args.check is not None:
                estimated = seconds_of(re.search(r"^advise: in all about (.+?) here", stdout, re.M).group(1))
            walkers, items = trace_shape(trace)
            tail = [f"{busy:.1f}", commit, socket.gethostname(), os.cpu_count(), utc.strftime("%Y-%m-%dT%H:%M:%SZ"),
                    " ".join(command)]
            if args.whole:
                estimated, other, searched, one, cores_all, steps, steps_s, steps_wall = whole_row(lines)
                writer.writerow([trace, walkers, items, ranks, jobs, simulations, f"{estimated:g}", other and f"{other:g}",
                                 searched, one, cores_all, steps, steps_s and f"{steps_s:g}",
                                 steps_wall and f"{steps_wall:.1f}", f"{wall:.1f}",
                                 f"{100 * (estimated / wall - 1):.1f}", "yes" if args.spin else "no"] + tail)
                out.flush()
                print(f"{trace} at {ranks}: estimated {estimated:g} s (other end {other}), took {wall:.1f} s "
                      f"({100 * (estimated / wall - 1):+.1f} %); searched {searched}: {steps} steps estimated "
                      f"{steps_s} s, took {steps_wall} s; cores {one} alone, {cores_all} together")
                continue
            if args.race:
                low, high, run, settled, first_estimated, first_wall = race_row(stdout, folder)
                writer.writerow([trace, walkers, items, ranks, jobs, simulations, run, settled, f"{low:g}",
                                 f"{high:g}", f"{wall:.1f}", first_estimated, first_wall] + tail)
                print(f"{trace} at {ranks}: estimated {low:g} to {high:g} s, took {wall:.1f} s with {run} "
                      f"simulations (settled by none: {settled}), the host {busy:.0f} % busy before")
                out.flush()
                continue
            if args.check is None:
                writer.writerow([trace, walkers, items, ranks, jobs, simulations, f"{estimated:g}", f"{wall:.1f}",
                                 f"{100 * (estimated / wall - 1):.1f}"] + tail)
            else:
                bound, check_estimated, check_runs, check_wall = check_row(lines)
                writer.writerow([trace, walkers, items, ranks, jobs, args.check, simulations, f"{estimated:g}",
                                 bound, f"{check_estimated:g}", check_runs, f"{check_wall:.1f}", f"{wall:.1f}"] + tail)
                print(f"  the check: {check_runs} real runs (at most {bound} at the start), estimated "
                      f"{check_estimated:g} s, took {check_wall:.1f} s ({100 * (check_estimated / check_wall - 1):+.1f} %)")
            out.flush()
            print(f"{trace} at {ranks}: estimated {estimated:g} s, took {wall:.1f} s "
                  f"({100 * (estimated / wall - 1):+.1f} %), the host {busy:.0f} % busy before")


if __name__ == "__main__":
    main()
