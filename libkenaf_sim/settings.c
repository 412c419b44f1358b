/* KENAF_ROBOT / KENAF_TIMEOUT_MS / KENAF_STATUS_MS / KENAF_DEBUG / KENAF_LOCKSTEP: a bad value
 * is refused with a reason instead of silently falling back, since a
 * controller aimed at the wrong robot is worse than one that does not start. */
#include "settings.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostport.h"
#include "keyfile.h"
#include "krp.h"

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

int kn_settings_parse_robot(const char *s, char *host, size_t hostlen, char *port, size_t portlen,
                            char *err, size_t errlen)
{
    uint16_t p;
    if (kn_hostport_parse(s, KN_KRP_DEFAULT_PORT, host, hostlen, &p, err, errlen) != 0)
        return -1;
    if (snprintf(port, portlen, "%u", (unsigned)p) >= (int)portlen) {
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

/* KENAF_KEY_FILE: a key the controller cannot use must not leave it
 * talking unsigned, so the reason goes to stderr whatever KENAF_DEBUG. */
static int load_key(struct kn_settings *out, char *err, size_t errlen)
{
    const char *path = getenv("KENAF_KEY_FILE");
    if (path == NULL || *path == '\0')
        return 0;
#ifdef KN_HAVE_KEYS
    char why[600];
    if (kn_keyfile_read(path, out->key, &out->key_len, why, sizeof why) == 0)
        return 0;
    snprintf(err, errlen, "KENAF_KEY_FILE: %s", why);
#else
    snprintf(err, errlen,
             "KENAF_KEY_FILE: libkenaf.so.1 was built without shared-key support "
             "(nettle-dev; meson -Dkeys=enabled)");
#endif
    out->key_len = 0;
    fprintf(stderr, "libkenaf (kenaf-sim): %s\n", err);
    return -1;
}

int kn_settings_load(struct kn_settings *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    const char *dbg = getenv("KENAF_DEBUG");
    out->debug = dbg != NULL && strcmp(dbg, "1") == 0;
    const char *ls = getenv("KENAF_LOCKSTEP");
    if (ls != NULL && *ls != '\0' && strcmp(ls, "0") != 0 && strcmp(ls, "1") != 0) {
        snprintf(err, errlen, "KENAF_LOCKSTEP='%s': expected 0 or 1", ls);
        return -1;
    }
    out->lockstep = ls != NULL && strcmp(ls, "1") == 0;

    const char *robot = getenv("KENAF_ROBOT");
    if (robot == NULL || *robot == '\0')
        robot = KN_SETTINGS_DEFAULT_ROBOT;
    char why[200];
    if (kn_settings_parse_robot(robot, out->host, sizeof out->host, out->port, sizeof out->port,
                                why, sizeof why) != 0) {
        snprintf(err, errlen, "KENAF_ROBOT: %s", why);
        return -1;
    }
    if (load_int("KENAF_TIMEOUT_MS", 10, 600000, KN_SETTINGS_DEFAULT_TIMEOUT_MS, &out->timeout_ms,
                 err, errlen) != 0)
        return -1;
    if (load_int("KENAF_STATUS_MS", 10, 1000, KN_SETTINGS_DEFAULT_STATUS_MS, &out->status_ms, err,
                 errlen) != 0)
        return -1;
    return load_key(out, err, errlen);
}
