#!/usr/bin/env bash
# .deb inputs: unpacked with their modes, dpkg's records written so dpkg-query sees what
# is installed, maintainer scripts named (not run); a deb whose sha256, name or version
# differs from the pin fails the build and leaves nothing behind.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/packages_lib.sh"
mkdir -p "$WORK/ctx/debs" && cd "$WORK/ctx"
alpha=$(make_deb debs alpha 1.0-1 postinst)
beta=$(make_deb debs beta 2.3.4-1)
spec() {  # debs-json-of-layer-1 [stack-json]
  printf '{"base":"scratch","user":{"name":"t","uid":10001,"gid":10001},"layers":[{"name":"pkgs","debs":%s}]%s}' \
    "$1" "${2:+,\"stack\":$2}"
}
deb() { printf '{"src":"%s","sha256":"%s","name":"%s","version":"%s"}' "${1#$WORK/ctx/}" "$2" "$3" "$4"; }
good="[$(deb "$alpha" "$(sha "$alpha")" alpha 1.0-1),$(deb "$beta" "$(sha "$beta")" beta 2.3.4-1)]"
spec "$good" >spec.json

expect_exit 0 build spec.json -o "oci:$WORK/img:v1"
assert_contains "$OUTPUT" "imgtool: alpha 1.0-1 has maintainer scripts (postinst); they were not run" "maintainer scripts"
grep -q "beta 2.3.4-1 has maintainer" <<<"$OUTPUT" && fail "beta has no maintainer scripts"
expect_exit 0 verify "oci:$WORK/img:v1"
pass "built from two debs; maintainer scripts named, not run"

unpack_image "$WORK/img" "$WORK/root"
listed=$(dpkg-query --admindir "$WORK/root/var/lib/dpkg" -W -f '${Package} ${Version} ${Status}\n')
assert_eq "$listed" "$(printf 'alpha 1.0-1 install ok installed\nbeta 2.3.4-1 install ok installed')" "dpkg-query -W"
assert_contains "$(dpkg-query --admindir "$WORK/root/var/lib/dpkg" -L beta)" "/usr/lib/beta/libbeta.so.1" "dpkg-query -L"
dpkg --admindir "$WORK/root/var/lib/dpkg" --root "$WORK/root" --verify alpha beta || fail "dpkg --verify"
pass "dpkg-query lists alpha 1.0-1 and beta 2.3.4-1; dpkg --verify agrees with the unpacked files"

assert_eq "$(stat -c %a "$WORK/root/usr/share/doc/alpha/README")" 640 "mode kept"
assert_eq "$(stat -c %a "$WORK/root/usr/bin/alpha")" 755 "executable kept"
assert_eq "$(readlink "$WORK/root/usr/lib/alpha/libalpha.so")" libalpha.so.1 "symlink kept"
assert_eq "$(stat -c %i "$WORK/root/usr/share/doc/alpha/README")" "$(stat -c %i "$WORK/root/usr/share/doc/alpha/README.hard")" "hardlink kept"
pass "modes, symlinks and hardlinks as the package ships them"

record="$WORK/img.build.json"
assert_eq "$(jq -r '.inputs[] | select(.path=="deb:debs/alpha_1.0-1.deb") | .digest' "$record")" "sha256:$(sha "$alpha")" "record"
pass "the build record names each deb by sha256"

first=$("$IMGTOOL" build spec.json -o "oci:$WORK/img2:v1" --json -q)
assert_eq "$(jq -c '[.layers[].cached]' <<<"$first")" '[true,true]' "cache"
pass "an unchanged rebuild takes the package layer from the cache"

# Warm package layers are not unpacked: with the staging folder made impossible (a plain
# file where it would go) the rebuild still succeeds, with the same digest, dpkg status
# and notes; and a package file changed under its pin is still refused.
rm -rf "$IMGTOOL_CACHE/staging" && touch "$IMGTOOL_CACHE/staging"
expect_exit 0 build spec.json -o "oci:$WORK/img3:v1"
assert_contains "$OUTPUT" "alpha 1.0-1 has maintainer scripts (postinst)" "notes from the cache"
assert_eq "$(tail -n1 <<<"$OUTPUT")" "$(jq -r .digest <<<"$first")" "warm digest"
cp "$alpha" "$WORK/alpha.orig" && printf 'tampered' >>"$alpha"
expect_exit 4 build spec.json -o "oci:$WORK/img4:v1" -q
assert_contains "$OUTPUT" "the spec pins sha256:$(sha "$WORK/alpha.orig") but the file is sha256:$(sha "$alpha")" "warm pin check"
[ ! -e "$WORK/img4" ] || fail "output after a refused warm build"
cp "$WORK/alpha.orig" "$alpha" && rm "$IMGTOOL_CACHE/staging"
pass "a warm rebuild unpacks nothing (same digest and notes) but still checks every package's sha256"

# One open per deb, read once per build: a cold build hashes it while unpacking it, a warm
# one hashes it for the pin check alone. strace counts the bytes read from each file
# (-ff: one file per thread, so no call is split across lines).
if can_trace; then
  for build in cold warm; do
    flags=()
    [ "$build" = warm ] || flags=(--no-cache)
    rm -f "$WORK"/reads.*
    traced -ff -qq -y -s 0 -e trace=read,pread64 -o "$WORK/reads" \
      "$IMGTOOL" build spec.json -o "oci:$WORK/img-$build:v1" -q "${flags[@]}" >/dev/null
    for f in "$alpha" "$beta"; do
      got=$(python3 - "$(realpath "$f")" "$WORK"/reads.* <<'PY'
import re, sys
path, total = sys.argv[1], 0
for name in sys.argv[2:]:
    for line in open(name, errors="replace"):
        m = re.match(r"(?:read|pread64)\(\d+<([^>]*)>.*= (\d+)$", line)
        if m and m.group(1) == path:
            total += int(m.group(2))
print(total)
PY
)
      assert_eq "$got" "$(stat -c %s "$f")" "$build build: bytes read from $f"
    done
  done
  pass "each deb is read once per build (cold: hashed while unpacked; warm: the pin check), strace-counted"
else
  pass "each deb read once per build: not counted (strace cannot trace here)"
fi

# Pins that do not match: exit 4, both values named, nothing written.
refused 4 "\$.layers[0].debs[0].sha256: debs/alpha_1.0-1.deb: the spec pins sha256:$zero but the file is sha256:$(sha "$alpha")" \
  "$(spec "[$(deb "$alpha" "$zero" alpha 1.0-1)]")"
refused 4 "\$.layers[0].debs[0].name: the spec pins 'alpha2' but the package says 'alpha'" \
  "$(spec "[$(deb "$alpha" "$(sha "$alpha")" alpha2 1.0-1)]")"
refused 4 "\$.layers[0].debs[0].version: the spec pins '1.0-2' but the package says '1.0-1'" \
  "$(spec "[$(deb "$alpha" "$(sha "$alpha")" alpha 1.0-2)]")"
refused 3 "\$.layers[0].debs[0].src: debs/nope.deb" "$(spec "[$(deb debs/nope.deb "$zero" alpha 1.0-1)]")"
refused 2 "\$.layers[0].debs[0].sha256: required" "$(spec '[{"src":"debs/alpha_1.0-1.deb","name":"alpha","version":"1"}]')"
refused 2 "\$.layers[0].debs[0].sha256: 'abc' is not a sha256 digest" \
  "$(spec '[{"src":"debs/alpha_1.0-1.deb","sha256":"abc","name":"alpha","version":"1"}]')"
refused 2 "\$.layers[0].debs[0].prefix: unknown key" \
  "$(spec "[{\"src\":\"x\",\"sha256\":\"$zero\",\"name\":\"a\",\"version\":\"1\",\"prefix\":\"/x\"}]")"
two="[$(deb "$alpha" "$(sha "$alpha")" alpha 1.0-1)]"
refused 2 "\$.layers[1].debs[0]: package alpha is also installed by \$.layers[0].debs[0]" \
  "{\"base\":\"scratch\",\"user\":{\"name\":\"t\",\"uid\":1,\"gid\":1},\"layers\":[{\"debs\":$two},{\"debs\":$two}]}"
printf 'not an ar archive' >debs/junk.deb
refused 2 "\$.layers[0].debs[0]: " "$(spec "[$(deb "$WORK/ctx/debs/junk.deb" "$(sha debs/junk.deb)" junk 1)]")"

# A hostile deb (an entry escaping with ..) is refused by the unpacker, naming the entry.
mkdir -p evil && python3 - "$WORK/ctx/evil" <<'PY'
import io, os, subprocess, sys, tarfile
d = sys.argv[1]
def tar(name, members):
    with tarfile.open(os.path.join(d, name), "w:gz") as t:
        for n, b in members:
            i = tarfile.TarInfo(n); i.size = len(b); t.addfile(i, io.BytesIO(b))
open(os.path.join(d, "debian-binary"), "w").write("2.0\n")
tar("control.tar.gz", [("./control", b"Package: evil\nVersion: 1\nArchitecture: all\nDescription: x\n")])
tar("data.tar.gz", [("./../../etc/evil", b"x\n")])
subprocess.check_call(["ar", "rc", os.path.join(d, "evil.deb"), "debian-binary", "control.tar.gz", "data.tar.gz"], cwd=d)
PY
refused 2 "\$.layers[0].debs[0]: " "$(spec "[$(deb "$WORK/ctx/evil/evil.deb" "$(sha evil/evil.deb)" evil 1)]")"
assert_contains "$OUTPUT" ".." "names the escaping entry"
# A sparse file: dpkg-deb builds the package, GNU tar --sparse rebuilds its data.tar
# (dpkg-deb never writes sparse entries; dpkg-deb -x extracts them with tar, holes as
# zeros). The image must hold what dpkg-deb -x gives, and dpkg --verify must agree.
src=$WORK/ctx/sparse-src && mkdir -p "$src/DEBIAN" "$src/usr/share/sparse"
printf 'Package: sparse\nVersion: 1.0-1\nArchitecture: all\nMaintainer: T <t@example.com>\nInstalled-Size: 68608\nDescription: sparse files\n' \
  >"$src/DEBIAN/control"
truncate -s 64M "$src/usr/share/sparse/holes.img"
printf head >"$src/usr/share/sparse/mixed.bin"
printf mid | dd of="$src/usr/share/sparse/mixed.bin" bs=1 seek=1048576 conv=notrunc status=none
truncate -s 3M "$src/usr/share/sparse/mixed.bin"
dpkg-deb --root-owner-group -Zxz --build "$src" debs/sparse_1.0-1.deb >/dev/null
tar --sparse --format=gnu --owner=0 --group=0 --numeric-owner --exclude=./DEBIAN -cJf "$WORK/data.tar.xz" -C "$src" .
(cd "$WORK" && ar r "$WORK/ctx/debs/sparse_1.0-1.deb" data.tar.xz)
python3 -c 'import sys, tarfile
assert all(m.issparse() for m in tarfile.open(sys.argv[1]) if m.isreg() and "sparse/" in m.name)' "$WORK/data.tar.xz" ||
  fail "the data.tar has no sparse entries"
dpkg-deb -x debs/sparse_1.0-1.deb "$WORK/sparse-ref"
spec "[$(deb debs/sparse_1.0-1.deb "$(sha debs/sparse_1.0-1.deb)" sparse 1.0-1)]" >sparse.json
expect_exit 0 build sparse.json -o "oci:$WORK/sparse:v1" -q
unpack_image "$WORK/sparse" "$WORK/sparse-root"
for f in usr/share/sparse/holes.img usr/share/sparse/mixed.bin; do
  cmp "$WORK/sparse-root/$f" "$WORK/sparse-ref/$f" || fail "$f differs from dpkg-deb -x"
done
assert_eq "$(stat -c %s "$WORK/sparse-root/usr/share/sparse/holes.img")" 67108864 "holes.img size"
head -c 64M /dev/zero | cmp - "$WORK/sparse-root/usr/share/sparse/holes.img" || fail "holes.img is not 64 MiB of zeros"
dpkg --admindir "$WORK/sparse-root/var/lib/dpkg" --root "$WORK/sparse-root" --verify sparse || fail "dpkg --verify sparse"
assert_eq "$(cat "$WORK/sparse-root/var/lib/dpkg/info/sparse.md5sums")" \
  "$(cd "$WORK/sparse-ref" && md5sum usr/share/sparse/holes.img usr/share/sparse/mixed.bin)" "md5sums"
pass "a sparse deb (GNU tar --sparse data.tar): 64 MiB of zeros and a file with holes, as dpkg-deb -x gives them; md5sums and dpkg --verify agree"

# Control fields are checked against Debian policy before anything is unpacked:
# Architecture "a/b" with Multi-Arch: same would name var/lib/dpkg/info/evil:a/b.list.
ctl=$WORK/ctx/badarch-src && mkdir -p "$ctl/DEBIAN" "$ctl/usr/share/doc/evil"
printf 'doc\n' >"$ctl/usr/share/doc/evil/README"
printf 'Package: evil\nVersion: 1\nArchitecture: a/b\nMulti-Arch: same\nMaintainer: T <t@example.com>\nDescription: x\n' >"$ctl/DEBIAN/control"
# dpkg-deb only warns ("'a/b' is not a valid architecture name") and builds it.
dpkg-deb --root-owner-group -Zgzip --build "$ctl" debs/evil-arch.deb >/dev/null 2>&1
refused 2 "\$.layers[0].debs[0]: debs/evil-arch.deb: control.tar.gz: control: Architecture \"a/b\": not a Debian architecture name ([a-z0-9][a-z0-9-]*)" \
  "$(spec "[$(deb debs/evil-arch.deb "$(sha debs/evil-arch.deb)" evil 1)]")"

[ -z "$(ls -A "$IMGTOOL_CACHE/staging")" ] || fail "staging folders left in the cache: $(ls "$IMGTOOL_CACHE/staging")"
pass "no staging folder outlives a build, failed or not"
