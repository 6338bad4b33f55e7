# Sourced by the bench scripts that push to a registry (index_copy, build_push): Debian's
# docker-registry on 127.0.0.1 with our own config, and a wall-clock timer. Needs WORK
# (the script's temporary folder); sets PID (the registry, for the script's cleanup) and
# R (docker://127.0.0.1:PORT).

PID=""
# Stops the registry this script started, if any.
stop_registry() {
  if [ -n "$PID" ]; then kill "$PID" 2>/dev/null; wait "$PID" 2>/dev/null || true; fi
  PID=""
}

# A fresh registry (own port and storage, the previous one stopped): nothing pushed in an
# earlier round can be skipped or mounted.
start_registry() {
  stop_registry
  local port
  port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  rm -rf "$WORK/reg" && mkdir -p "$WORK/reg"
  cat >"$WORK/reg/config.yml" <<YAML
version: 0.1
log: {level: error, accesslog: {disabled: true}}
storage: {filesystem: {rootdirectory: $WORK/reg/data}, delete: {enabled: true}}
http: {addr: 127.0.0.1:$port, secret: bench}
YAML
  docker-registry serve "$WORK/reg/config.yml" >"$WORK/reg.log" 2>&1 &
  PID=$!
  for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/v2/" && break; sleep 0.1; done
  R="docker://127.0.0.1:$port"
}

# Wall seconds of COMMAND..., its output dropped (its stderr shown if it fails); dirty
# pages of the step before are flushed first, so each step pays for its own writes.
seconds() {
  local t0 t1
  sync
  t0=$(date +%s.%N)
  "$@" >/dev/null 2>"$WORK/err" || { cat "$WORK/err" >&2; exit 1; }
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }'
}
