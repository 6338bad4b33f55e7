#!/usr/bin/env bash
# The golden CPU index (issue 18): examples/golden/spec-cpu.json for linux/amd64 and
# linux/arm64, with the arm64 debs pinned beside the amd64 ones and the arm64 trainer and
# imgtool-fleet cross-built (cross_lib.sh).
#   1. Two folders, empty caches (other TZ and umask): one index digest; its amd64 image
#      is the image `--platform linux/amd64` builds (tests/golden_image.sh).
#   2. skopeo --override-arch arm64 copies the arm64 image, umoci unpacks it, dpkg-query
#      lists exactly its arm64 packages.
#   3. The arm64 trainer runs under qemu-aarch64 from the unpacked image alone (its own
#      loader, libc, libstdc++ and Gloo: -L the rootfs) and gives the weights digest the
#      x86-64 trainer gives.
# Skipped (77) without the cross toolchain, qemu or the arm64 sysroot.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/cross_lib.sh"
cross_ready_or_skip
IMGTOOL=$(realpath "$IMGTOOL")
TRAINER="${TRAINER:-$(cd "$(dirname "$IMGTOOL")/.." && pwd)/trainer/trainer}"
G=$REPO/examples/golden

t0=$SECONDS
cross_build trainer imgtool-fleet
pass "arm64 trainer and imgtool-fleet built in $((SECONDS - t0)) s"
"$G/fetch" --spec spec-cpu.json --no-trainer >/dev/null
ctx() {  # DIR: a private spec folder with the cached debs and both architectures' binaries
  golden_context "$1"
  mkdir -p "$1/cache/bin/arm64"
  cp "$ARM_BUILD/trainer/trainer" "$1/cache/bin/arm64/trainer"
  cp "$ARM_BUILD/imgtool/imgtool-fleet" "$1/cache/bin/arm64/imgtool-fleet"
}
ctx "$WORK/a"
ctx "$WORK/b"

# 1. One index digest from two folders.
index=$("$IMGTOOL" build "$WORK/a/spec-cpu.json" -o "oci:$WORK/golden:latest" -q | tail -n1)
index2=$(cd "$WORK/b" && umask 077 && TZ=Asia/Kolkata IMGTOOL_CACHE="$WORK/cache2" \
  "$IMGTOOL" build spec-cpu.json -o "oci:$WORK/golden2:latest" -q | tail -n1)
assert_eq "$index2" "$index" "index digest of the second build (other folder, empty cache, TZ, umask)"
cmp "$WORK/golden.build.json" "$WORK/golden2.build.json" || fail "build records differ"
amd=$("$IMGTOOL" build "$WORK/a/spec-cpu.json" --platform linux/amd64 -o "oci:$WORK/amd:latest" -q | tail -n1)
raw=$(skopeo inspect --raw "oci:$WORK/golden:latest")
assert_eq "$(jq -r '.manifests[] | select(.platform.architecture == "amd64") | .digest' <<<"$raw")" "$amd" "the index's amd64 image"
pass "the golden CPU index builds twice to $index; its amd64 image is --platform linux/amd64's $amd"

# 2. The arm64 image, as peers see it.
skopeo --override-arch arm64 copy -q "oci:$WORK/golden:latest" "oci:$WORK/arm:latest"
umoci unpack --rootless --image "$WORK/arm:latest" "$WORK/bundle" >/dev/null 2>&1 || fail "umoci unpack of the arm64 image"
root=$WORK/bundle/rootfs
listed=$(dpkg-query --admindir "$root/var/lib/dpkg" -W -f '${Package} ${Version} ${Architecture}\n')
want=$(jq -r '.layers[].debs // [] | .[] | select((.platforms // ["linux/arm64"]) | index("linux/arm64")) |
  "\(.name) \(.version) \(.src | capture("_(?<a>[a-z0-9]+)\\.deb$").a)"' "$G/spec-cpu.json" | sort)
assert_eq "$listed" "$want" "dpkg-query -W in the arm64 image"
[[ $(grep -c ' arm64$' <<<"$listed") -eq 11 ]] || fail "want 11 arm64 packages: $listed"
file "$root/usr/local/bin/trainer" | grep -q 'ARM aarch64' || fail "the arm64 image's trainer is not an aarch64 binary"
pass "skopeo --override-arch arm64 + umoci: dpkg-query lists $(wc -l <<<"$listed") packages, 11 of them arm64"

# 3. The arm64 trainer from the image alone, against the x86-64 trainer.
args=(--max-steps 20 --threads 1 --train-limit 1280 --test-limit 256 --json)
x86=$("$TRAINER" "${args[@]}" 2>/dev/null | jq -r .digest)
t0=$SECONDS
arm=$(qemu-aarch64 -L "$root" "$root/usr/local/bin/trainer" --data "$root/usr/share/datasets/fashion-mnist" "${args[@]}" \
  2>"$WORK/arm.err" | jq -r .digest) || fail "the arm64 trainer does not run from the image: $(tail -3 "$WORK/arm.err")"
assert_eq "$arm" "$x86" "weights digest of the arm64 trainer from the image"
pass "the image's arm64 trainer (qemu, the image's own libraries, $((SECONDS - t0)) s) gives the x86-64 weights $x86"
