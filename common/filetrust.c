/* Ownership and mode rules for files a program trusts: see filetrust.h. */
#include "filetrust.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *who(mode_t m, mode_t grp, mode_t oth)
{
    if ((m & grp) && (m & oth))
        return "group and others";
    return (m & grp) ? "group" : "others";
}

int kn_filetrust_stat(const struct stat *st, uid_t self, unsigned flags, char *why, size_t len)
{
    char owner[96] = "", wbits[64] = "", rbits[64] = "";
    mode_t m = st->st_mode;
    bool bad_owner = st->st_uid != 0 && st->st_uid != self;
    if (bad_owner)
        snprintf(owner, sizeof owner, " (neither root nor uid %u)", (unsigned)self);
    if (m & (S_IWGRP | S_IWOTH))
        snprintf(wbits, sizeof wbits, "writable by %s", who(m, S_IWGRP, S_IWOTH));
    if ((flags & KN_FILETRUST_SECRET) && (m & (S_IRGRP | S_IROTH)))
        snprintf(rbits, sizeof rbits, "readable by %s", who(m, S_IRGRP, S_IROTH));
    if (!bad_owner && !wbits[0] && !rbits[0])
        return 0;
    snprintf(why, len, "owner uid %u%s, mode %04o%s%s%s%s%s", (unsigned)st->st_uid, owner,
             (unsigned)(m & 07777), wbits[0] || rbits[0] ? " (" : "", wbits,
             wbits[0] && rbits[0] ? ", " : "", rbits, wbits[0] || rbits[0] ? ")" : "");
    return -1;
}

void kn_filetrust_expected(uid_t self, unsigned flags, char *buf, size_t len)
{
    if (self == 0)
        snprintf(buf, len, "owned by root and %s by its owner only",
                 flags & KN_FILETRUST_SECRET ? "readable and writable" : "writable");
    else
        snprintf(buf, len, "owned by root or uid %u and %s by its owner only", (unsigned)self,
                 flags & KN_FILETRUST_SECRET ? "readable and writable" : "writable");
}

int kn_filetrust_path(const char *path, unsigned flags, char *why, size_t len)
{
    struct stat st;
    if (stat(path, &st) < 0) {
        snprintf(why, len, "%s: %s", path, strerror(errno));
        return -1;
    }
    return kn_filetrust_stat(&st, geteuid(), flags, why, len);
}
