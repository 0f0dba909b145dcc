#!/usr/bin/python3
"""Fig. 2: weak scaling. Run time vs. cores for none, the ideal, async and each collective interval: median over
repetitions with min-max bars. Real-MPI and simulated (SimGrid SMPI) results can share one figure, from one or
several results folders: each simulated series is drawn dashed with hollow markers and labelled
"simulated (PLATFORM)", as its numbers come from a model of a machine, not a measurement. --reference overlays the paper's published values (plots/reference/dinan2011.csv:
baseline 7.0 s and ideal 3.5 s follow from the workload; async <= 4.2 s and collective ~5.95 s are bounds derived
from the paper's text, drawn dashed and labelled as such)."""
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcmclb_csv import (ArgumentParser, InputError, backend_label, check_inputs_exist, check_output,  # noqa: E402
                        fail, median, output_path, pyplot, read_csv, read_runs, run_label, save)

REFERENCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference", "dinan2011.csv")


def main(argv=None):
    parser = ArgumentParser(prog="fig2.py", description=__doc__)
    parser.add_argument("inputs", nargs="+", help="result folder(s) or runs.csv file(s)")
    parser.add_argument("-o", "--output", help="PNG path (default: fig2.png in the first input's folder)")
    parser.add_argument("--pdf", action="store_true", help="also write a PDF beside the PNG")
    parser.add_argument("--reference", action="store_true", help="overlay the paper's values (Blue Gene/P)")
    args = parser.parse_args(argv)
    output = output_path(args.output, args.inputs[0], "fig2.png")
    try:
        check_inputs_exist(args.inputs, "runs.csv")
        check_output(output, args.pdf)
        runs = read_runs(args.inputs)
        reference = (read_csv(REFERENCE, "dinan2011.csv", ["kind", "balancer", "interval", "time_s", "source"])
                     if args.reference else [])
    except InputError as e:
        fail(__file__, str(e))

    # One series per balancer set-up and backend; the backend is named only when the figure holds more than one.
    backends = sorted({backend_label(r) for r in runs}, key=lambda b: (b != "real MPI", b))
    series = defaultdict(lambda: defaultdict(list))
    ideal = defaultdict(list)
    for r in runs:
        series[(run_label(r), backend_label(r))][r["nprocs"]].append(r["time_s"])
        ideal[r["nprocs"]].append(r["ideal_s"])

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7.2, 4.6))
    procs = sorted(ideal)
    ax.plot(procs, [median(ideal[p]) for p in procs], "k--", label="ideal", linewidth=1.2)
    def interval(name):  # collective(16) after collective(2)
        return int(name.split("(")[1].split(")")[0]) if "(" in name else 0

    order = sorted(series, key=lambda s: (not s[0].startswith("none"), not s[0].startswith("async"), interval(s[0]),
                                          s[0], backends.index(s[1])))
    colours = {}  # a balancer set-up keeps its colour across backends; the line style tells the backend apart
    drawn = []
    for name, backend in order:
        by_p = series[(name, backend)]
        ps = sorted(by_p)
        med = [median(by_p[p]) for p in ps]
        lo = [med[i] - min(by_p[p]) for i, p in enumerate(ps)]
        hi = [max(by_p[p]) - med[i] for i, p in enumerate(ps)]
        simulated = backend != "real MPI"
        colour = colours.setdefault(name, f"C{len(colours) % 10}")
        label = f"{name}, {backend}" if len(backends) > 1 or simulated else name
        ax.errorbar(ps, med, yerr=[lo, hi], marker="o", capsize=3, label=label, color=colour,
                    linestyle="--" if simulated else "-", markerfacecolor="none" if simulated else colour)
        drawn.append(label + (" [dashed]" if simulated else ""))
    by_value = defaultdict(list)  # reference lines sharing a value are drawn once, their names joined
    for row in reference:
        if row["kind"] == "fig2" and row["time_s"] is not None:
            by_value[row["time_s"]].append(row)
    for value, rows in sorted(by_value.items()):
        intervals = [str(r["interval"]) for r in rows if r["interval"]]
        name = rows[0]["balancer"] + (f"({','.join(intervals)})" if intervals else "")
        bound = not rows[0]["source"].startswith("derived")
        ax.axhline(value, color="grey", linewidth=0.8, linestyle=":" if bound else "-.")
        ax.annotate(f"paper {name}: {value:g} s" + (" (bound derived from the text)" if bound else ""),
                    (procs[0], value), fontsize=7, color="grey", va="bottom")
    ax.set_xscale("log", base=2)
    ax.set_xticks(procs)
    ax.set_xticklabels([str(p) for p in procs])
    ax.minorticks_off()
    ax.set_ylim(bottom=0)
    ax.set_xlabel("cores (ranks)")
    ax.set_ylabel("run time (s, max over ranks)")
    ax.set_title("Weak scaling: median, min-max over repetitions" +
                 ("\n(dashed: simulated with SimGrid, not measured)" if backends != ["real MPI"] else ""))
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small", ncol=2)
    save(fig, output, args.pdf)
    print("series: " + "; ".join(drawn))
    return 0


if __name__ == "__main__":
    sys.exit(main())
