/* cJSON helpers for the engine's files: bounded reads and key checks with
 * messages that name the file and the key. */
#include "jsonutil.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *kn_json_slurp(const char *path, size_t *len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    if (!buf) {
        fclose(f);
        snprintf(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    for (;;) {
        if (n + 1 >= cap) {
            if (cap >= KN_JSON_MAX_FILE) {
                snprintf(err, errlen, "%s: larger than %u bytes", path, KN_JSON_MAX_FILE);
                free(buf);
                fclose(f);
                return NULL;
            }
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - 1 - n, f);
        n += got;
        if (got == 0)
            break;
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf) {
        snprintf(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    if (bad) {
        snprintf(err, errlen, "%s: read error", path);
        free(buf);
        return NULL;
    }
    if (memchr(buf, 0, n)) {
        snprintf(err, errlen, "%s: contains a NUL byte", path);
        free(buf);
        return NULL;
    }
    buf[n] = 0;
    if (len)
        *len = n;
    return buf;
}

cJSON *kn_json_load(const char *path, char *err, size_t errlen)
{
    size_t n;
    char *text = kn_json_slurp(path, &n, err, errlen);
    if (!text)
        return NULL;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, 1);
    if (!root) {
        size_t off = end ? (size_t)(end - text) : 0, line = 1;
        for (size_t i = 0; i < off && i < n; i++)
            line += text[i] == '\n';
        snprintf(err, errlen, "%s:%zu: JSON syntax error", path, line);
    } else if (!cJSON_IsObject(root)) {
        snprintf(err, errlen, "%s: the top level must be an object", path);
        cJSON_Delete(root);
        root = NULL;
    }
    free(text);
    return root;
}

static int get_num(const cJSON *o, const char *key, double lo, double hi, double *out, int opt,
                   const char *ctx, char *err, size_t errlen)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v) {
        if (opt)
            return 0;
        snprintf(err, errlen, "%s: missing \"%s\" (a number in [%g, %g])", ctx, key, lo, hi);
        return -1;
    }
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < lo ||
        v->valuedouble > hi) {
        snprintf(err, errlen, "%s: \"%s\" must be a number in [%g, %g]", ctx, key, lo, hi);
        return -1;
    }
    *out = v->valuedouble;
    return 0;
}

int kn_json_num(const cJSON *o, const char *key, double lo, double hi, double *out, const char *ctx,
                char *err, size_t errlen)
{
    return get_num(o, key, lo, hi, out, 0, ctx, err, errlen);
}

int kn_json_num_opt(const cJSON *o, const char *key, double lo, double hi, double *out,
                    const char *ctx, char *err, size_t errlen)
{
    return get_num(o, key, lo, hi, out, 1, ctx, err, errlen);
}

int kn_json_int_opt(const cJSON *o, const char *key, int lo, int hi, int *out, const char *ctx,
                    char *err, size_t errlen)
{
    double d = *out;
    if (get_num(o, key, lo, hi, &d, 1, ctx, err, errlen))
        return -1;
    if (d != floor(d)) {
        snprintf(err, errlen, "%s: \"%s\" must be an integer", ctx, key);
        return -1;
    }
    *out = (int)d;
    return 0;
}

int kn_json_vec(const cJSON *o, const char *key, int n, double lo, double hi, double *out, int opt,
                const char *ctx, char *err, size_t errlen)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v) {
        if (opt)
            return 0;
        snprintf(err, errlen, "%s: missing \"%s\" (%d numbers)", ctx, key, n);
        return -1;
    }
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != n) {
        snprintf(err, errlen, "%s: \"%s\" must be an array of %d numbers", ctx, key, n);
        return -1;
    }
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, v)
    {
        if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble) || e->valuedouble < lo ||
            e->valuedouble > hi) {
            snprintf(err, errlen, "%s: \"%s\"[%d] must be a number in [%g, %g]", ctx, key, i, lo,
                     hi);
            return -1;
        }
        out[i++] = e->valuedouble;
    }
    return 0;
}

int kn_json_str_opt(const cJSON *o, const char *key, char *out, size_t outlen, const char *ctx,
                    char *err, size_t errlen)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v)
        return 0;
    if (!cJSON_IsString(v) || strlen(v->valuestring) >= outlen) {
        snprintf(err, errlen, "%s: \"%s\" must be a string shorter than %zu bytes", ctx, key,
                 outlen);
        return -1;
    }
    strcpy(out, v->valuestring);
    return 0;
}

int kn_json_bool_opt(const cJSON *o, const char *key, int *out, const char *ctx, char *err,
                     size_t errlen)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v)
        return 0;
    if (!cJSON_IsBool(v)) {
        snprintf(err, errlen, "%s: \"%s\" must be true or false", ctx, key);
        return -1;
    }
    *out = cJSON_IsTrue(v);
    return 0;
}

int kn_json_only_keys(const cJSON *o, const char *const *keys, const char *ctx, char *err,
                      size_t errlen)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, o)
    {
        int ok = 0;
        for (const char *const *k = keys; *k && !ok; k++)
            ok = e->string && strcmp(e->string, *k) == 0;
        if (!ok) {
            snprintf(err, errlen, "%s: unknown key \"%s\"", ctx, e->string ? e->string : "?");
            return -1;
        }
    }
    return 0;
}

void kn_path_join(const char *base_file, const char *rel, char *out, size_t outlen)
{
    const char *slash = strrchr(base_file, '/');
    if (rel[0] == '/' || !slash) {
        snprintf(out, outlen, "%s", rel);
        return;
    }
    snprintf(out, outlen, "%.*s/%s", (int)(slash - base_file), base_file, rel);
}

int kn_json_merge(cJSON *dst, const cJSON *src)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, src)
    {
        if (!e->string)
            continue;
        cJSON *d = cJSON_GetObjectItemCaseSensitive(dst, e->string);
        if (d && cJSON_IsObject(d) && cJSON_IsObject(e)) {
            if (kn_json_merge(d, e))
                return -1;
            continue;
        }
        cJSON *dup = cJSON_Duplicate(e, 1);
        if (!dup)
            return -1;
        if (d)
            cJSON_ReplaceItemInObjectCaseSensitive(dst, e->string, dup);
        else if (!cJSON_AddItemToObject(dst, e->string, dup)) {
            cJSON_Delete(dup);
            return -1;
        }
    }
    return 0;
}
