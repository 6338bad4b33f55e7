# 1, 2, 4 and 8 workers (processes on 127.0.0.1 with TF_CONFIG) give the same digest.
source "$(dirname "$0")/lib.sh"

"$TRAINER" "${SHORT[@]}" --seed 3 >"$WORK/w1.out"
ref=$(digest_of "$WORK/w1.out")
[[ $ref == sha256:* ]] || fail "no digest from the 1-worker run"
pass "1 worker: $ref"

check() {
  local n=$1 with_chief=$2
  start_job "$n" "$with_chief" "$WORK/w$n" "${SHORT[@]}" --seed 3 --rendezvous-timeout 60
  wait_job "$WORK/w$n"
  for ((r = 0; r < n; r++)); do
    local d
    d=$(digest_of "$WORK/w$n.$r.out")
    [[ $d == "$ref" ]] || fail "$n workers: rank $r has $d, 1 worker has $ref"
  done
  pass "$n workers (chief task: $with_chief): every rank has $ref"
}
check 2 1
check 4 0
check 8 1
