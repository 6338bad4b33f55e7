#!/usr/bin/env bash
# Consistent edges: every verb (found by walking --help, so a new verb is covered without
# editing this test) has an example in its --help; usage errors print one line in the
# "imgtool: error:" form with the verb's --help named, exit 2; --help exits 0.
source "$(dirname "$0")/lib.sh"

verbs() {  # the subcommand names `$IMGTOOL $* --help` lists
  "$IMGTOOL" "$@" --help | sed -n '/^Subcommands:/,$p' | grep -E '^  [a-z][a-z-]*( |$)' | awk '{print $1}'
}
walk() {  # PATH...: checks this verb and every verb below it
  local out sub n=0
  out=$("$IMGTOOL" "$@" --help) || fail "imgtool $* --help exited non-zero"
  [ $# -eq 0 ] || grep -q "Example" <<<"$out" || fail "imgtool $* --help has no example"
  for sub in $(verbs "$@"); do
    walk "$@" "$sub"
    n=$((n + 1))
  done
  CHECKED=$((CHECKED + 1))
}
CHECKED=0
walk
[ "$CHECKED" -ge 25 ] || fail "only $CHECKED verbs found in --help"
pass "$((CHECKED - 1)) verbs, each --help with an example"

for args in "verify" "inspect --bogus oci:x" "nosuch" "policy check" "copy oci:a" "index create"; do
  # shellcheck disable=SC2086
  expect_exit 2 $args
  first=$(head -n1 <<<"$OUTPUT")
  [[ "$first" == "imgtool: error: "* ]] || fail "imgtool $args: first line '$first'"
  assert_contains "$OUTPUT" "--help')" "imgtool $args names the help"
done
expect_exit 2 policy check --bogus
assert_contains "$OUTPUT" "(see 'imgtool policy check --help')" "the verb path in the hint"
pass "usage errors: 'imgtool: error: ...' and the verb's --help, exit 2"
