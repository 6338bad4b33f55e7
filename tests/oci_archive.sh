#!/usr/bin/env bash
# oci-archive output is a deterministic tar that skopeo reads; inspect and verify
# read it; an archive with entries outside a layout is refused.
source "$(dirname "$0")/lib.sh"
make_context "$WORK/ctx"
cd "$WORK/ctx"
d1=$("$IMGTOOL" build spec.json -o "oci-archive:$WORK/one.tar:v1" -q --no-cache | tail -n1)
mkdir "$WORK/elsewhere" && cp -a "$WORK/ctx" "$WORK/elsewhere/"
d2=$(cd "$WORK/elsewhere/ctx" && "$IMGTOOL" build spec.json -o "oci-archive:$WORK/two.tar:v1" -q --no-cache | tail -n1)
assert_eq "$d1" "$d2" "archive digests"
cmp "$WORK/one.tar" "$WORK/two.tar" || fail "two builds gave different archive bytes"
pass "oci-archive is byte-identical across builds"

assert_eq "$(skopeo inspect "oci-archive:$WORK/one.tar:v1" | jq -r .Digest)" "$d1" "skopeo reads our archive"
assert_eq "$("$IMGTOOL" digest "oci-archive:$WORK/one.tar:v1")" "$d1" "imgtool digest of the archive"
expect_exit 0 verify "oci-archive:$WORK/one.tar:v1"
pass "skopeo and imgtool read the archive"

skopeo copy -q "oci-archive:$WORK/one.tar:v1" "oci-archive:$WORK/skopeo.tar:v1"
assert_eq "$("$IMGTOOL" digest "oci-archive:$WORK/skopeo.tar:v1")" "$d1" "digest of skopeo's archive"
pass "imgtool reads skopeo's oci-archive"

python3 - "$WORK/evil.tar" <<'PY'
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w") as t:
    data = b"x"
    info = tarfile.TarInfo("../../evil"); info.size = len(data)
    t.addfile(info, io.BytesIO(data))
PY
expect_exit 2 inspect "oci-archive:$WORK/evil.tar"
assert_contains "$OUTPUT" "entry '../../evil' is not part of an OCI layout" "hostile archive"
[ ! -e "$WORK/../evil" ] || fail "hostile archive wrote outside its folder"
pass "archive with a path-traversal entry is refused"

# Issue 24: an entry name with a newline, an ESC and a CR is shown escaped, on one line.
python3 - "$WORK/escape.tar" <<'PY'
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as t:
    info = tarfile.TarInfo("x\nimgtool: OK\x1b[2J\rz"); info.size = 1
    t.addfile(info, io.BytesIO(b"x"))
PY
expect_exit 2 inspect "oci-archive:$WORK/escape.tar"
assert_contains "$OUTPUT" "entry 'x\nimgtool: OK\x1b[2J\rz' is not part of an OCI layout" "an escaped entry name"
assert_eq "$(wc -l <<<"$OUTPUT")" 1 "the message stays on one line"
if grep -q $'[\x1b\r]' <<<"$OUTPUT"; then fail "a control character reached the terminal: $OUTPUT"; fi
pass "an archive entry named with a newline, ESC and CR: refused, escaped on one line"
