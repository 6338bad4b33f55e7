#!/usr/bin/env bash
# imgtool fleet check when a worker never comes: 4 expected, 3 started, --timeout 2.
# Every worker that came exits 3 and names the missing one with its address, within a
# few seconds of the timeout (nobody hangs). Then the chief itself missing: the workers
# cannot reach the store, exit non-zero and name the chief and its address. Then late
# starters within the timeout (the chief after its workers, a worker after the chief's
# wait began): all pass.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fleet_lib.sh"
N=4
warm_probe

# ---- worker 1 never starts ----
FLEET_SKIP="1"
t0=$(date +%s.%N)
run_fleet missing $N --timeout 2
t1=$(date +%s.%N)
all_exit missing $N 3
all_say missing $N "3 of 4" "worker 1" "${FLEET_ADDRS[1]}" FAILED
none_say missing $N "worker 3 ("
same_stdout missing $N
took=$(python3 -c "print(f'{$t1 - $t0:.1f}')")
python3 -c "import sys; sys.exit(0 if $t1 - $t0 < 20 else 1)" || fail "missing: took ${took}s with --timeout 2"
pass "worker 1 never starts (--timeout 2): workers 0, 2, 3 exit 3 in ${took}s, each naming worker 1 (${FLEET_ADDRS[1]})"

# --json says the same, structured.
FLEET_SKIP="3"
run_fleet missing_json $N --timeout 2 --json
all_exit missing_json $N 3
for i in 0 1 2; do
  python3 - "$WORK/missing_json.$i.out" "${FLEET_ADDRS[3]}" <<'PY' || fail "missing_json: task $i: $(cat "$WORK/missing_json.$i.out")"
import json, sys
v = json.load(open(sys.argv[1]))
assert v["ok"] is False and v["exit_code"] == 3, v
assert v["expected_workers"] == 4 and v["arrived"] == 3, v
assert v["missing"] == [{"rank": 3, "name": "worker 3", "address": sys.argv[2]}], v["missing"]
PY
done
pass "--json: missing = [{rank 3, worker 3, ${FLEET_ADDRS[3]}}], arrived 3 of 4, exit_code 3"

# Two missing, and the present ones differ too: the missing are still named.
FLEET_SKIP="2 3"
XENV[1]="NCCL_ALGO=Tree"
run_fleet two_missing $N --timeout 2
all_exit two_missing $N 3
all_say two_missing $N "2 of 4" "worker 2" "worker 3" "${FLEET_ADDRS[2]}" "${FLEET_ADDRS[3]}"
pass "workers 2 and 3 missing: both named with their addresses (exit 3 wins over a difference)"

# ---- the chief (its own task) never starts ----
FLEET_CHIEF=chief
FLEET_SKIP="0"
t0=$(date +%s.%N)
run_fleet no_chief $N --timeout 2
t1=$(date +%s.%N)
FLEET_CHIEF=none
all_exit no_chief $N 3  # the chief reported missing, like any missing worker
all_say no_chief $N "chief 0" "${FLEET_ADDRS[0]}"
took=$(python3 -c "print(f'{$t1 - $t0:.1f}')")
pass "the chief never starts: workers 0-2 exit 3 in ${took}s naming the chief at ${FLEET_ADDRS[0]}"

# ---- late starters within the timeout are not missing: the chief 2 s after its
# workers (they retry connecting), worker 3 after 4 s (the chief waits) ----
read -ra ports <<<"$(free_ports $N)"
addrs=()
for p in "${ports[@]}"; do addrs+=("127.0.0.1:$p"); done
pids=()
for i in 0 1 2 3; do
  (
    [ "$i" = 0 ] && sleep 2
    [ "$i" = 3 ] && sleep 4
    rc=0
    TF_CONFIG=$(tf_config none "$i" "${addrs[@]}") "$IMGTOOL" fleet check --timeout 20 \
      >"$WORK/late.$i.out" 2>"$WORK/late.$i.err" || rc=$?
    echo $rc >"$WORK/late.$i.rc"
  ) &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
all_exit late $N 0
all_say late $N "4 of 4" OK
pass "the chief starts 2 s and worker 3 4 s after the others (--timeout 20): all 4 pass"
