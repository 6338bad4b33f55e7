# Two runs with one seed give the same weights digest; another seed differs; the thread
# count does not matter.
source "$(dirname "$0")/lib.sh"

"$TRAINER" "${SHORT[@]}" --seed 7 >"$WORK/a.out"
"$TRAINER" "${SHORT[@]}" --seed 7 --threads 2 >"$WORK/b.out"
"$TRAINER" "${SHORT[@]}" --seed 8 >"$WORK/c.out"
a=$(digest_of "$WORK/a.out") b=$(digest_of "$WORK/b.out") c=$(digest_of "$WORK/c.out")
[[ $a == sha256:* ]] || fail "no digest in output: $(cat "$WORK/a.out")"
[[ $a == "$b" ]] || fail "same seed, different digests: $a vs $b"
pass "seed 7 twice (1 and 2 threads): $a"
[[ $a != "$c" ]] || fail "seeds 7 and 8 gave the same digest $a"
pass "seed 8 differs: $c"

# --json carries the same digest.
"$TRAINER" "${SHORT[@]}" --seed 7 --json >"$WORK/d.json"
python3 - "$WORK/d.json" "$a" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["digest"] == sys.argv[2], (j["digest"], sys.argv[2])
assert j["steps"] == 100 and j["epochs_completed"] == 2, j
PY
pass "--json digest matches"
