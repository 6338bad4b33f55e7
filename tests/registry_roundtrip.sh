#!/usr/bin/env bash
# oci -> registry -> oci keeps every digest; the registry holds our manifest byte for
# byte (skopeo inspect --raw); an image skopeo pushed is pulled and verified by us; an
# index travels with its images; artifact manifests at sha256-<hex>.sig tags and tag
# listing; cross-repository mounts; a second push sends nothing; oci-archive both ways.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/registry_lib.sh"
command -v skopeo >/dev/null || fail "skopeo is not installed (scripts/setup installs it)"
start_registry plain
R="docker://$REG_HOST"

digest=$(make_image "oci:$WORK/img:v1" 64 2048)
pushed=$("$IMGTOOL" push -q "oci:$WORK/img:v1" "$R/team/img:v1")
assert_eq "$pushed" "$digest" "digest printed by push"
assert_eq "$("$IMGTOOL" resolve "$R/team/img:v1")" "$digest" "resolve"
skopeo inspect --raw --tls-verify=false "$R/team/img:v1" >"$WORK/raw"
cmp "$WORK/raw" "$WORK/img/blobs/sha256/${digest#sha256:}" || fail "registry manifest differs from ours"
assert_eq "$(skopeo inspect --tls-verify=false "$R/team/img:v1" | jq -r .Digest)" "$digest" "skopeo's digest"
pass "push: skopeo inspect --raw is our manifest byte for byte; resolve gives the digest"

"$IMGTOOL" pull -q "$R/team/img:v1" "oci:$WORK/back:v1" >/dev/null
assert_eq "$("$IMGTOOL" digest "oci:$WORK/back:v1")" "$digest" "digest after the round trip"
# The image's blobs (the layout also holds its SBOM artifact, which push does not send).
man="$WORK/img/blobs/sha256/${digest#sha256:}"
for h in ${digest#sha256:} $(jq -r '.config.digest, .layers[].digest' "$man" | sed 's/^sha256://'); do
  b="$WORK/img/blobs/sha256/$h"
  cmp "$b" "$WORK/back/blobs/sha256/$(basename "$b")" || fail "blob $(basename "$b") changed in transit"
done
"$IMGTOOL" verify "oci:$WORK/back:v1" >/dev/null
"$IMGTOOL" verify "$R/team/img:v1" >/dev/null
assert_eq "$("$IMGTOOL" digest "$R/team/img:v1")" "$digest" "digest of docker://"
assert_eq "$("$IMGTOOL" inspect --json "$R/team/img:v1" | jq -r .user)" "10001:10001" "inspect docker://"
pass "oci -> registry -> oci: every blob and digest unchanged; verify/inspect/digest read docker://"

out=$("$IMGTOOL" push --json "oci:$WORK/img:v1" "$R/team/img:v1")
assert_eq "$(jq -r '[.blobs[].action] | unique | join(",")' <<<"$out")" "exists" "second push skips every blob"
assert_eq "$(jq -r .bytesSent <<<"$out")" "0" "second push sends no blob bytes"
out=$("$IMGTOOL" copy --json "$R/team/img:v1" "$R/other/img:v1")
assert_eq "$(jq -r '[.blobs[].action] | unique | join(",")' <<<"$out")" "mounted" "same-registry copy mounts"
assert_eq "$(jq -r .digest <<<"$out")" "$digest" "digest after the mount copy"
pass "unchanged push sends nothing; registry-to-registry on one host mounts every blob"

# skopeo pushes (from an oci-archive we write), we pull and verify.
"$IMGTOOL" copy -q "oci:$WORK/img:v1" "oci-archive:$WORK/img.tar:v1" >/dev/null
skopeo copy -q --dest-tls-verify=false "oci-archive:$WORK/img.tar:v1" "$R/skopeo/img:v1"
sdigest=$(skopeo inspect --tls-verify=false "$R/skopeo/img:v1" | jq -r .Digest)
got=$("$IMGTOOL" pull -q "$R/skopeo/img:v1" "oci-archive:$WORK/from-skopeo.tar:v1")
assert_eq "$got" "$sdigest" "digest of skopeo's push"
"$IMGTOOL" verify "oci-archive:$WORK/from-skopeo.tar:v1" >/dev/null
pass "an image pushed by skopeo copy is pulled (to oci-archive) and verified by imgtool"

# An index of two images travels whole.
d2=$(make_image "oci:$WORK/img:v2" 16 16)
m1=$(jq -c --arg d "$digest" '.manifests[] | select(.digest == $d) | del(.annotations)' "$WORK/img/index.json")
m2=$(jq -c --arg d "$d2" '.manifests[] | select(.digest == $d) | del(.annotations)' "$WORK/img/index.json")
printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[%s,%s]}' \
  "$m1" "$m2" >"$WORK/index.json"
idx=$(sha256sum "$WORK/index.json" | cut -d' ' -f1)
cp "$WORK/index.json" "$WORK/img/blobs/sha256/$idx"
jq --arg d "sha256:$idx" --argjson s "$(stat -c %s "$WORK/index.json")" \
  '.manifests += [{"mediaType":"application/vnd.oci.image.index.v1+json","digest":$d,"size":$s,
   "annotations":{"org.opencontainers.image.ref.name":"multi"}}]' "$WORK/img/index.json" >"$WORK/i" &&
  mv "$WORK/i" "$WORK/img/index.json"
assert_eq "$("$IMGTOOL" push -q "oci:$WORK/img:multi" "$R/team/multi:v1")" "sha256:$idx" "index digest pushed"
"$IMGTOOL" pull -q "$R/team/multi:v1" "oci:$WORK/multi:v1" >/dev/null
for d in "$idx" "${digest#sha256:}" "${d2#sha256:}"; do
  [ -f "$WORK/multi/blobs/sha256/$d" ] || fail "index pull lacks manifest $d"
done
"$IMGTOOL" verify "$R/team/multi@$digest" >/dev/null
pass "an image index is copied with all its images, digests unchanged"

# Signatures later live at sha256-<hex>.sig: an artifact manifest with its own media types.
mkdir -p "$WORK/art/blobs/sha256"
printf '{}' >"$WORK/cfg"
printf 'payload for %s' "$digest" >"$WORK/payload"
cd_=$(sha256sum "$WORK/cfg" | cut -d' ' -f1); pd=$(sha256sum "$WORK/payload" | cut -d' ' -f1)
cp "$WORK/cfg" "$WORK/art/blobs/sha256/$cd_"; cp "$WORK/payload" "$WORK/art/blobs/sha256/$pd"
printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.dev.cosign.artifact.sig.v1+json","digest":"sha256:%s","size":2},"layers":[{"mediaType":"application/vnd.dev.cosign.simplesigning.v1+json","digest":"sha256:%s","size":%s,"annotations":{"dev.cosignproject.cosign/signature":"MEUCIQ=="}}]}' \
  "$cd_" "$pd" "$(stat -c %s "$WORK/payload")" >"$WORK/sig.json"
sd=$(sha256sum "$WORK/sig.json" | cut -d' ' -f1)
cp "$WORK/sig.json" "$WORK/art/blobs/sha256/$sd"
echo '{"imageLayoutVersion":"1.0.0"}' >"$WORK/art/oci-layout"
printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s}]}' \
  "$sd" "$(stat -c %s "$WORK/sig.json")" >"$WORK/art/index.json"
sigtag="sha256-${digest#sha256:}.sig"
assert_eq "$("$IMGTOOL" copy -q "oci:$WORK/art" "$R/team/img:$sigtag")" "sha256:$sd" "artifact pushed"
"$IMGTOOL" tags "$R/team/img" >"$WORK/tags"
grep -qx "$sigtag" "$WORK/tags" || fail "tags lacks $sigtag: $(cat "$WORK/tags")"
grep -qx "v1" "$WORK/tags" || fail "tags lacks v1"
"$IMGTOOL" pull -q "$R/team/img:$sigtag" "oci:$WORK/sig-back:s" >/dev/null
cmp "$WORK/sig.json" "$WORK/sig-back/blobs/sha256/$sd" || fail "artifact manifest changed"
pass "artifact manifest at $sigtag round-trips; tags lists it"
