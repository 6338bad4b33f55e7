#!/usr/bin/env bash
# fleet check and the trainer started by a scheduler, with no TF_CONFIG and no cluster
# flag: each process gets the environment its launcher would give it, faked here (no
# Slurm, MPI or Kubernetes needed; tests/slurm_*.sh run the real Slurm).
#   Slurm: 4 tasks of a step over 2 nodes (block, then cyclic): all agree, and reports
#     name workers "ilt-n2 rank 2"; a differing worker and a missing one named by node;
#     rank 0 warns about the open store without IMGTOOL_FLEET_TOKEN and only then;
#     a SLURMD_NODENAME that contradicts the layout (exit 2); the derived port taken
#     (exit 6, saying to set --rendezvous / IMGTOOL_RENDEZVOUS); IMGTOOL_RENDEZVOUS
#     instead of the derived chief; the batch script (exit 2: use srun).
#   Open MPI: 4 ranks with IMGTOOL_RENDEZVOUS; without it, exit 2 saying so.
#   A Kubernetes Indexed Job: 4 pods, a missing one named by its pod name.
#   The trainer as 2 Slurm tasks: the weights of a 1-process run.
# Node names: ilt-n1, ilt-n2 and ilt-job-0.ilt-svc are added to /etc/hosts (127.0.0.1)
# when it is writable and removed at the end; otherwise the step runs on one node,
# "localhost", and the Kubernetes chief is given by IMGTOOL_RENDEZVOUS.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fleet_lib.sh"
: "${TRAINER:?set TRAINER to the trainer binary}"
N=4
LISTENER=""
trap 'stop_pid "$LISTENER"; hosts_remove; cleanup' EXIT
if hosts_add ilt-n1 ilt-n2 ilt-job-0.ilt-svc; then
  NODELIST="ilt-n[1-2]" NODES=(ilt-n1 ilt-n2) PER_NODE="2(x2)"
else
  NODELIST="localhost" NODES=(localhost) PER_NODE="4"
fi
getent hosts "${NODES[0]}" >/dev/null || fail "${NODES[0]} does not resolve"

warm_probe
FP="$WORK/probe-warm.json"
NCCL_ALGO=Tree "$IMGTOOL" probe -o "$WORK/fp-tree.json" >/dev/null 2>"$WORK/fp-tree.err" ||
  fail "imgtool probe with NCCL_ALGO=Tree: $(cat "$WORK/fp-tree.err")"

# A job id whose derived port (16384 + (job mod 1024) * 16 + step mod 16) is free now.
free_job() {
  python3 -c '
import random, socket
for _ in range(200):
    job = random.randrange(1000, 10**7)
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", 16384 + (job % 1024) * 16))
    except OSError:
        continue
    print(job)
    break'
}

# TASK_ENV i: the environment of task i (set per case below).
# run_tasks CASE N ARGS...: `imgtool fleet check ARGS` as tasks 0..N-1 (but FLEET_SKIP),
# each with TASK_ENV i and --fingerprint ${FPS[i]:-$FP}; leaves $WORK/CASE.i.{out,err,rc}.
run_tasks() {
  local case=$1 n=$2 i p
  shift 2
  local -a pids=() te
  for ((i = 0; i < n; i++)); do
    [[ " $FLEET_SKIP " == *" $i "* ]] && continue
    read -ra te <<<"$(TASK_ENV "$i")"
    (
      rc=0
      env "${te[@]}" timeout 120 "$IMGTOOL" fleet check --fingerprint "${FPS[$i]:-$FP}" "$@" \
        >"$WORK/$case.$i.out" 2>"$WORK/$case.$i.err" || rc=$?
      echo "$rc" >"$WORK/$case.$i.rc"
    ) &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  FPS=()
}
declare -A FPS=()
# expect_env_exit WANT "NAME=VALUE ..." ARGS...: imgtool ARGS in that environment exits WANT; output in $OUTPUT.
expect_env_exit() {
  local want=$1 got
  local -a e
  read -ra e <<<"$2"
  shift 2
  set +e
  OUTPUT=$(env "${e[@]}" "$IMGTOOL" "$@" 2>&1)
  got=$?
  set -e
  [ "$got" = "$want" ] || fail "${e[*]} imgtool $* exited $got, want $want: $OUTPUT"
}
warned() { grep -q "warning: the rendezvous store at .* is open" "$WORK/$1.$2.err"; }

# ---- Slurm: srun -n 4 over 2 nodes, block ----
JOB=$(free_job)
DIST=block
slurm_node() {  # RANK: the node block or cyclic puts it on
  local n=${#NODES[@]}
  if [ "$DIST" = cyclic ]; then echo "${NODES[$(($1 % n))]}"; else echo "${NODES[$(($1 * n / N))]}"; fi
}
slurm_env() {
  echo "SLURM_PROCID=$1 SLURM_NTASKS=$N SLURM_LOCALID=0 SLURM_JOB_ID=$JOB SLURM_STEP_ID=0" \
    "SLURM_STEP_NODELIST=$NODELIST SLURM_STEP_TASKS_PER_NODE=$PER_NODE SLURM_DISTRIBUTION=$DIST" \
    "SLURMD_NODENAME=$(slurm_node "$1") ${EXTRA_ENV:-}"
}
TASK_ENV() { slurm_env "$1"; }
run_tasks slurm $N --timeout 30
all_exit slurm $N 0
all_say slurm $N "4 of 4" OK
same_stdout slurm $N
warned slurm 0 || fail "slurm: rank 0 without a token did not warn: $(cat "$WORK/slurm.0.err")"
assert_contains "$(cat "$WORK/slurm.0.err")" "${NODES[0]}:$((16384 + (JOB % 1024) * 16))" "slurm: the warning names the derived store"
for i in 1 2 3; do ! warned slurm $i || fail "slurm: rank $i warned too: $(cat "$WORK/slurm.$i.err")"; done
pass "Slurm, 4 tasks over $NODELIST (block): all exit 0 with the same report; rank 0 alone warns the store is open"

# One worker differs, with a job token: named by node and rank everywhere, and no warning.
TOKEN=$(openssl rand -hex 32)
EXTRA_ENV="IMGTOOL_FLEET_TOKEN=$TOKEN"
FPS[2]="$WORK/fp-tree.json"
run_tasks slurm_diff $N --timeout 30
EXTRA_ENV=""
all_exit slurm_diff $N 1
all_say slurm_diff $N env.NCCL_ALGO Tree "$(slurm_node 2) rank 2" FAILED
same_stdout slurm_diff $N
for i in 0 1 2 3; do ! warned slurm_diff $i || fail "slurm_diff: task $i warned with a token set"; done
pass "Slurm with IMGTOOL_FLEET_TOKEN: rank 2's NCCL_ALGO=Tree is named '$(slurm_node 2) rank 2' by all 4; no warning"

# Cyclic, one task missing: every task that came names it by its node.
DIST=cyclic
FLEET_SKIP=" 1 "
run_tasks slurm_missing $N --timeout 3
all_exit slurm_missing $N 3
all_say slurm_missing $N "3 of 4" "$(slurm_node 1) rank 1"
FLEET_SKIP=""
pass "Slurm, cyclic, rank 1 never started: the other 3 exit 3 naming '$(slurm_node 1) rank 1'"
DIST=block

# SLURMD_NODENAME that contradicts the layout: exit 2 naming both.
if ((${#NODES[@]} > 1)); then
  expect_env_exit 2 "$(slurm_env 0 | sed "s/SLURMD_NODENAME=[^ ]*/SLURMD_NODENAME=ilt-n2/")" fleet check --timeout 5 --fingerprint "$FP"
  assert_contains "$OUTPUT" "SLURMD_NODENAME is ilt-n2, but SLURM_STEP_NODELIST" "wrong node name"
  assert_contains "$OUTPUT" "put rank 0 on ilt-n1" "wrong node name"
  pass "SLURMD_NODENAME ilt-n2 for rank 0 of a block layout: exit 2 naming both nodes"
fi

# The batch script (step 4294967294) is not a task: exit 2, saying to use srun.
expect_env_exit 2 "$(slurm_env 0 | sed 's/SLURM_STEP_ID=0/SLURM_STEP_ID=4294967294/')" fleet check --timeout 5 --fingerprint "$FP"
assert_contains "$OUTPUT" "start it with srun" "batch step"
pass "Slurm's batch step: exit 2 ($(head -1 <<<"$OUTPUT" | cut -c1-120)...)"

# The derived port taken by another process: the chief exits 6 and says what to set.
PORT=$((16384 + (JOB % 1024) * 16))
# SO_REUSEADDR: the cases above leave the port's connections in TIME_WAIT.
python3 -c '
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(8)
with open(sys.argv[2], "w") as f:
    f.write("up")
time.sleep(600)' "$PORT" "$WORK/listening" &
LISTENER=$!
for _ in $(seq 1 100); do [ -s "$WORK/listening" ] && break; sleep 0.05; done
[ -s "$WORK/listening" ] || fail "could not listen on port $PORT to take it"
expect_env_exit 6 "$(slurm_env 0)" fleet check --timeout 5 --fingerprint "$FP"
assert_contains "$OUTPUT" "port $PORT" "port in use"
assert_contains "$OUTPUT" "set --rendezvous HOST:PORT or IMGTOOL_RENDEZVOUS" "port in use"
stop_pid "$LISTENER"
LISTENER=""
pass "Slurm's derived port $PORT in use: the chief exits 6 saying to set --rendezvous or IMGTOOL_RENDEZVOUS"

# IMGTOOL_RENDEZVOUS replaces the derived chief address, and only it.
EXTRA_ENV="IMGTOOL_RENDEZVOUS=127.0.0.1:$(free_port)"
FPS[3]="$WORK/fp-tree.json"
run_tasks slurm_rv $N --timeout 30
EXTRA_ENV=""
all_exit slurm_rv $N 1
all_say slurm_rv $N "$(slurm_node 3) rank 3"
pass "Slurm with IMGTOOL_RENDEZVOUS: the store moves, the ranks and node names stay"

# ---- Open MPI: mpirun -n 4 ----
OMPI_RV=""
TASK_ENV() {
  echo "OMPI_COMM_WORLD_RANK=$1 OMPI_COMM_WORLD_SIZE=$N OMPI_COMM_WORLD_LOCAL_RANK=$1 OMPI_COMM_WORLD_LOCAL_SIZE=$N" \
    "$OMPI_RV"
}
OMPI_RV="IMGTOOL_RENDEZVOUS=127.0.0.1:$(free_port)"
FPS[1]="$WORK/fp-tree.json"
run_tasks ompi $N --timeout 30
all_exit ompi $N 1
all_say ompi $N env.NCCL_ALGO "rank 1"
same_stdout ompi $N
warned ompi 0 || fail "ompi: rank 0 without a token did not warn"
assert_contains "$(cat "$WORK/ompi.0.err")" "mpirun -x IMGTOOL_FLEET_TOKEN" "ompi warning"
pass "Open MPI, 4 ranks, IMGTOOL_RENDEZVOUS: rank 1's difference named 'rank 1' by all; rank 0 warns (mpirun -x)"
OMPI_RV=""
expect_env_exit 2 "$(TASK_ENV 1)" fleet check --timeout 5 --fingerprint "$FP"
assert_contains "$OUTPUT" "mpirun tells no task where rank 0 runs: pass --rendezvous HOST:PORT" "ompi without rendezvous"
pass "Open MPI without a rendezvous: exit 2 saying to pass --rendezvous or IMGTOOL_RENDEZVOUS"

# ---- a Kubernetes Indexed Job: 4 pods of job ilt-job behind Service ilt-svc ----
K8S_PORT=$(free_port)
CHIEF=127.0.0.1
[ "${NODES[0]}" = ilt-n1 ] && CHIEF=ilt-job-0.ilt-svc
TASK_ENV() {
  echo "JOB_COMPLETION_INDEX=$1 IMGTOOL_WORLD_SIZE=$N IMGTOOL_K8S_SERVICE=ilt-svc HOSTNAME=ilt-job-$1" \
    "IMGTOOL_RENDEZVOUS=$CHIEF:$K8S_PORT"
}
FLEET_SKIP=" 2 "
run_tasks k8s $N --timeout 3
all_exit k8s $N 3
all_say k8s $N "3 of 4" "ilt-job-2 rank 2"
FLEET_SKIP=""
pass "Indexed Job, pod 2 missing: pods 0, 1, 3 meet at $CHIEF:$K8S_PORT and exit 3 naming 'ilt-job-2 rank 2'"
run_tasks k8s_all $N --timeout 30
all_exit k8s_all $N 0
assert_contains "$(cat "$WORK/k8s_all.0.err")" "secretKeyRef" "k8s warning"
pass "Indexed Job, 4 pods: all exit 0; pod 0 warns (a Secret closes the store)"

# ---- the trainer as 2 Slurm tasks on one node: the weights of 1 process ----
DATA=${TRAINER_TEST_DATA:-/usr/share/datasets/fashion-mnist}
SHORT=(--data "$DATA" --train-limit 640 --test-limit 100 --epochs 1 --log-every 0 --threads 1 --seed 5)
"$TRAINER" "${SHORT[@]}" >"$WORK/t1.out" 2>"$WORK/t1.err" || fail "trainer alone: $(cat "$WORK/t1.err")"
REF=$(awk '/^weights /{print $2}' "$WORK/t1.out")
[[ $REF == sha256:* ]] || fail "trainer alone printed no weights: $(cat "$WORK/t1.out")"
JOB=$(free_job)
tpids=()
for r in 0 1; do
  env SLURM_PROCID=$r SLURM_NTASKS=2 SLURM_LOCALID=$r SLURM_JOB_ID="$JOB" SLURM_STEP_ID=0 \
    SLURM_STEP_NODELIST="${NODES[0]}" SLURM_STEP_TASKS_PER_NODE=2 SLURMD_NODENAME="${NODES[0]}" \
    timeout 300 "$TRAINER" "${SHORT[@]}" --rendezvous-timeout 60 >"$WORK/t2.$r.out" 2>"$WORK/t2.$r.err" &
  tpids+=($!)
done
for r in 0 1; do wait "${tpids[$r]}" || fail "trainer rank $r under Slurm: $(cat "$WORK/t2.$r.err")"; done
for r in 0 1; do
  got=$(awk '/^weights /{print $2}' "$WORK/t2.$r.out")
  assert_eq "$got" "$REF" "trainer rank $r of 2 under Slurm"
done
grep -q "^collectives: .*, 2 ranks" "$WORK/t2.0.err" || fail "trainer under Slurm did not form 2 ranks: $(cat "$WORK/t2.0.err")"
warned t2 0 || fail "trainer rank 0 under Slurm without a token did not warn: $(cat "$WORK/t2.0.err")"
pass "trainer as 2 Slurm tasks (job $JOB): both print the 1-process weights $REF"
