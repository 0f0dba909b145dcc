#!/usr/bin/python3
"""Fig. 1: communicator creation cost vs. output group size, one line per method (log-log), median over
repetitions with a min-max band. Input: the CSV written by mcmclb-commbench (or a folder holding commbench.csv)."""
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcmclb_csv import (ArgumentParser, InputError, check_inputs_exist, check_output, fail, find_csv,  # noqa: E402
                        median, output_path, pyplot, read_csv, save)

REQUIRED = ["method", "op", "nprocs", "group_size", "rep", "time_us"]


def main(argv=None):
    parser = ArgumentParser(prog="fig1.py", description=__doc__)
    parser.add_argument("inputs", nargs="+", help="commbench CSV file(s) or result folder(s)")
    parser.add_argument("-o", "--output", default=None, help="PNG path (default: fig1.png beside the first input)")
    parser.add_argument("--op", default="create", choices=["create", "free"], help="which cost to plot")
    parser.add_argument("--pdf", action="store_true", help="also write a PDF beside the PNG")
    args = parser.parse_args(argv)
    output = output_path(args.output, args.inputs[0], "fig1.png")
    try:
        check_inputs_exist(args.inputs, "commbench.csv")
        check_output(output, args.pdf)
        rows = []
        for path in args.inputs:
            rows += read_csv(find_csv(path, "commbench.csv"), "commbench.csv", REQUIRED)
    except InputError as e:
        fail(__file__, str(e))

    series = defaultdict(lambda: defaultdict(list))  # (method, nprocs) -> size -> samples
    for r in rows:
        if r["op"] == args.op:
            series[(r["method"], r["nprocs"])][r["group_size"]].append(r["time_us"])
    if not series:
        fail(__file__, f"{args.inputs[0]}: no rows with op={args.op}")

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    several_p = len({p for _, p in series}) > 1
    for (method, nprocs), by_size in sorted(series.items()):
        sizes = sorted(by_size)
        med = [median(by_size[s]) for s in sizes]
        lo = [min(by_size[s]) for s in sizes]
        hi = [max(by_size[s]) for s in sizes]
        label = f"{method} (P={nprocs})" if several_p else method
        (line,) = ax.plot(sizes, med, marker="o", label=label)
        ax.fill_between(sizes, lo, hi, color=line.get_color(), alpha=0.2, linewidth=0)
    ax.set_xscale("log", base=2)
    all_sizes = sorted({s for by_size in series.values() for s in by_size})
    ax.set_xticks(all_sizes)
    ax.set_xticklabels([str(s) for s in all_sizes])
    ax.minorticks_off()
    ax.set_yscale("log")
    ax.set_xlabel("output group size (ranks)")
    ax.set_ylabel(f"{args.op} time (µs, max over ranks)")
    procs = sorted({p for _, p in series})
    ax.set_title(f"Communicator {args.op} cost, P = {', '.join(map(str, procs))}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    save(fig, output, args.pdf)
    return 0


if __name__ == "__main__":
    sys.exit(main())
