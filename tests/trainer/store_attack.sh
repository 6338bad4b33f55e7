# The chief's rendezvous store under attack (issue 15, class 7): while a 2-task job's
# chief waits for its worker, store_attack.py writes keys it claimed no rank for (issue
# 24, class 6: the worker's arrival and Gloo address, the chief's word), declares 64 MiB
# and 1 GB values, stalls mid-value and floods the port with connections. The forgeries
# must be denied, the chief's memory must stay bounded, every attacker must be dropped
# with a logged reason, and the job must still finish when the honest worker comes, with
# the digest of an undisturbed run.
source "$(dirname "$0")/lib.sh"

"$TRAINER" "${SHORT[@]}" >"$WORK/ref.out" 2>"$WORK/ref.err" || fail "reference run: $(cat "$WORK/ref.err")"
ref=$(digest_of "$WORK/ref.out")

p0=$(free_port) p1=$(free_port)
# Throttled to ~15 s of training (the digest does not change), so that the store is still
# up when its 10 s I/O timeout drops the stalled attackers.
SLOW=(--rendezvous-timeout 120 --throttle-ms 150)
TF_CONFIG="$(tf_config 2 1 chief 0 "$p0" "$p1")" "$TRAINER" "${SHORT[@]}" "${SLOW[@]}" \
  >"$WORK/chief.out" 2>"$WORK/chief.err" &
chief=$!
JOB_PIDS=("$chief")
python3 "$(dirname "$0")/store_attack.py" 127.0.0.1 "$p0" "$chief" "$WORK/attack.done" >"$WORK/attack.json" \
  2>"$WORK/attack.err" &
attacker=$!
JOB_PIDS+=("$attacker")
for _ in $(seq 600); do
  [[ -e "$WORK/attack.done" ]] && break
  kill -0 "$attacker" 2>/dev/null || break
  sleep 0.1
done
[[ -e "$WORK/attack.done" ]] || fail "the attack did not get through its flood: $(cat "$WORK/attack.err")"

# The honest worker joins while the stalled attackers still hold their connections.
TF_CONFIG="$(tf_config 2 1 worker 0 "$p0" "$p1")" "$TRAINER" "${SHORT[@]}" "${SLOW[@]}" \
  >"$WORK/worker.out" 2>"$WORK/worker.err" || fail "the honest worker failed: $(cat "$WORK/worker.err")"
wait "$chief" || fail "the chief failed: $(cat "$WORK/chief.err")"
wait "$attacker" || fail "the attacker failed: $(cat "$WORK/attack.err")"

[[ $(digest_of "$WORK/chief.out") == "$ref" ]] || fail "chief digest $(digest_of "$WORK/chief.out"), want $ref"
[[ $(digest_of "$WORK/worker.out") == "$ref" ]] || fail "worker digest $(digest_of "$WORK/worker.out"), want $ref"
pass "the job finished under attack with the undisturbed digest $ref"

read -r before during peak mega giga refused stalled stalled_s forged outside < <(python3 -c '
import json, sys
a = json.load(open(sys.argv[1]))
print(a["rss_before"], a["rss_during"], a["rss_peak"], a["mega64_dropped"], a["giga_dropped"], a["flood_refused"], a["stalled_dropped"],
      int(a["stalled_seconds"]), a["forgeries_denied"], int(a["outside_claim_refused"]))' "$WORK/attack.json")
((forged == 4)) || fail "$forged of 4 writes by a peer without a rank (fp/1, arrive/1, gloo/addr/1, verdict) were denied"
((outside == 1)) || fail "a claim of rank 100000 in a job of 2 was not refused"
grep -qE '^trainer: store: denied a write by 127\.0\.0\.1:[0-9]+: gloo/addr/1 is rank 1.s; this connection claimed no rank$' \
  "$WORK/chief.err" || fail "no log line for the forged gloo/addr/1: $(head -40 "$WORK/chief.err")"
grep -qE '^trainer: store: refused the claim of rank 100000 by 127\.0\.0\.1:[0-9]+ \(pid 0 on an outsider\): rank 100000 is not one of the job.s 2 ranks$' \
  "$WORK/chief.err" || fail "no log line for the claim outside the job: $(head -40 "$WORK/chief.err")"
pass "4 writes by a peer that claimed no rank denied and logged, a claim outside the job refused"
mb() { echo $(($1 >> 20)); }
# Before the fix the 16 peers declaring 64 MiB alone took the chief to 1 GB (measured
# against the old store: 2 MB -> 1027 MB).
# Under AddressSanitizer (scripts/test --sanitize) the process starts near 300 MB of shadow
# and keeps freed blocks in quarantine (up to 256 MB): the bounds widen, the attack (1 GB
# before the caps) is still caught.
growth=$((32 << 20)) limit=$((100 << 20))
if [[ $(ldd "$TRAINER" 2>/dev/null) == *libasan* ]]; then growth=$((320 << 20)) limit=$((1 << 40)); fi
((peak - before < growth)) || fail "the chief grew from $(mb "$before") MB to $(mb "$peak") MB under attack"
((peak < limit)) || fail "the chief reached $(mb "$peak") MB under attack (limit $(mb "$limit") MB)"
pass "chief RSS $(mb "$before") MB before, $(mb "$during") MB during the flood, $(mb "$peak") MB at most"
((mega == 16)) || fail "$mega of 16 peers declaring 64 MiB were disconnected"
((giga == 16)) || fail "$giga of 16 peers declaring 1 GB were disconnected"
((stalled == 16)) || fail "$stalled of 16 stalled peers were disconnected"
# The upper bound leaves room for a loaded machine (the sanitizer suite runs two tests at
# once, each several times slower); the rendezvous timeout, the next limit, is 120 s.
((stalled_s >= 9 && stalled_s <= 25)) || fail "the stalled peers were disconnected after $stalled_s s, not the 10 s I/O timeout"
# 36 connections at most (2 tasks x 2 + 32): the chief's own, the probe and 16 stalled leave 18.
((refused >= 250)) || fail "only $refused of 300 flooding connections were refused"
pass "16 peers declaring 64 MiB, 16 declaring 1 GB and 16 stalled dropped, $refused of 300 flooding connections refused"

grep -qE '^trainer: store: dropped peer 127\.0\.0\.1:[0-9]+: declared a value of 1073741824 bytes \(the limit is 4194304\)$' \
  "$WORK/chief.err" || fail "no log line for a 1 GB value: $(head -40 "$WORK/chief.err")"
grep -qE '^trainer: store: refused peer 127\.0\.0\.1:[0-9]+: 36 connections open, the most it serves' "$WORK/chief.err" ||
  fail "no log line for a refused connection: $(head -40 "$WORK/chief.err")"
grep -qE '^trainer: store: dropped peer 127\.0\.0\.1:[0-9]+: a request still incomplete 10s after its first byte' \
  "$WORK/chief.err" || fail "no log line for a stalled peer: $(head -40 "$WORK/chief.err")"
# The first 64 refusals and 64 drops are logged, then one line at each power of two.
lines=$(grep -c '^trainer: store: ' "$WORK/chief.err")
((lines <= 140)) || fail "$lines store log lines: the log is not rate-limited"
pass "the drops logged with their reasons, the refusals rate-limited ($lines lines for $((refused + 48)))"
