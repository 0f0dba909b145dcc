#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Table 1: regrouping operations per process, avg / stdev / min / max per balancer and interval, at one rank count
(default: the largest in the input). Over repetitions: avg and stdev are means of the per-run values, min and max
the extremes. --paper adds the paper's values (8192 cores) side by side, and a "not run" row (runs 0 in csv) for
each of the paper's rows that the input lacks. Each table comes from one backend: the real MPI or one simulated
platform, named in the heading (and in the csv columns); inputs holding several are refused unless --backend (and
--platform) choose one, so real and simulated numbers are never mixed silently."""
import csv
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcmclb_csv import (ArgumentParser, InputError, backend_label, check_inputs_exist, fail,  # noqa: E402
                        markdown_table, oversubscribed_points, platform_name, positive_int, read_csv, read_runs,
                        run_label)

REFERENCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference", "dinan2011.csv")


def row_order(name):
    """Table order of a row label: none, async, then the rest by interval; within one set-up by item noise."""
    kind = 0 if name.startswith("none") else 1 if name.startswith("async") else 2
    interval = int(name.split("(")[1].split(")")[0]) if "(" in name else 0
    base, _, jitter = name.partition(", jitter ")
    return (kind, interval, base, float(jitter.rstrip(" %")) if jitter else 0.0)


def row_label(run):
    """A table row: the balancer set-up, and the item noise where there was some (runs with different noise are
    different experiments, never averaged into one row)."""
    jitter = run.get("jitter_pct") or 0
    return run_label(run) + (f", jitter {jitter:g} %" if jitter else "")


def paper_key(name):
    """The dinan2011.csv key of a row label: "collective(16) create" -> ("collective", "16")."""
    balancer, _, interval = name.split(" ")[0].partition("(")
    return balancer, interval.rstrip(")")


def table(runs, nprocs):
    groups = defaultdict(list)
    for r in runs:
        if r["nprocs"] == nprocs:
            groups[row_label(r)].append(r)
    rows = []
    for name in sorted(groups, key=row_order):
        rs = groups[name]
        rows.append({"balancer": name, "runs": len(rs),
                     "avg": sum(r["regroups_avg"] for r in rs) / len(rs),
                     "std": sum(r["regroups_std"] for r in rs) / len(rs),
                     "min": min(r["regroups_min"] for r in rs),
                     "max": max(r["regroups_max"] for r in rs)})
    return rows


def paper_values():
    values = {}
    for r in read_csv(REFERENCE, "dinan2011.csv", ["kind", "balancer", "interval", "avg", "stdev", "min", "max"]):
        if r["kind"] == "table1":
            values[(r["balancer"], str(r["interval"] or ""))] = (f"{r['avg']:.2f}", f"{r['stdev']:.2f}",
                                                                f"{r['min']}", f"{r['max']}")
    return values


def build(runs, source, nprocs=None, paper=False, backend=None, platform=None, tidy=False):
    """(heading, header, rows of cells) of Table 1 from runs at nprocs (default: the largest), of one backend and
    platform (refused with InputError when the runs hold several and backend and platform do not choose one). paper:
    the paper's values beside each row, and a "not run" row for each of its rows the runs lack. tidy (csv): every
    row names its backend and platform, and "not run" is a run count of 0. source names the input in messages."""
    values = paper_values() if paper else {}
    runs = [r for r in runs if (backend is None or r["backend"] == backend) and
            (platform is None or platform in (r["platform"], platform_name(r)))]
    if not runs:
        raise InputError(f"{source}: no runs with backend={backend or 'any'} and platform={platform or 'any'}")
    available = sorted({r["nprocs"] for r in runs})
    nprocs = nprocs or available[-1]
    if nprocs not in available:
        raise InputError(f"{source}: no runs with nprocs={nprocs} (has {', '.join(map(str, available))})")
    sources = sorted({(backend_label(r), r["platform"]) for r in runs if r["nprocs"] == nprocs})
    if len(sources) > 1:
        raise InputError(f"{source}: the runs with nprocs={nprocs} come from "
                         f"{'; '.join(p or b for b, p in sources)}, which one table must not mix "
                         f"(allowed: choose one with --backend mpi|smpi and --platform NAME)")
    label, platform_file = sources[0]

    header = ["balancer", "runs", "avg", "stdev", "min", "max"]
    if paper:
        header += ["paper avg", "paper stdev", "paper min", "paper max"]
    if tidy:
        header += ["backend", "platform"]
    lines = []  # (label, cells)
    for row in table(runs, nprocs):
        cells = [row["balancer"], str(row["runs"]), f"{row['avg']:.2f}", f"{row['std']:.2f}", f"{row['min']:.0f}",
                 f"{row['max']:.0f}"]
        if paper:
            cells += list(values.get(paper_key(row["balancer"]), ("", "", "", "")))
        lines.append((row["balancer"], cells))
    if paper:  # every row of the paper's table appears: one with no run here says so
        ran = {paper_key(name) for name, _ in lines}
        for (balancer, interval), reference in values.items():
            if (balancer, interval) not in ran:
                name = balancer + (f"({interval})" if interval else "")
                lines.append((name, [name, "0" if tidy else "not run", "", "", "", "", *reference]))
    lines = [cells for _, cells in sorted(lines, key=lambda line: row_order(line[0]))]
    if tidy:
        lines = [cells + ["smpi" if platform_file else "mpi", platform_file] for cells in lines]
    heading = f"Regroupings per process, P = {nprocs}, {label}" + (
        " (simulated with SimGrid, not measured)" if platform_file else "")
    over = oversubscribed_points([r for r in runs if r["nprocs"] == nprocs and r["platform"] == platform_file])
    if nprocs in over:
        heading += f" (oversubscribed: {over[nprocs][0]} ranks on {over[nprocs][1]} cores)"
    if paper:
        heading += "; paper: Dinan et al. 2011, Blue Gene/P, 8192 cores"
    return heading, header, lines


def main(argv=None):
    parser = ArgumentParser(prog="table1.py", description=__doc__)
    parser.add_argument("inputs", nargs="+", help="result folder(s) or runs.csv file(s)")
    parser.add_argument("--format", choices=["markdown", "csv", "latex"], default="markdown")
    parser.add_argument("--nprocs", type=positive_int, help="rank count to tabulate (default: the largest)")
    parser.add_argument("--paper", action="store_true", help="add the paper's Table 1 values")
    parser.add_argument("--backend", choices=["mpi", "smpi"], help="only the rows of this backend")
    parser.add_argument("--platform", help="smpi: only the rows simulated on this platform (bgp or .../bgp.xml)")
    args = parser.parse_args(argv)
    try:
        check_inputs_exist(args.inputs, "runs.csv")
        heading, header, lines = build(read_runs(args.inputs), args.inputs[0], args.nprocs, args.paper,
                                       args.backend, args.platform, tidy=args.format == "csv")
    except InputError as e:
        fail(__file__, str(e))

    if args.format == "csv":  # quoted where a cell needs it (a label with its noise level holds a comma)
        out = csv.writer(sys.stdout, lineterminator="\n")
        out.writerow(header)
        out.writerows(lines)
    elif args.format == "latex":
        print(f"% {heading}")
        print("\\begin{tabular}{l" + "r" * (len(header) - 1) + "}")
        print(" & ".join(header) + " \\\\ \\hline")
        for cells in lines:
            print(" & ".join(c.replace("_", "\\_") for c in cells) + " \\\\")
        print("\\end{tabular}")
    else:
        print(heading)
        print("\n".join(markdown_table(header, lines)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
