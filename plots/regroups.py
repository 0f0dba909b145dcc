#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Where each run's regroupings come from, read from events.csv and ranks.csv: the per-process counts of Table 1
(with their histogram), how many merges there were, how many crossed a period of the cyclic workload, and the
groups the run ended with. Explains a Table 1 row: e.g. async merges right only while its neighbour still works,
so where every workload period finishes at the same moment (a noise-free simulation) no merge crosses a period.
Input: a result folder. Output: one Markdown block per run (default: every async-family run)."""
import os
import statistics
import sys
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcmclb_csv import (ArgumentParser, InputError, check_results_folder, fail, read_csv,  # noqa: E402
                        read_runs, run_label)

EVENT_COLUMNS = ["run_id", "t_s", "kind", "groups_before", "group_first", "group_last", "group_size", "items_left"]
RANK_COLUMNS = ["run_id", "rank", "regroups", "final_group_first", "final_group_last"]
ASYNC_FAMILY = ("async", "lookahead")


def span(text, path):
    """'3-7' -> (3, 7)."""
    try:
        first, last = (int(x) for x in text.split("-"))
    except ValueError:
        raise InputError(f"{path}: groups_before entry '{text}' is not FIRST-LAST") from None
    return first, last


def describe(run, events, ranks, events_path):
    counts = [int(r["regroups"]) for r in ranks]
    if not counts:
        return [f"{run_label(run)}: no ranks.csv rows"]
    merges = [e for e in events if e["kind"] == "merge"]
    period = int(run["workload_period"]) if run.get("workload") == "cyclic" and run.get("workload_period") else 0
    crossing = 0
    for e in merges:
        parts = e["groups_before"].split()
        if period and len(parts) >= 2:
            first = span(parts[0], events_path)[0]
            last = span(parts[-1], events_path)[1]
            crossing += first // period != last // period
    finals = sorted({(int(r["final_group_first"]), int(r["final_group_last"])) for r in ranks})
    sizes = sorted(b - a + 1 for a, b in finals)
    hist = Counter(counts)
    lines = [f"{run_label(run)}, P = {run['nprocs']}, run {run['run_id']}:",
             f"- regroupings per process: avg {statistics.mean(counts):.2f}, stdev {statistics.pstdev(counts):.2f},"
             f" min {min(counts)}, max {max(counts)} (each count includes the initial group)",
             "- histogram (regroupings: processes): " + ", ".join(f"{k}: {hist[k]}" for k in sorted(hist)),
             f"- merges: {len(merges)}" + (f"; crossing a {period}-rank workload period: {crossing}" if period else ""),
             f"- groups at the end: {len(finals)}, sizes min {sizes[0]}, median {sizes[len(sizes) // 2]},"
             f" max {sizes[-1]}"]
    if merges:
        left = [int(e["items_left"]) for e in merges]
        times = sorted(float(e["t_s"]) for e in merges)
        lines.append(f"- merge times: first {times[0]:.3f} s, median {times[len(times) // 2]:.3f} s, last "
                     f"{times[-1]:.3f} s; items left in the continued chain: median {statistics.median(left):g}")
    return lines


def main(argv=None):
    parser = ArgumentParser(prog="regroups.py", description=__doc__)
    parser.add_argument("folder", help="result folder")
    parser.add_argument("--run-id", action="append", help="run to describe (repeatable; default: every async run)")
    args = parser.parse_args(argv)
    events_path = os.path.join(args.folder, "events.csv")
    try:
        check_results_folder(args.folder)
        runs = read_runs([args.folder])
        events = read_csv(events_path, "events.csv", EVENT_COLUMNS)
        ranks = read_csv(os.path.join(args.folder, "ranks.csv"), "ranks.csv", RANK_COLUMNS)
        if args.run_id:
            missing = sorted(set(args.run_id) - {r["run_id"] for r in runs})
            if missing:
                raise InputError(f"{args.folder}: no run with run_id {missing[0]}")
            chosen = [r for r in runs if r["run_id"] in args.run_id]
        else:
            chosen = [r for r in runs if r["balancer"] in ASYNC_FAMILY]
            if not chosen:
                raise InputError(f"{args.folder}: no async or lookahead run (use --run-id)")
        for run in chosen:
            rid = run["run_id"]
            print("\n".join(describe(run, [e for e in events if e["run_id"] == rid],
                                     [r for r in ranks if r["run_id"] == rid], events_path)))
            print()
    except InputError as e:
        fail(__file__, str(e))


if __name__ == "__main__":
    main()
