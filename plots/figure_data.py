#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The data of a figure for docs/: copies the tables of a results folder (runs.csv, ranks.csv, events.csv,
traces.csv, chains.csv; or one commbench CSV) into a folder of their own, keeping only the rows a figure shows,
so the figure can be redrawn from the repository (docs/data/NAME.png is drawn from docs/data/NAME/). Rows are kept
field for field, with the header. What is dropped: runs not chosen (--run-id, --balancer, --nprocs) and ranks
outside --ranks (ranks.csv by rank; events.csv by groups that meet the range). provenance.csv is kept for the chosen
runs, with the paths of the machine that ran them made relative as plots/scrub_paths.py makes them (the run's
conditions are evidence; the machine's paths are not). Any other field that is a path of that machine (a platform
file outside any git work tree) is refused, as it would mean nothing where the figure is redrawn.

  plots/figure_data.py results/quick docs/data/timeline-quick --balancer async --nprocs 4 --first
  plots/figure_data.py results/fig1-8192/commbench-n8192.csv docs/data/fig1-sim-bgp"""
import csv
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcmclb_csv import ArgumentParser, InputError, fail, open_regular, positive_int  # noqa: E402
from scrub_paths import scrub_row  # noqa: E402

RUN_TABLES = ("runs.csv", "ranks.csv", "events.csv", "traces.csv", "chains.csv", "provenance.csv")
MACHINE_PATH = re.compile(r"(/(work|home|tmp|root|usr|opt|var)(/|$)|[A-Za-z]:[\\/])")


def rank_range(text):
    first, sep, last = text.partition("-")
    try:
        a, b = int(first), int(last if sep else first)
    except ValueError:
        raise ValueError(f"--ranks {text!r}: expected FIRST-LAST (allowed: two integers, FIRST <= LAST)") from None
    if a < 0 or b < a:
        raise ValueError(f"--ranks {text!r}: expected FIRST-LAST (allowed: two integers, 0 <= FIRST <= LAST)")
    return a, b


def read_rows(path):
    """(header, rows) of a CSV file, rows as lists of fields; InputError for a file that is not one."""
    try:
        with open_regular(path, "a regular CSV file", newline="", encoding="utf-8") as f:
            reader = csv.reader(f)
            header = next(reader, None)
            rows = list(reader)
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise InputError(f"{path}: cannot read it ({e})") from None
    if not header:
        raise InputError(f"{path}: empty (allowed: a CSV file with a header)")
    bad = [i for i, row in enumerate(rows, start=2) if len(row) != len(header)]
    if bad:
        raise InputError(f"{path}:{bad[0]}: {len(rows[bad[0] - 2])} fields where the header has {len(header)}")
    return header, rows


def check_paths(path, header, rows):
    for number, row in enumerate(rows, start=2):
        for column, field in zip(header, row):
            if MACHINE_PATH.match(field):
                raise InputError(f"{path}:{number}: column {column} holds a path of this machine ({field}); a "
                                 f"figure's data must not (record platforms inside the repository)")


def write_rows(path, header, rows):
    with open(path, "w", newline="", encoding="utf-8") as f:
        out = csv.writer(f, lineterminator="\n")
        out.writerow(header)
        out.writerows(rows)


def chosen_runs(header, rows, args):
    col = {name: i for i, name in enumerate(header)}
    keep = []
    for row in rows:
        if args.run_id and row[col["run_id"]] not in args.run_id:
            continue
        if args.balancer and row[col["balancer"]] not in args.balancer:
            continue
        if args.nprocs and int(row[col["nprocs"]]) != args.nprocs:
            continue
        keep.append(row)
    if args.first:
        keep = keep[:1]
    return keep


def main(argv=None):
    parser = ArgumentParser(prog="figure_data.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("source", help="a results folder, or one commbench CSV file")
    parser.add_argument("dest", help="the figure's data folder (created; its tables are replaced)")
    parser.add_argument("--run-id", action="append", help="keep this run (repeatable)")
    parser.add_argument("--balancer", action="append", help="keep the runs of this balancer (repeatable)")
    parser.add_argument("--nprocs", type=positive_int, help="keep the runs of this rank count")
    parser.add_argument("--first", action="store_true", help="keep only the first run chosen")
    parser.add_argument("--ranks", help="FIRST-LAST: keep ranks.csv rows and events of these ranks only")
    args = parser.parse_args(argv)
    try:
        ranks = rank_range(args.ranks) if args.ranks else None
        tables = {}
        if os.path.isfile(args.source):  # one commbench CSV: all of it
            header, rows = read_rows(args.source)
            check_paths(args.source, header, rows)
            tables["commbench.csv"] = (header, rows)
        elif os.path.isdir(args.source):
            runs_path = os.path.join(args.source, "runs.csv")
            if not os.path.isfile(runs_path):
                raise InputError(f"{args.source}: no runs.csv (allowed: a results folder or a commbench CSV)")
            header, rows = read_rows(runs_path)
            if "run_id" not in header:
                raise InputError(f"{runs_path}: no run_id column (allowed: an mcmclb runs.csv)")
            line_of_id = {}
            for number, row in enumerate(rows, start=2):
                seen = line_of_id.setdefault(row[header.index("run_id")], number)
                if seen != number:
                    raise InputError(f"{runs_path}:{number}: run_id {row[header.index('run_id')]} is also on line "
                                     f"{seen} (allowed: each run_id once, as the tables copied are joined by it)")
            rows = chosen_runs(header, rows, args)
            if not rows:
                raise InputError(f"{runs_path}: no run matches the choice (--run-id, --balancer, --nprocs)")
            ids = {row[header.index("run_id")] for row in rows}
            tables["runs.csv"] = (header, rows)
            for name in RUN_TABLES[1:]:
                path = os.path.join(args.source, name)
                if not os.path.isfile(path):
                    continue
                h, rs = read_rows(path)
                rs = [r for r in rs if r[h.index("run_id")] in ids]
                if ranks and name == "ranks.csv":
                    rs = [r for r in rs if ranks[0] <= int(r[h.index("rank")]) <= ranks[1]]
                if ranks and name == "events.csv":
                    first, last = h.index("group_first"), h.index("group_last")
                    rs = [r for r in rs if int(r[first]) <= ranks[1] and int(r[last]) >= ranks[0]]
                if name == "provenance.csv" and "working_dir" in h:
                    rs = [scrub_row(h, r, r[h.index("working_dir")], True) for r in rs]
                tables[name] = (h, rs)
            for name, (h, rs) in tables.items():
                check_paths(os.path.join(args.source, name), h, rs)
        else:
            raise InputError(f"{args.source}: no such file or folder")
        os.makedirs(args.dest, exist_ok=True)
    except (InputError, ValueError, OSError) as e:
        fail(__file__, str(e))
    for name, (h, rs) in tables.items():
        write_rows(os.path.join(args.dest, name), h, rs)
        print(f"wrote {os.path.join(args.dest, name)} ({len(rs)} rows)")


if __name__ == "__main__":
    main()
