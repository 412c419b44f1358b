/* The judgement of a run from the engine's verdict file: see verdict.h.
 * A verdict line is read as the shell's `sed -n 's/^KEY=//p' | head -n 1`
 * read it, so a file that does not parse gives the same outcome it always
 * gave: empty values, never a crash. */
#include "verdict.h"

#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

void kn_runcase_verdict_get(const char *text, size_t len, const char *key, char *out, size_t outlen)
{
    size_t klen = strlen(key);
    if (outlen)
        out[0] = '\0';
    for (size_t at = 0; at < len;) {
        const char *line = text + at;
        const char *nl = memchr(line, '\n', len - at);
        size_t llen = nl ? (size_t)(nl - line) : len - at;
        if (llen > klen && memcmp(line, key, klen) == 0 && line[klen] == '=') {
            size_t vlen = llen - klen - 1;
            /* a NUL ends the value as it ends a shell word */
            const char *nul = memchr(line + klen + 1, '\0', vlen);
            if (nul)
                vlen = (size_t)(nul - (line + klen + 1));
            if (outlen)
                snprintf(out, outlen, "%.*s", (int)(vlen < outlen ? vlen : outlen - 1),
                         line + klen + 1);
            return;
        }
        at += llen + 1;
    }
}

/* "V:WHY" matched as the shell's case pattern. */
static bool words_match(const char *v, const char *why, const char *pattern)
{
    char s[KN_RUNCASE_WHY_MAX + 64];
    snprintf(s, sizeof s, "%s:%s", v, why);
    return fnmatch(pattern, s, 0) == 0;
}

void kn_runcase_verdict_mode(const char *text, size_t len, const char *v, const char *why,
                             char *out, size_t outlen)
{
    kn_runcase_verdict_get(text, len, "mode", out, outlen);
    if (out[0])
        return;
    /* an engine without mode= leaves it to the reason's words */
    const char *m;
    if (strcmp(v, "pass") == 0)
        m = "none";
    else if (strcmp(v, "error") == 0)
        m = "error";
    else if (words_match(v, why, "*:tipped over*"))
        m = "tip-over";
    else if (words_match(v, why, "*:no progress*"))
        m = "stall";
    else if (words_match(v, why, "*:tilted*") || words_match(v, why, "*:non-finite*") ||
             words_match(v, why, "*:flipper torque*"))
        m = "limit";
    else {
        char tl[16];
        kn_runcase_verdict_get(text, len, "time_limit", tl, sizeof tl);
        m = strcmp(tl, "1") == 0 ? "time-out" : "criterion";
    }
    snprintf(out, outlen, "%s", m);
}

void kn_runcase_judge(const char *text, size_t len, bool exited, int cstatus,
                      struct kn_runcase_outcome *o)
{
    char v[16], why[KN_RUNCASE_WHY_MAX], tl[16], me[16], mode[32];
    kn_runcase_verdict_get(text, len, "verdict", v, sizeof v);
    kn_runcase_verdict_get(text, len, "why", why, sizeof why);
    kn_runcase_verdict_get(text, len, "sim_s", o->sim, sizeof o->sim);
    kn_runcase_verdict_get(text, len, "time_limit", tl, sizeof tl);
    kn_runcase_verdict_get(text, len, "must_exit", me, sizeof me);
    kn_runcase_verdict_mode(text, len, v, why, mode, sizeof mode);
    bool time_limit = strcmp(tl, "1") == 0;
    /* the time limit first: a program cut off by it may well exit with an
     * error of its own (its last sleep refused) just before it is stopped */
    if (strcmp(v, "error") == 0) {
        snprintf(o->status, sizeof o->status, "error");
        snprintf(o->why, sizeof o->why, "%s", why);
        snprintf(o->mode, sizeof o->mode, "error");
    } else if (time_limit && strcmp(me, "1") == 0) {
        /* the engine judged it so and says why */
        snprintf(o->status, sizeof o->status, "fail");
        snprintf(o->why, sizeof o->why, "%s", why);
        snprintf(o->mode, sizeof o->mode, "time-out");
    } else if (exited && cstatus != 0 && !time_limit && strcmp(mode, "limit") != 0) {
        /* the time limit and a broken limit end the run: the program's
         * next call fails, and its status then is not its own doing */
        snprintf(o->status, sizeof o->status, "fail");
        snprintf(o->why, sizeof o->why, "the program exited with status %d (%s: %s)", cstatus, v,
                 why);
        snprintf(o->mode, sizeof o->mode, "%s",
                 strcmp(mode, "tip-over") == 0 ? "tip-over" : "crash");
    } else {
        snprintf(o->status, sizeof o->status, "%s", v);
        snprintf(o->why, sizeof o->why, "%s", why);
        snprintf(o->mode, sizeof o->mode, "%s", mode);
    }
}
