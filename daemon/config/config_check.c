/* Start-up checks on a loaded config: see config_check.h. */
#include "config_check.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "access.h"
#include "backend.h"
#include "log.h"
#include "engine_files.h"
#include "engine_limits.h"
#include "config_priv.h"
#include "engine_proc.h"
#include "filetrust.h"
#include "sockdir.h"

struct check {
    const struct kn_config *cfg;
    char *err;
    size_t errlen;
    size_t n;
};

__attribute__((format(printf, 3, 4))) static void problem(struct check *c, const char *path,
                                                          const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    c->n++;
    if (c->n <= KN_CFG_MAX_ERRORS)
        kn_config_add_problem(c->err, c->errlen, c->cfg->source, path, "%s", msg);
}

/* "got \"x\"" for a configured value, "got the default \"x\"" otherwise. */
static void got(const char *value, bool is_default, char *out, size_t len)
{
    snprintf(out, len, "got %s\"%s\"", is_default ? "the default " : "", value);
}

static void check_listen(struct check *c, size_t i, const struct kn_cfg_robot *r)
{
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    socklen_t len;
    struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
    if (inet_pton(AF_INET, r->bind_host, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        len = sizeof *a4;
    } else if (inet_pton(AF_INET6, r->bind_host, &a6->sin6_addr) == 1) {
        a6->sin6_family = AF_INET6;
        len = sizeof *a6;
    } else {
        return; /* the loader reported it */
    }
    int fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    int e = fd < 0 ? errno : bind(fd, (struct sockaddr *)&ss, len) < 0 ? errno : 0;
    if (fd >= 0)
        close(fd);
    if (e == 0)
        return;
    char path[64];
    snprintf(path, sizeof path, "$.robots[%zu].listen", i);
    problem(c, path, "expected an address of this host, got \"%s%s%s:%u\" (%s)",
            ss.ss_family == AF_INET6 ? "[" : "", r->bind_host, ss.ss_family == AF_INET6 ? "]" : "",
            (unsigned)r->port, strerror(e));
}

static bool uses_address(const struct kn_cfg_backend *b)
{
    return b->host[0] != '\0';
}

static void check_address(struct check *c, size_t i, const struct kn_cfg_backend *b)
{
    if (!uses_address(b))
        return;
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_socktype = SOCK_STREAM;
    int rc = getaddrinfo(b->host, NULL, &hints, &res);
    if (res)
        freeaddrinfo(res);
    if (rc == 0)
        return;
    char path[64];
    snprintf(path, sizeof path, "$.robots[%zu].backend.address", i);
    problem(c, path, "expected a simulator host name that resolves, got \"%s\" (%s)", b->host,
            rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
}

static void check_engine_file(struct check *c, size_t i, enum kn_engfiles_kind kind,
                              const char *dir, const char *spec)
{
    char file[PATH_MAX], why[900], g[600], names[300], path[80];
    if (kn_engfiles_path(kind, dir, spec, file, sizeof file, why, sizeof why) == 0 &&
        kn_engfiles_check(kind, file, why, sizeof why) == 0)
        return;
    const char *noun = kn_engfiles_noun(kind);
    snprintf(path, sizeof path, "$.robots[%zu].backend.engine.%s", i, noun);
    kn_engfiles_names(kind, dir, names, sizeof names);
    got(spec, false, g, sizeof g);
    problem(c, path,
            "expected a %s kenaf-engine can load (a name from %s/%ss: %s; or a %s "
            "file), %s (%s)",
            noun, dir, noun, names[0] ? names : "none there", noun, g, why);
}

static void check_engine(struct check *c, size_t i, const struct kn_cfg_backend *b)
{
    if (b->kind != KN_BACKEND_ENGINE || uses_address(b))
        return;
    char exe[PATH_MAX], why[PATH_MAX + 256], dir[PATH_MAX], path[80];
    if (kn_engine_resolve(b->engine_path, exe, sizeof exe, why, sizeof why) < 0) {
        snprintf(path, sizeof path, "$.robots[%zu].backend.engine.path", i);
        if (b->engine_path[0])
            problem(c, path, "expected an executable kenaf-engine, got \"%s\" (looked at: %s)",
                    b->engine_path, why);
        else
            problem(c, path,
                    "expected a kenaf-engine next to kenaf-simd, in its build tree or "
                    "in PATH, got none (looked at: %s; set the path)",
                    why);
        exe[0] = '\0'; /* the data folder by the install/source rule */
    } else if (kn_filetrust_path(exe, 0, why, sizeof why) < 0) {
        /* kenaf-simd runs it, often as root or the service's user */
        char want[160];
        kn_filetrust_expected(geteuid(), 0, want, sizeof want);
        snprintf(path, sizeof path, "$.robots[%zu].backend.engine.path", i);
        problem(c, path, "expected a kenaf-engine executable %s, got %s (%s)", want, exe, why);
    }
    kn_engfiles_dir(exe, dir, sizeof dir);
    check_engine_file(c, i, KN_ENGFILES_TERRAIN, dir, b->terrain);
    check_engine_file(c, i, KN_ENGFILES_ROBOT, dir, b->robot);
}

static void check_backend_built(struct check *c, size_t i, const struct kn_cfg_backend *b)
{
    if (kn_backend_find(b->kind))
        return;
    char path[64];
    snprintf(path, sizeof path, "$.robots[%zu].backend.type", i);
    const char *why = kn_backend_error(b->kind);
    if (why)
        problem(c, path, "expected a backend whose module loads, got \"%s\" (%s)",
                kn_backend_kind_name(b->kind), why);
    else
        problem(c, path, "expected a backend built into this kenaf-simd (%s), got \"%s\"",
                kn_backend_built_list(), kn_backend_kind_name(b->kind));
}

static void check_stats_socket(struct check *c)
{
    const struct kn_config *cfg = c->cfg;
    if (!cfg->stats_socket[0])
        return;
    char why[900], g[600];
    if (kn_sockdir_prepare(cfg->stats_socket, false, why, sizeof why) == 0)
        return;
    got(cfg->stats_socket, cfg->stats_socket_default, g, sizeof g);
    problem(c, "$.stats_socket",
            "expected a socket path in a directory kenaf-simd can use, %s "
            "(%s)",
            g, why);
}

static void check_socket_group(struct check *c)
{
    const char *g = c->cfg->stats_socket_group;
    gid_t gid;
    char why[300];
    if (!g[0] || kn_sockdir_group(g, &gid, why, sizeof why) == 0)
        return;
    problem(c, "$.stats_socket_group",
            "expected a group of this host (a name in the group "
            "database, or a number), got \"%s\" (%s)",
            g, why);
}

/* Robots i and j in one engine world: a spawned engine is shared by the
 * robots whose engine path, terrain, robot file and lockstep agree (as
 * engine_proc.c's proc_get), an engine at an address by those naming the
 * same address. */
static bool same_engine(const struct kn_cfg_backend *a, const struct kn_cfg_backend *b)
{
    if (a->kind != KN_BACKEND_ENGINE || b->kind != KN_BACKEND_ENGINE ||
        uses_address(a) != uses_address(b))
        return false;
    if (uses_address(a))
        return strcmp(a->host, b->host) == 0 && (a->port ? a->port : KN_CFG_USARSIM_PORT) ==
                                                    (b->port ? b->port : KN_CFG_USARSIM_PORT);
    const char *ta = a->terrain[0] ? a->terrain : "flat", *tb = b->terrain[0] ? b->terrain : "flat";
    const char *ra = a->robot[0] ? a->robot : "kenaf", *rb = b->robot[0] ? b->robot : "kenaf";
    return strcmp(a->engine_path, b->engine_path) == 0 && strcmp(ta, tb) == 0 &&
           strcmp(ra, rb) == 0 && a->lockstep == b->lockstep;
}

/* An engine world takes KN_ENGINE_MAX_ROBOTS robots; the ones beyond would
 * only ever be refused. Said once per world, at its first robot too many. */
static void check_engine_capacity(struct check *c)
{
    size_t n = c->cfg->n_robots < KN_CFG_MAX_ROBOTS ? c->cfg->n_robots : KN_CFG_MAX_ROBOTS;
    for (size_t i = 0; i < n; i++) {
        const struct kn_cfg_backend *b = &c->cfg->robots[i].backend;
        bool first = b->kind == KN_BACKEND_ENGINE;
        for (size_t j = 0; j < i && first; j++)
            first = !same_engine(&c->cfg->robots[j].backend, b);
        if (!first)
            continue;
        size_t in_world = 0, over = 0;
        for (size_t j = i; j < n; j++)
            if (same_engine(&c->cfg->robots[j].backend, b) &&
                ++in_world == KN_ENGINE_MAX_ROBOTS + 1)
                over = j;
        if (in_world <= KN_ENGINE_MAX_ROBOTS)
            continue;
        char path[64];
        snprintf(path, sizeof path, "$.robots[%zu]", over);
        problem(c, path,
                "expected at most %d robots in one engine world (KN_ENGINE_MAX_ROBOTS: what one "
                "core steps at real time), got %zu in the world of robot %s (%s); give the rest "
                "another terrain or engine address",
                KN_ENGINE_MAX_ROBOTS, in_world, c->cfg->robots[i].name,
                uses_address(b) ? "the engine at its address" : "a spawned engine");
    }
}

/* A config names programs to run and sockets to open: only root and the
 * daemon's own user may be able to change it. */
static void check_source(struct check *c)
{
    char why[300], want[160];
    if (!c->cfg->source_stat_ok ||
        kn_filetrust_stat(&c->cfg->source_stat, geteuid(), 0, why, sizeof why) == 0)
        return;
    kn_filetrust_expected(geteuid(), 0, want, sizeof want);
    problem(c, NULL, "expected a config file %s, got %s", want, why);
}

/* Not a problem (a lab may mean it), but said loudly: at start-up, on
 * reload and in --check-config, where the same loader runs. */
static void warn_open(const struct kn_config *cfg, size_t i, const struct kn_cfg_robot *r)
{
    if (r->access.on || !kn_access_exposed(r->bind_host))
        return;
    kn_warn("WARNING: %s: $.robots[%zu] (robot %s) listens on %s, not a loopback address, with "
            "no allow_drivers or allow_observers: anyone who can reach it can drive the robot",
            cfg->source, i, r->name, r->bind_host);
}

size_t kn_cfgcheck_run(const struct kn_config *cfg, char *err, size_t errlen)
{
    struct check c = { cfg, err, errlen, 0 };
    check_source(&c);
    check_stats_socket(&c);
    check_socket_group(&c);
    for (size_t i = 0; i < cfg->n_robots && i < KN_CFG_MAX_ROBOTS; i++) {
        const struct kn_cfg_robot *r = &cfg->robots[i];
        check_listen(&c, i, r);
        warn_open(cfg, i, r);
        check_backend_built(&c, i, &r->backend);
        check_address(&c, i, &r->backend);
        check_engine(&c, i, &r->backend);
    }
    check_engine_capacity(&c);
    return c.n;
}
