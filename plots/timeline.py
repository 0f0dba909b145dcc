#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Timeline of one run: ranks on the y axis, time on the x axis, each rank's bar coloured by the chain its group
works, merges marked by a vertical line over the new group's ranks. Shows how load moved during the run.
Input: a result folder (runs.csv, ranks.csv, events.csv), or an events.csv file with runs.csv and ranks.csv in
its folder. Default run: the first async run; --run-id (repeated) or --all-runs draw one panel per run, stacked,
each with its own time axis (e.g. async beside lookahead on one workload)."""
import os
import sys
import textwrap
from argparse import ArgumentTypeError
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcmclb_csv import (ArgumentParser, InputError, check_output, fail, input_files, output_path,  # noqa: E402
                        need_matplotlib, pyplot, read_csv, read_runs, run_label, runs_by_id, save)

EVENT_COLUMNS = ["run_id", "t_s", "kind", "group_first", "group_last", "chain"]
MAX_HEIGHT_IN = 12.0  # figure height cap, inches
RANK_COLUMNS = ["run_id", "rank", "elapsed_s"]


def rank_range(text):
    """argparse type for --ranks: FIRST-LAST, 0 <= FIRST <= LAST."""
    first, sep, last = text.partition("-")
    if not (sep and first.isdigit() and last.isdigit() and int(first) <= int(last)):
        raise ArgumentTypeError(f"{text!r} is not FIRST-LAST (allowed: two ranks, e.g. 0-63, FIRST <= LAST)")
    return int(first), int(last)


def main(argv=None):
    parser = ArgumentParser(prog="timeline.py", description=__doc__)
    parser.add_argument("input", metavar="folder",
                        help="result folder, or an events.csv file (runs.csv and ranks.csv are read beside it)")
    parser.add_argument("--run-id", action="append",
                        help="run to draw (repeat for one panel per run; default: the first async run, else the "
                             "first run)")
    parser.add_argument("--all-runs", action="store_true", help="one panel per run in the input, in its order")
    parser.add_argument("--ranks", type=rank_range, metavar="FIRST-LAST",
                        help="draw only these ranks (e.g. 0-63 of a large run; default: all)")
    parser.add_argument("-o", "--output", help="PNG path (default: timeline.png beside the input)")
    parser.add_argument("--pdf", action="store_true", help="also write a PDF beside the PNG")
    args = parser.parse_args(argv)
    need_matplotlib()  # first: it may start the script again under a Python that has matplotlib
    if args.run_id and args.all_runs:
        parser.error("--run-id and --all-runs exclude each other")
    output = output_path(args.output, args.input, "timeline.png")
    try:
        folder, events_file = input_files(args.input, "events.csv")
        check_output(output, args.pdf)
        runs = read_runs([folder])
        events = read_csv(events_file, "events.csv", EVENT_COLUMNS)
        ranks = read_csv(os.path.join(folder, "ranks.csv"), "ranks.csv", RANK_COLUMNS)
    except InputError as e:
        fail(__file__, str(e))
    if args.all_runs:
        chosen = runs
    elif args.run_id:
        try:
            chosen = runs_by_id(runs, args.run_id, args.input)
        except InputError as e:
            fail(__file__, str(e))
    else:
        chosen = [default_run(runs)]

    panels = []  # (run, its events by time, rank -> elapsed_s, first rank, last rank)
    for run in chosen:
        rid = run["run_id"]
        run_events = sorted((e for e in events if e["run_id"] == rid), key=lambda e: e["t_s"])
        elapsed = {r["rank"]: r["elapsed_s"] for r in ranks if r["run_id"] == rid}
        if not run_events or not elapsed:
            fail(__file__, f"{args.input}: run {rid} has no events or ranks rows")
        nprocs = run["nprocs"]
        first, last = args.ranks or (0, nprocs - 1)
        if last >= nprocs:
            fail(__file__, f"--ranks {first}-{last}: run {rid} has ranks 0-{nprocs - 1}")
        panels.append((run, run_events, elapsed, first, last))

    plt = pyplot()
    heights = [panel_height(last - first + 1) for _, _, _, first, last in panels]
    # Panels keep their own time axes: runs of different lengths each fill their width.
    fig, axes = plt.subplots(len(panels), 1, figsize=(7.2, sum(heights)), squeeze=False,
                             gridspec_kw={"height_ratios": heights})
    for ax, height_in, panel in zip(axes[:, 0], heights, panels):
        draw_run(ax, height_in, *panel)
    save(fig, output, args.pdf)
    return 0


def default_run(runs):
    """The run drawn when none is named: the first async run (it shows merges), else the first run."""
    return next((r for r in runs if r["balancer"] == "async"), runs[0])


def panel_height(shown):
    """A run's panel height in inches for shown ranks: a row per rank up to about 40 ranks; beyond, the panel
    stops growing (a simulated 8192-rank run would ask for a 69000-pixel-high image, more than any PNG writer
    takes) and rows get thinner."""
    return min(max(2.5, 0.28 * shown + 1.2), MAX_HEIGHT_IN)


def draw_run(ax, height_in, run, run_events, elapsed, first, last):
    """One run's timeline of ranks first..last into ax, a panel height_in inches high."""
    from matplotlib.collections import LineCollection
    from matplotlib.ticker import MaxNLocator
    import matplotlib

    # Each rank's membership over time: (start, chain) from the events covering it.
    spans = defaultdict(list)
    for e in run_events:
        for rank in range(max(e["group_first"], first), min(e["group_last"], last) + 1):
            spans[rank].append((e["t_s"], e["chain"]))

    cmap = matplotlib.colormaps["tab20"]
    nprocs, shown = run["nprocs"], last - first + 1
    row_pt = 72 * (height_in - 1.2) / shown  # a rank's row in points
    many = shown > 64  # rows then fill their height and are not anti-aliased, so sub-pixel rows stay visible
    # One collection for all bars: thousands of ranks draw in seconds, where a patch per bar would take minutes.
    segments, colours = [], []
    for rank in range(first, last + 1):
        changes = spans.get(rank, [])
        end = elapsed.get(rank, run["time_s"])
        for k, (start, chain) in enumerate(changes):
            stop = changes[k + 1][0] if k + 1 < len(changes) else end
            segments.append([(start, rank), (max(stop, start), rank)])
            colours.append(cmap(chain % 20))
    ax.add_collection(LineCollection(segments, colors=colours, linewidths=row_pt if many else 0.8 * row_pt,
                                     capstyle="butt", antialiaseds=not many))
    ax.set_xlim(0, max([run["time_s"], run["ideal_s"], *elapsed.values()]) * 1.02)
    merges = [e for e in run_events if e["kind"] == "merge" and e["group_first"] <= last and e["group_last"] >= first]
    if merges:
        ax.vlines([e["t_s"] for e in merges], [e["group_first"] - 0.45 for e in merges],
                  [e["group_last"] + 0.45 for e in merges], color="black", linewidth=0.4 if many else 1.2)
    ax.axvline(run["ideal_s"], color="grey", linestyle="--", linewidth=0.8)
    ax.annotate("ideal", (run["ideal_s"], last + 0.5), fontsize=7, color="grey")
    ax.set_ylim(last + 0.5, first - 0.5)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("time since start (s)")
    ax.set_ylabel("rank")
    over = (f" [oversubscribed: {run['ranks_per_node']} ranks on {run['cores_available']} cores, so ranks wait for "
            "a core]" if run.get("oversubscribed") else "")
    title = (f"{run_label(run)}, P = {nprocs}" + (f", ranks {first}-{last}" if shown < nprocs else "") + over +
             f": colour = chain worked, black = merge (time {run['time_s']:.3f} s)")
    # Wrapped, so that a long title (the oversubscription note) stays inside the figure.
    ax.set_title(textwrap.fill(title, 100), fontsize=9)


if __name__ == "__main__":
    sys.exit(main())
