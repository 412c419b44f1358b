/* A trial's score record (score.h): from the verdict, to and from
 * score.json. */
#include "score.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "binom.h"

static const char *const fault_names[KN_TRIALSCORE_NFAULTS] = { "tip-over", "wall", "lane", "estop",
                                                                "assist" };

const char *kn_trialscore_fault_name(int k)
{
    return k >= 0 && k < KN_TRIALSCORE_NFAULTS ? fault_names[k] : "?";
}

/* ---- the verdict ---- */

/* The value of key= in text (its first line so named) into out; 0, or
 * -1 when there is none. */
static int vget(const char *text, size_t len, const char *key, char *out, size_t n)
{
    size_t kl = strlen(key);
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        if ((size_t)(le - p) > kl && memcmp(p, key, kl) == 0 && p[kl] == '=') {
            size_t vl = (size_t)(le - p) - kl - 1;
            if (vl >= n)
                vl = n - 1;
            memcpy(out, p + kl + 1, vl);
            out[vl] = '\0';
            return 0;
        }
        p = le + 1;
    }
    return -1;
}

static int vint(const char *text, size_t len, const char *key, int lo, int hi, int *out, char *err,
                size_t errlen)
{
    char v[32], *e;
    if (vget(text, len, key, v, sizeof v)) {
        snprintf(err, errlen, "the verdict has no %s", key);
        return -1;
    }
    long x = strtol(v, &e, 10);
    if (!v[0] || *e || x < lo || x > hi) {
        snprintf(err, errlen, "the verdict's %s is not a count %d..%d: %.31s", key, lo, hi, v);
        return -1;
    }
    *out = (int)x;
    return 0;
}

static int vnum(const char *text, size_t len, const char *key, double *out, char *err,
                size_t errlen)
{
    char v[64], *e;
    if (vget(text, len, key, v, sizeof v)) {
        snprintf(err, errlen, "the verdict has no %s", key);
        return -1;
    }
    *out = strtod(v, &e);
    if (!v[0] || *e || !isfinite(*out)) {
        snprintf(err, errlen, "the verdict's %s is not a number: %.63s", key, v);
        return -1;
    }
    return 0;
}

/* A comma list of n numbers (n may be 0: an empty value). */
static int vlist(const char *text, size_t len, const char *key, int n, double *out, char *err,
                 size_t errlen)
{
    char *v = malloc(KN_TRIALSCORE_MAX_REPS * 24 + 1);
    if (!v) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = 0, i = 0;
    if (vget(text, len, key, v, KN_TRIALSCORE_MAX_REPS * 24 + 1)) {
        snprintf(err, errlen, "the verdict has no %s", key);
        rc = -1;
    }
    for (char *p = v; rc == 0 && *p;) {
        char *e;
        double x = strtod(p, &e);
        if (e == p || i >= n || !isfinite(x) || x < 0 || (*e && *e != ',')) {
            rc = -1;
            break;
        }
        out[i++] = x;
        p = *e ? e + 1 : e;
    }
    if (rc == 0 && i != n) {
        rc = -1;
    }
    if (rc && !err[0])
        snprintf(err, errlen, "the verdict's %s is not a list of %d numbers >= 0", key, n);
    free(v);
    return rc;
}

static int vline(const char *text, size_t len, const char *key, double g[4], char *err,
                 size_t errlen)
{
    char v[160];
    if (vget(text, len, key, v, sizeof v) ||
        sscanf(v, "%lf,%lf,%lf,%lf", &g[0], &g[1], &g[2], &g[3]) != 4) {
        snprintf(err, errlen, "the verdict's %s is not x0,y0,x1,y1", key);
        return -1;
    }
    return 0;
}

int kn_trialscore_from_verdict(const char *text, size_t len, struct kn_trialscore *s, char *err,
                               size_t errlen)
{
    err[0] = '\0';
    char course[16] = "";
    if (vget(text, len, "trial_course", course, sizeof course)) {
        snprintf(err, errlen, "the verdict holds no trial (no trial_course): not a trial file?");
        return -1;
    }
    if (strcmp(course, "traverse") != 0 && strcmp(course, "figure8") != 0) {
        snprintf(err, errlen, "the verdict's trial_course is %s", course);
        return -1;
    }
    snprintf(s->course, sizeof s->course, "%s", course);
    const int max = KN_TRIALSCORE_MAX_REPS;
    if (vint(text, len, "trial_repetitions", 1, max, &s->asked, err, errlen) ||
        vint(text, len, "trial_min_successes", 0, s->asked, &s->min_successes, err, errlen) ||
        vint(text, len, "trial_reps", 0, s->asked, &s->completed, err, errlen) ||
        vint(text, len, "trial_successes", 0, s->completed, &s->successes, err, errlen) ||
        vint(text, len, "trial_faults", 0, 1 << 30, &s->faults, err, errlen) ||
        vnum(text, len, "sim_s", &s->sim_s, err, errlen))
        return -1;
    for (int k = 0; k < KN_TRIALSCORE_NFAULTS; k++) {
        char key[48];
        snprintf(key, sizeof key, "trial_faults_%s", k == 0 ? "tip_over" : fault_names[k]);
        if (vint(text, len, key, 0, 1 << 30, &s->by_kind[k], err, errlen))
            return -1;
    }
    double rf[KN_TRIALSCORE_MAX_REPS];
    if (vlist(text, len, "trial_rep_times", s->completed, s->times, err, errlen) ||
        vlist(text, len, "trial_rep_faults", s->completed, rf, err, errlen))
        return -1;
    for (int i = 0; i < s->completed; i++)
        s->rep_faults[i] = (int)rf[i];
    int unfinished = 0;
    double us = 0;
    if (vint(text, len, "trial_unfinished", 0, 1, &unfinished, err, errlen) ||
        vnum(text, len, "trial_unfinished_s", &us, err, errlen))
        return -1;
    s->unfinished_s = unfinished ? us : -1;
    if (vget(text, len, "trial_ended", s->ended, sizeof s->ended) ||
        vget(text, len, "trial_apparatus", s->apparatus, sizeof s->apparatus) ||
        vget(text, len, "scenario", s->trial, sizeof s->trial) ||
        vget(text, len, "verdict", s->verdict, sizeof s->verdict) ||
        vget(text, len, "mode", s->mode, sizeof s->mode) ||
        vget(text, len, "why", s->why, sizeof s->why)) {
        snprintf(err, errlen,
                 "the verdict lacks one of trial_ended, trial_apparatus, scenario, verdict, mode, "
                 "why");
        return -1;
    }
    s->has_gates = vline(text, len, "trial_gate_start", s->gate_start, err, errlen) == 0 &&
                   vline(text, len, "trial_gate_finish", s->gate_finish, err, errlen) == 0;
    err[0] = '\0';
    kn_trialscore_bounds(s);
    return 0;
}

void kn_trialscore_bounds(struct kn_trialscore *s)
{
    unsigned k = (unsigned)s->successes, n = (unsigned)s->asked;
    s->lower80 = kn_binom_lower(k, n, 0.8);
    kn_binom_wilson(k, n, KN_BINOM_Z95, &s->wilson_lo, &s->wilson_hi);
}

double kn_trialscore_mean_time(const struct kn_trialscore *s)
{
    if (s->completed <= 0)
        return NAN;
    double sum = 0;
    for (int i = 0; i < s->completed; i++)
        sum += s->times[i];
    return sum / s->completed;
}

/* ---- score.json ---- */

/* Rounded to what the verdict gives (1 ms, 1e-6): the same file from
 * the same run on every machine. */
static double r6(double x)
{
    return round(x * 1e6) / 1e6;
}

static cJSON *line_json(const double g[4])
{
    double r[4];
    for (int i = 0; i < 4; i++)
        r[i] = r6(g[i]);
    return cJSON_CreateDoubleArray(r, 4);
}

cJSON *kn_trialscore_json(const struct kn_trialscore *s)
{
    cJSON *j = cJSON_CreateObject(), *reps = cJSON_CreateArray(), *faults = cJSON_CreateObject();
    if (!j || !reps || !faults) {
        cJSON_Delete(j);
        cJSON_Delete(reps);
        cJSON_Delete(faults);
        return NULL;
    }
    cJSON_AddNumberToObject(j, "format", 1);
    cJSON_AddStringToObject(j, "trial", s->trial);
    cJSON_AddStringToObject(j, "trial_file", s->trial_file);
    cJSON_AddStringToObject(j, "apparatus", s->apparatus);
    cJSON_AddStringToObject(j, "course", s->course);
    cJSON_AddStringToObject(j, "program", s->program);
    cJSON_AddStringToObject(j, "date", s->date);
    if (s->seed < 0)
        cJSON_AddNullToObject(j, "seed");
    else
        cJSON_AddNumberToObject(j, "seed", (double)s->seed);
    cJSON_AddStringToObject(j, "verdict", s->verdict);
    cJSON_AddStringToObject(j, "mode", s->mode);
    cJSON_AddStringToObject(j, "why", s->why);
    cJSON_AddNumberToObject(j, "sim_s", r6(s->sim_s));
    cJSON_AddNumberToObject(j, "repetitions_asked", s->asked);
    cJSON_AddNumberToObject(j, "min_successes", s->min_successes);
    cJSON_AddNumberToObject(j, "completed", s->completed);
    cJSON_AddNumberToObject(j, "successes", s->successes);
    for (int i = 0; i < s->completed; i++) {
        cJSON *r = cJSON_CreateObject();
        if (!r || !cJSON_AddItemToArray(reps, r)) {
            cJSON_Delete(r);
            break;
        }
        cJSON_AddNumberToObject(r, "time_s", r6(s->times[i]));
        cJSON_AddNumberToObject(r, "faults", s->rep_faults[i]);
    }
    cJSON_AddItemToObject(j, "repetitions", reps);
    if (s->unfinished_s < 0)
        cJSON_AddNullToObject(j, "unfinished_s");
    else
        cJSON_AddNumberToObject(j, "unfinished_s", r6(s->unfinished_s));
    cJSON_AddStringToObject(j, "ended", s->ended);
    cJSON_AddNumberToObject(faults, "total", s->faults);
    for (int k = 0; k < KN_TRIALSCORE_NFAULTS; k++)
        cJSON_AddNumberToObject(faults, fault_names[k], s->by_kind[k]);
    cJSON_AddItemToObject(j, "faults", faults);
    cJSON_AddNumberToObject(j, "lower_bound_80", r6(s->lower80));
    const double w[2] = { r6(s->wilson_lo), r6(s->wilson_hi) };
    cJSON_AddItemToObject(j, "wilson95", cJSON_CreateDoubleArray(w, 2));
    if (s->has_gates) {
        cJSON *g = cJSON_AddObjectToObject(j, "gates");
        if (g) {
            cJSON_AddItemToObject(g, "start", line_json(s->gate_start));
            cJSON_AddItemToObject(g, "finish", line_json(s->gate_finish));
        }
    }
    return j;
}

/* Readers of one key each: the refusal names it. */
static int jstr(const cJSON *o, const char *key, char *out, size_t n, char *err, size_t errlen)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsString(v) || strlen(v->valuestring) >= n) {
        snprintf(err, errlen, "score.json: \"%s\" must be a string of at most %zu bytes", key,
                 n - 1);
        return -1;
    }
    memcpy(out, v->valuestring, strlen(v->valuestring) + 1);
    return 0;
}

static int jnum(const cJSON *o, const char *key, double lo, double hi, double *out, char *err,
                size_t errlen)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= lo && v->valuedouble <= hi)) {
        snprintf(err, errlen, "score.json: \"%s\" must be a number %g..%g", key, lo, hi);
        return -1;
    }
    *out = v->valuedouble;
    return 0;
}

static int jint(const cJSON *o, const char *key, int lo, int hi, int *out, char *err, size_t errlen)
{
    double d;
    if (jnum(o, key, lo, hi, &d, err, errlen))
        return -1;
    if (d != floor(d)) {
        snprintf(err, errlen, "score.json: \"%s\" must be a whole number", key);
        return -1;
    }
    *out = (int)d;
    return 0;
}

static int parse_reps(const cJSON *root, struct kn_trialscore *s, char *err, size_t errlen)
{
    const cJSON *reps = cJSON_GetObjectItemCaseSensitive(root, "repetitions");
    if (!cJSON_IsArray(reps) || cJSON_GetArraySize(reps) != s->completed) {
        snprintf(err, errlen, "score.json: \"repetitions\" must be an array of \"completed\" (%d)",
                 s->completed);
        return -1;
    }
    int i = 0, ok = 0;
    const cJSON *r;
    cJSON_ArrayForEach(r, reps)
    {
        if (!cJSON_IsObject(r) || jnum(r, "time_s", 0, 1e9, &s->times[i], err, errlen) ||
            jint(r, "faults", 0, 1 << 30, &s->rep_faults[i], err, errlen)) {
            if (!err[0] || !cJSON_IsObject(r))
                snprintf(err, errlen, "score.json: \"repetitions\"[%d] must be an object", i);
            return -1;
        }
        ok += s->rep_faults[i] == 0;
        i++;
    }
    if (ok != s->successes) {
        snprintf(err, errlen,
                 "score.json: \"successes\" %d is not the repetitions without a fault (%d)",
                 s->successes, ok);
        return -1;
    }
    return 0;
}

static int parse_faults(const cJSON *root, struct kn_trialscore *s, char *err, size_t errlen)
{
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(root, "faults");
    if (!cJSON_IsObject(f)) {
        snprintf(err, errlen, "score.json: \"faults\" must be an object");
        return -1;
    }
    if (jint(f, "total", 0, 1 << 30, &s->faults, err, errlen))
        return -1;
    for (int k = 0; k < KN_TRIALSCORE_NFAULTS; k++)
        if (jint(f, fault_names[k], 0, 1 << 30, &s->by_kind[k], err, errlen))
            return -1;
    return 0;
}

int kn_trialscore_parse(const char *text, size_t len, struct kn_trialscore *s, char *err,
                        size_t errlen)
{
    memset(s, 0, sizeof *s);
    err[0] = '\0';
    cJSON *root = cJSON_ParseWithLength(text, len);
    if (!cJSON_IsObject(root)) {
        snprintf(err, errlen, "score.json: not a JSON object");
        cJSON_Delete(root);
        return -1;
    }
    int format = 0, rc = -1;
    const cJSON *seed = cJSON_GetObjectItemCaseSensitive(root, "seed");
    const cJSON *unf = cJSON_GetObjectItemCaseSensitive(root, "unfinished_s");
    if (jint(root, "format", 1, 1, &format, err, errlen) ||
        jstr(root, "trial", s->trial, sizeof s->trial, err, errlen) ||
        jstr(root, "trial_file", s->trial_file, sizeof s->trial_file, err, errlen) ||
        jstr(root, "apparatus", s->apparatus, sizeof s->apparatus, err, errlen) ||
        jstr(root, "course", s->course, sizeof s->course, err, errlen) ||
        jstr(root, "program", s->program, sizeof s->program, err, errlen) ||
        jstr(root, "date", s->date, sizeof s->date, err, errlen) ||
        jstr(root, "verdict", s->verdict, sizeof s->verdict, err, errlen) ||
        jstr(root, "mode", s->mode, sizeof s->mode, err, errlen) ||
        jstr(root, "why", s->why, sizeof s->why, err, errlen) ||
        jstr(root, "ended", s->ended, sizeof s->ended, err, errlen) ||
        jnum(root, "sim_s", 0, 1e9, &s->sim_s, err, errlen) ||
        jint(root, "repetitions_asked", 1, KN_TRIALSCORE_MAX_REPS, &s->asked, err, errlen) ||
        jint(root, "min_successes", 0, s->asked, &s->min_successes, err, errlen) ||
        jint(root, "completed", 0, s->asked, &s->completed, err, errlen) ||
        jint(root, "successes", 0, s->completed, &s->successes, err, errlen) ||
        parse_reps(root, s, err, errlen) || parse_faults(root, s, err, errlen))
        goto out;
    if (cJSON_IsNull(seed))
        s->seed = -1;
    else if (cJSON_IsNumber(seed) && seed->valuedouble >= 0 && seed->valuedouble <= 4294967295.0 &&
             seed->valuedouble == floor(seed->valuedouble))
        s->seed = (long long)seed->valuedouble;
    else {
        snprintf(err, errlen, "score.json: \"seed\" must be null or an integer 0..4294967295");
        goto out;
    }
    if (cJSON_IsNull(unf))
        s->unfinished_s = -1;
    else if (jnum(root, "unfinished_s", 0, 1e9, &s->unfinished_s, err, errlen))
        goto out;
    if (strcmp(s->course, "traverse") != 0 && strcmp(s->course, "figure8") != 0) {
        snprintf(err, errlen, "score.json: \"course\" must be \"traverse\" or \"figure8\"");
        goto out;
    }
    /* the bounds follow from the counts: computed, not trusted */
    kn_trialscore_bounds(s);
    rc = 0;
out:
    cJSON_Delete(root);
    return rc;
}
