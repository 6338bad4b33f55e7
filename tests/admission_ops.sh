#!/usr/bin/env bash
# Operating `imgtool admission serve` (issue 27): a local docker-registry with a non-root
# image (tag v1 and its digest), a CA and two server certificates from it (serials 1001
# and 2002), the webhook on a random port with a lenient default policy (nonRoot) and a
# strict set (nonRoot + digestPinned, /validate/strict), polling its files every 0.2 s.
#   /metrics, parsed with the official prometheus_client text parser (PyPI, in a venv kept
#     between runs), before and after a load run (bench/admission_latency --load): the
#     reviews counters and the duration histogram grew by exactly the reviews sent.
#   policy sets: /validate/strict denies the tag, /validate/nope is 404.
#   --mode warn: allowed with a warning naming the rule; --mode audit: allowed, no
#     warnings, the log line keeps the would-be denial.
#   during a load run, the policy replaced (rename over) with the strict one and the
#     certificate pair swapped as a Kubernetes Secret volume swaps it (its ..data symlink):
#     no review fails, the answers turn from allowed to denied, a new TLS connection sees
#     serial 2002, and the counters again add up to the reviews sent.
#   a broken policy written over it: rejected (log line, reloads_total{result="error"},
#     last_reload_success 0) and the strict policy stays.
# Every server it starts is stopped by PID on exit (registry_lib.sh's trap).
source "$(dirname "$0")/lib.sh"
venv="${XDG_CACHE_HOME:-$HOME/.cache}/imgtool-test/prometheus-venv"  # kept between runs; before HOME moves
source "$(dirname "$0")/registry_lib.sh"
IMGTOOL=$(realpath "$IMGTOOL")
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import prometheus_client' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q prometheus_client || fail "pip install prometheus_client into $venv"
fi
LOAD="$REPO/bench/admission_latency"

# ---- an image: non-root, by tag and by digest ----
start_registry plain
make_context "$WORK/ctx"
"$IMGTOOL" build "$WORK/ctx/spec.json" -o "oci:$WORK/good:v1" -q >/dev/null
D=$("$IMGTOOL" digest "oci:$WORK/good:v1")
R="$REG_HOST/team"
"$IMGTOOL" push -q --tls-verify=false "oci:$WORK/good:v1" "docker://$R/good:v1" >/dev/null
TAG="$R/good:v1"
PINNED="$R/good@$D"

# ---- policies and certificates ----
echo '{"policyVersion": 1, "rules": {"nonRoot": {}}}' >"$WORK/lenient.json"
echo '{"policyVersion": 1, "rules": {"nonRoot": {}, "digestPinned": {}}}' >"$WORK/strict.json"
cp "$WORK/lenient.json" "$WORK/policy.json"
TLS="$WORK/tls"
mkdir -p "$TLS"
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$TLS/ca.key" -out "$TLS/ca.crt" -days 30 -subj /CN=test-ca \
  2>/dev/null
leaf() {  # SERIAL: $TLS/SERIAL/tls.crt and tls.key for 127.0.0.1, signed by the CA
  mkdir -p "$TLS/$1"
  openssl req -newkey rsa:2048 -nodes -keyout "$TLS/$1/tls.key" -out "$TLS/$1/tls.csr" -subj /CN=localhost \
    2>/dev/null
  openssl x509 -req -in "$TLS/$1/tls.csr" -CA "$TLS/ca.crt" -CAkey "$TLS/ca.key" -set_serial "0x$1" -days 30 \
    -extfile <(printf 'subjectAltName=DNS:localhost,IP:127.0.0.1') -out "$TLS/$1/tls.crt" 2>/dev/null
}
leaf 1001
leaf 2002
# As a Secret volume lays it out: tls.crt -> ..data/tls.crt, ..data -> the current folder.
mkdir -p "$TLS/secret"
ln -s ../1001 "$TLS/secret/..data"
ln -s ..data/tls.crt "$TLS/secret/tls.crt"
ln -s ..data/tls.key "$TLS/secret/tls.key"

# serve NAME [ARGS...]: the webhook on a free port, logging to $WORK/NAME.log; sets PORT, URL, SERVER_PID.
serve() {
  local name=$1
  shift
  PORT=$(free_port)
  URL="https://127.0.0.1:$PORT"
  "$IMGTOOL" admission serve --tls-cert "$TLS/secret/tls.crt" --tls-key "$TLS/secret/tls.key" \
    --listen "127.0.0.1:$PORT" --tls-verify=false --deadline 5 "$@" 2>"$WORK/$name.log" &
  SERVER_PID=$!
  REGISTRY_PIDS+=("$SERVER_PID")
  wait_for_port "$URL/healthz" "$SERVER_PID" "$WORK/$name.log"
}
# review UID IMAGE [PATH]: sets CODE and BODY.
review() {
  sed -e "s|__UID__|$1|g" -e "s|__IMAGE__|$2|g" "$REPO/tests/fixtures/admission/pod.json" >"$WORK/request.json"
  CODE=$(curl -sS --max-time 20 --cacert "$TLS/ca.crt" -o "$WORK/answer.json" -w '%{http_code}' \
    -H 'Content-Type: application/json' --data-binary "@$WORK/request.json" "$URL/${3:-validate}")
  BODY=$(cat "$WORK/answer.json")
}
answer() { jq -c '[.response.uid, .response.allowed, (.response.warnings // "none")]' <<<"$BODY"; }
scrape() { curl -sS --fail --cacert "$TLS/ca.crt" "$URL/metrics" >"$WORK/$1.prom" || fail "GET /metrics"; }
# metrics_delta BEFORE AFTER SENT: parses both scrapes with prometheus_client and checks
# that the reviews counters and the histogram's count grew by SENT; prints the verdicts' growth.
metrics_delta() {
  "$venv/bin/python" - "$WORK/$1.prom" "$WORK/$2.prom" "$3" <<'PY'
import json, sys
from prometheus_client.parser import text_string_to_metric_families
def parse(path):
    out = {}
    for fam in text_string_to_metric_families(open(path).read()):
        for s in fam.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out
before, after, sent = parse(sys.argv[1]), parse(sys.argv[2]), int(sys.argv[3])
def grew(name, want=None):
    total, by = 0, {}
    for (n, labels), v in after.items():
        if n != name: continue
        d = v - before.get((n, labels), 0)
        labels = dict(labels)
        if want and any(labels.get(k) != v2 for k, v2 in want.items()): continue
        total += d
        if d: by["%s/%s" % (labels.get("verdict", ""), labels.get("reason", ""))] = by.get("%s/%s" % (labels.get("verdict", ""), labels.get("reason", "")), 0) + d
    return total, by
reviews, by = grew("imgtool_admission_reviews_total")
count, _ = grew("imgtool_admission_review_duration_seconds_count")
inf, _ = grew("imgtool_admission_review_duration_seconds_bucket", {"le": "+Inf"})
if not (reviews == count == inf == sent):
    print("MISMATCH: sent %d, reviews_total grew %d, histogram count %d, +Inf bucket %d" % (sent, reviews, count, inf))
    sys.exit(1)
print(json.dumps(by, sort_keys=True))
PY
}

# ---- /metrics before and after a load run ----
serve main --policy "$WORK/policy.json" --policy-set "strict=$WORK/strict.json" --reload-interval 0.2
scrape m0
"$venv/bin/python" -c 'import sys; from prometheus_client.parser import text_string_to_metric_families as p; list(p(open(sys.argv[1]).read()))' \
  "$WORK/m0.prom" || fail "the first scrape does not parse"
assert_contains "$(cat "$WORK/m0.prom")" "# TYPE imgtool_admission_review_duration_seconds histogram" "metrics"
"$LOAD" --load "$URL/validate" "$TLS/ca.crt" "$TAG" 400 8 >"$WORK/load1.out" || fail "load: $(cat "$WORK/load1.out")"
SENT=$(head -n1 "$WORK/load1.out" | jq .sent)
assert_eq "$(head -n1 "$WORK/load1.out" | jq -c '[.sent, .failed, .allowed]')" "[400,0,400]" "load run"
scrape m1
BY=$(metrics_delta m0 m1 "$SENT") || fail "$BY"
assert_eq "$BY" '{"allowed/none": 400}' "reviews by verdict/reason"
assert_contains "$(cat "$WORK/m1.prom")" 'imgtool_admission_cache_hits_total{cache="tag"}' "cache hits"
assert_contains "$(cat "$WORK/m1.prom")" 'imgtool_admission_cache_entries{cache="facts"} 1' "facts cache size"
pass "/metrics parses with prometheus_client before and after 400 reviews; reviews_total and the histogram grew by 400"

# One JSON line per review: uid, images, verdict, duration; never the body.
LINE=$(grep '"uid":"load-000007"' "$WORK/main.log")
assert_eq "$(jq -c '[.event, .uid, .images, .verdict, .enforced, .policy_set, .mode, (.duration_ms > 0)]' <<<"$LINE")" \
  "[\"review\",\"load-000007\",[\"$TAG\"],\"allowed\",true,\"default\",\"enforce\",true]" "review log line"
grep -q 'serviceaccount' "$WORK/main.log" && fail "the log holds the review body"
pass "one JSON log line per review: uid, images, verdict, duration (no body)"

# ---- policy sets ----
review u-set "$TAG" validate/strict
assert_eq "$(answer)" '["u-set",false,"none"]' "strict set"
assert_contains "$(jq -r .response.status.message <<<"$BODY")" "digestPinned: not pinned" "strict set"
review u-set2 "$PINNED" validate/strict
assert_eq "$(answer)" '["u-set2",true,"none"]' "strict set, pinned"
review u-nope "$TAG" validate/nope
assert_eq "$CODE" 404 "unknown set"
pass "policy sets: /validate/strict denies the tag, allows the digest; /validate/nope is 404"

# ---- --mode warn and audit (the strict policy, the tag) ----
MAIN_URL=$URL
MAIN_PID=$SERVER_PID
serve warn --policy "$WORK/strict.json" --mode warn
review u-warn "$TAG"
assert_eq "$(jq -c '[.response.uid, .response.allowed]' <<<"$BODY")" '["u-warn",true]' "warn: $BODY"
assert_contains "$(jq -r '.response.warnings[0]' <<<"$BODY")" "image $TAG: digestPinned: not pinned" "warn warning"
sed -e 's/__UID__/u-warn-bad/' -e "s|__IMAGE__|$TAG|" -e 's/"kind": "Pod"}/"kind": "ConfigMap"}/' \
  "$REPO/tests/fixtures/admission/pod.json" >"$WORK/request.json"
CODE=$(curl -sS --cacert "$TLS/ca.crt" -o "$WORK/answer.json" -w '%{http_code}' --data-binary "@$WORK/request.json" \
  "$URL/validate")
assert_eq "$(jq -c '[.response.allowed, .response.status.code]' "$WORK/answer.json")" '[false,400]' "warn: malformed"
kill "$SERVER_PID" && wait "$SERVER_PID"
serve audit --policy "$WORK/strict.json" --mode audit
review u-audit "$TAG"
assert_eq "$(answer)" '["u-audit",true,"none"]' "audit: $BODY"
LINE=$(grep '"uid":"u-audit"' "$WORK/audit.log")
assert_eq "$(jq -c '[.verdict, .enforced, .mode, .reason]' <<<"$LINE")" '["denied",false,"audit","policy"]' "audit log"
assert_contains "$(jq -r '.violations[0]' <<<"$LINE")" "digestPinned" "audit log violation"
scrape audit
assert_contains "$(cat "$WORK/audit.prom")" \
  'imgtool_admission_reviews_total{policy_set="default",mode="audit",verdict="denied",reason="policy"} 1' "audit metric"
kill "$SERVER_PID" && wait "$SERVER_PID"
URL=$MAIN_URL
pass "--mode warn: allowed with a warning naming digestPinned (malformed still denied); audit: allowed, the log and metrics keep the denial"

# ---- a policy and the certificate swapped during a load run ----
serial() {
  openssl s_client -connect "127.0.0.1:${URL##*:}" -CAfile "$TLS/ca.crt" </dev/null 2>/dev/null |
    openssl x509 -noout -serial | cut -d= -f2
}
assert_eq "$(serial)" 1001 "serial before"
scrape m2
"$LOAD" --load "$URL/validate" "$TLS/ca.crt" "$TAG" 6000 8 >"$WORK/load2.out" &
LOAD_PID=$!
REGISTRY_PIDS+=("$LOAD_PID")
for _ in $(seq 1 100); do grep -q '"uid":"load-' "$WORK/main.log" && [ "$(grep -c '"uid":"load-' "$WORK/main.log")" -gt 900 ] && break; sleep 0.05; done
cp "$WORK/strict.json" "$WORK/policy.json.new" && mv -f "$WORK/policy.json.new" "$WORK/policy.json"
ln -s ../2002 "$TLS/secret/..data_tmp" && mv -T "$TLS/secret/..data_tmp" "$TLS/secret/..data"
wait "$LOAD_PID" || fail "load during the swap: $(cat "$WORK/load2.out")"
L2=$(head -n1 "$WORK/load2.out")
assert_eq "$(jq -c '[.sent, .failed]' <<<"$L2")" "[6000,0]" "load during the swap: $L2"
[ "$(jq '.allowed > 0 and .denied > 0' <<<"$L2")" = true ] ||
  fail "the swap did not land inside the load run (allowed then denied): $L2"
# reload_log EVENT: the reload lines, as [policy_set, result, sha256 or serial]
reload_log() {
  grep '^{' "$WORK/main.log" | jq -c --arg e "$1" 'select(.event == $e) | [.policy_set, .result, (.sha256 // .serial // .error)]' 
}
assert_eq "$(reload_log policy_reload)" "[\"default\",\"ok\",\"$(sha256sum "$WORK/strict.json" | cut -c1-64)\"]" \
  "policy reload logged"
assert_eq "$(reload_log certificate_reload)" '[null,"ok","2002"]' "certificate reload logged"
review u-after "$TAG"
assert_eq "$(answer)" '["u-after",false,"none"]' "after the swap"
assert_eq "$(serial)" 2002 "serial after"
scrape m3
BY=$(metrics_delta m2 m3 6001) || fail "$BY"  # the load and u-after
assert_eq "$(jq '."allowed/none" + ."denied/policy"' <<<"$BY")" 6001 "verdicts over the swap: $BY"
assert_contains "$(cat "$WORK/m3.prom")" 'imgtool_admission_policy_reloads_total{policy_set="default",result="ok"} 1' "reload metric"
assert_contains "$(cat "$WORK/m3.prom")" 'imgtool_admission_certificate_reloads_total{result="ok"} 1' "cert metric"
pass "policy and certificate swapped during 6,000 reviews: none failed ($(jq -r '"\(.allowed) allowed, then \(.denied) denied"' <<<"$L2")); new connections see serial 2002"

# ---- a broken policy: rejected, the strict one stays ----
echo '{"policyVersion": 1, "rules": {"nonRoot": {}, "maxSize": {"bytes": "many"}}}' >"$WORK/policy.json.new"
mv -f "$WORK/policy.json.new" "$WORK/policy.json"
for _ in $(seq 1 50); do grep -q '"result":"error"' "$WORK/main.log" && break; sleep 0.1; done
LINE=$(grep '^{' "$WORK/main.log" | jq -c 'select(.event == "policy_reload" and .result == "error")')
[ -n "$LINE" ] || fail "no rejection logged"
assert_contains "$(jq -r .error <<<"$LINE")" "$WORK/policy.json" "rejection names the file"
review u-broken "$TAG"
assert_eq "$(answer)" '["u-broken",false,"none"]' "the strict policy stays"
review u-broken2 "$PINNED"
assert_eq "$(answer)" '["u-broken2",true,"none"]' "the strict policy stays (pinned)"
scrape m4
assert_contains "$(cat "$WORK/m4.prom")" 'imgtool_admission_policy_reloads_total{policy_set="default",result="error"} 1' "error metric"
assert_contains "$(cat "$WORK/m4.prom")" 'imgtool_admission_policy_last_reload_success{policy_set="default"} 0' "success gauge"
kill -0 "$MAIN_PID" || fail "the server died: $(tail -n 5 "$WORK/main.log")"
pass "a broken policy is rejected (logged: $(jq -r .error <<<"$LINE" | cut -c1-80)...), counted, and the old one stays"
