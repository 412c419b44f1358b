#!/bin/sh
# Runs a kenaf-sim-run sweep on a Slurm cluster: one job array with a task
# per shard, and a merge job that starts once every shard has succeeded
# (docs/scenario-runs.md, "On a cluster (Slurm)"). The same file is the
# batch script of both jobs (sbatch keeps a copy of it), so the recipe is
# one file to copy next to a controller.
#
#   slurm-sweep.sh [-n SHARDS] [-c CPUS] [-o OUT] [-b BASELINE] [-w]
#                  SWEEP -- PROGRAM [ARGS...]
#
#   -n SHARDS    array tasks, one shard each (default 4): task K runs
#                kenaf-sim-run --sweep SWEEP --shard K/SHARDS --out OUT/shard-K
#   -c CPUS      CPUs per task (--cpus-per-task), the cases a task runs at
#                once (--jobs; default 1)
#   -o OUT       output directory (default sweep-out/<SWEEP's file name>);
#                the merged sweep, report.json and report.html land in
#                OUT/merged, each job's output in OUT/logs
#   -b BASELINE  the merge job also compares OUT/merged against BASELINE
#                (an earlier merged directory): its exit status is 1 on a
#                regression
#   -w           wait for the merge job and exit with its status (sbatch
#                --wait); otherwise exit once both jobs are submitted
#
# Which kenaf-sim-run: $KENAF_SIM_RUN, else the one on PATH (on the nodes
# too: the jobs get this environment). Partition, account, time limit:
# sbatch's own SBATCH_PARTITION, SBATCH_ACCOUNT, SBATCH_TIMELIMIT.
# Prints the job ids; exit status 2 for a bad command line, sbatch's when
# it fails.
set -eu

usage() {
    echo "usage: slurm-sweep.sh [-n SHARDS] [-c CPUS] [-o OUT] [-b BASELINE] [-w] SWEEP -- PROGRAM [ARGS...]" >&2
    exit 2
}

# The jobs' side: the array's tasks and the merge (internal, as sbatch
# runs this file; RUN N OUT come from the submitting side).
case ${1:-} in
--shard-task)
    run=$2 n=$3 out=$4 sweep=$5 cpus=$6
    shift 7 # the arguments above and "--"
    k=${SLURM_ARRAY_TASK_ID:?not run as a task of a Slurm job array}
    echo "slurm-sweep: shard $k/$n started $(date +%s.%N) on $(hostname) as job ${SLURM_JOB_ID:-?}"
    exec "$run" --sweep "$sweep" --shard "$k/$n" --out "$out/shard-$k" --jobs "$cpus" -- "$@"
    ;;
--merge-task)
    run=$2 n=$3 out=$4 baseline=$5
    echo "slurm-sweep: merge started $(date +%s.%N) on $(hostname) as job ${SLURM_JOB_ID:-?}"
    set --
    k=1
    while [ "$k" -le "$n" ]; do
        set -- "$@" "$out/shard-$k"
        k=$((k + 1))
    done
    "$run" --merge "$@" --out "$out/merged"
    [ -n "$baseline" ] || exit 0
    echo "slurm-sweep: merged; comparing with $baseline"
    exec "$run" --compare "$baseline" "$out/merged"
    ;;
esac

n=4 cpus=1 out='' baseline='' wait=''
while getopts n:c:o:b:w opt; do
    case $opt in
    n) n=$OPTARG ;;
    c) cpus=$OPTARG ;;
    o) out=$OPTARG ;;
    b) baseline=$OPTARG ;;
    w) wait=1 ;;
    *) usage ;;
    esac
done
shift $((OPTIND - 1))
[ $# -ge 3 ] && [ "$2" = -- ] || usage
sweep=$1
shift 2
case $n in '' | *[!0-9]* | 0*) echo "slurm-sweep.sh: -n wants a number of shards >= 1, not '$n'" >&2; exit 2 ;; esac
case $cpus in '' | *[!0-9]* | 0*) echo "slurm-sweep.sh: -c wants a number of CPUs >= 1, not '$cpus'" >&2; exit 2 ;; esac
[ -f "$sweep" ] || { echo "slurm-sweep.sh: no sweep file $sweep" >&2; exit 2; }
[ -n "$out" ] || out="sweep-out/$(basename "$sweep" .json)"
run=${KENAF_SIM_RUN:-kenaf-sim-run}
mkdir -p "$out/logs"
name="kenaf-sweep-$(basename "$sweep" .json)"

# the shards, then the merge once every one of them exited 0; a failed
# shard cancels the merge instead of leaving it pending for ever
array=$(sbatch --parsable --job-name="$name" --array="1-$n" --cpus-per-task="$cpus" \
    --chdir="$PWD" --output="$out/logs/shard-%a.out" \
    "$0" --shard-task "$run" "$n" "$out" "$sweep" "$cpus" -- "$@")
array=${array%%;*} # "ID;CLUSTER" on a federation
echo "slurm-sweep: array job $array: $n shards of $sweep -> $out/shard-1..$n"
set -- --job-name="$name-merge" --dependency="afterok:$array" --kill-on-invalid-dep=yes \
    --chdir="$PWD" --output="$out/logs/merge.out" \
    "$0" --merge-task "$run" "$n" "$out" "$baseline"
if [ -z "$wait" ]; then
    merge=$(sbatch --parsable "$@")
    echo "slurm-sweep: merge job ${merge%%;*} (after $array) -> $out/merged"
    exit 0
fi
# sbatch --parsable --wait prints the id at once, then waits; its exit
# status is the job's, but 0 for a job cancelled before it ran (a shard
# failed), so the job's state decides that
echo "slurm-sweep: merge job (after $array) -> $out/merged, waiting for it"
rc=0
merge=$(sbatch --parsable --wait "$@") || rc=$?
merge=${merge%%;*}
state=$(scontrol show job -o "$merge" | sed -n '1s/.* JobState=\([A-Z_]*\) .*/\1/p')
if [ "$rc" -eq 0 ] && [ "$state" != COMPLETED ]; then
    echo "slurm-sweep: merge job $merge $state: a shard failed (see $out/logs)" >&2
    rc=1
fi
echo "slurm-sweep: merge job $merge ended $state, exit status $rc"
exit "$rc"
