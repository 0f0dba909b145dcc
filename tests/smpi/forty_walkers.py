#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A recorded trace for the simulation suite's part `forty` (tests/smpi/run_sim_suite.sh): WALKERS walkers, LONG_N
of them of LONG_ITEMS items and the rest of SHORT_ITEMS, items of about 10 ms each, speed-ups 1.9 at 2 ranks and
3.5 at 4, and six run lines (the recording's and five earlier ones). Printed on standard output.
Usage: forty_walkers.py [WALKERS LONG_N LONG_ITEMS SHORT_ITEMS] (default 40 4 2000 60)."""
import sys
walkers, long_n, long_items, short_items = (int(a) for a in sys.argv[1:5]) if len(sys.argv) > 4 else (40, 4, 2000, 60)
step = walkers // long_n
print("# run: ranks=%d groups=%d balancer=none seconds=%.1f" % (walkers, walkers, long_items * 0.01 * 1.02))
for s in (1.00, 0.98, 1.03, 1.01, 0.99):
    print("# earlier run: ranks=%d groups=%d balancer=none seconds=%.1f" % (walkers, walkers, long_items * 0.01 * s))
print("chain,item,ranks,seconds,speedup,group")
for c in range(walkers):
    n = long_items if c % step == 0 else short_items
    for i in range(n):
        print(f"{c},{i},1,{0.01 + 0.0001 * ((c * 7 + i * 13) % 11)},,{c}")
print("*,,2,,1.9,"); print("*,,4,,3.5,")
