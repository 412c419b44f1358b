/* The key descriptions of the kenaf-simd config (config_keys.h says what
 * each field means): the top-level keys here, a robot's in
 * config_keys_robot.c, its backend's in config_keys_backend.c, each list
 * in the order of the effective-config output; and the small functions
 * every user of the descriptions shares. */
#include "config_keys.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "config_priv.h"
#include "convert.h"

static const char *const log_level_names[] = { "error", "warn", "info", "debug" };
const char *const kn_config_backend_names[5] = { "engine", "usarsim", "gazebo", "standin", "gz" };

const char kn_config_schema_doc[] =
    "One kenaf-simd process: its log level, its stats socket, where captures go, when it tells systemd it is ready, and the simulated robots it serves. Every key is optional unless listed in required; defaults are given per key. Rules a schema cannot express (unique names and listen addresses, flipper_min_deg < flipper_max_deg, host:port syntax, sections that fit the backend type) are checked by the loader after this schema.";

const struct kn_cfg_key
    kn_config_keys_top
        [] = {
            { .path = "log_level",
              .type = KN_CFG_ENUM,
              TOP_FIELD(log_level),
              .def = "\"info\"",
              .names = log_level_names,
              .n_names = 4,
              .reload = KN_CFG_RELOAD_LIVE,
              .reader = "daemon/log.c",
              .doc =
                  "The lowest severity written to standard error (the journal under systemd); kenaf-simd --log-level overrides it." },
            { .path = "stats_socket",
              .type = KN_CFG_CUSTOM,
              .scope = KN_CFG_SCOPE_TOP,
              .schema = "{\"type\": \"string\", \"maxLength\": 107}",
              .def_doc = "a per-user path, see the text",
              .hooks = &kn_config_hooks_stats_socket,
              .reload = KN_CFG_RELOAD_STATS,
              .reader = "daemon/stats.c",
              .doc =
                  "Path of the Unix socket that serves stats as JSON and takes commands; an empty string means no stats socket. At most 107 bytes (sun_path). Left out: $RUNTIME_DIRECTORY/stats.sock, else $XDG_RUNTIME_DIR/kenaf-simd/stats.sock, else /run/kenaf-simd/stats.sock as root, else /tmp/kenaf-simd-<uid>/stats.sock; a missing directory is created with mode 0700 (0750 and stats_socket_group when that is set)." },
            { .path = "stats_socket_mode",
              .type = KN_CFG_CUSTOM,
              .scope = KN_CFG_SCOPE_TOP,
              .schema = "{\"type\": \"string\", \"pattern\": \"^0?[0-7]{3}$\"}",
              .def = "\"0660\"",
              .hooks = &kn_config_hooks_socket_mode,
              .reload = KN_CFG_RELOAD_STATS,
              .reader = "daemon/stats.c",
              .doc =
                  "Permission bits of the stats socket, in octal, set exactly whatever the umask: read and write for the owner and the group at most (no bits for others, no execute bits). Whoever can open the socket can start captures and inject faults." },
            { .path = "stats_socket_group",
              .type = KN_CFG_CUSTOM,
              .scope = KN_CFG_SCOPE_TOP,
              .schema =
                  "{\"type\": [\"string\", \"integer\"], \"minLength\": 1, \"maxLength\": 32, \"minimum\": 0, \"maximum\": 2147483647}",
              .def_doc = "the daemon's own group",
              .hooks = &kn_config_hooks_socket_group,
              .reload = KN_CFG_RELOAD_STATS,
              .reader = "daemon/stats.c",
              .doc =
                  "Group of the stats socket (a group name, or a number that need not exist in /etc/group); left out: the daemon's own group. kenaf-simd's user must be a member of it, or start-up fails naming the socket, the group and the reason; members use the socket as the owner does. Also the group of the socket's directory, the capture directory and capture files when kenaf-simd creates them." },
            { .path = "capture_dir",
              .type = KN_CFG_CUSTOM,
              .scope = KN_CFG_SCOPE_TOP,
              .schema =
                  "{\"type\": \"string\", \"minLength\": 1, \"maxLength\": 400, \"pattern\": \"^/\"}",
              .def_doc = "a per-user directory, see the text",
              .hooks = &kn_config_hooks_capture_dir,
              .reload = KN_CFG_RELOAD_LIVE,
              .reader = "daemon/capdir.c",
              .doc =
                  "Directory for captures started over the stats socket (capture start PATH): a relative PATH lands in it, an absolute one must lie in it; a .. component or a symbolic link on the way is refused and only a plain file may be replaced; created with mode 0750 on first use, capture files get mode 0640. An absolute path. Left out: $STATE_DIRECTORY/captures (systemd StateDirectory=), else $XDG_STATE_HOME/kenaf-simd/captures, else /var/lib/kenaf-simd/captures as root, else $HOME/.local/state/kenaf-simd/captures." },
            { .path = "capture_max_mb",
              .type = KN_CFG_CUSTOM,
              .scope = KN_CFG_SCOPE_TOP,
              .schema = "{\"type\": \"integer\", \"minimum\": 0, \"maximum\": 1048576}",
              .def = "1024",
              .hooks = &kn_config_hooks_capture_mb,
              .reload = KN_CFG_RELOAD_LIVE,
              .reader = "daemon/capture.c",
              .doc =
                  "Size cap of each capture file in MiB (0: no cap); capture start ... max_mb=N may lower it, never raise it. Also the default of --capture-max-mb." },
            { .path = "fault_injection",
              .type = KN_CFG_BOOL,
              TOP_FIELD(fault_injection),
              .def = "true",
              .reload = KN_CFG_RELOAD_ROBOT,
              .reader = "daemon/faults.c",
              .doc =
                  "Whether faults may be injected: false refuses the stats socket's faults command (answered with an error and counted in the robot's faults.commands_refused) and makes a robot's faults section a config error. The installed configs set it true (operators of a training simulator practise with lossy links); an admin who shares one simulator between teams, or runs an exam on it, sets it false and reloads." },
            { .path = "ready_timeout_s",
              .type = KN_CFG_NUMBER,
              TOP_FIELD(ready_timeout_s),
              .min = 0,
              .max = 3600,
              .def = "30",
              .flags = KN_CFG_RANGE,
              .reload = KN_CFG_RELOAD_START,
              .reader = "daemon/daemon.c",
              .doc =
                  "systemd READY=1 is sent once every robot's simulator link is up, or after this many seconds with STATUS= naming the robots whose links are down; 0 sends it as soon as the robots' KRP/1 sockets are bound." },
            { .path = "coalesce_us",
              .type = KN_CFG_INT32,
              TOP_FIELD(coalesce_us),
              .min = 0,
              .max = 50000,
              .def = "0",
              .flags = KN_CFG_RANGE,
              .reload = KN_CFG_RELOAD_LIVE,
              .reader = "daemon/coalesce.c",
              .doc =
                  "The loop's coalescing window in microseconds; 0 (the default): none. With a window, after a loop turn that read KRP/1 datagrams the loop waits until this long after that turn's first read before it reads again, so datagrams arriving meanwhile, on any robot, are read, answered and relayed by one turn: fewer wake-ups, and fewer system calls once the window is longer than a robot's period, for up to this much added latency on each datagram (simulator input, timers and the stats socket wait too). Every datagram is still counted, answered and relayed in order. Measured in docs/performance.md: 1000 saves about a tenth of the CPU at 25 robots x 1 kHz and adds about 0.5 ms at p50." },
            { .path = "robots",
              .type = KN_CFG_CUSTOM,
              .scope = KN_CFG_SCOPE_TOP,
              .schema = "{\"type\": \"array\", \"minItems\": 1, \"maxItems\": 1024}",
              .flags = KN_CFG_REQUIRED,
              .hooks = &kn_config_hooks_robots,
              .reload = KN_CFG_RELOAD_ROBOT,
              .reader = "daemon/daemon.c",
              .doc =
                  "The simulated robots, at most 1024; each has its own KRP/1 UDP address and its own simulator connection, so each takes file descriptors: two for its UDP socket (one sends, one reads), and one TCP connection (a spawned engine: four descriptors, a gazebo or gz backend: about eight). At start and on reload kenaf-simd raises its soft RLIMIT_NOFILE to the hard limit when the robots need more, and refuses to start (or the reload) with the numbers when even that is too few." },
        };
const size_t kn_config_nkeys_top = sizeof kn_config_keys_top / sizeof kn_config_keys_top[0];

const struct kn_cfg_key *kn_config_keys_of(enum kn_cfg_scope scope, size_t *n)
{
    switch (scope) {
    case KN_CFG_SCOPE_TOP: *n = kn_config_nkeys_top; return kn_config_keys_top;
    case KN_CFG_SCOPE_ROBOT: *n = kn_config_nkeys_robot; return kn_config_keys_robot;
    case KN_CFG_SCOPE_BACKEND: *n = kn_config_nkeys_backend; return kn_config_keys_backend;
    }
    *n = 0;
    return NULL;
}

size_t kn_config_nkeys(void)
{
    return kn_config_nkeys_top + kn_config_nkeys_robot + kn_config_nkeys_backend;
}

const struct kn_cfg_key *kn_config_key(size_t i)
{
    if (i < kn_config_nkeys_top)
        return &kn_config_keys_top[i];
    i -= kn_config_nkeys_top;
    if (i < kn_config_nkeys_robot)
        return &kn_config_keys_robot[i];
    i -= kn_config_nkeys_robot;
    return i < kn_config_nkeys_backend ? &kn_config_keys_backend[i] : NULL;
}

void *kn_config_key_field(const struct kn_cfg_key *k, void *obj)
{
    return (char *)obj + k->off;
}

const void *kn_config_key_cfield(const struct kn_cfg_key *k, const void *obj)
{
    return (const char *)obj + k->off;
}

const struct kn_cfg_key *kn_config_key_find(const char *path)
{
    for (size_t i = 0; i < kn_config_nkeys(); i++)
        if (strcmp(kn_config_key(i)->path, path) == 0)
            return kn_config_key(i);
    return NULL;
}

const char *kn_config_key_name(const struct kn_cfg_key *k)
{
    const char *dot = strrchr(k->path, '.');
    return dot != NULL ? dot + 1 : k->path;
}

void kn_config_key_parent(const struct kn_cfg_key *k, char *out, size_t len)
{
    const char *dot = strrchr(k->path, '.');
    size_t n = dot != NULL ? (size_t)(dot - k->path) : 0;
    snprintf(out, len, "%.*s", (int)n, k->path);
}

bool kn_config_key_applies(const struct kn_cfg_key *k, const struct kn_cfg_backend *b)
{
    if (k->scope != KN_CFG_SCOPE_BACKEND || b == NULL)
        return true;
    if (k->backends != 0 && !(k->backends & KN_CFG_BK(b->kind)))
        return false;
    return !(k->flags & KN_CFG_SPAWNED) || b->host[0] == '\0';
}

/* A default written as JSON into the field; the table's own defaults are
 * checked by the unit tests, so a malformed one is a build's mistake. */
static void set_default(const struct kn_cfg_key *k, void *obj)
{
    cJSON *v = cJSON_Parse(k->def);
    void *f = kn_config_key_field(k, obj);
    double d = cJSON_IsNumber(v) ? v->valuedouble : 0.0;
    switch (k->type) {
    case KN_CFG_NUMBER:
        if (k->unit == KN_CFG_UNIT_DEG_CDEG)
            *(int32_t *)f = kn_conv_deg_to_cdeg(d);
        else
            *(double *)f = k->unit == KN_CFG_UNIT_DEG_RAD ? kn_config_deg_to_rad(d) : d;
        break;
    case KN_CFG_INT32: *(int32_t *)f = (int32_t)d; break;
    case KN_CFG_BOOL: *(bool *)f = cJSON_IsTrue(v); break;
    case KN_CFG_STRING:
        if (cJSON_IsString(v))
            snprintf(f, k->size, "%s", v->valuestring);
        break;
    case KN_CFG_ENUM:
        for (int i = 0; cJSON_IsString(v) && i < k->n_names; i++)
            if (strcmp(v->valuestring, k->names[i]) == 0)
                *(int *)f = i + k->bias;
        break;
    case KN_CFG_VEC:
        for (int i = 0; i < k->vec_n && i < cJSON_GetArraySize(v); i++) {
            double x = cJSON_GetArrayItem(v, i)->valuedouble;
            ((double *)f)[i] = k->unit == KN_CFG_UNIT_DEG_RAD ? kn_config_deg_to_rad(x) : x;
        }
        break;
    case KN_CFG_SECTION:
    case KN_CFG_CUSTOM: break;
    }
    cJSON_Delete(v);
}

void kn_config_keys_defaults(enum kn_cfg_scope scope, void *obj)
{
    size_t n;
    const struct kn_cfg_key *keys = kn_config_keys_of(scope, &n);
    for (size_t i = 0; i < n; i++) {
        const struct kn_cfg_key *k = &keys[i];
        if (k->def != NULL && k->type != KN_CFG_CUSTOM && k->type != KN_CFG_SECTION)
            set_default(k, obj);
    }
}

double kn_config_deg_to_rad(double deg)
{
    return kn_conv_cdeg_to_rad(kn_conv_deg_to_cdeg(deg));
}

double kn_config_rad_to_deg(double rad)
{
    return kn_conv_cdeg_to_deg(kn_conv_rad_to_cdeg(rad));
}
