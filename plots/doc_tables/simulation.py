# SPDX-License-Identifier: BSD-3-Clause
"""Tables of the simulated studies: docs/guide/simulation.md (the compute model's calibration), Table 1
and its sensitivity to seeds and noise, and the studies of docs/explanation/paper-reproduction.md and
docs/explanation/simulator-host-cost.md (the async gap, the unsourced constants, the host's cost of simulating, per
platform and per series, simulated times per folder)."""
import csv
import os
import re
from collections import defaultdict

import collective_floor
from mcmclb_csv import RUN_COLUMNS, InputError, fnv1a64_hex, read_runs, run_label
from mcmclb_stats import Summary, median

from . import common
from .common import Inputs, grouped, keyed, merged_order, paper_fig2_times, refuse_mixed, table_text


def spread(values, digits):
    """The median of values with their range in brackets ('15.03 [14.96-15.10]'), or the one value all share."""
    lo, mid, hi = min(values), median(values), max(values)
    if lo == hi:
        return f"{mid:.{digits}f}"
    return f"{mid:.{digits}f} [{lo:.{digits}f}-{hi:.{digits}f}]"


def table1_seeds(inputs):
    """Table 1's async row over the finished rule and the item noise (work.jitter_pct), each over its noise seeds
    (work.seed): the seeds run, then avg, stdev, min and max of the regroupings per process and the run time, each as
    the median over seeds with the range in brackets; the paper's row first (its time the range its text allows,
    plots/reference/dinan2011.csv: it gives no value). Without noise the seed draws nothing,
    so the seeds run there agree (one value, no range). Options: seeds=1,2 keeps the runs of those noise seeds,
    rule=retire|coalesce those of one finished rule, nprocs=P those at P ranks (a folder of several rank counts)."""
    import table1
    folder = " and ".join(inputs.folders)
    need = ["finished", "jitter_pct", "work_seed", "time_s", "regroups_avg", "regroups_std", "regroups_min",
            "regroups_max", "valid", "balancer", "nprocs"]
    seeds, rule = inputs.numbers("seeds"), inputs.choice("rule", ("retire", "coalesce"))
    nprocs = inputs.numbers("nprocs", [None])[0]
    cells = defaultdict(list)
    for one in inputs.folders:
        for r in Inputs.read(one, need=need):
            if r["balancer"] == "async" and r["valid"] and (seeds is None or r["work_seed"] in seeds) and \
                    (rule is None or r["finished"] == rule) and (nprocs is None or r["nprocs"] == nprocs):
                cells[(r["finished"], r["jitter_pct"])].append(r)
    if not cells:
        raise InputError(f"{folder}/runs.csv: no valid async run (allowed: a Table 1 study's runs)")
    refuse_mixed(cells, f"{folder}/runs.csv", pooled=("work_seed",))

    paper = table1.paper_values()[("async", "")]
    paper_s = paper_fig2_times()["async"].text()
    rows = [["**paper (BG/P, 8192 cores)**", "?", "-"] + [f"**{v}**" for v in paper] + [f"**{paper_s}**"]]
    for (rule, noise) in sorted(cells, key=lambda k: (k[0] != "retire", k[1])):
        runs = cells[(rule, noise)]
        seeds = len({r["work_seed"] for r in runs})
        rows.append([rule, f"{noise:g} %", str(seeds) if noise else f"{seeds} (no noise: the seed draws nothing)"] +
                    [spread([r[c] for r in runs], d) for c, d in (("regroups_avg", 2), ("regroups_std", 2),
                                                                    ("regroups_min", 0), ("regroups_max", 0))] +
                    [spread([r["time_s"] for r in runs], 4)])
    return table_text(["finished rule", "item noise", "seeds", "avg", "stdev", "min", "max", "time_s"], rows)


def platform_changes(base, other):
    """The attributes by which platform file other differs from base (both relative to the root), as
    'attribute="value"' texts, and a configuration's prop as 'id:value' (as --cfg gives it); elements are matched by
    tag and id. InputError where the two differ in shape."""
    import xml.etree.ElementTree as ElementTree

    def elements(path):
        try:
            root = ElementTree.parse(os.path.join(common.ROOT, path)).getroot()
        except (OSError, ElementTree.ParseError) as e:
            raise InputError(f"{path}: cannot be read as a platform file ({e})") from None
        return [(e.tag, e.get("id"), e.attrib) for e in root.iter()]

    a, b = elements(base), elements(other)
    if [(tag, id_) for tag, id_, _ in a] != [(tag, id_) for tag, id_, _ in b]:
        raise InputError(f"{other}: not {base} with changed values (allowed: a copy of it with some attributes "
                         f"changed)")
    return [f"{y['id']}:{value}" if tag == "prop" and key == "value" else f'{key}="{value}"'
            for (tag, _, x), (_, _, y) in zip(a, b) for key, value in y.items() if x.get(key) != value]


def setting_of(folder, base_platform=None):
    """What a sensitivity folder's runs changed against the shipped simulation: the flags not in
    configs/platforms/smpi.cfg (from provenance.csv's simgrid_cfg) and, given base_platform, the attributes by which
    the runs' platform (runs.csv) differs from it; 'platform as is' where nothing did."""
    with open(os.path.join(common.ROOT, "configs", "platforms", "smpi.cfg")) as f:
        shipped = {line.strip() for line in f if line.strip() and not line.startswith("#")}
    settings = {tuple(flag for flag in r["simgrid_cfg"].split() if flag not in shipped)
                for r in Inputs.read(folder, "provenance.csv", need=("run_id", "simgrid_cfg"))}
    if len(settings) != 1:
        raise InputError(f"{folder}/provenance.csv: its runs differ in their flags or record none (allowed: one "
                         f"setting per folder)")
    changed = [f"`{flag.removeprefix('--cfg=')}`" for flag in settings.pop()]
    if base_platform is not None:
        platforms = {r["platform"] for r in Inputs.read(folder, need=("run_id", "platform"))}
        if len(platforms) != 1:
            raise InputError(f"{folder}/runs.csv: its runs name {len(platforms)} platforms (allowed: one per folder)")
        platform = platforms.pop()
        if platform != base_platform:
            changed += [f"`{os.path.basename(platform)}`: `{change}`"
                        for change in platform_changes(base_platform, platform)]
    return " ".join(changed) or "platform as is"


def async_gap(inputs):
    """The async gap's sensitivity: one row per folder (its setting from its provenance), item time T/G and noise;
    none's time, then async with Algorithm 1 (intercomm) and with range under retire, and with intercomm under
    coalesce: time_s with the gap to the ideal in brackets, and Table 1's row (regroupings per process, avg / stdev /
    min / max)."""
    rows = []
    for folder in inputs.folders:
        setting = setting_of(folder)
        need = ["balancer", "method", "finished", "T_ms", "G", "jitter_pct", "time_s", "ideal_s", "regroups_avg",
                "regroups_std", "regroups_min", "regroups_max"]
        cells = keyed((((r["T_ms"] / r["G"], r["jitter_pct"], r["balancer"], r["method"] or "", r["finished"] or ""),
                        r) for r in Inputs.read(folder, need=need)), f"{folder}/runs.csv")
        for item, noise in sorted({k[:2] for k in cells}):
            def one(balancer, method="", finished=""):
                found = cells.get((item, noise, balancer, method, finished))
                if not found:
                    raise InputError(f"{folder}/runs.csv: no {balancer} {method} {finished} run at T/G = {item:g} ms "
                                     f"and {noise:g} % noise (allowed: a study of configs/async-gap*.yaml)")
                return found

            def gap(r):
                return f"{r['time_s']:.4f} ({r['time_s'] - r['ideal_s']:.3f})"

            def row1(r):
                return (f"{r['regroups_avg']:.2f} / {r['regroups_std']:.2f} / {r['regroups_min']:g} / "
                        f"{r['regroups_max']:g}")
            retire, coalesce = one("async", "intercomm", "retire"), one("async", "intercomm", "coalesce")
            rows.append([setting, f"{item:g} ms", f"{noise:g} %", f"{one('none')['time_s']:.3f}", gap(retire),
                         f"{one('async', 'range', 'retire')['time_s']:.4f}", row1(retire), gap(coalesce),
                         row1(coalesce)])
    return table_text(["setting", "item T/G", "noise", "none", "retire: intercomm (gap)", "retire: range",
                       "retire: Table 1 row (intercomm)", "coalesce: intercomm (gap)",
                       "coalesce: Table 1 row (intercomm)"], rows)


def merge_waits(run, events, where):
    """The waits of a noise-free sleep-mode async run, from its events.csv rows: [(merge time, wait s, initial
    groups of the finished part)] and per initial group (G ranks) the sum of its waits. A group formed at t with n
    items left and g ranks ends its chain at t + n T / g; in a merge, each group of groups_before whose chain is not the
    one continued had finished, and waited from its chain's end until the merge."""
    g0, item_s = run["G"], run["T_ms"] / 1000
    groups, waits = {}, []
    per_group = [0.0] * (run["nprocs"] // g0)
    for e in sorted(events, key=lambda e: (e["t_s"], e["kind"] != "initial")):
        if e["kind"] == "merge":
            for part in e["groups_before"].split():
                first, _, last = part.partition("-")
                before = groups.pop((int(first), int(last)), None)
                if before is None:
                    raise InputError(f"{where}: run {run['run_id']} merges {part} at {e['t_s']} s, which no earlier "
                                     f"event formed (allowed: a run's complete events.csv)")
                if before["chain"] != e["chain"]:
                    wait = e["t_s"] - (before["t_s"] + before["items_left"] * item_s / before["group_size"])
                    waits.append((e["t_s"], wait, range(int(first) // g0, int(last) // g0 + 1)))
                    for i in waits[-1][2]:
                        per_group[i] += wait
        groups[(e["group_first"], e["group_last"])] = e
    return waits, per_group


def async_gap_model(inputs):
    """The paper's account of async's gap against the simulated one. The paper polls once per item, every T /
    group_size, so a finished group waits at most that long for its neighbour. Over one period of the cyclic
    workload, of `period` groups (workload_period / G; the paper writes it P), it puts the overhead at up to
    (period - 1) T / G per group. P in the table is the rank count. First the paper's row (the range of async times
    its text allows, and its Table 1 row, plots/reference/dinan2011.csv); then per folder (its setting from its
    provenance) each noise-free async run with Algorithm 1 under retire: its time with the gap to the ideal, its
    Table 1 row, its merges, the waits from a group's chain's end to its merge (merge_waits; median and largest),
    each initial group's sum of waits (median and largest) and the paper's overhead, in ms. The chain's end is
    estimated from its items alone, which holds where a polling point costs little against an item: for a folder
    that changes the polling cost (smpi/test) the waits are not given."""
    import table1
    rows = []
    for folder in inputs.folders:
        setting = setting_of(folder)
        need = ["balancer", "method", "finished", "T_ms", "G", "jitter_pct", "work_mode", "workload_period",
                "nprocs", "time_s", "ideal_s", "regroups_avg", "regroups_std", "regroups_min", "regroups_max"]
        runs = [r for r in Inputs.read(folder, need=need) if r["balancer"] == "async" and r["method"] == "intercomm"
                and r["finished"] in ("retire", None) and not r["jitter_pct"] and r["work_mode"] == "sleep"]
        if not runs:
            raise InputError(f"{folder}/runs.csv: no noise-free async intercomm run under retire in sleep mode "
                             f"(allowed: the paper's async runs)")
        events = defaultdict(list)
        for e in Inputs.read(folder, "events.csv", need=["run_id", "t_s", "kind", "groups_before", "group_first",
                                                         "group_last", "group_size", "chain", "items_left"]):
            events[e["run_id"]].append(e)
        for r in sorted(runs, key=lambda r: (r["nprocs"], r["T_ms"])):
            if r["run_id"] not in events:
                raise InputError(f"{folder}/events.csv: no events of run {r['run_id']} (allowed: the events of "
                                 f"every run the block reads)")
            waits, per_group = merge_waits(r, events[r["run_id"]], f"{folder}/events.csv")
            each = sorted(w for _, w, _ in waits)
            period, item = r["workload_period"] // r["G"], r["T_ms"] / r["G"]
            slow = "smpi/test" in setting or "smpi/iprobe" in setting
            rows.append([setting, f"{r['nprocs']}", f"{item:g}",
                         f"{r['time_s']:.4f} ({(r['time_s'] - r['ideal_s']) * 1e3:.0f})",
                         f"{r['regroups_avg']:.2f} / {r['regroups_std']:.2f} / {r['regroups_min']:g} / "
                         f"{r['regroups_max']:g}", str(len(waits)),
                         "–" if slow else f"{median(each) * 1e3:.1f} / {each[-1] * 1e3:.1f}",
                         "–" if slow else f"{median(per_group) * 1e3:.1f} / {max(per_group) * 1e3:.1f}",
                         f"{(period - 1) * item:g} = {period - 1} × {item:g}"])
    # The paper's row: its workload is paper-fig2.yaml's, so its item and overhead are the first run's; its Table 1
    # is at 8192 cores (the table's caption).
    paper_row = table1.paper_values()[("async", "")]
    rows.insert(0, ["**paper (BG/P)**", "8192", rows[0][2], f"**{paper_fig2_times()['async'].text()}**",
                    "**" + " / ".join(paper_row) + "**", "", "", "", rows[0][-1]])
    return table_text(["setting", "P", "item T/G (ms)", "time_s (gap, ms)", "Table 1 row", "merges",
                       "wait per merge: median / max (ms)", "waits per initial group, summed: median / max (ms)",
                       "paper's overhead (period - 1) T/G (ms)"], rows)


# What collective_floor.floor_s reads of a run, beyond RUN_COLUMNS (finished and chains_per_group, where a file
# has them).
FLOOR_COLUMNS = RUN_COLUMNS + ["G", "T_ms", "workload", "workload_scale", "workload_period", "jitter_pct"]


def collective_merges(inputs):
    """Where collective's idle ranks go, from events.csv: the merges of one run (run=LABEL, a set-up's label or its
    first word, e.g. collective(128); at nprocs=P, by default the largest) within the first period of the cyclic
    workload (ranks 0 to workload_period - 1; every period repeats it). Per merge: its time, the idle ranks that join,
    the chain they join (a merged group continues its right-hand group's chain, numbered from 0 in the period) with
    its items left, the ranks that work it then and when it would end with no further merge (t + items left * T /
    ranks); and the period's longest chain at that moment: its items left and its ranks. Then the run's time_s; its
    floor (plots/collective_floor.py), where it has one; the earliest end these merges allow, the last merge (the
    whole period joining the longest chain) held as soon as every other chain has ended; and the paper's time for the
    set-up (plots/reference/dinan2011.csv), where it gives one: its approximate value and the range its words allow.
    Simulated seconds."""
    folder = inputs.folders[0]
    label, nprocs = inputs.option("run"), inputs.numbers("nprocs", [None])[0]
    runs = [r for r in Inputs.read(folder, need=FLOOR_COLUMNS)
            if r["valid"] is True and label in (run_label(r), run_label(r).split()[0]) and not r["jitter_pct"]]
    nprocs = nprocs or max((r["nprocs"] for r in runs), default=None)
    runs = [r for r in runs if r["nprocs"] == nprocs]
    if len(runs) != 1:
        raise InputError(f"{folder}/runs.csv: {len(runs)} noise-free valid runs of {label} at P = {nprocs} (allowed: "
                         f"exactly one; name it with run=LABEL and nprocs=P)")
    run = runs[0]
    item_s, period = run["T_ms"] / 1000, run["workload_period"]
    events = sorted((e for e in Inputs.read(folder, "events.csv", need=["run_id", "t_s", "kind", "groups_before",
                                                                         "group_first", "group_last", "group_size",
                                                                         "chain", "items_left"])
                     if e["run_id"] == run["run_id"] and e["group_last"] < period), key=lambda e: e["t_s"])
    state = {e["chain"]: e for e in events if e["kind"] == "initial"}
    if not state:
        raise InputError(f"{folder}/events.csv: no events of run {run['run_id']} (allowed: the run's events)")
    longest = max(state, key=lambda c: state[c]["items_left"])
    rows = []
    for e in (e for e in events if e["kind"] == "merge"):
        before = state[e["chain"]]
        last = state[longest]
        left = last["items_left"] - (e["t_s"] - last["t_s"]) * last["group_size"] / item_s
        if e["chain"] == longest:
            left = e["items_left"]
        rows.append([f"{e['t_s']:.4f}", str(e["group_size"] - before["group_size"]), f"{e['chain']}",
                     str(e["items_left"]), str(e["group_size"]),
                     f"{e['t_s'] + e['items_left'] * item_s / e['group_size']:.4f}",
                     f"{max(left, 0):.0f} on {e['group_size'] if e['chain'] == longest else last['group_size']}"])
        state[e["chain"]] = e
    # The same merges, the last one as early as they allow: once every other chain of the period has ended.
    ends = [e["t_s"] + e["items_left"] * item_s / e["group_size"] for c, e in state.items() if c != longest]
    on_longest = [e for e in events if e["chain"] == longest]
    before_last = on_longest[-2] if len(on_longest) > 1 else on_longest[0]
    at = max(ends)
    left = before_last["items_left"] - (at - before_last["t_s"]) * before_last["group_size"] / item_s
    times = paper_fig2_times()
    paper = times.get(f"{run['balancer']}({run['interval']})")
    rows.append([f"**{run['time_s']:.4f}**", "the run ends", "", "", "", "", ""])
    if collective_floor.applies(run):
        rows.append([f"{collective_floor.floor_s(run):.4f}", "its floor: these exchanges and merges, all free", "", "",
                     "", "", ""])
    rows.append([f"{at + max(left, 0) * item_s / period:.4f}", "the earliest end with these merges: the last one as "
                 "soon as every other chain has ended", "", "", "", "", ""])
    if paper:
        none = times["none"].low_s
        rows.append([paper.text(), f"the paper's text: roughly {100 * (1 - paper.time_s / none):.0f} % below `none`, "
                     f"read as {100 * (1 - paper.high_s / none):.0f} to {100 * (1 - paper.low_s / none):.0f} %", "",
                     "", "", "", ""])
    return table_text(["merge at (s)", "idle ranks joining", "chain they join", "its items left",
                       "ranks on it then", "it ends, if nothing else joins (s)",
                       f"longest chain ({longest}): items left on ranks"], rows)


def collective_floors(folders, nprocs=None):
    """[(run, its floor in s)] of the valid collective runs of folders that collective_floor models, at nprocs (by
    default the largest P they hold), one per interval, ordered by interval; InputError when there is none or an
    interval appears twice."""
    runs = [r for folder in folders for r in Inputs.read(folder, need=FLOOR_COLUMNS)
            if r["valid"] is True and collective_floor.applies(r)]
    nprocs = nprocs or max((r["nprocs"] for r in runs), default=None)
    runs = [r for r in runs if r["nprocs"] == nprocs]
    if not runs:
        raise InputError(f"{', '.join(folders)}: no valid collective run under retire without item noise on a "
                         f"{' or '.join(collective_floor.WORKLOADS)} workload at P = {nprocs} (allowed: Fig. 2's "
                         f"folders)")
    found = keyed(((r["interval"], r) for r in runs), ", ".join(f"{f}/runs.csv" for f in folders))
    return [(found[i], collective_floor.floor_s(found[i])) for i in sorted(found)]


def collective_floor_table(inputs):
    """Each collective interval's simulated time_s against its floor, at nprocs=P (by default the largest): the
    earliest end its merge rule allows when exchanges and creations cost nothing (plots/collective_floor.py, from the
    run's workload columns), how far the run ends above it, and the paper's time where dinan2011.csv gives one (its
    approximate value and the range its text allows) with where the run ends against that range. Simulated
    seconds."""
    nprocs = inputs.numbers("nprocs", [None])[0]
    paper = paper_fig2_times()
    rows = []
    for r, floor in collective_floors(inputs.folders, nprocs):
        above = r["time_s"] - floor
        known = paper.get(f"collective({r['interval']})")
        place = known.place(r["time_s"]) if known else ""
        if place == "above":
            place += f", by {1000 * (r['time_s'] - known.high_s):.0f} ms"
        elif place == "below":
            place += f", by {1000 * (known.low_s - r['time_s']):.0f} ms"
        rows.append([run_label(r), str(r["nprocs"]), f"{r['time_s']:.4f}", f"{floor:.4f}",
                     f"{1000 * above:.1f} ms ({100 * above / floor:.2f} %)", known.text() if known else "", place])
    return table_text(["set-up", "P", "time_s", "floor (s)", "above the floor", "paper's text (s)",
                       "time_s against the text's range"], rows)


def header_of(path):
    """The column names of a CSV file's first line."""
    with open(path, newline="", encoding="utf-8-sig") as f:
        return next(csv.reader(f), [])


def platform_hashes(inputs):
    """The platform hashes that committed files under the folder record (provenance.csv, joined to its runs.csv on
    run_id, and any other CSV with both platform and platform_fnv1a64, such as commbench's) against the platform
    files as they are now. The hash covers the whole file, comments included. By default one row per platform file
    and recorded hash: whether the file's bytes now give it, how many rows and folders record it. With by=folder,
    one row per folder directly under the block's: each platform file it records, and whether the recorded hash is
    the file's now or an earlier text's."""
    top = inputs.folders[0]
    by = inputs.choice("by", ("file", "folder")) or "file"
    found = defaultdict(lambda: defaultdict(lambda: [0, set()]))  # platform -> hash -> [rows, folders]
    for folder, _, names in sorted(os.walk(os.path.join(common.ROOT, top))):
        where = os.path.relpath(folder, common.ROOT)
        for name in sorted(n for n in names if n.endswith(".csv")):
            if "platform_fnv1a64" not in header_of(os.path.join(folder, name)):
                continue
            if name == "provenance.csv":
                if not common.of_runs(os.path.join(where, name)):
                    continue
                platform = {r["run_id"]: r["platform"] for r in Inputs.read(where, need=("run_id", "platform"))}
                records = [(platform.get(r["run_id"]), r["platform_fnv1a64"])
                           for r in Inputs.read(where, name, need=("run_id", "platform_fnv1a64"))]
            elif "platform" in header_of(os.path.join(folder, name)):
                records = [(r["platform"], r["platform_fnv1a64"])
                           for r in Inputs.read_file(os.path.join(where, name), ("platform", "platform_fnv1a64"),
                                                     "commbench.csv")]
            else:
                continue
            for platform, recorded in records:
                if platform and recorded:
                    found[platform][recorded][0] += 1
                    found[platform][recorded][1].add(where)
    if not found:
        raise InputError(f"{top}: no committed file records a platform hash (allowed: a folder holding simulated "
                         f"results)")
    now = {}
    for platform in found:
        try:
            with open(os.path.join(common.ROOT, platform), "rb") as f:
                now[platform] = fnv1a64_hex(f.read())
        except OSError:
            now[platform] = None

    def state(platform, recorded):
        return "yes" if recorded == now[platform] else "no: the file has changed since" if now[platform] else \
            "no: the file is gone"

    if by == "file":
        rows = [[f"`{platform}`", f"`{recorded}`", state(platform, recorded), str(count), str(len(folders))]
                for platform in sorted(found)
                for recorded, (count, folders) in sorted(found[platform].items(), key=lambda e: -e[1][0])]
        return table_text(["platform file", "hash recorded", "the file now gives it", "rows recording it",
                           "folders"], rows)
    per_folder = defaultdict(set)  # first folder under top -> {(platform file's name, its hash the file's now)}
    for platform, hashes in found.items():
        for recorded, (_, folders) in hashes.items():
            for folder in folders:
                # Result folders sit under data/: each is a row of its own, as every other folder under top.
                parts = os.path.relpath(folder, top).split(os.sep)
                first = parts[1] if parts[0] == "data" and len(parts) > 1 else parts[0]
                per_folder[first].add((os.path.basename(platform), recorded == now[platform]))
    rows = [[first, ", ".join(f"`{name}` ({'now' if same else 'earlier text'})"
                              for name, same in sorted(per_folder[first]))] for first in sorted(per_folder)]
    return table_text([f"folder under {top}/ (results: under {top}/data/)", "platform files whose hash it records"],
                      rows)


def constants_sensitivity(inputs):
    """Each unsourced constant varied alone: one row per folder (its setting from its provenance, and the attributes
    by which its runs' platform differs from the first folder's), Fig. 2's async (Algorithm 1) time with its gap to
    the ideal and its Table 1 row (regroupings per process, avg / stdev / min / max), and collective(1)'s time (or
    collective(N)'s with interval=N). Both times are also given against the first folder of the same rank count (the
    platform as shipped at that P), so one table holds the study at several counts."""
    interval = inputs.numbers("interval", [1])[0]
    need = ["balancer", "method", "interval", "time_s", "ideal_s", "regroups_avg", "regroups_std", "regroups_min",
            "regroups_max", "nprocs", "platform"]
    rows, bases = [], {}
    for folder in inputs.folders:
        runs = Inputs.read(folder, need=need)
        found = keyed((((r["balancer"], r["method"] or "", r["interval"]), r) for r in runs), f"{folder}/runs.csv")
        asy, col = found.get(("async", "intercomm", None)), found.get(("collective", "create", interval))
        if asy is None or col is None:
            raise InputError(f"{folder}/runs.csv: needs an async intercomm and a collective({interval}) create run "
                             f"(allowed: a folder of the constants' sensitivity study, "
                             f"docs/explanation/paper-reproduction.md)")
        base = bases.setdefault(asy["nprocs"], (asy, col))
        rows.append([setting_of(folder, base[0]["platform"]), str(asy["nprocs"]),
                     f"{asy['time_s']:.4f} ({asy['time_s'] - asy['ideal_s']:.4f})",
                     f"{asy['time_s'] / base[0]['time_s']:.4f}",
                     f"{asy['regroups_avg']:.2f} / {asy['regroups_std']:.2f} / {asy['regroups_min']:g} / "
                     f"{asy['regroups_max']:g}", f"{col['time_s']:.4f}", f"{col['time_s'] / base[1]['time_s']:.4f}"])
    return table_text(["setting", "P", "async: time_s (gap)", "async / as shipped", "async: Table 1 row",
                       f"collective({interval}): time_s", f"collective({interval}) / as shipped"], rows)


def host_cost(inputs):
    """The host's cost of simulated runs: per platform folder (FOLDER/<platform>/ with runs.csv and provenance.csv,
    one run per launch) the runs, each one's simulated time, and the medians [min-max] over the runs of the whole
    process's CPU (user + sys), wall time and peak RSS, as /usr/bin/time measured each launch (FOLDER/host-time.csv:
    platform, launch, wall_s, user_s, sys_s, peak_rss_kib; launch i is the platform's i-th run by its start), and
    of provenance.csv's host_cpu_s (the process from its start to the end of the run: no teardown); then the build
    and the host CPU model as provenance.csv records them (build_level, cpu_model)."""
    folder = inputs.folders[0]
    timed = defaultdict(dict)
    for r in Inputs.read(folder, "host-time.csv", need=("platform", "launch", "wall_s", "user_s", "sys_s",
                                                       "peak_rss_kib")):
        timed[r["platform"]][int(r["launch"])] = r

    rows = []
    for platform in sorted(timed):
        sub = os.path.join(folder, platform)
        runs = sorted(Inputs.read(sub, need=("run_id", "utc_start", "time_s", "nprocs", "balancer", "method")),
                      key=lambda r: r["utc_start"])
        prov = {r["run_id"]: r for r in Inputs.read(sub, "provenance.csv", need=("run_id", "host_cpu_s"))}
        mine = [prov[r["run_id"]] for r in runs if r["run_id"] in prov]
        if sorted(timed[platform]) != list(range(1, len(runs) + 1)):
            raise InputError(f"{folder}/host-time.csv: {platform} has launches {sorted(timed[platform])} for "
                             f"{len(runs)} runs in {sub}/runs.csv (allowed: launches 1 to the number of runs)")
        whole = [timed[platform][i + 1] for i in range(len(runs))]
        rows.append([f"`{platform}.xml`", f"{runs[0]['balancer']} {runs[0]['method']}, P = {runs[0]['nprocs']}",
                     str(len(runs)), spread([r["time_s"] for r in runs], 6),
                     spread([w["user_s"] + w["sys_s"] for w in whole], 1), spread([w["wall_s"] for w in whole], 1),
                     spread([w["peak_rss_kib"] / 1024 for w in whole], 0),
                     spread([prov[r["run_id"]]["host_cpu_s"] for r in runs], 1), build_level(mine),
                     cpu_model(Inputs.read(sub, need=("run_id",)), mine)])
    return table_text(["platform", "run", "runs", "simulated time_s", "whole process: CPU s", "wall s",
                       "peak RSS MiB", "host_cpu_s (to the run's end)", "build", "host CPU model"], rows)


# What GNU time -v writes of a simulation's whole process (plots/fig1-sim.sh keeps it beside each commbench CSV).
GNU_TIME = {"command": r"Command being timed: \"(.*)\"", "user": r"User time \(seconds\): ([0-9.]+)",
            "system": r"System time \(seconds\): ([0-9.]+)", "rss": r"Maximum resident set size \(kbytes\): ([0-9]+)",
            "status": r"Exit status: ([0-9]+)", "wall": r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([0-9:.]+)"}
KIB_PER_GIB = 1024 * 1024
NOT_RECORDED = "not recorded"


def gnu_time(path):
    """{command, user, system, rss, status} of the GNU time record at path (relative to the root); InputError
    naming it when a figure is missing."""
    with open(os.path.join(common.ROOT, path), encoding="utf-8") as f:
        text = f.read()
    found = {}
    for name, pattern in GNU_TIME.items():
        m = re.search(pattern, text)
        if not m:
            raise InputError(f"{path}: no {name} line (allowed: the record of /usr/bin/time -v)")
        found[name] = m.group(1)
    return found


def simgrid_versions(rows):
    """The SimGrid versions the rows' mpi_library names ('3.32'), or NOT_RECORDED."""
    from mcmclb_csv import LIBRARY_NAMES
    found = sorted({m.group(2) for m in (LIBRARY_NAMES.match(r.get("mpi_library") or "") for r in rows)
                    if m and m.group(1) == "SMPI"})
    return ", ".join(found) or NOT_RECORDED


def cpu_model(rows, prov=()):
    """The host CPU models the provenance rows prov name (host_cpu_model); where none does (a file made before the
    column, or a commbench CSV, which has no provenance), NOT_RECORDED with the host names the rows give."""
    models = sorted({p.get("host_cpu_model") for p in prov if p.get("host_cpu_model")})
    if models:
        return ", ".join(models)
    hosts = sorted({r.get("host") for r in rows if r.get("host")})
    return NOT_RECORDED + (f" (host {', '.join(f'`{h}`' for h in hosts)})" if hosts else "")


def build_level(prov):
    """The builds the provenance rows prov record, as 'RelWithDebInfo, -O2' (build_type and the last -O flag of
    cxx_flags), or NOT_RECORDED where none has build_type (a file made before the column, or a commbench CSV)."""
    found = sorted({", ".join([p["build_type"]] + re.findall(r"(?<!\S)-O\S*", p.get("cxx_flags") or "")[-1:])
                    for p in prov if p.get("build_type")})
    return "; ".join(found) or NOT_RECORDED


def simulated_at(rows, p):
    """The simulated rows at P = p (backend smpi; an older file without backend: a row naming its platform)."""
    return [r for r in rows if r.get("nprocs") == p and
            (r.get("backend") == "smpi" or (r.get("backend") is None and r.get("platform")))]


def series_files(top):
    """(folder, CSV name) of every runs.csv and commbench CSV under top (relative to the root), in path order."""
    found = []
    for folder, dirs, names in os.walk(os.path.join(common.ROOT, top)):
        dirs.sort()
        rel = os.path.relpath(folder, common.ROOT)
        found += [(rel, name) for name in sorted(names)
                  if name == "runs.csv" or (name.startswith("commbench") and name.endswith(".csv"))]
    return sorted(found)


def rounded_spread(values, digits):
    """spread(), without a range whose ends print alike ('0.48', not '0.48 [0.48-0.48]')."""
    if f"{min(values):.{digits}f}" == f"{max(values):.{digits}f}":
        return f"{median(values):.{digits}f}"
    return spread(values, digits)


def runs_host_cost(folder, runs):
    """The cells host CPU, peak memory and source of the runs of folder's runs.csv (provenance.csv's host_cpu_s and
    host_peak_rss_kib), their provenance rows, and whether a launch of theirs listed several points; NOT_RECORDED
    where no run has them."""
    path = os.path.join(common.ROOT, folder, "provenance.csv")
    prov = {}
    if os.path.exists(path):
        prov = {r["run_id"]: r for r in Inputs.read(folder, "provenance.csv", need=("run_id",))}
    mine = [prov[r["run_id"]] for r in runs if r["run_id"] in prov]
    cpu = [r["host_cpu_s"] for r in mine if isinstance(r.get("host_cpu_s"), (int, float))]
    rss = [r["host_peak_rss_kib"] / KIB_PER_GIB for r in mine if isinstance(r.get("host_peak_rss_kib"), int)]
    several = any(len(m.group(1).split(",")) > 1 for m in (re.search(r"--points (\S+)", r.get("command_line") or "")
                                                             for r in mine) if m)
    if not mine:
        return [NOT_RECORDED, NOT_RECORDED, "no provenance.csv"], mine, False
    source = f"[provenance.csv]({folder}/provenance.csv), to each run's end"
    if len(cpu) < len(runs):
        source += f" ({len(cpu)} of {len(runs)} runs)"
    return [rounded_spread(cpu, 0) if cpu else NOT_RECORDED, rounded_spread(rss, 2) if rss else NOT_RECORDED,
            source], mine, several


def commbench_host_cost(folder, name, p):
    """The cells host CPU, peak memory and source of a simulated commbench CSV from the GNU time record beside it
    (<name>.time, the whole smpirun); NOT_RECORDED where it has none or its command is not at P = p."""
    record = os.path.join(folder, os.path.splitext(name)[0] + ".time")
    if not os.path.exists(os.path.join(common.ROOT, record)):
        return [NOT_RECORDED, NOT_RECORDED, f"no {os.path.basename(record)}"]
    found = gnu_time(record)
    if f"-np {p} " not in found["command"] or found["status"] != "0":
        raise InputError(f"{record}: not a simulation at -np {p} that exited with status 0 (allowed: the record "
                         f"plots/fig1-sim.sh writes beside {name})")
    return [f"{float(found['user']) + float(found['system']):.0f}", f"{int(found['rss']) / KIB_PER_GIB:.2f}",
            f"[{os.path.basename(record)}]({record}), the whole `smpirun`"]


def wall_seconds(elapsed):
    """Seconds of GNU time's elapsed wall clock, 'h:mm:ss' or 'm:ss.ss'."""
    seconds = 0.0
    for part in elapsed.split(":"):
        seconds = 60 * seconds + float(part)
    return seconds


def host_cost_dearest(inputs):
    """One sentence: the simulated series at one rank count (nprocs=, 8192 by default) under the folder the block
    names that cost the host the most CPU (the median over its runs, as host-cost-series gives it), with its peak
    memory and, where a GNU time record gives it, its wall time."""
    p = (inputs.numbers("nprocs") or [8192])[0]
    top = inputs.folders[0]
    found = []
    for folder, name in series_files(top):
        if name == "runs.csv":
            runs = simulated_at(Inputs.read(folder, need=("run_id", "nprocs")), p)
            if not runs:
                continue
            path = os.path.join(common.ROOT, folder, "provenance.csv")
            prov = {r["run_id"]: r for r in Inputs.read(folder, "provenance.csv", need=("run_id",))} \
                if os.path.exists(path) else {}
            mine = [prov[r["run_id"]] for r in runs if r["run_id"] in prov]
            cpu = [r["host_cpu_s"] for r in mine if isinstance(r.get("host_cpu_s"), (int, float))]
            rss = [r["host_peak_rss_kib"] / KIB_PER_GIB for r in mine if isinstance(r.get("host_peak_rss_kib"), int)]
            if cpu:
                found.append((median(cpu), f"`{folder}`", median(rss) if rss else None, None,
                              f"the median of its {len(cpu)} runs' provenance.csv" if len(cpu) > 1 else
                              "its provenance.csv"))
        else:
            record = os.path.join(folder, os.path.splitext(name)[0] + ".time")
            if not simulated_at(Inputs.read_file(os.path.join(folder, name), ("nprocs",), "commbench.csv"), p) or \
                    not os.path.exists(os.path.join(common.ROOT, record)):
                continue
            commbench_host_cost(folder, name, p)  # refuses a record of another P or a failed run
            t = gnu_time(record)
            found.append((float(t["user"]) + float(t["system"]), f"`{folder}/{name}`", int(t["rss"]) / KIB_PER_GIB,
                          wall_seconds(t["wall"]), f"the GNU time record of its whole `smpirun`, `{record}`"))
    if not found:
        raise InputError(f"block {inputs.name}: no simulated run at P = {p} under {top} with a host cost on file "
                         f"(allowed: a folder holding simulated runs.csv with provenance.csv, or commbench CSVs with "
                         f"their GNU time record)")
    cpu, label, rss, wall, source = max(found, key=lambda f: f[0])
    parts = [f"{cpu:,.0f} s of host CPU"] + ([f"{rss:.2f} GiB of peak memory"] if rss is not None else []) + \
            ([f"{wall / 60:.1f} min of wall time"] if wall is not None else [])
    return common.wrapped(f"The dearest series at {p} simulated ranks is {label}: " + ", ".join(parts) +
                          f" (**measured**, from {source}).")


def host_cost_series(inputs):
    """The host cost of every simulated series at one rank count (nprocs=, 8192 by default) under the folder the
    block names: one row per runs.csv (and per build, where a file holds runs of several) or commbench CSV with
    simulated rows at that P, found by walking the folder, so a new committed series gets its row. Per row: the
    runs, the host CPU seconds and the peak memory (median [min-max] over the runs of provenance.csv's host_cpu_s
    and host_peak_rss_kib, or a commbench CSV's GNU time record), the SimGrid version (mpi_library), the build (provenance.csv's build_type and -O level) and the host CPU model
    (host_cpu_model). A folder that records none of them says "not recorded"."""
    p = (inputs.numbers("nprocs") or [8192])[0]
    top = inputs.folders[0]
    rows, several = [], []
    for folder, name in series_files(top):
        if name == "runs.csv":
            found = simulated_at(Inputs.read(folder, need=("run_id", "nprocs")), p)
            if not found:
                continue
            # One row per build: host figures of a -O0 and a -O2 build pooled in one median would describe neither.
            _, prov, _ = runs_host_cost(folder, found)
            build_of = {r["run_id"]: build_level([r]) for r in prov}
            builds = sorted({build_of.get(r["run_id"], NOT_RECORDED) for r in found})
            for build in builds:
                mine = [r for r in found if build_of.get(r["run_id"], NOT_RECORDED) == build]
                cells, prov, cumulative = runs_host_cost(folder, mine)
                if cumulative and folder not in several:
                    several.append(folder)
                label = f"[{folder}]({folder}/runs.csv)" + (f" ({build} runs)" if len(builds) > 1 else "")
                rows.append([label, str(len(mine))] + cells[:2] + [simgrid_versions(mine), build_level(prov),
                                                                   cpu_model(mine, prov), cells[2]])
            continue
        else:
            found = simulated_at(Inputs.read_file(os.path.join(folder, name), ("nprocs",), "commbench.csv"), p)
            if not found:
                continue
            cells, prov = commbench_host_cost(folder, name, p), []
            label, count = f"[{folder}]({folder}/{name}) ({name})", "1 simulation"
        rows.append([label, count] + cells[:2] + [simgrid_versions(found), build_level(prov), cpu_model(found, prov),
                                                  cells[2]])
    if not rows:
        raise InputError(f"block {inputs.name}: no simulated run at P = {p} under {top} (allowed: a folder holding "
                         f"simulated runs.csv or commbench CSVs)")
    text = table_text(["series", f"runs at P = {p}", "host CPU s (measured)", "peak memory GiB (measured)",
                       "SimGrid", "build", "host CPU model", "from"], rows)
    if several:
        text += "\n\n" + common.wrapped(
            f"In {', '.join(f'`{f}`' for f in several)} a launch listed several points (`--points` in "
            f"provenance.csv's command line). There a run's `host_cpu_s` may include the points its launch ran "
            f"before it, since it counts the process from its start.")
    return text


# The rows of the compute model's calibration table: (label, benchmark, move, time column, counter of the unit,
# unit's name).
LJ_COST_ROWS = [
    ("`BM_Split` g = 1, single move (pair sum only)", "BM_Split", "0", "real_time", "pair_terms", "ns/term"),
    ("`BM_Split` g = 1, all-atom move", "BM_Split", "1", "real_time", "pair_terms", "ns/term"),
    ("`BM_Trial`, single move (draws, verdict, update)", "BM_Trial", "0", "cpu_time", "moved_atoms", "ns/trial"),
    ("`BM_Trial`, all-atom move", "BM_Trial", "1", "cpu_time", "moved_atoms", "ns/moved atom"),
]


BENCH_NAME = re.compile(r"^(?P<bench>BM_\w+)/atoms:(?P<atoms>\d+)/move:(?P<move>\d)(/g:(?P<g>\d+))?(/|$)")


def lj_cost(inputs):
    """The compute model's calibration from bench_lj CSVs (each repetition's row; g = 1 for BM_Split; Google
    Benchmark writes one file per set of counters, so BM_Split and BM_Trial come in two): one row per
    benchmark and move kind, per atom count the median time in ns with its 95 % interval and the terms or moved
    atoms it covers, and per unit (pair term, trial or moved atom) the range over atom counts of median / unit."""
    rows = []
    for path in inputs.folders:
        rows += [dict(r, path=path) for r in Inputs.read_file(path, ("name", "real_time", "cpu_time", "time_unit"),
                                                              "bench_lj.csv")]
    files = " and ".join(inputs.folders)
    times, units = defaultdict(list), {}
    for r in rows:
        found = BENCH_NAME.match(r["name"])
        if not found or r["name"].endswith(("_mean", "_median", "_stddev", "_cv")) or found["g"] not in (None, "1"):
            continue
        if r["time_unit"] != "ns":
            raise InputError(f"{r['path']}: {r['name']} in {r['time_unit']} (allowed: ns, bench_lj's unit)")
        for _, bench, move, column, counter, _ in LJ_COST_ROWS:
            if (found["bench"], found["move"]) == (bench, move):
                key = (bench, move, int(found["atoms"]))
                times[key].append(r[column])
                try:
                    units[key] = float(r.get(counter) or "nan")
                except ValueError:
                    units[key] = float("nan")
    if not times:
        raise InputError(f"{files}: no repetition of BM_Split at g = 1 or BM_Trial (allowed: bench_lj's CSV output)")
    atoms = sorted({a for _, _, a in times})
    out = []
    for label, bench, move, _, counter, unit in LJ_COST_ROWS:
        cells, per_unit = [label], []
        for a in atoms:
            values = times.get((bench, move, a))
            if not values:
                cells.append("–")
                continue
            s, count = Summary(values), units[(bench, move, a)]
            if not count > 0:
                raise InputError(f"{files}: {bench} at {a} atoms has no {counter} counter (allowed: a bench_lj that "
                                 f"sets it)")
            word = unit.split("/")[1] + ("s" if count != 1 else "")
            interval = f" [{s.lo:.0f}, {s.hi:.0f}]" if s.has_interval else f" ({s.note})"
            cells.append(f"{s.median:.0f} ns{interval}, {count:g} {word}")
            per_unit.append(s.median / count)
        cells.append(f"{min(per_unit):.1f}-{max(per_unit):.1f} {unit}")
        out.append(cells)
    return table_text(["benchmark"] + [f"{a} atoms" for a in atoms] + ["per unit"], out)


def simulated_times(inputs):
    """Simulated time_s per P and set-up of one folder (one deterministic run per point): one row per P, the ideal,
    then one column per set-up (run_label, in the order the CSV first names them; only=LABEL,... keeps those whose
    label starts with one of them), to digits=N decimals (3 by default)."""
    folder = inputs.folders[0]
    digits = inputs.numbers("digits", [3])[0]
    only = inputs.option("only")
    runs = [r for r in Inputs.read(folder, need=RUN_COLUMNS) if r["valid"] is True]
    if only:
        runs = [r for r in runs if any(run_label(r).startswith(prefix) for prefix in only.split(","))]
    if not runs:
        raise InputError(f"{folder}/runs.csv: no valid run{' of ' + only if only else ''} (allowed: a folder of "
                         f"simulated runs)")
    found = keyed((((r["nprocs"], run_label(r)), r) for r in runs), f"{folder}/runs.csv")
    labels = list(dict.fromkeys(label for _, label in found))
    rows = []
    for p in sorted({p for p, _ in found}):
        ideal = {f"{r['ideal_s']:.{digits}f}" for (q, _), r in found.items() if q == p}
        cells = [f"{found[(p, label)]['time_s']:.{digits}f}" if (p, label) in found else "–" for label in labels]
        rows.append([str(p), "/".join(sorted(ideal))] + cells)
    return table_text(["P", "ideal"] + labels, rows)


def times_by_folder(inputs):
    """One row per set-up (run_label), one column per folder at one P (nprocs=P,P,... one per folder, in order; a
    folder of placement groups says so in its head): the simulated time_s as the CSV holds it (nine significant
    digits), with time / ideal where it is not 2 (none) or a series' own; – where a folder lacks the set-up."""
    ps = inputs.numbers("nprocs")
    if not ps or len(ps) != len(inputs.folders):
        raise InputError(f"block {inputs.name}: nprocs= names {len(ps or [])} P for {len(inputs.folders)} folders "
                         f"(allowed: one P per folder, in order)")
    columns = []
    for folder, p in zip(inputs.folders, ps):
        runs = [r for r in Inputs.read(folder, need=RUN_COLUMNS + ["platform"]) if r["valid"] is True
                and r["nprocs"] == p]
        if not runs:
            raise InputError(f"{folder}/runs.csv: no valid run at P = {p} (allowed: a P the folder holds)")
        platforms = {os.path.basename(r.get("platform") or "") for r in runs}
        # Key placement: a folder dealt over a dragonfly's groups says so; one placed in order (empty) as before.
        placed = "".join(f", {x} placement" for x in sorted({r.get("placement") or "" for r in runs} - {""}))
        columns.append((f"`{', '.join(sorted(platforms))}`{placed}, {grouped(p).replace(' ', ',')}",
                        keyed(((run_label(r), r) for r in runs), f"{folder}/runs.csv")))
    labels = merged_order([list(found) for _, found in columns])
    rows = [[label] + [f"{found[label]['time_s']:.9g} ({found[label]['time_s'] / found[label]['ideal_s']:.4f} ×)"
                       if label in found else "–" for _, found in columns] for label in labels]
    return table_text(["series"] + [head for head, _ in columns], rows)


def table1_rows(inputs):
    """Table 1 as plots/table1.py --paper prints it (the paper's values beside each row, "not run" for a row of the
    paper no folder has), from the runs of every folder named together, at nprocs=N (default: the largest)."""
    import table1
    nprocs = inputs.numbers("nprocs", [None])[0]
    try:
        runs = read_runs([os.path.join(common.ROOT, folder) for folder in inputs.folders])
        _, header, lines = table1.build(runs, inputs.folders[0], nprocs, paper=True)
    except InputError as e:
        raise InputError(str(e).replace(common.ROOT + os.sep, "")) from None
    return table_text(header, lines)
