#!/usr/bin/env bash
# imgtool lint: each check (fromDigest, noLatest, nonRootUser, addChecksum) passing and
# failing with file:line, the parser's hard parts (continuations, comments, directives,
# heredoc bodies, case, ARG substitution in FROM), --json, --policy turning a check off,
# exit 2 for unreadable input and bad policies, hostile input (100,000-character
# directives, heredoc delimiters, continuation runs, exec-form nesting) answered under a
# timeout, and the shipped Dockerfiles passing.
source "$(dirname "$0")/lib.sh"
PIN="sha256:$(printf 'a%.0s' {1..64})"
SUM="sha256:$(printf 'b%.0s' {1..64})"

df() {  # NAME: Dockerfile text from stdin into $WORK/NAME
  cat >"$WORK/$1"
}
lint() {  # WANT-EXIT NAME [ARGS...]
  local want=$1 name=$2
  shift 2
  expect_exit "$want" lint "$WORK/$name" "$@"
}

# ---- a clean file with everything the parser must get right ----
df clean <<EOF
# syntax=docker/dockerfile:1.7
# escape=\\
ARG BASE=debian:12@$PIN
ARG TAG
from \${BASE} as build
RUN apt-get update && \\
# a comment inside a continuation
    apt-get install -y make
RUN <<EOT bash
FROM ubuntu:latest
USER root
ADD https://example.com/x /x
EOT
Copy --from=build /out /out
FROM scratch
COPY --from=build /out/app /app
COPY --from=golden bin/trainer /trainer
ADD --checksum=$SUM https://example.com/model.bin /model.bin
COPY <<-EOT /etc/motd
	USER 0
	EOT
user 10001:10001
ENTRYPOINT ["/app"]
EOF
lint 0 clean
assert_contains "$OUTPUT" "0 finding(s): OK" "clean"
pass "clean: directives, continuations, comments, heredoc bodies, lower case, ARG in FROM, stages"

# ---- fromDigest ----
printf 'FROM debian:12\nUSER 1:1\n' | df unpinned
lint 5 unpinned
assert_contains "$OUTPUT" "$WORK/unpinned:1: fromDigest: FROM 'debian:12' is not pinned: want debian:12@sha256:<64 hex>" "unpinned"
printf 'ARG V=12\nFROM \\\n  debian:${V:-11}\nUSER 1:1\n' | df unpinned_arg
lint 5 unpinned_arg
assert_contains "$OUTPUT" ":2: fromDigest: FROM 'debian:\${V:-11}' (= 'debian:12') is not pinned" "ARG substitution"
lint 0 unpinned_arg --build-arg "V=12@$PIN"
printf 'FROM debian:12@sha256:1234\nUSER 1:1\n' | df short_digest
lint 5 short_digest
assert_contains "$OUTPUT" "is not sha256:<64 hex>" "short digest"
printf 'FROM scratch\nCOPY --from=alpine:3.19 /bin/sh /sh\nUSER 1:1\n' | df copy_from_image
lint 5 copy_from_image
assert_contains "$OUTPUT" ":2: fromDigest: COPY --from 'alpine:3.19' is not pinned" "COPY --from image"
pass "fromDigest: unpinned, via ARG (and --build-arg), malformed digest, COPY --from an image"

# ---- noLatest ----
printf 'FROM debian:latest@%s\nUSER 1:1\n' "$PIN" | df latest
lint 5 latest
assert_contains "$OUTPUT" ":1: noLatest: FROM 'debian:latest@$PIN' uses the tag 'latest'" "latest"
printf 'FROM debian\nUSER 1:1\n' | df no_tag
lint 5 no_tag
assert_contains "$OUTPUT" ":1: noLatest: FROM 'debian' has no tag or digest, so it means 'latest'" "no tag"
pass "noLatest: explicit latest and no tag"

# ---- nonRootUser ----
printf 'FROM scratch\nCOPY a /a\n' | df no_user
lint 5 no_user
assert_contains "$OUTPUT" ":1: nonRootUser: the final stage sets no USER" "no USER"
printf 'FROM scratch\nUSER 10001\nUSER 0:0\n' | df root_user
lint 5 root_user
assert_contains "$OUTPUT" ":3: nonRootUser: USER 0:0 is root" "USER 0"
printf 'FROM scratch\nUSER app\n' | df named_user
lint 5 named_user
assert_contains "$OUTPUT" ":2: nonRootUser: USER app is not a numeric uid" "USER name"
printf 'FROM scratch AS base\nUSER 10001\nFROM scratch\n' | df earlier_stage_user
lint 5 earlier_stage_user
printf 'FROM scratch AS base\nUSER 10001\nFROM base\nCOPY a /a\n' | df inherited_user
lint 0 inherited_user
pass "nonRootUser: none, 0:0, a name, only in another stage fail; inherited from the base stage passes"

# ---- addChecksum ----
printf 'FROM scratch\nADD https://example.com/a.tgz /a\nUSER 1\n' | df add_url
lint 5 add_url
assert_contains "$OUTPUT" ":2: addChecksum: ADD https://example.com/a.tgz has no --checksum=sha256:<64 hex>" "ADD URL"
printf 'FROM scratch\nADD --checksum=%s https://example.com/a.tgz /a\nADD a.tgz /b\nUSER 1\n' "$SUM" | df add_sum
lint 0 add_sum
printf 'FROM scratch\nADD ["http://example.com/a", "/a"]\nUSER 1\n' | df add_json
lint 5 add_json
pass "addChecksum: URL without checksum (shell and exec form) fails, with checksum passes"

# ---- --json, --policy, bad input ----
rc=0
json=$("$IMGTOOL" lint "$WORK/unpinned" --json) || rc=$?
assert_eq "$rc" 5 "--json exit"
assert_eq "$(jq -c '[.pass, .findings[0].line, .findings[0].rule]' <<<"$json")" '[false,1,"fromDigest"]' "--json"
printf '{"policyVersion": 1, "dockerfile": {"fromDigest": false}}' >"$WORK/off.json"
lint 0 unpinned --policy "$WORK/off.json"
printf '{"policyVersion": 1, "dockerfile": {"fromDigests": false}}' >"$WORK/typo.json"
lint 2 unpinned --policy "$WORK/typo.json"
assert_contains "$OUTPUT" "typo.json: \$.dockerfile.fromDigests: unknown field" "policy typo"
printf 'FROM scratch\nFORM x\n' | df unknown
lint 2 unknown
assert_contains "$OUTPUT" "$WORK/unknown:2: unknown instruction 'FORM'" "unknown instruction"
printf 'FROM scratch\nRUN <<EOT\nx\n' | df open_heredoc
lint 2 open_heredoc
assert_contains "$OUTPUT" "heredoc <<EOT is not closed" "open heredoc"
expect_exit 2 lint "$WORK/nope"
pass "--json, --policy turning fromDigest off, policy typo, unknown instruction, open heredoc, missing file"

# ---- hostile input (issue 24): answered, never a crash; a hang is caught by the timeout ----
hostile() {  # WANT-EXIT NAME: imgtool lint under `timeout 60`
  local want=$1 got=0
  OUTPUT=$(timeout 60 "$IMGTOOL" lint "$WORK/$2" 2>&1) || got=$?
  [ "$got" = "$want" ] || fail "lint $2 exited $got, want $want (124: hung, 139: crashed): ${OUTPUT:0:300}"
}
long=$(printf '%100000s' '' | tr ' ' E)
printf '# syntax=docker/dockerfile:%s\nFROM scratch\nUSER 1\n' "$long" | df long_syntax
hostile 0 long_syntax
printf '# escape=%s\nFROM scratch\n' "$long" | df long_escape
hostile 2 long_escape
assert_contains "$OUTPUT" "... (100000 bytes)': want" "escape directive, shown cut"
printf 'FROM scratch\nRUN <<%s sh\nFROM x\n%s\nUSER 1\n' "$long" "$long" | df long_heredoc
hostile 0 long_heredoc
printf 'FROM scratch\nRUN <<%s sh\nx\n' "$long" | df long_open_heredoc
hostile 2 long_open_heredoc
assert_contains "$OUTPUT" "(100000 bytes) is not closed" "open heredoc, delimiter shown cut"
{ printf 'FROM scratch\nRUN a \\\n'; awk 'BEGIN { for (i = 0; i < 100000; i++) print "\\" }'; printf 'b\nUSER 1\n'; } |
  df long_continuation
hostile 0 long_continuation
{ printf 'FROM scratch\nADD ["http://example.com/a", %s%s, "/d"]\nUSER 1\n' "$(tr E '[' <<<"$long")" \
  "$(tr E ']' <<<"$long")"; } | df deep_exec_form
hostile 5 deep_exec_form
assert_contains "$OUTPUT" ":2: addChecksum: ADD http://example.com/a has no --checksum" "deep exec form"
pass "100,000-character syntax and escape directives, heredoc delimiters, continuation runs, exec-form nesting"

# ---- the shipped Dockerfiles pass, with the shipped policy ----
for f in "$REPO"/dockerfiles/*.Dockerfile; do
  expect_exit 0 lint "$f" --policy "$REPO/policies/golden.json"
done
pass "dockerfiles/*.Dockerfile pass imgtool lint --policy policies/golden.json"
