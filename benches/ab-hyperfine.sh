#!/bin/sh
# One line against hyperfine: `runner ab` and `hyperfine -N --warmup 3` on
# the same pair of commands and the same input, one after the other,
# ROUNDS times (default 3) so that drift of the machine falls on both
# alike. The pair is gzip -1 against gzip -2 on 1 MB of text (the numbers 1
# to 150,000, one a line); gzip -2 takes a few percent longer.
#
# Prints one line per run: the tool, its wall time, what it ran and its
# answer; tests/suite/readme.rs turns the committed output into the table of
# docs/guide/performance.md ("One line against hyperfine").
#
# Wall time: run it on a quiet machine (no build or test running), with a
# release build and hyperfine 1.20.0:
#
#     cargo build --release && cargo install hyperfine --version 1.20.0
#     sh benches/ab-hyperfine.sh > benches/ab-hyperfine.txt
#     UPDATE_README=1 cargo test --test suite readme::
#
# LINES=1000 ROUNDS=1 checks the script itself in a few seconds (on a
# file too small to say anything about the tools).
set -eu
RUNNER=$(realpath "${RUNNER:-target/release/runner}")
HYPERFINE=${HYPERFINE:-hyperfine}
ROUNDS=${ROUNDS:-3}
LINES=${LINES:-150000}
NAME=gzip-ab
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
cd "$OUT"
mkdir experiments
seq 1 "$LINES" > input.txt
now() { date +%s.%N; }
echo "# sh benches/ab-hyperfine.sh: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n), $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg) before; input $(wc -c < input.txt) bytes; $("$RUNNER" --version); $("$HYPERFINE" --version)"
i=1
while [ "$i" -le "$ROUNDS" ]; do
  start=$(now)
  "$RUNNER" ab --quiet --name "$NAME" --input input.txt 'gzip -1 -c' 'gzip -2 -c' > /dev/null
  end=$(now)
  python3 - "$start" "$end" "reports/$NAME/analysis.json" <<'PY'
import json, sys
start, end, path = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
cell = json.load(open(path))["cells"][0]
e = cell["effect"]
lo, hi = e["ratio_ci"]
said = {"no-difference": "no difference resolved"}.get(e["direction"], e["direction"])
print(f"runner    wall {end - start:6.2f} s  forks {cell['stop']['forks_run']:2}  runs {2 * cell['n']:4}  "
      f"gzip -2 {said}, ratio {e['ratio']:.3f} [{lo:.3f}, {hi:.3f}]")
PY
  start=$(now)
  "$HYPERFINE" -N --warmup 3 --style none --input input.txt --export-json hyperfine.json \
    'gzip -1 -c' 'gzip -2 -c' > /dev/null
  end=$(now)
  python3 - "$start" "$end" hyperfine.json <<'PY'
import json, math, sys
start, end, path = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
a, b = json.load(open(path))["results"]
# hyperfine's own relative speed: the ratio of means, its error propagated
# from both standard deviations (relative_speed.rs in hyperfine's source).
ratio = b["mean"] / a["mean"]
sd = ratio * math.sqrt((a["stddev"] / a["mean"]) ** 2 + (b["stddev"] / b["mean"]) ** 2)
print(f"hyperfine wall {end - start:6.2f} s  forks  1  runs {len(a['times']) + len(b['times']):4}  "
      f"gzip -2 ratio {ratio:.3f} +- {sd:.3f}")
PY
  i=$((i + 1))
done
