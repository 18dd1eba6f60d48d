#!/usr/bin/env python3
"""`runner report` against the numpy reference (benches/numpy_report.py),
run alternately on copies of one run folder.

Usage: python3 benches/numpy_compare.py RUN_DIR [ROUNDS] [--runner PATH] [--minimal]

Copies RUN_DIR's run.json and pairs.csv into a temporary folder (the
committed folder is never written), then ROUNDS times (default 5) runs
`runner report COPY` and `python3 benches/numpy_report.py COPY`, one after
the other, so both see the same load. Times are wall-clock seconds of each
whole process (reading the folder included; runner also renders the report
and plots). Prints every round, the median of each, their ratio, numpy's
statistics-only median (its own timer, reading excluded), and the load
average before and after. --minimal is passed on to numpy_report.py (only
per-fork and hierarchical intervals: numpy does less than runner). RUNNER defaults to target/release/runner; build
it first (`cargo build --release`).
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def timed(argv, env=None):
    start = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True, env=env)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr.strip()}")
    return elapsed, done.stderr


def main():
    args = sys.argv[1:]
    runner = os.path.join(ROOT, "target", "release", "runner")
    if "--runner" in args:
        i = args.index("--runner")
        runner = args[i + 1]
        del args[i:i + 2]
    extra = ["--minimal"] if "--minimal" in args else []
    args = [a for a in args if a != "--minimal"]
    if not args or len(args) > 2:
        sys.exit(__doc__.strip().splitlines()[2])
    source, rounds = args[0], int(args[1]) if len(args) == 2 else 5
    if not os.path.exists(runner):
        sys.exit(f"{runner} does not exist: run `cargo build --release` first")
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, os.path.basename(os.path.normpath(source)))
        os.mkdir(copy)
        for f in ["run.json", "pairs.csv"]:
            shutil.copy(os.path.join(source, f), copy)
        print(f"folder {source}, {rounds} rounds{' (numpy --minimal)' if extra else ''}, "
              f"load before {os.getloadavg()}")
        ours, theirs, stats_only = [], [], []
        for r in range(rounds):
            t_runner, _ = timed([runner, "report", copy])
            t_numpy, err = timed([sys.executable, os.path.join(HERE, "numpy_report.py"), copy]
                                + extra)
            stats_only.append(float(err.split("statistics ")[1].split(" s")[0]))
            ours.append(t_runner)
            theirs.append(t_numpy)
            print(f"round {r + 1}: runner {t_runner:.3f} s, numpy {t_numpy:.3f} s "
                  f"(statistics {stats_only[-1]:.3f} s)")
        m_ours, m_theirs = statistics.median(ours), statistics.median(theirs)
        print(f"median: runner {m_ours:.3f} s, numpy {m_theirs:.3f} s "
              f"(statistics only {statistics.median(stats_only):.3f} s): "
              f"numpy / runner = {m_theirs / m_ours:.1f}x")
        print(f"load after {os.getloadavg()}")


if __name__ == "__main__":
    main()
