# Clear errors and non-zero exits: malformed TF_CONFIG, a worker that never arrives, a
# missing or damaged dataset, an unsupported world size, the CUDA backend.
source "$(dirname "$0")/lib.sh"

# expect CODE PATTERN -- command...: exit status CODE and stderr matching PATTERN.
expect() {
  local code=$1 pattern=$2
  shift 3
  local rc=0
  "$@" >"$WORK/out" 2>"$WORK/err" || rc=$?
  [[ $rc == "$code" ]] || fail "exit $rc (want $code) from: $* -- $(cat "$WORK/err")"
  grep -qF -- "$pattern" "$WORK/err" || fail "stderr lacks \"$pattern\": $(cat "$WORK/err")"
  pass "exit $rc: $(head -1 "$WORK/err")"
}

expect 2 'TF_CONFIG is not valid JSON' -- env TF_CONFIG='{"cluster": ' "$TRAINER" "${SHORT[@]}"
expect 2 'TF_CONFIG task worker:5 is not in the cluster' -- \
  env TF_CONFIG='{"cluster": {"worker": ["127.0.0.1:1234"]}, "task": {"type": "worker", "index": 5}}' \
  "$TRAINER" "${SHORT[@]}"
expect 2 'cluster.worker[1]: address "nohost" is not host:port' -- \
  env TF_CONFIG='{"cluster": {"worker": ["127.0.0.1:1234", "nohost"]}, "task": {"type": "worker", "index": 0}}' \
  "$TRAINER" "${SHORT[@]}"

# The chief waits --rendezvous-timeout for a worker that never starts, then names it.
p0=$(free_port) p1=$(free_port)
start=$(date +%s)
expect 3 "still missing worker:0 (rank 1, 127.0.0.1:$p1)" -- \
  env TF_CONFIG="$(tf_config 2 1 chief 0 "$p0" "$p1")" "$TRAINER" "${SHORT[@]}" --rendezvous-timeout 2
(($(date +%s) - start < 30)) || fail "the chief took too long to give up"
# And a worker whose chief never starts gives up too.
expect 6 "cannot reach the rendezvous store at 127.0.0.1:$p0" -- \
  env TF_CONFIG="$(tf_config 2 1 worker 0 "$p0" "$p1")" "$TRAINER" "${SHORT[@]}" --rendezvous-timeout 1

expect 3 '/nonexistent/train-images-idx3-ubyte.gz: cannot open' -- "$TRAINER" "${SHORT[@]}" --data /nonexistent
mkdir -p "$WORK/bad"
cp "$DATA"/*.gz "$WORK/bad/"
head -c 20000 "$DATA/train-labels-idx1-ubyte.gz" >"$WORK/bad/train-labels-idx1-ubyte.gz"
expect 4 "$WORK/bad/train-labels-idx1-ubyte.gz" -- "$TRAINER" "${SHORT[@]}" --data "$WORK/bad"
cp "$DATA/t10k-labels-idx1-ubyte.gz" "$WORK/bad/train-labels-idx1-ubyte.gz"
expect 4 "holds 10000 labels but $WORK/bad/train-images-idx3-ubyte.gz holds 60000 images" -- \
  "$TRAINER" "${SHORT[@]}" --data "$WORK/bad"
cp "$DATA/train-labels-idx1-ubyte.gz" "$WORK/bad/train-images-idx3-ubyte.gz"
expect 4 "train-images-idx3-ubyte.gz: has 1 dimensions, expected 3" -- "$TRAINER" "${SHORT[@]}" --data "$WORK/bad"

expect 2 'world size 3 must divide --shards 8' -- "$TRAINER" "${SHORT[@]}" --world-size 3 --rank 0 \
  --rendezvous 127.0.0.1:1 --rendezvous-timeout 1
# --backend cuda without a usable GPU refuses to start, saying why: the backend is not
# built, or the CUDA runtime's reason there is no device. CUDA_VISIBLE_DEVICES hides any
# GPU, so this holds on GPU machines too.
rc=0
env CUDA_VISIBLE_DEVICES= "$TRAINER" "${SHORT[@]}" --backend cuda >"$WORK/out" 2>"$WORK/err" || rc=$?
[[ $rc == 2 ]] || fail "exit $rc (want 2) from --backend cuda without a device -- $(cat "$WORK/err")"
grep -qE -- '--backend cuda: (the CUDA backend is not built|no CUDA device \(cudaGetDeviceCount: .+\))' "$WORK/err" ||
  fail "--backend cuda without a device: unclear message: $(cat "$WORK/err")"
pass "exit $rc: $(head -1 "$WORK/err")"
