#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""mcmclb advise judged against a known truth: a corpus of generated workloads, advise run on each, and its score.

Each workload is a pair of traces of the same walkers and items. truth.csv gives every walker's true speed-up at
every size up to the largest rank count asked. recorded.csv is what a user would record: six paired repetitions at
2 and 4 ranks only (a repetition's 1-rank run over its m-rank run, as plots/trace_of_run.py --measured-speedups
pairs them), the host drifting between repetitions, now and then a faulty value, and six run lines of `none`.

    plots/advise_corpus.py generate CORPUS [--seed N] [--largest P]
    plots/advise_corpus.py run CORPUS --ranks 16,64 [--jobs 1] [--only NAME,...]
    plots/advise_corpus.py score CORPUS --csv SCORE.csv [--summary SUMMARY.md]
    plots/advise_corpus.py all CORPUS --ranks 16,64 --csv SCORE.csv ...   (the three in turn)

`run` advises on recorded.csv at the counts asked, then on truth.csv at each count asked and at the count the
answer names, one count at a time and without racing, so every set-up is priced alike in the truth. A workload
whose folder holds done.txt is skipped: a run stopped anywhere resumes. MCMCLB and SIM_BINARY (or --mcmclb,
--sim-binary) name the driver and the simulation build.

`score` writes one row per workload and rank count (SCORE_HEADER), the manifest beside it and the summary in
Markdown. A case lies inside advise's assumptions where, at every size up to its rank count, each walker's true
speed-up lies between its speed-up at 4 ranks held (`flat`) and Amdahl's law through its true speed-ups at 2 and 4
(`amdahl`).

In the truth's run the planning balancers and `pays` consult the recording (advise --plan-from recorded.csv, the
key workload.plan_file) while the replay charges the truth: the truth gives no balancer knowledge a user's run would
not have. Each row says what the truth's runs planned from, read from their runs.csv (truth_planning)."""
import csv
import math
import os
import random
import re
import shlex
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcmclb_csv import ArgumentParser, InputError, fail, write_text_atomically  # noqa: E402
from trace_of_run import measured_speedups, run_line  # noqa: E402

MEASURED = (2, 4)  # the sizes a user measures
REPS = 6  # paired repetitions a size, and runs of none (one run line, five earlier)
COLUMNS = ("chain", "item", "ranks", "seconds", "speedup", "group")
MANIFEST = ["workload", "shape", "walkers", "items", "recorded_ranks", "recorded_groups", "largest", "inside_up_to",
            "faulty", "drift_pct", "seed", "description"]
# Every row of the score: one workload at one rank count asked.
SCORE_HEADER = ["workload", "shape", "nprocs", "truth_inside", "pick", "tolerance_pct", "tolerance_source",
                "pick_true_regret_pct", "within_tolerance", "true_best", "true_gain_pct", "stated_gain_worst_pct",
                "stated_gain_best_pct", "covered", "robust", "said_extrapolated", "names_sizes", "ranks_asked",
                "ranks_answer", "answer_setup", "answer_true_core_hours", "best_ranks", "best_true_core_hours",
                "answer_over_best", "answer_follows_rule", "truth_planning", "corpus_seed", "git_commit", "scored_at",
                "command"]


# ----------------------------------------------------------------------------------------------------- curves


def amdahl(p):
    return lambda m: 1.0 / ((1.0 - p) + p / m)


def flat_past(curve, at):
    """curve up to `at` ranks, held past it."""
    return lambda m: curve(min(m, at))


def bending(p, peak, fall):
    """Amdahl's p up to peak ranks, then falling: at twice the peak, `fall` of the peak's speed-up is lost."""
    up = amdahl(p)

    def s(m):
        if m <= peak:
            return up(m)
        return max(1.0, up(peak) * (1.0 - fall * math.log2(m / peak)))
    return s


def amdahl_fit(s2, s4):
    """The serial share Amdahl's law takes through (2, s2) and (4, s4), as the trace's fit takes it: least squares
    through the origin of 1/s - 1 against 1/m - 1, kept within [0, 1]."""
    xy = xx = 0.0
    for m, s in ((2, s2), (4, s4)):
        x, y = 1.0 / m - 1.0, 1.0 / s - 1.0
        xy, xx = xy + x * y, xx + x * x
    return min(1.0, max(0.0, xy / xx))


def inside_up_to(curves, sizes):
    """The largest size up to which every curve lies between flat (its value at 4 held) and Amdahl's law fitted
    through its values at 2 and 4, within a part in 10^6: advise's stated assumptions past the sizes measured. 4
    where one leaves them at the first size past 4."""
    last = MEASURED[-1]
    for m in sizes:
        if m <= last:
            continue
        for c in curves:
            low, high = c(last), amdahl(amdahl_fit(c(2), c(4)))(m)
            if not low * (1 - 1e-6) <= c(m) <= high * (1 + 1e-6):
                return last
        last = m
    return last


def sizes_up_to(largest):
    """The truth's sizes: every count to 32, then four a doubling (the kernel interpolates in log2 between them)."""
    sizes = list(range(2, min(largest, 32) + 1))
    m = 32
    while m < largest:
        sizes += [x for x in (m * 5 // 4, m * 3 // 2, m * 7 // 4, 2 * m) if x <= largest]
        m *= 2
    return sorted(set(sizes + [largest]))


# ----------------------------------------------------------------------------------------------------- shapes


def shapes():
    """Every workload of the corpus: (name, shape, walkers' works in items, item seconds, curve per walker, recorded
    ranks and groups, faulty, drift, description). Items: (count, seconds each) per walker."""
    def ramp(n, lo, hi):
        return [round(lo + (hi - lo) * k / max(n - 1, 1)) for k in range(n)]

    w = []

    def add(name, shape, counts, item_s, curves, ranks=None, groups=None, faulty=False, drift=0.05, what=""):
        n = len(counts)
        curves = curves if isinstance(curves, list) else [curves] * n
        w.append(dict(name=name, shape=shape, counts=counts, item_s=item_s, curves=curves, ranks=ranks or n,
                      groups=groups or n, faulty=faulty, drift=drift, what=what))

    add("giant-dwarfs", "one giant among dwarfs", [200] + [10] * 15, 0.05, amdahl(0.95),
        what="one walker of 200 items among 15 of 10, Amdahl p = 0.95")
    add("giant-dwarfs-far", "one giant among dwarfs", [200] + [10] * 15, 0.05, amdahl(0.6), faulty=True,
        what="the same, Amdahl p = 0.6, one faulty repetition")
    add("ramp", "a ramp", ramp(16, 10, 160), 0.04, amdahl(0.9), what="16 walkers of 10 to 160 items, p = 0.9")
    add("ramp-perfect", "a ramp", ramp(8, 20, 160), 0.04, amdahl(1.0),
        what="8 walkers of 20 to 160 items, perfect scaling (pairs above m set aside)")
    add("two-tiers", "two tiers", [120] * 4 + [20] * 12, 0.05, amdahl(0.9), what="4 walkers of 120 items, 12 of 20")
    add("two-tiers-flat", "two tiers", [120] * 4 + [20] * 12, 0.05, flat_past(amdahl(0.9), 4),
        what="the same, the speed-up flat past 4 ranks")
    add("all-equal", "all equal", [60] * 16, 0.05, amdahl(0.9), what="16 walkers of 60 items")
    add("all-equal-8", "all equal", [80] * 8, 0.05, amdahl(0.98), drift=0.12, what="8 walkers of 80, the host drifting")
    rnd = random.Random(7)
    add("heavy-tail", "a heavy tail", [max(5, min(400, round(10 * rnd.lognormvariate(0, 1.0)))) for _ in range(32)],
        0.03, amdahl(0.9), what="32 walkers, lognormal items (sigma 1)")
    add("heavy-tail-pareto", "a heavy tail", [max(5, min(400, round(8 * rnd.paretovariate(1.2)))) for _ in range(24)],
        0.03, amdahl(0.95), faulty=True, what="24 walkers, Pareto items (alpha 1.2), one faulty repetition")
    add("amdahl-near-1", "Amdahl near 1", ramp(8, 20, 200), 0.04, amdahl(0.995), what="8 walkers, p = 0.995")
    add("amdahl-far", "Amdahl far from 1", ramp(8, 20, 200), 0.04, amdahl(0.5), what="8 walkers, p = 0.5")
    add("flat-past-8", "flat past the measured size", [240] + ramp(7, 10, 40), 0.04, flat_past(amdahl(0.95), 8),
        what="a giant among 7, p = 0.95 up to 8 ranks, flat past them")
    add("flat-past-4", "flat past the measured size", [240] + ramp(7, 10, 40), 0.04, flat_past(amdahl(0.95), 4),
        what="the same, flat past 4 ranks")
    add("bends-at-8", "bends down past the measured sizes", [240] + ramp(7, 10, 40), 0.04, bending(0.95, 8, 0.3),
        what="a giant among 7, p = 0.95 up to 8 ranks, 30 % lost a doubling past them")
    add("bends-at-6", "bends down past the measured sizes", [100] * 4 + [20] * 12, 0.05, bending(0.9, 6, 0.4),
        faulty=True, what="two tiers, peaking at 6 ranks")
    add("few-walkers", "few walkers on many ranks", [150, 100, 60], 0.05, amdahl(0.97),
        what="3 walkers, p = 0.97")
    add("few-walkers-bend", "few walkers on many ranks", [150, 120, 90, 60], 0.05, bending(0.97, 12, 0.25),
        what="4 walkers peaking at 12 ranks")
    counts = [max(4, min(120, round(8 * rnd.lognormvariate(0, 0.8)))) for _ in range(64)]
    add("many-per-group", "many walkers per group", counts, 0.02, amdahl(0.9), ranks=8, groups=8,
        what="64 walkers, 8 a group on 8 ranks, lognormal items")
    add("many-per-group-ramp", "many walkers per group", ramp(48, 5, 60), 0.02, amdahl(0.95), ranks=4, groups=4,
        what="48 walkers, 12 a group on 4 ranks")
    add("cheap-items", "cheap items", [1200] + [300] * 15, 0.0005, amdahl(0.9),
        what="items of 0.5 ms: merging cannot pay")
    add("cheap-items-equal", "cheap items", [400] * 16, 0.0005, amdahl(0.95), what="16 equal walkers of 0.5 ms items")
    add("mixed-curves", "two tiers", ramp(16, 20, 120), 0.04, [amdahl(0.99) if k % 2 else amdahl(0.6)
                                                              for k in range(16)],
        what="16 walkers, every other at p = 0.99, the rest at 0.6")
    add("drifting-giant", "one giant among dwarfs", [300] + [15] * 11, 0.04, amdahl(0.97), drift=0.15, faulty=True,
        what="a giant among 11, the host 15 % slower by the last repetition")
    return w


# -------------------------------------------------------------------------------------------------- generate


def number(x):
    return f"{x:.6g}"


def generate_workload(spec, index, seed, largest):
    """(truth text, recorded text, manifest row) of one workload, drawn from its own stream of seed."""
    rnd = random.Random(f"{seed}:{spec['name']}")
    sigma = 0.02  # a pair's noise (its two runs' ratio), lognormal
    curves = spec["curves"]
    walkers = len(spec["counts"])
    groups, ranks = spec["groups"], spec["ranks"]
    group_of = [k * groups // walkers for k in range(walkers)]
    # Single-rank item costs, as the recording's run worked them: within 20 % of the workload's item cost.
    costs = [[spec["item_s"] * (0.9 + 0.2 * rnd.random()) for _ in range(n)] for n in spec["counts"]]
    items = [dict(chain=str(c), item=str(i), ranks="1", seconds=number(x), speedup="", group=str(group_of[c]))
             for c in range(walkers) for i, x in enumerate(costs[c])]
    # The host's factor per repetition: drifting steadily, with a little noise; a repetition's runs share it.
    host = [(1 + spec["drift"] * k / (REPS - 1)) * math.exp(rnd.gauss(0, 0.005)) for k in range(REPS)]
    faulty = (rnd.randrange(walkers), rnd.choice(MEASURED), rnd.randrange(REPS), rnd.choice((0.35, 1.8)))
    every, runs = [], []
    for rep in range(REPS):
        for m in (1,) + MEASURED:
            run_id = f"rep{rep}-m{m}"
            runs.append(dict(run_id=run_id, rep=rep))
            for c in range(walkers):
                mean = sum(costs[c]) / len(costs[c]) / curves[c](m) * host[rep] * math.exp(rnd.gauss(0, sigma))
                if spec["faulty"] and (c, m, rep) == faulty[:3]:
                    mean *= faulty[3]
                every.append(dict(run_id=run_id, chain=str(c), item="0", ranks=str(m), seconds=repr(mean)))
    # The run's own speed-up rows (its calibration's), which stand only where every pair is set aside.
    placeholders = [dict(chain=str(c), item="", ranks=str(m), seconds="", group="",
                         speedup=number(min(m, curves[c](m) * math.exp(rnd.gauss(0, 0.05)))))
                    for c in range(walkers) for m in MEASURED]
    rows, head, _ = measured_speedups(items + placeholders, every, runs)
    # Six runs of none in the recorded layout: the slowest group's walkers one after another, as the host ran them.
    size = ranks // groups
    work = [0.0] * groups
    for c in range(walkers):
        work[group_of[c]] += sum(costs[c]) / curves[c](size)
    lines = []
    for rep in reversed(range(REPS)):
        run = dict(run_id=f"run{rep}", nprocs=ranks, G=size, groups=groups, balancer="none",
                   time_s=float(number(max(work) * host[rep] * math.exp(rnd.gauss(0, sigma)))))
        lines.append("# " + run_line(run, prefix="run:" if rep == REPS - 1 else "earlier run:"))
    made = f"# made by plots/advise_corpus.py generate --seed {seed}: workload {spec['name']}"
    recorded = [made] + ["# " + h for h in head] + lines + [",".join(COLUMNS)]
    recorded += [",".join(r[k] for k in COLUMNS) for r in rows]
    # The truth: the same items and layout, one run line (so no spread of runs), each walker's true speed-up at every
    # size; walkers of one curve share `*` rows where one curve is every walker's.
    sizes = sizes_up_to(largest)
    truth = [made + " (the truth)", lines[0], ",".join(COLUMNS)] + [",".join(r[k] for k in COLUMNS) for r in items]
    shared = all(c is curves[0] for c in curves)
    for c in ["*"] if shared else range(walkers):
        curve = curves[0] if shared else curves[c]
        truth += [f"{c},,{m},,{number(min(m, curve(m)))}," for m in sizes]
    inside = inside_up_to(curves, sizes)
    row = dict(workload=f"{index:02d}-{spec['name']}", shape=spec["shape"], walkers=walkers,
               items=sum(spec["counts"]), recorded_ranks=ranks, recorded_groups=groups, largest=largest,
               inside_up_to=inside, faulty="yes" if spec["faulty"] else "no", drift_pct=round(100 * spec["drift"]),
               seed=seed, description=spec["what"])
    return "\n".join(truth) + "\n", "\n".join(recorded) + "\n", row


def generate(corpus, seed, largest):
    os.makedirs(corpus, exist_ok=True)
    rows = []
    for index, spec in enumerate(shapes(), 1):
        truth, recorded, row = generate_workload(spec, index, seed, largest)
        folder = os.path.join(corpus, row["workload"])
        os.makedirs(folder, exist_ok=True)
        for name, text in (("truth.csv", truth), ("recorded.csv", recorded)):
            path = os.path.join(folder, name)
            # A file already as generated is left alone, so a regenerated corpus keeps the runs made on it.
            if not os.path.exists(path) or open(path, encoding="utf-8").read() != text:
                write_text_atomically(path, text)
        rows.append(row)
    write_csv(os.path.join(corpus, "manifest.csv"), MANIFEST, rows)
    print(f"{corpus}: {len(rows)} workloads, seed {seed}, truths up to {largest} ranks")
    return rows


def write_csv(path, header, rows):
    lines = [",".join(header)]
    for r in rows:
        lines.append(",".join(csv_field(r.get(k, "")) for k in header))
    write_text_atomically(path, "\n".join(lines) + "\n")


def csv_field(v):
    text = str(v)
    return '"' + text.replace('"', '""') + '"' if any(ch in text for ch in ',"\n') else text


def read_rows(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


# ------------------------------------------------------------------------------------------------------- run


def ranks_of(text):
    """(the count advised, {count: its set-up}) from advice.csv's ranks_answer."""
    m = re.match(r"(\d+) ranks:", text or "")
    if not m:
        return None, {}
    return int(m.group(1)), {int(n): s for n, s in re.findall(r"(\d+) ranks \((.+?)\) take ", text)}


def advise(command, folder, log):
    """Runs one advise, its printed lines kept in folder/advise-lines.txt; the command in log."""
    os.makedirs(folder, exist_ok=True)
    with open(log, "a", encoding="utf-8") as f:
        f.write(shlex.join(command) + "\n")
    with open(os.path.join(folder, "advise-lines.txt"), "w", encoding="utf-8") as out:
        status = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT).returncode
    if status != 0:
        raise InputError(f"{shlex.join(command)} exited with {status}; see {folder}/advise-lines.txt")


def run(corpus, ranks, jobs, only, driver, sim, extra):
    rows = read_rows(os.path.join(corpus, "manifest.csv"))
    asked = [int(p) for p in ranks.split(",")]
    if max(asked) > min(int(r["largest"]) for r in rows):
        raise InputError(f"--ranks {ranks}: the truths reach {rows[0]['largest']} ranks (allowed: at most that; "
                         f"generate with --largest)")
    unknown = sorted(only - {r["workload"] for r in rows} - {r["workload"][3:] for r in rows})
    if unknown:
        raise InputError(f"--only {','.join(unknown)}: no such workload (allowed: "
                         f"{', '.join(r['workload'][3:] for r in rows)})")
    todo = [r for r in rows if not only or r["workload"] in only or r["workload"][3:] in only]
    start = time.monotonic()
    for k, r in enumerate(todo, 1):
        folder = os.path.join(corpus, r["workload"])
        said = f"[{k}/{len(todo)}] {r['workload']}"
        if os.path.exists(os.path.join(folder, "done.txt")):
            print(f"{said}: done before, skipped", flush=True)
            continue
        base = [driver, "advise"]
        tail = ["--jobs", str(jobs), "--sim-binary", sim] + extra
        log = os.path.join(folder, "commands.txt")
        print(f"{said}: advising on recorded.csv at {ranks} ({time.monotonic() - start:.0f} s so far)", flush=True)
        advise(base + [os.path.join(folder, "recorded.csv"), "--ranks", ranks, "--out",
                       os.path.join(folder, "recorded")] + tail, os.path.join(folder, "recorded"), log)
        advice = read_rows(os.path.join(folder, "recorded", "advice.csv"))
        advised, _ = ranks_of(advice[0].get("ranks_answer"))
        for p in sorted({int(a["nprocs"]) for a in advice} | ({advised} if advised else set())):
            out = os.path.join(folder, f"truth-p{p}")
            print(f"{said}: the truth at {p} ranks ({time.monotonic() - start:.0f} s so far)", flush=True)
            advise(base + [os.path.join(folder, "truth.csv"), "--ranks", str(p), "--no-race", "--plan-from",
                           os.path.join(folder, "recorded.csv"), "--out", out] + tail, out, log)
        write_text_atomically(os.path.join(folder, "done.txt"), f"ranks {ranks}\n")
    print(f"{corpus}: {len(todo)} workloads run in {time.monotonic() - start:.0f} s", flush=True)


# ----------------------------------------------------------------------------------------------------- score


def labels(row):
    return [row["setup"]] + [s for s in (row.get("same_as") or "").split("; ") if s]


def whole_s(row):
    return sum(float(row.get(k) or 0) for k in ("run_s", "calibration_s", "initial_groups_s"))


def truth_at(folder, p):
    """{set-up label: its advice.csv row} of the truth at p ranks, every label of a shared row."""
    rows = read_rows(os.path.join(folder, f"truth-p{p}", "advice.csv"))
    return {label: r for r in rows if int(r["nprocs"]) == p for label in labels(r)}


def planned_from(folder, counts):
    """What the truth's runs at these counts planned from, by their runs.csv's workload_plan_file: the recording,
    the truth itself (a folder run before the key existed), or both."""
    files = set()
    for p in counts:
        path = os.path.join(folder, f"truth-p{p}", "runs.csv")
        files |= {os.path.basename(r.get("workload_plan_file") or "") for r in read_rows(path)} \
            if os.path.exists(path) else {"?"}
    said = {"recorded.csv": "the recording's speed-ups", "": "truth's speed-ups", "?": "not recorded"}
    return "; ".join(said.get(f, f) for f in sorted(files))


def percent(x):
    return f"{100 * x:.1f}"


def score_workload(corpus, w, seed, command, scored_at):
    """The score's rows of one workload (its folder run), one per rank count asked."""
    folder = os.path.join(corpus, w["workload"])
    advice = read_rows(os.path.join(folder, "recorded", "advice.csv"))
    # The commits the recorded advice's simulations ran at, from its runs.csv (the truth's runs ran beside them).
    commit = " ".join(sorted({r["git_commit"] for r in read_rows(os.path.join(folder, "recorded", "runs.csv"))}))
    asked = sorted({int(r["nprocs"]) for r in advice})
    answer, named = ranks_of(advice[0].get("ranks_answer"))
    if advice[0].get("ranks_answer") and (answer is None or (answer not in named and answer not in asked)):
        # advise's words changed: a score without the rank answer would pass for one that has none.
        raise InputError(f"{folder}/recorded/advice.csv: ranks_answer names no count and set-up this scorer reads "
                         f"(allowed: 'N ranks: ...' then 'N ranks (SET-UP) take ...' per count)")
    truths = {p: truth_at(folder, p) for p in sorted(set(asked) | ({answer} if answer else set()))}
    planning = planned_from(folder, truths)
    tolerance = float(advice[0]["tolerance_pct"]) / 100
    # The rank answer against the best count under the stated rule, in the truth: at each count its fastest set-up;
    # the counts within the tolerance of the fastest anywhere; of them the fewest core-hours, else the least regret.
    fastest = {p: min(whole_s(r) for r in t.values()) for p, t in truths.items()}
    anywhere = min(fastest.values())
    within = [p for p in fastest if fastest[p] <= anywhere * (1 + tolerance) + 1e-12]
    best = (min(within, key=lambda p: (p * fastest[p], p)) if within
            else min(fastest, key=lambda p: (fastest[p], p)))
    answer_setup = named.get(answer) if answer else None
    if answer_setup is None and answer in asked:
        answer_setup = next(r["winner"] for r in advice if int(r["nprocs"]) == answer)
    answer_s = whole_s(truths[answer][answer_setup]) if answer and answer_setup in truths.get(answer, {}) else None
    out = []
    for p in asked:
        rows = [r for r in advice if int(r["nprocs"]) == p]
        pick = rows[0]["winner"]
        mine = next(r for r in rows if pick in labels(r))
        first = next((r for r in rows if r.get("rank") == "1"), rows[0])
        if pick not in truths[p] or "none" not in truths[p]:
            raise InputError(f"{folder}/truth-p{p}/advice.csv: no row of {pick if pick not in truths[p] else 'none'} "
                             f"(allowed: the truth advised without racing, every set-up priced)")
        truth = truths[p][pick]
        none = truths[p]["none"]
        true_gain = 1 - whole_s(truth) / whole_s(none)
        worst, top = float(mine["gain_worst"]), float(mine["gain_best"])
        verdict = first.get("verdict", "")
        out.append(dict(
            workload=w["workload"], shape=w["shape"], nprocs=p,
            truth_inside="yes" if int(w["inside_up_to"]) >= p else "no", pick=pick,
            tolerance_pct=f"{100 * tolerance:.1f}", tolerance_source=rows[0].get("tolerance_source", ""),
            pick_true_regret_pct=percent(whole_s(truth) / fastest[p] - 1),
            within_tolerance="yes" if whole_s(truth) <= fastest[p] * (1 + tolerance) + 1e-12 else "no",
            true_best=min(truths[p], key=lambda s: (whole_s(truths[p][s]), s)), true_gain_pct=percent(true_gain),
            stated_gain_worst_pct=percent(worst), stated_gain_best_pct=percent(top),
            covered="yes" if worst - tolerance - 1e-9 <= true_gain <= top + tolerance + 1e-9 else "no",
            robust=rows[0].get("robust", ""), said_extrapolated="yes" if "Extrapolated" in verdict else "no",
            names_sizes="yes" if re.search(r"To measure there, .*\d", verdict) else "no",
            ranks_asked=" ".join(map(str, asked)), ranks_answer=answer or "", answer_setup=answer_setup or "",
            answer_true_core_hours=f"{answer * answer_s / 3600:.6g}" if answer_s else "",
            best_ranks=best, best_true_core_hours=f"{best * fastest[best] / 3600:.6g}",
            answer_over_best=f"{answer * answer_s / (best * fastest[best]):.4g}" if answer_s else "",
            # The answer's own set-up priced: the best count with a set-up outside the tolerance does not follow.
            answer_follows_rule=("" if not answer_s else "yes" if answer_s <= anywhere * (1 + tolerance) + 1e-12 and
                                 answer * answer_s <= best * fastest[best] * (1 + tolerance) else "no"),
            truth_planning=planning, corpus_seed=seed, git_commit=commit, scored_at=scored_at,
            command=command))
    return out


def score(corpus, csv_path, summary_path, command, scored_at):
    manifest = read_rows(os.path.join(corpus, "manifest.csv"))
    rows, missing = [], []
    for w in manifest:
        if not os.path.exists(os.path.join(corpus, w["workload"], "done.txt")):
            missing.append(w["workload"])
            continue
        rows += score_workload(corpus, w, w["seed"], command, scored_at)
    if not rows:
        raise InputError(f"{corpus}: no workload has been run (allowed: a corpus `run` has worked on)")
    write_csv(csv_path, SCORE_HEADER, rows)
    # The manifest beside the score: the summary counts the workloads of the corpus from it.
    write_csv(os.path.join(os.path.dirname(os.path.abspath(csv_path)), "manifest.csv"), MANIFEST, manifest)
    text = summary(rows, len(manifest))
    if summary_path:
        write_text_atomically(summary_path, text + "\n")
    print(text)
    if missing:
        print(f"not run yet: {len(missing)} of {len(manifest)} workloads ({', '.join(missing[:4])}...)")
    return rows


def share(rows, key):
    n = sum(1 for r in rows if r[key] == "yes")
    return f"{n} of {len(rows)}" + (f" ({100 * n / len(rows):.0f} %)" if rows else "")


def cases(rows):
    return f"{len(rows)} case" + ("" if len(rows) == 1 else "s")


def summary(rows, workloads):
    """The score in Markdown: a table per case, then the counts the acceptance bounds judge (simulated)."""
    table = ["| workload | P | inside | pick | tolerance | pick's true regret | true gain | stated gain (worst to "
             "best) | covered | Extrapolated said |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        table.append(f"| {r['workload']} | {r['nprocs']} | {r['truth_inside']} | {r['pick']} | "
                     f"{r['tolerance_pct']} % | {r['pick_true_regret_pct']} % | {r['true_gain_pct']} % | "
                     f"{r['stated_gain_worst_pct']} to {r['stated_gain_best_pct']} % | {r['covered']} | "
                     f"{r['said_extrapolated']} |")
    inside = [r for r in rows if r["truth_inside"] == "yes"]
    outside = [r for r in rows if r["truth_inside"] == "no"]
    flagged = [dict(r, both="yes" if r["said_extrapolated"] == r["names_sizes"] == "yes" else "no") for r in outside]
    answers = {r["workload"]: r for r in rows if r["answer_follows_rule"]}
    words = [
        f"Simulated: {cases(rows)}, {len({r['workload'] for r in rows})} of {workloads} workloads at "
        f"{', '.join(sorted({str(r['nprocs']) for r in rows}, key=int))} ranks.",
        f"Inside advise's assumptions ({cases(inside)}): the pick within the tolerance of the true best in "
        f"{share(inside, 'within_tolerance')}; the stated range, widened by the tolerance, covers the true gain in "
        f"{share(inside, 'covered')}.",
        f"Outside them ({cases(outside)}): said Extrapolated and named the sizes to measure in "
        f"{share(flagged, 'both')}; the pick within the tolerance in {share(outside, 'within_tolerance')}.",
        f"The rank answer follows the stated rule in the truth in "
        f"{share(list(answers.values()), 'answer_follows_rule')} workloads."]
    # What the truth's runs planned from, as the rows say (read from the truth's runs.csv by the scorer).
    plans = sorted({r.get("truth_planning") or "not recorded" for r in rows})
    if plans == ["the recording's speed-ups"]:
        words.append("In the truth, the planning balancers and pays consulted the recording's speed-ups, as a user's "
                     "run would.")
    else:
        words.append(f"In the truth, the planning balancers and pays consulted {' and '.join(plans)}; only the "
                     f"recording's are what a user's run knows.")
    return "\n".join(table) + "\n\n" + " ".join(words)


def this_commit(outputs):
    """The scorer's own commit, -dirty where its work tree differs (new files included), as mcmclb stamps its own;
    the score's own files, written by an earlier score of a run resumed, left out."""
    def git(*args):
        return subprocess.run(["git"] + list(args), cwd=os.path.dirname(os.path.abspath(__file__)),
                              capture_output=True, text=True).stdout.strip()
    head = git("rev-parse", "--short=12", "HEAD")
    changed = git("status", "--porcelain", "--untracked-files=all", "--", ":/",
                  *(":(exclude)" + os.path.abspath(p) for p in outputs))
    return head + ("-dirty" if changed else "") if head else "unknown"


def main():
    p = ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("step", choices=("generate", "run", "score", "all"))
    p.add_argument("corpus", help="the corpus folder (generate writes it; run and score read it)")
    p.add_argument("--seed", type=int, default=1, help="the corpus's seed (default 1)")
    p.add_argument("--largest", type=int, default=1024, help="the truths' largest size (default 1024)")
    p.add_argument("--ranks", help="advise's --ranks, e.g. 16,64")
    p.add_argument("--jobs", type=int, default=1, help="advise's --jobs (default 1)")
    p.add_argument("--only", help="workloads to run, by name, separated by commas (default: all)")
    p.add_argument("--mcmclb", default=os.environ.get("MCMCLB", "build-test/mcmclb"))
    p.add_argument("--sim-binary", default=os.environ.get("SIM_BINARY", "build-sim/mcmclb-sim"))
    p.add_argument("--csv", help="the score's CSV")
    p.add_argument("--summary", help="the score's summary, Markdown")
    args = p.parse_args()
    try:
        if args.largest < 8 or args.largest > 1 << 20:
            raise InputError(f"--largest {args.largest} (allowed: 8 to 2^20)")
        if args.step in ("run", "all") and not (args.ranks and re.fullmatch(r"\d+(,\d+)+", args.ranks)):
            raise InputError(f"--ranks {args.ranks} (allowed: two rank counts or more, separated by commas)")
        if args.step in ("score", "all") and not args.csv:
            raise InputError("--csv missing (allowed: the score's CSV file)")
        if args.step in ("generate", "all"):
            generate(args.corpus, args.seed, args.largest)
        if args.step in ("run", "all"):
            run(args.corpus, args.ranks, args.jobs, set(args.only.split(",")) if args.only else set(), args.mcmclb,
                args.sim_binary, [])
        if args.step in ("score", "all"):
            score(args.corpus, args.csv, args.summary, shlex.join(["plots/advise_corpus.py"] + sys.argv[1:]),
                  this_commit([args.csv, os.path.join(os.path.dirname(os.path.abspath(args.csv)), "manifest.csv")] +
                              ([args.summary] if args.summary else [])))
    except (InputError, OSError) as e:
        fail("advise_corpus.py", str(e))


if __name__ == "__main__":
    main()
