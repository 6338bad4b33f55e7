#!/usr/bin/env bash
# The style check CI runs first (scripts/check-format, called by .ci/run):
# - the whole tree is formatted as .clang-format says;
# - the check has teeth: a mis-formatted file is named and fails it (exit 1), a formatted
#   one beside it is not named, a missing file is exit 2;
# - .ci/run itself stops on a mis-formatted file before any test runs (a clone of this
#   commit with one file's indentation broken).
source "$(dirname "$0")/lib.sh"
command -v clang-format >/dev/null || fail "clang-format is missing (scripts/setup installs it)"

out=$("$REPO/scripts/check-format" 2>&1) || fail "the tree is not formatted: $out"
pass "the tree: $out"

mkdir -p "$WORK/style"
cp "$REPO/.clang-format" "$WORK/style/"
printf 'int Add(int a, int b) { return a + b; }\n' >"$WORK/style/good.cc"
printf 'int  Add( int a,int b ){\nreturn a+b;}\n' >"$WORK/style/bad.cc"
rc=0
out=$("$REPO/scripts/check-format" "$WORK/style/good.cc" "$WORK/style/bad.cc" 2>&1) || rc=$?
assert_eq "$rc" 1 "check-format on a mis-formatted file"
assert_contains "$out" "$WORK/style/bad.cc" "the mis-formatted file is named"
! grep -q "good.cc" <<<"$out" || fail "the formatted file is named: $out"
rc=0
out=$("$REPO/scripts/check-format" "$WORK/style/missing.cc" 2>&1) || rc=$?
assert_eq "$rc" 2 "check-format on a missing file"
pass "check-format names a mis-formatted file (exit 1), not a formatted one; a missing file is exit 2"

# .ci/run on a clone whose one file is mis-formatted: stops at the check, before the suite.
git clone -q "$REPO" "$WORK/clone" || fail "git clone $REPO"
victim=imgtool/oci/hex.cc
sed -i 's/^  /   /' "$WORK/clone/$victim"
rc=0
out=$(cd "$WORK/clone" && timeout 120 .ci/run 2>&1) || rc=$?
assert_eq "$rc" 1 ".ci/run with $victim mis-formatted"
assert_contains "$out" "$victim" ".ci/run names the file"
! grep -q "scripts/setup\|Test project" <<<"$out" || fail ".ci/run went on to the suite: $out"
pass ".ci/run stops on a mis-formatted file before the suite runs, naming it"
