# A private single-node Slurm cluster for a test (sourced, not run): munged
# with a key of its own, slurmctld and slurmd with a generated slurm.conf,
# every file (key, sockets, pids, logs, state, spool) under one directory,
# ports picked free, nothing of the machine's /etc/slurm or /etc/munge used.
# Clients find it through SLURM_CONF (exported by kn_slurm_start), and the
# munge clients in Slurm find munged's socket through slurm.conf's
# AuthInfo. Daemons run in the foreground as children of the test, so
# kn_slurm_stop ends exactly them, by their ids.
#
#   kn_slurm_skip_reason          -> prints why this machine cannot, or nothing
#   kn_slurm_start DIR            -> the node idle, or fail
#   kn_slurm_stop                 -> jobs cancelled, daemons ended (idempotent)
#   kn_job_state ID               -> PENDING, RUNNING, COMPLETED, FAILED, ...
#   kn_job_wait ID SECONDS        -> the job ended (any way), or fail
#   kn_diff A B, kn_elapsed A     -> B - A, now - A (seconds, date +%s.%N)
#
# The caller defines fail MESSAGE (prints and exits non-zero) and calls
# kn_slurm_stop on every exit path (a trap on EXIT).

kn_slurm_pids=''
kn_slurm_dir=''
# the daemons are in sbin, which a user's PATH may lack
PATH=$PATH:/usr/sbin:/sbin

# Why a cluster cannot be started here (nothing when it can): it needs root
# (slurmd runs jobs as their submitter, munged and slurmd as root) and the
# Debian packages slurm-wlm and munge.
kn_slurm_skip_reason() {
    if [ "$(id -u)" -ne 0 ]; then
        echo "needs root: slurmd and munged run as root here"
        return
    fi
    for p in munged mungekey slurmctld slurmd sbatch srun scontrol scancel sinfo python3; do
        if ! command -v "$p" >/dev/null 2>&1; then
            echo "no $p (Debian packages slurm-wlm and munge; tools/install-deps installs them)"
            return
        fi
    done
}

# Two free TCP ports of 127.0.0.1, held together while asking so they differ.
kn_slurm_free_ports() {
    python3 -c 'import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(" ".join(str(x.getsockname()[1]) for x in s))'
}

# kn_slurm_wait SECONDS WHAT COMMAND...: runs COMMAND every 0.1 s until it
# succeeds; fails naming WHAT after SECONDS.
kn_slurm_wait() {
    kn_w_end=$(($(date +%s) + $1))
    kn_w_what=$2
    shift 2
    until "$@" >/dev/null 2>&1; do
        [ "$(date +%s)" -lt "$kn_w_end" ] || fail "$kn_w_what: not within the deadline ($(kn_slurm_logs))"
        sleep 0.1
    done
}

# The end of the daemons' logs, for a failure message.
kn_slurm_logs() {
    for f in "$kn_slurm_dir"/log/*; do
        [ -f "$f" ] || continue
        echo "--- $f"
        tail -n 15 "$f"
    done
}

kn_slurm_node_idle() {
    [ "$(sinfo -h -N -o %T 2>/dev/null)" = idle ]
}

kn_slurm_start() {
    kn_slurm_dir=$1
    d=$kn_slurm_dir
    mkdir -p "$d/munge" "$d/state" "$d/spool" "$d/log"
    # munged refuses a key directory others may write and a socket
    # directory others cannot search
    chmod 700 "$d/munge"
    mungekey --create --keyfile="$d/munge/munge.key" || fail "mungekey"
    chmod 711 "$d/munge"
    munged --foreground --force --socket="$d/munge/socket" --key-file="$d/munge/munge.key" \
        --pid-file="$d/munge/munged.pid" --seed-file="$d/munge/seed" \
        --log-file="$d/log/munged.log" >>"$d/log/munged.log" 2>&1 &
    kn_slurm_pids="$!"
    kn_slurm_wait 20 "munged's socket" test -S "$d/munge/socket"

    set -- $(kn_slurm_free_ports)
    cpus=$(nproc)
    # small: RealMemory is what a job may ask for, not what the node has
    cat >"$d/slurm.conf" <<EOF
# kenaf-sim test cluster: one node, every file under $d
ClusterName=kenaftest
SlurmctldHost=localhost
SlurmctldPort=$1
SlurmdPort=$2
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$d/munge/socket
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd.pid
SlurmctldLogFile=$d/log/slurmctld.log
SlurmdLogFile=$d/log/slurmd.log
NodeName=localhost CPUs=$cpus RealMemory=256 State=UNKNOWN
PartitionName=test Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
    # Slurm may defer scheduling a batch job by up to 3 s
    # (batch_sched_delay): the test's 4 tasks and a dependent job took
    # 20 s with the default, 8 s without. KN_SLURM_DEFAULT_SCHED=1 keeps
    # the default, to measure what a cluster configured so costs per task.
    [ "${KN_SLURM_DEFAULT_SCHED:-0}" = 1 ] ||
        echo "SchedulerParameters=batch_sched_delay=0" >>"$d/slurm.conf"
    export SLURM_CONF="$d/slurm.conf"
    # -i: a fresh state directory has no state to recover
    slurmctld -D -i -f "$SLURM_CONF" >>"$d/log/slurmctld.out" 2>&1 &
    kn_slurm_pids="$kn_slurm_pids $!"
    slurmd -D -N localhost -f "$SLURM_CONF" >>"$d/log/slurmd.out" 2>&1 &
    kn_slurm_pids="$kn_slurm_pids $!"
    kn_slurm_wait 30 "the node idle" kn_slurm_node_idle
}

kn_slurm_stop() {
    if [ -n "$kn_slurm_pids" ] && [ -n "${SLURM_CONF:-}" ]; then
        # the jobs first, while slurmd is there to end their processes
        scancel --quiet --full $(squeue -h -o %A 2>/dev/null) 2>/dev/null || true
        end=$(($(date +%s) + 10))
        while [ -n "$(squeue -h -o %A 2>/dev/null)" ] && [ "$(date +%s)" -lt "$end" ]; do
            sleep 0.1
        done
    fi
    for p in $kn_slurm_pids; do
        kill "$p" 2>/dev/null || true
    done
    # each one ended (a zombie until reaped), or killed after 10 s
    for p in $kn_slurm_pids; do
        end=$(($(date +%s) + 10))
        while [ -d "/proc/$p" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$p/status" 2>/dev/null &&
            [ "$(date +%s)" -lt "$end" ]; do
            sleep 0.1
        done
        kill -9 "$p" 2>/dev/null || true
        wait "$p" 2>/dev/null || true
    done
    kn_slurm_pids=''
    kn_slurm_reap_jobs
}

# What the jobs left running once slurmd is gone (a test ended in the middle
# of a job: slurmstepd, which slurmd started in a session of its own, and
# what it ran): every process but this shell whose environment carries
# this cluster's SLURM_CONF (slurmd's and each job's do), ended by its id.
kn_slurm_jobs_left() {
    [ -n "$kn_slurm_dir" ] || return 0
    for e in /proc/[0-9]*/environ; do
        p=${e#/proc/}
        p=${p%/environ}
        [ "$p" != "$$" ] || continue
        # a process may end while this looks: not an error
        if { tr '\0' '\n' <"$e"; } 2>/dev/null | grep -qxF "SLURM_CONF=$kn_slurm_dir/slurm.conf"; then
            echo "$p"
        fi
    done
}

kn_slurm_reap_jobs() {
    # the clients are done; this shell's own helpers (tr, grep) must not
    # carry the mark
    unset SLURM_CONF
    left=$(kn_slurm_jobs_left)
    [ -n "$left" ] || return 0
    echo "slurm: ending what the jobs left: $(for p in $left; do { tr '\0' ' ' <"/proc/$p/cmdline"; } 2>/dev/null | cut -c1-40; echo; done | sort | uniq -c | tr -s ' \n' ' ')"
    kill $left 2>/dev/null || true
    end=$(($(date +%s) + 5))
    while [ -n "$(kn_slurm_jobs_left)" ] && [ "$(date +%s)" -lt "$end" ]; do
        sleep 0.1
    done
    left=$(kn_slurm_jobs_left)
    [ -z "$left" ] || kill -9 $left 2>/dev/null || true
}

# A job's state by scontrol (no accounting here, so no sacct): the
# controller keeps an ended job for MinJobAge (300 s), long enough.
kn_job_state() {
    scontrol show job -o "$1" 2>/dev/null | sed -n '1s/.* JobState=\([A-Z_]*\) .*/\1/p'
}

kn_job_ended() {
    case $(kn_job_state "$1") in
    COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | BOOT_FAIL | DEADLINE) return 0 ;;
    *) return 1 ;;
    esac
}

kn_job_wait() {
    kn_slurm_wait "$2" "job $1 ended (state $(kn_job_state "$1"))" kn_job_ended "$1"
}

kn_diff() {
    awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f\n", b - a }'
}

kn_elapsed() {
    kn_diff "$1" "$(date +%s.%N)"
}

# kn_before A B: A <= B
kn_before() {
    awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= b) }'
}
