#!/usr/bin/env bash
# Same spec, two folders, different TZ / umask / LC_ALL, same SOURCE_DATE_EPOCH:
# same manifest digest and byte-identical blobs. Another epoch: another digest.
source "$(dirname "$0")/lib.sh"

make_context "$WORK/a"
cp -a "$WORK/a" "$WORK/b"
touch -d '2001-02-03 04:05:06' "$WORK/b/app/share/model.txt"  # host mtimes must not leak in

build() {  # dir out tz umask locale compression
  (cd "$1" && umask "$4" && TZ="$3" LC_ALL="$5" "$IMGTOOL" build spec.json -o "oci:$2:v1" --no-cache -q \
    --compression "$6" | tail -n 1)
}

for comp in gzip zstd; do
  da=$(build "$WORK/a" "$WORK/out-a-$comp" UTC 022 C "$comp")
  db=$(build "$WORK/b" "$WORK/out-b-$comp" Asia/Kolkata 077 C.UTF-8 "$comp")
  assert_eq "$da" "$db" "$comp: digest in another folder, TZ, umask and locale"
  [[ "$da" =~ ^sha256:[0-9a-f]{64}$ ]] || fail "last stdout line is not a digest: $da"
  diff -r "$WORK/out-a-$comp" "$WORK/out-b-$comp" >/dev/null || fail "$comp: layouts differ byte for byte"
  cmp "$WORK/out-a-$comp.build.json" "$WORK/out-b-$comp.build.json" || fail "$comp: build records differ"
  pass "$comp: $da in both folders, blobs and build record byte-identical"
done

dz=$(build "$WORK/a" "$WORK/out-a-zstd2" UTC 022 C zstd)
dg=$(build "$WORK/a" "$WORK/out-a-gzip2" UTC 022 C gzip)
[ "$dz" != "$dg" ] || fail "gzip and zstd gave the same digest"
grep -q 'tar+zstd' "$WORK/out-a-zstd2/blobs/sha256/$(jq -r '.manifests[0].digest' "$WORK/out-a-zstd2/index.json" | cut -d: -f2)" \
  || fail "zstd manifest does not use the tar+zstd media type"
pass "zstd layers carry application/vnd.oci.image.layer.v1.tar+zstd"

d0=$(cd "$WORK/a" && "$IMGTOOL" build spec.json -o "oci:$WORK/e0" --no-cache -q | tail -n1)
d1=$(cd "$WORK/a" && SOURCE_DATE_EPOCH=1700000000 "$IMGTOOL" build spec.json -o "oci:$WORK/e1" --no-cache -q | tail -n1)
[ "$d0" != "$d1" ] || fail "a different SOURCE_DATE_EPOCH gave the same digest"
created=$("$IMGTOOL" inspect "oci:$WORK/e1" --json | jq -r .created)
assert_eq "$created" "2023-11-14T22:13:20Z" "config created from SOURCE_DATE_EPOCH"
pass "SOURCE_DATE_EPOCH changes the digest and sets created=$created"
