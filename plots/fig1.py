#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Fig. 1: communicator creation cost vs. output group size, one line per method (log-log), median over repetitions
with a min-max band and the 95 % confidence interval of the median as error bars (order statistics,
plots/mcmclb_stats.py: none below 6 repetitions, none for simulated series, which are deterministic); the same
numbers are printed per method and group size, with the repetitions. Input: the CSV written by mcmclb-commbench or
mcmclb-commbench-sim (or a folder holding commbench.csv). Simulated series (backend smpi) are labelled as simulated,
with their platform.

--stat says which per-repetition statistic is plotted: mean (default) is each repetition's mean iteration
(time_us), what MPI benchmarks report; median is its median iteration (iter_median_us), which one scheduler
preemption inside a timed window cannot move, so it shows what a cheap operation itself costs on oversubscribed
cores. Files older than iter_median_us have only the mean.

Prints, per series, the shape of t(g) over the group sizes g >= 2 (medians): least-squares fits of
t = a + b*log2(g) and t = a + c*log2(g)^2, with R^2 and the RMS residual, and names the better model (the paper's
Sect. 5: O(log^2 g) for Algorithm 1, O(log g) for create_group; `constant` when t does not grow with g).

When the input has both Algorithm 1 (intercomm) and MPI_Comm_create over the parent (create), the group size from
which intercomm is the dearer of the two is drawn as a dotted vertical line and printed, one line per P:
`crossover: intercomm dearer than create from group size N (P = ...)`, N interpolated linearly in log2(g)
between the two measured sizes where the difference of the medians turns positive; `none in range` when it never
does. Every method in the input is drawn (split included)."""
import math
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcmclb_csv import (ArgumentParser, InputError, check_inputs_exist, check_output, fail, find_csv,  # noqa: E402
                        library_name, markdown_table, output_path, need_matplotlib, pyplot, read_csv, save)
from mcmclb_stats import CAPTION, CI_HEADING, Summary, error_bars, median  # noqa: E402

REQUIRED = ["method", "op", "nprocs", "group_size", "rep", "time_us"]
# mcmclb-commbench's pseudo-method: the same iteration with nothing timed (clock reads, cold caches after a wake-up);
# drawn as a dotted grey line, so that operations near it (range) are read against it.
FLOOR = "floor"
# --stat -> (column, how axis, title and fit table name it)
STATS = {"mean": ("time_us", "mean of the iterations"), "median": ("iter_median_us", "median iteration")}


def main(argv=None):
    parser = ArgumentParser(prog="fig1.py", description=__doc__)
    parser.add_argument("inputs", nargs="+", help="commbench CSV file(s) or result folder(s)")
    parser.add_argument("-o", "--output", default=None, help="PNG path (default: fig1.png beside the first input)")
    parser.add_argument("--op", default="create", choices=["create", "free"], help="which cost to plot")
    parser.add_argument("--pdf", action="store_true", help="also write a PDF beside the PNG")
    parser.add_argument("--stat", default="mean", choices=sorted(STATS),
                        help="per repetition: mean iteration (time_us, default) or median iteration (iter_median_us)")
    args = parser.parse_args(argv)
    need_matplotlib()  # first: it may start the script again under a Python that has matplotlib
    column, stat_text = STATS[args.stat]
    output = output_path(args.output, args.inputs[0], "fig1.png")
    try:
        check_inputs_exist(args.inputs, "commbench.csv")
        check_output(output, args.pdf)
        rows = []
        for path in args.inputs:
            file = find_csv(path, "commbench.csv")
            read = read_csv(file, "commbench.csv", REQUIRED, filled=(column,))
            if column not in read[0]:
                raise InputError(f"{file}: no {column} column, needed by --stat {args.stat} (allowed: a "
                                 f"commbench.csv written by a newer mcmclb-commbench: re-run it, or use --stat mean)")
            rows += read
    except InputError as e:
        fail(__file__, str(e))

    # (method, nprocs, source) -> size -> samples. The source is where the numbers come from: (backend, platform,
    # library), so that two MPI libraries measured on one machine are two series; files older than the backend
    # column are real MPI.
    series = defaultdict(lambda: defaultdict(list))
    for r in rows:
        if r["op"] == args.op:
            backend = r.get("backend") or "mpi"
            library = library_name(r.get("mpi_library")) if backend == "mpi" else ""
            key = (r["method"], r["nprocs"], (backend, r.get("platform") or "", library))
            series[key][r["group_size"]].append(r[column])
    if not series:
        fail(__file__, f"{args.inputs[0]}: no rows with op={args.op}")

    print_fits(series, args.op, stat_text)
    print_summaries(series, args.op, stat_text)
    crossovers = find_crossovers(series)
    several_backends = len({key[2] for key in series}) > 1
    for (nprocs, source), found in sorted(crossovers.items()):
        where = f"P = {nprocs}" + (f", {backend_label(*source)}" if several_backends else "")
        print(crossover_line(found, where, args.op))
    if crossovers:  # a rank count with only one of the two is said to have none, not left out silently
        for nprocs, source in sorted({key[1:] for key in series if key[0] in (DEARER, CHEAPER)} - set(crossovers)):
            where = f"P = {nprocs}" + (f", {backend_label(*source)}" if several_backends else "")
            has = DEARER if (DEARER, nprocs, source) in series else CHEAPER
            print(f"{crossover_head(args.op)}: {CROSSED}: not measured ({where}; only {has} was run)")

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(9.0, 4.8))
    several_p = len({key[1] for key in series}) > 1
    backends = {key[2] for key in series}
    # Measured series: one line style per MPI library (solid, dash-dot, dotted); simulated ones dashed.
    libraries = sorted({source[2] for source in backends if source[0] != "smpi"})
    styles = {library: ("-", "-.", ":")[i % 3] for i, library in enumerate(libraries)}
    # The floor is drawn but does not choose the axis (a simulated floor of 0 would switch it to symlog).
    lowest = min(median(v) for key, by_size in series.items() if key[0] != FLOOR for v in by_size.values())
    # One colour and marker per method (so methods with equal costs, e.g. from_group and create_group, stay
    # visible), one line style per back end (measured solid, simulated dashed); the label names P.
    methods = sorted({key[0] for key in series} - {FLOOR})  # the floor's colour is fixed: methods keep theirs
    colours = {m: f"C{i % 10}" for i, m in enumerate(methods)}
    markers = {m: "osD^v<>ph"[i % 9] for i, m in enumerate(methods)}
    for key, by_size in sorted(series.items()):
        method, nprocs = key[0], key[1]
        sizes = sorted(by_size)
        stats = [Summary(by_size[s], key[2][0] == "smpi") for s in sizes]
        med = [s.median for s in stats]
        label = method + (f" (P={nprocs})" if several_p else "")
        if several_backends:
            label += f", {backend_label(*key[2])}"
        if method == FLOOR:  # not a method: what the timing loop measures with nothing in its window
            label = label.replace(FLOOR, "timing floor (empty window)", 1)
            (line,) = ax.plot(sizes, med, color="0.5", linestyle=":", label=label)
        else:
            (line,) = ax.plot(sizes, med, marker=markers[method], color=colours[method], fillstyle="none",
                              label=label, linestyle="--" if key[2][0] == "smpi" else styles[key[2][2]])
        ax.fill_between(sizes, [s.min for s in stats], [s.max for s in stats], color=line.get_color(), alpha=0.2,
                        linewidth=0)
        if method != FLOOR:
            error_bars(ax, sizes, stats, color=line.get_color())
    for (nprocs, source), found in sorted(crossovers.items()):
        if found["size"] is None:
            continue
        where = f"P = {nprocs}" + (f", {backend_label(*source)}" if several_backends else "")
        ax.axvline(found["size"], color="0.25", linestyle=":", linewidth=1.2,
                   label=f"{CROSSED} from g = {found['size']:.1f} ({where})")
        # The value just above the axes, over the line, where it covers no series; the legend says what it is.
        ax.annotate(f"{found['size']:.1f}", (found["size"], 1.0), xycoords=ax.get_xaxis_transform(),
                    xytext=(0, 2), textcoords="offset points", fontsize=7, color="0.25", ha="center", va="bottom")
    ax.set_xscale("log", base=2)
    all_sizes = sorted({s for by_size in series.values() for s in by_size})
    # Every size gets a tick; a non-power of two next to a power of two (P - 1 beside P) gets no label of its own.
    ax.set_xticks(all_sizes)
    ax.set_xticklabels([str(s) if s & (s - 1) == 0 or all(abs(math.log2(s / t)) > 0.3 for t in all_sizes if t != s)
                        else "" for s in all_sizes], rotation=45 if len(all_sizes) > 10 else 0)
    ax.minorticks_off()
    if lowest > 0:
        ax.set_yscale("log")
    else:  # a zero (e.g. range with smpi/wtime:0) has no place on a log axis: linear near zero, log above
        positive = [v for by_size in series.values() for s in by_size.values() for v in s if v > 0]
        ax.set_yscale("symlog", linthresh=min(positive) if positive else 1.0)
    ax.set_xlabel("output group size (ranks)")
    ax.set_ylabel(f"{args.op} time (µs, max over ranks, {stat_text})")
    procs = sorted({key[1] for key in series})
    counts = sorted({len(v) for by_size in series.values() for v in by_size.values()})
    title = (f"Communicator {args.op} cost, P = {', '.join(map(str, procs))}, {stat_text} per repetition\n"
             f"median of n = {counts[0]}" + (f"-{counts[-1]}" if counts[-1] > counts[0] else "") +
             " repetitions; bars: 95 % CI of the median (n >= 6), band: min-max")
    if not several_backends:
        title += f"\n{backend_label(*next(iter(backends)))}"
    ax.set_title(title, fontsize="medium", pad=12 if any(f["size"] for f in crossovers.values()) else 6)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="x-small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    fig.tight_layout()
    save(fig, output, args.pdf)
    return 0


# The crossover of Algorithm 1 (intercomm) and MPI_Comm_create over the parent (create): intercomm's cost grows
# with log2(g)^2, create's hardly with g, so from some group size on create is the cheaper way to build a group.
DEARER, CHEAPER = "intercomm", "create"
CROSSED = f"{DEARER} dearer than {CHEAPER}"


def find_crossovers(series):
    """(nprocs, source) -> the crossover of intercomm and create, for each that has both, at the group
    sizes both measured (medians over repetitions). A dict: size (the first group size from which intercomm costs
    more, interpolated linearly in log2(g) between the two measured sizes where intercomm minus create turns from
    <= 0 to > 0; None when it never does), below and above (those two measured sizes), back (the first size from
    which intercomm is no dearer again, if it crosses back, else None), sizes (the sizes compared), dearer_at (how
    many of them intercomm costs more at), last_dearer (the largest of those)."""
    found = {}
    for key in series:
        method, rest = key[0], key[1:]
        partner = (CHEAPER,) + rest
        if method != DEARER or partner not in series:
            continue
        sizes = sorted(set(series[key]) & set(series[partner]))
        diff = [median(series[key][s]) - median(series[partner][s]) for s in sizes]
        result = {"size": None, "below": None, "above": None, "back": None, "sizes": sizes,
                  "dearer_at": sum(d > 0 for d in diff),
                  "last_dearer": max((s for s, d in zip(sizes, diff) if d > 0), default=None)}
        for i in range(len(sizes) - 1):
            if diff[i] <= 0 < diff[i + 1]:
                x0, x1 = math.log2(sizes[i]), math.log2(sizes[i + 1])
                x = x0 + (x1 - x0) * -diff[i] / (diff[i + 1] - diff[i])
                result.update(size=2 ** x, below=sizes[i], above=sizes[i + 1])
                result["back"] = next((sizes[j] for j in range(i + 1, len(sizes)) if diff[j] <= 0), None)
                break
        found[rest] = result
    return found


def crossover_head(op):
    """'crossover', naming the operation when it is not the creation."""
    return "crossover" + (f" ({op})" if op != "create" else "")


def crossover_line(found, where, op):
    """The printed line for one crossover."""
    head = crossover_head(op)
    sizes = found["sizes"]
    if found["size"] is None:
        span = (f"{sizes[0]}-{sizes[-1]}" if len(sizes) > 1 else str(sizes[0])) if sizes else ""
        if not sizes:
            why = "no group size measured by both"
        elif found["dearer_at"] == len(sizes):
            why = f"{DEARER} dearer at every measured size {span}"
        elif found["dearer_at"] == 0:
            why = f"{DEARER} no dearer at any measured size {span}"
        else:  # dearer at the smallest sizes only: create is the dearer one above them
            why = f"{DEARER} dearer only at the smallest measured sizes, up to {found['last_dearer']}"
        return f"{head}: {CROSSED}: none in range ({where}; {why})"
    back = f"; no dearer again from {found['back']}" if found["back"] else ""
    return (f"{head}: {CROSSED} from group size {found['size']:.1f} ({where}; between the measured sizes "
            f"{found['below']} and {found['above']}{back})")


PLATFORM_NAMES = {"bgp.xml": "BG/P-like platform", "bgp-16racks.xml": "16-rack BG/P-like platform",
                  "fattree.xml": "fat-tree platform",
                  "slingshot.xml": "Slingshot-11 dragonfly platform"}


def backend_label(backend, platform, library=""):
    """How a series says where its numbers come from: measured ones name their MPI library, simulated ones their
    platform."""
    if backend != "smpi":
        return f"measured ({library or 'MPI'})"
    name = os.path.basename(platform)
    return f"simulated, {PLATFORM_NAMES.get(name, name or 'unknown platform')}"


def source_text(source):
    """A series' source in a table column: its back end, and for measured series the MPI library when known."""
    backend, _, library = source
    return f"{backend} ({library})" if library else backend


def fit_line(xs, ys):
    """Least squares y = a + k*x: (a, k, r2, rms). r2 is None when y does not vary (nothing to explain)."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    k = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    a = my - k * mx
    ss_res = sum((y - a - k * x) ** 2 for x, y in zip(xs, ys))
    ss_tot = sum((y - my) ** 2 for y in ys)
    # Equal values read from text differ in the last bits; such a series has nothing to explain either.
    r2 = 1.0 - ss_res / ss_tot if ss_tot > 1e-12 * sum(y * y for y in ys) else None
    return a, k, r2, math.sqrt(ss_res / n)


def shape(by_size):
    """The fits of t(g) over the sizes g >= 2 (medians), or None with fewer than three sizes. Returns
    (points, (a, b, r2, rms) for log2 g, (a, c, r2, rms) for log2(g)^2, the better model's name)."""
    sizes = [s for s in sorted(by_size) if s >= 2]
    if len(sizes) < 3:
        return None
    ts = [median(by_size[s]) for s in sizes]
    logs = [math.log2(s) for s in sizes]
    lin = fit_line(logs, ts)
    sq = fit_line([x * x for x in logs], ts)
    # Constant: t hardly changes with g (spread within 5 % of the largest value, or both fits explain little).
    spread = max(ts) - min(ts)
    if lin[2] is None or spread <= 0.05 * max(abs(t) for t in ts) or max(lin[2], sq[2]) < 0.5:
        better = "constant"
    else:
        better = "log2(g)" if lin[2] >= sq[2] else "log2(g)^2"
    return len(sizes), lin, sq, better


def print_summaries(series, op, stat_text):
    """Per series and group size: repetitions, median, its 95 % interval (or why there is none), min-max."""
    print(f"\nThe {op} time per group size (µs, {stat_text} per repetition), over repetitions:\n")
    rows = []
    for key, by_size in sorted(series.items()):
        method, nprocs, backend = key[0], key[1], source_text(key[2])
        for size in sorted(by_size):
            t = Summary(by_size[size], key[2][0] == "smpi")
            rows.append([method, str(nprocs), backend, str(size), str(t.n), f"{t.median:.3f}", t.ci_text("{:.3f}"),
                         t.range_text("{:.3f}")])
    print("\n".join(markdown_table(["method", "P", "backend", "group size", "runs", "median", CI_HEADING,
                                     "[min-max]"], rows)))
    print(f"({CAPTION}.)\n")


def print_fits(series, op, stat_text):
    def r2_text(r2):
        return "   n/a" if r2 is None else f"{r2:6.3f}"

    print(f"Shape of the {op} time t(g) (µs, {stat_text} per repetition) over output group sizes g >= 2, medians "
          f"over repetitions, least squares:")
    print("  L: t = a + b*log2(g)    Q: t = a + c*log2(g)^2    R2, rms: of each fit")
    header = (f"{'method':<13} {'P':>5} {'backend':<7} {'n':>2} {'a_L':>10} {'b':>10} {'R2_L':>6} {'rms_L':>9} "
              f"{'a_Q':>10} {'c':>10} {'R2_Q':>6} {'rms_Q':>9}  better")
    print(header)
    for key, by_size in sorted(series.items()):
        method, nprocs, backend = key[0], key[1], source_text(key[2])
        if method == FLOOR:  # not a method: its level, not a shape
            level = median([median(v) for v in by_size.values()])
            print(f"{'floor':<13} {nprocs:>5} {backend:<7}  timing floor (empty window): {level:.3f} µs")
            continue
        fitted = shape(by_size)
        if fitted is None:
            print(f"{method:<13} {nprocs:>5} {backend:<7}  (fewer than three group sizes >= 2: no fit)")
            continue
        n, (al, b, r2l, rmsl), (aq, c, r2q, rmsq), better = fitted
        print(f"{method:<13} {nprocs:>5} {backend:<7} {n:>2} {al:>10.3f} {b:>10.3f} {r2_text(r2l)} {rmsl:>9.3f} "
              f"{aq:>10.3f} {c:>10.3f} {r2_text(r2q)} {rmsq:>9.3f}  {better}")
    simulated = sorted({backend_label(*k[2]) for k in series if k[2][0] == "smpi"})
    if simulated:
        print(f"(smpi rows: simulated times, {'; '.join(s.split(', ', 1)[1] for s in simulated)}; not hardware "
              f"measurements)")


if __name__ == "__main__":
    sys.exit(main())
