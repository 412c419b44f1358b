/* Reading a sweep's output directory (see report_data.h): sweep.json and
 * each case's result.json decoded with a one-line reason for whatever is
 * missing or malformed, never trusted further than checked (a case id
 * becomes a path, so it must be ten hex digits). */
#include "report_data.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int kn_report_fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    /* one line whatever the names quoted from the file hold */
    for (char *c = err; errlen && *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
    return -1;
}

static bool is_hex(const char *s, size_t len)
{
    if (!s || strlen(s) != len)
        return false;
    for (size_t i = 0; i < len; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return false;
    return true;
}

/* A parameter name: what the sweep file allows (letters, digits, '_'). */
static bool is_name(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n > 64)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!(s[i] == '_' || (s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'z') ||
              (s[i] >= 'A' && s[i] <= 'Z')))
            return false;
    return true;
}

static bool same_num(double a, double b)
{
    return fabs(a - b) <= 1e-9 * fmax(1, fabs(a));
}

static int cmp_value(const void *pa, const void *pb)
{
    const struct kn_report_value *a = pa, *b = pb;
    if (a->str || b->str)
        return strcmp(a->str ? a->str : "", b->str ? b->str : "");
    return a->num < b->num ? -1 : a->num > b->num;
}

static int cmp_id(const void *a, const void *b)
{
    return strcmp(a, b);
}

/* The index of a case's value among the parameter's (sorted, distinct),
 * or nvalues: a binary search. */
static size_t find_value(const struct kn_report_param *p, const cJSON *v)
{
    if (p->strings ? !cJSON_IsString(v) : !cJSON_IsNumber(v))
        return p->nvalues;
    size_t lo = 0, hi = p->nvalues;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        bool below = p->strings ? strcmp(p->values[mid].str, v->valuestring) < 0
                                : p->values[mid].num < v->valuedouble &&
                                      !same_num(p->values[mid].num, v->valuedouble);
        if (below)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < p->nvalues && (p->strings ? strcmp(p->values[lo].str, v->valuestring) == 0
                                       : same_num(p->values[lo].num, v->valuedouble)))
        return lo;
    return p->nvalues;
}

/* Appends a value of parameter p to its list (sorted and made distinct
 * once all are in). */
static int add_value(struct kn_report_param *p, const cJSON *v, char *err, size_t errlen)
{
    if (p->strings ? !cJSON_IsString(v) : !cJSON_IsNumber(v) || !isfinite(v->valuedouble))
        return kn_report_fail(err, errlen, "parameter \"%s\": a value is not a %s", p->name,
                              p->strings ? "string" : "finite number");
    p->values[p->nvalues++] = (struct kn_report_value){ p->strings ? 0 : v->valuedouble,
                                                        p->strings ? v->valuestring : NULL };
    return 0;
}

/* Sorts p's values and drops repeats. */
static void sort_values(struct kn_report_param *p)
{
    if (!p->values)
        return;
    qsort(p->values, p->nvalues, sizeof *p->values, cmp_value);
    size_t n = 0;
    for (size_t k = 0; k < p->nvalues; k++) {
        bool same = n > 0 && (p->strings ? strcmp(p->values[n - 1].str, p->values[k].str) == 0
                                         : same_num(p->values[n - 1].num, p->values[k].num));
        if (!same)
            p->values[n++] = p->values[k];
    }
    p->nvalues = n;
}

static int parse_param(struct kn_report_sweep *s, size_t i, const cJSON *jp, const cJSON *cases,
                       char *err, size_t errlen)
{
    struct kn_report_param *p = &s->params[i];
    if (!cJSON_IsObject(jp))
        return kn_report_fail(err, errlen, "parameters[%zu]: not an object", i);
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(jp, "name");
    if (!cJSON_IsString(name) || !is_name(name->valuestring))
        return kn_report_fail(err, errlen, "parameters[%zu].name: not a parameter name", i);
    p->name = name->valuestring;
    for (size_t k = 0; k < i; k++)
        if (s->params[k].name && strcmp(s->params[k].name, p->name) == 0)
            return kn_report_fail(err, errlen, "parameters: \"%s\" twice", p->name);
    const cJSON *unit = cJSON_GetObjectItemCaseSensitive(jp, "unit");
    if (unit && !cJSON_IsNull(unit) && !cJSON_IsString(unit))
        return kn_report_fail(err, errlen, "parameter \"%s\": unit is not a string", p->name);
    p->unit = unit && cJSON_IsString(unit) ? unit->valuestring : "";
    const cJSON *harder = cJSON_GetObjectItemCaseSensitive(jp, "harder");
    if (cJSON_IsString(harder) && strcmp(harder->valuestring, "higher") == 0)
        p->harder = 1;
    else if (cJSON_IsString(harder) && strcmp(harder->valuestring, "lower") == 0)
        p->harder = -1;
    else if (harder && !cJSON_IsNull(harder))
        return kn_report_fail(
            err, errlen, "parameter \"%s\": harder is not \"higher\", \"lower\" or null", p->name);
    const cJSON *values = cJSON_GetObjectItemCaseSensitive(jp, "values");
    if (values && !cJSON_IsNull(values) && (!cJSON_IsArray(values) || !values->child))
        return kn_report_fail(err, errlen, "parameter \"%s\": values is not a non-empty list",
                              p->name);
    if (cJSON_IsArray(values)) {
        p->strings = values && cJSON_IsString(values->child);
    } else {
        /* a drawn parameter ({"uniform": ...}): its values are the ones
         * the cases have */
        const cJSON *c0 =
            cases->child ? cJSON_GetObjectItemCaseSensitive(cases->child, "params") : NULL;
        p->strings = cJSON_IsString(cJSON_GetObjectItemCaseSensitive(c0, p->name));
    }
    if (p->strings && p->harder)
        return kn_report_fail(err, errlen, "parameter \"%s\": strings have no harder direction",
                              p->name);
    size_t cap = (size_t)cJSON_GetArraySize(values) + s->ncases;
    p->values = calloc(cap ? cap : 1, sizeof *p->values);
    if (!p->values)
        return kn_report_fail(err, errlen, "out of memory");
    const cJSON *v;
    cJSON_ArrayForEach(v, values)
    {
        if (add_value(p, v, err, errlen) != 0)
            return -1;
    }
    return 0;
}

static int parse_case(struct kn_report_sweep *s, size_t i, const cJSON *jc, bool listed[],
                      char *err, size_t errlen)
{
    struct kn_report_case *c = &s->cases[i];
    if (!cJSON_IsObject(jc))
        return kn_report_fail(err, errlen, "cases[%zu]: not an object", i);
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(jc, "id");
    if (!cJSON_IsString(id) || !is_hex(id->valuestring, 10))
        return kn_report_fail(err, errlen, "cases[%zu].id: not ten lowercase hex digits", i);
    memcpy(c->id, id->valuestring, 11);
    c->params = cJSON_GetObjectItemCaseSensitive(jc, "params");
    if (!cJSON_IsObject(c->params))
        return kn_report_fail(err, errlen, "case %s: params is not an object", c->id);
    const cJSON *pv;
    cJSON_ArrayForEach(pv, c->params)
    {
        /* every parameter was parsed (names set) before the cases */
        const char *key = pv->string ? pv->string : "";
        size_t k = 0;
        while (k < s->nparams && strcmp(s->params[k].name ? s->params[k].name : "", key) != 0)
            k++;
        if (k == s->nparams)
            return kn_report_fail(err, errlen, "case %s: \"%s\" is not a parameter of the sweep",
                                  c->id, key);
    }
    for (size_t k = 0; k < s->nparams; k++) {
        struct kn_report_param *p = &s->params[k];
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(c->params, p->name);
        if (!v)
            return kn_report_fail(err, errlen, "case %s: no value for \"%s\"", c->id, p->name);
        if (!listed[k] && add_value(p, v, err, errlen) != 0)
            return -1;
    }
    return 0;
}

int kn_report_parse_sweep(const char *buf, size_t len, struct kn_report_sweep *s, char *err,
                          size_t errlen)
{
    memset(s, 0, sizeof *s);
    s->doc = cJSON_ParseWithLength(buf, len);
    if (!s->doc)
        return kn_report_fail(err, errlen, "not JSON (near byte %zu)",
                              (size_t)(cJSON_GetErrorPtr() ? cJSON_GetErrorPtr() - buf : 0));
    const cJSON *d = s->doc;
    if (!cJSON_IsObject(d))
        return kn_report_fail(err, errlen, "not a JSON object");
    const cJSON *format = cJSON_GetObjectItemCaseSensitive(d, "format");
    if (!cJSON_IsNumber(format) || format->valuedouble != 1)
        return kn_report_fail(err, errlen, "format: not 1");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(d, "name");
    const cJSON *hash = cJSON_GetObjectItemCaseSensitive(d, "hash");
    const cJSON *scen = cJSON_GetObjectItemCaseSensitive(d, "scenario");
    if (!cJSON_IsString(name))
        return kn_report_fail(err, errlen, "name: not a string");
    if (!cJSON_IsString(hash) || !is_hex(hash->valuestring, 16))
        return kn_report_fail(err, errlen, "hash: not sixteen lowercase hex digits");
    if (scen && !cJSON_IsString(scen))
        return kn_report_fail(err, errlen, "scenario: not a string");
    s->name = name->valuestring;
    s->hash = hash->valuestring;
    s->scenario = scen ? scen->valuestring : "";
    const cJSON *target = cJSON_GetObjectItemCaseSensitive(d, "target_rate");
    s->target = KN_SWEEPSTATS_TARGET;
    if (cJSON_IsNumber(target) && target->valuedouble > 0 && target->valuedouble <= 1)
        s->target = target->valuedouble;
    else if (target && !cJSON_IsNull(target))
        return kn_report_fail(err, errlen, "target_rate: not a number in (0, 1]");
    const cJSON *shard = cJSON_GetObjectItemCaseSensitive(d, "shard");
    if (cJSON_IsObject(shard)) {
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(shard, "k");
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(shard, "n");
        if (!cJSON_IsNumber(k) || !cJSON_IsNumber(n) || !(k->valuedouble >= 1) ||
            !(k->valuedouble <= n->valuedouble) || n->valuedouble > 1e6 ||
            k->valuedouble != floor(k->valuedouble) || n->valuedouble != floor(n->valuedouble))
            return kn_report_fail(err, errlen, "shard: not {\"k\": K, \"n\": N} with 1 <= K <= N");
        s->sharded = true;
        s->shard_k = (long)k->valuedouble;
        s->shard_n = (long)n->valuedouble;
    } else if (shard && !cJSON_IsNull(shard)) {
        return kn_report_fail(err, errlen, "shard: neither an object nor null");
    }
    const cJSON *file = cJSON_GetObjectItemCaseSensitive(d, "sweep_file");
    s->sweep_file = cJSON_IsString(file) ? file->valuestring : NULL;
    const cJSON *prog = cJSON_GetObjectItemCaseSensitive(d, "program");
    if (cJSON_IsArray(prog) && prog->child) {
        s->program = prog;
        const cJSON *a;
        cJSON_ArrayForEach(a, prog)
        {
            if (!cJSON_IsString(a))
                s->program = NULL;
        }
    }

    const cJSON *params = cJSON_GetObjectItemCaseSensitive(d, "parameters");
    const cJSON *cases = cJSON_GetObjectItemCaseSensitive(d, "cases");
    if (!cJSON_IsArray(params))
        return kn_report_fail(err, errlen, "parameters: not a list");
    if (!cJSON_IsArray(cases))
        return kn_report_fail(err, errlen, "cases: not a list");
    s->nparams = (size_t)cJSON_GetArraySize(params);
    s->ncases = (size_t)cJSON_GetArraySize(cases);
    s->params = calloc(s->nparams ? s->nparams : 1, sizeof *s->params);
    s->cases = calloc(s->ncases ? s->ncases : 1, sizeof *s->cases);
    bool *listed = calloc(s->nparams ? s->nparams : 1, sizeof *listed);
    if (!s->params || !s->cases || !listed) {
        free(listed);
        return kn_report_fail(err, errlen, "out of memory");
    }
    int rc = 0;
    size_t i = 0;
    const cJSON *x;
    cJSON_ArrayForEach(x, params)
    {
        if (rc == 0)
            rc = parse_param(s, i, x, cases, err, errlen);
        listed[i] = cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(x, "values"));
        i++;
    }
    i = 0;
    cJSON_ArrayForEach(x, cases)
    {
        if (rc == 0)
            rc = parse_case(s, i, x, listed, err, errlen);
        i++;
    }
    free(listed);
    if (rc != 0)
        return -1;
    /* ids unique: sorted copies side by side */
    char(*ids)[11] = malloc((s->ncases ? s->ncases : 1) * sizeof *ids);
    if (!ids)
        return kn_report_fail(err, errlen, "out of memory");
    for (i = 0; i < s->ncases; i++)
        memcpy(ids[i], s->cases[i].id, 11);
    qsort(ids, s->ncases, sizeof *ids, cmp_id);
    for (i = 1; i < s->ncases; i++)
        if (strcmp(ids[i - 1], ids[i]) == 0) {
            rc = kn_report_fail(err, errlen, "case %s: listed twice", ids[i]);
            break;
        }
    free(ids);
    if (rc != 0)
        return -1;
    /* values in order, then each case's index among them */
    for (size_t k = 0; k < s->nparams; k++)
        sort_values(&s->params[k]);
    for (i = 0; i < s->ncases; i++) {
        struct kn_report_case *c = &s->cases[i];
        c->vidx = calloc(s->nparams ? s->nparams : 1, sizeof *c->vidx);
        if (!c->vidx)
            return kn_report_fail(err, errlen, "out of memory");
        for (size_t k = 0; k < s->nparams; k++) {
            const struct kn_report_param *p = &s->params[k];
            c->vidx[k] = find_value(p, cJSON_GetObjectItemCaseSensitive(c->params, p->name));
            if (c->vidx[k] == p->nvalues)
                return kn_report_fail(err, errlen,
                                      "case %s: its \"%s\" is not one of the parameter's values",
                                      c->id, p->name);
        }
    }
    return 0;
}

int kn_report_parse_result(struct kn_report_sweep *s, size_t i, const char *buf, size_t len,
                           char *err, size_t errlen)
{
    struct kn_report_case *c = &s->cases[i];
    cJSON *r = cJSON_ParseWithLength(buf, len);
    if (!r)
        return kn_report_fail(err, errlen, "not JSON");
    int rc = -1;
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(r, "id");
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(r, "status");
    const cJSON *mode = cJSON_GetObjectItemCaseSensitive(r, "mode");
    const cJSON *why = cJSON_GetObjectItemCaseSensitive(r, "why");
    const cJSON *sim = cJSON_GetObjectItemCaseSensitive(r, "sim_s");
    enum kn_sweepstats_status st = KN_SWEEPSTATS_NOT_RUN;
    int m = cJSON_IsString(mode) ? kn_sweepstats_mode_parse(mode->valuestring) : -1;
    if (cJSON_IsString(status)) {
        st = strcmp(status->valuestring, "pass") == 0    ? KN_SWEEPSTATS_PASS
             : strcmp(status->valuestring, "fail") == 0  ? KN_SWEEPSTATS_FAIL
             : strcmp(status->valuestring, "error") == 0 ? KN_SWEEPSTATS_ERROR
                                                         : KN_SWEEPSTATS_NOT_RUN;
    }
    if (!cJSON_IsObject(r))
        kn_report_fail(err, errlen, "not a JSON object");
    else if (!cJSON_IsString(id) || strcmp(id->valuestring, c->id) != 0)
        kn_report_fail(err, errlen, "id: not \"%s\"", c->id);
    else if (st == KN_SWEEPSTATS_NOT_RUN)
        kn_report_fail(err, errlen, "status: not pass, fail or error");
    else if (m < 0)
        kn_report_fail(err, errlen, "mode: not one of the failure modes");
    else if ((st == KN_SWEEPSTATS_PASS) != (m == KN_SWEEPSTATS_MODE_NONE))
        kn_report_fail(err, errlen, "mode \"%s\" with status \"%s\"", mode->valuestring,
                       status->valuestring);
    else if (why && !cJSON_IsString(why))
        kn_report_fail(err, errlen, "why: not a string");
    else if (sim &&
             (!cJSON_IsNumber(sim) || !(sim->valuedouble >= 0) || !isfinite(sim->valuedouble)))
        kn_report_fail(err, errlen, "sim_s: not a number >= 0");
    else
        rc = 0;
    if (rc != 0) {
        cJSON_Delete(r);
        return -1;
    }
    char *w = strdup(why && cJSON_IsString(why) ? why->valuestring : "");
    if (!w) {
        cJSON_Delete(r);
        return kn_report_fail(err, errlen, "out of memory");
    }
    free(c->why);
    cJSON_Delete(c->result);
    c->why = w;
    c->result = r;
    c->status = st;
    c->mode = (enum kn_sweepstats_mode)m;
    c->sim_s = sim ? sim->valuedouble : 0;
    return 0;
}

void kn_report_case_bad(struct kn_report_sweep *s, size_t i, const char *why)
{
    struct kn_report_case *c = &s->cases[i];
    free(c->why);
    cJSON_Delete(c->result);
    c->result = NULL;
    c->why = strdup(why);
    c->status = KN_SWEEPSTATS_ERROR;
    c->mode = KN_SWEEPSTATS_MODE_ERROR;
    c->sim_s = 0;
}

void kn_report_sweep_free(struct kn_report_sweep *s)
{
    for (size_t i = 0; s->cases && i < s->ncases; i++) {
        free(s->cases[i].vidx);
        free(s->cases[i].why);
        cJSON_Delete(s->cases[i].result);
    }
    for (size_t k = 0; s->params && k < s->nparams; k++)
        free(s->params[k].values);
    free(s->cases);
    free(s->params);
    cJSON_Delete(s->doc);
    memset(s, 0, sizeof *s);
}

char *kn_report_read_file(const char *path, size_t max, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    int bad = fstat(fd, &st) != 0           ? errno
              : !S_ISREG(st.st_mode)        ? EISDIR
              : (uintmax_t)st.st_size > max ? EFBIG
                                            : 0;
    if (bad) {
        close(fd);
        errno = bad;
        return NULL;
    }
    size_t cap = (size_t)st.st_size + 1, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        ssize_t got = read(fd, buf + n, cap - 1 - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            free(buf);
            buf = NULL;
            break;
        }
        if (got == 0)
            break;
        n += (size_t)got;
        if (n == cap - 1)
            break; /* grew while read: take what its size said */
    }
    int e = errno;
    close(fd);
    if (!buf) {
        errno = e ? e : ENOMEM;
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

int kn_report_load_sweep(const char *dir, struct kn_report_sweep *s, char *err, size_t errlen)
{
    char path[4096], why[512];
    memset(s, 0, sizeof *s);
    snprintf(path, sizeof path, "%s/sweep.json", dir);
    size_t len = 0;
    char *buf = kn_report_read_file(path, KN_REPORT_MAX_SWEEP_BYTES, &len);
    if (!buf)
        return kn_report_fail(err, errlen, "%s: %s", path, strerror(errno));
    int rc = kn_report_parse_sweep(buf, len, s, why, sizeof why);
    free(buf);
    if (rc != 0)
        return kn_report_fail(err, errlen, "%s: %s", path, why);
    return 0;
}

size_t kn_report_load_results(const char *dir, struct kn_report_sweep *s)
{
    size_t bad = 0;
    for (size_t i = 0; i < s->ncases; i++) {
        char path[4096], why[600], err[512];
        snprintf(path, sizeof path, "%s/cases/%s/result.json", dir, s->cases[i].id);
        size_t len = 0;
        char *buf = kn_report_read_file(path, KN_REPORT_MAX_RESULT_BYTES, &len);
        if (!buf && errno == ENOENT)
            continue; /* not run (another shard's, or the run stopped) */
        if (!buf)
            snprintf(why, sizeof why, "result.json: %s", strerror(errno));
        else if (kn_report_parse_result(s, i, buf, len, err, sizeof err) != 0)
            snprintf(why, sizeof why, "result.json: %s", err);
        else
            why[0] = '\0';
        free(buf);
        if (why[0]) {
            kn_report_case_bad(s, i, why);
            bad++;
        }
    }
    return bad;
}
