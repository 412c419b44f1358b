/* The JSON Schema of the config file, made from the key table: objects
 * for the sections (no other keys allowed, required keys listed), and per
 * key its description, type, range, length, pattern, names and default.
 * config/kenaf-simd.schema.json is this text; a unit test keeps the two
 * the same. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_priv.h"

static bool add(cJSON *o, const char *key, cJSON *v)
{
    if (v == NULL || o == NULL || !cJSON_AddItemToObject(o, key, v)) {
        cJSON_Delete(v);
        return false;
    }
    return true;
}

static cJSON *names_array(const struct kn_cfg_key *k)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; a != NULL && i < k->n_names; i++)
        if (!cJSON_AddItemToArray(a, cJSON_CreateString(k->names[i]))) {
            cJSON_Delete(a);
            return NULL;
        }
    return a;
}

static cJSON *signs(void)
{
    static const int v[] = { -1, 1 };
    return cJSON_CreateIntArray(v, 2);
}

/* A number's range keywords. */
static bool add_range(cJSON *o, const struct kn_cfg_key *k)
{
    if (!(k->flags & KN_CFG_RANGE))
        return true;
    return add(o, (k->flags & KN_CFG_EXCL_MIN) ? "exclusiveMinimum" : "minimum",
               cJSON_CreateNumber(k->min)) &&
           add(o, "maximum", cJSON_CreateNumber(k->max));
}

/* The keywords of one key (not a section). */
static bool key_node(cJSON *o, const struct kn_cfg_key *k)
{
    bool ok = true;
    switch (k->type) {
    case KN_CFG_NUMBER:
        if (k->flags & KN_CFG_SIGN)
            return add(o, "enum", signs());
        return add(o, "type", cJSON_CreateString("number")) && add_range(o, k);
    case KN_CFG_INT32: return add(o, "type", cJSON_CreateString("integer")) && add_range(o, k);
    case KN_CFG_BOOL: return add(o, "type", cJSON_CreateString("boolean"));
    case KN_CFG_ENUM: return add(o, "enum", names_array(k));
    case KN_CFG_STRING:
        ok = add(o, "type", cJSON_CreateString("string"));
        if (k->minlen > 0)
            ok = ok && add(o, "minLength", cJSON_CreateNumber(k->minlen));
        ok = ok && add(o, "maxLength",
                       cJSON_CreateNumber(k->maxlen > 0 ? k->maxlen : (double)k->size - 1));
        if (k->pattern != NULL)
            ok = ok && add(o, "pattern", cJSON_CreateString(k->pattern));
        return ok;
    case KN_CFG_VEC: {
        ok = add(o, "type", cJSON_CreateString("array")) &&
             add(o, "minItems", cJSON_CreateNumber(k->vec_n)) &&
             add(o, "maxItems", cJSON_CreateNumber(k->vec_n));
        cJSON *items = cJSON_CreateObject();
        if (!add(o, "items", items))
            return false;
        if (k->flags & KN_CFG_SIGN)
            return ok && add(items, "enum", signs());
        return ok && add(items, "type", cJSON_CreateString("number")) && add_range(items, k);
    }
    case KN_CFG_CUSTOM: {
        cJSON *s = cJSON_Parse(k->schema != NULL ? k->schema : "{}");
        cJSON *c = s != NULL ? s->child : NULL;
        while (ok && c != NULL) {
            cJSON *next = c->next;
            ok = add(o, c->string, cJSON_DetachItemViaPointer(s, c));
            c = next;
        }
        cJSON_Delete(s);
        if (k->names != NULL)
            ok = ok && add(o, "enum", names_array(k));
        return ok && s != NULL;
    }
    case KN_CFG_SECTION: break;
    }
    return ok;
}

/* The "properties" object of the node for parent path p. */
static cJSON *props_of(cJSON *root, const char *p)
{
    cJSON *o = root;
    char part[64];
    while (o != NULL && *p) {
        size_t n = strcspn(p, ".");
        snprintf(part, sizeof part, "%.*s", (int)n, p);
        bool items = n > 2 && strcmp(part + n - 2, "[]") == 0;
        if (items)
            part[n - 2] = '\0';
        o = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "properties"),
                                             part);
        if (o != NULL && items)
            o = cJSON_GetObjectItemCaseSensitive(o, "items");
        p += n + (p[n] == '.');
    }
    return cJSON_GetObjectItemCaseSensitive(o, "properties");
}

/* An object node: type, no other keys, its properties to come. */
static cJSON *object_node(const char *doc)
{
    cJSON *o = cJSON_CreateObject();
    bool ok = o != NULL;
    if (doc != NULL && doc[0])
        ok = ok && add(o, "description", cJSON_CreateString(doc));
    ok = ok && add(o, "type", cJSON_CreateString("object")) &&
         add(o, "additionalProperties", cJSON_CreateFalse()) &&
         add(o, "properties", cJSON_CreateObject());
    if (!ok) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* "required" of the object whose properties are props, listing name. */
static bool require(cJSON *node, const char *name)
{
    cJSON *r = cJSON_GetObjectItemCaseSensitive(node, "required");
    if (r == NULL) {
        r = cJSON_CreateArray();
        /* before "properties", as people write it */
        cJSON *props = cJSON_DetachItemFromObjectCaseSensitive(node, "properties");
        if (!add(node, "required", r) || !add(node, "properties", props))
            return false;
    }
    return cJSON_AddItemToArray(r, cJSON_CreateString(name));
}

static bool add_key(cJSON *root, const struct kn_cfg_key *k)
{
    char parent[160];
    kn_config_key_parent(k, parent, sizeof parent);
    cJSON *props = props_of(root, parent);
    if (props == NULL)
        return false;
    const char *name = kn_config_key_name(k);
    cJSON *o;
    if (k->type == KN_CFG_SECTION) {
        o = object_node(k->doc);
    } else {
        o = cJSON_CreateObject();
        if (o != NULL && k->doc[0] && !add(o, "description", cJSON_CreateString(k->doc)))
            o = NULL;
        if (o != NULL && !key_node(o, k)) {
            cJSON_Delete(o);
            o = NULL;
        }
        cJSON *d = k->def != NULL ? cJSON_Parse(k->def) : NULL;
        if (o != NULL && d != NULL && !add(o, "default", d))
            o = NULL;
        if (d != NULL && o == NULL)
            cJSON_Delete(d);
    }
    if (!add(props, name, o))
        return false;
    /* an array of objects ("robots"): its items are the object of the
     * keys below "robots[]" */
    if (k->type == KN_CFG_CUSTOM && k->scope == KN_CFG_SCOPE_TOP && strcmp(name, "robots") == 0 &&
        !add(o, "items", object_node(NULL)))
        return false;
    if (k->flags & KN_CFG_REQUIRED) {
        cJSON *holder = root;
        if (parent[0]) {
            char pp[160];
            snprintf(pp, sizeof pp, "%s", parent);
            /* the node holding props: find it through the parent's parent */
            char *dot = strrchr(pp, '.');
            const char *last = dot != NULL ? dot + 1 : pp;
            char lastname[160];
            snprintf(lastname, sizeof lastname, "%s", last);
            if (dot != NULL)
                *dot = '\0';
            else
                pp[0] = '\0';
            size_t ln = strlen(lastname);
            bool items = ln > 2 && strcmp(lastname + ln - 2, "[]") == 0;
            if (items)
                lastname[ln - 2] = '\0';
            holder = cJSON_GetObjectItemCaseSensitive(props_of(root, pp), lastname);
            if (items)
                holder = cJSON_GetObjectItemCaseSensitive(holder, "items");
        }
        return holder != NULL && require(holder, name);
    }
    return true;
}

char *kn_config_schema_from_keys(void)
{
    cJSON *root = cJSON_CreateObject();
    bool ok =
        root != NULL &&
        add(root, "$schema", cJSON_CreateString("https://json-schema.org/draft/2020-12/schema")) &&
        add(root, "$id", cJSON_CreateString("https://kenaf-sim.invalid/kenaf-simd.schema.json")) &&
        add(root, "title", cJSON_CreateString("kenaf-simd configuration")) &&
        add(root, "description", cJSON_CreateString(kn_config_schema_doc)) &&
        add(root, "type", cJSON_CreateString("object")) &&
        add(root, "additionalProperties", cJSON_CreateFalse()) &&
        add(root, "properties", cJSON_CreateObject());
    for (size_t i = 0; ok && i < kn_config_nkeys(); i++)
        ok = add_key(root, kn_config_key(i));
    char *text = ok ? kn_config_print(root) : NULL;
    cJSON_Delete(root);
    if (text == NULL)
        return NULL;
    size_t n = strlen(text);
    char *nl = realloc(text, n + 2);
    if (nl == NULL) {
        free(text);
        return NULL;
    }
    memcpy(nl + n, "\n", 2);
    return nl;
}
