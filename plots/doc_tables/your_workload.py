# SPDX-License-Identifier: BSD-3-Clause
"""Tables of docs/guide/your-workload.md (and docs/results.md): a recorded trace replayed against the
compute-mode runs it was recorded from, and simulated replays at scale."""
import os
import re
from collections import defaultdict

from advise_corpus import read_rows, summary
from mcmclb_csv import RUN_COLUMNS, InputError, read_csv
from mcmclb_stats import Summary, median

from .common import (ROOT, Inputs, at_most_percent, by_setup, compare_ratio_text, milliseconds, setup_name,
                     table_text, time_with_interval, tolerance_text, wrapped)
from .simulation import gnu_time, wall_seconds


def trace_replay(inputs):
    """Replays of a recorded trace against the compute-mode runs it was recorded from: one row per set-up, the
    compute-mode median time with its 95 % interval (measured), then per replay its median (with its interval where
    measured; simulated: the one deterministic value) and replay / compute with the interval mcmclb compare forms
    (against a simulated replay, [replay / high, replay / low] of the compute-mode interval). The compute-mode runs
    are the first folder's; a replay is each trace file replayed in any folder, the first one included, so that a
    sweep which interleaved compute mode and replays is read from its one folder. Each column says measured or
    simulated."""
    need = RUN_COLUMNS + ["finished", "backend", "workload_file"]
    first = inputs.folders[0]
    compute = [r for r in Inputs.read(first, need=need) if r["work_mode"] == "compute"]
    if not compute:
        raise InputError(f"{first}/runs.csv: no compute-mode run (allowed: a folder whose runs include work.mode "
                         f"compute, the runs a trace was recorded from)")
    base, order = by_setup(compute, f"{first}/runs.csv")
    replays = []  # (label, {(P, set-up): runs}, simulated)
    for folder in inputs.folders:
        runs = [r for r in Inputs.read(folder, need=need) if r["workload"] == "trace"]
        if not runs and folder != first:
            raise InputError(f"{folder}/runs.csv: no replay of a trace (allowed: folders of workload.model trace runs)")
        for file in dict.fromkeys(r["workload_file"] for r in runs):
            of_file = [r for r in runs if r["workload_file"] == file]
            label = folder if folder != first and len({r["workload_file"] for r in runs}) == 1 else \
                f"{folder} {os.path.basename(file)}"
            replays.append((label, by_setup(of_file, f"{folder}/runs.csv")[0],
                            any(r["backend"] == "smpi" for r in of_file)))
    if not replays:
        raise InputError(f"block {inputs.name}: no replay of a trace in {', '.join(inputs.folders)} (allowed: "
                         f"folders whose runs include workload.model trace)")
    header = ["set-up", f"compute mode, {first} (measured): median [95 % CI]"]
    for label, _, simulated in replays:
        header += [f"replay, {label} ({'simulated' if simulated else 'measured'})", "replay / compute"]
    rows = []
    for (p, setup) in sorted(base, key=lambda k: (k[0], order.index(k[1]))):
        a = Summary([r["time_s"] for r in base[(p, setup)]])
        row = [f"P = {p} {setup}", time_with_interval(a)]
        for label, g, simulated in replays:
            runs = g.get((p, setup))
            if not runs:
                raise InputError(f"{label}: no valid {setup} run at P = {p} (allowed: the set-ups of {first}'s "
                                 f"compute-mode runs)")
            b = Summary([r["time_s"] for r in runs], simulated=simulated)
            text, unit = milliseconds(b.median)
            # A simulated time is exact: its ratio's interval is the compute-mode median's alone.
            ratio = compare_ratio_text(a, b) if not simulated or not a.has_interval else (
                f"{b.median / a.median:.3f} [{b.median / a.hi:.3f}, {b.median / a.lo:.3f}]")
            row += [f"{text} {unit}" if simulated else time_with_interval(b), ratio]
        rows.append(row)
    return table_text(header, rows)


def prediction(inputs):
    """The simulation on a calibrated platform against real runs of the same set-ups on that machine: the rows of
    prediction.csv as plots/prediction_check.py forms them from the folder's real/ and sim/ results. One row per
    comparison: the real median with its 95 % interval (measured), the simulated time, and simulated / real with the
    interval mcmclb compare forms (the simulated time over the real interval's ends). A replay's row is followed by
    the application's, the compute-mode runs of the same balancer, against the same simulated time."""
    from prediction_check import comparisons
    real, sim = (os.path.join(ROOT, inputs.folders[0], f) for f in ("real", "sim"))
    try:
        rows = comparisons(real, sim)
    except InputError as e:
        raise InputError(str(e).replace(ROOT + os.sep, "")) from None
    against = {"model": "emulated workload (sleep)", "replay": "the trace replayed (spin)",
               "application": "the application (compute)"}
    # One n for every row is said once, in the header.
    counts = {r["n"] for r in rows}
    n_text = f", n = {counts.pop()}" if len(counts) == 1 else ""
    header = ["set-up", "real runs of", f"real (measured{n_text}): median [95 % CI]", "simulated", "simulated / real"]
    body = []
    for r in rows:
        text, unit = milliseconds(r["real_median_s"])
        decimals = len(text.partition(".")[2])
        scale = 1 if unit == "s" else 1000
        sim_text, sim_unit = milliseconds(r["sim_s"])
        low, high = (f"{r[k] * scale:.{decimals}f}" for k in ("real_low_s", "real_high_s"))
        body.append([f"P = {r['nprocs']} {r['setup']}", against[r["check"]] + ("" if n_text else f", n = {r['n']}"),
                     f"{text} {unit} [{low}, {high}]", f"{sim_text} {sim_unit}",
                     f"{r['ratio']:.3f} [{r['ratio_low']:.3f}, {r['ratio_high']:.3f}]"])
    return table_text(header, body)


def calibration_errors(inputs):
    """A calibrated platform against the machine it describes, as plots/calibration_check.py wrote it: one row per
    benchmark and size of errors.csv, the measured median with its 95 % interval, the simulated time and the error
    (simulated / measured - 1, with the interval's ends), then one sentence of the conditions from provenance.csv."""
    folder = os.path.join(ROOT, inputs.folders[0])
    rows = read_csv(os.path.join(folder, "errors.csv"), "errors.csv", ("what", "size", "simulated_us"))
    prov = read_csv(os.path.join(folder, "provenance.csv"), "calibration-check-provenance.csv",
                    ("calibration_utc", "utc_start", "rounds", "nprocs"))
    if len(prov) != 1:
        raise InputError(f"{inputs.folders[0]}/provenance.csv: {len(prov)} rows (allowed: one, the check's)")
    names = {"pingpong": "ping-pong, one way", "allreduce": "MPI_Allreduce", "create": "creation",
             "merge": "the kernel's merge", "reduce": "the kernel's group reduction"}

    def size(r):
        if r["unit"] == "ranks":
            return f"{r['size']} rank{'s' if r['size'] > 1 else ''}"
        b = r["size"]
        for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
            if b >= scale and b % (scale // 2) == 0:
                return f"{b / scale:g} {unit}"
        return f"{b} B"

    def us(v):
        return f"{v:.3g}" if v < 1000 else f"{v:.0f}"

    def signed(v):
        return "0" if round(v) == 0 else f"{v:+.0f}"  # no "-0" for an error under half a per cent

    counts = {r["n"] for r in rows}
    n_text = f", n = {counts.pop()}" if len(counts) == 1 else ""
    header = ["benchmark", "size", f"measured (us{n_text}): median [95 % CI]", "simulated (us)",
              "error: simulated / measured - 1"]
    body = [[names[r["what"]] + (f" ({r['method']})" if r["method"] else ""), size(r),
             f"{us(r['measured_median_us'])} [{us(r['measured_low_us'])}, {us(r['measured_high_us'])}]",
             us(r["simulated_us"]),
             f"{signed(r['error_pct'])} % [{signed(r['error_low_pct'])}, {signed(r['error_high_pct'])}]"] for r in rows]
    p = prov[0]
    busy = lambda v: "unknown" if v is None else f"{v:.0f} %"
    note = (f"P = {p['nprocs']} on {p['cpus']} CPUs, {p['mpi_library']}, {p['rounds']} interleaved rounds from "
            f"{p['utc_start']} to {p['utc_end']}, the host {busy(p['busy_before_pct'])} busy before and "
            f"{busy(p['busy_after_pct'])} after; calibrated at {p['calibration_utc']}; simulated on SimGrid "
            f"{p['simgrid_version']}, platform FNV-1a {p['platform_fnv1a64']}; commit {p['git_commit']}.")
    return table_text(header, body) + "\n\n" + wrapped(note)


def trace_at_scale(inputs):
    """Simulated replays at scale: one row per set-up, one column per rank count, trace file, chain map and (where
    not the trace's) planning scaling of the folders (the trace's name without .csv): time / none, the best of each
    column in bold; a last row gives none's simulated time. Every number is simulated."""
    need = RUN_COLUMNS + ["finished", "backend", "workload_file", "workload_map", "workload_scaling"]
    runs = [r for folder in inputs.folders for r in Inputs.read(folder, need=need) if r["valid"] is True]
    if any(r["backend"] != "smpi" for r in runs):
        raise InputError(f"block {inputs.name}: a run that is not simulated (allowed: folders of simulated runs)")
    # The planning model's scaling is named where it is not the trace's own.
    column = lambda r: (r["nprocs"], os.path.basename(r["workload_file"] or "").removesuffix(".csv"),
                        r["workload_map"] or "", "" if r["workload_scaling"] == "trace" else
                        f"planned {r['workload_scaling']}")
    columns = sorted({column(r) for r in runs})
    order = list(dict.fromkeys(setup_name(r) for r in runs))
    times = defaultdict(list)
    for r in runs:
        times[(setup_name(r), column(r))].append(r["time_s"])
    ratios = {}
    for c in columns:
        if not times.get(("none", c)):
            raise InputError(f"block {inputs.name}: no valid none run at {c} (allowed: a none run in every column)")
        for setup in order:
            if times.get((setup, c)):
                ratios[(setup, c)] = median(times[(setup, c)]) / median(times[("none", c)])
    best = {c: min(v for (s, cc), v in ratios.items() if cc == c) for c in columns}
    rows = [[setup] + [("—" if (setup, c) not in ratios else f"**{ratios[(setup, c)]:.3f}**"
                        if ratios[(setup, c)] == best[c] else f"{ratios[(setup, c)]:.3f}") for c in columns]
            for setup in order]
    rows.append(["none: time (simulated)"] + [" ".join(milliseconds(median(times[("none", c)]))) for c in columns])
    header = ["set-up: time / none"] + [" ".join(f"P = {p} {name} {map_} {scaling}".split())
                                        for p, name, map_, scaling in columns]
    return table_text(header, rows)


def seconds_text(text):
    """advice.csv's break_even_s as a cell: "55 s", "0.36 s", "never", or "-" where empty (beats none at once or
    has no one-off cost)."""
    if not text:
        return "-"
    if text == "never":
        return text
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"advice.csv: break_even_s is {text!r} (allowed: a number of seconds, never or empty)") \
            from None
    return f"{value:.0f} s" if value >= 10 else f"{value:.2g} s"


def sentences(text):
    """text cut into its sentences: after ".", "!" or "?" and a blank (not after "e.g." or "i.e.")."""
    return [s for s in re.split(r"(?<=[.!?])(?<!\be\.g\.)(?<!\bi\.e\.)\s+", text.strip()) if s]


def gain_range(row):
    """A row of advice.csv's gain over none, worst scenario first, as numbers: (worst, best) from vs_none_max and
    vs_none_min, which every folder has."""
    return 1 - row["vs_none_max"], 1 - row["vs_none_min"]


def gain_span(row):
    """A row's gain over none as a short cell, worst scenario first: "-2.0 to 63.9 %", each end as advice.csv gives
    it (an end within the tolerance of 0 is shown, not made 0: a slower worst case stays slower); one figure where
    the ends agree within the tolerance; "no difference you can measure" where both are within it of 0."""
    worst, best = gain_range(row)
    tolerance = row["tolerance_pct"] / 100 + 1e-12
    if max(abs(worst), abs(best)) <= tolerance:
        return "no difference you can measure"
    if best - worst <= tolerance:
        return f"{100 * (1 - row['vs_none_median']):.1f} %"
    # Rounded before printing, so that a loss below 0.05 % reads 0.0, never -0.0.
    worst, best = (round(100 * g, 1) + 0.0 for g in (worst, best))
    return f"{worst:.1f} to {best:.1f} %"


def older_gain_text(row, tolerance_pct):
    """gain_text for a folder without the `gain` column, from its lowest and highest ratio (no scenario names)."""
    worst, best = gain_range(row)
    tolerance = tolerance_pct / 100 + 1e-12
    if max(abs(worst), abs(best)) <= tolerance:
        return (f"no difference from none you can measure ({100 * worst:.1f} % to {100 * best:.1f} % faster, within "
                f"the {tolerance_text(tolerance_pct)} tolerance)")
    if best - worst <= tolerance:
        median = 1 - row["vs_none_median"]
        return f"{100 * abs(median):.1f} % {'faster' if median >= 0 else 'slower'} than none in every scenario"
    worst, best = (0.0 if abs(g) <= tolerance else g for g in (worst, best))  # an end within it counts as 0
    if worst >= 0:
        return f"{100 * worst:.1f} to {100 * best:.1f} % faster than none, by scenario"
    if best <= 0:
        return f"{-100 * worst:.1f} to {-100 * best:.1f} % slower than none, by scenario"
    return f"from {-100 * worst:.1f} % slower to {100 * best:.1f} % faster than none, by scenario"


def gain_text(row, tolerance_pct, ticks=True):
    """A row's gain over none in words, worst case first, as mcmclb advise says it: its `gain` column where the
    folder has one (it names the scenario at each end); in a folder older than ranges, the range from its lowest and
    highest ratio, without the scenarios' names. One figure (the median) where the ends agree within the
    tolerance; "no difference you can measure" where both are within it of 0, whatever their sign."""
    if row.get("gain"):
        text = row["gain"]
    else:
        text = older_gain_text(row, tolerance_pct)
    return text.replace(" none", " `none`") if ticks else text


TIE = re.compile(r"Tied within the (?P<tol>\S+ %) tolerance \([^)]*\) of the smallest largest regret: (?P<tied>.*); "
                 r"use (?P<winner>.*?), the simplest \((?P<order>[^()]*)\)\.$")


def tie_sentences(sentence, folder):
    """A verdict's sentence as the bullets of a page: its tie, which names each tied set-up with its regret and the
    tolerance's source again (98 words for 8 set-ups), as two sentences a reader takes in, the set-ups counted (the
    column `tied` of advice.csv lists them); any other sentence as it is."""
    m = TIE.match(sentence)
    if not m:
        return [sentence]
    count = len(re.findall(r"\(\d+(?:\.\d+)? %\)", m["tied"]))
    return [f"Tied within the {m['tol']} tolerance of the smallest largest regret: {count} set-ups "
            f"([advice.csv]({folder}/advice.csv), column `tied`).",
            f"Use {m['winner']}, the simplest of them ({m['order']})."]


def advice(inputs):
    """mcmclb advise's answer from its advice.csv (every number simulated): per rank count the `top` set-ups
    (default 5) in rank order (with those of identical times), at every rank count or those of the option `at`, their gain over none from the worst scenario to the
    best, largest and median regret and break-even; then that rank count's verdict, one bullet per sentence, and the
    tolerance regret was judged by. A folder older than ranges (no `gain` column) says that its verdicts quote
    medians."""
    top = int(inputs.option("top", "5"))
    folder = inputs.folders[0]
    rows = Inputs.read(folder, "advice.csv", ["nprocs", "walkers", "rank", "setup", "same_as", "vs_none_median",
                                              "vs_none_min", "vs_none_max", "regret_max", "regret_median",
                                              "break_even_s", "dropped", "tolerance_pct", "tolerance", "verdict"])
    out = []
    shown = set(inputs.numbers("at", sorted({r["nprocs"] for r in rows})))
    if not shown <= {r["nprocs"] for r in rows}:
        raise InputError(f"{folder}/advice.csv: no advice at P = {sorted(shown)} (allowed: its rank counts, "
                         f"{sorted({r['nprocs'] for r in rows})})")
    for p in sorted(shown):
        of_p = sorted((r for r in rows if r["nprocs"] == p), key=lambda r: r["rank"])
        header = ["rank", "set-up", "faster than none, worst to best scenario", "largest regret", "median regret",
                  "break-even"]
        cells = [[str(r["rank"]), r["setup"] + (f" (same as: {r['same_as']})" if r["same_as"] else "") +
                  (" (dropped by the race after one scenario: its regret there)" if r["dropped"] else ""),
                  gain_span(r),
                  f"{100 * r['regret_max']:.1f} %", f"{100 * r['regret_median']:.1f} %",
                  seconds_text(r["break_even_s"])] for r in of_p[:top]]
        out.append(table_text(header, cells))
        dropped = sum(1 for r in of_p if r["dropped"])
        if dropped:
            out.append("")
            out.append(f"The race dropped {dropped} of {len(of_p)} set-ups after one scenario ([advice.csv]"
                       f"({folder}/advice.csv), column `dropped`).")
        out.append("")
        first = of_p[0]
        out.append(f"Verdict at P = {p} (simulated; {first['walkers']}):" if first["walkers"] else
                   f"Verdict at P = {p} (simulated):")
        out.append("")
        for sentence in sentences(first["verdict"]):
            out.extend(f"- {part}" for part in tie_sentences(sentence, folder))
        out.append("")

        # The tolerance's account, a sentence per part: what is assumed, then what the check measured.
        # Each part's figures after its colon go in a sentence of their own.
        parts = first["tolerance"].replace(", measured at P = ", "; measured at P = ").split("; ")
        head, _, figures = parts[0].partition(": ")
        out.append(f"Tolerance: {tolerance_text(first['tolerance_pct'])} ({head})." +
                   (f" {figures[0].upper()}{figures[1:]}." if figures else "") +
                   "".join(f" {p[0].upper()}{p[1:]}." for p in parts[1:]))
        understated = understated_loads(folder, first)
        if understated:
            out[-1] += (" The advise that wrote these words rounded the host's load down: it was " +
                        ", ".join(understated[:-1]) + (" and " if len(understated) > 1 else "") + understated[-1] +
                        ".")
        out.append("")
    if not rows[0].get("gain"):  # written before gains were ranges: said once, before the costs
        out.append("This folder predates gains as ranges: its verdicts quote the scenarios' median, a midpoint.")
        out.append("")
    cost = host_cost(os.path.join(folder, "advise.time"))  # relative to the root, as the block's links are
    if cost:
        out.append(cost)
    simulations = simulations_cost(folder)
    if simulations:
        if out and out[-1] != "":
            out.append("")
        out.append(simulations)
    return "\n".join(out).rstrip("\n")


def understated_loads(folder, first):
    """Where advise's tolerance words (first's `tolerance`) quote a host load below the one its files record, the
    load on file, as "N % during <what>" texts (the check's two sources named once): a build that rounded the load
    to a whole per cent could say "at most 3 %" of 3.2 %. The program's runs are advice.csv's tolerance_busy_pct, the check's the most of check.csv's
    busy_before_pct and busy_after_pct (each check row's host before and after it)."""
    recorded, named = {"your program's own runs": first.get("tolerance_busy_pct")}, {}
    if os.path.exists(os.path.join(ROOT, folder, "check.csv")):
        check = Inputs.read(folder, "check.csv", ["busy_before_pct", "busy_after_pct"])
        loads = [v for r in check for v in (r["busy_before_pct"], r["busy_after_pct"]) if isinstance(v, (int, float))]
        if loads:
            recorded["the simulation against the real replay"] = recorded["the real replay against your program"] = \
                max(loads)
    found = []
    for what, quoted in re.findall(r"(your program's own runs|the simulation against the real replay|the real replay "
                                   r"against your program) at P = \d+, n = \d+, the host at most ([\d.]+) % busy",
                                   first["tolerance"]):
        load = recorded.get(what)
        if isinstance(load, (int, float)) and float(quoted) < load:
            named.setdefault("your program's own runs" if what == "your program's own runs" else "the check", load)
    return [f"{at_most_percent(load)} % during {what}" for what, load in named.items()]


def simulations_cost(folder):
    """The host CPU of the advice's simulations per rank count (provenance.csv's host_cpu_s of its runs, each a
    simulation: the host cost that grows with P), as a sentence; "" when the folder keeps no provenance."""
    if not os.path.exists(os.path.join(ROOT, folder, "provenance.csv")):
        return ""
    cpu = {r["run_id"]: r["host_cpu_s"] for r in Inputs.read(folder, "provenance.csv", ["run_id", "host_cpu_s"])}
    by_p = defaultdict(float)
    count = defaultdict(int)
    for r in Inputs.read(folder, "runs.csv", ["run_id", "nprocs"]):
        if isinstance(cpu.get(r["run_id"]), (int, float)):
            by_p[r["nprocs"]] += cpu[r["run_id"]]
            count[r["nprocs"]] += 1
    parts = [f"P = {p}: {count[p]} in {duration(by_p[p])}" for p in sorted(by_p)]
    return (f"Host CPU of its simulations ([provenance.csv]({folder}/provenance.csv), `host_cpu_s`), by rank count. "
            "In all: " + "; ".join(parts) + ".")


def duration(seconds):
    """A host time in words: seconds below two minutes (a run of 2 s is not "0.0 min"), minutes above."""
    return f"{seconds:.1f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


def host_cost(path):
    """The host cost of the advise command from its GNU time record (/usr/bin/time -v -o PATH), as a sentence;
    "" when the folder has none. InputError naming the file when a figure is missing (simulation.gnu_time)."""
    if not os.path.exists(os.path.join(ROOT, path)):
        return ""
    found = gnu_time(path)
    cpu = float(found["user"]) + float(found["system"])
    return (f"Host cost of the whole command ([advise.time]({path})): {duration(wall_seconds(found['wall']))} of "
            f"wall time and {duration(cpu)} of CPU on this project's 2-core VM, peak {int(found['rss']) / 1024:.0f} "
            f"MiB in one process.")


def advice_words(folder, p):
    """What the advice in folder says at P = p, in a clause: use or keep, the gain over none from worst to best
    scenario, robust or what it depends on."""
    rows = Inputs.read(folder, "advice.csv", ["nprocs", "rank", "setup", "winner", "robust", "vs_none_median",
                                              "vs_none_min", "vs_none_max", "depends_on", "tolerance_pct", "verdict"])
    first = next(r for r in rows if r["nprocs"] == p and r["rank"] == 1)
    # What flips the winner, without the list of who wins at each value (advice.csv's depends_on has it); where no
    # value flips it, the reason the verdict gives (an answer resting on extrapolation is never robust).
    if first["robust"] == "yes":
        sure = "robust"
    elif first["depends_on"]:
        sure = f"not robust: it depends on {first['depends_on'].split(' (')[0]}"
    else:
        why = re.search(r"Not robust: ([^.]*)", first["verdict"])
        sure = ("not robust" + (f": {why.group(1)}" if why else
                                ": its groups work past twice the measured sizes" if "Extrapolated:" in first["verdict"]
                                else ""))
    if first["winner"] == "none":
        return f"keep `none`, no balancer gains more than the tolerance; {sure}"
    won = next(r for r in rows if r["nprocs"] == p and r["setup"] == first["winner"])
    # Several set-ups within the tolerance of the smallest largest regret: the winner is the simplest of them, which
    # the reader should know before taking it as the only one that works.
    tied = [r for r in rows if r["nprocs"] == p and r.get("tied") == "yes"]
    tie = f"; the simplest of {len(tied)} set-ups tied within the tolerance" if len(tied) > 1 else ""
    # Two sentences: the gain names the scenario at each end, which would make one too long to read.
    return f"use `{first['winner']}`; {sure}{tie}. It runs {gain_text(won, won['tolerance_pct'])}"


def advice_answer(inputs):
    """The one answer of an advise folder, a sentence per rank count, for every page that states it (generated here
    once, so no page restates it by hand): what to use, its gain over none, robust or not (simulated)."""
    folder = inputs.folders[0]
    rows = Inputs.read(folder, "advice.csv", ["nprocs", "walkers", "rank"])
    parts = []
    for p in sorted({r["nprocs"] for r in rows}):
        first = next(r for r in rows if r["nprocs"] == p and r["rank"] == 1)
        parts.append(f"At P = {p} ({first['walkers'].replace(f' on {p} ranks', '')}): {advice_words(folder, p)}.")
    # A paragraph per rank count: one paragraph for both would run past what a reader takes in at once.
    return "\n\n".join(parts) + f" Simulated; [advice.csv]({folder}/advice.csv)."


def trace_summary(inputs):
    """A recorded trace file in two sentences, from its rows: the walkers, their items and the items' mean seconds,
    the walker with the most; then its speed-ups at each size measured (pairs or repetitions, lowest to highest) and
    the pairs its '# set aside:' lines name. Every number is measured: the trace holds the program's own timings."""
    path = inputs.folders[0]
    try:
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            lines = f.read().split("\n")
    except OSError:
        raise InputError(f"block {inputs.name}: {path}: no such file (allowed: a trace file)") from None
    aside = sum(1 for line in lines if line.startswith("# set aside:"))
    rows = [line.split(",") for line in lines if line and not line.startswith("#")]
    if not rows or rows[0][:5] != ["chain", "item", "ranks", "seconds", "speedup"]:
        raise InputError(f"block {inputs.name}: {path}: not a trace (allowed: a file whose header is "
                         f"chain,item,ranks,seconds,speedup)")
    items, speedups = defaultdict(list), defaultdict(list)
    try:
        for chain, _, ranks, seconds, speedup in (r[:5] for r in rows[1:]):
            if seconds:
                items[chain].append(float(seconds))
            elif speedup:
                speedups[int(ranks)].append(float(speedup))
    except ValueError:
        raise InputError(f"block {inputs.name}: {path}: a row without 5 fields or with a number that is none "
                         f"(allowed: chain,item,ranks,seconds,speedup)") from None
    every = [s for costs in items.values() for s in costs]
    if not every or not speedups:
        raise InputError(f"block {inputs.name}: {path}: no item rows or no speed-up rows (allowed: both)")
    most = max(len(costs) for costs in items.values())
    sizes = " and ".join(f"{min(values):.2f} to {max(values):.2f} at {size} ranks ({len(values)} of them)"
                         for size, values in sorted(speedups.items()))
    text = (f"{len(items)} walkers, {len(every)} items of about {sum(every) / len(every):.2g} s each (measured), one "
            f"walker with {most} of them. Their speed-ups, measured, range from {sizes}.")
    if aside:
        text += (f" {aside} more, above their rank count, {'was' if aside == 1 else 'were'} set aside as measurement "
                 f"errors (the trace's `# set aside:` lines).")
    return text


def advice_brief(inputs):
    """The same answer as advice_answer, one clause per rank count, for a page with room for no more: what to use
    (or keep none), robust or not."""
    folder = inputs.folders[0]
    rows = Inputs.read(folder, "advice.csv", ["nprocs", "rank", "winner", "robust"])
    parts = []
    for p in sorted({r["nprocs"] for r in rows}):
        first = next(r for r in rows if r["nprocs"] == p and r["rank"] == 1)
        verb = "keep `none`" if first["winner"] == "none" else f"use `{first['winner']}`"
        parts.append(f"at P = {p} {verb}{'' if first['robust'] == 'yes' else ' (not robust)'}")
    text = "; ".join(parts)
    return text[0].upper() + text[1:] + f" (simulated; [advice.csv]({folder}/advice.csv))."


def _off_pct(estimated, measured):
    """An estimate's difference from what was measured, in % of the measured."""
    return 100 * (estimated / measured - 1)


def _runs_at(rows, flags):
    """"N runs with FLAGS at commit(s) C": the rows' count, the flags they share and their commits."""
    commits = sorted({r["commit"] for r in rows})
    return (f"{len(rows)} runs with {flags} at commit{'s' if len(commits) > 1 else ''} "
            f"{', '.join(c[:7] for c in commits)}")


def advise_estimate(inputs):
    """How far mcmclb advise's wall-time estimate is off (docs/notes/advise-estimate/estimates.csv, measure.py): one
    row per advise run, in file order: the trace's walkers and items, the rank counts, the simulations run, the
    estimate printed before the start, the wall time measured, their difference as a share of the measured, and how
    busy the host was in the 2 s before; then one sentence: the largest difference, whether every run is within
    25 %, and the most busy the host was before a run."""
    path = inputs.folders[0]
    rows = Inputs.read_file(path, ("trace", "walkers", "items", "ranks", "jobs", "simulations", "estimated_s",
                                   "measured_s", "busy_before_pct", "commit"), "estimates.csv")
    if not rows:
        raise InputError(f"{path}: no row (allowed: measure.py's rows, one per advise run)")
    out = []
    for r in rows:
        error = _off_pct(r["estimated_s"], r["measured_s"])
        out.append([f"`{os.path.basename(r['trace'])}`", str(r["walkers"]), str(r["items"]),
                    r["ranks"].replace(",", ", "), str(r["simulations"]), f"{r['estimated_s']:.0f} s",
                    f"{r['measured_s']:.1f} s", f"{error:+.0f} %", f"{r['busy_before_pct']:.0f} %"])
    worst = max(rows, key=lambda r: abs(r["estimated_s"] / r["measured_s"] - 1))
    busiest = max(r["busy_before_pct"] for r in rows)
    within = all(abs(r["estimated_s"] / r["measured_s"] - 1) <= 0.25 for r in rows)
    jobs = f"`--jobs {rows[0]['jobs']}`"
    sentence = (f"\n\nThe largest difference is {_off_pct(worst['estimated_s'], worst['measured_s']):+.0f} % "
                f"(`{os.path.basename(worst['trace'])}` at P = {worst['ranks'].replace(',', ', ')}): "
                f"{'every' if within else 'not every'} estimate is within 25 % of the wall time. The host was at "
                f"most {at_most_percent(busiest)} % busy in the 2 s before a run. {_runs_at(rows, jobs)}.")
    return table_text(["trace", "walkers", "items", "ranks", "simulations", "estimated", "measured (wall)",
                       "estimate off by", "host busy before"], out) + sentence


def _wall_spread(rows):
    """["Between runs, one trace's wall time varied by up to X % (`trace`)."], the largest max/min - 1 of the rows'
    measured_s per trace, or [] where no trace ran twice."""
    walls = {}
    for r in rows:
        walls.setdefault(os.path.basename(r["trace"]), []).append(r["measured_s"])
    spread = max(((max(w) / min(w) - 1, t) for t, w in walls.items() if len(w) > 1), default=None)
    if not spread:
        return []
    return [f"Between runs, one trace's wall time varied by up to {100 * spread[0]:.0f} % (`{spread[1]}`)."]


def advise_estimate_whole(inputs):
    """advise's whole estimate (docs/notes/advise-estimate/estimates-whole.csv, measure.py --whole): one row per
    advise run, in file order: whether one core was kept busy, the trace and rank counts, the figure of the "in all"
    line with the other end beside it, the wall time, their difference, the cores advise measured free for two
    simulations, and the commit; then one sentence per host state: the differences' range, whether each is within
    25 %, and how far one trace's wall time varied between its runs."""
    path = inputs.folders[0]
    rows = Inputs.read_file(path, ("trace", "ranks", "jobs", "estimated_s", "other_end_s", "searched",
                                   "cores_all", "measured_s", "spinning", "commit"), "estimates-whole.csv")
    if not rows:
        raise InputError(f"{path}: no row (allowed: measure.py --whole's rows, one per advise run)")
    out = []
    for r in rows:
        other = "-" if r["other_end_s"] is None else f"{r['other_end_s']:.0f} s"
        out.append(["yes" if r["spinning"] == "yes" else "no", f"`{os.path.basename(r['trace'])}`",
                    str(r["ranks"]).replace(",", ", "), f"{r['estimated_s']:.0f} s", other,
                    f"{r['measured_s']:.1f} s ({'searched' if r['searched'] == 'yes' else 'no search'})",
                    f"{_off_pct(r['estimated_s'], r['measured_s']):+.0f} %",
                    "as idle" if r["cores_all"] is None else f"{r['cores_all']:.2f}", r["commit"][:7]])
    parts = []
    for busy, words in (("yes", "With one core busy"), ("no", "On the idle host")):
        some = [_off_pct(r["estimated_s"], r["measured_s"]) for r in rows if r["spinning"] == busy]
        if some:
            parts.append(f"{words} the figure was off by {min(some):+.0f} to {max(some):+.0f} %: "
                         f"{'every' if all(abs(x) <= 25 for x in some) else 'not every'} one within 25 %.")
            parts += _wall_spread([r for r in rows if r["spinning"] == busy])
    parts.append(f"{_runs_at(rows, '`--no-race --jobs ' + str(rows[0]['jobs']) + '`')}.")
    return table_text(["one core busy", "trace", "ranks", "estimated", "other end", "measured (wall)", "off by",
                       "cores measured free", "commit"], out) + "\n\n" + " ".join(parts)


def advise_estimate_repeated(inputs):
    """advise's whole estimate, repeated (docs/notes/advise-estimate/estimates-repeated.csv, measure.py --whole run
    six times or more per trace, the traces interleaved): one row per commit, host state and trace: the runs, the
    median figure, the median wall time and the median difference of the runs, each difference with the 95 %
    interval of its median (order statistics, n >= 6), and the median cores advise measured free; then one sentence
    per commit and host state: the medians' range, whether each lies within 25 %, and the single runs' range."""
    path = inputs.folders[0]
    rows = Inputs.read_file(path, ("trace", "ranks", "jobs", "estimated_s", "cores_all", "measured_s", "spinning",
                                   "commit"), "estimates-repeated.csv")
    if not rows:
        raise InputError(f"{path}: no row (allowed: measure.py --whole's rows, six or more per trace)")
    groups = {}
    for r in rows:
        groups.setdefault((r["commit"], r["spinning"]), {}).setdefault((r["trace"], r["ranks"]), []).append(r)
    out, parts = [], []
    for (commit, busy), traces in groups.items():
        medians, singles = [], []
        for (trace, ranks), runs in traces.items():
            each = [_off_pct(r["estimated_s"], r["measured_s"]) for r in runs]
            off = Summary(each)
            wall = Summary([r["measured_s"] for r in runs])
            cores = [r["cores_all"] for r in runs if r["cores_all"] is not None]
            interval = f" [{off.lo:+.0f}, {off.hi:+.0f}]" if off.has_interval else f" ({off.note})"
            out.append([commit[:7], "yes" if busy == "yes" else "no", f"`{os.path.basename(trace)}`",
                        str(ranks).replace(",", ", "), str(off.n),
                        f"{median([r['estimated_s'] for r in runs]):.0f} s",
                        f"{wall.median:.0f} s ({wall.min:.0f} to {wall.max:.0f})", f"{off.median:+.0f} %{interval}",
                        f"{median(cores):.2f}" if cores else "as idle"])
            medians.append(off.median)
            singles += each
        state = "one core busy" if busy == "yes" else "the host idle"
        parts.append(f"At {commit[:7]}, {state}, the median difference per trace was {min(medians):+.0f} to "
                     f"{max(medians):+.0f} %: {'each' if all(abs(m) <= 25 for m in medians) else 'not each'} "
                     f"within 25 %. Single runs were off by {min(singles):+.0f} to {max(singles):+.0f} %.")
        parts += _wall_spread([r for runs in traces.values() for r in runs])
    parts.append(f"{_runs_at(rows, '`--no-race --jobs ' + str(rows[0]['jobs']) + '`')}.")
    return table_text(["commit", "one core busy", "trace", "ranks", "runs", "estimated (median)",
                       "measured (wall, median, range)", "off by (median, 95 % interval)", "cores measured free"],
                      out) + "\n\n" + " ".join(parts)


def advise_estimate_race(inputs):
    """advise's estimate with racing (docs/notes/advise-estimate/estimates-race.csv, measure.py --race): one row per
    advise run: the range printed at the start (none's round alone, up to every simulation), the wall time, whether
    none settled every rank count, and where balancers raced the first round's estimate against its time; then one
    sentence: how far the low end was off where none settled, whether every time lies within its range (25 % either
    side), and how far the first rounds' estimates were off."""
    path = inputs.folders[0]
    rows = Inputs.read_file(path, ("trace", "ranks", "settled", "simulations_at_most", "simulations_run",
                                   "estimated_low_s", "estimated_high_s", "measured_s", "first_round_estimated_s",
                                   "first_round_measured_s", "busy_before_pct", "commit", "jobs"), "estimates-race.csv")
    out = []
    for r in rows:
        raced = r["settled"] != "yes"
        first = (f"{r['first_round_estimated_s']:.0f} s, took {r['first_round_measured_s']:.0f} s "
                 f"({_off_pct(r['first_round_estimated_s'], r['first_round_measured_s']):+.0f} %)"
                 if raced and r["first_round_measured_s"] is not None else "-")
        out.append([f"`{os.path.basename(r['trace'])}`", r["ranks"].replace(",", ", "),
                    f"{r['estimated_low_s']:.0f} to {r['estimated_high_s']:.0f} s",
                    f"{r['simulations_at_most']}, {r['simulations_run']}", f"{r['measured_s']:.1f} s",
                    "no" if raced else f"yes ({_off_pct(r['estimated_low_s'], r['measured_s']):+.0f} %)", first])
    settled = [_off_pct(r["estimated_low_s"], r["measured_s"]) for r in rows if r["settled"] == "yes"]
    within = all(0.75 * r["estimated_low_s"] <= r["measured_s"] <= 1.25 * r["estimated_high_s"] for r in rows)
    firsts = [_off_pct(r["first_round_estimated_s"], r["first_round_measured_s"]) for r in rows
              if r["settled"] != "yes" and r["first_round_measured_s"] is not None]
    parts = []
    if settled:
        parts.append(f"Where none settled every rank count, the low end was off by {min(settled):+.0f} to "
                     f"{max(settled):+.0f} %.")
    parts.append(f"{'Every' if within else 'Not every'} time lies within its range, 25 % either side.")
    # The count printed at the start is a bound the reader plans by: where more ran, it is wrong, and said so.
    over = [r for r in rows if r["simulations_run"] > r["simulations_at_most"]]
    if over:
        parts.append(f"In {len(over)} of {len(rows)} runs more simulations ran than the start's \"at most\" ("
                     + ", ".join(f"{r['simulations_run']} against {r['simulations_at_most']} for "
                                 f"`{os.path.basename(r['trace'])}`" for r in over) + "): that bound does not hold.")
    if firsts:
        parts.append(f"Where balancers raced, the first round's estimate was off by {min(firsts):+.0f} to "
                     f"{max(firsts):+.0f} %.")
    busiest = at_most_percent(max(r["busy_before_pct"] for r in rows))
    parts.append(f"{_runs_at(rows, '`--jobs ' + str(rows[0]['jobs']) + '`')}; the host at most {busiest} % busy "
                 f"before a run.")
    return table_text(["trace", "ranks", "estimated at the start", "simulations: at most, run", "measured (wall)",
                       "none settles (low end off by)", "first round: estimated, taken"], out) + "\n\n" + " ".join(parts)


def advise_estimate_check(inputs):
    """advise's estimates with --check (docs/notes/advise-estimate/estimates-check.csv, measure.py --check): one row
    per advise run: the estimate at the start (the check's real runs bounded) against the whole wall time, and the
    check's own estimate, printed once its balancers are known, against its real runs' wall time; then one sentence:
    each estimate's largest difference and whether every one is within 25 %."""
    path = inputs.folders[0]
    rows = Inputs.read_file(path, ("trace", "ranks", "check_reps", "estimated_s", "check_runs_bound",
                                   "check_estimated_s", "check_runs", "check_measured_s", "measured_s",
                                   "busy_before_pct", "commit", "jobs"), "estimates-check.csv")

    off = _off_pct
    out = []
    for r in rows:
        out.append([f"`{os.path.basename(r['trace'])}`", r["ranks"].replace(",", ", "),
                    f"{r['estimated_s']:.0f} s ({r['check_runs_bound']} runs at most)", f"{r['measured_s']:.1f} s",
                    f"{off(r['estimated_s'], r['measured_s']):+.0f} %",
                    f"{r['check_estimated_s']:.0f} s ({r['check_runs']} runs)", f"{r['check_measured_s']:.1f} s",
                    f"{off(r['check_estimated_s'], r['check_measured_s']):+.0f} %", f"{r['busy_before_pct']:.0f} %"])
    start = [off(r["estimated_s"], r["measured_s"]) for r in rows]
    check = [off(r["check_estimated_s"], r["check_measured_s"]) for r in rows]
    flags = f"`--jobs {rows[0]['jobs']}` and `--check-reps {rows[0]['check_reps']}`"
    sentence = (f"\n\nAt the start the estimate was off by {min(start):+.0f} to {max(start):+.0f} %. The check's own "
                f"was off by {min(check):+.0f} to {max(check):+.0f} %: "
                f"{'every' if all(abs(c) <= 25 for c in check) else 'not every'} one within 25 %. "
                f"{_runs_at(rows, flags)}. The host was at most "
                f"{at_most_percent(max(r['busy_before_pct'] for r in rows))} % busy before a run.")
    return table_text(["trace", "ranks", "estimated at the start", "measured (wall)", "off by",
                       "the check's estimate", "its real runs (wall)", "off by", "host busy before"], out) + sentence


def advise_corpus(inputs):
    """advise judged against a known truth (plots/advise_corpus.py): the score's table and the counts the
    acceptance bounds judge, from the folder's score.csv and manifest.csv, as the scorer prints them."""
    folder = os.path.join(ROOT, inputs.folders[0])
    try:
        rows, manifest = (read_rows(os.path.join(folder, name)) for name in ("score.csv", "manifest.csv"))
    except OSError as e:
        raise InputError(f"{inputs.folders[0]}: {e.strerror} (allowed: a folder with the corpus's score.csv and "
                         f"manifest.csv)") from None
    if not rows:
        raise InputError(f"{inputs.folders[0]}/score.csv: no row (allowed: plots/advise_corpus.py score's rows)")
    return summary(rows, len(manifest))
