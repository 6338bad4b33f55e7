# arm64 gives the x86-64 weights, bit for bit: the trainer cross-built for aarch64
# (cmake/toolchain-aarch64-linux-gnu.cmake) and run under qemu-aarch64 prints this
# trainer's digest on 1 and on 2 workers, and so does a mixed job (rank 0 this x86
# trainer, rank 1 the arm64 one, over Gloo and over shared memory). Also compares the
# reported losses.
#   bash arm64_weights.sh PATH/TO/trainer WORKDIR [ARM64_BUILD_DIR]
# ARM64_BUILD_DIR (default build-arm64 in the source tree) gets only the trainer target,
# configured on first use. Exit 77 (skipped) naming what is missing: the cross compiler,
# qemu-user or the arm64 sysroot (IMGTOOL_ARM64=1 scripts/setup installs all three).
# TRAINER_ARM64_STEPS (default 20) sets the schedule: 20 steps is ~15 s of qemu.
source "$(dirname "$0")/lib.sh"
REPO="$(cd "$(dirname "$0")/../.." && pwd)"
ARM_BUILD="${3:-$REPO/build-arm64}"
STEPS="${TRAINER_ARM64_STEPS:-20}"
source "$REPO/tests/cross_lib.sh"
cross_ready_or_skip

# The arm64 trainer: ~40 objects, from ccache or nothing when the folder is current.
t0=$SECONDS
cross_build trainer
pass "arm64 trainer built in $((SECONDS - t0)) s"
ARM=$(arm64_wrapper "$ARM_BUILD/trainer/trainer" trainer-arm64)

RUN=(--data "$DATA" --train-limit $((STEPS * 64)) --test-limit 500 --epochs 1 --log-every 0 --threads 1 --seed 5)

# A 2-worker job on 127.0.0.1: rank 0 runs $1, rank 1 runs $2, over --comm $3; outputs
# $WORK/$4.<rank>.*. Both ranks' digests must be $ref. --busy-poll off: a spinning rank
# would take a core from the emulated one (and from the tests ctest runs beside this one).
job2() {
  local bin0=$1 bin1=$2 comm=$3 name=$4 label=$5 p0 p1 t=$SECONDS
  p0=$(free_port) p1=$(free_port)
  JOB_PIDS=()
  local bins=("$bin0" "$bin1")
  for r in 0 1; do
    TF_CONFIG="$(tf_config 2 0 worker $r "$p0" "$p1")" "${bins[$r]}" "${RUN[@]}" --comm "$comm" \
      --rendezvous-timeout 120 --busy-poll off >"$WORK/$name.$r.out" 2>"$WORK/$name.$r.err" &
    JOB_PIDS+=($!)
  done
  wait_job "$WORK/$name"
  for r in 0 1; do
    [[ $(digest_of "$WORK/$name.$r.out") == "$ref" ]] || fail "$label: rank $r has $(digest_of "$WORK/$name.$r.out"), x86 alone $ref"
  done
  pass "$label ($(grep -o '^collectives: [^,]*' "$WORK/$name.0.err" | cut -d' ' -f2-)): $ref in $((SECONDS - t)) s"
}

"$TRAINER" "${RUN[@]}" --json >"$WORK/x86.json" 2>"$WORK/x86.err" || { cat "$WORK/x86.err" >&2; fail "x86 run"; }
ref=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["digest"])' "$WORK/x86.json")
[[ $ref == sha256:* ]] || fail "no digest from the x86 run: $(cat "$WORK/x86.json")"
pass "x86-64, 1 worker, $STEPS steps: $ref"

t=$SECONDS
"$ARM" "${RUN[@]}" --json >"$WORK/arm64.json" 2>"$WORK/arm64.err" || { cat "$WORK/arm64.err" >&2; fail "arm64 run"; }
# The weights, and the reported numbers too (softmax_xent's std::log feeds only the losses).
python3 - "$WORK/x86.json" "$WORK/arm64.json" <<'PY' || fail "arm64, 1 worker: differs from x86 (above)"
import json, sys
x, a = (json.load(open(p)) for p in sys.argv[1:])
bad = [k for k in ("digest", "steps", "test_accuracy", "test_loss", "last_loss") if x[k] != a[k]]
for k in bad:
    print(f"{k}: x86 {x[k]!r}, arm64 {a[k]!r}", file=sys.stderr)
sys.exit(1 if bad else 0)
PY
pass "arm64 (qemu), 1 worker: same digest, accuracy and losses in $((SECONDS - t)) s"

job2 "$ARM" "$ARM" gloo arm64x2 "arm64 (qemu), 2 workers"
job2 "$TRAINER" "$ARM" gloo mixed "rank 0 x86-64, rank 1 arm64 (qemu)"
# One host only (under qemu): the shared segment's layout is the same for both ABIs, and
# the x86 rank claims most tasks, so this one takes ~2 s.
job2 "$TRAINER" "$ARM" shm mixed_shm "rank 0 x86-64, rank 1 arm64 (qemu)"
