#!/usr/bin/env bash
# When one input file changes, imgtool diff names that file and how it changed.
source "$(dirname "$0")/lib.sh"
make_context "$WORK/ctx"
(cd "$WORK/ctx" && "$IMGTOOL" build spec.json -o "oci:$WORK/a:v1" -q >/dev/null)
expect_exit 0 diff "oci:$WORK/a:v1" "oci:$WORK/a:v1"
assert_contains "$OUTPUT" "identical" "same image"

printf 'weights v2\n' >"$WORK/ctx/app/share/model.txt"
chmod 755 "$WORK/ctx/config.txt"
(cd "$WORK/ctx" && "$IMGTOOL" build spec.json -o "oci:$WORK/b:v1" -q >/dev/null)
expect_exit 1 diff "oci:$WORK/a:v1" "oci:$WORK/b:v1"
assert_contains "$OUTPUT" "~ /opt/app/share/model.txt content: sha256:" "changed file named"
pass "changed file content is named: $(grep model.txt <<<"$OUTPUT")"

expect_exit 1 diff "oci:$WORK/a:v1" "oci:$WORK/b:v1" --json
changes=$(jq -c '[.layers[].changes[] | {path, field}]' <<<"$OUTPUT")
assert_eq "$changes" '[{"path":"/opt/app/share/model.txt","field":"content"}]' "exactly one change (spec mode pins config.txt)"
pass "--json lists exactly the one changed path"

# A spec change that alters the config shows as a config pointer.
sed -i 's/"example": "yes"/"example": "no"/' "$WORK/ctx/spec.json"
(cd "$WORK/ctx" && "$IMGTOOL" build spec.json -o "oci:$WORK/c:v1" -q >/dev/null)
expect_exit 1 diff "oci:$WORK/b:v1" "oci:$WORK/c:v1"
assert_contains "$OUTPUT" 'config /config/Labels/example: "yes" -> "no"' "label change"
pass "config change is named as a JSON pointer"
