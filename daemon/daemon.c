/* The daemon: see daemon.h. Reload keeps every robot whose config did not
 * change (same socket, same simulator connection, same peers); changed
 * robots are stopped and started again, removed ones stopped, new ones
 * started. A config that does not load is refused and the old one stays.
 *
 * READY=1 tells systemd the service works: it is sent once every robot's
 * simulator link is up, or when ready_timeout_s has passed (then with a
 * warning and STATUS= naming the links that are down), so `systemctl
 * start` does not report success for robots that cannot move yet, nor
 * hang for a simulator that is away. The watchdog pings run meanwhile. */
#include "daemon.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uv.h>

#include "backend.h"
#include "capture.h"
#include "coalesce.h"
#include "config_check.h"
#include "fdlimit.h"
#include "log.h"
#include "notify.h"
#include "sockdir.h"
#include "robot.h"
#include "stats.h"

#ifndef KN_VERSION
#define KN_VERSION "unknown"
#endif

struct slot {
    /* in d->cfg (a pointer, not a copy: 6 KiB a robot; the robot keeps
     * its own copy) */
    const struct kn_cfg_robot *cfg;
    struct kn_robot *robot; /* NULL when it failed to start */
};

struct kn_daemon {
    uv_loop_t loop;
    struct kn_config *cfg;
    char path[KN_CFG_PATH_LEN];
    int log_override;
    struct slot *slots; /* nslots, as many as the config has robots */
    size_t nslots;
    unsigned stopping_robots;
    struct kn_stats_server *stats;
    uv_signal_t sigterm, sigint, sighup;
    uv_timer_t wd_timer;
    uv_timer_t ready_timer;  /* ready_timeout_s: READY=1 with links still down */
    uv_timer_t status_timer; /* one STATUS= for a burst of link changes */
    bool waiting;            /* started, READY=1 held back for the links */
    bool ready;              /* READY=1 sent */
    bool wd_on;
    bool stopping;
    uint64_t started_ns, reloads, reload_failures;
    char last_reload_error[512];
};

size_t kn_daemon_load_config(const char *path, struct kn_config *cfg, char *err, size_t errlen)
{
    size_t n = kn_config_load_all(path, NULL, cfg, err, errlen);
    return n + kn_cfgcheck_run(cfg, err, errlen);
}

/* ---- stats and status -------------------------------------------------- */

static char *render_stats(void *ctx)
{
    struct kn_daemon *d = ctx;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "version", KN_VERSION);
    cJSON_AddNumberToObject(o, "pid", getpid());
    cJSON_AddNumberToObject(o, "uptime_s", (double)(uv_hrtime() - d->started_ns) / 1e9);
    cJSON_AddStringToObject(o, "config", d->path);
    cJSON_AddNumberToObject(o, "reloads", (double)d->reloads);
    cJSON_AddNumberToObject(o, "reload_failures", (double)d->reload_failures);
    cJSON_AddStringToObject(o, "last_reload_error", d->last_reload_error);
    kn_capture_stats(cJSON_AddObjectToObject(o, "capture"));
    kn_coalesce_stats(cJSON_AddObjectToObject(o, "io"));
    /* robots refused because a backend's module (gz) did not load */
    cJSON_AddNumberToObject(o, "backend_module_failures", (double)kn_backend_module_failures());
    /* --wait-ready tells a robot that is not up from one that never ran */
    cJSON_AddNumberToObject(o, "robots_configured", (double)d->nslots);
    cJSON *failed = cJSON_AddArrayToObject(o, "robots_failed");
    cJSON *arr = cJSON_AddArrayToObject(o, "robots");
    for (size_t i = 0; i < d->nslots; i++) {
        if (d->slots[i].robot)
            kn_robot_stats(d->slots[i].robot, arr);
        else
            cJSON_AddItemToArray(failed, cJSON_CreateString(d->slots[i].cfg->name));
    }
    char *s = cJSON_Print(o);
    cJSON_Delete(o);
    return s;
}

/* "estop engage|release|status ROBOT": the admin's part of the e-stop
 * circuit (docs/protocol.md, "Emergency stop"). */
static char *daemon_command(void *ctx, const char *verb, const char *args, const char *who)
{
    struct kn_daemon *d = ctx;
    (void)verb;
    char action[16] = "", name[KN_CFG_NAME_LEN + 2] = "", extra[2] = "";
    int n = sscanf(args, "%15s %17s %1s", action, name, extra);
    if (n != 2 || strlen(name) > KN_CFG_NAME_LEN)
        return kn_stats_error_reply("usage: estop engage|release|status ROBOT");
    for (size_t i = 0; i < d->nslots; i++)
        if (d->slots[i].robot && !strcmp(d->slots[i].cfg->name, name))
            return kn_robot_estop_command(d->slots[i].robot, action, who);
    return kn_stats_error_reply("no such robot");
}

static bool link_up(const struct slot *s)
{
    return s->robot && kn_robot_link_up(s->robot);
}

static bool all_links_up(const struct kn_daemon *d)
{
    for (size_t i = 0; i < d->nslots; i++)
        if (!link_up(&d->slots[i]))
            return false;
    return true;
}

/* "a, b": the robots whose simulator links are down; how many. */
static size_t links_down(const struct kn_daemon *d, char *out, size_t len)
{
    size_t n = 0, used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < d->nslots; i++) {
        if (link_up(&d->slots[i]))
            continue;
        int w = snprintf(out + used, len - used, "%s%s", n ? ", " : "", d->slots[i].cfg->name);
        if (w > 0 && (size_t)w < len - used)
            used += (size_t)w;
        n++;
    }
    return n;
}

static void send_status(struct kn_daemon *d)
{
    char buf[900], down[600];
    size_t n = 0, up = 0, running = 0;
    for (size_t i = 0; i < d->nslots; i++) {
        running += d->slots[i].robot != NULL;
        up += link_up(&d->slots[i]);
    }
    size_t ndown = links_down(d, down, sizeof down);
    int w;
    if (!d->ready)
        w = snprintf(buf, sizeof buf, "waiting for simulator links: %s (%zu/%zu up)", down, up,
                     d->nslots);
    else
        w = snprintf(buf, sizeof buf, "%zu/%zu robots running, %zu simulator links up%s%s", running,
                     d->nslots, up, ndown ? "; links down: " : "", ndown ? down : "");
    n = w > 0 ? (size_t)w : 0;
    for (size_t i = 0; i < d->nslots && n < sizeof buf - 1; i++) {
        struct kn_robot *r = d->slots[i].robot;
        w = snprintf(buf + n, sizeof buf - n, "%s %s@%s %s", i ? "," : ":", d->slots[i].cfg->name,
                     r ? kn_robot_listen(r) : "-",
                     !r                    ? "failed"
                     : kn_robot_link_up(r) ? "up"
                                           : "down");
        if (w < 0)
            break;
        n += (size_t)w;
    }
    kn_notify("STATUS=%s", buf);
}

static void send_ready(struct kn_daemon *d)
{
    d->ready = true;
    d->waiting = false;
    uv_timer_stop(&d->ready_timer);
    kn_notify("READY=1");
    send_status(d);
}

static void on_ready_timeout(uv_timer_t *t)
{
    struct kn_daemon *d = t->data;
    char down[600];
    if (links_down(d, down, sizeof down))
        kn_warn("ready_timeout_s (%g s) passed with simulator links down: %s; telling systemd "
                "READY anyway",
                d->cfg->ready_timeout_s, down);
    send_ready(d);
}

/* At start-up: READY now, or once the links are up (on_link_change), or at
 * ready_timeout_s. */
static void ready_or_wait(struct kn_daemon *d)
{
    if (d->cfg->ready_timeout_s <= 0 || all_links_up(d)) {
        send_ready(d);
        return;
    }
    uint64_t ms = (uint64_t)(d->cfg->ready_timeout_s * 1000.0 + 0.5);
    d->waiting = true;
    uv_timer_start(&d->ready_timer, on_ready_timeout, ms ? ms : 1, 0);
    if (getenv("NOTIFY_SOCKET")) /* only systemd waits for READY */
        kn_info("waiting up to %g s for the simulator links before telling systemd READY",
                d->cfg->ready_timeout_s);
    send_status(d);
}

static void on_status_timer(uv_timer_t *t)
{
    struct kn_daemon *d = t->data;
    if (!d->stopping)
        send_status(d);
}

/* A fleet's links come up (or go down) in bursts, one call per robot: the
 * STATUS= they change is sent once for the burst, STATUS_COALESCE_MS
 * after its first change. sd_notify blocks while the notify socket's
 * queue is full (net.unix.max_dgram_qlen, 10 by default), so a message
 * per robot could hold the loop. READY=1 still goes out at once. */
#define STATUS_COALESCE_MS 200

static void on_link_change(void *ctx, struct kn_robot *r, bool up)
{
    (void)r;
    (void)up;
    struct kn_daemon *d = ctx;
    if (d->stopping || !(d->waiting || d->ready))
        return; /* still starting: ready_or_wait looks at the links */
    if (d->waiting && all_links_up(d))
        send_ready(d);
    else if (!uv_is_active((const uv_handle_t *)&d->status_timer))
        uv_timer_start(&d->status_timer, on_status_timer, STATUS_COALESCE_MS, 0);
}

/* ---- robots ------------------------------------------------------------ */

static void on_robot_stopped(void *arg)
{
    struct kn_daemon *d = arg;
    d->stopping_robots--;
    /* the capture ends after the robots' last words to their simulators */
    if (d->stopping && d->stopping_robots == 0)
        kn_capture_stop();
}

static void stop_robot(struct kn_daemon *d, struct slot *s)
{
    if (!s->robot)
        return;
    d->stopping_robots++;
    kn_robot_stop(s->robot, on_robot_stopped, d);
    s->robot = NULL;
}

static int start_robot(struct kn_daemon *d, struct slot *s)
{
    char err[512];
    if (kn_robot_start(&d->loop, s->cfg, on_link_change, d, &s->robot, err, sizeof err) < 0) {
        kn_err("%s", err);
        s->robot = NULL;
        return -1;
    }
    return 0;
}

/* stats_socket_group as a gid ((gid_t)-1: ours); --check-config has
 * named an unknown one already, this is for a group removed since. */
static int socket_group(const struct kn_config *cfg, gid_t *gid)
{
    char err[300];
    if (kn_sockdir_group(cfg->stats_socket_group, gid, err, sizeof err) < 0) {
        kn_err("stats_socket_group: %s", err);
        return -1;
    }
    return 0;
}

static int open_stats(struct kn_daemon *d, const struct kn_config *cfg)
{
    char err[1024];
    gid_t gid;
    if (!cfg->stats_socket[0])
        return 0;
    if (socket_group(cfg, &gid) < 0)
        return -1;
    if (kn_stats_server_start(&d->loop, cfg->stats_socket, cfg->stats_socket_mode, gid,
                              render_stats, daemon_command, d, &d->stats, err, sizeof err) < 0) {
        kn_err("%s", err);
        return -1;
    }
    kn_info("stats on unix socket %s (mode %04o%s%s)", cfg->stats_socket, cfg->stats_socket_mode,
            cfg->stats_socket_group[0] ? ", group " : "", cfg->stats_socket_group);
    return 0;
}

/* Run-time captures: the capture directory, its group, the size cap. */
static void set_capture_dir(const struct kn_config *cfg)
{
    gid_t gid = (gid_t)-1;
    char err[300];
    if (kn_sockdir_group(cfg->stats_socket_group, &gid, err, sizeof err) < 0)
        gid = (gid_t)-1; /* open_stats says why */
    kn_capture_set_dir(cfg->capture_dir, gid, cfg->capture_max_bytes);
}

/* ---- signals ------------------------------------------------------------ */

static void on_wd_timer(uv_timer_t *t)
{
    (void)t;
    kn_notify("WATCHDOG=1");
}

/* Stops every robot and the stats socket and closes the daemon's own
 * handles, so the loop ends once the robots have flushed. */
static void stop_everything(struct kn_daemon *d)
{
    d->stopping = true;
    for (size_t i = 0; i < d->nslots; i++)
        stop_robot(d, &d->slots[i]);
    kn_stats_server_stop(d->stats);
    d->stats = NULL;
    if (d->stopping_robots == 0)
        kn_capture_stop();
    /* Closing the signal handles restores the default action: a second
     * SIGTERM during the (bounded) flush ends the process at once. */
    uv_close((uv_handle_t *)&d->sigterm, NULL);
    uv_close((uv_handle_t *)&d->sigint, NULL);
    uv_close((uv_handle_t *)&d->sighup, NULL);
    uv_close((uv_handle_t *)&d->wd_timer, NULL);
    uv_close((uv_handle_t *)&d->ready_timer, NULL);
    uv_close((uv_handle_t *)&d->status_timer, NULL);
    kn_coalesce_stop();
}

static void shutdown_all(struct kn_daemon *d)
{
    if (d->stopping)
        return;
    kn_notify("STOPPING=1");
    stop_everything(d);
}

static void on_stop_signal(uv_signal_t *h, int sig)
{
    struct kn_daemon *d = h->data;
    kn_info("%s: stopping (belts to 0 on every robot)", sig == SIGINT ? "SIGINT" : "SIGTERM");
    shutdown_all(d);
}

static void reload(struct kn_daemon *d)
{
    char err[8192];
    uint64_t mono_us = uv_hrtime() / 1000;
    kn_notify("RELOADING=1\nMONOTONIC_USEC=%llu", (unsigned long long)mono_us);
    struct kn_config *nc = calloc(1, sizeof *nc);
    if (!nc || kn_daemon_load_config(d->path, nc, err, sizeof err) > 0) {
        if (!nc)
            snprintf(err, sizeof err, "out of memory");
        size_t l = strlen(err);
        while (l && err[l - 1] == '\n')
            err[--l] = '\0';
        kn_err("reload of %s refused, the running config stays: %s", d->path, err);
        snprintf(d->last_reload_error, sizeof d->last_reload_error, "%s", err);
        d->reload_failures++;
        free(nc);
        send_ready(d);
        return;
    }
    if (kn_fdlimit_ensure(nc, NULL, d->last_reload_error, sizeof d->last_reload_error) < 0) {
        kn_err("reload of %s refused, the running config stays: %s", d->path, d->last_reload_error);
        d->reload_failures++;
        free(nc);
        send_ready(d);
        return;
    }
    if (d->log_override < 0)
        kn_log_set_level(nc->log_level);

    /* Old robots: keep unchanged ones, stop changed and removed ones first
     * so their ports are free for whoever takes them now. */
    struct slot *next = calloc(nc->n_robots, sizeof *next);
    bool *taken = calloc(nc->n_robots, sizeof *taken);
    if (!next || !taken) {
        kn_err("reload of %s refused: out of memory", d->path);
        d->reload_failures++;
        free(next);
        free(taken);
        free(nc);
        send_ready(d);
        return;
    }
    size_t kept = 0, restarted = 0, added = 0, removed = 0;
    for (size_t j = 0; j < nc->n_robots; j++)
        next[j].cfg = &nc->robots[j];
    for (size_t i = 0; i < d->nslots; i++) {
        struct slot *s = &d->slots[i];
        size_t j = 0;
        while (j < nc->n_robots && strcmp(nc->robots[j].name, s->cfg->name) != 0)
            j++;
        if (j < nc->n_robots && s->robot && kn_config_robot_equal(s->cfg, &nc->robots[j])) {
            next[j].robot = s->robot; /* same socket, same simulator link */
            taken[j] = true;
            s->robot = NULL;
            kept++;
            continue;
        }
        if (j < nc->n_robots)
            restarted++;
        else
            removed++;
        if (s->robot)
            kn_info("robot %s: %s", s->cfg->name,
                    j < nc->n_robots ? "config changed, restarting"
                                     : "removed from the config, stopping");
        stop_robot(d, s);
    }
    for (size_t j = 0; j < nc->n_robots; j++) {
        if (taken[j])
            continue;
        bool existed = false;
        for (size_t i = 0; i < d->nslots; i++)
            existed |= strcmp(d->slots[i].cfg->name, nc->robots[j].name) == 0;
        added += !existed;
        start_robot(d, &next[j]);
    }
    free(d->slots);
    free(taken);
    d->slots = next;
    d->nslots = nc->n_robots;

    if (strcmp(nc->stats_socket, d->cfg->stats_socket) != 0 || (!d->stats && nc->stats_socket[0]) ||
        nc->stats_socket_mode != d->cfg->stats_socket_mode ||
        strcmp(nc->stats_socket_group, d->cfg->stats_socket_group) != 0) {
        kn_stats_server_stop(d->stats);
        d->stats = NULL;
        open_stats(d, nc);
    }
    set_capture_dir(nc);
    kn_coalesce_set((uint32_t)nc->coalesce_us);
    free(d->cfg);
    d->cfg = nc;
    d->reloads++;
    d->last_reload_error[0] = '\0';
    kn_info("reloaded %s: %zu robots kept, %zu restarted, %zu added, %zu removed", d->path, kept,
            restarted, added, removed);
    send_ready(d);
}

static void on_hup(uv_signal_t *h, int sig)
{
    (void)sig;
    struct kn_daemon *d = h->data;
    kn_info("SIGHUP: reloading %s", d->path);
    reload(d);
}

/* ---- run ---------------------------------------------------------------- */

int kn_daemon_run(struct kn_config *cfg, const char *config_path, int log_override)
{
    struct kn_daemon *d = calloc(1, sizeof *d);
    if (!d) {
        free(cfg);
        return 1;
    }
    signal(SIGPIPE, SIG_IGN);
    uv_loop_init(&d->loop);
    uv_timer_init(&d->loop, &d->ready_timer);
    uv_timer_init(&d->loop, &d->status_timer);
    d->ready_timer.data = d->status_timer.data = d;
    d->cfg = cfg;
    d->log_override = log_override;
    d->started_ns = uv_hrtime();
    snprintf(d->path, sizeof d->path, "%s", config_path);
    if (log_override < 0)
        kn_log_set_level(cfg->log_level);

    int rc = 0;
    char cerr[600];
    set_capture_dir(cfg);
    if (kn_coalesce_start(&d->loop, (uint32_t)cfg->coalesce_us) < 0) {
        kn_err("cannot start the loop's coalescing window");
        rc = 1;
    }
    if (kn_capture_startup(&d->loop, cerr, sizeof cerr) < 0) {
        kn_err("%s", cerr);
        rc = 1;
    }
    /* Too few file descriptors for the robots: refused before any starts. */
    size_t nofile = 0;
    bool fds_ok = kn_fdlimit_ensure(cfg, &nofile, cerr, sizeof cerr) == 0;
    if (!fds_ok) {
        kn_err("%s", cerr);
        rc = 1;
    } else {
        kn_debug("%zu robots need about %zu file descriptors; RLIMIT_NOFILE %zu", cfg->n_robots,
                 kn_fdlimit_need(cfg), nofile);
    }
    d->slots = fds_ok ? calloc(cfg->n_robots, sizeof *d->slots) : NULL;
    if (fds_ok && !d->slots) {
        kn_err("out of memory for %zu robots", cfg->n_robots);
        rc = 1;
    }
    d->nslots = d->slots ? cfg->n_robots : 0;
    for (size_t i = 0; i < d->nslots; i++) {
        d->slots[i].cfg = &cfg->robots[i];
        if (start_robot(d, &d->slots[i]) < 0)
            rc = 1;
    }
    if (rc == 0 && open_stats(d, cfg) < 0)
        rc = 1;

    uv_signal_init(&d->loop, &d->sigterm);
    uv_signal_init(&d->loop, &d->sigint);
    uv_signal_init(&d->loop, &d->sighup);
    uv_timer_init(&d->loop, &d->wd_timer);
    d->sigterm.data = d->sigint.data = d->sighup.data = d->wd_timer.data = d;

    if (rc != 0) {
        kn_err("start-up failed; stopping");
        stop_everything(d); /* no READY: systemd sees the failure */
    } else {
        uv_signal_start(&d->sigterm, on_stop_signal, SIGTERM);
        uv_signal_start(&d->sigint, on_stop_signal, SIGINT);
        uv_signal_start(&d->sighup, on_hup, SIGHUP);
        uint64_t wd_usec;
        if (kn_notify_watchdog(&wd_usec)) {
            uint64_t ms = wd_usec / 2000;
            if (ms == 0)
                ms = 1;
            uv_timer_start(&d->wd_timer, on_wd_timer, ms, ms);
            kn_info("systemd watchdog: pinging every %llu ms", (unsigned long long)ms);
        }
        kn_info("kenaf-simd %s running %zu robots from %s", KN_VERSION, d->nslots, d->path);
        ready_or_wait(d);
    }

    uv_run(&d->loop, UV_RUN_DEFAULT);
    if (uv_loop_close(&d->loop) != 0)
        kn_warn("event loop closed with handles still open");
    if (rc == 0)
        kn_info("stopped");
    free(d->cfg);
    free(d->slots);
    free(d);
    return rc;
}
