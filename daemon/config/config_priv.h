/* What the config module's files share and nobody else sees: the problem
 * list of one load, the loader's state and its typed readers, the custom
 * keys' hooks and the printer of the file layout. */
#ifndef KN_CONFIG_PRIV_H
#define KN_CONFIG_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "config.h"
#include "config_keys.h"

#define KN_CFG_DEFAULT_LISTEN "127.0.0.1:9750"
#define KN_CFG_USARSIM_PORT 3000 /* also the engine's: it serves the USARSim protocol */
#define KN_CFG_GAZEBO_PORT 11345
#define KN_CFG_BACKEND_HOST "127.0.0.1"

/* The key tables' field of a scope's struct (config_keys*.c). */
#define TOP_FIELD(f)                                                 \
    .scope = KN_CFG_SCOPE_TOP, .off = offsetof(struct kn_config, f), \
    .size = sizeof(((struct kn_config *)0)->f)
#define ROBOT_FIELD(f)                                                    \
    .scope = KN_CFG_SCOPE_ROBOT, .off = offsetof(struct kn_cfg_robot, f), \
    .size = sizeof(((struct kn_cfg_robot *)0)->f)
#define BACKEND_FIELD(f)                                                      \
    .scope = KN_CFG_SCOPE_BACKEND, .off = offsetof(struct kn_cfg_backend, f), \
    .size = sizeof(((struct kn_cfg_backend *)0)->f)

/* ---- problems of one load (config_errs.c) ---- */

struct kn_cfg_errs {
    const char *name; /* file name used in every message */
    char *buf;
    size_t cap;
    size_t len;
    size_t n; /* problems recorded (those past the cap included) */
    /* The schema pass and the loader both look at every value: a path the
     * schema already reported is not reported again by the loader. */
    bool recording; /* schema pass: remember the paths */
    size_t nseen;
    char seen[KN_CFG_MAX_ERRORS][160];
};

void kn_config_errs_init(struct kn_cfg_errs *e, const char *name, char *err, size_t errlen);
void kn_config_errs_add(struct kn_cfg_errs *e, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
size_t kn_config_errs_room(const struct kn_cfg_errs *e);
/* kn_jsonschema_validate's report callback; ctx is the struct kn_cfg_errs. */
void kn_config_errs_report(void *ctx, const char *path, const char *message);

/* ---- bytes, JSON and schema (config_read.c) ---- */

char *kn_config_read_file(const char *path, size_t *len, struct kn_cfg_errs *e,
                          struct stat *st_out);
bool kn_config_check_bytes(const char *buf, size_t len, struct kn_cfg_errs *e);
cJSON *kn_config_parse_json(const char *text, size_t len, struct kn_cfg_errs *e);
/* schema_path NULL: the built-in schema (shared, *is_builtin true: do not
 * free it). */
cJSON *kn_config_load_schema(const char *schema_path, struct kn_cfg_errs *e, bool *is_builtin);

/* ---- the loader (config_load.c, config_custom.c) ---- */

/* The loader does not trust the schema (a schema file may be given on the
 * command line): every read checks type and size before touching memory. */
struct kn_cfg_ld {
    struct kn_cfg_errs *e;
    const cJSON *doc;      /* the whole file */
    struct kn_config *cfg; /* what is being filled */
};

const cJSON *kn_config_member(const cJSON *obj, const char *key);
/* "got" part of a message: the value, described for a reader. */
void kn_config_got(const cJSON *v, char *buf, size_t len);
/* A string of at most cap - 1 bytes into dst, or a problem at path. */
bool kn_config_take_string(struct kn_cfg_ld *l, const cJSON *v, const char *path, char *dst,
                           size_t cap);
bool kn_config_take_bool(struct kn_cfg_ld *l, const cJSON *v, const char *path, bool *out);
bool kn_config_take_number(struct kn_cfg_ld *l, const cJSON *v, const char *path, double *out);
/* One of names (the index into *out), or a problem listing them. */
bool kn_config_take_name(struct kn_cfg_ld *l, const cJSON *v, const char *path,
                         const char *const *names, int n, int *out);
/* A number lo..hi, or a problem. */
bool kn_config_take_ranged(struct kn_cfg_ld *l, const cJSON *v, const char *path, double lo,
                           double hi, double *out);

/* The one host:port parser (common/hostport.h) under the config's rules. */
bool kn_config_parse_hostport(const char *s, int default_port, bool ip_only, int min_port,
                              char *host, size_t hostcap, uint16_t *port, const char **why);

/* Loads every key of scope held by the object at JSON path base (src,
 * "$.robots[0]") into obj, in table order; b (for backend keys) says which
 * sections apply. */
void kn_config_load_scope(struct kn_cfg_ld *l, enum kn_cfg_scope scope, const cJSON *src,
                          const char *base, void *obj, const struct kn_cfg_backend *b);

/* The robots (config_load.c), and the per-backend defaults. */
void kn_config_load_robots(struct kn_cfg_ld *l, const cJSON *v, const char *path,
                           struct kn_config *cfg);
void kn_config_backend_defaults(struct kn_cfg_backend *b, enum kn_backend_kind kind);

/* The custom keys' hooks (config_custom.c). */
extern const struct kn_cfg_hooks kn_config_hooks_stats_socket, kn_config_hooks_socket_mode,
    kn_config_hooks_socket_group, kn_config_hooks_capture_dir, kn_config_hooks_capture_mb,
    kn_config_hooks_robots, kn_config_hooks_listen, kn_config_hooks_consoles,
    kn_config_hooks_key_file, kn_config_hooks_allow_drivers, kn_config_hooks_allow_observers,
    kn_config_hooks_backend_type, kn_config_hooks_address, kn_config_hooks_lockstep,
    kn_config_hooks_command, kn_config_hooks_seed_krp, kn_config_hooks_seed_sim;

/* Angles in the file are degrees, resolved to 0.01 degree like KRP/1. */
double kn_config_deg_to_rad(double deg);
double kn_config_rad_to_deg(double rad);

/* ---- output (config_json.c) ---- */

/* A growing text: the effective config's and the reference's. Appending
 * after a failed allocation does nothing; `failed` says it happened. */
struct kn_cfg_text {
    char *buf;
    size_t len, cap;
    bool failed;
};
void kn_config_text_put(struct kn_cfg_text *t, const char *s, size_t n);
void kn_config_text_str(struct kn_cfg_text *t, const char *s);

/* v in the layout of the shipped files (two-space indent, arrays of
 * scalars on one line), no final newline; NULL when out of memory. */
char *kn_config_print(const cJSON *v);

#endif
