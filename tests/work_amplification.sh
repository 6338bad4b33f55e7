#!/usr/bin/env bash
# Issue 24, work amplified: what imgtool reads stays proportional to the unique content,
# whatever number of entries a hostile input repeats, counted without timing anything:
# - verify of an index whose 20,000 entries name one image reads the image once (verify
#   --json "stats": reads and bytes asked of the layout), and still names every entry of
#   a damaged one; 200 entries naming a ~20 MB image read 20 MB, not 4 GB;
# - keyless verify of an image with 4,000 referrers (the API's answer, or the tag schema,
#   in a layout and through `fixtures/layout_registry.py`, which logs every request):
#   refused before any referrer is fetched, naming the cap; 1,000 are fetched once each;
#   referrers of other types are filtered out before anything is fetched;
# - a build staging an ELF file whose 4,096 section headers name the same 8 MiB: the
#   bytes read from it (strace's pread64 results) are at most twice its size, and its
#   toolchain is the one a sane copy gives.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/registry_lib.sh"
IMGTOOL=$(realpath "$IMGTOOL")
cd "$WORK"
REF_NAME=org.opencontainers.image.ref.name
BUNDLE=application/vnd.dev.sigstore.bundle.v0.3+json

# LAYOUT FROM_TAG NEW_TAG N: tags NEW_TAG an index naming FROM_TAG's manifest N times.
repeat_index() {
  python3 - "$@" <<'PY'
import hashlib, json, os, sys
layout, src, dst, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
ref = "org.opencontainers.image.ref.name"
index = json.load(open(f"{layout}/index.json"))
child = next(d for d in index["manifests"] if d.get("annotations", {}).get(ref) == src)
entry = {k: child[k] for k in ("mediaType", "digest", "size")}
body = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
                   "manifests": [entry] * n}).encode()
digest = hashlib.sha256(body).hexdigest()
open(f"{layout}/blobs/sha256/{digest}", "wb").write(body)
index["manifests"].append({"mediaType": "application/vnd.oci.image.index.v1+json", "digest": "sha256:" + digest,
                           "size": len(body), "annotations": {ref: dst}})
json.dump(index, open(f"{layout}/index.json", "w"))
PY
}

# LAYOUT TAG: the digest, or the size, of what TAG names.
tagged() { jq -r --arg t "$2" '.manifests[] | select(.annotations["'$REF_NAME'"] == $t) | .digest' "$1/index.json"; }
tagged_size() { jq -r --arg t "$2" '.manifests[] | select(.annotations["'$REF_NAME'"] == $t) | .size' "$1/index.json"; }
# LAYOUT TAG: the bytes of the image at TAG (manifest, config, layers).
image_bytes() {
  local m
  m=$(tagged "$1" "$2")
  jq --argjson m "$(stat -c %s "$1/blobs/sha256/${m#sha256:}")" '$m + .config.size + ([.layers[].size] | add)' \
    "$1/blobs/sha256/${m#sha256:}"
}

# ---- verify: one image named by 20,000 entries ----
make_context ctx
"$IMGTOOL" build ctx/spec.json -o "oci:$WORK/img:v1" -q >/dev/null
repeat_index img v1 many 20000
image=$(tagged img v1)
layers=$(jq '.layers | length' "img/blobs/sha256/${image#sha256:}")
want_bytes=$(($(image_bytes img v1) + $(tagged_size img many)))
out=$("$IMGTOOL" verify --json "oci:$WORK/img:many")
assert_eq "$(jq -c '[.ok, (.manifests | length), .stats.reads, .stats.bytesRead, .stats.descriptorsReused]' <<<"$out")" \
  "[true,2,$((3 + layers)),$want_bytes,19999]" "20,000 entries: the index and the image read once"
pass "verify of an index naming one image 20,000 times: $(jq .stats.reads <<<"$out") reads, $want_bytes bytes (the index and one image)"

layer=$(jq -r '.layers[0].digest' "img/blobs/sha256/${image#sha256:}")
cp -r img bad  # new files: the layout's blobs may be links into the layer cache
flip "bad/blobs/sha256/${layer#sha256:}" 100
expect_exit 4 verify --json "oci:$WORK/bad:many"
assert_eq "$(jq -c '[.stats.reads, .stats.bytesRead, (.problems | length)]' <<<"$OUTPUT")" \
  "[$((3 + layers)),$want_bytes,20000]" "a damaged layer: read once, a problem per entry"
assert_eq "$(jq -r '.problems[0].blob' <<<"$OUTPUT")" "$layer" "the damaged layer is named first"
assert_eq "$(jq --arg m "$image" '[.problems[1:][] | select(.blob == $m and (.problem | test("^index sha256:[0-9a-f]{12} manifests\\[[0-9]+\\] names it again: damaged")))] | length' <<<"$OUTPUT")" \
  19999 "every other entry naming the damaged image is named"
assert_eq "$(jq -r '.problems[19999].problem' <<<"$OUTPUT" | grep -o 'manifests\[[0-9]*\]')" "manifests[19999]" \
  "the last entry is named by its position"
pass "a damaged layer under 20,000 entries: read once, named once, and each of the other 19,999 entries named"

# 200 entries naming a ~20 MB image: 20 MB read, not 4 GB.
mkdir -p bigctx
head -c $((20 << 20)) /dev/urandom >bigctx/weights.bin
cat >bigctx/spec.json <<'JSON'
{"base": "scratch", "user": {"name": "trainer", "uid": 10001, "gid": 10001},
 "layers": [{"name": "weights", "files": [{"src": "weights.bin", "dest": "/opt/weights.bin"}]}]}
JSON
"$IMGTOOL" build bigctx/spec.json -o "oci:$WORK/big:v1" -q >/dev/null
repeat_index big v1 many 200
want_bytes=$(($(image_bytes big v1) + $(tagged_size big many)))
big=$(tagged big v1)
layers=$(jq '.layers | length' "big/blobs/sha256/${big#sha256:}")
out=$("$IMGTOOL" verify --json --full "oci:$WORK/big:many")
assert_eq "$(jq -c '[.ok, .stats.bytesRead, .layersDecompressed]' <<<"$out")" "[true,$want_bytes,$layers]" \
  "200 entries naming a 20 MB image"
pass "verify --full of 200 entries naming a $((want_bytes >> 20)) MiB image reads $want_bytes bytes, inflates each layer once"

# ---- keyless verify: 4,000 referrers ----
# LAYOUT SUBJECT N_BUNDLES N_OTHER OUT [TAG]: N_BUNDLES distinct artifacts of the bundle
# type (about another subject, so a client that fetched them would skip each after the
# fetch: the attack's shape), each listed twice when N_OTHER > 0, and N_OTHER of another
# type, written into LAYOUT; their list (an image index) into OUT; with TAG, also stored
# in LAYOUT under TAG (the referrers tag schema).
referrers() {
  python3 - "$@" <<'PY'
import hashlib, json, sys
layout, subject, bundles, others, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
tag = sys.argv[6] if len(sys.argv) > 6 else None
ref = "org.opencontainers.image.ref.name"
def put(body):
    digest = hashlib.sha256(body).hexdigest()
    open(f"{layout}/blobs/sha256/{digest}", "wb").write(body)
    return {"digest": "sha256:" + digest, "size": len(body)}
empty = dict(mediaType="application/vnd.oci.empty.v1+json", **put(b"{}"))
other_subject = {"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": "sha256:" + "0" * 64, "size": 2}
listed = []
for i in range(bundles + others):
    kind = "application/vnd.dev.sigstore.bundle.v0.3+json" if i < bundles else "application/spdx+json"
    layer = dict(mediaType=kind, **put(json.dumps({"n": i}).encode()))
    manifest = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json", "artifactType": kind,
                "config": empty, "layers": [layer], "subject": other_subject}
    d = dict(mediaType="application/vnd.oci.image.manifest.v1+json", artifactType=kind,
             **put(json.dumps(manifest).encode()))
    listed += [d, d] if i < bundles and others else [d]
body = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
                   "manifests": listed}).encode()
open(out, "wb").write(body)
if tag:
    d = dict(mediaType="application/vnd.oci.image.index.v1+json", **put(body))
    index = json.load(open(f"{layout}/index.json"))
    index["manifests"].append(dict(d, annotations={ref: tag}))
    json.dump(index, open(f"{layout}/index.json", "w"))
PY
}
keyless() {  # EXIT REF: keyless verify (the public-good root built in: no signature verifies)
  expect_exit "$1" verify --tls-verify=false --certificate-identity https://ci.example/release \
    --certificate-oidc-issuer https://issuer.example "$2"
}
serve_layout() {  # LAYOUT [REFERRERS]: a logging registry for LAYOUT; sets REG and LOG
  LOG=$WORK/requests-$RANDOM.log
  : >"$LOG"
  python3 "$REPO/tests/fixtures/layout_registry.py" "$1" "$WORK/port" "$LOG" ${2:+"$2"} 2>"$LOG.err" &
  REGISTRY_PIDS+=($!)
  for _ in $(seq 1 100); do [ -s "$WORK/port" ] && break; sleep 0.1; done
  REG=127.0.0.1:$(cat "$WORK/port")
  rm -f "$WORK/port"
  wait_for_port "http://$REG/v2/" "${REGISTRY_PIDS[-1]}" "$LOG.err"
  : >"$LOG"
}
requests() { wc -l <"$LOG"; }

"$IMGTOOL" build ctx/spec.json -o "oci:$WORK/app:v1" -q >/dev/null
D=$("$IMGTOOL" digest "oci:$WORK/app:v1")
cp -r app tagged
referrers tagged "$D" 4000 0 tagged.json "sha256-${D#sha256:}"
keyless 5 "oci:$WORK/tagged:v1"
assert_contains "$OUTPUT" "4000 distinct manifests; imgtool reads at most 1000 (a cap on lists from outside)" \
  "layout, tag schema: 4,000 referrers refused naming the cap"
pass "layout: a referrers tag listing 4,000 artifacts is refused before any is read, naming the cap"

cp -r app api
referrers api "$D" 4000 0 api.json
serve_layout "$WORK/api" "$WORK/api.json"
keyless 5 "docker://$REG/app@$D"
assert_contains "$OUTPUT" "4000 referrers of type $BUNDLE; imgtool reads at most 1000 (a cap on lists from outside)" \
  "registry, referrers API: refused naming the cap"
n=$(requests)
[ "$n" -le 20 ] || fail "4,000 referrers from the API: $n requests (want at most 20): $(sort "$LOG" | uniq -c | sort -rn | head)"
assert_eq "$(grep -c '/referrers/' "$LOG")" 1 "the referrers list is asked for once"
pass "registry referrers API listing 4,000 artifacts: refused naming the cap after $n requests (was 4,002 manifest fetches)"

serve_layout "$WORK/tagged"
keyless 5 "docker://$REG/app@$D"
assert_contains "$OUTPUT" "4000 distinct manifests; imgtool reads at most 1000" "registry, tag schema: refused"
n=$(requests)
[ "$n" -le 20 ] || fail "4,000 referrers at the tag schema: $n requests (want at most 20)"
pass "registry without the API (tag schema) listing 4,000 artifacts: refused naming the cap after $n requests"

# At the cap: each referrer fetched once, none twice, and still no signature.
cp -r app full
referrers full "$D" 1000 0 full.json
serve_layout "$WORK/full" "$WORK/full.json"
keyless 5 "docker://$REG/app@$D"
assert_contains "$OUTPUT" "no keyless signature found" "1,000 referrers about another subject: none is a signature"
fetched=$(grep "/manifests/sha256:" "$LOG" | grep -vc "/manifests/$D") || true
assert_eq "$fetched" 1000 "each of the 1,000 referrers fetched once"
n=$(requests)
[ "$n" -le $((1000 + 20)) ] || fail "1,000 referrers: $n requests (want at most the cap + 20)"
pass "1,000 referrers (the cap): each fetched once, $n requests in all"

# Filtered by type before anything is fetched: 3,996 SBOMs and 4 bundles, each listed twice.
cp -r app mixed
referrers mixed "$D" 4 3996 mixed.json
serve_layout "$WORK/mixed" "$WORK/mixed.json"
keyless 5 "docker://$REG/app@$D"
fetched=$(grep "/manifests/sha256:" "$LOG" | grep -vc "/manifests/$D") || true
assert_eq "$fetched" 4 "only the 4 bundle-typed referrers are fetched, each once"
pass "4,000 referrers of which 4 are bundles (each listed twice): 4 fetched, $(requests) requests in all"

# ---- the ELF toolchain reader: 4,096 section headers over one 8 MiB ----
# OUT N: an ELF64 file with an 8 MiB .nv_fatbin (nvcc's identification inside) named by
# N - 2 section headers, then .shstrtab.
make_elf() {
  python3 - "$@" <<'PY'
import struct, sys
out, n = sys.argv[1], int(sys.argv[2])
fatbin = bytearray(b"f" * (8 << 20))
note = b"Cuda compilation tools, release 13.0, V13.0.88\n"
fatbin[1000:1000 + len(note)] = note
names = b"\0.nv_fatbin\0.shstrtab\0"
fat_off, names_off = 64, 64 + len(fatbin)
shoff = names_off + len(names)
def shdr(name, kind, off, size):
    return struct.pack("<IIQQQQIIQQ", name, kind, 0, 0, off, size, 0, 0, 1, 0)
table = shdr(0, 0, 0, 0) + shdr(1, 1, fat_off, len(fatbin)) * (n - 2) + shdr(12, 3, names_off, len(names))
ident = b"\x7fELF" + bytes([2, 1, 1]) + bytes(9)
ehdr = ident + struct.pack("<HHIQQQIHHHHHH", 2, 62, 1, 0, 0, shoff, 0, 64, 0, 0, 64, n, n - 1)
open(out, "wb").write(ehdr + bytes(fatbin) + names + table)
PY
}
mkdir -p elf
make_elf elf/hostile.bin 4096
make_elf elf/sane.bin 3
cat >elf/spec.json <<'JSON'
{"base": "scratch", "user": {"name": "trainer", "uid": 10001, "gid": 10001},
 "layers": [{"name": "bin", "files": [{"src": "hostile.bin", "dest": "/opt/hostile.bin", "mode": "0755"},
                                      {"src": "sane.bin", "dest": "/opt/sane.bin", "mode": "0755"}]}]}
JSON
# strace (scripts/setup installs it) counts the bytes; where ptrace is not allowed the
# unit test's counting reader (builder/elf_toolchain_test.cc) is the only count.
tracer=(traced -f -qq -y -s 0 -e trace=pread64 -o elf.trace)
can_trace || tracer=()
"${tracer[@]}" "$IMGTOOL" build elf/spec.json -o "oci:$WORK/elfimg:v1" --record elf.build.json -q >/dev/null
assert_eq "$(jq -c '[.inputs[] | {(.path): .toolchain}] | add' elf.build.json)" \
  '{"hostile.bin":["Cuda compilation tools, release 13.0, V13.0.88"],"sane.bin":["Cuda compilation tools, release 13.0, V13.0.88"]}' \
  "the hostile file's toolchain is the sane copy's"
if [ ${#tracer[@]} = 0 ]; then
  pass "ELF with 4,096 section headers over one 8 MiB: same toolchain as a sane copy (strace cannot trace here: bytes not counted)"
  exit 0
fi
# Bytes pread64 returned per file (strace -y names the file; a call split by another
# thread is "unfinished" on one line and "resumed" on another).
read -r hostile sane < <(python3 - elf.trace <<'PY'
import re, sys
total, pending = {}, {}
for line in open(sys.argv[1]):
    tid = line.split()[0]
    m = re.search(r"pread64\(\d+<([^>]*)>", line)
    if m and "unfinished" in line:
        pending[tid] = m.group(1)
        continue
    path = m.group(1) if m else (pending.pop(tid, None) if "resumed" in line else None)
    r = re.search(r"= (-?\d+)", line)
    if path and r and int(r.group(1)) > 0:
        total[path] = total.get(path, 0) + int(r.group(1))
def of(name):
    return sum(v for k, v in total.items() if k.endswith("/" + name))
print(of("hostile.bin"), of("sane.bin"))
PY
)
size=$(stat -c %s elf/hostile.bin)
[ "$hostile" -gt 0 ] || fail "no read of hostile.bin seen by strace"
[ "$hostile" -le $((2 * size)) ] || fail "hostile.bin: $hostile bytes read, more than twice its $size"
[ "$sane" -le "$(stat -c %s elf/sane.bin)" ] || fail "sane.bin: $sane bytes read, more than its size"
pass "ELF with 4,096 section headers over one 8 MiB: $hostile bytes read of $size (a sane copy: $sane), same toolchain"
