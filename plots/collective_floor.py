# SPDX-License-Identifier: BSD-3-Clause
"""The floor of a `collective(i)` run: the earliest it can end under its merge rule when its exchanges and its
communicator creations cost nothing. Every exchange is an allreduce over all ranks, so it waits for the slowest
group's i items. The model follows balancers/src/collective.cpp (its exchanging_pays() predicts the same schedule,
with the costs): every group that still works does min(i, items left) items, each costing T / its size; then each
maximal run of finished groups merges with the first working group to its right, which keeps its chain. Finished
groups with nothing working to their right stop for good. Read by plots/fig2.py and plots/doc_tables/."""

# Runs whose floor this model gives: the rule every finished run merges (retire), one chain per group, items of
# one fixed cost (no noise), and a workload whose chain lengths are a formula of the group's leader.
WORKLOADS = ("cyclic",)


def chain_items(run):
    """Items of each initial group's chain, left to right, as kernel/src/workloads/cyclic.cpp gives them:
    scale * (leader mod period), one group of G ranks per leader 0, G, 2G, ..."""
    return [run["workload_scale"] * (leader % run["workload_period"]) for leader in range(0, run["nprocs"], run["G"])]


def applies(run):
    """Whether floor_s models run (a runs.csv row): a collective run under retire, one chain per group, no item
    noise, a workload of WORKLOADS, and groups of G ranks each."""
    numbers = [run.get(k) for k in ("nprocs", "G", "interval", "workload_scale", "workload_period")]
    return (run.get("balancer") == "collective" and (run.get("finished") or "retire") == "retire"
            and run.get("chains_per_group") in (None, "", 1) and not run.get("jitter_pct")
            and run.get("workload") in WORKLOADS and isinstance(run.get("T_ms"), (int, float))
            and all(isinstance(n, int) and n > 0 for n in numbers) and run["nprocs"] % run["G"] == 0)


def floor_s(run):
    """The floor in seconds of a runs.csv row that applies() accepts (ValueError otherwise): the schedule of its
    interval's exchanges and merges, each exchange as soon as the slowest group has worked its items, none of them
    costing anything."""
    if not applies(run):
        raise ValueError(f"no floor for run {run.get('run_id')}: only collective runs under retire, one chain per "
                         f"group, without item noise, on a {' or '.join(WORKLOADS)} workload")
    return schedule_s(chain_items(run), run["G"], run["T_ms"] / 1000, run["interval"])


def schedule_s(items, group_size, item_s, interval):
    """The end, in seconds, of chains of items (one per initial group of group_size ranks, left to right) under
    collective(interval) with free exchanges and merges; an item costs item_s * 1 rank / the group's size."""
    groups = [[group_size, n] for n in items]  # [ranks, items left] of each group, left to right
    t = 0.0
    while any(left for _, left in groups):
        # Every working group works its items; the exchange waits for the slowest of them.
        t += max(min(interval, left) * item_s / ranks for ranks, left in groups if left)
        for g in groups:
            g[1] -= min(interval, g[1])
        # Each run of finished groups joins the first working group to its right; a trailing run stops for good.
        merged, joining = [], 0
        for ranks, left in groups:
            if left:
                merged.append([ranks + joining, left])
                joining = 0
            else:
                joining += ranks
        groups = merged
    return t


def regroups(items, group_size, interval):
    """The group communicators each rank joins (the initial formation counted as one, as runs.csv's regroups
    columns count them) under collective(interval) by the merge rule of schedule_s, with no time at all: which groups
    merge after each exchange follows from the items left alone, so no platform enters. A list, rank by rank."""
    groups = [[list(range(i * group_size, (i + 1) * group_size)), n] for i, n in enumerate(items)]
    joined = [1] * (group_size * len(items))
    while any(left for _, left in groups):
        for g in groups:
            g[1] -= min(interval, g[1])
        merged, joining = [], []
        for ranks, left in groups:
            if left:
                # The finished groups to its left join it: each of their ranks and its own joins a new communicator.
                for rank in joining + ranks if joining else ():
                    joined[rank] += 1
                merged.append([joining + ranks, left])
                joining = []
            else:
                joining += ranks
        groups = merged
    return joined
