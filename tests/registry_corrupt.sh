#!/usr/bin/env bash
# A blob damaged on the registry's disk is refused on pull with an integrity error
# (exit 4) naming the digest, and nothing is left in the destination.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/registry_lib.sh"
start_registry plain
R="docker://$REG_HOST"
digest=$(make_image "oci:$WORK/img:v1" 16 512)
"$IMGTOOL" push -q "oci:$WORK/img:v1" "$R/team/img:v1" >/dev/null
layer=$(jq -r '.layers[1].digest' "$WORK/img/blobs/sha256/${digest#sha256:}")
hex=${layer#sha256:}
data="$REG_DIR/data/docker/registry/v2/blobs/sha256/${hex:0:2}/$hex/data"
[ -f "$data" ] || fail "registry blob file not found at $data"
flip "$data" 1000

expect_exit 4 pull -q "$R/team/img:v1" "oci:$WORK/dest:v1"
assert_contains "$OUTPUT" "$layer" "the error names the digest"
[ ! -e "$WORK/dest" ] || fail "a failed pull left $(find "$WORK/dest" | head)"
pass "corrupt blob refused: $(tail -n1 <<<"$OUTPUT"); destination absent"

mkdir -p "$WORK/existing"
"$IMGTOOL" copy -q "oci:$WORK/img:v1" "oci:$WORK/existing:old" >/dev/null
rm "$WORK/existing/blobs/sha256/$hex"
expect_exit 4 pull -q "$R/team/img:v1" "oci:$WORK/existing:new"
[ ! -e "$WORK/existing/blobs/sha256/$hex" ] || fail "the corrupt blob was put in place"
if compgen -G "$WORK/existing/blobs/sha256/.tmp*" >/dev/null; then fail "a temporary blob was left behind"; fi
if grep -q '"new"' "$WORK/existing/index.json"; then fail "index.json names the failed pull"; fi
expect_exit 4 verify "$R/team/img:v1"
assert_contains "$OUTPUT" "$layer" "verify docker:// names the digest"
pass "into an existing layout: no blob, no temporary, no tag; verify docker:// also refuses"
