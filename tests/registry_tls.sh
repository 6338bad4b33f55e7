#!/usr/bin/env bash
# A registry with a self-signed certificate: refused without its CA (exit 6, the
# message says why and what to pass), accepted with --cert-dir (containers' certs.d
# layout) or when --tls-verify=false is asked for; skopeo pulls what we pushed.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/registry_lib.sh"
start_registry tls
R="docker://$REG_HOST"
digest=$(make_image "oci:$WORK/img:v1" 16 256)

expect_exit 6 push -q "oci:$WORK/img:v1" "$R/team/img:v1"
assert_contains "$OUTPUT" "--cert-dir" "the error names the fix"
pass "TLS without the CA fails: $(tail -n1 <<<"$OUTPUT")"

mkdir -p "$WORK/certs.d"
cp "$REG_DIR/certs/ca.crt" "$WORK/certs.d/ca.crt"
assert_eq "$("$IMGTOOL" push -q --cert-dir "$WORK/certs.d" "oci:$WORK/img:v1" "$R/team/img:v1")" "$digest" \
  "push with --cert-dir"
"$IMGTOOL" pull -q --cert-dir "$WORK/certs.d" "$R/team/img:v1" "oci:$WORK/back:v1" >/dev/null
"$IMGTOOL" verify "oci:$WORK/back:v1" >/dev/null
assert_eq "$(skopeo inspect --cert-dir "$WORK/certs.d" "$R/team/img:v1" | jq -r .Digest)" "$digest" "skopeo over TLS"
pass "--cert-dir DIR/ca.crt: push, pull and verify over TLS; skopeo agrees on the digest"

assert_eq "$("$IMGTOOL" resolve --tls-verify=false "$R/team/img:v1")" "$digest" "resolve with --tls-verify=false"
pass "--tls-verify=false connects without the CA when asked"
