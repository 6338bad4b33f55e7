#!/usr/bin/env bash
# Hostile and broken specs get a clear error naming the problem, a non-zero exit, and
# leave no output behind; a failed build never damages an existing layout.
source "$(dirname "$0")/lib.sh"
make_context "$WORK/ctx"
cd "$WORK/ctx"

# expect_refused EXIT "message" SPEC_JSON
expect_refused() {
  local want=$1 msg=$2
  printf '%s' "$3" >bad.json
  rm -rf "$WORK/out"
  expect_exit "$want" build bad.json -o "oci:$WORK/out:v1" -q
  assert_contains "$OUTPUT" "$msg" "error text"
  [ ! -e "$WORK/out" ] || fail "a refused build left $WORK/out behind"
  [ ! -e "$WORK/out.build.json" ] || fail "a refused build left a build record behind"
  pass "refused ($want): $(tail -n1 <<<"$OUTPUT")"
}
spec() {  # layers-json [user-json]
  printf '{"base":"scratch","user":%s,"layers":%s}' "${2:-{\"name\":\"t\",\"uid\":10001,\"gid\":10001\}}" "$1"
}

expect_refused 2 "\$.layers[0].files[0].src: '../outside' escapes the layer root with '..'" \
  "$(spec '[{"files":[{"src":"../outside","dest":"/x"}]}]')"
mkdir -p "$WORK/secret" && echo s >"$WORK/secret/key" && ln -s "$WORK/secret" escape
expect_refused 2 "resolves to $WORK/secret, outside the layer root $WORK/ctx (through a symlink)" \
  "$(spec '[{"files":[{"src":"escape/key","dest":"/x"}]}]')"
ln -s /etc etc-link
expect_refused 2 "resolves to /etc, outside the layer root" "$(spec '[{"files":[{"src":"etc-link/passwd","dest":"/x"}]}]')"
expect_refused 2 "\$.layers[0].files[0].src: '/etc/passwd' must be relative to the layer root" \
  "$(spec '[{"files":[{"src":"/etc/passwd","dest":"/x"}]}]')"
expect_refused 2 "\$.user.uid: 0 is root; imgtool images always run as a non-root user" \
  "$(spec '[{"files":[{"src":"config.txt","dest":"/x"}]}]' '{"name":"r","uid":0,"gid":10001}')"
# Issue 24: what goes into /etc/passwd must read alike to glibc, musl and runc/containerd.
expect_refused 2 "\$.user.name: '-t' is not a valid user name: a leading '-' is \"exclude\" to glibc's compat service" \
  "$(spec '[{"files":[{"src":"config.txt","dest":"/x"}]}]' '{"name":"-t","uid":10001,"gid":10001}')"
expect_refused 2 "\$.user.shell: control character 10 (a newline would start a line of its own)" \
  "$(spec '[{"files":[{"src":"config.txt","dest":"/x"}]}]' '{"name":"t","uid":10001,"gid":10001,"shell":"/bin/sh\nr:x:0:0::/:/bin/sh"}')"
expect_refused 2 "\$.user.home: a ':', which separates the fields of /etc/passwd" \
  "$(spec '[{"files":[{"src":"config.txt","dest":"/x"}]}]' '{"name":"t","uid":10001,"gid":10001,"home":"/h:0:0"}')"
expect_refused 2 "\$.user: required" '{"base":"scratch","layers":[{"files":[{"src":"config.txt","dest":"/x"}]}]}'
expect_refused 2 "\$.layers[0].files[0].srcc: unknown key (allowed: allow_setuid, dest, dir_mode, mode, owner, platforms, src)" \
  "$(spec '[{"files":[{"srcc":"config.txt","dest":"/x"}]}]')"
expect_refused 2 "\$.user.uid: want a non-negative integer id" \
  "$(spec '[{"files":[{"src":"config.txt","dest":"/x"}]}]' '{"name":"t","uid":"10001","gid":10001}')"
expect_refused 3 "\$.layers[0].files[0].src: nope.txt: No such file or directory" \
  "$(spec '[{"files":[{"src":"nope.txt","dest":"/x"}]}]')"
expect_refused 3 "\$.layers[0].files[0].src: '*.none' matches nothing" "$(spec '[{"files":[{"src":"*.none","dest":"/x/"}]}]')"
expect_refused 2 "bad.json: malformed JSON at byte" '{"base": "scratch", "user": {'
expect_refused 2 "duplicate key \"base\"" '{"base":"scratch","base":"scratch"}'
cp config.txt suid && chmod 4755 suid
expect_refused 2 "suid has setuid/setgid bits; add \"allow_setuid\": true if that is intended" \
  "$(spec '[{"files":[{"src":"suid","dest":"/x"}]}]')"
expect_refused 2 "\$.layers[0].files[0].mode: '999' is not an octal mode" \
  "$(spec '[{"files":[{"src":"config.txt","dest":"/x","mode":"999"}]}]')"
expect_refused 2 "/x comes from two sources" \
  "$(spec '[{"files":[{"src":"config.txt","dest":"/x"},{"src":"app/share/model.txt","dest":"/x"}]}]')"

# Issue 24: a NUL in any string of the spec is refused when the spec is parsed, naming
# the field (it once went as far as writing the layer); control characters in a name are
# escaped in the message.
nul=" holds a NUL byte, which no path, name or environment entry can carry"
expect_refused 2 "\$.layers[0].files[0].dest: \"/x\\x00y\"$nul" \
  "$(spec '[{"files":[{"src":"config.txt","dest":"/x\u0000y"}]}]')"
expect_refused 2 "\$.layers[0].files[0].src: \"config.txt\\x00.sh\"$nul" \
  "$(spec '[{"files":[{"src":"config.txt\u0000.sh","dest":"/x"}]}]')"
expect_refused 2 "\$.env: the key \"PATH\\x00X\"$nul" \
  '{"base":"scratch","user":{"name":"t","uid":10001,"gid":10001},"env":{"PATH\u0000X":"/bin"},
    "layers":[{"files":[{"src":"config.txt","dest":"/x"}]}]}'
expect_refused 2 "\$.labels.a: \"b\\x00c\"$nul" \
  '{"base":"scratch","user":{"name":"t","uid":10001,"gid":10001},"labels":{"a":"b\u0000c"},
    "layers":[{"files":[{"src":"config.txt","dest":"/x"}]}]}'
expect_refused 2 "\$.layers[0].files[0].dest: 'x\\nimgtool: OK\\x1b[2J' must be an absolute path in the image" \
  "$(spec '[{"files":[{"src":"config.txt","dest":"x\nimgtool: OK\u001b[2J"}]}]')"
assert_eq "$(wc -l <<<"$OUTPUT")" 1 "a dest with a newline stays on one line"

# A failing build into an existing layout leaves it exactly as it was.
"$IMGTOOL" build spec.json -o "oci:$WORK/keep:v1" -q >/dev/null
before=$(sha256sum "$WORK/keep/index.json")
printf '%s' "$(spec '[{"files":[{"src":"nope.txt","dest":"/x"}]}]')" >bad.json
expect_exit 3 build bad.json -o "oci:$WORK/keep:v2" -q
assert_eq "$(sha256sum "$WORK/keep/index.json")" "$before" "index.json after a failed build"
expect_exit 0 verify "oci:$WORK/keep:v1"
pass "existing layout untouched by a failed build"

mkdir -p "$WORK/notalayout" && echo x >"$WORK/notalayout/file"
expect_exit 2 build spec.json -o "oci:$WORK/notalayout:v1" -q
assert_contains "$OUTPUT" "folder is not empty and is not an OCI layout" "non-layout output folder"
pass "refuses to write into a folder that is not a layout"
