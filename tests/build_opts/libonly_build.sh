#!/bin/sh
# A library-only build from this checkout, with pkg-config seeing nothing
# but check.pc (and what it requires): meson setup with the daemon, engine,
# console and view disabled, ninja, meson test; then installed, and
# examples/square built with kenaf.pc and with kenaf-rpath.pc and run:
#   - -Ddaemon=enabled there fails naming the Debian package, =auto leaves
#     the daemon out, and the log shows no library but Check (and the
#     library's optional nettle) looked up;
#   - pkg-config kenaf: no rpath; alone the binary finds no libkenaf.so.1
#     here, and it passes the drop-in proof (tests/lib/dropin_proof.sh)
#     with the installed kenaf-sim-run: the stand-in hardware library when
#     given that one, the square on the test robot through kenaf-sim-run;
#   - pkg-config kenaf-rpath: the rpath finds the simulation library alone.
#
#   libonly_build.sh SOURCE_ROOT CHECK_PC_DIR
# KN_KEEP_TMP=1 keeps the scratch directory.
set -eu
src=$1
check_pc_dir=$2
work=$(mktemp -d /tmp/kn-libonly-XXXXXX)
cleanup() {
    if [ "${KN_KEEP_TMP:-0}" = 1 ]; then
        echo "kept $work"
    else
        rm -rf "$work"
    fi
}
trap cleanup EXIT
# fail MESSAGE [LOG]: the end of LOG says why
fail() {
    echo "FAIL: $1"
    [ -z "${2:-}" ] || tail -n 40 "$2"
    exit 1
}

# pkg-config sees check.pc and nothing else (but the .pc files Check itself
# requires: Debian's check.pc names libsubunit).
mkdir "$work/pc"
copy_pc() {
    d=$(PKG_CONFIG_PATH=$check_pc_dir pkg-config --variable=pcfiledir "$1") && [ -f "$d/$1.pc" ] ||
        fail "no $1.pc for pkg-config"
    cp "$d/$1.pc" "$work/pc/"
    for r in $(PKG_CONFIG_PATH=$check_pc_dir pkg-config --print-requires "$1" | cut -d' ' -f1); do
        copy_pc "$r"
    done
}
copy_pc check
PKG_CONFIG_LIBDIR=$work/pc
PKG_CONFIG_PATH=''
export PKG_CONFIG_LIBDIR PKG_CONFIG_PATH
# The outer build's loader path must not help the binaries below.
unset LD_LIBRARY_PATH
libonly='-Ddaemon=disabled -Dengine=disabled -Dconsole=disabled -Dview=disabled'

# --- 1. what the options do without the daemon's libraries -------------
if meson setup "$work/enabled" "$src" -Ddaemon=enabled >"$work/enabled.log" 2>&1; then
    fail "-Ddaemon=enabled succeeded without libuv" "$work/enabled.log"
fi
grep -q 'install the Debian package "libuv1-dev"' "$work/enabled.log" ||
    fail "-Ddaemon=enabled did not name the Debian package libuv1-dev" "$work/enabled.log"
echo "ok: -Ddaemon=enabled fails: $(grep -o 'kenaf-sim -Ddaemon=enabled needs libuv[^;]*' "$work/enabled.log" | head -n 1)"
meson setup "$work/auto" "$src" -Dengine=disabled -Dconsole=disabled -Dview=disabled \
    >"$work/auto.log" 2>&1 || fail "-Ddaemon=auto without libuv failed" "$work/auto.log"
grep -q 'daemon left out (-Ddaemon=auto)' "$work/auto.log" || fail "-Ddaemon=auto did not say it left the daemon out" "$work/auto.log"
echo "ok: -Ddaemon=auto leaves the daemon out"

# --- 2. set up, build and test the library alone ----------------------------
# shellcheck disable=SC2086
meson setup "$work/build" "$src" $libonly --prefix "$work/inst" >"$work/setup.log" 2>&1 ||
    fail "meson setup $libonly failed" "$work/setup.log"
log="$work/build/meson-logs/meson-log.txt"
looked=$(sed -n 's/^\(Run-time \)\{0,1\}[Dd]ependency \([^ ]*\) found.*/\2/p' "$log" | sort -u | tr '\n' ' ')
for d in $looked; do
    case "$d" in
    # nettle: the library's own optional shared-key signing (-Dkeys=auto),
    # looked up and left out when missing
    check | threads | nettle) ;;
    *) fail "the library-only setup looked up $d (all: $looked)" ;;
    esac
done
! grep -q '^Program protoc-c' "$log" || fail "the library-only setup looked for protoc-c"
echo "ok: dependencies looked up: $looked"

ninja -C "$work/build" -j 2 >"$work/ninja.log" 2>&1 || fail "ninja failed" "$work/ninja.log"
for f in libkenaf_sim/libkenaf.so.1 tools/kenaf-sim-run tools/trace/kenaf-trace \
    tools/replay/kenaf-replay examples/square examples/teleop; do
    [ -e "$work/build/$f" ] || fail "$f was not built"
done
for f in daemon/kenaf-simd engine/kenaf-engine tools/console/kenaf-console tools/view/kenaf-view; do
    [ ! -e "$work/build/$f" ] || fail "$f was built in a library-only build"
done
# Its slow suite holds only this test: not again from inside.
meson test -C "$work/build" --num-processes 2 --no-suite slow --print-errorlogs \
    >"$work/test.log" 2>&1 || fail "meson test of the library-only build failed" "$work/test.log"
ok=$(sed -n 's/^Ok: *\([0-9]*\).*/\1/p' "$work/test.log" | tail -n 1)
[ "${ok:-0}" -gt 0 ] || fail "the library-only build ran no test" "$work/test.log"
for t in libkenaf-core libkenaf-api libkenaf-link kenaf-sim-run kenaf-dropin kenaf-pc; do
    grep -q " $t  *OK" "$work/test.log" || fail "test $t did not pass in the library-only build" "$work/test.log"
done
echo "ok: library-only build: $ok tests passed"

# --- 3. installed: build a controller both ways ----------------------------
meson install -C "$work/build" --quiet >"$work/install.log" 2>&1 || fail "meson install failed" "$work/install.log"
pc=$(find "$work/inst" -name kenaf.pc)
[ -n "$pc" ] && [ -f "$(dirname "$pc")/kenaf-rpath.pc" ] || fail "kenaf.pc and kenaf-rpath.pc not both installed"
PKG_CONFIG_LIBDIR=$(dirname "$pc")
simlib=$(pkg-config --variable=libdir kenaf)/kenaf-sim
cc=${CC:-cc}
# shellcheck disable=SC2046
$cc -o "$work/square" "$src/examples/square.c" $(pkg-config --cflags --libs kenaf) \
    >"$work/cc.log" 2>&1 || fail "cc with pkg-config kenaf failed" "$work/cc.log"
! readelf -d "$work/square" | grep -q '(RPATH)\|(RUNPATH)' || fail "square built with kenaf.pc has an rpath"

# Alone it finds no libkenaf.so.1 here (on the robot it would load the
# robot's); then the drop-in proof with this binary as both the simulation
# build and the hardware build, run through the installed kenaf-sim-run.
if "$work/square" >"$work/direct.out" 2>"$work/direct.err"; then
    fail "square without the simulation library on the path ran"
fi
grep -q 'libkenaf\.so\.1' "$work/direct.err" || fail "square alone did not fail on loading libkenaf.so.1" "$work/direct.err"
sh "$src/tests/lib/dropin_proof.sh" "$work/inst/bin/kenaf-sim-run" "$work/square" "$work/square" \
    "$work/build/tests/lib/hwlib" "$work/build/tests/lib/krp_robot" >"$work/dropin.log" 2>&1 ||
    fail "the drop-in proof failed with square built by pkg-config kenaf" "$work/dropin.log"
echo "ok: built with kenaf.pc: no rpath; passes the drop-in proof with the installed kenaf-sim-run"

# shellcheck disable=SC2046
$cc -o "$work/square-rpath" "$src/examples/square.c" $(pkg-config --cflags --libs kenaf-rpath) \
    >"$work/cc-rpath.log" 2>&1 || fail "cc with pkg-config kenaf-rpath failed" "$work/cc-rpath.log"
readelf -d "$work/square-rpath" | grep -q "(R[UN]*PATH).*\[$simlib\]" ||
    fail "square built with kenaf-rpath.pc has no rpath to $simlib"
ldd "$work/square-rpath" | grep -q "libkenaf\.so\.1 => $simlib/libkenaf\.so\.1" ||
    fail "square built with kenaf-rpath.pc does not load $simlib/libkenaf.so.1"
echo "ok: built with kenaf-rpath.pc: loads $simlib/libkenaf.so.1 by itself"
