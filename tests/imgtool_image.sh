#!/usr/bin/env bash
# examples/imgtool-image, imgtool's own image: this build's .deb (cpack -G DEB, as
# tests/install.sh makes it) on the Debian packages it needs at run time, pinned in
# spec.json (fetched once into examples/imgtool-image/cache). Builds twice (other folder,
# empty cache, TZ, umask): the same digest, asserted; against the committed digest
# (expected/check): equal, or differing because this build's .deb is not the committed
# one (every commit rebuilds it), which is reported, not failed. imgtool --help and
# version --json run from the unpacked image (chroot as uid 10001, the image's loader and
# libraries); the user is non-root; dpkg-query lists every pinned package; the image signs
# with a generated key and verify --key passes; the provenance names the .deb.
# Skips (77) when the Debian packages cannot be fetched or cpack/dpkg-shlibdeps are missing.
source "$(dirname "$0")/lib.sh"
IMGTOOL=$(realpath "$IMGTOOL")
BUILD=$(cd "$(dirname "$IMGTOOL")/.." && pwd)
E=$REPO/examples/imgtool-image
for tool in cpack dpkg-shlibdeps dpkg-deb umoci; do
  command -v "$tool" >/dev/null || { echo "skip: no $tool here (scripts/setup installs it)"; exit 77; }
done
[ -f "$BUILD/docs/stamp" ] || fail "no $BUILD/docs: build the suite first (target imgtool_docs)"

# The Debian packages once (shared cache), then this build's package, staged by fetch.
rc=0
"$E/fetch" --no-deb >"$WORK/fetch.log" 2>&1 || rc=$?
if [ "$rc" = 3 ]; then echo "skip: the pinned Debian packages cannot be downloaded: $(grep 'cannot download' "$WORK/fetch.log" | head -n2)"; exit 77; fi
[ "$rc" = 0 ] || fail "fetch exited $rc: $(tail -n3 "$WORK/fetch.log")"
t0=$SECONDS
(cd "$WORK" && unset SOURCE_DATE_EPOCH && cpack -G DEB --config "$BUILD/CPackConfig.cmake" -B "$WORK/pkg" >"$WORK/cpack.log" 2>&1) ||
  fail "cpack: $(tail "$WORK/cpack.log")"
deb=$(echo "$WORK"/pkg/imgtool_*.deb)
[ -f "$deb" ] || fail "cpack wrote no .deb: $(ls "$WORK/pkg")"
"$E/fetch" --deb "$deb" >"$WORK/fetch.log" 2>&1 || fail "fetch --deb: $(tail -n3 "$WORK/fetch.log")"
staged=$E/spec.staged.json
deb_sha=$(sha256sum "$deb" | cut -c1-64)
assert_eq "$(jq -r '.layers[].debs[] | select(.name == "imgtool") | .sha256' "$staged")" "$deb_sha" "the staged spec's pin"
pass "cpack -G DEB and fetch: imgtool $(dpkg-deb -f "$deb" Version) staged (sha256:${deb_sha:0:12}) on $(jq '[.layers[].debs[]] | length - 1' "$staged") pinned Debian packages"

# Two private copies of the example's folder; two builds, strictly the same digest.
context() {
  mkdir -p "$1/cache/imgtool"
  cp "$staged" "$1/spec.json"
  ln -s "$E/cache/debs" "$1/cache/debs"
  ln -s "$E/cache/ca" "$1/cache/ca"
  cp "$deb" "$1/cache/imgtool/"
}
context "$WORK/a"
context "$WORK/b"
digest=$("$IMGTOOL" build "$WORK/a/spec.json" --platform linux/amd64 -o "oci:$WORK/img:latest" -q | tail -n1)
digest2=$(cd "$WORK/b" && umask 077 && TZ=Asia/Kolkata IMGTOOL_CACHE="$WORK/cache2" \
  "$IMGTOOL" build spec.json --platform linux/amd64 -o "oci:$WORK/img2:latest" -q | tail -n1)
assert_eq "$digest2" "$digest" "digest of the second build (other folder, empty cache, TZ, umask)"
cmp "$WORK/img.build.json" "$WORK/img2.build.json" || fail "build records differ"
pass "imgtool's image builds twice with the same digest $digest"
rc=0
"$E/expected/check" linux/amd64 "$digest" "$staged" >"$WORK/check.log" || rc=$?
sed 's/^/    /' "$WORK/check.log"
case $rc in
  0) pass "equals the committed digest" ;;
  3) assert_contains "$(cat "$WORK/check.log")" "input that differs: the imgtool .deb" "check's reason"
     pass "differs from the committed digest, and only this build's imgtool .deb explains it" ;;
  *) fail "expected/check exited $rc" ;;
esac

info=$("$IMGTOOL" inspect "oci:$WORK/img:latest" --json)
assert_eq "$(jq -r .user <<<"$info")" "10001:10001" "the image's user (non-root)"
assert_eq "$(jq -c .entrypoint <<<"$info")" '["/usr/bin/imgtool"]' "entrypoint"
umoci unpack --image "$WORK/img:latest" "$WORK/bundle" >/dev/null 2>&1 || fail "umoci unpack"
root=$WORK/bundle/rootfs
listed=$(dpkg-query --admindir "$root/var/lib/dpkg" -W -f '${Package} ${Version} ${Status}\n')
want=$(jq -r '.layers[].debs[] | "\(.name) \(.version) install ok installed"' "$staged" | LC_ALL=C sort)
assert_eq "$(LC_ALL=C sort <<<"$listed")" "$want" "dpkg-query -W against the unpacked image"
[ "$(grep -c 'BEGIN CERTIFICATE' "$root/etc/ssl/certs/ca-certificates.crt")" -gt 100 ] || fail "no CA bundle in the image"
pass "user 10001:10001, entrypoint /usr/bin/imgtool; dpkg-query lists the $(wc -l <<<"$listed") pinned packages; a CA bundle"

if [ "$(id -u)" = 0 ]; then
  # The image's environment only (it has no env(1): the host's chroot starts it).
  in_image() { env -i PATH=/usr/bin:/bin HOME=/home/imgtool "$(command -v chroot)" --userspec=10001:10001 "$root" "$@"; }
  assert_contains "$(in_image /usr/bin/imgtool --help)" "Subcommands:" "imgtool --help inside the image"
  assert_eq "$(in_image /usr/bin/imgtool version --json)" "$("$IMGTOOL" version --json)" "imgtool version --json inside the image"
  missing=$(for f in /usr/bin/imgtool /usr/bin/imgtool-fleet /usr/libexec/imgtool/trainer; do
    chroot "$root" /lib64/ld-linux-x86-64.so.2 --list "$f" 2>&1 | grep 'not found' || true; done)
  [ -z "$missing" ] || fail "the image lacks libraries: $missing"
  pass "imgtool --help and version --json run from the unpacked image (chroot, uid 10001); every library resolves there"
else
  echo "note: not root: imgtool is not run inside the image (chroot)"
fi

export COSIGN_PASSWORD=imgtool-image-test  # the generated key's
(cd "$WORK" && "$IMGTOOL" keygen --output-key-prefix k >/dev/null 2>&1)
"$IMGTOOL" sign --key "$WORK/k.key" "oci:$WORK/img:latest" >/dev/null
expect_exit 0 verify --key "$WORK/k.pub" "oci:$WORK/img:latest"
(cd "$WORK" && COSIGN_PASSWORD=other "$IMGTOOL" keygen --output-key-prefix other >/dev/null 2>&1)
expect_exit 5 verify --key "$WORK/other.pub" "oci:$WORK/img:latest"
prov=$WORK/img.provenance.json
assert_eq "$(jq -r '.subject[0].digest.sha256' "$prov")" "${digest#sha256:}" "the provenance's subject"
assert_eq "$(jq -r '.predicate.buildDefinition.resolvedDependencies[] | select(.name == "imgtool") | .digest.sha256' "$prov")" \
  "$deb_sha" "the imgtool .deb among the provenance's resolvedDependencies"
pass "signed with a generated key: verify --key passes, another key is refused; the provenance names the imgtool .deb"
echo "it_imgtool_image took $((SECONDS - t0)) s after the fetch"
