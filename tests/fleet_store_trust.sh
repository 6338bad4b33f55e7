#!/usr/bin/env bash
# Who may take part in `imgtool fleet check` (issue 24, class 6; trainer/cluster/tcp_store.h):
#  1. open store: a process outside the job (tests/trainer/store_attack.py outsider)
#     overwrites fp/1 and fp/2 with the chief's digest while the chief waits, and tries
#     to claim the chief's rank: refused, and every worker still says MISMATCH naming the
#     worker that differs;
#  2. two processes started as worker 1: the second to claim the rank exits 5 naming
#     both (address, pid), and the chief refuses a verdict: everyone exits 5;
#  3. IMGTOOL_FLEET_TOKEN: an outsider without it, or with a guess, is refused; workers
#     without it or with another one exit 5; a short one exits 2; the token shows in no
#     output and never crosses the network (worker 1 talks through a recording relay);
#  4. with the right token on every worker the check passes as before.
source "$(dirname "$0")/lib.sh"
FLEET="$IMGTOOL"
[ -x "$IMGTOOL_FLEET" ] && FLEET="$IMGTOOL_FLEET"
ATTACK="$REPO/tests/trainer/store_attack.py"
unset IMGTOOL_FLEET_TOKEN TF_CONFIG

fingerprint() {  # FILE NCCL
  cat >"$1" <<JSON
{"fields": {"image.digest": "sha256:$(printf 'a%.0s' $(seq 64))", "nccl": "$2", "cuda.runtime": "13.0"},
 "node": {"hostname": "node"}}
JSON
}
fingerprint "$WORK/same.json" 2.28.9
fingerprint "$WORK/differs.json" 2.19.3

PIDS=()
# check NAME RANK WORLD FINGERPRINT [ENV...]: `fleet check` in the background; its pid in
# PIDS and $LAST, its outputs in $WORK/NAME.{out,err}.
check() {
  local name=$1 rank=$2 world=$3 fp=$4
  shift 4
  env "$@" timeout 120 "$FLEET" fleet check --rank "$rank" --world-size "$world" --rendezvous "127.0.0.1:$PORT" \
    --fingerprint "$fp" --timeout 60 >"$WORK/$name.out" 2>"$WORK/$name.err" &
  LAST=$!
  PIDS+=("$LAST")
}
# exit_of PID: its exit status in $rc (not in a subshell: only this shell can wait for it).
exit_of() {
  rc=0
  wait "$1" || rc=$?
}
cleanup_all() {
  for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
  cleanup
}
trap cleanup_all EXIT

# --- 1. An outsider overwrites fp/1 and fp/2 (the red team's attack) ---
PORT=$(free_port)
check chief 0 3 "$WORK/same.json"
chief=$LAST
check w1 1 3 "$WORK/same.json"
w1=$LAST
python3 "$ATTACK" outsider 127.0.0.1 "$PORT" --wait fp/0 --wait fp/1 --overwrite fp/1 --overwrite fp/2 \
  --overwrite verdict >"$WORK/outsider.json" 2>"$WORK/outsider.err" || fail "outsider: $(cat "$WORK/outsider.err")"
check w2 2 3 "$WORK/differs.json"
w2=$LAST
for p in chief:$chief w1:$w1 w2:$w2; do
  exit_of "${p#*:}"
  [ "$rc" = 1 ] || fail "${p%%:*} exited $rc, want 1 (MISMATCH): $(cat "$WORK/${p%%:*}.err" "$WORK/${p%%:*}.out")"
  grep -q '^fleet check: MISMATCH: 1 field differs (nccl); worker 2 differs from the majority' "$WORK/${p%%:*}.out" ||
    fail "${p%%:*} does not name worker 2: $(cat "$WORK/${p%%:*}.out")"
done
python3 - "$WORK/outsider.json" <<'PY' || fail "the outsider's writes: $(cat "$WORK/outsider.json")"
import json, sys
o = json.load(open(sys.argv[1]))
assert o["mode"] == "open", o
assert o["waited"] == [1, 1], o
for key in ("fp/1", "fp/2", "verdict"):
    status, why = o["writes"][key]
    assert status == 2 and why.endswith("this connection claimed no rank"), (key, status, why)
status, why = o["outside_claim"]
assert status == 1 and why == "rank 100000 is not one of the job's 3 ranks", o["outside_claim"]
status, why = o["chief_claim"]
assert status == 1 and why == "rank 0 is the chief's, claimed only by the process that serves the store", o["chief_claim"]
PY
grep -qE '^imgtool: fleet check: store: denied a write by 127\.0\.0\.1:[0-9]+: fp/2 is rank 2.s; this connection claimed no rank$' \
  "$WORK/chief.err" || fail "the chief did not log the forged fp/2: $(cat "$WORK/chief.err")"
pass "an outsider's overwrites of fp/1, fp/2 and the verdict, and its claim of the chief's rank, were refused; all 3 workers say worker 2 differs (exit 1)"

# --- 2. Two processes started as worker 1 ---
PORT=$(free_port)
check chief 0 3 "$WORK/same.json"
chief=$LAST
check a 1 3 "$WORK/same.json"
a=$LAST
check b 1 3 "$WORK/differs.json"
b=$LAST
# The second to claim rank 1 is refused at once; the other waits for the verdict.
loser=$(first_to_exit "$a" a "$b" b)
[ -n "$loser" ] || fail "neither process with rank 1 was refused"
check w2 2 3 "$WORK/same.json"
w2=$LAST
for p in chief:$chief a:$a b:$b w2:$w2; do
  exit_of "${p#*:}"
  [ "$rc" = 5 ] || fail "${p%%:*} exited $rc, want 5: $(cat "$WORK/${p%%:*}.err" "$WORK/${p%%:*}.out")"
  grep -qE "rank 1 is claimed twice: first by 127\.0\.0\.1:[0-9]+ \(pid [0-9]+ on [^)]+\), then by 127\.0\.0\.1:[0-9]+ \(pid [0-9]+ on [^)]+\)" \
    "$WORK/${p%%:*}.err" || fail "${p%%:*} does not name both claimants: $(cat "$WORK/${p%%:*}.err")"
done
# Both claimants are named, with their own pids.
line=$(grep -o 'rank 1 is claimed twice.*' "$WORK/$loser.err" | head -1)
[ "$(grep -oE 'pid [0-9]+' <<<"$line" | sort -u | wc -l)" = 2 ] || fail "two different pids expected: $line"
grep -q "^imgtool: error: fleet check: worker 1: store 127.0.0.1:$PORT: refused the claim of rank 1: rank 1 is claimed twice" \
  "$WORK/$loser.err" || fail "the refused one: $(cat "$WORK/$loser.err")"
grep -q "^imgtool: error: fleet check: rank 1 is claimed twice" "$WORK/chief.err" || fail "the chief: $(cat "$WORK/chief.err")"
pass "two processes as worker 1: the second is refused naming both pids, the chief refuses a verdict; all exit 5"

# --- 3. A job token ---
TOKEN=$(python3 -c 'import secrets; print(secrets.token_hex(32))')
T="IMGTOOL_FLEET_TOKEN=$TOKEN"
PORT=$(free_port)
check chief 0 3 "$WORK/same.json" "$T"
chief=$LAST
check w1 1 3 "$WORK/same.json" "$T"
w1=$LAST
python3 "$ATTACK" outsider 127.0.0.1 "$PORT" --guess "not-the-token-0123456789" >"$WORK/outsider.json" \
  2>"$WORK/outsider.err" || fail "outsider: $(cat "$WORK/outsider.err")"
python3 - "$WORK/outsider.json" <<'PY' || fail "the outsider with a token store: $(cat "$WORK/outsider.json")"
import json, sys
o = json.load(open(sys.argv[1]))
assert o["mode"] == "token", o
assert o["claim_without_proof"] == [1, "no proof of the job token, which this store requires"], o
assert o["claim_with_guess"] == [1, "a wrong proof of the job token (the claimant holds another token)"], o
assert o["read_dropped"] is True, o
PY
# Workers 2 without the token, with another, with a short one: refused, the job unharmed.
check nokey 2 3 "$WORK/differs.json"
exit_of "$LAST"
[ "$rc" = 5 ] || fail "a worker without the token exited $rc: $(cat "$WORK/nokey.err")"
grep -q "it requires the job token, and this process has none (set IMGTOOL_FLEET_TOKEN" "$WORK/nokey.err" ||
  fail "without the token: $(cat "$WORK/nokey.err")"
check wrongkey 2 3 "$WORK/differs.json" "IMGTOOL_FLEET_TOKEN=$(python3 -c 'import secrets; print(secrets.token_hex(32))')"
exit_of "$LAST"
[ "$rc" = 5 ] || fail "a worker with another token exited $rc: $(cat "$WORK/wrongkey.err")"
grep -q "refused the claim of rank 2: a wrong proof of the job token" "$WORK/wrongkey.err" ||
  fail "with another token: $(cat "$WORK/wrongkey.err")"
check shortkey 2 3 "$WORK/differs.json" "IMGTOOL_FLEET_TOKEN=short"
exit_of "$LAST"
[ "$rc" = 2 ] || fail "a worker with a short token exited $rc: $(cat "$WORK/shortkey.err")"
grep -q "IMGTOOL_FLEET_TOKEN: a job token of 5 bytes; it needs 16 to 4096" "$WORK/shortkey.err" ||
  fail "a short token: $(cat "$WORK/shortkey.err")"
# The real worker 2 (it differs) talks through a relay that records every byte.
python3 "$ATTACK" relay "$WORK/relay.port" 127.0.0.1 "$PORT" "$WORK/wire.bin" 2>"$WORK/relay.err" &
relay=$!
PIDS+=("$relay")
for _ in $(seq 200); do [ -s "$WORK/relay.port" ] && break; sleep 0.05; done
[ -s "$WORK/relay.port" ] || fail "the relay did not start: $(cat "$WORK/relay.err")"
env "$T" timeout 120 "$FLEET" fleet check --rank 2 --world-size 3 --rendezvous "127.0.0.1:$(cat "$WORK/relay.port")" \
  --fingerprint "$WORK/differs.json" --timeout 60 >"$WORK/w2.out" 2>"$WORK/w2.err" &
w2=$!
PIDS+=("$w2")
for p in chief:$chief w1:$w1 w2:$w2; do
  exit_of "${p#*:}"
  [ "$rc" = 1 ] || fail "${p%%:*} exited $rc with the token, want 1: $(cat "$WORK/${p%%:*}.err" "$WORK/${p%%:*}.out")"
  grep -q '^fleet check: MISMATCH: 1 field differs (nccl); worker 2 differs from the majority' "$WORK/${p%%:*}.out" ||
    fail "${p%%:*} with the token: $(cat "$WORK/${p%%:*}.out")"
done
stop_pid "$relay"
[ -s "$WORK/wire.bin" ] || fail "the relay recorded nothing"
python3 - "$WORK/wire.bin" <<'PY' || fail "the handshake is not on the wire"
import sys
wire = open(sys.argv[1], "rb").read()
assert wire[:1] == b"\x05" and b"fp/2" in wire, wire[:64]
PY
if grep -rqaF -- "$TOKEN" "$WORK"/*.out "$WORK"/*.err "$WORK"/*.json "$WORK/wire.bin"; then
  fail "the token appears in: $(grep -rlaF -- "$TOKEN" "$WORK"/*.out "$WORK"/*.err "$WORK"/*.json "$WORK/wire.bin")"
fi
grep -q "store: refused the claim of rank 2 by 127.0.0.1:[0-9]* (pid [0-9]* on [^)]*): a wrong proof of the job token" \
  "$WORK/chief.err" || fail "the chief did not log the wrong token: $(cat "$WORK/chief.err")"
pass "with IMGTOOL_FLEET_TOKEN: an outsider and workers without it or with another are refused (exit 5; a short one exit 2), the check still finds worker 2 (exit 1), and the token is in no output and not on the wire ($(wc -c <"$WORK/wire.bin") bytes recorded)"

# --- 4. The right token everywhere, the same stack: OK as before ---
PORT=$(free_port)
for r in 0 1 2; do check "ok$r" "$r" 3 "$WORK/same.json" "$T"; done
for r in 0 1 2; do
  exit_of "${PIDS[-3 + r]}"
  [ "$rc" = 0 ] || fail "worker $r exited $rc with the token: $(cat "$WORK/ok$r.err" "$WORK/ok$r.out")"
  grep -q '^fleet check: OK: 3 of 3 workers match' "$WORK/ok$r.out" || fail "worker $r: $(cat "$WORK/ok$r.out")"
done
pass "with the right token on every worker: OK: 3 of 3 workers match"
