#!/usr/bin/env bash
# imgtool probe: runs without a GPU (gpu.count 0 where there is no driver); a libnccl.so.2
# first on LD_LIBRARY_PATH is the one reported (version 2.19.3 and its own lib.* hash);
# numerics variables (NCCL_ALGO) are fields and change the digest, unrelated ones do
# not; the image digest comes from IMGTOOL_IMAGE_DIGEST or --image-digest and a bad one
# is exit 2; stack.json is hashed; -o writes the fingerprint JSON; a warm run hashes
# nothing.
source "$(dirname "$0")/lib.sh"
: "${FAKE_NCCL_DIR:?set FAKE_NCCL_DIR to the folder of the fake libnccl.so.2}"
unset IMGTOOL_IMAGE_DIGEST NCCL_ALGO
D1=sha256:1111111111111111111111111111111111111111111111111111111111111111
D2=sha256:2222222222222222222222222222222222222222222222222222222222222222

# STACK: the --stack-json to read (default: a file that does not exist).
probe() { "$IMGTOOL" probe --hash-cache "$WORK/hc" --stack-json "${STACK:-$WORK/none.json}" "$@" 2>"$WORK/stderr"; }
field() { jq -r --arg k "$2" '.fields[$k] // "MISSING"' <<<"$1"; }
node() { jq -r --arg k "$2" '.node[$k] // "MISSING"' <<<"$1"; }

base=$(probe --json)
digest=$(jq -r .digest <<<"$base")
[[ $digest =~ ^sha256:[0-9a-f]{64}$ ]] || fail "digest: $digest"
for f in image.digest image.stack_json os.release os.kernel os.glibc driver.version cuda.driver_api cuda.runtime \
  cublas cudnn nccl gpu.count gpu.model gpu.sm_count gpu.memory_mib gpu.compute_capability; do
  [ "$(field "$base" $f)" != MISSING ] || fail "field $f missing: $base"
done
assert_eq "$(field "$base" image.digest)" unknown "image.digest without one given"
assert_eq "$(field "$base" image.stack_json)" absent "no stack.json"
assert_eq "$(node "$base" hostname)" "$(hostname)" "hostname is a node fact"
if [ "$(field "$base" cuda.driver_api)" = absent ]; then
  assert_eq "$(field "$base" gpu.count)" 0 "gpu.count without libcuda.so.1"
  assert_contains "$(node "$base" error.cuda.driver_api)" libcuda.so.1 "why the driver API is absent"
fi
[ -e /proc/driver/nvidia/version ] || assert_eq "$(field "$base" driver.version)" absent "driver.version"
pass "probe --json works here: gpu.count $(field "$base" gpu.count), nccl $(field "$base" nccl), $(jq '[.fields | keys[] | select(startswith("lib."))] | length' <<<"$base") libraries hashed"

warm=$(probe --json)
assert_eq "$(jq -r .digest <<<"$warm")" "$digest" "same node, same digest"
assert_eq "$(jq .timings.librariesHashed <<<"$warm")" 0 "a warm probe hashes nothing"
assert_eq "$(jq .timings.librariesCached <<<"$warm")" "$(jq .timings.librariesHashed <<<"$base")" "all from the cache"
pass "a second probe takes every library hash from the cache ($(jq .timings.totalMs <<<"$warm") ms)"

fake=$(realpath "$FAKE_NCCL_DIR/libnccl.so.2")
out=$(LD_LIBRARY_PATH="$FAKE_NCCL_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" probe --json)
assert_eq "$(field "$out" nccl)" 2.19.3 "nccl from the fake library"
key="lib.$(basename "$fake")"
assert_eq "$(node "$out" "$key")" "$fake" "the fake library's path is a node fact"
assert_eq "$(field "$out" "$key")" "sha256:$(sha256sum "$fake" | cut -d' ' -f1)" "the fake library's hash"
assert_contains "$(node "$out" env.LD_LIBRARY_PATH)" "$FAKE_NCCL_DIR" "LD_LIBRARY_PATH is reported per node"
[ "$(jq -r .digest <<<"$out")" != "$digest" ] || fail "another NCCL must change the digest"
pass "LD_LIBRARY_PATH=\$FAKE_NCCL_DIR: nccl 2.19.3, $key = its sha256, another digest"

out=$(NCCL_ALGO=Tree probe --json)
assert_eq "$(field "$out" env.NCCL_ALGO)" Tree "env.NCCL_ALGO"
[ "$(jq -r .digest <<<"$out")" != "$digest" ] || fail "NCCL_ALGO must change the digest"
out=$(IMGTOOL_UNRELATED=1 CUDA_VISIBLE_DEVICES=3 NCCL_DEBUG=INFO probe --json)
assert_eq "$(jq -r .digest <<<"$out")" "$digest" "unrelated and per-node variables leave the digest"
assert_eq "$(node "$out" env.CUDA_VISIBLE_DEVICES)" 3 "CUDA_VISIBLE_DEVICES is a node fact"
assert_eq "$(field "$out" env.IMGTOOL_UNRELATED)" MISSING "unrelated variables are not recorded"
pass "NCCL_ALGO=Tree is env.NCCL_ALGO and changes the digest; CUDA_VISIBLE_DEVICES, NCCL_DEBUG do not"

out=$(IMGTOOL_IMAGE_DIGEST=$D1 probe --json)
assert_eq "$(field "$out" image.digest)" $D1 "image.digest from IMGTOOL_IMAGE_DIGEST"
out=$(IMGTOOL_IMAGE_DIGEST=$D1 probe --json --image-digest $D2)
assert_eq "$(field "$out" image.digest)" $D2 "--image-digest over the variable"
expect_exit 2 probe --no-hash-cache --image-digest sha256:xyz
assert_contains "$OUTPUT" "imgtool: error: --image-digest: digest 'sha256:xyz'" "bad --image-digest"
IMGTOOL_IMAGE_DIGEST=latest expect_exit 2 probe --no-hash-cache
assert_contains "$OUTPUT" "IMGTOOL_IMAGE_DIGEST: digest 'latest'" "bad IMGTOOL_IMAGE_DIGEST"
pass "image digest from IMGTOOL_IMAGE_DIGEST or --image-digest; a malformed one is exit 2"

printf '{"components":{"nccl":{"version":"2.28.9"}},"schemaVersion":1}' >"$WORK/stack.json"
out=$(STACK=$WORK/stack.json probe --json)
assert_eq "$(field "$out" image.stack_json)" "sha256:$(sha256sum "$WORK/stack.json" | cut -d' ' -f1)" "stack.json hash"
expect_exit 2 probe --no-hash-cache --stack-json "$WORK"
assert_contains "$OUTPUT" "reading $WORK: not a regular file" "a folder as stack.json"
pass "image.stack_json is the sha256 of the file; a folder is exit 2"

text=$(probe -o "$WORK/fp.json")
assert_eq "$(head -n1 <<<"$text")" "fingerprint $digest" "first line"
assert_contains "$text" "FIELD (must match)" "fields table"
assert_contains "$text" "NODE (reported only)" "node table"
assert_contains "$(tail -n2 <<<"$text")" "probe: " "timings line"
assert_eq "$(jq -r .digest "$WORK/fp.json")" "$digest" "-o file digest"
assert_eq "$(jq -c .fields "$WORK/fp.json")" "$(jq -c .fields <<<"$base")" "-o file fields"
assert_eq "$(jq -r 'has("timings")' "$WORK/fp.json")" false "no timings in the fingerprint file"
! compgen -G "$WORK/.tmp-*" >/dev/null || fail "a temporary file was left behind"
pass "-o writes the fingerprint JSON atomically; text starts with the digest line"

expect_exit 0 probe --help
assert_contains "$OUTPUT" IMGTOOL_IMAGE_DIGEST "--help names the variable"
assert_contains "$OUTPUT" "It needs no GPU" "--help says it needs no GPU"
pass "--help teaches the inputs"

out=$(probe --json --no-hash-cache)
assert_eq "$(jq .timings.librariesCached <<<"$out")" 0 "--no-hash-cache"
assert_eq "$(jq -r .digest <<<"$out")" "$digest" "same digest without the cache"
pass "--no-hash-cache hashes every library, same digest"
