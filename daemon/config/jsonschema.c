/* A small JSON Schema validator over cJSON (see jsonschema.h for the
 * keyword subset). Recursion follows the schema, never the document alone,
 * so a deeply nested document cannot exhaust the stack here. */
#include "jsonschema.h"

#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PATH_CAP 512
#define MSG_CAP 1024
#define QUOTE_MAX_CHARS 48 /* longer strings are cut in messages */
#define MAX_PROPERTIES 128 /* per schema object; keeps duplicate-key tracking O(n) */
#define MAX_SCHEMA_DEPTH 32
#define REGEX_CACHE 16

/* ---- small text helpers ---------------------------------------------- */

struct sbuf {
    char *buf;
    size_t cap;
    size_t len;
};

static void sb_init(struct sbuf *b, char *buf, size_t cap)
{
    b->buf = buf;
    b->cap = cap;
    b->len = 0;
    if (cap > 0)
        buf[0] = '\0';
}

/* Truncates silently: messages are best effort, memory safety is not. */
static void sb_vprintf(struct sbuf *b, const char *fmt, va_list ap)
{
    if (b->cap == 0 || b->len + 1 >= b->cap)
        return;
    int n = vsnprintf(b->buf + b->len, b->cap - b->len, fmt, ap);
    if (n < 0)
        return;
    b->len += (size_t)n;
    if (b->len >= b->cap)
        b->len = b->cap - 1;
}

__attribute__((format(printf, 2, 3))) static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sb_vprintf(b, fmt, ap);
    va_end(ap);
}

static void sb_putc(struct sbuf *b, char ch)
{
    if (b->cap == 0 || b->len + 1 >= b->cap)
        return;
    b->buf[b->len++] = ch;
    b->buf[b->len] = '\0';
}

/* Shortest %g form that reads back as the same double. */
static void fmt_number(double d, char *buf, size_t len)
{
    if (isnan(d)) {
        snprintf(buf, len, "NaN");
        return;
    }
    if (isinf(d)) {
        snprintf(buf, len, "%s", d > 0 ? "1e999" : "-1e999");
        return;
    }
    if (floor(d) == d && fabs(d) < 1e15) { /* integers without exponent */
        snprintf(buf, len, "%.0f", d);
        return;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, len, "%.*g", prec, d);
        if (strtod(buf, NULL) == d)
            return;
    }
}

void kn_jsonschema_quote(const char *s, char *buf, size_t len)
{
    struct sbuf b;
    sb_init(&b, buf, len);
    sb_putc(&b, '"');
    size_t chars = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if ((*p & 0xC0u) != 0x80u && ++chars > QUOTE_MAX_CHARS) {
            sb_printf(&b, "...");
            break;
        }
        switch (*p) {
        case '"': sb_printf(&b, "\\\""); break;
        case '\\': sb_printf(&b, "\\\\"); break;
        case '\n': sb_printf(&b, "\\n"); break;
        case '\r': sb_printf(&b, "\\r"); break;
        case '\t': sb_printf(&b, "\\t"); break;
        default:
            if (*p < 0x20u || *p == 0x7Fu)
                sb_printf(&b, "\\u%04x", *p);
            else
                sb_putc(&b, (char)*p);
        }
    }
    sb_putc(&b, '"');
}

void kn_jsonschema_describe(const cJSON *v, bool with_type, char *buf, size_t len)
{
    struct sbuf b;
    sb_init(&b, buf, len);
    if (v == NULL) {
        sb_printf(&b, "nothing");
    } else if (cJSON_IsString(v)) {
        char q[QUOTE_MAX_CHARS * 6 + 16];
        kn_jsonschema_quote(v->valuestring ? v->valuestring : "", q, sizeof q);
        sb_printf(&b, "%s%s", with_type ? "string " : "", q);
    } else if (cJSON_IsNumber(v)) {
        char n[40];
        fmt_number(v->valuedouble, n, sizeof n);
        sb_printf(&b, "%s%s", with_type ? "number " : "", n);
    } else if (cJSON_IsTrue(v)) {
        sb_printf(&b, "true");
    } else if (cJSON_IsFalse(v)) {
        sb_printf(&b, "false");
    } else if (cJSON_IsNull(v)) {
        sb_printf(&b, "null");
    } else if (cJSON_IsObject(v)) {
        sb_printf(&b, "an object");
    } else if (cJSON_IsArray(v)) {
        sb_printf(&b, "an array");
    } else {
        sb_printf(&b, "an invalid value");
    }
}

static size_t utf8_chars(const char *s)
{
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if ((*p & 0xC0u) != 0x80u)
            n++;
    return n;
}

static const cJSON *kw(const cJSON *schema, const char *name)
{
    return cJSON_GetObjectItemCaseSensitive(schema, name);
}

/* ---- JSON paths ------------------------------------------------------- */

struct path {
    char s[PATH_CAP];
    size_t len;
};

static bool is_ident(const char *k)
{
    if (!((*k >= 'A' && *k <= 'Z') || (*k >= 'a' && *k <= 'z') || *k == '_' || *k == '$'))
        return false;
    for (const char *p = k + 1; *p; p++)
        if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
              *p == '_' || *p == '$'))
            return false;
    return true;
}

/* Returns the previous length, for path_pop. */
static size_t path_push_key(struct path *p, const char *key)
{
    size_t old = p->len;
    struct sbuf b = { p->s, sizeof p->s, p->len };
    if (is_ident(key) && strlen(key) <= 64) {
        sb_printf(&b, ".%s", key);
    } else {
        char q[QUOTE_MAX_CHARS * 6 + 16];
        kn_jsonschema_quote(key, q, sizeof q);
        sb_printf(&b, "[%s]", q);
    }
    p->len = b.len;
    return old;
}

static size_t path_push_index(struct path *p, size_t i)
{
    size_t old = p->len;
    struct sbuf b = { p->s, sizeof p->s, p->len };
    sb_printf(&b, "[%zu]", i);
    p->len = b.len;
    return old;
}

static void path_pop(struct path *p, size_t old)
{
    p->len = old;
    p->s[old] = '\0';
}

static void path_init(struct path *p, const char *start)
{
    struct sbuf b;
    sb_init(&b, p->s, sizeof p->s);
    sb_printf(&b, "%s", start);
    p->len = b.len;
}

/* ---- validation ------------------------------------------------------- */

struct regex_slot {
    const cJSON *node;
    regex_t re;
};

struct vctx {
    struct path path;
    size_t errors;
    size_t max_errors;
    bool stop;
    kn_jsonschema_report_fn report;
    void *ctx;
    struct regex_slot cache[REGEX_CACHE];
    size_t n_cache;
};

__attribute__((format(printf, 2, 3))) static void vfail(struct vctx *c, const char *fmt, ...)
{
    if (c->stop)
        return;
    char msg[MSG_CAP];
    struct sbuf b;
    sb_init(&b, msg, sizeof msg);
    va_list ap;
    va_start(ap, fmt);
    sb_vprintf(&b, fmt, ap);
    va_end(ap);
    c->report(c->ctx, c->path.s, msg);
    if (++c->errors >= c->max_errors)
        c->stop = true;
}

static bool type_is(const char *t, const cJSON *v)
{
    if (strcmp(t, "object") == 0)
        return cJSON_IsObject(v);
    if (strcmp(t, "array") == 0)
        return cJSON_IsArray(v);
    if (strcmp(t, "string") == 0)
        return cJSON_IsString(v);
    if (strcmp(t, "number") == 0)
        return cJSON_IsNumber(v);
    if (strcmp(t, "integer") == 0)
        return cJSON_IsNumber(v) && isfinite(v->valuedouble) &&
               floor(v->valuedouble) == v->valuedouble;
    if (strcmp(t, "boolean") == 0)
        return cJSON_IsBool(v);
    if (strcmp(t, "null") == 0)
        return cJSON_IsNull(v);
    return false;
}

static bool type_ok(const cJSON *type, const cJSON *v)
{
    if (cJSON_IsString(type))
        return type_is(type->valuestring, v);
    const cJSON *t;
    cJSON_ArrayForEach(t, type) if (cJSON_IsString(t) && type_is(t->valuestring, v)) return true;
    return false;
}

static void type_list(const cJSON *type, struct sbuf *b)
{
    if (cJSON_IsString(type)) {
        sb_printf(b, "%s", type->valuestring);
        return;
    }
    int n = cJSON_GetArraySize(type), i = 0;
    const cJSON *t;
    cJSON_ArrayForEach(t, type)
    {
        if (i > 0)
            sb_printf(b, i == n - 1 ? " or " : ", ");
        sb_printf(b, "%s", cJSON_IsString(t) ? t->valuestring : "?");
        i++;
    }
}

/* The schema's declared type word for range messages. */
static const char *number_word(const cJSON *schema)
{
    const cJSON *type = kw(schema, "type");
    if (cJSON_IsString(type) && strcmp(type->valuestring, "integer") == 0)
        return "integer";
    return "number";
}

static void check_number(struct vctx *c, const cJSON *s, double d)
{
    const cJSON *mn = kw(s, "minimum"), *mx = kw(s, "maximum");
    const cJSON *emn = kw(s, "exclusiveMinimum"), *emx = kw(s, "exclusiveMaximum");
    bool bad = (mn && d < mn->valuedouble) || (mx && d > mx->valuedouble) ||
               (emn && d <= emn->valuedouble) || (emx && d >= emx->valuedouble);
    if (!bad)
        return;
    char range[160], a[40], z[40], got[40];
    struct sbuf b;
    sb_init(&b, range, sizeof range);
    if (mn && mx && !emn && !emx) {
        fmt_number(mn->valuedouble, a, sizeof a);
        fmt_number(mx->valuedouble, z, sizeof z);
        sb_printf(&b, "%s..%s", a, z);
    } else {
        const char *sep = "";
        if (emn) {
            fmt_number(emn->valuedouble, a, sizeof a);
            sb_printf(&b, "> %s", a);
            sep = " and ";
        } else if (mn) {
            fmt_number(mn->valuedouble, a, sizeof a);
            sb_printf(&b, ">= %s", a);
            sep = " and ";
        }
        if (emx) {
            fmt_number(emx->valuedouble, z, sizeof z);
            sb_printf(&b, "%s< %s", sep, z);
        } else if (mx) {
            fmt_number(mx->valuedouble, z, sizeof z);
            sb_printf(&b, "%s<= %s", sep, z);
        }
    }
    fmt_number(d, got, sizeof got);
    vfail(c, "expected %s %s, got %s", number_word(s), range, got);
}

static const regex_t *regex_for(struct vctx *c, const cJSON *pattern, regex_t *tmp, bool *is_tmp)
{
    *is_tmp = false;
    for (size_t i = 0; i < c->n_cache; i++)
        if (c->cache[i].node == pattern)
            return &c->cache[i].re;
    regex_t *re = c->n_cache < REGEX_CACHE ? &c->cache[c->n_cache].re : tmp;
    if (regcomp(re, pattern->valuestring, REG_EXTENDED | REG_NOSUB) != 0)
        return NULL;
    if (re == tmp) {
        *is_tmp = true;
    } else {
        c->cache[c->n_cache].node = pattern;
        c->n_cache++;
    }
    return re;
}

static void check_string(struct vctx *c, const cJSON *s, const cJSON *v)
{
    const char *str = v->valuestring ? v->valuestring : "";
    const cJSON *mnl = kw(s, "minLength"), *mxl = kw(s, "maxLength"), *pat = kw(s, "pattern");
    char got[QUOTE_MAX_CHARS * 6 + 16];
    if (mnl || mxl) {
        size_t n = utf8_chars(str);
        bool short_ = mnl && (double)n < mnl->valuedouble;
        bool long_ = mxl && (double)n > mxl->valuedouble;
        if (short_ || long_) {
            kn_jsonschema_quote(str, got, sizeof got);
            const char *pl = n == 1 ? "" : "s";
            if (mnl && mxl)
                vfail(c, "expected a string of %d..%d characters, got %s (%zu character%s)",
                      mnl->valueint, mxl->valueint, got, n, pl);
            else if (mnl)
                vfail(c, "expected a string of at least %d character%s, got %s", mnl->valueint,
                      mnl->valueint == 1 ? "" : "s", got);
            else
                vfail(c, "expected a string of at most %d character%s, got %s (%zu character%s)",
                      mxl->valueint, mxl->valueint == 1 ? "" : "s", got, n, pl);
        }
    }
    if (pat && cJSON_IsString(pat)) {
        regex_t tmp;
        bool is_tmp;
        const regex_t *re = regex_for(c, pat, &tmp, &is_tmp);
        if (re == NULL) {
            vfail(c, "the schema's pattern %s does not compile", pat->valuestring);
            return;
        }
        if (regexec(re, str, 0, NULL, 0) != 0) {
            kn_jsonschema_quote(str, got, sizeof got);
            vfail(c, "expected a string matching %s, got %s", pat->valuestring, got);
        }
        if (is_tmp)
            regfree(&tmp);
    }
}

static void validate_node(struct vctx *c, const cJSON *s, const cJSON *v);

static void check_array(struct vctx *c, const cJSON *s, const cJSON *v)
{
    const cJSON *mni = kw(s, "minItems"), *mxi = kw(s, "maxItems"), *items = kw(s, "items");
    int n = cJSON_GetArraySize(v);
    if ((mni && n < mni->valuedouble) || (mxi && n > mxi->valuedouble)) {
        if (mni && mxi && mni->valueint == mxi->valueint)
            vfail(c, "expected exactly %d item%s, got %d", mni->valueint,
                  mni->valueint == 1 ? "" : "s", n);
        else if (mni && mxi)
            vfail(c, "expected %d..%d items, got %d", mni->valueint, mxi->valueint, n);
        else if (mni)
            vfail(c, "expected at least %d item%s, got %d", mni->valueint,
                  mni->valueint == 1 ? "" : "s", n);
        else
            vfail(c, "expected at most %d item%s, got %d", mxi->valueint,
                  mxi->valueint == 1 ? "" : "s", n);
    }
    if (!cJSON_IsObject(items))
        return;
    size_t i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, v)
    {
        if (c->stop)
            return;
        size_t old = path_push_index(&c->path, i++);
        validate_node(c, items, e);
        path_pop(&c->path, old);
    }
}

static void key_list(const cJSON *props, struct sbuf *b)
{
    const cJSON *p;
    const char *sep = "";
    cJSON_ArrayForEach(p, props)
    {
        sb_printf(b, "%s\"%s\"", sep, p->string ? p->string : "");
        sep = ", ";
    }
}

static void check_object(struct vctx *c, const cJSON *s, const cJSON *v)
{
    const cJSON *req = kw(s, "required"), *props = kw(s, "properties");
    const cJSON *addl = kw(s, "additionalProperties");
    const cJSON *r;
    cJSON_ArrayForEach(r, req)
    {
        if (cJSON_IsString(r) && cJSON_GetObjectItemCaseSensitive(v, r->valuestring) == NULL) {
            char q[QUOTE_MAX_CHARS * 6 + 16];
            kn_jsonschema_quote(r->valuestring, q, sizeof q);
            vfail(c, "missing required key %s", q);
        }
    }
    unsigned seen[MAX_PROPERTIES] = { 0 };
    const cJSON *m;
    cJSON_ArrayForEach(m, v)
    {
        if (c->stop)
            return;
        const char *key = m->string ? m->string : "";
        const cJSON *ps = NULL;
        int idx = 0;
        cJSON_ArrayForEach(ps, props)
        {
            if (ps->string && strcmp(ps->string, key) == 0)
                break;
            idx++;
        }
        size_t old = path_push_key(&c->path, key);
        if (ps != NULL) {
            if (idx < MAX_PROPERTIES && seen[idx]++ > 0)
                vfail(c, "duplicate key (each key may appear only once)");
            else
                validate_node(c, ps, m);
        } else if (cJSON_IsFalse(addl)) {
            char keys[400];
            struct sbuf b;
            sb_init(&b, keys, sizeof keys);
            key_list(props, &b);
            if (b.len > 0)
                vfail(c, "unknown key (expected one of %s)", keys);
            else
                vfail(c, "unknown key (this object takes no keys)");
        } else if (cJSON_IsObject(addl)) {
            validate_node(c, addl, m);
        }
        path_pop(&c->path, old);
    }
}

static void validate_node(struct vctx *c, const cJSON *s, const cJSON *v)
{
    if (c->stop)
        return;
    char got[QUOTE_MAX_CHARS * 6 + 32];
    const cJSON *type = kw(s, "type");
    if (type && !type_ok(type, v)) {
        char want[120];
        struct sbuf b;
        sb_init(&b, want, sizeof want);
        type_list(type, &b);
        kn_jsonschema_describe(v, true, got, sizeof got);
        vfail(c, "expected %s, got %s", want, got);
        return;
    }
    if (cJSON_IsNumber(v) && !isfinite(v->valuedouble)) {
        vfail(c, "expected a finite number, got a number too large to represent");
        return;
    }
    const cJSON *en = kw(s, "enum");
    if (en) {
        const cJSON *e;
        bool found = false;
        cJSON_ArrayForEach(e, en) if (cJSON_Compare(e, v, true))
        {
            found = true;
            break;
        }
        if (!found) {
            char list[400], one[QUOTE_MAX_CHARS * 6 + 32];
            struct sbuf b;
            sb_init(&b, list, sizeof list);
            const char *sep = "";
            cJSON_ArrayForEach(e, en)
            {
                kn_jsonschema_describe(e, false, one, sizeof one);
                sb_printf(&b, "%s%s", sep, one);
                sep = ", ";
            }
            kn_jsonschema_describe(v, false, got, sizeof got);
            vfail(c, "expected one of %s, got %s", list, got);
            return;
        }
    }
    if (cJSON_IsNumber(v))
        check_number(c, s, v->valuedouble);
    else if (cJSON_IsString(v))
        check_string(c, s, v);
    else if (cJSON_IsArray(v))
        check_array(c, s, v);
    else if (cJSON_IsObject(v))
        check_object(c, s, v);
}

static void vctx_init(struct vctx *c, const char *start, size_t max_errors,
                      kn_jsonschema_report_fn report, void *ctx)
{
    memset(c, 0, sizeof *c);
    path_init(&c->path, start);
    c->max_errors = max_errors;
    c->report = report;
    c->ctx = ctx;
    c->stop = max_errors == 0;
}

static void vctx_free(struct vctx *c)
{
    for (size_t i = 0; i < c->n_cache; i++)
        regfree(&c->cache[i].re);
    c->n_cache = 0;
}

size_t kn_jsonschema_validate(const cJSON *schema, const cJSON *doc, size_t max_errors,
                              kn_jsonschema_report_fn report, void *ctx)
{
    struct vctx *c = malloc(sizeof *c);
    if (c == NULL) {
        report(ctx, "$", "out of memory while validating");
        return 1;
    }
    vctx_init(c, "$", max_errors, report, ctx);
    validate_node(c, schema, doc);
    size_t n = c->errors;
    vctx_free(c);
    free(c);
    return n;
}

/* ---- schema self-check ------------------------------------------------ */

struct cctx {
    struct path path;
    size_t problems;
    kn_jsonschema_report_fn report;
    void *ctx;
};

__attribute__((format(printf, 2, 3))) static void cfail(struct cctx *c, const char *fmt, ...)
{
    char msg[MSG_CAP];
    struct sbuf b;
    sb_init(&b, msg, sizeof msg);
    va_list ap;
    va_start(ap, fmt);
    sb_vprintf(&b, fmt, ap);
    va_end(ap);
    c->report(c->ctx, c->path.s, msg);
    c->problems++;
}

static bool type_name_ok(const cJSON *t)
{
    static const char *const names[] = { "object",  "array",   "string", "number",
                                         "integer", "boolean", "null" };
    if (!cJSON_IsString(t))
        return false;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(t->valuestring, names[i]) == 0)
            return true;
    return false;
}

static void check_schema_node(struct cctx *c, const cJSON *s, int depth);

/* Forwards the default's validation errors as schema problems. */
static void default_report(void *ctx, const char *path, const char *message)
{
    struct cctx *c = ctx;
    c->report(c->ctx, path, message);
    c->problems++;
}

static void check_keyword(struct cctx *c, const cJSON *k, int depth)
{
    const char *name = k->string ? k->string : "";
    char got[QUOTE_MAX_CHARS * 6 + 32];
    kn_jsonschema_describe(k, true, got, sizeof got);
    if (!strcmp(name, "$schema") || !strcmp(name, "$id") || !strcmp(name, "$comment") ||
        !strcmp(name, "title") || !strcmp(name, "description")) {
        if (!cJSON_IsString(k))
            cfail(c, "expected a string, got %s", got);
    } else if (!strcmp(name, "type")) {
        bool ok = type_name_ok(k);
        if (cJSON_IsArray(k)) {
            const cJSON *t;
            ok = cJSON_GetArraySize(k) > 0;
            cJSON_ArrayForEach(t, k) ok = ok && type_name_ok(t);
        }
        if (!ok)
            cfail(c, "expected a JSON type name or a non-empty array of them, got %s", got);
    } else if (!strcmp(name, "properties")) {
        if (!cJSON_IsObject(k)) {
            cfail(c, "expected an object, got %s", got);
            return;
        }
        if (cJSON_GetArraySize(k) > MAX_PROPERTIES)
            cfail(c, "more than %d properties are not supported", MAX_PROPERTIES);
        const cJSON *p, *q;
        cJSON_ArrayForEach(p, k)
        {
            size_t old = path_push_key(&c->path, p->string ? p->string : "");
            for (q = k->child; q != p; q = q->next)
                if (q->string && p->string && strcmp(q->string, p->string) == 0)
                    cfail(c, "duplicate property");
            check_schema_node(c, p, depth + 1);
            path_pop(&c->path, old);
        }
    } else if (!strcmp(name, "required")) {
        bool ok = cJSON_IsArray(k);
        const cJSON *r;
        cJSON_ArrayForEach(r, k) ok = ok && cJSON_IsString(r);
        if (!ok)
            cfail(c, "expected an array of strings, got %s", got);
    } else if (!strcmp(name, "additionalProperties")) {
        if (cJSON_IsObject(k))
            check_schema_node(c, k, depth + 1);
        else if (!cJSON_IsBool(k))
            cfail(c, "expected a boolean or a schema object, got %s", got);
    } else if (!strcmp(name, "items")) {
        check_schema_node(c, k, depth + 1);
    } else if (!strcmp(name, "minItems") || !strcmp(name, "maxItems") ||
               !strcmp(name, "minLength") || !strcmp(name, "maxLength")) {
        if (!type_is("integer", k) || k->valuedouble < 0 || k->valuedouble > INT32_MAX)
            cfail(c, "expected a non-negative integer, got %s", got);
    } else if (!strcmp(name, "minimum") || !strcmp(name, "maximum") ||
               !strcmp(name, "exclusiveMinimum") || !strcmp(name, "exclusiveMaximum")) {
        if (!cJSON_IsNumber(k) || !isfinite(k->valuedouble))
            cfail(c, "expected a number, got %s", got);
    } else if (!strcmp(name, "enum")) {
        if (!cJSON_IsArray(k) || cJSON_GetArraySize(k) == 0)
            cfail(c, "expected a non-empty array, got %s", got);
    } else if (!strcmp(name, "pattern")) {
        regex_t re;
        if (!cJSON_IsString(k)) {
            cfail(c, "expected a string, got %s", got);
        } else if (regcomp(&re, k->valuestring, REG_EXTENDED | REG_NOSUB) != 0) {
            cfail(c, "expected a POSIX extended regular expression, got %s", got);
        } else {
            regfree(&re);
        }
    } else if (!strcmp(name, "default")) {
        /* checked against its own subschema once the node is known good */
    } else {
        cfail(c, "unsupported keyword (this validator knows type, properties, required, "
                 "additionalProperties, items, minItems, maxItems, minimum, maximum, "
                 "exclusiveMinimum, exclusiveMaximum, enum, minLength, maxLength, pattern, "
                 "default, description, title, $schema, $id, $comment)");
    }
}

static void check_schema_node(struct cctx *c, const cJSON *s, int depth)
{
    if (!cJSON_IsObject(s)) {
        char got[QUOTE_MAX_CHARS * 6 + 32];
        kn_jsonschema_describe(s, true, got, sizeof got);
        cfail(c, "expected a schema object, got %s", got);
        return;
    }
    if (depth > MAX_SCHEMA_DEPTH) {
        cfail(c, "schema nested deeper than %d levels", MAX_SCHEMA_DEPTH);
        return;
    }
    size_t before = c->problems;
    const cJSON *k, *q;
    cJSON_ArrayForEach(k, s)
    {
        size_t old = path_push_key(&c->path, k->string ? k->string : "");
        for (q = s->child; q != k; q = q->next)
            if (q->string && k->string && strcmp(q->string, k->string) == 0)
                cfail(c, "duplicate keyword");
        check_keyword(c, k, depth);
        path_pop(&c->path, old);
    }
    const cJSON *def = kw(s, "default");
    if (def && c->problems == before) {
        struct vctx *v = malloc(sizeof *v);
        if (v == NULL) {
            cfail(c, "out of memory while checking the schema");
            return;
        }
        size_t old = path_push_key(&c->path, "default");
        vctx_init(v, c->path.s, 16, default_report, c);
        validate_node(v, s, def);
        vctx_free(v);
        free(v);
        path_pop(&c->path, old);
    }
}

size_t kn_jsonschema_check(const cJSON *schema, kn_jsonschema_report_fn report, void *ctx)
{
    struct cctx c;
    memset(&c, 0, sizeof c);
    path_init(&c.path, "$");
    c.report = report;
    c.ctx = ctx;
    check_schema_node(&c, schema, 0);
    return c.problems;
}
