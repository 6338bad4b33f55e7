#!/usr/bin/env bash
# Docker credential helpers against docker-registry with htpasswd auth (alice / s3cret).
# docker-credential-imgtooltest, first on PATH, keeps credentials in files and logs every
# call (verb + stdin, the secret masked). Push and pull with credentials only from the
# helper (credsStore); credHelpers for the host wins over credsStore; "not found" is
# anonymous; `login` calls `store`, `logout` calls `erase`; a failing, a missing and a
# hanging helper (killed at $IMGTOOL_CREDENTIAL_HELPER_TIMEOUT) fail naming the helper;
# no secret in stderr or --debug output. Issue 24 (class 7): a helper that prints its
# answer and fails (secret on stdout or stderr) leaks nothing, with --debug too; a
# 5,000-character helper name and one with control characters are invalid input (exit 2),
# escaped; a helper's background child does not outlive it, nor imgtool ended by SIGTERM.
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
printf '#!/bin/sh\necho "vault is sealed" >&2\nexit 1\n' >"$BIN/docker-credential-imgtoolfail"
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

# ---- issue 24: a helper that prints its answer and then fails ----
LEAK="leaked-Hunter2-secret"
answer="{\"ServerURL\":\"$REG_HOST\",\"Username\":\"alice\",\"Secret\":\"$LEAK\"}"
for to in "" ">&2"; do
  cat >"$BIN/docker-credential-imgtoolleak${to:+err}" <<SH
#!/bin/sh
cat >/dev/null
echo '$answer' $to
exit 1
SH
done
chmod 755 "$BIN"/docker-credential-imgtoolleak*
for helper in imgtoolleak imgtoolleakerr; do
  config "{\"credsStore\": \"$helper\"}"
  for debug in "" --debug; do
    # shellcheck disable=SC2086
    expect 6 resolve $debug "$R/team/img:v1"
    assert_contains "$OUTPUT" "docker-credential-$helper get: exit status 1" "the failing helper is named"
    if grep -qF "$LEAK" <<<"$OUTPUT"; then fail "$helper ${debug:-}: the secret is in the output: $OUTPUT"; fi
  done
  expect 6 logout "$REG_HOST"
  if grep -qF "$LEAK" <<<"$OUTPUT"; then fail "$helper logout: the secret is in the output: $OUTPUT"; fi
done
pass "a helper that prints its answer (stdout or stderr) and exits 1: named, the secret nowhere, --debug too"

# ---- issue 24: helper names from the auth file are checked before anything runs ----
long=$(head -c 5000 /dev/zero | tr '\0' a)
config "{\"credsStore\": \"$long\"}"
expect 2 resolve "$R/team/img:v1"
assert_contains "$OUTPUT" "credsStore: credential helper \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"... (5000 characters): want 1 to 128 letters" \
  "a 5,000-character helper name"
expect 2 logout "$REG_HOST"
expect 2 login "$REG_HOST" -u alice -p s3cret
config "{\"credHelpers\": {\"$REG_HOST\": \"x\\nimgtool: OK\\u001b[2J\\r\"}}"
expect 2 resolve "$R/team/img:v1"
assert_eq "$(wc -l <<<"$OUTPUT")" 1 "a helper name with a newline stays on one line"
assert_contains "$OUTPUT" 'credential helper "x\nimgtool: OK\x1b[2J\r"' "the name is escaped"
if grep -q $'[\x1b\r]' <<<"$OUTPUT"; then fail "a control character reached the terminal: $OUTPUT"; fi
pass "helper names: 5,000 characters and control characters are exit 2, escaped: $(cut -c1-100 <<<"$OUTPUT")..."

# ---- issue 24: a helper's background child ----
# group_alive PGID: whether any process of that group is alive (zombies are not).
group_alive() {
  local f line rest
  for f in /proc/[0-9]*/stat; do
    read -r line <"$f" 2>/dev/null || continue
    rest=${line##*) }  # after "pid (comm) ": state ppid pgrp ...
    read -r -a fields <<<"$rest"
    [[ ${fields[2]} == "$1" && ${fields[0]} != Z ]] && return 0
  done
  return 1
}
# group_gone PGID: no process of it alive within 5 s (one sent SIGKILL may take a moment
# to leave, state R, while the kernel tears it down; it runs no code of its own).
group_gone() {
  for _ in $(seq 1 50); do
    group_alive "$1" || return 0
    sleep 0.1
  done
  return 1
}
cat >"$BIN/docker-credential-imgtoolbg" <<SH
#!/bin/sh
cat >/dev/null
awk '{print \$5}' /proc/\$\$/stat >"$WORK/bg.pgid"
sleep 300 &
[ -n "\$BG_HANG" ] && exec sleep 300
printf '{"ServerURL":"%s","Username":"alice","Secret":"s3cret"}' "$REG_HOST"
SH
chmod 755 "$BIN/docker-credential-imgtoolbg"
config '{"credsStore": "imgtoolbg"}'
export IMGTOOL_CREDENTIAL_HELPER_TIMEOUT=30
assert_eq "$(run resolve "$R/team/img:v1")" "$digest" "resolve with a helper that leaves a child behind"
pgid=$(cat "$WORK/bg.pgid")
read -r line </proc/$$/stat
read -r -a fields <<<"${line##*) }"
[[ $pgid != "${fields[2]}" ]] || fail "the helper ran in the test's own process group"
group_gone "$pgid" || fail "a process of the helper's group $pgid outlived imgtool: $(pgrep -a -g "$pgid")"
pass "a helper that forks 'sleep 300 &': answered, and nothing of its group $pgid is alive after imgtool returns"

rm -f "$WORK/bg.pgid"
BG_HANG=1 "$IMGTOOL" resolve "$R/team/img:v1" >/dev/null 2>&1 &
imgtool_pid=$!
for _ in $(seq 1 100); do [ -s "$WORK/bg.pgid" ] && break; sleep 0.1; done
[ -s "$WORK/bg.pgid" ] || fail "the hanging helper never started"
pgid=$(cat "$WORK/bg.pgid")
kill -TERM "$imgtool_pid"
rc=0
wait "$imgtool_pid" || rc=$?
unset IMGTOOL_CREDENTIAL_HELPER_TIMEOUT
assert_eq "$rc" 143 "imgtool ended by SIGTERM"
group_gone "$pgid" || fail "imgtool ended by SIGTERM left the helper's group $pgid alive: $(pgrep -a -g "$pgid")"
pass "imgtool ended by SIGTERM while a helper runs: the helper's group $pgid is killed too"
