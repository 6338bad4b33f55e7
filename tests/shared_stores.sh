#!/usr/bin/env bash
# Issue 24, class 1: the layer cache and an output layout are shared stores.
# (b) 16 writers at once (8 `imgtool build`, 8 `imgtool copy`) into one layout that does
#     not exist yet, sharing one cold layer cache: every command exits 0, every tag is in
#     index.json, every blob hashes to its name, `imgtool verify` passes on each tag, no
#     temporary is left, and the cache they filled serves a warm rebuild of every layer.
#     Then 8 concurrent `imgtool sign`: every signature tag is kept.
# (a) A cached blob (a file layer's; a package layer's, checked while planning) replaced by
#     a symlink to a 0600 key, a FIFO, a folder, another file, or altered in place with its
#     mtime put back: each build (into a layout and into an oci-archive) exits 0 having
#     rebuilt the layer, says why, and the key's bytes are in no output; the cache holds
#     the real blob again.
#     An output layout's own blob replaced by a symlink is replaced on the next build.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/packages_lib.sh"

# ---- (b) concurrent writers ----
mkdir -p "$WORK/ctx"
cd "$WORK/ctx"
head -c 200000 /dev/urandom >common.bin
for i in 1 2 3 4 5 6 7 8; do
  head -c 30000 /dev/urandom >"own$i.bin"
  cat >"spec$i.json" <<JSON
{"base": "scratch", "user": {"name": "t", "uid": 10001, "gid": 10001},
 "layers": [{"name": "common", "files": [{"src": "common.bin", "dest": "/opt/common.bin"}]},
            {"name": "own", "files": [{"src": "own$i.bin", "dest": "/opt/own.bin"}]}]}
JSON
done
# The copies' source: its own cache, so the writers below start with a cold one.
IMGTOOL_CACHE="$WORK/src-cache" "$IMGTOOL" build spec1.json -o "oci:$WORK/src:v1" -q >/dev/null
L="$WORK/shared"
pids=()
for i in 1 2 3 4 5 6 7 8; do
  "$IMGTOOL" build "spec$i.json" -o "oci:$L:b$i" -q >"$WORK/b$i.out" 2>&1 &
  pids+=($!)
  "$IMGTOOL" copy -q "oci:$WORK/src:v1" "oci:$L:c$i" >"$WORK/c$i.out" 2>&1 &
  pids+=($!)
done
failed=0
for p in "${pids[@]}"; do wait "$p" || failed=$((failed + 1)); done
[ "$failed" = 0 ] || fail "$failed of 16 writers failed: $(cat "$WORK"/[bc]*.out)"
tags=$(jq -r '.manifests[].annotations["org.opencontainers.image.ref.name"] // empty' "$L/index.json")
found=0
for i in 1 2 3 4 5 6 7 8; do
  for t in "b$i" "c$i"; do
    grep -qx "$t" <<<"$tags" || fail "tag $t lost; index.json has: $(tr '\n' ' ' <<<"$tags")"
    found=$((found + 1))
  done
done
assert_eq "$found" 16 "tags present"
pass "16 concurrent writers (8 build, 8 copy) into one new layout: all exit 0, all 16 tags in index.json"

for f in "$L"/blobs/sha256/*; do
  assert_eq "$(sha256sum "$f" | cut -c1-64)" "$(basename "$f")" "layout blob $f"
done
for i in 1 2 3 4 5 6 7 8; do
  expect_exit 0 verify "oci:$L:b$i"
  expect_exit 0 verify "oci:$L:c$i"
done
[ -z "$(find "$L" "$IMGTOOL_CACHE" -name '.tmp-*')" ] || fail "temporaries left: $(find "$L" "$IMGTOOL_CACHE" -name '.tmp-*')"
for f in "$IMGTOOL_CACHE"/blobs/sha256/*; do
  assert_eq "$(sha256sum "$f" | cut -c1-64)" "$(basename "$f")" "cache blob $f"
done
pass "every blob of the layout and of the shared cache hashes to its name; verify passes on all 16 tags; no temporaries"

# Signers are writers of index.json too (sha256-<hex>.sig): 8 at once, one image each.
export COSIGN_PASSWORD=test-only-password
(cd "$WORK" && "$IMGTOOL" keygen --output-key-prefix signer 2>/dev/null)
pids=()
for i in 1 2 3 4 5 6 7 8; do
  "$IMGTOOL" sign --key "$WORK/signer.key" "oci:$L:b$i" >"$WORK/s$i.out" 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || fail "a signer failed: $(cat "$WORK"/s*.out)"; done
for i in 1 2 3 4 5 6 7 8; do expect_exit 0 verify --key "$WORK/signer.pub" "oci:$L:b$i"; done
pass "8 concurrent signers into the same layout: every .sig tag kept, verify --key passes on all 8"

for i in 1 2 3 4 5 6 7 8; do
  warm=$("$IMGTOOL" build "spec$i.json" -o "oci:$WORK/warm:w$i" --json -q)
  assert_eq "$(jq -c '[.layers[].cached]' <<<"$warm")" '[true,true,true]' "warm rebuild of spec$i"
  assert_eq "$(jq -r .digest <<<"$warm")" \
    "$(jq -r '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == "b'"$i"'") | .digest' "$L/index.json")" \
    "warm digest of spec$i"
done
pass "the cache filled by 8 concurrent builds serves every layer of each again, same digests"

# ---- (a) hostile cache entries ----
export IMGTOOL_CACHE="$WORK/cache-a"
mkdir -p "$WORK/actx" "$WORK/keys"
cd "$WORK/actx"
head -c 20000 /dev/urandom >data.bin
deb=$(make_deb "$WORK/actx" alpha 1.0-1)
cat >spec.json <<JSON
{"base": "scratch", "user": {"name": "t", "uid": 10001, "gid": 10001},
 "layers": [{"name": "data", "files": [{"src": "data.bin", "dest": "/opt/data.bin"}]},
            {"name": "pkg", "debs": [{"src": "$deb", "sha256": "$(sha "$deb")", "name": "alpha", "version": "1.0-1"}]}]}
JSON
cold=$("$IMGTOOL" build spec.json -o "oci:$WORK/a0:v1" --json -q)
digest=$(jq -r .digest <<<"$cold")
SECRET="SHARED-STORES-SECRET-"
key="$WORK/keys/id_key"
# build_ok OUT: a build that must exit 0 (and not hang on a FIFO); its stderr in $OUTPUT.
build_ok() {
  set +e
  OUTPUT=$(timeout 60 "$IMGTOOL" build spec.json -o "$1" --json 2>"$WORK/stderr")
  local rc=$?
  set -e
  [ "$rc" = 0 ] || fail "build -o $1 exited $rc: $(cat "$WORK/stderr")"
}
no_secret() {  # PATH...: the key's bytes are in none of them
  local hits
  hits=$(grep -rlF "$SECRET" "$@" 2>/dev/null || true)
  [ -z "$hits" ] || fail "the key's bytes reached an output: $hits"
}

for n in 0 1; do
  layer=$(jq -r ".layers[$n].name" <<<"$cold")
  blob=$(jq -r ".layers[$n].digest" <<<"$cold")
  cached="$IMGTOOL_CACHE/blobs/sha256/${blob#sha256:}"
  size=$(stat -c %s "$cached")
  cp "$cached" "$WORK/pristine"
  python3 -c "import sys; s=sys.argv[1].encode(); open(sys.argv[2],'wb').write((s*(int(sys.argv[3])//len(s)+1))[:int(sys.argv[3])])" \
    "$SECRET" "$key" "$size"
  chmod 600 "$key"
  attack() {  # KIND: what the cache holds under the blob's name
    rm -rf "$cached"
    case $1 in
      symlink) ln -s "$key" "$cached" ;;
      fifo) mkfifo "$cached" ;;
      folder) mkdir "$cached" && cp "$key" "$cached/x" ;;
      replaced) cp "$key" "$cached.new" && mv "$cached.new" "$cached" ;;
      altered)  # the real blob, hashed and its identity recorded, then overwritten in place, mtime put back
        cp "$WORK/pristine" "$cached"
        rm -rf "$WORK/prime" && build_ok "oci:$WORK/prime:v1"
        touch -r "$cached" "$WORK/mtime"
        sleep 0.05
        dd if="$key" of="$cached" conv=notrunc status=none
        touch -r "$WORK/mtime" "$cached"
        ;;
    esac
  }
  # The package layer's blob is checked while planning (a hit there skips unpacking): the
  # two paths through that check, a refused open and a hash after a changed identity.
  kinds="symlink fifo folder replaced altered"
  [ "$n" = 0 ] || kinds="symlink altered"
  for kind in $kinds; do
    out="$WORK/out-$layer-$kind"
    for dest in "oci-archive:$out.tar:v1" "oci:$out:v1"; do
      attack "$kind"
      build_ok "$dest"
      assert_eq "$(jq -r .digest <<<"$OUTPUT")" "$digest" "$layer/$kind -> $dest: digest"
      assert_eq "$(jq -r ".layers[$n].cached" <<<"$OUTPUT")" false "$layer/$kind -> $dest: layer rebuilt"
      assert_contains "$(cat "$WORK/stderr")" "not taken from the cache" "$layer/$kind -> $dest: the build says why"
      [ -f "$cached" ] && [ ! -L "$cached" ] || fail "$layer/$kind: the cache's blob was not replaced"
      assert_eq "$(sha256sum "$cached" | cut -c1-64)" "${blob#sha256:}" "$layer/$kind: cache healed"
    done
    no_secret "$out" "$out.tar" "$out".*.json
    expect_exit 0 verify "oci:$out:v1"
    expect_exit 0 verify "oci-archive:$out.tar:v1"
  done
  pass "cached $layer blob as $(sed 's/ /, /g' <<<"$kinds") (symlink to a 0600 key; altered in place with mtime put back): rebuilt, said why, key in no layout or archive, cache healed"
done

# A warm build into a new layout after all that: every layer from the cache, verified.
build_ok "oci:$WORK/after:v1"
assert_eq "$(jq -c '[.layers[].cached]' <<<"$OUTPUT")" '[true,true,true]' "warm after the attacks"
expect_exit 0 verify "oci:$WORK/after:v1"

# The output layout itself: its blob replaced by a symlink to the key is not taken as present.
out="$WORK/after"
blob=$(jq -r ".layers[0].digest" <<<"$cold")
rm -f "$out/blobs/sha256/${blob#sha256:}"
ln -s "$key" "$out/blobs/sha256/${blob#sha256:}"
build_ok "oci:$out:v1"
[ ! -L "$out/blobs/sha256/${blob#sha256:}" ] || fail "the output's symlinked blob was kept"
expect_exit 0 copy -q "oci:$out:v1" "oci-archive:$WORK/after.tar:v1"
no_secret "$out" "$WORK/after.tar"
expect_exit 0 verify "oci:$out:v1"
pass "an output layout's blob replaced by a symlink to the key is replaced by the next build; its archive holds no key"

# ---- (c) the download cache: a package fetched from a URL ----
# Its entry (<cache>/downloads/sha256/<hex>) replaced by a symlink to the 0600 key, a FIFO,
# a folder, another deb (same name and version), or altered in place with its mtime put
# back: the build (layer cache cold and warm) exits 0 with the pinned package, the entry
# is fetched again, and the key's bytes are in no output. The stage reads the descriptor
# fetch hashed, never the entry's name again (the race itself: builder_test PackageFileRace).
mkdir -p "$WORK/srv" "$WORK/evilsrc"
good=$(make_deb "$WORK/srv" gamma 1.0-1)
evil=$(make_deb "$WORK/evilsrc" gamma 1.0-1 postinst)  # same name and version, other bytes
pin=$(sha "$good")
cat >"$WORK/actx/url.json" <<JSON
{"base": "scratch", "user": {"name": "t", "uid": 10001, "gid": 10001},
 "layers": [{"name": "pkg", "debs": [{"src": "file://$good", "sha256": "$pin", "name": "gamma", "version": "1.0-1"}]}]}
JSON
url_build() {  # OUT [--no-cache]: must exit 0 with the pinned package
  set +e
  OUTPUT=$(timeout 60 "$IMGTOOL" build "$WORK/actx/url.json" -o "$@" --json 2>"$WORK/stderr")
  local rc=$?
  set -e
  [ "$rc" = 0 ] || fail "build -o $1 exited $rc: $(cat "$WORK/stderr")"
}
url_build "oci:$WORK/u0:v1"
want=$(jq -r .digest <<<"$OUTPUT")
entry="$IMGTOOL_CACHE/downloads/sha256/$pin"
[ -f "$entry" ] || fail "the deb is not in the download cache at $entry"
attack_entry() {  # KIND: what the download cache holds under the package's name
  rm -rf "$entry"
  case $1 in
    symlink) ln -s "$key" "$entry" ;;
    fifo) mkfifo "$entry" ;;
    folder) mkdir "$entry" && cp "$key" "$entry/x" ;;
    replaced) cp "$evil" "$entry.new" && mv "$entry.new" "$entry" ;;
    altered)
      cp "$good" "$entry" && touch -r "$good" "$WORK/mtime"
      dd if="$key" of="$entry" conv=notrunc status=none bs=1 seek=100 count=64
      touch -r "$WORK/mtime" "$entry"
      ;;
  esac
}
# Into a layout with the layer cache warm (the package layer is a hit: only the pin is
# checked), into an archive with --no-cache (the deb is unpacked from the download).
for kind in symlink fifo folder replaced altered; do
  out="$WORK/u-$kind"
  for dest in "oci:$out:v1" "oci-archive:$out.tar:v1 --no-cache"; do
    attack_entry "$kind"
    # shellcheck disable=SC2086 # $dest carries the flag
    url_build $dest
    assert_eq "$(jq -r .digest <<<"$OUTPUT")" "$want" "download $kind -> $dest: digest"
    [ -f "$entry" ] && [ ! -L "$entry" ] || fail "download $kind: the cache entry was not fetched again"
    assert_eq "$(sha "$entry")" "$pin" "download $kind: cache entry healed"
    grep -q "gamma 1.0-1 has maintainer scripts" "$WORK/stderr" && fail "download $kind: the other deb was unpacked"
  done
  no_secret "$out" "$out.tar" "$out".*.json
done
pass "download cache entry as symlink to a 0600 key, FIFO, folder, another deb, altered in place: fetched again, the pinned deb built (layer cache cold and warm), key in no layout or archive"
