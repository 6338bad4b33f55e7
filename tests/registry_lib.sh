# Starts Debian's docker-registry on 127.0.0.1 for the registry tests, in flavours:
#   plain     HTTP, anonymous
#   htpasswd  HTTP, basic auth (bcrypt, htpasswd -Bbn) for user "alice" / "s3cret"
#   tls       HTTPS with a self-signed certificate ($REG_DIR/certs/ca.crt), anonymous
#   token     HTTP, bearer tokens from tests/registry_token_server.py (alice / s3cret)
# Always with our own config (the shipped one listens on all interfaces), state in
# $WORK, a random free port; every server started here is stopped by PID on exit.
# Source after lib.sh. Sets REG_HOST (127.0.0.1:PORT) and REG_DIR.
REGISTRY_PIDS=()
stop_registries() {
  local p
  for p in "${REGISTRY_PIDS[@]}"; do
    kill "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  REGISTRY_PIDS=()
}
trap 'stop_registries; cleanup' EXIT
command -v docker-registry >/dev/null || fail "docker-registry is not installed (scripts/setup installs it)"

# Credentials and config files stay inside the test.
export HOME="$WORK/home"
mkdir -p "$HOME"
unset REGISTRY_AUTH_FILE DOCKER_CONFIG XDG_RUNTIME_DIR

self_signed() {  # DIR: writes DIR/ca.crt and DIR/ca.key for localhost / 127.0.0.1
  mkdir -p "$1"
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$1/ca.key" -out "$1/ca.crt" -days 30 \
    -subj /CN=localhost -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" 2>/dev/null
}

wait_for_port() {  # URL PID LOG
  local i
  for i in $(seq 1 100); do
    curl -sk -o /dev/null "$1" && return 0
    kill -0 "$2" 2>/dev/null || { cat "$3" >&2; fail "server for $1 exited"; }
    sleep 0.1
  done
  cat "$3" >&2
  fail "server for $1 did not answer"
}

start_registry() {  # FLAVOUR
  local flavour=$1 port
  REG_DIR="$WORK/registry-$flavour"
  mkdir -p "$REG_DIR/data"
  port=$(free_port)
  REG_HOST="127.0.0.1:$port"
  local scheme=http extra_http="" auth=""
  case "$flavour" in
    plain) ;;
    htpasswd)
      htpasswd -Bbn alice s3cret >"$REG_DIR/htpasswd"
      auth="auth:
  htpasswd:
    realm: imgtool-test
    path: $REG_DIR/htpasswd" ;;
    tls)
      self_signed "$REG_DIR/certs"
      scheme=https
      extra_http="  tls:
    certificate: $REG_DIR/certs/ca.crt
    key: $REG_DIR/certs/ca.key" ;;
    token)
      self_signed "$REG_DIR/token"
      local tport
      tport=$(free_port)
      /usr/bin/python3 "$REPO/tests/registry_token_server.py" "127.0.0.1:$tport" "$REG_DIR/token" alice s3cret \
        >"$REG_DIR/token.log" 2>&1 &
      REGISTRY_PIDS+=($!)
      wait_for_port "http://127.0.0.1:$tport/health" "$!" "$REG_DIR/token.log"
      auth="auth:
  token:
    realm: http://127.0.0.1:$tport/token
    service: imgtool-test
    issuer: imgtool-test-issuer
    rootcertbundle: $REG_DIR/token/ca.crt" ;;
    *) fail "unknown registry flavour $flavour" ;;
  esac
  cat >"$REG_DIR/config.yml" <<YAML
version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $REG_DIR/data
  delete:
    enabled: true
http:
  addr: 127.0.0.1:$port
  secret: imgtool-test-secret
$extra_http
$auth
YAML
  docker-registry serve "$REG_DIR/config.yml" >"$REG_DIR/log" 2>&1 &
  REGISTRY_PIDS+=($!)
  wait_for_port "$scheme://$REG_HOST/v2/" "$!" "$REG_DIR/log"
}

# A small image with two layers (sizes in kB: $1, $2) of incompressible data.
make_image() {  # OUT_REF KB1 KB2
  local ctx="$WORK/ctx-$RANDOM"
  mkdir -p "$ctx/a" "$ctx/b"
  head -c "$(($2 * 1024))" /dev/urandom >"$ctx/a/data1.bin"
  head -c "$(($3 * 1024))" /dev/urandom >"$ctx/b/data2.bin"
  cat >"$ctx/spec.json" <<'JSON'
{
  "base": "scratch",
  "user": {"name": "trainer", "uid": 10001, "gid": 10001},
  "layers": [
    {"name": "one", "files": [{"src": "a", "dest": "/opt/a"}]},
    {"name": "two", "files": [{"src": "b", "dest": "/opt/b"}]}
  ],
  "entrypoint": ["/bin/true"]
}
JSON
  (cd "$ctx" && "$IMGTOOL" build spec.json -o "$1" -q | tail -n1)
}
