#!/usr/bin/python3
"""Everything for one result folder: fig2.png and timeline.png written there, Table 1 and the times-vs-ideal table
printed (with the paper's values beside them when the runs use the paper's workload). The demo ends with this."""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fig2  # noqa: E402
import summary  # noqa: E402
from mcmclb_csv import InputError, fail, read_rows  # noqa: E402
import table1  # noqa: E402
import timeline  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("folder", help="result folder (runs.csv, ranks.csv, events.csv)")
    args = parser.parse_args(argv)
    # The paper's values are comparable only for its workload: G = 4, T = 100 ms, S = 10 (R mod 32).
    try:
        runs = read_rows(os.path.join(args.folder, "runs.csv"), ["G", "T_ms", "workload", "workload_scale",
                                                                 "workload_period"])
    except InputError as e:
        fail(__file__, str(e))
    paper = all((r["G"], r["T_ms"], r["workload"], r["workload_scale"], r["workload_period"]) ==
                ("4", "100", "cyclic", "10", "32") for r in runs)
    fig2.main([args.folder] + (["--reference"] if paper else []))
    timeline.main([args.folder])
    print()
    table1.main([args.folder] + (["--paper"] if paper else []))
    print()
    summary.main([args.folder])
    return 0


if __name__ == "__main__":
    sys.exit(main())
