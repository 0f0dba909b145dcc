#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Fig. 2: weak scaling. Run time vs. cores for none, the ideal, async and each collective interval: median over
repetitions with the 95 % confidence interval of the median as error bars (order statistics, plots/mcmclb_stats.py:
none below 6 repetitions, none for simulated series, which are deterministic) and the min-max as a thin line; the
same numbers, with the repetitions per point, are printed as a table. Below it, on the same cores axis, each series'
time / ideal (ideal = 1), scaled to the series near the ideal, which lie on one another on the time axis; series
beyond that range are named above the panel. Real-MPI and simulated (SimGrid SMPI) results can share one figure,
from one or several results folders or runs.csv files: each simulated series is drawn dashed with hollow markers and
labelled "simulated (PLATFORM)", as its numbers come from a model of a machine, not a measurement. --reference
overlays the paper's Fig. 2 as plots/reference/dinan2011.csv gives it: none (7.0 s) and the ideal (3.5 s) follow from
the workload and are drawn as grey lines. The paper states its other times only in words, so each is a grey band
between the CSV's low_s and high_s: collective(1,16,128) "roughly 15 %" below none, read as 10 to 20 % (5.6-6.3 s),
and async "over 40 %" below none, from the ideal to about 4.2 s (hatched: the text gives it no value). The bands
are approximate readings of the text, named in the legend beside the figure so that no label covers a series. The
time / ideal panel shows each line and band divided by the paper's ideal where it reaches the panel's range, and
names above the panel a band that reaches past it. Each collective series' floor
(plots/collective_floor.py: the end its merge rule allows when exchanges and creations cost nothing) is a black
dotted line, series with the same floor sharing one. A point that did not finish is
marked at the foot of the time panel in its series' colour, and named in the legend: those an input folder's failures.csv
records (as a sweep writes it) and those given with --unfinished 'SET-UP@P' (a run stopped without a committed
failures.csv; the figure's folder says why). The cores axis labels every P, turned when they would touch."""
import os
import sys
import textwrap
from collections import defaultdict, namedtuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import collective_floor  # noqa: E402
from mcmclb_csv import (ArgumentParser, InputError, backend_label, check_inputs_exist, check_output,  # noqa: E402
                        fail, markdown_table, need_matplotlib, output_path, oversubscribed_points, pyplot, read_csv,
                        read_runs, run_label, save)
from mcmclb_stats import CAPTION, CI_HEADING, Summary, error_bars, median  # noqa: E402

# A series whose median time / ideal is at most this is "near the ideal": the time panel cannot separate such
# series (3.5 s and 4.4 s are a quarter inch apart there), so the ratio panel is scaled to them.
NEAR_IDEAL = 1.25
REFERENCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference", "dinan2011.csv")


def main(argv=None):
    parser = ArgumentParser(prog="fig2.py", description=__doc__)
    parser.add_argument("inputs", nargs="+", help="result folder(s) or runs.csv file(s)")
    parser.add_argument("-o", "--output", help="PNG path (default: fig2.png in the first input's folder)")
    parser.add_argument("--pdf", action="store_true", help="also write a PDF beside the PNG")
    parser.add_argument("--reference", action="store_true", help="overlay the paper's values (Blue Gene/P)")
    parser.add_argument("--unfinished", action="append", default=[], metavar="SET-UP@P",
                        help="mark the point of SET-UP (as the legend names it, e.g. 'collective(16) create') at P "
                             "as not finished; repeatable")
    args = parser.parse_args(argv)
    need_matplotlib()  # first: it may start the script again under a Python that has matplotlib
    output = output_path(args.output, args.inputs[0], "fig2.png")
    try:
        check_inputs_exist(args.inputs, "runs.csv")
        check_output(output, args.pdf)
        runs = read_runs(args.inputs)
        reference = paper_times() if args.reference else {}
        unfinished = unfinished_points(args.inputs, args.unfinished, {run_label(r) for r in runs})
    except InputError as e:
        fail(__file__, str(e))

    # One series per balancer set-up and backend; the backend is named only when the figure holds more than one.
    backends = sorted({backend_label(r) for r in runs}, key=lambda b: (b != "real MPI", b))
    series = defaultdict(lambda: defaultdict(list))  # (set-up, backend) -> P -> time_s of each repetition
    ratios = defaultdict(lambda: defaultdict(list))  # the same, time_s / ideal_s of each row (none where ideal is 0)
    ideal = defaultdict(list)
    for r in runs:
        key = (run_label(r), backend_label(r))
        series[key][r["nprocs"]].append(r["time_s"])
        if r["ideal_s"] > 0:
            ratios[key][r["nprocs"]].append(r["time_s"] / r["ideal_s"])
        ideal[r["nprocs"]].append(r["ideal_s"])

    def interval(name):  # collective(16) after collective(2)
        return int(name.split("(")[1].split(")")[0]) if "(" in name else 0

    order = sorted(series, key=lambda s: (not s[0].startswith("none"), not s[0].startswith("async"), interval(s[0]),
                                          s[0], backends.index(s[1])))
    procs = sorted(ideal)
    near, low, high = ratio_range(ratios)

    plt = pyplot()
    # The time panel shows the whole picture; the ratio panel below it separates the series that lie within a few
    # per cent of the ideal, which on a 0-7 s axis sit on one another.
    fig, (ax, ax_ratio) = plt.subplots(2, 1, sharex=True, figsize=(10.5, 7.0), gridspec_kw={"height_ratios": [3, 2]})
    ax.plot(procs, [median(ideal[p]) for p in procs], "k--", label="ideal", linewidth=1.2)
    ax_ratio.axhline(1.0, color="black", linestyle="--", linewidth=1.2)
    colours = {}  # a balancer set-up keeps its colour across backends; the line style tells the backend apart
    drawn, off_scale, stats = [], [], []
    for key in order:
        name, backend = key
        simulated = backend != "real MPI"
        colour = colours.setdefault(name, f"C{len(colours) % 10}")
        label = f"{name}, {backend}" if len(backends) > 1 or simulated else name
        style = dict(marker="o", color=colour, linestyle="--" if simulated else "-",
                     markerfacecolor="none" if simulated else colour)
        ps, times = summaries(series[key], simulated)
        stopped = sorted(unfinished.get(name, ()))
        if stopped:
            label += f" (unfinished at P = {', '.join(str(p) for p in stopped)})"
            # At the foot of the time panel, below every series, in the series' colour: the point has no time to
            # draw, and a mark at some height would read as one.
            ax.plot(stopped, [0.05] * len(stopped), marker="X", markersize=10, linestyle="none", color=colour,
                    transform=ax.get_xaxis_transform(), clip_on=False)
            for p in stopped:
                ax.annotate(f"{name}:\nunfinished", (p, 0.05), xycoords=ax.get_xaxis_transform(), xytext=(0, 9),
                            textcoords="offset points", ha="right", va="bottom", fontsize="x-small", color=colour)
                stats.append([label, str(p), "0", "unfinished", "-", "-"])
        ax.plot(ps, [t.median for t in times], label=label, **style)
        error_bars(ax, ps, times, color=colour)
        stats += [[label, str(p), str(t.n), f"{t.median:.3f}", t.ci_text(), t.range_text()] for p, t in zip(ps, times)]
        if ratios.get(key):
            ps, med = summaries(ratios[key], simulated)
            ax_ratio.plot(ps, [m.median for m in med], **style)
            error_bars(ax_ratio, ps, med, color=colour)
            med = [m.median for m in med]
            if key not in near:
                off_scale.append(f"{label} {min(med):.2f}" + (f"-{max(med):.2f}" if max(med) > min(med) else ""))
        drawn.append(label + (" [dashed]" if simulated else ""))
    counts = sorted({int(row[2]) for row in stats})

    # Each collective series' floor (plots/collective_floor.py): the end its merge rule allows when exchanges and
    # creations cost nothing. Series with the same floor share one line: the same at every P they share, or one
    # value at every P (drawn over all their P).
    floors = {}  # the floor's key -> ({P: floor s}, the intervals whose floor it is)
    for key in order:
        own = [r for r in runs if (run_label(r), backend_label(r)) == key and collective_floor.applies(r)]
        at = {r["nprocs"]: round(collective_floor.floor_s(r), 9) for r in own}  # a sum's last bits aside
        if at:
            values = set(at.values())
            points, intervals = floors.setdefault(values.pop() if len(values) == 1 else tuple(sorted(at.items())),
                                                  ({}, []))
            points.update(at)
            intervals.append(str(own[0]["interval"]))
    floor_text = []
    for at, intervals in floors.values():
        points = sorted(at.items())
        ps = [p for p, _ in points]
        values = [v for _, v in points]
        name = f"floor of collective({','.join(dict.fromkeys(intervals))})"
        ax.plot(ps, values, color="black", linestyle=(0, (1, 1)), linewidth=0.9, zorder=1.5,  # under the series
                label=f"{name}: exchanges free" + (f", {values[0]:g} s" if len(set(values)) == 1 else ""))
        ratio = [v / median(ideal[p]) for p, v in points if median(ideal[p]) > 0]
        if ratio and all(low <= v <= high for v in ratio):  # outside the ratio panel's range it adds nothing
            ax_ratio.plot([p for p, _ in points if median(ideal[p]) > 0], ratio, color="black", linestyle=(0, (1, 1)),
                          linewidth=0.9)
        floor_text.append(f"{name} {min(values):.4f}" + (f"-{max(values):.4f}" if max(values) > min(values) else "")
                          + " s")

    # The paper's values go into the legend, never beside the lines, where they covered the series. A value the
    # workload fixes is a line; a time the text gives only in words is a band over the range it allows.
    by_range = defaultdict(list)  # set-ups sharing a range are drawn once, their names joined
    for name, paper in reference.items():
        by_range[(paper.low_s, paper.high_s)].append(name)
    paper_ideal = reference["ideal"].low_s if "ideal" in reference else None
    paper_none = reference["none"].low_s if "none" in reference else None
    past_panel = []  # the bands the ratio panel shows in part, named above it
    for (value_low, value_high), names in sorted(by_range.items()):
        name = joined(names)
        paper = reference[names[0]]
        if value_low == value_high:
            style = dict(color="grey", linewidth=0.8, linestyle="-.")
            ax.axhline(value_low, label=f"paper {name}: {value_low:g} s", **style)
            if paper_ideal and low <= value_low / paper_ideal <= high:  # outside the panel's range it adds nothing
                ax_ratio.axhline(value_low / paper_ideal, **style)
            continue
        # A band without a value of its own (the text gives only "over" a share) is hatched, so that its legend
        # entry tells it from the other band's.
        style = dict(facecolor=(0.5, 0.5, 0.5, 0.18), edgecolor=(0.5, 0.5, 0.5, 0.45), linewidth=0,
                     hatch="//" if paper.time_s is None else None)
        ax.axhspan(value_low, value_high, label=f"paper {name}: {band_words(paper, paper_none)}, from the text",
                   **style)
        # In the ratio panel, the part of the band inside its range (the limits clip the rest); a band that reaches
        # past the panel is named above it, as a shade without an edge would not say what it is.
        ratio_low, ratio_high = (value_low / paper_ideal, value_high / paper_ideal) if paper_ideal else (0, 0)
        if paper_ideal and ratio_low < high and ratio_high > low:
            # Unhatched and lighter: a band may fill the whole panel, and hatching there would crowd the series.
            ax_ratio.axhspan(ratio_low, ratio_high, facecolor=(0.5, 0.5, 0.5, 0.12), linewidth=0)
            if ratio_low < low or ratio_high > high:
                past_panel.append(f"paper {name} {ratio_low:.2f}-{ratio_high:.2f} (from the text)")

    ax.set_xscale("log", base=2)
    # A point that ran more ranks than cores is marked on the axis and explained under the figure: its times are
    # of ranks waiting for a core, not of the balancers.
    over = oversubscribed_points(runs)
    procs = sorted(set(procs) | {p for ps in unfinished.values() for p in ps})
    label_cores(ax_ratio, procs, over)
    footnote = ""
    if over:  # under the axis label, where the layout keeps room for it
        ran = ", ".join(f"P = {p}: {ranks} ranks on {cores} cores" for p, (ranks, cores) in sorted(over.items()))
        footnote = "\n" + textwrap.fill(f"* oversubscribed ({ran}): more ranks than cores, so ranks wait for a core "
                                        "and communicator creation costs more (100-1000x under MPICH, which busy-polls); do not "
                                        "compare balancers there", 100)
    ax_ratio.minorticks_off()
    ax.set_ylim(bottom=0)
    ax_ratio.set_ylim(low, high)
    ax_ratio.set_xlabel("cores (ranks)" + footnote)
    ax.set_ylabel("run time (s, max over ranks)")
    ax_ratio.set_ylabel("time / ideal")
    # Wrapped to the panel's width: centred over it, a longer line ran off the figure's left edge.
    if "real MPI" not in backends:  # deterministic: no repetitions, no interval to speak of
        ax.set_title("Weak scaling, simulated with SimGrid SMPI (not measured):\none deterministic run per point")
    else:
        ax.set_title(textwrap.fill(f"Weak scaling: median of n = {counts[0]}" +
                                   (f"-{counts[-1]}" if counts[-1] > counts[0] else "") +
                                   " repetitions; bars: 95 % CI of the median (n >= 6), thin lines: min-max", 70) +
                     ("\n(dashed: simulated with SimGrid, one deterministic run per point, not measured)"
                      if backends != ["real MPI"] else ""))
    above_panel = (["above this panel's range: " + "; ".join(off_scale)] if off_scale else []) + \
        (["shaded: " + "; ".join(past_panel) + ", reaching past this panel's range"] if past_panel else [])
    if above_panel:  # named above the panel, so a reader does not take a missing line for a missing series
        ax_ratio.set_title("\n".join(textwrap.fill(text, 120) for text in above_panel), fontsize="x-small", loc="left")
    for a in (ax, ax_ratio):
        a.grid(True, alpha=0.3)
    # Outside the data area on the right: the legend can never cover a series, however many there are.
    # matplotlib lists plain lines before error-bar series: the ideal first, then the series, the paper's last.
    handles, labels = ax.get_legend_handles_labels()
    entries = sorted(zip(handles, labels), key=lambda e: (e[1] != "ideal", e[1].startswith("paper "),
                                                          e[1].startswith("floor ")))
    ax.legend(*zip(*entries), fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    print("\n".join(markdown_table(["series", "P", "runs", "time_s median", CI_HEADING, "[min-max]"], stats)))
    print(f"({CAPTION}.)")
    if ratios:
        print(f"time / ideal panel: {low:.4f} to {high:.4f}" +
              (f"; above it: {'; '.join(off_scale)}" if off_scale else ""))
    else:
        print("time / ideal panel: empty (every row has ideal_s 0)")
    if floor_text:
        print("floors (exchanges and creations free): " + "; ".join(floor_text))
    save(fig, output, args.pdf)
    print("series: " + "; ".join(drawn))
    return 0


class PaperTime(namedtuple("PaperTime", "time_s low_s high_s source")):
    """One set-up of the paper's Fig. 2 as plots/reference/dinan2011.csv gives it: time_s, the approximate value its
    text gives (None where it gives none), low_s to high_s, the range of times the text allows (one value where the
    workload fixes it), and source, how the CSV derives them."""

    def text(self):
        """The paper's time in seconds as the documents write it: '7' (fixed by the workload), 'about 5.95 (5.6-6.3)'
        (an approximate value and the range the text allows) or '3.5 to about 4.2' (a range without a value)."""
        if self.low_s == self.high_s:
            return f"{self.low_s:g}"
        if self.time_s is None:
            return f"{self.low_s:g} to about {self.high_s:g}"
        return f"about {self.time_s:g} ({self.low_s:g}-{self.high_s:g})"

    def place(self, seconds):
        """Where a time falls against the range the text allows: 'inside', 'below' or 'above'."""
        return "below" if seconds < self.low_s else "above" if seconds > self.high_s else "inside"


def paper_times(path=REFERENCE):
    """{'none'|'ideal'|'async'|'collective(i)': PaperTime} of the fig2 rows of dinan2011.csv. InputError for a row
    without its range, with low_s above high_s, or with a time_s outside its range."""
    times = {}
    for r in read_csv(path, "dinan2011.csv", ["kind", "balancer", "interval", "time_s", "source", "low_s", "high_s"]):
        if r["kind"] != "fig2":
            continue
        name = r["balancer"] + (f"({r['interval']})" if r["interval"] not in ("", None) else "")
        if r["low_s"] is None or r["high_s"] is None or r["low_s"] > r["high_s"] or \
                (r["time_s"] is not None and not r["low_s"] <= r["time_s"] <= r["high_s"]):
            raise InputError(f"{path}: fig2 row {name}: time_s {r['time_s']}, low_s {r['low_s']}, high_s "
                             f"{r['high_s']} (allowed: low_s <= high_s, both given, and time_s empty or between them)")
        times[name] = PaperTime(r["time_s"], r["low_s"], r["high_s"], r["source"])
    return times


def joined(names):
    """'collective(1,16,128)' of ['collective(1)', 'collective(16)', 'collective(128)']; one name as it is, and
    names of several balancers joined by ' and '."""
    base = names[0].split("(")[0]
    if len(names) == 1 or not all(n.startswith(base + "(") for n in names):
        return " and ".join(names)
    return f"{base}({','.join(n.split('(')[1].rstrip(')') for n in names)})"


def band_words(paper, none):
    """A band's legend text from the paper's text: 'roughly 15 % below none (5.6-6.3 s)' where it gives an
    approximate value, 'over 40 % below none (under about 4.2 s)' where it gives only how much faster than none."""
    if paper.time_s is not None:
        share = f"roughly {100 * (1 - paper.time_s / none):.0f} % below none " if none else f"about {paper.time_s:g} s "
        return share + f"({paper.low_s:g}-{paper.high_s:g} s)"
    share = f"over {100 * (1 - paper.high_s / none):.0f} % below none " if none else ""
    return share + f"(under about {paper.high_s:g} s)"


# Characters of cores labels that fit upright under the panel beside the legend: 32 to 8192 (29) do, with room;
# 32 to 65536 (44) ran together ("3276865536").
UPRIGHT_LABEL_CHARS = 36


def label_cores(ax, procs, over):
    """Every P of procs as a tick of the cores axis (P* where over has it), turned by 45 degrees when there are so
    many characters that upright labels would run together."""
    ax.set_xticks(procs)
    texts = [f"{p}*" if p in over else str(p) for p in procs]
    ax.set_xticklabels(texts)
    if sum(len(t) for t in texts) > UPRIGHT_LABEL_CHARS:
        for label in ax.get_xticklabels():
            label.set_rotation(45)
            label.set_horizontalalignment("right")
            label.set_rotation_mode("anchor")


def unfinished_points(inputs, given, labels):
    """{set-up: {P}} of the points that did not finish: the rows of each input folder's failures.csv (nprocs and
    balancer, the set-up as run_label names it) and each --unfinished 'SET-UP@P'. InputError for a malformed value
    or a set-up no run of the figure has."""
    found = defaultdict(set)
    for path in inputs:
        failures = os.path.join(path if os.path.isdir(path) else os.path.dirname(path), "failures.csv")
        if os.path.isfile(failures):
            for row in read_csv(failures, "failures.csv", ["nprocs", "balancer"]):
                found[row["balancer"]].add(row["nprocs"])
    for text in given:
        name, at, p = text.rpartition("@")
        if not at or not name or not p.isdigit() or int(p) < 1:
            raise InputError(f"--unfinished {text}: not SET-UP@P (allowed: e.g. 'collective(16) create@65536')")
        if name not in labels:
            raise InputError(f"--unfinished {text}: no run of {name} in the inputs (allowed: "
                             f"{', '.join(sorted(labels))})")
        found[name].add(int(p))
    return found


def summaries(by_p, simulated):
    """(P values, the Summary of each P's samples) of P -> samples."""
    ps = sorted(by_p)
    return ps, [Summary(by_p[p], simulated) for p in ps]


def ratio_range(ratios):
    """(the series the time / ideal panel is scaled to, its lower and upper limit). The panel is scaled to the
    series whose median ratio is within NEAR_IDEAL of 1 (those the time panel cannot tell apart), or to every
    series when none is; the others stay visible in the time panel and are named above this one. The limits
    hold 1 and every min-max bar of the chosen series, with a margin."""
    def level(by_p):
        return median([median(v) for v in by_p.values()])

    near = {key for key, by_p in ratios.items() if by_p and level(by_p) <= NEAR_IDEAL}
    chosen = near or {key for key, by_p in ratios.items() if by_p}
    values = [v for key in chosen for samples in ratios[key].values() for v in samples] + [1.0]
    low, high = min(values), max(values)
    margin = max(0.08 * (high - low), 0.003)
    return chosen, low - margin, high + margin


if __name__ == "__main__":
    sys.exit(main())
