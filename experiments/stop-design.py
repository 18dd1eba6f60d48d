#!/usr/bin/env python3
"""How a sequential design's stopping interval was chosen: runner's spending
of the error rate over the looks against Lai's confidence sequence (the
rule before) and the fixed-n t interval (valid at one planned look only).

For fork estimates drawn from N(mu, 1) (mu in units of the forks' own
spread), looked at after every fork from min_forks to max_forks and
stopped at the first look whose interval excludes 0, it prints:

- each rule's half-width per standard error at 3, 4, 5, 10 and 20 forks;
- the share of cells that decide before max_forks, and the mean forks
  run, at mu = 0 (an A/A: every decision is a false positive), 1, 1.5, 2
  and 3, over 20000 simulated cells per design and mu.

Needs numpy and scipy (pip install numpy scipy); the seed is fixed, so the
output is the table in docs/guide/statistics.md ("Stopping when the answer
is known"):

    python3 experiments/stop-design.py
"""
import numpy as np
from scipy import stats

ALPHA = 0.05
FIRST_SHARE = 0.4  # crates/stats/src/spending.rs


def lai(n, c=0.1):
    k = 1 - (ALPHA ** 2 * c / (n + c)) ** (1 / n)
    room = n - k * (n + c)
    return np.sqrt(k * (n + c) * (n - 1) / room) if room > 0 else np.inf


def spending(n, first, last):
    if n == first:
        a = FIRST_SHARE * ALPHA if last > first else ALPHA
    else:
        total = sum(1 / np.sqrt(k) for k in range(1, last - first + 1))
        a = (1 - FIRST_SHARE) * ALPHA * (1 / np.sqrt(n - first)) / total
    return stats.t.ppf(1 - a / 2, n - 1)


def run(rule, mu, first, last, rng, cells=20000):
    x = rng.normal(mu, 1, size=(cells, last))
    stop = np.full(cells, last + 1)
    alive = np.ones(cells, bool)
    for n in range(first, last + 1):
        xs = x[:, :n]
        mean = xs.mean(1)
        se = xs.std(1, ddof=1) / np.sqrt(n)
        h = rule(n) * se
        decided = alive & ((mean - h > 0) | (mean + h < 0))
        stop[decided] = n
        alive &= ~decided
    return np.mean(stop <= last), np.mean(np.minimum(stop, last))


def main():
    rng = np.random.default_rng(20261206)
    print("| forks | runner, looks 3 to 10 | runner, looks 3 to 20 | Lai's sequence (c = 0.1) | fixed-n t (one planned look) |")
    print("|---:|---:|---:|---:|---:|")
    for n in [3, 4, 5, 10, 20]:
        short = f"{spending(n, 3, 10):.2f}" if n <= 10 else ""
        print(f"| {n} | {short} | {spending(n, 3, 20):.2f} | {lai(n):.2f} | {stats.t.ppf(1 - ALPHA / 2, n - 1):.2f} |")
    print()
    print("| looks | mu | runner: decided, mean forks | Lai: decided, mean forks |")
    print("|---|---:|---:|---:|")
    for first, last in [(3, 10), (3, 20)]:
        for mu in [0, 1, 1.5, 2, 3]:
            r = run(lambda n: spending(n, first, last), mu, first, last, rng)
            l = run(lai, mu, first, last, rng)
            print(f"| {first} to {last} | {mu:g} | {100 * r[0]:.1f} %, {r[1]:.2f} | {100 * l[0]:.1f} %, {l[1]:.2f} |")


if __name__ == "__main__":
    main()
