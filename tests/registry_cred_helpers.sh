#!/usr/bin/env bash
# Docker credential helpers against docker-registry with htpasswd auth (alice / s3cret).
# docker-credential-imgtooltest, first on PATH, keeps credentials in files and logs every
# call (verb + stdin, the secret masked). Push and pull with credentials only from the
# helper (credsStore); credHelpers for the host wins over credsStore; "not found" is
# anonymous; `login` calls `store`, `logout` calls `erase`; a failing, a missing and a
# hanging helper (killed at $IMGTOOL_CREDENTIAL_HELPER_TIMEOUT) fail naming the helper;
# no secret in stderr or --debug output.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/registry_lib.sh"

BIN="$WORK/bin" KEYS="$WORK/keys" CALLS="$WORK/helper-calls.log" ERRS="$WORK/stderr"
mkdir -p "$BIN" "$KEYS" "$ERRS" "$HOME/.docker"
export PATH="$BIN:$PATH"
: >"$CALLS"

cat >"$BIN/docker-credential-imgtooltest" <<SH
#!/bin/sh
# One file per server under $KEYS, holding the JSON that \`store\` was given.
in=\$(cat)
printf '%s %s\n' "\$1" "\$(printf '%s' "\$in" | sed 's/"Secret":"[^"]*"/"Secret":"***"/')" >>"$CALLS"
server=\$in
[ "\$1" = store ] && server=\$(printf '%s' "\$in" | jq -r .ServerURL)
f="$KEYS/\$(printf '%s' "\$server" | tr -c 'A-Za-z0-9' _)"
case "\$1" in
  store) printf '%s' "\$in" >"\$f" ;;
  get|erase)
    [ -f "\$f" ] || { echo "credentials not found in native keychain"; exit 1; }
    if [ "\$1" = get ]; then cat "\$f"; else rm "\$f"; fi ;;
  *) echo "unknown verb \$1"; exit 1 ;;
esac
SH
printf '#!/bin/sh\necho "vault is sealed"\nexit 1\n' >"$BIN/docker-credential-imgtoolfail"
printf '#!/bin/sh\necho $$ >"%s"\nexec sleep 60\n' "$WORK/hang.pid" >"$BIN/docker-credential-imgtoolhang"
chmod 755 "$BIN"/docker-credential-*

config() { printf '%s\n' "$1" >"$HOME/.docker/config.json"; }
keep_alice() {  # what `store` would keep for the registry
  printf '{"ServerURL":"%s","Username":"alice","Secret":"s3cret"}' "$REG_HOST" \
    >"$KEYS/$(printf '%s' "$REG_HOST" | tr -c 'A-Za-z0-9' _)"
}
# Everything imgtool prints to stderr is kept for the secret check at the end.
run() { "$IMGTOOL" "$@" 2>>"$ERRS/run.log"; }
expect() {  # EXIT ARGS...: expect_exit, keeping $OUTPUT
  expect_exit "$@"
  printf '%s\n' "$OUTPUT" >>"$ERRS/run.log"
}

start_registry htpasswd
R="docker://$REG_HOST"
digest=$(make_image "oci:$WORK/img:v1" 16 64)

config '{"credsStore": "imgtooltest"}'
expect 5 push -q "oci:$WORK/img:v1" "$R/team/img:v1"
assert_contains "$OUTPUT" "401" "not found in the helper: anonymous"
assert_contains "$(cat "$CALLS")" "get $REG_HOST" "the helper is asked for the registry"
keep_alice
assert_eq "$(run push -q "oci:$WORK/img:v1" "$R/team/img:v1")" "$digest" "push with credsStore"
run pull -q "$R/team/img:v1" "oci:$WORK/back:v1" >/dev/null
run verify "oci:$WORK/back:v1" >/dev/null
pass "credsStore: \"not found\" is anonymous (401); push and pull with the helper's credentials"

config "{\"credsStore\": \"imgtoolfail\", \"credHelpers\": {\"$REG_HOST\": \"imgtooltest\"}}"
assert_eq "$(run resolve "$R/team/img:v1")" "$digest" "resolve with credHelpers over a failing credsStore"
config '{"credsStore": "imgtoolfail", "credHelpers": {"other.example:5000": "imgtooltest"}}'
expect 6 resolve "$R/team/img:v1"
assert_contains "$OUTPUT" "credentials for $REG_HOST (credsStore in $HOME/.docker/config.json): docker-credential-imgtoolfail get: exit status 1: vault is sealed" \
  "a failing helper is named with the registry"
pass "credHelpers for the host wins over credsStore; a failing helper: $(tail -n1 <<<"$OUTPUT")"

config '{"credsStore": "imgtoolnothere"}'
expect 3 resolve "$R/team/img:v1"
assert_contains "$OUTPUT" "docker-credential-imgtoolnothere get: not found in \$PATH" "a missing helper"
export IMGTOOL_CREDENTIAL_HELPER_TIMEOUT=2
config '{"credsStore": "imgtoolhang"}'
start=$(date +%s)
expect 6 resolve "$R/team/img:v1"
took=$(($(date +%s) - start))
unset IMGTOOL_CREDENTIAL_HELPER_TIMEOUT
assert_contains "$OUTPUT" "docker-credential-imgtoolhang get: no answer within 2 s (killed)" "a hanging helper"
[ "$took" -lt 10 ] || fail "the hanging helper was given ${took}s"
! kill -0 "$(cat "$WORK/hang.pid")" 2>/dev/null || fail "the hanging helper is still running"
pass "a missing helper (exit 3) and a hanging one (killed after ${took}s, exit 6) are named"

rm -f "$KEYS"/*
: >"$CALLS"
config "{\"auths\": {}, \"credHelpers\": {\"$REG_HOST\": \"imgtooltest\"}}"
echo s3cret | run login "$REG_HOST" -u alice --password-stdin >"$WORK/login.out"
assert_contains "$(cat "$WORK/login.out")" "in docker-credential-imgtooltest" "login names the helper"
assert_eq "$(cat "$CALLS")" "store {\"Secret\":\"***\",\"ServerURL\":\"$REG_HOST\",\"Username\":\"alice\"}" \
  "login calls store with the JSON"
if grep -q s3cret "$HOME/.docker/config.json"; then fail "login wrote the secret into config.json"; fi
assert_eq "$(run resolve "$R/team/img:v1")" "$digest" "resolve with what login stored"
run logout "$REG_HOST" >/dev/null
assert_eq "$(tail -n1 "$CALLS")" "erase $REG_HOST" "logout calls erase"
expect 5 resolve "$R/team/img:v1"
expect 3 logout "$REG_HOST"
assert_contains "$OUTPUT" "not logged in to $REG_HOST" "a second logout"
pass "login stores through the helper (config.json keeps no secret), logout erases"

keep_alice
config '{"credsStore": "imgtooltest"}'
dbg=$("$IMGTOOL" push --debug "oci:$WORK/img:v1" "$R/team/img:v2" 2>&1)
assert_contains "$dbg" "credentials for $REG_HOST: docker-credential-imgtooltest" "--debug names the source"
assert_contains "$dbg" "Authorization: <redacted>" "--debug shows that a header was sent"
auth=$(printf 'alice:s3cret' | base64)
for out in "$dbg" "$(cat "$ERRS/run.log")"; do
  if grep -qe s3cret -e "$auth" <<<"$out"; then fail "a secret reached stderr or --debug: $out"; fi
done
pass "no secret in stderr or --debug output"
