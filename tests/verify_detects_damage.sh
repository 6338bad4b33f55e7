#!/usr/bin/env bash
# imgtool verify names every damaged blob: a flipped byte in the manifest, the
# config or a layer, and a missing blob, each exit 4 (integrity failure), whether or
# not the layers' diff_ids are already known (the build records them).
source "$(dirname "$0")/lib.sh"
make_context "$WORK/ctx"
(cd "$WORK/ctx" && "$IMGTOOL" build spec.json -o "oci:$WORK/good:v1" -q >/dev/null)
expect_exit 0 verify "oci:$WORK/good:v1"
assert_contains "$OUTPUT" "OK oci:$WORK/good:v1" "clean verify"

# The build recorded each layer's diff_id in $IMGTOOL_CACHE/diff-ids: verify re-hashes every
# blob without inflating; --full inflates every layer; a record others could have written
# is not used.
nlayers=$(jq '.layers | length' "$WORK/good/blobs/sha256/$(jq -r '.manifests[0].digest | ltrimstr("sha256:")' "$WORK/good/index.json")")
counts() { "$IMGTOOL" verify --json "$@" "oci:$WORK/good:v1" | jq -c '[.blobsChecked, .diffIdsKnown, .layersDecompressed]'; }
assert_eq "$(counts)" "[$((nlayers + 2)),$nlayers,0]" "verify after build: blobs, diff_ids known, layers inflated"
assert_eq "$(counts --full)" "[$((nlayers + 2)),0,$nlayers]" "verify --full"
chmod 0777 "$IMGTOOL_CACHE/diff-ids"
assert_eq "$(counts)" "[$((nlayers + 2)),0,$nlayers]" "verify with a diff-ids folder others can write"
chmod 0755 "$IMGTOOL_CACHE/diff-ids"
pass "known diff_ids: used after build ($nlayers layers), ignored by --full and when others could write them"

manifest=$(jq -r '.manifests[0].digest' "$WORK/good/index.json")
config=$(jq -r .config.digest "$WORK/good/blobs/sha256/${manifest#sha256:}")
mapfile -t layers < <(jq -r '.layers[].digest' "$WORK/good/blobs/sha256/${manifest#sha256:}")
for blob in "$manifest" "$config" "${layers[@]}"; do
  rm -rf "$WORK/bad"; cp -a "$WORK/good" "$WORK/bad"
  size=$(stat -c %s "$WORK/bad/blobs/sha256/${blob#sha256:}")
  flip "$WORK/bad/blobs/sha256/${blob#sha256:}" $((size / 2))
  expect_exit 4 verify "oci:$WORK/bad:v1"
  assert_contains "$OUTPUT" "FAILED $blob" "flipped byte in $blob"
  pass "flipped byte in $blob is named"
done

rm -rf "$WORK/bad"; cp -a "$WORK/good" "$WORK/bad"
rm "$WORK/bad/blobs/sha256/${layers[0]#sha256:}"
expect_exit 4 verify "oci:$WORK/bad:v1" --json
assert_eq "$(jq -r '.problems[0].blob' <<<"$OUTPUT")" "${layers[0]}" "missing blob named in --json"
assert_eq "$(jq -r '.problems[0].problem' <<<"$OUTPUT")" "missing" "missing blob problem"
pass "missing layer blob is named"

# A truncated layer (a download cut short) is an integrity failure too.
rm -rf "$WORK/bad"; cp -a "$WORK/good" "$WORK/bad"
truncate -s 100 "$WORK/bad/blobs/sha256/${layers[0]#sha256:}"
expect_exit 4 verify "oci:$WORK/bad:v1"
assert_contains "$OUTPUT" "FAILED ${layers[0]}" "truncated layer"
pass "truncated layer is named"
