#!/usr/bin/env bash
# docker-archive: (docker save / docker load tarballs), against skopeo. skopeo writes
# tarballs (one image, two tags, two images merged into one manifest.json) that imgtool
# reads, verifies and copies, with the digest skopeo gives (the manifest it makes up,
# byte for byte); imgtool writes tarballs skopeo reads back to the same config and
# diff_ids, byte-identical on reruns; a Docker >= 25 tarball (an OCI layout plus
# manifest.json, gzip layers) and a containerd export read too; hostile and damaged
# tarballs are refused with nothing written; inspect reads a fraction of the tarball.
source "$(dirname "$0")/lib.sh"
RETAR=(python3 "$REPO/tests/fixtures/docker_archive_retar.py")
make_context "$WORK/ctx"
cd "$WORK/ctx"
"$IMGTOOL" build spec.json -o "oci:$WORK/lay:v1" -q --no-cache >/dev/null
cp -a "$WORK/ctx" "$WORK/ctx2" && printf 'lr=0.002\n' >"$WORK/ctx2/config.txt"
(cd "$WORK/ctx2" && "$IMGTOOL" build spec.json -o "oci:$WORK/lay:v2" -q --no-cache >/dev/null)
cd "$WORK"
raw_digest() { echo "sha256:$(skopeo inspect --raw "$1" | sha256sum | cut -c1-64)"; }
config_of() { "$IMGTOOL" inspect --config "$1"; }

# 1. skopeo writes, imgtool reads: the digest and the manifest are skopeo's.
skopeo copy -q "oci:lay:v1" "docker-archive:s1.tar:foo/app:v1"
d1=$("$IMGTOOL" digest docker-archive:s1.tar)
assert_eq "$d1" "$(raw_digest docker-archive:s1.tar)" "digest = sha256 of skopeo inspect --raw"
assert_eq "$d1" "$(skopeo inspect docker-archive:s1.tar | jq -r .Digest)" "digest = skopeo's Digest"
cmp <("$IMGTOOL" inspect --raw docker-archive:s1.tar) <(skopeo inspect --raw docker-archive:s1.tar) ||
  fail "inspect --raw differs from skopeo's"
assert_eq "$(jq -r '.layers[0].mediaType' <("$IMGTOOL" inspect --raw docker-archive:s1.tar))" \
  "application/vnd.docker.image.rootfs.diff.tar.gzip" "skopeo's layer media type"
assert_eq "$("$IMGTOOL" digest docker-archive:s1.tar:foo/app:v1)" "$d1" "by NAME:TAG"
assert_eq "$("$IMGTOOL" digest docker-archive:s1.tar:docker.io/foo/app:v1)" "$d1" "by the normalised name"
assert_eq "$("$IMGTOOL" digest docker-archive:s1.tar:@0)" "$d1" "by @0"
expect_exit 3 digest docker-archive:s1.tar:foo/app:v2
assert_contains "$OUTPUT" "no image tagged 'docker.io/foo/app:v2'" "an absent tag"
"$IMGTOOL" verify docker-archive:s1.tar >verify.out
assert_contains "$(cat verify.out)" "0 problems" "verify"
"$IMGTOOL" copy -q docker-archive:s1.tar "oci:$WORK/from-skopeo:v1" >copied.out
assert_eq "$(cat copied.out)" "$d1" "copy keeps the digest"
assert_eq "$(config_of "oci:$WORK/from-skopeo:v1")" "$(skopeo inspect --raw --config docker-archive:s1.tar)" \
  "the layout's config is skopeo's view of the archive's"
assert_eq "$(config_of "oci:$WORK/from-skopeo:v1")" "$(config_of oci:lay:v1)" "and the source image's config"
expect_exit 0 verify "oci:$WORK/from-skopeo:v1"
pass "skopeo's docker-archive: imgtool's digest and raw manifest are skopeo's ($d1); verified; copied to a layout"

# 2. Two tags on one image (--additional-tag), and two images in one manifest.json.
skopeo copy -q --additional-tag bar/extra:2 "oci:lay:v1" "docker-archive:tags.tar:foo/app:v1"
assert_eq "$("$IMGTOOL" tags docker-archive:tags.tar | tr '\n' ' ')" "docker.io/bar/extra:2 docker.io/foo/app:v1 " "tags"
assert_eq "$("$IMGTOOL" digest docker-archive:tags.tar:bar/extra:2)" "$d1" "the additional tag"
skopeo copy -q "oci:lay:v2" "docker-archive:s2.tar:foo/app:v2"
"${RETAR[@]}" two.tar s1.tar s2.tar
d2=$(raw_digest docker-archive:two.tar:foo/app:v2)
[ "$d2" != "$d1" ] || fail "the two images have one digest"
assert_eq "$("$IMGTOOL" digest docker-archive:two.tar:foo/app:v1)" "$d1" "image 1 of 2 by tag"
assert_eq "$("$IMGTOOL" digest docker-archive:two.tar:foo/app:v2)" "$d2" "image 2 of 2 by tag, as skopeo"
assert_eq "$("$IMGTOOL" digest docker-archive:two.tar:@1)" "$d2" "image 2 of 2 by @1"
expect_exit 2 digest docker-archive:two.tar
assert_contains "$OUTPUT" "holds 2 images: name one" "no image named"
assert_contains "$OUTPUT" "'docker.io/foo/app:v2'" "the choices are listed"
expect_exit 3 digest docker-archive:two.tar:@2
"$IMGTOOL" copy -q docker-archive:two.tar:@1 "oci:$WORK/second:v2" >/dev/null
assert_eq "$(config_of "oci:$WORK/second:v2")" "$(config_of oci:lay:v2)" "the second image's config"
pass "several images in one tarball: picked by NAME:TAG or @N, as skopeo picks them"

# 3. imgtool writes, skopeo reads: same config and diff_ids; the same bytes every run.
printed=$("$IMGTOOL" copy -q oci:lay:v1 docker-archive:mine.tar:foo/app:v1)
assert_eq "$printed" "$("$IMGTOOL" digest docker-archive:mine.tar)" "copy prints what a reader gets"
assert_eq "$printed" "$(raw_digest docker-archive:mine.tar)" "skopeo's digest of our archive"
assert_eq "$printed" "$d1" "same config and diff_ids as skopeo's archive: same digest"
[ "$printed" != "$("$IMGTOOL" digest oci:lay:v1)" ] || fail "the layout's digest should differ (gzip layers)"
assert_eq "$(skopeo inspect --raw --config docker-archive:mine.tar)" "$(config_of oci:lay:v1)" "skopeo reads our config"
assert_eq "$(skopeo inspect docker-archive:mine.tar | jq -c .Layers)" "$(config_of oci:lay:v1 | jq -c .rootfs.diff_ids)" \
  "the layers skopeo sees are the diff_ids"
skopeo copy -q docker-archive:mine.tar:foo/app:v1 "oci:$WORK/by-skopeo:x"
assert_eq "$(skopeo inspect --raw --config "oci:$WORK/by-skopeo:x" | jq -c .rootfs.diff_ids)" \
  "$(config_of oci:lay:v1 | jq -c .rootfs.diff_ids)" "skopeo copies it on, diff_ids kept"
(umask 077 && TZ=Asia/Tokyo LC_ALL=C.UTF-8 "$IMGTOOL" copy -q oci:lay:v1 "docker-archive:$WORK/again.tar:foo/app:v1" >/dev/null)
cmp mine.tar again.tar || fail "two writes gave different bytes"
"$IMGTOOL" copy -q oci:lay:v1 docker-archive:mine.tar:foo/app:v1 >/dev/null
cmp mine.tar again.tar || fail "a rewrite in place gave different bytes"
listing=$(python3 - mine.tar <<'PY'
import sys, tarfile
ms = tarfile.open(sys.argv[1]).getmembers()
names = [m.name for m in ms]
assert names == sorted(names), names
assert all(m.mtime == 0 and m.uid == 0 and m.gid == 0 and m.isfile() for m in ms), ms
print(" ".join(n if n in ("manifest.json", "repositories") else n.split(".")[-1] for n in names))
PY
)
assert_eq "$listing" "tar tar json manifest.json repositories" "members: layers, config, manifest.json, repositories"
assert_eq "$(tar -xOf mine.tar manifest.json | jq -c '.[0].RepoTags')" '["docker.io/foo/app:v1"]' "RepoTags"
"$IMGTOOL" copy -q oci:lay:v1 docker-archive:untagged.tar >/dev/null
assert_eq "$(tar -tf untagged.tar | grep -c repositories || true)" "0" "no repositories file without a tag"
pass "imgtool's docker-archive: skopeo reads the same config and diff_ids ($printed); byte-identical reruns"

# 4. Docker >= 25 (an OCI layout plus manifest.json, gzip layers) and a containerd export.
"$IMGTOOL" copy -q oci:lay:v1 oci-archive:oa.tar:v1 >/dev/null
"${RETAR[@]}" d25.tar oa.tar --from-oci-archive v1
assert_eq "$("$IMGTOOL" digest docker-archive:d25.tar)" "$(raw_digest docker-archive:d25.tar)" "a Docker 25 tarball"
assert_eq "$("$IMGTOOL" digest docker-archive:d25.tar)" "$d1" "gzip layers or plain: the same image, the same digest"
expect_exit 0 verify docker-archive:d25.tar
# The same tar is the OCI layout it also holds: oci-archive: reads it, as the layout's digest.
assert_eq "$("$IMGTOOL" digest oci-archive:d25.tar:v1)" "$("$IMGTOOL" digest oci-archive:oa.tar:v1)" "a Docker 25 tarball read as oci-archive:"
expect_exit 0 verify oci-archive:d25.tar:v1
# oras-go's containerd export, where the real-world fixtures are (IMGTOOL_REALWORLD).
oras=""
for d in "${IMGTOOL_REALWORLD:-}" "$REPO/tests/fixtures/realworld" "$REPO/../shared/testdata/realworld"; do
  if [ -n "$d" ] && [ -f "$d/oci/oras-hello-world.tar" ]; then oras="$d/oci/oras-hello-world.tar" && break; fi
done
if [ -n "$oras" ]; then
  for f in "$oras" "${oras%.tar}-prefixed-path.tar"; do  # the second names every member ./...
    assert_eq "$("$IMGTOOL" digest "docker-archive:$f")" "$(raw_digest "docker-archive:$f")" "a containerd export"
    expect_exit 0 verify "docker-archive:$f:hello-world:latest"
  done
  pass "Docker 25 tarball read as docker-archive: and oci-archive:; containerd exports (oras-go's hello-world.tar, ./-prefixed too) read as docker-archive:, skopeo's digests"
else
  pass "Docker 25 tarball read as docker-archive: and oci-archive: (oras-go's containerd export not on this machine)"
fi

# 5. What a docker-archive cannot hold is refused, naming what to do.
"$IMGTOOL" index create "oci:$WORK/idx:multi" oci:lay:v1 >/dev/null 2>&1
expect_exit 2 copy oci:idx:multi docker-archive:idx.tar
assert_contains "$OUTPUT" "a docker-archive holds single images, not an index: choose one with --platform (linux/amd64)" "index"
[ ! -e idx.tar ] || fail "a refused index left a file"
"$IMGTOOL" copy -q --platform linux/amd64 oci:idx:multi docker-archive:idx.tar >/dev/null
export COSIGN_PASSWORD=test-only-password
"$IMGTOOL" keygen --output-key-prefix k >/dev/null 2>&1
"$IMGTOOL" sign --key k.key oci:lay:v1 >/dev/null 2>&1
"$IMGTOOL" copy -q oci:lay:v1 docker-archive:signed.tar:foo/app:v1 >/dev/null
cmp signed.tar mine.tar || fail "a signed image's archive holds more than the image"
expect_exit 2 sign --key k.key docker-archive:signed.tar:foo/app:v1
assert_contains "$OUTPUT" "cannot go into a docker-archive" "signing into a docker-archive"
cmp signed.tar mine.tar || fail "a refused signature changed the archive"
expect_exit 0 build ctx/spec.json -o docker-archive:built.tar:foo/app:v1
cmp built.tar mine.tar || fail "build wrote another docker-archive than copy"
pass "an index is refused naming --platform; signatures are left behind; sign refuses docker-archive:; build writes copy's tarball"

# 6. Hostile and damaged tarballs: refused, naming the cause; a copy writes nothing.
refused() {  # WANT_EXIT TEXT RETAR_ARGS...: the tarball is refused by digest and by copy
  local want=$1 text=$2
  shift 2
  "${RETAR[@]}" bad.tar "$@"
  expect_exit "$want" copy docker-archive:bad.tar "oci:$WORK/dest:x"
  assert_contains "$OUTPUT" "$text" "hostile tarball $*"
  [ ! -e "$WORK/dest" ] || fail "a refused tarball left $WORK/dest"
}
tar -xOf s1.tar manifest.json >real.json
cfg=$(jq -r '.[0].Config' real.json)
layer0=$(jq -r '.[0].Layers[0]' real.json)
refused 2 "member '../../evil' lies outside the archive" s1.tar --file ../../evil=real.json
refused 2 "'manifest.json' is not a regular file" s1.tar --drop manifest.json --file real.json=real.json \
  --link manifest.json=real.json
refused 2 "symlink 'x' -> '/etc/passwd' leads outside the archive" s1.tar --link x=/etc/passwd
jq '[range(1001) as $i | .[0]]' real.json >huge.json
refused 2 "manifest.json: 1001 images; imgtool reads at most 1000" s1.tar --manifest-json huge.json
refused 4 "(diff_id sha256:${layer0%.tar}) is missing from the archive" s1.tar --drop "$layer0"
refused 4 "config '$cfg' is missing from the archive" s1.tar --drop "$cfg"
"${RETAR[@]}" flipped.tar s1.tar --flip "$layer0"
expect_exit 4 verify docker-archive:flipped.tar
assert_contains "$OUTPUT" "sha256:${layer0%.tar}" "verify names the damaged layer"
refused 4 "sha256:${layer0%.tar}" s1.tar --flip "$layer0"
gz=$(jq -r '.[0].Layers[0]' <(tar -xOf d25.tar manifest.json))
refused 4 "corrupt gzip stream" d25.tar --flip "$gz"
other=$(jq -r '.layers[0].digest' <("$IMGTOOL" inspect --raw oci:lay:v2))
[ "blobs/sha256/${other#sha256:}" != "$gz" ] || fail "the two images share their first layer"
refused 4 "inflates to $(config_of oci:lay:v2 | jq -r '.rootfs.diff_ids[0]'), not its diff_id" \
  d25.tar --drop "$gz" --file "$gz=lay/blobs/sha256/${other#sha256:}"
pass "traversal, symlinked manifest.json, links out, 1,001 images, missing layer and config, diff_id mismatches: refused, nothing written"

# 7. Work: inspect reads the headers and the config, verify each layer once.
head -c $((16 << 20)) /dev/urandom >ctx/big.bin
jq '.layers += [{"name": "big", "files": [{"src": "big.bin", "dest": "/opt/big.bin"}]}]' ctx/spec.json >ctx/big.json
(cd ctx && "$IMGTOOL" build big.json -o "oci:$WORK/big:v1" -q >/dev/null)
skopeo copy -q oci:big:v1 docker-archive:big.tar
if can_trace; then
  bytes_read() {  # VERB...: bytes read and pread64 returned from big.tar
    traced -f -qq -y -s 0 -e trace=read,pread64 -o trace.out "$IMGTOOL" "$@" >/dev/null
    grep -E '(read|pread64)\([0-9]+<[^>]*/big\.tar>' trace.out | sed -E 's/.*= ([0-9]+).*/\1/' |
      awk '{s += $1} END {print s + 0}'
  }
  size=$(stat -c %s big.tar)
  inspect=$(bytes_read inspect docker-archive:big.tar)
  verify=$(bytes_read verify docker-archive:big.tar)
  [ "$inspect" -lt $((size / 100)) ] || fail "inspect read $inspect bytes of a $size-byte tarball"
  [ "$verify" -le $((size + size / 10)) ] || fail "verify read $verify bytes of a $size-byte tarball"
  pass "work: inspect reads $inspect bytes of a $size-byte tarball, verify $verify (each layer once)"
else
  pass "work not counted (strace cannot trace here)"
fi
