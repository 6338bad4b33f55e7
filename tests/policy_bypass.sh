#!/usr/bin/env bash
# Issue 15: a top layer that hides the /etc/passwd a runtime reads. Config User "app" is
# uid 1000 in the entry named etc/passwd, but uid 0 in the file a runtime opens, because a
# top layer turns etc into a symlink (relative or absolute target) or spells the entry
# etc//passwd or etc/./passwd. `policy check` with nonRoot must fail (exit 5) naming uid 0,
# and the same layers with a benign passwd must pass. umoci unpack, a peer that unpacks
# like a runtime, sees the uid 0 line detected here; and a build on such a base carries the
# passwd a runtime sees. Layers are written with Python's tarfile (any entry name) and
# put on top of a built image by editing its config and manifest (tests/lib.sh).
# Issue 24: a passwd whose lines glibc, musl and Go (runc, containerd) read differently
# (" t:x:0:0:..." before t uid 10001; "t" alone; a NIS line) and Users 4294967296 and +0
# fail nonRoot naming the line and uid 0; glibc's fgetpwent on the unpacked file agrees;
# a build whose spec user the base already resolves to uid 0 is refused naming the line.
source "$(dirname "$0")/lib.sh"
IMGTOOL=$(realpath "$IMGTOOL")
command -v umoci >/dev/null || fail "umoci is not installed (scripts/setup installs it)"

SAFE="app:x:1000:1000::/home/app:/bin/sh"
ROOT="app:x:0:0::/root:/bin/sh"
printf '{"policyVersion": 1, "rules": {"nonRoot": {}}}\n' >"$WORK/nonroot.json"

# make_layer OUT: a plain tar from stdin's lines "dir NAME", "file NAME LINE",
# "text NAME ESCAPED" (Python escapes: \n, \t, \x00; no newline added) or
# "symlink NAME TARGET", names written exactly as given.
make_layer() {
  python3 -c '
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w", format=tarfile.GNU_FORMAT) as tar:
    for line in sys.stdin.read().splitlines():
        kind, name, rest = (line.split(" ", 2) + [""])[:3]
        info, data = tarfile.TarInfo(name), None
        if kind == "dir":
            info.type, info.mode = tarfile.DIRTYPE, 0o755
        elif kind == "symlink":
            info.type, info.mode, info.linkname = tarfile.SYMTYPE, 0o777, rest
        elif kind == "text":
            data = rest.encode().decode("unicode_escape").encode("latin-1")
            info.size, info.mode = len(data), 0o644
        else:
            data = (rest + "\n").encode()
            info.size, info.mode = len(data), 0o644
        tar.addfile(info, io.BytesIO(data) if data is not None else None)
' "$1"
}

# add_layer DIR TAR [USER]: TAR becomes the top layer of DIR's image v1 (tag re-pointed),
# whose config User becomes USER ("app"); prints the new manifest digest.
add_layer() {
  local dir=$1 hex size user=${3:-app}
  hex=$(sha256sum "$2" | cut -c1-64)
  size=$(stat -c %s "$2")
  cp "$2" "$dir/blobs/sha256/$hex"
  edit_image "$dir" v1 \
    ".config.User = \"$user\" | .rootfs.diff_ids += [\"sha256:$hex\"] | .history += [{\"created_by\": \"policy_bypass\"}]" \
    ".layers += [{\"mediaType\": \"application/vnd.oci.image.layer.v1.tar\", \"digest\": \"sha256:$hex\", \"size\": $size}]"
}

# variant NAME < LINES: the base image, a layer whose etc/passwd names app uid 1000, and a
# top layer of LINES, at oci:$WORK/NAME; prints its reference (pinned by digest).
variant() {
  cp -r "$WORK/base" "$WORK/$1"
  printf 'dir etc\nfile etc/passwd %s\n' "$SAFE" | make_layer "$WORK/$1.lower.tar"
  add_layer "$WORK/$1" "$WORK/$1.lower.tar" >/dev/null
  make_layer "$WORK/$1.top.tar"
  echo "oci:$WORK/$1@$(add_layer "$WORK/$1" "$WORK/$1.top.tar")"
}

make_context "$WORK/ctx"
"$IMGTOOL" build "$WORK/ctx/spec.json" -o "oci:$WORK/base:v1" -q >/dev/null

# ---- the bypasses: each must fail nonRoot, naming uid 0 ----
REL=$(variant rel <<<"dir real
file real/passwd $ROOT
symlink etc real")
ABS=$(variant abs <<<"dir opt
dir opt/e
file opt/e/passwd $ROOT
symlink etc /opt/e")
SLASH=$(variant slash <<<"file etc//passwd $ROOT")
DOT=$(variant dot <<<"file etc/./passwd $ROOT")
for ref in "$REL" "$ABS" "$SLASH" "$DOT"; do
  expect_exit 5 policy check --policy "$WORK/nonroot.json" "$ref"
  assert_contains "$OUTPUT" "config User 'app' is uid 0 in /etc/passwd" "bypass ${ref%@*}"
done
pass "nonRoot fails for etc symlinked (relative, absolute) and for etc//passwd, etc/./passwd: uid 0"

# ---- controls: the same shapes with a benign passwd pass ----
PLAIN=$(variant plain <<<"dir opt")
REL_OK=$(variant rel_ok <<<"dir real
file real/passwd $SAFE
symlink etc real")
SLASH_OK=$(variant slash_ok <<<"file etc//passwd $SAFE")
for ref in "$PLAIN" "$REL_OK" "$SLASH_OK"; do
  expect_exit 0 policy check --policy "$WORK/nonroot.json" "$ref"
  assert_contains "$OUTPUT" "user 'app' is uid 1000 in /etc/passwd" "control ${ref%@*}"
done
pass "controls: the same layers with app uid 1000 pass"

# ---- a peer that unpacks like a runtime sees the same uid 0 line ----
# `raw unpack`: the rootfs only. `umoci unpack` also writes config.json, resolving User
# through the host's path for /etc/passwd, which an absolute etc symlink sends outside
# the rootfs (a umoci weakness, not what a runtime does).
for v in rel abs slash dot; do
  umoci raw unpack --image "$WORK/$v:v1" "$WORK/rootfs-$v" >/dev/null 2>&1 || fail "umoci raw unpack $v"
done
assert_eq "$(readlink "$WORK/rootfs-rel/etc")" "real" "umoci: etc is the symlink"
assert_eq "$(grep '^app:' "$WORK/rootfs-rel/real/passwd")" "$ROOT" "umoci: rel"
assert_eq "$(readlink "$WORK/rootfs-abs/etc")" "/opt/e" "umoci: etc is the absolute symlink"
assert_eq "$(grep '^app:' "$WORK/rootfs-abs/opt/e/passwd")" "$ROOT" "umoci: abs"
for v in slash dot; do
  assert_eq "$(grep '^app:' "$WORK/rootfs-$v/etc/passwd")" "$ROOT" "umoci: $v"
done
pass "umoci raw unpack: /etc/passwd of every bypass image gives app uid 0"

# ---- a build on such a base reads the passwd a runtime sees ----
mkdir -p "$WORK/derived"
printf 'more\n' >"$WORK/derived/more.txt"
cat >"$WORK/derived/spec.json" <<JSON
{"base": {"layout": "$WORK/rel", "digest": "${REL#*@}"},
 "user": {"name": "trainer", "uid": 10001, "gid": 10001},
 "layers": [{"name": "more", "files": [{"src": "more.txt", "dest": "/opt/more.txt"}]}]}
JSON
"$IMGTOOL" build "$WORK/derived/spec.json" -o "oci:$WORK/derived-img:v1" -q >/dev/null
umoci raw unpack --image "$WORK/derived-img:v1" "$WORK/rootfs-derived" >/dev/null 2>&1 || fail "umoci unpack derived"
assert_contains "$(cat "$WORK/rootfs-derived/etc/passwd")" "$ROOT" "derived image keeps the base's runtime passwd"
pass "build: the base's /etc/passwd is read where a runtime finds it"

# ---- issue 24: names that resolve to root by some reader of /etc/passwd ----
# users_image NAME USER PASSWD: the base image, a layer whose etc/passwd is PASSWD
# (Python escapes) and config User USER, at oci:$WORK/NAME; prints its pinned reference.
users_image() {
  cp -r "$WORK/base" "$WORK/$1"
  printf 'dir etc\ntext etc/passwd %s\n' "$3" | make_layer "$WORK/$1.tar"
  echo "oci:$WORK/$1@$(add_layer "$WORK/$1" "$WORK/$1.tar" "$2")"
}
T24=$(users_image blank t ' t:x:0:0:root:/root:/bin/sh\nt:x:10001:10001::/home/t:/bin/sh\n')
expect_exit 5 policy check --policy "$WORK/nonroot.json" "$T24"
assert_contains "$OUTPUT" "config User 't': /etc/passwd: runtimes resolve user 't' differently: glibc and Go: line 1 \" t:x:0:0:root:/root:/bin/sh\" (user 't', uid 0, gid 0); musl: line 2" "leading blank"
pass "nonRoot fails for ' t:x:0:0:...' before t uid 10001: glibc and Go read uid 0 at line 1"

# A peer: this machine's glibc reads the image's /etc/passwd (unpacked by umoci) the same way.
umoci raw unpack --image "$WORK/blank:v1" "$WORK/rootfs-blank" >/dev/null 2>&1 || fail "umoci raw unpack blank"
glibc_uid=$(python3 - "$WORK/rootfs-blank/etc/passwd" <<'PY'
import ctypes, sys
class Passwd(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("passwd", ctypes.c_char_p), ("uid", ctypes.c_uint32),
                ("gid", ctypes.c_uint32), ("gecos", ctypes.c_char_p), ("dir", ctypes.c_char_p), ("shell", ctypes.c_char_p)]
libc = ctypes.CDLL("libc.so.6")
libc.fopen.restype, libc.fopen.argtypes = ctypes.c_void_p, [ctypes.c_char_p, ctypes.c_char_p]
libc.fgetpwent.restype, libc.fgetpwent.argtypes = ctypes.POINTER(Passwd), [ctypes.c_void_p]
f = libc.fopen(sys.argv[1].encode(), b"r")
while True:
    p = libc.fgetpwent(f)
    if not p or p.contents.name == b"t":
        print(p.contents.uid if p else "none")
        break
PY
)
assert_eq "$glibc_uid" "0" "glibc fgetpwent: uid of t"
pass "glibc's fgetpwent gives t uid 0 in the unpacked image"

GO_ONLY=$(users_image goonly t 'root:x:0:0:root:/root:/bin/sh\nt\nt:x:10001:10001::/home/t:/bin/sh\n')
expect_exit 5 policy check --policy "$WORK/nonroot.json" "$GO_ONLY"
assert_contains "$OUTPUT" "Go: line 2 \"t\" (user 't', uid 0, gid 0)" "a name alone"
NIS=$(users_image nis t '+::::::\nt:x:10001:10001::/home/t:/bin/sh\n')
expect_exit 5 policy check --policy "$WORK/nonroot.json" "$NIS"
assert_contains "$OUTPUT" "/etc/passwd: line 1: \"+\" is a NIS compat entry" "NIS line"
BIG=$(users_image big 4294967296 'app:x:1000:1000::/home/app:/bin/sh\n')
expect_exit 5 policy check --policy "$WORK/nonroot.json" "$BIG"
assert_contains "$OUTPUT" "containerd keeps its low 32 bits and runs it as 0 (root)" "User 4294967296"
PLUS=$(users_image plus +0:10001 'app:x:1000:1000::/home/app:/bin/sh\n')
expect_exit 5 policy check --policy "$WORK/nonroot.json" "$PLUS"
assert_contains "$OUTPUT" "config User '+0:10001' is uid 0 (root)" "User +0"
T_OK=$(users_image t_ok t 'root:x:0:0:root:/root:/bin/sh\nt:x:10001:10001::/home/t:/bin/sh\n')
expect_exit 0 policy check --policy "$WORK/nonroot.json" "$T_OK"
assert_contains "$OUTPUT" "user 't' is uid 10001 in /etc/passwd (line 2" "control t"
pass "nonRoot fails for a name only Go reads, a NIS line, User 4294967296 and +0; t uid 10001 alone passes"

# ---- a build whose spec user is a name the base's /etc/passwd already resolves otherwise ----
# build_on NAME SPEC_USER_JSON: builds on image NAME's v1 into oci:$WORK/NAME-out (refused: nothing left).
build_on() {
  mkdir -p "$WORK/on-$1"
  printf 'more\n' >"$WORK/on-$1/more.txt"
  cat >"$WORK/on-$1/spec.json" <<JSON
{"base": {"layout": "$WORK/$1", "digest": "${2#*@}"}, "user": $3,
 "layers": [{"name": "more", "files": [{"src": "more.txt", "dest": "/opt/more.txt"}]}]}
JSON
  expect_exit "$4" build "$WORK/on-$1/spec.json" -o "oci:$WORK/$1-out:v1" -q
}
ROOT_T=$(users_image root_t app 'root:x:0:0:root:/root:/bin/sh\nt:x:0:0:root:/root:/bin/sh\n')
build_on blank "$T24" '{"name": "t", "uid": 10001, "gid": 10001}' 2
assert_contains "$OUTPUT" "adding the spec's user (\$.user) to the base image: /etc/passwd: runtimes resolve user 't' differently: glibc and Go: line 1 \" t:x:0:0:root:/root:/bin/sh\" (user 't', uid 0, gid 0)" "build on blank"
build_on root_t "$ROOT_T" '{"name": "t", "uid": 10001, "gid": 10001}' 2
assert_contains "$OUTPUT" "/etc/passwd: user 't' is already uid 0 (gid 0) at line 2 \"t:x:0:0:root:/root:/bin/sh\", not uid 10001 (gid 10001)" "build on root_t"
[ ! -e "$WORK/blank-out" ] && [ ! -e "$WORK/root_t-out" ] || fail "a refused build left output behind"
build_on t_ok "$T_OK" '{"name": "t", "uid": 10001, "gid": 10001, "group": "trainer"}' 0
pass "build: a spec user the base resolves to uid 0 (by some reader) is refused naming the line; the same uid is kept"
