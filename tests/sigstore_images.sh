#!/usr/bin/env bash
# Keyless image signatures end to end, on a Sigstore instance the test makes
# (tests/sigstore/instance.py: CA, CT log, Rekor, TSA, trusted_root.json): an image signed
# by a CI identity in both of cosign's storage formats (legacy sha256-<hex>.sig layers
# with certificate annotations; a Sigstore bundle artifact in the referrers tag schema,
# tests/sigstore/attach.py), verified by `imgtool verify --certificate-identity` in a
# layout and on docker-registry; denials by another identity, issuer, CA, and an expired
# certificate without a valid timestamp, each naming the reason; identity regexps in Go's
# syntax (a catastrophic pattern against a 3,000-character subject, patterns Go refuses);
# attestations; policy check and the admission webhook admitting and denying by identity.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/registry_lib.sh"
IMGTOOL=$(realpath "$IMGTOOL")
INSTANCE="python3 $REPO/tests/sigstore/instance.py"
ATTACH="python3 $REPO/tests/sigstore/attach.py"
ID=https://github.com/imgtool-test/app/.github/workflows/release.yml@refs/tags/v1
ISSUER=https://token.actions.example.test
OTHER_ID=https://github.com/imgtool-test/fork/.github/workflows/release.yml@refs/tags/v1
cd "$WORK"

$INSTANCE init inst >/dev/null
$INSTANCE init other --name other >/dev/null
ROOT=$WORK/inst/trusted_root.json
make_context ctx
"$IMGTOOL" build ctx/spec.json -o "oci:$WORK/app:v1" -q >/dev/null
D=$("$IMGTOOL" digest "oci:$WORK/app:v1")
cp -r app app_legacy
cp -r app app_bundle
cp -r app app_others

# Legacy: cosign's simple-signing payload, signed keyless, stored as an annotated layer.
$ATTACH payload app "$D" >payload.json
$INSTANCE sign inst --identity "$ID" --issuer "$ISSUER" --artifact payload.json --out legacy.json --tsa \
  --legacy-dir legacy >/dev/null
$ATTACH legacy app_legacy "$D" payload.json legacy
# Bundle: an in-toto statement about the image (cosign's signature predicate) in DSSE,
# as a referrer of the image.
$INSTANCE sign inst --identity "$ID" --issuer "$ISSUER" --digest "$D" --dsse --out sig_bundle.json >/dev/null
$ATTACH bundle app_bundle "$D" sig_bundle.json
# Attestation: a provenance statement about the image.
$INSTANCE sign inst --identity "$ID" --issuer "$ISSUER" --digest "$D" --dsse \
  --predicate-type https://slsa.dev/provenance/v1 --out prov_bundle.json >/dev/null
$ATTACH bundle app_bundle "$D" prov_bundle.json
pass "an image signed keyless by $ID: legacy .sig layer, signature bundle and provenance bundle as referrers"

keyless() {  # EXIT REF [ID [ISSUER [ROOT]]] [extra flags...]: imgtool verify keyless
  local want=$1 ref=$2 id=${3:-$ID} issuer=${4:-$ISSUER} root=${5:-$ROOT}
  shift 5 2>/dev/null || shift $#
  expect_exit "$want" verify --tls-verify=false --certificate-identity "$id" --certificate-oidc-issuer "$issuer" \
    --trusted-root "$root" "$@" "$ref"
}
keyless 0 "oci:$WORK/app_legacy:v1"
assert_contains "$OUTPUT" "SIGNATURE" "legacy verified"
keyless 0 "oci:$WORK/app_bundle:v1"
pass "layout: both storage formats verify by identity and issuer"
expect_exit 0 verify --certificate-identity-regexp '^https://github\.com/imgtool-test/app/' \
  --certificate-oidc-issuer-regexp '^https://token\.actions\.' --trusted-root "$ROOT" "oci:$WORK/app_legacy:v1"
pass "layout: regexp identity and issuer"

# Identity regexps are Go's (RE2, as cosign's): a catastrophic pattern against a subject of
# 3,000 characters (std::regex backtracked for minutes) is answered at once, under a
# timeout that catches a hang; a pattern Go refuses is exit 2 naming the flag, before the
# image is read.
LONG_ID="https://github.com/$(printf '%3000s' '' | tr ' ' a)"
$INSTANCE sign inst --identity "$LONG_ID" --issuer "$ISSUER" --artifact payload.json --out long.json \
  --legacy-dir long >/dev/null
cp -r app app_long
$ATTACH legacy app_long "$D" payload.json long
by_regexp() {  # WANT-EXIT PATTERN: verify app_long by identity regexp, under `timeout 60`
  local got=0
  OUTPUT=$(timeout 60 "$IMGTOOL" verify --certificate-identity-regexp "$2" --certificate-oidc-issuer "$ISSUER" \
    --trusted-root "$ROOT" "oci:$WORK/app_long:v1" 2>&1) || got=$?
  [ "$got" = "$1" ] || fail "verify by regexp '$2' exited $got, want $1 (124: hung): ${OUTPUT:0:300}"
}
by_regexp 5 '^https://github\.com/(a+)+!$'
assert_contains "$OUTPUT" "want a match of regexp '^https://github\.com/(a+)+!\$'" "catastrophic pattern, no match"
by_regexp 0 '^https://github\.com/(a+)+$'
by_regexp 2 '^https://github\.com/(?=a)'
assert_contains "$OUTPUT" "--certificate-identity-regexp '^https://github\.com/(?=a)': not a valid Go regexp" "lookahead"
expect_exit 2 verify --certificate-identity "$ID" --certificate-oidc-issuer-regexp 'a\Cb' "oci:$WORK/nothing-here:v1"
assert_contains "$OUTPUT" "--certificate-oidc-issuer-regexp 'a\Cb': not a valid Go regexp (RE2 syntax): invalid escape" "\\C"
pass "identity regexps: (a+)+ against a 3,000-character subject answered both ways; patterns Go refuses are exit 2"

# Denials, each naming its reason.
for dir in app_legacy app_bundle; do
  keyless 5 "oci:$WORK/$dir:v1" "$OTHER_ID"
  assert_contains "$OUTPUT" "certificate subject is '$ID', want '$OTHER_ID'" "$dir: another identity"
  keyless 5 "oci:$WORK/$dir:v1" "$ID" https://accounts.example.test
  assert_contains "$OUTPUT" "OIDC issuer is '$ISSUER'" "$dir: another issuer"
  keyless 5 "oci:$WORK/$dir:v1" "$ID" "$ISSUER" "$WORK/other/trusted_root.json"
  assert_contains "$OUTPUT" "the trusted root does not name" "$dir: another instance's root"
done
keyless 5 "oci:$WORK/app:v1"
assert_contains "$OUTPUT" "no keyless signature found" "unsigned"
pass "denied, naming why: another identity, another issuer, another trusted root, no signature"

# Another CA: the same log, CT log and TSA trusted, but the Fulcio CA is the other instance's.
jq --slurpfile o other/trusted_root.json '.certificateAuthorities = $o[0].certificateAuthorities' "$ROOT" >other_ca.json
keyless 5 "oci:$WORK/app_legacy:v1" "$ID" "$ISSUER" "$WORK/other_ca.json"
assert_contains "$OUTPUT" "does not chain to a certificate authority of the trusted root" "another CA"
# Expired: a ten-minute certificate logged an hour after it was issued, no timestamp.
past=$(($(date +%s) - 7200))
$INSTANCE sign inst --identity "$ID" --issuer "$ISSUER" --artifact payload.json --time "$past" \
  --log-time $((past + 3600)) --out expired.json --legacy-dir expired >/dev/null
$ATTACH legacy app_others "$D" payload.json expired
keyless 5 "oci:$WORK/app_others:v1"
assert_contains "$OUTPUT" "certificate has expired" "expired certificate"
# ... and a valid timestamp inside its validity does not rescue a log time outside it.
$INSTANCE sign inst --identity "$ID" --issuer "$ISSUER" --artifact payload.json --time "$past" \
  --log-time $((past + 3600)) --tsa --tsa-time $((past + 5)) --out expired2.json --legacy-dir expired2 >/dev/null
rm -rf app_others && cp -r app app_others
$ATTACH legacy app_others "$D" payload.json expired2
keyless 5 "oci:$WORK/app_others:v1"
assert_contains "$OUTPUT" "certificate has expired" "expired at the log time, timestamp inside"
# A signature by another identity beside a good one: the good one verifies.
$INSTANCE sign inst --identity "$OTHER_ID" --issuer "$ISSUER" --artifact payload.json --out fork.json \
  --legacy-dir fork >/dev/null
$ATTACH legacy app_legacy "$D" payload.json fork
keyless 0 "oci:$WORK/app_legacy:v1"
pass "denied: another CA, a certificate expired at the proven time; another signer's layer beside does not hide a good one"

# Attestations: the provenance bundle by type; the signature bundle is not an attestation.
keyless 0 "oci:$WORK/app_bundle:v1" "$ID" "$ISSUER" "$ROOT" --attestation --type https://slsa.dev/provenance/v1
keyless 5 "oci:$WORK/app_bundle:v1" "$ID" "$ISSUER" "$ROOT" --attestation --type https://spdx.dev/Document
assert_contains "$OUTPUT" "predicateType is" "attestation of another type"
pass "verify --attestation: keyless provenance verifies by type, another type is denied"

# ---- the registry: push both, verify from there ----
start_registry plain
R=$REG_HOST/ml
"$IMGTOOL" push -q --tls-verify=false "oci:$WORK/app_legacy:v1" "docker://$R/legacy:v1" >/dev/null
"$IMGTOOL" push -q --tls-verify=false "oci:$WORK/app_bundle:v1" "docker://$R/bundle:v1" >/dev/null
# docker-registry 2.8 has no referrers API: the push carries the tag schema's index with
# the bundles, as it carries .sig and .att.
assert_eq "$("$IMGTOOL" tags --tls-verify=false "docker://$R/bundle" | grep -c "^sha256-${D#sha256:}\$")" 1 \
  "the referrers tag pushed"
keyless 0 "docker://$R/legacy:v1"
keyless 0 "docker://$R/bundle:v1"
keyless 5 "docker://$R/bundle:v1" "$OTHER_ID"
assert_contains "$OUTPUT" "certificate subject is" "registry: another identity"
pass "docker-registry: both formats verify by identity, another identity is denied"

# ---- policy check and the admission webhook, by identity ----
cat >policy.json <<JSON
{"policyVersion": 1, "rules": {"digestPinned": {},
  "signedBy": {"identities": [{"issuer": "$ISSUER", "subjectRegExp": "^https://github\\\\.com/imgtool-test/app/.*$"}],
               "trustedRoot": "inst/trusted_root.json"}}}
JSON
expect_exit 0 policy check --tls-verify=false --policy policy.json "docker://$R/bundle@$D"
assert_contains "$OUTPUT" "verified keyless" "policy check by identity"
sed 's|imgtool-test/app/|imgtool-test/fork/|' policy.json >fork_policy.json
expect_exit 5 policy check --tls-verify=false --policy fork_policy.json "docker://$R/bundle@$D"
assert_contains "$OUTPUT" "certificate subject is '$ID'" "policy check: another identity"
jq '.rules.signedBy.identities[0].subjectRegExp = "^https://github\\.com/(?P<org>[^/]+"' policy.json >bad_policy.json
expect_exit 2 policy check --tls-verify=false --policy bad_policy.json "docker://$R/bundle@$D"
assert_contains "$OUTPUT" "\$.rules.signedBy.identities[0].subjectRegExp: not a valid Go regexp (RE2 syntax): missing )" \
  "policy: a bad regexp names its path"
pass "policy check: signedBy identities pass for the signer, fail for another; a bad regexp fails the policy"

self_signed "$WORK/tls"
serve() {  # POLICY: starts the webhook, sets URL
  local port
  port=$(free_port)
  URL="https://127.0.0.1:$port"
  "$IMGTOOL" admission serve --policy "$1" --tls-cert "$WORK/tls/ca.crt" --tls-key "$WORK/tls/ca.key" \
    --listen "127.0.0.1:$port" --tls-verify=false --deadline 5 >"$WORK/server-$port.log" 2>&1 &
  REGISTRY_PIDS+=($!)
  wait_for_port "$URL/healthz" "$!" "$WORK/server-$port.log"
}
review() {  # UID IMAGE: sets BODY
  sed -e "s|__UID__|$1|g" -e "s|__IMAGE__|$2|g" -e "s|__INIT_IMAGE__|$2|g" "$REPO/tests/fixtures/admission/pod.json" \
    >request.json
  BODY=$(curl -sS --max-time 20 --cacert "$WORK/tls/ca.crt" -H 'Content-Type: application/json' \
    --data-binary @request.json "$URL/validate")
}
serve policy.json
review u-ok "$R/bundle@$D"
assert_eq "$(jq -c '[.response.uid, .response.allowed]' <<<"$BODY")" '["u-ok",true]' "webhook admits: $BODY"
review u-legacy "$R/legacy@$D"
assert_eq "$(jq -r .response.allowed <<<"$BODY")" true "webhook admits the legacy format: $BODY"
serve fork_policy.json
review u-fork "$R/bundle@$D"
assert_eq "$(jq -c '[.response.uid, .response.allowed, .response.status.code]' <<<"$BODY")" '["u-fork",false,403]' \
  "webhook denies: $BODY"
assert_contains "$(jq -r .response.status.message <<<"$BODY")" "signedBy" "webhook names the rule"
assert_contains "$(jq -r .response.status.message <<<"$BODY")" "certificate subject is '$ID'" "webhook names why"
pass "admission webhook: admits by identity, denies another identity with the rule and the reason"
