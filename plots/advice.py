#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The figure of `mcmclb advise`: one panel per rank count, one bar per set-up in the advice's rank order (the
first in another colour), its whole time (run plus one-off costs such as the calibration of the rule pays) over
none's as the median over the scenarios the advice varied (assumptions and chain maps), and a line from the
scenario where it did best to the one where it did worst. The dashed line is none (1.0). Each set-up's label gives
the set-ups with identical times (" = ...") and its largest regret (its time over the best one's in a scenario,
minus 1). A panel's title names the question answered (walkers on ranks) and gives the verdict.

Every number is simulated: the advice is a SimGrid replay of the workload, not a measurement.

Reads advice.csv (a results folder of mcmclb advise, or the file itself; docs/reference/columns.md) and writes
advice.png beside it (or -o PATH).
"""
import argparse
import os
import re
import sys
import textwrap
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcmclb_csv import (ArgumentParser, InputError, check_output, fail, input_files, need_matplotlib,  # noqa: E402
                        output_path, pyplot, read_csv)

COLUMNS = ["nprocs", "walkers", "rank", "setup", "same_as", "vs_none_median", "vs_none_min", "vs_none_max",
           "regret_max", "verdict"]
WIDTH = 8.5  # inches
TITLE_PT, LABEL_PT = 9, 8
LABEL_COLUMNS = 46  # a bar label's characters per line
LINE_IN = 1.25 / 72  # a text line's height per point of font size, in inches
XLABEL = "whole time / none's (simulated; run plus one-off costs),\nmedian over scenarios; line: min to max"


def panels(rows):
    """{nprocs: [rows in rank order]}, rank counts ascending; InputError when a rank count's ranks are not 1..n."""
    by_p = defaultdict(list)
    for r in rows:
        by_p[r["nprocs"]].append(r)
    for p, rs in by_p.items():
        rs.sort(key=lambda r: r["rank"])
        if [r["rank"] for r in rs] != list(range(1, len(rs) + 1)):
            raise InputError(f"advice.csv: the ranks at nprocs={p} are not 1, 2, ... (a row cut off or edited?)")
    return dict(sorted(by_p.items()))


def percent(fraction):
    """A regret in per cent, to two significant digits below 10 % ("2.1", "0.4", "0"), whole above ("24")."""
    pct = 100 * fraction
    return f"{pct:.0f}" if pct >= 10 else f"{pct:.1f}".removesuffix(".0")


def unbroken(text):
    """text with a number and its unit ("2.1 %", "55 s") kept on one line when wrapped (a no-break space)."""
    return re.sub(r"(\d) (%|s\b)", "\\1\u00a0\\2", text)


def label(row):
    """A bar's label: the set-up, " = " and the first set-up with the same times ("+k more" for the others; only
    their number where that is longer than two lines), on at most two lines (cut with "..." past them), and its
    largest regret."""
    same = [s for s in row["same_as"].split("; ") if s]
    name = row["setup"]
    if same:  # the first identical set-up where it fits in two lines, else only how many there are
        first = f"{name} = {same[0]}" + (f" +{len(same) - 1} more" if len(same) > 1 else "")
        fits = len(textwrap.wrap(first, LABEL_COLUMNS, break_on_hyphens=False)) <= 2
        name = first if fits else f"{name} (= {len(same)} other{'s' if len(same) > 1 else ''})"
    lines = textwrap.wrap(name, LABEL_COLUMNS, max_lines=2, placeholder=" ...", break_on_hyphens=False) or [""]
    regret = unbroken(f"(regret <= {percent(row['regret_max'])} %)")
    if len(lines[-1]) + 2 + len(regret) <= LABEL_COLUMNS:
        lines[-1] += "  " + regret
    else:
        lines.append(regret)
    return "\n".join(lines)


def title(p, rows):
    """The panel's title, unwrapped: the question answered, then the verdict (on the rank-1 row)."""
    head = f"P = {p}: {rows[0]['walkers']}" if rows[0]["walkers"] else f"P = {p}"
    return head, unbroken(rows[0]["verdict"])


def wrapped(head, verdict, columns):
    return "\n".join(textwrap.wrap(head, columns, break_on_hyphens=False) +
                     textwrap.wrap(verdict, columns, break_on_hyphens=False))


def figure(by_p):
    """The figure (matplotlib, Agg) of the panels panels() gives: one subfigure per rank count, stacked, each
    titled with its question and verdict wrapped to the figure's width; its height follows the title lines and
    bars, and constrained layout keeps every text inside it."""
    plt = pyplot()
    titles = {p: title(p, rs) for p, rs in by_p.items()}
    # A first guess of the characters per line (DejaVu Sans averages about half an em), corrected below by measuring.
    columns = int((WIDTH - 0.3) * 72 / (0.5 * TITLE_PT))
    lines = {p: wrapped(*titles[p], columns).count("\n") + 1 for p in by_p}
    # A bar's height: room for its label's lines (at most three) and a gap.
    bar_in = {p: 0.1 + max(label(r).count("\n") + 1 for r in rs) * LABEL_PT * LINE_IN for p, rs in by_p.items()}
    heights = [lines[p] * TITLE_PT * LINE_IN + len(rs) * bar_in[p] + 1.0 for p, rs in by_p.items()]
    fig = plt.figure(figsize=(WIDTH, sum(heights)), layout="constrained")
    subfigs = fig.subfigures(len(by_p), 1, height_ratios=heights, squeeze=False)[:, 0]
    suptitles = []
    for sub, (p, rs) in zip(subfigs, by_p.items()):
        ax = sub.subplots()
        y = list(range(len(rs)))[::-1]
        ax.barh(y, [r["vs_none_median"] for r in rs], color=["tab:green" if r["rank"] == 1 else "tab:blue" for r in rs],
                alpha=0.8)
        ax.hlines(y, [r["vs_none_min"] for r in rs], [r["vs_none_max"] for r in rs], color="black", linewidth=1.2)
        ax.axvline(1.0, color="gray", linestyle="--", linewidth=1)
        ax.set_xlim(0, 1.05 * max([1.0] + [r["vs_none_max"] for r in rs]))
        ax.set_ylim(-0.6, len(rs) - 0.4)
        ax.set_yticks(y)
        ax.set_yticklabels([label(r) for r in rs], fontsize=LABEL_PT)
        ax.tick_params(axis="x", labelsize=LABEL_PT)
        ax.set_xlabel(XLABEL, fontsize=LABEL_PT)
        suptitles.append((p, sub.suptitle(wrapped(*titles[p], columns), x=0.01, ha="left",
                                            fontsize=TITLE_PT)))
    # Rewrap any title wider than the figure, measured (the first guess is only an estimate of the font).
    renderer = fig.canvas.get_renderer()
    for p, text in suptitles:
        cols = columns
        while cols > 20 and text.get_window_extent(renderer).width > 0.97 * fig.bbox.width:
            cols -= 4
            text.set_text(wrapped(*titles[p], cols))
    return fig


def main(argv=None):
    parser = ArgumentParser(prog="advice.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("input", metavar="folder", help="an mcmclb advise folder, or its advice.csv")
    parser.add_argument("-o", "--output", help="PNG path (default: advice.png beside the input)")
    args = parser.parse_args(argv)
    need_matplotlib()  # first: it may start the script again under a Python that has matplotlib
    output = output_path(args.output, args.input, "advice.png")
    try:
        _, file = input_files(args.input, "advice.csv")
        check_output(output)
        by_p = panels(read_csv(file, "advice.csv", COLUMNS))
    except InputError as e:
        fail(__file__, str(e))
    fig = figure(by_p)
    fig.savefig(output, dpi=110)
    print(f"advice.py: wrote {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
