#!/usr/bin/env bash
# The attestations rule (policies/rules/attestations.md) end to end on a local
# docker-registry: small images, each attested with hand-written SLSA provenance
# (builder X, builder Y, signed by an untrusted key, a dependency without a digest) and
# the SPDX SBOM `imgtool build` wrote (as is, or with a denied openssl added); a policy
# that requires provenance from X signed by the example key and no openssl below
# 3.0.11-1 admits the good image and denies each other one naming the requirement and
# why, the same in `imgtool policy check`, `imgtool verify --attestation --policy` and
# the admission webhook's AdmissionReview message. Bad policies are exit 2 naming the
# JSON path. The registry and the server are stopped by PID on exit.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/registry_lib.sh"
IMGTOOL=$(realpath "$IMGTOOL")
FIX="$REPO/tests/fixtures/admission"
export COSIGN_PASSWORD=imgtool-example-only
TRUSTED_KEY="$REPO/signatures/trusted/example.key"
TRUSTED_PUB="$REPO/signatures/trusted/example.pub"
SLSA=https://slsa.dev/provenance/v1
BUILDER_X=https://ci.example/builder
BUILDER_Y=https://ci.other/builder

start_registry plain
R="$REG_HOST/team"
TLS=(--tls-verify=false)

# ---- images: one build, each scenario a copy with its own label (its own digest) ----
make_context "$WORK/ctx"
"$IMGTOOL" build "$WORK/ctx/spec.json" -o "oci:$WORK/base:v1" -q >/dev/null
SBOM="$WORK/base.spdx.json"
[ -s "$SBOM" ] || fail "build wrote no SBOM"
# A package the build's SBOM does list (the image itself), for the real-SBOM denial.
LISTED=$(jq -r '.packages[0].name' "$SBOM")
jq '.packages += [{"SPDXID": "SPDXRef-openssl", "name": "openssl", "versionInfo": "3.0.2-0ubuntu1"}]' "$SBOM" \
  >"$WORK/sbom-openssl.json"
"$IMGTOOL" keygen --output-key-prefix "$WORK/rogue" 2>/dev/null

provenance() {  # BUILDER [DIGEST-OF-DEP-2|none]: a SLSA v1 predicate
  local dep2='{"uri": "git+https://git.example/lib", "digest": {"sha256": "'"$(printf 'b%.0s' {1..64})"'"}}'
  [ "${2:-}" = none ] && dep2='{"uri": "https://files.example/blob.tar"}'
  cat <<JSON
{"buildDefinition": {"buildType": "https://imgtool.example/build/v1", "externalParameters": {"spec": "spec.json"},
  "resolvedDependencies": [{"uri": "git+https://git.example/app", "digest": {"sha256": "$(printf 'a%.0s' {1..64})"}}, $dep2]},
 "runDetails": {"builder": {"id": "$1"}, "metadata": {"invocationId": "run-1"}}}
JSON
}
provenance "$BUILDER_X" >"$WORK/prov-x.json"
provenance "$BUILDER_Y" >"$WORK/prov-y.json"
provenance "$BUILDER_X" none >"$WORK/prov-nodigest.json"

attest() {  # REF KEY TYPE PREDICATE
  "$IMGTOOL" attest "${TLS[@]}" --key "$2" --type "$3" --predicate "$4" "$1" >/dev/null
}
declare -A REF
# scenario: provenance predicate : its key : SBOM predicate
for s in good:prov-x:trusted:base noprov::trusted:base provy:prov-y:trusted:base rogue:prov-x:rogue:base \
  badsbom:prov-x:trusted:openssl nodigest:prov-nodigest:trusted:base; do
  IFS=: read -r name prov key sbom <<<"$s"
  cp -r "$WORK/base" "$WORK/$name"
  d=$(edit_image "$WORK/$name" v1 ".config.Labels.scenario = \"$name\"" '.')
  "$IMGTOOL" push -q "${TLS[@]}" "oci:$WORK/$name@$d" "docker://$R/$name:v1" >/dev/null
  REF[$name]="docker://$R/$name@$d"
  k=$TRUSTED_KEY && [ "$key" = rogue ] && k="$WORK/rogue.key"
  [ -z "$prov" ] || attest "${REF[$name]}" "$k" "$SLSA" "$WORK/$prov.json"
  sp="$SBOM" && [ "$sbom" = openssl ] && sp="$WORK/sbom-openssl.json"
  attest "${REF[$name]}" "$TRUSTED_KEY" spdxjson "$sp"
done
pass "registry $REG_HOST: 6 images attested (provenance from X, none, from Y, by an untrusted key, an SBOM with openssl, a dependency without a digest)"

# ---- the policy ----
cat >"$WORK/policy.json" <<JSON
{"policyVersion": 1, "rules": {"attestations": [
  {"name": "built-by-ci", "predicateType": "$SLSA", "signedBy": {"keys": ["$TRUSTED_PUB"]},
   "conditions": [
     {"pointer": "/runDetails/builder/id", "equals": "$BUILDER_X"},
     {"pointer": "/buildDefinition/buildType", "matches": "^https://imgtool\\\\.example/"},
     {"pointer": "/buildDefinition/resolvedDependencies/*/digest/sha256", "present": true}]},
  {"name": "sbom", "predicateType": "spdxjson", "signedBy": {"keys": ["$TRUSTED_PUB"]},
   "conditions": [
     {"pointer": "/packages", "none": [{"pointer": "/name", "equals": "openssl"},
                                      {"pointer": "/versionInfo", "versionBelow": "3.0.11-1"}]}]}]}}
JSON
jq -e . "$WORK/policy.json" >/dev/null || fail "the test's policy is not JSON"

NO_PROV="built-by-ci: no verified attestation of type $SLSA"
WANT_X="built-by-ci: /runDetails/builder/id is \"$BUILDER_Y\", wants \"$BUILDER_X\""
UNTRUSTED="signature does not verify with any trusted key"
OPENSSL='sbom: /packages/1/name is "openssl" and /packages/1/versionInfo "3.0.2-0ubuntu1" is below "3.0.11-1"'
NODIGEST="built-by-ci: /buildDefinition/resolvedDependencies/1/digest/sha256 is absent, wants it present"

# ---- imgtool policy check ----
check() {  # WANT-EXIT NAME
  expect_exit "$1" policy check "${TLS[@]}" --policy "$WORK/policy.json" "${REF[$2]}"
}
check 0 good
assert_contains "$OUTPUT" "attestations  pass    built-by-ci: attestation signed by example.pub: /runDetails/builder/id is \"$BUILDER_X\"" "good"
assert_contains "$OUTPUT" "sbom: attestation signed by example.pub: no element of /packages (1) matches" "good sbom"
check 5 noprov
assert_contains "$OUTPUT" "$NO_PROV" "no provenance"
check 5 provy
assert_contains "$OUTPUT" "$WANT_X" "builder Y"
check 5 rogue
assert_contains "$OUTPUT" "$NO_PROV" "untrusted key"
assert_contains "$OUTPUT" "$UNTRUSTED" "untrusted key"
check 5 badsbom
assert_contains "$OUTPUT" "$OPENSSL" "openssl"
check 5 nodigest
assert_contains "$OUTPUT" "$NODIGEST" "dependency without a digest"
# The rows that pass stay quiet about the requirement that did.
[[ "$OUTPUT" != *"sbom:"* ]] || fail "nodigest: the passing sbom requirement is named among the failures: $OUTPUT"
out=$("$IMGTOOL" policy check "${TLS[@]}" --json --policy "$WORK/policy.json" "${REF[provy]}" || true)
assert_eq "$(jq -r '.images[0].rules[0] | [.rule, .pass] | join(" ")' <<<"$out")" "attestations false" "--json"
pass "policy check: provenance from X admitted; no provenance, builder Y, an untrusted key, an SBOM with openssl, a dependency without a digest denied, each naming the requirement"

# The build's own SBOM, as written: a package it lists is found; one it does not passes.
sbom_policy() {  # NAME PACKAGE
  jq --arg p "$2" '.rules.attestations = [.rules.attestations[1] |
    .conditions = [{"pointer": "/packages", "none": [{"pointer": "/name", "equals": $p}]}]]' \
    "$WORK/policy.json" >"$WORK/$1.json"
}
sbom_policy listed "$LISTED"
sbom_policy unlisted "no-such-package"
expect_exit 5 policy check "${TLS[@]}" --policy "$WORK/listed.json" "${REF[good]}"
assert_contains "$OUTPUT" "sbom: /packages/0/name is \"$LISTED\" (no element of /packages may match)" "listed package"
expect_exit 0 policy check "${TLS[@]}" --policy "$WORK/unlisted.json" "${REF[good]}"
pass "the build's SPDX SBOM: a package it lists ('$LISTED') is denied, one it does not list passes"

# ---- imgtool verify --attestation --policy: the same evaluation, one line per requirement ----
expect_exit 0 verify "${TLS[@]}" --attestation --policy "$WORK/policy.json" "${REF[good]}"
assert_contains "$OUTPUT" "ATTESTATION built-by-ci: pass: attestation signed by example.pub" "verify good"
assert_contains "$OUTPUT" "ATTESTATION sbom: pass: " "verify good sbom"
for s in noprov:"$NO_PROV" provy:"$WANT_X" rogue:"$UNTRUSTED" badsbom:"$OPENSSL" nodigest:"$NODIGEST"; do
  name=${s%%:*} want=${s#*:}
  expect_exit 5 verify "${TLS[@]}" --attestation --policy "$WORK/policy.json" "${REF[$name]}"
  assert_contains "$OUTPUT" "${want#*: }" "verify $name"
  assert_contains "$OUTPUT" "DENIED" "verify $name"
done
out=$("$IMGTOOL" verify "${TLS[@]}" --json --attestation --policy "$WORK/policy.json" "${REF[badsbom]}" || true)
assert_eq "$(jq -c '[.attestationPolicy.requirements[] | [.requirement, .pass]]' <<<"$out")" \
  '[["built-by-ci",true],["sbom",false]]' "verify --json"
expect_exit 2 verify "${TLS[@]}" --policy "$WORK/policy.json" "${REF[good]}"
assert_contains "$OUTPUT" "--policy needs --attestation" "--policy alone"
expect_exit 2 verify "${TLS[@]}" --attestation --key "$TRUSTED_PUB" --policy "$WORK/policy.json" "${REF[good]}"
pass "verify --attestation --policy: the same verdicts, one line per requirement, exit 5 when denied"

# ---- bad policies: exit 2 naming the JSON path ----
bad() {  # JQ-FILTER EXPECTED-TEXT
  jq "$1" "$WORK/policy.json" >"$WORK/bad.json"
  expect_exit 2 policy check "${TLS[@]}" --policy "$WORK/bad.json" "${REF[good]}"
  assert_contains "$OUTPUT" "$2" "bad policy $1"
}
bad '.rules.attestations[0].conditions[0].greaterThan = 3' '$.rules.attestations[0].conditions[0].greaterThan: unknown field or operator'
bad '.rules.attestations[0].conditions[0].present = true' '$.rules.attestations[0].conditions[0]: two operators'
bad '.rules.attestations[0].colour = "red"' '$.rules.attestations[0].colour: unknown field'
bad '.rules.attestations[0].conditions[1].matches = "(a"' '$.rules.attestations[0].conditions[1].matches: '
bad '.rules.attestations[1].conditions[0].none[1].versionBelow = "x1"' 'none[1].versionBelow: not a Debian version'
bad 'del(.rules.attestations[0].signedBy)' '$.rules.attestations[0].signedBy: required'
bad '.rules.attestations[0].conditions[0].pointer = "runDetails"' "a JSON pointer starts with '/'"
pass "bad policies (unknown operator, two operators, unknown field, bad regexp, bad version, no signedBy, bad pointer): exit 2 naming the path"

# ---- the webhook: the same gathering and evaluation ----
self_signed "$WORK/tls"
PORT=$(free_port)
URL="https://127.0.0.1:$PORT"
"$IMGTOOL" admission serve --policy "$WORK/policy.json" --tls-cert "$WORK/tls/ca.crt" --tls-key "$WORK/tls/ca.key" \
  --listen "127.0.0.1:$PORT" "${TLS[@]}" --deadline 10 >"$WORK/server.log" 2>&1 &
REGISTRY_PIDS+=($!)  # stopped by PID with the registry (registry_lib.sh's trap)
SERVER_PID=$!
wait_for_port "$URL/healthz" "$SERVER_PID" "$WORK/server.log"
review() {  # UID IMAGE: sets CODE and BODY
  sed -e "s|__UID__|$1|g" -e "s|__IMAGE__|$2|g" -e "s|__INIT_IMAGE__|$2|g" "$FIX/pod.json" >"$WORK/request.json"
  CODE=$(curl -sS --max-time 30 --cacert "$WORK/tls/ca.crt" -o "$WORK/answer.json" -w '%{http_code}' \
    -H 'Content-Type: application/json' --data-binary "@$WORK/request.json" "$URL/validate")
  BODY=$(cat "$WORK/answer.json")
}
review u-good "${REF[good]#docker://}"
assert_eq "$CODE" 200 "webhook good: HTTP status"
assert_eq "$(jq -c '[.response.uid, .response.allowed]' <<<"$BODY")" '["u-good",true]' "webhook good: $BODY"
for s in noprov:"$NO_PROV" provy:"$WANT_X" rogue:"$UNTRUSTED" badsbom:"$OPENSSL" nodigest:"$NODIGEST"; do
  name=${s%%:*} want=${s#*:}
  review "u-$name" "${REF[$name]#docker://}"
  assert_eq "$CODE" 200 "webhook $name: HTTP status"
  assert_eq "$(jq -c '[.response.uid, .response.allowed, .response.status.code]' <<<"$BODY")" "[\"u-$name\",false,403]" \
    "webhook $name: $BODY"
  msg=$(jq -r .response.status.message <<<"$BODY")
  assert_contains "$msg" "image ${REF[$name]#docker://}: attestations: " "webhook $name"
  assert_contains "$msg" "$want" "webhook $name"
done
kill -0 "$SERVER_PID" || fail "the server died: $(cat "$WORK/server.log")"
pass "webhook: the good image admitted; each other one denied with the requirement named in the AdmissionReview message"
