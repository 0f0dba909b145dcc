#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Moving work against regrouping processes (configs/steal-vs-regroup.yaml): time / ideal against W, the chains each
initial group owns, one line per balancer set-up and one panel per workload model; and a Markdown table of the same
runs with the regroupings per process and the chains migrated per process side by side.

    plots/steal_vs_regroup.py results/steal-vs-regroup [-o docs/data/steal-vs-regroup.png] [--nprocs 1024] [--per-seed]

Rows of other rank counts are left out with --nprocs (default: the largest in the folder); invalid rows and rows
without work (ideal 0) are left out. Simulated rows are labelled simulated, with their platform.

time / ideal of one workload seed is the median over its repetitions, with the median's 95 % interval for real
runs of 6 repetitions or more; with several workload seeds (workload.seed) it is the median over the seeds of
those medians, with their range and count beside it, so one lucky draw cannot decide a row; for real runs also
how far the widest seed's interval reaches, and --per-seed prints each seed's own row. The figure draws the
same: a bar over the seeds' range where there are several, else the median's interval (a thin line its min-max).
"""
import argparse
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcmclb_csv import (RUN_COLUMNS, ArgumentParser, InputError, backend_label, check_inputs_exist,  # noqa: E402
                        check_output, fail, find_csv, need_matplotlib, output_path, positive_int, pyplot, read_csv,
                        run_label, save)
from mcmclb_stats import Summary, error_bars, median  # noqa: E402

# chains_per_group and migrated_avg are read where present: a folder older than them had one chain per group and
# moved none.
COLUMNS = RUN_COLUMNS + ["workload", "workload_seed"]


def chosen_rows(rows, nprocs):
    """The valid rows with work at nprocs (the largest present when None)."""
    rows = [r for r in rows if r["valid"] is True and r["ideal_s"] > 0]
    if not rows:
        raise InputError("no valid run with work in the folders given")
    nprocs = nprocs or max(r["nprocs"] for r in rows)
    rows = [r for r in rows if r["nprocs"] == nprocs]
    if not rows:
        raise InputError(f"no valid run at --nprocs {nprocs}")
    for r in rows:
        r["W"] = r.get("chains_per_group") or 1
        r["migrated_avg"] = r.get("migrated_avg") or 0.0
        r.setdefault("backend", "mpi")
        r.setdefault("platform", "")
    return rows, nprocs


class Cell:
    """One (workload, set-up, W): time / ideal, regroups and migrated chains per process. One workload seed: the
    median over its repetitions (summary, with its interval where it has one). Several: the median over the seeds of
    each seed's median (per_seed holds them; seeds maps each seed to its Summary of repetitions)."""

    def __init__(self, w, by_seed, simulated):
        self.w = w
        self.seeds = {seed: Summary([r["time_s"] / r["ideal_s"] for r in runs], simulated)
                      for seed, runs in by_seed.items()}
        self.runs = by_seed
        self.summary = next(reversed(self.seeds.values()), None)
        self.per_seed = sorted(s.median for s in self.seeds.values())
        self.ratio = median(self.per_seed)
        self.regroups, self.migrated = counts([r for rs in by_seed.values() for r in rs])

    def text(self):
        if len(self.per_seed) > 1:
            return (f"{self.ratio:.3f} (seeds: {len(self.per_seed)}, "
                    f"{self.per_seed[0]:.3f}-{self.per_seed[-1]:.3f}{self.noise_text()})")
        return summary_text(self.summary)

    def noise_text(self):
        """Real runs of several seeds: how far the widest of the seeds' intervals reaches from its median, so that
        the spread over seeds can be told from the noise of the repetitions; nothing for simulated runs."""
        summaries = list(self.seeds.values())
        if summaries[0].simulated:
            return ""
        if not all(s.has_interval for s in summaries):
            return f"; n={min(s.n for s in summaries)} per seed: no interval"
        reach = max(max(s.hi - s.median, s.median - s.lo) / s.median for s in summaries)
        return f"; each seed's 95 % CI within +-{100 * reach:.1f} %"


def counts(runs):
    """(regroups, migrated chains) per process of runs: the medians of their runs.csv averages."""
    return median([r["regroups_avg"] for r in runs]), median([r["migrated_avg"] for r in runs])


def summary_text(s):
    """One seed's repetitions: the median, with its interval (real runs of n >= 6) or why it has none."""
    if s.simulated:
        return f"{s.median:.3f}"
    return f"{s.median:.3f} {s.ci_text()}" if s.has_interval else f"{s.median:.3f} (n={s.n}: no interval)"


# Parameters besides the workload model that a study may vary (an axis): rows that differ in one are different
# experiments, never repetitions or seeds of one, so each value gets its own panel.
PANEL_PARAMETERS = ["T_ms", "work_mode", "move", "atoms", "max_step", "moves_per_item", "temperature", "jitter_pct",
                    "work_seed", "G", "groups", "workload_scale", "workload_period", "workload_min", "workload_max",
                    "workload_median", "workload_sigma", "wait", "model_compute", "model_reduce", "platform"]


def panel_name(row, varying):
    """The panel of a row: its workload model, and the value of every other parameter that varies in the study."""
    return ", ".join([row["workload"]] + [f"{k} {row.get(k)}" for k in varying])


def series(rows):
    """{panel: {label: [Cell]}}, W ascending; a panel is a workload model (and the value of any other parameter
    the rows vary in)."""
    models = defaultdict(list)
    for r in rows:
        models[r["workload"]].append(r)
    # Per workload model: its own parameters (a random workload's bounds) are not compared with another model's.
    varying = {model: [k for k in PANEL_PARAMETERS if len({str(r.get(k)) for r in of_model}) > 1]
               for model, of_model in models.items()}
    points = defaultdict(lambda: defaultdict(lambda: defaultdict(lambda: defaultdict(list))))
    for r in rows:
        points[panel_name(r, varying[r["workload"]])][run_label(r)][r["W"]][r.get("workload_seed")].append(r)
    out = {}
    for workload, labels in points.items():
        out[workload] = {}
        for label, by_w in labels.items():
            out[workload][label] = [Cell(w, by_w[w], by_w[w] and next(iter(by_w[w].values()))[0]["backend"] == "smpi")
                                    for w in sorted(by_w)]
    return out


def spread_bars(ax, line, colour, shift=1.0):
    """Around each cell's point (drawn at W times shift): the range of its seeds' medians as a capped bar where it
    has several seeds; else its repetitions' interval and min-max (error_bars: real runs of n >= 6 get a bar,
    simulated runs none)."""
    seeded = [c for c in line if len(c.per_seed) > 1]
    if seeded:
        ax.errorbar([c.w * shift for c in seeded], [c.ratio for c in seeded],
                    yerr=[[c.ratio - c.per_seed[0] for c in seeded], [c.per_seed[-1] - c.ratio for c in seeded]],
                    fmt="none", capsize=3, ecolor=colour, elinewidth=1.0)
    single = [c for c in line if len(c.per_seed) == 1]
    if single:
        error_bars(ax, [c.w * shift for c in single], [c.summary for c in single], color=colour)


def table(data, per_seed=False):
    """One row per (workload, W, set-up); with per_seed, one per workload seed of each, so that a claim made for
    every seed can be checked against each seed's own interval."""
    seed_column = "| seed " if per_seed else ""
    lines = [f"| workload | W {seed_column}| balancer | time / ideal | regroups per process | chains migrated per process |",
             "|---|---|---|---|---|---|" + ("---|" if per_seed else "")]
    for workload, labels in data.items():
        ws = sorted({c.w for line in labels.values() for c in line})
        for w in ws:
            for label, line in labels.items():
                for c in line:
                    if c.w != w:
                        continue
                    if not per_seed:
                        lines.append(f"| {workload} | {w} | {label} | {c.text()} | {c.regroups:.2f} | {c.migrated:.2f} |")
                        continue
                    for seed in sorted(c.seeds, key=lambda k: (k is None, str(k))):
                        regroups, migrated = counts(c.runs[seed])
                        lines.append(f"| {workload} | {w} | {'' if seed is None else seed} | {label} | "
                                     f"{summary_text(c.seeds[seed])} | {regroups:.2f} | {migrated:.2f} |")
    return lines


def main(argv=None):
    parser = ArgumentParser(prog="steal_vs_regroup.py", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folders", nargs="+", help="results folders holding runs.csv")
    parser.add_argument("-o", "--output", help="the figure (default: steal-vs-regroup.png in the first folder)")
    parser.add_argument("--nprocs", type=positive_int, help="the rank count to show (default: the largest)")
    parser.add_argument("--per-seed", action="store_true",
                        help="print one table row per workload seed, with its repetitions' interval")
    args = parser.parse_args(argv)
    need_matplotlib()  # first: it may start the script again under a Python that has matplotlib
    try:
        check_inputs_exist(args.folders, "runs.csv")
        out = output_path(args.output, args.folders[0], "steal-vs-regroup.png")
        check_output(out)
        rows = []
        for folder in args.folders:
            rows += read_csv(find_csv(folder, "runs.csv"), "runs.csv", COLUMNS)
        rows, nprocs = chosen_rows(rows, args.nprocs)
    except InputError as e:
        fail(__file__, str(e))
    data = series(rows)
    plt = pyplot()
    fig, axes = plt.subplots(1, len(data), figsize=(4.2 * len(data), 3.6), squeeze=False, sharey=True)
    for ax, (workload, labels) in zip(axes[0], data.items()):
        for k, (label, line) in enumerate(labels.items()):
            # Each set-up a little to the side of the others at the same W, so that their bars do not hide each other.
            shift = 2 ** (0.035 * (k - (len(labels) - 1) / 2))
            (drawn,) = ax.plot([c.w * shift for c in line], [c.ratio for c in line], marker="o", label=label)
            spread_bars(ax, line, drawn.get_color(), shift)
        ax.set_xscale("log", base=2)
        ws = sorted({c.w for line in labels.values() for c in line})
        ax.set_xticks(ws, [str(w) for w in ws])
        ax.set_title(f"{workload}, P = {nprocs}")
        ax.set_xlabel("W, chains per initial group")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel(f"time / ideal ({backend_label(rows[0])})")
    axes[0][-1].legend(fontsize=8)
    save(fig, out)
    print("\n".join(table(data, args.per_seed)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
