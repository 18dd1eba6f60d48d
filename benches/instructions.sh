#!/bin/sh
# Counts beside time (docs/guide/instructions.md), measured where only a
# quiet machine can measure them. Two parts:
#
# 1. Wall time: experiments/instructions-gate.toml (two awk loops a
#    twentieth apart behind a 2 % gate) as written, a gate on instructions
#    counted alone, and with --set 'design.measure=["time"]' --set
#    gate.metric=time, the same gate on time; alternately, ROUNDS times
#    (default 3), so that drift of the machine falls on both alike. Prints
#    each run's wall time, exit code and verdict, then the ratio of the
#    median wall times: the gate on counts should answer in at most 3
#    times the gate on time's.
#
# 2. Load: the gate on counts, quiet and with a CPU hog pinned to the
#    worker's CPU (`taskset -c CPU sh -c 'while :; do :; done'`; the CPU
#    is the one `runner check` names for the worker), on the pair a
#    twentieth apart and on an unchanged pair (both arms the shorter
#    loop). Prints the instructions' ratio and interval and the verdict
#    of each: the ratio should move by less than 0.2 % between quiet and
#    loaded, and the verdicts should be the same (exit 3, a regression,
#    for the twentieth; exit 0, a pass, for no change).
#
# Run it on a quiet machine (no build or test running), with a release
# build and valgrind installed:
#     cargo build --release && sh benches/instructions.sh
# TINY=1 runs each gate once at min_forks = max_forks = 3, to check that
# the script works (its times mean nothing); PARTS=1 or PARTS=2 runs one
# part.
set -eu
RUNNER=${RUNNER:-target/release/runner}
ROUNDS=${ROUNDS:-3}
SPEC=experiments/instructions-gate.toml
OUT=$(mktemp -d)
HOG=""
cleanup() {
  if [ -n "$HOG" ]; then kill "$HOG" 2>/dev/null || true; fi
  rm -rf "$OUT"
}
trap cleanup EXIT
if [ "${TINY:-0}" = 1 ]; then
  ROUNDS=1
  set -- --set design.stop.max_forks=3
else
  set --
fi
command -v valgrind > /dev/null || { echo "instructions.sh: valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }

# One run: wall seconds, exit code, and the gate's verdict and judged
# interval from gate.json, on one line.
run() {
  dir=$1
  shift
  start=$(date +%s.%N)
  code=0
  "$RUNNER" exec "$SPEC" --out "$dir" --quiet "$@" > /dev/null || code=$?
  end=$(date +%s.%N)
  python3 - "$dir" "$start" "$end" "$code" <<'PY'
import json, sys
d, start, end, code = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
try:
    g = json.load(open(f"{d}/gate.json"))
    a = json.load(open(f"{d}/analysis.json"))
    c = a["cells"][0].get("instructions")
    counted = "" if c is None else " instructions ratio %.5f [%.5f, %.5f]" % (
        c["effect"]["ratio"], *c["effect"]["ratio_ci"])
    said = f"{g['verdict']} ({g['judges']} {g['estimate']:.5f} [{g['ci'][0]:.5f}, {g['ci'][1]:.5f}]){counted}"
except (OSError, KeyError, ValueError) as e:
    said = f"no verdict ({e})"
print(f"{end - start:.2f} s  exit {code}  {said}")
PY
}

PARTS=${PARTS:-1 2}
case " $PARTS " in *" 1 "*) ;; *) ROUNDS=0 ;; esac
echo "== 1. a gate on counts against the same gate on time ($ROUNDS rounds, alternately)"
i=1
: > "$OUT/times"
while [ "$i" -le "$ROUNDS" ]; do
  for mode in counts time; do
    case $mode in
      counts) line=$(run "$OUT/counts-$i" "$@") ;;
      time) line=$(run "$OUT/time-$i" "$@" --set 'design.measure=["time"]' --set gate.metric=time) ;;
    esac
    echo "$mode round $i: $line"
    echo "$mode ${line%% s*}" >> "$OUT/times"
  done
  i=$((i + 1))
done
[ "$ROUNDS" -gt 0 ] && python3 - "$OUT/times" <<'PY'
import statistics, sys
t = {"counts": [], "time": []}
for line in open(sys.argv[1]):
    mode, s = line.split()
    t[mode].append(float(s))
c, w = statistics.median(t["counts"]), statistics.median(t["time"])
print(f"median wall time: counts {c:.2f} s, time {w:.2f} s; counts / time = {c / w:.2f} (the claim: at most 3)")
PY

case " $PARTS " in *" 2 "*) ;; *) exit 0 ;; esac
echo "== 2. the gate on counts, quiet and with a CPU hog on the worker's CPU"
cpu=$("$RUNNER" check "$SPEC" | sed -n 's/.*worker on CPU \([0-9][0-9]*\).*/\1/p' | head -n 1)
if [ -z "$cpu" ]; then
  echo "instructions.sh: runner check names no worker CPU (placement none?); set design.placement" >&2
  exit 2
fi
unchanged='strategies.longer.argv=["awk", "BEGIN{for(i=0;i<100000;i++)s+=i}"]'
for load in quiet loaded; do
  if [ "$load" = loaded ]; then
    taskset -c "$cpu" sh -c 'while :; do :; done' &
    HOG=$!
  fi
  echo "$load, a twentieth apart: $(run "$OUT/$load-changed" "$@")"
  echo "$load, unchanged:         $(run "$OUT/$load-unchanged" "$@" --set "$unchanged")"
  if [ -n "$HOG" ]; then
    kill "$HOG"
    wait "$HOG" 2>/dev/null || true
    HOG=""
  fi
done
python3 - "$OUT" <<'PY'
import json, sys
out = sys.argv[1]
for pair in ["changed", "unchanged"]:
    r = [json.load(open(f"{out}/{load}-{pair}/analysis.json"))["cells"][0]["instructions"]["effect"]["ratio"]
         for load in ["quiet", "loaded"]]
    print(f"{pair}: instructions ratio quiet {r[0]:.5f}, loaded {r[1]:.5f}, moved {abs(r[1] / r[0] - 1) * 100:.3f} % (the claim: under 0.2 %)")
PY
