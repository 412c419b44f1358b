/* Shared keys from key files: hex text behind the SECRET file rule
 * (keyfile.h). */
#include "keyfile.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "filetrust.h"

/* 0..15 for a hex digit of either case, -1 otherwise. */
static int digit_value(char c)
{
    static const char digits[] = "0123456789abcdef";
    const char *p = c ? strchr(digits, tolower((unsigned char)c)) : NULL;
    return p ? (int)(p - digits) : -1;
}

int kn_keyfile_parse(const char *text, size_t len, uint8_t *key, size_t *keylen, char *why,
                     size_t whylen)
{
    size_t digits = 0;
    int hi = -1;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
            continue;
        int v = digit_value(c);
        if (v < 0) {
            snprintf(why, whylen, "byte %zu is not a hex digit (the key is 64 to %d hex digits)", i,
                     2 * KN_KEYFILE_MAX);
            return -1;
        }
        if (digits >= 2 * KN_KEYFILE_MAX) {
            snprintf(why, whylen, "more than %d hex digits (a key is %d to %d bytes)",
                     2 * KN_KEYFILE_MAX, KN_KEYFILE_MIN, KN_KEYFILE_MAX);
            return -1;
        }
        if (hi < 0) {
            hi = v;
        } else {
            key[digits / 2] = (uint8_t)(hi << 4 | v);
            hi = -1;
        }
        digits++;
    }
    if (hi >= 0) {
        snprintf(why, whylen, "an odd number of hex digits (%zu)", digits);
        return -1;
    }
    if (digits < 2 * KN_KEYFILE_MIN) {
        snprintf(why, whylen,
                 "%zu hex digits, at least %d needed (%d bytes; e.g. from "
                 "'od -An -tx1 -N32 /dev/urandom')",
                 digits, 2 * KN_KEYFILE_MIN, KN_KEYFILE_MIN);
        return -1;
    }
    *keylen = digits / 2;
    return 0;
}

int kn_keyfile_read(const char *path, uint8_t *key, size_t *keylen, char *why, size_t whylen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        snprintf(why, whylen, "%s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    char bad[160], want[160];
    if (fstat(fd, &st) < 0) {
        snprintf(why, whylen, "%s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(why, whylen, "%s: not a regular file", path);
        close(fd);
        return -1;
    }
    if (kn_filetrust_stat(&st, geteuid(), KN_FILETRUST_SECRET, bad, sizeof bad) < 0) {
        kn_filetrust_expected(geteuid(), KN_FILETRUST_SECRET, want, sizeof want);
        snprintf(why, whylen, "%s: %s; a key file must be %s (chmod 600)", path, bad, want);
        close(fd);
        return -1;
    }
    /* Hex, whitespace and a comment-free file: 1 KiB is plenty. */
    char text[1024];
    size_t n = 0;
    for (;;) {
        ssize_t r = read(fd, text + n, sizeof text - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            snprintf(why, whylen, "%s: %s", path, strerror(errno));
            close(fd);
            return -1;
        }
        if (r == 0)
            break;
        n += (size_t)r;
        if (n == sizeof text) {
            snprintf(why, whylen, "%s: longer than %zu bytes (a key is %d to %d bytes in hex)",
                     path, sizeof text - 1, KN_KEYFILE_MIN, KN_KEYFILE_MAX);
            close(fd);
            return -1;
        }
    }
    close(fd);
    char perr[160];
    int rc = kn_keyfile_parse(text, n, key, keylen, perr, sizeof perr);
    explicit_bzero(text, sizeof text);
    if (rc < 0)
        snprintf(why, whylen, "%s: %s", path, perr);
    return rc;
}
