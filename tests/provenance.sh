#!/usr/bin/env bash
# SLSA Provenance v1: `imgtool build` writes OUTPUT.provenance.json. The golden CPU image
# (examples/golden/spec-cpu.json, linux/amd64; its debs fetched once into
# examples/golden/cache) built in two folders (other TZ, umask, layer cache) gives
# byte-identical provenance; in-toto-attestation (PyPI, in a venv kept between runs)
# parses it strictly as a Statement v1 and its predicate as the SLSA Provenance v1 message,
# and validates the statement; its resolvedDependencies name every input of the lock
# (`imgtool lock` -> out/golden.lock.json) with the same digest. A package URL with
# user:pass@ leaves neither in it. `attest --provenance` with the example key, then
# `verify --attestation --type https://slsa.dev/provenance/v1`, passes; a statement
# about another image is refused (exit 2), signed or --unsigned.
# Env: TRAINER (default: the trainer beside IMGTOOL's build folder).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/packages_lib.sh"
IMGTOOL=$(realpath "$IMGTOOL")
TRAINER="${TRAINER:-$(cd "$(dirname "$IMGTOOL")/.." && pwd)/trainer/trainer}"
IMGTOOL_FLEET="${IMGTOOL_FLEET:-$(dirname "$IMGTOOL")/imgtool-fleet}"
[ -x "$TRAINER" ] || fail "no trainer binary at $TRAINER (set TRAINER, or build the trainer target)"
G=$REPO/examples/golden
SLSA=https://slsa.dev/provenance/v1
SERVER=""
trap '[ -z "$SERVER" ] || stop_pid "$SERVER"; cleanup' EXIT

venv="${XDG_CACHE_HOME:-$HOME/.cache}/imgtool-test/in-toto-venv"
if ! "$venv/bin/python" -c 'import in_toto_attestation.v1.statement' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q in-toto-attestation || fail "pip install in-toto-attestation into $venv"
fi

# ---- the golden image, twice, in two folders ----
"$G/fetch" --spec spec-cpu.json --no-trainer --platform linux/amd64 >/dev/null
golden_context "$WORK/a"
golden_context "$WORK/b"
mkdir -p "$WORK/a/out" "$WORK/b/out"
lock=$WORK/a/out/golden.lock.json
out=$("$IMGTOOL" lock "$WORK/a/spec-cpu.json" --platform linux/amd64 -o "$lock" 2>&1) || fail "imgtool lock: $out"
digest=$(cd "$WORK/a" && "$IMGTOOL" build spec-cpu.json --platform linux/amd64 -o oci:out/golden:latest \
  --lock-file "$lock" -q | tail -n1)
digest2=$(cd "$WORK/b" && umask 077 && TZ=Asia/Kolkata IMGTOOL_CACHE="$WORK/cache2" \
  "$IMGTOOL" build spec-cpu.json --platform linux/amd64 -o oci:out/golden:latest --lock-file "$lock" -q | tail -n1)
prov=$WORK/a/out/golden.provenance.json
[ -f "$prov" ] || fail "no provenance beside the layout ($prov)"
assert_eq "$digest2" "$digest" "digest of build B"
cmp "$prov" "$WORK/b/out/golden.provenance.json" || fail "the provenance of two builds in two folders differs"
pass "two builds in two folders (TZ, umask, layer cache): the same digest and byte-identical provenance"

# ---- in-toto-attestation parses and validates it ----
"$venv/bin/python" - "$prov" "${digest#sha256:}" <<'PY' || fail "in-toto-attestation rejects the provenance"
import json, sys
from google.protobuf import json_format
from in_toto_attestation.v1 import statement, statement_pb2
from in_toto_attestation.predicates.provenance.v1 import provenance_pb2
doc = json.load(open(sys.argv[1]))
pb = json_format.Parse(json.dumps(doc), statement_pb2.Statement())  # strict: unknown fields fail
statement.Statement.copy_from_pb(pb).validate()
assert pb.type == "https://in-toto.io/Statement/v1", pb.type
assert pb.predicate_type == "https://slsa.dev/provenance/v1", pb.predicate_type
assert [s.digest["sha256"] for s in pb.subject] == [sys.argv[2]], pb.subject
prov = json_format.Parse(json.dumps(doc["predicate"]), provenance_pb2.Provenance())
assert prov.build_definition.build_type == "https://imgtool.invalid/buildtypes/build/v1"
assert prov.run_details.builder.id == "https://imgtool.invalid/builders/local", prov.run_details.builder.id
assert len(prov.build_definition.resolved_dependencies) > 0
assert prov.run_details.byproducts[0].media_type == "application/spdx+json"
print("ok: in-toto-attestation: Statement v1 valid, predicate parses as SLSA Provenance v1")
PY
assert_eq "$(jq -r '.predicate.runDetails.byproducts[0].digest.sha256' "$prov")" \
  "$(sha256sum <"$WORK/a/out/golden.spdx.json" | cut -c1-64)" "byproduct: the SBOM's digest"
assert_eq "$(jq -r '.predicate.buildDefinition.externalParameters.spec.digest.sha256' "$prov")" \
  "$(sha256sum <"$WORK/a/spec-cpu.json" | cut -c1-64)" "externalParameters: the spec's digest"

# Every input of the lock, with its digest, and nothing else.
missing=$(jq -n --slurpfile p "$prov" --slurpfile l "$lock" '
  ($p[0].predicate.buildDefinition.resolvedDependencies
    | map({kind: .annotations.kind, name, layer: (.annotations.layer // null),
           platform: (.annotations.platform // null), sha256: ("sha256:" + .digest.sha256)})) as $deps
  | [$l[0].inputs[] | {kind, name, layer: (.layer // null), platform: (.platform // null), sha256}
     | select(. as $i | $deps | index([$i]) | not)]')
assert_eq "$missing" "[]" "lock inputs missing from resolvedDependencies (or with another digest)"
assert_eq "$(jq '.predicate.buildDefinition.resolvedDependencies | length' "$prov")" \
  "$(jq '.inputs | length' "$lock")" "as many dependencies as lock inputs"
n=$(jq '.inputs | length' "$lock")
kinds=$(jq -r '[.inputs[].kind] | unique | join(",")' "$lock")
assert_eq "$(jq -r '.predicate.buildDefinition.resolvedDependencies[] | select(.name == "/usr/local/bin/trainer") | .uri' "$prov")" \
  "cache/bin/trainer" "a file's uri, relative to the spec's folder"
pass "resolvedDependencies name every one of the $n inputs ($kinds) of out/golden.lock.json with its digest"

# ---- attest --provenance, verify --attestation --type slsa ----
export COSIGN_PASSWORD=imgtool-example-only
KEY=$REPO/signatures/trusted/example.key PUB=$REPO/signatures/trusted/example.pub
expect_exit 0 attest --key "$KEY" --provenance "$prov" "oci:$WORK/a/out/golden:latest"
expect_exit 0 verify --attestation --type "$SLSA" --key "$PUB" "oci:$WORK/a/out/golden:latest"
layout=$WORK/a/out/golden
att_digest=$(jq -r --arg t "sha256-${digest#sha256:}.att" \
  '.manifests[] | select(.annotations."org.opencontainers.image.ref.name" == $t) | .digest' "$layout/index.json")
[ -n "$att_digest" ] || fail "no sha256-<hex>.att tag in the layout"
att=$(cat "$layout/blobs/sha256/${att_digest#sha256:}")
assert_eq "$(jq -r '.layers[0].annotations.predicateType' <<<"$att")" "$SLSA" "the .att layer's predicateType"
env_blob=$layout/blobs/sha256/$(jq -r '.layers[0].digest | ltrimstr("sha256:")' <<<"$att")
jq -r .payload "$env_blob" | base64 -d | cmp - "$prov" || fail "the signed payload is not the provenance's bytes"
expect_exit 5 verify --attestation --type https://spdx.dev/Document --key "$PUB" "oci:$WORK/a/out/golden:latest"
pass "attest --provenance signs the statement as it is (.att, predicateType $SLSA); verify --attestation --type passes"

# ---- the golden image through a policy over its attestations (policies/provenance.json) ----
expect_exit 0 attest --key "$KEY" --predicate "$WORK/a/out/golden.spdx.json" --type spdxjson "oci:$layout:latest"
pinned="oci:$layout@$digest"
sed -e "s#\.\./signatures#$REPO/signatures#g" -e 's#https://ci.example/builder#https://imgtool.invalid/builders/local#' \
  "$REPO/policies/provenance.json" >"$WORK/ours.json"
expect_exit 0 policy check --policy "$WORK/ours.json" "$pinned"
sed -e "s#\.\./signatures#$REPO/signatures#g" "$REPO/policies/provenance.json" >"$WORK/ci.json"
out=$("$IMGTOOL" policy check --policy "$WORK/ci.json" "$pinned" 2>&1) && fail "a provenance from another builder passed"
grep -q 'built-by-ci: /runDetails/builder/id' <<<"$out" || fail "the denial does not name the requirement and pointer: $out"
pass "policies/provenance.json admits the golden image (its builder, every dependency by sha256, its SBOM) and denies another builder's, naming built-by-ci"

make_context "$WORK/other"
"$IMGTOOL" build "$WORK/other/spec.json" -o "oci:$WORK/other-img:v1" -q >/dev/null
expect_exit 2 attest --key "$KEY" --provenance "$prov" "oci:$WORK/other-img:v1"
assert_contains "$OUTPUT" "no subject names this image" "refusal names the cause"
[ -z "$(jq -r '.manifests[].annotations."org.opencontainers.image.ref.name" // empty' "$WORK/other-img/index.json" | grep '\.att$')" ] ||
  fail "a refused statement was stored"
expect_exit 2 attest --provenance "$prov" --unsigned "oci:$WORK/other-img:v1"
expect_exit 0 attest --provenance "$prov" --unsigned -o "$WORK/checked.json" "oci:$WORK/a/out/golden:latest"
cmp "$WORK/checked.json" "$prov" || fail "--unsigned wrote other bytes"
expect_exit 2 attest --provenance "$prov" "oci:$WORK/a/out/golden:latest"
assert_contains "$OUTPUT" "--unsigned" "no key, no --unsigned: says what to give"
pass "a statement about another image is refused (exit 2, nothing stored); --unsigned prints the checked statement"

# ---- credentials in a package URL ----
USERINFO="provuser:Prov-s3cret-pw"
mkdir -p "$WORK/srv" "$WORK/pctx"
deb=$(make_deb "$WORK/srv" tool 1.0-1)
python3 "$REPO/tests/fixtures/hostile_registry.py" files "$WORK/srv.ports" "$WORK/srv.log" "$WORK/srv" provuser \
  Prov-s3cret-pw 2>"$WORK/srv.err" &
SERVER=$!
for _ in $(seq 1 100); do [ -s "$WORK/srv.ports" ] && break; sleep 0.1; done
read -r port _ <"$WORK/srv.ports" || fail "the file server did not start: $(cat "$WORK/srv.err")"
url="http://127.0.0.1:$port/$(basename "$deb")"
printf '{"base":"scratch","user":{"name":"t","uid":10001,"gid":10001},"layers":[
  {"name":"pkgs","debs":[{"src":"%s","sha256":"%s","name":"tool","version":"1.0-1"}]}]}' \
  "http://$USERINFO@127.0.0.1:$port/$(basename "$deb")" "$(sha "$deb")" >"$WORK/pctx/spec.json"
expect_exit 0 build "$WORK/pctx/spec.json" -o "oci:$WORK/pkgimg:v1" -q
grep -F -e provuser -e Prov-s3cret-pw "$WORK/pkgimg.provenance.json" && fail "the provenance holds the credentials"
assert_eq "$(jq -r '.predicate.buildDefinition.resolvedDependencies[] | select(.name == "tool") | .uri' \
  "$WORK/pkgimg.provenance.json")" "$url" "the deb's uri without userinfo"
pass "a package URL with user:pass@: its uri is there without them, neither the user nor the password is"

# ---- an index: one statement about the index and every image ----
mkdir -p "$WORK/multi" && echo multi >"$WORK/multi/a.txt"
cat >"$WORK/multi/spec.json" <<'JSON'
{"base":"scratch","user":{"name":"t","uid":10001,"gid":10001},"platforms":["linux/amd64","linux/arm64"],
 "layers":[{"name":"app","files":[{"src":"a.txt","dest":"/opt/"}]}]}
JSON
index=$("$IMGTOOL" build "$WORK/multi/spec.json" -o "oci:$WORK/multi-img:v2" -q | tail -n1)
mp=$WORK/multi-img.provenance.json
want=$(jq -cS --arg i "${index#sha256:}" '[{name: "multi-img:v2", digest: {sha256: $i}}] + [.manifests[]
  | {name: ("multi-img:v2 (" + .platform.os + "/" + .platform.architecture + ")"), digest: {sha256: (.digest | ltrimstr("sha256:"))}}]' \
  "$WORK/multi-img/blobs/sha256/${index#sha256:}")
assert_eq "$(jq -cS .subject "$mp")" "$want" "an index's subjects: the index, then each image with its platform"
assert_eq "$(jq -c '[.predicate.buildDefinition.resolvedDependencies[].annotations.platform]' "$mp")" \
  '["linux/amd64","linux/arm64"]' "each platform's inputs"
expect_exit 0 attest --key "$KEY" --provenance "$mp" --recursive "oci:$WORK/multi-img:v2"
for d in $(jq -r '.manifests[].digest' "$WORK/multi-img/blobs/sha256/${index#sha256:}"); do
  expect_exit 0 verify --attestation --type "$SLSA" --key "$PUB" "oci:$WORK/multi-img@$d"
done
pass "an index: subjects are the index and both images; attest --recursive --provenance, each image verifies"
