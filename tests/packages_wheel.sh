#!/usr/bin/env bash
# Wheels and installed wheels as layer inputs, and the stack pins checked against them:
# a wheel goes under its prefix with its dist-info, every file checked against RECORD;
# an installed wheel is taken from this machine's files, verified against its RECORD;
# /etc/imgtool/stack.json names each component's package and library hashes. A pin
# (sha256, name, version, RECORD digest, stack) that differs fails with both values named.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/packages_lib.sh"
mkdir -p "$WORK/ctx/wheels" && cd "$WORK/ctx"
rt=$(make_wheel wheels nvidia_cuda_runtime 13.0.96 nvidia/cu13)
nccl=$(make_wheel wheels nvidia_nccl_cu13 2.28.9 nvidia/nccl)
# An "installed" cudnn, flattened as our machines have it: nvidia/cudnn/lib -> site/lib.
cudnn=$(make_wheel wheels nvidia_cudnn_cu13 9.19.0.56 nvidia/cudnn)
mkdir -p site/dist-info && (cd site && unzip -q "../$cudnn")
mv site/nvidia/cudnn/lib site/lib && rm -rf site/nvidia && mv site/nvidia_cudnn_cu13-9.19.0.56.dist-info site/dist-info/
record_sha=$(sha site/dist-info/nvidia_cudnn_cu13-9.19.0.56.dist-info/RECORD)

whl() { printf '{"src":"%s","sha256":"%s","name":"%s","version":"%s","prefix":"/opt/py"}' "${1#$WORK/ctx/}" "$2" "$3" "$4"; }
installed() {  # version record-sha
  printf '{"dist_info":"site/dist-info/nvidia_cudnn_cu13-9.19.0.56.dist-info","root":"site","strip_prefix":"nvidia/cudnn/","name":"nvidia-cudnn-cu13","version":"%s","prefix":"/usr/local/cuda","record_sha256":"%s"}' "$1" "$2"
}
spec() {  # wheels-json installed-json stack-json
  printf '{"base":"scratch","user":{"name":"t","uid":10001,"gid":10001},"layers":[{"name":"py","wheels":%s},{"name":"cudnn","installed_wheels":%s}],"stack":%s}' "$1" "$2" "$3"
}
wheels="[$(whl "$rt" "$(sha "$rt")" nvidia-cuda-runtime 13.0.96),$(whl "$nccl" "$(sha "$nccl")" nvidia_nccl_cu13 2.28.9)]"
stack='{"cuda":"13.0.96","cudnn":"9.19.0","nccl":"2.28","driver":"580.0"}'
spec "$wheels" "[$(installed 9.19.0.56 "$record_sha")]" "$stack" >spec.json

expect_exit 0 build spec.json -o "oci:$WORK/img:v1" -q
expect_exit 0 verify "oci:$WORK/img:v1"
unpack_image "$WORK/img" "$WORK/root"
[ -f "$WORK/root/opt/py/nvidia/cu13/lib/libnvidia_cuda_runtime.so.1" ] || fail "wheel file under its prefix"
[ -f "$WORK/root/opt/py/nvidia_cuda_runtime-13.0.96.dist-info/RECORD" ] || fail "dist-info kept"
assert_eq "$(stat -c %a "$WORK/root/opt/py/nvidia/cu13/__init__.py")" 644 "wheel file mode"
pass "wheels unpacked under their prefix with their dist-info"
[ -f "$WORK/root/usr/local/cuda/lib/libnvidia_cudnn_cu13.so.1" ] || fail "installed wheel file with strip_prefix"
[ -f "$WORK/root/usr/local/cuda/nvidia_cudnn_cu13-9.19.0.56.dist-info/METADATA" ] || fail "installed dist-info"
pass "the installed wheel is taken from this machine's files (strip_prefix undone under its prefix)"

stackjson=$(cat "$WORK/root/etc/imgtool/stack.json")
assert_eq "$(jq -r '.components.cuda.package + " " + .components.cuda.packageVersion' <<<"$stackjson")" "nvidia-cuda-runtime 13.0.96" "cuda provider"
assert_eq "$(jq -r '.components.cudnn.libraries[0].path' <<<"$stackjson")" "/usr/local/cuda/lib/libnvidia_cudnn_cu13.so.1" "cudnn library"
assert_eq "$(jq -r '.components.cudnn.libraries[0].sha256' <<<"$stackjson")" "sha256:$(sha site/lib/libnvidia_cudnn_cu13.so.1)" "library hash"
assert_eq "$(jq -r '.components.nccl.version + " " + .components.nccl.packageVersion' <<<"$stackjson")" "2.28 2.28.9" "nccl prefix pin"
assert_eq "$(jq -c '.components.driver' <<<"$stackjson")" '{"version":"580.0"}' "driver: no package"
pass "stack.json: each component's version, package and library sha256s"

record="$WORK/img.build.json"
assert_eq "$(jq -r '.inputs[] | select(.layer=="cudnn") | .digest' "$record")" "sha256:$record_sha" "record names RECORD digest"
pass "the build record pins the installed wheel by its RECORD digest"

ok_installed="[$(installed 9.19.0.56 "$record_sha")]"
refused 4 "\$.layers[0].wheels[0].sha256: wheels/nvidia_cuda_runtime-13.0.96-py3-none-any.whl: the spec pins sha256:$zero but the file is sha256:$(sha "$rt")" \
  "$(spec "[$(whl "$rt" "$zero" nvidia-cuda-runtime 13.0.96)]" "$ok_installed" '{}')"
refused 4 "\$.layers[0].wheels[0].name: the spec pins 'nvidia-cublas' but the package says 'nvidia-cuda-runtime'" \
  "$(spec "[$(whl "$rt" "$(sha "$rt")" nvidia-cublas 13.0.96)]" "$ok_installed" '{}')"
refused 4 "\$.layers[0].wheels[0].version: the spec pins '13.0.97' but the package says '13.0.96'" \
  "$(spec "[$(whl "$rt" "$(sha "$rt")" nvidia-cuda-runtime 13.0.97)]" "$ok_installed" '{}')"
refused 4 "\$.layers[1].installed_wheels[0].version: the spec pins '9.19.1' but the package says '9.19.0.56'" \
  "$(spec "$wheels" "[$(installed 9.19.1 "$record_sha")]" '{}')"
refused 4 "\$.layers[1].installed_wheels[0].record_sha256: the spec pins sha256:$zero but nvidia_cudnn_cu13-9.19.0.56.dist-info/RECORD is sha256:$record_sha" \
  "$(spec "$wheels" "[$(installed 9.19.0.56 "$zero")]" '{}')"
refused 4 "\$.stack.nccl: the spec pins '2.27' but \$.layers[0].wheels[1] (nvidia-nccl-cu13) is version '2.28.9'" \
  "$(spec "$wheels" "$ok_installed" '{"nccl":"2.27"}')"
refused 4 "\$.stack.cudnn: the spec pins '9.19.0.5' but" "$(spec "$wheels" "$ok_installed" '{"cudnn":"9.19.0.5"}')"
refused 2 "\$.stack.cublas: '13.1' is pinned but no package of the spec provides cublas" \
  "$(spec "$wheels" "$ok_installed" '{"cublas":"13.1"}')"
refused 2 "\$.layers[0].wheels[0].prefix: required" \
  "$(spec "[{\"src\":\"x.whl\",\"sha256\":\"$zero\",\"name\":\"a\",\"version\":\"1\"}]" "$ok_installed" '{}')"

# A tampered installed file, or a wheel whose RECORD lies, is an integrity failure.
cp site/lib/libnvidia_cudnn_cu13.so.1 lib.bak && echo tampered >>site/lib/libnvidia_cudnn_cu13.so.1
refused 4 "lib/libnvidia_cudnn_cu13.so.1" "$(spec "$wheels" "$ok_installed" '{}')"
mv lib.bak site/lib/libnvidia_cudnn_cu13.so.1
mkdir -p lie && (cd lie && unzip -q "../$nccl" && echo extra >>nvidia/nccl/lib/libnvidia_nccl_cu13.so.1 && zip -q -r ../wheels/lie.whl .)
refused 4 "nvidia/nccl/lib/libnvidia_nccl_cu13.so.1" \
  "$(spec "[$(whl wheels/lie.whl "$(sha wheels/lie.whl)" nvidia-nccl-cu13 2.28.9)]" "$ok_installed" '{}')"

# Plain-file specs keep today's behaviour: a pin with no package is a label only.
printf 'x\n' >f && printf '{"base":"scratch","user":{"name":"t","uid":1,"gid":1},"layers":[{"files":[{"src":"f","dest":"/f"}]}],"stack":{"cuda":"13.0"}}' >plain.json
expect_exit 0 build plain.json -o "oci:$WORK/plain:v1" -q
pass "a spec without packages keeps its pins as labels"
