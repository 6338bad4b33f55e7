#!/usr/bin/env bash
# The fleet preflight on a real Slurm (tests/slurm_lib.sh: slurmctld and 4 slurmd, nodes
# n1..n4 on this machine), with no rendezvous flags: Slurm's variables say who is who.
#   1. `srun -N4 -n8 imgtool fleet check` (the real probe in every task): all 8 pass, and
#      the report counts 8 workers;
#   2. n3 made odd the way nodes are: its TaskProlog (a node-side script every task on n3
#      runs) exports NCCL_ALGO=Tree; the check fails on every task and names n3 and the
#      field; with --on-mismatch drain the chief drains n3 alone, the reason naming the
#      field;
#   3. no majority (n3 and n4 odd, against n1 and n2): nothing drained, and it says so;
#   4. examples/slurm/train.sbatch end to end: on a clean allocation the training step
#      runs after the check (8 tasks, one weights digest); with n3 odd the job ends before
#      training, n3 is drained and named; with REQUEUE=1 the requeued job runs on nodes
#      that are not drained and trains.
# Skipped (exit 77) only where Slurm cannot be installed or started.
# Env: TRAINER (default: the trainer beside IMGTOOL's build folder).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/slurm_lib.sh"
IMGTOOL=$(realpath "$IMGTOOL")
TRAINER="${TRAINER:-$(cd "$(dirname "$IMGTOOL")/.." && pwd)/trainer/trainer}"
[ -x "$TRAINER" ] || fail "no trainer binary at $TRAINER (set TRAINER, or build the trainer target)"
[ -d /usr/share/datasets/fashion-mnist ] || fail "no Fashion-MNIST (apt-get install dataset-fashion-mnist)"
slurm_start
export IMGTOOL_FLEET_TOKEN=$(openssl rand -hex 32)
# The probe's hash cache, shared by every task (warm after the first).
export IMGTOOL_HASH_CACHE=$WORK/hash-cache

odd_node() {  # NODE: every task on NODE gets NCCL_ALGO=Tree from the node's TaskProlog
  echo "NCCL_ALGO=Tree" >"$SLURM_DIR/node-env/$1"
}
all_nodes_alike() { rm -f "$SLURM_DIR"/node-env/*; }
resume_all() { scontrol update NodeName="$(IFS=,; echo "${SLURM_NODES[*]}")" State=RESUME 2>/dev/null || true; }
# A node's state once its last job has let go of it: after srun returns, Slurm shows
# the node "completing" (or "draining", when a drain waits for it) for a moment.
node_state() {
  local s i
  for i in $(seq 50); do
    s=$(sinfo -h -N -n "$1" -o '%T|%E')
    case "${s%%|*}" in completing | draining | allocated | mixed) sleep 0.2 ;; *) break ;; esac
  done
  echo "$s"
}

# ---- 1. srun -N4 -n8, no flags ----
out=$(srun -N4 -n8 "$IMGTOOL" fleet check --timeout 60 2>&1) || fail "srun -N4 -n8 imgtool fleet check: $out"
[ "$(grep -c 'OK: 8 of 8 workers match' <<<"$out")" = 8 ] || fail "every task should print OK for 8 of 8: $out"
pass "srun -N4 -n8 imgtool fleet check, no rendezvous flags: 8 of 8 match, on every task"

# ---- 2. n3 odd: every task fails naming n3 and the field; drain takes n3 out ----
odd_node n3
rc=0
out=$(srun -N4 -n8 "$IMGTOOL" fleet check --timeout 60 --on-mismatch drain 2>&1) || rc=$?
[ "$rc" != 0 ] || fail "the check passed with NCCL_ALGO=Tree on n3: $out"
[ "$(grep -c 'MISMATCH' <<<"$out")" = 8 ] || fail "every task should report the mismatch: $out"
assert_contains "$out" "env.NCCL_ALGO" "the report names the field"
row=$(grep -F Tree <<<"$out" | head -1)
assert_contains "$row" "n3" "the Tree row names n3"
for n in n1 n2 n4; do ! grep -qw "$n" <<<"$row" || fail "the Tree row names $n: $row"; done
assert_contains "$out" "drain n3: imgtool: env.NCCL_ALGO differs" "the drain plan"
assert_eq "$(node_state n3)" "drained|imgtool: env.NCCL_ALGO differs" "n3 after the check"
for n in n1 n2 n4; do assert_eq "$(node_state "$n" | cut -d'|' -f1)" idle "$n after the check"; done
pass "NCCL_ALGO=Tree on n3 only: all 8 tasks fail naming n3 and env.NCCL_ALGO; n3 alone drained (reason: the field)"
resume_all

# ---- 3. no majority: nothing drained, and it says so ----
odd_node n4
rc=0
out=$(srun -N4 -n4 "$IMGTOOL" fleet check --timeout 60 --on-mismatch drain 2>&1) || rc=$?
[ "$rc" != 0 ] || fail "the check passed with n3 and n4 odd"
assert_contains "$out" "not draining: no majority for env.NCCL_ALGO (2 and 2 workers)" "a tie"
for n in n1 n2 n3 n4; do assert_eq "$(node_state "$n" | cut -d'|' -f1)" idle "$n after a tie"; done
pass "n3 and n4 odd against n1 and n2: no node drained, 'no majority' said"
all_nodes_alike

# ---- 4. the sbatch example ----
export IMGTOOL TRAINER TRAIN_ARGS="--max-steps 20 --train-limit 2048 --test-limit 256 --threads 1 --log-every 0 --json"
SBATCH=$REPO/examples/slurm/train.sbatch
job_out() { cat "$WORK/job-$1.out"; }
run_job() {  # NAME SBATCH_ARGS...: runs the example to completion; JOB_RC its exit
  local name=$1; shift
  JOB_RC=0
  sbatch --wait --open-mode=append -o "$WORK/job-$name.out" "$@" "$SBATCH" >"$WORK/job-$name.submit" 2>&1 || JOB_RC=$?
}
digests() { job_out "$1" | grep -o '"digest":"sha256:[0-9a-f]*"' | sort | uniq -c; }

run_job clean -N4 --ntasks-per-node=2
[ "$JOB_RC" = 0 ] || fail "the example job on a clean allocation: exit $JOB_RC: $(job_out clean)"
assert_contains "$(job_out clean)" "step 3: training" "the training step ran"
[ "$(digests clean | wc -l)" = 1 ] || fail "one weights digest expected: $(digests clean)"
assert_eq "$(digests clean | awk '{print $1}')" 8 "tasks that printed the weights digest"
pass "examples/slurm/train.sbatch on 4 clean nodes: check passed, then 8 tasks trained to one weights digest"

odd_node n3
run_job odd -N4 --ntasks-per-node=2
[ "$JOB_RC" != 0 ] || fail "the example job passed with n3 odd: $(job_out odd)"
! grep -q "step 3: training" <(job_out odd) || fail "training ran after a failed check: $(job_out odd)"
assert_contains "$(job_out odd)" "training not started" "the job says why it ended"
assert_contains "$(job_out odd)" "drain n3" "the job names the drained node"
assert_eq "$(node_state n3)" "drained|imgtool: env.NCCL_ALGO differs" "n3 after the job"
pass "with n3 odd the example job ends before training, n3 drained and named"
resume_all

# REQUEUE=1 on 3 of the 4 nodes (4 tasks: the trainer's world size must divide its 8 shards): the first run lands on n1-n3, drains n3 and requeues; the
# requeued run lands on n1, n2, n4 and trains. Slurm holds a requeued job back for a
# while (its begin time); the test releases it once it is pending again.
REQUEUE=1 sbatch --wait --open-mode=append -o "$WORK/job-requeue.out" -N3 -n4 "$SBATCH" \
  >"$WORK/job-requeue.submit" 2>&1 &
waiter=$!
id=""
while kill -0 "$waiter" 2>/dev/null; do
  id=$(grep -o '[0-9]*$' "$WORK/job-requeue.submit" 2>/dev/null || true)
  if [ -n "$id" ] && [ "$(squeue -h -j "$id" -o '%T' 2>/dev/null)" = PENDING ] &&
    scontrol show job "$id" 2>/dev/null | grep -q 'Restarts=1'; then
    scontrol update JobId="$id" StartTime=now || true  # it may have started meanwhile
    break
  fi
  sleep 0.2
done
wait "$waiter" || fail "the requeued job failed: $(job_out requeue)"
assert_contains "$(job_out requeue)" "requeueing job $id" "the first run requeued the job"
assert_contains "$(job_out requeue)" "preflight on 3 nodes (n[1-2,4])" "the requeued run avoided n3"
assert_contains "$(job_out requeue)" "step 3: training" "the requeued run trained"
assert_eq "$(node_state n3 | cut -d'|' -f1)" drained "n3 after the requeue"
pass "REQUEUE=1: the job drained n3, requeued itself and trained on n1, n2, n4"
