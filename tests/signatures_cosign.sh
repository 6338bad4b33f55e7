#!/usr/bin/env bash
# cosign-compatible signatures, checked by others: keygen writes cosign's key formats;
# `openssl dgst` accepts the payload and signature we store; an independent
# implementation (tests/fixtures/cosign_fixture.py: Python cryptography + PyNaCl, from
# cosign's formats) loads/makes keys and signatures we verify and verifies ours; the
# attestation of the build's SBOM verifies both ways; a registry round trip on
# 127.0.0.1 keeps one layer per key. Tampering is tests/signatures_tamper.sh.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/registry_lib.sh"
PY=/usr/bin/python3
FIX="$REPO/tests/fixtures/cosign_fixture.py"
export COSIGN_PASSWORD=test-only-password
cd "$WORK"

make_context "$WORK/ctx"
digest=$(cd "$WORK/ctx" && "$IMGTOOL" build spec.json -o "oci:$WORK/img:v1" -q | tail -n1)
hex=${digest#sha256:}

# Keys: cosign's formats; no password source is a clear usage error, not a hang.
"$IMGTOOL" keygen --output-key-prefix a 2>/dev/null
head -1 a.key | grep -qx -- "-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----" || fail "a.key PEM type"
grep -q "prime256v1" <<<"$(openssl pkey -pubin -in a.pub -noout -text 2>/dev/null)" || fail "a.pub is not P-256 SPKI"
assert_eq "$(stat -c %a a.key)" "600" "private key mode"
$PY - a.key <<'PY' || fail "a.key envelope fields"
import base64, json, sys
d = json.loads(base64.b64decode("".join(open(sys.argv[1]).read().split("\n")[1:-2])))
assert d["kdf"]["name"] == "scrypt" and d["kdf"]["params"] == {"N": 65536, "r": 8, "p": 1}
assert len(base64.b64decode(d["kdf"]["salt"])) == 32 and d["cipher"]["name"] == "nacl/secretbox"
assert len(base64.b64decode(d["cipher"]["nonce"])) == 24
PY
rc=0; out=$(env -u COSIGN_PASSWORD "$IMGTOOL" keygen --output-key-prefix nopw </dev/null 2>&1) || rc=$?
assert_eq "$rc" "2" "keygen without a password source"
assert_contains "$out" "set COSIGN_PASSWORD" "keygen without a password source"
expect_exit 2 keygen --output-key-prefix a
pass "keygen: P-256 SPKI public key, cosign's encrypted private key (0600); no password source is exit 2"

# Sign a layout, verify it; openssl accepts the stored payload and signature.
"$IMGTOOL" sign --key a.key "oci:$WORK/img:v1" >/dev/null
"$IMGTOOL" verify --key a.pub "oci:$WORK/img:v1" >"$WORK/v.txt"
assert_contains "$(cat "$WORK/v.txt")" "verified by a.pub" "verify output"
out=$("$IMGTOOL" verify --json --key a.pub "oci:$WORK/img:v1")
assert_eq "$(jq -r '.ok, .signatures.verified, .signatures.results[0].ok, .signatures.keys[0]' <<<"$out" | tr '\n' ' ')" \
  "true true true a.pub " "verify --json"
sig_manifest=$(jq -r --arg t "sha256-$hex.sig" '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == $t) | .digest' img/index.json)
layer=$(jq -c '.layers[0]' "img/blobs/sha256/${sig_manifest#sha256:}")
assert_eq "$(jq -r .mediaType <<<"$layer")" "application/vnd.dev.cosign.simplesigning.v1+json" "layer media type"
payload="img/blobs/sha256/$(jq -r .digest <<<"$layer" | cut -d: -f2)"
jq -r '.annotations["dev.cosignproject.cosign/signature"]' <<<"$layer" | base64 -d >sig.der
grep -qx "Verified OK" <<<"$(openssl dgst -sha256 -verify a.pub -signature sig.der "$payload")" || fail "openssl rejects"
want=$(printf '{"critical":{"identity":{"docker-reference":"img"},"image":{"docker-manifest-digest":"%s"},"type":"cosign container image signature"},"optional":null}' "$digest")
assert_eq "$(cat "$payload")" "$want" "payload bytes"
pass "sign oci: layout; verify accepts; openssl dgst -verify accepts the payload + signature; payload is cosign's"

# The independent implementation, both directions.
$PY "$FIX" verify img v1 a.pub >/dev/null || fail "fixture rejects imgtool's signature"
$PY "$FIX" genkey py
cp -r img img2
"$IMGTOOL" sign --key py.key "oci:$WORK/img2:v1" >/dev/null
$PY "$FIX" verify img2 v1 py.pub >/dev/null || fail "fixture rejects a signature with its own key"
$PY "$FIX" genkey pyold --pem-type "ENCRYPTED COSIGN PRIVATE KEY"
"$IMGTOOL" sign --key pyold.key "oci:$WORK/img2:v1" >/dev/null
"$IMGTOOL" verify --key pyold.pub "oci:$WORK/img2:v1" >/dev/null
$PY "$FIX" genkey pysigner
cp -r "$WORK/img" "$WORK/img3"
$PY "$FIX" sign img3 v1 pysigner.key "example/img"
out=$("$IMGTOOL" verify --json --key pysigner.pub "oci:$WORK/img3:v1")
assert_eq "$(jq -r '[.signatures.results[] | .ok] | join(",")' <<<"$out")" "false,true" "fixture-made signature"
pass "fixture: verifies ours; its keys (both PEM types) load in imgtool sign; its signatures verify in imgtool"

# Signing again with the same key adds nothing; another key appends; a trust folder.
grep -q "^Already signed" <<<"$("$IMGTOOL" sign --key a.key "oci:$WORK/img:v1")" || fail "second sign"
layers() { jq -r --arg t "sha256-$hex.sig" '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == $t) | .digest' "$1/index.json" |
  cut -d: -f2 | xargs -I{} jq '.layers | length' "$1/blobs/sha256/{}"; }
assert_eq "$(layers img)" "1" "layers after signing twice"
"$IMGTOOL" keygen --output-key-prefix b 2>/dev/null
"$IMGTOOL" sign --key b.key -a ci=yes "oci:$WORK/img:v1" >/dev/null
assert_eq "$(layers img)" "2" "layers after a second key"
mkdir trusted && cp b.pub trusted/
out=$("$IMGTOOL" verify --json --trusted-keys trusted "oci:$WORK/img:v1")
assert_eq "$(jq -r '.signatures.keys[0]' <<<"$out")" "trusted/b.pub" "trust folder key"
"$IMGTOOL" verify --trusted-keys "$REPO/signatures/trusted" --key a.pub "oci:$WORK/img:v1" >/dev/null
pass "same key twice keeps one layer; a second key appends; --trusted-keys DIR"

# Attest the SBOM the build wrote; verify it; the fixture verifies the DSSE envelope.
"$IMGTOOL" attest --key a.key --predicate "$WORK/img.spdx.json" --type spdxjson "oci:$WORK/img:v1" >/dev/null
grep -q "^Already" <<<"$("$IMGTOOL" attest --key a.key --predicate "$WORK/img.spdx.json" "oci:$WORK/img:v1")" ||
  fail "second attest"
grep -q "^ATTESTATION .*verified" <<<"$("$IMGTOOL" verify --key a.pub --attestation --type spdxjson "oci:$WORK/img:v1")" ||
  fail "attestation"
$PY "$FIX" verify-att img v1 a.pub >/dev/null || fail "fixture rejects the attestation"
expect_exit 5 verify --key b.pub --attestation "oci:$WORK/img:v1"
assert_contains "$OUTPUT" "attestation check: signature does not verify with any trusted key" "attestation by b"
pass "attest: in-toto SPDX statement in DSSE at .att verifies (imgtool, fixture); another key is denied"

# Registry: sign and verify there; one layer per key. --no-artifacts pushes the image alone.
start_registry plain
R="docker://$REG_HOST/team/img"
"$IMGTOOL" push -q --no-artifacts "oci:$WORK/img:v1" "$R:v1" >/dev/null
expect_exit 5 verify --key a.pub "$R:v1"
assert_contains "$OUTPUT" "no signatures for $digest" "unsigned pushed image"
"$IMGTOOL" sign --key a.key "$R:v1" >/dev/null
grep -q "^Already" <<<"$("$IMGTOOL" sign --key a.key "$R:v1")" || fail "second registry sign"
"$IMGTOOL" verify --key a.pub "$R:v1" >/dev/null
"$IMGTOOL" pull -q "$R:sha256-$hex.sig" "oci:$WORK/rsig:s" >/dev/null
assert_eq "$(jq '.layers | length' "rsig/blobs/sha256/$(jq -r '.manifests[0].digest' rsig/index.json | cut -d: -f2)")" "1" \
  "registry layers after signing twice"
"$IMGTOOL" sign --key b.key "$R:v1" >/dev/null
"$IMGTOOL" pull -q "$R:sha256-$hex.sig" "oci:$WORK/rsig2:s" >/dev/null
m=rsig2/blobs/sha256/$(jq -r '.manifests[0].digest' rsig2/index.json | cut -d: -f2)
assert_eq "$(jq '.layers | length' "$m")" "2" "registry layers after a second key"
want=$(printf '{"critical":{"identity":{"docker-reference":"%s/team/img"},"image":{"docker-manifest-digest":"%s"},"type":"cosign container image signature"},"optional":null}' "$REG_HOST" "$digest")
assert_eq "$(cat "rsig2/blobs/sha256/$(jq -r '.layers[0].digest' "$m" | cut -d: -f2)")" "$want" "registry payload"
"$IMGTOOL" verify --key b.pub "$R@$digest" >/dev/null
grep -qx "sha256-$hex.sig" <<<"$("$IMGTOOL" tags "$R")" || fail "tags lacks the signature tag"
expect_exit 5 verify --key py.pub "$R:v1"
pass "registry: sign + verify docker://; same key twice keeps one layer; a second key appends; identity HOST/REPO"

# A plain push carries the signatures, the attestation and the SBOM (as cosign copy
# does): verify --key and verify --attestation pass against the registry, no further step.
C="docker://$REG_HOST/team/carried"
out=$("$IMGTOOL" push --json "oci:$WORK/img:v1" "$C:v1")
assert_eq "$(jq -r '.artifacts | join(",")' <<<"$out")" "sha256-$hex.sig,sha256-$hex.att,sha256-$hex.sbom" "artifacts pushed"
"$IMGTOOL" verify --key a.pub "$C:v1" >/dev/null || fail "signature by a did not travel"
"$IMGTOOL" verify --key b.pub "$C:v1" >/dev/null || fail "signature by b did not travel"
grep -q "^ATTESTATION .*verified" <<<"$("$IMGTOOL" verify --key a.pub --attestation --type spdxjson "$C:v1")" ||
  fail "the attestation did not travel"
for t in sig att sbom; do grep -qx "sha256-$hex.$t" <<<"$("$IMGTOOL" tags "$C")" || fail "no .$t tag after push"; done
"$IMGTOOL" pull -q "$C:v1" "oci:$WORK/back:v1" >/dev/null
"$IMGTOOL" verify --key a.pub --attestation "oci:$WORK/back:v1" >/dev/null || fail "pull did not carry the attestation"
pass "push carries .sig, .att, .sbom; verify --key and --attestation pass on the registry and after pull"
