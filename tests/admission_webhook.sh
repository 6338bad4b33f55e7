#!/usr/bin/env bash
# imgtool admission serve against a local docker-registry: small images pushed there
# (signed non-root, unsigned, root), a self-signed TLS certificate for 127.0.0.1, the
# server on a random port (stopped by PID on exit), and AdmissionReview fixtures
# (tests/fixtures/admission) sent with curl over TLS: allowed, denied with the rule and
# reason, fail-closed on malformed input and unreachable registries, Deployment / Job /
# StatefulSet templates, /mutate's JSONPatch, /healthz; then 1,000 reviews from 50
# concurrent clients, each answered with its own uid.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/registry_lib.sh"
IMGTOOL=$(realpath "$IMGTOOL")
FIX="$REPO/tests/fixtures/admission"

# ---- images: signed non-root (good), the same bytes unsigned (other repo), root ----
start_registry plain
make_context "$WORK/ctx"
"$IMGTOOL" build "$WORK/ctx/spec.json" -o "oci:$WORK/good:v1" -q >/dev/null
D=$("$IMGTOOL" digest "oci:$WORK/good:v1")
# The root image: config User rewritten to 0:0 (a new config and manifest blob, as
# tests/policy_rules.sh does).
cp -r "$WORK/good" "$WORK/root"
m=$(jq -r '.manifests[0].digest' "$WORK/root/index.json")
c=$(jq -r .config.digest "$WORK/root/blobs/sha256/${m#sha256:}")
jq -c '.config.User = "0:0"' "$WORK/root/blobs/sha256/${c#sha256:}" >"$WORK/cfg.json"
c2=$(sha256sum "$WORK/cfg.json" | cut -c1-64)
cp "$WORK/cfg.json" "$WORK/root/blobs/sha256/$c2"
jq -c --arg c "sha256:$c2" --argjson s "$(stat -c %s "$WORK/cfg.json")" '.config.digest = $c | .config.size = $s' \
  "$WORK/root/blobs/sha256/${m#sha256:}" >"$WORK/man.json"
m2=$(sha256sum "$WORK/man.json" | cut -c1-64)
cp "$WORK/man.json" "$WORK/root/blobs/sha256/$m2"
jq -c --arg d "sha256:$m2" --argjson s "$(stat -c %s "$WORK/man.json")" '.manifests[0].digest = $d | .manifests[0].size = $s' \
  "$WORK/root/index.json" >"$WORK/idx.json" && mv -f "$WORK/idx.json" "$WORK/root/index.json"
ROOTD="sha256:$m2"

R="$REG_HOST/team"
push() { "$IMGTOOL" push -q --tls-verify=false "$1" "docker://$2" >/dev/null; }
push "oci:$WORK/good:v1" "$R/good:v1"
push "oci:$WORK/good:v1" "$R/good:latest"
push "oci:$WORK/good:v1" "$R/unsigned:v1"
push "oci:$WORK/root:v1" "$R/root:v1"
export COSIGN_PASSWORD=imgtool-example-only
for img in "good@$D" "root@$ROOTD"; do
  "$IMGTOOL" sign --key "$REPO/signatures/trusted/example.key" --tls-verify=false "docker://$R/$img" >/dev/null
done
pass "registry $REG_HOST: good (signed), unsigned, root (signed) pushed"

# ---- the server ----
cat >"$WORK/policy.json" <<JSON
{"policyVersion": 1, "rules": {"nonRoot": {}, "digestPinned": {}, "noSetuid": {},
  "signedBy": {"keys": ["$REPO/signatures/trusted/example.pub"]}}}
JSON
self_signed "$WORK/tls"
PORT=$(free_port)
URL="https://127.0.0.1:$PORT"
"$IMGTOOL" admission serve --policy "$WORK/policy.json" --tls-cert "$WORK/tls/ca.crt" --tls-key "$WORK/tls/ca.key" \
  --listen "127.0.0.1:$PORT" --mutate --tls-verify=false --deadline 5 >"$WORK/server.log" 2>&1 &
REGISTRY_PIDS+=($!)  # stopped by PID with the registry (registry_lib.sh's trap)
SERVER_PID=$!
wait_for_port "$URL/healthz" "$SERVER_PID" "$WORK/server.log"
assert_eq "$(curl -sS --cacert "$WORK/tls/ca.crt" "$URL/healthz")" ok "/healthz"
pass "serve: TLS on 127.0.0.1:$PORT, /healthz ok"
# The API server keeps its connections to a webhook open: 20 requests on one curl run must
# share one TLS connection (httplib's own default closed it after 5, a handshake each time).
CONNECTS=$(curl -sS --cacert "$WORK/tls/ca.crt" -w '%{num_connects}\n' $(printf -- "-o /dev/null $URL/healthz %.0s" $(seq 20)) |
  awk '{s += $1} END {print s}')
assert_eq "$CONNECTS" 1 "connections opened for 20 kept-alive requests"
pass "keep-alive: 20 requests on one TLS connection"

# review FIXTURE UID IMAGE [INIT_IMAGE] [PATH]: sets CODE (HTTP status) and BODY.
review() {
  local out="$WORK/answer.json"
  sed -e "s|__UID__|$2|g" -e "s|__IMAGE__|$3|g" -e "s|__INIT_IMAGE__|${4:-$3}|g" "$FIX/$1" >"$WORK/request.json"
  CODE=$(curl -sS --max-time 20 --cacert "$WORK/tls/ca.crt" -o "$out" -w '%{http_code}' \
    -H 'Content-Type: application/json' --data-binary "@$WORK/request.json" "$URL/${5:-validate}")
  BODY=$(cat "$out")
}
allowed() {  # UID MESSAGE
  assert_eq "$CODE" 200 "$2: HTTP status"
  assert_eq "$(jq -c '[.apiVersion, .kind, .response.uid, .response.allowed]' <<<"$BODY")" \
    "[\"admission.k8s.io/v1\",\"AdmissionReview\",\"$1\",true]" "$2: $BODY"
}
denied() {  # UID TEXT MESSAGE
  assert_eq "$CODE" 200 "$3: HTTP status"
  assert_eq "$(jq -c '[.response.uid, .response.allowed, .response.status.code]' <<<"$BODY")" "[\"$1\",false,403]" \
    "$3: $BODY"
  assert_contains "$(jq -r .response.status.message <<<"$BODY")" "$2" "$3"
}

GOOD="$R/good@$D"
review pod.json u-good "$GOOD"
allowed u-good "signed non-root digest-pinned pod"
assert_eq "$(jq -r .response.status.message <<<"$BODY")" "Pod training/trainer-0: 1 image(s) allowed" "allowed message"
pass "pod: signed, non-root, pinned image allowed (uid echoed)"

review pod.json u-unsigned "$R/unsigned@$D"
denied u-unsigned "containers[0] (trainer) image $R/unsigned@$D: signedBy: no signatures for $D" "unsigned"
review pod.json u-root "$R/root@$ROOTD"
denied u-root "image $R/root@$ROOTD: nonRoot: config User '0:0' is uid 0 (root)" "root"
review pod.json u-latest "$R/good:latest"
denied u-latest "image $R/good:latest: digestPinned: the reference names the tag 'latest'" "latest"
review pod.json u-tag "$R/good:v1"
denied u-tag "digestPinned: not pinned: the reference has tag 'v1' and no @sha256:..." "tag"
# Nothing listens on this port: denied with the cause, quickly (short retries, a deadline).
CLOSED="127.0.0.1:$(free_port)"
start=$(date +%s)
review pod.json u-down "$CLOSED/team/x:v1"
denied u-down "image $CLOSED/team/x:v1: nonRoot: cannot open the image: resolving docker://$CLOSED/team/x:v1" "down"
[ $(($(date +%s) - start)) -lt 8 ] || fail "an unreachable registry took $(($(date +%s) - start)) s"
pass "pod: unsigned, root, :latest, a tag, an unreachable registry each denied with image, rule and reason"

review malformed.json u-bad "$GOOD"
assert_eq "$CODE" 400 "malformed: HTTP status"
assert_eq "$(jq -c '[.response.allowed, .response.status.message]' <<<"$BODY")" \
  '[false,"AdmissionReview: the body is not JSON"]' "malformed"
review no-uid.json "" "$GOOD"
assert_eq "$CODE" 400 "no uid: HTTP status"
assert_contains "$BODY" '$.request.uid: missing or not a string' "no uid"
review configmap.json u-cm "$GOOD"
assert_eq "$(jq -c '[.response.uid, .response.allowed, .response.status.code]' <<<"$BODY")" '["u-cm",false,400]' "kind"
assert_contains "$BODY" "'ConfigMap' has no pod spec" "kind message"
CODE=$(curl -sS --cacert "$WORK/tls/ca.crt" -o /dev/null -w '%{http_code}' --data-binary @<(head -c 4000000 /dev/zero) \
  "$URL/validate")
[ "$CODE" = 413 ] || [ "$CODE" = 400 ] || fail "a 4 MB body answered $CODE"
pass "malformed JSON and no uid: 400, denied; a ConfigMap denied with its uid; a 4 MB body refused"

review deployment.json u-dep "$GOOD"
allowed u-dep "deployment"
assert_contains "$(jq -r .response.status.message <<<"$BODY")" "Deployment training/trainer: 2 image(s) allowed" "dep"
review deployment.json u-dep2 "$GOOD" "$R/root@$ROOTD"
denied u-dep2 "initContainers[0] (warmup) image $R/root@$ROOTD: nonRoot" "deployment init container"
review job.json u-job "$R/unsigned@$D"
denied u-job "image $R/unsigned@$D: signedBy" "job"
review job.json u-job2 "$GOOD"
allowed u-job2 "job"
review statefulset.json u-sts "$R/good:v1"
denied u-sts "digestPinned" "statefulset"
pass "Deployment (with an initContainer), Job and StatefulSet templates checked"

# ---- /mutate: tags pinned to the digest they resolve to, judged pinned ----
review deployment.json u-mut "$R/good:v1" "$GOOD" mutate
allowed u-mut "mutate"
assert_eq "$(jq -r .response.patchType <<<"$BODY")" JSONPatch "patchType"
assert_eq "$(jq -r .response.patch <<<"$BODY" | base64 -d | jq -c .)" \
  "[{\"op\":\"replace\",\"path\":\"/spec/template/spec/containers/0/image\",\"value\":\"$R/good@$D\"}]" "patch"
review pod.json u-mut2 "$R/unsigned:v1" "" mutate
denied u-mut2 "signedBy" "mutate unsigned"
assert_eq "$(jq -r '.response.patch // "none"' <<<"$BODY")" none "no patch when denied"
pass "/mutate: v1 -> @$D as a JSONPatch (base64); a denied image gets no patch"

# ---- 1,000 reviews from 50 concurrent clients, none dropped ----
sed -e "s|__IMAGE__|$GOOD|g" "$FIX/pod.json" >"$WORK/load.json"
/usr/bin/python3 - "$PORT" "$WORK/tls/ca.crt" "$WORK/load.json" <<'PY'
import http.client, json, ssl, sys, threading
port, ca, template = int(sys.argv[1]), sys.argv[2], open(sys.argv[3]).read()
ctx = ssl.create_default_context(cafile=ca)
total, clients = 1000, 50
ok, bad, lock = [0], [], threading.Lock()
def client(k):
    conn = None
    for i in range(k, total, clients):
        uid = "load-%04d" % i
        try:
            if conn is None:
                conn = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=30)
            conn.request("POST", "/validate", template.replace("__UID__", uid), {"Content-Type": "application/json"})
            r = conn.getresponse()
            body = json.loads(r.read())
            good = r.status == 200 and body["response"]["uid"] == uid and body["response"]["allowed"] is True
            if r.getheader("Connection", "").lower() == "close":
                conn.close(); conn = None
        except Exception as e:  # a dropped connection counts as a failure
            good, body = False, repr(e)
            conn = None
        with lock:
            if good: ok[0] += 1
            else: bad.append((uid, str(body)[:200]))
threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
for t in threads: t.start()
for t in threads: t.join()
print("load: %d/%d answered allowed with their own uid" % (ok[0], total))
for b in bad[:5]: print("bad:", b)
sys.exit(0 if ok[0] == total else 1)
PY
kill -0 "$SERVER_PID" || fail "the server died under load: $(cat "$WORK/server.log")"
assert_eq "$(curl -sS --cacert "$WORK/tls/ca.crt" "$URL/healthz")" ok "/healthz after load"
pass "1,000 reviews from 50 concurrent clients: every one answered with its uid; the server still healthy"
