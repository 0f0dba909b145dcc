#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""How far the simulation on a calibrated platform is from real runs on the machine it describes: the check study
(configs/predict-check.yaml) run for real, a core per rank, and simulated on the platform, then each simulated time
over the real median, with the interval mcmclb compare forms. Writes prediction.csv, which mcmclb advise
--prediction takes into its tolerance.

One command, after `mcmclb calibrate --out DIR` on the same machine (DIR holds calibrated.xml and smpi.cfg):

  plots/prediction_check.py DIR [--reps N] [--binary build/mcmclb] [--sim-binary build-sim/mcmclb-sim]

It runs the study for real into DIR/predict-real (mcmclb sweep --launcher local; nprocs of the study, 2 by default,
so the host needs that many free cores), simulates it into DIR/predict-sim (--launcher smpi; the real-only
compute-mode set-ups left out), and writes DIR/prediction.csv. A rerun resumes both folders. From folders made
before, it only compares:

  plots/prediction_check.py --real REAL --sim SIM -o prediction.csv

Each simulated set-up is paired with the real runs of the same set-up (check model: an emulated workload; replay:
a trace replayed). A replay is also paired with the application the trace was recorded from, the compute-mode runs
of the same balancer (check application): the error a verdict on a trace rests on. A real set-up needs at least 6
valid runs (the median's interval), and no run may have shared its cores (provenance.csv: oversubscribed)."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcmclb_csv import (ArgumentParser, InputError, check_results_folder, csv_text, fail, positive_int,  # noqa: E402
                        read_csv, read_runs, run_label, write_text_atomically)
from mcmclb_stats import Summary  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STUDY = os.path.join(ROOT, "configs", "predict-check.yaml")
# advice::kPredictionHeader (advice/include/mcmclb/advice.hpp): advise refuses any other.
HEADER = ("check", "setup", "nprocs", "n", "real_median_s", "real_low_s", "real_high_s", "sim_s", "ratio",
          "ratio_low", "ratio_high", "busy_pct", "platform_fnv1a64", "git_commit")
NEED = ("run_id", "nprocs", "workload", "work_mode", "balancer", "interval", "method", "finished", "time_s", "valid",
        "backend", "git_commit", "workload_file")


def workload_of(r):
    """What a run's set-up works on, apart from its balancer: the workload model, its trace file and the work
    mode."""
    return r["workload"], os.path.basename(r.get("workload_file") or ""), r["work_mode"]


def group(runs):
    """{(P, workload_of, set-up label): [runs]} of the valid runs."""
    out = {}
    for r in runs:
        if r["valid"] is True:
            out.setdefault((r["nprocs"], workload_of(r), run_label(r)), []).append(r)
    return out


def busy_pct(runs, shares):
    """The busiest host of runs, in per cent: 100 (1 - core_share), the largest; None where no run measured it."""
    known = [100 * (1 - shares[r["run_id"]]) for r in runs if shares.get(r["run_id"]) is not None]
    return max(known) if known else None


def provenance(folder):
    path = os.path.join(folder, "provenance.csv")
    if not os.path.exists(path):
        raise InputError(f"{path}: no such file (allowed: a results folder as mcmclb writes it, with provenance.csv)")
    return {r["run_id"]: r for r in read_csv(path, "provenance.csv", ("run_id",))}


def comparisons(real, sim):
    """The rows of prediction.csv (dicts of HEADER) from results folders real (real MPI) and sim (simulated), in
    the order of sim's set-ups, each replay followed by its application. InputError for folders that do not pair."""
    for folder in (real, sim):
        check_results_folder(folder)
    real_runs, sim_runs = read_runs([real], need=NEED), read_runs([sim], need=NEED)
    if any(r["backend"] != "mpi" for r in real_runs):
        raise InputError(f"{real}/runs.csv: a simulated run (allowed: real MPI runs only)")
    if any(r["backend"] != "smpi" for r in sim_runs):
        raise InputError(f"{sim}/runs.csv: a real MPI run (allowed: simulated runs only)")
    real_prov, sim_prov = provenance(real), provenance(sim)
    crowded = sorted({r["nprocs"] for r in real_runs if real_prov.get(r["run_id"], {}).get("oversubscribed")})
    if crowded:
        raise InputError(f"{real}: runs at P = {', '.join(map(str, crowded))} shared cores (provenance.csv: "
                         f"oversubscribed; allowed: a core per rank, or the check measures the sharing)")
    platforms = {sim_prov.get(r["run_id"], {}).get("platform_fnv1a64") for r in sim_runs if r["valid"] is True}
    if len(platforms) != 1 or None in platforms or "" in platforms:
        raise InputError(f"{sim}/provenance.csv: the simulated runs' platform_fnv1a64 is "
                         f"{', '.join(sorted(map(str, platforms))) or 'missing'} (allowed: one platform)")
    platform = platforms.pop()
    shares = {rid: p.get("core_share") for rid, p in real_prov.items()}
    real_groups, sim_groups = group(real_runs), group(sim_runs)
    rows = []

    def row(check, label, real_key, simulated_s):
        runs = real_groups.get(real_key)
        if not runs:
            raise InputError(f"{real}/runs.csv: no valid run of {label} at P = {real_key[0]} "
                             f"({'/'.join(filter(None, real_key[1]))}; allowed: the set-ups {sim} simulated)")
        a = Summary([r["time_s"] for r in runs])
        if not a.has_interval:
            raise InputError(f"{real}/runs.csv: {label} at P = {real_key[0]} has {a.n} valid runs (allowed: at "
                             f"least 6, for the median's 95 % interval)")
        busy = busy_pct(runs, shares)
        rows.append({"check": check, "setup": label, "nprocs": real_key[0], "n": a.n, "real_median_s": a.median,
                     "real_low_s": a.lo, "real_high_s": a.hi, "sim_s": simulated_s,
                     "ratio": simulated_s / a.median, "ratio_low": simulated_s / a.hi,
                     "ratio_high": simulated_s / a.lo, "busy_pct": busy, "platform_fnv1a64": platform,
                     "git_commit": " ".join(sorted({r["git_commit"] for r in runs}))})

    for (p, work, label), runs in sim_groups.items():
        times = sorted({r["time_s"] for r in runs})
        if len(times) != 1:
            raise InputError(f"{sim}/runs.csv: {label} at P = {p} simulated to {len(times)} different times "
                             f"(allowed: one: a simulation is deterministic)")
        trace = work[0] == "trace"
        row("replay" if trace else "model", label, (p, work, label), times[0])
        if trace:
            apps = [k for k in real_groups if k[0] == p and k[2] == label and k[1][2] == "compute"]
            if len(apps) != 1:
                raise InputError(f"{real}/runs.csv: {len(apps)} compute-mode set-ups of {label} at P = {p} (allowed: "
                                 f"one, the application the trace was recorded from)")
            row("application", label, apps[0], times[0])
    if not rows:
        raise InputError(f"{sim}/runs.csv: no valid simulated run (allowed: a simulation of the check study)")
    return rows


def sim_study(study, path):
    """The check study less its compute-mode set-ups (real only: the simulation replays the trace instead) and
    with one repetition (a simulation repeats itself exactly), written to path."""
    import yaml
    try:
        with open(study, encoding="utf-8") as f:
            doc = yaml.safe_load(f)
    except (OSError, yaml.YAMLError) as e:
        raise InputError(f"{study}: cannot be read as YAML ({e}; allowed: a study file)".replace("\n", " ")) from None
    if not isinstance(doc, dict):
        raise InputError(f"{study}: not a study (allowed: a YAML map of study keys)")
    doc["exclude"] = list(doc.get("exclude") or []) + [{"work.mode": "compute"}]
    doc["reps"] = 1
    text = (f"# Written by plots/prediction_check.py from {os.path.relpath(study, ROOT)}: its set-ups less compute "
            f"mode, once each.\n" + yaml.safe_dump(doc, sort_keys=False))
    write_text_atomically(path, text)


def run(command):
    print("prediction_check:", " ".join(command), flush=True)
    code = subprocess.call(command, cwd=ROOT)
    if code != 0:
        print(f"prediction_check: {command[1]} exited {code}", file=sys.stderr)
        sys.exit(code)


def main():
    p = ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("calibrated", nargs="?", help="the folder mcmclb calibrate wrote (calibrated.xml, smpi.cfg)")
    p.add_argument("--reps", type=positive_int, help="real repetitions of each set-up (default: the study's, 10)")
    p.add_argument("--study", default=STUDY, help="the check study (default configs/predict-check.yaml)")
    p.add_argument("--binary", default=os.path.join(ROOT, "build", "mcmclb"), help="mcmclb (default build/mcmclb)")
    p.add_argument("--sim-binary", default=os.path.join(ROOT, "build-sim", "mcmclb-sim"),
                   help="the simulation build (default build-sim/mcmclb-sim)")
    p.add_argument("--real", help="compare only: the real results folder")
    p.add_argument("--sim", help="compare only: the simulated results folder")
    p.add_argument("-o", "--output", help="compare only: the prediction.csv to write")
    args = p.parse_args()
    try:
        if args.calibrated is None:
            if not (args.real and args.sim and args.output):
                raise InputError("give the folder mcmclb calibrate wrote, or --real, --sim and -o to compare only")
            write_text_atomically(args.output, csv_text(HEADER, comparisons(args.real, args.sim)))
            print(f"prediction_check: wrote {args.output}")
            return
        if args.real or args.sim or args.output:
            raise InputError("--real, --sim and -o: only without the calibrated folder (allowed: one or the other)")
        folder = os.path.abspath(args.calibrated)
        platform, flags = os.path.join(folder, "calibrated.xml"), os.path.join(folder, "smpi.cfg")
        for path in (platform, flags):
            if not os.path.isfile(path):
                raise InputError(f"{path}: no such file (allowed: a folder mcmclb calibrate --out wrote)")
        for path in (args.binary, args.sim_binary, args.study):
            if not os.path.isfile(path):
                raise InputError(f"{path}: no such file (allowed: --binary, --sim-binary, --study of files that "
                                 f"exist)")
        real, sim = os.path.join(folder, "predict-real"), os.path.join(folder, "predict-sim")
        study_sim = os.path.join(folder, "predict-check-sim.yaml")
        sim_study(os.path.abspath(args.study), study_sim)
    except InputError as e:
        fail(sys.argv[0], str(e))
    reps = ["--set", f"reps={args.reps}"] if args.reps else []
    run([os.path.abspath(args.binary), "sweep", os.path.abspath(args.study), "--launcher", "local", "--out", real]
        + reps)
    run([os.path.abspath(args.binary), "sweep", study_sim, "--launcher", "smpi", "--platform", platform,
         "--smpi-flags", flags, "--sim-binary", os.path.abspath(args.sim_binary), "--out", sim])
    try:
        out = os.path.join(folder, "prediction.csv")
        write_text_atomically(out, csv_text(HEADER, comparisons(real, sim)))
    except InputError as e:
        fail(sys.argv[0], str(e))
    print(f"prediction_check: wrote {out}; use it with mcmclb advise --platform {platform} --smpi-flags {flags} "
          f"--prediction {out}")


if __name__ == "__main__":
    main()
