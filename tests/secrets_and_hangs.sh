#!/usr/bin/env bash
# Issue 15, classes 4 and 5, against servers on 127.0.0.1 (tests/fixtures/hostile_registry.py).
# Secrets: credentials go only to the registry's origin (an upload Location and a blob
# redirect on another port get none, and the push and pull still work); a password in a
# package URL fetches the package but appears in no record, lock, SBOM, blob, message or
# --debug line. Hangs: a registry that answers /v2/ and then stalls is given up within
# the configured timeout (exit 6); a FIFO named as --key, --predicate, --policy, a spec,
# an oci-archive or a webhook's --tls-cert is refused at once (exit 2), naming it.
# Issue 24: a stall is never asked again (on a kept-alive connection, or resumed
# mid-blob), so $IMGTOOL_STALL_TIMEOUT is the bound on a stalled transfer: the server sees
# the stalled request once.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/packages_lib.sh"
export HOME="$WORK/home"
mkdir -p "$HOME"
unset REGISTRY_AUTH_FILE DOCKER_CONFIG XDG_RUNTIME_DIR

SERVERS=()
stop_servers() {
  local p
  for p in "${SERVERS[@]}"; do stop_pid "$p"; done
}
trap 'stop_servers; cleanup' EXIT
# start_server NAME MODE [ARGS]: sets PORT (the main origin; the fixture finds its second itself);
# every request it gets is logged to $WORK/NAME.log.
start_server() {
  local name=$1
  shift
  python3 "$REPO/tests/fixtures/hostile_registry.py" "$1" "$WORK/$name.ports" "$WORK/$name.log" "${@:2}" \
    2>"$WORK/$name.err" &
  SERVERS+=($!)
  for _ in $(seq 1 100); do [ -s "$WORK/$name.ports" ] && break; sleep 0.1; done
  [ -s "$WORK/$name.ports" ] || fail "$name did not start: $(cat "$WORK/$name.err")"
  read -r PORT _ <"$WORK/$name.ports"
}
# Runs imgtool (under `timeout`, so a hang fails instead of stalling the suite) expecting
# exit $1; leaves the output in $OUTPUT and the wall time in $SECS.
timed() {
  local want=$1 start=$EPOCHREALTIME got=0
  shift
  OUTPUT=$(timeout 120 "$IMGTOOL" "$@" 2>&1) || got=$?
  SECS=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
  [ "$got" = "$want" ] || fail "imgtool $* exited $got after ${SECS}s, want $want: $OUTPUT"
}
# saw_auth ROLE LOG: whether any request to that server carried an Authorization header.
saw_auth() { jq -se --arg r "$1" 'map(select(.role == $r) | .headers | has("Authorization")) | any' "$2" >/dev/null; }
under() { awk -v s="$1" -v max="$2" 'BEGIN { exit !(s < max) }' || fail "$3 took ${1}s (limit ${2}s)"; }

make_context "$WORK/ctx"
"$IMGTOOL" build "$WORK/ctx/spec.json" -o "oci:$WORK/img:v1" -q >/dev/null

# ---- hangs: a registry that stalls after /v2/ ----
start_server stall stall
# The stall bound above the request bound: with both at 3 s either may fire first.
export IMGTOOL_CONNECT_TIMEOUT=3 IMGTOOL_STALL_TIMEOUT=10 IMGTOOL_REQUEST_TIMEOUT=3
R="docker://127.0.0.1:$PORT/team/img:v1"
for args in "inspect $R" "pull $R oci:$WORK/pulled:v1" "push oci:$WORK/img:v1 $R"; do
  # shellcheck disable=SC2086
  timed 6 $args
  under "$SECS" 8 "${args%% *} against a stalled registry"
  assert_contains "$OUTPUT" "within 3 s (\$IMGTOOL_REQUEST_TIMEOUT)" "${args%% *} names the bound"
  pass "${args%% *}: exit 6 after ${SECS}s: $(tail -n1 <<<"$OUTPUT")"
done
IMGTOOL_REQUEST_TIMEOUT=soon timed 2 inspect "$R"
assert_contains "$OUTPUT" "\$IMGTOOL_REQUEST_TIMEOUT=soon: want whole seconds from 1 to 86400" "a bad value"

# requests LOG PATTERN: how many requests the server logged whose line matches PATTERN.
requests() { jq -r .line "$1" | grep -c -- "$2" || true; }
export IMGTOOL_STALL_TIMEOUT=2 IMGTOOL_REQUEST_TIMEOUT=120
start_server keepalive stall-keepalive
timed 6 inspect "docker://127.0.0.1:$PORT/team/img:v1"
assert_contains "$OUTPUT" "stalled: less than 1024 bytes/s for 2 s (\$IMGTOOL_STALL_TIMEOUT)" "inspect names the stall bound"
assert_eq "$(requests "$WORK/keepalive.log" '^GET /v2/team/img/manifests/v1')" 1 \
  "the manifest request stalled on a kept-alive connection is not sent again"
pass "inspect, a manifest request stalled on a kept-alive connection: exit 6 after ${SECS}s (bound 2 s), asked once"
start_server stallblob stall-blob
layer=$(python3 -c 'import json, sys, urllib.request
print(json.load(urllib.request.urlopen(sys.argv[1]))["layers"][0]["digest"])' \
  "http://127.0.0.1:$PORT/v2/team/img/manifests/v1")
timed 6 pull "docker://127.0.0.1:$PORT/team/img:v1" "oci:$WORK/stalled:v1"
assert_contains "$OUTPUT" "pulling blob $layer: GET " "pull names the stalled blob"
assert_contains "$OUTPUT" "stalled: less than 1024 bytes/s for 2 s (\$IMGTOOL_STALL_TIMEOUT)" "pull names the stall bound"
assert_eq "$(requests "$WORK/stallblob.log" "^GET /v2/team/img/blobs/$layer")" 1 \
  "the layer stalled half-way is not resumed"
pass "pull, a layer that stalls half-way: exit 6 after ${SECS}s (bound 2 s), asked once, not resumed"
unset IMGTOOL_CONNECT_TIMEOUT IMGTOOL_STALL_TIMEOUT IMGTOOL_REQUEST_TIMEOUT
grep -q 'IMGTOOL_STALL_TIMEOUT' <<<"$("$IMGTOOL" inspect --help)" || fail "inspect --help does not say the timeouts"
pass "a malformed timeout is exit 2; --help says the variables"

# ---- hangs: FIFOs where a user names a file ----
export COSIGN_PASSWORD=test-only-password
(cd "$WORK" && "$IMGTOOL" keygen --output-key-prefix good 2>/dev/null)
mkfifo "$WORK/key.fifo" "$WORK/in.fifo"
refused_fifo() {  # FIFO imgtool-args...: exit 2 within a second, naming the FIFO
  local fifo=$1
  shift
  timed 2 "$@"
  under "$SECS" 1 "imgtool $1 with a FIFO"
  assert_contains "$OUTPUT" "$fifo: a FIFO, not a regular file" "imgtool $1 names the FIFO"
  pass "$1 ${2:-}: exit 2 in ${SECS}s: $(tail -n1 <<<"$OUTPUT")"
}
refused_fifo "$WORK/key.fifo" sign --key "$WORK/key.fifo" "oci:$WORK/img:v1"
refused_fifo "$WORK/key.fifo" verify --key "$WORK/key.fifo" "oci:$WORK/img:v1"
refused_fifo "$WORK/in.fifo" attest --key "$WORK/good.key" --predicate "$WORK/in.fifo" "oci:$WORK/img:v1"
refused_fifo "$WORK/in.fifo" policy check --policy "$WORK/in.fifo" "oci:$WORK/img:v1"
refused_fifo "$WORK/in.fifo" build "$WORK/in.fifo" -o "oci:$WORK/never:v1"
refused_fifo "$WORK/in.fifo" inspect "oci-archive:$WORK/in.fifo"
refused_fifo "$WORK/in.fifo" admission serve --policy "$REPO/policies/golden.json" --tls-cert "$WORK/in.fifo" \
  --tls-key "$WORK/in.fifo" --listen 127.0.0.1:0
mkfifo "$WORK/taken.key"
timed 2 keygen --output-key-prefix "$WORK/taken"
under "$SECS" 1 "keygen onto a FIFO"
assert_contains "$OUTPUT" "$WORK/taken.key: exists" "keygen names the FIFO in its way"
pass "keygen onto a FIFO: exit 2 in ${SECS}s, the FIFO untouched"

# ---- secrets: a password in package URLs ----
USERINFO="pkguser:Hunter2-pkg-secret"
SECRET="Hunter2-pkg-secret"
mkdir -p "$WORK/srv" "$WORK/pctx"
deb=$(make_deb "$WORK/srv" tool 1.0-1)
whl=$(make_wheel "$WORK/srv" nvidia_nccl_cu13 2.28.9 nvidia/nccl)
start_server files files "$WORK/srv" pkguser "$SECRET"
deb_url="http://127.0.0.1:$PORT/$(basename "$deb")"
whl_url="http://127.0.0.1:$PORT/elsewhere/$(basename "$whl")"  # redirected to another port
spec() {  # DEB_URL WHEEL_URL
  printf '{"base":"scratch","user":{"name":"t","uid":10001,"gid":10001},"layers":[
    {"name":"pkgs","debs":[{"src":"%s","sha256":"%s","name":"tool","version":"1.0-1"}],
     "wheels":[{"src":"%s","sha256":"%s","name":"nvidia-nccl-cu13","version":"2.28.9","prefix":"/opt/py"}]}]}' \
    "$1" "$(sha "$deb")" "$2" "$(sha "$whl")"
}
with_creds() { echo "${1/#http:\/\//http://$USERINFO@}"; }
spec "$(with_creds "$deb_url")" "$(with_creds "$whl_url")" >"$WORK/pctx/spec.json"
cd "$WORK/pctx"
timed 0 lock spec.json
lock_out=$OUTPUT
assert_eq "$(jq -r '.inputs | map(.source) | join(" ")' imgtool.lock.json)" "$deb_url $whl_url" "sources in the lock"
timed 0 build spec.json -o "oci:$WORK/pkgimg:v1" --locked --debug
build_out=$OUTPUT
assert_eq "$(jq -r '.packages[] | select(.name == "tool") | .downloadLocation' "$WORK/pkgimg.spdx.json")" \
  "$deb_url" "downloadLocation in the SBOM"
jq -se --arg a "Basic $(printf '%s' "$USERINFO" | base64)" 'map(.headers.Authorization == $a) | any' \
  "$WORK/files.log" >/dev/null || fail "the download did not use the URL's credentials"
grep -rlF -e "$SECRET" -e "$USERINFO" imgtool.lock.json "$WORK/pkgimg.build.json" "$WORK/pkgimg.spdx.json" "$WORK/pkgimg.provenance.json" \
  "$WORK/pkgimg" && fail "a record or a blob holds the password"
grep -F -e "$SECRET" -e "pkguser" <<<"$lock_out$build_out" && fail "stdout/stderr or --debug holds the credentials"
saw_auth storage "$WORK/files.log" &&
  fail "the URL's credentials followed a redirect to another port"
pass "package URLs with user:pass@: fetched with them; the lock, build record, SBOM, layout and output hold none"

spec "${deb_url/#http:\/\//http://pkguser:wrong@}" "$(with_creds "$whl_url")" >spec.json
rm -rf "$IMGTOOL_CACHE/downloads"
timed 6 build spec.json -o "oci:$WORK/never2:v1"
assert_contains "$OUTPUT" "fetching $deb_url: " "the failed URL is named without its userinfo"
grep -qF -e wrong -e pkguser <<<"$OUTPUT" && fail "the error shows the credentials: $OUTPUT"
pass "a refused download names the URL without credentials: $(tail -n1 <<<"$OUTPUT")"
cd "$WORK"

# ---- secrets: upload Location and blob redirects on another origin ----
start_server split split
R="docker://127.0.0.1:$PORT/team/img:v1"
timed 0 push --debug --creds alice:s3cret "oci:$WORK/img:v1" "$R"
push_out=$OUTPUT
timed 0 pull -q --creds alice:s3cret "$R" "oci:$WORK/back:v1"
"$IMGTOOL" verify "oci:$WORK/back:v1" >/dev/null
saw_auth main "$WORK/split.log" ||
  fail "the registry never got credentials"
uploads=$(jq -r 'select(.role == "storage") | .line' "$WORK/split.log" | grep -c '^PUT /upload/' || true)
[ "$uploads" -ge 2 ] || fail "the uploads did not go to the other origin: $(cat "$WORK/split.log")"
gets=$(jq -r 'select(.role == "storage") | .line' "$WORK/split.log" | grep -c '^GET /blobs/' || true)
[ "$gets" -ge 2 ] || fail "the pull did not follow the blob redirects: $(cat "$WORK/split.log")"
saw_auth storage "$WORK/split.log" &&
  fail "the other origin saw an Authorization header: $(grep storage "$WORK/split.log" | head -3)"
grep -F -e s3cret -e "$(printf alice:s3cret | base64)" <<<"$push_out" && fail "--debug shows the password"
pass "push + pull with --creds: $uploads uploads and $gets blob GETs on another origin, none with Authorization"
