# SPDX-License-Identifier: BSD-3-Clause
"""How the plot and table scripts summarise repeated timings: the median, and the 95 % confidence interval of the
median by order statistics (nonparametric, after Hoefler and Belli, SC15), which holds whatever the distribution
of the repetitions. Timings of one set-up are rarely normal (a run is delayed by others, never sped up), so a mean
with a standard deviation would describe a shape the data do not have.

The rule (the C++ side of mcmclb applies the same one): of n sorted samples x(1) <= ... <= x(n), the interval is
[x(l), x(n+1-l)] with l the largest integer >= 1 for which P(Binomial(n, 1/2) <= l - 1) = sum_{i<l} C(n,i) / 2^n is
at most 0.025; each tail then holds at most 2.5 %, so the interval covers the median with at least 95 %. With
n < 6 not even l = 1 qualifies (1 / 2^5 > 0.025): such a set-up has no interval, and says "too few repetitions".

Simulated (SimGrid) runs are deterministic: their repetitions repeat one number, so an interval would claim a
precision that only says the simulator is repeatable. They are said to be simulated and get no interval."""
from math import comb

# 2.5 % per tail, kept as the fraction 1/40 so that the rule is decided in exact integer arithmetic: a float sum
# of binomial terms could land on the wrong side of the boundary.
TAIL_NUMERATOR, TAIL_DENOMINATOR = 1, 40
SIMULATED = "simulated (deterministic)"


def median(values):
    """The median of values (the mean of the two middle ones for an even count)."""
    s = sorted(values)
    n = len(s)
    if n == 0:
        raise ValueError("median of no values")
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def ci_rank(n):
    """l, the 1-based rank of the lower end of the 95 % interval of the median of n samples (the upper end is
    n + 1 - l), or None when n is too small for any interval (n < 6)."""
    rank, tail = None, 0
    for candidate in range(1, n // 2 + 1):
        tail += comb(n, candidate - 1)
        if tail * TAIL_DENOMINATOR > TAIL_NUMERATOR * 2 ** n:
            break
        rank = candidate
    return rank


def median_ci(values):
    """(lower, upper) of the 95 % interval of the median of values, or None for fewer than 6 values."""
    s = sorted(values)
    rank = ci_rank(len(s))
    return None if rank is None else (s[rank - 1], s[len(s) - rank])


class Summary:
    """What the scripts print of one set-up's repetitions: n, median, min, max, and the interval (lo, hi) or the
    reason there is none (note)."""

    def __init__(self, values, simulated=False):
        values = sorted(values)
        self.n = len(values)
        self.median = median(values)
        self.min, self.max = values[0], values[-1]
        self.simulated = simulated
        interval = None if simulated else median_ci(values)
        self.lo, self.hi = interval if interval else (None, None)

    @property
    def has_interval(self):
        return self.lo is not None

    @property
    def note(self):
        """Why there is no interval, in words; None when there is one."""
        if self.simulated:
            return SIMULATED
        return None if self.has_interval else f"too few repetitions (n={self.n})"

    def ci_text(self, fmt="{:.3f}"):
        """The interval as "[lo-hi]", or the reason there is none."""
        return f"[{fmt.format(self.lo)}-{fmt.format(self.hi)}]" if self.has_interval else self.note

    def range_text(self, fmt="{:.3f}"):
        """min-max, as "[min-max]"."""
        return f"[{fmt.format(self.min)}-{fmt.format(self.max)}]"


CI_HEADING = "95 % CI of the median"
CAPTION = ("95 % CI: nonparametric confidence interval of the median by order statistics (needs n >= 6); "
           "simulated runs are deterministic and have none")


def error_bars(ax, xs, summaries, color):
    """Draws each summary's interval at xs as an error bar around its median (nothing where it has none), and its
    min-max as a thin line, both in color."""
    with_ci = [(x, s) for x, s in zip(xs, summaries) if s.has_interval]
    colour = color
    ax.vlines(xs, [s.min for s in summaries], [s.max for s in summaries], colors=colour, linewidth=0.8, alpha=0.4)
    if with_ci:
        ax.errorbar([x for x, _ in with_ci], [s.median for _, s in with_ci],
                    yerr=[[s.median - s.lo for _, s in with_ci], [s.hi - s.median for _, s in with_ci]],
                    fmt="none", capsize=3, ecolor=colour, elinewidth=1.2)
