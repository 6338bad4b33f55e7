#!/usr/bin/env bash
# imgtool admission serve under denial-of-service attacks, on 127.0.0.1 (every server and
# client started here is stopped by PID on exit; the clients are threads of one Python
# process, tests/fixtures/admission_attack.py, which closes its sockets and joins them):
#   - a silent "registry" (accepts, never answers) named by 50 images of one review: the
#     review is answered within --review-deadline, every image denied with the reason,
#     while /healthz and a real review are answered at once;
#   - a review naming more images than --max-images is denied unchecked;
#   - 100 TLS clients trickling a request one byte every 2 s and 10 trickling a TLS
#     ClientHello (more than the default 64 threads): each is cut by the read deadline,
#     while real reviews and /healthz are answered in time;
#   - connections over --max-connections are closed at once; the others by the deadline.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/registry_lib.sh"
IMGTOOL=$(realpath "$IMGTOOL")
FIX="$REPO/tests/fixtures/admission"
ATTACK="$REPO/tests/fixtures/admission_attack.py"
PIDS=()
trap 'for p in "${PIDS[@]}"; do stop_pid "$p"; done; stop_registries; cleanup' EXIT

# ---- a good image (signed, non-root, pinned) and the policy ----
start_registry plain
make_context "$WORK/ctx"
"$IMGTOOL" build "$WORK/ctx/spec.json" -o "oci:$WORK/good:v1" -q >/dev/null
D=$("$IMGTOOL" digest "oci:$WORK/good:v1")
"$IMGTOOL" push -q --tls-verify=false "oci:$WORK/good:v1" "docker://$REG_HOST/team/good:v1" >/dev/null
export COSIGN_PASSWORD=imgtool-example-only
"$IMGTOOL" sign --key "$REPO/signatures/trusted/example.key" --tls-verify=false "docker://$REG_HOST/team/good@$D" \
  >/dev/null
GOOD="$REG_HOST/team/good@$D"
cat >"$WORK/policy.json" <<JSON
{"policyVersion": 1, "rules": {"nonRoot": {}, "digestPinned": {},
  "signedBy": {"keys": ["$REPO/signatures/trusted/example.pub"]}}}
JSON

# ---- the silent registry and the server (default --threads 64, --read-timeout 5) ----
/usr/bin/python3 "$ATTACK" silent "$WORK/silent.port" 2>"$WORK/silent.log" &
PIDS+=($!)
for _ in $(seq 1 100); do [ -s "$WORK/silent.port" ] && break; sleep 0.05; done
SILENT="127.0.0.1:$(cat "$WORK/silent.port")"
self_signed "$WORK/tls"
PORT=$(free_port)
URL="https://127.0.0.1:$PORT"
DEADLINE=4
"$IMGTOOL" admission serve --policy "$WORK/policy.json" --tls-cert "$WORK/tls/ca.crt" --tls-key "$WORK/tls/ca.key" \
  --listen "127.0.0.1:$PORT" --tls-verify=false --review-deadline "$DEADLINE" --max-connections 150 \
  >"$WORK/server.log" 2>&1 &
SERVER_PID=$!
PIDS+=($SERVER_PID)
wait_for_port "$URL/healthz" "$SERVER_PID" "$WORK/server.log"
pass "serve on 127.0.0.1:$PORT; silent registry on $SILENT"

CURL=(curl -sS --cacert "$WORK/tls/ca.crt")
healthz() {  # MAX_SECONDS: /healthz answers ok within it
  local out
  out=$("${CURL[@]}" --max-time "$1" "$URL/healthz") || fail "/healthz: no answer within $1 s"
  assert_eq "$out" ok "/healthz"
}
# pod_review UID IMAGE... : an AdmissionReview of one Pod naming every IMAGE.
pod_review() {
  local uid=$1
  shift
  printf '%s\n' "$@" | jq -R . | jq -sc --arg uid "$uid" --slurpfile t <(sed -e 's/__UID__/x/' -e 's/__IMAGE__/x/' \
    "$FIX/pod.json") '. as $images | $t[0] | .request.uid = $uid |
      .request.object.spec.containers = [$images | to_entries[] | {name: "c\(.key)", image: .value}]'
}
# post FILE OUT MAX_SECONDS: prints "HTTP_CODE SECONDS".
post() {
  "${CURL[@]}" --max-time "$3" -o "$2" -w '%{http_code} %{time_total}\n' -H 'Content-Type: application/json' \
    --data-binary "@$1" "$URL/validate"
}
real_review() {  # UID MAX_SECONDS: the good image is allowed within MAX_SECONDS
  pod_review "$1" "$GOOD" >"$WORK/$1.json"
  local code secs
  read -r code secs < <(post "$WORK/$1.json" "$WORK/$1.out" "$2") || fail "review $1: no answer within $2 s"
  assert_eq "$code" 200 "review $1: HTTP status"
  assert_eq "$(jq -c '[.response.uid, .response.allowed]' "$WORK/$1.out")" "[\"$1\",true]" "review $1: $(cat "$WORK/$1.out")"
}

real_review warm 10
pass "a real review is allowed (its facts now cached)"

# ---- 50 images on the silent registry in one review ----
mapfile -t SILENT_IMAGES < <(for i in $(seq 0 49); do echo "$SILENT/team/img$i:v1"; done)
pod_review u-silent "${SILENT_IMAGES[@]}" >"$WORK/silent.json"
post "$WORK/silent.json" "$WORK/silent.out" 20 >"$WORK/silent.time" &
SILENT_REVIEW=$!
PIDS+=($SILENT_REVIEW)
sleep 1
# Meanwhile the server answers the probe and other reviews at once.
healthz 1
real_review during-silent 2
pass "while the silent review runs: /healthz and a real review answered at once"
wait "$SILENT_REVIEW" || fail "the silent review got no answer within 20 s"
read -r code secs <"$WORK/silent.time"
assert_eq "$code" 200 "silent review: HTTP status"
awk -v s="$secs" -v d="$DEADLINE" 'BEGIN { exit !(s >= d - 0.2 && s < d + 1.5) }' ||
  fail "the silent review took $secs s, want about the $DEADLINE s deadline"
assert_eq "$(jq -c '[.response.uid, .response.allowed, .response.status.code]' "$WORK/silent.out")" \
  '["u-silent",false,403]' "silent review"
MSG=$(jq -r .response.status.message "$WORK/silent.out")
assert_contains "$MSG" "Pod training/trainer-0: denied by policy: 50 violation(s): " "silent review"
for i in 0 17 49; do
  assert_contains "$MSG" "containers[$i] (c$i) image $SILENT/team/img$i:v1: no answer from the registry within $DEADLINE s" \
    "silent image $i"
done
assert_eq "$(grep -o "no answer from the registry within $DEADLINE s" <<<"$MSG" | wc -l)" 50 "images denied for silence"
pass "50 silent images: answered in $secs s (deadline $DEADLINE s), each denied: no answer from the registry"

mapfile -t MANY < <(for i in $(seq 0 299); do echo "$REG_HOST/team/good@$D"; done)
pod_review u-many "${MANY[@]}" >"$WORK/many.json"
read -r code secs < <(post "$WORK/many.json" "$WORK/many.out" 5)
assert_eq "$(jq -c '[.response.allowed, .response.status.message]' "$WORK/many.out")" \
  '[false,"Pod training/trainer-0: denied: 300 images, more than the 256 one review may name"]' "300 images"
pass "300 images in one review: denied unchecked"

# ---- 110 slow clients (more than the 64 threads) for 16 s ----
/usr/bin/python3 "$ATTACK" slow "$PORT" "$WORK/tls/ca.crt" 16 100 10 >"$WORK/slow.json" &
SLOW=$!
PIDS+=($SLOW)
sleep 3  # every slow client connected and trickling
worst=0
for i in $(seq 1 10); do
  t0=$(date +%s%N)
  healthz 2
  real_review "slow-$i" 3
  t=$((($(date +%s%N) - t0) / 1000000))
  [ "$t" -gt "$worst" ] && worst=$t
  sleep 1
done
pass "under 110 slow clients: 10 real reviews allowed and /healthz ok, the slowest pair in $worst ms"
wait "$SLOW" || fail "the slow clients failed: $(cat "$WORK/slow.json")"
S=$(cat "$WORK/slow.json")
[ "$(jq '.cut >= 110 and .connect_failed == 0' <<<"$S")" = true ] || fail "slow clients not all cut: $S"
# Cut by the 5 s read deadline (plus the handshake), not left to trickle.
[ "$(jq '.max_lived_s < 7.5' <<<"$S")" = true ] || fail "a slow client lived too long: $S"
pass "slow clients: $(jq -r '"\(.cut) connections cut, the longest lived \(.max_lived_s) s"' <<<"$S")"
for _ in $(seq 1 30); do grep -q "slow clients: " "$WORK/server.log" && break; sleep 0.5; done
assert_contains "$(cat "$WORK/server.log")" "connection(s) cut (no whole request by the read deadline)" "server log"

# ---- the connection cap: 170 silent connections against --max-connections 150 ----
H=$(/usr/bin/python3 "$ATTACK" hold "$PORT" 170)
[ "$(jq '.refused_within_1s >= 20 and .never_closed == 0' <<<"$H")" = true ] || fail "connection cap: $H"
[ "$(jq '.held_closed_after_s[1] < 7.5' <<<"$H")" = true ] || fail "held connections not cut in time: $H"
real_review after-cap 3
pass "170 idle connections: $(jq -r '"\(.refused_within_1s) refused at once, \(.held) cut after \(.held_closed_after_s[0])-\(.held_closed_after_s[1]) s"' <<<"$H"); then a review allowed"

kill -0 "$SERVER_PID" || fail "the server died: $(cat "$WORK/server.log")"
healthz 1
pass "the server is still healthy"
