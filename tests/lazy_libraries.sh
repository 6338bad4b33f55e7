#!/usr/bin/env bash
# libcurl and libarchive are loaded only by the verbs that use them (imgtool/fs/
# shared_library.h), cpp-httplib only by `admission serve` (admission/server_module.h):
# `digest`, `verify` (with and without --key, --full) of a layout and `verify-blob` map none (the loader's own account, LD_DEBUG=files, and a broken copy
# of each first on LD_LIBRARY_PATH that those verbs never notice); a registry verb loads
# libcurl and works, `copy` to an oci-archive loads libarchive and works; and with the
# broken copies, the verbs that need them fail naming the library (exit 70).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/registry_lib.sh"
cases=$REPO/tests/fixtures/sigstore/conformance
L="oci:$WORK/small:v1"
digest=$(make_image "$L" 4 4)
openssl ecparam -name prime256v1 -genkey -noout -out "$WORK/k.pem" 2>/dev/null
openssl ec -in "$WORK/k.pem" -pubout -out "$WORK/k.pub" 2>/dev/null
COSIGN_PASSWORD=x "$IMGTOOL" keygen --output-key-prefix "$WORK/ck" >/dev/null 2>&1
COSIGN_PASSWORD=x "$IMGTOOL" sign --key "$WORK/ck.key" "$L" >/dev/null
blob=(verify-blob --bundle "$cases/managed-key-happy-path/bundle.sigstore.json"
  --key "$cases/managed-key-happy-path/key.pub" "$cases/a.txt")

# The shared objects the loader opened for one run (LD_DEBUG=files, into a file so the
# verb's own stderr stays apart); the verb must succeed.
loaded() {  # ARGS...
  rm -f "$WORK"/ld.*
  LD_DEBUG=files LD_DEBUG_OUTPUT="$WORK/ld" "$IMGTOOL" "$@" >"$WORK/out" 2>&1 ||
    fail "imgtool $* failed: $(cat "$WORK/out")"
  sed -n 's/.*file=\([^ ]*\) \[.*/\1/p' "$WORK"/ld.* | sort -u
}
lean() {  # ARGS...: neither library, and the account is real (libcrypto is in it)
  local objects
  objects=$(loaded "$@")
  assert_contains "$objects" "libcrypto.so.3" "LD_DEBUG=files for imgtool $*"
  if grep -E "^lib(curl\.so\.4|archive\.so\.13|cpp-httplib\.so\..*)$|admission-server" <<<"$objects"; then
    fail "imgtool $* loaded the above"
  fi
}
lean digest "$L"
lean verify "$L"
lean verify --full "$L"
lean verify --key "$WORK/ck.pub" "$L"
IMGTOOL_CACHE="$WORK/cold" lean verify "$L"
lean "${blob[@]}"
pass "digest, verify (--full, --key, a cold cache) and verify-blob --key load neither libcurl nor libarchive" \
  "(nor cpp-httplib: the admission server is a module, loaded by admission serve, tests/admission_*.sh)"

start_registry plain
R="docker://$REG_HOST/lazy/small:v1"
"$IMGTOOL" copy -q "$L" "$R" >/dev/null
assert_contains "$(loaded digest "$R")" "libcurl.so.4" "digest docker://"
assert_eq "$(cat "$WORK/out")" "$digest" "digest docker://"
assert_contains "$(loaded verify "$R")" "libcurl.so.4" "verify docker://"
assert_contains "$(loaded copy -q "$L" "oci-archive:$WORK/small.tar")" "libarchive.so.13" "copy to oci-archive"
assert_eq "$("$IMGTOOL" digest "oci-archive:$WORK/small.tar")" "$digest" "digest of the oci-archive"
pass "a registry verb loads libcurl when it needs it (digest, verify docker://); copy to oci-archive loads libarchive"

# Broken copies first on the search path: the lean verbs never open them; the others say so.
mkdir -p "$WORK/broken"
echo "not a library" >"$WORK/broken/libcurl.so.4"
echo "not a library" >"$WORK/broken/libarchive.so.13"
export LD_LIBRARY_PATH="$WORK/broken${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
assert_eq "$("$IMGTOOL" digest "$L")" "$digest" "digest with a broken libcurl on LD_LIBRARY_PATH"
"$IMGTOOL" verify --key "$WORK/ck.pub" "$L" >/dev/null
"$IMGTOOL" "${blob[@]}" >/dev/null
rc=0
out=$("$IMGTOOL" digest "$R" 2>&1) || rc=$?
assert_eq "$rc" 70 "digest docker:// with a broken libcurl: exit"
assert_contains "$out" "cannot load libcurl.so.4: $WORK/broken/libcurl.so.4:" "digest docker:// with a broken libcurl"
rc=0
out=$("$IMGTOOL" copy -q "$L" "oci-archive:$WORK/again.tar" 2>&1) || rc=$?
assert_eq "$rc" 70 "copy to oci-archive with a broken libarchive: exit"
assert_contains "$out" "cannot load libarchive.so.13: $WORK/broken/libarchive.so.13:" "copy with a broken libarchive"
[ ! -e "$WORK/again.tar" ] || fail "a failed copy left $WORK/again.tar"
pass "with broken copies first on LD_LIBRARY_PATH: digest, verify --key, verify-blob work; digest docker:// and" \
  "copy to oci-archive exit 70 naming the library"
