/* kenaf-simd configuration loader: reads the JSON file (config_read.c),
 * validates it against the schema, then fills struct kn_config from the
 * key descriptions (config_keys.h) with the typed readers below, the
 * custom keys through their hooks (config_custom.c), and applies the rules
 * a schema cannot express. Every problem is reported as
 * "FILE: PATH: expected X, got Y". */
#include "config.h"

#include <arpa/inet.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "config_priv.h"
#include "convert.h"
#include "capdir.h"
#include "hostport.h"
#include "jsonschema.h"
#include "sockdir.h"

/* ---- typed readers ---------------------------------------------------- */

const cJSON *kn_config_member(const cJSON *obj, const char *key)
{
    return cJSON_IsObject(obj) ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
}

void kn_config_got(const cJSON *v, char *buf, size_t len)
{
    kn_jsonschema_describe(v, true, buf, len);
}

bool kn_config_take_number(struct kn_cfg_ld *l, const cJSON *v, const char *path, double *out)
{
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble)) {
        char g[400];
        kn_config_got(v, g, sizeof g);
        kn_config_errs_add(l->e, path, "expected a number, got %s", g);
        return false;
    }
    *out = v->valuedouble;
    return true;
}

bool kn_config_take_ranged(struct kn_cfg_ld *l, const cJSON *v, const char *path, double lo,
                           double hi, double *out)
{
    double x;
    if (!kn_config_take_number(l, v, path, &x))
        return false;
    if (x < lo || x > hi) {
        kn_config_errs_add(l->e, path, "expected number %g..%g, got %g", lo, hi, x);
        return false;
    }
    *out = x;
    return true;
}

static bool take_int32(struct kn_cfg_ld *l, const cJSON *v, const char *path, int32_t *out)
{
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) ||
        floor(v->valuedouble) != v->valuedouble || v->valuedouble < INT32_MIN ||
        v->valuedouble > INT32_MAX) {
        char g[400];
        kn_config_got(v, g, sizeof g);
        kn_config_errs_add(l->e, path, "expected an integer in the 32-bit range, got %s", g);
        return false;
    }
    *out = (int32_t)v->valuedouble;
    return true;
}

bool kn_config_take_string(struct kn_cfg_ld *l, const cJSON *v, const char *path, char *dst,
                           size_t cap)
{
    char g[400];
    if (!cJSON_IsString(v) || v->valuestring == NULL) {
        kn_config_got(v, g, sizeof g);
        kn_config_errs_add(l->e, path, "expected a string, got %s", g);
        return false;
    }
    if (strlen(v->valuestring) >= cap) {
        kn_config_got(v, g, sizeof g);
        kn_config_errs_add(l->e, path, "expected a string of at most %zu bytes, got %s (%zu bytes)",
                           cap - 1, g, strlen(v->valuestring));
        return false;
    }
    strcpy(dst, v->valuestring);
    return true;
}

bool kn_config_take_bool(struct kn_cfg_ld *l, const cJSON *v, const char *path, bool *out)
{
    if (!cJSON_IsBool(v)) {
        char g[400];
        kn_config_got(v, g, sizeof g);
        kn_config_errs_add(l->e, path, "expected true or false, got %s", g);
        return false;
    }
    *out = cJSON_IsTrue(v);
    return true;
}

bool kn_config_take_name(struct kn_cfg_ld *l, const cJSON *v, const char *path,
                         const char *const *names, int n, int *out)
{
    for (int i = 0; cJSON_IsString(v) && i < n; i++)
        if (strcmp(v->valuestring, names[i]) == 0) {
            *out = i;
            return true;
        }
    char g[400], list[200] = "";
    for (int i = 0; i < n; i++) {
        size_t used = strlen(list);
        snprintf(list + used, sizeof list - used, "%s\"%s\"", i ? ", " : "", names[i]);
    }
    kn_config_got(v, g, sizeof g);
    kn_config_errs_add(l->e, path, "expected one of %s, got %s", list, g);
    return false;
}

/* An array of n finite numbers; with KN_CFG_SIGN each -1 or 1, with
 * KN_CFG_RANGE each within the key's range. */
static bool take_vec(struct kn_cfg_ld *l, const struct kn_cfg_key *k, const cJSON *v,
                     const char *path, double *out)
{
    int n = k->vec_n;
    bool ok = cJSON_IsArray(v) && cJSON_GetArraySize(v) == n;
    for (int i = 0; ok && i < n; i++) {
        const cJSON *x = cJSON_GetArrayItem(v, i);
        ok = cJSON_IsNumber(x) && isfinite(x->valuedouble);
    }
    if (!ok) {
        char g[400];
        kn_config_got(v, g, sizeof g);
        kn_config_errs_add(l->e, path, "expected an array of %d numbers, got %s", n, g);
        return false;
    }
    double tmp[8];
    char list[160] = "";
    for (int i = 0; i < n && i < 8; i++) {
        tmp[i] = cJSON_GetArrayItem(v, i)->valuedouble;
        size_t used = strlen(list);
        snprintf(list + used, sizeof list - used, "%s%g", i ? ", " : "", tmp[i]);
        if ((k->flags & KN_CFG_SIGN) && tmp[i] != 1 && tmp[i] != -1)
            ok = false;
        if ((k->flags & KN_CFG_RANGE) && (tmp[i] < k->min || tmp[i] > k->max))
            ok = false;
    }
    if (!ok && (k->flags & KN_CFG_SIGN))
        kn_config_errs_add(l->e, path, "expected [L, R] of -1 or 1 each, got [%s]", list);
    else if (!ok)
        kn_config_errs_add(l->e, path, "expected %d numbers %g..%g each, got [%s]", n, k->min,
                           k->max, list);
    for (int i = 0; ok && i < n; i++)
        out[i] = k->unit == KN_CFG_UNIT_DEG_RAD ? kn_config_deg_to_rad(tmp[i]) : tmp[i];
    return ok;
}

/* A number under the key's rules: -1 or 1, or its range. */
static bool take_key_number(struct kn_cfg_ld *l, const struct kn_cfg_key *k, const cJSON *v,
                            const char *path, double *out)
{
    double x;
    if (!kn_config_take_number(l, v, path, &x))
        return false;
    if ((k->flags & KN_CFG_SIGN) && x != 1.0 && x != -1.0) {
        kn_config_errs_add(l->e, path, "expected one of -1, 1, got %g", x);
        return false;
    }
    if ((k->flags & KN_CFG_RANGE) && (k->flags & KN_CFG_EXCL_MIN) && !(x > k->min && x <= k->max)) {
        kn_config_errs_add(l->e, path, "expected number > %g and <= %g, got %g", k->min, k->max, x);
        return false;
    }
    if ((k->flags & KN_CFG_RANGE) && !(k->flags & KN_CFG_EXCL_MIN) && (x < k->min || x > k->max)) {
        kn_config_errs_add(l->e, path, "expected number %g..%g, got %g", k->min, k->max, x);
        return false;
    }
    *out = x;
    return true;
}

/* One key's value v (present) into its field of obj. */
static void load_key(struct kn_cfg_ld *l, const struct kn_cfg_key *k, const cJSON *v,
                     const char *path, void *obj)
{
    void *f = kn_config_key_field(k, obj);
    double x;
    int i;
    switch (k->type) {
    case KN_CFG_NUMBER:
        if (!take_key_number(l, k, v, path, &x))
            break;
        if (k->unit == KN_CFG_UNIT_DEG_CDEG)
            *(int32_t *)f = kn_conv_deg_to_cdeg(x);
        else
            *(double *)f = k->unit == KN_CFG_UNIT_DEG_RAD ? kn_config_deg_to_rad(x) : x;
        break;
    case KN_CFG_INT32: {
        int32_t n;
        if (!take_int32(l, v, path, &n))
            break;
        if ((k->flags & KN_CFG_RANGE) && (n < k->min || n > k->max))
            kn_config_errs_add(l->e, path, "expected integer %g..%g, got %d", k->min, k->max,
                               (int)n);
        else
            *(int32_t *)f = n;
        break;
    }
    case KN_CFG_STRING: kn_config_take_string(l, v, path, f, k->size); break;
    case KN_CFG_BOOL: kn_config_take_bool(l, v, path, f); break;
    case KN_CFG_ENUM:
        if (kn_config_take_name(l, v, path, k->names, k->n_names, &i))
            *(int *)f = i + k->bias;
        break;
    case KN_CFG_VEC: take_vec(l, k, v, path, f); break;
    case KN_CFG_CUSTOM:
        if (k->hooks != NULL && k->hooks->load != NULL)
            k->hooks->load(l, v, path, obj);
        break;
    case KN_CFG_SECTION: break;
    }
}

/* ---- the generic pass over one scope ---------------------------------- */

static const char *const scope_root[] = { "", "robots[]", "robots[].backend" };

/* The JSON objects of a scope's sections, each looked up (and an error
 * reported) once. */
struct sections {
    size_t n;
    struct {
        char rel[64];
        const cJSON *obj; /* NULL: absent or not an object */
    } s[24];
};

/* The object holding key k, found from src by its path below the scope's
 * root ("flippers.FL"); NULL when a part is absent or not an object. */
static const cJSON *section_of(struct kn_cfg_ld *l, struct sections *sec, const cJSON *src,
                               const char *base, const struct kn_cfg_key *k)
{
    char parent[160];
    kn_config_key_parent(k, parent, sizeof parent);
    size_t rl = strlen(scope_root[k->scope]);
    const char *rel = parent + (rl > 0 && strlen(parent) > rl ? rl + 1 : strlen(parent));
    if (*rel == '\0')
        return src;
    for (size_t i = 0; i < sec->n; i++)
        if (strcmp(sec->s[i].rel, rel) == 0)
            return sec->s[i].obj;
    /* walk part by part, so "faults" is reported once for "faults.krp" */
    const cJSON *o = src;
    char path[256], part[64];
    snprintf(path, sizeof path, "%s", base);
    for (const char *p = rel; o != NULL && *p;) {
        size_t n = strcspn(p, ".");
        snprintf(part, sizeof part, "%.*s", (int)n, p);
        char prefix[64];
        snprintf(prefix, sizeof prefix, "%.*s", (int)(p - rel + n), rel);
        const cJSON *known = NULL;
        bool seen = false;
        for (size_t i = 0; i < sec->n && !seen; i++)
            if (strcmp(sec->s[i].rel, prefix) == 0) {
                seen = true;
                known = sec->s[i].obj;
            }
        size_t pl = strlen(path);
        snprintf(path + pl, sizeof path - pl, ".%s", part);
        if (seen) {
            o = known;
        } else {
            const cJSON *v = kn_config_member(o, part);
            if (v != NULL && !cJSON_IsObject(v)) {
                char g[400];
                kn_config_got(v, g, sizeof g);
                kn_config_errs_add(l->e, path, "expected an object, got %s", g);
                v = NULL;
            }
            o = v;
            if (sec->n < sizeof sec->s / sizeof sec->s[0]) {
                snprintf(sec->s[sec->n].rel, sizeof sec->s[0].rel, "%s", prefix);
                sec->s[sec->n++].obj = o;
            }
        }
        p += n + (p[n] == '.');
    }
    return o;
}

void kn_config_load_scope(struct kn_cfg_ld *l, enum kn_cfg_scope scope, const cJSON *src,
                          const char *base, void *obj, const struct kn_cfg_backend *b)
{
    struct sections sec = { 0 };
    size_t n;
    const struct kn_cfg_key *keys = kn_config_keys_of(scope, &n);
    for (size_t i = 0; i < n; i++) {
        const struct kn_cfg_key *k = &keys[i];
        if (k->type == KN_CFG_SECTION || !kn_config_key_applies(k, b))
            continue;
        const cJSON *o = section_of(l, &sec, src, base, k);
        const char *name = kn_config_key_name(k);
        const cJSON *v = kn_config_member(o, name);
        if (v == NULL) {
            if ((k->flags & KN_CFG_REQUIRED) && o == src)
                kn_config_errs_add(l->e, base, "missing required key \"%s\"", name);
            continue;
        }
        char path[320], parent[160];
        kn_config_key_parent(k, parent, sizeof parent);
        size_t rl = strlen(scope_root[scope]);
        snprintf(path, sizeof path, "%s%s%s.%s", base, strlen(parent) > rl ? "." : "",
                 strlen(parent) > rl ? parent + rl + (rl > 0) : "", name);
        load_key(l, k, v, path, obj);
    }
}

/* ---- robots and backends ---------------------------------------------- */

void kn_config_backend_defaults(struct kn_cfg_backend *b, enum kn_backend_kind kind)
{
    memset(b, 0, sizeof *b);
    kn_config_keys_defaults(KN_CFG_SCOPE_BACKEND, b);
    b->kind = kind;
    b->twist_cmd = true; /* gazebo.command "twist" */
    if (kind == KN_BACKEND_USARSIM) {
        strcpy(b->host, KN_CFG_BACKEND_HOST);
        b->port = KN_CFG_USARSIM_PORT;
    } else if (kind == KN_BACKEND_GAZEBO) {
        strcpy(b->host, KN_CFG_BACKEND_HOST);
        b->port = KN_CFG_GAZEBO_PORT;
    }
}

static void robot_defaults(struct kn_cfg_robot *r)
{
    memset(r, 0, sizeof *r);
    kn_config_keys_defaults(KN_CFG_SCOPE_ROBOT, r);
    strcpy(r->bind_host, "127.0.0.1");
    r->port = 9750;
    kn_config_backend_defaults(&r->backend, KN_BACKEND_ENGINE);
}

/* A key or section that does not fit the backend type is an error. */
static void part_fits(struct kn_cfg_ld *l, const cJSON *jb, const char *base, const char *key,
                      const char *noun, enum kn_backend_kind kind, bool fits,
                      const char *applies_to)
{
    if (kn_config_member(jb, key) == NULL || fits)
        return;
    char p[256];
    snprintf(p, sizeof p, "%s.%s", base, key);
    kn_config_errs_add(l->e, p,
                       "expected no \"%s\" %s for backend type \"%s\" (it applies to %s), got one",
                       key, noun, kn_config_backend_names[kind], applies_to);
}

/* The rules of a backend section the key table cannot say: which
 * sections and keys fit which type. */
static void backend_rules(struct kn_cfg_ld *l, const cJSON *jb, const char *base,
                          const struct kn_cfg_backend *b)
{
    enum kn_backend_kind kind = b->kind;
    const cJSON *jf = kn_config_member(jb, "flippers");
    static const char *const fl[KN_NFLIPPERS] = { "FL", "FR", "RL", "RR" };
    for (int k = 0; k < KN_NFLIPPERS; k++) {
        char jp[220];
        snprintf(jp, sizeof jp, "%s.flippers.%s", base, fl[k]);
        part_fits(l, kn_config_member(jf, fl[k]), jp, "link", "key", kind,
                  kind == KN_BACKEND_GAZEBO, "gazebo");
    }
    bool usar = kind == KN_BACKEND_USARSIM || kind == KN_BACKEND_ENGINE;
    bool spawned = kind == KN_BACKEND_ENGINE && b->host[0] == '\0';
    part_fits(l, jb, base, "usarsim", "section", kind, usar, "usarsim and engine");
    part_fits(l, jb, base, "engine", "section", kind, spawned,
              "engine when kenaf-simd spawns it, that is without address");
    part_fits(l, jb, base, "gazebo", "section", kind, kind == KN_BACKEND_GAZEBO, "gazebo");
    part_fits(l, jb, base, "gz", "section", kind, kind == KN_BACKEND_GZ, "gz");
    if (kind == KN_BACKEND_GZ)
        part_fits(l, jb, base, "address", "key", kind, false,
                  "all but gz (it finds the world "
                  "by discovery)");
    if (kind == KN_BACKEND_STANDIN && kn_config_member(jb, "address") == NULL) {
        char p[256];
        snprintf(p, sizeof p, "%s.address", base);
        kn_config_errs_add(l->e, p, "expected an address for backend type \"standin\", got none");
    }
}

/* The backend's type comes first: it sets the defaults the other keys
 * change, and which sections apply. */
static void load_backend(struct kn_cfg_ld *l, const cJSON *jr, const char *rbase,
                         struct kn_cfg_backend *b)
{
    char base[128], g[400];
    snprintf(base, sizeof base, "%s.backend", rbase);
    const cJSON *jb = kn_config_member(jr, "backend");
    if (jb == NULL) {
        kn_config_errs_add(l->e, rbase, "missing required key \"backend\"");
        return;
    }
    if (!cJSON_IsObject(jb)) {
        kn_config_got(jb, g, sizeof g);
        kn_config_errs_add(l->e, base, "expected an object, got %s", g);
        return;
    }
    const cJSON *jt = kn_config_member(jb, "type");
    int kind = -1;
    char tp[160];
    snprintf(tp, sizeof tp, "%s.type", base);
    if (jt == NULL) {
        kn_config_errs_add(l->e, base, "missing required key \"type\"");
        return;
    }
    if (!kn_config_take_name(l, jt, tp, kn_config_backend_names, 5, &kind))
        return;
    kn_config_backend_defaults(b, (enum kn_backend_kind)kind);
    kn_config_load_scope(l, KN_CFG_SCOPE_BACKEND, jb, base, b, b);
    backend_rules(l, jb, base, b);
}

static void load_robot(struct kn_cfg_ld *l, const cJSON *jr, size_t i, struct kn_cfg_robot *r)
{
    char base[64], g[400];
    snprintf(base, sizeof base, "$.robots[%zu]", i);
    robot_defaults(r);
    if (!cJSON_IsObject(jr)) {
        kn_config_got(jr, g, sizeof g);
        kn_config_errs_add(l->e, base, "expected an object, got %s", g);
        return;
    }
    kn_config_load_scope(l, KN_CFG_SCOPE_ROBOT, jr, base, r, NULL);
    if (r->name[0] == '\0' && cJSON_IsString(kn_config_member(jr, "name"))) {
        char p[128];
        snprintf(p, sizeof p, "%s.name", base);
        kn_config_errs_add(l->e, p, "expected a non-empty name, got \"\"");
    }
    if (r->flipper_min_cdeg >= r->flipper_max_cdeg) {
        char lb[96];
        snprintf(lb, sizeof lb, "%s.limits", base);
        kn_config_errs_add(l->e, lb,
                           "expected flipper_min_deg < flipper_max_deg, got %g >= %g "
                           "(compared at 0.01 degree)",
                           kn_conv_cdeg_to_deg(r->flipper_min_cdeg),
                           kn_conv_cdeg_to_deg(r->flipper_max_cdeg));
    }
    load_backend(l, jr, base, &r->backend);
}

/* Two listen addresses clash when the same port could not be bound twice:
 * the same address, an IPv4 wildcard against any IPv4 address, or an IPv6
 * wildcard against anything (Linux binds [::] dual-stack by default). */
static bool listen_clash(const struct kn_cfg_robot *a, const struct kn_cfg_robot *b)
{
    if (a->port == 0 || a->port != b->port)
        return false;
    unsigned char aa[16], bb[16];
    bool a6 = inet_pton(AF_INET6, a->bind_host, aa) == 1;
    bool b6 = inet_pton(AF_INET6, b->bind_host, bb) == 1;
    if (!a6 && inet_pton(AF_INET, a->bind_host, aa) != 1)
        return false;
    if (!b6 && inet_pton(AF_INET, b->bind_host, bb) != 1)
        return false;
    static const unsigned char zero[16] = { 0 };
    bool aw = memcmp(aa, zero, a6 ? 16 : 4) == 0, bw = memcmp(bb, zero, b6 ? 16 : 4) == 0;
    if ((a6 && aw) || (b6 && bw))
        return true;
    if (a6 != b6)
        return false;
    return aw || bw || memcmp(aa, bb, a6 ? 16 : 4) == 0;
}

/* The robots array: 1..KN_CFG_MAX_ROBOTS entries (the "robots" key's hook). */
void kn_config_load_robots(struct kn_cfg_ld *l, const cJSON *v, const char *path,
                           struct kn_config *cfg)
{
    char g[400];
    int n = cJSON_GetArraySize(v);
    if (!cJSON_IsArray(v) || n < 1 || n > KN_CFG_MAX_ROBOTS) {
        kn_config_got(v, g, sizeof g);
        kn_config_errs_add(l->e, path, "expected an array of 1..%d robots, got %s%s",
                           KN_CFG_MAX_ROBOTS, g, cJSON_IsArray(v) ? " of another size" : "");
        return;
    }
    const cJSON *jr;
    cJSON_ArrayForEach(jr, v)
    {
        size_t i = cfg->n_robots++;
        load_robot(l, jr, i, &cfg->robots[i]);
        cfg->robots[i].fault_injection = cfg->fault_injection;
        if (!cfg->fault_injection && kn_config_member(jr, "faults") != NULL) {
            char p[64];
            snprintf(p, sizeof p, "%s[%zu].faults", path, i);
            kn_config_errs_add(l->e, p,
                               "expected no faults section, since \"fault_injection\" is false, "
                               "got one");
        }
    }
}

static void check_robots(struct kn_cfg_ld *l, const struct kn_config *cfg)
{
    char p[96], q[400], lbuf[KN_CFG_HOST_LEN + 16];
    for (size_t i = 0; i < cfg->n_robots; i++) {
        const struct kn_cfg_robot *r = &cfg->robots[i];
        for (size_t j = 0; j < i; j++) {
            if (r->name[0] != '\0' && strcasecmp(r->name, cfg->robots[j].name) == 0) {
                snprintf(p, sizeof p, "$.robots[%zu].name", i);
                kn_jsonschema_quote(r->name, q, sizeof q);
                kn_config_errs_add(l->e, p,
                                   "expected a name no other robot has (compared ignoring case), "
                                   "got %s, also used by $.robots[%zu]",
                                   q, j);
                break;
            }
        }
        for (size_t j = 0; j < i; j++) {
            if (listen_clash(r, &cfg->robots[j])) {
                snprintf(p, sizeof p, "$.robots[%zu].listen", i);
                kn_hostport_format(r->bind_host, r->port, lbuf, sizeof lbuf);
                kn_jsonschema_quote(lbuf, q, sizeof q);
                char other[KN_CFG_HOST_LEN + 16];
                kn_hostport_format(cfg->robots[j].bind_host, cfg->robots[j].port, other,
                                   sizeof other);
                kn_config_errs_add(
                    l->e, p,
                    "expected an address and port no other robot listens on, got %s, "
                    "which clashes with %s of $.robots[%zu]",
                    q, other, j);
                break;
            }
        }
    }
}

static void load_config(struct kn_cfg_ld *l, const cJSON *doc, struct kn_config *cfg)
{
    char g[400];
    kn_config_keys_defaults(KN_CFG_SCOPE_TOP, cfg);
    cfg->stats_socket_mode = KN_CFG_SOCKET_MODE;
    cfg->capture_max_bytes = KN_CFG_CAPTURE_MAX_MB << 20;
    if (!cJSON_IsObject(doc)) {
        kn_config_got(doc, g, sizeof g);
        kn_config_errs_add(l->e, "$", "expected an object, got %s", g);
        return;
    }
    /* defaults that depend on the environment, replaced by the hooks */
    if (kn_config_member(doc, "stats_socket") == NULL) {
        cfg->stats_socket_default = true;
        if (kn_sockdir_default(cfg->stats_socket, sizeof cfg->stats_socket) < 0)
            kn_config_errs_add(l->e, "$.stats_socket",
                               "expected a default stats socket path of at most "
                               "%zu bytes, got a longer one (set \"stats_socket\")",
                               sizeof cfg->stats_socket - 1);
    }
    if (kn_config_member(doc, "capture_dir") == NULL) {
        /* none found (no HOME): run-time captures are refused and say so */
        cfg->capture_dir_default = true;
        if (kn_capdir_default(cfg->capture_dir, sizeof cfg->capture_dir) < 0)
            cfg->capture_dir[0] = '\0';
    }
    kn_config_load_scope(l, KN_CFG_SCOPE_TOP, doc, "$", cfg, NULL);
    check_robots(l, cfg);
}

/* ---- public ----------------------------------------------------------- */

/* The part of a config in use: the top-level fields and the robots
 * loaded. The entries past n_robots are never read, nor written here, so
 * the pages of a config's unused robots (most of its 6.5 MB) are never
 * made resident. */
static size_t used_size(const struct kn_config *c)
{
    return offsetof(struct kn_config, robots) + c->n_robots * sizeof c->robots[0];
}

static void clear_config(struct kn_config *c)
{
    memset(c, 0, offsetof(struct kn_config, robots));
}

/* partial: fill *out with what loaded even when there are problems. */
static int parse_checked(const char *json, size_t len, struct kn_cfg_errs *e,
                         const char *schema_path, struct kn_config *out, bool partial)
{
    if (partial) {
        clear_config(out);
        snprintf(out->source, sizeof out->source, "%s", e->name);
        out->log_level = KN_LOG_INFO;
    }
    if (json == NULL && len > 0) {
        kn_config_errs_add(e, NULL, "no data");
        return -1;
    }
    if (len > KN_CFG_MAX_FILE_BYTES) {
        kn_config_errs_add(e, NULL, "expected a file of at most 1 MiB (%d bytes), got %zu bytes",
                           KN_CFG_MAX_FILE_BYTES, len);
        return -1;
    }
    if (!kn_config_check_bytes(json, len, e))
        return -1;
    cJSON *doc = kn_config_parse_json(json, len, e);
    if (doc == NULL)
        return -1;
    bool schema_builtin;
    cJSON *schema = kn_config_load_schema(schema_path, e, &schema_builtin);
    if (schema == NULL) {
        cJSON_Delete(doc);
        return -1;
    }
    /* schema problems do not stop the loader: its rules (and the checks
     * after it) report what the schema cannot see, in the same run */
    e->recording = true;
    kn_jsonschema_validate(schema, doc, kn_config_errs_room(e), kn_config_errs_report, e);
    e->recording = false;
    if (!schema_builtin)
        cJSON_Delete(schema);
    struct kn_config *cfg = calloc(1, sizeof *cfg);
    if (cfg == NULL) {
        cJSON_Delete(doc);
        kn_config_errs_add(e, NULL, "out of memory");
        return -1;
    }
    snprintf(cfg->source, sizeof cfg->source, "%s", e->name);
    cfg->log_level = KN_LOG_INFO;
    struct kn_cfg_ld l = { e, doc, cfg };
    load_config(&l, doc, cfg);
    cJSON_Delete(doc);
    if (e->n == 0 || partial)
        memcpy(out, cfg, used_size(cfg));
    free(cfg);
    return e->n > 0 ? -1 : 0;
}

int kn_config_parse(const char *json, size_t len, const char *name, const char *schema_path,
                    struct kn_config *out, char *err, size_t errlen)
{
    struct kn_cfg_errs e;
    kn_config_errs_init(&e, name, err, errlen);
    return parse_checked(json, len, &e, schema_path, out, false);
}

static size_t load_file(const char *path, const char *schema_path, struct kn_config *out, char *err,
                        size_t errlen, bool partial)
{
    struct kn_cfg_errs e;
    kn_config_errs_init(&e, path, err, errlen);
    if (partial) {
        clear_config(out);
        snprintf(out->source, sizeof out->source, "%s", e.name);
    }
    if (path == NULL) {
        kn_config_errs_add(&e, NULL, "no config file given");
        return e.n;
    }
    size_t len = 0;
    struct stat st;
    char *text = kn_config_read_file(path, &len, &e, &st);
    if (text != NULL)
        parse_checked(text, len, &e, schema_path, out, partial);
    if (text != NULL && (partial || e.n == 0)) {
        /* what was read is what the trust rule looks at (config_check.c) */
        out->source_stat = st;
        out->source_stat_ok = true;
    }
    free(text);
    return e.n;
}

int kn_config_load(const char *path, const char *schema_path, struct kn_config *out, char *err,
                   size_t errlen)
{
    return load_file(path, schema_path, out, err, errlen, false) > 0 ? -1 : 0;
}

size_t kn_config_load_all(const char *path, const char *schema_path, struct kn_config *out,
                          char *err, size_t errlen)
{
    return load_file(path, schema_path, out, err, errlen, true);
}
