#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The simulation build's validation: runs configs/validate-smpi.yaml on the real MPI (mpiexec) and in simulation (smpirun on
the given platform) at each of its rank counts, then prints one table row per (P, balancer, interval): median
time_s of each back end, their difference in %, and the regroup counts (avg, min, max) of each. Exits 1 when a
regroup count differs (the balancers here are deterministic), or a run is invalid; the time difference is
reported, not asserted (real MPI on a shared 2-core machine measures the scheduler too).

  validate.py MCMCLB MCMCLB_SIM PLATFORM.xml [--out DIR] [--reps N]
"""
import argparse
import csv
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIG = os.path.join(HERE, "..", "..", "configs", "validate-smpi.yaml")
SMPI_FLAGS = os.path.join(HERE, "..", "..", "configs", "platforms", "smpi.cfg")


def smpi_flags(path=SMPI_FLAGS):
    """smpirun's flags from their one source (docs/guide/simulation.md says why each): one per line, # comments skipped."""
    with open(path) as f:
        return [line.strip() for line in f if line.strip() and not line.strip().startswith("#")]


def rows(folder):
    with open(os.path.join(folder, "runs.csv"), newline="") as f:
        return list(csv.DictReader(f))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mcmclb")
    ap.add_argument("mcmclb_sim")
    ap.add_argument("platform")
    ap.add_argument("--out", default=None)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--nprocs", default="2,4")
    a = ap.parse_args()
    out = a.out or tempfile.mkdtemp(prefix="validate-smpi-")
    platform = os.path.abspath(a.platform)
    hosts = os.path.splitext(platform)[0] + ".hosts"
    flags = smpi_flags()
    env = dict(os.environ, MCMCLB_PLATFORM=platform, MCMCLB_SMPI_CFG=" ".join(flags))
    for p in a.nprocs.split(","):
        common = ["run", os.path.abspath(CONFIG), "--set", f"nprocs={p}", "--set", f"reps={a.reps}"]
        subprocess.run(["mpiexec", "-n", p, os.path.abspath(a.mcmclb), *common, "--out", os.path.join(out, "mpi")],
                       check=True, stdout=subprocess.DEVNULL)
        subprocess.run(["smpirun", "-np", p, "-platform", platform, "-hostfile", hosts, *flags,
                        os.path.abspath(a.mcmclb_sim), *common, "--out",
                        os.path.join(out, "smpi")], check=True, stdout=subprocess.DEVNULL, env=env, cwd=out)
    by = {}
    failed = False
    for backend in ("mpi", "smpi"):
        for r in rows(os.path.join(out, backend)):
            if r["valid"] != "true" or r["backend"] != backend:
                print(f"FAIL invalid or mislabelled row: {r['run_id']} backend={r['backend']} valid={r['valid']}")
                failed = True
            key = (int(r["nprocs"]), r["balancer"], r["interval"])
            by.setdefault(key, {}).setdefault(backend, []).append(r)
    print("| P | balancer | interval | real MPI time_s (median of n) | simulated time_s | diff % | "
          "regroups avg/min/max real | simulated | regroups equal |")
    print("|---|---|---|---|---|---|---|---|---|")
    for key in sorted(by):
        got = by[key]
        med = {b: statistics.median(float(r["time_s"]) for r in got[b]) for b in got}
        reg = {b: sorted({(r["regroups_avg"], r["regroups_min"], r["regroups_max"]) for r in got[b]}) for b in got}
        same = reg.get("mpi") == reg.get("smpi") and len(reg.get("mpi", [])) == 1
        failed |= not same
        diff = 100.0 * (med["smpi"] - med["mpi"]) / med["mpi"] if med.get("mpi") else float("nan")
        fmt = lambda b: " ".join("/".join(t) for t in reg[b])
        print(f"| {key[0]} | {key[1]} | {key[2] or '-'} | {med['mpi']:.4f} (n={len(got['mpi'])}, "
              f"{min(float(r['time_s']) for r in got['mpi']):.4f}-{max(float(r['time_s']) for r in got['mpi']):.4f})"
              f" | {med['smpi']:.4f} (simulated) | {diff:+.2f} | {fmt('mpi')} | {fmt('smpi')} | "
              f"{'yes' if same else 'NO'} |")
    print(f"raw rows: {out}/mpi/runs.csv, {out}/smpi/runs.csv")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
