#!/usr/bin/env bash
# examples/golden: the CUDA runtime, cuDNN and NCCL from /usr/local/cuda in a
# non-root image with the stack pins as labels and /etc/imgtool/stack.json.
source "$(dirname "$0")/lib.sh"
if [ ! -d /usr/local/cuda/lib ]; then
  echo "golden_image: /usr/local/cuda/lib is absent here; checking examples/small instead"
  spec="$REPO/examples/small/spec.json"
else
  spec="$REPO/examples/golden/spec.json"
fi
digest=$("$IMGTOOL" build "$spec" -o "oci:$WORK/golden:latest" -q | tail -n1)
expect_exit 0 verify "oci:$WORK/golden:latest"
info=$("$IMGTOOL" inspect "oci:$WORK/golden:latest" --json)
assert_eq "$(jq -r .digest <<<"$info")" "$digest" "inspect digest"
assert_eq "$(jq -r .user <<<"$info")" "10001:10001" "non-root user"
assert_eq "$(jq -r '.labels["org.imgtool.stack.cuda"]' <<<"$info")" "13.0.96" "cuda pin label"
assert_eq "$(skopeo inspect "oci:$WORK/golden:latest" | jq -r .Digest)" "$digest" "skopeo digest"
if [ -d /usr/local/cuda/lib ]; then
  assert_eq "$(jq -r '.labels["org.imgtool.stack.nccl"]' <<<"$info")" "2.28.9" "nccl pin label"
  layer=$(jq -r '.layers[2].digest' <<<"$info")
  tar -tzf "$WORK/golden/blobs/sha256/${layer#sha256:}" | grep -qx 'usr/local/cuda/lib/libnccl.so.2' \
    || fail "nccl layer lacks libnccl.so.2"
  tar -tvzf "$WORK/golden/blobs/sha256/${layer#sha256:}" | grep -q 'libnccl.so -> libnccl.so.2' \
    || fail "libnccl.so symlink not kept"
fi
pass "golden image $digest builds, verifies, and carries its pins"
