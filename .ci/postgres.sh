# shellcheck shell=bash
# Starts a throwaway PostgreSQL for the tests in tests/suite/postgres.rs.
#
# Meant to be sourced (by .ci/run, or by hand):
#     source .ci/postgres.sh        # exports RUNNER_DATABASE_URL, RUNNER_REQUIRE_POSTGRES=1
#     cargo test --test suite postgres::
#     runner_pg_stop                # or let the EXIT trap do it
#
# Works as root on a fresh Debian 12: installs the server only when no
# initdb/pg_ctl is found, runs the cluster as user `postgres` (initdb refuses
# root) in a fresh temp dir, listens on 127.0.0.1 only. Port: $RUNNER_PG_PORT,
# default 54329, or the next free one. Sourcing it twice reuses the running
# cluster. Note: it sets an EXIT trap (runner_pg_stop), replacing any earlier one.

runner_pg_find_bin() {
    local d
    for d in /usr/lib/postgresql/*/bin; do
        if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then
            RUNNER_PG_BIN="$d"
        fi
    done
    [ -n "${RUNNER_PG_BIN:-}" ]
}

# Runs from / so a cwd like /root that postgres cannot enter raises no warnings.
runner_pg_as_postgres() (
    cd / || exit 1
    if [ "$(id -un)" = postgres ]; then
        "$@"
    elif command -v runuser >/dev/null 2>&1; then
        runuser -u postgres -- "$@"
    else
        su postgres -s /bin/bash -c "$(printf '%q ' "$@")"
    fi
)

runner_pg_port_free() {
    ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

runner_pg_stop() {
    if [ -n "${RUNNER_PG_DIR:-}" ] && [ -d "$RUNNER_PG_DIR/data" ]; then
        runner_pg_as_postgres "$RUNNER_PG_BIN/pg_ctl" -D "$RUNNER_PG_DIR/data" -m fast -w stop >/dev/null 2>&1 || true
        rm -rf "$RUNNER_PG_DIR"
    fi
    unset RUNNER_PG_DIR RUNNER_DATABASE_URL RUNNER_DATABASE_SUPERUSER_URL RUNNER_REQUIRE_POSTGRES
}

runner_pg_start() {
    if [ -n "${RUNNER_PG_DIR:-}" ] && [ -n "${RUNNER_PG_BIN:-}" ] \
        && "$RUNNER_PG_BIN/pg_isready" -q -h 127.0.0.1 -p "${RUNNER_PG_PORT_USED:-0}" 2>/dev/null; then
        echo "postgres.sh: reusing the cluster in $RUNNER_PG_DIR on port $RUNNER_PG_PORT_USED" >&2
        return 0
    fi
    if ! runner_pg_find_bin; then
        echo "postgres.sh: no PostgreSQL found, installing it with apt-get" >&2
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -q && apt-get install -y -q postgresql || return 1
        runner_pg_find_bin || { echo "postgres.sh: install gave no initdb" >&2; return 1; }
    fi
    # The Debian package creates the user; a bare binary install may not have.
    if ! id postgres >/dev/null 2>&1; then
        useradd --system --home-dir /var/lib/postgresql --shell /bin/bash postgres || return 1
    fi

    local port="${RUNNER_PG_PORT:-54329}" tries=0
    while ! runner_pg_port_free "$port"; do
        port=$((port + 1)); tries=$((tries + 1))
        [ "$tries" -lt 50 ] || { echo "postgres.sh: no free port near ${RUNNER_PG_PORT:-54329}" >&2; return 1; }
    done

    RUNNER_PG_DIR="$(mktemp -d /tmp/runner-pg.XXXXXX)" || return 1
    chown postgres: "$RUNNER_PG_DIR"
    chmod 700 "$RUNNER_PG_DIR"
    runner_pg_as_postgres "$RUNNER_PG_BIN/initdb" -D "$RUNNER_PG_DIR/data" -U postgres \
        --auth-local=trust --auth-host=scram-sha-256 -E UTF8 >"$RUNNER_PG_DIR/initdb.log" 2>&1 \
        || { cat "$RUNNER_PG_DIR/initdb.log" >&2; return 1; }
    runner_pg_as_postgres "$RUNNER_PG_BIN/pg_ctl" -D "$RUNNER_PG_DIR/data" -l "$RUNNER_PG_DIR/server.log" -w \
        -o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories=$RUNNER_PG_DIR" start >/dev/null \
        || { cat "$RUNNER_PG_DIR/server.log" >&2; return 1; }

    tries=0
    until "$RUNNER_PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$port"; do
        tries=$((tries + 1))
        [ "$tries" -lt 60 ] || { echo "postgres.sh: server not ready after 30 s" >&2; cat "$RUNNER_PG_DIR/server.log" >&2; return 1; }
        sleep 0.5
    done

    runner_pg_as_postgres "$RUNNER_PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$RUNNER_PG_DIR" -p "$port" -U postgres -d postgres \
        -c "CREATE ROLE bench LOGIN CREATEDB PASSWORD 'bench'" \
        -c "CREATE ROLE bench_super LOGIN SUPERUSER PASSWORD 'bench'" \
        -c "CREATE DATABASE bench OWNER bench" >/dev/null || return 1

    RUNNER_PG_PORT_USED="$port"
    export RUNNER_PG_DIR RUNNER_PG_BIN RUNNER_PG_PORT_USED
    export RUNNER_DATABASE_URL="postgres://bench:bench@127.0.0.1:$port/bench"
    # A superuser, for the tests of what only a superuser can do past a
    # rollback (tests/suite/database_safety.rs); runs use the plain role above.
    # CREATEDB lets every test that runs a fork work in a database of its
    # own (tests/common/mod.rs pg_url), so one test's commits never show in
    # another's fingerprint.
    export RUNNER_DATABASE_SUPERUSER_URL="postgres://bench_super:bench@127.0.0.1:$port/bench"
    export RUNNER_REQUIRE_POSTGRES=1
    trap runner_pg_stop EXIT
    echo "postgres.sh: PostgreSQL $("$RUNNER_PG_BIN/pg_ctl" --version | awk '{print $3}') on 127.0.0.1:$port (data in $RUNNER_PG_DIR); stop it with runner_pg_stop" >&2
}

runner_pg_start
