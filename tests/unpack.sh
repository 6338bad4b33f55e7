#!/usr/bin/env bash
# imgtool unpack REF DIR (issue 26): an image as an OCI runtime bundle.
# (1) The golden CPU image (examples/golden/spec-cpu.json, cached debs) unpacked by
#     imgtool and by umoci 0.4.7 (`umoci unpack --image LAYOUT:TAG`): the two rootfs agree
#     name for name (type, mode, uid/gid, size, content sha256, symlink target, mtime,
#     hardlink groups: tests/unpack/compare_rootfs.py); config.json's user, args and cwd
#     equal umoci's; two unpacks write the same config.json bytes; --json's counts.
# (2) runc run of the bundle runs the image's command: the trainer's --help.
# (3) Hostile layers on top of the golden image: what ImageFs refuses (a whiteout `.wh..`,
#     a 10,000-deep path, a file under a file, a symlink loop, a hardlink to nothing in
#     the image) plus a device node and a damaged blob are refused with their reason and
#     leave no DIR and no DIR.tmp-*; what runtimes contain inside the root (`../../x`, a
#     write through a symlink to an absolute host path or up past the root, a hardlink up
#     past the root) lands inside the rootfs exactly where umoci puts it, and the host
#     folder the link names stays empty.
# (4) DIR already there: refused; --force replaces a bundle, and refuses a non-bundle.
source "$(dirname "$0")/lib.sh"
IMGTOOL=$(realpath "$IMGTOOL")
TRAINER="${TRAINER:-$(cd "$(dirname "$IMGTOOL")/.." && pwd)/trainer/trainer}"
[ -x "$TRAINER" ] || fail "no trainer binary at $TRAINER (set TRAINER, or build the trainer target)"
for t in umoci runc python3; do command -v $t >/dev/null || fail "$t is not installed (scripts/setup installs it)"; done
[ "$(id -u)" = 0 ] || fail "runs as root (runc, and owners compared with umoci's)"
G=$REPO/examples/golden
COMPARE=$REPO/tests/unpack/compare_rootfs.py

"$G/fetch" --spec spec-cpu.json --no-trainer --platform linux/amd64 >/dev/null
mkdir -p "$WORK/ctx/cache/bin"
cp "$G/spec-cpu.json" "$WORK/ctx/"
ln -s "$G/cache/debs" "$WORK/ctx/cache/debs"
cp "$TRAINER" "$IMGTOOL_FLEET" "$WORK/ctx/cache/bin/"
"$IMGTOOL" build "$WORK/ctx/spec-cpu.json" --platform linux/amd64 -o "oci:$WORK/golden:latest" -q >/dev/null

# (1) imgtool vs umoci
cd "$WORK"
out=$("$IMGTOOL" unpack oci:golden:latest b1 --json)
umoci unpack --image golden:latest u1 >/dev/null 2>&1 || fail "umoci unpack failed"
python3 "$COMPARE" b1/rootfs u1/rootfs || fail "imgtool's rootfs differs from umoci's"
files=$(find u1/rootfs -mindepth 1 | wc -l)
assert_eq "$(jq .files <<<"$out")" "$files" "--json files"
assert_eq "$(jq .layers <<<"$out")" 5 "--json layers"
assert_eq "$(jq -r .image <<<"$out")" "$("$IMGTOOL" digest oci:golden:latest)" "--json image digest"
assert_eq "$(jq .bytes <<<"$out")" "$(find u1/rootfs -type f -printf '%s\n' | awk '{s+=$1} END {print s}')" "--json bytes"
for f in .process.user .process.args .process.cwd .root.path; do
  assert_eq "$(jq -S -c "$f" b1/config.json)" "$(jq -S -c "$f" u1/config.json)" "config.json $f vs umoci's"
done
assert_eq "$(jq -c '[.linux.namespaces[].type] | sort' b1/config.json)" '["ipc","mount","pid","uts"]' "namespaces (no network)"
"$IMGTOOL" unpack oci:golden:latest b2 >/dev/null
cmp b1/config.json b2/config.json || fail "config.json differs between two unpacks"
[ "$(jq -S -c . b1/config.json)" = "$(tr -d '\n' <b1/config.json)" ] || fail "config.json keys not sorted"
pass "golden image: $files names equal to umoci's unpack; config.json's user/args/cwd equal umoci's"

# (2) runc runs it: the image's command (the trainer) with --help.
python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); c["process"]["args"].append("--help"); json.dump(c, open(sys.argv[1], "w"))' b2/config.json
ran=$(timeout 120 runc --root "$WORK/runc" run --bundle b2 "unpack-test-$$" 2>&1) || fail "runc run failed: $ran"
assert_contains "$ran" "Usage: /usr/local/bin/trainer" "runc run output"
assert_eq "$(sed 1d <<<"$ran")" "$("$TRAINER" --help 2>&1 | sed 1d | sed "s#$TRAINER#/usr/local/bin/trainer#")" "trainer --help in the bundle vs on the host"
pass "runc run of the bundle prints the trainer's --help as uid $(jq .process.user.uid b2/config.json)"

# (3) Hostile layers. make_layer OUT < LINES: "dir N", "file N", "symlink N T", "hardlink N T",
# "chardev N", names exactly as given (Python's tarfile, GNU format: long names too).
make_layer() {
  python3 -c '
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w", format=tarfile.GNU_FORMAT) as tar:
    for line in sys.stdin.read().splitlines():
        kind, name, rest = (line.split(" ", 2) + [""])[:3]
        info, data = tarfile.TarInfo(name), None
        info.mode = 0o644
        if kind == "dir":
            info.type, info.mode = tarfile.DIRTYPE, 0o755
        elif kind == "symlink":
            info.type, info.mode, info.linkname = tarfile.SYMTYPE, 0o777, rest
        elif kind == "hardlink":
            info.type, info.linkname = tarfile.LNKTYPE, rest
        elif kind == "chardev":
            info.type, info.devmajor, info.devminor = tarfile.CHRTYPE, 1, 3
        else:
            data = b"pwned\n"
            info.size = len(data)
        tar.addfile(info, io.BytesIO(data) if data is not None else None)
' "$1"
}
hostile() {  # NAME < LINES: a copy of the golden layout with LINES as a top layer, at $WORK/NAME
  cp -r "$WORK/golden" "$WORK/$1"
  make_layer "$WORK/$1.tar"
  local hex size
  hex=$(sha256sum "$WORK/$1.tar" | cut -c1-64)
  size=$(stat -c %s "$WORK/$1.tar")
  cp "$WORK/$1.tar" "$WORK/$1/blobs/sha256/$hex"
  edit_image "$WORK/$1" latest ".rootfs.diff_ids += [\"sha256:$hex\"] | .history += [{\"created_by\": \"unpack.sh\"}]" \
    ".layers += [{\"mediaType\": \"application/vnd.oci.image.layer.v1.tar\", \"digest\": \"sha256:$hex\", \"size\": $size}]" >/dev/null
}
refused() {  # NAME EXIT TEXT: unpack fails with EXIT naming TEXT, and leaves nothing
  expect_exit "$2" unpack "oci:$WORK/$1:latest" "$WORK/out-$1"
  assert_contains "$OUTPUT" "$3" "$1"
  [ ! -e "$WORK/out-$1" ] || fail "$1: DIR left behind"
  ! compgen -G "$WORK/out-$1.tmp-*" >/dev/null || fail "$1: DIR.tmp-* left behind"
}
printf 'file etc/.wh..\n' | hostile whiteout-dotdot
refused whiteout-dotdot 2 "an invalid whiteout name"
deep=$(printf 'd/%.0s' $(seq 10000))
printf 'file %sx\n' "$deep" | hostile deep
refused deep 2 "a name of 20001 bytes"
printf 'file etc/passwd/x\n' | hostile under-file
refused under-file 2 '"etc/passwd" is not a folder'
printf 'symlink l1 l2\nsymlink l2 l1\nfile l1/x\n' | hostile loop
refused loop 2 "too many levels of symbolic links"
printf 'hardlink h /etc/shadow-of-the-host\n' | hostile link-nothing
refused link-nothing 2 "no such file"
printf 'chardev dev/evil\n' | hostile device
refused device 2 "a character device: unpack makes no device nodes"
cp -r "$WORK/golden" "$WORK/damaged"
top=$(jq -r '.manifests[0].digest' "$WORK/damaged/index.json")
layer=$(jq -r '.layers[1].digest' "$WORK/damaged/blobs/sha256/${top#sha256:}")
flip "$WORK/damaged/blobs/sha256/${layer#sha256:}" 2000
rc=0
"$IMGTOOL" unpack "oci:$WORK/damaged:latest" "$WORK/out-damaged" >/dev/null 2>&1 || rc=$?
[ "$rc" != 0 ] || fail "a damaged layer unpacked"
[ ! -e "$WORK/out-damaged" ] && ! compgen -G "$WORK/out-damaged.tmp-*" >/dev/null || fail "damaged: DIR left behind"
pass "refused, nothing left: .wh.., a 20,001-byte name, a file under a file, a symlink loop, a hardlink to nothing, a device node, a damaged blob (exit $rc)"

mkdir "$WORK/outside"
printf 'file ../../escaped\nsymlink etc/evil %s\nfile etc/evil/pwned\nsymlink up ../../../../..\nfile up/tmp/upfile\nhardlink uplink ../../../../tmp/upfile\n' \
  "$WORK/outside" | hostile contained
"$IMGTOOL" unpack "oci:$WORK/contained:latest" "$WORK/out-contained" >/dev/null
umoci unpack --image "$WORK/contained:latest" "$WORK/u-contained" >/dev/null 2>&1 || fail "umoci unpack (contained)"
python3 "$COMPARE" "$WORK/out-contained/rootfs" "$WORK/u-contained/rootfs" || fail "contained: differs from umoci"
[ -z "$(ls -A "$WORK/outside")" ] || fail "a write escaped to $WORK/outside"
[ ! -e "$WORK/escaped" ] && [ ! -e /tmp/upfile ] || fail "a write escaped the bundle"
[ -f "$WORK/out-contained/rootfs/$WORK/outside/pwned" ] || fail "the write through the symlink is not inside the rootfs"
pass "../../x, a write through a symlink to $WORK/outside and up past the root, a hardlink up past the root: inside the rootfs, as umoci puts them"

# (4) An existing DIR.
expect_exit 2 unpack oci:golden:latest "$WORK/b1"
assert_contains "$OUTPUT" "exists (--force replaces a bundle)" "existing DIR"
mkdir "$WORK/notabundle"
expect_exit 2 unpack oci:golden:latest "$WORK/notabundle" --force
assert_contains "$OUTPUT" "not a bundle" "--force on a folder without config.json"
touch "$WORK/b1/rootfs/stale"
"$IMGTOOL" unpack oci:golden:latest "$WORK/b1" --force >/dev/null
[ ! -e "$WORK/b1/rootfs/stale" ] || fail "--force kept the old bundle"
! compgen -G "$WORK/b1.tmp-*" >/dev/null || fail "--force left the old bundle behind"
pass "an existing DIR is refused; --force swaps a bundle (renameat2 RENAME_EXCHANGE) and refuses a plain folder"
