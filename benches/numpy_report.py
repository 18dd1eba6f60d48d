#!/usr/bin/env python3
"""A speed reference for `runner report`: the resampled statistics of every
cell of a run folder, computed independently with vectorized numpy.

Usage: python3 benches/numpy_report.py RUN_DIR [--json] [--minimal]

Reads RUN_DIR/run.json (resamples, confidence, ordering, master seed) and
RUN_DIR/pairs.csv, and computes for each cell, over its measured pairs, with
D = treatment_ns - baseline_ns and `resamples` percentile-bootstrap
resamples (quantiles by numpy's default "linear" method):

- per fork: the median of D and its percentile bootstrap interval
  (resample the fork's pairs with replacement);
- pooled: the median of all D of the cell and its percentile bootstrap
  interval (pairs pooled, treated as independent);
- hierarchical: the median of D pooled and a two-level bootstrap (resample
  forks with replacement, then each chosen fork's pairs);
- order (paired-random only): median D with the treatment first minus
  median D with it second, two-level bootstrap (forks, then each fork's two
  groups on their own), forks with an empty group left out;
- carry-over: median baseline_ns of measured baselines that ran first in
  their pair after a treatment run minus those after a baseline run, the
  same two-level bootstrap.

--minimal computes only the per-fork intervals and the hierarchical one:
the least a numpy analysis of a run must do, so that numpy_compare.py
can set runner against the fastest fair rival as well as the full one.

runner computes the per-fork and pooled intervals in closed form (the
exact limit of this bootstrap) and resamples only the nested ones; this
script resamples them all, as an analysis without that shortcut would.
Nothing is imported from runner. The random streams differ from runner's,
so intervals agree only up to Monte Carlo error; this is a timing
reference, not a correctness one (that is tests/fixtures/reference.py).
Prints one line per cell, or the whole result as JSON with --json, and on
stderr the seconds spent reading the folder and computing the statistics.
"""
import csv
import json
import os
import sys
import time

import numpy as np

# Values gathered per block of resamples: bounds memory on large cells.
BLOCK_VALUES = 4_000_000


def load(run_dir):
    with open(os.path.join(run_dir, "run.json")) as f:
        run = json.load(f)
    exp = run["spec"]["experiment"]
    settings = {
        "resamples": int(exp["analysis"]["resamples"]),
        "confidence": float(exp["analysis"]["confidence"]),
        "ordering": exp["design"]["ordering"],
        "seed": int(run["seeds"]["master"]),
        "cells": [c["cell"] for c in run["cells"]],
    }
    with open(os.path.join(run_dir, "pairs.csv")) as f:
        reader = csv.reader(f)
        header = next(reader)
        rows = list(reader)
    col = {name: i for i, name in enumerate(header)}
    table = np.array(rows, dtype=object) if rows else np.empty((0, len(header)), object)

    def ints(name):
        return table[:, col[name]].astype(np.int64)

    data = {name: ints(name) for name in
            ["cell", "fork", "pair", "baseline_ns", "treatment_ns",
             "baseline_at_ns", "treatment_at_ns"]}
    data["measured"] = table[:, col["phase"]] == "measure"
    data["treatment_first"] = table[:, col["first"]] == "treatment"
    return settings, data


def interval(stats, confidence):
    lo, hi = np.quantile(stats, [(1 - confidence) / 2, (1 + confidence) / 2])
    return [float(lo), float(hi)]


def blocks(resamples, per_resample):
    step = max(1, BLOCK_VALUES // max(1, per_resample))
    for start in range(0, resamples, step):
        yield min(step, resamples - start)


def iid_medians(rng, values, resamples):
    """Medians of `resamples` resamples of `values` with replacement."""
    n = len(values)
    out = []
    for b in blocks(resamples, n):
        idx = rng.integers(0, n, size=(b, n))
        out.append(np.median(values[idx], axis=1, overwrite_input=True))
    return np.concatenate(out)


def pooled_medians(samples, counts):
    """Median of each row of `samples` over its first counts[row] entries
    (the rest padded with +inf)."""
    s = np.sort(samples, axis=1)
    rows = np.arange(len(s))
    return (s[rows, (counts - 1) // 2] + s[rows, counts // 2]) / 2


def hierarchical_medians(rng, groups, resamples):
    """Two-level bootstrap of the median of all groups pooled."""
    k = len(groups)
    sizes = np.array([len(g) for g in groups])
    if (sizes == sizes[0]).all():
        stacked = np.stack(groups)
        n = sizes[0]
        out = []
        for b in blocks(resamples, k * n):
            forks = rng.integers(0, k, size=(b, k))
            idx = rng.integers(0, n, size=(b, k, n))
            values = stacked[forks[:, :, None], idx].reshape(b, k * n)
            out.append(np.median(values, axis=1, overwrite_input=True))
        return np.concatenate(out)
    return hierarchical_unequal(rng, groups, resamples)


def padded(groups):
    width = max(len(g) for g in groups)
    table = np.full((len(groups), width), np.inf)
    for i, g in enumerate(groups):
        table[i, :len(g)] = g
    return table, np.array([len(g) for g in groups]), width


def draw_unequal(rng, table, sizes, width, forks):
    """Each chosen fork's values resampled with replacement, padded with
    +inf to the widest fork; returns the rows and their real counts."""
    b, k = forks.shape
    n = sizes[forks]
    idx = (rng.random((b, k, width)) * n[:, :, None]).astype(np.int64)
    values = table[forks[:, :, None], idx]
    values[np.arange(width)[None, None, :] >= n[:, :, None]] = np.inf
    return values.reshape(b, k * width), n.sum(axis=1)


def hierarchical_unequal(rng, groups, resamples):
    table, sizes, width = padded(groups)
    k = len(groups)
    out = []
    for b in blocks(resamples, k * width):
        forks = rng.integers(0, k, size=(b, k))
        values, counts = draw_unequal(rng, table, sizes, width, forks)
        out.append(pooled_medians(values, counts))
    return np.concatenate(out)


def contrast(rng, per_fork, resamples, confidence):
    """median(all a) - median(all b) over forks with both groups, and its
    two-level bootstrap interval (a chosen fork brings both groups)."""
    used = [(a, b) for a, b in per_fork if len(a) and len(b)]
    if not used:
        return None
    ta, sa, wa = padded([a for a, _ in used])
    tb, sb, wb = padded([b for _, b in used])
    k = len(used)
    out = []
    for b in blocks(resamples, k * (wa + wb)):
        forks = rng.integers(0, k, size=(b, k))
        va, ca = draw_unequal(rng, ta, sa, wa, forks)
        vb, cb = draw_unequal(rng, tb, sb, wb, forks)
        out.append(pooled_medians(va, ca) - pooled_medians(vb, cb))
    a = np.concatenate([a for a, _ in used])
    b = np.concatenate([b for _, b in used])
    return {"difference_ns": float(np.median(a) - np.median(b)),
            "ci_ns": interval(np.concatenate(out), confidence)}


def after_groups(rows, fork_rows):
    """Per fork: baseline_ns of measured first-in-pair baselines after a
    treatment run, and after a baseline run, in run order."""
    out = []
    for r in fork_rows:
        at = np.concatenate([rows["baseline_at_ns"][r], rows["treatment_at_ns"][r]])
        pair = np.concatenate([rows["pair"][r], rows["pair"][r]])
        measured = np.concatenate([rows["measured"][r], rows["measured"][r]])
        tfirst = rows["treatment_first"][r]
        second = np.concatenate([tfirst, ~tfirst])
        is_baseline = np.arange(2 * len(r)) < len(r)
        order = np.lexsort((second, pair, measured, at))
        arm_b = is_baseline[order]
        row = np.concatenate([r, r])[order]
        cur = arm_b[1:] & measured[order][1:] & ~rows["treatment_first"][row[1:]]
        prev_t = ~arm_b[:-1]
        base = rows["baseline_ns"][row[1:]]
        out.append((base[cur & prev_t].astype(np.float64),
                    base[cur & ~prev_t].astype(np.float64)))
    return out


def analyse(settings, rows, minimal=False):
    rng = np.random.default_rng(settings["seed"])
    resamples, confidence = settings["resamples"], settings["confidence"]
    result = []
    for cell in settings["cells"]:
        in_cell = np.flatnonzero(rows["cell"] == cell)
        forks = np.unique(rows["fork"][in_cell])
        fork_rows = [in_cell[rows["fork"][in_cell] == f] for f in forks]
        measured = [r[rows["measured"][r]] for r in fork_rows]
        measured = [m[np.argsort(rows["pair"][m], kind="stable")] for m in measured]
        diffs = [(rows["treatment_ns"][m] - rows["baseline_ns"][m]).astype(np.float64)
                 for m in measured]
        per_fork = []
        for d in diffs:
            per_fork.append({"median_ns": float(np.median(d)),
                             "ci_ns": interval(iid_medians(rng, d, resamples), confidence)})
        pooled = np.concatenate(diffs)
        out = {
            "cell": int(cell),
            "forks": per_fork,
            "hierarchical": {"median_ns": float(np.median(pooled)),
                             "ci_ns": interval(hierarchical_medians(rng, diffs, resamples),
                                               confidence)},
        }
        if minimal:
            result.append(out)
            continue
        out["pooled"] = {"median_ns": float(np.median(pooled)),
                         "ci_ns": interval(iid_medians(rng, pooled, resamples), confidence)}
        if settings["ordering"] == "paired-random":
            first = [rows["treatment_first"][m] for m in measured]
            out["order"] = contrast(rng, [(d[f], d[~f]) for d, f in zip(diffs, first)],
                                    resamples, confidence)
        out["carry_over"] = contrast(rng, after_groups(rows, fork_rows), resamples, confidence)
        result.append(out)
    return result


def main():
    args = [a for a in sys.argv[1:] if a not in ("--json", "--minimal")]
    if len(args) != 1:
        sys.exit("usage: numpy_report.py RUN_DIR [--json] [--minimal]")
    start = time.perf_counter()
    settings, rows = load(args[0])
    loaded = time.perf_counter()
    result = analyse(settings, rows, "--minimal" in sys.argv)
    done = time.perf_counter()
    print(f"numpy_report: load {loaded - start:.3f} s, statistics {done - loaded:.3f} s",
          file=sys.stderr)
    if "--json" in sys.argv:
        json.dump(result, sys.stdout, indent=1)
        print()
        return
    for c in result:
        h = c["hierarchical"]
        print(f"cell {c['cell']}: {len(c['forks'])} forks, median "
              f"{h['median_ns']} ns, hierarchical CI {h['ci_ns']}")


if __name__ == "__main__":
    main()
