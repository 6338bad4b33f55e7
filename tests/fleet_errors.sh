#!/usr/bin/env bash
# imgtool fleet check refuses what it cannot run, quickly and saying why: malformed
# TF_CONFIG (bad JSON, no task, index out of range, bad port, a ps task), no cluster at
# all (exit 2 with a hint), bad flags (rank out of range, no rendezvous), unreadable
# --fingerprint / --expect files, a malformed image digest (exit 2); the chief's port
# already taken by another process (exit 6, naming the port).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fleet_lib.sh"

# Each refusal must come at once: a check that first waited for a cluster would hang here.
quick() {  # WANT_EXIT TEXT ARGS...: fleet check ARGS exits WANT_EXIT within 10 s saying TEXT
  local want=$1 text=$2
  shift 2
  local t0 t1
  t0=$(date +%s)
  expect_exit "$want" fleet check --timeout 30 "$@"
  t1=$(date +%s)
  [ $((t1 - t0)) -le 10 ] || fail "fleet check $* took $((t1 - t0)) s to refuse"
  assert_contains "$OUTPUT" "$text" "fleet check $*"
  # One line of cause, not a usage dump or a crash.
  if grep -qiE 'terminate called|Segmentation|Aborted' <<<"$OUTPUT"; then fail "fleet check $* crashed: $OUTPUT"; fi
}
A=127.0.0.1:29401 B=127.0.0.1:29402

# ---- TF_CONFIG ----
TF_CONFIG='{"cluster": {"worker": ["'$A'"' quick 2 "TF_CONFIG is not valid JSON"
pass "TF_CONFIG bad JSON: exit 2 ($(head -1 <<<"$OUTPUT"))"
TF_CONFIG='{"cluster": {"worker": ["'$A'", "'$B'"]}}' quick 2 'task'
pass "TF_CONFIG without a task: exit 2 ($(head -1 <<<"$OUTPUT"))"
TF_CONFIG='{"cluster": {"worker": ["'$A'", "'$B'"]}, "task": {"type": "worker", "index": 2}}' quick 2 "worker:2"
assert_contains "$OUTPUT" "not in the cluster" "index out of range"
pass "TF_CONFIG task index 2 of 2 workers: exit 2 ($(head -1 <<<"$OUTPUT"))"
TF_CONFIG='{"cluster": {"worker": ["'$A'", "'$B'"]}, "task": {"type": "worker", "index": -1}}' quick 2 "TF_CONFIG"
pass "TF_CONFIG task index -1: exit 2 ($(head -1 <<<"$OUTPUT"))"
TF_CONFIG='{"cluster": {"worker": ["127.0.0.1:99999", "'$B'"]}, "task": {"type": "worker", "index": 0}}' quick 2 "127.0.0.1:99999"
pass "TF_CONFIG port 99999: exit 2 ($(head -1 <<<"$OUTPUT"))"
TF_CONFIG='{"cluster": {"worker": ["127.0.0.1:http", "'$B'"]}, "task": {"type": "worker", "index": 1}}' quick 2 "127.0.0.1:http"
pass "TF_CONFIG port 'http': exit 2 ($(head -1 <<<"$OUTPUT"))"
TF_CONFIG='{"cluster": {"worker": ["'$A'"], "ps": ["'$B'"]}, "task": {"type": "worker", "index": 0}}' quick 2 "ps"
pass "TF_CONFIG with a ps task: exit 2 ($(head -1 <<<"$OUTPUT"))"

# ---- no cluster at all, or bad flags ----
quick 2 "TF_CONFIG"
pass "no TF_CONFIG and no --rank/--world-size: exit 2 with a hint ($(head -1 <<<"$OUTPUT"))"
quick 2 "--rank 4" --rank 4 --world-size 4 --rendezvous "$A"
pass "--rank 4 --world-size 4: exit 2 ($(head -1 <<<"$OUTPUT"))"
quick 2 "--rendezvous" --rank 1 --world-size 2
pass "--world-size 2 without --rendezvous: exit 2 ($(head -1 <<<"$OUTPUT"))"
quick 2 "--rendezvous" --rank 1 --world-size 2 --rendezvous 127.0.0.1
pass "--rendezvous without a port: exit 2 ($(head -1 <<<"$OUTPUT"))"

# ---- input files and values ----
C=(--rank 0 --world-size 1)
echo '{"fields": {"nccl": 2}}' >"$WORK/bad-fp.json"
quick 2 "fields.nccl" "${C[@]}" --fingerprint "$WORK/bad-fp.json"
pass "--fingerprint with a number for a value: exit 2 naming \$.fields.nccl"
quick 3 "$WORK/no-such.json" "${C[@]}" --fingerprint "$WORK/no-such.json"
pass "--fingerprint FILE that does not exist: exit 3 naming it"
echo '{"hello": "world"}' >"$WORK/bad-expect.json"
quick 2 "$WORK/bad-expect.json" "${C[@]}" --expect "$WORK/bad-expect.json"
pass "--expect with neither a stack.json nor a build record: exit 2 ($(head -1 <<<"$OUTPUT"))"
quick 2 "not-a-digest" "${C[@]}" --image-digest not-a-digest
pass "--image-digest not-a-digest: exit 2 ($(head -1 <<<"$OUTPUT"))"

# ---- the chief's port is taken ----
LISTENER=""
trap 'stop_pid "$LISTENER"; cleanup' EXIT
python3 -c '
import os, socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(8)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(s.getsockname()[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(600)' "$WORK/busy-port" &
LISTENER=$!
for _ in $(seq 1 100); do [ -s "$WORK/busy-port" ] && break; sleep 0.05; done
BUSY=$(cat "$WORK/busy-port")
TF_CONFIG='{"cluster": {"worker": ["127.0.0.1:'$BUSY'", "'$B'"]}, "task": {"type": "worker", "index": 0}}' \
  quick 6 "127.0.0.1:$BUSY"
pass "the chief's port $BUSY is held by another listener: exit 6 ($(head -1 <<<"$OUTPUT"))"
TF_CONFIG='{"cluster": {"chief": ["127.0.0.1:'$BUSY'"], "worker": ["'$B'"]}, "task": {"type": "chief", "index": 0}}' \
  quick 6 "$BUSY"
pass "the same with a chief task: exit 6"
