#!/bin/sh
# One line against hyperfine: `runner ab` and hyperfine 1.20 with its
# defaults (-N: no shell, as runner runs a command) on the same pair of
# commands and the same input, one after the other, ROUNDS times (default
# 3) so that drift of the machine falls on both alike. Two pairs:
#
#   short: gzip -1 against gzip -2 on 1 MB of text (the numbers 1 to
#          150,000, one a line): runs of a few ms, gzip -2 a few per cent
#          longer;
#   long:  gzip -1 against gzip -6 on about 6 MB of log lines: runs of
#          about 100 and 300 ms.
#
# Prints, per pair, a `# pair:` line and one line per run: the tool, its
# wall time, its forks and runs, and its answer (runner's ratio with its
# 95 % stopping interval; hyperfine's ratio of means with the error it
# propagates from both standard deviations). runner's line also has its
# own forecast for the forks that ran (from the `estimate:` line exec
# prints before its first fork) against the time from that line to the
# end, and the warm-up and measured pairs its trial runs chose. tests/suite/readme.rs turns
# the committed output into the table of docs/guide/performance.md ("One
# line against hyperfine").
#
# Wall time: run it on a quiet machine (no build or test running), with a
# release build and hyperfine 1.20.0:
#
#     cargo build --release && cargo install hyperfine --version 1.20.0
#     sh benches/ab-hyperfine.sh > benches/ab-hyperfine.txt
#     UPDATE_README=1 cargo test --test suite readme::
#
# PAIRS=short or PAIRS=long runs one pair; LINES=1000 LOG_LINES=1000
# ROUNDS=1 checks the script itself in a few seconds (on files too small to
# say anything about the tools).
set -eu
RUNNER=$(realpath "${RUNNER:-target/release/runner}")
HYPERFINE=${HYPERFINE:-hyperfine}
ROUNDS=${ROUNDS:-3}
PAIRS=${PAIRS:-short long}
LINES=${LINES:-150000}
LOG_LINES=${LOG_LINES:-65000}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
cd "$OUT"
mkdir experiments
seq 1 "$LINES" > short.txt
# Log lines of a made-up service: timestamps, hosts, paths and durations
# vary, so gzip's levels differ as on a real log (seq's digits compress
# alike at every level).
awk -v n="$LOG_LINES" 'BEGIN {
  srand(7);
  split("GET POST PUT DELETE", verb, " ");
  split("/api/users /api/orders /static/app.js /health /api/search?q=gzip /login", path, " ");
  for (i = 1; i <= n; i++) {
    t = 1733400000 + int(i / 3);
    printf "2026-12-05T%02d:%02d:%02dZ web-%02d app[%d]: %s %s status=%d bytes=%d took=%.1fms id=%08x\n",
      int(t / 3600) % 24, int(t / 60) % 60, t % 60, int(rand() * 12), 1000 + int(rand() * 9000),
      verb[1 + int(rand() * 4)], path[1 + int(rand() * 6)], (rand() < 0.97 ? 200 : 500),
      int(rand() * 50000), rand() * 300, int(rand() * 4294967295);
  }
}' > long.txt
now() { date +%s.%N; }
echo "# sh benches/ab-hyperfine.sh: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n), $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg) before; runner $("$RUNNER" --version | cut -d' ' -f2); hyperfine $("$HYPERFINE" --version | cut -d' ' -f2); hyperfine options: -N"
for pair in $PAIRS; do
  case "$pair" in
    short) base='gzip -1 -c'; treat='gzip -2 -c' ;;
    long) base='gzip -1 -c'; treat='gzip -6 -c' ;;
    *) echo "PAIRS: short or long, not $pair" >&2; exit 2 ;;
  esac
  name="gzip-$pair"
  echo "# pair: $base vs $treat on $(wc -c < "$pair.txt") bytes"
  i=1
  while [ "$i" -le "$ROUNDS" ]; do
    rm -rf "reports/$name" "reports/$name.old"
    python3 - "$RUNNER" "$name" "$pair.txt" "$base" "$treat" <<'PY'
import json, re, subprocess, sys, time
runner, name, data, base, treat = sys.argv[1:]
# Not --quiet: the forecast exec prints before its first fork is read as it
# comes, so what it forecast (the forks and the analysis after them) is
# set against the time from that line to the end.
start = time.monotonic()
p = subprocess.Popen([runner, "ab", "--name", name, "--input", data, base, treat],
                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
forecast_at, forecast = None, None
for line in p.stderr:
    if line.startswith("estimate: ") and forecast_at is None:
        forecast_at, forecast = time.monotonic(), line
if p.wait() != 0:
    sys.exit(f"runner ab failed: {p.returncode}")
end = time.monotonic()
cell = json.load(open(f"reports/{name}/analysis.json"))["cells"][0]
e = cell["effect"]
lo, hi = e["ratio_ci"]
said = {"no-difference": "no difference resolved"}.get(e["direction"], e["direction"])
word = " ".join(treat.split()[:2])
# `about A s to B s` (3 to 10 forks): linear in the forks, so the forecast
# for the forks that ran.
def seconds(n, unit):
    return float(n) * {"s": 1, "min": 60, "h": 3600}[unit]
times = [seconds(n, u) for n, u in re.findall(r"([0-9.]+) (s|min|h)\b", forecast.split("), about ")[-1].split(" (")[0])]
run = json.load(open(f"reports/{name}/run.json"))["spec"]["experiment"]["design"]
rule = run["stop"]
forks = cell["stop"]["forks_run"]
if len(times) >= 2:
    fewest, most = times[0], times[1]
    at = fewest + (forks - rule["min_forks"]) * (most - fewest) / max(rule["max_forks"] - rule["min_forks"], 1)
else:
    at = times[0]
print(f"runner    wall {end - start:6.2f} s  forks {forks:2}  runs {2 * cell['n']:4}  "
      f"forecast {at:6.2f} s  then {end - forecast_at:6.2f} s  pairs {run['warmup_pairs']}+{run['pairs']}  "
      f"{word} {said}, ratio {e['ratio']:.3f} [{lo:.3f}, {hi:.3f}]")
PY
    start=$(now)
    "$HYPERFINE" -N --style none --input "$pair.txt" --export-json hyperfine.json \
      "$base" "$treat" > /dev/null
    end=$(now)
    python3 - "$start" "$end" hyperfine.json "$treat" <<'PY'
import json, math, sys
start, end, path, treat = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3], sys.argv[4]
a, b = json.load(open(path))["results"]
# hyperfine's own relative speed: the ratio of means, its error propagated
# from both standard deviations (relative_speed.rs in hyperfine's source).
ratio = b["mean"] / a["mean"]
sd = ratio * math.sqrt((a["stddev"] / a["mean"]) ** 2 + (b["stddev"] / b["mean"]) ** 2)
word = " ".join(treat.split()[:2])
print(f"hyperfine wall {end - start:6.2f} s  forks  1  runs {len(a['times']) + len(b['times']):4}  "
      f"{word} ratio {ratio:.3f} +- {sd:.3f}")
PY
    i=$((i + 1))
  done
done
