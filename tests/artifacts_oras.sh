#!/usr/bin/env bash
# OCI 1.1 artifacts are images too: an artifact pushed by the oras SDK (PyPI `oras`,
# its own config media type, two files, a subject) is inspected, digested, verified and
# copied by imgtool (registry -> layout -> another repository), and oras pulls the copy
# back byte for byte. imgtool's own artifacts (the build's .sbom, sign's .sig, attest's
# .att) verify. A manifest media type imgtool does not know is exit 2 naming it, and a
# damaged artifact blob is exit 4.
source "$(dirname "$0")/lib.sh"
venv="${XDG_CACHE_HOME:-$HOME/.cache}/imgtool-test/oras-venv"  # kept between runs; before HOME moves
source "$(dirname "$0")/registry_lib.sh"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import oras' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q oras || fail "pip install oras into $venv"
fi
export COSIGN_PASSWORD=test-only-password
start_registry plain

# An image to be the subject, then the artifact about it, pushed by oras.
make_context "$WORK/ctx"
img=$(cd "$WORK/ctx" && "$IMGTOOL" build spec.json -o "oci:$WORK/img:v1" -q | tail -n1)
"$IMGTOOL" push -q --no-artifacts "oci:$WORK/img:v1" "docker://$REG_HOST/team/app:v1" >/dev/null
mkdir -p "$WORK/files" && cd "$WORK/files"
head -c 200000 /dev/urandom >model.bin
printf '{"framework":"none"}' >card.json
printf '{"created":"0"}' >config.json
size=$(stat -c %s "$WORK/img/blobs/sha256/${img#sha256:}")
"$venv/bin/python" - "$REG_HOST" "$img" "$size" <<'PY' || fail "oras push"
import sys, oras.client, oras.oci
host, digest, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
c = oras.client.OrasClient(hostname=host, insecure=True)
c.push(target=f"{host}/team/app:model", files=["model.bin:application/vnd.example.model.v1",
       "card.json:application/vnd.example.card.v1+json"],
       manifest_config="config.json:application/vnd.example.config.v1+json",
       manifest_annotations={"org.example.note": "made by oras"},
       subject=oras.oci.Subject("application/vnd.oci.image.manifest.v1+json", digest, size), quiet=True)
PY
A="docker://$REG_HOST/team/app:model"
out=$("$IMGTOOL" inspect --json "$A")
assert_eq "$(jq -r .artifactType <<<"$out")" "application/vnd.example.config.v1+json" "artifact type (oras sets the config type)"
assert_eq "$(jq -r .subject.digest <<<"$out")" "$img" "subject"
assert_eq "$(jq -r '[.layers[].annotations["org.opencontainers.image.title"]] | join(",")' <<<"$out")" "model.bin,card.json" "files"
digest=$("$IMGTOOL" digest "$A")
assert_eq "$(jq -r .digest <<<"$out")" "$digest" "digest"
out=$("$IMGTOOL" verify --json "$A")
assert_eq "$(jq -r '.ok, .blobsChecked, .layersDecompressed' <<<"$out" | tr '\n' ' ')" "true 4 0 " \
  "verify: manifest, config, two files; nothing to inflate"
pass "oras-pushed artifact: inspect (type, subject, files), digest, verify"

"$IMGTOOL" copy -q "$A" "oci:$WORK/art:model" >/dev/null
"$IMGTOOL" verify "oci:$WORK/art:model" >/dev/null
"$IMGTOOL" copy -q "oci:$WORK/art:model" "docker://$REG_HOST/other/app:model" >/dev/null
assert_eq "$("$IMGTOOL" digest "docker://$REG_HOST/other/app:model")" "$digest" "digest after registry -> layout -> registry"
mkdir "$WORK/pulled" && cd "$WORK/pulled"
"$venv/bin/python" - "$REG_HOST" <<'PY' || fail "oras pull of imgtool's copy"
import sys, oras.client
host = sys.argv[1]
oras.client.OrasClient(hostname=host, insecure=True).pull(target=f"{host}/other/app:model", outdir=".")
PY
cmp model.bin "$WORK/files/model.bin" || fail "model.bin changed"
cmp card.json "$WORK/files/card.json" || fail "card.json changed"
pass "copy: registry -> layout -> another repository keeps the digest; oras pulls imgtool's copy byte for byte"

# imgtool's own artifacts: the build's SBOM, a signature, an attestation.
cd "$WORK"
hex=${img#sha256:}
"$IMGTOOL" keygen --output-key-prefix k 2>/dev/null
"$IMGTOOL" sign --key k.key "oci:$WORK/img:v1" >/dev/null
"$IMGTOOL" attest --key k.key --predicate "$WORK/img.spdx.json" "oci:$WORK/img:v1" >/dev/null
for t in sbom sig att; do
  "$IMGTOOL" verify "oci:$WORK/img:sha256-$hex.$t" >/dev/null || fail ".$t does not verify"
done
assert_eq "$("$IMGTOOL" inspect --json "oci:$WORK/img:sha256-$hex.sbom" | jq -r .artifactType)" "application/spdx+json" \
  "the SBOM's artifact type"
"$IMGTOOL" push -q "oci:$WORK/img:v1" "docker://$REG_HOST/team/signed:v1" >/dev/null
for t in sbom sig att; do
  "$IMGTOOL" verify "docker://$REG_HOST/team/signed:sha256-$hex.$t" >/dev/null || fail "pushed .$t does not verify"
done
pass "imgtool's .sbom, .sig and .att verify, in the layout and after push"

# An unknown manifest media type is invalid input naming it; a damaged artifact blob is exit 4.
cp -a "$WORK/art" "$WORK/odd"
schema1='{"schemaVersion":1,"name":"x","tag":"y","fsLayers":[]}'
printf '%s' "$schema1" >"$WORK/odd/blobs/sha256/$(printf '%s' "$schema1" | sha256sum | cut -d' ' -f1)"
jq --arg d "sha256:$(printf '%s' "$schema1" | sha256sum | cut -d' ' -f1)" --argjson n "${#schema1}" \
  '.manifests += [{"mediaType":"application/vnd.docker.distribution.manifest.v1+prettyjws","digest":$d,"size":$n,
    "annotations":{"org.opencontainers.image.ref.name":"old"}}]' "$WORK/art/index.json" >"$WORK/odd/index.json"
for verb in inspect digest verify; do
  expect_exit 2 $verb "oci:$WORK/odd:old"
  assert_contains "$OUTPUT" 'application/vnd.docker.distribution.manifest.v1+prettyjws' "$verb names the media type"
done
m=$(jq -r '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == "model") | .digest' "$WORK/art/index.json")
blob=$(jq -r '.layers[1].digest' "$WORK/art/blobs/sha256/${m#sha256:}")
printf 'x' >>"$WORK/art/blobs/sha256/${blob#sha256:}"
expect_exit 4 verify "oci:$WORK/art:model"
assert_contains "$OUTPUT" "FAILED $blob" "the damaged file is named"
pass "unknown manifest media type: exit 2 naming it (inspect, digest, verify); a damaged artifact blob: exit 4"
