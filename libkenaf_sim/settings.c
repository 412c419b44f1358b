/* KENAF_ROBOT / KENAF_TIMEOUT_MS / KENAF_STATUS_MS / KENAF_DEBUG: a bad value
 * is refused with a reason instead of silently falling back, since a
 * controller aimed at the wrong robot is worse than one that does not start. */
#include "settings.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int kn_settings_parse_int(const char *s, long min, long max, int *out)
{
    if (s == NULL || *s == '\0' || isspace((unsigned char)*s))
        return -1;
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < min || v > max)
        return -1;
    *out = (int)v;
    return 0;
}

static int copy_part(char *dst, size_t cap, const char *src, size_t n)
{
    if (n == 0 || n >= cap)
        return -1;
    memcpy(dst, src, n);
    dst[n] = '\0';
    return 0;
}

int kn_settings_parse_robot(const char *s, char *host, size_t hostlen, char *port, size_t portlen,
                            char *err, size_t errlen)
{
    const char *h = s, *p = NULL;
    size_t hn;

    if (s == NULL || *s == '\0') {
        snprintf(err, errlen, "empty address");
        return -1;
    }
    if (s[0] == '[') {
        const char *close = strchr(s, ']');
        if (close == NULL) {
            snprintf(err, errlen, "'%s': missing ']'", s);
            return -1;
        }
        h = s + 1;
        hn = (size_t)(close - h);
        if (close[1] == ':')
            p = close + 2;
        else if (close[1] != '\0') {
            snprintf(err, errlen, "'%s': expected ':port' after ']'", s);
            return -1;
        }
    } else {
        const char *colon = strchr(s, ':');
        if (colon != NULL && strchr(colon + 1, ':') != NULL) {
            hn = strlen(s); /* bare IPv6 address, no port */
        } else if (colon != NULL) {
            hn = (size_t)(colon - s);
            p = colon + 1;
        } else {
            hn = strlen(s);
        }
    }
    if (copy_part(host, hostlen, h, hn) != 0) {
        snprintf(err, errlen, "'%s': empty or too long host", s);
        return -1;
    }
    int portnum = 9750;
    if (p != NULL && kn_settings_parse_int(p, 1, 65535, &portnum) != 0) {
        snprintf(err, errlen, "'%s': port must be 1..65535", s);
        return -1;
    }
    if (snprintf(port, portlen, "%d", portnum) >= (int)portlen) {
        snprintf(err, errlen, "port buffer too small");
        return -1;
    }
    return 0;
}

static int load_int(const char *name, long min, long max, int def, int *out, char *err,
                    size_t errlen)
{
    const char *v = getenv(name);
    if (v == NULL || *v == '\0') {
        *out = def;
        return 0;
    }
    if (kn_settings_parse_int(v, min, max, out) != 0) {
        snprintf(err, errlen, "%s='%s': expected an integer in %ld..%ld", name, v, min, max);
        return -1;
    }
    return 0;
}

int kn_settings_load(struct kn_settings *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    const char *dbg = getenv("KENAF_DEBUG");
    out->debug = dbg != NULL && strcmp(dbg, "1") == 0;

    const char *robot = getenv("KENAF_ROBOT");
    if (robot == NULL || *robot == '\0')
        robot = KN_SETTINGS_DEFAULT_ROBOT;
    char why[200];
    if (kn_settings_parse_robot(robot, out->host, sizeof out->host, out->port, sizeof out->port,
                                why, sizeof why) != 0) {
        snprintf(err, errlen, "KENAF_ROBOT: %s", why);
        return -1;
    }
    if (load_int("KENAF_TIMEOUT_MS", 10, 600000, KN_SETTINGS_DEFAULT_TIMEOUT_MS,
                 &out->timeout_ms, err, errlen) != 0)
        return -1;
    if (load_int("KENAF_STATUS_MS", 10, 1000, KN_SETTINGS_DEFAULT_STATUS_MS, &out->status_ms,
                 err, errlen) != 0)
        return -1;
    return 0;
}
