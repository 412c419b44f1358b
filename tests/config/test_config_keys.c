/* Unit tests of the config key table (daemon/config/config_keys.h): every
 * description is well formed; the loader puts each key's value where the
 * description says and the effective config gives it back; the defaults
 * the loader fills in are the ones described; every key of a robot is
 * compared when a reload decides whether to restart it. The schema file
 * and the reference in the docs are checked against the table by the
 * tests "config" and "config-reference". */
#include <check.h>
#include <math.h>
#include <regex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "config.h"
#include "config_keys.h"
#include "harness_suite.h"

static char err[16384];

static size_t scope_size(enum kn_cfg_scope s)
{
    switch (s) {
    case KN_CFG_SCOPE_TOP: return sizeof(struct kn_config);
    case KN_CFG_SCOPE_ROBOT: return sizeof(struct kn_cfg_robot);
    case KN_CFG_SCOPE_BACKEND: return sizeof(struct kn_cfg_backend);
    }
    return 0;
}

static bool is_scope_root(const char *parent)
{
    return strcmp(parent, "") == 0 || strcmp(parent, "robots[]") == 0 ||
           strcmp(parent, "robots[].backend") == 0;
}

START_TEST(descriptions_are_well_formed)
{
    size_t n = kn_config_nkeys();
    ck_assert_uint_gt(n, 80);
    for (size_t i = 0; i < n; i++) {
        const struct kn_cfg_key *k = kn_config_key(i);
        ck_assert_msg(k->doc != NULL && strlen(k->doc) > 10, "%s: no text", k->path);
        for (size_t j = 0; j < i; j++)
            ck_assert_msg(strcmp(kn_config_key(j)->path, k->path) != 0, "%s twice", k->path);
        /* its parent is a described section, or the root of its scope */
        char parent[160];
        kn_config_key_parent(k, parent, sizeof parent);
        const struct kn_cfg_key *p = kn_config_key_find(parent);
        ck_assert_msg(is_scope_root(parent) || (p != NULL && p->type == KN_CFG_SECTION),
                      "%s: parent %s is not a section", k->path, parent);
        if (k->type == KN_CFG_SECTION)
            continue;
        ck_assert_msg(k->reader != NULL && k->reader[0], "%s: no reader", k->path);
        /* a robot's keys restart it: kn_config_robot_equal compares them all */
        if (k->scope != KN_CFG_SCOPE_TOP)
            ck_assert_msg(k->reload == KN_CFG_RELOAD_ROBOT, "%s: reload", k->path);
        if (k->type == KN_CFG_CUSTOM) {
            ck_assert_msg(k->hooks != NULL, "%s: custom without hooks", k->path);
            cJSON *s = cJSON_Parse(k->schema);
            ck_assert_msg(cJSON_IsObject(s), "%s: schema is not a JSON object", k->path);
            cJSON_Delete(s);
            continue;
        }
        ck_assert_msg(k->size > 0 && k->off + k->size <= scope_size(k->scope), "%s: field",
                      k->path);
        if (k->flags & KN_CFG_RANGE)
            ck_assert_msg(k->min <= k->max, "%s: range", k->path);
        if (k->type == KN_CFG_STRING)
            ck_assert_msg(k->maxlen <= (int)k->size - 1, "%s: maxlen %d beyond the field's %zu",
                          k->path, k->maxlen, k->size - 1);
        if (k->type == KN_CFG_ENUM)
            ck_assert_msg(k->names != NULL && k->n_names > 1, "%s: names", k->path);
        if (k->def == NULL)
            continue;
        cJSON *d = cJSON_Parse(k->def);
        ck_assert_msg(d != NULL, "%s: default %s is not JSON", k->path, k->def);
        if (k->type == KN_CFG_NUMBER || k->type == KN_CFG_INT32) {
            ck_assert_msg(cJSON_IsNumber(d), "%s: default not a number", k->path);
            if (k->flags & KN_CFG_RANGE)
                ck_assert_msg(d->valuedouble >= k->min && d->valuedouble <= k->max,
                              "%s: default out of range", k->path);
        }
        if (k->type == KN_CFG_STRING)
            ck_assert_msg(cJSON_IsString(d), "%s: default not a string", k->path);
        if (k->type == KN_CFG_BOOL)
            ck_assert_msg(cJSON_IsBool(d), "%s: default not a boolean", k->path);
        if (k->type == KN_CFG_VEC)
            ck_assert_msg(cJSON_GetArraySize(d) == k->vec_n, "%s: default size", k->path);
        cJSON_Delete(d);
    }
}
END_TEST

/* The backend type a key needs to apply. */
static const char *type_for(const struct kn_cfg_key *k)
{
    if (k->backends == 0)
        return "engine";
    for (int t = 0; t <= KN_BACKEND_GZ; t++)
        if (k->backends & KN_CFG_BK(t))
            return kn_config_backend_names[t];
    return "engine";
}

/* A string its pattern allows (the patterns are POSIX extended regular
 * expressions as well as JSON Schema's). */
static const char *string_for(const struct kn_cfg_key *k)
{
    static const char *const candidates[] = { "x1", "/x1", "10.0.0.1" };
    for (size_t i = 0; i < 3; i++) {
        regex_t re;
        if (k->pattern == NULL)
            return candidates[i];
        ck_assert_int_eq(regcomp(&re, k->pattern, REG_EXTENDED | REG_NOSUB), 0);
        int rc = regexec(&re, candidates[i], 0, NULL, 0);
        regfree(&re);
        if (rc == 0)
            return candidates[i];
    }
    ck_abort_msg("%s: no candidate matches %s", k->path, k->pattern);
    return NULL;
}

/* A value for k other than its default, as JSON. */
static cJSON *other_value(const struct kn_cfg_key *k)
{
    cJSON *d = k->def != NULL ? cJSON_Parse(k->def) : NULL;
    cJSON *v = NULL;
    switch (k->type) {
    case KN_CFG_NUMBER:
    case KN_CFG_INT32:
        if (k->flags & KN_CFG_SIGN)
            v = cJSON_CreateNumber(-d->valuedouble);
        else if ((k->flags & KN_CFG_RANGE) && d != NULL) {
            /* between the default and a bound, so rules between keys
             * (flipper_min_deg < flipper_max_deg) still hold */
            double x = d->valuedouble != k->min ? (k->min + d->valuedouble) / 2
                                                : (d->valuedouble + k->max) / 2;
            v = cJSON_CreateNumber(k->type == KN_CFG_INT32 ? ceil(x) : round(x * 100) / 100);
        } else if (k->flags & KN_CFG_RANGE)
            v = cJSON_CreateNumber(k->max);
        else
            v = cJSON_CreateNumber(7);
        break;
    case KN_CFG_STRING: v = cJSON_CreateString(string_for(k)); break;
    case KN_CFG_BOOL: v = cJSON_CreateBool(!cJSON_IsTrue(d)); break;
    case KN_CFG_ENUM: v = cJSON_CreateString(k->names[k->n_names - 1]); break;
    case KN_CFG_VEC: {
        double x[8];
        for (int i = 0; i < k->vec_n; i++)
            x[i] = (k->flags & KN_CFG_SIGN) ? -1.0 : (k->flags & KN_CFG_RANGE) ? k->max : 2.0;
        v = cJSON_CreateDoubleArray(x, k->vec_n);
        break;
    }
    case KN_CFG_CUSTOM:
    case KN_CFG_SECTION: break;
    }
    cJSON_Delete(d);
    return v;
}

/* Sets value v at k's path in a config of one robot. */
static char *config_with(const struct kn_cfg_key *k, const cJSON *v)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON *robots = cJSON_AddArrayToObject(doc, "robots");
    cJSON *r = cJSON_CreateObject();
    cJSON_AddItemToArray(robots, r);
    if (strcmp(k->path, "robots[].name") != 0)
        cJSON_AddStringToObject(r, "name", "r");
    cJSON *b = cJSON_AddObjectToObject(r, "backend");
    cJSON_AddStringToObject(b, "type", type_for(k));
    if (strcmp(type_for(k), "standin") == 0)
        cJSON_AddStringToObject(b, "address", "127.0.0.1:1");
    cJSON *o = k->scope == KN_CFG_SCOPE_TOP ? doc : k->scope == KN_CFG_SCOPE_ROBOT ? r : b;
    const char *rel = k->path + (k->scope == KN_CFG_SCOPE_TOP     ? 0
                                 : k->scope == KN_CFG_SCOPE_ROBOT ? strlen("robots[].")
                                                                  : strlen("robots[].backend."));
    char part[64];
    for (const char *p = rel; strchr(p, '.') != NULL; p = strchr(p, '.') + 1) {
        snprintf(part, sizeof part, "%.*s", (int)(strchr(p, '.') - p), p);
        cJSON *c = cJSON_GetObjectItemCaseSensitive(o, part);
        o = c != NULL ? c : cJSON_AddObjectToObject(o, part);
    }
    cJSON_AddItemToObject(o, kn_config_key_name(k), cJSON_Duplicate(v, true));
    char *text = cJSON_PrintUnformatted(doc);
    cJSON_Delete(doc);
    return text;
}

/* The value at k's path in the effective config's JSON. */
static const cJSON *value_at(const cJSON *doc, const struct kn_cfg_key *k)
{
    const cJSON *o = doc;
    if (k->scope != KN_CFG_SCOPE_TOP)
        o = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "robots"), 0);
    const char *rel = k->path + (k->scope == KN_CFG_SCOPE_TOP ? 0 : strlen("robots[]."));
    char part[64];
    for (const char *p = rel; o != NULL && *p;) {
        size_t n = strcspn(p, ".");
        snprintf(part, sizeof part, "%.*s", (int)n, p);
        o = cJSON_GetObjectItemCaseSensitive(o, part);
        p += n + (p[n] == '.');
    }
    return o;
}

static bool json_same(const cJSON *a, const cJSON *b)
{
    if (cJSON_IsNumber(a) && cJSON_IsNumber(b))
        return fabs(a->valuedouble - b->valuedouble) < 1e-9;
    return cJSON_Compare(a, b, true);
}

/* Every key with a field: a value written at its path loads into the
 * config, comes back at the same path, and makes a robot unequal to one
 * without it (so a reload restarts that robot). */
START_TEST(each_key_loads_prints_and_compares)
{
    struct kn_config *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
    size_t tried = 0;
    for (size_t i = 0; i < kn_config_nkeys(); i++) {
        const struct kn_cfg_key *k = kn_config_key(i);
        if (k->type == KN_CFG_SECTION || k->type == KN_CFG_CUSTOM)
            continue;
        cJSON *v = other_value(k);
        ck_assert_ptr_nonnull(v);
        char *text = config_with(k, v);
        int rc = kn_config_parse(text, strlen(text), "k.json", NULL, a, err, sizeof err);
        ck_assert_msg(rc == 0, "%s: %s\n%s", k->path, text, err);
        char *out = kn_config_to_json(a);
        cJSON *doc = cJSON_Parse(out);
        const cJSON *got = value_at(doc, k);
        char *want = cJSON_PrintUnformatted(v);
        ck_assert_msg(got != NULL && json_same(got, v), "%s: wrote %s, the output has %s", k->path,
                      want, out);
        if (k->scope != KN_CFG_SCOPE_TOP) {
            /* the same robot and backend type without the key */
            const char *btype = type_for(k);
            char base[256];
            snprintf(base, sizeof base,
                     "{\"robots\": [{\"name\": \"r\", \"backend\": {\"type\": \"%s\"%s}}]}", btype,
                     strcmp(btype, "standin") == 0 ? ", \"address\": \"127.0.0.1:1\"" : "");
            ck_assert_int_eq(
                kn_config_parse(base, strlen(base), "b.json", NULL, b, err, sizeof err), 0);
            ck_assert_msg(!kn_config_robot_equal(&a->robots[0], &b->robots[0]),
                          "%s: a change is not seen by the reload", k->path);
            ck_assert(kn_config_robot_equal(&a->robots[0], &a->robots[0]));
        }
        free(want);
        cJSON_Delete(doc);
        free(out);
        free(text);
        cJSON_Delete(v);
        tried++;
    }
    ck_assert_uint_gt(tried, 60);
    free(a);
    free(b);
}
END_TEST

/* What the loader fills in for a key left out is the key's default, for
 * every backend type (custom keys included: their hooks print them). */
START_TEST(defaults_are_the_described_ones)
{
    struct kn_config *c = calloc(1, sizeof *c);
    static const char *const types[] = { "engine", "usarsim", "gazebo", "standin", "gz" };
    for (size_t t = 0; t < 5; t++) {
        char text[256];
        snprintf(text, sizeof text,
                 "{\"stats_socket\": \"\", \"robots\": [{\"name\": \"r\", \"backend\": "
                 "{\"type\": \"%s\"%s}}]}",
                 types[t], t == 3 ? ", \"address\": \"127.0.0.1:1\"" : "");
        ck_assert_int_eq(kn_config_parse(text, strlen(text), "d.json", NULL, c, err, sizeof err),
                         0);
        char *out = kn_config_to_json(c);
        cJSON *doc = cJSON_Parse(out);
        size_t checked = 0;
        for (size_t i = 0; i < kn_config_nkeys(); i++) {
            const struct kn_cfg_key *k = kn_config_key(i);
            if (k->def == NULL || k->type == KN_CFG_SECTION ||
                !kn_config_key_applies(k, &c->robots[0].backend))
                continue;
            const cJSON *got = value_at(doc, k);
            cJSON *want = cJSON_Parse(k->def);
            ck_assert_msg(got != NULL && json_same(got, want), "%s (%s): default %s, loaded %s",
                          k->path, types[t], k->def, out);
            cJSON_Delete(want);
            checked++;
        }
        ck_assert_uint_gt(checked, 30);
        cJSON_Delete(doc);
        free(out);
    }
    free(c);
}
END_TEST

static Suite *keys_suite(void)
{
    Suite *s = suite_create("config-keys");
    TCase *tc = tcase_create("keys");
    tcase_add_test(tc, descriptions_are_well_formed);
    tcase_add_test(tc, each_key_loads_prints_and_compares);
    tcase_add_test(tc, defaults_are_the_described_ones);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return h_run_suite(keys_suite());
}
