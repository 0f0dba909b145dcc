#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Everything for one result folder: fig2.png and timeline.png written there, Table 1 and the times-vs-ideal table
printed (with the paper's values beside them when the runs use the paper's workload). The demo ends with this.

--html FILE writes the same as one self-contained page instead (nothing is written into the folder): the study as
its runs resolved it, Fig. 2, the times with the 95 % confidence interval of each median, Table 1, the gap to the
ideal split into its parts, a timeline and the provenance of the runs; the figures are embedded, the page fetches
nothing and runs no script, so it can be shared as one file. --compare CSV adds that table (e.g. the output of
`mcmclb compare --csv`), whatever its columns, with a column named `verdict` highlighted."""
import contextlib
import io
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fig2  # noqa: E402
from mcmclb_csv import (ArgumentParser, InputError, check_output, fail, need_matplotlib,  # noqa: E402
                        node_notes, oversubscription_note, read_csv, read_runs, run_label, write_text_atomically)
from mcmclb_stats import CAPTION  # noqa: E402
import report_html  # noqa: E402
import summary  # noqa: E402
import table1  # noqa: E402
import timeline  # noqa: E402

HTML_SUFFIXES = (".html", ".htm")


def uses_paper_workload(runs):
    """The paper's values are comparable only for its workload: G = 4, T = 100 ms, S = 10 (R mod 32)."""
    return all((r.get("G"), r.get("T_ms"), r.get("workload"), r.get("workload_scale"), r.get("workload_period")) ==
               (4, 100, "cyclic", 10, 32) for r in runs)


def sources(runs):
    """(backend, platform) of each Table 1: one per backend (the real MPI, each simulated platform), as table1.py
    never mixes them."""
    return sorted({(r["backend"], r["platform"]) for r in runs})


def main(argv=None):
    parser = ArgumentParser(prog="report.py", description=__doc__)
    parser.add_argument("folder", help="result folder (runs.csv, ranks.csv, events.csv)")
    parser.add_argument("--html", metavar="FILE", help="write one self-contained HTML page (FILE.html) instead")
    parser.add_argument("--compare", metavar="CSV", help="with --html: a table to add, its verdict column marked")
    args = parser.parse_args(argv)
    if args.compare and not args.html:
        parser.error("--compare needs --html")
    need_matplotlib()  # before anything is read or written: every report draws
    # Every input and every output is checked before the first figure is drawn, so a bad file never leaves
    # half a report behind.
    try:
        if not os.path.isdir(args.folder):
            raise InputError(f"{args.folder}: " + ("is not a folder" if os.path.exists(args.folder) else
                                                   "no such folder") + " (allowed: a results folder)")
        if args.html:
            check_output(args.html, suffixes=HTML_SUFFIXES)
        else:
            for name in ("fig2.png", "timeline.png"):
                check_output(os.path.join(args.folder, name))
        runs = read_runs([args.folder])
        paper = uses_paper_workload(runs)
        ranks = read_csv(os.path.join(args.folder, "ranks.csv"), "ranks.csv",
                         sorted(set(timeline.RANK_COLUMNS) | set(summary.RANK_COLUMNS)))
        read_csv(os.path.join(args.folder, "events.csv"), "events.csv", timeline.EVENT_COLUMNS)
        if args.html:
            prov_path = os.path.join(args.folder, "provenance.csv")
            prov = read_csv(prov_path, "provenance.csv", ["run_id"]) if os.path.lexists(prov_path) else []
            compare = report_html.read_any_csv(args.compare) if args.compare else None
            tables = [table1.build(runs, args.folder, paper=paper, backend=backend, platform=platform or None)
                      for backend, platform in sources(runs)]
    except InputError as e:
        fail(__file__, str(e))
    if args.html:
        write_html(args, runs, ranks, prov, tables, compare, paper)
        return 0
    fig2.main([args.folder] + (["--reference"] if paper else []))
    timeline.main([args.folder])
    print()
    for backend, platform in sources(runs):
        table1.main([args.folder, "--backend", backend] + (["--platform", platform] if platform else []) +
                    (["--paper"] if paper else []))
    print()
    summary.main([args.folder])  # ends with the oversubscription note, when some point ran oversubscribed
    if not oversubscription_note(runs) and any(r.get("oversubscribed") is False for r in runs):
        print("\nEvery run had a core per rank (provenance.csv: not oversubscribed).")
    for line in node_notes(runs):
        print(f"\nNodes: {line}.")
    return 0


def draw(script, args, name):
    """The PNG bytes of a figure drawn by script.main(args) into a temporary folder; its printout is dropped (the
    page holds the same numbers as tables)."""
    with tempfile.TemporaryDirectory(prefix="mcmclb-report-") as tmp:
        path = os.path.join(tmp, name)
        with contextlib.redirect_stdout(io.StringIO()):
            script.main(args + ["-o", path])
        with open(path, "rb") as f:
            return f.read()


def write_html(args, runs, ranks, prov, tables, compare, paper):
    page = report_html
    experiments = list(dict.fromkeys(r["experiment"] for r in runs))
    fig2_png = draw(fig2, [args.folder] + (["--reference"] if paper else []), "fig2.png")
    timeline_png = draw(timeline, [args.folder], "timeline.png")
    shown = timeline.default_run(runs)
    simulated = any(r["backend"] != "mpi" for r in runs)

    over = oversubscription_note(runs)
    sections = [("The study", page.paragraph(
        f"{len(runs)} runs from {args.folder}" + ("; simulated rows come from SimGrid SMPI: their times are "
                                                  "simulated, not measured" if simulated else "") + ".") +
        (page.paragraph(over, "warning") if over else "") +
        "".join(page.paragraph(f"Nodes: {line}.") for line in node_notes(runs)) + page.study(runs))]
    sections.append(("Fig. 2: run time against cores", page.figure(
        fig2_png, "Fig. 2: run time against cores",
        "Median per point; bars: the 95 % confidence interval of the median (order statistics, needs 6 or more "
        "repetitions; none for simulated series, which are deterministic); thin lines: min-max." +
        (" Grey: the paper's values; a band is the range its text allows where it gives a time only in words."
         if paper else ""))))
    sections.append(("Times against the ideal", page.table(*summary.times_table(runs)) +
                     page.paragraph(f"{CAPTION}." + (" P (oversubscribed): more ranks than cores, see above." if over
                                                     else ""))))
    body = ""
    for heading, header, rows in tables:
        body += page.paragraph(heading, "mono") + page.table(header, rows)
    sections.append(("Table 1: regroupings per process", body))
    sections.append(("The gap to the ideal, split", page.paragraph(
        "Per run, the mean over ranks of each part; the parts are medians over the runs, in seconds. They add up to "
        "the gap (waiting is the polling delay for async, regroup the communicator creation).") +
        page.table(*summary.gap_table(runs, ranks))))
    sections.append(("Timeline", page.figure(
        timeline_png, f"timeline of run {shown['run_id']}",
        f"Run {shown['run_id']} ({run_label(shown)}, P = {shown['nprocs']}): ranks against time, coloured by the "
        "chain worked; black lines: merges; dashed: the ideal time.")))
    if compare is not None:
        header, rows = compare
        sections.append((f"Comparison: {os.path.basename(args.compare)}", page.table(header, rows, "verdict")))
    sections.append(("Provenance", page.provenance(runs, prov)))
    text = page.page("mcmclb report: " + ", ".join(experiments), sections)
    write_text_atomically(args.html, text)
    print(f"wrote {args.html}")


if __name__ == "__main__":
    sys.exit(main())
