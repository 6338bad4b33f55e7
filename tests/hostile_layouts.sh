#!/usr/bin/env bash
# A layout is outside input: a blob that is a symlink to a host file, a FIFO or a
# device is refused by name (never read, sent or waited on), and a manifest whose layer
# size lies is refused before anything is committed at the destination (layout,
# archive or registry). Each case must end within seconds.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/registry_lib.sh"
start_registry plain
make_context "$WORK/ctx"
digest=$(cd "$WORK/ctx" && "$IMGTOOL" build spec.json -o "oci:$WORK/good:v1" -q | tail -n1)
layer=$(jq -r '.layers[0].digest' "$WORK/good/blobs/sha256/${digest#sha256:}")
printf 'TOP-SECRET-KEY-MATERIAL\n' >"$WORK/id_rsa"

# Runs imgtool with a deadline; exit code in $rc, output in $OUTPUT.
bounded() {
  set +e
  OUTPUT=$(timeout 20 "$IMGTOOL" "$@" 2>&1)
  rc=$?
  set -e
  [ "$rc" != 124 ] || fail "imgtool $* hung"
}

for kind in symlink fifo dir device; do
  rm -rf "$WORK/bad" "$WORK/out.tar" "$WORK/out"
  cp -a "$WORK/good" "$WORK/bad"
  b="$WORK/bad/blobs/sha256/${layer#sha256:}"
  rm "$b"
  case $kind in
    symlink) ln -s "$WORK/id_rsa" "$b"; what="is a symlink" ;;
    fifo) mkfifo "$b"; what="is a FIFO" ;;
    dir) mkdir "$b"; what="is a folder" ;;
    # /dev/zero's own node (an endless source): mknod needs root, as the suite runs in CI.
    device)
      if [ "$(id -u)" != 0 ]; then echo "note: device blob not tried (mknod needs root)"; continue; fi
      mknod "$b" c 1 5; what="is a device" ;;
  esac
  for args in "inspect oci:$WORK/bad:v1" "verify oci:$WORK/bad:v1" "copy oci:$WORK/bad:v1 oci-archive:$WORK/out.tar:v1" \
      "copy oci:$WORK/bad:v1 oci:$WORK/out:v1" "push oci:$WORK/bad:v1 docker://$REG_HOST/team/$kind:v1"; do
    # shellcheck disable=SC2086
    bounded $args
    [ "$rc" != 0 ] || [ "${args%% *}" = inspect ] || fail "$kind: imgtool $args succeeded"
    [ "${args%% *}" = inspect ] || assert_contains "$OUTPUT" "$what; refused" "$kind: imgtool ${args%% *}"
  done
  [ ! -e "$WORK/out.tar" ] || fail "$kind: an archive was written"
  [ ! -e "$WORK/out/blobs/sha256/${layer#sha256:}" ] || fail "$kind: the blob reached the layout"
  ! grep -rq TOP-SECRET "$WORK/out" 2>/dev/null || fail "$kind: the secret reached the copy"
  expect_exit 3 resolve "docker://$REG_HOST/team/$kind:v1"
  pass "a layer blob that $what: inspect reads only the manifest, verify/copy/push refuse it by name, nothing written"
done

# A manifest whose layer size lies (the blob is intact): copy refuses it, writes nothing.
rm -rf "$WORK/bad" && cp -a "$WORK/good" "$WORK/bad"
m="$WORK/bad/blobs/sha256/${digest#sha256:}"
jq -c '.layers[0].size -= 1' "$m" >"$WORK/m.json"
new=$(sha256sum "$WORK/m.json" | cut -d' ' -f1)
cp "$WORK/m.json" "$WORK/bad/blobs/sha256/$new"
jq --arg d "sha256:$new" --argjson n "$(stat -c %s "$WORK/m.json")" \
  '(.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == "v1")) |= (.digest = $d | .size = $n)' \
  "$WORK/good/index.json" >"$WORK/bad/index.json"
for dst in "oci:$WORK/lie:v1" "oci-archive:$WORK/lie.tar:v1" "docker://$REG_HOST/team/lie:v1"; do
  expect_exit 4 copy "oci:$WORK/bad:v1" "$dst"
  assert_contains "$OUTPUT" "more than the" "$dst: the lying size is named"
done
[ ! -e "$WORK/lie/blobs/sha256/${layer#sha256:}" ] && [ ! -e "$WORK/lie.tar" ] || fail "a lying blob was committed"
expect_exit 3 resolve "docker://$REG_HOST/team/lie:v1"
pass "a layer whose size lies: copy to a layout, an archive or a registry is exit 4 and commits nothing"
