#!/usr/bin/env bash
# imgtool fleet check across architectures: worker 0 runs this x86-64 imgtool, worker 1
# the arm64 imgtool-fleet (cross-built, cross_lib.sh) under qemu-aarch64, on 127.0.0.1.
# Each loads a stand-in libnccl.so.2 of its own architecture (imgtool/fleet/testdata/
# fake_nccl.c) reporting NCCL 2.28.9, claims its own platform's image digest and the
# same index, and trains the golden run on its own CPU.
#   1. Both match: exit 0 on both, the report lists the two platforms; the library hashes
#      and image digests, which differ by architecture, are compared within a platform
#      only, while the NCCL version, the index and the golden-run weights (bitwise the
#      same on arm64 and x86-64, trainer/README.md) are compared across.
#   2. The arm64 worker's NCCL reports 2.27.7: both exit 1 naming nccl, 2.27.7, worker 1.
# The arm64 side has no CUDA libraries here (none in its sysroot), so the CUDA runtime,
# cuBLAS and cuDNN versions, which the x86 side finds on this machine, are --ignore'd.
# Skipped (77) without the cross toolchain, qemu or the arm64 sysroot.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/fleet_lib.sh"
source "$(dirname "$0")/cross_lib.sh"
cross_ready_or_skip

t0=$SECONDS
cross_build imgtool-fleet
ARM_FLEET=$(arm64_wrapper "$ARM_BUILD/imgtool/imgtool-fleet" imgtool-fleet-arm64)
pass "arm64 imgtool-fleet built in $((SECONDS - t0)) s"

fake_nccl() {  # COMPILER DIR VERSION
  mkdir -p "$WORK/$2"
  "$1" -shared -fPIC -O2 -DFAKE_NCCL_VERSION="$3" -o "$WORK/$2/libnccl.so.2" "$REPO/imgtool/fleet/testdata/fake_nccl.c"
}
fake_nccl gcc nccl-amd64 22809
fake_nccl aarch64-linux-gnu-gcc nccl-arm64 22809
fake_nccl aarch64-linux-gnu-gcc nccl-arm64-old 22707
INDEX="sha256:$(printf 'e%.0s' $(seq 64))"
DIGEST_ARM="sha256:$(printf 'c%.0s' $(seq 64))"
IGNORE=(--ignore cuda.runtime --ignore cublas --ignore cudnn)
warm_probe

# ---- 1. one x86 and one arm64 worker of the same index ----
t0=$SECONDS
XBIN[1]=$ARM_FLEET
XENV[0]="LD_LIBRARY_PATH=$WORK/nccl-amd64 IMGTOOL_IMAGE_INDEX=$INDEX"
XENV[1]="LD_LIBRARY_PATH=$WORK/nccl-arm64 IMGTOOL_IMAGE_INDEX=$INDEX IMGTOOL_IMAGE_DIGEST=$DIGEST_ARM"
run_fleet mixed 2 --timeout 300 --golden-run "${IGNORE[@]}"
all_exit mixed 2 0
all_say mixed 2 "2 of 2 workers match across 2 platforms" "linux/amd64: 1 worker, linux/arm64: 1 worker" \
  "compared per platform: image.digest, image.stack_json, lib.*"
same_stdout mixed 2 'golden_run.seconds'
pass "x86-64 + arm64 (qemu) workers, golden run included: both exit 0, one report ($((SECONDS - t0)) s)"
sed 's/^/  | /' "$WORK/mixed.0.out"

# The fingerprints really differ where the architecture shows, and agree where it must not.
"$IMGTOOL" probe --image-index "$INDEX" -o "$WORK/fp-amd64.json" >/dev/null 2>&1
env LD_LIBRARY_PATH="$WORK/nccl-arm64" IMGTOOL_IMAGE_DIGEST="$DIGEST_ARM" IMGTOOL_IMAGE_INDEX="$INDEX" \
  "$ARM_FLEET" probe -o "$WORK/fp-arm64.json" >/dev/null 2>"$WORK/fp-arm64.err" || fail "arm64 probe: $(cat "$WORK/fp-arm64.err")"
assert_eq "$(jq -r .fields.platform "$WORK/fp-arm64.json")" linux/arm64 "arm64 probe platform"
assert_eq "$(jq -r .fields.platform "$WORK/fp-amd64.json")" linux/amd64 "x86 probe platform"
assert_eq "$(jq -r .fields.nccl "$WORK/fp-arm64.json")" 2.28.9 "arm64 probe nccl"
assert_eq "$(jq -r '.fields["image.index"]' "$WORK/fp-arm64.json")" "$INDEX" "arm64 probe image.index"
[ "$(jq -r '.fields["lib.libnccl.so.2"]' "$WORK/fp-arm64.json")" != "$(sha256sum "$WORK/nccl-amd64/libnccl.so.2" | cut -c1-64)" ] ||
  fail "the arm64 probe hashed the x86 library"
pass "the arm64 probe (qemu) reports linux/arm64, NCCL 2.28.9 from its own library, the shared index"

# ---- 2. the arm64 worker loads another NCCL ----
XBIN[1]=$ARM_FLEET
XENV[0]="LD_LIBRARY_PATH=$WORK/nccl-amd64 IMGTOOL_IMAGE_INDEX=$INDEX"
XENV[1]="LD_LIBRARY_PATH=$WORK/nccl-arm64-old IMGTOOL_IMAGE_INDEX=$INDEX IMGTOOL_IMAGE_DIGEST=$DIGEST_ARM"
run_fleet arm_nccl 2 --timeout 300 "${IGNORE[@]}"
all_exit arm_nccl 2 1
all_say arm_nccl 2 nccl 2.27.7 2.28.9 "worker 1" FAILED
same_stdout arm_nccl 2
for i in 0 1; do
  row=$(grep -F 2.27.7 "$WORK/arm_nccl.$i.out" | head -1)
  assert_contains "$row" "worker 1" "arm_nccl: worker $i's row for 2.27.7"
  if grep -qE "worker 0([^0-9-]|$)" <<<"$row"; then fail "arm_nccl: the 2.27.7 row names worker 0: $row"; fi
done
pass "the arm64 worker with NCCL 2.27.7: both exit 1 naming nccl, 2.27.7 and worker 1"
sed 's/^/  | /' "$WORK/arm_nccl.0.out"
