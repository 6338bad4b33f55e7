#!/usr/bin/env bash
# A build killed with SIGKILL in the middle of writing a layer never leaves a layout
# whose index points at a missing or partial blob: the previous image still verifies,
# and a later build completes.
source "$(dirname "$0")/lib.sh"
make_context "$WORK/ctx"
cd "$WORK/ctx"
"$IMGTOOL" build spec.json -o "oci:$WORK/img:v1" -q >/dev/null
before=$(cat "$WORK/img/index.json")

head -c 300000000 /dev/urandom >big.bin
cat >big.json <<'JSON'
{"base": "scratch", "user": {"name": "t", "uid": 10001, "gid": 10001},
 "layers": [{"name": "big", "files": [{"src": "big.bin", "dest": "/data/"}]}]}
JSON
for delay in 0.2 0.6 1.0; do
  "$IMGTOOL" build big.json -o "oci:$WORK/img:v1" -q --no-cache >/dev/null 2>&1 &
  pid=$!
  sleep "$delay"
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  now=$(cat "$WORK/img/index.json")
  if [ "$now" = "$before" ]; then
    pass "killed after ${delay}s: index.json unchanged"
  else
    pass "killed after ${delay}s: the build had already finished and tagged its image"
  fi
  expect_exit 0 verify "oci:$WORK/img:v1"
  before=$now
done
pass "every tagged image verifies after each SIGKILL"

expect_exit 0 build big.json -o "oci:$WORK/img:v1" -q --no-cache
expect_exit 0 verify "oci:$WORK/img:v1"
pass "a build after the kills completes and verifies"
