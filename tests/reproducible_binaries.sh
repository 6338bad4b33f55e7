#!/usr/bin/env bash
# Our own binaries are reproducible (issue 19). The golden image ships trainer,
# imgtool-fleet and, where nvcc is found, libtrainer_cuda.so; built from the same commit in
# another clone path (a longer one, another build folder, under another umask, TZ and
# locale) they are byte for byte this build's. The CUDA plugin is also rebuilt from scratch in that folder: nvcc used
# to name its temporary files by process id, and the host compiler wrote that name in.
# The other clone is this checkout's files as git sees them (edits and new files included),
# configured as this build is (Release; IMGTOOL_CUDA and the CUDA architectures as here).
# Cost: one build of the three targets and what they link (about 3 min on 2 cores).
source "$(dirname "$0")/lib.sh"
BUILD=$(cd "$(dirname "$IMGTOOL")/.." && pwd)
cache() { sed -n "s/^$1:[A-Z]*=//p" "$BUILD/CMakeCache.txt"; }
files=(trainer/trainer imgtool/imgtool-fleet)
targets=(trainer imgtool-fleet)
args=(-DCMAKE_BUILD_TYPE=Release "-DIMGTOOL_CUDA=$(cache IMGTOOL_CUDA)")
if [ -f "$BUILD/trainer/libtrainer_cuda.so" ]; then
  files+=(trainer/libtrainer_cuda.so)
  targets+=(trainer_cuda)
  arch=$(cache CMAKE_CUDA_ARCHITECTURES)  # cached only when given; trainer/ defaults it
  [ -z "$arch" ] || args+=("-DCMAKE_CUDA_ARCHITECTURES=$arch")
else
  echo "note: this build has no CUDA plugin (no nvcc here): trainer and imgtool-fleet only"
fi
for f in "${files[@]}"; do [ -f "$BUILD/$f" ] || fail "no $BUILD/$f: build the suite first"; done
rel=out/another-build-folder  # not this build's folder name either

clone=$WORK/another/and/much/longer/clone/path/imgtool
mkdir -p "$clone"
git -C "$REPO" ls-files -z --cached --others --exclude-standard | (cd "$REPO" && tar --null -T - -cf -) | tar -xf - -C "$clone"
t0=$SECONDS
(cd "$clone" && umask 077 && export TZ=Pacific/Chatham LC_ALL=C.UTF-8 &&
  cmake -S . -B "$rel" -G Ninja "${args[@]}" >"$WORK/configure.log" 2>&1 &&
  cmake --build "$rel" --parallel "$(nproc)" --target "${targets[@]}" >"$WORK/build.log" 2>&1) ||
  fail "building in $clone: $(cat "$WORK/configure.log" "$WORK/build.log" 2>/dev/null | tail -20)"
pass "built ${targets[*]} in another clone path in $((SECONDS - t0)) s"

same() {  # LABEL: every file equal in $BUILD and the clone
  local f a b
  for f in "${files[@]}"; do
    a=$(sha256sum <"$BUILD/$f" | cut -c1-64)
    b=$(sha256sum <"$clone/$rel/$f" | cut -c1-64)
    [ "$a" = "$b" ] || fail "$f differs $1: $a here, $b there"
    echo "    ${f##*/} sha256:$a"
  done
}
same "between the two clone paths"
pass "trainer and imgtool-fleet${targets[2]:+ and libtrainer_cuda.so} are byte-identical from two clone paths"
if [ -n "${targets[2]:-}" ]; then
  ninja -C "$clone/$rel" -t clean trainer_cuda trainer_cuda_impl >/dev/null
  cmake --build "$clone/$rel" --target trainer_cuda >>"$WORK/build.log" 2>&1 || fail "rebuilding the CUDA plugin"
  same "after rebuilding the CUDA plugin in the same folder"
  pass "libtrainer_cuda.so rebuilt from scratch in the same folder: the same bytes"
fi
