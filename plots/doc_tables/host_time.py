# SPDX-License-Identifier: BSD-3-Clause
"""What a data folder's runs cost the host, and how far apart its placements put a simulated time, as sentences
generated from the files that record them: GNU time's records (host-time), provenance.csv's host_cpu_s (host-cpu)
and the runs of one study placed two ways or made again (time-shift). A data README states no such figure by hand
(tests/test_doc_tables.py, HandTypedHostFigures): a figure typed once drifts from the record it came from."""
import glob
import os
import re
from collections import defaultdict

from mcmclb_csv import RUN_COLUMNS, InputError, run_label

from . import common
from .common import Inputs, keyed, wrapped
from .simulation import gnu_time, wall_seconds


def records(path):
    """The GNU time records (*.time) a block names: the file itself, or every one under a folder (relative to the
    root, in path order); InputError where there is none."""
    full = os.path.join(common.ROOT, path)
    if os.path.isdir(full):
        found = sorted(os.path.relpath(p, common.ROOT) for p in glob.glob(os.path.join(full, "**", "*.time"),
                                                                         recursive=True))
    else:
        found = [path] if path.endswith(".time") and os.path.exists(full) else []
    if not found:
        raise InputError(f"{path}: no GNU time record (allowed: a *.time file of /usr/bin/time -v, or a folder "
                         f"holding some)")
    return found


def span(values, digits, unit):
    """'31.1 to 48.1 s', or '20.1 min' where the ends print alike (or there is one value)."""
    low, high = f"{min(values):.{digits}f}", f"{max(values):.{digits}f}"
    return f"{low} {unit}" if low == high else f"{low} to {high} {unit}"


def minutes_or_seconds(values):
    """A span of seconds as the reader takes it in: in minutes to a tenth from 10 min up, else in seconds to a
    tenth."""
    return span([v / 60 for v in values], 1, "min") if min(values) >= 600 else span(values, 1, "s")


def host_time(inputs):
    """One sentence from the GNU time records the block names (files, or folders holding them): per rank count
    (smpirun's -np, or the whole command where it has none), how many records, their host CPU (user plus system) and
    their wall time, measured. A record of a command that failed is refused."""
    by_np = defaultdict(list)
    for path in (p for folder in inputs.folders for p in records(folder)):
        found = gnu_time(path)
        if found["status"] != "0":
            raise InputError(f"{path}: exit status {found['status']} (allowed: the record of a command that "
                             f"succeeded)")
        np = re.search(r"(?:^|\s)-np (\d+)\s", found["command"])
        by_np[int(np.group(1)) if np else 0].append(
            (float(found["user"]) + float(found["system"]), wall_seconds(found["wall"])))
    parts = []
    for np, timed in sorted(by_np.items()):
        cpu, wall = [c for c, _ in timed], [w for _, w in timed]
        what = ("the command" if len(timed) == 1 else f"each of {len(timed)} commands") if np == 0 else \
            (f"one run at {np} ranks" if len(timed) == 1 else f"each of {len(timed)} runs at {np} ranks")
        parts.append(f"{what} took {minutes_or_seconds(cpu)} of host CPU and {minutes_or_seconds(wall)} of wall "
                     f"time")
    links = ", ".join(f"[{os.path.basename(p)}]({p})" for p in inputs.folders)
    # A sentence per rank count: three counts in one sentence read as a list of figures, not prose.
    return wrapped(" ".join(f"{part[0].upper()}{part[1:]}." for part in parts) +
                   f" Measured, from GNU time's records: {links}.")


def run_folders(folder):
    """The folder itself where it holds a runs.csv, else every folder under it that does (relative to the root, in
    path order); InputError where there is none."""
    if os.path.exists(os.path.join(common.ROOT, folder, "runs.csv")):
        return [folder]
    found = sorted(os.path.relpath(os.path.dirname(p), common.ROOT)
                   for p in glob.glob(os.path.join(common.ROOT, folder, "**", "runs.csv"), recursive=True))
    if not found:
        raise InputError(f"{folder}: no runs.csv in it or under it (allowed: a folder of runs)")
    return found


def host_cpu(inputs):
    """One sentence: per rank count (nprocs= only, where given), how many runs the folders hold (each folder, or
    every folder of runs under it) and the host CPU their simulations took in all and per run, from provenance.csv's
    host_cpu_s (to each run's end, the simulator's teardown left out), measured. A run without its host_cpu_s is
    refused: a sum over some runs would pass for one over all."""
    only = inputs.numbers("nprocs")
    by_p = defaultdict(list)
    for folder in (f for top in inputs.folders for f in run_folders(top)):
        runs = [r for r in Inputs.read(folder, need=("run_id", "nprocs")) if not only or r["nprocs"] in only]
        prov = {r["run_id"]: r for r in Inputs.read(folder, "provenance.csv", need=("run_id", "host_cpu_s"))}
        for r in runs:
            cpu = prov.get(r["run_id"], {}).get("host_cpu_s")
            if not isinstance(cpu, (int, float)):
                raise InputError(f"{folder}/provenance.csv: run {r['run_id']} has no host_cpu_s (allowed: every run "
                                 f"of the folder with its host CPU)")
            by_p[r["nprocs"]].append(cpu)
    if not by_p:
        raise InputError(f"block {inputs.name}: no run in {', '.join(inputs.folders)} (allowed: folders of runs)")
    parts = [f"The {len(cpu)} run{'s' if len(cpu) > 1 else ''} at {p} ranks took {sum(cpu):.1f} s of host CPU in "
             f"all, {sum(cpu) / len(cpu):.1f} s per run." for p, cpu in sorted(by_p.items())]
    where = ", ".join(f"[{os.path.basename(f)}]({f})" for f in inputs.folders)
    return wrapped(" ".join(parts) + f" Measured, from provenance.csv's `host_cpu_s` to each run's end: {where}.")


def time_shift(inputs):
    """One sentence per folder after the first: the largest move of a simulated time between the first folder's
    runs and that folder's, over the set-ups and rank counts both hold, in µs and, apart, as a part of the run's
    time, each with its set-up and rank count. The folder is named by its placement where that differs from the
    first folder's (placed over a dragonfly's groups), else by its runs' commits (a reproduction)."""
    def valid(folder):
        runs = [r for r in Inputs.read(folder, need=RUN_COLUMNS) if r["valid"] is True]
        return keyed((((r["nprocs"], run_label(r)), r) for r in runs), f"{folder}/runs.csv")
    base = valid(inputs.folders[0])
    sentences = []
    for folder in inputs.folders[1:]:
        other = valid(folder)
        both = sorted(set(base) & set(other))
        if not both:
            raise InputError(f"{folder}/runs.csv: no set-up at a rank count of {inputs.folders[0]} (allowed: runs of "
                             f"the same study placed another way or made again)")
        placements = sorted({other[k].get("placement") or "block" for k in both})
        if placements != sorted({base[k].get("placement") or "block" for k in both}):
            head = f"Placed `{', '.join(placements)}`, the {len(both)} runs"
        else:
            commits = sorted({other[k]["git_commit"][:7] for k in both})
            head = f"Made again at {', '.join(commits)}, the {len(both)} runs"
        moves = [(abs(other[k]["time_s"] - base[k]["time_s"]), k) for k in both]
        shift, (p, label) = max(moves)
        if shift == 0:
            sentences.append(f"{head} are identical to the last digit (simulated, [CSV]({folder}/runs.csv)).")
            continue
        part, (q, part_label) = max((move / base[k]["time_s"], k) for move, k in moves)
        micro = shift * 1e6
        sentences.append(f"{head} moved by at most {micro:.{0 if micro >= 100 else 1 if micro >= 1 else 2}f} µs "
                         f"({label} at {p} ranks) and at most {part:.2g} of their time ({part_label} at {q} ranks; "
                         f"simulated, [CSV]({folder}/runs.csv)).")
    return wrapped(" ".join(sentences))


def killed_runs(inputs):
    """One sentence per run of the folders' failures.csv: its rank count and set-up, why it ended, and the last
    progress line it printed (simulated seconds reached, items done, host seconds), where it printed one."""
    sentences = []
    for folder in inputs.folders:
        rows = Inputs.read(folder, "failures.csv", need=("nprocs", "balancer", "reason", "progress_simulated_s",
                                                         "progress_items", "progress_host_s"))
        if not rows:
            raise InputError(f"{folder}/failures.csv: no row (allowed: the runs a sweep could not finish)")
        for r in rows:
            text = f"At {r['nprocs']} ranks, `{r['balancer']}` did not finish: {r['reason']}"
            if r["progress_host_s"] is not None:
                text += (f". Its last progress line: {r['progress_simulated_s']:.2f} s of simulated time reached, "
                         f"{r['progress_items']:,} items done, after {r['progress_host_s']:.0f} s of host time, "
                         f"measured")
            sentences.append(f"{text} ([failures.csv]({folder}/failures.csv)).")
    return wrapped(" ".join(sentences))


def run_commits(inputs):
    """One sentence: the commits the folders' runs ran at (runs.csv's git_commit, to 7 digits), clean or not, so a
    page never names a commit its runs do not record."""
    commits = sorted({r["git_commit"] for f in inputs.folders
                      for r in Inputs.read(f, need=("run_id", "git_commit"))})
    if not commits:
        raise InputError(f"block {inputs.name}: no run in {', '.join(inputs.folders)} (allowed: folders of runs)")
    named = [f"{c[:7]}{' (not clean)' if c.endswith('-dirty') else ''}" for c in commits]
    return wrapped(f"The runs of these {len(inputs.folders)} folders ran at commit{'s' if len(named) > 1 else ''} "
                   f"{', '.join(named)} (each runs.csv's `git_commit`).")
