#!/usr/bin/env bash
# How the cost of an analysis grows with the data: `runner analyze` of
# reports/aa's measured pairs (24,000: 8 delays x 10 forks x 300 pairs)
# replicated 1x, 10x and 100x as more forks (24k, 240k and 2.4M pairs, the
# size a run sharded over many machines makes), then `runner report
# reports/validity` (the median of five runs). Prints one line per figure: wall and user time, and
# peak RSS from /usr/bin/time -v, with bytes per pair. No assertions: time
# figures need a quiet machine (`uptime` is printed first); memory figures
# do not.
#
#   cargo build --release && bash benches/scale.sh > benches/scale.txt
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runner=${RUNNER:-$root/target/release/runner}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "# $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, load average: $(cut -d' ' -f1-3 /proc/loadavg)"
measure() {
    local label=$1 pairs=$2
    shift 2
    /usr/bin/time -v "$@" >/dev/null 2>"$tmp/time" || { cat "$tmp/time"; exit 1; }
    awk -v label="$label" -v pairs="$pairs" -F': ' '
        /Elapsed \(wall clock\)/ { n = split($2, t, ":"); wall = t[n] + (n > 1 ? 60 * t[n-1] : 0) }
        /User time/ { user = $2 }
        /Maximum resident set size/ { rss = $2 * 1024 }
        END { printf "%s: %d pairs, %.2f s wall, %.2f s user, peak RSS %.0f MB (%.0f bytes a pair)\n",
                     label, pairs, wall, user, rss / 1e6, rss / pairs }' "$tmp/time"
}
for k in 1 10 100; do
    awk -F, -v k="$k" 'NR == 1 { print; next } $3 == "measure" { rows[++n] = $0 }
        END { for (c = 0; c < k; c++) for (i = 1; i <= n; i++) {
                  split(rows[i], f, ","); f[2] = c * 10 + f[2]; line = f[1]
                  for (j = 2; j <= 11; j++) line = line "," f[j]; print line } }' \
        "$root/reports/aa/pairs.csv" >"$tmp/pairs-$k.csv"
    pairs=$(($(wc -l <"$tmp/pairs-$k.csv") - 1))
    measure "analyze, aa x $k" "$pairs" "$runner" analyze "$tmp/pairs-$k.csv" --out "$tmp/out-$k" --seed 1
done
cp -r "$root/reports/validity" "$tmp/validity"
pairs=$(($(wc -l <"$tmp/validity/pairs.csv") - 1))
# Under a second, one run's time moves by up to a tenth with the machine:
# the report is measured five times and the run with the median wall time
# is printed.
for i in 1 2 3 4 5; do
    measure "report reports/validity" "$pairs" "$runner" report "$tmp/validity" >"$tmp/report-$i"
done
cat "$tmp"/report-* | sort -t, -k2,2 -g | sed -n 3p
