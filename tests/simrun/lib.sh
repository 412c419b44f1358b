# Shared by the scenario run tests of this folder (sourced, not run): a
# temporary folder removed at exit together with any load still running,
# fail, the flags to build a test controller with, and every core made
# busy for a loaded run.

tmp=$(mktemp -d)
loads=''
trap 'for p in $loads; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# The compiler and flags for a test controller; SANITIZE (meson's
# b_sanitize) builds it with the sanitizers of the library it will load.
# Skips the test (77) without a compiler.
cc_setup() { # SANITIZE
    cc=${CC:-cc}
    cflags='-std=c11 -Wall -Werror'
    [ "$1" = none ] || [ -z "$1" ] || cflags="$cflags -fsanitize=$1"
    command -v "$cc" >/dev/null 2>&1 || { echo "SKIP: no C compiler ($cc) to build the test controller"; exit 77; }
}

# One busy loop per core (at least two), until load_stop.
load_start() {
    cores=$(nproc 2>/dev/null || echo 2)
    [ "$cores" -ge 2 ] || cores=2
    i=0
    while [ "$i" -lt "$cores" ]; do
        sh -c 'while :; do :; done' &
        loads="$loads $!"
        i=$((i + 1))
    done
}

load_stop() {
    for p in $loads; do kill "$p"; done
    loads=''
}
