#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Per-chain energy traces of compute-mode runs (work.mode: compute, work.trace: true): the energy after each item
of every chain, one panel per run, so that runs under different balancers can be compared by eye. The script
also compares the traces exactly (fixed-point energies and acceptance counts after every item) and says whether
they are identical; with --require-identical a difference is an error (exit 1).
Input: a result folder (runs.csv, traces.csv), or a traces.csv file with runs.csv in its folder. Default runs: the
first run of each balancer at the rank count of the first traced run (runs at other rank counts have other
chains)."""
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcmclb_csv import (ArgumentParser, InputError, check_output, fail, input_files, output_path,  # noqa: E402
                        need_matplotlib, pyplot, read_csv, read_runs, run_label, runs_by_id, save)

TRACE_COLUMNS = ["run_id", "chain", "item", "energy", "energy_q32", "accepted"]


def main(argv=None):
    parser = ArgumentParser(prog="chains.py", description=__doc__)
    parser.add_argument("folder", help="result folder, or a traces.csv file (runs.csv is read beside it)")
    parser.add_argument("--run-id", action="append", help="a run to draw (repeat; default: first of each balancer)")
    parser.add_argument("--require-identical", action="store_true", help="exit 1 if the traces differ")
    parser.add_argument("-o", "--output", help="PNG path (default: chains.png beside the input)")
    parser.add_argument("--pdf", action="store_true", help="also write a PDF beside the PNG")
    args = parser.parse_args(argv)
    need_matplotlib()  # first: it may start the script again under a Python that has matplotlib
    output = output_path(args.output, args.folder, "chains.png")
    try:
        folder, traces_file = input_files(args.folder, "traces.csv")
        check_output(output, args.pdf)
        runs = read_runs([folder])
        traces = read_csv(traces_file, "traces.csv", TRACE_COLUMNS)
    except InputError as e:
        fail(__file__, str(e))
    by_run = defaultdict(lambda: defaultdict(list))
    for t in traces:
        by_run[t["run_id"]][t["chain"]].append(t)
    if args.run_id:
        try:
            chosen = runs_by_id(runs, args.run_id, args.folder)
        except InputError as e:
            fail(__file__, str(e))
    else:
        seen, chosen = set(), []
        traced = [r for r in runs if r["run_id"] in by_run]
        nprocs = traced[0]["nprocs"] if traced else None
        for r in traced:
            if r["balancer"] not in seen and r["nprocs"] == nprocs:
                seen.add(r["balancer"])
                chosen.append(r)
    chosen = [r for r in chosen if r["run_id"] in by_run]
    if not chosen:
        fail(__file__, f"{args.folder}: no run has rows in traces.csv (run with work.trace: true)")

    def exact(rid):
        return {c: [(p["item"], p["energy_q32"], p["accepted"]) for p in sorted(pts, key=lambda p: p["item"])]
                for c, pts in by_run[rid].items()}
    reference = exact(chosen[0]["run_id"])
    identical = all(exact(r["run_id"]) == reference for r in chosen[1:])

    plt = pyplot()
    cmap = plt.get_cmap("tab10")
    fig, axes = plt.subplots(1, len(chosen), figsize=(3.6 * len(chosen) + 0.6, 3.4), sharey=True, squeeze=False)
    for ax, run in zip(axes[0], chosen):
        for chain, pts in sorted(by_run[run["run_id"]].items()):
            pts = sorted(pts, key=lambda p: p["item"])
            ax.plot([p["item"] for p in pts], [p["energy"] for p in pts], color=cmap(chain % 10), lw=1.2,
                    label=f"chain {chain}")
        ax.set_title(f"{run_label(run)}, P={run['nprocs']}", fontsize=9)
        ax.set_xlabel("item")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("energy (epsilon)")
    axes[0][-1].legend(fontsize=7, loc="upper right")
    verdict = "identical" if identical else "DIFFERENT"
    fig.suptitle(f"per-chain energy traces: {verdict} (fixed-point energies and acceptances after every item)",
                 fontsize=9)
    fig.tight_layout()
    save(fig, output, args.pdf)
    print(f"traces of {len(chosen)} runs: {verdict}; wrote {output}")
    if args.require_identical and not identical:
        sys.exit(1)


if __name__ == "__main__":
    main()
