#!/usr/bin/env bash
# Tampering with a signed image is denied (exit 5), each cause with its own message:
# an altered payload, an altered signature, a key we do not trust, a tag moved to
# another image after signing (alone, and with the old signature copied over), and
# removed signatures (an empty signature image, no signature tag). Distinct from usage
# errors (2) and transport failures (6). Offline: layouts only, plus 127.0.0.1:1.
source "$(dirname "$0")/lib.sh"
export COSIGN_PASSWORD=test-only-password
cd "$WORK"

make_context "$WORK/ctx"
build() { (cd "$WORK/ctx" && "$IMGTOOL" build spec.json -o "$1" -q | tail -n1); }
d1=$(build "oci:$WORK/img:v1")
"$IMGTOOL" keygen --output-key-prefix good 2>/dev/null
"$IMGTOOL" keygen --output-key-prefix other 2>/dev/null
"$IMGTOOL" sign --key good.key "oci:$WORK/img:v1" >/dev/null
"$IMGTOOL" verify --key good.pub "oci:$WORK/img:v1" >/dev/null
cp -r img pristine
reset() { rm -rf img && cp -r pristine img; }

tagged() {  # DIR TAG -> digest
  jq -r --arg t "$2" '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == $t) | .digest' "$1/index.json"
}
blob() { echo "img/blobs/sha256/${1#sha256:}"; }
# Rewrites the manifest at TAG with a jq filter, as an attacker with write access would:
# a new blob, and the tag pointed at it.
rewrite() {  # TAG FILTER
  local old new size
  old=$(tagged img "$1")
  jq -c "$2" "$(blob "$old")" >new.json
  new=sha256:$(sha256sum new.json | cut -d' ' -f1)
  size=$(stat -c %s new.json)
  cp new.json "$(blob "$new")"
  jq --arg t "$1" --arg d "$new" --argjson s "$size" \
    '(.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == $t)) |= (.digest = $d | .size = $s)' \
    img/index.json >i.json && mv i.json img/index.json
}
sigtag="sha256-${d1#sha256:}.sig"

reset
p=$(jq -r '.layers[0].digest' "$(blob "$(tagged img "$sigtag")")")
chmod u+w "$(blob "$p")"
sed -i 's/"docker-reference":"img"/"docker-reference":"evil"/' "$(blob "$p")"
expect_exit 5 verify --key good.pub "oci:$WORK/img:v1"
assert_contains "$OUTPUT" "payload altered after signing" "changed payload"
pass "changed payload: denied, 'payload altered after signing'"

reset
rewrite "$sigtag" '.layers[0].annotations["dev.cosignproject.cosign/signature"] |= .[0:40] + "AAAA" + .[44:]'
expect_exit 5 verify --key good.pub "oci:$WORK/img:v1"
assert_contains "$OUTPUT" "signature" "changed signature"
sig_msg=$OUTPUT
reset
rewrite "$sigtag" '.layers[0].annotations["dev.cosignproject.cosign/signature"] = "MEUCIQ=="'
expect_exit 5 verify --key good.pub "oci:$WORK/img:v1"
assert_contains "$OUTPUT" "signature malformed: the annotation is not a base64 DER ECDSA signature" "changed signature"
pass "changed signature: denied ('signature malformed', or no trusted key verifies a well-formed forgery)"

reset
expect_exit 5 verify --key other.pub "oci:$WORK/img:v1"
assert_contains "$OUTPUT" "signature does not verify with any trusted key (tried: other.pub)" "wrong key"
pass "wrong key: denied, 'signature does not verify with any trusted key'"

reset
printf 'lr=0.1\n' >"$WORK/ctx/config.txt"
d2=$(build "oci:$WORK/img:v2")
jq --arg d "$d2" '(.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == "v1")) |= (.digest = $d)' \
  img/index.json >i.json && mv i.json img/index.json
expect_exit 5 verify --key good.pub "oci:$WORK/img:v1"
assert_contains "$OUTPUT" "no signatures for $d2" "moved tag"
# ... and with the old image's signature image copied to the new image's tag.
sig=$(tagged img "$sigtag")
jq --arg d "$sig" --arg t "sha256-${d2#sha256:}.sig" \
  '.manifests += [(.manifests[] | select(.digest == $d) | .annotations["org.opencontainers.image.ref.name"] = $t)]' \
  img/index.json >i.json && mv i.json img/index.json
expect_exit 5 verify --key good.pub "oci:$WORK/img:v1"
assert_contains "$OUTPUT" "payload signs $d1, not this image $d2" "moved tag with the signature copied"
pass "moved tag: denied ('no signatures for' the new digest; a copied signature 'signs' the old one)"

reset
rewrite "$sigtag" '.layers = []'
expect_exit 5 verify --key good.pub "oci:$WORK/img:v1"
assert_contains "$OUTPUT" "no signatures for $d1 ($sigtag is missing or empty)" "empty signature image"
reset
jq --arg t "$sigtag" 'del(.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == $t))' \
  img/index.json >i.json && mv i.json img/index.json
expect_exit 5 verify --key good.pub "oci:$WORK/img:v1"
assert_contains "$OUTPUT" "no signatures for $d1" "no signature tag"
pass "removed signatures: denied (empty signature image; no signature tag)"

reset
COSIGN_PASSWORD=wrong expect_exit 5 sign --key good.key "oci:$WORK/img:v1"
assert_contains "$OUTPUT" "good.key: wrong password" "wrong password"
expect_exit 2 verify --key good.key "oci:$WORK/img:v1"
assert_contains "$OUTPUT" "want 'PUBLIC KEY'" "private key given as a trusted key"
expect_exit 2 sign --key good.key -a novalue "oci:$WORK/img:v1"
expect_exit 6 verify --key good.pub "docker://127.0.0.1:1/none/img:v1"
"$IMGTOOL" verify --key good.pub "oci:$WORK/img:v1" >/dev/null
pass "wrong password is denied (5); usage errors are 2; an unreachable registry is 6; the pristine image verifies"
