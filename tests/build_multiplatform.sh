#!/usr/bin/env bash
# A multi-platform spec (issue 18): "platforms": [linux/amd64, linux/arm64], one deb per
# architecture (same name and version; dpkg-deb built, Architecture amd64 and arm64) and a
# file for arm64 only. imgtool writes one index with one image per platform:
#   1. two folders and empty caches give one index digest, record and SBOM;
#   2. skopeo sees an index of two; skopeo --override-arch arm64 copies the arm64 image,
#      umoci unpacks it, and dpkg-query lists its arm64 deb;
#   3. --platform linux/arm64 builds that image alone, to the digest the index names;
#   4. the lock names each input's platform; build --locked refuses a moved arm64 input.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/packages_lib.sh"

# 1. Two folders, empty caches: one index digest, one record, one SBOM.
for d in a b; do
  multiplatform_context "$WORK/$d"
  IMGTOOL_CACHE="$WORK/cache-$d" "$IMGTOOL" build "$WORK/$d/spec.json" -o "oci:$WORK/out-$d:v1" -q >"$WORK/$d.out"
done
index=$(tail -n1 "$WORK/a.out")
assert_eq "$(tail -n1 "$WORK/b.out")" "$index" "index digest from another folder"
cmp "$WORK/out-a.build.json" "$WORK/out-b.build.json" || fail "the build records differ"
cmp "$WORK/out-a.spdx.json" "$WORK/out-b.spdx.json" || fail "the SBOMs differ"
pass "two folders, empty caches: one index $index, one record, one SBOM"

# 2. Peers: an index of two; the arm64 image copied, unpacked, its dpkg database read.
raw=$(skopeo inspect --raw "oci:$WORK/out-a:v1")
assert_eq "$(jq -r .mediaType <<<"$raw")" "application/vnd.oci.image.index.v1+json" "skopeo: media type"
assert_eq "$(jq -r '[.manifests[].platform.architecture] | join(",")' <<<"$raw")" "amd64,arm64" "skopeo: platforms"
arm_digest=$(jq -r '.manifests[] | select(.platform.architecture == "arm64") | .digest' <<<"$raw")
skopeo --override-arch arm64 copy -q "oci:$WORK/out-a:v1" "oci:$WORK/arm:v1"
assert_eq "$(skopeo inspect --config "oci:$WORK/arm:v1" | jq -r .architecture)" "arm64" "the copied image's architecture"
umoci unpack --rootless --image "$WORK/arm:v1" "$WORK/bundle" >/dev/null 2>&1 || fail "umoci unpack of the arm64 image"
root="$WORK/bundle/rootfs"
assert_eq "$(dpkg-query --admindir "$root/var/lib/dpkg" -W -f '${Package} ${Version} ${Architecture}\n')" \
  "libhello 1.0-1 arm64" "dpkg-query in the arm64 image"
assert_eq "$(cat "$root/usr/local/bin/tool")" "arm64 tool" "the arm64 image's tool"
assert_eq "$(cat "$root/usr/lib/libhello/liblibhello.so.1")" "lib libhello 1.0-1 arm64" "the arm64 deb's library"
pass "skopeo --override-arch arm64 copied $arm_digest, umoci unpacked it, dpkg-query lists libhello arm64"
sbom_arches=$(jq -r '[.packages[].externalRefs[0].referenceLocator | select(startswith("pkg:deb"))] | sort | join(" ")' "$WORK/out-a.spdx.json")
assert_eq "$sbom_arches" "pkg:deb/debian/libhello@1.0-1?arch=amd64 pkg:deb/debian/libhello@1.0-1?arch=arm64" "SBOM debs"
assert_eq "$(jq -r '.images | map(.platform) | join(",")' "$WORK/out-a.build.json")" "linux/amd64,linux/arm64" "record platforms"
for image in $(jq -r '.manifests[].digest' <<<"$raw"); do
  skopeo inspect --raw "oci:$WORK/out-a:sha256-${image#sha256:}.sbom" >/dev/null || fail "no SBOM artifact for $image"
done
pass "the SBOM covers both platforms' debs; each image has its own SBOM artifact; the record names both"

# 3. --platform: the arm64 image alone, the digest the index names.
"$IMGTOOL" build "$WORK/a/spec.json" --platform linux/arm64 -o "oci:$WORK/arm-only:v1" -q >"$WORK/arm.out"
assert_eq "$(tail -n1 "$WORK/arm.out")" "$arm_digest" "--platform linux/arm64 digest"
expect_exit 2 build "$WORK/a/spec.json" --platform linux/s390x -o "oci:$WORK/none:v1" -q
assert_contains "$OUTPUT" "the spec builds linux/amd64, linux/arm64" "--platform not in the spec"
[ ! -e "$WORK/none" ] || fail "a refused --platform left output"
pass "--platform linux/arm64 builds $arm_digest alone; linux/s390x is refused naming the spec's platforms"

# 4. The lock covers every platform; a moved arm64 input is named with its platform.
"$IMGTOOL" lock "$WORK/a/spec.json" -q >/dev/null
assert_eq "$(jq -r '[.inputs[].platform] | unique | join(",")' "$WORK/a/imgtool.lock.json")" "linux/amd64,linux/arm64" "lock platforms"
"$IMGTOOL" build "$WORK/a/spec.json" --locked -o "oci:$WORK/locked:v1" -q >/dev/null
printf 'arm64 tool, changed\n' >"$WORK/a/bin/tool-arm64"
expect_exit 4 build "$WORK/a/spec.json" --locked -o "oci:$WORK/locked2:v1" -q
assert_contains "$OUTPUT" "linux/arm64: layer tool: file /usr/local/bin/tool: sha256 locked" "a moved arm64 input"
"$IMGTOOL" build "$WORK/a/spec.json" --locked --platform linux/amd64 -o "oci:$WORK/locked3:v1" -q >/dev/null ||
  fail "--platform linux/amd64 --locked compares the amd64 inputs only"
pass "the lock names each input's platform; --locked names the moved arm64 file; --platform linux/amd64 still matches"
