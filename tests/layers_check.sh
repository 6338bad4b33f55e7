#!/usr/bin/env bash
# imgtool's libraries (one per folder, drawn in imgtool/README.md) include one another
# without a cycle: no arrow runs back up the drawing (scripts/check-layers). The check has
# teeth: a copy of oci/ and fs/ where oci includes an fs header is named as a cycle, with
# the file that includes.
source "$(dirname "$0")/lib.sh"

out=$("$REPO/scripts/check-layers" 2>&1) || fail "an include cycle: $out"
pass "the tree: $out"

mkdir -p "$WORK/lay"
cp -r "$REPO/imgtool/oci" "$REPO/imgtool/fs" "$WORK/lay/"
sed -i '1i #include "fs/atomic_file.h"' "$WORK/lay/oci/digest.cc"
rc=0
out=$("$REPO/scripts/check-layers" "$WORK/lay" 2>&1) || rc=$?
assert_eq "$rc" 1 "check-layers with oci including fs"
assert_contains "$out" "oci -> fs ($WORK/lay/oci/digest.cc)" "the back arrow and its file are named"
pass "an arrow back up (oci -> fs) is named with its file and fails the check"
