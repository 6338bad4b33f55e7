#!/usr/bin/env bash
# Issue 28: `imgtool build` writes through oci::Sink, the path copy takes. One spec built
# to a layout, pushed straight to docker://127.0.0.1:PORT (warm cache and cold), and to an
# oci-archive gives one digest; `verify` passes from the registry, which holds the SBOM
# artifact too, and its staging folder is removed; the files beside a registry output land in the current folder as
# REPO.build.json, .spdx.json, .provenance.json; a multi-platform index pushes to the
# layout's digest; a docker-archive takes an image and refuses an index by the sink's own
# error; a registry that is not there fails with nothing beside. No source outside
# imgtool/transport/ and imgtool/ref/ compares transports.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/registry_lib.sh"
start_registry plain

make_context "$WORK/ctx"
cd "$WORK/ctx"
layout=$("$IMGTOOL" build -q spec.json -o "oci:$WORK/lay:v1" | tail -n1)
mkdir "$WORK/tmp"
TMPDIR="$WORK/tmp" expect_exit 0 build spec.json -o "docker://$REG_HOST/team/r:t"
[ -z "$(ls -A "$WORK/tmp")" ] || fail "the push left its staging: $(ls -A "$WORK/tmp")"
warm=$(tail -n1 <<<"$OUTPUT")
assert_eq "$warm" "$layout" "pushed with a warm cache"
assert_contains "$OUTPUT" "docker://$REG_HOST/team/r" "the push says where it goes"
cold=$(IMGTOOL_CACHE="$WORK/cold" "$IMGTOOL" build -q --no-cache spec.json -o "docker://$REG_HOST/team/r:cold" | tail -n1)
assert_eq "$cold" "$layout" "pushed with no cache"
archive=$("$IMGTOOL" build -q spec.json -o "oci-archive:$WORK/a.tar:v1" | tail -n1)
assert_eq "$archive" "$layout" "written to an oci-archive"
assert_eq "$("$IMGTOOL" digest "docker://$REG_HOST/team/r:t")" "$layout" "the registry's tag"
expect_exit 0 verify "docker://$REG_HOST/team/r:t"
expect_exit 0 verify "oci-archive:$WORK/a.tar:v1"
pass "layout, registry (warm, cold) and oci-archive: one digest $layout; verify passes from the registry"

sbom_tag="sha256-${layout#sha256:}.sbom"
assert_eq "$("$IMGTOOL" inspect --json "docker://$REG_HOST/team/r:$sbom_tag" | jq -r .artifactType)" \
  "application/spdx+json" "the SBOM artifact in the registry"
assert_eq "$("$IMGTOOL" tags "oci-archive:$WORK/a.tar")" "v1" "the oci-archive holds the image alone (no SBOM artifact)"
for f in r.build.json r.spdx.json r.provenance.json; do [ -s "$f" ] || fail "no $f beside a registry output"; done
assert_eq "$(jq -r .outputs.manifest.digest r.build.json)" "$layout" "the record's digest"
assert_eq "$(jq -r '.subject[0].name' r.provenance.json)" "r:cold" "the provenance's subject (the last build)"
grep -q "${layout#sha256:}" r.spdx.json || fail "the SBOM beside the registry output does not name the image"
pass "the SBOM artifact is pushed with the image; r.build.json, r.spdx.json, r.provenance.json in the current folder"

# A multi-platform index: the same index digest in a layout and in the registry.
printf '{"base":"scratch","user":{"name":"t","uid":10001,"gid":10001},
 "platforms":["linux/amd64","linux/arm64"],
 "layers":[{"name":"app","files":[{"src":"config.txt","dest":"/etc/app/config.txt"}]}]}' >multi.json
index=$("$IMGTOOL" build -q multi.json -o "oci:$WORK/multi:v1" | tail -n1)
assert_eq "$("$IMGTOOL" build -q multi.json -o "docker://$REG_HOST/multi:v1" | tail -n1)" "$index" "the pushed index"
expect_exit 0 verify "docker://$REG_HOST/multi:v1"
pass "a two-platform index pushes to the layout's digest $index and verifies"

# docker-archive: one image as `copy` writes it; an index refused by the sink.
expect_exit 0 build spec.json -o "docker-archive:$WORK/built.tar:foo/app:v1"
"$IMGTOOL" copy -q "oci:$WORK/lay:v1" "docker-archive:$WORK/copied.tar:foo/app:v1" >/dev/null
cmp "$WORK/built.tar" "$WORK/copied.tar" || fail "build and copy wrote different docker-archives"
expect_exit 2 build multi.json -o "docker-archive:$WORK/multi.tar"
assert_contains "$OUTPUT" "a docker-archive holds single images, not an index" "an index to a docker-archive"
[ ! -e "$WORK/multi.tar" ] || fail "a refused index left a file"
pass "docker-archive: the build equals copy's tarball byte for byte; an index is refused by the sink"

# A registry that is not there: the build fails, nothing is written beside.
mkdir "$WORK/gone" && cd "$WORK/gone"
port=$(free_port)
set +e
TMPDIR="$WORK/tmp" "$IMGTOOL" build -q "$WORK/ctx/spec.json" -o "docker://127.0.0.1:$port/gone:t" >/dev/null 2>&1
rc=$?
set -e
[ "$rc" != 0 ] || fail "a build to a closed port succeeded"
[ -z "$(ls -A . "$WORK/tmp" | grep -v :)" ] || fail "a failed push left $(ls -A . "$WORK/tmp")"
pass "a push to a closed port fails (exit $rc), nothing beside"

# Issue 28: the transport is decided in transport/ and ref/ alone.
stray=$(grep -rn 'Transport::k' "$REPO/imgtool" --include='*.cc' --include='*.h' |
  grep -v "^$REPO/imgtool/transport/\|^$REPO/imgtool/ref/" || true)
[ -z "$stray" ] || fail "transports compared outside transport/ and ref/: $stray"
pass "no Transport::k outside imgtool/transport/ and imgtool/ref/"
