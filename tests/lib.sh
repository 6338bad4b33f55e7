# Helpers for the integration tests. Each test sources this, gets a private work
# folder ($WORK) that is removed on exit, and fails loudly with the line it failed on.
set -euo pipefail
: "${IMGTOOL:?set IMGTOOL to the imgtool binary}"
: "${REPO:?set REPO to the repository root}"
# imgtool's fleet verbs alone (cli/fleet_main.cc): the golden images carry it as /usr/local/bin/imgtool.
IMGTOOL_FLEET="${IMGTOOL_FLEET:-$(dirname "$IMGTOOL")/imgtool-fleet}"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/imgtool-test.XXXXXX")
cleanup() { rm -rf "$WORK"; }
trap cleanup EXIT
trap 'echo "FAILED at ${BASH_SOURCE[0]}:$LINENO: $BASH_COMMAND" >&2' ERR
export IMGTOOL_CACHE="$WORK/cache"
export SOURCE_DATE_EPOCH=0
source "$REPO/tests/procs.sh"

# Stops a background process this test started (kill, then reap); an empty PID is a no-op.
stop_pid() {
  [ -n "${1:-}" ] || return 0
  kill "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}
fail() { echo "FAILED: $*" >&2; exit 1; }

# Names for 127.0.0.1 in /etc/hosts for the test's lifetime (node names a launcher hands
# its tasks): one line marked with this test's pid, added and removed under a lock, since
# tests running side by side edit the same file. Rewritten in place, not replaced:
# /etc/hosts may be a bind mount. hosts_add returns 1 when /etc/hosts is not writable.
HOSTS_MARK="# imgtool-test-$$"
hosts_add() {  # NAME...
  [ -w /etc/hosts ] || return 1
  (flock 9 && echo "127.0.0.1 $* $HOSTS_MARK" >>/etc/hosts) 9>/tmp/imgtool-test-etc-hosts.lock
}
hosts_remove() {
  [ -w /etc/hosts ] && grep -qF -- "$HOSTS_MARK" /etc/hosts || return 0
  (flock 9 && kept=$(grep -vF -- "$HOSTS_MARK" /etc/hosts) && printf '%s\n' "$kept" >/etc/hosts) \
    9>/tmp/imgtool-test-etc-hosts.lock
}
pass() { echo "ok: $*"; }
assert_eq() { [ "$1" = "$2" ] || fail "$3: expected '$2', got '$1'"; }
assert_contains() { grep -qF -- "$2" <<<"$1" || fail "$3: expected output to contain '$2', got: $1"; }

# Whether strace may trace here (ptrace can be forbidden in containers).
can_trace() { strace -f -qq -o /dev/null true 2>/dev/null; }
# strace ARGS... for counting reads. LeakSanitizer cannot run under ptrace (it aborts the
# traced process: "LeakSanitizer does not work under ptrace"), so a traced run under the
# sanitizer suite keeps every other check but the leak check; untraced runs still do it.
traced() { ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" strace "$@"; }

# sigstore-python 4.5.1 in a venv kept between runs (pip needs PyPI once); sets $venv.
# Tests that compare with it run in parallel: the install is done under a lock, once.
sigstore_python_venv() {
  venv="${XDG_CACHE_HOME:-$HOME/.cache}/imgtool-test/sigstore-venv"
  mkdir -p "$(dirname "$venv")"
  (
    flock 9
    if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import sigstore' 2>/dev/null; then
      python3 -m venv "$venv" && "$venv/bin/pip" install -q sigstore==4.5.1
    fi
  ) 9>"$venv.lock" >&2 || fail "cannot install sigstore-python 4.5.1 into $venv (pip needs PyPI once): the verdicts compared against come from running it"
  assert_eq "$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("sigstore"))')" "4.5.1" "sigstore-python in $venv"
}

# Damages FILE at OFFSET (modulo its size) by xoring one bit: always a change, whatever
# the byte was (writing a fixed byte is a no-op once in 256 on random data).
flip() {  # file offset: xor one byte in place
  python3 - "$1" "$2" <<'PY'
import sys
p, off = sys.argv[1], int(sys.argv[2])
b = bytearray(open(p, 'rb').read()); b[off % len(b)] ^= 0x01; open(p, 'wb').write(b)
PY
}

# Runs imgtool expecting exit code $1; leaves stdout+stderr in $OUTPUT.
expect_exit() {
  local want=$1; shift
  set +e
  OUTPUT=$("$IMGTOOL" "$@" 2>&1)
  local got=$?
  set -e
  [ "$got" = "$want" ] || fail "imgtool $* exited $got, want $want: $OUTPUT"
}

# A small build context: a folder tree with an executable, a symlink, a nested file.
make_context() {
  local dir=$1
  mkdir -p "$dir/app/bin" "$dir/app/share"
  printf '#!/bin/sh\necho hi\n' >"$dir/app/bin/run.sh"
  printf 'weights v1\n' >"$dir/app/share/model.txt"
  ln -s ../share/model.txt "$dir/app/bin/model.txt"
  printf 'lr=0.001\n' >"$dir/config.txt"
  chmod 755 "$dir/app/bin/run.sh"
  chmod 644 "$dir/app/share/model.txt" "$dir/config.txt"
  cat >"$dir/spec.json" <<'JSON'
{
  "base": "scratch",
  "user": {"name": "trainer", "uid": 10001, "gid": 10001},
  "layers": [
    {"name": "app", "files": [
      {"src": "app", "dest": "/opt/app"},
      {"src": "config.txt", "dest": "/etc/app/", "mode": "0640", "owner": "10001:10001"}
    ]}
  ],
  "env": {"PATH": "/opt/app/bin:/usr/bin:/bin"},
  "entrypoint": ["/opt/app/bin/run.sh"],
  "labels": {"example": "yes"},
  "stack": {"cuda": "13.0.96", "cudnn": "9.19.0", "nccl": "2.28.9"}
}
JSON
}

# Crafting images no spec may describe (a root user, a base annotation): a new config or
# manifest blob, index.json re-pointed, as umoci config does.
# Rewrites blob $2 of layout $1 with jq filter $3; prints "sha256:HEX SIZE" of the new blob.
rewrite_blob() {
  local dir=$1 digest=$2 filter=$3 tmp="$1/blobs/sha256/.tmp"
  jq -c "$filter" "$dir/blobs/sha256/${digest#sha256:}" >"$tmp"
  local hex
  hex=$(sha256sum "$tmp" | cut -c1-64)
  mv -f "$tmp" "$dir/blobs/sha256/$hex"
  echo "sha256:$hex $(stat -c %s "$dir/blobs/sha256/$hex")"
}
# edit_image DIR TAG CONFIG_FILTER MANIFEST_FILTER: a new image under TAG; prints its digest.
edit_image() {
  local dir=$1 tag=$2 m c size
  m=$(jq -r --arg t "$tag" '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == $t) | .digest' \
    "$dir/index.json")
  c=$(jq -r .config.digest "$dir/blobs/sha256/${m#sha256:}")
  read -r c size < <(rewrite_blob "$dir" "$c" "$3")
  read -r m2 size < <(rewrite_blob "$dir" "$m" ".config.digest = \"$c\" | .config.size = $size | $4")
  jq -c --arg old "$m" --arg new "$m2" --argjson size "$size" \
    '(.manifests[] | select(.digest == $old)) |= (.digest = $new | .size = $size)' "$dir/index.json" >"$dir/index.tmp"
  mv -f "$dir/index.tmp" "$dir/index.json"
  echo "$m2"
}

# golden_context DIR: a private copy of examples/golden's spec folder for the CPU spec: the
# spec, the debs fetched once into examples/golden/cache (linked), $TRAINER and imgtool-fleet
# staged where the spec takes them. Run `examples/golden/fetch --spec spec-cpu.json
# --no-trainer` first.
golden_context() {
  local g=$REPO/examples/golden
  mkdir -p "$1/cache/bin"
  cp "$g/spec-cpu.json" "$1/"
  ln -s "$g/cache/debs" "$1/cache/debs"
  cp "${TRAINER:?set TRAINER to the trainer binary}" "$1/cache/bin/trainer"
  cp "$IMGTOOL_FLEET" "$1/cache/bin/imgtool-fleet"
}
