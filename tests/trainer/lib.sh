# Helpers for the trainer integration tests. Each test script is called as
#   bash TEST.sh PATH/TO/trainer WORKDIR
# and sources this file. Everything runs on 127.0.0.1.
set -euo pipefail

TRAINER="$1"
WORK="$2"
rm -rf "$WORK"
mkdir -p "$WORK"
DATA="${TRAINER_TEST_DATA:-/usr/share/datasets/fashion-mnist}"
if [[ ! -f "$DATA/train-images-idx3-ubyte.gz" ]]; then
  echo "FAIL: Fashion-MNIST not found in $DATA (scripts/setup installs dataset-fashion-mnist)" >&2
  exit 1
fi

# A launcher's variables from whoever runs the tests (a Slurm job, an mpirun, a pod) would
# make every trainer here one of its tasks (trainer/cluster/launcher.h).
while read -r v; do unset "$v"; done < <(env | sed -n 's/^\(SLURM_[A-Za-z0-9_]*\|SLURMD_NODENAME\|OMPI_[A-Za-z0-9_]*\|JOB_COMPLETION_INDEX\|IMGTOOL_RENDEZVOUS\|IMGTOOL_WORLD_SIZE\|IMGTOOL_K8S_SERVICE\|TF_CONFIG\)=.*/\1/p')

# A short schedule: 3200 examples = 50 steps of 64 per epoch.
SHORT=(--data "$DATA" --train-limit 3200 --test-limit 500 --epochs 2 --log-every 0 --threads 1)

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

pass() { echo "ok: $*"; }

# free_port, first_to_exit
source "$(dirname "${BASH_SOURCE[0]}")/../procs.sh"

# "sha256:..." from the text output of a run.
digest_of() { awk '/^weights /{print $2}' "$1"; }

# TF_CONFIG for N tasks on 127.0.0.1: with_chief=1 gives chief + (N-1) workers,
# with_chief=0 gives N workers (worker 0 is the chief).
# Usage: tf_config N with_chief type index PORT...
tf_config() {
  local n=$1 with_chief=$2 type=$3 index=$4
  shift 4
  local ports=("$@")
  python3 - "$n" "$with_chief" "$type" "$index" "${ports[@]}" <<'PY'
import json, sys
n, with_chief, typ, index = int(sys.argv[1]), sys.argv[2] == "1", sys.argv[3], int(sys.argv[4])
addrs = ["127.0.0.1:%s" % p for p in sys.argv[5:5 + n]]
cluster = {"chief": addrs[:1], "worker": addrs[1:]} if with_chief else {"worker": addrs}
print(json.dumps({"cluster": cluster, "task": {"type": typ, "index": index}}))
PY
}

# Starts an N-task job with TF_CONFIG in the background; outputs go to $prefix.<rank>.out
# and .err, pids to the array JOB_PIDS (rank order). Extra args are passed to every task.
start_job() {
  local n=$1 with_chief=$2 prefix=$3
  shift 3
  local ports=()
  for ((i = 0; i < n; i++)); do ports+=("$(free_port)"); done
  JOB_PIDS=()
  for ((r = 0; r < n; r++)); do
    local type=worker index=$r
    if [[ $with_chief == 1 ]]; then
      if ((r == 0)); then type=chief index=0; else index=$((r - 1)); fi
    fi
    TF_CONFIG="$(tf_config "$n" "$with_chief" $type $index "${ports[@]}")" \
      "$TRAINER" "$@" >"$prefix.$r.out" 2>"$prefix.$r.err" &
    JOB_PIDS+=($!)
  done
}

# Waits for every pid in JOB_PIDS; fails naming the task that failed.
wait_job() {
  local prefix=$1 r=0
  for pid in "${JOB_PIDS[@]}"; do
    if ! wait "$pid"; then
      cat "$prefix.$r.err" >&2
      fail "task $r of $prefix exited non-zero"
    fi
    r=$((r + 1))
  done
}

# Kills our background jobs when the script ends (by pid, never by name).
cleanup_jobs() {
  for pid in "${JOB_PIDS[@]:-}"; do
    [[ -n "$pid" ]] && kill -9 "$pid" 2>/dev/null || true
  done
}
trap cleanup_jobs EXIT
