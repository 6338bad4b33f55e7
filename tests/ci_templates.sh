#!/usr/bin/env bash
# The CI templates in ci-templates/ as a security linter and the CI systems' own schemas see them:
# - zizmor --offline (the GitHub Actions security linter) reports nothing on
#   ci-templates/github-golden.yml, and does report the unpinned, credential-keeping form the
#   template had before (so this check has teeth);
# - every action is pinned by a full commit SHA with its version in a comment, every
#   checkout sets persist-credentials: false, the workflow grants no permissions and
#   each job names its own;
# - check-jsonschema validates github-golden.yml against the GitHub workflow schema and
#   gitlab-golden.yml against GitLab CI's (both schemas built in: no network).
# zizmor and check-jsonschema live in a venv kept between runs (the first run needs PyPI).
source "$(dirname "$0")/lib.sh"
venv="${XDG_CACHE_HOME:-$HOME/.cache}/imgtool-test/ci-lint-venv"
if [ ! -x "$venv/bin/zizmor" ] || [ ! -x "$venv/bin/check-jsonschema" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q zizmor check-jsonschema || fail "pip install zizmor check-jsonschema into $venv"
fi
GH=$REPO/ci-templates/github-golden.yml
GL=$REPO/ci-templates/gitlab-golden.yml

out=$("$venv/bin/zizmor" --offline --no-progress "$GH" 2>&1) || fail "zizmor reports findings on $GH: $out"
assert_contains "$out" "No findings to report" "zizmor"
pass "zizmor --offline: no findings on ci-templates/github-golden.yml"

# The template as it was: actions by tag, checkout keeping its token.
/usr/bin/env python3 - "$GH" >"$WORK/old.yml" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
text = re.sub(r"uses: (actions/[a-z]+)@[0-9a-f]{40}.*", r"uses: \1@v4", text)
print(re.sub(r"\n +with:\n +persist-credentials: false", "", text), end="")
PY
rc=0
out=$("$venv/bin/zizmor" --offline --no-progress "$WORK/old.yml" 2>&1) || rc=$?
[ "$rc" != 0 ] || fail "zizmor accepts actions pinned by tag: $out"
assert_contains "$out" "unpinned-uses" "zizmor on tags"
assert_contains "$out" "artipacked" "zizmor on persisted credentials"
pass "zizmor still reports the old form (unpinned-uses, artipacked)"

/usr/bin/env python3 - "$GH" <<'PY' || fail "pins, credentials or permissions in $GH"
import re, sys
text = open(sys.argv[1]).read()
uses = re.findall(r"uses:\s*(\S+)(.*)", text)
assert uses, "no actions"
for ref, rest in uses:
    assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", ref), f"{ref}: not pinned by a full commit SHA"
    assert re.search(r"#\s*v\d+\.\d+\.\d+", rest), f"{ref}: no '# vX.Y.Z' comment"
checkouts = len(re.findall(r"uses: actions/checkout@.*\n +with:\n +persist-credentials: false\n", text))
assert checkouts == text.count("uses: actions/checkout@"), "a checkout keeps its credentials"
assert re.search(r"^permissions: \{\}", text, re.M), "workflow-level permissions are not {}"
jobs = text.split("\njobs:\n", 1)[1]
for job in re.split(r"\n(?=  [\w-]+:\n)", jobs):
    assert "\n    permissions:" in job, f"a job without its own permissions: {job.splitlines()[0]}"
PY
pass "every action pinned by commit SHA (version in a comment), persist-credentials: false, permissions per job"

"$venv/bin/check-jsonschema" --builtin-schema vendor.github-workflows "$GH" >"$WORK/gh.out" 2>&1 ||
  fail "GitHub workflow schema: $(cat "$WORK/gh.out")"
"$venv/bin/check-jsonschema" --builtin-schema vendor.gitlab-ci "$GL" >"$WORK/gl.out" 2>&1 ||
  fail "GitLab CI schema: $(cat "$WORK/gl.out")"
pass "check-jsonschema: github-golden.yml (vendor.github-workflows), gitlab-golden.yml (vendor.gitlab-ci)"
