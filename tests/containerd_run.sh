#!/usr/bin/env bash
# The golden trainer image runs: containerd (its own root, state and socket under $WORK,
# config as in shared/design/PEERS.md) imports the oci-archive imgtool builds from
# examples/golden/spec-cpu.json, `ctr run` (runc) starts the image's entrypoint as the
# image's user for 20 CPU steps, and the weights digest equals that of the same trainer
# run outside the image. Skipped (exit 77, with the reason) only when containerd cannot
# be started here: not installed, not root, or it does not answer.
# Env: TRAINER (default: the trainer beside IMGTOOL's build folder).
source "$(dirname "$0")/lib.sh"
TRAINER="${TRAINER:-$(cd "$(dirname "$IMGTOOL")/.." && pwd)/trainer/trainer}"
[ -x "$TRAINER" ] || fail "no trainer binary at $TRAINER (set TRAINER, or build the trainer target)"
skip() { echo "SKIPPED: containerd_run: $*"; exit 77; }

for tool in containerd ctr runc; do
  command -v "$tool" >/dev/null || skip "$tool is not installed (scripts/setup installs containerd and runc)"
done
[ "$(id -u)" = 0 ] || skip "containerd needs root; this test runs as uid $(id -u)"

# containerd, ours alone: stopped (by its PID) and its mounts undone before $WORK goes.
C=$WORK/containerd
mkdir -p "$C"
SOCK=$C/containerd.sock
ctrd_pid=""
stop_containerd() {
  if [ -n "$ctrd_pid" ]; then
    kill "$ctrd_pid" 2>/dev/null || true
    wait "$ctrd_pid" 2>/dev/null || true
  fi
  # A shim outlives containerd only if a task was left; ours carry our socket path.
  for pid in $(pgrep -f -- "-address $SOCK" || true); do kill "$pid" 2>/dev/null || true; done
  awk -v w="$WORK" '$2 ~ "^"w {print $2}' /proc/mounts | sort -r | while read -r m; do umount -l "$m" || true; done
  rm -rf "$WORK"
}
trap stop_containerd EXIT
cat >"$C/config.toml" <<TOML
version = 2
root = "$C/root"
state = "$C/state"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "$SOCK"
[ttrpc]
  address = "$SOCK.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.grpc.v1.cri"]
  disable_tcp_service = true
TOML
containerd --config "$C/config.toml" >"$C/log" 2>&1 &
ctrd_pid=$!
ctr() { command ctr --address "$SOCK" "$@"; }
for _ in $(seq 1 100); do
  ctr version >/dev/null 2>&1 && break
  kill -0 "$ctrd_pid" 2>/dev/null || skip "containerd exited at start: $(tail -n3 "$C/log")"
  sleep 0.2
done
ctr version >/dev/null 2>&1 || skip "containerd did not answer on $SOCK within 20 s: $(tail -n3 "$C/log")"
pass "containerd $(command ctr --version | awk '{print $3}') started on $SOCK"

# The CPU variant of the golden image: the same Debian layers, dataset and trainer as
# spec.json, without the CUDA wheels (the CPU backend needs none; ~37 MB of downloads,
# cached in examples/golden/cache).
mkdir -p "$WORK/ctx/cache/bin"
"$REPO/examples/golden/fetch" --spec spec-cpu.json --no-trainer --platform linux/amd64 >/dev/null
cp "$REPO/examples/golden/spec-cpu.json" "$WORK/ctx/"
ln -s "$REPO/examples/golden/cache/debs" "$WORK/ctx/cache/debs"
cp "$TRAINER" "$WORK/ctx/cache/bin/trainer"
cp "$IMGTOOL_FLEET" "$WORK/ctx/cache/bin/imgtool-fleet"
digest=$("$IMGTOOL" build "$WORK/ctx/spec-cpu.json" --platform linux/amd64 -o "oci-archive:$WORK/golden.tar:latest" -q | tail -n1)
entrypoint=$("$IMGTOOL" inspect "oci-archive:$WORK/golden.tar:latest" --json | jq -r '.entrypoint[]')
ctr images import --snapshotter native --base-name imgtool.test/golden --digests "$WORK/golden.tar" >"$C/import.log" 2>&1 \
  || fail "ctr images import: $(cat "$C/import.log")"
ref=imgtool.test/golden@$digest
grep -qxF "$ref" <<<"$(ctr images ls -q)" || fail "imported image not listed as $ref: $(ctr images ls -q)"
pass "ctr images import took the oci-archive as $ref"

# The trainer inside (entrypoint from the image config, user from it too: ctr applies
# the config's User), writing a checkpoint to a bind mount so the files' owner shows
# which uid it ran as.
mkdir -p "$WORK/out" && chmod 777 "$WORK/out"
args=(--max-steps 20 --threads 1 --seed 7 --json)
set +e
inside=$(ctr run --rm --snapshotter native --mount "type=bind,src=$WORK/out,dst=/out,options=rbind:rw" \
  "$ref" golden-test-$$ $entrypoint "${args[@]}" --checkpoint-dir /out/ckpt --checkpoint-every 10 2>"$C/run.err")
rc=$?
set -e
[ "$rc" = 0 ] || fail "ctr run exited $rc: $(cat "$C/run.err") $(tail -n5 "$C/log")"
in_digest=$(jq -r .digest <<<"$inside")
assert_eq "$(jq -r .steps <<<"$inside")" 20 "steps inside"
owner=$(find "$WORK/out/ckpt" -type f -printf '%U:%G\n' | sort -u)
assert_eq "$owner" "10001:10001" "owner of the files the trainer wrote"
pass "ctr run started $entrypoint as 10001:10001 for 20 steps: weights $in_digest"

outside=$("$TRAINER" --data /usr/share/datasets/fashion-mnist "${args[@]}" 2>/dev/null) \
  || fail "trainer outside the image failed (dataset-fashion-mnist installed?)"
assert_eq "$in_digest" "$(jq -r .digest <<<"$outside")" "weights digest inside vs outside the image"
pass "the same seed and steps give the same weights digest inside the image and outside"
