#!/usr/bin/env bash
# Real-world agreement (issue 25): every tag and manifest of every OCI layout and archive
# of tests/fixtures/realworld/oci (regclient's, go-containerregistry's, containers/image's
# and oras-go's test data, as shipped) read by imgtool and by skopeo 1.9.3:
#   raw     `imgtool digest` and `inspect --raw` against `skopeo inspect --raw` (the same
#           bytes, and their sha256 is the digest);
#   verify  `imgtool verify`'s exit code as the fixture README says the damage is;
#   copy    `imgtool copy` against `skopeo copy --all`; each copy imgtool makes goes on to
#           docker-registry on 127.0.0.1 and back into a layout with every digest kept, and
#           skopeo and oras (the PyPI SDK) read the copies back byte for byte.
# Prints one table (fixture, ref, skopeo, imgtool, agree) and fails on any disagreement the
# fixture README does not list as intended, and on a listed one that did not happen.
source "$(dirname "$0")/lib.sh"
venv="${XDG_CACHE_HOME:-$HOME/.cache}/imgtool-test/oras-venv"  # kept between runs; before HOME moves
source "$(dirname "$0")/registry_lib.sh"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import oras' 2>/dev/null; then
  { python3 -m venv "$venv" && "$venv/bin/pip" install -q oras; } >&2 || fail "pip install oras into $venv"
fi
FIX=$REPO/tests/fixtures/realworld/oci
README=$FIX/README.md
cp -r "$FIX" "$WORK/fx" && chmod -R u+w "$WORK/fx"  # the fixtures stay untouched
start_registry plain
mkdir -p "$WORK/skopeo" "$WORK/skopeo-amd64"

# A README table between <!-- NAME: ... --> and <!-- /NAME -->, as "a|b|c" lines.
readme_table() {
  sed -n "/^<!-- $1:/,/^<!-- \/$1 -->/p" "$README" | grep '^| ' | tail -n +3 |
    sed 's/^| *//; s/ *|$//; s/ *| */|/g'
}
mapfile -t VERIFY < <(readme_table verify)
mapfile -t INTENDED < <(readme_table intended)
[ "${#VERIFY[@]}" -gt 0 ] && [ "${#INTENDED[@]}" -gt 0 ] || fail "$README: the verify or intended table is missing"
declare -A INTENDED_SEEN=()

expected_verify() {  # FIXTURE LABEL
  local row exact="" any=""
  for row in "${VERIFY[@]}"; do
    IFS='|' read -r f r code _ <<<"$row"
    [ "$f" = "$1" ] || continue
    [ "$r" = "$2" ] && exact=$code
    [ "$r" = "*" ] && any=$code
  done
  echo "${exact:-$any}"
}

# Whether the README lists this difference as intended (and marks it seen).
intended() {  # FIXTURE LABEL CHECK SKOPEO IMGTOOL
  local row f r c s i
  for row in "${INTENDED[@]}"; do
    IFS='|' read -r f r c s i _ <<<"$row"
    [ "$f|$r|$c|$s|$i" = "$1|$2|$3|$4|$5" ] || continue
    INTENDED_SEEN["$f|$r|$c"]=1
    return 0
  done
  return 1
}

# AGREE: "yes", "intended", "n/a" (skopeo cannot name it) or "NO" for one check of one
# reference (not printed: a $(subshell) would lose what intended() marks seen).
judge() {  # FIXTURE LABEL CHECK SKOPEO IMGTOOL
  if [ "$4" = "$5" ]; then
    AGREE=yes
  elif [ "$4" = - ]; then
    AGREE=n/a
  elif intended "$@"; then
    AGREE=intended
  else
    AGREE=NO
    problem "$1" "$2" "$3: skopeo $4, imgtool $5"
  fi
}

sha() { sha256sum "$1" | cut -d' ' -f1; }
FAILURES=()
problem() { FAILURES+=("$1 $2: $3"); }

# oras reads what the registry holds for REF: the manifest's bytes (sha256 = DIGEST), each
# child of an index, each blob of a manifest; prints how many it read.
oras_read() {  # REPO REF DIGEST
  "$venv/bin/python" - "$REG_HOST" "$1" "$2" "$3" <<'PY'
import hashlib, json, os, sys, tempfile, oras.client
host, repo, ref, digest = sys.argv[1:]
c = oras.client.OrasClient(hostname=host, insecure=True)
accept = ", ".join(["application/vnd.oci.image.manifest.v1+json", "application/vnd.oci.image.index.v1+json",
                    "application/vnd.docker.distribution.manifest.v2+json",
                    "application/vnd.docker.distribution.manifest.list.v2+json"])
read = 0
def manifest(name, want):
    global read
    container = c.get_container(f"{host}/{repo}:{name}" if not name.startswith("sha256:") else f"{host}/{repo}@{name}")
    r = c.do_request(f"{c.prefix}://{container.manifest_url()}", "GET", headers={"Accept": accept})
    r.raise_for_status()
    got = "sha256:" + hashlib.sha256(r.content).hexdigest()
    assert got == want, f"manifest {name}: {got}, want {want}"
    read += 1
    m = json.loads(r.content)
    for child in m.get("manifests", []):
        manifest(child["digest"], child["digest"])
    for blob in ([m["config"]] if "config" in m else []) + m.get("layers", []):
        with tempfile.TemporaryDirectory() as d:
            path = c.download_blob(container, blob["digest"], os.path.join(d, "blob"))
            data = open(path, "rb").read()
        assert "sha256:" + hashlib.sha256(data).hexdigest() == blob["digest"] and len(data) == blob["size"], blob
        read += 1
manifest(ref, digest)
print(read)
PY
}

# The copy imgtool made (a layout) goes to the registry and back; every step keeps DIGEST,
# and skopeo and oras read the registry's copy. Prints "ok N" (what oras read), "refused"
# (the registry refused the push), or the first problem. Each reference is pulled into a
# layout of its own, without its artifacts: skopeo 1.9.3 finds a tag only on OCI-typed
# entries, and reads the only entry of a layout whatever its type.
round_trip() {  # FIXTURE DESTTAG DIGEST
  local repo="realworld/$1" at="docker://$REG_HOST/realworld/$1:$2" back="$WORK/back/$1/$2" n
  "$IMGTOOL" copy -q "oci:$WORK/copies/$1:$2" "$at" >/dev/null 2>"$WORK/push.err" || {
    grep -q "400 MANIFEST_INVALID" "$WORK/push.err" && echo refused || echo "push failed: $(tail -n1 "$WORK/push.err")"
    return
  }
  [ "$("$IMGTOOL" digest "$at" 2>/dev/null)" = "$3" ] || { echo "registry digest differs"; return; }
  "$IMGTOOL" copy -q --no-artifacts "$at" "oci:$back:$2" >/dev/null 2>&1 || { echo "pull refused"; return; }
  [ "$("$IMGTOOL" digest "oci:$back:$2" 2>/dev/null)" = "$3" ] || { echo "pulled digest differs"; return; }
  skopeo inspect --raw --tls-verify=false "$at" >"$WORK/s.reg" 2>/dev/null || { echo "skopeo cannot read the registry copy"; return; }
  skopeo inspect --raw "oci:$back" >"$WORK/s.back" 2>/dev/null || { echo "skopeo cannot read the pulled copy"; return; }
  [ "sha256:$(sha "$WORK/s.reg")" = "$3" ] && [ "sha256:$(sha "$WORK/s.back")" = "$3" ] ||
    { echo "skopeo reads other bytes"; return; }
  n=$(oras_read "$repo" "$2" "$3" 2>"$WORK/oras.err") || { echo "oras: $(tail -n1 "$WORK/oras.err")"; return; }
  echo "ok $n"
}

ROWS=()
ROUND_TRIPS=0
BLOBS_BY_ORAS=0
# One reference: raw, verify and copy, each compared; adds a table row.
check_ref() {  # FIXTURE LABEL REF SKOPEO_REF DESTTAG
  local fixture=$1 label=$2 ref=$3 sref=$4 dest=$5 sv=- iv scv=- icv expect code digest out agree
  if [ "$sref" != - ]; then
    sv=refused
    skopeo inspect --raw "$sref" >"$WORK/s.raw" 2>/dev/null && sv=read
  fi
  iv=refused
  if "$IMGTOOL" inspect --raw "$ref" >"$WORK/i.raw" 2>"$WORK/i.err"; then
    iv=read
    digest=$("$IMGTOOL" digest "$ref" 2>/dev/null) || problem "$fixture" "$label" "inspect --raw reads it, digest refuses"
    [ "${digest:-}" = "sha256:$(sha "$WORK/i.raw")" ] || problem "$fixture" "$label" "digest is not the raw bytes' sha256"
    if [ "$sv" = read ] && ! cmp -s "$WORK/s.raw" "$WORK/i.raw"; then
      problem "$fixture" "$label" "inspect --raw bytes differ from skopeo's"
    fi
  elif "$IMGTOOL" digest "$ref" >/dev/null 2>&1; then
    problem "$fixture" "$label" "digest reads it, inspect --raw refuses: $(tail -n1 "$WORK/i.err")"
  elif ! grep -q "^imgtool: error: .\{20,\}" "$WORK/i.err"; then
    problem "$fixture" "$label" "refused without a message naming why: $(cat "$WORK/i.err")"
  fi
  set +e
  "$IMGTOOL" verify "$ref" >"$WORK/v.out" 2>&1
  code=$?
  set -e
  expect=$(expected_verify "$fixture" "$label")
  [ -n "$expect" ] || problem "$fixture" "$label" "the README names no verify verdict"
  [ "$code" = "$expect" ] || problem "$fixture" "$label" "verify exit $code, README says $expect: $(tail -n2 "$WORK/v.out")"
  if [ "$code" = 4 ] && ! grep -q "^FAILED sha256:[0-9a-f]\{64\}: ." "$WORK/v.out"; then
    problem "$fixture" "$label" "verify exit 4 without naming the damaged blob"
  fi
  if [ "$sref" != - ]; then
    scv=refused
    skopeo copy -q --all "$sref" "oci:$WORK/skopeo/$fixture:$dest" >/dev/null 2>&1 && scv=copies
  fi
  icv=refused
  if "$IMGTOOL" copy -q "$ref" "oci:$WORK/copies/$fixture:$dest" >/dev/null 2>&1; then
    icv=copies
    digest=$("$IMGTOOL" digest "$ref" 2>/dev/null)
    [ "$("$IMGTOOL" digest "oci:$WORK/copies/$fixture:$dest" 2>/dev/null)" = "$digest" ] ||
      problem "$fixture" "$label" "the copy has another digest"
    out=$(round_trip "$fixture" "$dest" "$digest")
    if [ "${out%% *}" = ok ]; then
      ROUND_TRIPS=$((ROUND_TRIPS + 1))
      BLOBS_BY_ORAS=$((BLOBS_BY_ORAS + ${out#ok }))
    elif [ "$out" = refused ] && intended "$fixture" "$label" registry - refused; then
      icv="copies (registry refused)"
    else
      problem "$fixture" "$label" "registry round trip: $out"
    fi
  fi
  judge "$fixture" "$label" raw "$sv" "$iv"
  agree=$AGREE
  judge "$fixture" "$label" copy "$scv" "${icv% (*}"
  ROWS+=("$fixture|$label|$sv, $scv|$iv, $icv, verify $code|$agree, $AGREE")
}

# Every tag, and by digest every manifest that no tag names alone; for an archive also the
# reference without a tag. skopeo 1.9.3 names no manifest by digest in a layout; it takes
# the only one when the reference has no tag.
for path in "$WORK"/fx/*; do
  fixture=$(basename "$path")
  [ "$fixture" != README.md ] || continue
  if [ -f "$path" ]; then
    t=oci-archive
    index=$(tar -xOf "$path" index.json 2>/dev/null || tar -xOf "$path" ./index.json)
  else
    t=oci
    index=$(cat "$path/index.json")
  fi
  count=$(jq '.manifests | length' <<<"$index")
  while read -r -u 3 tag; do
    check_ref "$fixture" "$tag" "$t:$path:$tag" "$t:$path:$tag" "$tag"
  done 3< <(jq -r '[.manifests[].annotations["org.opencontainers.image.ref.name"] // empty] | unique[]' <<<"$index")
  while read -r -u 3 digest; do
    sref=-
    if [ "$count" = 1 ]; then sref="$t:$path"; fi
    check_ref "$fixture" "@${digest:7:12}" "$t:$path@$digest" "$sref" "at-${digest:7:12}"
  done 3< <(jq -r '.manifests | group_by(.annotations["org.opencontainers.image.ref.name"] // "") |
      map(select(length > 1 or (.[0].annotations["org.opencontainers.image.ref.name"] // "") == "")) |
      [.[][].digest] | unique[]' <<<"$index")
  if [ "$t" = oci-archive ]; then check_ref "$fixture" "(none)" "$t:$path" "$t:$path" "none"; fi
done

printf '%-46s %-22s %-22s %-34s %s\n' FIXTURE REF SKOPEO IMGTOOL AGREE
for row in "${ROWS[@]}"; do
  IFS='|' read -r f r s i a <<<"$row"
  printf '%-46s %-22s %-22s %-34s %s\n' "$f" "${r:0:22}" "$s" "$i" "$a"
done
echo "${#ROWS[@]} references; $ROUND_TRIPS copies went to the registry and back; oras read $BLOBS_BY_ORAS manifests and blobs of them"
for row in "${INTENDED[@]}"; do
  IFS='|' read -r f r c _ <<<"$row"
  [ -n "${INTENDED_SEEN["$f|$r|$c"]:-}" ] || FAILURES+=("$f $r: the README lists an intended $c disagreement that did not happen")
done
if [ "${#FAILURES[@]}" -gt 0 ]; then
  printf 'FAILED: %s\n' "${FAILURES[@]}" >&2
  exit 1
fi
pass "every fixture reference: skopeo's verdict and bytes (or an intended difference), the README's verify verdict, copies kept"

F=$WORK/fx
# 1. containerd's exports: the layout is read, docker's manifest.json skipped. The one image
# the archive holds verifies and copies as skopeo's default copy takes it; an archive that
# imgtool rewrites (a tag added) is a plain OCI layout, manifest.json left out.
for a in oras-hello-world.tar oras-hello-world-prefixed-path.tar; do
  expect_exit 0 verify --platform linux/amd64 "oci-archive:$F/$a:latest"
  "$IMGTOOL" copy -q --platform linux/amd64 "oci-archive:$F/$a:latest" "oci:$WORK/amd64/$a:v1" >/dev/null
  skopeo copy -q --preserve-digests --override-os linux --override-arch amd64 "oci-archive:$F/$a" "oci:$WORK/skopeo-amd64/$a:v1"
  assert_eq "$("$IMGTOOL" digest "oci:$WORK/amd64/$a:v1")" "$("$IMGTOOL" digest "oci:$WORK/skopeo-amd64/$a:v1")" \
    "$a: the linux/amd64 image imgtool and skopeo copy"
  assert_eq "sha256:$(skopeo inspect --raw "oci:$WORK/amd64/$a" | sha256sum | cut -d' ' -f1)" \
    "$("$IMGTOOL" digest "oci:$WORK/amd64/$a:v1")" "$a: skopeo reads imgtool's copy"
done
cp "$F/oras-hello-world.tar" "$WORK/rewritten.tar"
"$IMGTOOL" copy -q "oci:$WORK/amd64/oras-hello-world.tar:v1" "oci-archive:$WORK/rewritten.tar:amd64" >/dev/null
tar -tf "$WORK/rewritten.tar" | grep -q manifest.json && fail "a rewritten archive kept docker's stale manifest.json"
assert_eq "$("$IMGTOOL" digest "oci-archive:$WORK/rewritten.tar:latest")" \
  "$("$IMGTOOL" digest "oci-archive:$F/oras-hello-world.tar:latest")" "the rewritten archive's first tag"
pass "containerd exports (manifest.json beside the layout, ./ names): linux/amd64 verifies and copies as skopeo's; rewritten without manifest.json"

# 2. A config that is not an image config: the manifest is an artifact. Digest, raw bytes,
# verify and copy took it above; policy refuses it naming the manifest, and skips it inside
# an index (unknown/unknown). A damaged config: the summary, diff and policy refuse, naming
# the manifest and the config.
out=$("$IMGTOOL" inspect --json "oci:$F/regclient-testrepo:a-docker")
assert_eq "$(jq -r .artifactType <<<"$out")" "application/vnd.oci.image.config.v1+json" "a {} config makes an artifact"
printf '{"policyVersion": 1, "rules": {"nonRoot": {}}}' >"$WORK/nonroot.json"
expect_exit 5 policy check --policy "$WORK/nonroot.json" "oci:$F/regclient-testrepo:a-docker"
assert_contains "$OUTPUT" "manifest sha256:43089316cfee: an artifact (application/vnd.oci.image.config.v1+json), not an image" \
  "policy names the manifest"
expect_exit 5 policy check --policy "$WORK/nonroot.json" "oci:$F/regclient-testrepo:v1"
assert_contains "$OUTPUT" "skipped unknown/unknown sha256:43089316cfee: not a runnable platform" "the attestation in v1 is skipped"
C="oci:$F/cimage-delete_image_multiple_images"
for verb in "inspect $C:1.0.0" "diff $C:1.0.0 $C:3"; do
  expect_exit 4 $verb
  assert_contains "$OUTPUT" "manifest sha256:0dc27f36a618: config: " "$verb names the manifest"
  assert_contains "$OUTPUT" "ends after 584 of the 585 bytes its descriptor names" "$verb says why"
done
expect_exit 5 policy check --policy "$WORK/nonroot.json" "$C:1.0.0"
assert_contains "$OUTPUT" "manifest sha256:0dc27f36a618: config: " "policy names the manifest"
pass "a {} config: an artifact policy refuses naming it; a damaged config: inspect, diff and policy refuse naming the manifest"

# 3. A Docker manifest named as an OCI manifest (test_index "1", also inside "3"): every verb
# reads it as Docker's and says so once on stderr; copy writes its own type into the
# destination's index.json, as skopeo's copy does.
want="imgtool: warning: oci:$F/ggcr-test_index: manifest sha256:eebff607b162: named as application/vnd.oci.image.manifest.v1+json, but its own mediaType is application/vnd.docker.distribution.manifest.v2+json; read as application/vnd.docker.distribution.manifest.v2+json"
for verb in digest "inspect --raw" verify; do
  assert_eq "$("$IMGTOOL" $verb "oci:$F/ggcr-test_index:1" 2>&1 >/dev/null)" "$want" "$verb warns once"
done
assert_eq "$("$IMGTOOL" copy -q "oci:$F/ggcr-test_index:3" "oci:$WORK/three:v1" 2>&1 >/dev/null)" "$want" "copy of the index holding it warns once"
tag1() { jq -r '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == "1") | .mediaType' "$1/index.json"; }
assert_eq "$(tag1 "$WORK/copies/ggcr-test_index")" "$(tag1 "$WORK/skopeo/ggcr-test_index")" "the copy's entry type, imgtool's and skopeo's"
assert_eq "$(tag1 "$WORK/copies/ggcr-test_index")" "application/vnd.docker.distribution.manifest.v2+json" "the copy's entry type"
pass "a Docker manifest named as an OCI manifest: read as Docker's by every verb, one warning, copied as skopeo copies it"
