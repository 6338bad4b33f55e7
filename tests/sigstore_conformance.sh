#!/usr/bin/env bash
# The sigstore-conformance suite's offline bundle-verify cases (tests/fixtures/sigstore/
# conformance, from github.com/sigstore/sigstore-conformance test/assets/bundle-verify)
# through tests/sigstore/conformance, exactly as the suite drives a client: a case whose
# folder ends in _fail must be refused, every other must verify.
source "$(dirname "$0")/lib.sh"
cases=$REPO/tests/fixtures/sigstore/conformance
default_root=$REPO/tests/fixtures/sigstore/trusted-roots/public-good/trusted_root.json
default_identity='https://github.com/sigstore-conformance/extremely-dangerous-public-oidc-beacon/.github/workflows/extremely-dangerous-oidc-beacon.yml@refs/heads/main'
default_issuer='https://token.actions.githubusercontent.com'

# One case through the entrypoint; sets OUT and RC (a function: lib.sh's ERR trap does not
# fire inside one, and a refusal is an expected outcome here).
run_case() {
  set +e
  OUT=$(IMGTOOL=$IMGTOOL "$REPO/tests/sigstore/conformance" "$@" 2>&1)
  RC=$?
  set -e
}

right=0 total=0 wrong=()
for dir in "$cases"/*/; do
  name=$(basename "$dir")
  args=(verify-bundle --bundle "$dir/bundle.sigstore.json")
  if [ -f "$dir/key.pub" ]; then
    args+=(--key "$dir/key.pub")
  else
    identity=$default_identity issuer=$default_issuer
    [ -f "$dir/identity" ] && identity=$(cat "$dir/identity")
    [ -f "$dir/issuer" ] && issuer=$(cat "$dir/issuer")
    args+=(--certificate-identity "$identity" --certificate-oidc-issuer "$issuer")
  fi
  root=$default_root
  [ -f "$dir/trusted_root.json" ] && root=$dir/trusted_root.json
  args+=(--trusted-root "$root")
  artifact=$cases/a.txt
  [ -f "$dir/artifact" ] && artifact=$dir/artifact
  run_case "${args[@]}" "$artifact"
  out=$OUT rc=$RC
  want=verify
  [[ $name == *_fail ]] && want=refuse
  got=verify
  ((rc == 0)) || got=refuse
  total=$((total + 1))
  if [ "$got" = "$want" ]; then
    right=$((right + 1))
    echo "ok: $name ($want)${out:+: ${out##*error: }}" | head -c 300; echo
  else
    wrong+=("$name")
    echo "WRONG: $name: want $want, got $got (exit $rc): $out"
  fi
done
printf '%-28s %8s %8s\n' "sigstore-conformance" passed expected
printf '%-28s %8s %8s\n' "bundle-verify (offline)" "$right" "$total"
((${#wrong[@]} == 0)) || fail "${#wrong[@]} cases wrong: ${wrong[*]}"
pass "all $total conformance cases as the suite expects"

# verify-blob's own surface: --json, a digest for the file, the built-in public-good root.
happy=$cases/happy-path-v0.3
out=$("$IMGTOOL" verify-blob --json --bundle "$happy/bundle.sigstore.json" --certificate-identity "$default_identity" \
  --certificate-oidc-issuer "$default_issuer" "sha256:$(sha256sum "$cases/a.txt" | cut -c1-64)")
assert_eq "$(jq -c '[.verified, .signer, .issuer, .times[0].time, (.logEntries | length)]' <<<"$out")" \
  "[true,\"$default_identity\",\"$default_issuer\",\"2024-03-19T17:26:26Z\",1]" "--json of a verified bundle"
expect_exit 5 verify-blob --json --bundle "$happy/bundle.sigstore.json" --certificate-identity someone@example.com \
  --certificate-oidc-issuer "$default_issuer" "$cases/a.txt"
assert_eq "$(jq -r .verified <<<"$OUTPUT")" false "--json of a refusal"
assert_contains "$(jq -r .error <<<"$OUTPUT")" "want 'someone@example.com'" "--json names the reason"
expect_exit 2 verify-blob --bundle "$happy/bundle.sigstore.json" "$cases/a.txt"
assert_contains "$OUTPUT" "needs one of --certificate-identity" "no identity given"
pass "verify-blob: --json (verified and refused), sha256:HEX for the file, the built-in root, usage errors exit 2"
