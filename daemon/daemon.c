/* The daemon: see daemon.h. Reload keeps every robot whose config did not
 * change (same socket, same simulator connection, same peers); changed
 * robots are stopped and started again, removed ones stopped, new ones
 * started. A config that does not load is refused and the old one stays. */
#include "daemon.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uv.h>

#include "backend.h"
#include "capture.h"
#include "config_check.h"
#include "log.h"
#include "notify.h"
#include "robot.h"
#include "stats.h"

#ifndef KN_VERSION
#define KN_VERSION "unknown"
#endif

struct slot {
    struct kn_cfg_robot cfg;
    struct kn_robot *robot;   /* NULL when it failed to start */
};

struct kn_daemon {
    uv_loop_t loop;
    struct kn_config *cfg;
    char path[KN_CFG_PATH_LEN];
    int log_override;
    struct slot slots[KN_CFG_MAX_ROBOTS];
    size_t nslots;
    unsigned stopping_robots;
    struct kn_stats_server *stats;
    uv_signal_t sigterm, sigint, sighup;
    uv_timer_t wd_timer;
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
    /* --wait-ready tells a robot that is not up from one that never ran */
    cJSON_AddNumberToObject(o, "robots_configured", (double)d->nslots);
    cJSON *failed = cJSON_AddArrayToObject(o, "robots_failed");
    cJSON *arr = cJSON_AddArrayToObject(o, "robots");
    for (size_t i = 0; i < d->nslots; i++) {
        if (d->slots[i].robot)
            kn_robot_stats(d->slots[i].robot, arr);
        else
            cJSON_AddItemToArray(failed, cJSON_CreateString(d->slots[i].cfg.name));
    }
    char *s = cJSON_Print(o);
    cJSON_Delete(o);
    return s;
}

static void send_status(struct kn_daemon *d)
{
    char buf[900];
    size_t n = 0, up = 0, running = 0;
    for (size_t i = 0; i < d->nslots; i++) {
        struct kn_robot *r = d->slots[i].robot;
        if (!r)
            continue;
        running++;
        up += kn_robot_link_up(r);
    }
    int w = snprintf(buf, sizeof buf, "%zu/%zu robots running, %zu simulator links up", running,
                     d->nslots, up);
    n = w > 0 ? (size_t)w : 0;
    for (size_t i = 0; i < d->nslots && n < sizeof buf - 1; i++) {
        struct kn_robot *r = d->slots[i].robot;
        w = snprintf(buf + n, sizeof buf - n, "%s %s@%s %s", i ? "," : ":", d->slots[i].cfg.name,
                     r ? kn_robot_listen(r) : "-", !r ? "failed" : kn_robot_link_up(r) ? "up" : "down");
        if (w < 0)
            break;
        n += (size_t)w;
    }
    kn_notify("STATUS=%s", buf);
}

static void on_link_change(void *ctx, struct kn_robot *r, bool up)
{
    (void)r;
    (void)up;
    struct kn_daemon *d = ctx;
    if (!d->stopping)
        send_status(d);
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
    if (kn_robot_start(&d->loop, &s->cfg, on_link_change, d, &s->robot, err, sizeof err) < 0) {
        kn_err("%s", err);
        s->robot = NULL;
        return -1;
    }
    return 0;
}

static int open_stats(struct kn_daemon *d, const char *path)
{
    char err[512];
    if (!path[0])
        return 0;
    if (kn_stats_server_start(&d->loop, path, render_stats, d, &d->stats, err, sizeof err) < 0) {
        kn_err("%s", err);
        return -1;
    }
    kn_info("stats on unix socket %s", path);
    return 0;
}

/* ---- signals ------------------------------------------------------------ */

static void on_wd_timer(uv_timer_t *t)
{
    (void)t;
    kn_notify("WATCHDOG=1");
}

static void shutdown_all(struct kn_daemon *d)
{
    if (d->stopping)
        return;
    d->stopping = true;
    kn_notify("STOPPING=1");
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
        kn_notify("READY=1");
        send_status(d);
        return;
    }
    if (d->log_override < 0)
        kn_log_set_level(nc->log_level);

    /* Old robots: keep unchanged ones, stop changed and removed ones first
     * so their ports are free for whoever takes them now. */
    struct slot *next = calloc(KN_CFG_MAX_ROBOTS, sizeof *next);
    bool taken[KN_CFG_MAX_ROBOTS] = { false };
    if (!next) {
        kn_err("reload of %s refused: out of memory", d->path);
        d->reload_failures++;
        free(nc);
        kn_notify("READY=1");
        return;
    }
    size_t kept = 0, restarted = 0, added = 0, removed = 0;
    for (size_t j = 0; j < nc->n_robots; j++)
        next[j].cfg = nc->robots[j];
    for (size_t i = 0; i < d->nslots; i++) {
        struct slot *s = &d->slots[i];
        size_t j = 0;
        while (j < nc->n_robots && strcmp(nc->robots[j].name, s->cfg.name) != 0)
            j++;
        if (j < nc->n_robots && s->robot && kn_config_robot_equal(&s->cfg, &nc->robots[j])) {
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
            kn_info("robot %s: %s", s->cfg.name, j < nc->n_robots ? "config changed, restarting"
                                                                  : "removed from the config, stopping");
        stop_robot(d, s);
    }
    for (size_t j = 0; j < nc->n_robots; j++) {
        if (taken[j])
            continue;
        bool existed = false;
        for (size_t i = 0; i < d->nslots; i++)
            existed |= strcmp(d->slots[i].cfg.name, nc->robots[j].name) == 0;
        added += !existed;
        start_robot(d, &next[j]);
    }
    memcpy(d->slots, next, KN_CFG_MAX_ROBOTS * sizeof *next);
    free(next);
    d->nslots = nc->n_robots;

    if (strcmp(nc->stats_socket, d->cfg->stats_socket) != 0 || (!d->stats && nc->stats_socket[0])) {
        kn_stats_server_stop(d->stats);
        d->stats = NULL;
        open_stats(d, nc->stats_socket);
    }
    free(d->cfg);
    d->cfg = nc;
    d->reloads++;
    d->last_reload_error[0] = '\0';
    kn_info("reloaded %s: %zu robots kept, %zu restarted, %zu added, %zu removed", d->path, kept,
            restarted, added, removed);
    kn_notify("READY=1");
    send_status(d);
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
    d->cfg = cfg;
    d->log_override = log_override;
    d->started_ns = uv_hrtime();
    snprintf(d->path, sizeof d->path, "%s", config_path);
    if (log_override < 0)
        kn_log_set_level(cfg->log_level);

    int rc = 0;
    char cerr[600];
    if (kn_capture_startup(&d->loop, cerr, sizeof cerr) < 0) {
        kn_err("%s", cerr);
        rc = 1;
    }
    d->nslots = cfg->n_robots;
    for (size_t i = 0; i < cfg->n_robots; i++) {
        d->slots[i].cfg = cfg->robots[i];
        if (start_robot(d, &d->slots[i]) < 0)
            rc = 1;
    }
    if (rc == 0 && open_stats(d, cfg->stats_socket) < 0)
        rc = 1;

    uv_signal_init(&d->loop, &d->sigterm);
    uv_signal_init(&d->loop, &d->sigint);
    uv_signal_init(&d->loop, &d->sighup);
    uv_timer_init(&d->loop, &d->wd_timer);
    d->sigterm.data = d->sigint.data = d->sighup.data = d->wd_timer.data = d;

    if (rc != 0) {
        kn_err("start-up failed; stopping");
        d->stopping = true; /* no READY: systemd sees the failure */
        for (size_t i = 0; i < d->nslots; i++)
            stop_robot(d, &d->slots[i]);
        kn_stats_server_stop(d->stats);
        d->stats = NULL;
        if (d->stopping_robots == 0)
            kn_capture_stop();
        uv_close((uv_handle_t *)&d->sigterm, NULL);
        uv_close((uv_handle_t *)&d->sigint, NULL);
        uv_close((uv_handle_t *)&d->sighup, NULL);
        uv_close((uv_handle_t *)&d->wd_timer, NULL);
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
        kn_notify("READY=1");
        send_status(d);
    }

    uv_run(&d->loop, UV_RUN_DEFAULT);
    if (uv_loop_close(&d->loop) != 0)
        kn_warn("event loop closed with handles still open");
    if (rc == 0)
        kn_info("stopped");
    free(d->cfg);
    free(d);
    return rc;
}
