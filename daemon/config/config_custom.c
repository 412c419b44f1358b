/* The config keys the key table cannot read, write or compare by type
 * alone (config_keys.h): each has hooks here that load it from the file,
 * give it back as JSON for the effective config, and compare it for a
 * reload. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "access.h"
#include "config_priv.h"
#include "hostport.h"
#include "jsonschema.h"
#include "keyfile.h"

static cJSON *emit_string(const char *s)
{
    return cJSON_CreateString(s);
}

/* ---- host:port ---- */

/* The one host:port parser (common/hostport.h) under the config's rules:
 * an IPv6 address is always written in brackets (a config is read by
 * people, "::1:9750" is ambiguous to them); default_port < 0 makes the port
 * required; ip_only refuses host names (listen addresses are bound, not
 * resolved); min_port 0 lets a listen address ask for any free port. On
 * error *why says what is wrong. */
bool kn_config_parse_hostport(const char *s, int default_port, bool ip_only, int min_port,
                              char *host, size_t hostcap, uint16_t *port, const char **why)
{
    unsigned flags = KN_HOSTPORT_BRACKETS | (default_port < 0 ? KN_HOSTPORT_NEED_PORT : 0u) |
                     (ip_only ? KN_HOSTPORT_IP_ONLY : 0u) |
                     (min_port == 0 ? KN_HOSTPORT_PORT_ZERO : 0u);
    uint16_t def = default_port < 0 ? 0 : (uint16_t)default_port;
    return kn_hostport_split(s, def, flags, host, hostcap, port, why) == 0;
}

/* ---- top level ---- */

static void stats_socket_load(struct kn_cfg_ld *l, const cJSON *v, const char *path, void *obj)
{
    struct kn_config *cfg = obj;
    cfg->stats_socket_default = false;
    cfg->stats_socket[0] = '\0';
    kn_config_take_string(l, v, path, cfg->stats_socket, sizeof cfg->stats_socket);
}

static cJSON *stats_socket_emit(const struct kn_cfg_key *k, const void *obj)
{
    (void)k;
    return emit_string(((const struct kn_config *)obj)->stats_socket);
}

const struct kn_cfg_hooks kn_config_hooks_stats_socket = { stats_socket_load, stats_socket_emit,
                                                           NULL };

/* "0660": octal permission bits for the stats socket, read and write for
 * owner and group at most: others get nothing and nobody gets execute
 * bits, which mean nothing on a socket and would hide a typo. */
static void socket_mode_load(struct kn_cfg_ld *l, const cJSON *v, const char *path, void *obj)
{
    struct kn_config *cfg = obj;
    char s[8], g[400];
    if (!kn_config_take_string(l, v, path, s, sizeof s))
        return;
    size_t n = strlen(s);
    char *end = NULL;
    unsigned long m = strtoul(s, &end, 8);
    if (n < 3 || n > 4 || *end || (n == 4 && s[0] != '0') || strspn(s, "01234567") != n) {
        kn_config_got(v, g, sizeof g);
        kn_config_errs_add(l->e, path, "expected an octal mode such as \"0660\", got %s", g);
        return;
    }
    if (m & ~(unsigned long)KN_CFG_SOCKET_MODE) {
        kn_config_errs_add(l->e, path,
                           "expected a mode within 0660 (read and write for "
                           "owner and group; nothing for others, no execute bits), got \"%s\"%s%s",
                           s, m & 07 ? " (grants access to others)" : "",
                           m & 0110 ? " (execute bits)" : "");
        return;
    }
    cfg->stats_socket_mode = (unsigned)m;
}

static cJSON *socket_mode_emit(const struct kn_cfg_key *k, const void *obj)
{
    (void)k;
    char mode[8];
    snprintf(mode, sizeof mode, "%04o", ((const struct kn_config *)obj)->stats_socket_mode);
    return emit_string(mode);
}

const struct kn_cfg_hooks kn_config_hooks_socket_mode = { socket_mode_load, socket_mode_emit,
                                                          NULL };

/* A group name, or its number as a string or an integer. */
static void socket_group_load(struct kn_cfg_ld *l, const cJSON *v, const char *path, void *obj)
{
    struct kn_config *cfg = obj;
    char g[400];
    if (cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble <= 2147483647.0 &&
        floor(v->valuedouble) == v->valuedouble) {
        snprintf(cfg->stats_socket_group, sizeof cfg->stats_socket_group, "%.0f", v->valuedouble);
        return;
    }
    if (cJSON_IsString(v) && v->valuestring[0] && strlen(v->valuestring) <= KN_CFG_GROUP_LEN &&
        !strchr(v->valuestring, ':')) {
        snprintf(cfg->stats_socket_group, sizeof cfg->stats_socket_group, "%s", v->valuestring);
        return;
    }
    kn_config_got(v, g, sizeof g);
    kn_config_errs_add(l->e, path,
                       "expected a group name of 1..%d bytes or a group "
                       "number 0..2147483647, got %s",
                       KN_CFG_GROUP_LEN, g);
}

static cJSON *socket_group_emit(const struct kn_cfg_key *k, const void *obj)
{
    (void)k;
    const struct kn_config *cfg = obj;
    return cfg->stats_socket_group[0] ? emit_string(cfg->stats_socket_group) : NULL;
}

const struct kn_cfg_hooks kn_config_hooks_socket_group = { socket_group_load, socket_group_emit,
                                                           NULL };

static void capture_dir_load(struct kn_cfg_ld *l, const cJSON *v, const char *path, void *obj)
{
    struct kn_config *cfg = obj;
    cfg->capture_dir_default = false;
    cfg->capture_dir[0] = '\0';
    if (kn_config_take_string(l, v, path, cfg->capture_dir, sizeof cfg->capture_dir) &&
        cfg->capture_dir[0] != '/') {
        kn_config_errs_add(l->e, path, "expected an absolute directory path, got \"%s\"",
                           cfg->capture_dir);
        cfg->capture_dir[0] = '\0';
    }
}

static cJSON *capture_dir_emit(const struct kn_cfg_key *k, const void *obj)
{
    (void)k;
    const struct kn_config *cfg = obj;
    return cfg->capture_dir[0] ? emit_string(cfg->capture_dir) : NULL;
}

const struct kn_cfg_hooks kn_config_hooks_capture_dir = { capture_dir_load, capture_dir_emit,
                                                          NULL };

static void capture_mb_load(struct kn_cfg_ld *l, const cJSON *v, const char *path, void *obj)
{
    struct kn_config *cfg = obj;
    double mb = (double)(cfg->capture_max_bytes >> 20);
    kn_config_take_ranged(l, v, path, 0, 1024.0 * 1024, &mb);
    if (floor(mb) != mb) {
        kn_config_errs_add(l->e, path, "expected a whole number of MiB, got %g", mb);
        mb = floor(mb);
    }
    cfg->capture_max_bytes = (uint64_t)mb << 20;
}

static cJSON *capture_mb_emit(const struct kn_cfg_key *k, const void *obj)
{
    (void)k;
    return cJSON_CreateNumber((double)(((const struct kn_config *)obj)->capture_max_bytes >> 20));
}

const struct kn_cfg_hooks kn_config_hooks_capture_mb = { capture_mb_load, capture_mb_emit, NULL };

static void robots_load(struct kn_cfg_ld *l, const cJSON *v, const char *path, void *obj)
{
    kn_config_load_robots(l, v, path, obj);
}

/* The robots are written by kn_config_to_json itself, one scope each. */
const struct kn_cfg_hooks kn_config_hooks_robots = { robots_load, NULL, NULL };

/* ---- a robot ---- */

static void listen_load(struct kn_cfg_ld *l, const cJSON *v, const char *path, void *obj)
{
    struct kn_cfg_robot *r = obj;
    char listen[KN_CFG_HOST_LEN + 8];
    if (!kn_config_take_string(l, v, path, listen, sizeof listen))
        return;
    const char *why = "";
    if (!kn_config_parse_hostport(listen, -1, true, 0, r->bind_host, sizeof r->bind_host, &r->port,
                                  &why)) {
        char q[400];
        kn_jsonschema_quote(listen, q, sizeof q);
        kn_config_errs_add(l->e, path,
                           "expected \"IPv4:PORT\" or \"[IPv6]:PORT\" with PORT 0..65535, got %s "
                           "(%s)",
                           q, why);
    }
}

static cJSON *listen_emit(const struct kn_cfg_key *k, const void *obj)
{
    (void)k;
    const struct kn_cfg_robot *r = obj;
    char listen[KN_CFG_HOST_LEN + 16];
    kn_hostport_format(r->bind_host, r->port, listen, sizeof listen);
    return emit_string(listen);
}

static bool listen_equal(const void *a, const void *b)
{
    const struct kn_cfg_robot *x = a, *y = b;
    return strcmp(x->bind_host, y->bind_host) == 0 && x->port == y->port;
}

const struct kn_cfg_hooks kn_config_hooks_listen = { listen_load, listen_emit, listen_equal };

/* "consoles": IP addresses, each with a port or without one (every port). */
static void consoles_load(struct kn_cfg_ld *l, const cJSON *v, const char *path, void *obj)
{
    struct kn_cfg_robot *r = obj;
    char g[400];
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) > KN_CFG_MAX_CONSOLES) {
        kn_config_got(v, g, sizeof g);
        kn_config_errs_add(l->e, path, "expected an array of at most %d addresses, got %s",
                           KN_CFG_MAX_CONSOLES, g);
        return;
    }
    const cJSON *c;
    cJSON_ArrayForEach(c, v)
    {
        char q[300];
        snprintf(q, sizeof q, "%s[%zu]", path, r->n_consoles);
        const char *why = "not a string";
        struct kn_cfg_console *e = &r->consoles[r->n_consoles];
        if (!cJSON_IsString(c) || c->valuestring == NULL ||
            !kn_config_parse_hostport(c->valuestring, 0, true, 0, e->host, sizeof e->host, &e->port,
                                      &why)) {
            kn_config_got(c, g, sizeof g);
            kn_config_errs_add(
                l->e, q, "expected \"IPv4[:PORT]\" or \"[IPv6][:PORT]\", got %s (%s)", g, why);
            memset(e, 0, sizeof *e);
            continue;
        }
        r->n_consoles++;
    }
}

static cJSON *consoles_emit(const struct kn_cfg_key *k, const void *obj)
{
    (void)k;
    const struct kn_cfg_robot *r = obj;
    cJSON *jc = cJSON_CreateArray();
    for (size_t i = 0; jc != NULL && i < r->n_consoles; i++) {
        char a[96];
        if (r->consoles[i].port)
            kn_hostport_format(r->consoles[i].host, r->consoles[i].port, a, sizeof a);
        else
            snprintf(a, sizeof a, "%s", r->consoles[i].host);
        cJSON *js = cJSON_CreateString(a);
        if (js == NULL || !cJSON_AddItemToArray(jc, js)) {
            cJSON_Delete(js);
            cJSON_Delete(jc);
            return NULL;
        }
    }
    return jc;
}

static bool consoles_equal(const void *a, const void *b)
{
    const struct kn_cfg_robot *x = a, *y = b;
    if (x->n_consoles != y->n_consoles)
        return false;
    for (size_t i = 0; i < x->n_consoles; i++)
        if (strcmp(x->consoles[i].host, y->consoles[i].host) != 0 ||
            x->consoles[i].port != y->consoles[i].port)
            return false;
    return true;
}

const struct kn_cfg_hooks kn_config_hooks_consoles = { consoles_load, consoles_emit,
                                                       consoles_equal };

/* key_file: the key is read here, so --check-config and a start alike
 * name a key file that is missing, readable by others or malformed. */
static void key_file_load(struct kn_cfg_ld *l, const cJSON *v, const char *path, void *obj)
{
    struct kn_cfg_robot *r = obj;
    if (!kn_config_take_string(l, v, path, r->key_file, sizeof r->key_file))
        return;
#ifdef KN_HAVE_KEYS
    char why[KN_CFG_PATH_LEN + 256];
    if (kn_keyfile_read(r->key_file, r->key, &r->key_len, why, sizeof why) < 0) {
        kn_config_errs_add(l->e, path, "%s", why);
        r->key_len = 0;
    }
#else
    kn_config_errs_add(l->e, path,
                       "kenaf-simd was built without shared-key support (nettle-dev; "
                       "meson -Dkeys=enabled), so key %s cannot be used",
                       r->key_file);
#endif
}

static cJSON *key_file_emit(const struct kn_cfg_key *k, const void *obj)
{
    (void)k;
    const struct kn_cfg_robot *r = obj;
    return r->key_file[0] ? emit_string(r->key_file) : NULL;
}

/* The key itself, not the file's name: a key file rewritten in place is a
 * new key, the same key under another name is not. */
static bool key_equal(const void *a, const void *b)
{
    const struct kn_cfg_robot *x = a, *y = b;
    return x->key_len == y->key_len && memcmp(x->key, y->key, x->key_len) == 0;
}

const struct kn_cfg_hooks kn_config_hooks_key_file = { key_file_load, key_file_emit, key_equal };

/* allow_drivers / allow_observers: networks or addresses (access.h). */
static void load_allow(struct kn_cfg_ld *l, const cJSON *v, const char *path, struct kn_access *a,
                       struct kn_access_net *list, uint8_t *n)
{
    char g[400];
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) > KN_ACCESS_MAX_NETS) {
        kn_config_got(v, g, sizeof g);
        kn_config_errs_add(l->e, path,
                           "expected an array of at most %d addresses or networks, got %s",
                           KN_ACCESS_MAX_NETS, g);
        return;
    }
    a->on = true;
    int i = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, v)
    {
        char ip[180];
        snprintf(ip, sizeof ip, "%s[%d]", path, i++);
        const char *why = "expected a string";
        if (!cJSON_IsString(it) || kn_access_parse(it->valuestring, &list[*n], &why) < 0) {
            kn_config_got(it, g, sizeof g);
            kn_config_errs_add(l->e, ip, "%s (\"10.1.2.0/24\", \"::1/128\", \"127.0.0.1\"), got %s",
                               why, g);
            continue;
        }
        (*n)++;
    }
}

static cJSON *emit_allow(const struct kn_access *a, const struct kn_access_net *list, unsigned n)
{
    if (!a->on)
        return NULL;
    cJSON *arr = cJSON_CreateArray();
    for (unsigned i = 0; arr != NULL && i < n; i++) {
        char net[80];
        kn_access_format(&list[i], net, sizeof net);
        cJSON *s = cJSON_CreateString(net);
        if (s == NULL || !cJSON_AddItemToArray(arr, s)) {
            cJSON_Delete(s);
            cJSON_Delete(arr);
            return NULL;
        }
    }
    return arr;
}

static void drivers_load(struct kn_cfg_ld *l, const cJSON *v, const char *path, void *obj)
{
    struct kn_cfg_robot *r = obj;
    load_allow(l, v, path, &r->access, r->access.drivers, &r->access.n_drivers);
}

static void observers_load(struct kn_cfg_ld *l, const cJSON *v, const char *path, void *obj)
{
    struct kn_cfg_robot *r = obj;
    load_allow(l, v, path, &r->access, r->access.observers, &r->access.n_observers);
}

static cJSON *drivers_emit(const struct kn_cfg_key *k, const void *obj)
{
    (void)k;
    const struct kn_cfg_robot *r = obj;
    return emit_allow(&r->access, r->access.drivers, r->access.n_drivers);
}

static cJSON *observers_emit(const struct kn_cfg_key *k, const void *obj)
{
    (void)k;
    const struct kn_cfg_robot *r = obj;
    return emit_allow(&r->access, r->access.observers, r->access.n_observers);
}

/* Both lists and whether either is on: one struct kn_access. */
static bool access_equal(const void *a, const void *b)
{
    const struct kn_cfg_robot *x = a, *y = b;
    return memcmp(&x->access, &y->access, sizeof x->access) == 0;
}

const struct kn_cfg_hooks kn_config_hooks_allow_drivers = { drivers_load, drivers_emit,
                                                            access_equal };
const struct kn_cfg_hooks kn_config_hooks_allow_observers = { observers_load, observers_emit,
                                                              access_equal };

static void seed_load(struct kn_cfg_ld *l, const cJSON *v, const char *path, uint64_t *out)
{
    double seed = 0;
    if (!kn_config_take_ranged(l, v, path, 0, 9007199254740991.0, &seed))
        return;
    if (floor(seed) != seed) {
        kn_config_errs_add(l->e, path, "expected an integer, got %g", seed);
        return;
    }
    *out = (uint64_t)seed;
}

static void seed_krp_load(struct kn_cfg_ld *l, const cJSON *v, const char *path, void *obj)
{
    seed_load(l, v, path, &((struct kn_cfg_robot *)obj)->faults_krp.seed);
}

static void seed_sim_load(struct kn_cfg_ld *l, const cJSON *v, const char *path, void *obj)
{
    seed_load(l, v, path, &((struct kn_cfg_robot *)obj)->faults_sim.seed);
}

static cJSON *seed_krp_emit(const struct kn_cfg_key *k, const void *obj)
{
    (void)k;
    return cJSON_CreateNumber((double)((const struct kn_cfg_robot *)obj)->faults_krp.seed);
}

static cJSON *seed_sim_emit(const struct kn_cfg_key *k, const void *obj)
{
    (void)k;
    return cJSON_CreateNumber((double)((const struct kn_cfg_robot *)obj)->faults_sim.seed);
}

static bool seed_krp_equal(const void *a, const void *b)
{
    return ((const struct kn_cfg_robot *)a)->faults_krp.seed ==
           ((const struct kn_cfg_robot *)b)->faults_krp.seed;
}

static bool seed_sim_equal(const void *a, const void *b)
{
    return ((const struct kn_cfg_robot *)a)->faults_sim.seed ==
           ((const struct kn_cfg_robot *)b)->faults_sim.seed;
}

const struct kn_cfg_hooks kn_config_hooks_seed_krp = { seed_krp_load, seed_krp_emit,
                                                       seed_krp_equal };
const struct kn_cfg_hooks kn_config_hooks_seed_sim = { seed_sim_load, seed_sim_emit,
                                                       seed_sim_equal };

/* ---- a backend ---- */

static cJSON *type_emit(const struct kn_cfg_key *k, const void *obj)
{
    (void)k;
    enum kn_backend_kind kind = ((const struct kn_cfg_backend *)obj)->kind;
    return emit_string(kind <= KN_BACKEND_GZ ? kn_config_backend_names[kind] : "engine");
}

static bool type_equal(const void *a, const void *b)
{
    return ((const struct kn_cfg_backend *)a)->kind == ((const struct kn_cfg_backend *)b)->kind;
}

/* Read by load_backend before the other keys: it sets their defaults. */
const struct kn_cfg_hooks kn_config_hooks_backend_type = { NULL, type_emit, type_equal };

static void address_load(struct kn_cfg_ld *l, const cJSON *v, const char *path, void *obj)
{
    struct kn_cfg_backend *b = obj;
    char addr[KN_CFG_HOST_LEN + 8] = "";
    if (!kn_config_take_string(l, v, path, addr, sizeof addr))
        return;
    int def_port = b->kind == KN_BACKEND_GAZEBO    ? KN_CFG_GAZEBO_PORT
                   : b->kind == KN_BACKEND_STANDIN ? -1
                                                   : KN_CFG_USARSIM_PORT;
    const char *why = "";
    if (!kn_config_parse_hostport(addr, def_port, false, 1, b->host, sizeof b->host, &b->port,
                                  &why)) {
        char q[400];
        kn_jsonschema_quote(addr, q, sizeof q);
        kn_config_errs_add(l->e, path, "expected %s, got %s (%s)",
                           def_port < 0 ? "\"HOST:PORT\" or \"[IPv6]:PORT\""
                                        : "\"HOST[:PORT]\" or \"[IPv6][:PORT]\"",
                           q, why);
    }
}

static cJSON *address_emit(const struct kn_cfg_key *k, const void *obj)
{
    (void)k;
    const struct kn_cfg_backend *b = obj;
    if (b->host[0] == '\0')
        return NULL;
    char addr[KN_CFG_HOST_LEN + 16];
    kn_hostport_format(b->host, b->port, addr, sizeof addr);
    return emit_string(addr);
}

static bool address_equal(const void *a, const void *b)
{
    const struct kn_cfg_backend *x = a, *y = b;
    return strcmp(x->host, y->host) == 0 && x->port == y->port;
}

const struct kn_cfg_hooks kn_config_hooks_address = { address_load, address_emit, address_equal };

/* lockstep: true only for the built-in engine, the one simulator that
 * steps on request. */
static void lockstep_load(struct kn_cfg_ld *l, const cJSON *v, const char *path, void *obj)
{
    struct kn_cfg_backend *b = obj;
    bool on;
    if (!kn_config_take_bool(l, v, path, &on))
        return;
    if (on && b->kind != KN_BACKEND_ENGINE) {
        kn_config_errs_add(l->e, path,
                           "expected false for backend type \"%s\" (only the built-in engine "
                           "steps on request), got true",
                           kn_config_backend_names[b->kind]);
        return;
    }
    b->lockstep = on;
}

static cJSON *lockstep_emit(const struct kn_cfg_key *k, const void *obj)
{
    (void)k;
    return cJSON_CreateBool(((const struct kn_cfg_backend *)obj)->lockstep);
}

static bool lockstep_equal(const void *a, const void *b)
{
    return ((const struct kn_cfg_backend *)a)->lockstep ==
           ((const struct kn_cfg_backend *)b)->lockstep;
}

const struct kn_cfg_hooks kn_config_hooks_lockstep = { lockstep_load, lockstep_emit,
                                                       lockstep_equal };

/* gazebo.command: "twist" (cmd_vel_twist) or "pose" (cmd_vel). */
static void command_load(struct kn_cfg_ld *l, const cJSON *v, const char *path, void *obj)
{
    static const char *const names[] = { "twist", "pose" };
    int c;
    if (kn_config_take_name(l, v, path, names, 2, &c))
        ((struct kn_cfg_backend *)obj)->twist_cmd = c == 0;
}

static cJSON *command_emit(const struct kn_cfg_key *k, const void *obj)
{
    (void)k;
    return emit_string(((const struct kn_cfg_backend *)obj)->twist_cmd ? "twist" : "pose");
}

static bool command_equal(const void *a, const void *b)
{
    return ((const struct kn_cfg_backend *)a)->twist_cmd ==
           ((const struct kn_cfg_backend *)b)->twist_cmd;
}

const struct kn_cfg_hooks kn_config_hooks_command = { command_load, command_emit, command_equal };
