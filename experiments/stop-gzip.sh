#!/bin/sh
# Wall time to an answer: experiments/stop-gzip.toml as a sequential design
# (stops once decided, 3 to 10 forks) and as the fixed 10-fork design
# (min_forks = 10), run alternately ROUNDS times (default 3) so that drift
# of the machine falls on both alike. Prints one line per run: the design,
# its wall time, the forks it ran and its answer; the fixed runs' answers
# are the reference the sequential intervals should hold.
#
# Wall time: run it on a quiet machine (no build or test running), with a
# release build:  cargo build --release && sh experiments/stop-gzip.sh
set -eu
RUNNER=${RUNNER:-target/release/runner}
ROUNDS=${ROUNDS:-3}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
i=1
while [ "$i" -le "$ROUNDS" ]; do
  for design in sequential fixed; do
    case $design in
      sequential) set -- ;;
      fixed) set -- --set design.stop.min_forks=10 ;;
    esac
    dir="$OUT/$design-$i"
    start=$(date +%s.%N)
    "$RUNNER" exec experiments/stop-gzip.toml --out "$dir" --quiet "$@" > /dev/null
    end=$(date +%s.%N)
    python3 - "$design" "$start" "$end" "$dir/analysis.json" <<'PY'
import json, sys
design, start, end, path = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
cell = json.load(open(path))["cells"][0]
s = cell["stop"]
lo, hi = s["interval_ns"]
print(f"{design:10} wall {end - start:6.2f} s  forks {s['forks_run']:2}  "
      f"mean of fork estimates {s['estimate_ns'] / 1e3:8.1f} us "
      f"[{lo / 1e3:.1f}, {hi / 1e3:.1f}]  hierarchical {cell['hierarchical']['median_ns'] / 1e3:.1f} us")
PY
  done
  i=$((i + 1))
done
