#!/usr/bin/env bash
# imgtool fleet check with 4 worker processes on 127.0.0.1, each with its own TF_CONFIG
# (free ports, no chief task: worker 0 serves the store). First with the real probe on
# each (one warm hash cache shared by all): all identical, every worker exits 0 and
# prints the same OK report; then one worker at a time made different, and EVERY
# worker's report must name the field, the value and the culprit: another libnccl.so.2
# first on LD_LIBRARY_PATH (a stand-in reporting NCCL 2.19.3, $FAKE_NCCL_DIR),
# NCCL_ALGO=Tree, another image digest; --ignore. Then, from `imgtool probe -o` files
# (one per variant) and --fingerprint: another image, --ignore with a prefix, --json with
# a chief task (parsed, the same groups on every worker), flag mode (--rank/--world-size/
# --rendezvous), --golden-run, --expect with a stack.json (right, and a wrong NCCL pin).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fleet_lib.sh"
: "${FAKE_NCCL_DIR:?set FAKE_NCCL_DIR to the folder holding the fake libnccl.so.2}"
[ -e "$FAKE_NCCL_DIR/libnccl.so.2" ] || fail "no libnccl.so.2 in FAKE_NCCL_DIR=$FAKE_NCCL_DIR"
FAKE_NCCL_DIR=$(realpath "$FAKE_NCCL_DIR")
N=4
T0=$(date +%s)

warm_probe
HERE_NCCL=$(jq -r '.fields.nccl // "absent"' "$WORK/probe-warm.json")
pass "imgtool probe (cold hash cache): ${PROBE_SECONDS}s, nccl $HERE_NCCL, $(jq '.fields | length' "$WORK/probe-warm.json") fields"

# ---- all identical ----
run_fleet same $N --timeout 30
all_exit same $N 0
all_say same $N "4 of 4" OK
none_say same $N FAILED
same_stdout same $N
pass "4 identical workers: all exit 0, all print the same OK report"

# ---- one worker with another NCCL (the real probe, through LD_LIBRARY_PATH) ----
XENV[2]="LD_LIBRARY_PATH=$FAKE_NCCL_DIR"
run_fleet nccl $N --timeout 30
all_exit nccl $N 1
all_say nccl $N nccl "worker 2" 2.19.3 FAILED
same_stdout nccl $N
# The table row naming 2.19.3 names worker 2 and only worker 2.
for i in 0 1 2 3; do
  row=$(grep -F 2.19.3 "$WORK/nccl.$i.out" | head -1)
  assert_contains "$row" "worker 2" "nccl: worker $i's row for 2.19.3"
  for w in 0 1 3; do
    if grep -qE "worker $w([^0-9-]|$)" <<<"$row"; then fail "nccl: worker $i's row for 2.19.3 names worker $w: $row"; fi
  done
done
pass "worker 2 loads a libnccl.so.2 reporting 2.19.3: all 4 exit 1, all name nccl, 2.19.3 and worker 2"

# ---- one worker with NCCL_ALGO=Tree ----
XENV[1]="NCCL_ALGO=Tree"
run_fleet algo $N --timeout 30
all_exit algo $N 1
all_say algo $N env.NCCL_ALGO Tree "worker 1" FAILED
same_stdout algo $N
pass "worker 1 with NCCL_ALGO=Tree: all 4 exit 1 naming env.NCCL_ALGO, Tree and worker 1"

# --ignore env.NCCL_ALGO (on every worker) makes that difference acceptable.
XENV[1]="NCCL_ALGO=Tree"
run_fleet algo_ignored $N --timeout 30 --ignore env.NCCL_ALGO
all_exit algo_ignored $N 0
all_say algo_ignored $N OK
pass "--ignore env.NCCL_ALGO: the same fleet passes"

# ---- one worker in another image ----
XENV[3]="IMGTOOL_IMAGE_DIGEST=$DIGEST_B"
run_fleet image $N --timeout 30
all_exit image $N 1
all_say image $N image.digest "worker 3" "$DIGEST_B" FAILED
pass "worker 3 claims another image digest: all 4 exit 1 naming image.digest and worker 3"

# ---- from here on, fingerprints from `imgtool probe -o`, once per variant, and
# `fleet check --fingerprint FILE` (no probing: the cases below are about the gather,
# the comparison and the report, and each probe costs ~1 s of dlopen here) ----
probe_to() {  # NAME [ENV...] [-- PROBE ARGS]: $WORK/fp-NAME.json
  local name=$1
  shift
  local -a envs=() args=()
  while (($#)) && [ "$1" != -- ]; do envs+=("$1"); shift; done
  (($#)) && shift
  args=("$@")
  env "${envs[@]}" "$IMGTOOL" probe -o "$WORK/fp-$name.json" "${args[@]}" >/dev/null 2>"$WORK/fp-$name.err" ||
    fail "imgtool probe -o fp-$name.json: $(cat "$WORK/fp-$name.err")"
}
printf '{"components":{"nccl":{"version":"%s"}},"schemaVersion":1}\n' "$HERE_NCCL" >"$WORK/stack-right.json"
printf '{"components":{"nccl":{"version":"2.17.1"}},"schemaVersion":1}\n' >"$WORK/stack-wrong.json"
probe_to a
probe_to b IMGTOOL_IMAGE_DIGEST="$DIGEST_B"
probe_to tree NCCL_ALGO=Tree
probe_to ring NCCL_ALGO=Ring
probe_to stack_right -- --stack-json "$WORK/stack-right.json"
probe_to stack_wrong -- --stack-json "$WORK/stack-wrong.json"
fp() { echo "--fingerprint $WORK/fp-$1.json"; }

run_fleet fp_same $N --timeout 30 --fingerprint "$WORK/fp-a.json"
all_exit fp_same $N 0
all_say fp_same $N OK
XARGS[0]=$(fp a) XARGS[1]=$(fp b) XARGS[2]=$(fp a) XARGS[3]=$(fp a)
run_fleet fp_diff $N --timeout 30
all_exit fp_diff $N 1
all_say fp_diff $N image.digest "worker 1" "$DIGEST_B"
pass "--fingerprint FILE (imgtool probe -o once per variant): 4 equal files pass; worker 1's other image is named by all"

XARGS[0]=$(fp a) XARGS[1]=$(fp a) XARGS[2]=$(fp tree) XARGS[3]=$(fp ring)
run_fleet algo_prefix $N --timeout 30 --ignore 'env.NCCL_*'
all_exit algo_prefix $N 0
pass "--ignore 'env.NCCL_*' (a prefix): NCCL_ALGO unset, unset, Tree, Ring passes"

# ---- --json, with a chief task: parsed, the same groups on every worker ----
# chief 0, worker 0, worker 1, worker 2: the third task (rank 2) is worker 1.
FLEET_CHIEF=chief
XARGS[0]=$(fp a) XARGS[1]=$(fp a) XARGS[2]=$(fp ring) XARGS[3]=$(fp a)
run_fleet json $N --timeout 30 --json
FLEET_CHIEF=none
all_exit json $N 1
for i in 0 1 2 3; do
  python3 - "$WORK/json.$i.out" "$i" <<'PY' || fail "json: task $i: $(cat "$WORK/json.$i.out")"
import json, sys
v = json.load(open(sys.argv[1]))
assert v["ok"] is False and v["exit_code"] == 1, v
assert v["expected_workers"] == 4 and v["arrived"] == 4 and v["missing"] == [], v
d = {x["field"]: x for x in v["diffs"]}
assert set(d) == {"env.NCCL_ALGO"}, f"diffs: {sorted(d)}"
groups = d["env.NCCL_ALGO"]["groups"]
assert [g["ranks"] for g in groups] == [[0, 1, 3], [2]], groups
assert groups[1]["value"] == "Ring" and groups[1]["workers"] == ["worker 1"], groups
assert groups[0]["workers"] == ["chief 0", "worker 0", "worker 2"], groups
assert "worker 1" in v["summary"], v["summary"]
s = v["stats"]
assert s["bytes_sent"] > 0 and s["bytes_received"] > 0 and s["seconds"] >= 0, s
print(json.dumps(groups, sort_keys=True))
PY
done >"$WORK/json.groups"
[ "$(sort -u "$WORK/json.groups" | wc -l)" = 1 ] || fail "json: the groups differ between tasks: $(cat "$WORK/json.groups")"
pass "--json with a chief task: every task's JSON parses, names env.NCCL_ALGO with groups [chief 0, worker 0, worker 2] / [worker 1 = Ring], stats carry bytes"

# ---- flag mode: --rank / --world-size / --rendezvous, no TF_CONFIG ----
read -r P <<<"$(free_ports 1)"
pids=()
for r in 0 1 2; do
  (
    rc=0
    "$IMGTOOL" fleet check --rank $r --world-size 3 --rendezvous "127.0.0.1:$P" --host 127.0.0.1 --timeout 30 \
      --fingerprint "$WORK/fp-$([ $r = 1 ] && echo tree || echo ring).json" >"$WORK/flags.$r.out" 2>"$WORK/flags.$r.err" || rc=$?
    echo $rc >"$WORK/flags.$r.rc"
  ) &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
all_exit flags 3 1
all_say flags 3 env.NCCL_ALGO Tree
pass "flag mode (--rank/--world-size/--rendezvous): 3 workers, rank 1's NCCL_ALGO named by all"

# ---- --golden-run: 4 workers, the same weights ----
run_fleet golden $N --timeout 60 --golden-run --fingerprint "$WORK/fp-a.json"
all_exit golden $N 0
all_say golden $N OK golden_run
same_stdout golden $N 'golden_run\.seconds'
pass "--golden-run on 4 workers: all match, the report notes the golden run ($(grep -h golden_run "$WORK/golden.0.out" | head -1 | tr -s ' '))"

# ---- --expect stack.json: right, then a wrong NCCL pin. The image's stack.json is the
# same file (probe --stack-json): its sha256 is a field the expectation holds too. ----
if [ "$HERE_NCCL" != absent ]; then
  run_fleet expect_right $N --timeout 30 --expect "$WORK/stack-right.json" --fingerprint "$WORK/fp-stack_right.json"
  all_exit expect_right $N 0
  all_say expect_right $N OK
  pass "--expect stack.json pinning this machine's NCCL ($HERE_NCCL), the same file as the image's stack.json: passes"
fi
run_fleet expect_wrong $N --timeout 30 --expect "$WORK/stack-wrong.json" --fingerprint "$WORK/fp-stack_wrong.json"
all_exit expect_wrong $N 1
all_say expect_wrong $N nccl 2.17.1 "(expected)" "$HERE_NCCL" "worker 0-3" FAILED
none_say expect_wrong $N image.stack_json
pass "--expect with a wrong NCCL pin (2.17.1): all 4 exit 1, the report shows the expected value"

T1=$(date +%s)
pass "fleet_check done in $((T1 - T0))s"
