# SPDX-License-Identifier: BSD-3-Clause
"""Shared by the plot and table scripts: the one schema per CSV file they read, reading and checking those files,
one-line errors (exit 2) for bad arguments, files and output paths, and writing figures.

Every bad input is reported as one line `SCRIPT: FILE: problem (what is allowed)` on stderr with exit code 2,
before anything is drawn or written, so a plot never comes from a file that is cut off, edited or corrupted."""
import argparse
import csv
import io
import math
import os
import re
import stat
import subprocess
import sys
import tempfile
import time


class InputError(Exception):
    """Bad input: reported as one line on stderr, exit code 2."""


def fail(script, message):
    print(f"{os.path.basename(script)}: {message}", file=sys.stderr)
    sys.exit(2)


class ArgumentParser(argparse.ArgumentParser):
    """argparse with the house error form: one line naming the problem and the usage, exit 2 (argparse's own
    error prints the usage over several lines first)."""

    def error(self, message):
        usage = " ".join(self.format_usage().split())
        self.exit(2, f"{self.prog}: {message} ({usage})\n")


def positive_int(text):
    """argparse type for counts such as --nprocs: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer (allowed: an integer >= 1)") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is below 1 (allowed: an integer >= 1)")
    return value


# ---- Schemas: one per CSV file, column -> type and constraints ----


_INTEGER = re.compile(r"[-+]?[0-9]+")


class Column:
    """One column's type and constraints. kind: 'int', 'number' (finite float), 'bool' ('true'|'false'),
    'name' (non-empty text) or 'text' (anything). minimum: smallest allowed value of a number; choices: the
    allowed texts; optional: the field may be empty (read as None)."""

    def __init__(self, kind, minimum=None, optional=False, choices=None):
        self.kind, self.minimum, self.optional, self.choices = kind, minimum, optional, choices

    def allowed(self):
        if self.choices:
            text = " or ".join(self.choices)
        elif self.kind == "bool":
            text = "true or false"
        elif self.kind == "int":
            text = "an integer" + (f" >= {self.minimum}" if self.minimum is not None else "")
        elif self.kind == "number":
            text = "a finite number" + (f" >= {self.minimum:g}" if self.minimum is not None else "")
        elif self.kind == "name":
            text = "a non-empty text"
        else:
            text = "any text"
        return text + (", or empty" if self.optional and self.kind != "text" else "")

    def parse(self, text):
        """The value of text in this column; ValueError with the problem otherwise."""
        if text == "" and (self.optional or self.kind == "text"):
            return None if self.kind != "text" else ""
        if self.kind == "text":
            return text
        if text == "":
            raise ValueError("is empty")
        if self.kind == "name":
            value = text
        elif self.kind == "bool":
            if text not in ("true", "false"):
                raise ValueError(f"is not true or false: {text!r}")
            return text == "true"
        elif self.kind == "int":
            if not _INTEGER.fullmatch(text):
                raise ValueError(f"is not an integer: {text!r}")
            value = int(text)
        else:
            # Python's float() also takes '1_000' and surrounding blanks, which no mcmclb file holds.
            if "_" in text or text.strip() != text:
                raise ValueError(f"is not a number: {text!r}")
            try:
                value = float(text)
            except ValueError:
                raise ValueError(f"is not a number: {text!r}") from None
            if not math.isfinite(value):
                raise ValueError(f"is not a finite number: {text!r}")
        if self.choices and value not in self.choices:
            raise ValueError(f"is not one of the allowed values: {text!r}")
        if self.minimum is not None and value < self.minimum:
            raise ValueError(("is negative" if self.minimum == 0 else f"is below {self.minimum:g}") + f": {text!r}")
        return value


def _int(minimum=None, optional=False):
    return Column("int", minimum, optional)


def _time(optional=False):
    """A duration in seconds or microseconds: finite and never negative."""
    return Column("number", 0, optional)


NAME, TEXT, BOOL = Column("name"), Column("text"), Column("bool")

# Column names and meanings: docs/reference/columns.md. The C++ writes them (study/src/runs_csv.cpp,
# study/src/run_files.cpp, study/src/provenance.cpp, and study/src/study.cpp for commbench); tests/test_reference.py
# checks that each schema here has exactly the columns of the header the C++ writes, in its order.
SCHEMAS = {
    "runs.csv": {
        "run_id": NAME, "experiment": NAME, "nprocs": _int(1), "G": _int(1),
        # The initial groups when not by G: sizes:4,4,8, node or node:4; empty: groups of G.
        "groups": TEXT,
        "T_ms": Column("number", 0),
        "workload": NAME, "workload_scale": _int(0, True), "workload_period": _int(1, True),
        "workload_items": _int(0, True), "workload_min": _int(0, True), "workload_max": _int(0, True),
        "workload_median": Column("number", 0, True), "workload_sigma": Column("number", 0, True),
        "workload_seed": _int(None, True), "work_mode": NAME, "jitter_pct": Column("number", 0),
        "work_seed": _int(),
        # Compute mode's walker settings (work.atoms, work.temperature, ...); empty for sleep and spin. atoms 0:
        # the magic cluster sizes by chain.
        "atoms": _int(0, True), "temperature": Column("number", 0, True),
        "move": Column("name", optional=True, choices=("single", "all")), "max_step": Column("number", 0, True),
        "moves_per_item": _int(1, True),
        "balancer": NAME, "interval": _int(1, True), "method": TEXT, "rep": _int(0),
        "time_s": _time(), "ideal_s": _time(), "baseline_s": _time(), "regroups_avg": Column("number", 0),
        "regroups_std": Column("number", 0), "regroups_min": _int(0), "regroups_max": _int(0), "valid": BOOL,
        "violations": TEXT, "mpi_library": TEXT, "git_commit": TEXT, "host": TEXT, "utc_start": TEXT,
        # Added with the simulation back end, so absent from older folders. smpi rows are simulated (SimGrid),
        # never hardware measurements.
        "backend": Column("name", choices=("mpi", "smpi")), "platform": TEXT,
        # Absent from older folders, whose async and lookahead runs retired and mostwork runs coalesced.
        "finished": Column("name", optional=True, choices=("retire", "coalesce", "pays")),
        # W, the chains each initial group owns; absent from older folders, which had one (read as 1).
        "chains_per_group": _int(1, True),
        # Chains taken from another group (balancer steal) per rank, averaged over the ranks; absent: 0.
        "migrated_avg": Column("number", 0, True),
        # The key work.wait as given (empty: auto, the machine's policy; provenance.csv's wait_policy says which
        # it was), and the seconds of the calibration before the clock (empty: none ran); absent from older folders.
        "wait": Column("name", optional=True, choices=("spin", "polite", "yield")),
        "calibration_s": _time(True),
        # The keys work.model_compute and work.model_reduce as given (empty: 1, the model as measured); absent from
        # older folders.
        "model_compute": Column("number", 0, True), "model_reduce": Column("number", 0, True),
        # workload.model trace: the trace file, the chain map and the planning model's scaling; empty for other
        # models, absent from older folders.
        "workload_file": TEXT, "workload_map": Column("name", optional=True, choices=("tile", "draw", "once")),
        "workload_scaling": Column("name", optional=True, choices=("trace", "perfect")),
        # workload.model trace: the speed-up past the sizes the trace gives, and its content's hash (part of the
        # resume key); empty for other models, absent from older folders.
        "workload_extrapolate": Column("name", optional=True, choices=("flat", "amdahl", "perfect", "usl")),
        "workload_file_fnv1a64": TEXT,
        # workload.model trace: which of a size's repeated speed-ups the replay took; empty for other models, absent
        # from older folders (whose replays took the median).
        "workload_speedups": Column("name", optional=True, choices=("median", "low", "high")),
        # Simulation, key placement: groups when the hosts were dealt over a dragonfly's groups, scatter when single
        # ranks were dealt over the nodes; empty: in order
        # (block, the default) or real MPI; absent from older folders.
        "placement": Column("name", optional=True, choices=("block", "groups", "scatter")),
        # workload.model trace: the trace the planners and pays consulted (workload.plan_file) and its content's
        # hash; empty where they consulted the trace replayed, absent from older folders.
        "workload_plan_file": TEXT, "workload_plan_fnv1a64": TEXT,
    },
    "ranks.csv": {
        "run_id": NAME, "rank": _int(0), "elapsed_s": _time(), "work_s": _time(), "polling_s": _time(),
        "waiting_s": _time(), "regroup_s": _time(),
        # other_s is elapsed minus the other parts, so rounding can make it a little negative.
        "other_s": Column("number"),
        "regroups": _int(0), "items_worked": _int(0), "final_group_first": _int(0), "final_group_last": _int(0),
        # Compute mode's walker-state broadcasts on merges (0 in sleep/spin mode); empty in rows upgraded
        # from an older folder, which did not record them.
        "state_bytes": _int(0, True), "state_s": _time(True),
        # Chains this rank's groups took from another group (balancer steal) and the bytes it received for them
        # (the answer's words; compute mode, the walker state too); 0 in rows upgraded from an older folder.
        "chains_migrated": _int(0, True), "migrated_bytes": _int(0, True),
    },
    "events.csv": {
        "run_id": NAME, "t_s": _time(), "kind": NAME, "groups_before": TEXT, "group_first": _int(0),
        "group_last": _int(0), "group_size": _int(1), "chain": _int(0), "items_left": _int(0), "method": TEXT,
        "create_s": _time(),
    },
    "traces.csv": {  # compute mode with work.trace: a chain's walker after each item
        "run_id": NAME, "chain": _int(0), "item": _int(1), "energy": Column("number"), "energy_q32": _int(),
        "accepted": _int(0), "group_size": _int(1),
    },
    "costs.csv": {  # compute mode with work.record: a trace file (item rows, then speed-up rows) with the run id
        "run_id": NAME, "chain": _int(0), "item": _int(0, True), "ranks": _int(1), "seconds": _time(True),
        "speedup": Column("number", 0, True),
    },
    "chains.csv": {  # compute mode: each chain's outcome against its single-rank reference
        "run_id": NAME, "chain": _int(0), "atoms": _int(2), "items": _int(0), "moves": _int(0),
        "final_energy": Column("number"), "energy_q32": _int(), "accepted": _int(0), "acceptance": Column("number", 0),
        "ref_energy_q32": _int(), "ref_accepted": _int(0), "matches_ref": BOOL, "ref_cpu_s": _time(),
        "merges": _int(0), "state_bytes": _int(0), "state_bcast_s": _time(), "s_per_item": TEXT,
    },
    "provenance.csv": {  # how each run was started; report.py shows it
        "run_id": NAME, "command_line": TEXT, "working_dir": TEXT, "platform_fnv1a64": TEXT, "simgrid_cfg": TEXT,
        "launcher": TEXT, "slurm_job_id": TEXT, "slurm_nodelist": TEXT,
        # Whether the ranks had cores of their own (mpi::node_occupancy): the most ranks on one node, the fewest
        # CPUs the job may use on one, and whether some node ran more ranks than that. Absent from older folders
        # and empty in simulated runs: unknown (oversubscription() returns None).
        "ranks_per_node": _int(1, True), "cores_available": _int(1, True),
        "oversubscribed": Column("bool", optional=True),
        # spin, polite (real MPI) or blocking (simulation); absent from older folders, which waited politely.
        "wait_policy": TEXT,
        # The host's CPU seconds and peak RSS of the process that ran rank 0 (in simulation: every simulated rank),
        # at the end of the run; host measurements. Absent from older folders.
        "host_cpu_s": _time(True), "host_peak_rss_kib": _int(0, True),
        # Simulation: whether SMPI's per-call CPU-clock reads were answered by the preload, and the allocator (host
        # cost only); empty on real MPI, absent from older folders.
        "smpi_clock_preload": Column("bool", optional=True), "smpi_allocator": TEXT,
        # The nodes the run spanned and each node's host, ranks and CPUs ("n01[0-3]/4 n02[4-7]/2"); absent from
        # older folders, empty in simulated runs.
        "nodes": _int(1, True), "node_layout": TEXT,
        # The order the launch ran its points in (shuffled, interleaved, blocked) and shuffled's seed; absent from
        # older folders, which ran blocked.
        "order": TEXT, "order_seed": _int(0, True),
        # How the program was compiled: CMAKE_BUILD_TYPE, the compiler and its C++ flags; absent from older folders.
        "build_type": TEXT, "compiler": TEXT, "cxx_flags": TEXT,
        # Simulation: the SimGrid library's version and the platform file (as runs.csv names it); empty on real MPI,
        # absent from older folders.
        "simgrid_version": TEXT, "platform": TEXT,
        # Simulation: how the hostfile placed the ranks (block, groups); empty on real MPI, absent from older folders.
        "placement": TEXT,
        # Rank 0's host's CPU model and, in simulation, the per cent of its CPU time other programs kept busy just
        # before and after the run (host measurements); empty where unknown, absent from older folders.
        "host_cpu_model": TEXT, "host_busy_before_pct": Column("number", 0, True),
        "host_busy_after_pct": Column("number", 0, True),
        # Real MPI: the share of a core each rank had at the launch's start; empty in simulation and where unknown,
        # absent from older folders.
        "core_share": Column("number", 0, True),
    },
    "calibration.csv": {  # a calibrated run (finished rule pays; compute mode's planning balancers): its model
        "run_id": NAME, "size": _int(1), "create_s": _time(), "reduce_s": _time(), "bcast_s": _time(),
        "s_per_flop": _time(),
    },
    "failures.csv": {  # a sweep's points that failed (fig2.py marks them unfinished)
        "point": _int(0), "nprocs": _int(1), "balancer": TEXT, "rep": _int(0), "reason": TEXT, "utc": TEXT, "key": TEXT,
        # How far a killed simulation got (its last progress line): simulated seconds, items, host seconds; empty
        # when none was seen, absent from older folders.
        "progress_simulated_s": _time(True), "progress_items": _int(0, True), "progress_host_s": _time(True),
    },
    "advice.csv": {  # mcmclb advise: the set-ups per rank count, ranked; every number simulated
        # The question answered and the row's set-up: its rank (1..n per rank count), its label, the other set-ups
        # with identical times in every scenario ("; "-joined, often empty) and its parts.
        "nprocs": _int(1), "walkers": TEXT, "rank": _int(1), "setup": TEXT, "same_as": TEXT, "balancer": NAME,
        "interval": _int(1, True), "method": TEXT,
        "finished": Column("name", optional=True, choices=("retire", "coalesce", "pays")), "scenarios": _int(1),
        # Whole time (run plus one-off costs such as pays' calibration) over none's, over the scenarios; regret
        # (time / the scenario's best - 1, a fraction), the scenario of the largest, the one-off cost included and
        # how long none's run must last before the set-up beats none in every scenario (seconds, "never" or empty).
        "vs_none_median": Column("number", 0), "vs_none_min": Column("number", 0), "vs_none_max": Column("number", 0),
        "regret_max": Column("number", 0), "regret_median": Column("number", 0), "worst_scenario": TEXT,
        "once_s": _time(True), "break_even_s": TEXT, "dropped": TEXT,
        # The rank count's verdict, repeated on each of its rows: winner, runner-up, the winner's median gain over
        # none (1 - its vs_none_median; negative when slower), robust (yes|no), what the choice depends on, the
        # tolerance regret is judged by and where it comes from; the sentence itself on the rank-1 row only.
        "winner": TEXT, "runner_up": TEXT, "gain_median": Column("number"),
        "robust": Column("name", choices=("yes", "no")), "depends_on": TEXT, "tolerance_pct": Column("number"),
        "tolerance": TEXT, "verdict": TEXT,
        # With two rank counts or more, on every row: the fewest ranks whose advised set-up comes within the
        # tolerance of the fastest rank count's; absent from older folders.
        "ranks_answer": TEXT,
        # The row's own gain over none (1 - its whole time over none's) in its worst and its best scenario, each
        # scenario named, and the range in words as the verdicts give it; absent from folders older than ranges.
        "gain_worst": Column("number", None, True), "gain_worst_scenario": TEXT,
        "gain_best": Column("number", None, True), "gain_best_scenario": TEXT, "gain": TEXT,
        # The source that set the tolerance (advice::kToleranceKinds), its rank count, its
        # repetitions and the host's busy share (percent) while measured; absent from older folders.
        "tolerance_source": Column("name", optional=True, choices=("assumed", "simulation", "replay", "program_runs",
                                                                   "prediction")),
        "tolerance_nprocs": _int(1, True), "tolerance_n": _int(1, True), "tolerance_busy_pct": Column("number", 0, True),
        # The parts of its whole time, each its own (the first set-up of the row's): the run, the calibration and the
        # initial groups' creation, each part's weighted median over the scenarios; absent from older folders.
        "run_s": _time(True), "calibration_s": _time(True), "initial_groups_s": _time(True),
        # yes where its largest regret lies within the tolerance of the smallest: the tie the winner is the
        # simplest of; absent from older folders.
        "tied": Column("name", optional=True, choices=("yes", "no")),
    },
    "check.csv": {  # mcmclb advise --check: the replay at a core per rank, real against simulated, per set-up
        "setup": TEXT, "nprocs": _int(1), "n": _int(1), "real_ratio": Column("number", 0),
        "real_low": Column("number", 0, True), "real_high": Column("number", 0, True), "sim_ratio": Column("number", 0),
        "error_low": Column("number", None, True), "error_high": Column("number", None, True),
        "busy_before_pct": Column("number", 0, True), "busy_after_pct": Column("number", 0, True),
        # The parts of the whole times, medians: real and simulated run, calibration and initial groups' creation
        # (the program's row: its replay's real parts only); absent from older files.
        "real_run_s": _time(True), "real_calibration_s": _time(True), "real_initial_groups_s": _time(True),
        "sim_run_s": _time(True), "sim_calibration_s": _time(True), "sim_initial_groups_s": _time(True),
    },
    "predict.csv": {  # mcmclb predict: the rule's model's item time per atom count and group size
        "run_id": NAME, "move": NAME, "moves_per_item": _int(1), "atoms": _int(2), "size": _int(1), "item_s": _time(),
    },
    "commbench.csv": {
        "method": NAME, "op": NAME, "nprocs": _int(1), "group_size": _int(1), "rep": _int(0),
        "iterations": _int(1), "time_us": _time(), "iter_min_us": _time(), "iter_max_us": _time(), "timer": TEXT,
        "mpi_library": TEXT, "host": TEXT, "git_commit": TEXT, "utc_start": TEXT, "groups": TEXT,
        # Absent from older files (read as mpi). smpi rows are simulated (SimGrid) on the platform named.
        "backend": Column("name", choices=("mpi", "smpi")), "platform": TEXT, "platform_fnv1a64": TEXT,
        "simgrid_cfg": TEXT,
        # The median over a repetition's iterations (robust against a rare preemption, which dominates
        # the mean of a cheap operation on oversubscribed cores); absent from older files, read by fig1.py
        # --stat median.
        "iter_median_us": _time(True),
        # The Slurm job that measured the row and its nodes (empty outside Slurm); absent from files written
        # before them. A resumed benchmark's file holds rows of several jobs.
        "slurm_job_id": TEXT, "slurm_nodelist": TEXT,
        # The summary of the benchmark's repetitions, on each of their rows: how many, the median of their time_us
        # and its 95 % order-statistics interval (empty below 6 repetitions: too few for one); absent from older
        # files.
        "reps": _int(1, True), "median_us": _time(True), "median_ci_low_us": _time(True),
        "median_ci_high_us": _time(True),
        # smpi rows: the SimGrid library's version (mpi_library names its major and minor only); absent from older
        # files.
        "simgrid_version": TEXT,
    },
    "live-communicators.csv": {  # mcmclb-commbench --live-communicators: a count per method, not a time
        "method": NAME, "nprocs": _int(1), "group_size": _int(1), "cap": _int(1), "live": _int(0), "refused": BOOL,
        "error": TEXT, "mpi_library": TEXT, "host": TEXT, "git_commit": TEXT, "utc_start": TEXT,
        "slurm_job_id": TEXT, "slurm_nodelist": TEXT,
    },
    # tests/bench_lj's Google Benchmark output (--benchmark_out_format=csv): one row per repetition and aggregate;
    # the counters it sets follow as columns of their own (kept as text here, read by doc_tables.py).
    "bench_lj.csv": {
        "name": TEXT, "iterations": _int(0), "real_time": _time(), "cpu_time": _time(), "time_unit": NAME,
        "label": TEXT,
    },
    # tests/readme/run_demo.sh time: the demo command (docs/guide/benchmark-the-balancers.md) timed from a fresh copy
    # of the checkout, one row per part (build: the steps up to the build; run: the sweep and the report; tests: the
    # README's test command, from run_demo.sh time-tests) and repetition.
    "demo-timing.csv": {
        "part": Column("name", choices=("build", "run", "tests")), "rep": _int(0), "seconds": _time(), "commit": TEXT,
        "host": TEXT, "cores": _int(1), "utc_start": TEXT, "command": TEXT,
    },
    # docs/notes/walkers-overhead: examples/ising at real P ranks, each run's time as it printed it, per mode: its
    # hand-written loop (plain), the same loop calling the chains through the library's interface (virtual), and
    # the library's run under none; rounds in random order, with each run's provenance.
    "walkers-overhead.csv": {
        "round": _int(1), "mode": Column("name", choices=("plain", "virtual", "none")), "seconds": _time(),
        "ranks": _int(1), "commit": TEXT, "mpi_library": TEXT, "build_type": TEXT, "host": TEXT, "cores": _int(1),
        "utc_start": TEXT, "command": TEXT,
    },
    # docs/notes/advise-estimate: mcmclb advise --no-race on one trace, the wall-time estimate it printed before it
    # started against the wall time it took, with how busy the host was just before (measure.py there).
    "estimates.csv": {
        "trace": TEXT, "walkers": _int(1), "items": _int(1), "ranks": TEXT, "jobs": _int(1),
        "simulations": _int(0), "estimated_s": _time(), "measured_s": _time(),
        "error_pct": Column("number"), "busy_before_pct": Column("number", 0), "commit": TEXT, "host": TEXT,
        "cores": _int(1), "utc_start": TEXT, "command_line": TEXT,
    },
    # docs/notes/advise-estimate: the same with --check (measure.py --check N): the estimate at the start, which
    # bounds the check's real runs, the check's own estimate once its balancers are known, and those runs' wall time.
    "estimates-check.csv": {
        "trace": TEXT, "walkers": _int(1), "items": _int(1), "ranks": TEXT, "jobs": _int(1), "check_reps": _int(6),
        "simulations": _int(0), "estimated_s": _time(), "check_runs_bound": _int(1), "check_estimated_s": _time(),
        "check_runs": _int(1), "check_measured_s": _time(), "measured_s": _time(),
        "busy_before_pct": Column("number", 0), "commit": TEXT, "host": TEXT, "cores": _int(1), "utc_start": TEXT,
        "command_line": TEXT,
    },
    # docs/notes/advise-estimate: advise racing (measure.py --race): the range printed at the start (none's round
    # alone, up to every simulation), the simulations run, whether none settled every rank count, the wall time, and
    # where balancers raced, the first round's estimate and time as advise printed them.
    "estimates-race.csv": {
        "trace": TEXT, "walkers": _int(1), "items": _int(1), "ranks": TEXT, "jobs": _int(1),
        "simulations_at_most": _int(0), "simulations_run": _int(0), "settled": Column("name", choices=("yes", "no")),
        "estimated_low_s": _time(), "estimated_high_s": _time(), "measured_s": _time(),
        "first_round_estimated_s": _time(True), "first_round_measured_s": _time(True),
        "busy_before_pct": Column("number", 0), "commit": TEXT, "host": TEXT, "cores": _int(1), "utc_start": TEXT,
        "command_line": TEXT,
    },
    # docs/notes/advise-estimate: advise --no-race (measure.py --whole, with --spin one core kept busy): the figure
    # of its "in all" line and the other end beside it, whether it searched, the cores it measured free, the
    # search's own estimate against its time, and the wall time.
    "estimates-whole.csv": {
        "trace": TEXT, "walkers": _int(1), "items": _int(1), "ranks": TEXT, "jobs": _int(1),
        "simulations": _int(0), "estimated_s": _time(), "other_end_s": _time(True),
        "searched": Column("name", choices=("yes", "no")), "cores_one": Column("number", 0),
        "cores_all": Column("number", 0, True), "search_steps": _int(0),
        "search_estimated_s": _time(True), "search_measured_s": _time(True), "measured_s": _time(),
        "error_pct": Column("number"), "spinning": Column("name", choices=("yes", "no")),
        "busy_before_pct": Column("number", 0), "commit": TEXT, "host": TEXT, "cores": _int(1), "utc_start": TEXT,
        "command_line": TEXT,
    },
    # docs/notes/exact-sum-cost: tests/bench_exact_sum at real P ranks, seconds per call of each mode (a plain sum of
    # doubles and ops::exact_sum, of 1 and of 64 per rank), rounds in random order, with the run's provenance.
    "exact-sum-cost.csv": {
        "round": _int(1), "mode": Column("name", choices=("plain-1", "exact-1", "plain-64", "exact-64")),
        "seconds": _time(), "ranks": _int(1), "calls": _int(1), "commit": TEXT, "mpi_library": TEXT, "wait": NAME,
        "host": TEXT, "cores": _int(1), "utc_start": TEXT,
    },
    # docs/notes/checkpoint-cost: tests/bench_checkpoint at real P ranks, each run's time per checkpoint mode, with
    # the checkpoints every rank wrote and the seconds they took, rounds in random order.
    "checkpoint-cost.csv": {
        "round": _int(1), "mode": Column("name", choices=("none", "every-item", "every-1s", "every-60s")),
        "seconds": _time(), "valid": _int(0), "checkpoints": _int(0), "checkpoint_s": Column("number", 0),
        "ranks": _int(1), "item_ms": Column("number", 0), "state_kb": _int(0), "commit": TEXT, "mpi_library": TEXT,
        "wait": NAME, "host": TEXT, "cores": _int(1), "utc_start": TEXT,
    },
    # docs/data/checkpoint-forms: tests/bench_checkpoint_forms at real P ranks, a row per rank and run: the rank's
    # checkpoint files, the seconds it spent on them and its peak memory in that run, whole state against spread.
    "checkpoint-forms.csv": {
        "round": _int(1), "form": Column("name", choices=("whole", "spread")), "state_mb": _int(1), "rank": _int(0),
        "checkpoints": _int(0), "checkpoint_s": Column("number", 0), "peak_mib": Column("number", 0),
        "run_s": _time(), "valid": _int(0), "items": _int(2), "ranks": _int(1), "commit": TEXT, "mpi_library": TEXT,
        "host": TEXT, "cores": _int(1), "utc_start": TEXT,
    },
    # docs/notes/chain-order: tests/bench_chain_order at real P ranks, each run's time per balancer and case (chains
    # numbered shortest or longest first, placed as numbered or by their items), rounds in random order.
    "chain-order-p2.csv": {
        "round": _int(1), "balancer": NAME,
        "case": Column("name", choices=("shortest-first as numbered", "longest-first as numbered",
                                        "longest-first placed by items")),
        "seconds": _time(), "valid": _int(0), "ranks": _int(1), "item_ms": Column("number", 0), "commit": TEXT,
        "mpi_library": TEXT, "wait": NAME, "host": TEXT, "cores": _int(1), "utc_start": TEXT,
    },
    "dinan2011.csv": {  # plots/reference: the paper's values
        "kind": Column("name", choices=("table1", "fig2")), "balancer": NAME, "interval": _int(1, True),
        "avg": Column("number", 0, True), "stdev": Column("number", 0, True), "min": _int(0, True),
        "max": _int(0, True), "time_s": _time(True), "source": TEXT,
        # Fig. 2: the range of times the paper's text allows (time_s, where it gives one, is its approximate value).
        "low_s": _time(True), "high_s": _time(True),
    },
    "host-time.csv": {  # whole-process host cost of simulated launches, as /usr/bin/time gave it (doc_tables.py)
        "platform": NAME, "launch": _int(1), "wall_s": _time(), "user_s": _time(), "sys_s": _time(),
        "peak_rss_kib": _int(0),
    },
    # plots/calibration_check.py: a calibration folder's provenance.csv as mcmclb calibrate writes it (the columns
    # read; the rest kept as text), mcmclb-pingpong's two outputs, and what the check writes.
    "calibrate-provenance.csv": {
        "git_commit": TEXT, "mpi_library": TEXT, "nprocs": _int(2), "host": TEXT, "utc_start": NAME,
    },
    "pingpong.csv": {"bytes": _int(1), "one_way_us": _time(), "bandwidth_MBps": Column("number", 0)},
    "allreduce.csv": {"bytes": _int(8), "allreduce_us": _time()},
    "errors.csv": {
        "what": Column("name", choices=("pingpong", "allreduce", "create", "merge", "reduce")), "method": TEXT,
        "size": _int(1), "unit": Column("name", choices=("B", "ranks")), "n": _int(6),
        "measured_median_us": _time(), "measured_low_us": _time(), "measured_high_us": _time(),
        "simulated_us": _time(), "error_pct": Column("number"), "error_low_pct": Column("number"),
        "error_high_pct": Column("number"),
    },
    "calibration-check-provenance.csv": {
        "calibration": NAME, "calibration_utc": NAME, "calibration_commit": TEXT, "calibration_host": TEXT,
        "platform_fnv1a64": NAME, "mpi_library": TEXT, "simgrid_version": TEXT, "host": TEXT, "cpus": _int(1),
        "nprocs": _int(1), "rounds": _int(6), "order_seed": _int(0), "busy_before_pct": Column("number", 0, True),
        "busy_after_pct": Column("number", 0, True), "git_commit": TEXT, "utc_start": NAME, "utc_end": NAME,
        "command_line": TEXT,
    },
}
# advise's whole estimate repeated (six runs or more per trace, the traces interleaved): measure.py --whole's rows.
SCHEMAS["estimates-repeated.csv"] = SCHEMAS["estimates-whole.csv"]


def _required(column):
    """column, with an empty field an error."""
    return Column(column.kind, column.minimum, False, column.choices)


def _checked_lines(f, path):
    """The lines of f, refused as the C++ results store refuses them (study/src/posix_file.cpp, for_each_row), so
    that every reader of a results folder agrees: a line with NUL bytes, and a record ending in '\\r' (CRLF line
    endings: mcmclb writes LF only, and appends LF rows to whatever it finds). A '\\r' inside a quoted field is
    text, not a line ending, so quotes are followed across lines."""
    quoted = False
    for line_no, line in enumerate(f, start=1):
        if "\0" in line:
            raise InputError(f"{path}: line {line_no} contains NUL bytes (allowed: a text CSV file)")
        quoted ^= line.count('"') % 2 == 1
        if not quoted and line.rstrip("\n").endswith("\r"):
            raise InputError(f"{path}: line {line_no} ends in \\r (CRLF line endings; allowed: LF line endings, as "
                             f"mcmclb writes them)")
        yield line


def _kind(mode):
    """What a file of this mode is, for messages; None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a device"),
                       (stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "a special file"


def open_regular(path, allowed, **kwargs):
    """open(path, **kwargs) for reading, only if path is a regular file: a FIFO would block the open and every read
    forever, a device (/dev/zero) never ends. The open itself never waits (O_NONBLOCK); anything but a regular file
    is an InputError saying what it is and what is allowed. The one way the scripts open a file to read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise InputError(f"{path}: cannot be read ({e.strerror}; allowed: {allowed})") from None
    try:
        kind = _kind(os.fstat(fd).st_mode)
        if kind is not None:
            raise InputError(f"{path}: is {kind}, not a regular file (allowed: {allowed})")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "r", **kwargs)
    except BaseException:
        os.close(fd)
        raise


# The tables that hold one row per run, whose run_id must be unique (the others hold several rows of a run).
ONE_ROW_PER_RUN = ("runs.csv", "provenance.csv")


def read_csv(path, schema, need, filled=()):
    """Rows of the CSV file at path as dicts of typed values (int, float, bool, str; None for an empty optional
    field), checked against SCHEMAS[schema]: the columns in need must exist, every row must have exactly the
    header's number of fields, and every field of a schema column must have its type and satisfy its constraints.
    The columns in filled, where the header has them, must not be empty even if the schema lets them be (a
    caller that plots an optional column checks that the header has it). Columns outside the schema are kept as
    text. A UTF-8 byte-order mark is skipped.

    Raises InputError (one line naming the file) for a missing, empty or malformed file, and for a run_id found
    twice in a table of ONE_ROW_PER_RUN. For a results folder,
    resolve the file name first with find_csv().
    """
    columns = SCHEMAS[schema]
    if not os.path.exists(path):
        raise InputError(f"{path}: no such file (allowed: a {schema} file or a folder holding one)")
    if os.path.isdir(path):
        raise InputError(f"{path}: is a folder, not a regular file (allowed: a regular {schema} file)")
    try:
        with open_regular(path, f"a regular {schema} file", newline="", encoding="utf-8-sig") as f:
            reader = csv.reader(_checked_lines(f, path))
            header = next(reader, None)
            if header is None:
                raise InputError(f"{path}: empty file, expected a CSV header with columns {', '.join(need)}")
            repeated = sorted({c for c in header if header.count(c) > 1})
            if repeated:
                raise InputError(f"{path}: malformed header, column(s) {', '.join(repeated)} appear twice")
            missing = [c for c in need if c not in header]
            if missing:
                raise InputError(f"{path}: malformed, missing column(s) {', '.join(missing)} (allowed: a {schema} "
                                 f"as mcmclb writes it, see docs/reference/columns.md)")
            checked = [(i, name, _required(columns[name]) if name in filled else columns[name])
                       for i, name in enumerate(header) if name in columns]
            rows = []
            # A table with one row per run: a run_id twice would join two runs' rows of every other file as one.
            id_at = header.index("run_id") if schema in ONE_ROW_PER_RUN and "run_id" in header else None
            line_of_id = {}
            for fields in reader:
                if not fields:
                    continue  # a blank line
                if len(fields) != len(header):
                    raise InputError(f"{path}: line {reader.line_num} has {len(fields)} fields, the header has "
                                     f"{len(header)} (a row cut off or edited?)")
                if id_at is not None:
                    seen = line_of_id.setdefault(fields[id_at], reader.line_num)
                    if seen != reader.line_num:
                        raise InputError(f"{path}: line {reader.line_num}: run_id {fields[id_at]} is also on line "
                                         f"{seen} (allowed: each run_id once, as runs, ranks and events are joined "
                                         f"by it)")
                row = dict(zip(header, fields))
                for i, name, column in checked:
                    try:
                        row[name] = column.parse(fields[i])
                    except ValueError as e:
                        raise InputError(f"{path}: line {reader.line_num}: column {name} {e} "
                                         f"(allowed: {column.allowed()})") from None
                rows.append(row)
    except UnicodeDecodeError:
        raise InputError(f"{path}: not a text CSV file (allowed: UTF-8 text)") from None
    except csv.Error as e:
        raise InputError(f"{path}: malformed CSV ({e})") from None
    except OSError as e:
        raise InputError(f"{path}: cannot be read ({e.strerror})") from None
    if not rows:
        raise InputError(f"{path}: no data rows (allowed: a header and at least one row)")
    return rows


def find_csv(path, name):
    """path itself if it is a file, else path/name (a results folder)."""
    return os.path.join(path, name) if os.path.isdir(path) else path


def check_inputs_exist(paths, name):
    """Each path must be a file or a folder holding name: checked before anything else, so a typo in an input is
    named as such rather than as a problem with the default output path beside it."""
    for path in paths:
        file = find_csv(path, name)
        if not os.path.exists(file):
            raise InputError(f"{file}: no such file (allowed: a {name} file or a folder holding one)")
        kind = _kind(os.stat(file).st_mode)
        if kind is not None and not (kind == "a folder" and file == path):
            raise InputError(f"{file}: is {kind}, not a regular file (allowed: a {name} file or a folder holding "
                             f"one)")



def check_results_folder(folder):
    """folder must be a results folder holding runs.csv (scripts that draw one run read several of its files)."""
    if not os.path.isdir(folder):
        raise InputError(f"{folder}: " + ("is not a folder" if os.path.exists(folder) else "no such folder") +
                         " (allowed: a results folder)")
    check_inputs_exist([folder], "runs.csv")


def input_files(path, table):
    """(results folder, the file of table) for a results folder or a file of that table: the other tables of a run
    are read from the folder holding the file. Checks that both exist."""
    if os.path.isdir(path):
        check_results_folder(path)
        return path, os.path.join(path, table)
    if not os.path.exists(path):
        raise InputError(f"{path}: no such file or folder (allowed: a results folder or its {table} file)")
    folder = os.path.dirname(path) or "."
    check_inputs_exist([folder], "runs.csv")
    return folder, path


OUTPUT_SUFFIXES = (".png", ".pdf", ".svg")


def check_output(path, pdf=False, suffixes=OUTPUT_SUFFIXES):
    """path (and the PDF beside it with pdf) can be written: a name ending in one of suffixes (a figure's by
    default), in an existing folder where a file can be created, not a folder itself. Checked before any input is
    read, so no work is thrown away."""
    targets = [path] + ([os.path.splitext(path)[0] + ".pdf"] if pdf else [])
    if os.path.splitext(path)[1].lower() not in suffixes:
        raise InputError(f"{path}: output must be a file name ending in {', '.join(suffixes)}")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        what = "is not a folder" if os.path.exists(folder) else "does not exist"
        raise InputError(f"{path}: output folder {folder} {what} (allowed: a path in an existing, writable folder)")
    for target in targets:
        if os.path.isdir(target):
            raise InputError(f"{target}: output is a folder (allowed: a file name)")
        # A FIFO would block the write forever, a device (as root) be written into: only a regular file is
        # replaced.
        kind = _kind(os.stat(target).st_mode) if os.path.exists(target) else None
        if kind is not None:
            raise InputError(f"{target}: output is {kind}, not a regular file (allowed: a new file name or a regular "
                             f"file)")
        if os.path.exists(target) and not os.access(target, os.W_OK):
            raise InputError(f"{target}: output exists and is not writable")
    try:  # as root, os.access says yes to read-only file systems and /proc: try it
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".mcmclb-probe-")
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise InputError(f"{path}: cannot write in output folder {folder} ({e.strerror}; allowed: a path in an "
                         f"existing, writable folder)") from None


LIBRARY_NAMES = re.compile(r"^(MPICH|Open MPI|Intel\(R\) MPI Library|MVAPICH2?|SMPI)\D*?(\d+(?:\.\d+)*)")


def library_name(text):
    """The MPI library of a provenance's mpi_library (MPI_Get_library_version's first line) as a figure names it:
    "MPICH 4.0.2", "Open MPI 4.1.4"; another library: its first three words; empty: empty."""
    found = LIBRARY_NAMES.match(text or "")
    return f"{found.group(1)} {found.group(2)}" if found else " ".join((text or "").split()[:3]).rstrip(",")


def markdown_table(header, rows):
    """Lines of a Markdown table: header, the separator, one line per row of cells (text)."""
    return (["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] +
            ["| " + " | ".join(cells) + " |" for cells in rows])


def run_label(row):
    """A run's balancer set-up, e.g. 'collective(4) create' or 'async intercomm'."""
    name = row["balancer"]
    if row.get("interval"):
        name += f"({row['interval']})"
    if row.get("method"):
        name += f" {row['method']}"
    if row.get("finished") and row["finished"] != DEFAULT_FINISHED.get(row["balancer"]):
        name += f" {row['finished']}"
    return name


# The finished rule of each balancer that has one when a run does not name it (and in folders older than the
# finished column, and collective's before it offered pays); a label names the rule only where it differs.
DEFAULT_FINISHED = {"async": "retire", "lookahead": "retire", "mostwork": "coalesce", "stealmerge": "coalesce",
                    "collective": "retire"}


RUN_COLUMNS = ["run_id", "nprocs", "balancer", "interval", "method", "rep", "time_s", "ideal_s", "baseline_s",
               "regroups_avg", "regroups_std", "regroups_min", "regroups_max", "valid"]


OCCUPANCY = ("ranks_per_node", "cores_available", "oversubscribed", "nodes", "node_layout")
NODE = re.compile(r"(?P<host>[^\s\[\]]+)\[(?P<ranks>\d+(?:-\d+)?(?:,\d+(?:-\d+)?)*)\]/(?P<cpus>\d+)")


def node_list(layout):
    """provenance.csv's node_layout as [(host, ranks text, rank count, CPUs)], in its order (CPUs 0: unknown);
    [] when empty or not in the form HOST[RANKS]/CPUS separated by spaces."""
    nodes = []
    for word in (layout or "").split():
        m = NODE.fullmatch(word)
        if not m:
            return []
        count = sum(int(b) - int(a) + 1 for a, _, b in
                    (part.partition("-") if "-" in part else (part, "", part) for part in m["ranks"].split(",")))
        nodes.append((m["host"], m["ranks"], count, int(m["cpus"])))
    return nodes


def crowded_nodes(layout):
    """The nodes of a node_layout whose host held more ranks than CPUs, as text: 'node 2 of 2 (n02, ranks 4-9): 6
    ranks on 4 CPUs'. Ranks count per host, the machine whose cores they share: nodes emulated on one machine
    share its host name, and their ranks its CPUs (the most any of them may use)."""
    nodes = node_list(layout)
    per_host = {}
    for i, (host, ranks, count, cpus) in enumerate(nodes, 1):
        entry = per_host.setdefault(host, [[], [], 0, 0])
        entry[0].append(str(i))
        entry[1].append(ranks)
        entry[2] += count
        entry[3] = max(entry[3], cpus)
    return [f"node{'s' if len(ids) > 1 else ''} {', '.join(ids)} of {len(nodes)} ({host}, ranks {','.join(ranks)}): "
            f"{count} ranks on {cpus} CPUs" for host, (ids, ranks, count, cpus) in per_host.items() if 0 < cpus < count]


def node_notes(runs):
    """One line per rank count whose real-MPI runs spanned several nodes: the layout, each node that held more ranks
    than cores marked. [] when every run was on one node (or the layout is unknown)."""
    layouts = {}
    for r in runs:
        if r["backend"] == "mpi" and (r.get("nodes") or 0) > 1 and r.get("node_layout"):
            layouts.setdefault(r["nprocs"], {})[r["node_layout"]] = None
    lines = []
    for p, seen in sorted(layouts.items()):
        for layout in seen:
            crowded = crowded_nodes(layout)
            lines.append(f"P = {p} ran on {len(node_list(layout))} nodes, HOST[RANKS]/CPUS: {layout}" +
                         (" (more ranks than cores on " + "; ".join(crowded) + ")" if crowded else
                          " (a core per rank on every node)"))
    return lines


def add_occupancy(rows, folder):
    """Each run's ranks_per_node, cores_available and oversubscribed from provenance.csv beside its runs.csv
    (None: unknown, as for a folder written before those columns, a simulated run, or no provenance.csv)."""
    path = os.path.join(folder, "provenance.csv")
    found = read_csv(path, "provenance.csv", ["run_id"]) if os.path.lexists(path) else []
    by_id = {r["run_id"]: r for r in found}
    for row in rows:
        prov = by_id.get(row["run_id"], {})
        for column in OCCUPANCY:
            row[column] = prov.get(column)


def oversubscribed_points(runs):
    """{P: (ranks per node, cores)} of the real-MPI runs that ran oversubscribed (more ranks on a node than CPUs
    for the job there); runs whose occupancy is unknown are left out."""
    points = {}
    for r in runs:
        if r.get("oversubscribed") and r["backend"] == "mpi":
            ranks, cores = points.get(r["nprocs"], (0, None))
            cores_now = r.get("cores_available")
            points[r["nprocs"]] = (max(ranks, r.get("ranks_per_node") or 0),
                                   cores_now if cores is None else min(cores, cores_now or cores))
    return points


def oversubscribed_mark(p, runs):
    """The P column's text: P, and '(oversubscribed)' when runs at P ran oversubscribed."""
    return f"{p} (oversubscribed)" if p in oversubscribed_points(runs) else str(p)


def oversubscription_note(runs):
    """What a newcomer should and should not read into oversubscribed points, in one paragraph; '' when no run
    is known to be oversubscribed."""
    points = oversubscribed_points(runs)
    if not points:
        return ""
    ran = "; ".join(f"P = {p} ran {ranks} ranks on {cores} cores" for p, (ranks, cores) in sorted(points.items()))
    crowded = sorted({f"P = {r['nprocs']}: {node}" for r in runs if r["backend"] == "mpi" and (r.get("nodes") or 0) > 1
                      for node in crowded_nodes(r.get("node_layout"))})
    if crowded:
        ran += " (" + "; ".join(crowded) + ")"
    cores = min(c for _, c in points.values())
    return (f"Oversubscribed: {ran}. With more ranks than cores the ranks wait for a core, and an MPI that "
            f"busy-polls (MPICH does) keeps every waiting rank spinning, so communicator creation and collectives "
            f"cost 100-1000x more: at these points the balancers that regroup often (async, collective(1)) look "
            f"worse than they are, even worse than none. Read them as the machine's limit, not the balancers'; "
            f"compare balancers at P <= {cores}, or on a machine with a core per rank.")


def read_runs(paths, need=RUN_COLUMNS):
    """runs.csv rows from result folders or files (several folders may be combined, e.g. a real and a simulated
    sweep), each holding at least the columns in need. A file older than the simulation back end has no backend
    and platform columns: its rows read as backend 'mpi'. A simulated (smpi) row must name its platform, and a real
    (mpi) one must not. Each row also gets the occupancy of its run (add_occupancy; None: unknown)."""
    rows = []
    for path in paths:
        file = find_csv(path, "runs.csv")
        found = read_csv(file, "runs.csv", need)
        add_occupancy(found, os.path.dirname(file))
        for number, row in enumerate(found, start=1):
            row.setdefault("backend", "mpi")
            row.setdefault("platform", "")
            if (row["backend"] == "smpi") != bool(row["platform"]):
                raise InputError(f"{file}: data row {number} ({row['run_id']}): backend {row['backend']} with platform "
                                 f"{row['platform']!r} (allowed: smpi rows name their platform file, mpi rows none)")
        rows += found
    return rows


def runs_by_id(runs, ids, source):
    """The runs with these run_ids, in the order asked; InputError naming the first id source does not hold."""
    chosen = []
    for rid in ids:
        match = [r for r in runs if r["run_id"] == rid]
        if not match:
            raise InputError(f"{source}: no run with run_id {rid}")
        chosen.append(match[0])
    return chosen


def platform_name(row):
    """The short name of a simulated row's platform: its file name without .xml ('bgp' for .../bgp.xml)."""
    return os.path.splitext(os.path.basename(row["platform"]))[0]


def backend_label(row):
    """Where a row's numbers come from, for legends and headings: 'real MPI' or 'simulated (bgp)'. Simulated
    numbers come from a model of a machine and are never labelled as measurements."""
    return f"simulated ({platform_name(row)})" if row["backend"] == "smpi" else "real MPI"


def output_path(args_output, first_input, name):
    if args_output:
        return args_output
    folder = first_input if os.path.isdir(first_input) else (os.path.dirname(first_input) or ".")
    return os.path.join(folder, name)


# An absolute path of a machine in a CSV value (a word starting at / under one of the usual top folders): what the
# evidence rule keeps out of committed results, and what scrub_paths.py rewrites. Group 1: what precedes the path.
MACHINE_PATH = re.compile(r"(^|[\s\"'=:])(/(?:home|root|tmp|work|usr|opt|var|mnt|srv|scratch)/[^\s\"',;]*)")


def write_text_atomically(path, text):
    """Writes text to path at once: a temporary file beside it, then renamed over it, so a reader never sees half a
    file; the file keeps its mode (a new one gets 0644)."""
    folder = os.path.dirname(os.path.abspath(path))
    mode = os.stat(path).st_mode & 0o7777 if os.path.exists(path) else 0o644
    fd, temporary = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(path)}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def host_busy_pct(seconds=1.0):
    """The share of the host's CPU time that was busy over seconds, in per cent, from /proc/stat's first line (idle
    and iowait are not busy), as mcmclb calibrate and advise --check read it; None where it cannot be read."""
    def sample():
        with open("/proc/stat", encoding="ascii") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
        return sum(fields[:8]), fields[3] + (fields[4] if len(fields) > 4 else 0)
    try:
        total0, idle0 = sample()
        time.sleep(seconds)
        total1, idle1 = sample()
    except (OSError, ValueError, IndexError):
        return None
    return None if total1 <= total0 else 100.0 * (1 - (idle1 - idle0) / (total1 - total0))


def refuse_busy(busy, limit, timed):
    """InputError where the host's busy share (host_busy_pct, None: unknown) is over --busy's limit: what `timed`
    measures would be the other programs' time too, so nothing is run."""
    if busy is not None and busy > limit:
        raise InputError(f"the host is {busy:.0f} % busy (its CPU time over 1 s, /proc/stat), more than the {limit:g} "
                         f"% --busy allows: {timed} would time the other programs too; nothing run or written "
                         f"(allowed: a quieter host, or --busy {min(100, int(busy) + 1)})")


def fnv1a64_hex(data):
    """FNV-1a 64 of bytes as 16 hex digits, as comm/base/include/mcmclb/text.hpp computes platform_fnv1a64."""
    h = 0xcbf29ce484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def csv_text(header, rows):
    """A CSV file's text: header, then each row (a dict) in its order; a float in 6 significant digits, None empty."""
    def cell(value):
        if value is None:
            return ""
        return f"{value:.6g}" if isinstance(value, float) else str(value)
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(header)
    for r in rows:
        w.writerow([cell(r[c]) for c in header])
    return out.getvalue()


# Set in the environment of a script that need_matplotlib started again under another Python, so that it never
# starts a third.
FALLBACK_ENV = "MCMCLB_PYTHON_FALLBACK"


def python_with_matplotlib():
    """The first python3 that can import matplotlib: each python3 on PATH in order, then the system's
    /usr/bin/python3 (where Debian's python3-matplotlib, which bootstrap.sh installs, lives); None if none can."""
    candidates = [os.path.join(folder, "python3") for folder in os.environ.get("PATH", "").split(os.pathsep) if folder]
    tried = set()
    for candidate in candidates + ["/usr/bin/python3"]:
        # Each is tried by running it, even the running one's own path or a link to it: a virtual environment's
        # python3 links to the very interpreter that has matplotlib, and a wrapper may have started it with -S.
        if candidate in tried or not os.access(candidate, os.X_OK):
            continue
        tried.add(candidate)
        try:
            found = subprocess.run([candidate, "-c", "import matplotlib"], stdin=subprocess.DEVNULL,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120).returncode == 0
        except (OSError, subprocess.SubprocessError):
            found = False
        if found:
            return candidate
    return None


def need_matplotlib():
    """Makes sure the script runs under a Python with matplotlib; called first in every drawing script's main,
    before anything is printed or written.

    The scripts start with the python3 first on PATH, which on many machines is not the one that has matplotlib
    (pyenv, conda or a bare virtual environment before Debian's). Run as a script, it then starts itself again
    under the first python3 that has it and says so in one line, so the command as typed still draws. Without any
    such Python, or when called from another program, it stops in one line naming what to install, exit 2."""
    try:
        import matplotlib  # noqa: F401
        return
    except ImportError:
        pass
    main = getattr(sys.modules.get("__main__"), "__file__", None)
    script = os.path.abspath(main) if main else None
    if script and os.path.dirname(script) == os.path.dirname(os.path.abspath(__file__)) and \
            not os.environ.get(FALLBACK_ENV):
        other = python_with_matplotlib()
        if other:
            print(f"{os.path.basename(script)}: matplotlib is not installed for {sys.executable}; running with "
                  f"{other}, which has it", file=sys.stderr)
            sys.stdout.flush()
            sys.stderr.flush()
            os.execve(other, [other, script] + sys.argv[1:], dict(os.environ, **{FALLBACK_ENV: sys.executable}))
    fail(sys.argv[0], f"matplotlib is not installed for {sys.executable} (install it: pip install matplotlib, "
                      f"or Debian's python3-matplotlib; or run the script with a python3 that has it)")


def pyplot():
    """matplotlib's pyplot with the file-only Agg backend (no display needed)."""
    need_matplotlib()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(fig, path, pdf=False):
    """Writes fig at path (and as PDF beside it when pdf) and says so."""
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    if pdf:
        fig.savefig(os.path.splitext(path)[0] + ".pdf")
    print(f"wrote {path}")
