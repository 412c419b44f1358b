#!/bin/sh
# A real single-node Slurm (slurm-wlm 22.05 and munge from Debian), started
# by the test in its own scratch directory (tests/slurm/cluster.sh), and
# what the documented cluster recipe needs of it (docs/scenario-runs.md,
# "On a cluster (Slurm)"):
#   1. srun runs two tasks, each with its own SLURM_PROCID;
#   2. sbatch --array=1-4 runs four tasks, each with its own
#      SLURM_ARRAY_TASK_ID and output file, and a job submitted with
#      --dependency=afterok on the array starts only after all four ended;
#      a failing task leaves such a job never run (cancelled, with
#      --kill-on-invalid-dep=yes, not pending forever);
#   3. the Slurm overhead per task, submit -> start, from the tasks' own
#      clocks (printed, never asserted: it depends on the machine).
# Root only; skipped (77) with the reason without root, slurm-wlm or munge,
# and under KN_WRAP (nothing here runs under it).
#
#   slurm_cluster.sh SRCDIR
# KN_KEEP_TMP=1 keeps the scratch directory (config, logs, job outputs).
set -eu
here=$1
fail() {
    echo "FAIL: $*"
    exit 1
}
. "$here/cluster.sh"

if [ -n "${KN_WRAP:-}" ]; then
    echo "SKIP: Slurm's daemons and jobs run unwrapped; KN_WRAP would check nothing new"
    exit 77
fi
why=$(kn_slurm_skip_reason)
[ -z "$why" ] || { echo "SKIP: $why"; exit 77; }

tmp=$(mktemp -d /tmp/kn-slurm-XXXXXX)
cleanup() {
    kn_slurm_stop
    if [ "${KN_KEEP_TMP:-0}" = 1 ]; then echo "kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 143' TERM INT HUP

t0=$(date +%s.%N)
kn_slurm_start "$tmp/cluster"
echo "slurm: munged, slurmctld and slurmd up, node idle, in $(kn_elapsed "$t0") s"

# 1. srun: two tasks of one step, each its own rank
out=$(timeout 60 srun --ntasks=2 sh -c 'echo "rank $SLURM_PROCID of $SLURM_NTASKS"' | sort) ||
    fail "srun: exit $? ($(kn_slurm_logs))"
[ "$out" = "rank 0 of 2
rank 1 of 2" ] || fail "srun's tasks said: $out"

# 2. a job array of four and a job depending on it
mkdir "$tmp/a"
cat >"$tmp/a/task.sh" <<'EOF'
#!/bin/sh
# one task: who it is, when it started and ended by the node's clock
echo "start $(date +%s.%N) array $SLURM_ARRAY_JOB_ID task $SLURM_ARRAY_TASK_ID job $SLURM_JOB_ID"
[ "$SLURM_ARRAY_TASK_ID" != "${KN_FAIL_TASK:-}" ] || exit 1
sleep 0.2
echo "end $(date +%s.%N)"
EOF
cat >"$tmp/a/after.sh" <<'EOF'
#!/bin/sh
# the dependent job: when it started and which task outputs it found
echo "start $(date +%s.%N)"
cat "$1"/task-*.out
EOF
submitted=$(date +%s.%N)
aid=$(sbatch --parsable --array=1-4 --chdir="$tmp/a" --output="$tmp/a/task-%a.out" \
    "$tmp/a/task.sh") || fail "sbatch --array: exit $?"
did=$(sbatch --parsable --dependency="afterok:$aid" --kill-on-invalid-dep=yes --chdir="$tmp/a" \
    --output="$tmp/a/after.out" "$tmp/a/after.sh" "$tmp/a") || fail "sbatch --dependency: exit $?"
kn_job_wait "$did" 60
[ "$(kn_job_state "$did")" = COMPLETED ] || fail "the dependent job: $(kn_job_state "$did")"
for k in 1 2 3 4; do
    f="$tmp/a/task-$k.out"
    grep -q "^start [0-9.]* array $aid task $k job [0-9]*$" "$f" ||
        fail "task $k's output: $(cat "$f" 2>&1)"
    grep -q '^end ' "$f" || fail "task $k did not end: $(cat "$f")"
done
[ "$(cat "$tmp"/a/task-*.out | sed -n 's/.* job //p' | sort -u | wc -l)" -eq 4 ] ||
    fail "four tasks, not four jobs: $(cat "$tmp"/a/task-*.out)"
# the dependent job started after every task had ended, and saw all four
after_start=$(sed -n 's/^start //p' "$tmp/a/after.out")
[ "$(grep -c '^end ' "$tmp/a/after.out")" -eq 4 ] || fail "the dependent job saw: $(cat "$tmp/a/after.out")"
for e in $(sed -n 's/^end //p' "$tmp"/a/task-*.out); do
    kn_before "$e" "$after_start" || fail "the dependent job started at $after_start, a task ended at $e"
done
echo "slurm: overhead per task, submit -> start (4 tasks on $(nproc) CPUs, each 0.2 s):"
for k in 1 2 3 4; do
    s=$(sed -n 's/^start \([0-9.]*\) .*/\1/p' "$tmp/a/task-$k.out")
    echo "slurm:   task $k $(kn_diff "$submitted" "$s") s"
done
echo "slurm:   dependent job, last task's end -> start $(kn_diff "$(sed -n 's/^end //p' "$tmp"/a/task-*.out | sort -n | tail -n 1)" "$after_start") s"

# 2b. a failing task: the dependent job never runs
mkdir "$tmp/b"
cp "$tmp/a/task.sh" "$tmp/a/after.sh" "$tmp/b/"
aid=$(KN_FAIL_TASK=3 sbatch --parsable --array=1-4 --chdir="$tmp/b" \
    --output="$tmp/b/task-%a.out" "$tmp/b/task.sh") || fail "sbatch --array: exit $?"
did=$(sbatch --parsable --dependency="afterok:$aid" --kill-on-invalid-dep=yes --chdir="$tmp/b" \
    --output="$tmp/b/after.out" "$tmp/b/after.sh" "$tmp/b") || fail "sbatch --dependency: exit $?"
kn_job_wait "$did" 60
[ "$(kn_job_state "$did")" = CANCELLED ] || fail "the dependent job of a failed task: $(kn_job_state "$did")"
[ ! -e "$tmp/b/after.out" ] || fail "the dependent job ran: $(cat "$tmp/b/after.out")"
[ "$(kn_job_state "${aid}_3")" = FAILED ] || fail "task 3: $(kn_job_state "${aid}_3")"
echo "slurm: srun, a job array and its dependent job as documented"
