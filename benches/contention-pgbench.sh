#!/bin/sh
# pgbench beside runner on experiments/contention.toml's question: the same
# UPDATE of four hot rows, without and with an index on the updated
# column, at 1, 4 and 8 clients (`pgbench -n -c N -j N -M prepared -T`).
# Each transaction is BEGIN; UPDATE; ROLLBACK, as runner rolls back every
# run, so the tables end as they began. The two arms are copies of
# public.accounts in a scratch schema this script creates and drops
# (runner_pgbench); the user's table is only read.
#
# The arms alternate, plain then indexed, ROUNDS times (default 2) per
# level, so drift falls on both alike. Prints one line per pgbench run:
# the level, the round, the arm, the mean latency and the transactions
# per second, as pgbench reports them. pgbench gives no interval and no
# pairing: compare the rounds with each other to see its spread.
#
# On a quiet machine, with experiments/sql/accounts.sql loaded:
#
#     sh benches/contention-pgbench.sh > benches/contention-pgbench.txt
set -eu
: "${RUNNER_DATABASE_URL:?set RUNNER_DATABASE_URL (source .ci/postgres.sh)}"
PGBENCH=${PGBENCH:-pgbench}
ROUNDS=${ROUNDS:-2}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-10}
URL=$RUNNER_DATABASE_URL
DIR=$(mktemp -d)
cleanup() {
    psql "$URL" -q -c "DROP SCHEMA IF EXISTS runner_pgbench CASCADE" >/dev/null 2>&1 || true
    rm -rf "$DIR"
}
trap cleanup EXIT
psql "$URL" -q -v ON_ERROR_STOP=1 <<'SQL'
SET client_min_messages TO warning;
DROP SCHEMA IF EXISTS runner_pgbench CASCADE;
CREATE SCHEMA runner_pgbench;
CREATE TABLE runner_pgbench.plain (LIKE public.accounts INCLUDING ALL);
INSERT INTO runner_pgbench.plain SELECT * FROM public.accounts;
CREATE TABLE runner_pgbench.indexed (LIKE public.accounts INCLUDING ALL);
INSERT INTO runner_pgbench.indexed SELECT * FROM public.accounts;
CREATE INDEX ON runner_pgbench.indexed (balance);
ANALYZE runner_pgbench.plain;
ANALYZE runner_pgbench.indexed;
SQL
for arm in plain indexed; do
    cat > "$DIR/$arm.sql" <<SQL
\set input random(0, 1000000)
BEGIN;
UPDATE runner_pgbench.$arm SET balance = balance + 1 WHERE id = 1 + (:input::bigint + :client_id::int) % 4;
ROLLBACK;
SQL
done
echo "# pgbench $("$PGBENCH" --version | awk '{print $3}'), -M prepared -T $SECONDS_PER_RUN, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs"
echo "# clients round arm latency_ms tps"
for n in 1 4 8; do
    r=1
    while [ "$r" -le "$ROUNDS" ]; do
        for arm in plain indexed; do
            out=$("$PGBENCH" -n -c "$n" -j "$n" -M prepared -T "$SECONDS_PER_RUN" -f "$DIR/$arm.sql" "$URL" 2>&1)
            latency=$(printf '%s\n' "$out" | awk -F' = ' '/^latency average/ {print $2}' | awk '{print $1}')
            tps=$(printf '%s\n' "$out" | awk -F' = ' '/^tps/ {print $2}' | awk '{print $1}')
            echo "$n $r $arm $latency $tps"
        done
        r=$((r + 1))
    done
done
