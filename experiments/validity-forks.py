#!/usr/bin/env python3
"""Do runner's intervals over forks hold their level at every fork count?

Generates pairs with a known answer, analyses each data set with
`runner analyze`, and counts how often each interval holds the truth, at
2, 3, 5, 10 and 20 forks, 60 data sets per size:

- **effect**: treatment = baseline + 100 us on a 1 ms baseline; each
  fork's own effect is drawn from N(100 us, 50 us), so forks disagree by
  more than their own intervals; 30 measured pairs a fork, each run with
  noise of 30 us (normal) and a moment shared by the two runs of a pair
  (15 us). The truth: D = 100 us (the mean of the fork effects), and the
  speed ratio exp(E[ln(1 + e / 1 ms)]) = 1.0989 (the geometric mean the
  ratio's combination across forks estimates; 1.10 less half the
  variance of the log).
- **aa**: the same with a mean effect of 0 (forks still differ, by
  N(0, 50 us)): an interval that excludes 0 (D) or 1 (the ratio) is a
  false difference; a valid 95 % interval does that in about 3 of 60.
- **skewed**: the effect model with right-skewed runs (exponential noise of
  mean 30 us in each run) and forks at different speeds (each fork's
  baseline scaled by 1 + N(0, 5 %), its effect with it): what a real
  machine's runs look like. The truth per fork is its own ratio; the
  combined truth is their geometric mean over the population.

Usage (a release build; the output is the table of
docs/guide/statistics.md, "Intervals over few forks"):

    cargo build --release
    python3 experiments/validity-forks.py > experiments/validity-forks.txt

RUNNER (default target/release/runner), SETS (default 60) and SIZES
(default "2 3 5 10 20") change what runs. Counts, not timings: the load of
the machine does not change a figure; the seeds fix every data set.
"""

import json
import math
import os
import random
import subprocess
import sys
import tempfile

RUNNER = os.environ.get("RUNNER", "target/release/runner")
SETS = int(os.environ.get("SETS", "60"))
SIZES = [int(s) for s in os.environ.get("SIZES", "2 3 5 10 20").split()]
PAIRS = 30
BASE_US = 1000.0
EFFECT_US = 100.0
FORK_SD_US = 50.0
NOISE_US = 30.0
SHARED_US = 15.0
SPEED_SD = 0.05


def ratio_truth(mean_us):
    """exp(E[ln(1 + e / b)]) for e ~ N(mean, FORK_SD), by quadrature over
    e. A fork's speed scales its baseline and its effect alike, so it
    cancels from the fork's ratio."""
    n = 4001
    lo, hi = mean_us - 8 * FORK_SD_US, mean_us + 8 * FORK_SD_US
    step = (hi - lo) / (n - 1)
    total = weight = 0.0
    for i in range(n):
        e = lo + i * step
        w = math.exp(-0.5 * ((e - mean_us) / FORK_SD_US) ** 2)
        total += w * math.log1p(e / BASE_US)
        weight += w
    return math.exp(total / weight)


def generate(path, model, forks, rng):
    mean = 0.0 if model == "aa" else EFFECT_US
    with open(path, "w") as out:
        out.write("cell,fork,pair,first,baseline_ns,treatment_ns\n")
        for f in range(forks):
            effect = rng.gauss(mean, FORK_SD_US)
            speed = 1.0 + rng.gauss(0.0, SPEED_SD) if model == "skewed" else 1.0
            for p in range(PAIRS):
                shared = rng.gauss(0.0, SHARED_US)
                if model == "skewed":
                    # Exponential noise less its median, so each arm's
                    # median run stays on its fork's base.
                    med = NOISE_US * math.log(2.0)
                    n_b = rng.expovariate(1.0 / NOISE_US) - med
                    n_t = rng.expovariate(1.0 / NOISE_US) - med
                else:
                    n_b = rng.gauss(0.0, NOISE_US)
                    n_t = rng.gauss(0.0, NOISE_US)
                b = speed * (BASE_US + shared + n_b)
                t = speed * (BASE_US + effect + shared + n_t)
                first = "baseline" if rng.random() < 0.5 else "treatment"
                out.write(f"ab,{f},{p},{first},{round(b * 1000)},{round(t * 1000)}\n")


def analyse(csv, out, seed):
    subprocess.run(
        [RUNNER, "analyze", "--quiet", "--seed", str(seed), "--out", out, csv],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    with open(os.path.join(out, "analysis.json")) as f:
        return json.load(f)["cells"][0]


def main():
    truths = {
        "effect": (EFFECT_US * 1000, ratio_truth(EFFECT_US)),
        "aa": (0.0, 1.0),
        "skewed": (EFFECT_US * 1000, ratio_truth(EFFECT_US)),
    }
    runner = subprocess.run([RUNNER, "--version"], capture_output=True, text=True).stdout.strip()
    print(f"# python3 experiments/validity-forks.py: {runner}; {SETS} data sets per size,"
          f" {PAIRS} pairs a fork, fork effects N(mean, {FORK_SD_US:g} us)")
    print()
    print("| model | forks | D holds the truth | ratio holds the truth | D: mean half-width | ratio: mean half-width | unbounded |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for model in ("effect", "aa", "skewed"):
            d_truth, r_truth = truths[model]
            for forks in SIZES:
                d_hit = r_hit = unbounded = 0
                d_hw = []
                r_hw = []
                for s in range(SETS):
                    seed = 1_000_000 * forks + 1000 * ("effect", "aa", "skewed").index(model) + s
                    rng = random.Random(seed)
                    csv = os.path.join(tmp, "pairs.csv")
                    generate(csv, model, forks, rng)
                    cell = analyse(csv, os.path.join(tmp, f"out-{model}-{forks}-{s}"), seed)
                    e = cell["effect"]
                    if e.get("difference_ci_ns") is None or e.get("ratio_ci") is None:
                        unbounded += 1
                        continue
                    # D's own interval over forks (the calibration's), and
                    # the effect's ratio interval.
                    lo, hi = cell["over_forks"]["ci_ns"]
                    d_hit += lo <= d_truth <= hi
                    d_hw.append((hi - lo) / 2)
                    rlo, rhi = e["ratio_ci"]
                    r_hit += rlo <= r_truth <= rhi
                    r_hw.append((math.log(rhi) - math.log(rlo)) / 2)
                    # Each data set's folder is no longer needed.
                    subprocess.run(["rm", "-rf", os.path.join(tmp, f"out-{model}-{forks}-{s}")], check=True)
                mean = lambda v: sum(v) / len(v) if v else float("nan")
                print(f"| {model} | {forks} | {d_hit} of {SETS} | {r_hit} of {SETS} |"
                      f" {mean(d_hw) / 1000:.1f} us | {100 * mean(r_hw):.2f} % | {unbounded} |")
                sys.stdout.flush()


if __name__ == "__main__":
    main()
