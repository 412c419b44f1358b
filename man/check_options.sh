#!/bin/sh
# Keeps a program's man page honest about its command line: every long
# option the program's --help prints has an entry of its own in the page's
# OPTIONS, and every long option the page shows for the program (SYNOPSIS,
# OPTIONS, and the EXAMPLES lines that run it) is one --help prints. Also
# checks that the page has the sections every page here has.
#   check_options.sh PAGE.scd PROGRAM [HELP-ARGS...]
# Each HELP-ARGS is one command line (words split on spaces) that prints
# help and exits 0; default "--help". kenaf-engine has two: its server's
# and its scenario runner's.
set -eu
page=$1
prog=$2
shift 2
[ $# -gt 0 ] || set -- --help
name=$(basename "$prog")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

status=0
fail() {
    echo "$page: $*"
    status=1
}

# Long options: "--" then a letter or digit, as getopt_long spells them.
long_opts() {
    grep -oE -- '--[a-z0-9][a-z0-9-]*' | sort -u
}

: >"$tmp/help"
for args in "$@"; do
    # shellcheck disable=SC2086 # one command line, split into words on purpose
    if ! "$prog" $args >>"$tmp/help" 2>&1; then
        echo "$name $args: exit status not 0 (does not print help?)"
        exit 1
    fi
done
long_opts <"$tmp/help" >"$tmp/help_opts"
# --help is accepted: it just printed the text (kenaf-sim-run's text
# does not name it)
echo --help >>"$tmp/help_opts"
sort -u -o "$tmp/help_opts" "$tmp/help_opts"
[ "$(wc -l <"$tmp/help_opts")" -gt 1 ] || fail "$name --help prints no long options"

# The page's level-1 sections ("# NAME"); "## Sub" headings stay inside.
section() {
    awk -v want="$1" '/^# /{ on = (substr($0, 3) == want); next } on' "$page"
}
for s in NAME SYNOPSIS DESCRIPTION OPTIONS "EXIT STATUS" FILES EXAMPLES "SEE ALSO"; do
    grep -qx "# $s" "$page" || fail "no section \"# $s\""
done

# Entries of OPTIONS: term lines, "*--opt* _ARG_" or "*-c*, *--opt* _ARG_".
section OPTIONS | grep -E '^\*-' | long_opts >"$tmp/entries"
# Everything the page shows as this program's options.
{
    section SYNOPSIS
    section OPTIONS
    section EXAMPLES | grep -E "^(sudo )?$name( |\$)" || true
} | long_opts >"$tmp/shown"

for o in $(comm -23 "$tmp/help_opts" "$tmp/entries"); do
    fail "$o: $name --help prints it, OPTIONS has no entry for it"
done
for o in $(comm -13 "$tmp/help_opts" "$tmp/shown"); do
    fail "$o: the page shows it, $name --help does not print it"
done
[ $status -eq 0 ] &&
    echo "ok: $name: $(wc -l <"$tmp/help_opts") long options, each with its entry in $(basename "$page")"
exit $status
