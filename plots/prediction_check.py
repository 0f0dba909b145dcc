#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""How far the simulation on a calibrated platform is from real runs on the machine it describes: the check study
(configs/predict-check.yaml) run for real, a core per rank, and simulated on the platform, then each simulated time
over the real median, with the interval mcmclb compare forms. Writes prediction.csv, which mcmclb advise
--prediction takes into its tolerance.

One command, after `mcmclb calibrate --out DIR` on the same machine (DIR holds calibrated.xml and smpi.cfg):

  plots/prediction_check.py DIR [--trace TRACE.csv] [--reps N] [--busy PCT] [--binary build/mcmclb]
                            [--sim-binary build-sim/mcmclb-sim]

It runs the study for real into DIR/predict-real (mcmclb sweep --launcher local; nprocs of the study, 2 by default,
so the host needs that many free cores), simulates it into DIR/predict-sim (--launcher smpi; the real-only
compute-mode set-ups left out), and writes DIR/prediction.csv. A rerun resumes both folders. --trace replays your
trace in the study's place, without the Lennard-Jones application (not your program): mcmclb advise takes a
prediction.csv into its tolerance only from rows of the trace it advises on (trace_fnv1a64). A host over --busy
(10 % by default, its CPU time over 1 s as calibrate reads it) is refused before the real runs. From folders made
before, it only compares:

  plots/prediction_check.py --real REAL --sim SIM -o prediction.csv

Each simulated set-up is paired with the real runs of the same set-up (check model: an emulated workload; replay:
a trace replayed). A replay is also paired with the application the trace was recorded from, the compute-mode runs
of the same balancer (check application): the error a verdict on a trace rests on. A real set-up needs at least 6
valid runs (the median's interval), and no run may have shared its cores (provenance.csv: oversubscribed).

Where the time went, measured on both sides: decomposition.csv beside prediction.csv holds a row per run (real and
simulated) of each compared set-up, its ranks' mean parts (ranks.csv: items, polling, waits, regrouping), its
merges (events.csv: how many, when the first came, their creation time) and in compute mode the merged chains' time
per item by group size (chains.csv). One line per set-up says, part by part, the real median against the simulated."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcmclb_csv import (ArgumentParser, InputError, check_results_folder, csv_text, fail,  # noqa: E402
                        host_busy_pct, positive_int, read_csv, read_runs, refuse_busy, run_label,
                        write_text_atomically)
from mcmclb_stats import Summary  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STUDY = os.path.join(ROOT, "configs", "predict-check.yaml")
# advice::kPredictionHeader (advice/include/mcmclb/advice.hpp): advise refuses any other.
HEADER = ("check", "setup", "nprocs", "n", "real_median_s", "real_low_s", "real_high_s", "sim_s", "ratio",
          "ratio_low", "ratio_high", "busy_pct", "platform_fnv1a64", "git_commit", "trace_fnv1a64")
# decomposition.csv: one row per run compared, real and simulated. Its parts are ranks.csv's, each the mean over the
# run's ranks, so that they add up to the mean elapsed time and a miss in time_s shows in the part that holds it
# (the slowest rank alone would pick a waiting rank on one side and a working one on the other where they tie).
PARTS = ("work_s", "polling_s", "waiting_s", "regroup_s", "other_s")
DECOMPOSITION = ("check", "setup", "nprocs", "side", "run_id", "rep", "utc_start", "time_s", "elapsed_s") + PARTS \
    + ("items_worked", "merges", "first_merge_s", "merge_create_s", "merged_s_per_item", "merged_item_s")
# The busiest host (per cent of its CPU time) the real runs may time, as mcmclb calibrate and advise --check allow.
BUSY_PCT = 10
NEED = ("run_id", "nprocs", "workload", "work_mode", "balancer", "interval", "method", "finished", "time_s", "valid",
        "backend", "git_commit", "workload_file", "workload_file_fnv1a64", "rep", "utc_start")


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


def comparisons(real, sim, busy_limit=None, runs_of=None):
    """The rows of prediction.csv (dicts of HEADER) from results folders real (real MPI) and sim (simulated), in
    the order of sim's set-ups, each replay followed by its application. InputError for folders that do not pair,
    and for real runs on a host busier than busy_limit (per cent; None: any). runs_of, a dict, receives each row's
    (real runs, simulated runs) under the row's index."""
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

    def row(check, label, real_key, simulated_s, sim_key, trace):
        runs = real_groups.get(real_key)
        if not runs:
            raise InputError(f"{real}/runs.csv: no valid run of {label} at P = {real_key[0]} "
                             f"({'/'.join(filter(None, real_key[1]))}; allowed: the set-ups {sim} simulated)")
        a = Summary([r["time_s"] for r in runs])
        if not a.has_interval:
            raise InputError(f"{real}/runs.csv: {label} at P = {real_key[0]} has {a.n} valid runs (allowed: at "
                             f"least 6, for the median's 95 % interval)")
        busy = busy_pct(runs, shares)
        if busy_limit is not None and busy is not None and busy > busy_limit:
            raise InputError(f"{real}: {label} at P = {real_key[0]} ran on a host {busy:.0f} % busy (provenance.csv "
                             f"core_share), more than the {busy_limit:g} % --busy allows: its times are the other "
                             f"programs' too (allowed: a check on a quieter host, or --busy {min(100, int(busy) + 1)})")
        if runs_of is not None:
            runs_of[len(rows)] = (runs, sim_groups[(sim_key[0], sim_key[1], label)])
        rows.append({"check": check, "setup": label, "nprocs": real_key[0], "n": a.n, "real_median_s": a.median,
                     "real_low_s": a.lo, "real_high_s": a.hi, "sim_s": simulated_s,
                     "ratio": simulated_s / a.median, "ratio_low": simulated_s / a.hi,
                     "ratio_high": simulated_s / a.lo, "busy_pct": busy, "platform_fnv1a64": platform,
                     "git_commit": " ".join(sorted({r["git_commit"] for r in runs})),
                     "trace_fnv1a64": trace})

    for (p, work, label), runs in sim_groups.items():
        times = sorted({r["time_s"] for r in runs})
        if len(times) != 1:
            raise InputError(f"{sim}/runs.csv: {label} at P = {p} simulated to {len(times)} different times "
                             f"(allowed: one: a simulation is deterministic)")
        replay = work[0] == "trace"
        # The trace a replay's row (and its application's) measured: the file's hash, as advise compares it with
        # the trace it advises on. A model's row measured no trace.
        hashes = {r.get("workload_file_fnv1a64") or "" for r in runs} if replay else {""}
        if len(hashes) != 1:
            raise InputError(f"{sim}/runs.csv: {label} at P = {p} replayed {len(hashes)} different trace files "
                             f"(allowed: one)")
        trace = hashes.pop()
        row("replay" if replay else "model", label, (p, work, label), times[0], (p, work), trace)
        # A check of the user's trace (--trace) runs no application: the program that recorded it is the user's.
        if replay and any(k[1][2] == "compute" for k in real_groups):
            apps = [k for k in real_groups if k[0] == p and k[2] == label and k[1][2] == "compute"]
            if len(apps) != 1:
                raise InputError(f"{real}/runs.csv: {len(apps)} compute-mode set-ups of {label} at P = {p} (allowed: "
                                 f"one, the application the trace was recorded from)")
            row("application", label, apps[0], times[0], (p, work), trace)
    if not rows:
        raise InputError(f"{sim}/runs.csv: no valid simulated run (allowed: a simulation of the check study)")
    return rows


def per_run(folder, name):
    """{run_id: [rows]} of folder's name (ranks.csv, events.csv, chains.csv); {} where the folder has none (chains.csv
    outside compute mode)."""
    path = os.path.join(folder, name)
    if name == "chains.csv" and not os.path.exists(path):
        return {}
    out = {}
    for r in read_csv(path, name, ("run_id",)):
        out.setdefault(r["run_id"], []).append(r)
    return out


def decomposition(real, sim, rows, runs_of):
    """decomposition.csv's rows (dicts of DECOMPOSITION): for each prediction row, each of its real runs and its
    simulated run. InputError where a run has no ranks.csv rows."""
    files = {side: {name: per_run(folder, name) for name in ("ranks.csv", "events.csv", "chains.csv")}
             for side, folder in (("real", real), ("simulated", sim))}
    out = []
    for k, row in enumerate(rows):
        real_runs, sim_runs = runs_of[k]
        for side, runs in (("real", real_runs), ("simulated", sim_runs)):
            for r in runs:
                ranks = files[side]["ranks.csv"].get(r["run_id"])
                if not ranks:
                    raise InputError(f"{real if side == 'real' else sim}/ranks.csv: no row of run {r['run_id']} "
                                     f"(allowed: a results folder as mcmclb writes it)")
                mean = {part: sum(x[part] for x in ranks) / len(ranks) for part in PARTS + ("elapsed_s",)}
                merges = sorted((e for e in files[side]["events.csv"].get(r["run_id"], []) if e["kind"] == "merge"),
                                key=lambda e: e["t_s"])
                merged = [c["s_per_item"] for c in files[side]["chains.csv"].get(r["run_id"], [])
                          if c["merges"] > 0 and c["s_per_item"]]
                d = {"check": row["check"], "setup": row["setup"], "nprocs": row["nprocs"], "side": side,
                     "run_id": r["run_id"], "rep": r["rep"], "utc_start": r["utc_start"], "time_s": r["time_s"],
                     "elapsed_s": mean["elapsed_s"], "items_worked": sum(x["items_worked"] for x in ranks),
                     "merges": len(merges), "first_merge_s": merges[0]["t_s"] if merges else None,
                     "merge_create_s": sum(e["create_s"] for e in merges), "merged_s_per_item": "; ".join(merged)}
                # The merged chains' seconds per item at their largest group size, their mean: what the trace's
                # speed-up predicts there.
                at_largest = [float(max((p.split(":") for p in m.split()), key=lambda p: int(p[0]))[1]) for m in merged]
                d["merged_item_s"] = sum(at_largest) / len(at_largest) if at_largest else None
                d.update({part: mean[part] for part in PARTS})
                out.append(d)
    return out


def decomposition_lines(rows, parts):
    """One line per prediction row: the real runs' median of each part (with its 95 % interval) against the
    simulated run's, in ms, each part the mean over the ranks."""
    words = {"time_s": "run", "work_s": "items", "polling_s": "polling", "waiting_s": "waits",
             "regroup_s": "regrouping", "other_s": "other", "first_merge_s": "first merge at",
             "merge_create_s": "merge creation", "merged_item_s": "a merged item"}
    lines = []
    for row in rows:
        mine = [d for d in parts if (d["check"], d["setup"], d["nprocs"]) == (row["check"], row["setup"], row["nprocs"])]
        said = []
        for column, word in words.items():
            real = [d[column] for d in mine if d["side"] == "real" and d[column] is not None]
            sim = [d[column] for d in mine if d["side"] == "simulated" and d[column] is not None]
            if not real and not sim:
                continue
            a = Summary(real) if real else None
            text = "-" if a is None else f"{1e3 * a.median:.3g}" + (
                f" [{1e3 * a.lo:.3g}, {1e3 * a.hi:.3g}]" if a.has_interval else "")
            said.append(f"{word} {text} vs {f'{1e3 * sim[0]:.3g}' if sim else '-'}")
        real_merges = sorted({d["merges"] for d in mine if d["side"] == "real"})
        sim_merges = sorted({d["merges"] for d in mine if d["side"] == "simulated"})
        said.append(f"merges {'/'.join(map(str, real_merges))} vs {'/'.join(map(str, sim_merges))}")
        what = {"model": "emulated", "replay": "replay", "application": "application"}[row["check"]]
        lines.append(f"P = {row['nprocs']} {row['setup']} ({what}, real n = {row['n']} vs simulated), ms, median "
                     f"[95 % CI] vs simulated, mean over ranks: " + ", ".join(said))
    return lines


def derived_study(study, path, simulated, trace=None):
    """The check study written to path: simulated, less its compute-mode set-ups (real only: the simulation replays
    the trace instead) and with one repetition (a simulation repeats itself exactly); with trace, replaying that
    file in place of the study's and, real or simulated, without the compute-mode set-ups (the application they run
    recorded the study's trace, not this one)."""
    import yaml
    try:
        with open(study, encoding="utf-8") as f:
            doc = yaml.safe_load(f)
    except (OSError, yaml.YAMLError) as e:
        raise InputError(f"{study}: cannot be read as YAML ({e}; allowed: a study file)".replace("\n", " ")) from None
    if not isinstance(doc, dict):
        raise InputError(f"{study}: not a study (allowed: a YAML map of study keys)")
    said = []
    if trace is not None:
        zipped = (doc.get("zip") or {}).get("workload") or {}
        if isinstance(zipped.get("file"), list):
            zipped["file"] = [None if f is None else trace for f in zipped["file"]]
        elif isinstance(doc.get("workload"), dict) and doc["workload"].get("file"):
            doc["workload"]["file"] = trace
        else:
            raise InputError(f"{study}: replays no trace file (allowed: --trace with a study whose workload.file "
                             f"names one)")
        said.append(f"replaying {trace}")
    if simulated or trace is not None:
        doc["exclude"] = list(doc.get("exclude") or []) + [{"work.mode": "compute"}]
        said.append("less compute mode")
    if simulated:
        doc["reps"] = 1
        said.append("once each")
    text = (f"# Written by plots/prediction_check.py from {os.path.relpath(study, ROOT)}: its set-ups "
            f"{', '.join(said)}.\n" + yaml.safe_dump(doc, sort_keys=False))
    write_text_atomically(path, text)


def write_check(real, sim, out, busy_limit):
    """prediction.csv at out and decomposition.csv beside it, from the folders real and sim; prints the
    decomposition's lines."""
    runs_of = {}
    rows = comparisons(real, sim, busy_limit, runs_of)
    parts = decomposition(real, sim, rows, runs_of)
    write_text_atomically(out, csv_text(HEADER, rows))
    beside = os.path.join(os.path.dirname(os.path.abspath(out)), "decomposition.csv")
    write_text_atomically(beside, csv_text(DECOMPOSITION, parts))
    for line in decomposition_lines(rows, parts):
        print("prediction_check:", line)
    print(f"prediction_check: wrote {out} and {beside}")


def run(command):
    print("prediction_check:", " ".join(command), flush=True)
    code = subprocess.call(command, cwd=ROOT)
    if code != 0:
        print(f"prediction_check: {command[1]} exited {code}", file=sys.stderr)
        sys.exit(code)


def percent(text):
    """argparse type for --busy: a number in [0, 100]."""
    try:
        value = float(text)
    except ValueError:
        value = None
    if value is None or not 0 <= value <= 100:
        import argparse
        raise argparse.ArgumentTypeError(f"{text!r} is not a percentage (allowed: 0 to 100)")
    return value


def main():
    p = ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("calibrated", nargs="?", help="the folder mcmclb calibrate wrote (calibrated.xml, smpi.cfg)")
    p.add_argument("--trace", help="your trace, replayed in the study's place (without the study's application)")
    p.add_argument("--reps", type=positive_int, help="real repetitions of each set-up (default: the study's, 10)")
    p.add_argument("--busy", type=percent, default=BUSY_PCT,
                   help=f"the busiest host the real runs may time, in %% of its CPU time (default {BUSY_PCT})")
    p.add_argument("--study", default=STUDY, help="the check study (default configs/predict-check.yaml)")
    p.add_argument("--binary", default=os.path.join(ROOT, "build", "mcmclb"), help="mcmclb (default build/mcmclb)")
    p.add_argument("--sim-binary", default=os.path.join(ROOT, "build-sim", "mcmclb-sim"),
                   help="the simulation build (default build-sim/mcmclb-sim)")
    p.add_argument("--real", help="compare only: the real results folder")
    p.add_argument("--sim", help="compare only: the simulated results folder")
    p.add_argument("-o", "--output", help="compare only: the prediction.csv to write (decomposition.csv beside it)")
    args = p.parse_args()
    try:
        if args.calibrated is None:
            if not (args.real and args.sim and args.output):
                raise InputError("give the folder mcmclb calibrate wrote, or --real, --sim and -o to compare only")
            if args.trace:
                raise InputError("--trace: only with the calibrated folder (it says what the real runs replay)")
            write_check(args.real, args.sim, args.output, args.busy)
            return
        if args.real or args.sim or args.output:
            raise InputError("--real, --sim and -o: only without the calibrated folder (allowed: one or the other)")
        folder = os.path.abspath(args.calibrated)
        platform, flags = os.path.join(folder, "calibrated.xml"), os.path.join(folder, "smpi.cfg")
        for path in (platform, flags):
            if not os.path.isfile(path):
                raise InputError(f"{path}: no such file (allowed: a folder mcmclb calibrate --out wrote)")
        for path in (args.binary, args.sim_binary, args.study) + ((args.trace,) if args.trace else ()):
            if not os.path.isfile(path):
                raise InputError(f"{path}: no such file (allowed: --binary, --sim-binary, --study, --trace of files "
                                 f"that exist)")
        trace = os.path.abspath(args.trace) if args.trace else None
        real, sim = os.path.join(folder, "predict-real"), os.path.join(folder, "predict-sim")
        study_real = os.path.abspath(args.study)
        if trace:
            study_real = os.path.join(folder, "predict-check-real.yaml")
            derived_study(os.path.abspath(args.study), study_real, False, trace)
        study_sim = os.path.join(folder, "predict-check-sim.yaml")
        derived_study(os.path.abspath(args.study), study_sim, True, trace)
        # As calibrate and advise --check: a busy host's real runs would time the other programs too.
        refuse_busy(host_busy_pct(), args.busy, "the real runs")
    except InputError as e:
        fail(sys.argv[0], str(e))
    reps = ["--set", f"reps={args.reps}"] if args.reps else []
    run([os.path.abspath(args.binary), "sweep", study_real, "--launcher", "local", "--out", real] + reps)
    run([os.path.abspath(args.binary), "sweep", study_sim, "--launcher", "smpi", "--platform", platform,
         "--smpi-flags", flags, "--sim-binary", os.path.abspath(args.sim_binary), "--out", sim])
    out = os.path.join(folder, "prediction.csv")
    try:
        write_check(real, sim, out, args.busy)
    except InputError as e:
        fail(sys.argv[0], str(e))
    print(f"prediction_check: use it with mcmclb advise {args.trace or 'TRACE.csv'} --platform {platform} "
          f"--smpi-flags {flags} --prediction {out}")


if __name__ == "__main__":
    main()
