#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A trace of a shape the estimate had not seen, written beside this script (the same file every time):
bending-24.csv, 24 walkers of 30 to 60 items, 40 to 80 ms each, whose speed-up bends: measured three times a size
at 2, 4 and 8 ranks, rising to 4 and falling at 8; three recorded runs at 24 ranks under none. The other new shape,
forty-walkers.csv (40 walkers, 4 of 2000 items among 36 of 60), is the simulation suite's:
tests/smpi/forty_walkers.py > docs/notes/advise-estimate/forty-walkers.csv

    docs/notes/advise-estimate/make_shapes.py"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def write(name, runs, walkers, items, cost, speedups):
    """runs: (tag, seconds) of the run lines; items[w], cost(w, i) in s; speedups: [(m, [values])]."""
    with open(os.path.join(HERE, name), "w", encoding="utf-8") as f:
        for tag, seconds in runs:
            f.write(f"# {tag}: ranks={walkers} groups={walkers} balancer=none seconds={seconds:.3f}\n")
        f.write("chain,item,ranks,seconds,speedup,group\n")
        for w in range(walkers):
            for i in range(items[w]):
                f.write(f"{w},{i},1,{cost(w, i):.4f},,{w}\n")
        for m, ups in speedups:
            for up in ups:
                f.write(f"*,,{m},,{up},\n")


def bending():
    items = [30 + (w * 7) % 31 for w in range(24)]
    cost = lambda w, i: 0.04 + 0.004 * ((w * 5 + i * 3) % 11)
    longest = max(sum(cost(w, i) for i in range(n)) for w, n in enumerate(items))
    runs = [("run", longest), ("earlier run", 1.03 * longest), ("earlier run", 0.98 * longest)]
    write("bending-24.csv", runs, 24, items, cost, [(2, [1.80, 1.85, 1.75]), (4, [3.0, 3.1, 2.9]),
                                                   (8, [2.6, 2.7, 2.5])])


if __name__ == "__main__":
    bending()
