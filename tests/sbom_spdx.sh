#!/usr/bin/env bash
# The SBOM: `imgtool build SPEC oci:DIR:TAG` writes DIR.spdx.json (SPDX 2.3) beside the
# layout and stores the same bytes in the layout as an artifact tagged
# sha256-<image hex>.sbom whose subject is the image. spdx-tools (PyPI) validates the
# document; every deb and wheel of the spec is in it with version, checksum and purl;
# skopeo and umoci still read the image; a rebuild writes the same bytes.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/packages_lib.sh"
command -v skopeo >/dev/null || fail "skopeo is not installed (scripts/setup installs it)"
command -v umoci >/dev/null || fail "umoci is not installed (scripts/setup installs it)"

# spdx-tools in a venv kept between runs (the first run needs PyPI).
venv="${XDG_CACHE_HOME:-$HOME/.cache}/imgtool-test/spdx-venv"
if [ ! -x "$venv/bin/pyspdxtools" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q spdx-tools || fail "pip install spdx-tools into $venv"
fi

mkdir -p "$WORK/ctx/debs" "$WORK/ctx/wheels" && cd "$WORK/ctx"
alpha=$(make_deb debs alpha 1:2.3-4)
beta=$(make_deb debs beta 2.3.4-1+b1)
nccl=$(make_wheel wheels nvidia_nccl_cu13 2.28.9 nvidia/nccl)
deb() { printf '{"src":"%s","sha256":"%s","name":"%s","version":"%s"}' "${1#$WORK/ctx/}" "$(sha "$1")" "$2" "$3"; }
whl() { printf '{"src":"%s","sha256":"%s","name":"%s","version":"%s","prefix":"/opt/py"}' "${1#$WORK/ctx/}" "$(sha "$1")" "$2" "$3"; }
cat >spec.json <<JSON
{"base":"scratch","user":{"name":"t","uid":10001,"gid":10001},
 "labels":{"org.opencontainers.image.title":"sbom-test"},
 "layers":[{"name":"debs","debs":[$(deb "$beta" beta 2.3.4-1+b1),$(deb "$alpha" alpha 1:2.3-4)]},
           {"name":"py","wheels":[$(whl "$nccl" nvidia_nccl_cu13 2.28.9)]}]}
JSON

expect_exit 0 build spec.json -o "oci:$WORK/img:v1" -q
sbom="$WORK/img.spdx.json"
[ -f "$sbom" ] || fail "no SBOM beside the layout ($sbom)"
digest=$(skopeo inspect --raw "oci:$WORK/img:v1" | sha256sum | cut -d' ' -f1)
pass "build wrote $(basename "$sbom") beside the layout"

out=$("$venv/bin/pyspdxtools" -i "$sbom" 2>&1) || fail "pyspdxtools rejects the SBOM: $out"
grep -qi "invalid\|error" <<<"$out" && fail "pyspdxtools reports problems: $out"
pass "pyspdxtools -i validates the document (SPDX 2.3)"

q() { jq -r "$1" "$sbom"; }
assert_eq "$(q .spdxVersion)" "SPDX-2.3" "spdxVersion"
assert_eq "$(q .creationInfo.created)" "1970-01-01T00:00:00Z" "created from SOURCE_DATE_EPOCH"
assert_eq "$(q .documentNamespace)" "https://imgtool.invalid/spdx/sbom-test/sha256-$digest" "namespace"
image=$(jq -c '.packages[] | select(.primaryPackagePurpose == "CONTAINER")' "$sbom")
assert_eq "$(jq -r .checksums[0].checksumValue <<<"$image")" "$digest" "image checksum"
assert_eq "$(jq -r .externalRefs[0].referenceLocator <<<"$image")" "pkg:oci/sbom-test@sha256:$digest" "image purl"
assert_eq "$(q '.relationships[] | select(.relationshipType == "DESCRIBES") | .relatedSpdxElement')" \
  "$(jq -r .SPDXID <<<"$image")" "the document describes the image"
check_pkg() {  # name version file purl
  local p
  p=$(jq -c --arg n "$1" '.packages[] | select(.name == $n)' "$sbom")
  [ -n "$p" ] || fail "$1 is not in the SBOM"
  assert_eq "$(jq -r .versionInfo <<<"$p")" "$2" "$1 version"
  assert_eq "$(jq -r '.checksums[] | select(.algorithm == "SHA256") | .checksumValue' <<<"$p")" "$(sha "$3")" "$1 sha256"
  assert_eq "$(jq -r '.externalRefs[] | select(.referenceType == "purl") | .referenceLocator' <<<"$p")" "$4" "$1 purl"
  assert_eq "$(jq -r --arg id "$(jq -r .SPDXID <<<"$p")" \
    '.relationships[] | select(.relationshipType == "CONTAINS" and .relatedSpdxElement == $id) | .spdxElementId' "$sbom")" \
    "$(jq -r .SPDXID <<<"$image")" "the image contains $1"
}
check_pkg alpha 1:2.3-4 "$alpha" "pkg:deb/debian/alpha@1:2.3-4?arch=all"
check_pkg beta 2.3.4-1+b1 "$beta" "pkg:deb/debian/beta@2.3.4-1%2Bb1?arch=all"
check_pkg nvidia-nccl-cu13 2.28.9 "$nccl" "pkg:pypi/nvidia-nccl-cu13@2.28.9"
assert_eq "$(q '.packages | length')" 4 "image + 3 packages"
pass "every deb and wheel of the spec has its version, sha256 and purl; the image contains each"

tag="sha256-$digest.sbom"
skopeo inspect --raw "oci:$WORK/img:$tag" >"$WORK/artifact.json"
raw=$(cat "$WORK/artifact.json")
assert_eq "$(jq -r .artifactType <<<"$raw")" "application/spdx+json" "artifactType"
assert_eq "$(jq -r .subject.digest <<<"$raw")" "sha256:$digest" "subject is the image"
assert_eq "$(jq -r .config.mediaType <<<"$raw")" "application/vnd.oci.empty.v1+json" "empty config"
layer=$(jq -r '.layers[0].digest' <<<"$raw")
assert_eq "$(jq -r '.layers[0].mediaType' <<<"$raw")" "application/spdx+json" "layer media type"
cmp "$sbom" "$WORK/img/blobs/sha256/${layer#sha256:}" || fail "the stored SBOM differs from $sbom"
assert_eq "$(jq -r --arg t "$tag" '.manifests[] | select(.annotations."org.opencontainers.image.ref.name" == $t) | .digest' \
  "$WORK/img/index.json")" "sha256:$(sha "$WORK/artifact.json")" "index.json names the artifact"
pass "skopeo reads the artifact at $tag: spdx+json, subject = the image, the same bytes as the file"

assert_eq "$(skopeo inspect "oci:$WORK/img:v1" | jq -r .Digest)" "sha256:$digest" "skopeo reads the image"
umoci unpack --rootless --image "$WORK/img:v1" "$WORK/bundle" >/dev/null
[ -x "$WORK/bundle/rootfs/usr/bin/alpha" ] || fail "umoci unpack of the image"
expect_exit 0 verify "oci:$WORK/img:v1"
pass "skopeo, umoci and imgtool verify still read the image beside its SBOM"

cp "$sbom" "$WORK/first.spdx.json" && cp "$WORK/img/index.json" "$WORK/first-index.json"
expect_exit 0 build spec.json -o "oci:$WORK/img:v1" -q
cmp "$sbom" "$WORK/first.spdx.json" || fail "a rebuild changed the SBOM"
cmp "$WORK/img/index.json" "$WORK/first-index.json" || fail "a rebuild changed index.json"
expect_exit 0 build spec.json -o "oci:$WORK/img2:v1" -q --no-cache
cmp "$WORK/img2.spdx.json" "$sbom" || fail "a build into another folder wrote a different SBOM"
pass "rebuilds (same folder, another folder) write byte-identical SBOMs and index.json"

# Issue 24: two platforms whose names differ only in punctuation once gave their images
# one SPDXID (both SPDXRef-image-linux-arm64-v8). Every id of the index's document is
# unique, the document validates, and each image CONTAINS its own package.
cat >spec-punct.json <<JSON
{"base":"scratch","user":{"name":"t","uid":10001,"gid":10001},
 "platforms":["linux/arm64/v8","linux/arm64-v8"],
 "layers":[{"name":"debs","debs":[$(deb "$alpha" alpha 1:2.3-4)]}]}
JSON
expect_exit 0 build spec-punct.json -o "oci:$WORK/punct:v1" -q
psbom="$WORK/punct.spdx.json"
ids=$(jq -r '.packages[].SPDXID' "$psbom")
assert_eq "$(wc -l <<<"$ids")" 5 "index + 2 images + 2 packages"
assert_eq "$(sort <<<"$ids" | uniq -d)" "" "no SPDXID twice"
assert_contains "$ids" "SPDXRef-image-linux-arm64-v8" "linux/arm64/v8 keeps its id"
assert_contains "$ids" "SPDXRef-image-linux-arm64.2Dv8" "linux/arm64-v8 gets its own"
for image in SPDXRef-image-linux-arm64-v8 SPDXRef-image-linux-arm64.2Dv8; do
  assert_eq "$(jq --arg i "$image" '[.relationships[] | select(.spdxElementId == $i and .relationshipType == "CONTAINS")] | length' "$psbom")" \
    1 "$image contains its one package"
done
out=$("$venv/bin/pyspdxtools" -i "$psbom" 2>&1) || fail "pyspdxtools rejects the index's SBOM: $out"
grep -qi "invalid\|error" <<<"$out" && fail "pyspdxtools reports problems: $out"
pass "linux/arm64/v8 and linux/arm64-v8: unique SPDXIDs ($(tr '\n' ' ' <<<"$ids")), pyspdxtools validates"
