#!/usr/bin/env bash
# imgtool policy check: every rule passing and failing on small images built here, a
# root image and a base-annotated image crafted by rewriting a layout (a new config or
# manifest blob, index.json re-pointed, as umoci config does), bad policies refused with
# exit 2 and the JSON path, images that cannot be read failing closed, and the golden CPU
# image passing policies/golden.json once signed with the example key.
source "$(dirname "$0")/lib.sh"
IMGTOOL=$(realpath "$IMGTOOL")

policy() {  # NAME RULES-JSON: $WORK/NAME.json
  printf '{"policyVersion": 1, "rules": %s}\n' "$2" >"$WORK/$1.json"
}
check() {  # WANT-EXIT POLICY-NAME REF...
  local want=$1 pol=$2
  shift 2
  expect_exit "$want" policy check --policy "$WORK/$pol.json" "$@"
}

# The images: make_context's spec (uid 10001 "trainer", stack cuda/cudnn/nccl, label
# "example"), pinned by digest.
make_context "$WORK/ctx"
"$IMGTOOL" build "$WORK/ctx/spec.json" -o "oci:$WORK/good:v1" -q >/dev/null
D=$("$IMGTOOL" digest "oci:$WORK/good:v1")
GOOD="oci:$WORK/good@$D"

# ---- nonRoot ----
policy nonroot '{"nonRoot": {}}'
check 0 nonroot "$GOOD"
assert_contains "$OUTPUT" "nonRoot  pass    uid 10001" "nonRoot pass"
cp -r "$WORK/good" "$WORK/users"
ROOT=$(edit_image "$WORK/users" v1 '.config.User = "0:0"' '.')
check 5 nonroot "oci:$WORK/users@$ROOT"
assert_contains "$OUTPUT" "config User '0:0' is uid 0 (root)" "root image"
# A name: resolved in the image's /etc/passwd (the metadata layer wrote "trainer").
NAMED=$(edit_image "$WORK/users" v1 '.config.User = "trainer"' '.')
check 0 nonroot "oci:$WORK/users@$NAMED"
assert_contains "$OUTPUT" "user 'trainer' is uid 10001 in /etc/passwd" "named user"
GHOST=$(edit_image "$WORK/users" v1 '.config.User = "ghost"' '.')
check 5 nonroot "oci:$WORK/users@$GHOST"
assert_contains "$OUTPUT" "config User 'ghost' is not in the image's /etc/passwd" "unknown user"
EMPTY=$(edit_image "$WORK/users" v1 'del(.config.User)' '.')
check 5 nonroot "oci:$WORK/users@$EMPTY"
assert_contains "$OUTPUT" "config User is empty: the container runs as root" "no User"
pass "nonRoot: numeric uid and resolvable name pass; 0:0, unknown name and no User fail"

# ---- digestPinned ----
policy pinned '{"digestPinned": {}}'
check 0 pinned "$GOOD"
assert_contains "$OUTPUT" "pinned to $D" "pinned"
check 5 pinned "oci:$WORK/good:v1"
assert_contains "$OUTPUT" "not pinned: the reference has tag 'v1' and no @sha256:..." "tag"
"$IMGTOOL" build "$WORK/ctx/spec.json" -o "oci:$WORK/latest:latest" -q >/dev/null
check 5 pinned "oci:$WORK/latest:latest"
assert_contains "$OUTPUT" "the reference names the tag 'latest'" "latest"
check 5 pinned "oci:$WORK/good@sha256:$(printf '0%.0s' {1..64})"
assert_contains "$OUTPUT" "cannot open the image" "unknown digest fails closed"
pass "digestPinned: oci:DIR@sha256 passes; a tag, latest and an unknown digest fail"

# ---- signedBy: cosign signatures (imgtool/sign) against the policy's keys ----
mkdir -p "$WORK/keys" && cp "$REPO/signatures/trusted/example.pub" "$WORK/keys/trusted.pub"
export COSIGN_PASSWORD=imgtool-example-only
policy signed '{"signedBy": {"keys": ["keys/trusted.pub"]}}'
check 5 signed "$GOOD"
assert_contains "$OUTPUT" "signedBy" "unsigned image fails"
(cd "$WORK" && COSIGN_PASSWORD=other "$IMGTOOL" keygen --output-key-prefix other >/dev/null 2>&1)
COSIGN_PASSWORD=other "$IMGTOOL" sign --key "$WORK/other.key" "oci:$WORK/good:v1" >/dev/null 2>&1
check 5 signed "$GOOD"
pass "signedBy: unsigned, and signed only by an untrusted key, fail"
"$IMGTOOL" sign --key "$REPO/signatures/trusted/example.key" "oci:$WORK/good:v1" >/dev/null 2>&1
check 0 signed "$GOOD"
assert_contains "$OUTPUT" "verified by trusted.pub" "signed by the trusted key"
pass "signedBy: a signature by a trusted key passes"

# ---- allowedStacks: labels and /etc/imgtool/stack.json must agree ----
policy stacks '{"allowedStacks": {"stacks": [{"cuda": "12.4.1"}, {"cuda": "13.0.96", "cudnn": "9.19.0", "nccl": "2.28.9"}]}}'
check 0 stacks "$GOOD"
assert_contains "$OUTPUT" "cuda 13.0.96, cudnn 9.19.0, nccl 2.28.9 (allowed stack 1)" "allowed stack"
policy stacks_other '{"allowedStacks": {"stacks": [{"cuda": "13.0.96", "nccl": "2.27.3"}]}}'
check 5 stacks_other "$GOOD"
assert_contains "$OUTPUT" "matches no allowed stack" "other stack"
cp -r "$WORK/good" "$WORK/lying"
LIE=$(edit_image "$WORK/lying" v1 '.config.Labels["org.imgtool.stack.cuda"] = "12.4.1"' '.')
policy stacks_lie '{"allowedStacks": {"stacks": [{"cuda": "12.4.1"}]}}'
check 5 stacks_lie "oci:$WORK/lying@$LIE"
assert_contains "$OUTPUT" "label org.imgtool.stack.cuda=12.4.1 but stack.json says 13.0.96" "labels vs stack.json"
jq 'del(.stack)' "$WORK/ctx/spec.json" >"$WORK/ctx/nostack.json"
"$IMGTOOL" build "$WORK/ctx/nostack.json" -o "oci:$WORK/nostack:v1" -q >/dev/null
check 5 stacks "oci:$WORK/nostack:v1"
assert_contains "$OUTPUT" "the image pins no stack" "no stack"
policy stacks_none '{"allowedStacks": {"stacks": [], "allowNone": true}}'
check 0 stacks_none "oci:$WORK/nostack:v1"
pass "allowedStacks: allowed stack passes; other versions, labels disagreeing with stack.json, no stack fail"

# ---- requiredLabels ----
policy labels '{"requiredLabels": {"labels": ["example"]}}'
check 0 labels "$GOOD"
policy labels_src '{"requiredLabels": {"labels": ["example", "org.opencontainers.image.source"]}}'
check 5 labels_src "$GOOD"
assert_contains "$OUTPUT" "missing or empty: org.opencontainers.image.source" "missing label"
pass "requiredLabels: present passes, missing fails"

# ---- baseImages: org.opencontainers.image.base.digest against the allowlist ----
Z="sha256:$(printf 'f%.0s' {1..64})"
policy base_scratch '{"baseImages": {"allowScratch": true}}'
check 0 base_scratch "$GOOD"
policy base_list "{\"baseImages\": {\"allow\": [\"$D\"]}}"
check 5 base_list "$GOOD"
assert_contains "$OUTPUT" "no org.opencontainers.image.base.digest annotation: the base image is unknown" "scratch not allowed"
mkdir -p "$WORK/derived"
printf 'more\n' >"$WORK/derived/more.txt"
cat >"$WORK/derived/spec.json" <<JSON
{"base": {"layout": "$WORK/good", "digest": "$D"},
 "user": {"name": "trainer", "uid": 10001, "gid": 10001},
 "layers": [{"name": "more", "files": [{"src": "more.txt", "dest": "/opt/more.txt"}]}]}
JSON
"$IMGTOOL" build "$WORK/derived/spec.json" -o "oci:$WORK/derived-img:v1" -q >/dev/null
check 0 base_list "oci:$WORK/derived-img:v1"
assert_contains "$OUTPUT" "base $D is allowed" "allowed base"
policy base_other "{\"baseImages\": {\"allow\": [\"$Z\"], \"allowScratch\": true}}"
check 5 base_other "oci:$WORK/derived-img:v1"
assert_contains "$OUTPUT" "base $D is not in the allowlist" "base not allowed"
pass "baseImages: scratch with allowScratch, an allowed base pass; unlisted base and unallowed scratch fail"

# ---- noSetuid: every layer's entries ----
policy setuid '{"noSetuid": {}}'
check 0 setuid "$GOOD"
mkdir -p "$WORK/suid"
printf '#!/bin/sh\n' >"$WORK/suid/su"
cat >"$WORK/suid/spec.json" <<'JSON'
{"base": "scratch", "user": {"name": "app", "uid": 10001, "gid": 10001},
 "layers": [{"name": "bin", "files": [{"src": "su", "dest": "/usr/bin/su", "mode": "4755", "allow_setuid": true}]},
            {"name": "other", "files": [{"src": "su", "dest": "/usr/bin/sg", "mode": "2755", "allow_setuid": true}]}]}
JSON
"$IMGTOOL" build "$WORK/suid/spec.json" -o "oci:$WORK/suid-img:v1" -q >/dev/null
check 5 setuid "oci:$WORK/suid-img:v1"
assert_contains "$OUTPUT" "2 setuid/setgid files: /usr/bin/su (4755, layer sha256:" "setuid files listed"
assert_contains "$OUTPUT" "/usr/bin/sg (2755" "setgid file listed"
pass "noSetuid: clean image passes; setuid and setgid files in two layers fail"

# ---- maxSize ----
policy size_ok '{"maxSize": {"bytes": 100000000, "uncompressedBytes": 100000000}}'
check 0 size_ok "$GOOD"
policy size_small '{"maxSize": {"bytes": 100}}'
check 5 size_small "$GOOD"
assert_contains "$OUTPUT" "bytes compressed (limit 100)" "compressed limit"
policy size_tar '{"maxSize": {"uncompressedBytes": 1000}}'
check 5 size_tar "$GOOD"
assert_contains "$OUTPUT" "bytes uncompressed (limit 1000)" "uncompressed limit"
pass "maxSize: compressed and uncompressed limits"

# ---- several images, --json, images that cannot be read ----
policy all '{"nonRoot": {}, "digestPinned": {}, "requiredLabels": {"labels": ["example"]}, "noSetuid": {}, "maxSize": {"bytes": 100000000}}'
check 0 all "$GOOD"
assert_contains "$OUTPUT" "1 image(s), 5 rule check(s), 0 failed: OK" "footer"
check 5 all "$GOOD" "oci:$WORK/users@$ROOT" "oci:$WORK/missing:v1"
assert_contains "$OUTPUT" "3 image(s), 15 rule check(s)" "three images"
assert_contains "$OUTPUT" "oci:$WORK/missing:v1" "missing image listed"
rc=0
json=$("$IMGTOOL" policy check --policy "$WORK/all.json" --json "$GOOD" "oci:$WORK/missing:v1") || rc=$?
assert_eq "$rc" 5 "--json exit"
assert_eq "$(jq -c '[.pass, (.images | map(.pass)), (.images[0].rules | length)]' <<<"$json")" '[false,[true,false],5]' "--json"
assert_eq "$(jq -r '[.images[1].rules[].pass] | unique | .[]' <<<"$json")" false "unreadable image fails every rule"
jq -e '.images[1].rules[0].reason | startswith("cannot open the image")' <<<"$json" >/dev/null || fail "reason: $json"
# A corrupt layer: the rules that read layers fail, never pass.
cp -r "$WORK/good" "$WORK/corrupt"
layer=$(jq -r '.layers[0].digest' "$WORK/corrupt/blobs/sha256/${D#sha256:}")
chmod u+w "$WORK/corrupt/blobs/sha256/${layer#sha256:}"
head -c 40 "$WORK/good/blobs/sha256/${layer#sha256:}" >"$WORK/corrupt/blobs/sha256/${layer#sha256:}"
check 5 setuid "oci:$WORK/corrupt@$D"
assert_contains "$OUTPUT" "noSetuid  FAIL" "corrupt layer fails noSetuid"
pass "several images in one table, --json, unreadable and corrupt images fail closed"

# ---- bad policies: exit 2, the JSON path named ----
policy bad_rule '{"nonRot": {}}'
check 2 bad_rule "$GOOD"
assert_contains "$OUTPUT" "bad_rule.json: \$.rules.nonRot: unknown rule" "unknown rule"
policy bad_field '{"maxSize": {"byte": 10}}'
check 2 bad_field "$GOOD"
assert_contains "$OUTPUT" "bad_field.json: \$.rules.maxSize.byte: unknown field" "unknown field"
policy bad_type '{"allowedStacks": {"stacks": [{"cuda": 13}]}}'
check 2 bad_type "$GOOD"
assert_contains "$OUTPUT" "\$.rules.allowedStacks.stacks[0].cuda: want a version string" "wrong type"
printf '{"policyVersion": 1, "rules": {"nonRoot": {}' >"$WORK/bad_json.json"
check 2 bad_json "$GOOD"
assert_contains "$OUTPUT" "bad_json.json: malformed JSON at byte" "malformed JSON"
printf '{"policyVersion": 1, "rules": {"maxSize": {"bytes": 1}, "maxSize": {"bytes": 9}}}' >"$WORK/bad_dup.json"
check 2 bad_dup "$GOOD"
printf '{"policyVersion": 2, "rules": {}}' >"$WORK/bad_version.json"
check 2 bad_version "$GOOD"
assert_contains "$OUTPUT" "\$.policyVersion: unsupported version 2" "version"
expect_exit 2 policy check --policy "$WORK/nope.json" "$GOOD"
pass "unknown rule, unknown field, wrong type, malformed JSON, duplicate key, version, missing file: exit 2"

# ---- the shipped policies parse; the golden CPU image passes golden.json minus signedBy ----
for p in "$REPO"/policies/*.json; do
  rc=0
  "$IMGTOOL" policy check --policy "$p" "$GOOD" >/dev/null 2>&1 || rc=$?
  [ "$rc" = 0 ] || [ "$rc" = 5 ] || fail "$p: exit $rc (a shipped policy must parse)"
done
G=$REPO/examples/golden
if "$G/fetch" --spec spec-cpu.json --no-trainer --platform linux/amd64 >/dev/null 2>&1; then
  mkdir -p "$WORK/golden/cache/bin"
  cp "$G/spec-cpu.json" "$WORK/golden/"
  ln -s "$G/cache/debs" "$WORK/golden/cache/debs"
  # The policy does not run the trainer: any executable stands in when none is built.
  if [ -n "${TRAINER:-}" ] && [ -x "$TRAINER" ]; then cp "$TRAINER" "$WORK/golden/cache/bin/trainer"; else
    printf '#!/bin/sh\n' >"$WORK/golden/cache/bin/trainer"; fi
  cp "$IMGTOOL_FLEET" "$WORK/golden/cache/bin/imgtool-fleet"
  "$IMGTOOL" build "$WORK/golden/spec-cpu.json" --platform linux/amd64 -o "oci:$WORK/golden-img:v1" -q >/dev/null
  GD=$("$IMGTOOL" digest "oci:$WORK/golden-img:v1")
  jq 'del(.rules.signedBy)' "$REPO/policies/golden.json" >"$WORK/golden-unsigned.json"
  check 0 golden-unsigned "oci:$WORK/golden-img@$GD"
  expect_exit 5 policy check --policy "$REPO/policies/golden.json" "oci:$WORK/golden-img@$GD"
  assert_contains "$OUTPUT" "signedBy" "golden.json has signedBy"
  "$IMGTOOL" sign --key "$REPO/signatures/trusted/example.key" "oci:$WORK/golden-img:v1" >/dev/null 2>&1
  expect_exit 0 policy check --policy "$REPO/policies/golden.json" "oci:$WORK/golden-img@$GD"
  pass "the golden CPU image fails policies/golden.json unsigned and passes it once signed"
else
  echo "skip: the golden CPU image (examples/golden/fetch --spec spec-cpu.json cannot fetch the debs here)"
fi
