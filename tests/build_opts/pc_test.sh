#!/bin/sh
# kenaf.pc and kenaf-rpath.pc as generated in the build tree, read by the
# real pkg-config: kenaf links without an rpath (a controller copied to the
# robot must load the robot's library there), kenaf-rpath is kenaf plus one
# rpath to <libdir>/kenaf-sim.
#
#   pc_test.sh PKG_CONFIG PC_DIR LIBDIR INCLUDEDIR
set -eu
pkgconf=$1
dir=$2
libdir=$3
incdir=$4

fail() {
    echo "FAIL: $*"
    exit 1
}
# Only the build tree's files: a kenaf.pc installed on this machine must
# not answer instead.
pc() {
    PKG_CONFIG_LIBDIR=$dir PKG_CONFIG_PATH='' "$pkgconf" --with-path "$dir" "$@"
}
# pkg-config's answer with its spacing normalized
words() {
    out=$(pc "$@") || fail "pkg-config $* failed"
    echo $out
}
expect() {
    what=$1
    want=$2
    shift 2
    got=$(words "$@")
    [ "$got" = "$want" ] || fail "pkg-config $*: \"$got\", expected \"$want\" ($what)"
    echo "ok: pkg-config $*: $got"
}

sim="$libdir/kenaf-sim"
expect 'no rpath' "-L$sim -lkenaf" --libs kenaf
expect 'the header directory' "-I$incdir/kenaf-sim" --cflags kenaf
static=$(words --static --libs kenaf)
case "$static" in
*rpath*) fail "pkg-config --static --libs kenaf has an rpath: $static" ;;
esac
for w in -lkenaf -lpthread -lm; do
    case " $static " in
    *" $w "*) ;;
    *) fail "pkg-config --static --libs kenaf: \"$static\" lacks $w" ;;
    esac
done
echo "ok: pkg-config --static --libs kenaf: $static"

rlibs=$(words --libs kenaf-rpath)
n=0
for w in $rlibs; do
    case "$w" in
    *rpath*)
        [ "$w" = "-Wl,-rpath,$sim" ] || fail "kenaf-rpath's rpath is \"$w\", expected -Wl,-rpath,$sim"
        n=$((n + 1)) ;;
    esac
done
[ $n -eq 1 ] || fail "pkg-config --libs kenaf-rpath: \"$rlibs\" has $n rpaths, expected 1"
for w in "-L$sim" -lkenaf; do
    case " $rlibs " in
    *" $w "*) ;;
    *) fail "pkg-config --libs kenaf-rpath: \"$rlibs\" lacks kenaf's $w" ;;
    esac
done
echo "ok: pkg-config --libs kenaf-rpath: $rlibs"
expect 'the same header directory' "-I$incdir/kenaf-sim" --cflags kenaf-rpath
version=$(words --modversion kenaf)
expect 'kenaf-rpath requires kenaf of its own version' "kenaf = $version" --print-requires kenaf-rpath
