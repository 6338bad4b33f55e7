#!/usr/bin/env bash
# cmake --install and the .deb (README, "Install"): the install tree holds the binaries,
# a man page for every verb that renders without a warning, bash and zsh completions
# that load; cpack -G DEB twice gives the same bytes, lintian finds no error, and the
# package installed with dpkg into a fresh folder root (not this system) runs. Uses the
# build folder's outputs (the docs are part of ALL); cpack writes into $WORK only.
# Needs dpkg-dev, lintian, man-db, groff-base, zsh (scripts/setup); 77 without them.
source "$(dirname "$0")/lib.sh"
BUILD=$(cd "$(dirname "$IMGTOOL")/.." && pwd)
for tool in cpack dpkg-shlibdeps lintian man groff zsh; do
  command -v "$tool" >/dev/null || { echo "skip: no $tool here (scripts/setup installs it)"; exit 77; }
done
[ -f "$BUILD/docs/stamp" ] || fail "no $BUILD/docs: build the suite first (target imgtool_docs)"
t0=$SECONDS

dest=$WORK/dest
DESTDIR=$dest cmake --install "$BUILD" --prefix /usr >"$WORK/install.log" 2>&1 || fail "cmake --install: $(tail "$WORK/install.log")"
for f in bin/imgtool bin/imgtool-fleet share/man/man1/imgtool.1.gz share/man/man1/imgtool-fleet.1.gz \
  share/bash-completion/completions/imgtool share/zsh/vendor-completions/_imgtool share/doc/imgtool/copyright \
  share/doc/imgtool/changelog.gz share/imgtool/policies/golden.json share/imgtool/examples/golden/spec.json; do
  [ -f "$dest/usr/$f" ] || fail "cmake --install left out /usr/$f"
done
if [ -f "$(dirname "$TRAINER")/libtrainer_cuda.so" ]; then
  [ -f "$dest/usr/libexec/imgtool/libtrainer_cuda.so" ] || fail "the CUDA plugin is not beside the trainer"
fi
[ -x "$dest/usr/libexec/imgtool/trainer" ] || fail "no /usr/libexec/imgtool/trainer"
pass "cmake --install: binaries, trainer in libexec/imgtool, man pages, completions, data, copyright"

# Every verb of `imgtool --help` has a page (a group's verbs: imgtool-GROUP-*), and every
# page renders without a warning from man or groff.
man1=$dest/usr/share/man/man1
verbs=$("$IMGTOOL" --help | sed -n '/^Subcommands:/,$s/^  \([a-z][a-z-]*\) .*/\1/p')
[ "$(wc -w <<<"$verbs")" -ge 20 ] || fail "too few verbs in imgtool --help: $verbs"
for v in $verbs; do
  compgen -G "$man1/imgtool-$v.1.gz" >/dev/null || compgen -G "$man1/imgtool-$v-*.1.gz" >/dev/null ||
    fail "no man page for imgtool $v"
done
n=0
for page in "$man1"/*.1.gz; do
  out=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l "$page" 2>"$WORK/man.err") || fail "man -l $page"
  [ ! -s "$WORK/man.err" ] || fail "man -l ${page##*/} warns: $(cat "$WORK/man.err")"
  grep -q '^NAME' <<<"$out" || fail "${page##*/} has no NAME section"
  n=$((n + 1))
done
assert_contains "$(man -l "$man1/imgtool-build.1.gz" 2>/dev/null)" "--output" "imgtool-build(1)'s options"
pass "$n man pages render without warnings; every verb has one"

comp=$dest/usr/share/bash-completion/completions/imgtool
out=$(bash -c 'source "$1" && complete -p imgtool &&
  COMP_WORDS=(imgtool policy c) COMP_CWORD=2 && _imgtool && echo "${COMPREPLY[*]}" &&
  COMP_WORDS=(imgtool build --no-c) COMP_CWORD=2 && _imgtool && echo "${COMPREPLY[*]}"' _ "$comp")
assert_eq "$out" "complete -o default -F _imgtool imgtool
check
--no-cache" "bash completion"
zdir=$dest/usr/share/zsh/vendor-completions
zsh -n "$zdir/_imgtool" && zsh -n "$zdir/_imgtool-fleet" || fail "zsh cannot parse the completions"
out=$(zsh -fc 'fpath=("$1" $fpath); autoload -U compinit; compinit -u -D -d /dev/null; print -r -- $_comps[imgtool] $_comps[imgtool-fleet]' _ "$zdir")
assert_eq "$out" "_imgtool _imgtool-fleet" "zsh compinit registers the completions"
pass "bash completion completes verbs and options; zsh's parse and register with compinit"

# The package, twice: the same bytes (its times are the commit's, its modes fixed). lib.sh's
# SOURCE_DATE_EPOCH=0 is for images; the package takes the commit's time.
for i in 1 2; do
  (cd "$WORK" && unset SOURCE_DATE_EPOCH && cpack -G DEB --config "$BUILD/CPackConfig.cmake" -B "$WORK/pkg$i" >"$WORK/cpack$i.log" 2>&1) ||
    fail "cpack: $(tail "$WORK/cpack$i.log")"
done
deb=$(echo "$WORK"/pkg1/imgtool_*.deb)
[ -f "$deb" ] || fail "cpack wrote no .deb: $(ls "$WORK/pkg1")"
cmp "$deb" "$WORK/pkg2/${deb##*/}" || fail "two cpack runs gave different packages"
when=$(git -C "$REPO" log -1 --format=%cd --date=format-local:'%Y-%m-%d %H:%M' 2>/dev/null) || when=""
if [ -n "$when" ]; then
  assert_contains "$(TZ=UTC dpkg-deb -c "$deb" | sed -n 1p)" "$when" "the package's times (the commit's)"
fi
depends=$(dpkg-deb -f "$deb" Depends)
assert_contains "$depends" "libc6 (>=" "Depends from dpkg-shlibdeps"
assert_contains "$depends" "libarchive13" "Depends (libarchive: loaded with dlopen, cmake/cpack_options.cmake)"
assert_contains "$depends" "libcurl4" "Depends (libcurl: loaded with dlopen, cmake/cpack_options.cmake)"
if grep -q "libcudart\|libnccl\|libcudnn" <<<"$depends"; then fail "Depends names CUDA libraries: $depends"; fi
pass "cpack -G DEB twice: the same $(stat -c %s "$deb") bytes; Depends: $depends"

lintian --tag-display-limit 0 "$deb" >"$WORK/lintian.log" 2>&1 || true
if grep -q '^E: ' "$WORK/lintian.log"; then fail "lintian: $(grep '^E: ' "$WORK/lintian.log")"; fi
pass "lintian: no errors, $(grep -c '^W: ' "$WORK/lintian.log" || true) warnings"

# Installed into a fresh folder root: dpkg's database and files there, nothing on this system.
root=$WORK/root
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" "$root/var/lib/dpkg/triggers"
touch "$root/var/lib/dpkg/status" "$root/var/lib/dpkg/available"
dpkg --root="$root" --force-depends --log=/dev/null -i "$deb" >"$WORK/dpkg.log" 2>&1 || fail "dpkg -i: $(tail "$WORK/dpkg.log")"
assert_contains "$(dpkg --root="$root" -s imgtool)" "Status: install ok installed" "dpkg's database in the fresh root"
assert_contains "$("$root/usr/bin/imgtool" --help)" "Subcommands:" "the installed imgtool --help"
want=$("$IMGTOOL" version --json)
got=$("$root/usr/bin/imgtool" version --json)
assert_eq "$got" "$want" "the installed imgtool version --json"
head=$(git -C "$REPO" rev-parse HEAD 2>/dev/null || echo unknown)
assert_contains "$got" "\"commit\": \"$head" "the commit imgtool was built from"
assert_contains "$("$root/usr/bin/imgtool-fleet" --help)" "fleet" "the installed imgtool-fleet --help"
assert_contains "$("$root/usr/libexec/imgtool/trainer" --help 2>&1)" "Fashion-MNIST" "the installed trainer"
# admission serve loads its server module from ../libexec/imgtool: an address it cannot
# bind is the module's own error (exit 6), a module not found would be exit 70.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$WORK/k.pem" -out "$WORK/c.pem" \
  -days 2 -subj /CN=localhost 2>/dev/null
rc=0
out=$(timeout 30 "$root/usr/bin/imgtool" admission serve --policy "$REPO/policies/golden.json" --tls-cert "$WORK/c.pem" \
  --tls-key "$WORK/k.pem" --listen 192.0.2.1:1 2>&1) || rc=$?
assert_eq "$rc:$out" "6:imgtool: error: cannot listen on 192.0.2.1:1" "the installed admission serve (its module)"
pass "dpkg --root=<fresh folder> -i: imgtool --help and version --json run from there (commit ${head:0:12});" \
  "admission serve loads libexec/imgtool/imgtool-admission-server.so"
echo "it_install took $((SECONDS - t0)) s"
