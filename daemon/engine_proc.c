/* The "engine" backend and the kenaf-engine processes kenaf-simd spawns
 * for it (engine_proc.h). The protocol side is the USARSim client's
 * (kn_backend_engine_remote); this file adds the process: spawn, read the
 * PORT line, point the robots' links at it, restart with back-off when it
 * dies (the links reconnect and the client re-spawns each robot at its
 * last pose), stop it with its last robot. */
#include "engine_proc.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "backend_usarsim.h"
#include "krp.h"
#include "log.h"
#include "usarsim_codec.h"

enum pstate { P_STARTING, P_RUNNING, P_BACKOFF, P_STOPPING };
static const char *const pstate_names[] = {"starting", "running", "backoff", "stopping"};

struct eng_be;

struct engine_proc {
    struct engine_proc *next;
    uv_loop_t *loop;
    char cfg_path[KN_CFG_PATH_LEN]; /* the key: engine.path and terrain as configured */
    char terrain[KN_CFG_PATH_LEN];
    char exe[KN_CFG_PATH_LEN + 64];
    struct eng_be *users;
    unsigned nusers;

    enum pstate st;
    uv_process_t proc;
    uv_pipe_t out, in;
    uv_timer_t timer;
    bool proc_open, out_open, in_open, timer_open;
    bool alive;               /* spawned and its exit not yet seen */
    unsigned handles;         /* handles not yet closed: free at 0 once stopping */
    char line[128];
    size_t linelen;
    int port, pid;
    double backoff_s;
    uint64_t started_ns;

    uint64_t spawns, restarts, exits, start_failures;
    int last_status, last_signal;
    char last_error[KN_CFG_PATH_LEN + 192];
};

struct eng_be {
    struct kn_link *link;
    void *inner;               /* the USARSim client backend */
    struct engine_proc *proc;  /* NULL: an engine at backend.address */
    struct eng_be *next;       /* next user of proc */
};

static struct engine_proc *procs;

static void spawn(struct engine_proc *p);
static void on_timer(uv_timer_t *t);

/* ---- executable ----------------------------------------------------------- */

static bool executable(const char *path)
{
    return access(path, X_OK) == 0;
}

const char *kn_engine_resolve(const char *configured, char *out, size_t outlen)
{
    if (configured && configured[0]) {
        snprintf(out, outlen, "%s", configured);
        return out;
    }
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash) {
            *slash = '\0';
            snprintf(out, outlen, "%s/%s", self, KN_ENGINE_EXE);
            if (executable(out))
                return out;
        }
    }
#ifdef KN_ENGINE_BUILD_PATH
    if (executable(KN_ENGINE_BUILD_PATH)) {
        snprintf(out, outlen, "%s", KN_ENGINE_BUILD_PATH);
        return out;
    }
#endif
    snprintf(out, outlen, "%s", KN_ENGINE_EXE); /* PATH */
    return out;
}

/* ---- process life ---------------------------------------------------------- */

static void maybe_free(struct engine_proc *p)
{
    if (p->st != P_STOPPING || p->alive || p->handles)
        return;
    free(p);
}

static void on_handle_closed(uv_handle_t *h)
{
    struct engine_proc *p = h->data;
    p->handles--;
    maybe_free(p);
}

static void close_handle(struct engine_proc *p, uv_handle_t *h, bool *open)
{
    if (!*open)
        return;
    *open = false;
    h->data = p;
    uv_close(h, on_handle_closed);
}

static void close_pipes(struct engine_proc *p)
{
    close_handle(p, (uv_handle_t *)&p->out, &p->out_open);
    close_handle(p, (uv_handle_t *)&p->in, &p->in_open);
}

static void notify_users(struct engine_proc *p)
{
    for (struct eng_be *b = p->users; b; b = b->next)
        kn_link_set_address(b->link, "127.0.0.1", (uint16_t)p->port);
}

static void schedule_restart(struct engine_proc *p)
{
    p->st = P_BACKOFF;
    uv_timer_start(&p->timer, on_timer, (uint64_t)(p->backoff_s * 1000.0 + 0.5), 0);
    p->backoff_s *= 2;
    if (p->backoff_s > KN_ENGINE_BACKOFF_MAX_S)
        p->backoff_s = KN_ENGINE_BACKOFF_MAX_S;
}

static void on_exit_cb(uv_process_t *proc, int64_t status, int term_signal)
{
    struct engine_proc *p = proc->data;
    p->alive = false;
    p->exits++;
    p->last_status = (int)status;
    p->last_signal = term_signal;
    p->port = 0;
    close_handle(p, (uv_handle_t *)&p->proc, &p->proc_open);
    close_pipes(p);
    if (p->st == P_STOPPING) {
        kn_info("engine (pid %d, terrain %s) stopped", p->pid, p->terrain);
        close_handle(p, (uv_handle_t *)&p->timer, &p->timer_open);
        maybe_free(p);
        return;
    }
    uv_timer_stop(&p->timer);
    double up = (double)(uv_hrtime() - p->started_ns) / 1e9;
    if (up >= KN_ENGINE_STABLE_S)
        p->backoff_s = KN_ENGINE_BACKOFF_FIRST_S;
    if (term_signal)
        snprintf(p->last_error, sizeof p->last_error, "killed by signal %d after %.1f s",
                 term_signal, up);
    else
        snprintf(p->last_error, sizeof p->last_error, "exited with status %lld after %.1f s",
                 (long long)status, up);
    kn_warn("engine (pid %d, terrain %s) %s; restarting in %.1f s", p->pid, p->terrain,
            p->last_error, p->backoff_s);
    schedule_restart(p);
}

static void on_out_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)suggested;
    struct engine_proc *p = h->data;
    /* read into the line buffer's free part; a line that does not fit is
     * not a PORT line */
    if (p->linelen >= sizeof p->line - 1)
        p->linelen = 0;
    buf->base = p->line + p->linelen;
    buf->len = sizeof p->line - 1 - p->linelen;
}

static void on_out(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    (void)buf;
    struct engine_proc *p = s->data;
    if (nread < 0) {
        close_handle(p, (uv_handle_t *)&p->out, &p->out_open);
        return;
    }
    p->linelen += (size_t)nread;
    char *nl;
    while ((nl = memchr(p->line, '\n', p->linelen)) != NULL) {
        *nl = '\0';
        int port;
        char extra;
        if (p->st == P_STARTING && sscanf(p->line, "PORT %d%c", &port, &extra) == 1 &&
            port > 0 && port < 65536) {
            p->port = port;
            p->st = P_RUNNING;
            uv_timer_stop(&p->timer);
            kn_info("engine %s (pid %d, terrain %s) listening on 127.0.0.1:%d for %u robot%s",
                    p->exe, p->pid, p->terrain, port, p->nusers, p->nusers == 1 ? "" : "s");
            notify_users(p);
        }
        size_t used = (size_t)(nl - p->line) + 1;
        memmove(p->line, nl + 1, p->linelen - used);
        p->linelen -= used;
    }
}

static void spawn(struct engine_proc *p)
{
    uv_pipe_init(p->loop, &p->out, 0);
    uv_pipe_init(p->loop, &p->in, 0);
    p->out.data = p->in.data = p;
    p->out_open = p->in_open = true;
    p->handles += 2;
    p->linelen = 0;
    uv_stdio_container_t io[3];
    /* stdin: a pipe we keep open; --stdin-watch ends the engine when it
     * closes, so an engine never outlives a kenaf-simd killed with -9 */
    io[0].flags = UV_CREATE_PIPE | UV_READABLE_PIPE;
    io[0].data.stream = (uv_stream_t *)&p->in;
    io[1].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
    io[1].data.stream = (uv_stream_t *)&p->out;
    io[2].flags = UV_INHERIT_FD;
    io[2].data.fd = 2;
    const char *terrain = p->terrain[0] ? p->terrain : "flat";
    /* USARSim's scan intervals (0.1-0.2 s) are too coarse for a
     * controller that closes its loop on the encoders and the heading
     * every status (20 ms in libkenaf): the spawned engine reports those
     * at 50 Hz, as the robot's own driver would */
    char *args[] = {p->exe,       "--listen",   "127.0.0.1:0",      "--terrain",
                    (char *)terrain, "--sen-rate", "STA=50",        "--sen-rate",
                    "GroundTruth=50", "--sen-rate", "Encoder=50",   "--stdin-watch",
                    NULL};
    uv_process_options_t o;
    memset(&o, 0, sizeof o);
    o.exit_cb = on_exit_cb;
    o.file = p->exe;
    o.args = args;
    o.stdio_count = 3;
    o.stdio = io;
    p->proc.data = p;
    p->proc_open = true;
    p->handles++;
    p->spawns++;
    p->started_ns = uv_hrtime();
    int rc = uv_spawn(p->loop, &p->proc, &o);
    if (rc < 0) {
        /* the handle is initialized even when the spawn failed */
        close_handle(p, (uv_handle_t *)&p->proc, &p->proc_open);
        close_pipes(p);
        p->start_failures++;
        snprintf(p->last_error, sizeof p->last_error, "cannot start %s: %s", p->exe,
                 uv_strerror(rc));
        kn_err("engine: %s (set backend.engine.path); retrying in %.1f s", p->last_error,
               p->backoff_s);
        schedule_restart(p);
        return;
    }
    p->alive = true;
    p->pid = p->proc.pid;
    p->st = P_STARTING;
    uv_read_start((uv_stream_t *)&p->out, on_out_alloc, on_out);
    uv_timer_start(&p->timer, on_timer, (uint64_t)(KN_ENGINE_START_TIMEOUT_S * 1000), 0);
    kn_info("engine: started %s (pid %d, terrain %s)", p->exe, p->pid, terrain);
}

static void on_timer(uv_timer_t *t)
{
    struct engine_proc *p = t->data;
    switch (p->st) {
    case P_STARTING:
        p->start_failures++;
        snprintf(p->last_error, sizeof p->last_error, "no PORT line within %.0f s",
                 KN_ENGINE_START_TIMEOUT_S);
        kn_warn("engine (pid %d): %s; killing it", p->pid, p->last_error);
        if (p->alive)
            uv_process_kill(&p->proc, SIGKILL);
        break;
    case P_BACKOFF:
        p->restarts++;
        spawn(p);
        break;
    case P_STOPPING:
        if (p->alive) {
            kn_warn("engine (pid %d) still running %.0f s after SIGTERM: SIGKILL", p->pid,
                    KN_ENGINE_STOP_DEADLINE_S);
            uv_process_kill(&p->proc, SIGKILL);
        }
        break;
    case P_RUNNING:
        break;
    }
}

static struct engine_proc *proc_get(uv_loop_t *loop, const char *path, const char *terrain)
{
    for (struct engine_proc *p = procs; p; p = p->next)
        if (p->loop == loop && strcmp(p->cfg_path, path) == 0 &&
            strcmp(p->terrain, terrain) == 0)
            return p;
    struct engine_proc *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->loop = loop;
    snprintf(p->cfg_path, sizeof p->cfg_path, "%s", path);
    snprintf(p->terrain, sizeof p->terrain, "%s", terrain);
    kn_engine_resolve(path, p->exe, sizeof p->exe);
    p->backoff_s = KN_ENGINE_BACKOFF_FIRST_S;
    uv_timer_init(loop, &p->timer);
    p->timer.data = p;
    p->timer_open = true;
    p->handles++;
    p->next = procs;
    procs = p;
    spawn(p);
    return p;
}

static void proc_stop(struct engine_proc *p)
{
    for (struct engine_proc **pp = &procs; *pp; pp = &(*pp)->next)
        if (*pp == p) {
            *pp = p->next;
            break;
        }
    p->st = P_STOPPING;
    uv_timer_stop(&p->timer);
    if (p->alive) {
        uv_process_kill(&p->proc, SIGTERM);
        close_pipes(p);
        uv_timer_start(&p->timer, on_timer, (uint64_t)(KN_ENGINE_STOP_DEADLINE_S * 1000), 0);
        return;
    }
    close_pipes(p);
    close_handle(p, (uv_handle_t *)&p->timer, &p->timer_open);
    maybe_free(p);
}

/* ---- the backend ops ------------------------------------------------------- */

static void *eng_create(struct kn_link *link, const struct kn_cfg_robot *cfg)
{
    struct eng_be *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->link = link;
    b->inner = kn_backend_engine_remote.create(link, cfg);
    if (!b->inner) {
        free(b);
        return NULL;
    }
    if (cfg->backend.host[0])
        return b; /* an engine somebody else runs */
    const char *terrain = cfg->backend.terrain[0] ? cfg->backend.terrain : "flat";
    struct engine_proc *p = proc_get(kn_link_loop(link), cfg->backend.engine_path, terrain);
    if (!p) {
        kn_backend_engine_remote.destroy(b->inner);
        free(b);
        return NULL;
    }
    b->proc = p;
    b->next = p->users;
    p->users = b;
    p->nusers++;
    /* port 0 until the engine says where it listens: the link waits */
    kn_link_set_address(link, "127.0.0.1", (uint16_t)(p->st == P_RUNNING ? p->port : 0));
    return b;
}

static void eng_destroy(void *be)
{
    struct eng_be *b = be;
    kn_backend_engine_remote.destroy(b->inner);
    struct engine_proc *p = b->proc;
    if (p) {
        for (struct eng_be **pp = &p->users; *pp; pp = &(*pp)->next)
            if (*pp == b) {
                *pp = b->next;
                break;
            }
        if (--p->nusers == 0)
            proc_stop(p);
    }
    free(b);
}

static void eng_start(void *be)
{
    struct eng_be *b = be;
    kn_backend_engine_remote.start(b->inner);
}

static void eng_stop(void *be)
{
    struct eng_be *b = be;
    kn_backend_engine_remote.stop(b->inner);
}

static void eng_input(void *be, const char *data, size_t len)
{
    struct eng_be *b = be;
    kn_backend_engine_remote.input(b->inner, data, len);
}

static void eng_send(void *be, const struct kn_command *cmd, bool reapply)
{
    struct eng_be *b = be;
    kn_backend_engine_remote.send_command(b->inner, cmd, reapply);
}

static void eng_stats(void *be, cJSON *o)
{
    struct eng_be *b = be;
    if (kn_backend_engine_remote.stats)
        kn_backend_engine_remote.stats(b->inner, o);
    cJSON *x = cJSON_AddObjectToObject(o, "process");
    struct engine_proc *p = b->proc;
    cJSON_AddBoolToObject(x, "spawned_by_us", p != NULL);
    if (!p)
        return;
    cJSON_AddStringToObject(x, "state", pstate_names[p->st]);
    cJSON_AddStringToObject(x, "executable", p->exe);
    cJSON_AddStringToObject(x, "terrain", p->terrain);
    cJSON_AddNumberToObject(x, "pid", p->alive ? p->pid : 0);
    cJSON_AddNumberToObject(x, "port", p->port);
    cJSON_AddNumberToObject(x, "robots", p->nusers);
    cJSON_AddNumberToObject(x, "spawns", (double)p->spawns);
    cJSON_AddNumberToObject(x, "restarts", (double)p->restarts);
    cJSON_AddNumberToObject(x, "exits", (double)p->exits);
    cJSON_AddNumberToObject(x, "start_failures", (double)p->start_failures);
    cJSON_AddNumberToObject(x, "uptime_s",
                            p->alive ? (double)(uv_hrtime() - p->started_ns) / 1e9 : 0.0);
    cJSON_AddStringToObject(x, "last_error", p->last_error);
}

/* The backend table's "engine" entry: the HELLO_ACK values of
 * kn_backend_engine_remote (ground truth, from the GroundTruth sensor),
 * plus the process when no address is set. */
const struct kn_backend_ops kn_backend_engine = {
    .name = "engine",
    .kind = KN_BACKEND_ENGINE,
    .krp_id = KN_KRP_BACKEND_ENGINE,
    .capabilities = KN_KRP_CAP_GROUND_TRUTH,
    .default_port = KN_USAR_DEFAULT_PORT, /* with an address but no port */
    .create = eng_create,
    .destroy = eng_destroy,
    .start = eng_start,
    .stop = eng_stop,
    .input = eng_input,
    .send_command = eng_send,
    .stats = eng_stats,
};
