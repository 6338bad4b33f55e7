#!/usr/bin/env bash
# Depth limits (issue 24): every reader of nested input refuses input nested past its
# limit with exit 2 and the reason (verify reports it as a problem of the image, exit 4;
# policy check fails the image's rules, exit 5), and never dies of a signal (the reports:
# an index nested 12,000 deep and a config nested 200,000 deep ended imgtool with SIGSEGV).
#   - JSON nesting past oci::kMaxJsonDepth (128): "WHAT: nested deeper than 128 levels",
#     for an index, a config, a manifest, a spec, a policy, a Sigstore bundle, TF_CONFIG,
#     an AdmissionReview and a registry's answer;
#   - indexes nested past oci::kMaxIndexDepth (4): "nested too deep (more than 4 index
#     levels)", for every verb that walks an index, and `index create` writes none deeper.
# The inputs are written by a small Python script (a 12,000-level chain of indexes is
# 12,000 small blobs); the whole test takes a few seconds.
source "$(dirname "$0")/lib.sh"
SERVER_PIDS=()
trap 'for p in "${SERVER_PIDS[@]}"; do stop_pid "$p"; done; cleanup' EXIT

# One reader for all: JSON trees are built only in oci/canonical_json.cc (ParseJson and
# its lenient forms), so a new reader cannot miss the cap. (nlohmann's sax_parse builds no
# tree and does not recurse: lint's exec-form reader uses it.)
others=$(grep -rlE '(json|Json)::(parse|from_cbor|from_msgpack|from_bson|from_ubjson)\(' \
  "$REPO/imgtool" "$REPO/trainer" --include='*.cc' --include='*.h' | grep -vE '_test\.cc$|/oci/canonical_json\.cc$' || true)
[ -z "$others" ] || fail "JSON parsed outside oci::ParseJson (use it or ParseJsonLenient): $others"
pass "JSON is parsed only by oci::ParseJson and its lenient forms"

JSON_CAP=128 INDEX_CAP=4
TOO_DEEP_JSON="nested deeper than $JSON_CAP levels"
TOO_DEEP_INDEX="nested too deep (more than $INDEX_CAP index levels)"

python3 - "$WORK" "$INDEX_CAP" <<'PY'
import hashlib, json, os, sys
work, index_cap = sys.argv[1], int(sys.argv[2])
INDEX = "application/vnd.oci.image.index.v1+json"
MANIFEST = "application/vnd.oci.image.manifest.v1+json"
CONFIG = "application/vnd.oci.image.config.v1+json"
AMD64 = {"os": "linux", "architecture": "amd64"}

def deep(levels, leaf="1"):  # objects inside each other
    return '{"a":' * levels + leaf + "}" * levels

def blob(layout, data, media_type, **extra):
    if isinstance(data, str):
        data = data.encode()
    hexd = hashlib.sha256(data).hexdigest()
    os.makedirs(f"{layout}/blobs/sha256", exist_ok=True)
    with open(f"{layout}/blobs/sha256/{hexd}", "wb") as f:
        f.write(data)
    return {"mediaType": media_type, "digest": "sha256:" + hexd, "size": len(data), **extra}

def tag(layout, tags):  # tags: name -> descriptor
    with open(f"{layout}/oci-layout", "w") as f:
        f.write('{"imageLayoutVersion":"1.0.0"}')
    entries = [dict(d, annotations={"org.opencontainers.image.ref.name": t}) for t, d in tags.items()]
    with open(f"{layout}/index.json", "w") as f:
        json.dump({"schemaVersion": 2, "manifests": entries}, f)

def image(layout, config_extra="", manifest_extra=""):
    config = '{"architecture":"amd64","os":"linux","config":{"User":"10001:10001"},' \
             '"rootfs":{"type":"layers","diff_ids":[]}' + config_extra + "}"
    c = blob(layout, config, CONFIG)
    m = '{"schemaVersion":2,"mediaType":"%s","config":%s,"layers":[]%s}' % (MANIFEST, json.dumps(c), manifest_extra)
    return blob(layout, m, MANIFEST, platform=AMD64)

def index_over(layout, child, extra=""):
    body = '{"schemaVersion":2,"mediaType":"%s","manifests":[%s]%s}' % (INDEX, json.dumps(child), extra)
    return blob(layout, body, INDEX, platform=AMD64)

def chain(layout, levels):
    d = image(layout)
    for _ in range(levels):
        d = index_over(layout, d)
    return d

L = lambda name: os.path.join(work, name)
tag(L("good"), {"v1": image(L("good"))})
tag(L("chain"), {"v1": chain(L("chain"), 12000), "limit": chain(L("chain"), index_cap),
                 "three": chain(L("chain"), index_cap - 1), "past": chain(L("chain"), index_cap + 1)})
tag(L("deepidx"), {"v1": index_over(L("deepidx"), image(L("deepidx")), ',"x":' + "[" * 12000 + "]" * 12000)})
cfg = image(L("deepcfg"), config_extra=',"x":' + deep(200000))
tag(L("deepcfg"), {"v1": cfg, "idx": index_over(L("deepcfg"), cfg)})
tag(L("deepman"), {"v1": image(L("deepman"), manifest_extra=',"annotations":{},"x":' + deep(200000))})
with open(L("deep.json"), "w") as f:  # any document: a spec, a policy, a bundle
    f.write('{"base":"scratch","x":' + "[" * 200000 + "]" * 200000 + "}")  # 400 kB: under the 1 MiB cap
with open(L("review.json"), "w") as f:
    f.write('{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u1","object":' +
            deep(200000) + "}}")
PY
digest_of() { jq -r --arg t "$2" '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == $t) | .digest' \
  "$WORK/$1/index.json"; }
pass "inputs: an index chain 12,000 deep, an index/config/manifest nested 12,000-200,000 deep, deep JSON files"

# refused WANT_EXIT TEXT ARGS...: imgtool ARGS exits WANT_EXIT saying TEXT, within 30 s.
refused() {
  local want=$1 text=$2 rc
  shift 2
  set +e
  OUTPUT=$(timeout 30 "$IMGTOOL" "$@" 2>&1)
  rc=$?
  set -e
  ((rc < 124)) || fail "imgtool $* ended with $rc (a signal or a timeout): $OUTPUT"
  [ "$rc" = "$want" ] || fail "imgtool $* exited $rc, want $want: $OUTPUT"
  assert_contains "$OUTPUT" "$text" "imgtool $*"
}

# ---- indexes nested past kMaxIndexDepth ----
C="oci:$WORK/chain"
P=(--platform linux/amd64)
for args in "inspect ${P[*]} $C:v1" "inspect --raw ${P[*]} $C:v1" "inspect --config ${P[*]} $C:v1" \
    "digest ${P[*]} $C:v1" "copy $C:v1 oci:$WORK/out:v1" "copy $C:v1 oci-archive:$WORK/out.tar:v1" \
    "copy ${P[*]} $C:v1 oci:$WORK/out:v1" "diff ${P[*]} $C:v1 $C:v1" "verify $C:v1" "verify ${P[*]} $C:v1" \
    "index append --base $C:v1 oci:$WORK/out:multi" "copy $C:past oci:$WORK/out:v1"; do
  # shellcheck disable=SC2086
  refused 2 "$TOO_DEEP_INDEX" $args
done
[ ! -e "$WORK/out" ] && [ ! -e "$WORK/out.tar" ] || fail "a refused copy left an output"
pass "an index chain 12,000 deep (and $((INDEX_CAP + 1)) deep): inspect/digest --platform, copy (layout, archive," \
  "--platform), diff --platform, verify, index append --base: exit 2, '$TOO_DEEP_INDEX'"

expect_exit 0 inspect "$C:v1"
expect_exit 0 copy "$C:limit" "oci:$WORK/limit:v1"
expect_exit 0 verify "oci:$WORK/limit:v1"
assert_eq "$("$IMGTOOL" digest "${P[@]}" "oci:$WORK/limit:v1")" "$("$IMGTOOL" digest oci:$WORK/good:v1)" \
  "the image at the bottom of $INDEX_CAP levels"
pass "the chain's top alone (inspect without --platform) and a chain of $INDEX_CAP levels (copy, verify, --platform) are read"

# index create writes no index one level deeper than any verb reads.
refused 2 "$TOO_DEEP_INDEX" index create "oci:$WORK/multi:v1" "$C:limit"
assert_contains "$OUTPUT" "$C:limit inside the new index" "index create names the member"
[ ! -e "$WORK/multi" ] || fail "index create wrote a layout"
expect_exit 0 index create "oci:$WORK/multi:v1" "$C:three"
expect_exit 0 verify "oci:$WORK/multi:v1"
pass "index create: a member of $INDEX_CAP index levels is refused (it would make $((INDEX_CAP + 1))), one of $((INDEX_CAP - 1)) fits"

# sign --recursive walks every entry: through the same limit.
export COSIGN_PASSWORD=imgtool-example-only
refused 2 "$TOO_DEEP_INDEX" sign --recursive --key "$REPO/signatures/trusted/example.key" "$C:v1"
pass "sign --recursive over the chain: exit 2, '$TOO_DEEP_INDEX'"

# build: the base resolves through the index to the spec's platform.
mkdir -p "$WORK/ctx"
spec_on() {  # BASE
  printf '{"base":"%s","platform":{"os":"linux","architecture":"amd64"},"user":{"name":"t","uid":10001,"gid":10001},"layers":[]}' \
    "$1" >"$WORK/ctx/spec.json"
}
spec_on "oci:$WORK/chain@$(digest_of chain v1)"
refused 2 "$TOO_DEEP_INDEX" build "$WORK/ctx/spec.json" -o "oci:$WORK/built:v1"
pass "build from the chain as base: exit 2, '$TOO_DEEP_INDEX'"

# policy check: an index inside an index is not judged (fails closed); the chain's
# entries are never walked further.
printf '{"policyVersion": 1, "rules": {"nonRoot": {}}}' >"$WORK/policy.json"
refused 5 "an index inside the index is not judged" policy check --policy "$WORK/policy.json" "$C:v1"
pass "policy check of the chain: exit 5, its entry (an index) not judged"

# ---- JSON nested past kMaxJsonDepth ----
for args in "inspect oci:$WORK/deepidx:v1" "inspect --raw oci:$WORK/deepidx:v1" "digest oci:$WORK/deepidx:v1" \
    "copy oci:$WORK/deepidx:v1 oci:$WORK/out:v1" "copy oci:$WORK/deepidx:v1 oci-archive:$WORK/out.tar:v1" \
    "diff oci:$WORK/deepidx:v1 oci:$WORK/good:v1" "diff ${P[*]} oci:$WORK/deepidx:v1 oci:$WORK/deepidx:v1"; do
  # shellcheck disable=SC2086
  refused 2 "$TOO_DEEP_JSON" $args
done
# verify reports a manifest it cannot read as a problem of the image (exit 4), naming why.
refused 4 "$TOO_DEEP_JSON" verify "oci:$WORK/deepidx:v1"
pass "an index nested 12,000 deep: inspect (--raw), digest, copy (layout, archive), diff (--platform): exit 2;" \
  "verify: exit 4 naming the cause"

# Issue 25: a manifest's digest, its raw bytes and its copy never need its config understood,
# so the deep config is refused only by the verbs that judge it, never recursed over.
R="oci:$WORK/deepcfg"
assert_eq "$(timeout 30 "$IMGTOOL" digest "$R:v1")" "$(digest_of deepcfg v1)" "digest of the image with the deep config"
timeout 30 "$IMGTOOL" inspect --raw "$R:v1" >/dev/null
timeout 30 "$IMGTOOL" inspect --config "$R:v1" | cmp - "$WORK/deepcfg/blobs/sha256/$(jq -r .config.digest[7:] \
  "$WORK/deepcfg/blobs/sha256/$(digest_of deepcfg v1 | cut -c8-)")" || fail "inspect --config: not the config's bytes"
timeout 30 "$IMGTOOL" copy -q "$R:v1" "oci-archive:$WORK/copied.tar:v1" >/dev/null
assert_eq "$(timeout 30 "$IMGTOOL" digest "oci-archive:$WORK/copied.tar:v1")" "$(digest_of deepcfg v1)" "its copy"
pass "a config nested 200,000 deep: digest, inspect --raw / --config and copy (byte for byte) read past it"
for layout in deepcfg deepman; do
  R="oci:$WORK/$layout"
  for args in "inspect $R:v1" "diff $R:v1 oci:$WORK/good:v1" "diff oci:$WORK/good:v1 $R:v1"; do
    # shellcheck disable=SC2086
    refused 2 "$TOO_DEEP_JSON" $args
  done
  if [ "$layout" = deepman ]; then
    for args in "inspect --config $R:v1" "inspect --raw $R:v1" "digest $R:v1" "copy $R:v1 oci:$WORK/out:v1" \
        "copy $R:v1 oci-archive:$WORK/out.tar:v1"; do
      # shellcheck disable=SC2086
      refused 2 "$TOO_DEEP_JSON" $args
    done
  fi
  refused 4 "$TOO_DEEP_JSON" verify "$R:v1"
  spec_on "$R@$(digest_of "$layout" v1)"
  refused 2 "$TOO_DEEP_JSON" build "$WORK/ctx/spec.json" -o "oci:$WORK/built:v1"
  refused 5 "$TOO_DEEP_JSON" policy check --policy "$WORK/policy.json" "$R:v1"
done
refused 2 "$TOO_DEEP_JSON" diff "${P[@]}" "oci:$WORK/deepcfg:idx" "oci:$WORK/good:v1"
[ ! -e "$WORK/out" ] && [ ! -e "$WORK/out.tar" ] && [ ! -e "$WORK/built" ] || fail "a refused command left an output"
pass "a config and a manifest nested 200,000 deep: inspect, diff (--platform), build from it as base: exit 2;" \
  "verify: exit 4, policy check: exit 5, naming the cause; the manifest also refused by inspect --config / --raw," \
  "digest and copy"

cp "$WORK/deep.json" "$WORK/spec.json"
refused 2 "spec.json: $TOO_DEEP_JSON" build "$WORK/spec.json" -o "oci:$WORK/built:v1"
refused 2 "$TOO_DEEP_JSON" policy check --policy "$WORK/deep.json" "oci:$WORK/good:v1"
refused 2 "$TOO_DEEP_JSON" lock "$WORK/spec.json"
printf 'hello\n' >"$WORK/a.txt"
openssl ecparam -name prime256v1 -genkey -noout -out "$WORK/k.pem" 2>/dev/null
openssl ec -in "$WORK/k.pem" -pubout -out "$WORK/k.pub" 2>/dev/null
refused 2 "$TOO_DEEP_JSON" verify-blob --bundle "$WORK/deep.json" --key "$WORK/k.pub" "$WORK/a.txt"
pass "a spec (build, lock), a policy and a Sigstore bundle nested 200,000 deep: exit 2, '$TOO_DEEP_JSON'"

# ---- TF_CONFIG (an environment variable holds at most 128 KiB: 60,000 levels) ----
TF=$(python3 -c 'print("{\"cluster\":{\"worker\":[\"127.0.0.1:29401\"]},\"task\":{\"type\":\"worker\",\"index\":0},\"x\":" + "[" * 60000 + "]" * 60000 + "}")')
rc=0
OUTPUT=$(TF_CONFIG=$TF timeout 30 "$IMGTOOL" fleet check --timeout 5 2>&1) || rc=$?
[ "$rc" = 2 ] || fail "fleet check with a deep TF_CONFIG exited $rc: $OUTPUT"
assert_contains "$OUTPUT" "TF_CONFIG: $TOO_DEEP_JSON" "fleet check"
if [ -n "${TRAINER:-}" ] && [ -x "$TRAINER" ]; then
  rc=0
  OUTPUT=$(TF_CONFIG=$TF timeout 30 "$TRAINER" --data "$WORK/no-data" --epochs 1 2>&1) || rc=$?
  [ "$rc" = 2 ] || fail "the trainer with a deep TF_CONFIG exited $rc: $OUTPUT"
  assert_contains "$OUTPUT" "TF_CONFIG: $TOO_DEEP_JSON" "trainer"
fi
pass "TF_CONFIG nested 60,000 deep: fleet check${TRAINER:+ and the trainer} exit 2, 'TF_CONFIG: $TOO_DEEP_JSON'"

# ---- an AdmissionReview, to the webhook ----
mkdir -p "$WORK/tls"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$WORK/tls/key.pem" \
  -out "$WORK/tls/crt.pem" -days 1 -subj /CN=127.0.0.1 -addext "subjectAltName=IP:127.0.0.1" 2>/dev/null
PORT=$(free_port)
"$IMGTOOL" admission serve --policy "$WORK/policy.json" --tls-cert "$WORK/tls/crt.pem" --tls-key "$WORK/tls/key.pem" \
  --listen "127.0.0.1:$PORT" >"$WORK/server.log" 2>&1 &
SERVER_PIDS+=($!)
URL="https://127.0.0.1:$PORT"
for _ in $(seq 100); do curl -s --cacert "$WORK/tls/crt.pem" -o /dev/null "$URL/healthz" && break; sleep 0.1; done
CODE=$(curl -sS --cacert "$WORK/tls/crt.pem" -o "$WORK/answer.json" -w '%{http_code}' \
  -H 'Content-Type: application/json' --data-binary "@$WORK/review.json" "$URL/validate")
assert_eq "$CODE" 400 "a deep review: HTTP status"
assert_eq "$(jq -c '[.response.allowed, .response.status.message]' "$WORK/answer.json")" \
  "[false,\"AdmissionReview: $TOO_DEEP_JSON\"]" "a deep review"
assert_eq "$(curl -sS --cacert "$WORK/tls/crt.pem" "$URL/healthz")" ok "the webhook after a deep review"
pass "an AdmissionReview nested 200,000 deep: 400, denied, 'AdmissionReview: $TOO_DEEP_JSON'; the webhook lives on"

# ---- a registry's answers ----
cat >"$WORK/registry.py" <<'PY'
# A registry whose every JSON answer nests 12,000 deep: the manifest (an index), the tag
# list, and the error bodies.
import hashlib, http.server, sys
deep = "[" * 12000 + "]" * 12000
index = ('{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[],"x":%s}'
         % deep).encode()
class H(http.server.BaseHTTPRequestHandler):
    def answer(self, code, body, ctype="application/json", extra=()):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
    def do_GET(self):
        if self.path == "/v2/":
            self.answer(200, b"{}")
        elif self.path.startswith("/v2/deep/manifests/"):
            self.answer(200, index, "application/vnd.oci.image.index.v1+json",
                        [("Docker-Content-Digest", "sha256:" + hashlib.sha256(index).hexdigest())])
        elif self.path.startswith("/v2/deep/tags/list"):
            self.answer(200, ('{"name":"deep","tags":["v1"],"x":%s}' % deep).encode())
        else:
            self.answer(404, ('{"errors":[{"code":"NAME_UNKNOWN","message":"no"}],"x":%s}' % deep).encode())
    do_HEAD = do_GET
    def log_message(self, *args):
        pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
PY
RPORT=$(free_port)
python3 "$WORK/registry.py" "$RPORT" 2>"$WORK/registry.log" &
SERVER_PIDS+=($!)
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$RPORT/v2/" && break; sleep 0.1; done
refused 2 "$TOO_DEEP_JSON" inspect "docker://127.0.0.1:$RPORT/deep:v1"
refused 2 "$TOO_DEEP_JSON" copy "docker://127.0.0.1:$RPORT/deep:v1" "oci:$WORK/out:v1"
refused 3 "404 Not Found" inspect "docker://127.0.0.1:$RPORT/other:v1"
expect_exit 0 tags "docker://127.0.0.1:$RPORT/deep"
assert_eq "$OUTPUT" "" "tags from a list nested 12,000 deep"
pass "a registry answering JSON nested 12,000 deep: the manifest refused (exit 2), an error body is only its status" \
  "(exit 3), a tag list is no tags"
