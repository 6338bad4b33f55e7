#!/usr/bin/env bash
# Package URLs, the lock file and --locked: a wheel fetched over http from a server on
# 127.0.0.1 into the download cache and checked against its pin; `imgtool lock` pins every
# input (same bytes from another folder); `build --locked` builds when nothing moved, works
# offline from the download cache, and refuses (exit 4, nothing written) a changed wheel or
# file, naming the input and both digests; a wrong pin or a 404 leaves nothing behind.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/packages_lib.sh"
mkdir -p "$WORK/ctx/debs" "$WORK/ctx/app" "$WORK/srv" && cd "$WORK/ctx"
deb=$(make_deb debs tool 1.0-1)
whl=$(make_wheel "$WORK/srv" nvidia_nccl_cu13 2.28.9 nvidia/nccl)
printf 'weights v1\n' >app/weights.txt

port=$(free_port)
python3 -m http.server --bind 127.0.0.1 --directory "$WORK/srv" "$port" >"$WORK/http.log" 2>&1 &
server=$!
trap 'stop_pid "$server"; cleanup' EXIT
for _ in $(seq 1 100); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done
url="http://127.0.0.1:$port/$(basename "$whl")"

spec() {  # wheel-url wheel-sha
  printf '{"base":"scratch","user":{"name":"t","uid":10001,"gid":10001},"layers":[
    {"name":"pkgs","debs":[{"src":"%s","sha256":"%s","name":"tool","version":"1.0-1"}],
     "wheels":[{"src":"%s","sha256":"%s","name":"nvidia-nccl-cu13","version":"2.28.9","prefix":"/opt/py"}]},
    {"name":"app","files":[{"src":"app","dest":"/opt/app"}]}],"stack":{"nccl":"2.28.9"}}' \
    "${deb#$WORK/ctx/}" "$(sha "$deb")" "$1" "$2"
}
spec "$url" "$(sha "$whl")" >spec.json

expect_exit 0 lock spec.json
[ -f imgtool.lock.json ] || fail "lock file beside the spec"
lock=imgtool.lock.json
assert_eq "$(jq -r '.inputs | map(.kind) | join(",")' $lock)" "deb,wheel,file" "input kinds in spec order"
assert_eq "$(jq -r '.inputs[1] | .name + " " + .version + " " + .sha256 + " " + .source' $lock)" \
  "nvidia-nccl-cu13 2.28.9 sha256:$(sha "$whl") $url" "wheel pinned with its URL"
assert_eq "$(jq -r '.inputs[1].size' $lock)" "$(stat -c %s "$whl")" "wheel size"
assert_eq "$(jq -r '.inputs[2] | .name + " " + .sha256 + " " + .source' $lock)" \
  "/opt/app/weights.txt sha256:$(sha app/weights.txt) app/weights.txt" "file pinned"
[ -f "$IMGTOOL_CACHE/downloads/sha256/$(sha "$whl")" ] || fail "the wheel lands in the download cache by digest"
pass "lock pins the deb, the wheel fetched over http, and the files"

cp -r "$WORK/ctx" "$WORK/ctx2" && rm "$WORK/ctx2/imgtool.lock.json"
(cd "$WORK/ctx2" && umask 077 && TZ=Asia/Tokyo "$IMGTOOL" lock -q spec.json)
cmp "$WORK/ctx2/imgtool.lock.json" $lock || fail "the lock differs when written from another folder"
pass "the same inputs lock to the same bytes from another folder"

expect_exit 0 build spec.json -o "oci:$WORK/img:v1" --locked
assert_contains "$OUTPUT" "every input matches" "--locked says it checked"
digest=$(tail -n1 <<<"$OUTPUT")
expect_exit 0 lock --check spec.json
pass "build --locked builds when nothing moved ($digest)"

stop_pid "$server"
expect_exit 0 build spec.json -o "oci:$WORK/img2:v1" --locked --no-cache -q
assert_eq "$(tail -n1 <<<"$OUTPUT")" "$digest" "offline rebuild digest"
pass "with the server gone the wheel comes from the download cache, same digest"

refused_locked() {  # exit message out: build --locked is refused
  rm -rf "$WORK/$3"
  expect_exit "$1" build spec.json -o "oci:$WORK/$3:v1" --locked -q
  assert_contains "$OUTPUT" "$2" "error text"
  [ ! -e "$WORK/$3" ] && [ ! -e "$WORK/$3.build.json" ] || fail "a refused build left output behind"
}
printf 'weights v2\n' >app/weights.txt
refused_locked 4 "layer app: file /opt/app/weights.txt: sha256 locked 'sha256:$(sha "$WORK/ctx2/app/weights.txt")', now 'sha256:$(sha app/weights.txt)'" out-file
expect_exit 4 lock --check spec.json
cp "$WORK/ctx2/app/weights.txt" app/weights.txt
pass "a changed file is refused by --locked and lock --check, nothing written"

# A changed wheel: a new build of the same name and version, served from a file:// URL.
mkdir -p "$WORK/srv2" && whl2=$(make_wheel "$WORK/srv2" nvidia_nccl_cu13 2.28.9 nvidia/nccl2)
spec "file://$whl2" "$(sha "$whl2")" >spec.json
refused_locked 4 "layer pkgs: wheel nvidia-nccl-cu13: sha256 locked 'sha256:$(sha "$whl")', now 'sha256:$(sha "$whl2")'" out-wheel
pass "--locked refuses a changed wheel, naming both digests"

# The download cache is keyed by digest, so a cached file with the pinned digest would
# serve any URL: this check starts from an empty cache.
spec "file://$whl2" "$(sha "$whl")" >spec.json
rm -rf "$WORK/out"
export IMGTOOL_CACHE="$WORK/cache-fresh"
expect_exit 4 build spec.json -o "oci:$WORK/out:v1" -q
assert_contains "$OUTPUT" "the spec pins sha256:$(sha "$whl") but the download is sha256:$(sha "$whl2")" "pin mismatch"
[ ! -e "$WORK/out" ] || fail "output after a pin mismatch"
pass "a download that does not match its pin is refused: $(tail -n1 <<<"$OUTPUT")"

spec "file://$WORK/srv2/missing.whl" "$(sha "$whl")" >spec.json
expect_exit 6 build spec.json -o "oci:$WORK/out:v1" -q
assert_contains "$OUTPUT" "missing.whl" "missing URL named"
[ ! -e "$WORK/out" ] || fail "output after a failed download"
pass "an unreachable URL names the URL: $(tail -n1 <<<"$OUTPUT")"
