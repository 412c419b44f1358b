#!/bin/sh
# Checks what a built libkenaf.so.1 exports: exactly the functions kenaf.h
# declares, every one in version node KENAF_1, and the soname libkenaf.so.1.
#   check_exports.sh LIBRARY HEADER
set -eu
lib=$1
header=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Declared API: every "HRT_API <type> hrt_name(" in the header.
sed -n 's/^HRT_API .*[ *]\(hrt_[a-z_]*\)(.*/\1/p' "$header" | sort >"$tmp/declared"
[ -s "$tmp/declared" ] || { echo "no hrt_* declarations found in $header"; exit 1; }

# Defined dynamic symbols (name@@VERSION), whatever they are, except the
# version node itself (an absolute symbol named KENAF_1).
nm -D --defined-only --with-symbol-versions "$lib" |
    awk '!($2 == "A" && $3 !~ /@/) {print $3}' | sort >"$tmp/exported"
sed 's/@.*//' "$tmp/exported" | sort >"$tmp/names"

status=0
if ! diff -u "$tmp/declared" "$tmp/names" >"$tmp/diff"; then
    echo "exported symbols differ from kenaf.h (- declared only, + exported only):"
    cat "$tmp/diff"
    status=1
fi
if grep -v '@@KENAF_1$' "$tmp/exported" >"$tmp/unversioned"; then
    echo "symbols outside version KENAF_1:"
    cat "$tmp/unversioned"
    status=1
fi
soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\].*/\1/p')
if [ "$soname" != "libkenaf.so.1" ]; then
    echo "soname is '$soname', expected libkenaf.so.1"
    status=1
fi
[ $status -eq 0 ] && echo "ok: $(wc -l <"$tmp/declared") hrt_* symbols, version KENAF_1, soname $soname"
exit $status
