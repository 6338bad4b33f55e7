#!/usr/bin/env bash
# Keyless verification against a Sigstore instance the test makes itself
# (tests/sigstore/instance.py: a CA, a CT log, a Rekor log and a TSA): bundles it signs
# verify with imgtool verify-blob and with the independent verifier sigstore-python
# 4.5.1, and what should be refused is refused, by imgtool (exit 5, the reason named) and
# by sigstore-python where the check is one it makes.
source "$(dirname "$0")/lib.sh"
INSTANCE=$REPO/tests/sigstore/instance.py

sigstore_python_venv
python3 -c 'import cryptography' 2>/dev/null || fail "instance.py needs python3 with the cryptography package"

id=https://github.com/imgtool-test/app/.github/workflows/release.yml@refs/heads/main
issuer=https://token.actions.example.test
cd "$WORK"
printf 'model weights v1\n' >artifact.bin
python3 "$INSTANCE" init inst --name test >/dev/null
python3 "$INSTANCE" init other --name other >/dev/null
root=$WORK/inst/trusted_root.json

sign() { python3 "$INSTANCE" sign "$@"; }
# verify_ok BUNDLE ARTIFACT [ID]: imgtool must verify.
verify_ok() {
  expect_exit 0 verify-blob --bundle "$1" --trusted-root "$root" --certificate-identity "${3:-$id}" \
    --certificate-oidc-issuer "$issuer" "$2"
}
# denied WORD BUNDLE ARTIFACT [ID [ISSUER [ROOT]]]: imgtool must refuse (exit 5), naming WORD.
denied() {
  local word=$1
  expect_exit 5 verify-blob --bundle "$2" --trusted-root "${6:-$root}" --certificate-identity "${4:-$id}" \
    --certificate-oidc-issuer "${5:-$issuer}" "$3"
  grep -qiF -- "$word" <<<"$OUTPUT" || fail "imgtool refused $2 but without naming '$word': $OUTPUT"
  REASON=${OUTPUT##*error: }
  REASON=${REASON:0:220}
}
# peer RC BUNDLE ARTIFACT [ID [CONFIG]]: sigstore-python's verdict must be RC (0 or 1).
peer() {
  local want=$1 out got
  set +e
  out=$("$venv/bin/python" -m sigstore --trust-config "${5:-$WORK/inst/trust_config.json}" verify identity \
    --offline --bundle "$2" --cert-identity "${4:-$id}" --cert-oidc-issuer "$issuer" "$3" 2>&1)
  got=$?
  set -e
  [ "$got" = "$want" ] || fail "sigstore-python on $2 exited $got, want $want: $out"
}

# What verifies.
sign inst --identity "$id" --issuer "$issuer" --artifact artifact.bin --out msg.json
verify_ok msg.json artifact.bin
pass "message signature: imgtool verify-blob verifies"
peer 0 msg.json artifact.bin
pass "message signature: sigstore-python verifies"

sign inst --identity "$id" --issuer "$issuer" --artifact artifact.bin --out dsse.json --dsse \
  --predicate-type https://slsa.dev/provenance/v1
verify_ok dsse.json artifact.bin
peer 0 dsse.json artifact.bin
pass "DSSE in-toto statement: imgtool and sigstore-python verify"

digest=sha256:$(sha256sum artifact.bin | cut -c1-64)
sign inst --identity dev@example.test --issuer "$issuer" --digest "$digest" --out digest.json
verify_ok digest.json "$digest" dev@example.test
peer 0 digest.json "$digest" dev@example.test
pass "prehashed signature of a digest, email identity: imgtool and sigstore-python verify"

sign inst --identity "$id" --issuer "$issuer" --artifact artifact.bin --out tsa_only.json --tsa --no-tlog-time
verify_ok tsa_only.json artifact.bin
peer 0 tsa_only.json artifact.bin
pass "only an RFC 3161 timestamp proves the time (no SET, no integratedTime): both verify"

# An hour ago, a ten-minute certificate, logged and stamped at that time: still good.
past=$(($(date +%s) - 3600))
sign inst --identity "$id" --issuer "$issuer" --artifact artifact.bin --out past.json --time "$past" --tsa \
  --tsa-time $((past + 1)) --log-time $((past + 599))
verify_ok past.json artifact.bin
peer 0 past.json artifact.bin
pass "signed an hour ago by a certificate long expired now, stamped and logged inside its ten minutes: both verify"
# notAfter is the certificate's last valid second (Go's x509, sigstore-python): a log time
# of exactly notAfter verifies in both, one second later is refused by both (below).
sign inst --identity "$id" --issuer "$issuer" --artifact artifact.bin --out edge.json --time "$past" \
  --log-time $((past + 600))
verify_ok edge.json artifact.bin
peer 0 edge.json artifact.bin
pass "logged at exactly the certificate's notAfter: both verify"

# What is refused.
denied "certificate subject" msg.json artifact.bin https://github.com/imgtool-test/other/.github/workflows/x.yml@refs/heads/main
peer 1 msg.json artifact.bin https://github.com/imgtool-test/other/.github/workflows/x.yml@refs/heads/main
pass "another identity: imgtool and sigstore-python refuse [imgtool: $REASON]"

denied issuer msg.json artifact.bin "$id" https://accounts.example.test
pass "another OIDC issuer: imgtool refuses [imgtool: $REASON]"

sign other --identity "$id" --issuer "$issuer" --artifact artifact.bin --out other.json
expect_exit 0 verify-blob --bundle other.json --trusted-root "$WORK/other/trusted_root.json" \
  --certificate-identity "$id" --certificate-oidc-issuer "$issuer" artifact.bin
denied "trusted root" other.json artifact.bin
peer 1 other.json artifact.bin
peer 0 other.json artifact.bin "$id" "$WORK/other/trust_config.json"
pass "a bundle from another instance (another CA, log, CT log): both refuse it under the first trusted root [imgtool: $REASON]"

# One piece of trust swapped at a time, the rest the first instance's: each check alone.
jq --slurpfile o "$WORK/other/trusted_root.json" '.certificateAuthorities = $o[0].certificateAuthorities' \
  "$root" >other_ca.json
denied "does not chain to a certificate authority of the trusted root" msg.json artifact.bin "$id" "$issuer" "$WORK/other_ca.json"
pass "another CA (log and CT log trusted): imgtool refuses [imgtool: $REASON]"
jq --slurpfile o "$WORK/other/trusted_root.json" '.ctlogs = $o[0].ctlogs' "$root" >other_ct.json
denied "SCT" msg.json artifact.bin "$id" "$issuer" "$WORK/other_ct.json"
pass "SCT from a CT log the trusted root does not name: imgtool refuses [imgtool: $REASON]"
jq --slurpfile o "$WORK/other/trusted_root.json" '.timestampAuthorities = $o[0].timestampAuthorities' \
  "$root" >other_tsa.json
denied "timestamp" tsa_only.json artifact.bin "$id" "$issuer" "$WORK/other_tsa.json"
pass "timestamp from a TSA the trusted root does not name: imgtool refuses [imgtool: $REASON]"

# The certificate is valid for ten minutes from $past; the log says it logged an hour later.
sign inst --identity "$id" --issuer "$issuer" --artifact artifact.bin --out late.json --time "$past" \
  --log-time $((past + 3600))
denied expired late.json artifact.bin
peer 1 late.json artifact.bin
pass "certificate expired at the log's integrated time: both refuse [imgtool: $REASON]"

sign inst --identity "$id" --issuer "$issuer" --artifact artifact.bin --out late_tsa.json --time "$past" \
  --tsa --tsa-time $((past + 3600))
denied expired late_tsa.json artifact.bin
peer 1 late_tsa.json artifact.bin
pass "certificate expired at the timestamp's genTime (the log's time inside it): both refuse [imgtool: $REASON]"

sign inst --identity "$id" --issuer "$issuer" --artifact artifact.bin --out untimed.json --no-tlog-time
denied "no verified signing time" untimed.json artifact.bin
peer 1 untimed.json artifact.bin
pass "no proven time at all (no SET, no timestamp): both refuse [imgtool: $REASON]"

printf 'model weights v2\n' >tampered.bin
denied "digest" msg.json tampered.bin
denied "subject" dsse.json tampered.bin
peer 1 msg.json tampered.bin
peer 1 dsse.json tampered.bin
pass "a tampered artifact: both refuse the message signature and the DSSE statement [imgtool: $REASON]"

# cosign's legacy image signature pieces, for a simple-signing payload.
printf '{"critical":{"identity":{"docker-reference":"registry.test/app"},"image":{"docker-manifest-digest":"%s"},"type":"cosign container image signature"},"optional":null}' \
  "$digest" >payload.json
sign inst --identity "$id" --issuer "$issuer" --artifact payload.json --out legacy.json --tsa --legacy-dir legacy
verify_ok legacy.json payload.json
for f in signature certificate.pem chain.pem rekor-bundle.json rfc3161-timestamp.json; do
  [ -s "legacy/$f" ] || fail "--legacy-dir wrote no $f"
done
assert_eq "$(cat legacy/signature)" "$(jq -r .messageSignature.signature legacy.json)" "legacy signature"
entry=$(jq -c '.verificationMaterial.tlogEntries[0]' legacy.json)
assert_eq "$(jq -r .Payload.body legacy/rekor-bundle.json)" "$(jq -r .canonicalizedBody <<<"$entry")" "legacy bundle body"
assert_eq "$(jq -r .SignedEntryTimestamp legacy/rekor-bundle.json)" \
  "$(jq -r .inclusionPromise.signedEntryTimestamp <<<"$entry")" "legacy SET"
assert_eq "$(jq -r '.Payload | "\(.integratedTime) \(.logIndex)"' legacy/rekor-bundle.json)" \
  "$(jq -r '"\(.integratedTime) \(.logIndex)"' <<<"$entry")" "legacy integratedTime and logIndex"
assert_eq "$(python3 -c 'import base64, sys; print(base64.b64encode(bytes.fromhex(sys.argv[1])).decode())' \
  "$(jq -r .Payload.logID legacy/rekor-bundle.json)")" "$(jq -r .logId.keyId <<<"$entry")" \
  "legacy logID"
assert_eq "$(jq -r .SignedRFC3161Timestamp legacy/rfc3161-timestamp.json)" \
  "$(jq -r '.verificationMaterial.timestampVerificationData.rfc3161Timestamps[0].signedTimestamp' legacy.json)" \
  "legacy timestamp"
openssl x509 -in legacy/certificate.pem -noout 2>/dev/null || fail "legacy certificate.pem is not a certificate"
[ "$(grep -c 'BEGIN CERTIFICATE' legacy/chain.pem)" = 2 ] || fail "legacy chain.pem is not intermediate + root"
pass "--legacy-dir: cosign's signature, certificate, chain, bundle and rfc3161timestamp annotations agree with the bundle"
