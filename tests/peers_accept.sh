#!/usr/bin/env bash
# Real peers read what we write: skopeo inspects it (and sees our exact manifest
# bytes), umoci unpacks it, and the unpacked tree has the owners, modes and link
# targets the spec asked for.
source "$(dirname "$0")/lib.sh"
command -v skopeo >/dev/null || fail "skopeo is not installed (scripts/setup installs it)"
command -v umoci >/dev/null || fail "umoci is not installed (scripts/setup installs it)"

make_context "$WORK/ctx"
digest=$(cd "$WORK/ctx" && "$IMGTOOL" build spec.json -o "oci:$WORK/img:v1" -q | tail -n1)

out=$(skopeo inspect "oci:$WORK/img:v1")
assert_eq "$(jq -r .Digest <<<"$out")" "$digest" "skopeo's digest"
assert_eq "$(jq -r .Labels.\"org.imgtool.stack.cuda\" <<<"$out")" "13.0.96" "stack label seen by skopeo"
skopeo inspect --raw "oci:$WORK/img:v1" >"$WORK/raw"
cmp "$WORK/raw" "$WORK/img/blobs/sha256/${digest#sha256:}" || fail "skopeo --raw differs from our manifest blob"
assert_eq "$(skopeo inspect --config "oci:$WORK/img:v1" | jq -r .config.User)" "10001:10001" "config user via skopeo"
pass "skopeo inspect reads the layout; --raw is our manifest byte for byte"

umoci unpack --image "$WORK/img:v1" "$WORK/bundle" >/dev/null
root="$WORK/bundle/rootfs"
assert_eq "$(stat -c '%a %u:%g' "$root/opt/app/bin/run.sh")" "755 0:0" "run.sh mode/owner"
assert_eq "$(stat -c '%a %u:%g' "$root/opt/app/share/model.txt")" "644 0:0" "model.txt mode/owner"
assert_eq "$(stat -c '%a %u:%g' "$root/etc/app/config.txt")" "640 10001:10001" "config.txt mode/owner from the spec"
assert_eq "$(readlink "$root/opt/app/bin/model.txt")" "../share/model.txt" "symlink target"
assert_eq "$(stat -c '%a %u:%g' "$root/home/trainer")" "755 10001:10001" "home folder of the user"
grep -qx 'trainer:x:10001:10001::/home/trainer:/sbin/nologin' "$root/etc/passwd" || fail "/etc/passwd lacks the user"
grep -qx 'trainer:x:10001:' "$root/etc/group" || fail "/etc/group lacks the group"
assert_eq "$(jq -r .components.nccl.version "$root/etc/imgtool/stack.json")" "2.28.9" "stack.json in the image"
assert_eq "$(stat -c %Y "$root/opt/app/share/model.txt")" "0" "mtime = SOURCE_DATE_EPOCH"
assert_eq "$(jq -r .process.user.uid "$WORK/bundle/config.json")" "10001" "runtime uid from umoci's bundle"
pass "umoci unpack: owners, modes, link targets, user, stack.json as the spec asked"

# A peer-written copy reads back and verifies with imgtool.
skopeo copy -q "oci:$WORK/img:v1" "oci:$WORK/copy:v1"
"$IMGTOOL" verify "oci:$WORK/copy:v1" >/dev/null
assert_eq "$("$IMGTOOL" digest "oci:$WORK/copy:v1")" "$digest" "digest after skopeo copy"
pass "skopeo copy keeps the digest; imgtool verifies skopeo's layout"
