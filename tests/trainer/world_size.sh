# 1, 2, 4 and 8 workers (processes on 127.0.0.1 with TF_CONFIG) give the same digest,
# over shared memory (the default when every rank is on this host) and over Gloo's TCP.
source "$(dirname "$0")/lib.sh"

"$TRAINER" "${SHORT[@]}" --seed 3 >"$WORK/w1.out"
ref=$(digest_of "$WORK/w1.out")
[[ $ref == sha256:* ]] || fail "no digest from the 1-worker run"
pass "1 worker: $ref"

check() {  # N WITH_CHIEF COMM [THREADS]
  local n=$1 with_chief=$2 comm=$3 want
  start_job "$n" "$with_chief" "$WORK/w$n$comm" "${SHORT[@]}" --seed 3 --rendezvous-timeout 60 --comm "$comm" \
    --threads "${4:-1}"
  wait_job "$WORK/w$n$comm"
  for ((r = 0; r < n; r++)); do
    local d
    d=$(digest_of "$WORK/w$n$comm.$r.out")
    [[ $d == "$ref" ]] || fail "$n workers over $comm: rank $r has $d, 1 worker has $ref"
  done
  want="shared memory"
  [[ $comm == gloo ]] && want="Gloo over TCP"
  grep -q "^collectives: $want, $n ranks" "$WORK/w$n$comm.0.err" || fail "$n workers, --comm $comm: chief says $(cat "$WORK/w$n$comm.0.err")"
  pass "$n workers (chief task: $with_chief) over $want: every rank has $ref"
}
check 2 1 auto
check 2 0 shm 3  # three threads per rank claim the shared tasks
check 4 0 shm
check 8 1 auto
check 2 0 gloo
check 4 1 gloo
