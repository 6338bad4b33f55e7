#!/usr/bin/env bash
# An index judged as one reference: two small images built here for linux/amd64 and
# linux/arm64, assembled with `imgtool index create`, signed by the index digest with a
# key generated here. `policy check` (on the layout and after a push to docker-registry
# on 127.0.0.1) and the admission webhook allow it; an index whose arm64 image runs as
# root (its config rewritten with jq) is denied naming linux/arm64 and that image's
# digest; an index whose images are signed but which is not is denied on signedBy; an
# unknown/unknown entry is skipped and said so, and an index of nothing else fails
# closed. `sign --recursive` and `attest --recursive` cover each entry's digest too.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/registry_lib.sh"
IMGTOOL=$(realpath "$IMGTOOL")
FIX="$REPO/tests/fixtures/admission"

# ---- images: make_context's spec (uid 10001) for two platforms, and unknown/unknown ----
make_context "$WORK/ctx"
for arch in amd64 arm64 unknown; do
  os=linux
  [ "$arch" = unknown ] && os=unknown
  jq --arg os "$os" --arg a "$arch" '.platform = {"os": $os, "architecture": $a}' "$WORK/ctx/spec.json" \
    >"$WORK/ctx/spec-$arch.json"
  "$IMGTOOL" build "$WORK/ctx/spec-$arch.json" -o "oci:$WORK/$arch:v1" -q >/dev/null
done
AMD=$("$IMGTOOL" digest "oci:$WORK/amd64:v1")
ARM=$("$IMGTOOL" digest "oci:$WORK/arm64:v1")
cp -r "$WORK/arm64" "$WORK/arm64-root"
ROOT=$(edit_image "$WORK/arm64-root" v1 '.config.User = "0:0"' '.')
CFG=$(jq -r '.config.digest | ltrimstr("sha256:")' "$WORK/arm64-root/blobs/sha256/${ROOT#sha256:}")
assert_eq "$(jq -c '[.architecture, .config.User]' "$WORK/arm64-root/blobs/sha256/$CFG")" '["arm64","0:0"]' "root arm64"

index() {  # NAME IMAGE...: oci:$WORK/NAME:v1; prints the index digest
  local name=$1
  shift
  "$IMGTOOL" index create "oci:$WORK/$name:v1" "$@" 2>/dev/null
}
IDX=$(index multi "oci:$WORK/amd64:v1" "oci:$WORK/arm64:v1")
BAD=$(index bad "oci:$WORK/amd64:v1" "oci:$WORK/arm64-root:v1")
WITHATT=$(index withatt "oci:$WORK/amd64:v1" "oci:$WORK/unknown:v1")
ONLYATT=$(index onlyatt "oci:$WORK/unknown:v1")
assert_eq "$(jq -c '[.manifests[].platform | "\(.os)/\(.architecture)"]' "$WORK/multi/blobs/sha256/${IDX#sha256:}")" \
  '["linux/amd64","linux/arm64"]' "index platforms"
pass "images for linux/amd64, linux/arm64 (and arm64 as root, and unknown/unknown) in four indexes"

# ---- keys; the index signed by its own digest only ----
export COSIGN_PASSWORD=policy-index-test
(cd "$WORK" && "$IMGTOOL" keygen --output-key-prefix ci >/dev/null 2>&1)
for name in multi bad withatt onlyatt; do
  "$IMGTOOL" sign --key "$WORK/ci.key" "oci:$WORK/$name:v1" >"$WORK/sign.out" 2>"$WORK/sign.err"
done
assert_contains "$(cat "$WORK/sign.err")" \
  "oci:$WORK/onlyatt:v1 is an index: only its own digest is signed (with --recursive, each manifest it lists is signed too)" \
  "sign without --recursive says what it left"
SIGTAGS=$(jq -r '[.manifests[].annotations["org.opencontainers.image.ref.name"] | select(endswith(".sig"))] | join(" ")' \
  "$WORK/multi/index.json")
assert_eq "$SIGTAGS" "sha256-${IDX#sha256:}.sig" "only the index is signed"
# Images signed, their index not: the images' signatures travel into the new index's layout.
for arch in amd64 arm64; do "$IMGTOOL" sign --key "$WORK/ci.key" "oci:$WORK/$arch:v1" >/dev/null; done
UNSIGNED=$(index unsigned "oci:$WORK/amd64:v1" "oci:$WORK/arm64:v1")
assert_eq "$UNSIGNED" "$IDX" "same images, same index digest"
[ -n "$(jq -r --arg t "sha256-${AMD#sha256:}.sig" \
  '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == $t) | .digest' \
  "$WORK/unsigned/index.json")" ] || fail "the amd64 image's signature did not travel"
pass "keygen; four indexes signed by their own digest; an unsigned index of signed images"

# ---- policy check on the layouts ----
cat >"$WORK/policy.json" <<JSON
{"policyVersion": 1, "rules": {"nonRoot": {}, "digestPinned": {}, "noSetuid": {},
  "signedBy": {"keys": ["$WORK/ci.pub"]}}}
JSON
check() {  # WANT-EXIT REF...
  local want=$1
  shift
  expect_exit "$want" policy check --policy "$WORK/policy.json" --tls-verify=false "$@"
}
row() {  # RULE RESULT REASON: a row of the last table, exactly
  grep -qxF -- "$(printf '%s  %-12s  %s    %s' "$REF" "$1" "$2" "$3")" <<<"$OUTPUT" ||
    fail "want row '$1 $2 $3' for $REF in: $OUTPUT"
}
REF="oci:$WORK/multi@$IDX"
check 0 "$REF"
row nonRoot pass "linux/amd64, linux/arm64: uid 10001"
row digestPinned pass "pinned to $IDX"
row signedBy pass "verified by ci.pub"
row noSetuid pass "linux/amd64, linux/arm64: no setuid/setgid files"
assert_contains "$OUTPUT" "1 image(s), 4 rule check(s), 0 failed: OK" "footer"
REF="oci:$WORK/bad@$BAD"
check 5 "$REF"
row nonRoot FAIL "linux/arm64 ${ROOT:0:19}: config User '0:0' is uid 0 (root)"
row signedBy pass "verified by ci.pub"
row noSetuid pass "linux/amd64, linux/arm64: no setuid/setgid files"
REF="oci:$WORK/unsigned@$IDX"
check 5 "$REF"
row signedBy FAIL "no signatures for $IDX (sha256-${IDX#sha256:}.sig is missing or empty)"
row nonRoot pass "linux/amd64, linux/arm64: uid 10001"
REF="oci:$WORK/multi:v1"
check 5 "$REF"
row digestPinned FAIL "not pinned: the reference has tag 'v1' and no @sha256:..."
pass "layout: the signed index passes; arm64 as root fails naming linux/arm64 $ROOT; unsigned and a tag fail"

UNK=$("$IMGTOOL" digest "oci:$WORK/unknown:v1")
REF="oci:$WORK/withatt@$WITHATT"
check 0 "$REF"
row nonRoot pass "linux/amd64: uid 10001"
assert_contains "$OUTPUT" \
  "$REF: skipped unknown/unknown ${UNK:0:19}: not a runnable platform (an attestation manifest)" "skipped entry said"
json=$("$IMGTOOL" policy check --policy "$WORK/policy.json" --json "$REF")
assert_eq "$(jq -c '[.pass, .images[0].digest, (.images[0].skipped | length)]' <<<"$json")" \
  "[true,\"$WITHATT\",1]" "--json: index digest and skipped entries"
REF="oci:$WORK/onlyatt@$ONLYATT"
check 5 "$REF"
row nonRoot FAIL \
  "no image in the index to judge: skipped unknown/unknown ${UNK:0:19}: not a runnable platform (an attestation manifest)"
pass "an unknown/unknown entry is skipped and listed; an index of nothing else fails closed"

# ---- sign --recursive: each entry by its own digest ----
"$IMGTOOL" sign --key "$WORK/ci.key" --recursive "oci:$WORK/multi:v1" >"$WORK/rec.out"
assert_eq "$(cat "$WORK/rec.out")" \
  "Already signed by this key: oci:$WORK/multi:v1 $IDX -> sha256-${IDX#sha256:}.sig
Signed oci:$WORK/multi:v1 linux/amd64 $AMD -> sha256-${AMD#sha256:}.sig
Signed oci:$WORK/multi:v1 linux/arm64 $ARM -> sha256-${ARM#sha256:}.sig" "sign --recursive"
json=$("$IMGTOOL" sign --key "$WORK/ci.key" --recursive --json "oci:$WORK/multi:v1")
assert_eq "$(jq -c '[.digest, .appended, [.entries[] | [.platform, .digest, .appended]]]' <<<"$json")" \
  "[\"$IDX\",false,[[\"linux/amd64\",\"$AMD\",false],[\"linux/arm64\",\"$ARM\",false]]]" "sign --recursive --json"
pass "sign --recursive: the index (already signed) and each platform's image; again changes nothing"
printf '{"built-by": "policy_index.sh"}\n' >"$WORK/predicate.json"
"$IMGTOOL" attest --key "$WORK/ci.key" --predicate "$WORK/predicate.json" --type custom --recursive \
  "oci:$WORK/multi:v1" >"$WORK/att.out"
assert_eq "$(cut -d' ' -f1,3 "$WORK/att.out" | tr '\n' ' ')" "Attested $IDX Attested linux/amd64 Attested linux/arm64 " \
  "attest --recursive"
pass "attest --recursive: the index and each platform's image"

# ---- the same after a push to a registry ----
start_registry plain
R="$REG_HOST/team"
for name in multi bad unsigned; do
  "$IMGTOOL" push -q --tls-verify=false "oci:$WORK/$name:v1" "docker://$R/$name:v1" >/dev/null
done
REF="docker://$R/multi@$IDX"
check 0 "$REF"
row nonRoot pass "linux/amd64, linux/arm64: uid 10001"
row signedBy pass "verified by ci.pub"
REF="docker://$R/bad@$BAD"
check 5 "$REF"
row nonRoot FAIL "linux/arm64 ${ROOT:0:19}: config User '0:0' is uid 0 (root)"
REF="docker://$R/unsigned@$IDX"
check 5 "$REF"
row signedBy FAIL "no signatures for $IDX (sha256-${IDX#sha256:}.sig is missing or empty)"
# --recursive's signatures and attestations travelled with the push: each image verifies on its own.
expect_exit 0 verify --tls-verify=false --key "$WORK/ci.pub" "docker://$R/multi@$ARM"
expect_exit 0 verify --tls-verify=false --key "$WORK/ci.pub" --attestation "docker://$R/multi@$AMD"
pass "registry $REG_HOST: the pushed index passes, the root arm64 index and the unsigned one fail"

# ---- the admission webhook: the same decisions for a pod ----
self_signed "$WORK/tls"
PORT=$(free_port)
URL="https://127.0.0.1:$PORT"
"$IMGTOOL" admission serve --policy "$WORK/policy.json" --tls-cert "$WORK/tls/ca.crt" --tls-key "$WORK/tls/ca.key" \
  --listen "127.0.0.1:$PORT" --tls-verify=false --deadline 8 >"$WORK/server.log" 2>&1 &
REGISTRY_PIDS+=($!)  # stopped by PID with the registry (registry_lib.sh's trap)
wait_for_port "$URL/healthz" "$!" "$WORK/server.log"
review() {  # UID IMAGE: sets BODY
  sed -e "s|__UID__|$1|g" -e "s|__IMAGE__|$2|g" -e "s|__INIT_IMAGE__|$2|g" "$FIX/pod.json" >"$WORK/request.json"
  BODY=$(curl -sS --max-time 20 --cacert "$WORK/tls/ca.crt" -H 'Content-Type: application/json' \
    --data-binary "@$WORK/request.json" "$URL/validate")
}
review u-good "$R/multi@$IDX"
assert_eq "$(jq -c '[.response.uid, .response.allowed]' <<<"$BODY")" '["u-good",true]' "good index: $BODY"
review u-bad "$R/bad@$BAD"
assert_eq "$(jq -c '[.response.uid, .response.allowed, .response.status.code]' <<<"$BODY")" '["u-bad",false,403]' \
  "root arm64 index: $BODY"
assert_contains "$(jq -r .response.status.message <<<"$BODY")" \
  "image $R/bad@$BAD: nonRoot: linux/arm64 ${ROOT:0:19}: config User '0:0' is uid 0 (root)" "root arm64 reason"
review u-unsigned "$R/unsigned@$IDX"
assert_eq "$(jq -r .response.allowed <<<"$BODY")" false "unsigned index: $BODY"
assert_contains "$(jq -r .response.status.message <<<"$BODY")" "image $R/unsigned@$IDX: signedBy: no signatures for $IDX" \
  "unsigned reason"
pass "webhook: the signed index allowed; root arm64 denied naming linux/arm64; unsigned denied on signedBy"
