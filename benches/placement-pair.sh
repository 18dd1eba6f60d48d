#!/bin/sh
# Two runners on one machine, both on PostgreSQL: each run's workers and
# backends should be pinned to CPUs the other does not hold (or the run
# says why not), and an index comparison's ratio should stay within 15 %
# of the ratio the same run gives unpinned (`design.placement = "none"`).
#
# Per round (ROUNDS, default 3): experiments/index-pinned.toml alone and
# unpinned, alone with the default placement (same-core), then two copies
# of it started at once with the default placement. Prints, per run, the CPUs its forks' workers ran
# on, the backends' CPUs, any contention note, and the speed ratio
# (scan / index) with its interval; then each pinned ratio against the
# round's unpinned one and pinned-alone one: the first difference is
# the placement's own (where the worker and its backend run), the second
# what the other runner adds.
#
# Run it on a quiet machine (no build or test running), with a release
# build and PostgreSQL (RUNNER_DATABASE_URL, e.g. `source .ci/postgres.sh`):
#     cargo build --release && sh benches/placement-pair.sh > benches/placement-pair.txt
set -eu
RUNNER=${RUNNER:-target/release/runner}
ROUNDS=${ROUNDS:-3}
SPEC=experiments/index-pinned.toml
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
: "${RUNNER_DATABASE_URL:?set RUNNER_DATABASE_URL (source .ci/postgres.sh)}"
echo "# sh benches/placement-pair.sh: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname), $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg) before"

# One finished run's line: its CPUs, contention notes and ratio.
show() {
  python3 - "$1" "$2" <<'PY'
import json, sys
label, d = sys.argv[1], sys.argv[2]
run = json.load(open(f"{d}/run.json"))
cell = json.load(open(f"{d}/analysis.json"))["cells"][0]
workers, backends, notes = set(), set(), set()
for f in run["forks"]:
    p = f.get("placement") or {}
    for arm in (p.get("cpus") or {}).values():
        workers.update(c["cpu"] for c in arm)
    backends.update(c["cpu"] for c in p.get("backend_cpus") or [])
    if p.get("contention"):
        notes.add(str(p["contention"]))
e = cell["effect"]
speed = 1 / e["ratio"]
lo, hi = 1 / e["ratio_ci"][1], 1 / e["ratio_ci"][0]
print(f"{label:<18} workers on {sorted(workers)} backends on {sorted(backends)} "
      f"index {speed:.1f}x [{lo:.1f}, {hi:.1f}] faster"
      + (f"  contention: {'; '.join(sorted(notes))}" if notes else ""))
print(f"ratio {label} {speed}", file=sys.stderr)
PY
}

round=1
while [ "$round" -le "$ROUNDS" ]; do
  echo "# round $round"
  "$RUNNER" exec "$SPEC" --out "$OUT/u$round" --quiet --set design.placement=none > /dev/null
  show "unpinned alone" "$OUT/u$round" 2>> "$OUT/ratios"
  "$RUNNER" exec "$SPEC" --out "$OUT/p$round" --quiet > /dev/null
  show "pinned alone" "$OUT/p$round" 2>> "$OUT/ratios"
  "$RUNNER" exec "$SPEC" --out "$OUT/a$round" --quiet > "$OUT/a$round.out" 2> "$OUT/a$round.err" &
  first=$!
  "$RUNNER" exec "$SPEC" --out "$OUT/b$round" --quiet > "$OUT/b$round.out" 2> "$OUT/b$round.err" &
  second=$!
  wait "$first"
  wait "$second"
  show "pinned, first" "$OUT/a$round" 2>> "$OUT/ratios"
  show "pinned, second" "$OUT/b$round" 2>> "$OUT/ratios"
  grep -h "^note: placement" "$OUT/a$round.err" "$OUT/b$round.err" | sort -u || true
  python3 - "$OUT/ratios" <<'PY'
import sys
lines = [l.split() for l in open(sys.argv[1]) if l.startswith("ratio")]
r = {" ".join(l[1:-1]): float(l[-1]) for l in lines[-4:]}
u, p = r["unpinned alone"], r["pinned alone"]
print(f"pinned alone: {p:.1f}x against {u:.1f}x unpinned, {100 * (p / u - 1):+.1f} %")
for k in ("pinned, first", "pinned, second"):
    print(f"{k}: {r[k]:.1f}x against {u:.1f}x unpinned, {100 * (r[k] / u - 1):+.1f} % (the goal: within 15 %); "
          f"against {p:.1f}x pinned alone, {100 * (r[k] / p - 1):+.1f} %")
PY
  round=$((round + 1))
done
