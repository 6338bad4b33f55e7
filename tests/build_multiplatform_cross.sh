#!/usr/bin/env bash
# imgtool for arm64 (cross-built, cross_lib.sh) under qemu-aarch64 builds the
# multi-platform spec of build_multiplatform.sh to the same index digest as this x86-64
# imgtool, with gzip and with zstd layers (issue 18: the bytes depend on the input only,
# never on the builder's architecture). Skipped (77) without the cross toolchain, qemu or
# the arm64 sysroot.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/packages_lib.sh"
source "$(dirname "$0")/cross_lib.sh"
cross_ready_or_skip

t0=$SECONDS
cross_build imgtool
ARM_IMGTOOL=$(arm64_wrapper "$ARM_BUILD/imgtool/imgtool" imgtool-arm64)
pass "arm64 imgtool built in $((SECONDS - t0)) s"
multiplatform_context "$WORK/ctx"
for c in gzip zstd; do
  x86=$("$IMGTOOL" build "$WORK/ctx/spec.json" --compression "$c" --no-cache -o "oci:$WORK/x86-$c:v1" -q | tail -n1)
  t0=$SECONDS
  arm=$("$ARM_IMGTOOL" build "$WORK/ctx/spec.json" --compression "$c" --no-cache -o "oci:$WORK/arm-$c:v1" -q | tail -n1)
  assert_eq "$arm" "$x86" "$c index digest built by arm64 imgtool under qemu"
  cmp "$WORK/x86-$c.build.json" "$WORK/arm-$c.build.json" || fail "$c: the build records differ"
  pass "$c: arm64 imgtool (qemu, $((SECONDS - t0)) s) and x86-64 imgtool build one index $x86"
done
