#!/bin/sh
# Keeps kenaf-simd.json(5) complete against the config's JSON Schema: every
# key the schema defines has an entry in one of the page's "... KEYS"
# sections, and every key those entries name is one the schema defines.
#   check_schema_keys.sh SCHEMA.json PAGE.scd
# An entry is a term line: "*robots*", "*limits.max_speed_mm_s*",
# "*flippers.FL*, *flippers.FR*"; each dotted part counts as a key.
set -eu
schema=$1
page=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# A key of the schema is a name whose value is an object ("name": {),
# other than the schema's own keywords that hold objects.
grep -oE '"[A-Za-z0-9_]+" *: *\{' "$schema" | sed 's/^"\([^"]*\)".*/\1/' |
    grep -vxE 'properties|items|\$defs|definitions' | sort -u >"$tmp/schema"
[ -s "$tmp/schema" ] || { echo "$schema: no keys found"; exit 1; }

awk '/^# /{ on = ($0 ~ / KEYS$/); next } on && /^\*/' "$page" |
    grep -oE '\*[A-Za-z0-9_.]+\*' | tr -d '*' | tr '.' '\n' | sort -u >"$tmp/page"
[ -s "$tmp/page" ] || { echo "$page: no \"# ... KEYS\" section with entries"; exit 1; }

status=0
for k in $(comm -23 "$tmp/schema" "$tmp/page"); do
    echo "$page: key \"$k\" of $(basename "$schema") has no entry"
    status=1
done
for k in $(comm -13 "$tmp/schema" "$tmp/page"); do
    echo "$page: an entry names \"$k\", which $(basename "$schema") does not define"
    status=1
done
[ $status -eq 0 ] && echo "ok: $(wc -l <"$tmp/schema") schema keys, each with its entry"
exit $status
