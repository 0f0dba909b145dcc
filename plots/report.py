#!/usr/bin/python3
"""Everything for one result folder: fig2.png and timeline.png written there, Table 1 and the times-vs-ideal table
printed (with the paper's values beside them when the runs use the paper's workload). The demo ends with this."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fig2  # noqa: E402
import summary  # noqa: E402
from mcmclb_csv import ArgumentParser, InputError, check_output, fail, read_csv, read_runs  # noqa: E402
import table1  # noqa: E402
import timeline  # noqa: E402


def main(argv=None):
    parser = ArgumentParser(prog="report.py", description=__doc__)
    parser.add_argument("folder", help="result folder (runs.csv, ranks.csv, events.csv)")
    args = parser.parse_args(argv)
    # Every input and both outputs are checked before the first figure is drawn, so a bad file never leaves
    # half a report behind.
    try:
        if not os.path.isdir(args.folder):
            raise InputError(f"{args.folder}: " + ("is not a folder" if os.path.exists(args.folder) else
                                                   "no such folder") + " (allowed: a results folder)")
        for name in ("fig2.png", "timeline.png"):
            check_output(os.path.join(args.folder, name))
        runs = read_runs([args.folder])
        read_csv(os.path.join(args.folder, "ranks.csv"), "ranks.csv",
                 sorted(set(timeline.RANK_COLUMNS) | set(summary.RANK_COLUMNS)))
        read_csv(os.path.join(args.folder, "events.csv"), "events.csv", timeline.EVENT_COLUMNS)
    except InputError as e:
        fail(__file__, str(e))
    # The paper's values are comparable only for its workload: G = 4, T = 100 ms, S = 10 (R mod 32).
    paper = all((r.get("G"), r.get("T_ms"), r.get("workload"), r.get("workload_scale"), r.get("workload_period")) ==
                (4, 100, "cyclic", 10, 32) for r in runs)
    fig2.main([args.folder] + (["--reference"] if paper else []))
    timeline.main([args.folder])
    print()
    # One Table 1 per backend (the real MPI, each simulated platform): table1.py never mixes them.
    for backend, platform in sorted({(r["backend"], r["platform"]) for r in runs}):
        table1.main([args.folder, "--backend", backend] + (["--platform", platform] if platform else []) +
                    (["--paper"] if paper else []))
    print()
    summary.main([args.folder])
    return 0


if __name__ == "__main__":
    sys.exit(main())
