#!/usr/bin/env bash
# A base pinned in a registry: "base": "docker://HOST/REPO@sha256:<index>" resolves to the
# spec's platform (arm64 here), its layers come first in the child, the lock records the
# index digest and the arm64 manifest, the build record and the annotations name the
# base; with the registry stopped, a rebuild from the download cache gives the same
# digest and `lock --check` still passes; a tag alone is refused (exit 2).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/registry_lib.sh"
start_registry plain

base_image() {  # ARCH: a small image for linux/ARCH, whose layer differs by ARCH
  local ctx="$WORK/base-ctx-$1"
  mkdir -p "$ctx/etc" && printf 'built for %s\n' "$1" >"$ctx/etc/arch.txt"
  printf '{"base":"scratch","platform":{"os":"linux","architecture":"%s"},
    "user":{"name":"trainer","uid":10001,"gid":10001},
    "layers":[{"name":"arch","files":[{"src":"etc/arch.txt","dest":"/etc/arch.txt"}]}]}' "$1" >"$ctx/spec.json"
  "$IMGTOOL" build -q "$ctx/spec.json" -o "oci:$WORK/base-$1:v1" | tail -n1
}
amd64=$(base_image amd64)
arm64=$(base_image arm64)
"$IMGTOOL" index create "oci:$WORK/base:multi" "oci:$WORK/base-amd64:v1" "oci:$WORK/base-arm64:v1" >/dev/null 2>&1
"$IMGTOOL" push -q "oci:$WORK/base:multi" "docker://$REG_HOST/base:multi" >/dev/null
index=$("$IMGTOOL" digest "oci:$WORK/base:multi")
assert_eq "$("$IMGTOOL" digest --platform linux/arm64 "docker://$REG_HOST/base@$index")" "$arm64" "the index's arm64 image"
pass "a linux/amd64 + linux/arm64 index pushed to $REG_HOST ($index)"

mkdir -p "$WORK/child" && cd "$WORK/child"
printf 'app v1\n' >app.txt
child_spec() {  # BASE
  printf '{"base":"%s","platform":{"os":"linux","architecture":"arm64"},
    "user":{"name":"app","uid":10002,"gid":10002},
    "layers":[{"name":"app","files":[{"src":"app.txt","dest":"/opt/app.txt"}]}]}' "$1"
}
child_spec "docker://$REG_HOST/base@$index" >spec.json

expect_exit 0 lock spec.json
assert_contains "$OUTPUT" "base docker://$REG_HOST/base@$index: fetching into the download cache" "lock fetches the base"
lock=imgtool.lock.json
assert_eq "$(jq -c '.inputs[0]' $lock)" \
  "{\"kind\":\"base\",\"manifest\":\"$arm64\",\"name\":\"base\",\"sha256\":\"$index\",\"size\":0,\"source\":\"docker://$REG_HOST/base\"}" \
  "the base in the lock"
pass "lock records the base: its source, the index digest and the arm64 manifest"

expect_exit 0 build spec.json -o "oci:$WORK/out1:v1" --locked
assert_contains "$OUTPUT" "every input matches" "--locked checked the base"
digest=$(tail -n1 <<<"$OUTPUT")
base_layers=$("$IMGTOOL" inspect --json "oci:$WORK/base-arm64:v1" | jq -c '[.layers[].digest]')
n=$(jq length <<<"$base_layers")
child=$("$IMGTOOL" inspect --json "oci:$WORK/out1:v1")
assert_eq "$(jq -c --argjson n "$n" '[.layers[:$n][].digest]' <<<"$child")" "$base_layers" "the child's first layers"
assert_eq "$(jq -r .architecture <<<"$child")" "arm64" "the child's architecture"
assert_eq "$(jq -r '.annotations["org.opencontainers.image.base.digest"]' <<<"$child")" "$arm64" "base.digest annotation"
assert_eq "$(jq -r '.annotations["org.opencontainers.image.base.name"]' <<<"$child")" "$REG_HOST/base" "base.name annotation"
assert_eq "$(jq -c .base "$WORK/out1.build.json")" \
  "{\"digest\":\"$index\",\"manifest\":\"$arm64\",\"source\":\"docker://$REG_HOST/base\"}" "the base in the build record"
pass "the child starts with the arm64 base's $n layers; annotations and build record name the base"

bases="$IMGTOOL_CACHE/downloads/bases"
for d in "$index" "$arm64"; do
  [ -f "$bases/blobs/sha256/${d#sha256:}" ] || fail "$d is not in the download cache"
done
[ ! -e "$bases/blobs/sha256/${amd64#sha256:}" ] || fail "the amd64 image was fetched although arm64 was asked for"
pass "the download cache keeps the index and the arm64 image, not the amd64 one"

# Issue 24, class 1: the cached base layer replaced by a symlink to a 0600 key is not
# read: it counts as missing and is fetched over; the key is in no output.
layer=$(jq -r '.[0]' <<<"$base_layers")
printf 'BASE-CACHE-SECRET\n' >"$WORK/key" && chmod 600 "$WORK/key"
rm -f "$bases/blobs/sha256/${layer#sha256:}"
ln -s "$WORK/key" "$bases/blobs/sha256/${layer#sha256:}"
expect_exit 0 build spec.json -o "oci-archive:$WORK/swapped.tar:v1" --no-cache
assert_eq "$(tail -n1 <<<"$OUTPUT")" "$digest" "digest after the swap"
[ -f "$bases/blobs/sha256/${layer#sha256:}" ] && [ ! -L "$bases/blobs/sha256/${layer#sha256:}" ] ||
  fail "the symlinked base layer was kept"
grep -qF BASE-CACHE-SECRET "$WORK/swapped.tar" "$WORK"/swapped.tar.*.json && fail "the key reached an output"
pass "a cached base layer replaced by a symlink to a 0600 key: fetched again, same digest, the key in no output"

stop_registries
expect_exit 0 build spec.json -o "oci:$WORK/out2:v1" --locked --no-cache
assert_eq "$(tail -n1 <<<"$OUTPUT")" "$digest" "offline rebuild digest"
assert_contains "$OUTPUT" "base docker://$REG_HOST/base@$index: from the download cache" "the base's origin"
grep -qF "fetching" <<<"$OUTPUT" && fail "the offline rebuild fetched something: $OUTPUT"
expect_exit 0 lock --check spec.json
pass "with the registry stopped: the same digest from the download cache, and lock --check passes"

rm -rf "$bases/blobs/sha256/${arm64#sha256:}"
expect_exit 6 build spec.json -o "oci:$WORK/out3:v1" -q
assert_contains "$OUTPUT" "base image: docker://$REG_HOST/base@$index" "a cache miss names the base"
[ ! -e "$WORK/out3" ] || fail "output after a failed base fetch"
pass "a cache missing the arm64 manifest goes to the registry (down: exit 6, nothing written)"

child_spec "docker://$REG_HOST/base:multi" >tag.json
expect_exit 2 build tag.json -o "oci:$WORK/out4:v1" -q
assert_contains "$OUTPUT" "tag.json: \$.base: 'docker://$REG_HOST/base:multi' is not pinned: add @sha256:<digest> of the image or index (a tag can move)" "tag only"
expect_exit 2 lock tag.json
assert_contains "$OUTPUT" "is not pinned" "lock refuses a tag too"
pass "a tag-only base is refused (exit 2): $(tail -n1 <<<"$OUTPUT")"
