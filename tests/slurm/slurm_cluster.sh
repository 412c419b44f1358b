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
#   3. the documented recipe, examples/ci/slurm-sweep.sh, as documented:
#      the 40 short cases of short-sweep.json as a 4-task job array, each
#      task one shard (--shard K/4, --jobs 1), and the merge job after
#      them; the merged report.json and results.json are byte for byte
#      those of the same sweep run here with --jobs 2, and so is every
#      case's result and trajectory; each task ran its own 10 cases; the
#      merge job compared the result with the local run (-b); with
#      shards that fail, the merge job is cancelled and -w exits 1;
#   4. the Slurm overhead per task, submit -> start, from the tasks' own
#      clocks, and the sweep's time on Slurm against the local run's
#      (printed, never asserted: it depends on the machine).
# Root only; skipped (77) with the reason without root, slurm-wlm or munge,
# and under KN_WRAP (nothing here runs under it).
#
#   slurm_cluster.sh SRCDIR RECIPE KENAF-SIM-RUN CLIMB_STEP
# KN_KEEP_TMP=1 keeps the scratch directory (config, logs, job outputs).
set -eu
here=$1 recipe=$2 run=$3 climb=$4
# the jobs run in their own directory: absolute paths (meson's are the
# build directory's)
case $climb in /*) ;; *) climb=$PWD/$climb ;; esac
case $run in /*) ;; *) run=$PWD/$run ;; esac
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

# 3. the sweep: locally, then with the recipe on the cluster
sweep=$here/short-sweep.json
w=$tmp/sweep
mkdir "$w"
t=$(date +%s.%N)
"$run" --sweep "$sweep" --jobs 2 --out "$w/local" -- "$climb" >"$w/local.out" 2>&1 ||
    fail "the local sweep: exit $? ($(tail -n 20 "$w/local.out"))"
local_s=$(kn_elapsed "$t")
submitted=$(date +%s.%N)
# -b: the merge job compares with the local run (no regression, the same
# cases: exit 0). The test waits for the merge job itself: sbatch --wait
# (the recipe's -w, tried below) polls at growing intervals, 20 s late here
(cd "$w" && KENAF_SIM_RUN=$run "$recipe" -n 4 -o slurm -b "$w/local" "$sweep" -- "$climb") \
    >"$w/recipe.out" 2>&1 || fail "slurm-sweep.sh: exit $? ($(cat "$w/recipe.out"))"
aid=$(sed -n 's/^slurm-sweep: array job \([0-9]*\):.*/\1/p' "$w/recipe.out")
mid=$(sed -n 's/^slurm-sweep: merge job \([0-9]*\) (after .*/\1/p' "$w/recipe.out")
[ -n "$aid" ] && [ -n "$mid" ] || fail "no job ids from the recipe: $(cat "$w/recipe.out")"
kn_job_wait "$mid" 240
slurm_s=$(kn_elapsed "$submitted")
[ "$(kn_job_state "$mid")" = COMPLETED ] ||
    fail "the merge job: $(kn_job_state "$mid") ($(tail -n 20 "$w"/slurm/logs/* 2>&1))"
grep -q "^slurm-sweep: merged; comparing with $w/local$" "$w/slurm/logs/merge.out" ||
    fail "the merge job did not compare: $(cat "$w/slurm/logs/merge.out")"
for k in 1 2 3 4; do
    [ "$(kn_job_state "${aid}_$k")" = COMPLETED ] || fail "task $k: $(kn_job_state "${aid}_$k")"
    log=$w/slurm/logs/shard-$k.out
    grep -q "^slurm-sweep: shard $k/4 started [0-9.]* on .* as job [0-9]*$" "$log" ||
        fail "task $k's log: $(head -n 5 "$log")"
    # its own quarter of the cases, each once
    [ "$(grep -Ec '^kenaf-sim-run: \[[0-9]+/[0-9]+\] [0-9a-f]{10} ' "$log")" -eq 10 ] ||
        fail "task $k ran $(grep -Ec '^kenaf-sim-run: \[' "$log") cases, want 10: $(cat "$log")"
    python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(d["shard"] != {"k": int(sys.argv[2]), "n": 4} or len(d["cases"]) != 40)' \
        "$w/slurm/shard-$k/sweep.json" "$k" || fail "shard-$k/sweep.json: not shard $k/4 of 40 cases"
done
[ "$(cat "$w"/slurm/logs/shard-*.out | sed -n 's/^slurm-sweep: .* as job //p' | sort -u | wc -l)" -eq 4 ] ||
    fail "four tasks, not four jobs: $(grep -h 'as job' "$w"/slurm/logs/shard-*.out)"
[ "$(cat "$w"/slurm/logs/shard-*.out | grep -E '^kenaf-sim-run: \[' | cut -d' ' -f3 | sort -u | wc -l)" -eq 40 ] ||
    fail "the shards did not run 40 different cases"
for f in report.json results.json; do
    cmp "$w/local/$f" "$w/slurm/merged/$f" || fail "merged $f differs from the local run's"
done
n=0
for c in "$w"/local/cases/*/; do
    id=$(basename "$c")
    for f in result.json trajectory.csv; do
        cmp "$c/$f" "$w/slurm/merged/cases/$id/$f" || fail "case $id's $f differs"
    done
    n=$((n + 1))
done
[ "$n" -eq 40 ] || fail "$n cases in the local run, want 40"
echo "slurm: the sweep's 40 cases as 4 array tasks and a merge: merged report.json, results.json and every case as the local run's"

# 3b. shards that fail (a program that is not there): no merge, and the
# recipe's -w says so in its exit status
set +e
(cd "$w" && KENAF_SIM_RUN=$run timeout 120 "$recipe" -n 2 -o broken -w "$sweep" -- "$w/no-such-program") \
    >"$w/broken.out" 2>&1
rc=$?
set -e
[ "$rc" -eq 1 ] || fail "slurm-sweep.sh with failing shards: exit $rc, want 1 ($(cat "$w/broken.out"))"
grep -q "^slurm-sweep: merge job [0-9]* ended CANCELLED, exit status 1$" "$w/broken.out" ||
    fail "slurm-sweep.sh with failing shards said: $(cat "$w/broken.out")"
grep -q "no-such-program" "$w/broken/logs/shard-1.out" ||
    fail "the failing shard's log does not name the program: $(cat "$w/broken/logs/shard-1.out")"
[ ! -e "$w/broken/merged" ] || fail "a merge of failed shards ran"

# 4. the figures
echo "slurm: the sweep's tasks, submit -> start:"
for k in 1 2 3 4; do
    s=$(sed -n 's/^slurm-sweep: shard [0-9/]* started \([0-9.]*\) .*/\1/p' "$w/slurm/logs/shard-$k.out")
    echo "slurm:   task $k $(kn_diff "$submitted" "$s") s"
done
echo "slurm: the sweep, submit -> merged $slurm_s s on Slurm (4 tasks, --jobs 1), $local_s s here (--jobs 2)"
# both run two cases at a time: what Slurm adds, per job of its five
echo "slurm: overhead per job (4 tasks and the merge): ($slurm_s - $local_s) / 5 = $(awk -v a="$local_s" -v b="$slurm_s" 'BEGIN { printf "%.2f", (b - a) / 5 }') s"
echo "slurm: srun, a job array, its dependent job and the sweep recipe as documented"
