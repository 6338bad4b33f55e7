# Who may take part in the trainer's rendezvous (issue 24, class 6; cluster/tcp_store.h):
#  1. IMGTOOL_FLEET_TOKEN on a 2-task job: an outsider without it or with a guess is
#     refused, a worker with another token exits 5, and the job then finishes with the
#     real worker and the digest of an undisturbed run; the token shows in no output;
#  2. two processes started as rank 1 of a 4-task job: the second to claim the rank exits
#     5 naming both, and the chief refuses to form the group: every task exits 5.
source "$(dirname "$0")/lib.sh"
unset IMGTOOL_FLEET_TOKEN TF_CONFIG
ATTACK="$(dirname "$0")/store_attack.py"

"$TRAINER" "${SHORT[@]}" >"$WORK/ref.out" 2>"$WORK/ref.err" || fail "reference run: $(cat "$WORK/ref.err")"
ref=$(digest_of "$WORK/ref.out")

# --- 1. A job token ---
TOKEN=$(python3 -c 'import secrets; print(secrets.token_hex(32))')
p0=$(free_port) p1=$(free_port)
IMGTOOL_FLEET_TOKEN="$TOKEN" TF_CONFIG="$(tf_config 2 1 chief 0 "$p0" "$p1")" "$TRAINER" "${SHORT[@]}" \
  --rendezvous-timeout 120 >"$WORK/chief.out" 2>"$WORK/chief.err" &
chief=$!
JOB_PIDS=("$chief")
python3 "$ATTACK" outsider 127.0.0.1 "$p0" --guess "not-the-token-0123456789" >"$WORK/outsider.json" \
  2>"$WORK/outsider.err" || fail "outsider: $(cat "$WORK/outsider.err")"
python3 - "$WORK/outsider.json" <<'PY' || fail "the outsider: $(cat "$WORK/outsider.json")"
import json, sys
o = json.load(open(sys.argv[1]))
assert o["mode"] == "token", o
assert o["claim_without_proof"][0] == 1 and o["claim_with_guess"][0] == 1, o
assert o["read_dropped"] is True, o
PY
rc=0
IMGTOOL_FLEET_TOKEN="$(python3 -c 'import secrets; print(secrets.token_hex(32))')" \
  TF_CONFIG="$(tf_config 2 1 worker 0 "$p0" "$p1")" "$TRAINER" "${SHORT[@]}" >"$WORK/wrong.out" 2>"$WORK/wrong.err" ||
  rc=$?
((rc == 5)) || fail "a worker with another token exited $rc: $(cat "$WORK/wrong.err")"
grep -q "^trainer: error: rendezvous (worker:0): store 127.0.0.1:$p0: refused the claim of rank 1: a wrong proof of the job token" \
  "$WORK/wrong.err" || fail "another token: $(cat "$WORK/wrong.err")"
IMGTOOL_FLEET_TOKEN="$TOKEN" TF_CONFIG="$(tf_config 2 1 worker 0 "$p0" "$p1")" "$TRAINER" "${SHORT[@]}" \
  >"$WORK/worker.out" 2>"$WORK/worker.err" || fail "the worker with the token failed: $(cat "$WORK/worker.err")"
wait "$chief" || fail "the chief failed: $(cat "$WORK/chief.err")"
[[ $(digest_of "$WORK/chief.out") == "$ref" ]] || fail "chief digest $(digest_of "$WORK/chief.out"), want $ref"
[[ $(digest_of "$WORK/worker.out") == "$ref" ]] || fail "worker digest $(digest_of "$WORK/worker.out"), want $ref"
grep -q "^trainer: store: refused the claim of rank 1 by 127.0.0.1:[0-9]* (pid [0-9]* on [^)]*): a wrong proof of the job token" \
  "$WORK/chief.err" || fail "the chief did not log the other token: $(cat "$WORK/chief.err")"
if grep -qaF -- "$TOKEN" "$WORK"/*.out "$WORK"/*.err "$WORK"/*.json; then
  fail "the token appears in: $(grep -laF -- "$TOKEN" "$WORK"/*.out "$WORK"/*.err "$WORK"/*.json)"
fi
pass "with IMGTOOL_FLEET_TOKEN: an outsider and a worker with another token refused (exit 5), the job finished with $ref, the token in no output"

# --- 2. Two processes started as rank 1 ---
ports=()
for _ in 1 2 3 4; do ports+=("$(free_port)"); done
task() {  # TYPE INDEX NAME
  TF_CONFIG="$(tf_config 4 1 "$1" "$2" "${ports[@]}")" "$TRAINER" "${SHORT[@]}" --rendezvous-timeout 60 \
    >"$WORK/$3.out" 2>"$WORK/$3.err" &
  LAST=$!
  JOB_PIDS+=("$LAST")
}
task chief 0 c0
c0=$LAST
task worker 0 a
a=$LAST
task worker 0 b
b=$LAST
loser=$(first_to_exit "$a" a "$b" b)
[[ -n $loser ]] || fail "neither process with rank 1 was refused"
task worker 1 w2
w2=$LAST
task worker 2 w3
w3=$LAST
for p in c0:$c0 a:$a b:$b w2:$w2 w3:$w3; do
  rc=0
  wait "${p#*:}" || rc=$?
  ((rc == 5)) || fail "${p%%:*} exited $rc, want 5: $(cat "$WORK/${p%%:*}.err")"
  grep -qE "rank 1 is claimed twice: first by 127\.0\.0\.1:[0-9]+ \(pid [0-9]+ on [^)]+\), then by 127\.0\.0\.1:[0-9]+ \(pid [0-9]+ on [^)]+\)" \
    "$WORK/${p%%:*}.err" || fail "${p%%:*} does not name both claimants: $(cat "$WORK/${p%%:*}.err")"
done
line=$(grep -o 'rank 1 is claimed twice.*' "$WORK/$loser.err" | head -1)
pids=$(grep -oE 'pid [0-9]+' <<<"$line" | sort -u | tr '\n' ' ')
[[ $pids == *"pid $a "* && $pids == *"pid $b "* ]] || fail "the message names $pids, not both pids $a and $b: $line"
grep -q "^trainer: error: rendezvous: rank 1 is claimed twice" "$WORK/c0.err" || fail "the chief: $(cat "$WORK/c0.err")"
pass "two processes as rank 1: the second refused naming both (pids $a and $b), the chief refused the group; all 5 exit 5"
