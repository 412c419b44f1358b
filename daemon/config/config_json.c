/* The effective config as JSON (kenaf-simd --check-config): every key of
 * the key table that applies, defaults filled in, angles in degrees, in
 * the layout of the shipped files so the two can be diffed; it loads back
 * to an equal config. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_priv.h"
#include "convert.h"

void kn_config_text_put(struct kn_cfg_text *t, const char *s, size_t n)
{
    if (t->failed)
        return;
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 4096;
        while (t->len + n + 1 > cap)
            cap *= 2;
        char *nb = realloc(t->buf, cap);
        if (nb == NULL) {
            t->failed = true;
            return;
        }
        t->buf = nb;
        t->cap = cap;
    }
    memcpy(t->buf + t->len, s, n);
    t->len += n;
    t->buf[t->len] = '\0';
}

void kn_config_text_str(struct kn_cfg_text *t, const char *s)
{
    kn_config_text_put(t, s, strlen(s));
}

static void out_indent(struct kn_cfg_text *o, int n)
{
    for (int i = 0; i < n; i++)
        kn_config_text_put(o, "  ", 2);
}

/* cJSON's own escaping and number formatting (shortest exact form). */
static void out_scalar(struct kn_cfg_text *o, const cJSON *v)
{
    /* whole numbers exactly, up to 2^53 (cJSON's "%1.17g" fallback
     * prints 9007199254740991 as 9007199254740990.0) */
    if (cJSON_IsNumber(v) && floor(v->valuedouble) == v->valuedouble &&
        fabs(v->valuedouble) < 9007199254740992.0) {
        char num[32];
        snprintf(num, sizeof num, "%.0f", v->valuedouble);
        kn_config_text_str(o, strcmp(num, "-0") == 0 ? "0" : num);
        return;
    }
    char *s = cJSON_PrintUnformatted(v);
    if (s == NULL) {
        o->failed = true;
        return;
    }
    kn_config_text_str(o, s);
    cJSON_free(s);
}

static void out_key(struct kn_cfg_text *o, const char *key)
{
    cJSON *k = cJSON_CreateString(key);
    if (k == NULL) {
        o->failed = true;
        return;
    }
    out_scalar(o, k);
    cJSON_Delete(k);
    kn_config_text_put(o, ": ", 2);
}

/* Two-space indentation, arrays of scalars on one line: the layout of the
 * shipped config files, so the output can be diffed against them. */
static void out_value(struct kn_cfg_text *o, const cJSON *v, int depth)
{
    if (!cJSON_IsObject(v) && !cJSON_IsArray(v)) {
        out_scalar(o, v);
        return;
    }
    bool obj = cJSON_IsObject(v), flat = !obj;
    const cJSON *c;
    cJSON_ArrayForEach(c, v) if (cJSON_IsObject(c) || cJSON_IsArray(c)) flat = false;
    kn_config_text_str(o, obj ? "{" : "[");
    if (v->child == NULL) {
        kn_config_text_str(o, obj ? "}" : "]");
        return;
    }
    cJSON_ArrayForEach(c, v)
    {
        if (flat) {
            if (c != v->child)
                kn_config_text_str(o, ", ");
        } else {
            kn_config_text_str(o, c != v->child ? ",\n" : "\n");
            out_indent(o, depth + 1);
        }
        if (obj)
            out_key(o, c->string ? c->string : "");
        out_value(o, c, depth + 1);
    }
    if (!flat) {
        kn_config_text_str(o, "\n");
        out_indent(o, depth);
    }
    kn_config_text_str(o, obj ? "}" : "]");
}

char *kn_config_print(const cJSON *v)
{
    struct kn_cfg_text o = { NULL, 0, 0, false };
    out_value(&o, v, 0);
    if (o.failed) {
        free(o.buf);
        return NULL;
    }
    return o.buf;
}

/* One described value of obj as JSON; NULL when it is left out. */
static cJSON *emit_key(const struct kn_cfg_key *k, const void *obj)
{
    const void *f = kn_config_key_cfield(k, obj);
    switch (k->type) {
    case KN_CFG_NUMBER:
        if (k->unit == KN_CFG_UNIT_DEG_CDEG)
            return cJSON_CreateNumber(kn_conv_cdeg_to_deg(*(const int32_t *)f));
        if (k->unit == KN_CFG_UNIT_DEG_RAD)
            return cJSON_CreateNumber(kn_config_rad_to_deg(*(const double *)f));
        return cJSON_CreateNumber(*(const double *)f);
    case KN_CFG_INT32: return cJSON_CreateNumber(*(const int32_t *)f);
    case KN_CFG_BOOL: return cJSON_CreateBool(*(const bool *)f);
    case KN_CFG_STRING:
        if ((k->flags & KN_CFG_OMIT_EMPTY) && *(const char *)f == '\0')
            return NULL;
        return cJSON_CreateString(f);
    case KN_CFG_ENUM: {
        int i = *(const int *)f - k->bias;
        return cJSON_CreateString(i >= 0 && i < k->n_names ? k->names[i] : k->names[0]);
    }
    case KN_CFG_VEC: {
        double v[8];
        for (int i = 0; i < k->vec_n && i < 8; i++) {
            v[i] = ((const double *)f)[i];
            if (k->unit == KN_CFG_UNIT_DEG_RAD)
                v[i] = kn_config_rad_to_deg(v[i]);
        }
        return cJSON_CreateDoubleArray(v, k->vec_n);
    }
    case KN_CFG_CUSTOM:
        return k->hooks != NULL && k->hooks->emit != NULL ? k->hooks->emit(k, obj) : NULL;
    case KN_CFG_SECTION: break;
    }
    return NULL;
}

/* The object for path rel ("flippers.FL") below root, made on first use,
 * so sections appear where their first key is. */
static cJSON *object_at(cJSON *root, const char *rel, bool *failed)
{
    cJSON *o = root;
    char part[64];
    for (const char *p = rel; o != NULL && *p;) {
        size_t n = strcspn(p, ".");
        snprintf(part, sizeof part, "%.*s", (int)n, p);
        cJSON *c = cJSON_GetObjectItemCaseSensitive(o, part);
        if (c == NULL) {
            c = cJSON_CreateObject();
            if (c == NULL || !cJSON_AddItemToObject(o, part, c)) {
                cJSON_Delete(c);
                *failed = true;
                return NULL;
            }
        }
        o = c;
        p += n + (p[n] == '.');
    }
    return o;
}

static const char *const scope_root[] = { "", "robots[]", "robots[].backend" };

/* Every key of scope that applies, into root; a robot's backend at its
 * section's place, and its faults only while fault injection is on. */
static void emit_scope(cJSON *root, enum kn_cfg_scope scope, const void *obj,
                       const struct kn_cfg_robot *r, bool *failed)
{
    size_t n;
    const struct kn_cfg_key *keys = kn_config_keys_of(scope, &n);
    size_t rl = strlen(scope_root[scope]);
    for (size_t i = 0; i < n && !*failed; i++) {
        const struct kn_cfg_key *k = &keys[i];
        if (r != NULL && (k->flags & KN_CFG_FAULTS) && !r->fault_injection)
            continue;
        if (!kn_config_key_applies(k, scope == KN_CFG_SCOPE_BACKEND ? &r->backend : NULL))
            continue;
        char parent[160];
        kn_config_key_parent(k, parent, sizeof parent);
        const char *rel = strlen(parent) > rl ? parent + rl + (rl > 0) : "";
        if (k->type == KN_CFG_SECTION) {
            if (strcmp(k->path, "robots[].backend") == 0) {
                cJSON *b = object_at(root, "backend", failed);
                if (b != NULL)
                    emit_scope(b, KN_CFG_SCOPE_BACKEND, &r->backend, r, failed);
            }
            continue;
        }
        cJSON *v = emit_key(k, obj);
        if (v == NULL)
            continue;
        cJSON *o = object_at(root, rel, failed);
        if (o == NULL || !cJSON_AddItemToObject(o, kn_config_key_name(k), v)) {
            cJSON_Delete(v);
            *failed = true;
        }
    }
}

char *kn_config_to_json(const struct kn_config *cfg)
{
    bool failed = false;
    cJSON *root = cJSON_CreateObject();
    if (root == NULL)
        return NULL;
    emit_scope(root, KN_CFG_SCOPE_TOP, cfg, NULL, &failed);
    cJSON *robots = cJSON_CreateArray();
    if (robots == NULL || !cJSON_AddItemToObject(root, "robots", robots)) {
        cJSON_Delete(robots);
        failed = true;
    }
    for (size_t i = 0; !failed && i < cfg->n_robots && i < KN_CFG_MAX_ROBOTS; i++) {
        const struct kn_cfg_robot *r = &cfg->robots[i];
        cJSON *jr = cJSON_CreateObject();
        if (jr == NULL || !cJSON_AddItemToArray(robots, jr)) {
            cJSON_Delete(jr);
            failed = true;
            break;
        }
        emit_scope(jr, KN_CFG_SCOPE_ROBOT, r, r, &failed);
    }
    char *text = failed ? NULL : kn_config_print(root);
    cJSON_Delete(root);
    return text;
}
