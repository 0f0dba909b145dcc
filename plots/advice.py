#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The figure of `mcmclb advise`: one panel per rank count, one bar per set-up in the advice's rank order, its
median time over none's across the scenarios (the assumptions and chain maps the advice varied), and a line from
the scenario where it did best to the one where it did worst. The dashed line is none (1.0); the panel's title is
the verdict. Every number is simulated: the advice is a SimGrid replay of the workload, not a measurement.

Reads advice.csv (a results folder of mcmclb advise, or the file itself; docs/reference/columns.md) and writes
advice.png beside it (or -o PATH).
"""
import argparse
import os
import sys
import textwrap
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcmclb_csv import (ArgumentParser, InputError, check_output, fail, input_files, need_matplotlib,  # noqa: E402
                        output_path, pyplot, read_csv)

COLUMNS = ["nprocs", "rank", "setup", "vs_none_median", "vs_none_min", "vs_none_max", "best_in", "scenarios",
           "verdict", "platform"]


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
    plt = pyplot()
    fig, axes = plt.subplots(1, len(by_p), figsize=(6.5 * len(by_p), 0.35 * max(map(len, by_p.values())) + 2.2),
                             squeeze=False)
    for ax, (p, rs) in zip(axes[0], by_p.items()):
        y = list(range(len(rs)))[::-1]
        medians = [r["vs_none_median"] for r in rs]
        ax.barh(y, medians, color=["tab:green" if r["rank"] == 1 else "tab:blue" for r in rs], alpha=0.8)
        ax.hlines(y, [r["vs_none_min"] for r in rs], [r["vs_none_max"] for r in rs], color="black", linewidth=1.2)
        ax.axvline(1.0, color="gray", linestyle="--", linewidth=1)
        ax.set_yticks(y)
        ax.set_yticklabels([f"{r['setup']}  ({r['best_in']}/{r['scenarios']})" for r in rs], fontsize=8)
        ax.set_xlabel("simulated time / none's, median over scenarios (line: min to max)")
        verdict = rs[0]["verdict"] or rs[0]["setup"]
        ax.set_title(f"P = {p}, simulated on {os.path.basename(rs[0]['platform'] or 'the real MPI')}\n" +
                     "\n".join(textwrap.wrap(verdict, 70)[:4]), fontsize=8, loc="left")
    fig.tight_layout()
    fig.savefig(output, dpi=110)
    print(f"advice.py: wrote {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
