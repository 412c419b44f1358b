/* The sweep file's parser (sans-I/O): bytes in, a struct kn_sweep out,
 * every mistake named before anything runs: unknown keys and parameters,
 * empty lists and ranges, uniform draws without a sample, bad
 * directions. The expansion into cases is expand.c's. */
#include "sweep.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonutil.h"
/* An integer-valued number in [lo, hi]. */
static int get_int(const cJSON *v, double lo, double hi, double *out)
{
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) ||
        v->valuedouble != floor(v->valuedouble) || v->valuedouble < lo || v->valuedouble > hi)
        return -1;
    *out = v->valuedouble;
    return 0;
}

/* Decimals of x (0..9): the fewest that print it exactly enough. */
static int decimals(double x)
{
    for (int d = 0; d < 9; d++) {
        double s = pow(10, d);
        if (fabs(x * s - round(x * s)) < 1e-6)
            return d;
    }
    return 9;
}

/* The room for a parameter's n values, taken once: both forms know n
 * before the first value (a range of 10^5 values grown one at a time
 * copied 40 GB). */
static int alloc_values(struct kn_sweep_param *pa, size_t n)
{
    pa->values = calloc(n, sizeof *pa->values);
    return pa->values ? 0 : -1;
}

static int is_family(const char *s)
{
    return strcmp(s, "rough") == 0 || strcmp(s, "stepfield") == 0 || strcmp(s, "rubble") == 0;
}

static int parse_list(const cJSON *a, struct kn_sweep_param *pa, char *err, size_t errlen)
{
    const char *nm = pa->known->name;
    int n = cJSON_GetArraySize(a);
    if (n < 1 || n > KN_SWEEP_MAX_VALUES) {
        snprintf(err, errlen, "parameter %s: the list is empty%s", nm, n < 1 ? "" : " or too long");
        return -1;
    }
    if (alloc_values(pa, (size_t)n))
        goto oom;
    if (pa->known->is_string) {
        pa->strs = calloc((size_t)n, sizeof *pa->strs);
        if (!pa->strs)
            goto oom;
    }
    const cJSON *e;
    int i = 0;
    cJSON_ArrayForEach(e, a)
    {
        double v;
        if (pa->known->is_string) {
            if (!cJSON_IsString(e) || !is_family(e->valuestring)) {
                snprintf(err, errlen, "parameter %s: values are rough, stepfield or rubble", nm);
                return -1;
            }
            snprintf(pa->strs[i], sizeof pa->strs[i], "%s", e->valuestring);
            v = i;
        } else if (pa->known->is_integer) {
            if (get_int(e, 0, 2147483647.0, &v)) {
                snprintf(err, errlen, "parameter %s: values are integers 0..2147483647", nm);
                return -1;
            }
        } else {
            if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble) || fabs(e->valuedouble) > 1e6) {
                snprintf(err, errlen, "parameter %s: values are numbers (|v| <= 1e6)", nm);
                return -1;
            }
            v = kn_sweep_round9(e->valuedouble);
        }
        for (size_t j = 0; j < pa->nvalues; j++)
            if (pa->known->is_string ? strcmp(pa->strs[j], pa->strs[i]) == 0 : pa->values[j] == v) {
                snprintf(err, errlen, "parameter %s: a value is listed twice", nm);
                return -1;
            }
        pa->values[pa->nvalues++] = v;
        i++;
    }
    return 0;
oom:
    snprintf(err, errlen, "parameter %s: out of memory", nm);
    return -1;
}

static int parse_range(const cJSON *o, struct kn_sweep_param *pa, char *err, size_t errlen)
{
    static const char *const keys[] = { "from", "to", "step", NULL };
    const char *nm = pa->known->name;
    char ctx[80];
    snprintf(ctx, sizeof ctx, "parameter %s", nm);
    if (kn_json_only_keys(o, keys, ctx, err, errlen))
        return -1;
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(o, "from");
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "to");
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, "step");
    if (pa->known->is_string || !cJSON_IsNumber(f) || !cJSON_IsNumber(t) || !cJSON_IsNumber(s) ||
        !isfinite(f->valuedouble) || !isfinite(t->valuedouble) || !isfinite(s->valuedouble) ||
        fabs(f->valuedouble) > 1e6 || fabs(t->valuedouble) > 1e6) {
        snprintf(err, errlen, "%s: a range is {\"from\": A, \"to\": B, \"step\": S}, numbers", ctx);
        return -1;
    }
    double from = f->valuedouble, to = t->valuedouble, step = s->valuedouble;
    if (step <= 0 || to < from) {
        snprintf(err, errlen, "%s: empty range (from %g to %g step %g)", ctx, from, to, step);
        return -1;
    }
    double cnt = floor((to - from) / step + 1e-9) + 1;
    if (cnt > KN_SWEEP_MAX_VALUES) {
        snprintf(err, errlen, "%s: more than %d values", ctx, KN_SWEEP_MAX_VALUES);
        return -1;
    }
    int d = decimals(step) > decimals(from) ? decimals(step) : decimals(from);
    double sc = pow(10, d);
    if (alloc_values(pa, (size_t)cnt)) {
        snprintf(err, errlen, "%s: out of memory", ctx);
        return -1;
    }
    for (long i = 0; i < (long)cnt; i++) {
        double v = kn_sweep_round9(round((from + (double)i * step) * sc) / sc);
        if (pa->known->is_integer && v != floor(v)) {
            snprintf(err, errlen, "%s: values are integers", ctx);
            return -1;
        }
        pa->values[pa->nvalues++] = v;
    }
    return 0;
}

static int parse_uniform(const cJSON *u, struct kn_sweep_param *pa, char *err, size_t errlen)
{
    const char *nm = pa->known->name;
    const cJSON *a = cJSON_GetArrayItem(u, 0), *b = cJSON_GetArrayItem(u, 1);
    if (pa->known->is_string || pa->known->is_integer) {
        snprintf(err, errlen, "parameter %s: takes a list or a range, not uniform draws", nm);
        return -1;
    }
    if (!cJSON_IsArray(u) || cJSON_GetArraySize(u) != 2 || !cJSON_IsNumber(a) ||
        !cJSON_IsNumber(b) || !isfinite(a->valuedouble) || !isfinite(b->valuedouble) ||
        a->valuedouble > b->valuedouble || fabs(a->valuedouble) > 1e6 ||
        fabs(b->valuedouble) > 1e6) {
        snprintf(err, errlen, "parameter %s: uniform is [A, B] with A <= B", nm);
        return -1;
    }
    pa->uniform = 1;
    pa->lo = a->valuedouble;
    pa->hi = b->valuedouble;
    return 0;
}

static int parse_params(const cJSON *ps, struct kn_sweep *sw, char *err, size_t errlen)
{
    if (!cJSON_IsObject(ps) || !ps->child) {
        snprintf(err, errlen, "\"parameters\" must be an object with at least one parameter");
        return -1;
    }
    const cJSON *e;
    cJSON_ArrayForEach(e, ps)
    {
        const struct kn_sweep_known *k = kn_sweep_known_find(e->string ? e->string : "");
        if (!k) {
            snprintf(err, errlen, "unknown parameter \"%.64s\" (known: %s)",
                     e->string ? e->string : "", kn_sweep_known_list());
            return -1;
        }
        for (int p = 0; p < sw->nparams; p++)
            if (sw->params[p].known == k) {
                snprintf(err, errlen, "parameter %s is given twice", k->name);
                return -1;
            }
        if (sw->nparams == KN_SWEEP_MAX_PARAMS) {
            snprintf(err, errlen, "more than %d parameters", KN_SWEEP_MAX_PARAMS);
            return -1;
        }
        struct kn_sweep_param *pa = &sw->params[sw->nparams++];
        pa->known = k;
        pa->harder = k->harder;
        const cJSON *u = cJSON_GetObjectItemCaseSensitive(e, "uniform");
        int rc;
        if (cJSON_IsArray(e))
            rc = parse_list(e, pa, err, errlen);
        else if (cJSON_IsObject(e) && u && cJSON_GetArraySize(e) == 1)
            rc = parse_uniform(u, pa, err, errlen);
        else if (cJSON_IsObject(e))
            rc = parse_range(e, pa, err, errlen);
        else {
            snprintf(err, errlen,
                     "parameter %s: a list, {\"from\", \"to\", \"step\"} or {\"uniform\": [A, B]}",
                     k->name);
            rc = -1;
        }
        if (rc)
            return -1;
    }
    return 0;
}

static int parse_harder(const cJSON *h, struct kn_sweep *sw, char *err, size_t errlen)
{
    if (!h)
        return 0;
    if (!cJSON_IsObject(h)) {
        snprintf(err, errlen,
                 "\"harder\" must be an object: {\"PARAMETER\": \"higher\"|\"lower\"}");
        return -1;
    }
    const cJSON *e;
    cJSON_ArrayForEach(e, h)
    {
        struct kn_sweep_param *pa = NULL;
        for (int p = 0; p < sw->nparams; p++)
            if (strcmp(sw->params[p].known->name, e->string ? e->string : "") == 0)
                pa = &sw->params[p];
        if (!pa) {
            snprintf(err, errlen, "harder: \"%.64s\" is not a parameter of this sweep",
                     e->string ? e->string : "");
            return -1;
        }
        const char *d = cJSON_IsString(e) ? e->valuestring : "";
        if (pa->known->is_string || (strcmp(d, "higher") != 0 && strcmp(d, "lower") != 0)) {
            snprintf(err, errlen, "harder: %s: \"higher\" or \"lower\"%s", pa->known->name,
                     pa->known->is_string ? " (only for numbers)" : "");
            return -1;
        }
        pa->harder = strcmp(d, "higher") == 0 ? 1 : -1;
    }
    return 0;
}

static int parse_sample(const cJSON *s, struct kn_sweep *sw, char *err, size_t errlen)
{
    static const char *const keys[] = { "cases", "seed", NULL };
    double c, seed = 1;
    if (!cJSON_IsObject(s) || kn_json_only_keys(s, keys, "sample", err, errlen) ||
        get_int(cJSON_GetObjectItemCaseSensitive(s, "cases"), 1, KN_SWEEP_MAX_CASES_LIMIT, &c) ||
        (cJSON_GetObjectItemCaseSensitive(s, "seed") &&
         get_int(cJSON_GetObjectItemCaseSensitive(s, "seed"), 0, 9007199254740991.0, &seed))) {
        if (!err[0])
            snprintf(err, errlen,
                     "\"sample\" is {\"cases\": 1..%d, \"seed\": integer >= 0 (default 1)}",
                     KN_SWEEP_MAX_CASES_LIMIT);
        return -1;
    }
    sw->has_sample = 1;
    sw->sample_cases = (long)c;
    sw->sample_seed = (uint64_t)seed;
    return 0;
}

static int parse_scenario(const cJSON *s, struct kn_sweep *sw, char *err, size_t errlen)
{
    if (!cJSON_IsString(s) || !s->valuestring[0] || strlen(s->valuestring) >= sizeof sw->scenario) {
        snprintf(err, errlen, "\"scenario\" must name the scenario file (FILE or FILE#VARIANT)");
        return -1;
    }
    snprintf(sw->scenario, sizeof sw->scenario, "%s", s->valuestring);
    char *hash = strrchr(sw->scenario, '#');
    if (hash) {
        char *end;
        long v = strtol(hash + 1, &end, 10);
        if (hash[1] < '0' || hash[1] > '9' || *end || v > 10000) {
            snprintf(err, errlen, "\"scenario\": %s: the variant after # is a number",
                     sw->scenario);
            return -1;
        }
        sw->variant = (int)v;
        *hash = '\0';
    }
    return 0;
}

static int parse_name(const cJSON *n, struct kn_sweep *sw, char *err, size_t errlen)
{
    const char *s = cJSON_IsString(n) ? n->valuestring : "";
    size_t len = strlen(s);
    int ok = len > 0 && len < sizeof sw->name && s[0] != '.';
    for (const char *p = s; *p && ok; p++)
        ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
             *p == '-' || *p == '_' || *p == '.';
    if (!ok) {
        snprintf(err, errlen,
                 "\"name\" must be 1..63 letters, digits, '-', '_' or '.' "
                 "(it names the output directory)");
        return -1;
    }
    snprintf(sw->name, sizeof sw->name, "%s", s);
    return 0;
}

static int parse_root(const cJSON *root, struct kn_sweep *sw, char *err, size_t errlen)
{
    static const char *const keys[] = { "name",        "comment", "scenario",
                                        "parameters",  "sample",  "max_cases",
                                        "target_rate", "harder",  NULL };
    if (!cJSON_IsObject(root)) {
        snprintf(err, errlen, "a sweep file is one JSON object");
        return -1;
    }
    if (kn_json_only_keys(root, keys, "sweep", err, errlen) ||
        parse_name(cJSON_GetObjectItemCaseSensitive(root, "name"), sw, err, errlen) ||
        parse_scenario(cJSON_GetObjectItemCaseSensitive(root, "scenario"), sw, err, errlen) ||
        parse_params(cJSON_GetObjectItemCaseSensitive(root, "parameters"), sw, err, errlen) ||
        parse_harder(cJSON_GetObjectItemCaseSensitive(root, "harder"), sw, err, errlen))
        return -1;
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(root, "sample");
    if (s && parse_sample(s, sw, err, errlen))
        return -1;
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(root, "max_cases");
    double mc = KN_SWEEP_DEFAULT_MAX_CASES;
    if (m && get_int(m, 1, KN_SWEEP_MAX_CASES_LIMIT, &mc)) {
        snprintf(err, errlen, "\"max_cases\" must be an integer 1..%d", KN_SWEEP_MAX_CASES_LIMIT);
        return -1;
    }
    sw->max_cases = (long)mc;
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(root, "target_rate");
    sw->target_rate = 0.95;
    if (t) {
        if (!cJSON_IsNumber(t) || !(t->valuedouble > 0 && t->valuedouble <= 1)) {
            snprintf(err, errlen, "\"target_rate\" must be a number in (0, 1]");
            return -1;
        }
        sw->target_rate = t->valuedouble;
    }
    for (int p = 0; p < sw->nparams; p++)
        if (sw->params[p].uniform && !sw->has_sample) {
            snprintf(err, errlen, "parameter %s: uniform draws need \"sample\"",
                     sw->params[p].known->name);
            return -1;
        }
    return 0;
}

int kn_sweep_parse(const char *buf, size_t len, struct kn_sweep *sw, char *err, size_t errlen)
{
    memset(sw, 0, sizeof *sw);
    err[0] = '\0';
    cJSON *root = cJSON_ParseWithLength(buf, len);
    if (!root) {
        snprintf(err, errlen, "not JSON (near byte %ld)",
                 cJSON_GetErrorPtr() ? (long)(cJSON_GetErrorPtr() - buf) : 0L);
        return -1;
    }
    int rc = parse_root(root, sw, err, errlen);
    cJSON_Delete(root);
    /* a key or value quoted in the reason may hold a line break: the
     * reason stays one line */
    for (char *c = err; rc && *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = ' ';
    return rc;
}

int kn_sweep_check_terrain(const struct kn_sweep *sw, const char *terrain_type, char *err,
                           size_t errlen)
{
    int family = 0;
    for (int p = 0; p < sw->nparams; p++)
        family |= sw->params[p].known->is_string;
    const char *t = family ? "a terrain_family" : terrain_type;
    int generated = family || strcmp(terrain_type, "rough") == 0 ||
                    strcmp(terrain_type, "stepfield") == 0 || strcmp(terrain_type, "rubble") == 0;
    for (int p = 0; p < sw->nparams; p++) {
        const char *fits = sw->params[p].known->fits;
        if (!fits)
            continue;
        int ok = strcmp(fits, "family") == 0 ? generated : !family && strcmp(fits, t) == 0;
        if (!ok) {
            snprintf(err, errlen,
                     "parameter %s does not fit the scenario's terrain (%s): it "
                     "changes a %s",
                     sw->params[p].known->name, t,
                     strcmp(fits, "family") == 0 ? "rough, stepfield or rubble terrain" : fits);
            return -1;
        }
    }
    return 0;
}

void kn_sweep_set_sample(struct kn_sweep *sw, long cases)
{
    if (!sw->has_sample)
        sw->sample_seed = 1;
    sw->has_sample = 1;
    sw->sample_cases = cases;
}

void kn_sweep_free(struct kn_sweep *sw)
{
    for (int p = 0; p < sw->nparams; p++) {
        free(sw->params[p].values);
        free(sw->params[p].strs);
    }
    free(sw->cases);
    memset(sw, 0, sizeof *sw);
}
