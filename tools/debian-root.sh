# shellcheck shell=bash disable=SC2154
# Debian roots made with debootstrap, shared by tools/package-check and
# tools/run-interop (sourced, not run). The caller sets `work` (a scratch
# directory removed at exit) and calls kn_root_cleanup from its EXIT trap.
#   kn_root_setup               sets $mirror and $cache (creates $cache)
#   kn_root_base SUITE          ensures $cache/SUITE-minbase.tar; returns 77
#                               when debootstrap could not reach the archive
#   kn_root_mount ROOT DEBS     /proc, /dev, DEBS as apt's archive cache,
#                               resolv.conf; unmounted by kn_root_cleanup
#   kn_root_sources ROOT SUITE  apt's sources.list for SUITE on $mirror
#   kn_root_run ROOT CMD...     CMD in ROOT with a clean environment
#   kn_root_unmount_under DIR   unmounts whatever is mounted below DIR (left
#                               by a run that was killed), before rm -rf DIR
# KENAF_DEBIAN_MIRROR overrides the mirror (default: the host's first
# deb.debian.org-style URI); KENAF_CACHE the cache directory (default
# ~/.cache/kenaf-sim). Downloaded .debs stay in the cache, so a second
# build of a root needs no download. (SC2154: `work` is the caller's.)

kn_root_mounts=()

kn_root_setup() {
    mirror=${KENAF_DEBIAN_MIRROR:-}
    if [ -z "$mirror" ]; then
        mirror=$(sed -n 's/^URIs: *\(http[^ ]*debian\)$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n1)
        [ -n "$mirror" ] || mirror=http://deb.debian.org/debian
    fi
    cache=${KENAF_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kenaf-sim}
    mkdir -p "$cache"
}

kn_root_base() {
    local suite=$1 base="$cache/$1-minbase.tar"
    [ -s "$base" ] && return 0
    rm -rf "$work/base-$suite"
    if ! debootstrap --variant=minbase "$suite" "$work/base-$suite" "$mirror" >"$work/debootstrap-$suite.log" 2>&1; then
        tail -n 5 "$work/debootstrap-$suite.log" >&2
        rm -rf "$work/base-$suite"
        return 77
    fi
    tar -C "$work/base-$suite" -cf "$base.new" . && mv "$base.new" "$base"
    rm -rf "$work/base-$suite"
}

kn_root_bind() { mkdir -p "$2"; mount --bind "$1" "$2"; kn_root_mounts+=("$2"); }

kn_root_mount() {
    local root=$1 debs=$2
    mkdir -p "$debs" "$root/proc"
    mount -t proc proc "$root/proc"; kn_root_mounts+=("$root/proc")
    kn_root_bind /dev "$root/dev"
    kn_root_bind "$debs" "$root/var/cache/apt/archives"
    cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
}

kn_root_sources() { echo "deb $mirror $2 main" >"$1/etc/apt/sources.list"; }

kn_root_run() {
    local root=$1; shift
    chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 \
        DEBIAN_FRONTEND=noninteractive "$@"
}

kn_root_unmount_under() {
    local m
    # deepest first; mountinfo's 5th field is the mount point
    for m in $(awk -v d="$1/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r); do
        umount -l "$m" 2>/dev/null || true
    done
}

kn_root_cleanup() {
    local i
    for ((i = ${#kn_root_mounts[@]} - 1; i >= 0; i--)); do umount -l "${kn_root_mounts[i]}" 2>/dev/null || true; done
    kn_root_mounts=()
}
