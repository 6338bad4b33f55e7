#!/usr/bin/env bash
# The layer cache: an unchanged rebuild takes every layer from the cache (counted, not
# timed); changing one input rebuilds only its layer; the digest never depends on it.
source "$(dirname "$0")/lib.sh"
make_context "$WORK/ctx"
cd "$WORK/ctx"
cat >spec.json <<'JSON'
{"base": "scratch", "user": {"name": "t", "uid": 10001, "gid": 10001},
 "layers": [{"name": "bin", "files": [{"src": "app/bin", "dest": "/opt/bin"}]},
            {"name": "share", "files": [{"src": "app/share", "dest": "/opt/share"}]}]}
JSON
cached() { jq -c '[.layers[].cached]' <<<"$1"; }

first=$("$IMGTOOL" build spec.json -o "oci:$WORK/a:v1" --json -q)
assert_eq "$(cached "$first")" '[false,false,false]' "cold build"
second=$("$IMGTOOL" build spec.json -o "oci:$WORK/a:v1" --json -q)
assert_eq "$(cached "$second")" '[true,true,true]' "unchanged rebuild"
assert_eq "$(jq -r .digest <<<"$second")" "$(jq -r .digest <<<"$first")" "digest from cache"
pass "unchanged rebuild: 3 of 3 layers from the cache, same digest"

# Into a new folder: cached blobs are linked in, and the result verifies.
third=$("$IMGTOOL" build spec.json -o "oci:$WORK/b:v1" --json -q)
assert_eq "$(cached "$third")" '[true,true,true]' "rebuild into another folder"
expect_exit 0 verify "oci:$WORK/b:v1"
pass "cached blobs placed into a new layout verify"

printf 'weights v2\n' >app/share/model.txt
fourth=$("$IMGTOOL" build spec.json -o "oci:$WORK/a:v1" --json -q)
assert_eq "$(cached "$fourth")" '[true,false,true]' "one input changed"
[ "$(jq -r .digest <<<"$fourth")" != "$(jq -r .digest <<<"$first")" ] || fail "changed input, same digest"
nocache=$("$IMGTOOL" build spec.json -o "oci:$WORK/c:v1" --json -q --no-cache)
assert_eq "$(cached "$nocache")" '[false,false,false]' "--no-cache"
assert_eq "$(jq -r .digest <<<"$nocache")" "$(jq -r .digest <<<"$fourth")" "cache never changes the digest"
pass "a changed file rebuilds only its layer; --no-cache gives the same digest"
