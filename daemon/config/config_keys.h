/* The description of every key of the kenaf-simd config file, once: its
 * JSON path, type, range or names, default, text, whether a reload applies
 * it, which component reads it, and where the loader puts it. The loader,
 * the reload comparison, the effective-config output (--check-config), the
 * JSON Schema and the reference in docs/configuration.md and
 * kenaf-simd.json(5) are all made from this table (config_keys.c); adding
 * a key is one entry here plus the code that uses the value. */
#ifndef KN_CONFIG_KEYS_H
#define KN_CONFIG_KEYS_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "config.h"

enum kn_cfg_type {
    KN_CFG_SECTION, /* an object of keys (path "robots[].limits") */
    KN_CFG_NUMBER,  /* double (unit: the file has degrees, the struct radians or cdeg) */
    KN_CFG_INT32,   /* int32_t */
    KN_CFG_STRING,  /* char[size] */
    KN_CFG_BOOL,    /* bool */
    KN_CFG_ENUM,    /* int: index into names, plus bias */
    KN_CFG_VEC,     /* double[vec_n] */
    KN_CFG_CUSTOM,  /* the hooks read, write and compare it; schema says its form */
};

/* Which struct a key's field lies in. */
enum kn_cfg_scope { KN_CFG_SCOPE_TOP, KN_CFG_SCOPE_ROBOT, KN_CFG_SCOPE_BACKEND };

enum kn_cfg_unit {
    KN_CFG_UNIT_NONE,
    KN_CFG_UNIT_DEG_RAD,  /* degrees in the file, radians (at 0.01 degree) in the struct */
    KN_CFG_UNIT_DEG_CDEG, /* degrees in the file, int32_t 0.01 degree in the struct */
};

/* What a SIGHUP does when the key changed. */
enum kn_cfg_reload {
    KN_CFG_RELOAD_LIVE,  /* applied at once, nothing restarts */
    KN_CFG_RELOAD_ROBOT, /* the robot restarts (new socket, new simulator link) */
    KN_CFG_RELOAD_STATS, /* the stats socket is opened again */
    KN_CFG_RELOAD_START, /* read at start-up only */
};

enum {
    KN_CFG_REQUIRED = 1u << 0,   /* the enclosing object must have it */
    KN_CFG_OMIT_EMPTY = 1u << 1, /* left out of the output when "" */
    KN_CFG_SIGN = 1u << 2,       /* each value -1 or 1 */
    KN_CFG_SPAWNED = 1u << 3,    /* only for an engine kenaf-simd spawns (no address) */
    KN_CFG_FAULTS = 1u << 4,     /* only while "fault_injection" is true */
    KN_CFG_EXCL_MIN = 1u << 5,   /* min itself is out of range */
    KN_CFG_RANGE = 1u << 6,      /* min and max apply */
};

/* Bits of enum kn_backend_kind: the backends a key applies to (0: all). */
#define KN_CFG_BK(kind) (1u << (kind))

struct kn_cfg_ld; /* the loader's state (config_priv.h) */
struct kn_cfg_key;

/* A custom key: load reads value v (present) at path into the scope's
 * struct obj; emit returns its JSON (NULL: left out); equal compares two. */
struct kn_cfg_hooks {
    void (*load)(struct kn_cfg_ld *l, const cJSON *v, const char *path, void *obj);
    cJSON *(*emit)(const struct kn_cfg_key *k, const void *obj);
    bool (*equal)(const void *a, const void *b);
};

struct kn_cfg_key {
    const char *path; /* "robots[].backend.gazebo.model" */
    enum kn_cfg_type type;
    enum kn_cfg_scope scope;
    size_t off, size; /* the field in the scope's struct */
    unsigned flags;
    double min, max;          /* with KN_CFG_RANGE: numbers, and each number of a VEC */
    int minlen, maxlen;       /* strings, in bytes (maxlen 0: the field's size - 1) */
    const char *pattern;      /* strings: the schema's pattern */
    const char *schema;       /* CUSTOM: its JSON Schema keywords, as a JSON object */
    const char *def;          /* default as JSON; NULL: none, or def_doc says */
    const char *def_doc;      /* the default in words, when it is not a constant */
    const char *const *names; /* ENUM (and CUSTOM enums): the names */
    int n_names, bias;
    int vec_n;
    enum kn_cfg_unit unit;
    unsigned backends; /* KN_CFG_BK() bits; 0: every backend */
    enum kn_cfg_reload reload;
    const char *reader; /* the component that uses the value */
    const char *doc;    /* what it means, one paragraph of plain text */
    const struct kn_cfg_hooks *hooks;
};

/* The tables, one per scope (config_keys*.c), each in output order. */
extern const struct kn_cfg_key kn_config_keys_top[], kn_config_keys_robot[],
    kn_config_keys_backend[];
extern const size_t kn_config_nkeys_top, kn_config_nkeys_robot, kn_config_nkeys_backend;

/* The keys of one scope, *n of them. */
const struct kn_cfg_key *kn_config_keys_of(enum kn_cfg_scope scope, size_t *n);
/* Every key, i = 0 .. kn_config_nkeys() - 1: the top level's, a robot's, its backend's. */
size_t kn_config_nkeys(void);
const struct kn_cfg_key *kn_config_key(size_t i);

/* The schema's own description of the file. */
extern const char kn_config_schema_doc[];

/* Names of the enums, in their numeric order. */
extern const char *const kn_config_backend_names[5];

/* The key's field inside obj, the struct of its scope. */
void *kn_config_key_field(const struct kn_cfg_key *k, void *obj);
const void *kn_config_key_cfield(const struct kn_cfg_key *k, const void *obj);

/* The key at this path, or NULL. */
const struct kn_cfg_key *kn_config_key_find(const char *path);

/* Last component of the path ("model"), and the path of the object that
 * holds the key ("robots[].backend.gazebo"; "" at the top). */
const char *kn_config_key_name(const struct kn_cfg_key *k);
void kn_config_key_parent(const struct kn_cfg_key *k, char *out, size_t len);

/* Whether a backend key applies to backend b (its type, and for the engine
 * section whether kenaf-simd spawns the engine). */
bool kn_config_key_applies(const struct kn_cfg_key *k, const struct kn_cfg_backend *b);

/* Fills every described field of scope in obj with its default. */
void kn_config_keys_defaults(enum kn_cfg_scope scope, void *obj);

/* The JSON Schema made from the table, as the text of
 * config/kenaf-simd.schema.json (two-space indented, final newline); NULL
 * when out of memory. Caller frees. */
char *kn_config_schema_from_keys(void);

/* The reference made from the table: the keys held by each object in
 * parents (a space-separated list, "robots[] robots[].limits"), as a
 * Markdown table (md true) or as scdoc entries for the man page. Caller
 * frees; NULL when out of memory or no key matches. */
char *kn_config_reference(const char *parents, bool md);

#endif
