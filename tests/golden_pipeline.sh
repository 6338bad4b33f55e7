#!/usr/bin/env bash
# ci-templates/golden-pipeline end to end, and the CI templates it mirrors:
# - the YAML templates in ci-templates/ parse (python3-yaml) and name every pipeline step;
# - the pipeline with its defaults (spec-cpu.json, the example key, a docker-registry it
#   starts on 127.0.0.1 and stops): every step ok, the loud example-key warning, the
#   summary table, the registry gone afterwards;
# - again against this test's registry (REGISTRY=...), then tampering: verifying with
#   another key is denied; another image pushed under the same tag leaves the pinned
#   reference verified while the tag's verification and a tag-based policy check fail;
# - a pipeline signing with a key the policy does not trust fails at the policy step
#   (exit non-zero, FAILED in the table), and a bad password fails at signing.
# Env: IMGTOOL, REPO, TRAINER (default: the trainer beside IMGTOOL's build folder).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/registry_lib.sh"
IMGTOOL=$(realpath "$IMGTOOL")
TRAINER="${TRAINER:-$(cd "$(dirname "$IMGTOOL")/.." && pwd)/trainer/trainer}"
[ -x "$TRAINER" ] || fail "no trainer binary at $TRAINER (set TRAINER, or build the trainer target)"
export IMGTOOL TRAINER
PIPELINE=$REPO/ci-templates/golden-pipeline
unset KEY PUB POLICY REGISTRY COSIGN_PASSWORD WORKDIR SPEC TAG REPOSITORY

# ---- the templates parse and carry the pipeline's steps ----
if /usr/bin/python3 -c 'import yaml' 2>/dev/null; then
  for y in "$REPO"/ci-templates/*.yml; do
    /usr/bin/python3 - "$y" <<'PY' || fail "$y does not parse as YAML"
import sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
assert isinstance(doc, dict) and doc, "empty document"
PY
  done
  /usr/bin/python3 - "$REPO/ci-templates/github-golden.yml" "$REPO/ci-templates/gitlab-golden.yml" <<'PY' || fail "template structure"
import sys, yaml
gh = yaml.safe_load(open(sys.argv[1]))
gl = yaml.safe_load(open(sys.argv[2]))
steps = [s for j in gh["jobs"].values() for s in j["steps"]]
gh_text = "\n".join(str(s.get("run", "")) for s in steps)
gl_text = "\n".join("\n".join(j.get("script", [])) for k, j in gl.items() if isinstance(j, dict) and "script" in j)
for text, name in ((gh_text, "github"), (gl_text, "gitlab")):
    for needle in ("IMGTOOL build", "--no-cache", "IMGTOOL verify", "IMGTOOL sign", "IMGTOOL push",
                   "verify --key", "policy check", "COSIGN_KEY", "attest --key",
                   "--provenance out/golden.provenance.json", "--type https://slsa.dev/provenance/v1"):
        assert needle in text, f"{name}: no '{needle}'"
assert any("secrets.COSIGN_PASSWORD" in str(v) for j in gh["jobs"].values()
           for s in j["steps"] for v in (s.get("env") or {}).values()), "github: COSIGN_PASSWORD from a secret"
PY
  pass "ci-templates/*.yml parse (python3-yaml); both templates build twice, verify, sign, attest the provenance, push, verify --key (and the provenance), policy check"
else
  echo "skip: python3-yaml is not installed (apt-get install python3-yaml): the YAML templates are not parsed"
fi

# ---- defaults: its own registry, the example key ----
rc=0
out=$("$PIPELINE" 2>"$WORK/err") || rc=$?
err=$(cat "$WORK/err")
[ "$rc" = 0 ] || fail "ci-templates/golden-pipeline exited $rc: $out $err"
assert_contains "$err" "SIGNING WITH THE EXAMPLE KEY" "loud example-key warning"
for s in fetch "build A" "build B" verify registry sign attest push "verify registry" "policy check"; do
  grep -qE "^  [0-9]+ +$s +ok " <<<"$out" || fail "step '$s' not ok in the summary: $out"
done
assert_contains "$out" "same digest" "build B"
# The committed digest (examples/golden/expected) is for its toolchain: equal when this
# trainer and imgtool-fleet are the committed lock's bytes, else "differs", naming them.
committed=$(jq -r '[.inputs[] | select(.platform == "linux/amd64" and .kind == "file") | .sha256] | sort | join(" ")' \
  "$REPO/examples/golden/expected/spec-cpu.lock.json")
ours=$(for f in "$TRAINER" "$IMGTOOL_FLEET"; do echo "sha256:$(sha256sum <"$f" | cut -c1-64)"; done | sort | paste -sd' ')
if [ "$ours" = "$committed" ]; then
  grep -qE "^  [0-9]+ +expected +ok .*equals the committed digest" <<<"$out" || fail "expected step: want equal: $out"
  pass "the digest equals the committed one (this trainer and imgtool-fleet are the committed lock's)"
else
  grep -qE "^  [0-9]+ +expected +differs " <<<"$out" || fail "expected step: want differs: $out"
  assert_contains "$err" "file /usr/local/bin/" "the differing binaries named"
  assert_contains "$err" "toolchain of the committed digest:" "the toolchains shown"
  pass "another toolchain's binaries: the expected step says the digest differs and names the binaries"
fi
assert_contains "$out" "golden pipeline: OK" "footer"
digest=$(sed -n 's/^golden pipeline: OK  digest \(sha256:[0-9a-f]*\) .*/\1/p' <<<"$out")
host=$(sed -n 's|.*reference docker://\([^/]*\)/.*|\1|p' <<<"$out")
[ -n "$digest" ] && [ -n "$host" ] || fail "no digest/reference in the footer: $out"
curl -s -o /dev/null --max-time 2 "http://$host/v2/" && fail "the pipeline's registry on $host still answers after exit"
pass "ci-templates/golden-pipeline (defaults): every step ok, digest $digest, its registry on $host stopped on exit"

# ---- against this test's registry, then tampering ----
start_registry plain
R=docker://$REG_HOST/golden
rc=0
out=$(REGISTRY=$REG_HOST WORKDIR=$WORK/run "$PIPELINE" 2>/dev/null) || rc=$?
[ "$rc" = 0 ] || fail "ci-templates/golden-pipeline against $REG_HOST exited $rc: $out"
assert_contains "$out" "golden pipeline: OK  digest $digest" "same digest as the first run"
[ -d "$WORK/run/logs" ] || fail "a WORKDIR that was named is kept"
expect_exit 0 verify --key "$REPO/signatures/trusted/example.pub" "$R@$digest"
(cd "$WORK" && COSIGN_PASSWORD=other "$IMGTOOL" keygen --output-key-prefix other >/dev/null 2>&1)
expect_exit 5 verify --key "$WORK/other.pub" "$R@$digest"
assert_contains "$OUTPUT" "does not verify with any trusted key" "verify with another key"
pass "the pushed image verifies with example.pub and is denied with another key"

# Another image under the same tag: the digest-pinned reference still verifies; the tag
# now names an unsigned image, and a tag is not what the policy accepts anyway.
make_context "$WORK/ctx"
other=$("$IMGTOOL" build "$WORK/ctx/spec.json" -o "oci:$WORK/other:v1" -q | tail -n1)
"$IMGTOOL" push -q "oci:$WORK/other:v1" "$R:pipeline" >/dev/null
assert_eq "$("$IMGTOOL" resolve "$R:pipeline")" "$other" "the tag moved"
expect_exit 0 verify --key "$REPO/signatures/trusted/example.pub" "$R@$digest"
expect_exit 5 verify --key "$REPO/signatures/trusted/example.pub" "$R:pipeline"
assert_contains "$OUTPUT" "no signatures for $other" "the moved tag is unsigned"
expect_exit 5 policy check --policy "$REPO/policies/golden.json" "$R:pipeline"
assert_contains "$OUTPUT" "digestPinned" "tag-based policy check"
grep -qE "signedBy +FAIL" <<<"$OUTPUT" || fail "signedBy should fail for the moved tag: $OUTPUT"
pass "tag moved after signing: $R@$digest still verifies; :pipeline fails verify --key and policy check"

# ---- failures stop the pipeline: an untrusted key (policy), a wrong password (sign) ----
rc=0
out=$(REGISTRY=$REG_HOST KEY=$WORK/other.key COSIGN_PASSWORD=other TAG=untrusted "$PIPELINE" 2>"$WORK/err") || rc=$?
[ "$rc" = 1 ] || fail "an untrusted key: exit $rc, want 1: $out"
grep -qE "^  [0-9]+ +verify registry +ok " <<<"$out" || fail "verify with the key's own .pub passes: $out"
grep -qE "^  [0-9]+ +policy check +FAILED" <<<"$out" || fail "policy check should fail: $out"
assert_contains "$out" "golden pipeline: FAILED" "footer"
grep -q "SIGNING WITH THE EXAMPLE KEY" "$WORK/err" && fail "the example-key warning with KEY set"
rc=0
out=$(REGISTRY=$REG_HOST COSIGN_PASSWORD=wrong TAG=badpw "$PIPELINE" 2>/dev/null) || rc=$?
[ "$rc" = 1 ] || fail "a wrong password: exit $rc, want 1: $out"
grep -qE "^  [0-9]+ +sign +FAILED\(5\)" <<<"$out" || fail "sign should fail with exit 5: $out"
grep -qE "^  [0-9]+ +push +skipped" <<<"$out" || fail "push should be skipped: $out"
pass "an untrusted key fails the policy step, a wrong password fails signing; later steps are skipped"
