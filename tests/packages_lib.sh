# Fixtures for the package tests: tiny .debs built by dpkg-deb, wheels built by Python's
# zipfile (RECORD as pip writes it), and an unpacker that lays an image's layers into a
# folder in manifest order. Sourced after lib.sh.

# make_deb DIR NAME VERSION [postinst]: builds DIR/NAME_VERSION.deb with a binary, a
# shared library, a symlink and a hardlink; prints its path. DEB_ARCH=arm64 makes an arm64
# package (DIR/NAME_VERSION_arm64.deb; default: Architecture all).
make_deb() {
  local dir=$1 name=$2 version=$3 arch=${DEB_ARCH:-all} root="$1/src-$2-$3-${DEB_ARCH:-all}"
  local out="$dir/${name}_${version}${DEB_ARCH:+_$DEB_ARCH}.deb"
  mkdir -p "$root/DEBIAN" "$root/usr/bin" "$root/usr/lib/$name" "$root/usr/share/doc/$name"
  printf 'Package: %s\nVersion: %s\nArchitecture: %s\nMaintainer: T <t@example.com>\nInstalled-Size: 8\nDescription: test package %s\n' \
    "$name" "$version" "$arch" "$name" >"$root/DEBIAN/control"
  if [ "${4:-}" = postinst ]; then printf '#!/bin/sh\nexit 0\n' >"$root/DEBIAN/postinst" && chmod 755 "$root/DEBIAN/postinst"; fi
  printf '#!/bin/sh\necho %s\n' "$name" >"$root/usr/bin/$name" && chmod 755 "$root/usr/bin/$name"
  printf 'lib %s %s%s\n' "$name" "$version" "${DEB_ARCH:+ $DEB_ARCH}" >"$root/usr/lib/$name/lib$name.so.1" && chmod 644 "$root/usr/lib/$name/lib$name.so.1"
  ln -sf "lib$name.so.1" "$root/usr/lib/$name/lib$name.so"
  printf 'doc\n' >"$root/usr/share/doc/$name/README" && chmod 640 "$root/usr/share/doc/$name/README"
  ln -f "$root/usr/share/doc/$name/README" "$root/usr/share/doc/$name/README.hard"
  dpkg-deb --root-owner-group -Zgzip --build "$root" "$out" >/dev/null
  echo "$out"
}

# make_wheel DIR DIST VERSION TOP: builds DIR/DIST-VERSION-py3-none-any.whl with
# TOP/lib/lib<DIST>.so.1 and TOP/__init__.py; prints its path. DIST uses underscores.
make_wheel() {
  python3 - "$@" <<'PY'
import base64, hashlib, sys, zipfile
d, dist, version, top = sys.argv[1:5]
name = dist.replace("_", "-")
di = f"{dist}-{version}.dist-info"
files = {
    f"{top}/lib/lib{dist}.so.1": f"library {dist} {version}\n".encode(),
    f"{top}/__init__.py": b"",
    f"{di}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n\nbody\n".encode(),
    f"{di}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
rows = []
for p, b in files.items():
    h = base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b"=").decode()
    rows.append(f"{p},sha256={h},{len(b)}")
rows.append(f"{di}/RECORD,,")
files[f"{di}/RECORD"] = ("\n".join(rows) + "\n").encode()
out = f"{d}/{dist}-{version}-py3-none-any.whl"
with zipfile.ZipFile(out, "w") as z:
    for p, b in files.items():
        z.writestr(zipfile.ZipInfo(p, (1980, 1, 1, 0, 0, 0)), b)
print(out)
PY
}

sha() { sha256sum "$1" | cut -d' ' -f1; }

# refused WANT-EXIT MESSAGE SPEC-JSON: building SPEC-JSON (as bad.json) exits WANT-EXIT
# with MESSAGE and leaves no output or build record behind. $zero: a pin nothing matches.
refused() {  # want message spec-json
  printf '%s' "$3" >bad.json
  rm -rf "$WORK/out"
  expect_exit "$1" build bad.json -o "oci:$WORK/out:v1" -q
  assert_contains "$OUTPUT" "$2" "error text"
  [ ! -e "$WORK/out" ] && [ ! -e "$WORK/out.build.json" ] || fail "a refused build left output behind"
  pass "refused ($1): $(tail -n1 <<<"$OUTPUT")"
}
zero=0000000000000000000000000000000000000000000000000000000000000000

# unpack_image LAYOUT ROOT: extracts the layers of the layout's only image into ROOT.
unpack_image() {
  local layout=$1 root=$2
  mkdir -p "$root"
  local manifest
  manifest=$(jq -r '.manifests[0].digest' "$layout/index.json" | cut -d: -f2)
  for d in $(jq -r '.layers[].digest' "$layout/blobs/sha256/$manifest" | cut -d: -f2); do
    tar -xzf "$layout/blobs/sha256/$d" -C "$root" --numeric-owner
  done
}

# multiplatform_context DIR: DIR/spec.json for linux/amd64 and linux/arm64, with one deb
# per architecture (libhello 1.0-1, Architecture amd64 and arm64) and a file per platform.
multiplatform_context() {
  mkdir -p "$1/debs" "$1/bin"
  local amd arm
  amd=$(DEB_ARCH=amd64 make_deb "$1/debs" libhello 1.0-1)
  arm=$(DEB_ARCH=arm64 make_deb "$1/debs" libhello 1.0-1)
  printf 'amd64 tool\n' >"$1/bin/tool-amd64"
  printf 'arm64 tool\n' >"$1/bin/tool-arm64"
  cat >"$1/spec.json" <<JSON
{"base": "scratch", "user": {"name": "trainer", "uid": 10001, "gid": 10001},
 "platforms": ["linux/amd64", "linux/arm64"],
 "layers": [
  {"name": "runtime", "debs": [
    {"src": "debs/$(basename "$amd")", "sha256": "$(sha "$amd")", "name": "libhello", "version": "1.0-1", "platforms": ["linux/amd64"]},
    {"src": "debs/$(basename "$arm")", "sha256": "$(sha "$arm")", "name": "libhello", "version": "1.0-1", "platforms": ["linux/arm64"]}]},
  {"name": "tool", "root": "bin", "files": [
    {"src": "tool-amd64", "dest": "/usr/local/bin/tool", "platforms": ["linux/amd64"]},
    {"src": "tool-arm64", "dest": "/usr/local/bin/tool", "platforms": ["linux/arm64"]}]}],
 "labels": {"org.opencontainers.image.title": "multi"}}
JSON
}
