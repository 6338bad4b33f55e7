# shellcheck shell=bash
# Helpers for the tests that run arm64 binaries under qemu-user beside x86-64 ones
# (label cross): skip unless the cross toolchain, qemu and the arm64 sysroot are here
# (IMGTOOL_ARM64=1 scripts/setup installs all three), and build arm64 targets into
# $ARM_BUILD (default build-arm64 in the source tree; configured on first use).
# Source after lib.sh.
SYSROOT="${IMGTOOL_ARM64_SYSROOT:-$REPO/.cache/arm64-sysroot}"
ARM_BUILD="${ARM_BUILD:-$REPO/build-arm64}"

skip() {
  echo "SKIP: $*" >&2
  exit 77
}
# What is missing for an arm64 build and run here, or nothing.
cross_missing() {
  if ! command -v aarch64-linux-gnu-g++ >/dev/null; then
    echo "no aarch64-linux-gnu-g++ (apt-get install crossbuild-essential-arm64)"
  elif ! command -v qemu-aarch64 >/dev/null; then
    echo "no qemu-aarch64 (apt-get install qemu-user)"
  elif [[ ! -d $SYSROOT/usr/include/aarch64-linux-gnu ]]; then
    echo "no arm64 sysroot in $SYSROOT (scripts/arm64-sysroot)"
  elif ! "$REPO/scripts/arm64-sysroot" --check "$SYSROOT"; then
    # A library the build gained since (libre2-dev, say) would fail the configure.
    echo "the arm64 sysroot in $SYSROOT lacks packages scripts/arm64-sysroot now lists (run it again)"
  fi
}
cross_ready_or_skip() {
  local missing
  missing=$(cross_missing)
  [[ -z $missing ]] || skip "$missing"
}

# cross_build TARGET...: the arm64 targets, from ccache or nothing when current.
cross_build() {
  local launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  if [[ ! -f $ARM_BUILD/build.ninja ]]; then
    cmake -S "$REPO" -B "$ARM_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DIMGTOOL_CUDA=OFF \
      -DCMAKE_TOOLCHAIN_FILE="$REPO/cmake/toolchain-aarch64-linux-gnu.cmake" -DIMGTOOL_ARM64_SYSROOT="$SYSROOT" \
      "${launcher[@]}" >"$WORK/configure.log" 2>&1 || { tail -20 "$WORK/configure.log" >&2; fail "configuring $ARM_BUILD"; }
  fi
  cmake --build "$ARM_BUILD" --target "$@" >"$WORK/build.log" 2>&1 || { tail -30 "$WORK/build.log" >&2; fail "building arm64 $*"; }
}

# arm64_wrapper BINARY NAME: $WORK/NAME runs BINARY under qemu (exec: the pid is the
# emulated program's, so stopping it stops the program).
arm64_wrapper() {
  printf '#!/bin/sh\nexec qemu-aarch64 -L "%s" "%s" "$@"\n' "$SYSROOT" "$1" >"$WORK/$2"
  chmod +x "$WORK/$2"
  echo "$WORK/$2"
}
