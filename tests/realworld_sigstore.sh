#!/usr/bin/env bash
# Real-world agreement (issue 25): every Sigstore bundle of tests/fixtures/realworld/sigstore
# (sigstore-python's own test bundles, as that project ships them) through `imgtool
# verify-blob` and through sigstore-python 4.5.1 (`sigstore verify identity --offline`),
# offline, with the trusted root each was made under and the identity its certificate
# names. Prints one table (bundle, artifact, sigstore-python, imgtool, agree) and the
# reasons, and fails on any disagreement. sigstore-python's verdicts are its own, run here:
# nothing is assumed but which bundles its tests call good, and a verdict that differs
# from that fails the test too (a wrong root or identity would make every bundle refused).
source "$(dirname "$0")/lib.sh"
FIX=$REPO/tests/fixtures/realworld/sigstore
ASSETS=$FIX/sigstore-python

sigstore_python_venv

# Each trusted root twice: as imgtool reads it, and as sigstore-python's --trust-config (a
# ClientTrustConfig; its signing config, borrowed from tsa/trust_config.json, is unused offline).
mkdir -p "$WORK/roots"
cp "$FIX/roots/staging-current.trusted_root.json" "$WORK/roots/staging-current.json"
cp "$FIX/roots/public-good.trusted_root.json" "$WORK/roots/public-good.json"
# The late-timestamp bundle has a public-good Fulcio certificate, a staging Rekor entry and a
# staging TSA timestamp: judged under the staging root with public-good's CAs and CT logs
# added, the timestamp verifies, and it falls after the certificate expired.
jq --slurpfile pg "$FIX/roots/public-good.trusted_root.json" \
  '.certificateAuthorities += $pg[0].certificateAuthorities | .ctlogs += $pg[0].ctlogs' \
  "$FIX/roots/staging-current.trusted_root.json" >"$WORK/roots/staging+pg-ca.json"
for name in staging-current public-good staging+pg-ca; do
  jq -n --slurpfile root "$WORK/roots/$name.json" --slurpfile tc "$ASSETS/tsa/trust_config.json" \
    '{mediaType: "application/vnd.dev.sigstore.clienttrustconfig.v0.1+json", trustedRoot: $root[0],
      signingConfig: $tc[0].signing_config}' >"$WORK/roots/$name.config.json"
done
jq .trustedRoot "$ASSETS/tsa/trust_config.json" >"$WORK/roots/tsa.json"
cp "$ASSETS/tsa/trust_config.json" "$WORK/roots/tsa.config.json"

WHL=sha256:c4e92e9ecc828bef2aa7dba1de8ac983511f7532a0df11c770d39099a25cf201  # bundle_v3_github.whl
DSSE_SUBJECT=sha256:a0cfc71271d6e278e57cd332ff957c3f7043fdda354c4cbb190a30d56efa01bf
# bundle | artifact (a file of $ASSETS, or sha256:HEX) | root | what sigstore-python's tests call it
CASES=(
  "bundle.txt.sigstore|bundle.txt|staging-current|good"
  "bundle_v3.txt.sigstore|bundle_v3.txt|staging-current|good"
  "bundle_v3_alt.txt.sigstore|bundle_v3_alt.txt|staging-current|good"
  "staging-rekor-v2.txt.sigstore.json|staging-rekor-v2.txt|staging-current|good"
  "a.dsse.staging-rekor-v2.txt.sigstore.json|$DSSE_SUBJECT|staging-current|good"
  "bundle_v3_github.whl.sigstore|$WHL|public-good|good"
  "tsa/bundle.txt.sigstore|tsa/bundle.txt|tsa|good"
  "bundle_cve_2022_36056.txt.sigstore|bundle_cve_2022_36056.txt|staging-current|broken"
  "bundle_invalid_version.txt.sigstore|bundle_invalid_version.txt|staging-current|broken"
  "bundle_no_cert_v1.txt.sigstore|bundle_no_cert_v1.txt|public-good|broken"
  "bundle_no_checkpoint.txt.sigstore|bundle_no_checkpoint.txt|staging-current|broken"
  "bundle_no_log_entry.txt.sigstore|bundle_no_log_entry.txt|public-good|broken"
  "bundle_v3_no_signed_time.txt.sigstore.json|bundle_v3_no_signed_time.txt|public-good|broken"
  "tsa/bundle.duplicate.sigstore|tsa/bundle.txt|tsa|broken"
  "tsa/bundle.many_timestamp.sigstore|tsa/bundle.txt|tsa|broken"
  "tsa/bundle.txt.late_timestamp.sigstore|tsa/bundle.txt|tsa|broken"
  "tsa/bundle.txt.late_timestamp.sigstore|tsa/bundle.txt|staging+pg-ca|broken"
)

# The identity flags for a bundle: its certificate's own subject and issuer (a bundle
# without a certificate gets a placeholder; both tools refuse it for that).
identity_of() {
  local lines
  lines=$("$venv/bin/python" "$REPO/tests/sigstore/bundle_identity.py" "$1") || fail "reading the identity of $1"
  ID=$(sed -n 1p <<<"$lines")
  ISSUER=$(sed -n 2p <<<"$lines")
  : "${ID:=nobody@example.invalid}" "${ISSUER:=https://issuer.example.invalid}"
}

# The verdict from an exit code: "verified" for 0, "refused" for a refusal; anything else
# (a crash, a Python traceback) fails the test rather than pass as a refusal.
imgtool_verdict() {
  case $1 in
    0) echo verified ;;
    2 | 5) echo refused ;;
    *) fail "imgtool verify-blob exited $1 (not 0, 2 or 5): $2" ;;
  esac
}
python_verdict() {
  if [ "$1" = 0 ]; then
    echo verified
  elif [ "$1" = 1 ] && ! grep -q '^Traceback' <<<"$2"; then
    echo refused
  else
    fail "sigstore-python exited $1 without a verdict: $2"
  fi
}
# A refusal on one line: sigstore-python's log lines lose their time, level and source
# file, and its parse errors keep only their "Additional context".
reason() {
  tr -s ' \n' ' ' <<<"$1" | sed -E 's/\[[0-9:]+\] //g; s/ ?[a-z_]+\.py:[0-9]+//g; s/(ERROR|WARNING) //g;
    s/.*Additional context: //; s/For detailed error information.*//; s/^imgtool: error: //' | cut -c1-260
}

# Both tools on one case; sets MINE/THEIRS (outputs) and MINE_RC/THEIRS_RC. A function, so
# that lib.sh's ERR trap does not report a refusal, which is an outcome here.
run_both() {
  set +e
  MINE=$("$IMGTOOL" verify-blob --bundle "$1" --trusted-root "$WORK/roots/$3.json" \
    --certificate-identity "$ID" --certificate-oidc-issuer "$ISSUER" "$2" 2>&1)
  MINE_RC=$?
  THEIRS=$(timeout 300 "$venv/bin/python" -m sigstore --trust-config "$WORK/roots/$3.config.json" verify identity \
    --offline --bundle "$1" --cert-identity "$ID" --cert-oidc-issuer "$ISSUER" "$2" 2>&1)
  THEIRS_RC=$?
  set -e
}

row() { printf '%-44s %-16s %-29s %-16s %-9s %s\n' "$@"; }
cd "$ASSETS"
rows=() reasons=() disagree=() unexpected=()
for c in "${CASES[@]}"; do
  IFS='|' read -r bundle artifact root class <<<"$c"
  identity_of "$bundle"
  run_both "$bundle" "$artifact" "$root"
  m=$(imgtool_verdict "$MINE_RC" "$MINE")
  t=$(python_verdict "$THEIRS_RC" "$THEIRS")
  agree=yes
  [ "$m" = "$t" ] || { agree=NO; disagree+=("$bundle ($root)"); }
  want=verified
  [ "$class" = good ] || want=refused
  [ "$t" = "$want" ] || unexpected+=("$bundle ($root): sigstore-python $t, its tests call it $class")
  shown=$artifact
  [[ $artifact == sha256:* ]] && shown="${artifact:0:24}..."
  rows+=("$(row "$bundle" "$root" "$shown" "$t" "$m" "$agree")")
  if [ "$m" = refused ] || [ "$t" = refused ]; then
    reasons+=("$bundle [$root]" "  imgtool:         $(reason "$MINE")" "  sigstore-python: $(reason "$THEIRS")")
  fi
done

row bundle root artifact sigstore-python imgtool agree
printf '%s\n' "${rows[@]}"
echo "why each refused bundle was refused:"
printf '  %s\n' "${reasons[@]}"
((${#unexpected[@]} == 0)) || fail "sigstore-python's verdicts are not its tests' (wrong root or identity?): ${unexpected[*]}"
((${#disagree[@]} == 0)) || fail "imgtool and sigstore-python 4.5.1 disagree on ${#disagree[@]} bundles: ${disagree[*]}"
pass "all ${#CASES[@]} real-world bundles: imgtool's verdict is sigstore-python 4.5.1's"

# The late timestamp itself (the mixed root): it verifies, and the certificate had expired.
identity_of tsa/bundle.txt.late_timestamp.sigstore
run_both tsa/bundle.txt.late_timestamp.sigstore tsa/bundle.txt staging+pg-ca
assert_contains "$MINE" "certificate at 2025-05-12T19:00:27Z (RFC 3161 timestamp 0)" "imgtool on the late timestamp"
assert_contains "$MINE" "https://fulcio.sigstore.dev: certificate has expired" "imgtool on the late timestamp"
assert_contains "$THEIRS" "not valid at" "sigstore-python on the late timestamp"
pass "a timestamp that verifies but falls after the certificate's notAfter: both refuse, naming the expiry"

# The time policy's flags on the bundle whose two timestamps do not verify under its root.
tsa=(--bundle tsa/bundle.txt.sigstore --trusted-root "$WORK/roots/tsa.json"
  --certificate-identity alexis.challande@trailofbits.com --certificate-oidc-issuer https://accounts.google.com)
expect_exit 0 verify-blob --json "${tsa[@]}" tsa/bundle.txt
assert_eq "$(jq -c '[.times[].source]' <<<"$OUTPUT")" '["rekor integrated time, https://rekor.sigstage.dev #35355462"]' \
  "the Rekor time is the one counted"
expect_exit 5 verify-blob --strict-timestamps "${tsa[@]}" tsa/bundle.txt
assert_contains "$OUTPUT" "timestamp 0: " "--strict-timestamps names the timestamp"
expect_exit 5 verify-blob --timestamp-threshold 2 "${tsa[@]}" tsa/bundle.txt
assert_contains "$OUTPUT" "the timestamp threshold is 2" "--timestamp-threshold 2"
expect_exit 5 verify-blob --use-signed-timestamps "${tsa[@]}" tsa/bundle.txt
assert_contains "$OUTPUT" "the signed timestamp threshold is 1" "--use-signed-timestamps"
expect_exit 2 verify-blob --timestamp-threshold 0 "${tsa[@]}" tsa/bundle.txt
assert_contains "$OUTPUT" "--timestamp-threshold" "a threshold of 0"
pass "failing timestamps skipped beside the Rekor time; --strict-timestamps, --timestamp-threshold 2 and --use-signed-timestamps refuse, 0 is exit 2"

# Rekor v2 bundles prove their time by their (staging) TSA alone: two sources are not there.
v2=(--bundle staging-rekor-v2.txt.sigstore.json --trusted-root "$WORK/roots/staging-current.json"
  --certificate-identity jku@goto.fi --certificate-oidc-issuer https://github.com/login/oauth)
expect_exit 0 verify-blob --use-signed-timestamps --strict-timestamps "${v2[@]}" staging-rekor-v2.txt
expect_exit 5 verify-blob --timestamp-threshold 2 "${v2[@]}" staging-rekor-v2.txt
assert_contains "$OUTPUT" "1 source (0 log integrated times, 1 timestamp authority)" "a Rekor v2 bundle's one time"
pass "a Rekor v2 bundle: its TSA timestamp verifies under --use-signed-timestamps --strict-timestamps; threshold 2 is refused"

# The P-384 bundle by its digest too, and with the file changed by one byte.
p384=(--bundle bundle.txt.sigstore --trusted-root "$WORK/roots/staging-current.json"
  --certificate-identity a@tny.town --certificate-oidc-issuer https://github.com/login/oauth)
expect_exit 0 verify-blob "${p384[@]}" "sha256:$(sha256sum bundle.txt | cut -c1-64)"
cp bundle.txt "$WORK/changed.txt"
flip "$WORK/changed.txt" 5
expect_exit 5 verify-blob "${p384[@]}" "$WORK/changed.txt"
assert_contains "$OUTPUT" "is not the artifact's sha256" "a changed file"
pass "a P-384 key's signature of a sha256 digest: verified by the file and by its digest, a changed byte refused"
