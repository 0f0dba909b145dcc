# SPDX-License-Identifier: BSD-3-Clause
"""docs/explanation/paper-reproduction.md: the page's answer, one bullet per finding, every number from the folders the
block names and from the paper's values in plots/reference/dinan2011.csv (paper-answer), and Fig. 1's finding on
variants of its platform (fig1-sensitivity) and each method's time on them (fig1-links)."""
import os
import re
from collections import defaultdict

from mcmclb_csv import RUN_COLUMNS, InputError, read_csv, read_runs, run_label
from mcmclb_stats import median

from . import common, simulation
from .common import TIMES, Inputs, paper_fig2_times, table_text, wrapped


def and_list(items):
    """'a, b and c' of texts."""
    return ", ".join(items[:-1]) + " and " + items[-1] if len(items) > 1 else "".join(items)


def row_text(r):
    """A Table 1 row of a run: 'avg / stdev / min / max'."""
    return f"{r['regroups_avg']:.2f} / {r['regroups_std']:.2f} / {r['regroups_min']} / {r['regroups_max']}"


def table1_equal(fig2, table1_folder, nprocs):
    """(collective rows equal to the paper's, collective rows of the paper) at nprocs, as plots/table1.py --paper
    builds them from both folders."""
    import table1
    try:
        runs = read_runs([os.path.join(common.ROOT, f) for f in (fig2, table1_folder)])
        _, header, lines = table1.build(runs, table1_folder, nprocs, paper=True)
    except InputError as e:
        raise InputError(str(e).replace(common.ROOT + os.sep, "")) from None
    rows = [dict(zip(header, cells)) for cells in lines if cells[0].startswith("collective(")]
    equal = sum(all(r[k] == r[f"paper {k}"] for k in ("avg", "stdev", "min", "max")) for r in rows)
    return equal, len(rows)


def seeds_medians(folder):
    """{(finished rule, noise %): median regroups_avg over the seeds} of a table1-seeds folder's async runs."""
    runs = Inputs.read(folder, need=RUN_COLUMNS + ["finished", "jitter_pct"])
    groups = defaultdict(list)
    for r in runs:
        if r["balancer"] == "async" and r["valid"] is True:
            groups[(r["finished"], r["jitter_pct"])].append(r["regroups_avg"])
    if not groups:
        raise InputError(f"{folder}/runs.csv: no valid async run (allowed: Table 1's async row over noise seeds)")
    return {key: median(values) for key, values in groups.items()}


def slow_polling(folder):
    """The async retire intercomm run without noise of a folder of async-gap-latency's study (its setting in its
    provenance.csv): (the run, its setting's smpi/test value, the value its platform file ships)."""
    runs = [r for r in Inputs.read(folder, need=RUN_COLUMNS + ["finished", "jitter_pct"])
            if r["balancer"] == "async" and r["method"] == "intercomm" and r["finished"] == "retire"
            and not r["jitter_pct"] and r["valid"] is True]
    if len(runs) != 1:
        raise InputError(f"{folder}/runs.csv: {len(runs)} valid async intercomm retire runs without noise "
                         f"(allowed: exactly one)")
    prov = Inputs.read(folder, "provenance.csv", need=("run_id", "simgrid_cfg"))
    cfg = next((p["simgrid_cfg"] for p in prov if p["run_id"] == runs[0]["run_id"]), "")
    test = next((part.split(":", 1)[1] for part in cfg.split() if part.startswith("--cfg=smpi/test:")), None)
    if test is None:
        raise InputError(f"{folder}/provenance.csv: the run's simgrid_cfg sets no smpi/test (allowed: a folder of "
                         f"the polling cost's sensitivity)")
    platform = os.path.join(common.ROOT, runs[0]["platform"])
    try:
        with open(platform, encoding="utf-8") as f:
            shipped = re.search(r'<prop id="smpi/test" value="([^"]+)"', f.read())
    except OSError:
        shipped = None
    if shipped is None:
        raise InputError(f"{folder}/runs.csv: its platform {runs[0]['platform']} sets no smpi/test (allowed: a "
                         f"platform file of configs/platforms/)")
    return runs[0], float(test), float(shipped.group(1))


def crossover(bench_csv):
    """(P, the group size from which Algorithm 1 costs more than MPI_Comm_create as plots/fig1.py finds it, the
    ratio of the two at g = P, and the two medians at g = P in µs, Algorithm 1's first) of a simulated commbench
    CSV's largest P."""
    import fig1
    bench = [r for r in Inputs.read_file(bench_csv, ("method", "op", "group_size", "nprocs", "time_us"),
                                         "commbench.csv") if r["op"] == "create"]
    if not bench:
        raise InputError(f"{bench_csv}: no create rows (allowed: a commbench CSV of Fig. 1)")
    largest = max(r["nprocs"] for r in bench)
    series = defaultdict(lambda: defaultdict(list))
    for r in bench:
        if r["nprocs"] == largest and r["method"] in (fig1.DEARER, fig1.CHEAPER):
            series[(r["method"], largest)][r["group_size"]].append(r["time_us"])
    found = fig1.find_crossovers(series).get((largest,))
    if not found or found["size"] is None:
        raise InputError(f"{bench_csv}: Algorithm 1 and MPI_Comm_create do not cross at P = {largest} (allowed: "
                         f"Fig. 1's simulated CSV)")
    dearer, cheaper = (median(series[(method, largest)][largest]) for method in (fig1.DEARER, fig1.CHEAPER))
    return largest, found, dearer / cheaper, (dearer, cheaper)


def one_simulation(bench_csv):
    """(the create rows, {git_commit, platform, simgrid_cfg: its one value}) of a simulated commbench CSV; InputError
    naming the file where its rows name two values of one of those, which would mix simulations in one row."""
    need = ("method", "op", "group_size", "nprocs", "time_us", "git_commit", "platform", "simgrid_cfg")
    rows, made = Inputs.read_file(bench_csv, need, "commbench.csv"), {}
    for r in rows:
        for column in ("git_commit", "platform", "simgrid_cfg"):
            made.setdefault(column, set()).add(r[column])
    for column, values in made.items():
        if len(values) != 1:
            raise InputError(f"{bench_csv}: its rows name {len(values)} values of {column} (allowed: one "
                             f"simulation per file)")
    return [r for r in rows if r["op"] == "create"], {column: values.pop() for column, values in made.items()}


def fig1_sensitivity(inputs):
    """Fig. 1's finding on variants of its platform: one row per simulated commbench CSV (the first the platform as
    shipped), with what differs from the first (the platform's changed values, the simulator's flags added or
    dropped), its commit, and what crossover() finds at its largest P: the group size from which Algorithm 1 costs
    more than MPI_Comm_create (and where it turns back, if it does), both at g = P and their ratio."""
    rows, base = [], None
    for bench_csv in inputs.folders:
        _, made = one_simulation(bench_csv)
        base = base or made
        largest, found, ratio, (dearer, cheaper) = crossover(bench_csv)
        setting = "platform as is"
        if made["platform"] != base["platform"]:
            setting = f"`{os.path.basename(made['platform'])}`: " + " ".join(
                f"`{change}`" for change in simulation.platform_changes(base["platform"], made["platform"]))
        flags, shipped = made["simgrid_cfg"].split(), base["simgrid_cfg"].split()
        changed = [f"+`{f.removeprefix('--cfg=')}`" for f in flags if f not in shipped] + \
                  [f"-`{f.removeprefix('--cfg=')}`" for f in shipped if f not in flags]
        back = f", no longer from g = {found['back']}" if found["back"] is not None else ""
        rows.append([setting, " ".join(changed) or "-", made["git_commit"], str(largest),
                     f"{found['size']:.1f} (between {found['below']} and {found['above']}{back})",
                     f"{dearer:.1f}", f"{cheaper:.1f}", f"{ratio:.1f}{TIMES}"])
    return table_text(["setting", "flags against the first row", "commit", "P",
                       "Algorithm 1 dearer from g =", "Algorithm 1 at g = P (µs)", "`MPI_Comm_create` at g = P (µs)",
                       "ratio at g = P"], rows)


def against_range(named, text, verb):
    """Where each of named [(interval, seconds)] falls against the range the paper's text allows (text, a
    fig2.PaperTime), grouped: '`collective(1)` and `(16)` end inside that range and `collective(128)` ends 176 ms
    above it' (verb 'end'), or for floors (verb 'lie') 'those of `collective(1)` and `(16)` lie inside that range and
    that of `collective(128)` lies 175 ms above it'."""
    parts = []
    for place in ("inside", "above", "below"):
        found = [(i, t) for i, t in named if text.place(t) == place]
        if not found:
            continue
        names = and_list([f"`collective({i})`" if n == 0 else f"`({i})`" for n, (i, _) in enumerate(found)])
        if verb == "lie":
            names = ("those of " if len(found) > 1 else "that of ") + names
        verb_of = verb if len(found) > 1 else {"end": "ends", "lie": "lies"}[verb]
        if place == "inside":
            parts.append(f"{names} {verb_of} inside {'that range' if not parts else 'it'}")
        else:
            edge = text.high_s if place == "above" else text.low_s
            parts.append(f"{names} {verb_of} " + and_list([f"{1000 * abs(t - edge):.0f}" for _, t in found]) +
                         f"\u00a0ms {place} {'that range' if not parts else 'it'}")
    return and_list(parts)


def paper_answer(inputs):
    """The reproduction page's answer, one bullet each: Fig. 2 at the folder's largest P against the paper's values
    (none and the ideal, which the workload fixes, and the ranges that its text allows async and collective), Table
    1's collective rows and its async row (retire without noise, and the nearest over rules and noise), the polling
    cost that brings async near the top of the paper's range, and Fig. 1's crossover. Folders in this order: Fig. 2's
    simulation, Table 1's other collective rows, Table 1's async row over noise seeds, Fig. 1's simulated commbench
    CSV, and one or more runs of the async-gap study with the slowest polling, one folder per rank count. Any further
    commbench CSV (a name ending .csv) is a variant of Fig. 1's platform at the same P: the crossover is then the
    range over all of them (crossover_range)."""
    import table1
    fig2, table1_folder, seeds, bench_csv, *rest = inputs.folders
    polling = [f for f in rest if not f.endswith(".csv")]
    variants = [f for f in rest if f.endswith(".csv")]
    paper = paper_fig2_times()
    runs = [r for r in Inputs.read(fig2, need=RUN_COLUMNS + ["finished"]) if r["valid"] is True]
    top = max(r["nprocs"] for r in runs)
    at = {run_label(r): r for r in runs if r["nprocs"] == top}
    need = ("none", "async intercomm", "collective(1) create", "collective(16) create", "collective(128) create")
    for label in need:
        if label not in at:
            raise InputError(f"{fig2}/runs.csv: no valid {label} run at P = {top} (allowed: Fig. 2's set-ups)")
    ideal = at["none"]["ideal_s"]
    none, asy = at["none"]["time_s"], at["async intercomm"]
    baseline, text_async = paper["none"].low_s, paper["async"]
    bullets = [
        f"**Fig. 2**, at {top} simulated ranks: `none` takes {none:.2f} s and the ideal is {ideal:.2f} s, as the "
        f"paper's workload implies ({baseline:.1f} s and {paper['ideal'].low_s:.1f} s). The simulated `async` "
        f"(the paper's protocol, Algorithm 1) ends at {asy['time_s']:.3f} s, {asy['time_s'] / ideal:.3f}{TIMES} the "
        f"ideal, {1000 * (asy['time_s'] - ideal):.0f}\u00a0ms above it. The paper's text puts its own `async` over "
        f"{100 * (1 - text_async.high_s / baseline):.0f} % below the {baseline:g} s baseline, under about "
        f"{text_async.high_s:g}\u00a0s; the simulated {asy['time_s']:.3f}\u00a0s is "
        f"{'in that range' if text_async.place(asy['time_s']) == 'inside' else text_async.place(asy['time_s']) + ' it'}"
        f". [CSV]({fig2}/runs.csv)."]
    floors = {r["interval"]: floor for r, floor in simulation.collective_floors([fig2], top)}
    coll = [(i, at[f"collective({i}) create"]["time_s"], floors.get(i)) for i in (1, 16, 128)]
    if None in [floor for *_, floor in coll]:
        raise InputError(f"{fig2}/runs.csv: collective runs at P = {top} without a floor (allowed: runs under retire "
                         f"without item noise on a cyclic workload)")
    text_coll = paper["collective(1)"]
    if any(paper.get(f"collective({i})") != text_coll for i, *_ in coll):
        raise InputError("plots/reference/dinan2011.csv: the paper's collective(1), (16) and (128) differ (allowed: "
                         "one time for the three, as the paper's text gives it)")
    where = ("below each floor" if text_coll.time_s < min(f for *_, f in coll) else
             "above each floor" if text_coll.time_s > max(f for *_, f in coll) else "between the floors")
    bullets.append(
        "`collective(1)`, `(16)` and `(128)` take " + and_list([f"{t:.3f}" for _, t, _ in coll]) + "\u00a0s. Each of "
        "their exchanges is an allreduce over all ranks, so none can end before its floor, the end its merge rule "
        "allows with free exchanges: " + and_list([f"{f:.3f}" for *_, f in coll]) + "\u00a0s. They end " +
        and_list([f"{100 * (t / f - 1):.2f}" for _, t, f in coll]) + " % above it. The paper's text gives the three "
        f"roughly {100 * (1 - text_coll.time_s / baseline):.0f} % below `none`, about {text_coll.time_s:g}\u00a0s, "
        f"which we read as {100 * (1 - text_coll.high_s / baseline):.0f} to {100 * (1 - text_coll.low_s / baseline):.0f} % "
        f"({text_coll.low_s:g}-{text_coll.high_s:g}\u00a0s). Simulated, " +
        against_range([(i, t) for i, t, _ in coll], text_coll, "end") + f". The text's approximate "
        f"{text_coll.time_s:g}\u00a0s is {where}. Of the floors, " +
        against_range([(i, f) for i, _, f in coll], text_coll, "lie") + ".")
    equal, total = table1_equal(fig2, table1_folder, top)
    medians = seeds_medians(seeds)
    paper_avg = next(float(r["avg"]) for r in read_csv(table1.REFERENCE, "dinan2011.csv", ["kind", "balancer", "avg"])
                     if r["kind"] == "table1" and r["balancer"] == "async")
    coalesce = [v for (rule, noise), v in medians.items() if rule == "coalesce" and noise]
    retire = [v for (rule, noise), v in medians.items() if rule == "retire" and noise]
    if not coalesce or not retire:
        raise InputError(f"{seeds}/runs.csv: no noisy runs of both rules (allowed: Table 1's async row over seeds)")
    bullets.append(
        f"**Table 1**: {'all' if equal == total else equal} {total if equal == total else f'of {total}'} collective "
        f"rows equal the paper's to the printed digit. The async row is not reproduced: without item noise it is "
        f"{row_text(asy)}, its average {100 * (1 - asy['regroups_avg'] / paper_avg):.0f} % below the paper's "
        f"{paper_avg:.2f} regroupings per process. With noise the "
        f"median average over seeds is {min(retire):.2f}-{max(retire):.2f} under `retire` and "
        f"{min(coalesce):.2f}-{max(coalesce):.2f} under `coalesce`, the nearest, "
        f"{100 * (min(coalesce) / paper_avg - 1):.0f}-{100 * (max(coalesce) / paper_avg - 1):.0f} % above the paper's. "
        f"[CSV]({seeds}/runs.csv).")
    slow = sorted((slow_polling(folder) + (folder,) for folder in polling), key=lambda s: -s[0]["nprocs"])
    if len({(test_s, shipped_s) for _, test_s, shipped_s, _ in slow}) != 1:
        raise InputError(f"block {inputs.name}: the polling folders {', '.join(polling)} differ in their polling cost "
                         f"(allowed: one setting at several rank counts)")
    _, test_s, shipped_s, _ = slow[0]
    bullets.append(
        f"Of the costs varied, only a polling call of {1000 * test_s:g} ms, {test_s / shipped_s:.0f}{TIMES} the "
        f"calibrated one, brings "
        f"`async` near the top of the paper's range, about {text_async.high_s:g}\u00a0s: " +
        ", ".join(f"{r['time_s']:.3f} s at {r['nprocs']} ranks" for r, *_ in slow) + ". Its retire row is then " +
        "; ".join(f"{row_text(r)} at {r['nprocs']} ranks, its average "
                  f"{abs(100 * (r['regroups_avg'] / paper_avg - 1)):.0f} % "
                  f"{'above' if r['regroups_avg'] >= paper_avg else 'below'} the paper's" for r, *_ in slow) + ". " +
        ", ".join(f"[CSV]({folder}/runs.csv)" for *_, folder in slow) + ".")
    largest, found, at_p, _ = crossover(bench_csv)
    # The paper's Fig. 1 is set beside its text only while the reference CSV holds none of its values; once it holds
    # some, this bullet must compare them, so it refuses rather than go on calling the comparison qualitative.
    fig1_values = [r for r in read_csv(table1.REFERENCE, "dinan2011.csv", ["kind"]) if r["kind"].startswith("fig1")]
    if fig1_values:
        raise InputError(f"plots/reference/dinan2011.csv: {len(fig1_values)} Fig. 1 rows, which block {inputs.name} "
                         f"does not compare (allowed: none, until it does)")
    _, sizes = crossover_range([bench_csv] + variants, inputs.name)
    bullets.append(
        f"**Fig. 1**, against the paper's text only, at {largest} simulated ranks: Algorithm 1 costs more than "
        f"`MPI_Comm_create` from a group of {min(sizes):.1f} to {max(sizes):.1f} ranks on, over {len(sizes)} runs "
        f"of the platform and its variants ({found['size']:.1f} as shipped, between the simulated sizes "
        f"{found['below']} and {found['above']}). For a group of all ranks it costs {at_p:.0f}{TIMES} as much. "
        f"{NOT_THE_MACHINE} [CSV]({bench_csv})." if variants else
        f"**Fig. 1**, against the paper's text only, at {largest} simulated ranks: Algorithm 1 costs more than "
        f"`MPI_Comm_create` from a group of {found['size']:.1f} ranks on (between the simulated sizes "
        f"{found['below']} and {found['above']}), and {at_p:.0f}{TIMES} as much for a group of all ranks. "
        f"{NOT_THE_MACHINE} [CSV]({bench_csv}).")
    return "\n".join("- " + wrapped(b).replace("\n", "\n  ") for b in bullets)


def fig1_links(inputs):
    """Each method's creation time on variants of Fig. 1's platform against the platform as shipped: one row per
    method and group size (sizes=g,g,...; default 2, the middle size and P), the time in µs on the first CSV's
    platform, then one column per other CSV with its time over the first's. Every CSV is one simulation at the same
    P, commit and simulator flags, so that a ratio moves with the platform's changed values alone."""
    from .commbench import COMMBENCH_METHODS
    tables, base, columns = [], None, []
    for bench_csv in inputs.folders:
        bench, made = one_simulation(bench_csv)
        if not bench:
            raise InputError(f"{bench_csv}: no create rows (allowed: a commbench CSV of Fig. 1)")
        made["nprocs"] = max(r["nprocs"] for r in bench)
        if base is None:
            base = dict(made, csv=bench_csv)
        else:
            for column in ("nprocs", "git_commit", "simgrid_cfg"):
                if made[column] != base[column]:
                    raise InputError(f"{bench_csv}: its {column} {made[column]} differs from {base['csv']}'s "
                                     f"{base[column]} (allowed: the first CSV's, so that only the platform differs)")
            changes = simulation.platform_changes(base["platform"], made["platform"])
            if not changes:
                raise InputError(f"{bench_csv}: its platform {made['platform']} is {base['csv']}'s (allowed: a "
                                 f"variant of it)")
            columns.append(" ".join(f"`{change}`" for change in changes) + " / as is")
        series = defaultdict(list)
        for r in bench:
            if r["nprocs"] == made["nprocs"]:
                series[(r["method"], r["group_size"])].append(r["time_us"])
        tables.append((bench_csv, {key: median(times) for key, times in series.items()}))
    p = base["nprocs"]
    measured = sorted({g for _, g in tables[0][1]})
    sizes = inputs.numbers("sizes", sorted({2, measured[len(measured) // 2], p}))
    out = []
    for method, label in COMMBENCH_METHODS:
        if not any(m == method for m, _ in tables[0][1]):
            continue
        for g in sizes:
            for bench_csv, times in tables:
                if (method, g) not in times:
                    raise InputError(f"{bench_csv}: no {method} time at group size {g} (allowed: sizes= of those "
                                     f"every CSV holds)")
            first = tables[0][1][(method, g)]
            out.append([label, str(g), f"{first:.1f}" if first >= 1 else f"{first:.2f}"] +
                       [f"{times[(method, g)] / first:.3f}" if first > 0 else "–" for _, times in tables[1:]])
    return table_text(["method", "g", f"as is, P = {p} (µs)"] + columns, out)


def merge_rule_rows(folders, p):
    """(how many, of) the collective runs at P = p of folders whose Table 1 row (avg, stdev, min, max, as printed)
    the merge rule alone gives, with no platform (collective_floor.regroups on the run's chain lengths); InputError
    where the model covers none of them."""
    import collective_floor
    import statistics
    runs = [r for r in read_runs([os.path.join(common.ROOT, f) for f in folders])
            if r["nprocs"] == p and r["balancer"] == "collective" and collective_floor.applies(r)]
    if not runs:
        raise InputError(f"{folders[0]}/runs.csv: no collective run at P = {p} that the merge rule's model covers "
                         f"(allowed: Fig. 2's and Table 1's collective runs)")
    same = 0
    for r in runs:
        joined = collective_floor.regroups(collective_floor.chain_items(r), r["G"], r["interval"])
        model = (f"{statistics.mean(joined):.2f}", f"{statistics.pstdev(joined):.2f}", str(min(joined)),
                 str(max(joined)))
        same += model == (f"{r['regroups_avg']:.2f}", f"{r['regroups_std']:.2f}", f"{r['regroups_min']:.0f}",
                          f"{r['regroups_max']:.0f}")
    return same, runs


def table1_merge_rule(inputs):
    """One sentence: how many of Table 1's collective rows (plots/table1.py --paper, from both folders, at nprocs=)
    the merge rule alone gives to the printed digit, with no platform and free messages (collective_floor.regroups on
    each run's chain lengths), and what follows: those rows check the rule, whatever the platform."""
    fig2, table1_folder = inputs.folders
    p = (inputs.numbers("nprocs") or [8192])[0]
    equal, _ = table1_equal(fig2, table1_folder, p)
    same, runs = merge_rule_rows(inputs.folders, p)
    return wrapped(
        f"The merge rule alone, with no platform (`plots/collective_floor.py`), gives "
        f"{'all' if same == len(runs) else f'{same} of the'} {len(runs)} collective rows to the printed digit "
        f"({equal} equal the paper's): which groups merge follows from the items left, not from any time. So these "
        f"rows check the rule, not the platform's calibration.")


# What each simulated method replays (docs/reference/mpich-patterns.md): the messages this MPI library sends for it.
REPLAYED_MPI = "MPICH 4.0.2"
NOT_THE_MACHINE = (f"The model is not the paper's machine: each method replays the messages {REPLAYED_MPI} sends "
                   f"for it over a modelled torus, not IBM's MPI with Blue Gene/P's collective network, which the "
                   f"platform does not model.")


def crossover_range(csvs, name):
    """(P, [the group size from which Algorithm 1 costs more than MPI_Comm_create, per CSV]) over simulated
    commbench CSVs of one largest P (crossover()); InputError where they differ in P."""
    found = [crossover(f)[:2] for f in csvs]
    sizes = sorted({p for p, _ in found})
    if len(sizes) != 1:
        raise InputError(f"block {name}: CSVs at P = {', '.join(map(str, sizes))} (allowed: one rank count)")
    return sizes[0], [cross["size"] for _, cross in found]
