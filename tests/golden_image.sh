#!/usr/bin/env bash
# examples/golden, the trainer image: Debian runtime packages, Gloo and its dependencies,
# the Fashion-MNIST data as its own layer, the trainer binary, uid 10001, every input
# pinned by sha256. The three specs agree on every package pin. The CPU variant
# (spec-cpu.json: spec.json without the CUDA wheels; ~37 MB of .debs, fetched once into
# examples/golden/cache) builds twice (other folder, empty cache, TZ, umask) with the same
# digest; dpkg-query on the image unpacked by umoci lists exactly the pinned packages and
# versions; the trainer runs from it (chroot: the image's own loader and libraries). Where
# this machine has the NVIDIA wheels installed (/usr/local/cuda/dist-info), the
# installed-wheels variant is built too: stack.json names each wheel and library, and
# every CUDA library's dependencies resolve inside the image. The ~1 GB of wheels that
# spec.json downloads are left to scripts/quickstart and bench/golden_build.
# The golden specs build linux/amd64 and linux/arm64; this test builds their amd64 image
# (--platform linux/amd64). The whole index, with the cross-built arm64 trainer, is
# tests/golden_index_cross.sh (label cross).
# Env: TRAINER (default: the trainer beside IMGTOOL's build folder).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/packages_lib.sh"
IMGTOOL=$(realpath "$IMGTOOL")
TRAINER="${TRAINER:-$(cd "$(dirname "$IMGTOOL")/.." && pwd)/trainer/trainer}"
[ -x "$TRAINER" ] || fail "no trainer binary at $TRAINER (set TRAINER, or build the trainer target)"
G=$REPO/examples/golden

# The specs agree: spec-cpu.json is spec.json without its CUDA layers; the installed
# variant has the same packages; every package is pinned by sha256, name and version.
# The amd64 pins: spec-installed.json (this machine's wheels) is amd64 only.
AMD64='select((.platforms // ["linux/amd64"]) | index("linux/amd64"))'
pins() { jq -c "[.layers[] | {name, debs: [(.debs // [])[] | $AMD64 | {src, sha256, name, version}]} | select(.debs != [])]" "$1"; }
assert_eq "$(pins "$G/spec-cpu.json")" "$(pins "$G/spec.json")" "deb pins of spec-cpu.json vs spec.json"
assert_eq "$(pins "$G/spec-installed.json")" "$(pins "$G/spec.json")" "deb pins of spec-installed.json vs spec.json"
assert_eq "$(jq '[.layers[] | select(.wheels or .installed_wheels) | .name]' "$G/spec.json" | jq -c .)" \
  '["cuda-runtime","cublas","cudnn","nccl"]' "CUDA layers of spec.json"
assert_eq "$(jq -c 'del(.layers, .labels, .env.LD_LIBRARY_PATH, .stack)' "$G/spec-cpu.json")" \
  "$(jq -c 'del(.layers, .labels, .env.LD_LIBRARY_PATH, .stack)' "$G/spec.json")" "spec-cpu.json vs spec.json outside layers"
# The same non-CUDA layers, except that the CPU image leaves out the trainer's CUDA plugin.
assert_eq "$(jq -c '[.layers[] | select((.wheels or .installed_wheels) | not)]' "$G/spec-cpu.json")" \
  "$(jq -c '[.layers[] | select((.wheels or .installed_wheels) | not)
    | .files |= (if . then map(select(.src != "libtrainer_cuda.so")) else . end) | with_entries(select(.value != null))]' \
    "$G/spec.json")" "non-CUDA layers"
for s in spec.json spec-installed.json; do
  assert_eq "$(jq -c .stack "$G/$s")" '{"cuda":"13.0.96","cublas":"13.1.0.3","cudnn":"9.19.0","nccl":"2.28.9"}' "$s stack pins"
done
pass "spec.json, spec-installed.json and spec-cpu.json pin the same $(jq "[.layers[].debs // [] | .[] | $AMD64] | length" "$G/spec.json") amd64 debs"

if [ -d /usr/local/cuda/dist-info ]; then
  while IFS=$'\t' read -r dist_info name version rec; do
    assert_eq "$(awk -F': ' '$1=="Version" {print $2; exit}' "$dist_info/METADATA")" "$version" "$name METADATA version"
    assert_eq "$(sha256sum "$dist_info/RECORD" | cut -c1-64)" "$rec" "$name RECORD pin"
  done < <(jq -r '.layers[].installed_wheels // [] | .[] | [.dist_info, .name, .version, .record_sha256] | @tsv' "$G/spec-installed.json")
  pass "spec-installed.json matches this machine's dist-info (versions, RECORD sha256)"
fi

# Inputs: fetched once into examples/golden/cache (shared with scripts/quickstart); the
# trainer under test staged in a private copy of the spec's folder.
"$G/fetch" --spec spec-cpu.json --no-trainer --platform linux/amd64 >/dev/null
golden_context "$WORK/a"
golden_context "$WORK/b"
digest=$("$IMGTOOL" build "$WORK/a/spec-cpu.json" --platform linux/amd64 -o "oci:$WORK/golden:latest" -q | tail -n1)
digest2=$(cd "$WORK/b" && umask 077 && TZ=Asia/Kolkata IMGTOOL_CACHE="$WORK/cache2" \
  "$IMGTOOL" build spec-cpu.json --platform linux/amd64 -o "oci:$WORK/golden2:latest" -q | tail -n1)
assert_eq "$digest2" "$digest" "digest of the second build (other folder, empty cache, TZ, umask)"
cmp "$WORK/golden.build.json" "$WORK/golden2.build.json" || fail "build records differ"
pass "the golden image builds twice with the same digest $digest"

expect_exit 0 verify "oci:$WORK/golden:latest"
info=$("$IMGTOOL" inspect "oci:$WORK/golden:latest" --json)
assert_eq "$(jq -r .digest <<<"$info")" "$digest" "inspect digest"
assert_eq "$(jq -r .user <<<"$info")" "10001:10001" "non-root user"
assert_eq "$(jq -c .entrypoint <<<"$info")" '["/usr/local/bin/trainer"]' "entrypoint"
assert_eq "$(skopeo inspect "oci:$WORK/golden:latest" | jq -r .Digest)" "$digest" "skopeo digest"
names=$(jq -c '[.outputs.layers[].name]' "$WORK/golden.build.json")
assert_eq "$names" '["debian-runtime","gloo","fashion-mnist","trainer","imgtool-metadata"]' "layers"
data_layer=$(jq -r '.outputs.layers[] | select(.name=="fashion-mnist") | .digest' "$WORK/golden.build.json")
data_files=$(tar -tzf "$WORK/golden/blobs/sha256/${data_layer#sha256:}")
assert_contains "$data_files" "usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz" "dataset layer"
grep -q 'usr/lib/\|usr/local/bin' <<<"$data_files" && fail "the dataset layer carries more than the dataset"
pass "verified; user 10001:10001, entrypoint the trainer, Fashion-MNIST in a layer of its own"

# dpkg sees what was installed: unpacked by umoci (a peer), queried with dpkg-query.
umoci unpack --image "$WORK/golden:latest" "$WORK/bundle" >/dev/null 2>&1 || fail "umoci unpack"
root=$WORK/bundle/rootfs
listed=$(dpkg-query --admindir "$root/var/lib/dpkg" -W -f '${Package} ${Version} ${Status}\n')
want=$(jq -r ".layers[].debs // [] | .[] | $AMD64"' | "\(.name) \(.version) install ok installed"' "$G/spec-cpu.json" | sort)
assert_eq "$listed" "$want" "dpkg-query -W against the unpacked image"
assert_contains "$(dpkg-query --admindir "$root/var/lib/dpkg" -L libgloo0)" "/usr/lib/libgloo.so.0" "dpkg-query -L libgloo0"
pass "dpkg-query lists the $(wc -l <<<"$listed") pinned packages with their versions"
echo "$listed" | sed 's/ install ok installed//; s/^/    /'

# The trainer starts with the image's own loader and libraries, as uid 10001.
if [ "$(id -u)" = 0 ]; then
  out=$(chroot --userspec=10001:10001 "$root" /usr/local/bin/trainer --max-steps 2 --threads 1 --train-limit 256 \
    --test-limit 256 --json 2>/dev/null) || fail "the trainer does not run inside the unpacked image"
  assert_eq "$(jq -r .steps <<<"$out")" 2 "steps"
  pass "the trainer runs from the unpacked image (chroot, uid 10001): weights $(jq -r .digest <<<"$out")"
  # The fleet preflight runs inside the image it certifies: /usr/local/bin/imgtool is
  # imgtool-fleet, which needs nothing the trainer does not.
  fp=$(chroot --userspec=10001:10001 "$root" /usr/local/bin/imgtool probe --json --no-hash-cache \
    --image-digest "$digest") || fail "imgtool probe does not run inside the unpacked image"
  assert_eq "$(jq -r '.fields["image.digest"]' <<<"$fp")" "$digest" "image digest the probe reports"
  assert_eq "$(jq -r '.fields["os.glibc"]' <<<"$fp")" "2.36" "glibc the probe reports (the image's libc6)"
  assert_eq "$(jq -r '.fields.nccl' <<<"$fp")" "absent" "NCCL in the CPU image"
  pass "imgtool probe runs from the unpacked image (chroot, uid 10001): glibc 2.36, no CUDA libraries"
fi

# The installed-wheels variant: CUDA runtime, cuBLAS, cuDNN and NCCL from this machine's
# files, each checked against its RECORD by the build (~1.3 GB packed: ~45 s on 2 cores).
plugin=$(dirname "$TRAINER")/libtrainer_cuda.so
if [ -d /usr/local/cuda/dist-info ] && [ ! -f "$plugin" ]; then
  echo "note: the installed-wheels variant is not built: the trainer was built without its CUDA backend ($plugin)"
elif [ -d /usr/local/cuda/dist-info ]; then
  mkdir -p "$WORK/c/cache/bin"
  cp "$G/spec-installed.json" "$WORK/c/"
  ln -s "$G/cache/debs" "$WORK/c/cache/debs"
  cp "$TRAINER" "$plugin" "$WORK/c/cache/bin/"
  cp "$IMGTOOL_FLEET" "$WORK/c/cache/bin/imgtool-fleet"
  "$IMGTOOL" build "$WORK/c/spec-installed.json" -o "oci:$WORK/cuda:latest" -q >/dev/null
  info=$("$IMGTOOL" inspect "oci:$WORK/cuda:latest" --json)
  for c in cuda:13.0.96 cublas:13.1.0.3 cudnn:9.19.0 nccl:2.28.9; do
    assert_eq "$(jq -r ".labels[\"org.imgtool.stack.${c%%:*}\"]" <<<"$info")" "${c#*:}" "${c%%:*} pin label"
  done
  unpack_image "$WORK/cuda" "$WORK/cuda-root"
  croot=$WORK/cuda-root
  stack=$(cat "$croot/etc/imgtool/stack.json")
  assert_eq "$(jq -r '[.components | to_entries[] | "\(.key)=\(.value.package)@\(.value.packageVersion)"] | join(" ")' <<<"$stack")" \
    "cublas=nvidia-cublas@13.1.0.3 cuda=nvidia-cuda-runtime@13.0.96 cudnn=nvidia-cudnn-cu13@9.19.0.56 nccl=nvidia-nccl-cu13@2.28.9" "stack.json packages"
  libdir=$(jq -r '.env[]' <<<"$info" | sed -n 's/^LD_LIBRARY_PATH=\([^:]*\):.*/\1/p')
  assert_eq "$libdir" /usr/local/cuda/lib "first LD_LIBRARY_PATH folder"
  for so in libcudart.so.13 libcublas.so.13 libcublasLt.so.13 libcudnn.so.9 libnccl.so.2; do
    [ -f "$croot$libdir/$so" ] || fail "$so is not in $libdir of the image"
  done
  if [ "$(id -u)" = 0 ]; then
    for f in "$croot$libdir"/*.so.*; do
      missing=$(chroot "$croot" /lib64/ld-linux-x86-64.so.2 --library-path "$libdir" --list "$libdir/${f##*/}" 2>&1 | grep 'not found' || true)
      [ -z "$missing" ] || fail "${f##*/} needs what the image lacks: $missing"
    done
  fi
  pass "installed-wheels variant: stack.json names each wheel; the CUDA libraries and their dependencies resolve in $libdir"
  if [ "$(id -u)" = 0 ]; then
    # The preflight inside the CUDA image, with the image's environment: the probe loads
    # the image's CUDA libraries, and the fleet check holds them to the image's own
    # stack.json (--expect), with a golden run. World size 1 on 127.0.0.1.
    cdigest=$("$IMGTOOL" digest "oci:$WORK/cuda:latest")
    image_env=()
    while IFS= read -r e; do image_env+=("$e"); done < <(jq -r '.env[]' <<<"$info")
    # The image has no env(1): the host's chroot starts with the image's environment only.
    in_image() { env -i "${image_env[@]}" "$(command -v chroot)" --userspec=10001:10001 "$croot" "$@"; }
    fp=$(in_image /usr/local/bin/imgtool probe --json --no-hash-cache --image-digest "$cdigest") \
      || fail "imgtool probe does not run inside the CUDA image"
    for f in cuda.runtime:13.0 cudnn:9.19.0 nccl:2.28.9; do
      assert_eq "$(jq -r ".fields[\"${f%%:*}\"]" <<<"$fp")" "${f#*:}" "${f%%:*} the probe reports inside the image"
    done
    assert_eq "$(jq -r '.fields["lib.libnccl.so.2"]' <<<"$fp")" \
      "sha256:$(sha256sum "$croot$libdir/libnccl.so.2" | cut -c1-64)" "NCCL library hash inside the image"
    port=$(free_port)
    set +e
    verdict=$(in_image /usr/local/bin/imgtool fleet check --rank 0 --world-size 1 --rendezvous "127.0.0.1:$port" \
      --no-hash-cache --image-digest "$cdigest" --expect /etc/imgtool/stack.json --golden-run --json)
    rc=$?
    set -e
    assert_eq "$rc" 0 "fleet check --expect /etc/imgtool/stack.json inside the CUDA image: $verdict"
    assert_eq "$(jq -r .ok <<<"$verdict")" true "verdict ok"
    pass "inside the CUDA image: imgtool probe reports its CUDA 13.0 / cuDNN 9.19.0 / NCCL 2.28.9, and fleet check --expect its stack.json passes"
  fi
fi
