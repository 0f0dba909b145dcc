# SPDX-License-Identifier: BSD-3-Clause
"""The README's generated prose: what the quick study runs and how long it took (quick-start), and the key
findings, one bullet each, every number from the folders the block names (findings)."""
import os
from collections import defaultdict

from mcmclb_csv import RUN_COLUMNS, InputError, read_runs, run_label
from mcmclb_stats import Summary, median

from . import common
from .common import (TIMES, Inputs, calibrations, compare_ratio_text, paper_fig2_times, refuse_shared_cores,
                     wrapped)
from .merge_pays import pays_pair
from .paper import merge_rule_rows
from .steal_regroup import cell, svr_data


def machine(folder, nprocs):
    """(cores available, oversubscribed) of a real folder's runs at nprocs, from its provenance.csv; InputError
    where the runs disagree or the file lacks the columns."""
    prov = Inputs.read(folder, "provenance.csv", need=("run_id", "cores_available", "oversubscribed"))
    runs = {r["run_id"] for r in Inputs.read(folder) if r["nprocs"] == nprocs}
    seen = {(r["cores_available"], r["oversubscribed"]) for r in prov if r["run_id"] in runs}
    if len(seen) != 1:
        raise InputError(f"{folder}/provenance.csv: the runs at P = {nprocs} ran on {len(seen)} kinds of machine "
                         f"(allowed: one, with cores_available and oversubscribed recorded)")
    return seen.pop()


def occupancy(folder, nprocs):
    """'P ranks sharing C cores', or 'P = 2 with a core per rank', for a real folder's runs at nprocs."""
    cores, over = machine(folder, nprocs)
    return f"{nprocs} ranks sharing {cores} cores" if over else f"P = {nprocs} with a core per rank"


def listed(items):
    """'a', 'a and b', 'a, b and c'."""
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def quick_start(inputs):
    """What the demo runs and how long it took: the study as the committed demo folder ran it (its rank counts,
    set-ups and repetitions, from runs.csv) and the measured duration of the demo's two parts on a fresh copy of the
    checkout (demo-timing.csv, written by tests/readme/run_demo.sh time), medians over the repetitions."""
    folder = inputs.folders[0]
    runs = [r for r in Inputs.read(folder, need=RUN_COLUMNS + ["backend"])]
    timing = Inputs.read_file(os.path.join(folder, "demo-timing.csv"), ("part", "seconds", "cores", "commit"),
                              "demo-timing.csv")
    parts = defaultdict(list)
    for t in timing:
        parts[t["part"]].append(t["seconds"])
    tests = parts.pop("tests", [])
    if set(parts) != {"build", "run"} or len({len(v) for v in parts.values()}) != 1:
        raise InputError(f"{folder}/demo-timing.csv: parts {sorted(parts)} (allowed: build and run, as often each, "
                         f"and tests)")
    setups = list(dict.fromkeys(run_label(r) for r in runs))
    reps = sorted({r["rep"] for r in runs})
    nprocs = sorted({r["nprocs"] for r in runs})
    cores = sorted({t["cores"] for t in timing})
    commits = sorted({t["commit"] for t in timing if t["part"] != "tests"})
    test_commits = sorted({t["commit"] for t in timing if t["part"] == "tests"})
    n = len(parts["build"])
    return wrapped(
        f"The quick study runs {listed(f'`{s}`' for s in setups)} at {listed(str(p) for p in nprocs)} ranks, "
        f"{len(reps)} repetitions each ({len(runs)} runs). Measured from a fresh copy of the checkout on a "
        f"{listed(str(c) for c in cores)}-core VM (commit{'s' if len(commits) > 1 else ''} {listed(commits)}, "
        f"median of {n}): the build steps took "
        f"{median(parts['build']):.0f} s and the sweep with its report {median(parts['run']):.0f} s "
        f"([demo-timing.csv]({folder}/demo-timing.csv))." +
        (f" The README's test command took {median(tests) / 60:.1f} min there "
         f"(commit{'s' if len(test_commits) > 1 else ''} {listed(test_commits)}, "
         f"{'one run' if len(tests) == 1 else f'median of {len(tests)}, {min(tests):.0f} to {max(tests):.0f} s'}"
         f")." if tests else ""))


def findings(inputs):
    """The README's key findings, one bullet each, every number from the folders named in this order: Fig. 2's
    simulation, Table 1's collective rows and its async row against the paper's (plots/reference/dinan2011.csv,
    with the ranges of collective and async times that the paper's text allows), Fig. 1's simulated commbench CSV,
    the steal-vs-regroup seeds simulated, and the real pays pair (one folder: none and the balancer under pays,
    pays_pair). A real folder with runs of more ranks than cores is refused: such runs measure the machine's
    spinning, not the balancers, and are no finding (results.md says so)."""
    import table1
    (fig2, table1_folder, fig1_csv, svr_sim, pays_folder) = inputs.folders
    bullets = []

    runs = [r for r in Inputs.read(fig2, need=RUN_COLUMNS + ["finished", "backend"]) if r["valid"] is True]
    top = max(r["nprocs"] for r in runs)
    at = {run_label(r): r for r in runs if r["nprocs"] == top}
    for label in ("none", "async intercomm", "lookahead(1) range", "collective(1) create"):
        if label not in at:
            raise InputError(f"{fig2}/runs.csv: no valid {label} run at P = {top} (allowed: Fig. 2's set-ups)")
    ideal = at["none"]["ideal_s"]
    both = read_runs([os.path.join(common.ROOT, f) for f in (fig2, table1_folder)])
    _, header, lines = table1.build(both, table1_folder, top, paper=True)
    rows = [dict(zip(header, cells)) for cells in lines if cells[0].startswith("collective(")]
    equal = sum(all(r[k] == r[f"paper {k}"] for k in ("avg", "stdev", "min", "max")) for r in rows)
    row = next((dict(zip(header, cells)) for cells in lines if cells[0].startswith("async")), None)
    paper = paper_fig2_times()
    if row is None or not {"none", "ideal", "async", "collective(1)"} <= set(paper):
        raise InputError(f"{fig2}/runs.csv: no async row of Table 1 at P = {top}, or no none, ideal, async or "
                         f"collective(1) row of the paper's Fig. 2 in plots/reference/dinan2011.csv (allowed: Fig. "
                         f"2's set-ups)")
    a, paper_ideal, coll = at["async intercomm"], paper["ideal"].low_s, paper["collective(1)"]
    rule_rows, rule_runs = merge_rule_rows([fig2, table1_folder], top)
    bullets.append(
        f"*Simulated*, the paper's workload at {top} ranks on a Blue Gene/P-like torus: `none` takes "
        f"{at['none']['time_s'] / ideal:.2f}{TIMES} the ideal of {ideal:.2f}\u00a0s, `collective(1)` "
        f"{at['collective(1) create']['time_s'] / ideal:.2f}{TIMES} (the paper's text: roughly "
        f"{100 * (1 - coll.time_s / paper['none'].low_s):.0f} % below `none`, "
        f"{coll.low_s / paper_ideal:.2f}-{coll.high_s / paper_ideal:.2f}{TIMES}). " +
        (f"All {equal}" if equal == len(rows) else f"{equal} of the {len(rows)}") +
        " of Table 1's collective rows equal the paper's" +
        (", as the merge rule alone gives them on any platform" if rule_rows == len(rule_runs) else "") +
        f". Its `async` row is not reproduced: {row['avg']} "
        f"regroupings per process against the paper's {row['paper avg']}. The simulated `async` ends at "
        f"{a['time_s'] / ideal:.3f}{TIMES} the ideal (the paper's text: over "
        f"{100 * (1 - paper['async'].high_s / paper['none'].low_s):.0f} % below `none`, under about "
        f"{paper['async'].high_s / paper_ideal:.2f}{TIMES}). "
        f"[Explanation](docs/explanation/paper-reproduction.md), [CSV]({fig2}/runs.csv).")

    bench = [r for r in Inputs.read_file(fig1_csv, ("method", "op", "group_size", "nprocs", "time_us"),
                                         "commbench.csv") if r["op"] == "create"]
    largest = max(r["nprocs"] for r in bench)
    by_method = defaultdict(list)
    for r in bench:
        if r["nprocs"] == largest:
            by_method[r["method"]].append(r["time_us"])
    for method in ("create", "range"):
        if method not in by_method:
            raise InputError(f"{fig1_csv}: no {method} rows at P = {largest} (allowed: Fig. 1's methods)")
    create = [median([r["time_us"] for r in bench if r["nprocs"] == largest and r["method"] == "create" and
                      r["group_size"] == g]) for g in sorted({r["group_size"] for r in bench
                                                               if r["method"] == "create"})]
    if "floor" not in by_method:
        raise InputError(f"{fig1_csv}: no floor rows at P = {largest} (allowed: Fig. 1's methods and the floor)")
    # range communicates nothing: what it shows is what the empty timed region (the floor) shows, SMPI's charge for
    # the clock reads around it, not a creation time.
    bullets.append(
        f"*Simulated* Fig. 1 at {largest} ranks: `MPI_Comm_create` over all ranks costs {min(create):.0f}-"
        f"{max(create):.0f} µs whatever the group, while `range` needs no communication. Its "
        f"{median(by_method['range']):.2f} µs is the `floor` row's {median(by_method['floor']):.2f} µs: an empty timed "
        f"region, the simulator's charge for reading the clock. [Guide](docs/guide/commbench.md), [CSV]({fig1_csv}).")

    def best_against_thief(folder):
        """(the folder's rank count, the better thief's time / the better regrouping's per workload and W)."""
        nprocs, data, _ = svr_data(folder)
        ratios = []
        for panel, labels in data.items():
            for w in sorted({w for cells in labels.values() for w in cells}):
                r = min(cell(folder, data, panel, label, w).ratio for label in ("lookahead(1) range",
                                                                                  "mostwork(1) range"))
                t = min(cell(folder, data, panel, label, w).ratio for label in ("steal", "stealrandom"))
                ratios.append(t / r)
        return nprocs, ratios
    p_sim, sim = best_against_thief(svr_sim)
    bullets.append(
        f"With emulated items, which sleep a set time divided by their group's size, regrouping beats moving chains. "
        f"The work-stealing balancers take {min(sim):.2f}-{max(sim):.2f}{TIMES} the best regrouping's time "
        f"(*simulated*, {p_sim} ranks), over every workload, medians over seeds. "
        f"[Explanation](docs/explanation/steal-vs-regroup.md), [CSV]({svr_sim}/runs.csv).")

    refuse_shared_cores(pays_folder)
    none_by_move, other_by_move, _, control_by_move, control = pays_pair(pays_folder, inputs.name)
    pairs = []
    for move in ("all", "single"):
        a, b, c = none_by_move.get(move), other_by_move.get(move), control_by_move.get(move)
        if not a or not b or not c:
            raise InputError(f"{pays_folder}: no valid runs of {move}-atom moves under none, pays and a control "
                             f"rule (allowed: the real pays study of merge-pays.md)")
        # Whole times: pays's calibration runs before the clock, and the user waits for it all the same.
        calibrated = [t + cal for t, cal in zip((r["time_s"] for r in b), calibrations(b, f"{pays_folder}/runs.csv"))]
        pairs.append((Summary([r["time_s"] for r in a]), Summary(calibrated),
                      Summary([r["time_s"] for r in c]), b, b[0]["balancer"], b[0]["nprocs"]))
    (a_all, b_all, _, _, name, p), (a_one, b_one, c_one, runs_one, _, _) = pairs
    # What the calibration adds to a single-atom run, where it buys nothing: its median over the run's median.
    added = median(calibrations(runs_one, f"{pays_folder}/runs.csv")) / median([r["time_s"] for r in runs_one])
    bullets.append(
        f"Merge only when it pays: with real Monte Carlo walkers of Lennard-Jones atoms (compute mode), `{name}` "
        f"under the rule `pays` first measures what a merge costs, its calibration. *Measured* at "
        f"{occupancy(pays_folder, p)}, its calibration counted, it takes {compare_ratio_text(a_all, b_all)}{TIMES} "
        f"`none`'s time when each proposed move (a trial) moves every atom. When it moves one atom, no merge pays, "
        f"and it takes {compare_ratio_text(a_one, b_one)}{TIMES}, where merging regardless "
        f"(`{control.split()[-1]}`) takes {compare_ratio_text(a_one, c_one)}{TIMES}. Its calibration adds "
        f"{added * 100:.0f} % to a one-atom run (n ≥ {min(s.n for s in (a_all, b_all, a_one, b_one, c_one))}; each "
        f"ratio's interval is formed from the two medians' 95 % intervals, as `mcmclb compare` does). "
        f"[Explanation](docs/explanation/merge-pays.md), [CSV]({pays_folder}/runs.csv).")
    return "\n".join("- " + wrapped(b).replace("\n", "\n  ") for b in bullets)
