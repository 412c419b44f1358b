/* The problems of one config load: each one line "FILE: PATH: expected X,
 * got Y", at most KN_CFG_MAX_ERRORS, cut to the caller's buffer and never
 * beyond it; a path the schema pass reported is not reported again by the
 * loader. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "config_priv.h"

/* path is seen, or lies inside a value that is ("$.a" covers "$.a.b"). */
static bool errs_covered(const struct kn_cfg_errs *e, const char *path)
{
    for (size_t i = 0; i < e->nseen; i++) {
        size_t n = strlen(e->seen[i]);
        if (strncmp(path, e->seen[i], n) == 0 &&
            (path[n] == '\0' || path[n] == '.' || path[n] == '['))
            return true;
    }
    return false;
}

static void errs_append(struct kn_cfg_errs *e, const char *line)
{
    if (e->buf == NULL || e->cap == 0)
        return;
    size_t room = e->cap - e->len; /* includes the NUL */
    if (room <= 1)
        return;
    if (e->len > 0) {
        e->buf[e->len++] = '\n';
        e->buf[e->len] = '\0';
        room--;
    }
    size_t n = strlen(line);
    if (n < room) {
        memcpy(e->buf + e->len, line, n + 1);
        e->len += n;
        return;
    }
    /* Cut, and say so, rather than overflow the caller's buffer. */
    memcpy(e->buf + e->len, line, room - 1);
    e->len += room - 1;
    e->buf[e->len] = '\0';
    if (room > 4)
        memcpy(e->buf + e->len - 3, "...", 3);
}

void kn_config_errs_add(struct kn_cfg_errs *e, const char *path, const char *fmt, ...)
{
    if (path != NULL && !e->recording && errs_covered(e, path))
        return;
    if (path != NULL && e->recording && e->nseen < KN_CFG_MAX_ERRORS)
        snprintf(e->seen[e->nseen++], sizeof e->seen[0], "%s", path);
    e->n++;
    if (e->n > KN_CFG_MAX_ERRORS)
        return;
    char msg[1024], line[1400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (path != NULL)
        snprintf(line, sizeof line, "%s: %s: %s", e->name, path, msg);
    else
        snprintf(line, sizeof line, "%s: %s", e->name, msg);
    errs_append(e, line);
    if (e->n == KN_CFG_MAX_ERRORS) {
        snprintf(line, sizeof line, "%s: stopped after %d errors", e->name, KN_CFG_MAX_ERRORS);
        errs_append(e, line);
    }
}

void kn_config_errs_report(void *ctx, const char *path, const char *message)
{
    kn_config_errs_add(ctx, path, "%s", message);
}

void kn_config_add_problem(char *err, size_t errlen, const char *file, const char *path,
                           const char *fmt, ...)
{
    struct kn_cfg_errs e;
    memset(&e, 0, sizeof e);
    e.name = file;
    e.buf = err;
    e.cap = errlen;
    e.len = err != NULL && errlen > 0 ? strnlen(err, errlen - 1) : 0;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    kn_config_errs_add(&e, path, "%s", msg);
}

size_t kn_config_errs_room(const struct kn_cfg_errs *e)
{
    return e->n >= KN_CFG_MAX_ERRORS ? 0 : KN_CFG_MAX_ERRORS - e->n;
}

void kn_config_errs_init(struct kn_cfg_errs *e, const char *name, char *err, size_t errlen)
{
    memset(e, 0, sizeof *e);
    e->name = name != NULL ? name : "(config)";
    e->buf = err;
    e->cap = err != NULL ? errlen : 0;
    if (e->cap > 0)
        err[0] = '\0';
}
