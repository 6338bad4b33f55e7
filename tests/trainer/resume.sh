# Checkpoint/resume is bitwise: a run killed with SIGKILL after a checkpoint and restarted
# ends with the digest of the uninterrupted run (one process, and a 2-worker job), a
# corrupted newest checkpoint falls back to the previous one, and so does one that is not
# a regular file at all (issue 24: a folder once stopped the run with exit 2, a FIFO once
# hung it): a FIFO, a folder and a symlink named like the newest are each skipped at
# once with their reason, and the run resumes from the previous good checkpoint.
source "$(dirname "$0")/lib.sh"

"$TRAINER" "${SHORT[@]}" --seed 11 >"$WORK/ref.out"
ref=$(digest_of "$WORK/ref.out")
[[ $ref == sha256:* ]] || fail "no reference digest"
pass "uninterrupted: $ref"

# Waits until DIR holds a checkpoint of step >= MIN.
wait_for_checkpoint() {
  local dir=$1 min=$2
  for _ in $(seq 1 600); do
    local newest
    newest=$(ls "$dir" 2>/dev/null | grep -E '^ckpt-[0-9]{10}\.bin$' | sort | tail -1 || true)
    if [[ -n $newest ]] && ((10#${newest:5:10} >= min)); then return 0; fi
    sleep 0.05
  done
  fail "no checkpoint of step >= $min appeared in $dir"
}

# 1. One process, SIGKILL mid-run.
ck="$WORK/ck1"
"$TRAINER" "${SHORT[@]}" --seed 11 --checkpoint-dir "$ck" --checkpoint-every 10 --throttle-ms 30 \
  >"$WORK/k1.out" 2>"$WORK/k1.err" &
JOB_PIDS=($!)
wait_for_checkpoint "$ck" 30
kill -9 "${JOB_PIDS[0]}"
wait "${JOB_PIDS[0]}" && fail "the killed run exited 0" || true
grep -q '^weights' "$WORK/k1.out" && fail "the run finished before it was killed"
"$TRAINER" "${SHORT[@]}" --seed 11 --checkpoint-dir "$ck" --checkpoint-every 10 >"$WORK/r1.out" 2>"$WORK/r1.err"
grep -q 'resuming from' "$WORK/r1.err" || fail "restart did not resume: $(cat "$WORK/r1.err")"
d=$(digest_of "$WORK/r1.out")
[[ $d == "$ref" ]] || fail "killed + resumed run has $d, uninterrupted $ref"
pass "SIGKILL + resume (1 process): $(grep -o 'resuming from .*' "$WORK/r1.err")"

# 2. Two workers, SIGKILL one of them; the survivor fails; restart both.
ck="$WORK/ck2"
start_job 2 1 "$WORK/k2" "${SHORT[@]}" --seed 11 --checkpoint-dir "$ck" --checkpoint-every 10 --throttle-ms 30 \
  --collective-timeout 20
wait_for_checkpoint "$ck" 30
kill -9 "${JOB_PIDS[1]}"
if wait "${JOB_PIDS[0]}"; then fail "the chief exited 0 after its peer was killed"; fi
grep -q 'error' "$WORK/k2.0.err" || fail "the chief did not report the lost peer"
pass "chief after peer SIGKILL: $(grep error "$WORK/k2.0.err" | head -1)"
start_job 2 1 "$WORK/r2" "${SHORT[@]}" --seed 11 --checkpoint-dir "$ck" --checkpoint-every 10
wait_job "$WORK/r2"
grep -q 'resuming from' "$WORK/r2.0.err" || fail "the restarted job did not resume"
for r in 0 1; do
  d=$(digest_of "$WORK/r2.$r.out")
  [[ $d == "$ref" ]] || fail "2 workers, killed + resumed: rank $r has $d, uninterrupted $ref"
done
pass "SIGKILL + resume (2 workers): $ref"

# 3. Corrupt newest checkpoint: stop at step 60 (checkpoints 40, 50 = epoch end, 60 kept),
# flip a byte in ckpt 60, resume: 50 is used and the run still ends on the reference.
ck="$WORK/ck3"
"$TRAINER" "${SHORT[@]}" --seed 11 --checkpoint-dir "$ck" --checkpoint-every 20 --max-steps 60 >/dev/null
newest="$ck/ckpt-0000000060.bin"
[[ -f $newest ]] || fail "expected $newest, have: $(ls "$ck")"
python3 - "$newest" <<'PY'
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
b[1000] ^= 0xFF
open(p, "wb").write(b)
PY
"$TRAINER" "${SHORT[@]}" --seed 11 --checkpoint-dir "$ck" >"$WORK/r3.out" 2>"$WORK/r3.err"
grep -q "ckpt-0000000060.bin: checksum mismatch" "$WORK/r3.err" || fail "corruption not reported: $(cat "$WORK/r3.err")"
grep -q "resuming from $ck/ckpt-0000000050.bin" "$WORK/r3.err" || fail "did not fall back to step 50"
d=$(digest_of "$WORK/r3.out")
[[ $d == "$ref" ]] || fail "after fallback: $d, uninterrupted $ref"
pass "corrupt newest checkpoint reported, previous used, digest $ref"

# 4. A FIFO, a folder and a symlink named like the newest checkpoints: one rule, the one
# for a damaged file. Each is skipped with its reason (the FIFO without waiting: it once
# blocked the trainer in open() forever) and the run resumes from the newest good one;
# `timeout` turns a hang into exit 124, which fails the exit-code check below.
good=$(ls "$ck" | grep -E '^ckpt-[0-9]{10}\.bin$' | sort | tail -1)
mkfifo "$ck/ckpt-0000009999.bin"
mkdir "$ck/ckpt-0000009998.bin"
ln -s "$good" "$ck/ckpt-0000009997.bin"
rc=0
timeout 120 "$TRAINER" "${SHORT[@]}" --seed 11 --checkpoint-dir "$ck" >"$WORK/r4.out" 2>"$WORK/r4.err" || rc=$?
[[ $rc == 0 ]] || fail "unusable newest checkpoints: exit $rc (want 0): $(cat "$WORK/r4.err")"
for kind in "9999.bin: is a FIFO" "9998.bin: is a folder" "9997.bin: is a symlink"; do
  grep -qF "checkpoint unusable, trying an older one: $ck/ckpt-000000$kind" "$WORK/r4.err" ||
    fail "not skipped with its reason: $kind: $(cat "$WORK/r4.err")"
done
grep -qF "resuming from $ck/$good" "$WORK/r4.err" || fail "did not resume from $good: $(cat "$WORK/r4.err")"
d=$(digest_of "$WORK/r4.out")
[[ $d == "$ref" ]] || fail "after skipping them: $d, uninterrupted $ref"
pass "a FIFO, a folder and a symlink named like the newest: skipped with their reasons, resumed from $good, digest $ref"
