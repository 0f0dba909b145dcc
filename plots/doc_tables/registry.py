# SPDX-License-Identifier: BSD-3-Clause
"""The one list of the tables a block may name, and the call that builds one (generate)."""
from mcmclb_csv import InputError

from .bounds import stated_bounds
from .commbench import commbench_by_size, commbench_methods, live_communicators, provenance_gaps, two_mpis
from .common import Inputs
from .host_time import host_cpu, host_time, killed_runs, run_commits, time_shift
from .merge_pays import (calibration_cost, merge_pays_ratios, merge_pays_sensitivity, model_items, pays_against_none,
                         pays_against_rule, pays_guarantee, real_pays, real_versus_none)
from .merge_pays_findings import (closing_merges, model_against_chains, model_calibration, pays_all_atom,
                                  pays_real_answer, pays_real_findings, pays_single_atom, pays_whole,
                                  sensitivity_answer,
                                  sensitivity_findings, single_atom_calibration, workless_merges)
from .paper import fig1_links, fig1_sensitivity, paper_answer, table1_merge_rule
from .readme import findings, quick_start
from .repeat import simulation_repeat
from .reproductions import not_yet_reproduced, release_bounds, release_reproductions, reproductions, rerun_4dp
from .simulation import (async_gap, async_gap_model, collective_floor_table, collective_merges,
                         constants_sensitivity, host_cost, host_cost_dearest, host_cost_series, lj_cost,
                         platform_hashes, simulated_times, table1_rows, table1_seeds, times_by_folder)
from .steal_regroup import (before_after, regrouping_against_thieves, steal_vs_regroup_compute,
                            steal_vs_regroup_compute_real, steal_vs_regroup_seeds, steal_vs_regroup_sizes,
                            steal_vs_regroup_summary, thieves_against_regrouping)
from .steal_regroup_findings import (compute_findings, compute_real_findings, cyclic_w2_note, hint_host_cost,
                                     host_cost_note, large_findings, runs_made, seeds_notes, why_regrouping_wins)
from .start_with import start_with
from .walkers import (chain_order_measured, chain_order_simulated, checkpoint_cost, checkpoint_forms, exact_sum_cost,
                      walkers_overhead)
from .your_workload import (advice, advice_answer, advise_corpus, advice_brief, advise_estimate, advise_estimate_check,
                            advise_estimate_race, advise_estimate_repeated, advise_estimate_whole, calibration_errors,
                            prediction, trace_at_scale, trace_replay, trace_summary)


# Every table a block may name: NAME -> (function, (fewest, most) folders, {option: what is allowed}).
TABLES = {
    "quick-start": (quick_start, (1, 1), {}),
    "findings": (findings, (5, 5), {}),
    "paper-answer": (paper_answer, (5, 10), {}),
    "fig1-sensitivity": (fig1_sensitivity, (1, 10), {}),
    "fig1-links": (fig1_links, (2, 8), {"sizes": "integers separated by commas"}),
    "steal-vs-regroup-seeds": (steal_vs_regroup_seeds, (1, 1), {"counts": "yes|no"}),
    "steal-vs-regroup-summary": (steal_vs_regroup_summary, (1, 4), {"W": "integers separated by commas"}),
    "steal-vs-regroup-sizes": (steal_vs_regroup_sizes, (1, 4), {"W": "an integer"}),
    "steal-vs-regroup-compute": (steal_vs_regroup_compute, (1, 1), {}),
    "steal-vs-regroup-compute-real": (steal_vs_regroup_compute_real, (1, 1), {}),
    "merge-pays-ratios": (merge_pays_ratios, (1, 1), {"bold": "faster|slower"}),
    "merge-pays-sensitivity": (merge_pays_sensitivity, (1, 1), {"bold": "faster|slower",
                                                               "factors": "pairs C:R separated by commas"}),
    "real-versus-none": (real_versus_none, (1, 1), {"rule": "retire|coalesce|pays"}),
    "real-pays": (real_pays, (1, 1), {}),
    "pays-single-atom": (pays_single_atom, (1, 1), {}),
    "pays-whole": (pays_whole, (1, 1), {}),
    "pays-all-atom": (pays_all_atom, (1, 1), {}),
    "calibration-cost": (calibration_cost, (2, 4), {}),
    "table1-seeds": (table1_seeds, (1, 4), {"seeds": "integers separated by commas", "rule": "retire|coalesce",
                                            "nprocs": "a rank count"}),
    "async-gap": (async_gap, (1, 8), {}),
    "async-gap-model": (async_gap_model, (1, 8), {}),
    "collective-merges": (collective_merges, (1, 1), {"run": "a set-up's label or its first word, e.g. collective(128)",
                                                      "nprocs": "an integer"}),
    "collective-floor": (collective_floor_table, (1, 4), {"nprocs": "an integer"}),
    "platform-hashes": (platform_hashes, (1, 1), {"by": "file|folder"}),
    "host-cost": (host_cost, (1, 1), {}),
    "host-cost-series": (host_cost_series, (1, 1), {"nprocs": "an integer"}),
    "host-cost-dearest": (host_cost_dearest, (1, 1), {"nprocs": "an integer"}),
    "constants-sensitivity": (constants_sensitivity, (1, 20), {"interval": "an integer"}),
    "two-mpis": (two_mpis, (1, 4), {"digits": "an integer", "ratio": "yes|no", "shared": "omit|keep"}),
    "commbench-methods": (commbench_methods, (1, 4), {"ratio": "yes|no"}),
    "pays-against-none": (pays_against_none, (1, 1), {}),
    "pays-guarantee": (pays_guarantee, (1, 8), {}),
    "pays-against-rule": (pays_against_rule, (1, 1), {}),
    "live-communicators": (live_communicators, (1, 4), {}),
    "lj-cost": (lj_cost, (1, 2), {}),
    "regrouping-against-thieves": (regrouping_against_thieves, (1, 1), {}),
    "thieves-against-regrouping": (thieves_against_regrouping, (1, 5), {}),
    "why-regrouping-wins": (why_regrouping_wins, (2, 2), {}),
    "seeds-notes": (seeds_notes, (1, 1), {}),
    "compute-findings": (compute_findings, (1, 4), {}),
    "compute-real-findings": (compute_real_findings, (1, 1), {}),
    "before-after": (before_after, (2, 2), {"balancer": "a balancer's name", "reference": "a balancer's name"}),
    "table1": (table1_rows, (1, 4), {"nprocs": "an integer"}),
    "model-items": (model_items, (1, 1), {}),
    "simulated-times": (simulated_times, (1, 1), {"digits": "an integer", "only": "set-up labels' beginnings, "
                                                                                   "separated by commas"}),
    "times-by-folder": (times_by_folder, (1, 4), {"nprocs": "one P per folder, separated by commas"}),
    "commbench-by-size": (commbench_by_size, (1, 1), {"nprocs": "an integer", "sizes": "integers separated by "
                                                                                          "commas"}),
    "reproductions": (reproductions, (1, 32), {}),
    "not-yet-reproduced": (not_yet_reproduced, (1, 8), {}),
    "rerun-4dp": (rerun_4dp, (1, 20), {}),
    "release-reproductions": (release_reproductions, (1, 1), {"only": "counts (the sentence without the table)"}),
    "release-bounds": (release_bounds, (1, 1), {}),
    "stated-bounds": (stated_bounds, (1, 1), {}),
    "simulation-repeat": (simulation_repeat, (2, 8), {}),
    "trace-replay": (trace_replay, (1, 5), {}),
    "trace-at-scale": (trace_at_scale, (1, 4), {}),
    "prediction": (prediction, (1, 1), {}),
    "calibration-errors": (calibration_errors, (1, 1), {}),
    "advice": (advice, (1, 1), {"top": "an integer", "at": "rank counts, comma-separated"}),
    "advice-answer": (advice_answer, (1, 1), {}),
    "advise-estimate": (advise_estimate, (1, 1), {}),
    "advise-estimate-check": (advise_estimate_check, (1, 1), {}),
    "advise-estimate-race": (advise_estimate_race, (1, 1), {}),
    "advise-estimate-whole": (advise_estimate_whole, (1, 1), {}),
    "advise-estimate-repeated": (advise_estimate_repeated, (1, 1), {}),
    "advice-brief": (advice_brief, (1, 1), {}),
    "advise-corpus": (advise_corpus, (1, 1), {}),
    "trace-summary": (trace_summary, (1, 1), {}),
    "start-with": (start_with, (2, 16), {}),
    "walkers-overhead": (walkers_overhead, (1, 1), {}),
    "exact-sum-cost": (exact_sum_cost, (1, 1), {}),
    "checkpoint-cost": (checkpoint_cost, (1, 1), {}),
    "checkpoint-forms": (checkpoint_forms, (1, 1), {}),
    "chain-order-measured": (chain_order_measured, (1, 1), {}),
    "chain-order-simulated": (chain_order_simulated, (3, 3), {}),
    "provenance-gaps": (provenance_gaps, (1, 4), {}),
    "runs-made": (runs_made, (1, 4), {}),
    "workless-merges": (workless_merges, (1, 1), {}),
    "sensitivity-answer": (sensitivity_answer, (1, 1), {}),
    "sensitivity-findings": (sensitivity_findings, (1, 1), {}),
    "closing-merges": (closing_merges, (1, 2), {}),
    "single-atom-calibration": (single_atom_calibration, (1, 1), {}),
    "model-against-chains": (model_against_chains, (2, 2), {}),
    "model-calibration": (model_calibration, (1, 1), {}),
    "pays-real-answer": (pays_real_answer, (1, 1), {}),
    "pays-real-findings": (pays_real_findings, (1, 1), {}),
    "large-findings": (large_findings, (2, 2), {}),
    "host-cost-note": (host_cost_note, (1, 1), {}),
    "cyclic-w2-note": (cyclic_w2_note, (2, 4), {"rerun": "a folder: the large stealmerge point simulated again"}),
    "hint-host-cost": (hint_host_cost, (2, 2), {"nprocs": "an integer"}),
    "host-time": (host_time, (1, 20), {}),
    "host-cpu": (host_cpu, (1, 20), {"nprocs": "integers separated by commas"}),
    "time-shift": (time_shift, (2, 4), {}),
    "killed-runs": (killed_runs, (1, 4), {}),
    "run-commits": (run_commits, (1, 12), {}),
    "table1-merge-rule": (table1_merge_rule, (2, 2), {"nprocs": "an integer"}),
}


def generate(name, args):
    """The Markdown text of table name from args (folders and options); InputError for an unknown name or bad
    arguments."""
    if name not in TABLES:
        raise InputError(f"unknown table {name} (allowed: {', '.join(sorted(TABLES))})")
    function, folders, options = TABLES[name]
    return function(Inputs(name, args, folders, options))
