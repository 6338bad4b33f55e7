#!/usr/bin/env bash
# A two-platform index assembled by imgtool (index create): skopeo picks each platform
# from it (--override-arch); imgtool inspect lists both, digest prints the index's (and
# --platform a child's), verify checks every child (or one), diff compares platform by
# platform; the same on docker-registry after a push, where a copy --all by skopeo gives
# the same index digest back. Damage in one child is named; index append adds a third.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/registry_lib.sh"
command -v skopeo >/dev/null || fail "skopeo is not installed (scripts/setup installs it)"

# Two images of one context, one per architecture (only the config's platform differs).
build_arch() {  # ARCH CONTENT -> oci:$WORK/img-ARCH:v1
  mkdir -p "$WORK/ctx-$1"
  printf '%s\n' "$2" >"$WORK/ctx-$1/f.txt"
  cat >"$WORK/ctx-$1/spec.json" <<JSON
{"base": "scratch", "platform": {"os": "linux", "architecture": "$1"},
 "user": {"name": "trainer", "uid": 10001, "gid": 10001},
 "layers": [{"name": "data", "files": [{"src": "f.txt", "dest": "/data/f.txt"}]}]}
JSON
  (cd "$WORK/ctx-$1" && "$IMGTOOL" build spec.json -o "oci:$WORK/img-$1:v1" -q | tail -n1)
}
amd=$(build_arch amd64 "built for x86")
arm=$(build_arch arm64 "built for arm")
idx=$("$IMGTOOL" index create "oci:$WORK/multi:v1" "oci:$WORK/img-amd64:v1" "oci:$WORK/img-arm64:v1" 2>/dev/null)
L="oci:$WORK/multi:v1"

check_index() {  # REF SKOPEO_REF [--tls-verify=false]
  local ref=$1 sref=$2; shift 2
  assert_eq "$("$IMGTOOL" digest "$ref")" "$idx" "$ref: digest is the index's"
  assert_eq "$("$IMGTOOL" digest --platform linux/arm64 "$ref")" "$arm" "$ref: --platform linux/arm64"
  assert_eq "$("$IMGTOOL" inspect --json "$ref" | jq -r '[.manifests[].platform] | join(",")')" \
    "linux/amd64,linux/arm64" "$ref: inspect lists both platforms"
  assert_eq "$("$IMGTOOL" inspect --json --platform linux/amd64 "$ref" | jq -r .architecture)" "amd64" \
    "$ref: inspect --platform"
  for a in amd64 arm64; do
    local want=$amd; [ $a = arm64 ] && want=$arm
    assert_eq "$(skopeo inspect "$@" --override-os linux --override-arch $a "$sref" | jq -r .Architecture)" "$a" \
      "$sref: skopeo --override-arch $a"
    assert_eq "$(skopeo inspect "$@" --raw --override-arch $a "$sref" | sha256sum | cut -d' ' -f1)" "${idx#sha256:}" \
      "$sref: skopeo --raw is the index itself"
    skopeo copy -q "$@" --override-arch $a "$sref" "oci:$WORK/sk-$a:x" >/dev/null
    assert_eq "$(jq -r '.manifests[0].digest' "$WORK/sk-$a/index.json")" "$want" "$sref: skopeo selects the $a image"
    rm -rf "$WORK/sk-$a"
  done
  out=$("$IMGTOOL" verify --json "$ref")
  # 1 + 2 x (manifest, config, 2 layers), less the layer both images share: read once.
  assert_eq "$(jq -r '.ok, (.manifests | length), .blobsChecked, .stats.reads' <<<"$out" | tr '\n' ' ')" \
    "true 3 8 8 " "$ref: verify checks the index and both images, each blob once"
  assert_eq "$("$IMGTOOL" verify --json --platform linux/arm64 "$ref" | jq -c '[.manifests[]]')" "[\"$idx\",\"$arm\"]" \
    "$ref: verify --platform checks the index and one image"
  expect_exit 0 diff "$ref" "$L"
  assert_contains "$OUTPUT" "identical: $idx" "$ref: diff against the layout"
}
check_index "$L" "$L"
pass "layout: inspect lists linux/amd64 and linux/arm64; digest, --platform, verify (all or one), diff; skopeo picks each"

start_registry plain
R="docker://$REG_HOST/team/multi"
assert_eq "$("$IMGTOOL" push -q "$L" "$R:v1")" "$idx" "push prints the index digest"
check_index "$R:v1" "$R:v1" --tls-verify=false
skopeo copy -q --all --src-tls-verify=false "$R:v1" "oci:$WORK/skall:v1" >/dev/null
assert_eq "$("$IMGTOOL" digest "oci:$WORK/skall:v1")" "$idx" "skopeo copy --all keeps the index digest"
"$IMGTOOL" verify "oci:$WORK/skall:v1" >/dev/null
assert_eq "$("$IMGTOOL" copy -q --platform linux/arm64 "$R:v1" "oci:$WORK/one:arm64")" "$arm" "copy --platform"
assert_eq "$(jq -r '.manifests[0].digest' "$WORK/one/index.json")" "$arm" "copy --platform writes only that image"
pass "registry: the same checks on docker://; skopeo copy --all of it verifies with the same digest; copy --platform"

# A damaged child is named, and only when that child is checked.
cp -a "$WORK/multi" "$WORK/bad"
layer=$(jq -r '.layers[0].digest' "$WORK/bad/blobs/sha256/${arm#sha256:}")
printf 'x' >>"$WORK/bad/blobs/sha256/${layer#sha256:}"
expect_exit 4 verify "oci:$WORK/bad:v1"
assert_contains "$OUTPUT" "FAILED $layer" "the arm64 layer is named"
expect_exit 0 verify --platform linux/amd64 "oci:$WORK/bad:v1"
expect_exit 3 digest --platform linux/s390x "$L"
assert_contains "$OUTPUT" "no image for linux/s390x (it has linux/amd64, linux/arm64)" "unknown platform"
pass "damage in the arm64 child: exit 4 naming its layer; --platform linux/amd64 passes; an absent platform is exit 3"

# diff platform by platform: another amd64 image in an index with the same arm64 image.
amd2=$(build_arch amd64 "built for x86, again differently")
"$IMGTOOL" index create "oci:$WORK/multi2:v1" "oci:$WORK/img-amd64:v1" "oci:$WORK/img-arm64:v1" >/dev/null 2>&1
expect_exit 1 diff --json "$L" "oci:$WORK/multi2:v1"
assert_eq "$(jq -r '[.platforms[] | "\(.platform)=\(.identical)"] | join(",")' <<<"$OUTPUT")" \
  "linux/amd64=false,linux/arm64=true" "diff of two indexes, per platform"
assert_eq "$(jq -r '.platforms[0].layers[0].changes[0].path' <<<"$OUTPUT")" "/data/f.txt" "the changed file"
pass "diff of two indexes names the platform and the file that differ"

# append: a third platform; two images for one platform are refused.
mkdir -p "$WORK/ctx-riscv64" && build_arch riscv64 "built for riscv" >/dev/null
"$IMGTOOL" index append "$L" "oci:$WORK/img-riscv64:v1" >/dev/null 2>&1
assert_eq "$("$IMGTOOL" inspect --json "$L" | jq -r '[.manifests[].platform] | join(",")')" \
  "linux/amd64,linux/arm64,linux/riscv64" "index append"
expect_exit 2 index create "oci:$WORK/dup:v1" "oci:$WORK/img-amd64:v1" "oci:$WORK/img-amd64:v1"
expect_exit 0 index create "oci:$WORK/dup:v1" "oci:$WORK/img-amd64:v1" "oci:$WORK/img-arm64:v1"
expect_exit 2 index append "oci:$WORK/dup:v1" "oci:$WORK/img-amd64:v1"
assert_contains "$OUTPUT" "two images for linux/amd64" "a second image for one platform"
pass "index append adds linux/riscv64; two images for one platform are refused (exit 2)"
