#!/usr/bin/env bash
# Auth against real registries: htpasswd (basic, bcrypt) and token (bearer, via
# tests/registry_token_server.py). No credentials or a wrong password: a clear 401
# and exit 5; --creds, and config.json written by `imgtool login` (mode 0600): success.
# No secret appears in --debug output.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/registry_lib.sh"

for flavour in htpasswd token; do
  start_registry "$flavour"
  R="docker://$REG_HOST"
  digest=$(make_image "oci:$WORK/img-$flavour:v1" 16 64)

  expect_exit 5 push -q "oci:$WORK/img-$flavour:v1" "$R/team/img:v1"
  assert_contains "$OUTPUT" "401" "anonymous push ($flavour)"
  expect_exit 5 push -q --creds alice:wrong "oci:$WORK/img-$flavour:v1" "$R/team/img:v1"
  assert_contains "$OUTPUT" "pushing blob sha256:" "wrong password names the blob ($flavour)"
  assert_contains "$OUTPUT" "401 UNAUTHORIZED" "wrong password says 401 UNAUTHORIZED ($flavour)"
  pass "$flavour: anonymous and wrong password fail with a clear 401: $(tail -n1 <<<"$OUTPUT")"

  assert_eq "$("$IMGTOOL" push -q --creds alice:s3cret "oci:$WORK/img-$flavour:v1" "$R/team/img:v1")" "$digest" \
    "push with --creds ($flavour)"
  expect_exit 5 login "$REG_HOST" -u alice -p wrong
  [ ! -e "$HOME/.docker/config.json" ] || fail "a failed login wrote config.json"
  echo s3cret | "$IMGTOOL" login "$REG_HOST" -u alice --password-stdin >/dev/null
  assert_eq "$(stat -c %a "$HOME/.docker/config.json")" "600" "config.json mode"
  auth=$(jq -r --arg h "$REG_HOST" '.auths[$h].auth' "$HOME/.docker/config.json")
  assert_eq "$(base64 -d <<<"$auth")" "alice:s3cret" "auths form in config.json"
  "$IMGTOOL" pull -q "$R/team/img:v1" "oci:$WORK/back-$flavour:v1" >/dev/null
  "$IMGTOOL" verify "oci:$WORK/back-$flavour:v1" >/dev/null
  assert_eq "$("$IMGTOOL" resolve "$R/team/img:v1")" "$digest" "resolve with config.json ($flavour)"
  pass "$flavour: --creds works; login writes config.json (0600, auths form); pull uses it"

  dbg=$("$IMGTOOL" push --debug "oci:$WORK/img-$flavour:v1" "$R/team/img:v2" 2>&1)
  assert_contains "$dbg" "Authorization: <redacted>" "--debug shows that a header was sent"
  if grep -qe "s3cret" -e "$auth" <<<"$dbg"; then fail "--debug output contains the secret"; fi
  if grep -q "Bearer ey" <<<"$dbg"; then fail "--debug output contains a token"; fi
  # The same file through $REGISTRY_AUTH_FILE and --authfile.
  mv "$HOME/.docker/config.json" "$WORK/auth-$flavour.json"
  REGISTRY_AUTH_FILE="$WORK/auth-$flavour.json" "$IMGTOOL" resolve "$R/team/img:v2" >/dev/null
  "$IMGTOOL" resolve --authfile "$WORK/auth-$flavour.json" "$R/team/img:v2" >/dev/null
  expect_exit 5 resolve "$R/team/img:v2"
  pass "$flavour: no secret in --debug; \$REGISTRY_AUTH_FILE and --authfile are read"
  stop_registries
done
