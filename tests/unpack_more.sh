#!/usr/bin/env bash
# imgtool unpack, beyond tests/unpack.sh (issue 26):
# (1) SIGINT and SIGTERM mid-unpack: an image with a 300 MB layer (random data, built by
#     `imgtool build`, uncompressed); imgtool is stopped (SIGSTOP) once that file is being
#     written under DIR.tmp-*, signalled, let go on (SIGCONT): it exits non-zero saying
#     "interrupted" and leaves neither DIR nor DIR.tmp-*.
# (2) xattrs: a top layer whose PAX headers carry SCHILY.xattr.user.* (a file, a folder)
#     and a trusted.* one: as root, imgtool's rootfs equals umoci's, xattrs included.
# (3) Not root (setpriv to uid/gid 65534, into a folder that user owns): no chown, every
#     node belongs to the unpacking user, modes and user.* xattrs kept, trusted.* skipped
#     and counted (--json xattrsSkipped, owners "rootless"); the rootfs equals what
#     `umoci unpack --rootless` makes as the same user, xattrs included but the
#     user.rootlesscontainers record umoci adds and imgtool does not (bundle/README.md).
source "$(dirname "$0")/lib.sh"
IMGTOOL=$(realpath "$IMGTOOL")
for t in umoci python3 setpriv jq; do command -v $t >/dev/null || fail "$t is not installed (scripts/setup installs it)"; done
[ "$(id -u)" = 0 ] || fail "runs as root (the non-root half runs through setpriv; owners compared with umoci's)"
COMPARE=$REPO/tests/unpack/compare_rootfs.py
cd "$WORK"

# (1) A large layer, interrupted while it is written.
BIG=$((300 << 20))
mkdir big-ctx
head -c $BIG /dev/urandom >big-ctx/big.bin
cat >big-ctx/spec.json <<'JSON'
{"base": "scratch", "compression": "none", "user": {"name": "app", "uid": 10001, "gid": 10001},
 "layers": [{"name": "data", "files": [{"src": "big.bin", "dest": "/data/big.bin", "mode": "0644"}]}],
 "entrypoint": ["/data/big.bin"]}
JSON
"$IMGTOOL" build big-ctx/spec.json -o oci:big:latest -q >/dev/null
rm big-ctx/big.bin
interrupt() {  # SIGNAL: unpack, stop it mid-file, send SIGNAL, let it go on
  local sig=$1 dir=$WORK/sig-$1 file="" size=0 rc=0 pid _
  "$IMGTOOL" unpack oci:big:latest "$dir" >"$WORK/sig-$sig.out" 2>&1 &
  pid=$!
  for _ in $(seq 6000); do
    file=$(compgen -G "$dir.tmp-*/rootfs/data/big.bin" || true)
    if [ -n "$file" ]; then
      size=$(stat -c %s "$file" 2>/dev/null || echo 0)
      [ "$size" -gt 0 ] && break
    fi
    sleep 0.005
  done
  kill -STOP "$pid" || fail "$sig: imgtool ended before it could be stopped"
  size=$(stat -c %s "$file" 2>/dev/null || echo gone)
  [ "$size" != gone ] && [ "$size" -lt $BIG ] || { kill -CONT "$pid"; fail "$sig: not stopped mid-file ($size)"; }
  kill -"$sig" "$pid"
  kill -CONT "$pid"
  wait "$pid" || rc=$?
  [ "$rc" != 0 ] || fail "$sig: unpack exited 0 after the signal"
  assert_contains "$(cat "$WORK/sig-$sig.out")" "interrupted" "$sig"
  [ ! -e "$dir" ] || fail "$sig: DIR left behind"
  ! compgen -G "$dir.tmp-*" >/dev/null || fail "$sig: DIR.tmp-* left behind"
  echo "$size"
}
at_int=$(interrupt INT)
at_term=$(interrupt TERM)
pass "SIGINT at $at_int and SIGTERM at $at_term of $BIG bytes: imgtool exits non-zero, no DIR and no DIR.tmp-* left"

# A small image (make_context: an executable, a symlink, a 0640 file owned by 10001) with
# a top layer of xattrs, as Python's tarfile writes PAX headers.
make_context ctx
"$IMGTOOL" build ctx/spec.json -o oci:small:latest -q >/dev/null
python3 - xattrs.tar <<'PY'
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as tar:
    def add(name, kind, headers, data=b"", mode=0o644):
        info = tarfile.TarInfo(name)
        info.mode, info.mtime, info.pax_headers = mode, 1700000000, headers
        if kind == "dir":
            info.type, info.mode = tarfile.DIRTYPE, 0o755
            tar.addfile(info)
        else:
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    add("xa", "dir", {"SCHILY.xattr.user.folder": "kept on a folder"})
    add("xa/file", "file", {"SCHILY.xattr.user.test": "hello", "SCHILY.xattr.user.other": "second"}, b"data\n")
    add("xa/trusted", "file", {"SCHILY.xattr.trusted.test": "root only", "SCHILY.xattr.user.test": "with it"}, b"t\n")
PY
hex=$(sha256sum xattrs.tar | cut -c1-64)
cp xattrs.tar "small/blobs/sha256/$hex"
edit_image small latest ".rootfs.diff_ids += [\"sha256:$hex\"] | .history += [{\"created_by\": \"unpack_more.sh\"}]" \
  ".layers += [{\"mediaType\": \"application/vnd.oci.image.layer.v1.tar\", \"digest\": \"sha256:$hex\", \"size\": $(stat -c %s xattrs.tar)}]" >/dev/null
xattr() { python3 -c 'import os,sys; print(os.getxattr(sys.argv[1], sys.argv[2], follow_symlinks=False).decode(errors="replace"))' "$@" 2>/dev/null || echo none; }

# (2) As root: xattrs as umoci keeps them.
out=$("$IMGTOOL" unpack oci:small:latest rb --json)
umoci unpack --image small:latest ru >/dev/null 2>&1 || fail "umoci unpack (root)"
python3 "$COMPARE" --xattrs rb/rootfs ru/rootfs || fail "imgtool's rootfs (xattrs included) differs from umoci's"
assert_eq "$(xattr rb/rootfs/xa/file user.test)" hello "user.test on a file"
assert_eq "$(xattr rb/rootfs/xa user.folder)" "kept on a folder" "user.folder on a folder"
assert_eq "$(jq -r .owners <<<"$out")" chown "--json owners as root"
assert_eq "$(stat -c %u:%g rb/rootfs/etc/app/config.txt)" 10001:10001 "owner as root"
pass "as root: user.* xattrs on files and folders (and trusted.* as root may) equal umoci's, owners from the layers"

# (3) Not root: uid/gid 65534 into a folder it owns.
chmod 711 "$WORK"
mkdir nr
chown 65534:65534 nr
as_nobody() { setpriv --reuid 65534 --regid 65534 --clear-groups "$@"; }
out=$(as_nobody "$IMGTOOL" unpack "oci:$WORK/small:latest" nr/b --json) || fail "unpack as uid 65534: $out"
(cd nr && as_nobody umoci unpack --rootless --image "$WORK/small:latest" u >/dev/null 2>&1) || fail "umoci unpack --rootless"
[ -z "$(find nr/b -not -user 65534 -o -not -group 65534 | head -1)" ] || fail "a node not owned by 65534: $(find nr/b -not -user 65534 | head -3)"
python3 "$COMPARE" --xattrs nr/b/rootfs nr/u/rootfs || fail "rootless: imgtool's rootfs differs from umoci --rootless's"
assert_eq "$(jq -r .owners <<<"$out")" rootless "--json owners"
assert_eq "$(jq .xattrsSkipped <<<"$out")" 1 "--json xattrsSkipped (trusted.test)"
assert_eq "$(xattr nr/b/rootfs/xa/trusted trusted.test)" none "trusted.* rootless"
assert_eq "$(xattr nr/b/rootfs/xa/trusted user.test)" "with it" "user.* beside a skipped trusted.*"
assert_eq "$(stat -c %a nr/b/rootfs/etc/app/config.txt)" 640 "mode kept rootless"
assert_eq "$(xattr nr/b/rootfs/etc/app/config.txt user.rootlesscontainers)" none "imgtool writes no rootlesscontainers record"
[ "$(xattr nr/u/rootfs/etc/app/config.txt user.rootlesscontainers)" != none ] || fail "umoci --rootless kept no owner record (the comparison skips one)"
pass "as uid 65534: no chown (every node 65534's), modes and user.* xattrs kept, trusted.* skipped and counted; equal to umoci --rootless but its user.rootlesscontainers record"
