#!/bin/sh
# Renders each generated man page as a reader gets it and fails on any
# warning: groff with every warning on, and man-db's "man -l" (through its
# preprocessors) when it is installed.
#   check_render.sh PAGE...
set -eu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
have_man=0
command -v man >/dev/null 2>&1 && have_man=1

status=0
for page in "$@"; do
    name=$(basename "$page")
    if ! groff -man -Tutf8 -ww -z "$page" 2>"$tmp/err" || [ -s "$tmp/err" ]; then
        echo "$name: groff -man -ww:"
        cat "$tmp/err"
        status=1
    fi
    if [ $have_man -eq 1 ]; then
        if ! MANWIDTH=80 man --warnings=w -l "$page" >"$tmp/out" 2>"$tmp/err" ||
            [ -s "$tmp/err" ]; then
            echo "$name: man --warnings -l:"
            cat "$tmp/err"
            status=1
        fi
        # a page that rendered to (almost) nothing is broken too
        [ "$(wc -l <"$tmp/out")" -gt 20 ] || { echo "$name: man -l printed almost nothing"; status=1; }
    fi
done
[ $status -eq 0 ] && echo "ok: $# pages render without warnings$([ $have_man -eq 1 ] || echo ' (groff only: no man)')"
exit $status
