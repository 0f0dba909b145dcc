#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A trace file from one recorded run: the rows of costs.csv (work.record) of the run chosen, less the run_id
column, which is a trace file as docs/reference/columns.md describes it and workload.model trace replays. The run
is named by its id, or by balancer and rep (exactly one run must match).

Its `# run:` line gives the run's layout, balancer and time, and `share=F` where provenance.csv has its
core_share. Every other valid run of the folder of the same walkers (the same experiment, workload and work
columns and chain count) gets a `# earlier run:` line of that form, newest first, at most 99: so `mcmclb advise`
reads the program's run-to-run spread. No line has `walkers=`: mcmclb::walkers hashes the application's name
there, which a sweep has not; advise groups lines without it together.

With --measured-speedups, a chain's speed-up at a size is measured by pairs of runs close in time: the runs of
those walkers at the same rank count and repetition (a sweep runs repetition k of every set-up in round k), its
mean seconds per item at 1 rank over its mean at the size. One row per pair, oldest first: the replay takes their
median, and their range is the measurement's spread. A slower host then slows both runs of a pair and cancels. A
pair above m at m ranks is a measurement error, set aside in one line (kept with --superlinear). One below 1/m
is kept and said in one line: the cost of the ranks talking can make a walker that slow. The run's own speed-up rows (its calibration's) stand where no pair is left.

A `# drift:` line says how much the 1-rank cost of the same walkers changed from the early to the late
repetitions, and whether that is more than the pairs' own spread (then also on standard error): the host drifted,
which the pairs cancel but an unpaired estimate would not. Runs in order blocked (every repetition of one set-up
before the next's) are said to be no such pairs, in one line.

With --perfect the speed-up rows are left out, so every chain scales perfectly (a speed-up of m at m ranks): the
same items at the same single-rank costs as emulated work scales them, the comparison that isolates the scaling.

  plots/trace_of_run.py results/trace-lj-record --balancer none --rep 0 -o my-trace.csv [--measured-speedups]"""
import csv
import io
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcmclb_csv import ArgumentParser, InputError, fail, read_csv, write_text_atomically  # noqa: E402

TRACE_COLUMNS = ("chain", "item", "ranks", "seconds", "speedup")
# The runs.csv columns, besides the workload's, that say what each walker computes.
WORK_COLUMNS = ("T_ms", "work_mode", "jitter_pct", "work_seed", "atoms", "temperature", "move", "max_step",
                "moves_per_item")
MAX_EARLIER_RUNS = 99  # as many as mcmclb::walkers keeps (kMaxEarlierRuns)


def provenance_lines(args, run_id):
    """The trace's comment lines: which run gave the costs, where the speed-ups came from, and the commit, MPI
    and host that recorded them (runs.csv)."""
    lines = [f"trace of run {run_id} of {os.path.basename(os.path.normpath(args.results))}"]
    if args.perfect:
        lines.append("speed-ups: none given, every chain scales perfectly")
    elif args.measured_speedups:
        lines.append("speed-ups: measured by pairs of the folder's runs at the same rank count and repetition, one "
                     "row per pair, the 1-rank run's mean seconds per item over the other's (out of sample for any "
                     "run not in the folder)")
    else:
        lines.append("speed-ups: the run's own")
    with open(os.path.join(args.results, "runs.csv"), newline="") as f:
        for r in csv.DictReader(f):
            if r.get("run_id") == run_id:
                lines.append(f"recorded at commit {r.get('git_commit', '?')} with {r.get('mpi_library', '?')} "
                             f"on {r.get('host', '?')}, {r.get('utc_start', '?')}")
    return [line.replace("\n", " ") for line in lines]


def run_line(run, share=None, prefix="run:"):
    """The trace's `# run:` line (or, with prefix, an earlier run's) from a runs.csv row: its ranks, its initial
    groups (the groups column where a run gives it, else P / G), its balancer, its time (time_s, as
    mcmclb::walkers writes it) and, where known, the share of a core each rank had."""
    try:
        nprocs, size = int(run["nprocs"]), int(run["G"])
        groups = int(run["groups"]) if run.get("groups") not in (None, "") else nprocs // size
        seconds = float(run["time_s"])
    except (KeyError, TypeError, ValueError):
        raise InputError(f"runs.csv: run {run.get('run_id')}: nprocs, G and time_s must be numbers "
                         "(a run that ended)") from None
    if nprocs < 1 or size < 1 or groups < 1 or not seconds > 0 or not run.get("balancer"):
        raise InputError(f"runs.csv: run {run['run_id']}: no valid layout, balancer or time to say what it took")
    line = f"{prefix} ranks={nprocs} groups={groups} balancer={run['balancer']} seconds={seconds!r}"
    return line if share is None else line + f" share={share!r}"


def core_shares(folder):
    """run_id -> the share of a core each rank had at the launch's start (provenance.csv's core_share), for the
    runs that measured it: none in simulation, nor in a folder older than the column."""
    path = os.path.join(folder, "provenance.csv")
    if not os.path.lexists(path):
        return {}
    shares = {}
    for r in read_csv(path, "provenance.csv", ("run_id",)):
        text = r.get("core_share")
        if text in (None, ""):
            continue
        try:
            share = float(text)
        except ValueError:
            share = -1.0
        if not 0 <= share <= 1:
            raise InputError(f"{path}: run {r['run_id']}: core_share is '{text}' (allowed: 0 to 1, or empty)")
        shares[r["run_id"]] = share
    return shares


def orders(folder):
    """run_id -> the order its launch ran its points in (provenance.csv's order), where recorded."""
    path = os.path.join(folder, "provenance.csv")
    if not os.path.lexists(path):
        return {}
    return {r["run_id"]: r.get("order") for r in read_csv(path, "provenance.csv", ("run_id",)) if r.get("order")}


def walkers_of(run):
    """What makes two runs' walkers the same: the experiment, the workload and work columns and the chain count
    (the initial groups times each one's chains)."""
    per_group = run.get("chains_per_group") or 1
    if run.get("groups") in (None, ""):
        chains = run["nprocs"] // run["G"] * per_group
    else:  # initial groups other than P / G of G: compared as written
        chains = (run["groups"], per_group)
    columns = sorted(k for k in run if k.startswith("workload") or k in WORK_COLUMNS)
    return run.get("experiment"), chains, tuple((k, run[k]) for k in columns)


def newest_first(runs):
    """The runs by utc_start, newest first (run_id breaks a tie: starts are to the second)."""
    return sorted(runs, key=lambda r: (str(r.get("utc_start") or ""), r["run_id"]), reverse=True)


def median(values):
    v = sorted(values)
    return (v[(len(v) - 1) // 2] + v[len(v) // 2]) / 2


def percent(factor, sign="+"):
    """A factor as a change in per cent, to a tenth below 10 % so that a small drift and spread compare."""
    x = (factor - 1) * 100
    return (f"{x:+.0f}" if abs(x) >= 10 else f"{x:+.1f}").replace("+", sign) + " %"


def measured_speedups(raw, every, runs, superlinear=False):
    """The chosen run's rows with each speed-up row that pairs of runs measured replaced by one row per pair (see
    the docstring); runs: the runs of the same walkers at the chosen run's rank count, oldest first. Returns the
    rows, the comment lines to add to the trace's head and the lines to print on standard error."""
    rep_of = {r["run_id"]: r["rep"] for r in runs}
    # rep -> (chain, ranks) -> [seconds, items]; rep -> ranks -> the runs that worked items at that size
    sums, who = {}, {}
    for r in every:
        if r["item"] and r["run_id"] in rep_of:
            rep = rep_of[r["run_id"]]
            t = sums.setdefault(rep, {}).setdefault((r["chain"], r["ranks"]), [0.0, 0])
            t[0] += float(r["seconds"])
            t[1] += 1
            names = who.setdefault(rep, {}).setdefault(r["ranks"], [])
            if r["run_id"] not in names:
                names.append(r["run_id"])

    def mean(rep, chain, ranks):
        s, n = sums.get(rep, {}).get((chain, ranks), (0.0, 0))
        return s / n if n and s > 0 else None

    reps = sorted(sums)
    head, said = [], []
    pairs = {}  # (chain, ranks) -> [(rep, ratio)], reps in order
    for r in raw:
        if r["item"] or (r["chain"], r["ranks"]) in pairs:
            continue
        m = int(r["ranks"])
        kept, wrong, slow = [], [], []
        for rep in reps:
            one, at = mean(rep, r["chain"], "1"), mean(rep, r["chain"], r["ranks"])
            if one is None or at is None:
                continue
            ratio = one / at
            if ratio > m * (1 + 1e-9) and not superlinear:
                wrong.append((rep, ratio))
                continue
            kept.append((rep, ratio))
            if ratio < 1 / m * (1 - 1e-9):
                slow.append((rep, ratio))
        if wrong:
            # As many of the lowest go too, while one stays: the noise that pushed some pairs past m pushed as many
            # down, and dropping one side alone would make the kept values just under m the "high" end.
            low = sorted(kept, key=lambda x: x[1])[:min(len(wrong), max(len(kept) - 1, 0))]
            kept = [x for x in kept if x not in low]
            line = (f"walker {r['chain']}'s speed-up at {m} ranks is above {m} in repetition " +
                    ", ".join(f"{rep} ({ratio:.4g})" for rep, ratio in wrong) +
                    f": set aside as a measurement error ({len(wrong)} of {len(wrong) + len(kept) + len(low)} pairs" +
                    ("" if kept else "; the run's own speed-up stands") + ")" +
                    (", with the lowest in repetition " + ", ".join(f"{rep} ({ratio:.4g})" for rep, ratio in low) +
                     ", so the kept pairs stay centred" if low else ""))
            head.append("set aside: " + line)
            said.append(line)
        if slow:
            # Below 1/m the m ranks together spent more than m times the work of one: a cost of talking between
            # them can do that, so the pair is kept, and said, for a user to check.
            line = (f"walker {r['chain']}'s speed-up at {m} ranks is below 1/{m} in repetition " +
                    ", ".join(f"{rep} ({ratio:.4g})" for rep, ratio in slow) +
                    f": kept, since the cost of its ranks talking can make it so slow; more ranks only slow it")
            head.append("slow: " + line)
            said.append(line)
        pairs[(r["chain"], r["ranks"])] = kept
    out = []
    for r in raw:
        kept = [] if r["item"] else pairs.get((r["chain"], r["ranks"]), [])
        out.extend([dict(r, speedup=repr(ratio)) for _, ratio in kept] or [r])
    drift = drift_line(sums, who, reps, pairs)
    if drift:
        head.append(drift[0])
        if drift[1]:
            said.append(drift[0])
    return out, head, said


def drift_line(sums, who, reps, pairs):
    """(the `# drift:` line's text, whether the host drifted beyond the pairs' spread), or None below four
    repetitions at 1 rank. A repetition's host factor is the geometric mean over the chains of its 1-rank cost over
    the chain's median; the drift, the late half's median factor over the early half's. The pairs' spread is the
    median over chains and sizes of their median absolute deviation from their median, as a ratio. The host drifted
    when the drift is larger and every late factor lies beyond every early one (for 3 and 3 repetitions, a
    steady host puts them so by chance once in 20)."""
    costs = {}  # chain -> rep -> 1-rank mean seconds per item
    for rep in reps:
        for (chain, ranks), (s, n) in sums[rep].items():
            if ranks == "1" and n and s > 0:
                costs.setdefault(chain, {})[rep] = s / n
    timed = [rep for rep in reps if any(rep in c for c in costs.values())]
    if len(timed) < 4:
        return None
    factor = {}
    for rep in timed:
        logs = [math.log(c[rep] / median(c.values())) for c in costs.values() if rep in c]
        factor[rep] = math.exp(sum(logs) / len(logs))
    half = len(timed) // 2
    early, late = timed[:half], timed[-half:]
    drift = median(factor[k] for k in late) / median(factor[k] for k in early)
    first, last = [factor[k] for k in early], [factor[k] for k in late]
    apart = min(last) > max(first) or max(last) < min(first)

    def runs_of(ks):
        names = [n for k in ks for n in who[k].get("1", [])]
        return f"repetitions {ks[0]}-{ks[-1]} (runs {names[0]} to {names[-1]})"

    text = (f"drift: the 1-rank cost of the same walkers changed {percent(drift)} from {runs_of(early)} to "
            f"{runs_of(late)}, ")
    deviations = []
    for p in pairs.values():
        if len(p) >= 2:
            middle = median(v for _, v in p)
            deviations.append(math.exp(median(abs(math.log(v / middle)) for _, v in p)))
    if not deviations:
        return text + "and no two pairs were left to give their spread", False
    spread = median(deviations)
    beyond = apart and max(drift, 1 / drift) > spread
    return (text + ("more than" if beyond else "within") +
            f" the pairs' own spread ({percent(spread, '±')}, their median absolute deviation" +
            ("" if apart else "; the halves overlap") + ")" +
            ("; each speed-up pairs runs of one repetition, so a drift slower than a repetition cancels" if beyond
             else "")), beyond


def main():
    p = ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("results", help="a results folder of compute-mode runs with work.record")
    p.add_argument("--run-id", help="the run to take (else --balancer and --rep)")
    p.add_argument("--balancer", help="the balancer of the run to take")
    p.add_argument("--rep", type=int, help="its repetition")
    p.add_argument("-o", "--output", help="the trace file to write (default: standard output)")
    p.add_argument("--measured-speedups", action="store_true",
                   help="speed-ups measured by each of the folder's runs at the same rank count where they exist")
    p.add_argument("--superlinear", metavar="WHY",
                   help="with --measured-speedups, keep pairs above m at m ranks; the trace says WHY")
    p.add_argument("--perfect", action="store_true", help="no speed-up rows: every chain scales perfectly")
    args = p.parse_args()
    if args.superlinear is not None and not args.measured_speedups:
        p.error("--superlinear needs --measured-speedups (it keeps measured pairs above m)")
    try:
        runs = read_csv(os.path.join(args.results, "runs.csv"), "runs.csv", ("run_id", "balancer", "rep"))
        chosen = [r["run_id"] for r in runs if r["run_id"] == args.run_id or (
            args.run_id is None and r["balancer"] == args.balancer and r["rep"] == args.rep)]
        if len(chosen) != 1:
            raise InputError(f"{args.results}: {len(chosen)} runs match (want exactly one; give --run-id, or "
                             f"--balancer and --rep)")
        run = next(r for r in runs if r["run_id"] == chosen[0])
        # The other runs of the same walkers that ended: repetitions of the program, whatever their layout.
        others = newest_first(r for r in runs if r is not run and r.get("valid") is True and
                              r.get("time_s") is not None and walkers_of(r) == walkers_of(run))
        shares = core_shares(args.results)
        costs = read_csv(os.path.join(args.results, "costs.csv"), "costs.csv", ("run_id",))
        rows = [r for r in costs if r["run_id"] == chosen[0]]
        if not rows:
            raise InputError(f"{args.results}/costs.csv: no rows of run {chosen[0]} (was work.record on?)")
        # The fields as written (read_csv parses numbers; the trace keeps the recorded text).
        with open(os.path.join(args.results, "costs.csv"), newline="") as f:
            every = list(csv.DictReader(f))
        raw = [r for r in every if r["run_id"] == chosen[0]]
        head, said = [], []
        if args.measured_speedups:
            same_p = [run] + [r for r in others if r["nprocs"] == run["nprocs"]]
            raw, head, said = measured_speedups(raw, every, newest_first(same_p)[::-1], args.superlinear is not None)
            if args.superlinear is not None:
                head.insert(0, "superlinear: " + args.superlinear)
            blocked = sorted(rid for rid, r in orders(args.results).items() if r == "blocked" and
                             rid in {x["run_id"] for x in same_p})
            if blocked:
                said.append(f"order: runs {blocked[0]} and {len(blocked) - 1} more ran in order blocked: a "
                            "repetition's runs are not close in time, so their pairs do not cancel a drifting host")
                head.append(said[-1])
        if args.perfect:
            raw = [r for r in raw if r["item"]]
        out = io.StringIO()
        for line in provenance_lines(args, chosen[0]):
            out.write("# " + line + "\n")
        for line in head:
            out.write("# " + line.replace("\n", " ") + "\n")
        out.write("# " + run_line(run, shares.get(run["run_id"])) + "\n")
        for r in others[:MAX_EARLIER_RUNS]:
            out.write("# " + run_line(r, shares.get(r["run_id"]), "earlier run:") + "\n")
        out.write(",".join(TRACE_COLUMNS) + "\n")
        for r in raw:
            out.write(",".join(r[k] for k in TRACE_COLUMNS) + "\n")
        for line in said:
            print(f"trace_of_run.py: {line}", file=sys.stderr)
        if args.output is None:
            sys.stdout.write(out.getvalue())
            return
        write_text_atomically(args.output, out.getvalue())
        print(f"{args.output}: run {chosen[0]}, {sum(1 for r in raw if r['item'])} items, "
              f"{sum(1 for r in raw if not r['item'])} speed-up rows, {min(len(others), MAX_EARLIER_RUNS)} "
              "earlier runs")
    except InputError as e:
        fail("trace_of_run.py", str(e))


if __name__ == "__main__":
    main()
