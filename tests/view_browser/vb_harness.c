/* kenaf-view's browser test and bench: the tools, the processes (kenaf-simd
 * with its engine, kenaf-view, the headless browser) and the line
 * protocol to browser.js. vb_harness.h says what each does. */
#include "vb_harness.h"

#include <check.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *env_or(const char *name, const char *def)
{
    const char *v = getenv(name);
    return v && *v ? v : def;
}

static bool executable(const char *path)
{
    return path && access(path, X_OK) == 0;
}

static bool tools_ready(char *why, size_t len)
{
    const char *chromium = env_or("CHROMIUM", "/usr/bin/chromium");
    if (!executable(chromium)) {
        snprintf(why, len,
                 "no Chromium at %s (Debian package \"chromium\"; tools/install-deps "
                 "installs it)",
                 chromium);
        return false;
    }
    if (!h_which("node")) {
        snprintf(why, len, "node is not installed (Debian package \"nodejs\")");
        return false;
    }
    /* node-deps prints the node_modules directory, installing it first if
     * the cache does not have it yet */
    char cmd[1024], path[1024] = "";
    snprintf(cmd, sizeof cmd, "sh '%s/node-deps'", env_or("KN_VB_DIR", "."));
    FILE *f = popen(cmd, "r");
    if (!f) {
        snprintf(why, len, "cannot run %s: %s", cmd, strerror(errno));
        return false;
    }
    while (fgets(path, sizeof path, f))
        ;
    int rc = pclose(f);
    path[strcspn(path, "\n")] = '\0';
    if (rc != 0 || !path[0]) {
        snprintf(why, len,
                 "playwright-core is not installed and could not be (%s failed: "
                 "no network and no cached copy?)",
                 cmd);
        return false;
    }
    setenv("NODE_PATH", path, 1);
    return true;
}

int vb_main(const char *suite, const struct h_case *cases, size_t ncases)
{
    char why[2048];
    if (h_wrapped()) {
        /* under valgrind (tools/run-valgrind) the engine runs many times
         * slower than the pictures and figures here assume; the processes'
         * memory is checked by the server's own tests (tests/view) */
        printf("SKIP: the browser test and bench do not run under KN_WRAP\n");
        return VB_SKIP;
    }
    if (!tools_ready(why, sizeof why)) {
        printf("SKIP: %s\n", why);
        return VB_SKIP;
    }
    return h_run_cases(suite, cases, ncases);
}

/* ---- kenaf-simd, its engine and kenaf-view ---- */

static struct h_proc engine;

/* On a terrain with an obstacle the robot starts at the engine's Approach
 * start, on level ground 0.8 m before it, facing it: the Origin is on the
 * obstacle's edge, where the robot balances for a while and then tips. */
static void single_robot(char *json, size_t len, const char *terrain, int port)
{
    bool obstacle = strcmp(terrain, "flat") != 0;
    snprintf(json, len,
             "[{\"name\":\"kenaf\",\"listen\":\"127.0.0.1:%d\",\"backend\":{\"type\":\"engine\","
             "\"engine\":{\"terrain\":\"%s\"}%s}}]",
             port, terrain, obstacle ? ",\"usarsim\":{\"start\":\"Approach\"}" : "");
}

/* From here on nobody reads the daemon's notifications, and kenaf-simd's
 * sd_notify blocks the whole daemon once ten wait unread (a STATUS= per
 * simulator link that goes down or up): a machine busy enough to make the
 * links flap would hang it, every robot silent for good. With the socket
 * gone, sd_notify fails at once and the daemon carries on. */
static void notify_stop(struct h_daemon *d)
{
    close(d->notify_fd);
    unlink(d->notify_path);
    d->notify_fd = -1;
}

void vb_daemon_start(struct h_daemon *d, const char *terrain, int count)
{
    static char json[8192];
    if (count == 1) {
        single_robot(json, sizeof json, terrain, 0);
    } else {
        /* one engine for all: a spawned engine each would take the CPUs
         * the browser is measured on */
        const char *extra[] = { "--terrain",  "flat",       "--sen-rate",
                                "STA=50",     "--sen-rate", "GroundTruth=50",
                                "--sen-rate", "Encoder=50", "--quiet",
                                NULL };
        int eport = h_engine_start(&engine, extra, false);
        /* up to ten 0.8 m apart in rows of five; a fleet in rows of eight
         * 2.5 m apart, so that robots driving circles of up to 1 m keep
         * clear of each other */
        int cols = count > 10 ? 8 : 5;
        double gap = count > 10 ? 2.5 : 0.8;
        size_t n = (size_t)snprintf(json, sizeof json, "[");
        for (int i = 0; i < count && n < sizeof json; i++)
            n += (size_t)snprintf(json + n, sizeof json - n,
                                  "%s{\"name\":\"kenaf%d\",\"listen\":\"127.0.0.1:0\","
                                  "\"backend\":{\"type\":\"engine\",\"address\":\"127.0.0.1:%d\","
                                  "\"usarsim\":{\"location_m\":[%.1f,%.1f,0.1]}}}",
                                  i ? "," : "", i, eport, gap * (i % cols), gap * (i / cols));
        ck_assert_uint_lt(n + 2, sizeof json);
        strcat(json, "]");
    }
    h_daemon_start(d, json);
    notify_stop(d);
    for (int i = 0; i < count; i++)
        h_wait_backend_fresh(d, i, 30000);
}

void vb_daemon_start_standin(struct h_daemon *d, int count)
{
    static struct h_standin sims[VB_MAX_ROBOTS];
    static char json[VB_MAX_ROBOTS * 300];
    ck_assert_int_le(count, VB_MAX_ROBOTS);
    size_t n = (size_t)snprintf(json, sizeof json, "[");
    for (int i = 0; i < count; i++) {
        char name[16];
        snprintf(name, sizeof name, "kenaf%d", i);
        h_standin_start(&sims[i], 0, name, NULL);
        n += (size_t)snprintf(json + n, sizeof json - n, "%s%s", i ? "," : "",
                              h_standin_robot(name, sims[i].port, NULL));
        ck_assert_uint_lt(n + 2, sizeof json);
    }
    strcat(json, "]");
    /* kenaf-simd sends a STATUS= notification per simulator link that
     * comes up, and blocks once ten wait unread on the notify socket: they
     * are read until the last link is up, and only then its stats */
    h_daemon_spawn(d, "kenaf-simd", NULL, json, NULL, NULL, true);
    char all[96];
    snprintf(all, sizeof all, "%d/%d robots running, %d simulator links up", count, count, count);
    bool up = false;
    for (uint64_t end = h_now_us() + 30000000u; !up && h_now_us() < end;) {
        struct pollfd pf = { .fd = d->notify_fd, .events = POLLIN };
        if (poll(&pf, 1, 100) <= 0)
            continue;
        static char note[4096];
        ssize_t n = recv(d->notify_fd, note, sizeof note - 1, 0);
        if (n <= 0)
            continue;
        note[n] = '\0';
        up = strstr(note, all) != NULL;
        if (strstr(note, "READY=1")) /* h_daemon_ready looks for it */
            snprintf(d->notes, sizeof d->notes, "READY=1\n");
    }
    if (!up) {
        printf("kenaf-simd's stderr:\n%s\n", h_stderr(&d->proc));
        ck_abort_msg("not every simulator link came up in 30 s (stderr above)");
    }
    h_daemon_ready(d);
    notify_stop(d);
    for (int i = 0; i < count; i++)
        h_wait_backend_fresh(d, i, 30000);
}

void vb_daemon_restart(struct h_daemon *d, const char *terrain, int port)
{
    static char json[512];
    single_robot(json, sizeof json, terrain, port);
    h_daemon_start(d, json);
    notify_stop(d);
    h_wait_backend_fresh(d, 0, 30000);
}

int vb_robot_port(struct h_daemon *d, int robot)
{
    char path[64];
    snprintf(path, sizeof path, "robots.%d.listen", robot);
    const char *colon = strrchr(h_stat_str(d, path), ':');
    ck_assert_ptr_nonnull(colon);
    return atoi(colon + 1);
}

void vb_view_start(struct h_proc *p, struct h_daemon *d, char *url, size_t len)
{
    vb_view_start_with(p, d, NULL, url, len);
}

void vb_view_start_with(struct h_proc *p, struct h_daemon *d, const char *const extra[], char *url,
                        size_t len)
{
    static char robots[VB_MAX_ROBOTS][64];
    char *argv[8 + 2 * VB_MAX_ROBOTS];
    int n = 0;
    argv[n++] = (char *)env_or("KN_VIEW", "kenaf-view");
    argv[n++] = "--listen";
    argv[n++] = "127.0.0.1:0";
    ck_assert_int_le(d->nrobots, VB_MAX_ROBOTS);
    for (int i = 0; i < d->nrobots; i++) {
        snprintf(robots[i], sizeof robots[i], "127.0.0.1:%d", vb_robot_port(d, i));
        argv[n++] = "--robot";
        argv[n++] = robots[i];
    }
    for (int i = 0; extra && extra[i] && i < 4; i++)
        argv[n++] = (char *)extra[i];
    argv[n] = NULL;
    h_spawn(p, argv, NULL, "kenaf-view.stderr");
    char line[256];
    const char *tag = "kenaf-view: http://";
    while (h_read_line(p, line, sizeof line, H_LONG_MS))
        if (strncmp(line, tag, strlen(tag)) == 0) {
            snprintf(url, len, "%s", line + strlen("kenaf-view: "));
            return;
        }
    ck_abort_msg("kenaf-view printed no URL; its stderr:\n%s", h_stderr(p));
}

/* ---- the browser ---- */

void vb_browser_start(struct vb_browser *b, const char *shot_dir, int w, int h)
{
    static char script[1024], shots[1100], profile[300], ws[32], hs[32];
    snprintf(script, sizeof script, "%s/browser.js", env_or("KN_VB_DIR", "."));
    snprintf(shots, sizeof shots, "SHOT_DIR=%s", shot_dir);
    /* the profile in the scratch directory: gone with it after the test */
    snprintf(profile, sizeof profile, "PROFILE_PARENT=%s", h_path(""));
    snprintf(ws, sizeof ws, "VIEW_W=%d", w);
    snprintf(hs, sizeof hs, "VIEW_H=%d", h);
    char *argv[] = { (char *)h_which("node"), script, NULL };
    char *env[] = { shots, profile, ws, hs, NULL };
    memset(b, 0, sizeof *b);
    h_spawn(&b->proc, argv, env, "browser.stderr");
    /* Chromium's start can take a while on a busy machine */
    int port = h_read_port(&b->proc, 6 * H_LONG_MS);
    b->fd = h_tcp_connect(port);
}

static bool read_answer(struct vb_browser *b, char *line, size_t len, int timeout_ms)
{
    uint64_t end = h_now_us() + (uint64_t)timeout_ms * 1000u;
    for (;;) {
        char *nl = memchr(b->buf, '\n', b->len);
        if (nl) {
            size_t n = (size_t)(nl - b->buf);
            snprintf(line, len, "%.*s", (int)n, b->buf);
            memmove(b->buf, nl + 1, b->len - n - 1);
            b->len -= n + 1;
            return true;
        }
        if (b->len == sizeof b->buf || !h_wait_readable(b->fd, end))
            return false;
        ssize_t r = read(b->fd, b->buf + b->len, sizeof b->buf - b->len);
        if (r <= 0)
            return false;
        b->len += (size_t)r;
    }
}

static cJSON *vcmd(struct vb_browser *b, int timeout_ms, bool must, const char *fmt, va_list ap)
{
    static char cmd[4096], line[1 << 16];
    vsnprintf(cmd, sizeof cmd - 1, fmt, ap);
    strcat(cmd, "\n");
    h_write_all(b->fd, cmd, strlen(cmd));
    if (!read_answer(b, line, sizeof line, timeout_ms))
        ck_abort_msg("browser: no answer to %swithin %d ms; its stderr:\n%s", cmd, timeout_ms,
                     h_stderr(&b->proc));
    cJSON *a = cJSON_Parse(line);
    ck_assert_msg(a != NULL, "browser: not JSON: %s", line);
    bool ok = cJSON_IsTrue(cJSON_GetObjectItem(a, "ok"));
    if (must && !ok)
        ck_abort_msg("browser: %s-> %s\nits stderr:\n%s", cmd, line, h_stderr(&b->proc));
    return a;
}

cJSON *vb_cmd(struct vb_browser *b, int timeout_ms, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cJSON *a = vcmd(b, timeout_ms, true, fmt, ap);
    va_end(ap);
    return a;
}

bool vb_try(struct vb_browser *b, int timeout_ms, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cJSON *a = vcmd(b, timeout_ms, false, fmt, ap);
    va_end(ap);
    bool ok = cJSON_IsTrue(cJSON_GetObjectItem(a, "ok"));
    cJSON_Delete(a);
    return ok;
}

double vb_num(const cJSON *answer, const char *path)
{
    char p[256];
    snprintf(p, sizeof p, "%s", path);
    const cJSON *o = answer;
    char *save = NULL;
    for (char *k = strtok_r(p, ".", &save); k && o; k = strtok_r(NULL, ".", &save))
        o = cJSON_IsArray(o) ? cJSON_GetArrayItem(o, atoi(k)) : cJSON_GetObjectItem(o, k);
    ck_assert_msg(cJSON_IsNumber(o), "no number at %s in the browser's answer", path);
    return o->valuedouble;
}

void vb_browser_quit(struct vb_browser *b)
{
    const char *q = "{\"cmd\":\"quit\"}\n";
    h_write_all(b->fd, q, strlen(q));
    int rc = h_wait_exit(&b->proc, 2 * H_LONG_MS);
    if (rc < 0) {
        h_signal(&b->proc, SIGTERM);
        h_wait_exit(&b->proc, H_LONG_MS);
    }
    close(b->fd);
    b->fd = -1;
}

const char *vb_shot_dir(const char *name)
{
    static char dir[1024];
    const char *base = getenv("KN_VB_SHOTS");
    if (!base || !*base)
        base = h_path("shots");
    mkdir(base, 0755);
    snprintf(dir, sizeof dir, "%s/%s", base, name);
    mkdir(dir, 0755);
    printf("screenshots: %s\n", dir);
    fflush(stdout);
    return dir;
}
