#!/bin/sh
# What a gate's self-check costs, and what the gate says about an unchanged
# program: experiments/gate-loop.toml (30 forks x 12 pairs of a 10 ms shell
# loop, a 10 % gate) with the self-check and with gate.self_check = false,
# run alternately ROUNDS times (default 3) so that drift of the machine
# falls on both alike. Prints per run the wall time, the exit code, the
# verdict and the deciding interval's width against a fifth of the
# threshold, then the ratio of the median wall times (the self-check may
# add at most 0.6x: a ratio of 1.6 or less).
#
# With REMEASURE=1 it then re-runs experiments/gate-aa.toml and
# experiments/gate-stop.toml into reports/gate-aa and reports/gate-stop
# and prints their false alarm, false block and power with their bounds.
#
# Wall time: run it on a quiet machine (no build or test running), with a
# release build:  cargo build --release && sh experiments/gate-cost.sh
# TINY=1 runs everything at 2 forks x 6 pairs into a temporary folder, to
# check that the script works (its times mean nothing).
set -eu
RUNNER=${RUNNER:-target/release/runner}
ROUNDS=${ROUNDS:-3}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
SIZE=""
if [ "${TINY:-0}" = 1 ]; then
  SIZE="--set design.forks=2 --set design.pairs=6 --set design.warmup_pairs=0"
fi
i=1
while [ "$i" -le "$ROUNDS" ]; do
  for mode in self-check no-self-check; do
    case $mode in
      self-check) set -- ;;
      no-self-check) set -- --set gate.self_check=false ;;
    esac
    dir="$OUT/$mode-$i"
    start=$(date +%s.%N)
    # shellcheck disable=SC2086
    code=0
    "$RUNNER" exec experiments/gate-loop.toml --out "$dir" --quiet $SIZE "$@" > /dev/null || code=$?
    end=$(date +%s.%N)
    python3 - "$mode" "$start" "$end" "$code" "$dir/gate.json" >> "$OUT/times" <<'PY'
import json, sys
mode, start, end, code, path = sys.argv[1:6]
g = json.load(open(path))
lo, hi = g["ci_ns"]
width, fifth = hi - lo, g["threshold_ns"] / 5
print(f"{mode} {float(end) - float(start):.3f} {code} {g['verdict']} "
      f"{width / 1e3:.1f} {fifth / 1e3:.1f} {g['forks_needed']} {g['advice']}")
PY
    tail -n 1 "$OUT/times"
  done
  i=$((i + 1))
done
python3 - "$OUT/times" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
def med(mode):
    return statistics.median(float(r[1]) for r in rows if r[0] == mode)
on, off = med("self-check"), med("no-self-check")
print(f"median wall: self-check {on:.2f} s, without {off:.2f} s, ratio {on / off:.2f} (at most 1.6)")
for r in rows:
    if r[3] != "pass" and float(r[4]) < float(r[5]):
        print(f"NOT A PASS with an interval of {r[4]} us, under a fifth of the threshold ({r[5]} us): {' '.join(r)}")
PY
if [ "${REMEASURE:-0}" = 1 ]; then
  for name in gate-aa gate-stop; do
    if [ "${TINY:-0}" = 1 ]; then
      dir="$OUT/$name"
      # gate-stop's forks are design.stop's.
      case $name in
        gate-stop) set -- --set design.stop.max_forks=3 --set design.pairs=6 --set design.warmup_pairs=0 ;;
        *) set -- --set design.forks=2 --set design.pairs=6 --set design.warmup_pairs=0 ;;
      esac
    else
      dir="reports/$name"
      set --
    fi
    "$RUNNER" exec "experiments/$name.toml" --out "$dir" --quiet "$@" > /dev/null || true
    python3 - "$name" "$dir/gate.json" <<'PY'
import json, sys
name, g = sys.argv[1], json.load(open(sys.argv[2]))
def share(key):
    k, n = g[f"{key}_forks"]
    return f"{k} of {n}, at most {100 * g[f'{key}_upper_bound']:.1f} %"
print(f"{name}: {g['verdict']} (exit {g['exit_code']}, {g['reason']}); "
      f"false alarm {share('false_positive')}; false block {share('false_block')}; "
      f"power {100 * g['power']:.1f} % (computed from the deciding interval)")
PY
  done
fi
