#!/usr/bin/env bash
# A push killed with SIGKILL in the middle of a large blob, rerun, completes without
# re-sending the blobs already finished (the registry has them: HEAD skips them), the
# large blob continues from its saved upload session (where the registry still agrees
# on the offset; otherwise it starts over), and the result verifies.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/registry_lib.sh"
start_registry plain
R="docker://$REG_HOST"
digest=$(make_image "oci:$WORK/img:v1" 256 131072)   # 256 kB and 128 MiB of random data
manifest="$WORK/img/blobs/sha256/${digest#sha256:}"
config=$(jq -r .config.digest "$manifest")
small=$(jq -r '.layers[0].digest' "$manifest")
big=$(jq -r '.layers[1].digest' "$manifest")

# One blob at a time, in manifest order; 8 MiB chunks at 32 MB/s: the big blob takes ~4 s.
"$IMGTOOL" push --jobs 1 --chunk-size 8 --limit-rate 32000000 "oci:$WORK/img:v1" "$R/team/big:v1" \
  2>"$WORK/push1.log" &
pid=$!
for _ in $(seq 1 100); do
  [ "$(grep -c 'blob sha256:' "$WORK/push1.log" || true)" -ge 2 ] && break
  sleep 0.1
done
sleep 1.5
kill -9 "$pid"
wait "$pid" 2>/dev/null && fail "the push finished before it was killed"
grep -q "${small:0:19}" "$WORK/push1.log" || fail "the small layer was not pushed before the kill: $(cat "$WORK/push1.log")"
ls "$IMGTOOL_CACHE/uploads/"*.json >/dev/null 2>&1 || fail "no saved upload session after the kill"
pass "push killed with SIGKILL in the middle of the 128 MiB blob; its session is saved"

out=$("$IMGTOOL" push --jobs 1 --chunk-size 8 --json "oci:$WORK/img:v1" "$R/team/big:v1")
action() { jq -r --arg d "$1" '.blobs[] | select(.digest == $d) | .action' <<<"$out"; }
sent() { jq -r --arg d "$1" '.blobs[] | select(.digest == $d) | .bytesSent' <<<"$out"; }
assert_eq "$(action "$config")" "exists" "config after the rerun"
assert_eq "$(action "$small")" "exists" "finished layer after the rerun"
assert_eq "$(sent "$small")" "0" "bytes re-sent for the finished layer"
big_action=$(action "$big")
from=$(jq -r --arg d "$big" '.blobs[] | select(.digest == $d) | .resumedFrom' <<<"$out")
[ "$big_action" = "resumed" ] || [ "$big_action" = "uploaded" ] || fail "big blob: $big_action"
assert_eq "$(jq -r .digest <<<"$out")" "$digest" "digest after the rerun"
ls "$IMGTOOL_CACHE/uploads/"*.json >/dev/null 2>&1 && fail "the upload session was not cleared"
pass "rerun: finished blobs skipped (0 bytes re-sent); big blob $big_action (from offset $from)"

"$IMGTOOL" verify "$R/team/big:v1" >/dev/null
pass "the resumed push verifies end to end"
