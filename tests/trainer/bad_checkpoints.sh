# Forged checkpoints (issue 15, class 8): files whose checksum verifies but whose header
# does not fit the model or the run. A parameter count of 0 or 10 used to segfault the
# trainer, 2^62 to abort it, 101,771 was taken silently. Each must now be refused with
# its exit code and a message naming the field, and nothing may be written.
source "$(dirname "$0")/lib.sh"

# A real checkpoint to forge from: step 10 of the short schedule (50 steps per epoch).
"$TRAINER" "${SHORT[@]}" --max-steps 10 --checkpoint-dir "$WORK/real" --checkpoint-every 10 \
  >"$WORK/real.out" 2>"$WORK/real.err" || fail "writing a real checkpoint: $(cat "$WORK/real.err")"
REAL="$WORK/real/ckpt-0000000010.bin"
[[ -f $REAL ]] || fail "no $REAL"

# forge CASE PYTHON: $WORK/CASE/ckpt-0000000010.bin from the real one, changed by PYTHON
# (on bytearray b, body = everything before the checksum), then re-checksummed.
forge() {
  mkdir -p "$WORK/$1"
  python3 - "$REAL" "$WORK/$1/ckpt-0000000010.bin" "$2" <<'PY'
import hashlib, struct, sys
src, dst, change = sys.argv[1], sys.argv[2], sys.argv[3]
b = bytearray(open(src, "rb").read()[:-32])
def put(fmt, at, v): struct.pack_into(fmt, b, at, v)
exec(change)
open(dst, "wb").write(bytes(b) + hashlib.sha256(b).digest())
PY
}

# refused CASE CODE TEXT: the trainer resuming from $WORK/CASE exits CODE saying TEXT,
# and leaves the folder exactly as it was.
refused() {
  local dir="$WORK/$1" rc=0
  (cd "$dir" && sha256sum -- *) >"$WORK/$1.before"
  "$TRAINER" "${SHORT[@]}" --checkpoint-dir "$dir" --checkpoint-every 5 >"$WORK/$1.out" 2>"$WORK/$1.err" || rc=$?
  [[ $rc == "$2" ]] || fail "$1: exit $rc (want $2): $(cat "$WORK/$1.err")"
  grep -qF -- "$3" "$WORK/$1.err" || fail "$1: stderr lacks \"$3\": $(cat "$WORK/$1.err")"
  (cd "$dir" && sha256sum -- *) >"$WORK/$1.after"
  cmp -s "$WORK/$1.before" "$WORK/$1.after" || fail "$1: the folder changed: $(diff "$WORK/$1.before" "$WORK/$1.after")"
  [[ ! -s "$WORK/$1.out" ]] || fail "$1: printed a result: $(cat "$WORK/$1.out")"
  pass "$1: exit $rc: $(grep -m1 'error' "$WORK/$1.err")"
}

MODEL=", expected 101770 (this model's parameter count)"
# Offsets (checkpoint.h): header_bytes 12, step 16, step_in_epoch 28, param_count 56; the
# arrays from 72.
forge count0 'del b[72:]; put("<Q", 56, 0)'
refused count0 2 "header field param_count is 0$MODEL"
forge count10 'del b[72 + 120:]; put("<Q", 56, 10)'
refused count10 2 "header field param_count is 10$MODEL"
forge count2p62 'put("<Q", 56, 1 << 62)'
refused count2p62 2 "header field param_count is 4611686018427387904$MODEL"
# 3 * 2^62 floats of 4 bytes wrap to 0 bytes: the old length check took this 104-byte file.
forge count2p62_wrap 'del b[72:]; put("<Q", 56, 1 << 62)'
refused count2p62_wrap 2 "header field param_count is 4611686018427387904$MODEL"
forge count101771 'b.extend(bytes(12)); put("<Q", 56, 101771)'
refused count101771 2 "header field param_count is 101771$MODEL"
forge longer 'b.extend(bytes(4))'
refused longer 2 "1221348 bytes, expected 1221344 for 101770 parameters"
forge header_len 'put("<I", 12, 0xffffffff)'
refused header_len 2 "header field header_bytes is 4294967295, expected 56"
forge step_in_epoch 'put("<i", 28, 50)'
refused step_in_epoch 2 "header field step_in_epoch is 50, expected 0 to 49 (50 steps per epoch)"
forge step 'put("<q", 16, 1 << 62)'
refused step 2 "header field step is 4611686018427387904, expected 10 (epoch 0 x 50 steps + step_in_epoch 10)"

# Damage without a forger: the checksum fails; with no older checkpoint to fall back on
# that is an error (exit 4), not a fresh start over it.
mkdir -p "$WORK/truncated"
head -c 600000 "$REAL" >"$WORK/truncated/ckpt-0000000010.bin"
refused truncated 4 "no usable checkpoint ($WORK/truncated/ckpt-0000000010.bin: checksum mismatch); move these files away"

# And the real one still resumes.
"$TRAINER" "${SHORT[@]}" --checkpoint-dir "$WORK/real" >"$WORK/resume.out" 2>"$WORK/resume.err" ||
  fail "resuming the real checkpoint: $(cat "$WORK/resume.err")"
grep -qF "resuming from $REAL at step 10" "$WORK/resume.err" || fail "did not resume: $(cat "$WORK/resume.err")"
pass "the real checkpoint resumes"
