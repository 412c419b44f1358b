/* The configuration reference made from the key table: for the keys held
 * by some objects, a Markdown table (docs/configuration.md) or scdoc
 * entries (kenaf-simd.json(5)), each saying the key's type and range, its
 * default, what a reload does with it and what it means. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_priv.h"

__attribute__((format(printf, 2, 3))) static void putf(struct kn_cfg_text *b, const char *fmt, ...)
{
    char tmp[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    kn_config_text_str(b, tmp);
}

/* A number as people write it: whole numbers in full (1048576, not
 * 1.04858e+06). */
static const char *num(char *out, size_t len, double v)
{
    if (v == (double)(long long)v && v > -1e15 && v < 1e15)
        snprintf(out, len, "%lld", (long long)v);
    else
        snprintf(out, len, "%g", v);
    return out;
}

/* "lo..hi", or "> lo, <= hi" */
static void range_text(char *out, size_t len, double lo, double hi, bool excl)
{
    char a[32], b[32];
    snprintf(out, len, excl ? "> %s, <= %s" : "%s..%s", num(a, sizeof a, lo), num(b, sizeof b, hi));
}

/* The form of a custom key, read from its schema keywords. */
static void custom_type(const struct kn_cfg_key *k, char *out, size_t len)
{
    cJSON *s = cJSON_Parse(k->schema != NULL ? k->schema : "{}");
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(s, "type");
    const cJSON *mn = cJSON_GetObjectItemCaseSensitive(s, "minimum");
    const cJSON *mx = cJSON_GetObjectItemCaseSensitive(s, "maximum");
    const cJSON *ml = cJSON_GetObjectItemCaseSensitive(s, "maxLength");
    const cJSON *mi = cJSON_GetObjectItemCaseSensitive(s, "maxItems");
    const cJSON *ni = cJSON_GetObjectItemCaseSensitive(s, "minItems");
    char r[128] = "";
    if (cJSON_IsArray(t)) {
        snprintf(out, len, "%s or %s", cJSON_GetArrayItem(t, 0)->valuestring,
                 cJSON_GetArrayItem(t, 1)->valuestring);
    } else if (cJSON_IsString(t) && strcmp(t->valuestring, "array") == 0) {
        if (cJSON_IsNumber(ni) && cJSON_IsNumber(mi))
            snprintf(out, len, "array of %d..%d", ni->valueint, mi->valueint);
        else if (cJSON_IsNumber(mi))
            snprintf(out, len, "array of at most %d", mi->valueint);
        else
            snprintf(out, len, "array");
    } else if (cJSON_IsString(t)) {
        if (cJSON_IsNumber(mn) && cJSON_IsNumber(mx))
            range_text(r, sizeof r, mn->valuedouble, mx->valuedouble, false);
        else if (cJSON_IsNumber(ml))
            snprintf(r, sizeof r, "at most %d bytes", ml->valueint);
        snprintf(out, len, "%s%s%s", t->valuestring, r[0] ? " " : "", r);
    } else if (k->names != NULL) {
        out[0] = '\0';
        for (int i = 0; i < k->n_names; i++) {
            size_t u = strlen(out);
            snprintf(out + u, len - u, "%s\"%s\"", i ? ", " : "", k->names[i]);
        }
    } else {
        snprintf(out, len, "see the text");
    }
    cJSON_Delete(s);
}

static void type_text(const struct kn_cfg_key *k, char *out, size_t len)
{
    char r[128] = "";
    if (k->flags & KN_CFG_RANGE)
        range_text(r, sizeof r, k->min, k->max, (k->flags & KN_CFG_EXCL_MIN) != 0);
    switch (k->type) {
    case KN_CFG_NUMBER:
        if (k->flags & KN_CFG_SIGN)
            snprintf(out, len, "number, -1 or 1");
        else
            snprintf(out, len, "number%s%s", r[0] ? " " : "", r);
        return;
    case KN_CFG_INT32: snprintf(out, len, "integer%s%s", r[0] ? " " : "", r); return;
    case KN_CFG_BOOL: snprintf(out, len, "boolean"); return;
    case KN_CFG_STRING: {
        int mx = k->maxlen > 0 ? k->maxlen : (int)k->size - 1;
        snprintf(out, len, "string, %d..%d bytes%s%s", k->minlen, mx,
                 k->pattern != NULL ? " matching " : "", k->pattern != NULL ? k->pattern : "");
        return;
    }
    case KN_CFG_ENUM:
        out[0] = '\0';
        for (int i = 0; i < k->n_names; i++) {
            size_t u = strlen(out);
            snprintf(out + u, len - u, "%s\"%s\"", i ? ", " : "", k->names[i]);
        }
        return;
    case KN_CFG_VEC:
        if (k->flags & KN_CFG_SIGN)
            snprintf(out, len, "%d numbers, each -1 or 1", k->vec_n);
        else
            snprintf(out, len, "%d numbers%s%s", k->vec_n, r[0] ? ", each " : "", r);
        return;
    case KN_CFG_CUSTOM: custom_type(k, out, len); return;
    case KN_CFG_SECTION: snprintf(out, len, "object"); return;
    }
}

static const char *reload_text(enum kn_cfg_reload r)
{
    switch (r) {
    case KN_CFG_RELOAD_LIVE: return "applied";
    case KN_CFG_RELOAD_ROBOT: return "restarts the robot";
    case KN_CFG_RELOAD_STATS: return "reopens the stats socket";
    case KN_CFG_RELOAD_START: return "at start-up only";
    }
    return "";
}

static void default_text(const struct kn_cfg_key *k, char *out, size_t len, bool md)
{
    if (k->type == KN_CFG_SECTION && !(k->flags & KN_CFG_REQUIRED))
        snprintf(out, len, "its keys' defaults");
    else if (k->flags & KN_CFG_REQUIRED)
        snprintf(out, len, md ? "**required**" : "required");
    else if (k->def != NULL)
        snprintf(out, len, md ? "`%s`" : "%s", k->def);
    else if (k->def_doc != NULL)
        snprintf(out, len, "%s", k->def_doc);
    else
        snprintf(out, len, "none");
}

/* Whether k's parent is one of the space-separated parents; *first gets
 * the first of them (the prefix the key column leaves out). */
static bool listed(const struct kn_cfg_key *k, const char *parents, char *first, size_t flen)
{
    char parent[160];
    kn_config_key_parent(k, parent, sizeof parent);
    size_t pl = strlen(parent);
    size_t n0 = strcspn(parents, " ");
    snprintf(first, flen, "%.*s", (int)n0, parents);
    for (const char *p = parents; *p;) {
        size_t n = strcspn(p, " ");
        /* "$": the top level, whose parent is "" */
        if ((n == pl && strncmp(p, parent, n) == 0) || (pl == 0 && n == 1 && *p == '$'))
            return true;
        p += n + (p[n] == ' ');
    }
    return false;
}

/* Markdown table cell: a '|' would end it. */
static void put_cell(struct kn_cfg_text *b, const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            kn_config_text_str(b, "\\|");
        else
            kn_config_text_put(b, s, 1);
    }
}

/* scdoc text: '*' and a '_' that starts a word would format, '\' escapes. */
static void put_scd(struct kn_cfg_text *b, const char *s, int *col)
{
    for (const char *p = s; *p; p++) {
        /* never start a line with what scdoc reads as a list or a
         * heading ("- ", "+ ", ". ", "# ") */
        if (*p == ' ' && *col > 72 && !strchr("-+.#", p[1])) {
            kn_config_text_str(b, "\n\t");
            *col = 8;
            continue;
        }
        if (*p == '*' || *p == '\\' || (*p == '_' && (p == s || p[-1] == ' ' || p[-1] == '(')))
            kn_config_text_put(b, "\\", 1);
        kn_config_text_put(b, p, 1);
        (*col)++;
    }
}

/* The key as its table names it: its path below the first parent. */
static const char *label(const struct kn_cfg_key *k, const char *first)
{
    size_t fl = strlen(first);
    return strncmp(k->path, first, fl) == 0 && k->path[fl] == '.' ? k->path + fl + 1 : k->path;
}

static void md_row(struct kn_cfg_text *b, const struct kn_cfg_key *k, const char *first)
{
    char t[300], d[300];
    type_text(k, t, sizeof t);
    default_text(k, d, sizeof d, true);
    putf(b, "| `%s` | ", label(k, first));
    put_cell(b, t);
    kn_config_text_str(b, " | ");
    put_cell(b, d);
    putf(b, " | %s | ", k->type == KN_CFG_SECTION ? "as its keys" : reload_text(k->reload));
    put_cell(b, k->doc);
    kn_config_text_str(b, " |\n");
}

static void scd_entry(struct kn_cfg_text *b, const struct kn_cfg_key *k, const char *first)
{
    char t[300], d[300], line[700];
    type_text(k, t, sizeof t);
    default_text(k, d, sizeof d, false);
    putf(b, "*%s*\n\t", label(k, first));
    if (k->type == KN_CFG_SECTION)
        snprintf(line, sizeof line, "%s; default %s. ", t, d);
    else
        snprintf(line, sizeof line, "%s; default %s; on reload: %s. ", t, d,
                 reload_text(k->reload));
    line[0] = (char)(line[0] >= 'a' && line[0] <= 'z' ? line[0] - 'a' + 'A' : line[0]);
    int col = 8;
    put_scd(b, line, &col);
    put_scd(b, k->doc, &col);
    kn_config_text_str(b, "\n\n");
}

char *kn_config_reference(const char *parents, bool md)
{
    struct kn_cfg_text b = { NULL, 0, 0, false };
    char first[160];
    size_t rows = 0;
    if (md)
        kn_config_text_str(
            &b, "| key | type, range | default | on reload | meaning |\n|---|---|---|---|---|\n");
    for (size_t i = 0; i < kn_config_nkeys(); i++) {
        const struct kn_cfg_key *k = kn_config_key(i);
        if (!listed(k, parents, first, sizeof first))
            continue;
        if (md)
            md_row(&b, k, first);
        else
            scd_entry(&b, k, first);
        rows++;
    }
    if (b.failed || rows == 0) {
        free(b.buf);
        return NULL;
    }
    return b.buf;
}
