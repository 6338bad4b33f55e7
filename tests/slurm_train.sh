#!/usr/bin/env bash
# Training launched by a real Slurm (tests/slurm_lib.sh: nodes n1..n4 on this machine),
# with no rendezvous flags, gives the weights of one local process:
#   1. `srun -N2 -n2 trainer` (Gloo over TCP between the two nodes' tasks) -> every rank's
#      weights digest equals a 1-process run's;
#   2. the golden CPU image (examples/golden/spec-cpu.json) built, signed with the example
#      key and pushed to a docker-registry on 127.0.0.1; examples/slurm/train.sbatch with
#      IMAGE=that registry reference: preflight on both nodes, the image verified
#      (signature, every blob) and judged by policies/golden.json on the node, pinned by
#      digest, unpacked by `imgtool unpack` to an OCI bundle, and the trainer run inside it
#      by `srun --container=BUNDLE` (oci.conf: runc) -> the same weights digest again;
#   3. the same job with a key that did not sign the image never trains.
# Skipped (exit 77) only where Slurm cannot be installed or started.
# Env: TRAINER (default: the trainer beside IMGTOOL's build folder).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/registry_lib.sh"
source "$(dirname "$0")/slurm_lib.sh"
IMGTOOL=$(realpath "$IMGTOOL")
TRAINER="${TRAINER:-$(cd "$(dirname "$IMGTOOL")/.." && pwd)/trainer/trainer}"
[ -x "$TRAINER" ] || fail "no trainer binary at $TRAINER (set TRAINER, or build the trainer target)"
[ -d /usr/share/datasets/fashion-mnist ] || fail "no Fashion-MNIST (apt-get install dataset-fashion-mnist)"
slurm_start
export IMGTOOL_FLEET_TOKEN=$(openssl rand -hex 32)
TRAIN=(--max-steps 20 --train-limit 2048 --test-limit 256 --threads 1 --log-every 0 --json)

local_digest=$("$TRAINER" "${TRAIN[@]}" 2>/dev/null | jq -r .digest)
[[ $local_digest == sha256:* ]] || fail "the local run gave no digest"

# ---- 1. srun -N2 -n2 trainer ----
out=$(srun -N2 -n2 "$TRAINER" "${TRAIN[@]}" 2>"$WORK/srun.err") || fail "srun -N2 -n2 trainer: $(cat "$WORK/srun.err")"
assert_eq "$(jq -r .digest <<<"$out" | sort -u)" "$local_digest" "weights digest of every rank under srun -N2 -n2"
assert_eq "$(jq -r .rank <<<"$out" | sort | tr '\n' ' ')" "0 1 " "ranks under srun"
pass "srun -N2 -n2 trainer (no rendezvous flags): both ranks give the 1-process weights $local_digest"

# ---- 2. the golden image from the registry, verified, unpacked, run by --container ----
start_registry plain
mkdir -p "$WORK/ctx/cache/bin"
"$REPO/examples/golden/fetch" --spec spec-cpu.json --no-trainer --platform linux/amd64 >/dev/null
cp "$REPO/examples/golden/spec-cpu.json" "$WORK/ctx/"
ln -s "$REPO/examples/golden/cache/debs" "$WORK/ctx/cache/debs"
cp "$TRAINER" "$WORK/ctx/cache/bin/trainer"
cp "$IMGTOOL_FLEET" "$WORK/ctx/cache/bin/imgtool-fleet"
"$IMGTOOL" build "$WORK/ctx/spec-cpu.json" --platform linux/amd64 -o "oci:$WORK/golden:latest" -q >/dev/null
export COSIGN_PASSWORD=imgtool-example-only
"$IMGTOOL" sign --key "$REPO/signatures/trusted/example.key" --identity "$REG_HOST/golden" "oci:$WORK/golden:latest" >/dev/null
"$IMGTOOL" push -q --tls-verify=false "oci:$WORK/golden:latest" "docker://$REG_HOST/golden:v1" >/dev/null
chmod -R a+rX "$WORK"

SBATCH=$REPO/examples/slurm/train.sbatch
run_image_job() {  # NAME KEY: the example with IMAGE, on 2 nodes, one task each
  set +e
  IMGTOOL=$IMGTOOL IMAGE="docker://$REG_HOST/golden:v1" KEY=$2 POLICY=$REPO/policies/golden.json STAGE=once \
    REMOTE_ARGS=--tls-verify=false BUNDLE=$WORK/bundle-$1 TRAIN_ARGS="${TRAIN[*]}" \
    sbatch --wait -o "$WORK/job-$1.out" -N2 --ntasks-per-node=1 "$SBATCH" >/dev/null 2>&1
  JOB_RC=$?
  set -e
}
run_image_job golden "$REPO/signatures/trusted/example.pub"
[ "$JOB_RC" = 0 ] || fail "the containerized job failed: $(cat "$WORK/job-golden.out")"
assert_contains "$(cat "$WORK/job-golden.out")" "verified, policy passed, unpacked" "the stage step"
inside=$(grep -o '"digest":"sha256:[0-9a-f]*"' "$WORK/job-golden.out" | sort | uniq -c)
assert_eq "$(awk '{print $1}' <<<"$inside")" 2 "ranks that printed a digest inside the image"
assert_contains "$inside" "$local_digest" "weights digest inside the image"
pass "sbatch with IMAGE: verified, policy-checked, unpacked, srun --container trained both ranks to $local_digest"

# ---- 3. a key that did not sign it: the job never trains ----
openssl ecparam -name prime256v1 -genkey -noout 2>/dev/null | openssl ec -pubout -out "$WORK/other.pub" 2>/dev/null
chmod a+r "$WORK/other.pub"
run_image_job unsigned "$WORK/other.pub"
[ "$JOB_RC" != 0 ] || fail "the job trained with an image not signed by its key: $(cat "$WORK/job-unsigned.out")"
! grep -q '"digest":"sha256:' "$WORK/job-unsigned.out" || fail "training ran: $(cat "$WORK/job-unsigned.out")"
[ ! -e "$WORK/bundle-unsigned" ] || fail "a bundle was unpacked from an image that failed verification"
pass "with a key that did not sign the image: nothing unpacked, no training"
