#!/usr/bin/env bash
# Every manifest in examples/k8s is accepted by `kubectl create --dry-run=client`, and the
# fleet Job says what it promises. No cluster runs here: kubectl still needs API discovery
# to map kinds to resources, so a fake discovery server (tests/fixtures/k8s_discovery.py,
# 127.0.0.1, stopped by PID on exit) answers it, with a dummy kubeconfig (a token, no
# secrets). --validate=false: client-side schema validation needs the server's OpenAPI,
# which we do not fake; instead the fields that matter are checked from kubectl's own
# JSON rendering. Then the fleet Job's init container and trainer command lines, exactly
# as the manifest gives them, run as 4 local "pods" on 127.0.0.1.
source "$(dirname "$0")/lib.sh"
# kubectl is not a Debian package (bookworm has none); where it is absent this check cannot
# run, and says so (ctest counts exit 77 as skipped).
if ! command -v kubectl >/dev/null; then
  echo "SKIP: kubectl is not installed (not packaged in Debian; install it from the Kubernetes project to run this check)"
  exit 77
fi
K8S="$REPO/examples/k8s"
export HOME="$WORK/home"
mkdir -p "$HOME"
unset KUBECONFIG

# ---- the fake discovery server ----
SERVER_PID=""
trap 'stop_pid "$SERVER_PID"; cleanup' EXIT
python3 "$REPO/tests/fixtures/k8s_discovery.py" "$WORK/port" "$WORK/paths.log" 2>"$WORK/server.log" &
SERVER_PID=$!
for _ in $(seq 1 100); do
  [ -s "$WORK/port" ] && break
  kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/server.log" >&2; fail "the discovery server exited"; }
  sleep 0.05
done
[ -s "$WORK/port" ] || fail "the discovery server did not start"
PORT=$(cat "$WORK/port")
cat >"$WORK/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
  - name: fake
    cluster:
      server: http://127.0.0.1:$PORT
contexts:
  - name: fake
    context: {cluster: fake, user: dummy, namespace: default}
current-context: fake
users:
  - name: dummy
    user: {token: not-a-secret}
EOF
kc() { kubectl --kubeconfig "$WORK/kubeconfig" --cache-dir "$WORK/kube-cache" --request-timeout 10s "$@"; }
pass "fake discovery server on 127.0.0.1:$PORT"

# ---- every manifest: kubectl create --dry-run=client ----
n=0
for f in "$K8S"/*.yaml; do
  name=$(basename "$f")
  rc=0
  out=$(kc create --dry-run=client --validate=false -o yaml -f "$f" 2>&1) || rc=$?
  [ "$rc" = 0 ] || fail "kubectl create --dry-run=client -f $name exited $rc: $out"
  # Each document's kind and name comes back in kubectl's rendering.
  while read -r kind obj; do
    assert_contains "$out" "kind: $kind" "$name"
    assert_contains "$out" "name: $obj" "$name"
  done < <(awk '/^kind:/ {k=$2} /^metadata:/ {m=1; next} m && /^  name:/ {print k, $2; m=0}' "$f")
  kc create --dry-run=client --validate=false -o json -f "$f" >"$WORK/$name.json"
  n=$((n + 1))
done
[ "$n" -ge 4 ] || fail "expected at least 4 manifests in examples/k8s, found $n"
grep -qx /apis/batch/v1 "$WORK/paths.log" || fail "kubectl never asked for /apis/batch/v1: $(sort -u "$WORK/paths.log")"
pass "kubectl create --dry-run=client -o yaml accepts all $n manifests in examples/k8s"

# A control: an unknown kind is refused, so the acceptance above meant something.
cat >"$WORK/bogus.yaml" <<'EOF'
apiVersion: batch/v1
kind: Jobb
metadata:
  name: bogus
EOF
rc=0
out=$(kc create --dry-run=client --validate=false -o yaml -f "$WORK/bogus.yaml" 2>&1) || rc=$?
[ "$rc" != 0 ] || fail "kubectl accepted an unknown kind: $out"
assert_contains "$out" "Jobb" "the unknown kind is named"
pass "an unknown kind (batch/v1 Jobb) is refused by the same setup (exit $rc)"

# ---- the webhook's policy sets: each namespace meets exactly one entry ----
python3 - "$WORK/validating-webhook.yaml.json" "$WORK/webhook-deployment.yaml.json" <<'PY' || fail "policy sets"
import json, sys
def docs(path):
    text, items, pos = open(path).read(), [], 0
    while text[pos:].strip():
        obj, end = json.JSONDecoder().raw_decode(text, pos)
        items += obj["items"] if obj.get("kind") == "List" else [obj]
        pos = end
        while pos < len(text) and text[pos].isspace():
            pos += 1
    return items
def need(cond, what):
    if not cond:
        sys.exit("examples/k8s: " + what)
KEY = "imgtool.dev/policy-set"
hooks = docs(sys.argv[1])[0]["webhooks"]
dep = [d for d in docs(sys.argv[2]) if d["kind"] == "Deployment"][0]
args = dep["spec"]["template"]["spec"]["containers"][0]["args"]
served = {a.split("=", 2)[1] for a in args if a.startswith("--policy-set=")}
default, sets = None, {}
for h in hooks:
    path = h["clientConfig"]["service"]["path"]
    exprs = [e for e in h["namespaceSelector"]["matchExpressions"] if e["key"] == KEY]
    need(len(exprs) == 1, "%s: no single %s expression" % (h["name"], KEY))
    if path == "/validate":
        need(exprs[0]["operator"] == "NotIn", "the default entry: want %s NotIn [every set]" % KEY)
        default = set(exprs[0]["values"])
    else:
        need(path.startswith("/validate/"), "%s: path %s" % (h["name"], path))
        need(exprs[0]["operator"] == "In" and exprs[0]["values"] == [path[len("/validate/"):]],
             "%s: want %s In [%s]" % (h["name"], KEY, path[len("/validate/"):]))
        sets[path[len("/validate/"):]] = h
    need(h["failurePolicy"] == "Fail", "%s: failurePolicy %s" % (h["name"], h["failurePolicy"]))
need(default is not None and sets, "want a default entry and at least one set entry")
need(default == set(sets), "the default entry's NotIn %s is not the sets with entries %s" % (sorted(default), sorted(sets)))
need(served == set(sets), "the Deployment serves sets %s, the webhook entries call %s" % (sorted(served), sorted(sets)))
for name, h in sets.items():
    need(h["rules"] == hooks[0]["rules"], "%s: other rules than the default entry" % name)
PY
pass "validating-webhook.yaml: a default entry (imgtool.dev/policy-set NotIn every set) and one entry per set (In [set], /validate/<set>), each set served by the Deployment's --policy-set"

# ---- the fleet Job: the fields that matter, from kubectl's JSON ----
python3 - "$WORK/fleet-job.yaml.json" >"$WORK/fleet.env" <<'PY'
import json, shlex, sys
# kubectl prints one JSON object per document, one after the other.
text, items, pos = open(sys.argv[1]).read(), [], 0
while text[pos:].strip():
    obj, end = json.JSONDecoder().raw_decode(text, pos)
    items += obj["items"] if obj.get("kind") == "List" else [obj]
    pos = end
    while pos < len(text) and text[pos].isspace():
        pos += 1
by_kind = {i["kind"]: i for i in items}
assert set(by_kind) == {"Service", "Job"}, f"kinds: {sorted(by_kind)}"
svc, job = by_kind["Service"], by_kind["Job"]
def need(cond, what):
    if not cond:
        sys.exit(f"fleet-job.yaml: {what}")
need(svc["spec"].get("clusterIP") == "None", "the Service is not headless (clusterIP: None)")
need(svc["spec"].get("publishNotReadyAddresses") is True,
     "the Service must publish not-ready addresses (init containers run before Ready)")
js = job["spec"]
need(js.get("completionMode") == "Indexed", f"completionMode is {js.get('completionMode')!r}, not Indexed")
need(js.get("completions") == js.get("parallelism"), "completions != parallelism: not all pods run at once")
pod = js["template"]["spec"]
labels = js["template"]["metadata"].get("labels", {})
need(all(labels.get(k) == v for k, v in svc["spec"]["selector"].items()), "the Service does not select the Job's pods")
need(pod.get("subdomain") == svc["metadata"]["name"], "the pod subdomain is not the Service's name")
need(pod.get("restartPolicy") == "Never", "restartPolicy is not Never")
sc = pod.get("securityContext", {})
need(sc.get("runAsNonRoot") is True and sc.get("runAsUser") == 10001, "not runAsNonRoot with uid 10001")
inits, mains = pod.get("initContainers", []), pod.get("containers", [])
need(len(inits) == 1 and len(mains) == 1, "expected one init container and one container")
init, main = inits[0], mains[0]
cmd = init.get("command", []) + init.get("args", [])
need(cmd[:1] and cmd[0].endswith("imgtool") and cmd[1:3] == ["fleet", "check"],
     f"the init container does not run imgtool fleet check: {cmd}")
need(init["image"] == main["image"] and "@sha256:" in init["image"],
     "the check and the trainer must run the same image, pinned by digest")
env = {e["name"]: e for e in init.get("env", [])}
need(env.get("IMGTOOL_IMAGE_DIGEST", {}).get("value") == "sha256:" + init["image"].split("@sha256:", 1)[1],
     "IMGTOOL_IMAGE_DIGEST is not the image's digest")
menv = {e["name"]: e for e in main.get("env", [])}
need(menv.get("TF_CONFIG") == env.get("TF_CONFIG"), "the trainer's TF_CONFIG differs from the check's")
# TF_CONFIG: expand $(VAR) as the kubelet does (only variables defined earlier).
names = [e["name"] for e in init["env"]]
tf = env["TF_CONFIG"]["value"]
idx_var = [n for n in names[: names.index("TF_CONFIG")] if f"$({n})" in tf]
need(len(idx_var) == 1, "TF_CONFIG does not expand an earlier variable for the index")
ref = env[idx_var[0]].get("valueFrom", {}).get("fieldRef", {}).get("fieldPath", "")
need(ref == "metadata.annotations['batch.kubernetes.io/job-completion-index']",
     f"{idx_var[0]} is not the completion index: {ref}")
n = js["completions"]
job_name, svc_name = job["metadata"]["name"], svc["metadata"]["name"]
for i in range(n):
    c = json.loads(tf.replace(f"$({idx_var[0]})", str(i)))
    workers = c["cluster"]["worker"]
    need("chief" not in c["cluster"] and len(workers) == n, f"TF_CONFIG lists {len(workers)} workers for {n} pods")
    need(c["task"] == {"type": "worker", "index": i}, f"pod {i}: task {c['task']}")
    need(all(w.rsplit(":", 1)[0] == f"{job_name}-{k}.{svc_name}" for k, w in enumerate(workers)),
         f"addresses are not <job>-<index>.<service>: {workers}")
ports = {int(w.rsplit(":", 1)[1]) for w in workers}
need(ports == {svc["spec"]["ports"][0]["port"]}, "the Service port is not the rendezvous port")
# For the local run below: the command lines, with the addresses' hosts.
print("CHECK_CMD=" + shlex.quote(json.dumps(cmd)))
print("TRAIN_CMD=" + shlex.quote(json.dumps(main.get("command", []) + main.get("args", []))))
print("TF_TEMPLATE=" + shlex.quote(tf))
print("INDEX_VAR=" + shlex.quote(idx_var[0]))
print("WORKERS=" + str(n))
PY
source "$WORK/fleet.env"
pass "fleet-job.yaml: headless Service (not-ready addresses), Indexed Job of $WORKERS, init container runs imgtool fleet check in the trainer's digest-pinned image, TF_CONFIG from the completion index (<job>-<i>.<service>), same TF_CONFIG for the trainer, non-root uid 10001"

# ---- the manifest's command lines, run as 4 local pods ----
# Each pod's TF_CONFIG with fleet-train-<i>.fleet-train:2222 -> 127.0.0.1:<free port>;
# the binaries' paths -> ours; --timeout shortened. Same flags otherwise.
ports=$(python3 -c '
import socket
ss = [socket.socket() for _ in range('"$WORKERS"')]
for s in ss: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in ss))')
pod_env() {  # INDEX: prints the pod's TF_CONFIG
  python3 - "$1" "$ports" <<'PY'
import json, os, sys
i, ports = int(sys.argv[1]), sys.argv[2].split()
tf = json.loads(os.environ["TF_TEMPLATE"].replace(f"$({os.environ['INDEX_VAR']})", str(i)))
tf["cluster"]["worker"] = [f"127.0.0.1:{p}" for p in ports]
print(json.dumps(tf))
PY
}
export TF_TEMPLATE INDEX_VAR
run_pods() {  # BINARY CMD_JSON SED_EXPR EXTRA_ARGS...: runs WORKERS pods, leaves pod<i>.{out,rc}
  local bin=$1 cmd=$2 edit=$3; shift 3
  local -a args pids
  mapfile -t args < <(python3 -c 'import json,sys; [print(a) for a in json.loads(sys.argv[1])[1:]]' "$cmd" | sed "$edit")
  for i in $(seq 0 $((WORKERS - 1))); do
    (
      set +e
      TF_CONFIG=$(pod_env "$i") IMGTOOL_IMAGE_DIGEST="sha256:$(printf '%064d' 0)" \
        "$bin" "${args[@]}" "$@" >"$WORK/pod$i.out" 2>&1
      echo $? >"$WORK/pod$i.rc"
    ) &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
}
run_pods "$IMGTOOL" "$CHECK_CMD" "s/^--timeout=.*/--timeout=60/"
for i in $(seq 0 $((WORKERS - 1))); do
  [ "$(cat "$WORK/pod$i.rc")" = 0 ] || fail "pod $i: the init container's command exited $(cat "$WORK/pod$i.rc"): $(cat "$WORK/pod$i.out")"
  assert_contains "$(cat "$WORK/pod$i.out")" "OK" "pod $i's verdict"
done
pass "the init container's command line (imgtool $(python3 -c 'import json,sys; print(" ".join(json.loads(sys.argv[1])[1:]))' "$CHECK_CMD")) passes on $WORKERS local pods"

DATA=/usr/share/datasets/fashion-mnist
if [ -n "${TRAINER:-}" ] && [ -x "$TRAINER" ] && [ -d "$DATA" ]; then
  # The trainer's flags from the manifest, cut short: 2 steps, 200 test examples, 1 thread.
  run_pods "$TRAINER" "$TRAIN_CMD" "s/^--threads=.*/--threads=1/" --max-steps 2 --train-limit 2048 --test-limit 200
  d0=""
  for i in $(seq 0 $((WORKERS - 1))); do
    [ "$(cat "$WORK/pod$i.rc")" = 0 ] || fail "pod $i: the trainer's command exited $(cat "$WORK/pod$i.rc"): $(cat "$WORK/pod$i.out")"
    d=$(grep -o 'weights sha256:[0-9a-f]*' "$WORK/pod$i.out")
    [ -z "$d0" ] && d0=$d
    assert_eq "$d" "$d0" "pod $i's weights digest"
  done
  pass "the trainer's command line with the same TF_CONFIG trains 2 steps on $WORKERS local pods ($d0)"
else
  echo "note: no trainer binary or dataset here: the trainer's command line was not run"
fi
