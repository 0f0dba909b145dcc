#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes tune-many.csv beside this file: the third tuning trace of advise's estimate, with many walkers where the
other two have 8. 64 walkers of 10 to 40 items of 20 to 40 ms (1577 items in all), speed-ups 1.7 at 2 ranks and
2.8 at 4 for every walker. Made up, deterministic, and used for nothing but the fit (fit.py):

    docs/notes/advise-estimate/tuning/make_many.py"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))
WALKERS = 64


def main():
    rows = ["chain,item,ranks,seconds,speedup"]
    for c in range(WALKERS):
        for i in range(10 + (7 * c) % 31):
            rows.append(f"{c},{i},1,{0.02 + 0.01 * ((c + i) % 3):.2f},")
    rows += ["*,,2,,1.7", "*,,4,,2.8"]
    with open(os.path.join(HERE, "tune-many.csv"), "w", encoding="utf-8") as f:
        f.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
