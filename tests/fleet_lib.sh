# shellcheck shell=bash
# Helpers for the fleet preflight tests (fleet_check, fleet_missing, fleet_errors,
# fleet_netns): N `imgtool fleet check` processes on 127.0.0.1, each with its own
# TF_CONFIG, their outputs and exit codes collected per worker.
# Source after lib.sh. Every process started here is waited for, each under `timeout 120`.
#
# The probe hashes every CUDA library it loads (~750 MB here); all processes share one
# hash cache ($XDG_CACHE_HOME/imgtool/probe, inside $WORK), warmed once by warm_probe.
export XDG_CACHE_HOME="$WORK/xdg-cache"
mkdir -p "$XDG_CACHE_HOME"
# Recorded environment variables must not leak in from whoever runs the test.
while read -r v; do unset "$v"; done < <(env | sed -n 's/^\(NCCL_[A-Za-z0-9_]*\|CUDA_[A-Za-z0-9_]*\|CUBLAS[A-Za-z0-9_]*\|CUDNN_[A-Za-z0-9_]*\|NVIDIA_TF32_OVERRIDE\|IMGTOOL_IMAGE_DIGEST\|IMGTOOL_IMAGE_INDEX\|TF_CONFIG\)=.*/\1/p')
# Nor a launcher's (a test run inside a Slurm job, an mpirun or a pod would otherwise be
# taken for one of its tasks: trainer/cluster/launcher.h), nor a job token.
while read -r v; do unset "$v"; done < <(env | sed -n 's/^\(SLURM_[A-Za-z0-9_]*\|SLURMD_NODENAME\|OMPI_[A-Za-z0-9_]*\|JOB_COMPLETION_INDEX\|IMGTOOL_RENDEZVOUS\|IMGTOOL_WORLD_SIZE\|IMGTOOL_K8S_SERVICE\|IMGTOOL_FLEET_TOKEN\)=.*/\1/p')
unset LD_LIBRARY_PATH

# The image digest every worker claims unless a case says otherwise.
DIGEST_A="sha256:$(printf 'a%.0s' $(seq 64))"
DIGEST_B="sha256:$(printf 'b%.0s' $(seq 64))"
export IMGTOOL_IMAGE_DIGEST="$DIGEST_A"

free_ports() {  # N: N distinct free TCP ports on 127.0.0.1
  python3 -c '
import socket, sys
ss = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in ss:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in ss))' "$1"
}

# tf_config CHIEF INDEX ADDR...: TF_CONFIG for task INDEX. CHIEF=chief: ADDR[0] is the
# chief task and INDEX -1 means it; CHIEF=none: every ADDR is a worker (worker 0 is chief).
tf_config() {
  python3 -c '
import json, sys
mode, index, addrs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
if mode == "chief":
    cluster = {"chief": addrs[:1], "worker": addrs[1:]}
    task = {"type": "chief", "index": 0} if index < 0 else {"type": "worker", "index": index}
else:
    cluster, task = {"worker": addrs}, {"type": "worker", "index": index}
print(json.dumps({"cluster": cluster, "task": task}))' "$@"
}

warm_probe() {  # hashes this machine's CUDA libraries once into the shared cache
  local t0 t1
  t0=$(date +%s.%N)
  "$IMGTOOL" probe -o "$WORK/probe-warm.json" >/dev/null 2>"$WORK/probe-warm.err" ||
    fail "imgtool probe: $(cat "$WORK/probe-warm.err")"
  t1=$(date +%s.%N)
  PROBE_SECONDS=$(python3 -c "print(f'{$t1 - $t0:.2f}')")
}

# XENV[i]="NAME=VALUE ..." adds environment, XARGS[i]="--flag value ..." arguments, to
# task i of the next run_fleet (both reset after it; no spaces inside one word); XBIN[i]
# runs task i with another imgtool (an arm64 one under qemu; kept across runs).
declare -A XENV=() XARGS=() XBIN=()
FLEET_CHIEF=none   # or chief: the first address is a chief task
FLEET_SKIP=""      # " 1 3 ": indexes (as in the worker list) not started

# run_fleet CASE N ARGS...: N tasks on 127.0.0.1 (free ports), each running
# `imgtool fleet check ARGS` with its TF_CONFIG; waits for all. Leaves, per task i in
# address order, $WORK/CASE.i.out (stdout), .err (stderr), .rc, and FLEET_ADDRS.
run_fleet() {
  local case=$1 n=$2
  shift 2
  local -a ports pids=() xe xa
  read -ra ports <<<"$(free_ports "$n")"
  FLEET_ADDRS=()
  local p i
  for p in "${ports[@]}"; do FLEET_ADDRS+=("127.0.0.1:$p"); done
  for ((i = 0; i < n; i++)); do
    [[ " $FLEET_SKIP " == *" $i "* ]] && continue
    xe=()
    xa=()
    [ -n "${XENV[$i]:-}" ] && read -ra xe <<<"${XENV[$i]}"
    [ -n "${XARGS[$i]:-}" ] && read -ra xa <<<"${XARGS[$i]}"
    local index=$i
    [ "$FLEET_CHIEF" = chief ] && index=$((i - 1))
    local tf
    tf=$(tf_config "$FLEET_CHIEF" "$index" "${FLEET_ADDRS[@]}")
    (
      rc=0
      env "${xe[@]}" TF_CONFIG="$tf" timeout 120 "${XBIN[$i]:-$IMGTOOL}" fleet check "$@" "${xa[@]}" \
        >"$WORK/$case.$i.out" 2>"$WORK/$case.$i.err" || rc=$?
      echo "$rc" >"$WORK/$case.$i.rc"
    ) &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  XENV=() XARGS=()
}

started() {  # N: the indexes run_fleet started
  local i
  for ((i = 0; i < $1; i++)); do [[ " $FLEET_SKIP " == *" $i "* ]] || echo "$i"; done
}
output_of() { cat "$WORK/$1.$2.out" "$WORK/$1.$2.err"; }  # CASE I

# all_exit CASE N CODE: every started task exited CODE.
all_exit() {
  local i rc
  for i in $(started "$2"); do
    rc=$(cat "$WORK/$1.$i.rc")
    [ "$rc" = "$3" ] || fail "$1: task $i exited $rc, want $3: $(output_of "$1" "$i")"
  done
}
# all_say CASE N TEXT...: every started task's output contains every TEXT.
all_say() {
  local case=$1 n=$2 i t
  shift 2
  for i in $(started "$n"); do
    for t in "$@"; do assert_contains "$(output_of "$case" "$i")" "$t" "$case: task $i"; done
  done
}
# none_say CASE N TEXT: no task's output contains TEXT.
none_say() {
  local i
  for i in $(started "$2"); do
    if grep -qF -- "$3" <(output_of "$1" "$i"); then fail "$1: task $i should not say '$3': $(output_of "$1" "$i")"; fi
  done
}
# same_stdout CASE N [EXCLUDE]: every task printed the same report (stdout), but for
# lines matching the regex EXCLUDE (a worker's own timing, e.g. golden_run.seconds).
same_stdout() {
  local first="" i
  for i in $(started "$2"); do
    if [ -n "${3:-}" ]; then
      grep -vE -- "$3" "$WORK/$1.$i.out" >"$WORK/$1.$i.cmp" || true
    else
      cp "$WORK/$1.$i.out" "$WORK/$1.$i.cmp"
    fi
    if [ -z "$first" ]; then first=$i; continue; fi
    cmp -s "$WORK/$1.$first.cmp" "$WORK/$1.$i.cmp" ||
      fail "$1: task $i's report differs from task $first's: $(diff "$WORK/$1.$first.cmp" "$WORK/$1.$i.cmp")"
  done
}
