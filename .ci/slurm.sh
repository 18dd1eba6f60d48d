# shellcheck shell=bash
# Starts a one-node Slurm cluster on 127.0.0.1 for the sharding tests.
#
# Meant to be sourced (by .ci/run, or by hand), like .ci/postgres.sh:
#     source .ci/slurm.sh           # exports SLURM_CONF, RUNNER_REQUIRE_SLURM=1
#     cargo test --test slurm
#     runner_slurm_stop             # or let the EXIT trap do it
#
# Works as root on a fresh Debian 12: installs munge and Slurm (slurmctld,
# slurmd, the client commands) only when they are missing, writes a minimal
# slurm.conf for this host in a fresh temp dir (nothing under /etc/slurm is
# written), starts munged, slurmctld and slurmd, and waits until the node is
# idle. Daemons run as root with proctrack/linuxproc and no cgroups, so it
# also works in a container. Ports: $RUNNER_SLURM_PORT (slurmctld, default
# 26817, or the next free pair) and the next one (slurmd). Sourcing it twice
# reuses the cluster.
# Note: it sets an EXIT trap that stops the cluster (and PostgreSQL, when
# .ci/postgres.sh was sourced first), replacing any earlier trap.

runner_slurm_port_free() {
    ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

runner_slurm_stop() {
    if [ -n "${RUNNER_SLURM_DIR:-}" ] && [ -d "$RUNNER_SLURM_DIR" ]; then
        local f
        for f in slurmd slurmctld munged; do
            if [ -f "$RUNNER_SLURM_DIR/$f.pid" ]; then
                kill "$(cat "$RUNNER_SLURM_DIR/$f.pid")" 2>/dev/null || true
            fi
        done
        sleep 0.5
        rm -rf "$RUNNER_SLURM_DIR"
    fi
    unset RUNNER_SLURM_DIR SLURM_CONF RUNNER_REQUIRE_SLURM
}

runner_slurm_start() {
    if [ -n "${RUNNER_SLURM_DIR:-}" ] && [ -n "${SLURM_CONF:-}" ] \
        && sinfo -h -o %T 2>/dev/null | grep -q idle; then
        echo "slurm.sh: reusing the cluster in $RUNNER_SLURM_DIR" >&2
        return 0
    fi
    if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null \
        || ! command -v sbatch >/dev/null || ! command -v munged >/dev/null; then
        echo "slurm.sh: no Slurm found, installing it with apt-get" >&2
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -q && apt-get install -y -q --no-install-recommends \
            munge slurmctld slurmd slurm-client || return 1
    fi
    local host cpus mem port dir tries=0
    host="$(hostname -s)"
    cpus="$(nproc)"
    mem=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 / 2 ))
    # Two free ports side by side (slurmctld, slurmd), so a second cluster
    # started by another checkout does not collide with this one.
    port="${RUNNER_SLURM_PORT:-26817}"
    while ! runner_slurm_port_free "$port" || ! runner_slurm_port_free $((port + 1)); do
        port=$((port + 2)); tries=$((tries + 1))
        [ "$tries" -lt 50 ] || { echo "slurm.sh: no free ports near ${RUNNER_SLURM_PORT:-26817}" >&2; return 1; }
    done
    dir="$(mktemp -d /tmp/runner-slurm.XXXXXX)" || return 1
    mkdir -p "$dir/state" "$dir/spool" "$dir/munge" "$dir/munge-key"
    chmod 755 "$dir"

    # munge: a fresh key and socket of our own, so a system munged (if any)
    # is left alone.
    # The key's folder is private; the socket's must be reachable by all.
    dd if=/dev/urandom bs=1 count=1024 of="$dir/munge-key/munge.key" 2>/dev/null
    chown -R munge: "$dir/munge" "$dir/munge-key"
    chmod 755 "$dir/munge"; chmod 700 "$dir/munge-key"; chmod 400 "$dir/munge-key/munge.key"
    runuser -u munge -- /usr/sbin/munged --key-file="$dir/munge-key/munge.key" \
        --socket="$dir/munge/munge.socket" --pid-file="$dir/munge/munged.pid" \
        --log-file="$dir/munge/munged.log" --seed-file="$dir/munge/munged.seed" \
        || { echo "slurm.sh: munged did not start" >&2; cat "$dir/munge/munged.log" >&2; return 1; }
    cp "$dir/munge/munged.pid" "$dir/munged.pid"

    cat >"$dir/slurm.conf" <<CONF
ClusterName=runner
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
SlurmdTimeout=60
InactiveLimit=0
KillWait=5
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=runner Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
CONF
    RUNNER_SLURM_DIR="$dir"
    export SLURM_CONF="$dir/slurm.conf"
    export RUNNER_SLURM_DIR
    trap 'runner_slurm_stop; command -v runner_pg_stop >/dev/null && runner_pg_stop' EXIT

    /usr/sbin/slurmctld -f "$SLURM_CONF" \
        || { echo "slurm.sh: slurmctld did not start" >&2; cat "$dir/slurmctld.log" >&2; return 1; }
    /usr/sbin/slurmd -f "$SLURM_CONF" -N "$host" \
        || { echo "slurm.sh: slurmd did not start" >&2; cat "$dir/slurmd.log" >&2; return 1; }

    local tries=0
    until sinfo -h -o %T 2>/dev/null | grep -q idle; do
        tries=$((tries + 1))
        if [ "$tries" -ge 60 ]; then
            echo "slurm.sh: the node is not idle after 30 s:" >&2
            sinfo >&2; tail -20 "$dir/slurmctld.log" "$dir/slurmd.log" >&2
            return 1
        fi
        sleep 0.5
    done
    export RUNNER_REQUIRE_SLURM=1
    echo "slurm.sh: Slurm $(sinfo --version | awk '{print $2}') on $host (127.0.0.1:$port, $cpus CPUs, files in $dir); stop it with runner_slurm_stop" >&2
}

runner_slurm_start
